"""``fluxgui export``, ``import`` and ``copy``, run as subprocesses on stores the real
libraries wrote; what they write is read back by the libraries.

Known errors (unknown session id, corrupt or foreign files, an id already taken,
read-only targets, unreachable servers, a missing folder) print one line and exit 3,
leaving the target as it was. A SIGKILL in the middle of an export leaves no file at
the target path.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from helpers import agents_read, assert_known_error, cli_env, closed_port, flux_read, ok_lines, run_cli, sidecars, snapshot, wait_for, write_agents, write_flux

FLUX = {
    "zeta": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first ✓"},
        {"role": "assistant", "content": "second", "metadata": {"model": "m-secret-meta"}},
    ],
    "alpha": [{"role": "user", "content": "keep me"}],
}
AGENTS = {
    "conv": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": "x"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "found it"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done", "annotations": []}]},
    ],
    "kept": [{"role": "user", "content": [{"type": "input_text", "text": "keep me ✓"}]}],
}


# --------------------------------------------------------------------------- the libraries










def sa_read(url: str, sid: str) -> list[dict]:
    async def run() -> list[dict]:
        session = SQLAlchemySession.from_url(sid, url=url)
        try:
            return await session.get_items()
        finally:
            await session.engine.dispose()

    return asyncio.run(run())


def tables_of(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'") if not r[0].startswith("sqlite_"))
    finally:
        conn.close()


# --------------------------------------------------------------------------- the CLI




def listed(target: str) -> list[tuple[str, int]]:
    result = run_cli("ls", target, "--json", "--limit", "0")
    assert result.returncode == 0, result.stderr
    return [(s["id"], s["messages"]) for s in json.loads(result.stdout)["sessions"]]


def shown(target: str, sid: str) -> list[dict]:
    """The session's Messages as ``show --json`` prints them, without their ids."""
    result = run_cli("show", target, sid, "--json")
    assert result.returncode == 0, result.stderr
    return [{k: v for k, v in m.items() if k != "id"} for m in json.loads(result.stdout)["messages"]]


def size_text(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MB"


@pytest.fixture
def flux_db(tmp_path) -> Path:
    path = tmp_path / "flux.db"
    write_flux(path, FLUX)
    return path


@pytest.fixture
def agents_db(tmp_path) -> Path:
    path = tmp_path / "agents.db"
    write_agents(path, AGENTS)
    return path


def parts(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.endswith(".part"))


# --------------------------------------------------------------------------- export


def test_help_lists_the_commands():
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("export", "import", "copy"):
        assert re.search(rf"^  {command} ", result.stdout, re.M), result.stdout
    result = run_cli("export", "-h")
    assert result.returncode == 0 and "json,jsonl,md,html" in result.stdout and "--no-metadata" in result.stdout
    result = run_cli("import", "-h")
    assert result.returncode == 0 and "--rename" in result.stdout and "flux,agents" in result.stdout
    result = run_cli("copy", "-h")
    assert result.returncode == 0 and "DEST" in result.stdout and "--rename" in result.stdout


@pytest.mark.parametrize(
    "name,start",
    [("out.json", '{"fluxgui_export": 1'), ("out.jsonl", '{"session_id": '), ("out.md", "# Sessions from"), ("out.html", "<!DOCTYPE html>")],
)
def test_export_format_from_the_suffix(agents_db, tmp_path, name, start):
    out = tmp_path / name
    [line] = ok_lines(run_cli("export", str(agents_db), "-o", str(out)))
    assert line == f"exported 2 sessions (5 messages, {size_text(out.stat().st_size)}) to {out}"
    assert out.read_text(encoding="utf-8").startswith(start)
    assert parts(tmp_path) == []


def test_export_format_option_and_sessions(agents_db, tmp_path):
    out = tmp_path / "transcript.txt"
    [line] = ok_lines(run_cli("export", str(agents_db), "conv", "--file-format", "md", "-o", str(out)))
    assert line.startswith("exported 1 session (4 messages, ") and line.endswith(f" to {out}")
    md = out.read_text(encoding="utf-8")
    assert "## Session conv" in md and "Tool call `lookup`" in md and "found it" in md and "keep me" not in md
    # No format and a suffix that says none: a usage error, no file.
    result = run_cli("export", str(agents_db), "-o", str(tmp_path / "out.txt"))
    assert result.returncode == 2 and "--file-format" in result.stderr
    assert not (tmp_path / "out.txt").exists()


def test_export_to_standard_output(flux_db):
    result = run_cli("export", str(flux_db), "zeta", "-o", "-")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "exported 1 session (3 messages) to standard output\n"
    doc = json.loads(result.stdout)
    assert [m["text"] for m in doc["sessions"][0]["messages"]] == ["Be brief.", "first ✓", "second"]
    result = run_cli("export", str(flux_db), "-o", "-", "--file-format", "jsonl", "--no-metadata")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 4 and all(r["metadata"] is None for r in records)
    assert "m-secret-meta" not in result.stdout


@pytest.mark.parametrize("fmt", ["json", "jsonl", "md", "html"])
def test_export_no_metadata(flux_db, tmp_path, fmt):
    with_meta, without = tmp_path / f"with.{fmt}", tmp_path / f"without.{fmt}"
    ok_lines(run_cli("export", str(flux_db), "-o", str(with_meta)))
    ok_lines(run_cli("export", str(flux_db), "-o", str(without), "--no-metadata"))
    assert "m-secret-meta" in with_meta.read_text(encoding="utf-8")
    text = without.read_text(encoding="utf-8")
    assert "m-secret-meta" not in text and "first ✓" in text


def test_export_errors(agents_db, tmp_path):
    out = tmp_path / "out.json"
    line = assert_known_error(run_cli("export", str(agents_db), "conv", "nope", "-o", str(out)), "unknown session id", '"nope"')
    assert str(agents_db) in line
    assert_known_error(run_cli("export", str(agents_db), "-o", str(tmp_path / "missing" / "out.json")), "no such folder", "missing")
    assert_known_error(run_cli("export", str(agents_db), "-o", str(tmp_path), "--file-format", "json"), "is a folder")
    assert_known_error(run_cli("export", str(tmp_path / "nope.db"), "-o", str(out)), "no such file", "nope.db")
    port = closed_port()
    assert_known_error(run_cli("export", f"postgresql+asyncpg://root@127.0.0.1:{port}/test", "-o", str(out)), "unreachable", str(port))
    assert not out.exists() and parts(tmp_path) == []


def test_export_store_format_picks_one_of_two(tmp_path):
    path = tmp_path / "both.db"
    write_agents(path, AGENTS)
    write_flux(path, FLUX)
    out = tmp_path / "out.json"
    ok_lines(run_cli("export", str(path), "-o", str(out)))
    assert json.loads(out.read_text(encoding="utf-8"))["format"] == "agents"
    ok_lines(run_cli("export", str(path), "-o", str(out), "--store-format", "flux"))
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["format"] == "flux" and sorted(s["id"] for s in doc["sessions"]) == ["alpha", "zeta"]


# --------------------------------------------------------------------------- import


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_import_round_trip_agents(agents_db, tmp_path, fmt):
    out = tmp_path / f"export.{fmt}"
    ok_lines(run_cli("export", str(agents_db), "-o", str(out)))
    new = tmp_path / "new.db"
    assert ok_lines(run_cli("import", str(new), str(out))) == [f"imported 2 sessions (5 messages) into {new}"]
    assert "agent_messages" in tables_of(new)  # raw items: an Agents SDK store
    for sid, items in AGENTS.items():
        assert agents_read(new, sid) == items
        assert shown(str(new), sid) == shown(str(agents_db), sid)
    assert listed(str(new)) == listed(str(agents_db))


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_import_round_trip_flux(flux_db, tmp_path, fmt):
    out = tmp_path / f"export.{fmt}"
    ok_lines(run_cli("export", str(flux_db), "-o", str(out)))
    new = tmp_path / "new.db"
    assert ok_lines(run_cli("import", str(new), str(out))) == [f"imported 2 sessions (4 messages) into {new}"]
    assert tables_of(new) == ["messages"]
    for sid, msgs in FLUX.items():
        assert flux_read(new, sid) == msgs
        assert shown(str(new), sid) == shown(str(flux_db), sid)
    assert listed(str(new)) == listed(str(flux_db))


def test_import_format_option_and_tables(agents_db, tmp_path):
    out = tmp_path / "export.json"
    ok_lines(run_cli("export", str(agents_db), "-o", str(out)))
    as_flux = tmp_path / "as-flux.db"
    ok_lines(run_cli("import", str(as_flux), str(out), "--store-format", "flux"))
    assert tables_of(as_flux) == ["messages"]
    assert flux_read(as_flux, "conv")[0] == {"role": "user", "content": "hi"}
    assert flux_read(as_flux, "conv")[1]["metadata"] == {"agents_item": AGENTS["conv"][1]}
    renamed = tmp_path / "renamed.db"
    tables = {"sessions_table": "my_sessions", "messages_table": "my_items"}
    ok_lines(run_cli("import", str(renamed), str(out), "--sessions-table", "my_sessions", "--messages-table", "my_items"))
    assert tables_of(renamed) == ["my_items", "my_sessions"]
    assert agents_read(renamed, "conv", **tables) == AGENTS["conv"]


def test_import_conflict_and_rename(agents_db, tmp_path):
    out = tmp_path / "export.json"
    ok_lines(run_cli("export", str(agents_db), "-o", str(out)))
    target = tmp_path / "target.db"
    write_agents(target, {"kept": [{"role": "user", "content": "mine"}]})
    before = snapshot(target)
    line = assert_known_error(run_cli("import", str(target), str(out)), '"kept"', "already exists", "--rename")
    assert str(target) in line
    assert snapshot(target) == before  # "conv" was not imported either
    lines = ok_lines(run_cli("import", str(target), str(out), "--rename"))
    assert lines == [f"imported 2 sessions (5 messages) into {target}", 'renamed "kept" to "kept-2"']
    assert agents_read(target, "kept") == [{"role": "user", "content": "mine"}]
    assert agents_read(target, "kept-2") == AGENTS["kept"]
    assert agents_read(target, "conv") == AGENTS["conv"]
    lines = ok_lines(run_cli("import", str(target), str(out), "--rename"))
    assert lines[1:] == ['renamed "conv" to "conv-2"', 'renamed "kept" to "kept-3"']


def hello_save(folder: Path, name: str, history: list[dict]) -> Path:
    """A HelloAgent ``SessionStore.save(session_name=name)`` (hello-agents cannot be
    installed beside the Agents SDK: see tests/core/test_imports.py)."""
    session_data = {
        "session_id": f"s-{datetime.now().strftime('%Y%m%d-%H%M%S')}-0123abcd",
        "created_at": datetime.now().isoformat(),
        "saved_at": datetime.now().isoformat(),
        "agent_config": {"name": "assistant"},
        "history": history,
        "tool_schema_hash": "abc",
        "read_cache": {},
        "metadata": {},
    }
    folder.mkdir(parents=True, exist_ok=True)
    filepath = folder / f"{name}.json"
    with open(str(filepath) + ".tmp", "w", encoding="utf-8") as f:
        json.dump(session_data, f, indent=2, ensure_ascii=False)
    os.replace(str(filepath) + ".tmp", filepath)
    return filepath


def test_import_hello_agent_files(tmp_path):
    folder = tmp_path / "memory" / "sessions"
    now = datetime.now().isoformat()
    a = hello_save(folder, "trip-planning", [
        {"role": "user", "content": "Plan a trip ✈", "timestamp": now, "metadata": {}},
        {"role": "assistant", "content": "Where to?", "timestamp": now, "metadata": {"tokens": 3}},
        {"role": "tool", "content": "weather: sunny", "timestamp": now, "metadata": {}},
    ])
    b = hello_save(folder, "session-s-20260101-000000-deadbeef", [
        {"role": "summary", "content": "Earlier: greetings.", "timestamp": now, "metadata": {}},
    ])
    new = tmp_path / "hello.db"
    assert ok_lines(run_cli("import", str(new), str(a), str(b))) == [f"imported 2 sessions (4 messages) into {new}"]
    assert tables_of(new) == ["messages"]  # no Agents SDK items: flux
    assert flux_read(new, "trip-planning") == [
        {"role": "user", "content": "Plan a trip ✈"},
        {"role": "assistant", "content": "Where to?", "metadata": {"tokens": 3}},
        {"role": "tool", "content": "weather: sunny"},
    ]
    assert flux_read(new, "session-s-20260101-000000-deadbeef") == [{"role": "summary", "content": "Earlier: greetings."}]
    # Into an Agents SDK store: roles mapped to items.
    agents_target = tmp_path / "agents.db"
    write_agents(agents_target, {"other": [{"role": "user", "content": "x"}]})
    ok_lines(run_cli("import", str(agents_target), str(a), str(b)))
    assert agents_read(agents_target, "trip-planning") == [
        {"role": "user", "content": "Plan a trip ✈"},
        {"role": "assistant", "content": "Where to?"},
        {"type": "function_call_output", "call_id": "", "output": "weather: sunny"},
    ]
    assert agents_read(agents_target, "session-s-20260101-000000-deadbeef") == [{"role": "system", "content": "Earlier: greetings."}]


CORRUPT = [
    ("bad.jsonl", b'{"session_id": "s", "role": "user", "text": "ok"}\n{"session_id": "s", "role": "user", "text": \n', ["bad.jsonl", "line 2", "not valid JSON"]),
    ("bad2.jsonl", b'{"session_id": "s", "role": "user", "text": "ok"}\n\n{"role": "user"}\n', ["bad2.jsonl", "line 3", "session_id"]),
    ("trunc.json", b'{"fluxgui_export": 1, "sessions": [{"id": "s", "messages": [', ["trunc.json", "not valid JSON", "line 1"]),
    ("other.json", b'{"name": "a package.json"}', ["other.json", "neither a fluxgui export nor a JSON session file"]),
    ("notes.txt", b"just some notes\n", ["notes.txt", "not valid JSON"]),
    ("binary.json", bytes(range(256)), ["binary.json", "not valid JSON"]),
]


@pytest.mark.parametrize("name,data,needles", CORRUPT, ids=[c[0] for c in CORRUPT])
def test_import_corrupt_files_write_nothing(agents_db, tmp_path, name, data, needles):
    good = tmp_path / "good.json"
    ok_lines(run_cli("export", str(agents_db), "-o", str(good)))
    bad = tmp_path / name
    bad.write_bytes(data)
    target = tmp_path / "target.db"
    write_flux(target, {"mine": [{"role": "user", "content": "x"}]})
    before = snapshot(target)
    line = assert_known_error(run_cli("import", str(target), str(good), str(bad)), *needles)
    assert str(bad) in line
    assert snapshot(target) == before and sidecars(target) == set()
    new = tmp_path / "new.db"
    assert_known_error(run_cli("import", str(new), str(good), str(bad)), *needles)
    assert not new.exists()


def test_import_missing_file_and_not_a_store(agents_db, tmp_path):
    good = tmp_path / "good.json"
    ok_lines(run_cli("export", str(agents_db), "-o", str(good)))
    new = tmp_path / "new.db"
    assert_known_error(run_cli("import", str(new), str(tmp_path / "gone.json")), "no such file", "gone.json")
    assert not new.exists()
    other = tmp_path / "app.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    before = snapshot(other)
    assert_known_error(run_cli("import", str(other), str(good)), "not a session store", "invoices")
    assert snapshot(other) == before
    # Told which format, the store is made beside the other tables.
    ok_lines(run_cli("import", str(other), str(good), "--store-format", "agents"))
    assert agents_read(other, "conv") == AGENTS["conv"]
    assert "invoices" in tables_of(other)
    assert_known_error(run_cli("import", str(tmp_path / "no" / "such" / "new.db"), str(good)), "no such folder")


@contextlib.contextmanager
def not_writable(path: Path):
    """Make ``path`` (a file or a folder) impossible to write, also for root."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    try:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"running as root and cannot make {path} immutable: {exc}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_read_only_targets(agents_db, tmp_path):
    good = tmp_path / "good.json"
    ok_lines(run_cli("export", str(agents_db), "-o", str(good)))
    target = tmp_path / "target.db"
    write_flux(target, {"mine": [{"role": "user", "content": "x"}]})
    before = snapshot(target)
    with not_writable(target):
        assert_known_error(run_cli("import", str(target), str(good)), "read-only", str(target))
        assert_known_error(run_cli("copy", str(agents_db), str(target)), "read-only", str(target))
    assert snapshot(target) == before
    folder = tmp_path / "locked"
    folder.mkdir()
    with not_writable(folder):
        assert_known_error(run_cli("export", str(agents_db), "-o", str(folder / "out.json")), "cannot write in", str(folder))
    assert list(folder.iterdir()) == []


def test_unreachable_server_for_import_and_copy(agents_db, tmp_path):
    good = tmp_path / "good.json"
    ok_lines(run_cli("export", str(agents_db), "-o", str(good)))
    port = closed_port()
    url = f"postgresql+asyncpg://root@127.0.0.1:{port}/test"
    assert_known_error(run_cli("import", url, str(good)), "unreachable", str(port))
    assert_known_error(run_cli("copy", str(agents_db), url), "unreachable", str(port))
    new = tmp_path / "new.db"
    assert_known_error(run_cli("copy", url, str(new)), "unreachable", str(port))
    assert not new.exists()


def test_import_into_postgres(agents_db, tmp_path, pg_url):
    good = tmp_path / "good.jsonl"
    ok_lines(run_cli("export", str(agents_db), "-o", str(good)))
    assert ok_lines(run_cli("import", pg_url, str(good))) == [f"imported 2 sessions (5 messages) into {pg_url}"]
    for sid, items in AGENTS.items():
        assert sa_read(pg_url, sid) == items
    assert_known_error(run_cli("import", pg_url, str(good)), '"', "already exists")


# --------------------------------------------------------------------------- copy


def test_copy_sqlite_postgres_sqlite(agents_db, tmp_path, pg_url):
    lines = ok_lines(run_cli("copy", str(agents_db), pg_url))
    assert lines == [f"copied 2 sessions (5 messages) into {pg_url}"]
    for sid, items in AGENTS.items():
        assert sa_read(pg_url, sid) == items
    back = tmp_path / "back.db"
    assert ok_lines(run_cli("copy", pg_url, str(back))) == [f"copied 2 sessions (5 messages) into {back}"]
    for sid, items in AGENTS.items():
        assert agents_read(back, sid) == items
        assert shown(str(back), sid) == shown(pg_url, sid) == shown(str(agents_db), sid)
    assert listed(str(back)) == listed(pg_url) == listed(str(agents_db))


def test_copy_converts_and_names_sessions(flux_db, agents_db, tmp_path):
    as_agents = tmp_path / "as-agents.db"
    assert ok_lines(run_cli("copy", str(flux_db), str(as_agents), "zeta", "--dest-store-format", "agents")) == [
        f"copied 1 session (3 messages) into {as_agents}"
    ]
    assert agents_read(as_agents, "zeta") == [{"role": m["role"], "content": m["content"]} for m in FLUX["zeta"]]
    assert listed(str(as_agents)) == [("zeta", 3)]
    # Into an existing store of the other format: written in that store's format …
    ok_lines(run_cli("copy", str(agents_db), str(flux_db), "conv"))
    assert [m["content"] for m in flux_read(flux_db, "conv")] == ["hi", 'lookup({"q": "x"})', "found it", "done"]
    # … unless --format asks for another one than it holds.
    before = snapshot(agents_db)
    assert_known_error(run_cli("copy", str(flux_db), str(agents_db), "--dest-store-format", "flux"), "in the agents sdk format, not flux")
    assert snapshot(agents_db) == before
    # A new path gets the source's format.
    same = tmp_path / "same.db"
    ok_lines(run_cli("copy", str(flux_db), str(same)))
    assert tables_of(same) == ["messages"]
    assert flux_read(same, "zeta") == FLUX["zeta"]


def test_copy_errors_and_rename(agents_db, tmp_path):
    new = tmp_path / "new.db"
    assert_known_error(run_cli("copy", str(agents_db), str(new), "conv", "nope"), "unknown session id", '"nope"')
    assert not new.exists()
    dest = tmp_path / "dest.db"
    write_agents(dest, {"conv": [{"role": "user", "content": "mine"}]})
    before = snapshot(dest)
    assert_known_error(run_cli("copy", str(agents_db), str(dest)), '"conv"', "already exists", "--rename")
    assert snapshot(dest) == before
    lines = ok_lines(run_cli("copy", str(agents_db), str(dest), "--rename"))
    assert lines == [f"copied 2 sessions (5 messages) into {dest}", 'renamed "conv" to "conv-2"']
    assert agents_read(dest, "conv-2") == AGENTS["conv"]
    assert agents_read(dest, "conv") == [{"role": "user", "content": "mine"}]
    # Options for each side: SOURCE's renamed tables, DEST's table names when it is made.
    renamed = tmp_path / "renamed.db"
    write_agents(renamed, AGENTS, sessions_table="s_tab", messages_table="m_tab")
    made = tmp_path / "made.db"
    ok_lines(run_cli(
        "copy", str(renamed), str(made), "--sessions-table", "s_tab", "--messages-table", "m_tab",
        "--dest-sessions-table", "ds", "--dest-messages-table", "dm",
    ))
    assert tables_of(made) == ["dm", "ds"]
    assert agents_read(made, "conv", sessions_table="ds", messages_table="dm") == AGENTS["conv"]


# --------------------------------------------------------------------------- SIGKILL mid-export


def big_flux_store(path: Path, n: int = 60_000) -> None:
    text = "lorem ipsum " * 80  # ~1 KB a message: an export of some 60 MB
    write_flux(path, {"big": [{"role": "user" if i % 2 else "assistant", "content": f"{i} {text}"} for i in range(n)]})



@pytest.mark.parametrize("previous", [False, True], ids=["new-file", "replacing"])
def test_sigkill_mid_export_leaves_no_file(tmp_path, previous):
    source = tmp_path / "big.db"
    big_flux_store(source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "export.json"
    if previous:
        out.write_text("the previous export\n", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fluxgui", "export", str(source), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    try:
        part = wait_for(proc, lambda: next(iter(parts(out_dir)), None), "the temporary file")
        assert part.name.startswith(".export.json.") and part.name.endswith(".part")
        first = wait_for(proc, lambda: part.stat().st_size, "the first bytes")
        wait_for(proc, lambda: part.stat().st_size > first + 1_000_000, "the temporary file to grow")
        assert proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    # The half-written temporary file stays (nothing can remove it after a SIGKILL) …
    assert parts(out_dir) == [part]
    killed_size = part.stat().st_size
    assert 0 < killed_size
    # … but there is no file at the target path, or the previous one, whole.
    if previous:
        assert out.read_text(encoding="utf-8") == "the previous export\n"
    else:
        assert not out.exists()
    # Run again to the end: the whole export replaces it, and the killed run's temporary
    # (no process holds it any more) is removed by this next export to the same place.
    [line] = ok_lines(run_cli("export", str(source), "-o", str(out), timeout=300))
    assert line.startswith("exported 1 session (60,000 messages, ")
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert len(doc["sessions"][0]["messages"]) == 60_000
    assert out.stat().st_size > killed_size
    assert parts(out_dir) == []
