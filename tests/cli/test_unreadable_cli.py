"""Forks, copies and imports that would write encrypted items under a new session id
where no key opens them (the id salts the key): ``branch``, ``copy`` and ``import`` refuse
with one line (exit 3) and write nothing; a session some of whose items open is written
without the others only with ``--drop-unreadable``.

Every store is written by the real ``EncryptedSession`` around the real ``SQLiteSession``
or ``RedisSession``, and everything is read back through the library: the source still
reads with its own keys, a fork or copy made without the unreadable items reads with the
key that opened the rest.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from agents.extensions.memory import EncryptedSession
from helpers import REDIS_URL, assert_known_error, ok_lines, run_cli, snapshot, sqlite_rows

KEY_A = "alice's passphrase"
KEY_B = "bob's passphrase"

ONE = [{"role": "user", "content": "sealed with A"}, {"role": "assistant", "content": "A again"}]
TWO = [{"role": "user", "content": "sealed with B"}]
MIXED_B = [{"role": "user", "content": "mixed, B"}, {"role": "assistant", "content": "mixed, B too"}]
MIXED_A = [{"role": "user", "content": "mixed, but A"}]

#: (session id, items, key) in write order: "mixed" holds two items sealed with B, then
#: one sealed with A
WRITES = [("enc-1", ONE, KEY_A), ("enc-2", TWO, KEY_B), ("mixed", MIXED_B, KEY_B), ("mixed", MIXED_A, KEY_A)]


@contextmanager
def _session(kind: str, where: str, sid: str) -> Iterator[Any]:
    """The library's own session: a SQLite file, or Redis under a key prefix."""
    if kind == "sqlite":
        session: Any = SQLiteSession(sid, where)
        try:
            yield session
        finally:
            session.close()
    else:
        from agents.extensions.memory import RedisSession

        yield RedisSession.from_url(sid, url=REDIS_URL, key_prefix=where)


async def _write(kind: str, where: str, writes: list[tuple[str, list[Any], str]]) -> None:
    for sid, items, key in writes:
        with _session(kind, where, sid) as under:
            await EncryptedSession(sid, under, encryption_key=key).add_items(items)  # type: ignore[arg-type]
            if kind == "redis":
                await under.close()


def library_items(kind: str, where: str, sid: str, key: str) -> list[Any]:
    """What ``EncryptedSession.get_items()`` returns with ``key``."""

    async def run() -> list[Any]:
        with _session(kind, where, sid) as under:
            try:
                return list(await EncryptedSession(sid, under, encryption_key=key).get_items())
            finally:
                if kind == "redis":
                    await under.close()

    return asyncio.run(run())


def redis_state(prefix: str) -> dict[bytes, Any]:
    """Every key under ``prefix`` with its type and value (and whether it expires)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    try:
        out: dict[bytes, Any] = {}
        for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            kind = client.type(key)
            value = client.hgetall(key) if kind == b"hash" else client.lrange(key, 0, -1) if kind == b"list" else client.get(key)
            out[key] = (kind, value, client.ttl(key) > 0)
        return out
    finally:
        client.close()


class Store:
    """A store written by the library, as the CLI names it."""

    def __init__(self, kind: str, tmp_path: Path, prefix: str | None) -> None:
        self.kind = kind
        self.where = str(tmp_path / "enc.db") if kind == "sqlite" else str(prefix)
        self.target = self.where if kind == "sqlite" else REDIS_URL
        self.options = [] if kind == "sqlite" else ["--key-prefix", self.where]
        asyncio.run(_write(kind, self.where, WRITES))

    def state(self) -> Any:
        return snapshot(Path(self.where)) if self.kind == "sqlite" else redis_state(self.where)

    def items(self, sid: str, key: str) -> list[Any]:
        return library_items(self.kind, self.where, sid, key)

    def last_id(self, sid: str) -> int:
        """The id ``show`` gives the session's last message (a row id; a position in Redis)."""
        if self.kind == "redis":
            return len(redis_state(self.where).get(f"{self.where}:{sid}:messages".encode(), (0, []))[1])
        return sqlite_rows(Path(self.where), "SELECT max(id) FROM agent_messages WHERE session_id = ?", (sid,))[0][0]

    def cli(self, *args: str, key: str | None = KEY_B) -> Any:
        keys = [f"--key={key}"] if key else []
        return run_cli(*args, *self.options, *keys)


@pytest.fixture(params=["sqlite", "redis"])
def store(request, tmp_path) -> Store:
    prefix = request.getfixturevalue("redis_prefix") if request.param == "redis" else None
    return Store(request.param, tmp_path, prefix)


def _source_still_reads(store: Store) -> None:
    assert store.items("enc-1", KEY_A) == ONE
    assert store.items("enc-2", KEY_B) == TWO
    assert store.items("mixed", KEY_B) == MIXED_B and store.items("mixed", KEY_A) == MIXED_A


# --------------------------------------------------------------------------- branch


def test_branch_with_a_key_that_does_not_open_the_session(store: Store) -> None:
    before = store.state()
    at = str(store.last_id("enc-1"))
    refused = store.cli("branch", store.target, "enc-1", "--at", at)
    assert_known_error(
        refused, 'the key does not open the items of session "enc-1"; a fork needs the key that sealed them'
    )
    # none of its items opens: dropping them is no way out
    again = store.cli("branch", store.target, "enc-1", "--at", at, "--drop-unreadable")
    assert_known_error(again, "the key does not open")
    ring = run_cli("branch", store.target, "enc-1", "--at", at, *store.options,
                   "--key", KEY_B, "--key", "another wrong one")
    assert_known_error(ring, 'none of the keys opens the items of session "enc-1"')
    assert store.state() == before
    _source_still_reads(store)


def test_branch_of_a_session_some_of_whose_items_open(store: Store) -> None:
    before = store.state()
    at = str(store.last_id("mixed"))
    refused = store.cli("branch", store.target, "mixed", "--at", at, "--name", "mixed-fork")
    line = assert_known_error(
        refused, '1 of the 3 encrypted items of session "mixed" does not open with the key given',
        "pass --drop-unreadable to fork without them",
    )
    assert KEY_B not in line
    assert store.state() == before
    dropped = store.cli("branch", store.target, "mixed", "--at", at, "--name", "mixed-fork", "--drop-unreadable")
    assert ok_lines(dropped) == ['forked session "mixed" at message ' + at + ' into "mixed-fork" (2 messages)']
    assert store.items("mixed-fork", KEY_B) == MIXED_B  # the library reads the fork
    _source_still_reads(store)


# --------------------------------------------------------------------------- copy


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    """A store that holds "enc-1" and "mixed" already: copies of them get new ids."""
    path = tmp_path / "dest.db"
    asyncio.run(_write("sqlite", str(path), [("enc-1", TWO, KEY_B), ("mixed", TWO, KEY_B)]))
    return path


def test_copy_under_a_new_id(store: Store, dest: Path) -> None:
    before, dest_before = store.state(), snapshot(dest)

    def copy(*args: str) -> Any:
        return store.cli("copy", store.target, str(dest), *args, "--rename", f"--dest-key={KEY_B}")

    assert_known_error(copy("enc-1"), 'session "enc-1"', "a copy under a new id needs the key that sealed them")
    # every session: refused before any is written
    assert_known_error(copy(), 'session "enc-1"')
    # without a key at all
    keyless = run_cli("copy", store.target, str(dest), "enc-1", "--rename", *store.options, f"--dest-key={KEY_B}")
    warning, error = keyless.stderr.splitlines()  # (the warning that items are locked)
    assert keyless.returncode == 3 and "give the key" in warning
    assert error.startswith('fluxgui: error: session "enc-1" holds encrypted items and no key was given')
    partial = copy("mixed")
    assert_known_error(partial, "1 of the 3 encrypted items of session \"mixed\"", "pass --drop-unreadable to copy without them")
    assert snapshot(dest) == dest_before and store.state() == before
    # under its own id an item that does not open is copied as it is, and opens there
    assert ok_lines(store.cli("copy", store.target, str(dest), "enc-2", f"--dest-key={KEY_B}"))
    assert library_items("sqlite", str(dest), "enc-2", KEY_B) == TWO
    dropped = copy("mixed", "--drop-unreadable")
    assert ok_lines(dropped)[-1] == 'renamed "mixed" to "mixed-2"'
    assert library_items("sqlite", str(dest), "mixed-2", KEY_B) == MIXED_B
    _source_still_reads(store)


# --------------------------------------------------------------------------- import


def test_import_of_items_exported_still_sealed(store: Store, tmp_path: Path) -> None:
    everything, mixed = tmp_path / "all.jsonl", tmp_path / "mixed.jsonl"
    keyless = store.cli("export", store.target, "-o", str(everything), key=None)
    assert keyless.returncode == 0 and "exported 3 sessions" in keyless.stdout
    assert ok_lines(store.cli("export", store.target, "mixed", "-o", str(mixed)))
    before = store.state()
    refused = store.cli("import", store.target, str(everything), "--rename")
    assert_known_error(
        refused, 'the items of session "enc-1" in "all.jsonl" are still sealed (exported without their key)'
    )
    partial = store.cli("import", store.target, str(mixed), "--rename")
    assert_known_error(
        partial, '1 of the 3 encrypted items of session "mixed" in "mixed.jsonl" is still sealed',
        "pass --drop-unreadable to import without them",
    )
    assert store.state() == before
    dropped = store.cli("import", store.target, str(mixed), "--rename", "--drop-unreadable")
    assert ok_lines(dropped)[-1] == 'renamed "mixed" to "mixed-2"'
    assert store.items("mixed-2", KEY_B) == MIXED_B
    _source_still_reads(store)
    # into a new store, under their own ids, nothing is refused and the items still open
    fresh = tmp_path / "fresh.db"
    assert ok_lines(run_cli("import", str(fresh), str(everything)))
    assert library_items("sqlite", str(fresh), "enc-1", KEY_A) == ONE
    assert json.loads(everything.read_text().splitlines()[0])["session_id"] == "enc-1"


def test_branch_of_an_encrypted_advanced_session(tmp_path: Path) -> None:
    """``EncryptedSession`` around ``AdvancedSQLiteSession``: fluxgui opens no key there,
    so a fork would copy the envelopes as they are, under an id where none opens."""
    from agents.extensions.memory import AdvancedSQLiteSession

    path = tmp_path / "advanced.db"

    async def write() -> list[Any]:
        under = AdvancedSQLiteSession(session_id="adv", db_path=str(path), create_tables=True)
        try:
            session = EncryptedSession("adv", under, encryption_key=KEY_A)
            await session.add_items(ONE)  # type: ignore[arg-type]
            return list(await session.get_items())
        finally:
            under.close()

    assert asyncio.run(write()) == ONE
    before = snapshot(path)
    refused = run_cli("branch", str(path), "adv", "--at", "2", f"--key={KEY_A}")
    assert_known_error(refused, 'session "adv"', "a fork would hold them sealed for its new id")
    assert snapshot(path) == before
