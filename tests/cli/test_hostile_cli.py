"""Never destroy, never leak (issue 13): the command line against hostile input.

Stores are written by the real libraries. Each case checks what a person would check:
the exit code, the one line on stderr, and that the store (its bytes) is as it was.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import (
    agents_read,
    assert_known_error,
    cli_env,
    ok_lines,
    run_cli,
    snapshot,
    wait_for,
    write_agents,
    write_flux,
)

AGENTS = {
    "conv": [
        {"role": "user", "content": "hello \x1b]0;pwned\x07 \x1b[31mred\x1b[0m \u202eevil \x00 nul \x9b2J"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
    ],
    "other": [{"role": "user", "content": "second"}],
}


@pytest.fixture
def agents_db(tmp_path) -> Path:
    path = tmp_path / "agents.db"
    write_agents(path, AGENTS)
    return path


def parts(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


# --------------------------------------------------------------------------- 1. own store


def _naming(store: Path, tmp_path: Path, form: str) -> str:
    """Another way to name ``store`` (or one of its side files)."""
    if form == "same":
        return str(store)
    if form == "symlink":
        (tmp_path / "link.db").symlink_to(store)
        return str(tmp_path / "link.db")
    if form == "relative":
        return os.path.relpath(store, Path.cwd())
    if form == "url":
        return f"sqlite:///{store}"
    return str(store) + form


@pytest.mark.parametrize("form", ["same", "symlink", "-wal", "-shm", "-journal", "relative"])
def test_export_never_writes_onto_the_store_being_read(agents_db, tmp_path, form, monkeypatch):
    before = snapshot(agents_db)
    out = _naming(agents_db, tmp_path, form)
    line = assert_known_error(
        run_cli("export", str(agents_db), "-o", out, "--file-format", "json"), "refusing", "nothing was written"
    )
    assert "store" in line
    assert snapshot(agents_db) == before
    assert not Path(str(agents_db) + "-wal").exists() or form == "-wal"
    assert parts(tmp_path) == []


def test_export_into_the_json_folder_being_read_is_refused(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "s1.json").write_text(json.dumps({
        "session_id": "s1", "created_at": "2026-01-01T10:00:00", "saved_at": "2026-01-01T10:00:00",
        "agent_config": {}, "history": [{"role": "user", "content": "hi", "timestamp": "2026-01-01T10:00:00", "metadata": {}}],
    }), encoding="utf-8")
    before = (folder / "s1.json").read_bytes()
    assert_known_error(run_cli("export", str(folder), "-o", str(folder / "s1.json")), "refusing", "session folder")
    assert_known_error(run_cli("export", str(folder), "-o", str(folder / "new.json")), "refusing")
    assert (folder / "s1.json").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["s1.json"]


def test_export_over_another_store_needs_force(agents_db, tmp_path):
    other = tmp_path / "other.db"
    write_flux(other, {"f": [{"role": "user", "content": "keep me"}]})
    before = snapshot(other)
    assert_known_error(run_cli("export", str(agents_db), "-o", str(other), "--file-format", "json"), "SQLite database", "--force")
    assert snapshot(other) == before
    # A JSON session file is a store too; an earlier export is not.
    session_file = tmp_path / "session.json"
    session_file.write_text('{"session_id": "x", "saved_at": "t", "history": []}', encoding="utf-8")
    assert_known_error(run_cli("export", str(agents_db), "-o", str(session_file)), "JSON session file")
    earlier = tmp_path / "earlier.json"
    ok_lines(run_cli("export", str(agents_db), "-o", str(earlier)))
    ok_lines(run_cli("export", str(agents_db), "conv", "-o", str(earlier)))
    assert [s["id"] for s in json.loads(earlier.read_text(encoding="utf-8"))["sessions"]] == ["conv"]
    # --force replaces another store (never the one being read).
    ok_lines(run_cli("export", str(agents_db), "-o", str(other), "--file-format", "json", "--force"))
    assert json.loads(other.read_text(encoding="utf-8"))["fluxgui_export"] == 1
    assert_known_error(run_cli("export", str(agents_db), "-o", str(agents_db), "--file-format", "json", "--force"), "refusing")


@pytest.mark.parametrize("form", ["same", "symlink", "url", "-wal"])
def test_copy_never_writes_into_its_source(agents_db, tmp_path, form):
    before = snapshot(agents_db)
    dest = _naming(agents_db, tmp_path, form)
    assert_known_error(run_cli("copy", str(agents_db), dest, "--rename"), "refusing to copy", "nothing was written")
    assert snapshot(agents_db) == before


def test_copy_between_two_urls_of_one_server_store_is_refused(pg_url, tmp_path):
    write = run_cli("import", pg_url, str(_export(tmp_path)))
    assert write.returncode == 0, write.stderr
    same = pg_url.replace("postgresql+asyncpg://", "postgresql://") + "?password=ignored"
    line = assert_known_error(run_cli("copy", pg_url, same, "--rename"), "refusing to copy", "store being read")
    assert "ignored" not in line


def _export(tmp_path: Path) -> Path:
    src = tmp_path / "src.db"
    write_agents(src, AGENTS)
    out = tmp_path / "src.json"
    ok_lines(run_cli("export", str(src), "-o", str(out)))
    return out


def test_import_into_the_file_being_imported_is_refused(tmp_path):
    out = _export(tmp_path)
    before = out.read_bytes()
    assert_known_error(run_cli("import", str(out), str(out)), "refusing", "into itself")
    assert out.read_bytes() == before


# --------------------------------------------------------------------------- 2. devices, FIFOs


def test_export_into_a_fifo_writes_through_and_keeps_the_fifo(agents_db, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        result = run_cli("export", str(agents_db), "-o", str(fifo), "--file-format", "jsonl")
        got, _ = reader.communicate(timeout=60)
    finally:
        if reader.poll() is None:
            reader.kill()
    assert result.returncode == 0, result.stderr
    ids = [json.loads(line)["session_id"] for line in got.decode().splitlines()]
    assert sorted(ids) == ["conv", "conv", "other"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert parts(tmp_path) == []


def test_export_into_a_character_device_keeps_the_device(agents_db, tmp_path):
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's numbers, here
    except PermissionError:
        pytest.skip("making a device node needs root")
    ok_lines(run_cli("export", str(agents_db), "-o", str(null), "--file-format", "json"))
    mode = os.lstat(null).st_mode
    assert stat.S_ISCHR(mode) and os.major(os.lstat(null).st_rdev) == 1
    assert parts(tmp_path) == []


def test_export_into_a_socket_or_folder_is_refused(agents_db, tmp_path):
    import socket

    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        assert_known_error(run_cli("export", str(agents_db), "-o", str(sock_path), "--file-format", "json"), "not a regular file")
    assert_known_error(run_cli("export", str(agents_db), "-o", str(tmp_path), "--file-format", "json"), "is a folder")


def test_a_fifo_as_the_store_is_one_line_not_a_hang(tmp_path):
    fifo = tmp_path / "f.db"
    os.mkfifo(fifo)
    for args in (("ls", str(fifo)), ("show", f"sqlite:///{fifo}", "x"), ("export", str(fifo), "-o", str(tmp_path / "o.json"))):
        assert_known_error(run_cli(*args, timeout=30), "not a regular file or a folder")


# --------------------------------------------------------------------------- 4. terminal escapes


RAW_CONTROLS = ["\x1b", "\x07", "\x00", "\x9b", "\u202e"]


def test_text_output_shows_controls_as_markers(agents_db, tmp_path):
    shown = run_cli("show", str(agents_db), "conv")
    assert shown.returncode == 0, shown.stderr
    for ch in RAW_CONTROLS:
        assert ch not in shown.stdout, repr(ch)
    assert "hello ␛]0;pwned␇ ␛[31mred␛[0m ⟨U+202E⟩evil ␀ nul ⟨U+009B⟩2J" in shown.stdout
    # A session id with controls, in ls and in an error line.
    hostile = tmp_path / "hostile.db"
    write_agents(hostile, {"id\x1b[2J\x07\u202e": [{"role": "user", "content": "x"}]})
    listed = run_cli("ls", str(hostile))
    assert listed.returncode == 0
    assert "id␛[2J␇⟨U+202E⟩" in listed.stdout
    err = run_cli("show", str(hostile), "nope\x1b[2J\x9b")
    assert err.returncode == 3
    for ch in RAW_CONTROLS:
        assert ch not in err.stderr


def test_json_output_stays_exact(agents_db):
    result = run_cli("show", str(agents_db), "conv", "--json")
    assert result.returncode == 0
    for ch in ("\x1b", "\x07", "\x00", "\x9b", "\u202e"):
        assert ch not in result.stdout
    doc = json.loads(result.stdout)
    assert doc["messages"][0]["text"] == AGENTS["conv"][0]["content"]
    assert doc["messages"][0]["raw"] == AGENTS["conv"][0]


# --------------------------------------------------------------------------- 5. no tracebacks


@pytest.mark.parametrize(
    "args",
    [
        ("ls", "{db}", "--limit", "99999999999999999999999"),
        ("show", "{db}", "conv", "--limit", "99999999999999999999999"),
        ("branch", "{db}", "conv", "--at", "99999999999999999999999"),
        ("ls", ""),
        ("chat", "{db}", "conv", "-m", "hi", "--temperature", "nan"),
        ("chat", "{db}", "conv", "-m", "hi", "--timeout", "inf"),
    ],
)
def test_bad_numbers_and_empty_targets_are_usage_errors(agents_db, args):
    result = run_cli(*(a.format(db=agents_db) for a in args))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("fluxgui ")


@pytest.mark.parametrize(
    "args, needle",
    [
        (("ls", "redis://:SECRETPW@127.0.0.1:99999/5"), "port out of range"),
        (("ls", "postgresql+asyncpg://u:SECRETPW@127.0.0.1:99999/x"), "port out of range"),
        (("chat", "{db}", "conv", "-m", "hi", "--provider", "openai", "--base-url", "http://u:SECRETPW@127.0.0.1:99999/v1"), "port out of range"),
        (("chat", "{db}", "conv", "-m", "hi", "--provider", "ollama", "--base-url", "http://127.0.0.1:99999"), "port out of range"),
    ],
)
def test_bad_urls_are_one_line(agents_db, args, needle):
    line = assert_known_error(run_cli(*(a.format(db=agents_db) for a in args)), needle)
    assert "SECRETPW" not in line


# --------------------------------------------------------------------------- 13. smaller


def test_deep_nesting_is_said_so(tmp_path, agents_db):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert_known_error(run_cli("import", str(agents_db), str(deep)), "nested too deeply")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = run_cli("ls", str(folder))
    assert "deep.json: nested too deeply" in result.stderr


# --------------------------------------------------------------------------- 11. kills


def _big_agents_store(path: Path, sessions: int = 40, per: int = 1500) -> None:
    text = "lorem ipsum " * 40
    write_agents(path, {f"s{n:03d}": [{"role": "user", "content": f"{i} {text}"} for i in range(per)] for n in range(sessions)})



@pytest.mark.parametrize("kind", ["sqlite", "folder"])
def test_sigkill_mid_copy_to_a_new_path_leaves_nothing_there(tmp_path, kind):
    import signal

    source = tmp_path / "big.db"
    _big_agents_store(source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    dest = out_dir / ("new.db" if kind == "sqlite" else "new-folder")
    args = [sys.executable, "-m", "fluxgui", "copy", str(source), str(dest)]
    if kind == "folder":
        args += ["--dest-store-format", "json"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env())
    try:
        part = wait_for(proc, lambda: next(iter(parts(out_dir)), None), "the temporary store")
        assert part.startswith(f".{dest.name}.")
        # Some sessions written into it: it is really mid-copy.
        if kind == "sqlite":
            wait_for(proc, lambda: (out_dir / part).stat().st_size > 200_000, "the copy to grow")
        else:
            wait_for(proc, lambda: len(list((out_dir / part).glob("*.json"))) >= 3, "the copy to grow")
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert not dest.exists()
    assert parts(out_dir) == [part]  # a SIGKILL leaves the temporary; the next run removes it
    extra = ["--dest-store-format", "json"] if kind == "folder" else []
    lines = ok_lines(run_cli("copy", str(source), str(dest), "s000", "s001", *extra, timeout=300))
    assert lines == [f"copied 2 sessions (3,000 messages) into {dest}"]
    assert parts(out_dir) == []
    if kind == "sqlite":
        assert len(agents_read(dest, "s001")) == 1500


def test_failed_import_to_a_new_path_leaves_nothing(tmp_path):
    good = _export(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    new = tmp_path / "made" / "new.db"
    new.parent.mkdir()
    assert_known_error(run_cli("import", str(new), str(good), str(bad)), "not valid JSON")
    assert list(new.parent.iterdir()) == []
    # Two sessions with one id: the second is refused inside the copy; nothing stays.
    assert_known_error(run_cli("import", str(new), str(good), str(good)), "comes twice")
    assert list(new.parent.iterdir()) == []
    ok_lines(run_cli("import", str(new), str(good)))
    assert agents_read(new, "other") == AGENTS["other"]


# --------------------------------------------------------------------------- 8. encrypted forks


def _enc_items(path: Path, sid: str, key: str) -> list:
    import asyncio

    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    async def run() -> list:
        inner = SQLiteSession(sid, str(path))
        try:
            return list(await EncryptedSession(session_id=sid, underlying_session=inner, encryption_key=key).get_items())
        finally:
            inner.close()

    return asyncio.run(run())


@pytest.mark.parametrize("key", ["k" * 32, "2dXEJJLoH5XzD6Xk5dk0TL37IzNUN3qyRNTsWBFPg0M="], ids=["utf8", "base64"])
def test_encrypted_forks_copies_and_imports_read_back_in_the_library(tmp_path, key):
    import asyncio

    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    items = [{"role": "user", "content": f"turn {i}"} for i in range(4)]
    db = tmp_path / "enc.db"

    async def write() -> None:
        inner = SQLiteSession("enc-1", str(db))
        try:
            await EncryptedSession(session_id="enc-1", underlying_session=inner, encryption_key=key).add_items(items)
        finally:
            inner.close()

    asyncio.run(write())
    ok_lines(run_cli("branch", str(db), "enc-1", "--at", "3", "--name", "forkB", "--key", key))
    assert _enc_items(db, "forkB", key) == items[:3]
    dest = tmp_path / "dest.db"
    ok_lines(run_cli("copy", str(db), str(dest), "enc-1", "--key", key, "--dest-key", key))
    lines = ok_lines(run_cli("copy", str(db), str(dest), "enc-1", "--rename", "--key", key, "--dest-key", key))
    assert lines[-1] == 'renamed "enc-1" to "enc-1-2"'
    assert _enc_items(dest, "enc-1-2", key) == items
    export = tmp_path / "enc.json"
    ok_lines(run_cli("export", str(db), "enc-1", "-o", str(export), "--key", key))
    lines = ok_lines(run_cli("import", str(dest), str(export), "--rename", "--key", key))
    assert lines[-1] == 'renamed "enc-1" to "enc-1-3"'
    assert _enc_items(dest, "enc-1-3", key) == items
    # Without the key, an encrypted store refuses the fork (nothing copied sealed for another id).
    refused = run_cli("branch", str(db), "enc-1", "--at", "3", "--name", "forkC")
    assert refused.returncode == 3 and "Traceback" not in refused.stderr
    assert "--key" in refused.stderr.splitlines()[-1]
    assert _enc_items(db, "forkC", key) == []


def test_json_folder_writes_remove_our_leftover_temporaries_only(tmp_path):
    import fcntl

    folder = tmp_path / "sessions"
    folder.mkdir()
    ok_lines(run_cli("import", str(folder), str(_export(tmp_path))))
    leftover = folder / "conv.json.0123abcd.tmp"  # ours, from a killed write
    leftover.write_text('{"half": ', encoding="utf-8")
    library = folder / "conv.json.tmp"  # the library's own naming: not ours to remove
    library.write_text("{}", encoding="utf-8")
    live = folder / "other.json.89abcdef.tmp"  # a write in progress in another process
    live.write_text("{", encoding="utf-8")
    with open(live, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        # Browsing writes nothing, removes nothing.
        ok_lines(run_cli("ls", str(folder)))
        assert leftover.exists()
        # The next write to the folder removes the leftover, not the others.
        ok_lines(run_cli("import", str(folder), str(_export(tmp_path)), "--rename"))
        assert not leftover.exists()
        assert library.exists() and live.exists()


def test_non_finite_numbers_are_written_as_strings_and_said(tmp_path):
    db = tmp_path / "nan.db"
    write_agents(db, {"n": [{"role": "user", "content": "x", "score": float("nan"), "hi": float("inf")}]})
    out = tmp_path / "nan.json"
    result = run_cli("export", str(db), "-o", str(out))
    assert result.returncode == 0
    assert result.stderr.strip() == (
        'fluxgui: 2 numbers that JSON cannot hold (NaN, Infinity) written as the strings '
        '"NaN", "Infinity" or "-Infinity"'
    )

    def refuse(name: str) -> None:
        raise AssertionError(f"not JSON: {name}")

    doc = json.loads(out.read_text(encoding="utf-8"), parse_constant=refuse)
    raw = doc["sessions"][0]["messages"][0]["raw"]
    assert (raw["score"], raw["hi"]) == ("NaN", "Infinity")
