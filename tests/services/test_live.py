"""The live-refresh use cases over real stores: catching up with a session another
process writes to (appends, edits, deletes, clears, a deleted session, a branch) and the
change-token tracking the watcher polls with.

The other process is the real library (``agents.SQLiteSession``, flux's
``SQLiteSession``, ``AdvancedSQLiteSession``) or a plain ``sqlite3`` connection for what
no library offers (editing a stored item in place).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession

from fluxgui.adapters import open_store
from fluxgui.core.model import Message
from fluxgui.services.live import CatchUp, ChangeTracker, catch_up

SID = "s"


def items(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
        for i in range(start, start + n)
    ]


async def agents_add(path: Path, new: list[dict[str, Any]], sid: str = SID) -> None:
    session = AgentsSQLiteSession(sid, str(path))
    try:
        await session.add_items(new)  # type: ignore[arg-type]
    finally:
        session.close()


def sql(path: Path, statement: str, *params: Any) -> None:
    """What no library offers (an item edited or removed in place), through ``sqlite3``."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(statement, params)
        conn.commit()
    finally:
        conn.close()


class Reader:
    """What a pane holds: the latest ``page`` messages of a session as loaded, and the
    count before them — kept in step with each catch-up's answer, as the pane does."""

    def __init__(self, store: Any, sid: str = SID, page: int = 10, branch: str | None = None):
        self.store, self.sid, self.page, self.branch = store, sid, page, branch
        self.loaded: list[Message] = []
        self.before: int | None = 0
        self.at_start = True
        self.gone = False

    async def load(self) -> None:
        info = await self.store.reader.session_info(self.sid, branch=self.branch)
        self.loaded = await self.store.reader.page_messages(self.sid, limit=self.page, branch=self.branch)
        self.at_start = len(self.loaded) < self.page
        self.before = 0 if self.at_start else info.messages - len(self.loaded)
        self.gone = False

    async def catch_up(self, **limits: Any) -> CatchUp:
        found = await catch_up(
            self.store,
            self.sid,
            tuple(self.loaded),
            branch=self.branch,
            before=self.before,
            at_start=self.at_start,
            gone=self.gone,
            **{"page_size": self.page, **limits},
        )
        if found.kind == "append":
            self.loaded += found.new
            self.before = found.before
            if found.before:
                self.at_start = False
        elif found.kind == "gone":
            self.gone = True
        return found

    def texts(self) -> list[str]:
        return [m.text for m in self.loaded]


@pytest.fixture
async def agents(tmp_path: Path) -> AsyncIterator[tuple[Path, Any]]:
    path = tmp_path / "agents.db"
    await agents_add(path, items(25))
    store = await open_store(str(path))
    try:
        yield path, store
    finally:
        await store.close()


async def test_nothing_new_is_an_empty_append(agents: tuple[Path, Any]) -> None:
    _path, store = agents
    reader = Reader(store)
    await reader.load()
    found = await reader.catch_up()
    assert found == CatchUp("append", found.info, [], 15)
    assert found.info is not None and found.info.messages == 25


async def test_appends_arrive_in_pages_with_the_count_before(agents: tuple[Path, Any]) -> None:
    path, store = agents
    reader = Reader(store, page=10)
    await reader.load()
    await agents_add(path, items(3, 25))
    found = await reader.catch_up()
    assert found.kind == "append" and [m.text for m in found.new] == [
        "message 25", "message 26", "message 27"
    ]
    assert found.before == 15 and found.info is not None and found.info.messages == 28

    # More than a page: read page after page.
    await agents_add(path, items(37, 28))
    found = await reader.catch_up()
    assert found.kind == "append" and len(found.new) == 37
    assert reader.texts() == [f"message {i}" for i in range(15, 65)]
    assert found.before == 15

    # More than the catch-up takes: reload instead.
    await agents_add(path, items(30, 65))
    assert (await reader.catch_up(max_new=20)).kind == "reload"


async def test_flux_appends(tmp_path: Path) -> None:
    path = tmp_path / "flux.db"
    flux = FluxSQLiteSession(str(path), session_id=SID)
    await flux.add_messages(items(4))
    store = await open_store(str(path))
    try:
        reader = Reader(store, page=10)
        await reader.load()
        assert reader.at_start and reader.texts() == [f"message {i}" for i in range(4)]
        await flux.add_messages(items(2, 4))
        found = await reader.catch_up()
        assert found.kind == "append" and [m.text for m in found.new] == ["message 4", "message 5"]
        assert found.before == 0 and found.info is not None and found.info.messages == 6
    finally:
        await store.close()


async def test_an_edit_of_the_last_message_reloads(agents: tuple[Path, Any]) -> None:
    path, store = agents
    reader = Reader(store)
    await reader.load()
    edited = json.dumps({"role": "assistant", "content": "edited"})
    sql(path, "UPDATE agent_messages SET message_data = ? WHERE id = ?", edited, reader.loaded[-1].id)
    found = await reader.catch_up()
    assert found.kind == "reload" and found.info is not None and found.info.messages == 25


async def test_a_deleted_message_among_the_loaded_ones_reloads(agents: tuple[Path, Any]) -> None:
    path, store = agents
    reader = Reader(store)
    await reader.load()
    sql(path, "DELETE FROM agent_messages WHERE id = ?", reader.loaded[4].id)
    assert (await reader.catch_up()).kind == "reload"


async def test_a_popped_last_message_reloads(agents: tuple[Path, Any]) -> None:
    path, store = agents
    reader = Reader(store)
    await reader.load()
    session = AgentsSQLiteSession(SID, str(path))
    try:
        await session.pop_item()
    finally:
        session.close()
    assert (await reader.catch_up()).kind == "reload"


async def test_a_deletion_before_the_loaded_ones_only_moves_the_count(
    agents: tuple[Path, Any],
) -> None:
    path, store = agents
    reader = Reader(store)
    await reader.load()
    sql(path, "DELETE FROM agent_messages WHERE id = (SELECT MIN(id) FROM agent_messages)")
    await agents_add(path, items(1, 25))
    # The count does not add up; the loaded messages are checked and found intact.
    found = await reader.catch_up()
    assert found.kind == "append" and [m.text for m in found.new] == ["message 25"]
    assert found.before == 14
    # Too many loaded messages to check: reload instead.
    reader.before = 99
    assert (await reader.catch_up(max_check=5, page_size=5)).kind == "reload"


async def test_clear_keeps_the_session_and_reloads(agents: tuple[Path, Any]) -> None:
    path, store = agents
    reader = Reader(store)
    await reader.load()
    writer = await open_store(str(path), writable=True)
    try:
        await writer.writer.clear_messages(SID)
    finally:
        await writer.close()
    found = await reader.catch_up()
    assert found.kind == "reload" and found.info is not None and found.info.messages == 0
    await reader.load()
    assert reader.loaded == [] and (await reader.catch_up()).kind == "append"
    await agents_add(path, items(2))
    found = await reader.catch_up()
    assert found.kind == "append" and [m.text for m in found.new] == ["message 0", "message 1"]


async def test_a_deleted_session_is_gone_and_reloads_when_it_comes_back(
    agents: tuple[Path, Any],
) -> None:
    path, store = agents
    reader = Reader(store)
    await reader.load()
    session = AgentsSQLiteSession(SID, str(path))
    try:
        await session.clear_session()  # deletes the session row too
    finally:
        session.close()
    assert await reader.catch_up() == CatchUp("gone")
    assert (await reader.catch_up()).kind == "gone"
    await agents_add(path, items(1))
    found = await reader.catch_up()
    assert found.kind == "reload" and found.info is not None and found.info.messages == 1


async def test_one_loaded_message_not_at_the_start_reloads(agents: tuple[Path, Any]) -> None:
    _path, store = agents
    reader = Reader(store, page=1)
    await reader.load()
    assert not reader.at_start and len(reader.loaded) == 1
    assert (await reader.catch_up()).kind == "reload"


async def test_a_branch_is_followed_on_its_own(tmp_path: Path) -> None:
    from agents.extensions.memory import AdvancedSQLiteSession

    path = tmp_path / "advanced.db"
    lib = AdvancedSQLiteSession(session_id=SID, db_path=str(path), create_tables=True)
    try:
        for turn in range(3):
            await lib.add_items(items(2, 2 * turn))
        assert await lib.create_branch_from_turn(2, "alt") == "alt"
        await lib.add_items([{"role": "user", "content": "alt question"}])
        store = await open_store(str(path))
        try:
            on_alt = Reader(store, page=10, branch="alt")
            on_main = Reader(store, page=10)
            await on_alt.load()
            await on_main.load()
            assert on_alt.texts() == ["message 0", "message 1", "alt question"]
            assert on_main.texts() == [f"message {i}" for i in range(6)]

            await lib.add_items([{"role": "assistant", "content": "alt answer"}])
            found = await on_alt.catch_up()
            assert found.kind == "append" and [m.text for m in found.new] == ["alt answer"]
            assert found.info is not None and found.info.messages == 4
            found = await on_main.catch_up()
            assert found.kind == "append" and found.new == []

            await lib.switch_to_branch("main")
            await lib.add_items([{"role": "user", "content": "main again"}])
            assert [m.text for m in (await on_main.catch_up()).new] == ["main again"]
            assert (await on_alt.catch_up()).new == []
        finally:
            await store.close()
    finally:
        lib.close()


# --------------------------------------------------------------------------- polling


async def test_change_tracker_over_a_real_store(agents: tuple[Path, Any]) -> None:
    path, store = agents
    tracker = ChangeTracker(interval=0.4, max_backoff=10)
    assert tracker.token is None
    first = tracker.seen(await store.change_token())
    assert first.delay == 0.4 and not first.changed  # the baseline
    assert not tracker.seen(await store.change_token()).changed
    await agents_add(path, items(1, 25))
    assert tracker.seen(await store.change_token()).changed
    assert not tracker.seen(await store.change_token()).changed

    # Our own write: rebased, not a change.
    tracker.rebase()
    await agents_add(path, items(1, 26))
    assert not tracker.seen(await store.change_token()).changed
    # A poll that started before a pause: the token is not taken.
    await agents_add(path, items(1, 27))
    assert not tracker.seen(await store.change_token(), paused=True).changed
    assert tracker.seen(await store.change_token()).changed


def test_change_tracker_backs_off_and_recovers() -> None:
    tracker = ChangeTracker(interval=0.5, max_backoff=3)
    tracker.seen("a")
    error = OSError("server gone")
    delays = []
    for i in range(5):
        poll = tracker.failed(error)
        assert poll.error is error and poll.first_failure == (i == 0) and not poll.changed
        delays.append(poll.delay)
    assert delays == [1.0, 2.0, 3, 3, 3] and tracker.error is error
    back = tracker.seen("b")
    assert back.recovered and back.changed and back.delay == 0.5 and tracker.error is None
    assert not tracker.seen("b").recovered
    assert tracker.failed(error).delay == 1.0  # the back-off starts over
    tracker.reset()
    assert tracker.token is None and tracker.error is None
    assert not tracker.seen("c").changed  # a new baseline
