"""Listing reads only what it shows (issue 13, point 12): one huge item in an Agents SDK
store must not be loaded to list the sessions, nor to look for encrypted items.

The stores are written by the real ``agents.SQLiteSession`` (and ``EncryptedSession``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from agents import SQLiteSession
from agents.extensions.memory import EncryptedSession
from cryptography.fernet import Fernet
from helpers import cli_env, write_agents

from fluxgui.adapters import open_store
from fluxgui.adapters.sql.sqlite import SqliteBackend
from fluxgui.core.errors import WrongKey

HUGE = 64 * 1024 * 1024  # characters in the one huge item
KEY = Fernet.generate_key().decode()

_PEAK = """
import resource, subprocess, sys
done = subprocess.run([sys.executable, "-m", "fluxgui", "ls", sys.argv[1]], capture_output=True)
assert done.returncode == 0, done.stderr
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_rss_kb(store: Path) -> int:
    """Peak RSS (kB) of ``fluxgui ls store``, measured in a process of its own."""
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, str(store)],
        capture_output=True, text=True, env=cli_env(), check=True,
    )
    return int(out.stdout.strip())


def write(path: Path, content_size: int) -> None:
    write_agents(path, {
        "big": [
            {"role": "user", "content": "hello"},
            {"role": "user", "content": "x" * content_size},
            {"role": "assistant", "content": "ok"},
        ],
        "small": [{"role": "user", "content": "hi"}],
    })


def test_ls_does_not_load_a_huge_item(tmp_path: Path):
    small, big = tmp_path / "small.db", tmp_path / "big.db"
    write(small, 10)
    write(big, HUGE)
    baseline = peak_rss_kb(small)
    # Loading the item once would cost 64 MB (as text; more through SQLite and JSON).
    assert peak_rss_kb(big) - baseline < HUGE // 1024 // 4


async def test_text_heads_read_only_the_head(tmp_path: Path):
    path = tmp_path / "big.db"
    await asyncio.to_thread(write, path, HUGE)  # (the library runs its own event loop)
    backend = await SqliteBackend.open(path)
    try:
        heads = await backend.text_heads("agent_messages", "message_data", [1, 2, 3, 99], 30)
    finally:
        await backend.close()
    assert sorted(heads) == [1, 2, 3]  # no row 99
    assert heads[2][0] == '{"role": "user", "content": "x'
    assert heads[2][1] == HUGE + len('{"role": "user", "content": ""}')
    hello = '{"role": "user", "content": "hello"}'
    assert heads[1] == (hello[:30], len(hello))


def test_detection_with_a_huge_envelope(tmp_path: Path):
    """Envelopes are found from their heads; the key is checked on the smallest one."""
    path = tmp_path / "enc.db"

    async def fill() -> None:
        under = SQLiteSession("s", str(path))
        try:
            enc = EncryptedSession("s", under, encryption_key=KEY)
            await enc.add_items([{"role": "user", "content": "y" * (8 * 1024 * 1024)}])
            await enc.add_items([{"role": "user", "content": "small"}])
            await under.add_items([{"role": "user", "content": "plain, among envelopes"}])
        finally:
            under.close()

    asyncio.run(fill())

    async def check() -> None:
        async with await open_store(str(path)) as store:
            assert store.needs_key is True and store.keys.encrypted is True
        async with await open_store(str(path), key=KEY) as store:
            texts = [m.text for m in await store.reader.page_messages("s")]
            assert texts[1:] == ["small", "plain, among envelopes"]
        with pytest.raises(WrongKey):
            await open_store(str(path), key=Fernet.generate_key().decode())

    asyncio.run(check())
