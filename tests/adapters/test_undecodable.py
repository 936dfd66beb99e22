"""Stores with a value that is not valid UTF-8 (issue 13, point 6).

Every store is written by the real library (``agents.SQLiteSession``,
``flux.sessions.SQLiteSession``); then one value is damaged by SQL, as a buggy writer or a
bad page would leave it: that damage is what these tests are about, so raw SQL does it.
The bad row must read as a flagged ``other`` message, and everything else as before.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import agents_read, flux_read, run_cli, sqlite_rows, write_agents, write_flux

from fluxgui.adapters import open_store
from fluxgui.adapters.sql.sqlite import SqliteBackend
from fluxgui.core.undecodable import Undecodable

#: ``{"role":"user","content":"\xff"}``: a JSON item whose content byte is not UTF-8
BAD_ITEM = bytes.fromhex("7B22726F6C65223A2275736572222C22636F6E74656E74223A22FF227D")
BAD_TEXT = b"caf\xe9 cr\xe8me"  # Latin-1, as an old writer might leave it
BAD_META = b'{"note": "\xff\xfe"}'
BAD_ID = b"s\xff1"

AGENTS: dict[str, list[dict[str, Any]]] = {
    "alpha": [
        {"role": "user", "content": "first question"},
        {"role": "user", "content": "to be damaged"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "found it"},
    ],
    "beta": [{"role": "user", "content": "untouched session"}],
}
FLUX: dict[str, list[dict[str, Any]]] = {
    "one": [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "to be damaged"},
        {"role": "user", "content": "meta to damage", "metadata": {"k": 1}},
        {"role": "assistant", "content": "bye", "metadata": {"k": 2}},
    ],
    "two": [{"role": "user", "content": "plain"}],
    "three": [{"role": "user", "content": "its id gets damaged"}],
}


def damage(path: Path, sql: str, value: bytes, row_id: int) -> None:
    """Store ``value`` as TEXT whatever its bytes (what SQLite itself never checks)."""
    conn = sqlite3.connect(str(path))
    try:
        conn.execute(sql.replace("?V", "CAST(? AS TEXT)"), (value, row_id))
        conn.commit()
    finally:
        conn.close()


def flag(column: str, value: bytes) -> dict[str, Any]:
    return {"column": column, "hex": value.hex(), "bytes": len(value)}


@pytest.fixture
def agents_db(tmp_path: Path) -> Path:
    path = tmp_path / "agents.db"
    write_agents(path, AGENTS)
    (row_id,) = sqlite_rows(
        path, "SELECT id FROM agent_messages WHERE message_data LIKE '%to be damaged%'"
    )[0]
    damage(path, "UPDATE agent_messages SET message_data = ?V WHERE id = ?", BAD_ITEM, row_id)
    return path


@pytest.fixture
def flux_db(tmp_path: Path) -> Path:
    path = tmp_path / "flux.db"
    write_flux(path, FLUX)
    ids = dict(sqlite_rows(path, "SELECT content, id FROM messages"))
    damage(path, "UPDATE messages SET content = ?V WHERE id = ?", BAD_TEXT, ids["to be damaged"])
    damage(path, "UPDATE messages SET metadata = ?V WHERE id = ?", BAD_META, ids["meta to damage"])
    damage(
        path, "UPDATE messages SET session_id = ?V WHERE id = ?", BAD_ID, ids["its id gets damaged"]
    )
    return path


def cli_json(*args: str) -> Any:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


# --------------------------------------------------------------------------- Agents SDK


def test_agents_store_lists_shows_and_exports(agents_db: Path, tmp_path: Path):
    sessions = cli_json("ls", "--json", str(agents_db))
    listed = sessions["sessions"]
    assert {s["id"]: s["messages"] for s in listed} == {"alpha": 4, "beta": 1}

    shown = cli_json("show", "--json", str(agents_db), "alpha")["messages"]
    bad = shown[1]
    assert bad["kind"] == "other" and bad["role"] == "unknown"
    assert bad["text"] == bad["raw"] == BAD_ITEM.decode("utf-8", "replace")
    assert bad["metadata"] == {"undecodable": flag("message_data", BAD_ITEM)}
    good = [m for i, m in enumerate(shown) if i != 1]
    expected = [item for i, item in enumerate(AGENTS["alpha"]) if i != 1]
    assert [m["raw"] for m in good] == expected
    assert [m["kind"] for m in good] == ["message", "tool_call", "tool_output"]
    assert all(m["metadata"] is None for m in good)

    out = tmp_path / "all.json"
    done = run_cli("export", str(agents_db), "-o", str(out))
    assert done.returncode == 0, done.stderr
    exported = {s["id"]: s["messages"] for s in json.loads(out.read_text())["sessions"]}
    assert exported["alpha"] == shown
    assert [m["raw"] for m in exported["beta"]] == AGENTS["beta"]


def test_agents_search_reads_past_the_bad_row(agents_db: Path):
    """The search query streams every matching row, the damaged one included; its text
    is the whole stored JSON (item texts elsewhere do not hold the key "content")."""
    cases = [("first question", ["alpha"]), ("untouched", ["beta"]), ("content", ["alpha"])]
    for text, found in cases:
        done = run_cli("ls", "--json", "--search", text, str(agents_db))
        assert done.returncode == 0, done.stderr
        listed = json.loads(done.stdout)["sessions"]
        assert sorted(s["id"] for s in listed) == found, text


def test_agents_copy_keeps_the_replacement_text(agents_db: Path, tmp_path: Path):
    dest = tmp_path / "copy.db"
    done = run_cli("copy", str(agents_db), str(dest))
    assert done.returncode == 0, done.stderr
    copied = [
        r[0] for r in sqlite_rows(dest, "SELECT message_data FROM agent_messages ORDER BY id")
    ]
    assert copied[1] == BAD_ITEM.decode("utf-8", "replace")  # now valid UTF-8
    # The library reads the copy: the repaired item and every other one as written.
    assert agents_read(dest, "alpha") == [
        *AGENTS["alpha"][:1],
        {"role": "user", "content": "\ufffd"},
        *AGENTS["alpha"][2:],
    ]


# --------------------------------------------------------------------------- flux


def test_flux_store_lists_every_session_and_flags_bad_rows(flux_db: Path, tmp_path: Path):
    listed = cli_json("ls", "--json", str(flux_db))["sessions"]
    counts = {s["id"]: s["messages"] for s in listed}
    # an id that is not UTF-8 is its bytes decoded as Python decodes file names
    assert counts == {"one": 4, "two": 1, BAD_ID.decode("utf-8", "surrogateescape"): 1}

    shown = cli_json("show", "--json", str(flux_db), "one")["messages"]
    assert [m["kind"] for m in shown] == ["message", "other", "other", "message"]
    assert shown[1]["text"] == BAD_TEXT.decode("utf-8", "replace")
    assert shown[1]["role"] == "assistant"
    assert shown[1]["metadata"] == {"undecodable": flag("content", BAD_TEXT)}
    # Metadata that decodes with replacement characters to valid JSON is kept, flagged.
    assert shown[2]["text"] == "meta to damage"
    assert shown[2]["metadata"] == {
        "note": BAD_META[10:12].decode("utf-8", "replace"),
        "undecodable": flag("metadata", BAD_META),
    }
    assert (shown[0]["text"], shown[0]["metadata"]) == ("hello", None)
    assert (shown[3]["text"], shown[3]["metadata"]) == ("bye", {"k": 2})

    out = tmp_path / "all.json"
    done = run_cli("export", str(flux_db), "-o", str(out))
    assert done.returncode == 0, done.stderr
    exported = {s["id"]: s["messages"] for s in json.loads(out.read_text())["sessions"]}
    assert exported["one"] == shown
    assert [m["text"] for m in exported["two"]] == ["plain"]


def test_flux_session_with_an_undecodable_id_is_shown_checked_and_searched(flux_db: Path, tmp_path: Path):
    """Issue 33.14: the id ``ls`` lists names the stored bytes. On a command line it is
    those bytes (Python decodes argv as it decodes the id); ``--json`` writes it with
    ``\\udcXX`` escapes, which a JSON reader gives back as the same text."""
    listed = cli_json("ls", "--json", str(flux_db))["sessions"]
    (shown_id,) = [s["id"] for s in listed if s["id"] not in ("one", "two")]
    assert shown_id.encode("utf-8", "surrogateescape") == BAD_ID
    (line,) = [x for x in run_cli("ls", str(flux_db)).stdout.splitlines() if x.endswith("1")][-1:]
    assert line.split()[-1] == "s⟨U+DCFF⟩1"  # the text listing: the byte's marker
    shown = cli_json("show", "--json", str(flux_db), shown_id)
    assert [m["text"] for m in shown["messages"]] == ["its id gets damaged"]
    assert shown["session"]["id"] == shown_id
    # a whole-store check reads every session listed (exit 1: "one" has bad rows); a
    # check of this one too
    whole = run_cli("check", str(flux_db))
    assert whole.returncode == 1 and "session s⟨U+DCFF⟩1: clean" in whole.stdout, whole
    assert run_cli("check", str(flux_db), shown_id).returncode == 0
    # a scan and the index find its messages, and its id
    env_cache = {"FLUXGUI_CACHE_DIR": str(tmp_path / "cache")}
    import os

    os.environ.update(env_cache)
    try:
        for _ in ("scan", "index"):
            found = cli_json("search", "--json", str(flux_db), "gets damaged")
            assert [(h["session_id"], h["snippet"]) for h in found["hits"]] == [
                (shown_id, "its id gets damaged")], found["path"]
            assert [s["id"] for s in cli_json("ls", "--json", "--search", "damaged", str(flux_db))["sessions"]] == [shown_id]
            assert run_cli("index", str(flux_db)).returncode == 0
        assert found["path"] == "index"
    finally:
        for k in env_cache:
            del os.environ[k]
    out = tmp_path / "one.json"
    assert run_cli("export", str(flux_db), shown_id, "-o", str(out)).returncode == 0
    (session,) = json.loads(out.read_text())["sessions"]
    assert session["id"] == shown_id and len(session["messages"]) == 1


def test_flux_search_and_copy(flux_db: Path, tmp_path: Path):
    done = run_cli("ls", "--json", "--search", "bye", str(flux_db))
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)["sessions"]
    assert [s["id"] for s in listed] == ["one"]

    dest = tmp_path / "copy.db"
    done = run_cli("copy", str(flux_db), str(dest), "one")
    assert done.returncode == 0, done.stderr
    assert flux_read(dest, "one") == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": BAD_TEXT.decode("utf-8", "replace")},
        {
            "role": "user",
            "content": "meta to damage",
            "metadata": {"note": BAD_META[10:12].decode("utf-8", "replace")},
        },
        {"role": "assistant", "content": "bye", "metadata": {"k": 2}},
    ]


# --------------------------------------------------------------------------- the back-end


async def test_stream_rereads_tolerant_and_restores_the_fast_path(flux_db: Path):
    backend = await SqliteBackend.open(flux_db)
    try:
        rows = [
            r
            async for batch in backend.stream(
                "SELECT id, session_id, content FROM messages ORDER BY id", batch=1
            )
            for r in batch
        ]
        assert [r[0] for r in rows] == sorted(
            r[0] for r in sqlite_rows(flux_db, "SELECT id FROM messages")
        )
        bad = [v for r in rows for v in r if isinstance(v, Undecodable)]
        assert sorted(v.raw for v in bad) == sorted([BAD_TEXT, BAD_ID])
        # Back to the C text factory: the common case pays no Python call per value.
        assert backend._conn.text_factory is str
        whole = await backend.fetchall("SELECT id, metadata FROM messages ORDER BY id")
        assert [v.raw for r in whole for v in r if isinstance(v, Undecodable)] == [BAD_META]
        assert backend._conn.text_factory is str
    finally:
        await backend.close()


async def test_clearing_a_session_with_a_bad_row(agents_db: Path):
    """A write reads the rows it changes (kept for undo) inside its transaction."""
    async with await open_store(str(agents_db), writable=True) as store:
        change = await store.writer.clear_messages("alpha")
        removed = [r["message_data"] for r in change.removed]
        assert len(removed) == 4 and isinstance(removed[1], Undecodable)
        assert removed[1].raw == BAD_ITEM
        assert await store.reader.count_messages("alpha") == 0
        assert [m.raw for m in await store.reader.page_messages("beta")] == AGENTS["beta"]


def test_agents_session_with_an_undecodable_id_is_listed_shown_and_searched(tmp_path: Path):
    path = tmp_path / "agents.db"
    write_agents(path, {"gamma": [{"role": "user", "content": "an id to damage"}], **AGENTS})
    for table in ("agent_sessions", "agent_messages"):
        conn = sqlite3.connect(str(path))
        conn.execute(f"UPDATE {table} SET session_id = CAST(? AS TEXT) WHERE session_id = 'gamma'", (BAD_ID,))
        conn.commit()
        conn.close()
    sid = BAD_ID.decode("utf-8", "surrogateescape")
    listed = cli_json("ls", "--json", str(path))["sessions"]
    assert sid in [s["id"] for s in listed]
    shown = cli_json("show", "--json", str(path), sid)
    assert [m["text"] for m in shown["messages"]] == ["an id to damage"]
    found = cli_json("search", "--json", str(path), "to damage")
    assert [h["session_id"] for h in found["hits"]] == [sid]
