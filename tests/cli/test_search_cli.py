"""``fluxgui index`` / ``search`` / ``ls --search`` as processes: hits equal a scan's, the
path is said, a build killed with SIGKILL continues cleanly, encrypted items never reach
the index file in clear text."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from agents.extensions.memory import EncryptedSession
from cryptography.fernet import Fernet
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import cli_env, sha256, wait_for

from fluxgui.adapters import open_store
from fluxgui.core.ports import OpenOptions
from fluxgui.services.index import index_path, scan, search, update_index

SECRET = "Geheimnis-Zürich-7731"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fluxgui", *args], capture_output=True,
                          text=True, env={**cli_env(), **_dirs()}, timeout=300)


def _dirs() -> dict[str, str]:
    return {k: os.environ[k] for k in ("FLUXGUI_CACHE_DIR", "FLUXGUI_DATA_DIR")}


async def flux_store(path: Path, sessions: int, per: int) -> None:
    for i in range(sessions):
        rows = [{"role": "user" if j % 2 == 0 else "assistant",
                 "content": f"message {j} of session {i}: order A-{i * 7 % 1000:04d} Straße ✓"}
                for j in range(per)]
        await FluxSQLiteSession(str(path), session_id=f"s{i:04d}").add_messages(rows)


def hits(result) -> list[tuple]:
    return sorted((h.session_id, h.message_id or -1, h.snippet) for h in result.hits)


def test_search_ls_and_index_commands(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    asyncio.run(flux_store(db, 30, 6))
    before = sha256(db)
    # no index yet: ls --search scans, and says so
    first = cli("ls", str(db), "--search", "a-0007", "--json")
    assert first.returncode == 0 and "searched by scanning" in first.stderr
    scanned_ls = json.loads(first.stdout)["sessions"]
    built = cli("index", str(db))
    assert built.returncode == 0 and "index built: 180 messages" in built.stdout
    assert built.stderr == ""  # not a terminal: no progress bar
    again = cli("ls", str(db), "--search", "a-0007", "--json")
    assert again.returncode == 0 and again.stderr == ""
    assert json.loads(again.stdout)["sessions"] == scanned_ls and scanned_ls
    found = cli("search", str(db), "STRAßE", "--json", "--limit", "0")
    data = json.loads(found.stdout)
    assert data["path"] == "index" and len(data["hits"]) == 180
    assert {"session_id", "message_id", "role", "snippet", "match"} <= set(data["hits"][0])
    text = cli("search", str(db), "a-0007", "--limit", "3")
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["SESSION", "MESSAGE", "ROLE", "SNIPPET"]
    assert lines[-1] == "(3 hits by index (more not shown: --limit))"
    short = cli("search", str(db), "s0", "--json")
    assert json.loads(short.stdout)["path"] == "scan"
    empty = cli("search", str(db), "")  # not "0 hits": a usage error, one line
    assert empty.returncode == 2 and empty.stderr.splitlines()[-1].endswith("TEXT is empty: give the text to find")
    spaces = cli("search", str(db), "   ", "--json")  # spaces are a text
    assert spaces.returncode == 0 and json.loads(spaces.stdout)["path"] == "index"
    assert sha256(db) == before


def test_control_characters_show_as_markers(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    asyncio.run(FluxSQLiteSession(str(db), session_id="evil\x1b]0;x\x07").add_messages(
        [{"role": "user", "content": "pay \x1b[31mnow\x1b[0m please"}]))
    out = cli("search", str(db), "now")
    assert out.returncode == 0 and "\x1b" not in out.stdout and "␛" in out.stdout


def test_a_build_killed_mid_way_continues_to_the_scans_results(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    asyncio.run(flux_store(db, 400, 100))
    path = None

    async def where() -> Path:
        s = await open_store(str(db))
        await s.close()
        return index_path(s.store_key)

    path = asyncio.run(where())

    def watermark() -> int:
        if not path.exists():
            return 0
        try:
            c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                rows = dict(c.execute("SELECT key, value FROM state").fetchall())
            finally:
                c.close()
        except sqlite3.Error:
            return 0
        return int(rows.get("watermark", 0)) if rows.get("ready") == "0" else 0

    proc = subprocess.Popen([sys.executable, "-m", "fluxgui", "index", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**cli_env(), **_dirs()})
    try:
        wait_for(proc, watermark, "the first batch to be committed")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    left = watermark()
    assert 0 < left < 40_000  # killed mid-build

    async def check() -> None:
        store = await open_store(str(db))
        try:
            report = await update_index(store)
            assert report.built and report.added == 40_000 - left
            for needle in ("a-0007", "of session 399:", "straße ✓"):
                indexed = await search(store, needle, use="index", update=False)
                assert indexed.path == "index"
                assert hits(indexed) == hits(await scan(store, needle))
        finally:
            await store.close()

    asyncio.run(check())


def test_encrypted_items_never_reach_the_index(tmp_path: Path) -> None:
    db = tmp_path / "enc.db"
    key = Fernet.generate_key().decode()

    async def write() -> None:
        for sid in ("enc-1", "enc-2"):
            under = AgentsSQLiteSession(sid, str(db))
            s = EncryptedSession(sid, under, encryption_key=key)
            await s.add_items([{"role": "user", "content": f"the code is {SECRET}"},  # type: ignore[list-item]
                               {"role": "assistant", "content": "noted, plain reply"}])
            under.close()
        plain = AgentsSQLiteSession("plain", str(db))
        await plain.add_items([{"role": "user", "content": "plain reply without secrets"}])  # type: ignore[list-item]
        plain.close()

    asyncio.run(write())

    async def run() -> None:
        for opts in (OpenOptions(), OpenOptions(key=key)):
            store = await open_store(str(db), opts)
            try:
                await update_index(store)
                result = await search(store, SECRET.lower(), update=False)
                if opts.key:
                    assert result.path == "index"
                    assert sorted(h.session_id for h in result.hits) == ["enc-1", "enc-2"]
                    assert hits(result) == hits(await scan(store, SECRET.lower()))
                else:
                    assert result.hits == [] and "not searched" in result.notes[0]
                plain = await search(store, "plain reply", update=False)
                assert {h.session_id for h in plain.hits} >= {"plain"}
            finally:
                await store.close()
            blob = b"".join(
                p.read_bytes() for p in path_of(store.store_key).parent.iterdir()
            )
            for form in (SECRET, SECRET.casefold(), "Geheimnis", "geheimnis", "noted, plain"):
                assert form.encode() not in blob, form

    asyncio.run(run())


def path_of(key: str) -> Path:
    return index_path(key)
