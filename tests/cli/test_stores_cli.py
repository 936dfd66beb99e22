"""The commands on the stores of issue 8: JSON session folders, EncryptedSession items
(key from --key or $FLUXGUI_KEY) and Redis (--key-prefix). Fixtures are written by the
real libraries (``EncryptedSession``, ``RedisSession``) or in the SessionStore layout;
results are read back the same way. Each bad input is one line and exit 3."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import REDIS_URL, cli_env, closed_port
from json_helpers import hello_entry, hello_history, hello_load, hello_save

KEY = "cli-test-master-key-3c1d"
SID = "enc-1"
ITEMS = [
    {"role": "user", "content": "where is my parcel?"},
    {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "it left the depot", "annotations": []}]},
]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = cli_env()
    full.pop("FLUXGUI_KEY", None)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "fluxgui", *args], capture_output=True, text=True, env=full, timeout=120
    )


def one_line_error(result: subprocess.CompletedProcess, needle: str) -> str:
    assert result.returncode == 3, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert needle in lines[0], lines[0]
    return lines[0]


def write_encrypted(path: Path) -> None:
    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    async def run() -> None:
        inner = SQLiteSession(SID, str(path))
        session = EncryptedSession(session_id=SID, underlying_session=inner, encryption_key=KEY)
        await session.add_items(ITEMS)
        inner.close()

    asyncio.run(run())


def read_encrypted(path: Path, sid: str, key: str = KEY) -> list[Any]:
    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    async def run() -> list[Any]:
        inner = SQLiteSession(sid, str(path))
        try:
            return list(await EncryptedSession(
                session_id=sid, underlying_session=inner, encryption_key=key).get_items())
        finally:
            inner.close()

    return asyncio.run(run())


# --------------------------------------------------------------------------- encrypted


def test_encrypted_store_needs_the_key_and_reads_with_it(tmp_path):
    db = tmp_path / "enc.db"
    write_encrypted(db)

    locked = cli("show", str(db), SID, "--json")
    assert locked.returncode == 0, locked.stderr
    assert "holds encrypted items: give the key with --key or FLUXGUI_KEY" in locked.stderr
    shown = json.loads(locked.stdout)["messages"]
    assert [m["metadata"]["encryption"]["state"] for m in shown] == ["locked", "locked"]
    assert "where is my parcel" not in locked.stdout

    for how in (("--key", KEY), ()):
        env = {} if how else {"FLUXGUI_KEY": KEY}
        opened = cli("show", str(db), SID, "--json", *how, env=env)
        assert opened.returncode == 0 and opened.stderr == "", opened.stderr
        messages = json.loads(opened.stdout)["messages"]
        assert [m["raw"] for m in messages] == ITEMS
        assert [m["text"] for m in messages] == ["where is my parcel?", "it left the depot"]
        assert {m["metadata"]["encryption"]["state"] for m in messages} == {"ok"}


def test_wrong_key_is_one_line(tmp_path):
    db = tmp_path / "enc.db"
    write_encrypted(db)
    line = one_line_error(cli("ls", str(db), "--key", "not-the-key"), "does not decrypt")
    assert line == (
        f"fluxgui: error: the key does not decrypt the encrypted items of {db} "
        f'(tried session "{SID}"): wrong key?'
    )
    assert "not-the-key" not in line
    one_line_error(cli("ls", str(db), env={"FLUXGUI_KEY": "also-wrong"}), "wrong key?")


def test_copy_into_a_new_encrypted_store_reads_back_in_the_library(tmp_path):
    db, dest = tmp_path / "enc.db", tmp_path / "copy.db"
    write_encrypted(db)
    other = "another-master-key-99"
    done = cli("copy", str(db), str(dest), "--key", KEY, "--dest-key", other)
    assert done.returncode == 0, done.stderr
    assert read_encrypted(dest, SID, other) == ITEMS  # sealed again with DEST's key
    plain = tmp_path / "plain.db"
    assert cli("copy", str(db), str(plain), "--key", KEY).returncode == 0
    from agents import SQLiteSession

    async def read() -> list[Any]:
        s = SQLiteSession(SID, str(plain))
        try:
            return list(await s.get_items())
        finally:
            s.close()

    assert asyncio.run(read()) == ITEMS  # no DEST key: the items as they read


# --------------------------------------------------------------------------- JSON folders


def test_folder_lists_shows_and_reports_a_corrupt_file(tmp_path):
    folder = tmp_path / "sessions"
    hello_save(folder, "alpha", [hello_entry("user", "hi alpha"), hello_entry("assistant", "hello")])
    hello_save(folder, "beta", [hello_entry("user", "hi beta")])
    (folder / "broken.json").write_text('{"session_id": "x", "history": [', encoding="utf-8")

    listing = cli("ls", str(folder), "--json")
    assert listing.returncode == 0
    sessions = {s["id"]: s["messages"] for s in json.loads(listing.stdout)["sessions"]}
    assert sessions == {"alpha": 2, "beta": 1}
    assert listing.stderr.splitlines() == [
        "fluxgui: skipped broken.json: not valid JSON (line 1 column 33)"
    ]
    shown = cli("show", str(folder), "alpha")
    assert shown.returncode == 0
    assert "hi alpha" in shown.stdout and "hello" in shown.stdout

    out = tmp_path / "alpha.md"
    assert cli("export", str(folder), "alpha", "-o", str(out)).returncode == 0
    assert "hi alpha" in out.read_text(encoding="utf-8")


def test_copy_into_a_folder_reads_back_as_session_files(tmp_path):
    from helpers import write_agents

    db = tmp_path / "agents.db"
    write_agents(db, {"s-1": [{"role": "user", "content": "question"},
                              {"role": "assistant", "content": "answer"}]})
    dest = tmp_path / "out"
    done = cli("copy", str(db), str(dest) + os.sep)  # a trailing / makes a folder
    assert done.returncode == 0, done.stderr
    data = hello_load(dest / "s-1.json")
    assert [(m.role, m.content) for m in hello_history(data)] == [
        ("user", "question"), ("assistant", "answer"),
    ]
    again = cli("ls", str(dest), "--json")
    assert [s["id"] for s in json.loads(again.stdout)["sessions"]] == ["s-1"]


def test_empty_folder_is_not_a_store(tmp_path):
    one_line_error(cli("ls", str(tmp_path)), "is a folder with no JSON session files")


# --------------------------------------------------------------------------- Redis


def test_redis_store_lists_shows_and_copies(tmp_path, redis_prefix):
    from agents.extensions.memory import RedisSession

    async def write() -> None:
        session = RedisSession.from_url("r:1", url=REDIS_URL, key_prefix=redis_prefix)
        await session.add_items(ITEMS)
        await session.close()

    asyncio.run(write())
    listing = cli("ls", REDIS_URL, "--key-prefix", redis_prefix, "--json")
    assert listing.returncode == 0, listing.stderr
    assert json.loads(listing.stdout)["sessions"][0] | {"created_at": None, "updated_at": None} == {
        "id": "r:1", "messages": 2, "created_at": None, "updated_at": None,
    }
    shown = cli("show", REDIS_URL, "r:1", "--key-prefix", redis_prefix, "--json")
    assert [m["raw"] for m in json.loads(shown.stdout)["messages"]] == ITEMS
    # Nothing under the default prefix of this test's keys.
    assert "r:1" not in cli("ls", REDIS_URL, "--json").stdout

    dest = tmp_path / "copy.db"
    assert cli("copy", REDIS_URL, str(dest), "--key-prefix", redis_prefix).returncode == 0
    from helpers import agents_read

    assert agents_read(dest, "r:1") == ITEMS


def test_redis_down_is_one_line():
    url = f"redis://someone:s3cret@127.0.0.1:{closed_port()}/0"
    line = one_line_error(cli("ls", url), "cannot reach Redis")
    assert "s3cret" not in line and "***" in line


def test_show_text_marks_expired_items(tmp_path):
    """The text form says what --json says: an item past the TTL is marked expired."""
    db = tmp_path / "enc.db"
    write_encrypted(db)
    shown = cli("show", str(db), SID, "--key", KEY, "--ttl", "0")
    assert shown.returncode == 0, shown.stderr
    headers = [line for line in shown.stdout.splitlines() if line.startswith("#")]
    assert len(headers) == 2 and all(line.endswith("[expired]") for line in headers), headers
    fresh = cli("show", str(db), SID, "--key", KEY)
    assert "[expired]" not in fresh.stdout
