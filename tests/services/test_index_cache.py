"""A cache folder the index cannot use (issue 33.5): read-only, full, or holding a damaged
index file. On real file systems: a tmpfs mounted for the test (tests/mounts.py). Every
case is one line, never a traceback, and a search still answers (by scanning); a damaged
file is set aside and built anew."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli_env, write_flux
from mounts import read_only, tmpfs

from fluxgui.adapters import open_store
from fluxgui.services.index import index_path, scan, search, update_index

SESSIONS = {f"s{i:03d}": [{"role": "user", "content": f"message {j} of session {i}: order A-{i:04d} " * 8}
                          for j in range(5)] for i in range(100)}


@pytest.fixture(scope="module")
def store_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "flux.db"
    write_flux(path, SESSIONS)
    return path


def cli(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**cli_env(), "FLUXGUI_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-m", "fluxgui", *args], capture_output=True,
                          text=True, env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def one_line_error(done: subprocess.CompletedProcess, *words: str) -> str:
    assert done.returncode == 3, (done.returncode, done.stderr)
    (line,) = done.stderr.splitlines()
    for word in words:
        assert word in line, line
    return line


def scanned_hits(store_db: Path, needle: str) -> list[tuple[str, int | None]]:
    async def run() -> list[tuple[str, int | None]]:
        store = await open_store(str(store_db))
        try:
            return sorted((h.session_id, h.message_id) for h in (await scan(store, needle)).hits)
        finally:
            await store.close()

    return asyncio.run(run())


def assert_search_scans(cache: Path, store_db: Path, why: str) -> None:
    """``search`` and ``ls --search`` answer by scanning, saying why in one line."""
    found = cli(cache, "search", str(store_db), "a-0042", "--json", "--limit", "0")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["path"] == "scan" and any(why in n for n in result["notes"]), result["notes"]
    assert sorted((h["session_id"], h["message_id"]) for h in result["hits"]) == scanned_hits(store_db, "a-0042")
    listed = cli(cache, "ls", str(store_db), "--search", "a-0042", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)["sessions"]] == ["s042"]


def test_a_full_cache_folder(tmp_path: Path, store_db: Path) -> None:
    with tmpfs(tmp_path / "small", "64k") as small:
        cache = small / "cache"
        line = one_line_error(cli(cache, "index", str(store_db)), "database or disk is full")
        assert "rollback" not in line  # (SQLite ended the transaction; its reason is kept)
        assert_search_scans(cache, store_db, "database or disk is full")

        async def in_process() -> None:
            from fluxgui.services.index.failures import IndexUnavailable

            os.environ["FLUXGUI_CACHE_DIR"] = str(cache)
            try:
                store = await open_store(str(store_db))
                try:
                    with pytest.raises(IndexUnavailable):
                        await update_index(store)
                    result = await search(store, "a-0042", use="index")
                    assert result.path == "scan" and len(result.hits) == 5
                finally:
                    await store.close()
            finally:
                del os.environ["FLUXGUI_CACHE_DIR"]

        asyncio.run(in_process())


def test_a_read_only_cache_folder(tmp_path: Path, store_db: Path) -> None:
    with tmpfs(tmp_path / "ro", "1m") as folder:
        cache = folder / "cache"
        # an index built there, then the file system made read-only
        built = cli(cache, "index", str(store_db))
        assert built.returncode == 0, built.stderr
        read_only(folder)
        assert_search_scans(cache, store_db, "read-only file system")
        one_line_error(cli(cache, "index", str(store_db)), "read-only file system")
        one_line_error(cli(cache, "index", "--rebuild", str(store_db)), "read-only file system")
        # and a cache folder that cannot even be made
        one_line_error(cli(folder / "new" / "cache", "index", str(store_db)), "read-only file system")
        assert_search_scans(folder / "new" / "cache", store_db, "no index yet")


def _damage(path: Path, whole: bool) -> None:
    data = bytearray(path.read_bytes())
    if whole:
        data[:] = os.urandom(len(data))
    else:  # the header intact, pages inside overwritten
        for at in range(8192, len(data), 4096):
            data[at : at + 512] = b"\xab" * 512
    path.write_bytes(bytes(data))


def _index_file(cache: Path, store_db: Path) -> Path:
    async def key() -> str:
        store = await open_store(str(store_db))
        await store.close()
        return store.store_key

    os.environ["FLUXGUI_CACHE_DIR"] = str(cache)
    try:
        return index_path(asyncio.run(key()))
    finally:
        del os.environ["FLUXGUI_CACHE_DIR"]


def test_a_damaged_index_file_is_set_aside_and_built_anew(tmp_path: Path, store_db: Path) -> None:
    cache = tmp_path / "cache"
    assert cli(cache, "index", str(store_db)).returncode == 0
    path = _index_file(cache, store_db)
    aside = path.with_name(path.name + ".corrupt")
    # not a database at all: found on opening, set aside, and the search builds it anew
    _damage(path, whole=True)
    found = cli(cache, "search", str(store_db), "a-0042", "--json", "--limit", "0")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["path"] == "index" and any("damaged" in n for n in result["notes"])
    assert sorted((h["session_id"], h["message_id"]) for h in result["hits"]) == scanned_hits(store_db, "a-0042")
    assert aside.exists()
    # damaged inside (a malformed page met while reading): this search scans, the file
    # is set aside, and the next build starts again
    _damage(path, whole=False)
    assert_search_scans(cache, store_db, "malformed")
    assert not path.exists() and aside.exists()
    rebuilt = cli(cache, "index", str(store_db))
    assert rebuilt.returncode == 0 and "index built: 500 messages" in rebuilt.stdout
    _damage(path, whole=True)
    again = cli(cache, "index", str(store_db))
    assert again.returncode == 0 and "index built: 500 messages" in again.stdout
    assert again.stderr == f"fluxgui: the search index was damaged: set aside as {aside} and built anew\n"


def test_an_edit_stands_when_the_index_cannot_be_told(tmp_path: Path) -> None:
    """An edit in place tells the index to read its session again; an index that cannot
    be written is thrown away if it can be, and the edit stands either way."""
    from fluxgui.core.ports import OpenOptions
    from fluxgui.services.edits import update_message

    db = tmp_path / "flux.db"
    write_flux(db, {"s": [{"role": "user", "content": "an old text"}]})
    with tmpfs(tmp_path / "ro", "1m") as folder:
        cache = folder / "cache"
        assert cli(cache, "index", str(db)).returncode == 0
        read_only(folder)

        async def edit() -> None:
            os.environ["FLUXGUI_CACHE_DIR"] = str(cache)
            try:
                store = await open_store(str(db), OpenOptions(writable=True))
                try:
                    (m,) = [m for page in [await store.reader.page_messages("s")] for m in page]
                    await update_message(store, "s", m, {"role": "user", "content": "a new text"})
                finally:
                    await store.close()
            finally:
                del os.environ["FLUXGUI_CACHE_DIR"]

        asyncio.run(edit())
        shown = cli(cache, "show", str(db), "s", "--json")
        assert [m["text"] for m in json.loads(shown.stdout)["messages"]] == ["a new text"]
        assert_search_scans_for(cache, db, "new text", ["s"])


def assert_search_scans_for(cache: Path, db: Path, needle: str, ids: list[str]) -> None:
    found = cli(cache, "search", str(db), needle, "--json")
    result = json.loads(found.stdout)
    assert result["path"] == "scan" and [h["session_id"] for h in result["hits"]] == ids
