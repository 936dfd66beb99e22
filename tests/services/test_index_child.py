"""The index built by a child process: one JSON request on stdin, JSON lines out."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import sha256

from fluxgui.adapters import open_store
from fluxgui.core.ports import OpenOptions
from fluxgui.services.index import IndexFile, index_path, search
from fluxgui.services.index.child import command, main, request_line


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "cache"))


def _flux_store(path: Path) -> Path:
    async def write() -> None:
        for i in range(30):
            await FluxSQLiteSession(str(path), session_id=f"s{i:02d}").add_messages(
                [{"role": "user", "content": f"order A-{i:04d}"}, {"role": "assistant", "content": "ok"}]
            )

    asyncio.run(write())
    return path


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_the_child_builds_the_index_the_window_would(tmp_path: Path) -> None:
    db = _flux_store(tmp_path / "flux.db")
    before = sha256(db)
    out = io.StringIO()
    assert main(io.BytesIO(request_line(str(db), OpenOptions())), out) == 0
    lines = _lines(out.getvalue())

    async def key_and_hits() -> tuple[str, list[str]]:
        store = await open_store(str(db))
        try:
            result = await search(store, "a-0007", use="index", update=False)
            return store.store_key, [h.session_id for h in result.hits]
        finally:
            await store.close()

    key, hits = asyncio.run(key_and_hits())
    assert lines[0] == {"store_key": key}
    assert [line["progress"] for line in lines if "progress" in line][-1] == [60, 60]
    done = lines[-1]["done"]
    assert done["added"] == 60 and done["built"] is True
    assert hits == ["s07"]
    assert sha256(db) == before  # the agent's store is only read


def test_a_store_that_does_not_open_is_one_error_line(tmp_path: Path) -> None:
    out = io.StringIO()
    missing = tmp_path / "nothing.db"
    assert main(io.BytesIO(request_line(str(missing), OpenOptions())), out) == 3
    (line,) = _lines(out.getvalue())
    assert "nothing.db" in line["error"]
    assert not list((tmp_path / "cache").glob("index/*")) if (tmp_path / "cache").exists() else True


@pytest.mark.parametrize("request_bytes", [b"", b"not json\n", b"[1, 2]\n", b'{"options": {}}\n'])
def test_a_bad_request_is_refused(request_bytes: bytes) -> None:
    out = io.StringIO()
    assert main(io.BytesIO(request_bytes), out) == 3
    (line,) = _lines(out.getvalue())
    assert line["error"].startswith("bad request")


def test_the_password_of_a_url_is_never_printed(tmp_path: Path) -> None:
    out = io.StringIO()
    url = "postgresql://someone:s3cret-pw@127.0.0.1:1/nowhere"
    assert main(io.BytesIO(request_line(url, OpenOptions())), out) == 3
    assert "s3cret-pw" not in out.getvalue()
    assert _lines(out.getvalue())[0]["error"]


def test_the_child_process_ends_when_its_stdin_closes(tmp_path: Path) -> None:
    """The window gone (its end of the pipe closed): the process does not linger."""
    db = _flux_store(tmp_path / "flux.db")
    proc = subprocess.run(command(), input=request_line(str(db), OpenOptions()),
                          capture_output=True, timeout=60, check=False)
    # stdin closed right after the request: it ends at once, before or during the build,
    # and what it built so far is a consistent index the next update continues
    assert proc.returncode == 3, proc.stderr
    assert b"Fatal" not in proc.stderr
    path = index_path(asyncio.run(_key(db)))
    if path.exists():
        idx = IndexFile(path, asyncio.run(_key(db)))
        try:
            assert idx.message_count() in range(0, 61)
        finally:
            idx.close()


async def _key(db: Path) -> str:
    store = await open_store(str(db))
    try:
        return store.store_key
    finally:
        await store.close()
