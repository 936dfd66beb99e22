"""Write ``resources/demo.db``: the store the window opens when no target is given.

The conversations are written by the real OpenAI Agents SDK (``agents.SQLiteSession``),
so the demo is exactly what that library stores: its two tables, its JSON items (user
messages, assistant messages with Markdown and code, function calls and their outputs,
reasoning summaries). Afterwards the timestamps are spread over a few days (same text
format as SQLite's ``CURRENT_TIMESTAMP``) so the demo looks lived-in and rebuilds the same,
and the file is switched from WAL to ``journal_mode=DELETE`` and vacuumed: one small file
that opens read-only even from a read-only site-packages.

    .venv/bin/python scripts/make_demo.py [OUT]     (default: resources/demo.db)
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from agents import SQLiteSession

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "resources" / "demo.db"


# --------------------------------------------------------------------------- item helpers


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str, n: int) -> dict[str, Any]:
    return {
        "id": f"msg_demo{n:04d}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {
        "id": f"fc_{call_id}",
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }


def output(call_id: str, result: Any) -> dict[str, Any]:
    text = result if isinstance(result, str) else json.dumps(result, indent=2)
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def reasoning(summary: str, n: int) -> dict[str, Any]:
    return {
        "id": f"rs_demo{n:04d}",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": summary}],
    }


# --------------------------------------------------------------------------- conversations

# (session id, first message time, minutes between items, turns: lists of items per add)
CONVERSATIONS: list[tuple[str, str, float, list[list[dict[str, Any]]]]] = [
    (
        "support-48213-double-charge",
        "2025-03-10 09:12:04",
        0.6,
        [
            [user("Hi, I was charged twice for my March invoice (INV-2025-0317). "
                  "Could you refund one of the payments?")],
            [
                reasoning("The customer reports a duplicate charge. Look up the invoice and "
                          "its payments before promising anything.", 1),
                call("lookup_invoice", {"invoice_id": "INV-2025-0317"}, "call_inv1"),
                output("call_inv1", {
                    "invoice_id": "INV-2025-0317",
                    "amount": 49.0,
                    "currency": "EUR",
                    "payments": [
                        {"id": "pay_9Qx1", "status": "succeeded", "at": "2025-03-01T08:00:12Z"},
                        {"id": "pay_9Qx2", "status": "succeeded", "at": "2025-03-01T08:00:14Z"},
                    ],
                }),
                call("issue_refund",
                     {"payment_id": "pay_9Qx2", "amount": 49.0, "reason": "duplicate"},
                     "call_ref1"),
                output("call_ref1", {"refund_id": "re_3Lk8", "status": "pending", "eta_days": 5}),
                assistant(
                    "I'm sorry about that: you were indeed charged **twice**, two seconds apart.\n\n"
                    "| Payment | Amount | Status |\n"
                    "|---|---|---|\n"
                    "| `pay_9Qx1` | 49.00 EUR | kept |\n"
                    "| `pay_9Qx2` | 49.00 EUR | **refunded** (`re_3Lk8`) |\n\n"
                    "The refund is on its way and usually shows on your statement within "
                    "*5 business days*.",
                    1,
                ),
            ],
            [user("Thanks! Will I get an email confirmation?")],
            [assistant(
                "Yes. You'll get an email from billing@example.com as soon as the bank "
                "confirms the refund. If it hasn't arrived by **March 17**, reply here with "
                "the reference `re_3Lk8` and we'll chase it.",
                2,
            )],
        ],
    ),
    (
        "coding-agent-flaky-export-test",
        "2025-03-11 14:02:40",
        1.5,
        [
            [user("`test_export_roundtrip` fails about one run in ten on CI but never "
                  "locally. Can you find out why and fix it?")],
            [
                reasoning("A test that only fails sometimes, and only on CI: suspect time "
                          "zones or ordering. Run it many times first.", 2),
                call("run_shell",
                     {"cmd": "pytest tests/test_export.py -k roundtrip -p randomly --count 20 -q"},
                     "call_sh1"),
                output("call_sh1",
                       "..F.................\n"
                       "FAILED tests/test_export.py::test_export_roundtrip[run-3]\n"
                       "E  AssertionError: assert '2025-03-01T10:00:00+00:00' == "
                       "'2025-03-01T11:00:00+01:00'\n"
                       "1 failed, 19 passed in 2.31s"),
                call("read_file", {"path": "fluxgui/export.py", "lines": "40-52"}, "call_rd1"),
                output("call_rd1",
                       "40  def stamp(dt: datetime) -> str:\n"
                       "41      \"\"\"ISO time for the export header.\"\"\"\n"
                       "42      return dt.isoformat()\n"),
                call("apply_patch", {
                    "path": "fluxgui/export.py",
                    "diff": "-    return dt.isoformat()\n"
                            "+    return dt.astimezone(timezone.utc).isoformat()\n",
                }, "call_pt1"),
                output("call_pt1", "patched 1 file (+1 -1)"),
                call("run_shell",
                     {"cmd": "pytest tests/test_export.py -k roundtrip -p randomly --count 50 -q"},
                     "call_sh2"),
                output("call_sh2", ".................................................. \n"
                                   "50 passed in 4.87s"),
                assistant(
                    "Found it. `stamp()` kept the time zone of whatever `datetime` it got, and "
                    "one fixture builds its times with the **runner's local zone** (CET on two "
                    "of the CI machines). The round trip then compared `+00:00` with `+01:00`.\n\n"
                    "The fix normalises to UTC before formatting:\n\n"
                    "```python\n"
                    "def stamp(dt: datetime) -> str:\n"
                    "    \"\"\"ISO time for the export header, always in UTC.\"\"\"\n"
                    "    return dt.astimezone(timezone.utc).isoformat()\n"
                    "```\n\n"
                    "50 runs in random order now pass. I'd also set `TZ=Europe/Paris` in one CI "
                    "job so a regression shows up every time, not one run in ten.",
                    3,
                ),
            ],
            [user("Good catch. Please add that CI job too.")],
            [
                call("apply_patch", {
                    "path": ".github/workflows/ci.yml",
                    "diff": "+      - name: tests in a non-UTC zone\n"
                            "+        run: TZ=Europe/Paris pytest -q\n",
                }, "call_pt2"),
                output("call_pt2", "patched 1 file (+2 -0)"),
                assistant("Done: the workflow now runs the suite a second time with "
                          "`TZ=Europe/Paris`.", 4),
            ],
        ],
    ),
    (
        "support-48377-lost-2fa-phone",
        "2025-03-12 18:47:15",
        0.8,
        [
            [user("I lost my phone and can't log in: it asks for a 2FA code. "
                  "My account email is sam.okafor@example.org")],
            [
                call("lookup_account", {"email": "sam.okafor@example.org"}, "call_acc1"),
                output("call_acc1", {
                    "account_id": "acct_5520",
                    "two_factor": "totp",
                    "backup_codes_left": 3,
                    "verified_phone": False,
                }),
                assistant(
                    "I can help. Your account has **3 unused backup codes**, which work "
                    "instead of the app code:\n\n"
                    "1. On the login page choose *Use a backup code*.\n"
                    "2. Enter one of the codes you saved when you turned on 2FA.\n"
                    "3. Then go to **Settings → Security** and set up 2FA on your new phone.\n\n"
                    "If you can't find the codes, tell me and I'll start an identity check.",
                    5,
                ),
            ],
            [user("Found them in my password manager, I'm in. Thank you!")],
            [assistant("Great! Remember to generate a fresh set of backup codes after "
                       "you set up the new phone: the old ones you used are gone.", 6)],
        ],
    ),
    (
        "coding-agent-slow-session-list",
        "2025-03-13 10:21:09",
        2.0,
        [
            [user("Listing sessions takes 4 s on the production database. "
                  "Here's the query:\n\n"
                  "SELECT session_id, COUNT(*) FROM agent_messages GROUP BY session_id "
                  "ORDER BY MAX(created_at) DESC LIMIT 50;")],
            [
                reasoning("GROUP BY over the whole messages table for every page. Check the "
                          "plan, then page on the sessions table with a keyset instead.", 3),
                call("run_sql", {"sql": "EXPLAIN QUERY PLAN SELECT session_id, COUNT(*) "
                                        "FROM agent_messages GROUP BY session_id "
                                        "ORDER BY MAX(created_at) DESC LIMIT 50"}, "call_sql1"),
                output("call_sql1", "SCAN agent_messages USING INDEX idx_agent_messages_session_id\n"
                                    "USE TEMP B-TREE FOR ORDER BY"),
                assistant(
                    "The plan scans **every message** and sorts the groups in a temporary "
                    "B-tree, so the cost grows with the whole table, not the page.\n\n"
                    "Page over `agent_sessions` instead, newest first, and count only the "
                    "50 sessions you show:\n\n"
                    "```sql\n"
                    "SELECT s.session_id, s.updated_at,\n"
                    "       (SELECT COUNT(*) FROM agent_messages m\n"
                    "         WHERE m.session_id = s.session_id) AS messages\n"
                    "  FROM agent_sessions s\n"
                    " WHERE (s.updated_at, s.session_id) < (:last_updated, :last_id)\n"
                    " ORDER BY s.updated_at DESC, s.session_id DESC\n"
                    " LIMIT 50;\n"
                    "```\n\n"
                    "With an index on `agent_sessions(updated_at, session_id)` each page is a "
                    "short index walk.",
                    7,
                ),
            ],
            [user("Nice, that went from 4 s to 12 ms. Should I add the index in a migration?")],
            [assistant("Yes: `CREATE INDEX IF NOT EXISTS idx_sessions_updated ON "
                       "agent_sessions(updated_at, session_id);` in its own migration, so it "
                       "can be rolled back on its own.", 8)],
        ],
    ),
]


# --------------------------------------------------------------------------- writing


async def write_conversations(path: Path) -> None:
    for session_id, _start, _step, turns in CONVERSATIONS:
        session = SQLiteSession(session_id, path)
        try:
            for items in turns:
                await session.add_items(items)  # type: ignore[arg-type]
        finally:
            session.close()


def spread_times(path: Path) -> None:
    """Give each item a plausible time (the SDK stamps all of them 'now')."""
    conn = sqlite3.connect(path)
    try:
        for session_id, start, step, _turns in CONVERSATIONS:
            t0 = datetime.strptime(start, "%Y-%m-%d %H:%M:%S")
            ids = [r[0] for r in conn.execute(
                "SELECT id FROM agent_messages WHERE session_id = ? ORDER BY id", (session_id,)
            )]
            last = t0
            for i, row_id in enumerate(ids):
                last = t0 + timedelta(minutes=step * i, seconds=7 * (i % 3))
                conn.execute("UPDATE agent_messages SET created_at = ? WHERE id = ?",
                             (last.strftime("%Y-%m-%d %H:%M:%S"), row_id))
            conn.execute(
                "UPDATE agent_sessions SET created_at = ?, updated_at = ? WHERE session_id = ?",
                (t0.strftime("%Y-%m-%d %H:%M:%S"), last.strftime("%Y-%m-%d %H:%M:%S"), session_id),
            )
        conn.commit()
    finally:
        conn.close()


def make_single_file(path: Path) -> None:
    """WAL → DELETE journal, then VACUUM: no -wal/-shm, smallest file."""
    conn = sqlite3.connect(path)
    try:
        mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        if mode.lower() != "delete":
            raise SystemExit(f"could not switch {path} to journal_mode=DELETE (got {mode})")
        conn.execute("VACUUM")
    finally:
        conn.close()
    for suffix in ("-wal", "-shm", "-journal"):
        leftover = Path(str(path) + suffix)
        if leftover.exists():
            raise SystemExit(f"{leftover} is still there")


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else DEFAULT_OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    for p in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        p.unlink(missing_ok=True)
    asyncio.run(write_conversations(tmp))
    spread_times(tmp)
    make_single_file(tmp)
    tmp.replace(out)
    conn = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    try:
        sessions = conn.execute("SELECT count(*) FROM agent_sessions").fetchone()[0]
        items = conn.execute("SELECT count(*) FROM agent_messages").fetchone()[0]
    finally:
        conn.close()
    print(f"wrote {out} ({out.stat().st_size:,} bytes, {sessions} sessions, {items} items)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
