"""The command line, run as a subprocess: output shapes, order, options, and known errors.

Stores are written by the real libraries; expectations come from what the libraries read.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import uuid
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import agents_read, assert_known_error, closed_port, run_cli, sha256

SESSION_KEYS = {"id", "messages", "created_at", "updated_at"}
MESSAGE_KEYS = {"id", "role", "kind", "text", "metadata", "created_at", "raw"}


def write_flux(path: Path, sessions: list[tuple[str, list[dict]]]) -> None:
    async def run() -> None:
        for sid, msgs in sessions:
            await FluxSQLiteSession(str(path), session_id=sid).add_messages(msgs)

    asyncio.run(run())


def flux_read(path: Path, sid: str) -> list[dict]:
    return asyncio.run(FluxSQLiteSession(str(path), session_id=sid).get_messages())


def write_agents(path: Path, sessions: list[tuple[str, list[dict]]], **tables) -> None:
    async def run() -> None:
        for sid, items in sessions:
            s = AgentsSQLiteSession(sid, str(path), **tables)
            try:
                await s.add_items(items)
            finally:
                s.close()

    asyncio.run(run())




def msg(role: str, content: str, **extra) -> dict:
    return {"role": role, "content": content, **extra}


# Written in this order: flux orders sessions by their last row, exactly.
FLUX_WRITES = [
    ("zeta", [msg("user", "first zeta"), msg("assistant", "reply", metadata={"model": "m", "n": 1})]),
    ("alpha", [msg("user", "hello alpha ✓")]),
    ("mid", [msg("user", f"mid {i}") for i in range(7)]),
    ("zeta", [msg("tool", "tool output")]),
    ("beta", [msg("user", "Café crème")]),
]
FLUX_ORDER = ["beta", "zeta", "mid", "alpha"]


@pytest.fixture
def flux_db(tmp_path) -> Path:
    path = tmp_path / "flux.db"
    write_flux(path, FLUX_WRITES)
    return path


@pytest.fixture
def agents_db(tmp_path) -> Path:
    path = tmp_path / "agents.db"
    write_agents(
        path,
        [
            ("conv", [msg("user", "hi"), {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]),
            ("conv", [{"type": "function_call_output", "call_id": "c1", "output": "ok"}]),
        ],
    )
    return path


def ok_json(*args: str):
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    if "--search" in args:  # no search index: the scan says so, in one line
        assert result.stderr.startswith("fluxgui: searched by scanning: ")
        assert result.stderr.count("\n") == 1
    else:
        assert result.stderr == ""
    return json.loads(result.stdout)


# --------------------------------------------------------------------------- ls


def test_ls_json_shape_and_order(flux_db):
    out = ok_json("ls", str(flux_db), "--json")
    assert set(out) == {"format", "sessions"}
    assert out["format"] == "flux"
    assert [s["id"] for s in out["sessions"]] == FLUX_ORDER
    for s in out["sessions"]:
        assert set(s) == SESSION_KEYS
        assert s["messages"] == len(flux_read(flux_db, s["id"]))
        assert s["created_at"] <= s["updated_at"]


def test_ls_limit_and_search(flux_db):
    out = ok_json("ls", str(flux_db), "--json", "--limit", "2")
    assert [s["id"] for s in out["sessions"]] == FLUX_ORDER[:2]
    everything = ok_json("ls", str(flux_db), "--json", "--limit", "0")
    assert [s["id"] for s in everything["sessions"]] == FLUX_ORDER
    found = ok_json("ls", str(flux_db), "--json", "--search", "CAFÉ")
    assert [s["id"] for s in found["sessions"]] == ["beta"]
    for query in ("a", "ZETA", "MID 3"):  # ids and texts
        found = ok_json("ls", str(flux_db), "--json", "--search", query)
        q = query.casefold()
        expected = [
            sid
            for sid in FLUX_ORDER
            if q in sid.casefold()
            or any(q in m["content"].casefold() for w, msgs in FLUX_WRITES if w == sid for m in msgs)
        ]
        assert expected, query
        assert [s["id"] for s in found["sessions"]] == expected
    found = ok_json("ls", str(flux_db), "--json", "--search", "TOOL OUT")
    assert [s["id"] for s in found["sessions"]] == ["zeta"]
    assert ok_json("ls", str(flux_db), "--json", "--search", "%")["sessions"] == []


def test_ls_text_output(flux_db):
    result = run_cli("ls", str(flux_db))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1].startswith(f"({len(FLUX_ORDER)} sessions")
    listed = [line.split()[-1] for line in lines[1:-1]]
    assert listed == FLUX_ORDER


def test_ls_agents(agents_db):
    out = ok_json("ls", str(agents_db), "--json")
    assert out["format"] == "agents"
    assert out["sessions"][0]["id"] == "conv"
    assert out["sessions"][0]["messages"] == len(agents_read(agents_db, "conv"))


def test_ls_and_show_renamed_tables(tmp_path):
    path = tmp_path / "renamed.db"
    tables = {"sessions_table": "my_sessions", "messages_table": "my_items"}
    write_agents(path, [("r1", [msg("user", "renamed one")]), ("r2", [msg("user", "renamed two")])], **tables)
    # A second, default-named store in the same file: the options choose.
    write_agents(path, [("d1", [msg("user", "default")])])
    opts = ["--sessions-table", "my_sessions", "--messages-table", "my_items"]
    out = ok_json("ls", str(path), "--json", *opts)
    assert sorted(s["id"] for s in out["sessions"]) == ["r1", "r2"]
    default = ok_json("ls", str(path), "--json")
    assert [s["id"] for s in default["sessions"]] == ["d1"]
    shown = ok_json("show", str(path), "r2", "--json", *opts)
    assert [m["raw"] for m in shown["messages"]] == agents_read(path, "r2", **tables)
    missing = run_cli("ls", str(path), "--sessions-table", "nope", "--messages-table", "my_items")
    assert_known_error(missing, "nope")


# --------------------------------------------------------------------------- show


def test_show_json_shape_and_stored_order(flux_db):
    listing = {s["id"]: s for s in ok_json("ls", str(flux_db), "--json")["sessions"]}
    for sid in FLUX_ORDER:
        out = ok_json("show", str(flux_db), sid, "--json")
        assert set(out) == {"format", "session", "messages"}
        assert out["format"] == "flux"
        assert out["session"] == listing[sid]
        ref = flux_read(flux_db, sid)
        assert [(m["role"], m["text"], m["metadata"]) for m in out["messages"]] == [
            (r["role"], r["content"], r.get("metadata")) for r in ref
        ]
        for m in out["messages"]:
            assert set(m) == MESSAGE_KEYS
        ids = [m["id"] for m in out["messages"]]
        assert len(ids) == len(set(ids))


def test_show_limit_gives_most_recent_oldest_first(flux_db):
    ref = flux_read(flux_db, "mid")
    for n in (1, 3, 7, 50):
        out = ok_json("show", str(flux_db), "mid", "--json", "--limit", str(n))
        assert [m["text"] for m in out["messages"]] == [r["content"] for r in ref][-n:]
        assert out["session"]["messages"] == len(ref)
    out = ok_json("show", str(flux_db), "mid", "--json", "--limit", "0")
    assert out["messages"] == []


def test_show_agents_raw_equals_sdk_items(agents_db):
    out = ok_json("show", str(agents_db), "conv", "--json")
    assert out["format"] == "agents"
    assert [m["raw"] for m in out["messages"]] == agents_read(agents_db, "conv")
    ids = [m["id"] for m in out["messages"]]
    assert len(ids) == len(set(ids))


def test_show_text_output(flux_db):
    result = run_cli("show", str(flux_db), "zeta")
    assert result.returncode == 0, result.stderr
    for r in flux_read(flux_db, "zeta"):
        assert f"    {r['content']}" in result.stdout.splitlines()


def test_show_hostile_session_id(tmp_path):
    path = tmp_path / "hostile.db"
    sid = "'; DROP TABLE messages; -- \"ü\" 🧪"
    write_flux(path, [(sid, [msg("user", "<b>not markup</b>")])])
    out = ok_json("show", str(path), sid, "--json")
    assert out["session"]["id"] == sid
    assert [m["text"] for m in out["messages"]] == ["<b>not markup</b>"]


def test_cli_does_not_change_the_file(flux_db):
    before = sha256(flux_db)
    files = sorted(os.listdir(flux_db.parent))
    ok_json("ls", str(flux_db), "--json", "--search", "x")
    ok_json("show", str(flux_db), "zeta", "--json")
    assert sha256(flux_db) == before
    assert sorted(os.listdir(flux_db.parent)) == files


# --------------------------------------------------------------------------- known errors



@pytest.mark.parametrize("command", ["ls", "show"])
def test_missing_file(tmp_path, command):
    path = tmp_path / "nope.db"
    args = [command, str(path)] + (["sid"] if command == "show" else [])
    assert_known_error(run_cli(*args), "nope.db")
    assert not path.exists()


def test_empty_file(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    assert_known_error(run_cli("ls", str(path)), "empty")
    assert path.stat().st_size == 0


def test_corrupt_random_bytes(tmp_path):
    path = tmp_path / "random.db"
    path.write_bytes(os.urandom(8192))
    assert_known_error(run_cli("ls", str(path)), "random.db")


def test_text_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n")
    assert_known_error(run_cli("ls", str(path)), "notes.txt")


def page_size(data: bytes) -> int:
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


CUTS = {
    "half": lambda data: len(data) // 2,
    "tenth": lambda data: len(data) // 10,
    "two-pages": lambda data: 2 * page_size(data),
    "last-page-gone": lambda data: len(data) - page_size(data),
    "one-byte-short": lambda data: len(data) - 1,
    "header-only": lambda data: 100,
    "magic-only": lambda data: 16,
}


@pytest.mark.parametrize("cut", list(CUTS))
@pytest.mark.parametrize("writer", ["flux", "agents"])
def test_truncated_sqlite_file(tmp_path, writer, cut):
    path = tmp_path / "trunc.db"
    big = [msg("user", f"{i} " + "x" * 3000) for i in range(60)]
    if writer == "flux":
        write_flux(path, [("s", big)])
    else:
        write_agents(path, [("s", big)])
    data = path.read_bytes()
    path.write_bytes(data[: CUTS[cut](data)])
    for args in (["ls", str(path)], ["show", str(path), "s", "--json"], ["ls", str(path), "--search", "zz"]):
        assert_known_error(run_cli(*args), "trunc.db")


def test_sqlite_but_not_a_session_store(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    result = run_cli("ls", str(path))
    assert_known_error(result, "not a session store", "invoices", "customers")


def test_folder_is_not_a_store(tmp_path):
    assert_known_error(run_cli("ls", str(tmp_path)), "folder")


def test_unknown_session_id(flux_db, agents_db):
    assert_known_error(run_cli("show", str(flux_db), "no-such-id"), "no-such-id")
    assert_known_error(run_cli("show", str(agents_db), "no\nsuch"), "unknown session")


@pytest.mark.parametrize(
    "url",
    [
        "notadriver://x",
        "postgresql+asyncpg://root@127.0.0.1:notaport/db",
        "postgresql+nosuchdriver://root@127.0.0.1:5432/test",
        "sqlite://",
        "postgresql+asyncpg://root@127.0.0.1:5432/",  # no database named: the server's default
        "://nothing",
    ],
)
def test_bad_url(url):
    assert_known_error(run_cli("ls", url))


def test_unreachable_server():
    port = closed_port()
    result = run_cli("ls", f"postgresql+asyncpg://root@127.0.0.1:{port}/test")
    assert_known_error(result, "unreachable", str(port))


def test_database_that_does_not_exist(pg_available):
    name = f"fluxgui_missing_{uuid.uuid4().hex[:8]}"
    result = run_cli("ls", f"postgresql+asyncpg://root@127.0.0.1:5432/{name}")
    assert_known_error(result, name, "does not exist")


def test_refused_login(pg_available):
    user = f"nobody_{uuid.uuid4().hex[:8]}"
    result = run_cli("ls", f"postgresql+asyncpg://{user}@127.0.0.1:5432/test")
    assert_known_error(result, user)


def test_postgres_database_without_store(pg_url):
    assert_known_error(run_cli("ls", pg_url), "not a session store", "no tables")


def test_show_from_postgres(pg_url):
    from fluxgui.adapters import open_store

    async def fill() -> None:
        async with await open_store(pg_url, create="flux") as store:
            await store.writer.add_messages("pg", [msg("user", f"pg {i}") for i in range(4)])

    asyncio.run(fill())
    out = ok_json("show", pg_url, "pg", "--json", "--limit", "2")
    assert [m["text"] for m in out["messages"]] == ["pg 2", "pg 3"]
    listing = ok_json("ls", pg_url, "--json")
    assert listing["sessions"] == [out["session"]]


# --------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    "args",
    [
        ["ls"],
        ["show"],
        ["show", "some.db"],
        ["ls", "x.db", "--limit", "abc"],
        ["ls", "x.db", "--limit", "-1"],
        ["show", "x.db", "s", "--limit", "1.5"],
        ["ls", "x.db", "--store-format", "nope"],
        ["ls", "x.db", "--no-such-option"],
    ],
)
def test_usage_errors_exit_2(args, tmp_path):
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert "usage:" in result.stderr
    assert not (tmp_path / "x.db").exists()


# --------------------------------------------------------------------------- secrets


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("postgresql+asyncpg://root:{pw}@127.0.0.1:{port}/test", id="unreachable"),
        pytest.param("postgresql+asyncpg://nobody_x:{pw}@127.0.0.1:5432/test", id="refused"),
        pytest.param("postgresql+nosuchdriver://root:{pw}@127.0.0.1:5432/test", id="no-driver"),
        pytest.param("postgresql+asyncpg://root:{pw}@127.0.0.1:notaport/test", id="bad-port"),
    ],
)
def test_password_never_shown_in_errors(url, pg_available):
    pw = f"S3cret{uuid.uuid4().hex[:6]}"
    result = run_cli("ls", url.format(pw=pw, port=closed_port()))
    assert_known_error(result)
    assert pw not in result.stderr
