"""Live refresh: another process (an agent) writes to the store the window has open.

The writers are real: subprocesses running ``agents.SQLiteSession``, flux's
``SQLiteSession`` (WAL), the Agents SDK's ``SQLAlchemySession`` on Postgres, and a plain
``sqlite3`` writer on a rollback-journal file. Each exits non-zero on any exception (a
"database is locked" included). Meanwhile the window has the store open read-only, a
:class:`~fluxgui.qt.watch.StoreWatcher` polls it and feeds
``SessionListModel.refresh`` and ``ConversationPane.catch_up``. No sleeps: every wait is
``qtbot.waitUntil`` on the state the user would see, and the time from the writer's last
write to the view showing it is measured.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import sqlite_rows
from PySide6.QtCore import QModelIndex, QPersistentModelIndex
from qt_helpers import OFFSCREEN_NOISE, run_async, run_on, write_agents_store, write_flux_store

from fluxgui.adapters import open_store
from fluxgui.qt.conversation import GONE_TEXT
from fluxgui.qt.watch import StoreWatcher

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

#: the view must show the last write this soon (seconds; the watcher polls every 0.4 s)
MAX_LATENCY = 3.0
WAIT = 30_000  # ms: generous, for a loaded CI machine; the latency is asserted apart


# --------------------------------------------------------------------------- writers

_PRELUDE = r'''
import asyncio, json, os, sys, time, traceback

LOG = sys.argv[1]
ARGS = json.loads(sys.argv[2])


def log(**record):
    record["t"] = time.time()
    with open(LOG, "a") as out:
        out.write(json.dumps(record) + "\n")


def item(i):
    if i % 2 == 0:
        return {"role": "user", "content": f"live question {i}"}
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": f"live answer {i}"}]}


def run(main):
    try:
        asyncio.run(main())
    except BaseException:
        traceback.print_exc()
        sys.exit(1)
'''

AGENTS_WRITER = _PRELUDE + r'''
from agents import SQLiteSession


async def main():
    db, sid, new_sid, n, pause = ARGS["db"], ARGS["sid"], ARGS["new"], ARGS["n"], ARGS["pause"]
    session = SQLiteSession(sid, db)
    for i in range(n):
        await session.add_items([item(i)])
        log(write=i)
        if i == n // 2:
            other = SQLiteSession(new_sid, db)
            await other.add_items([{"role": "user", "content": "a session born live"}])
            other.close()
            log(created=new_sid)
        await asyncio.sleep(pause)
    log(items=await session.get_items())
    session.close()


run(main)
'''

FLUX_WRITER = _PRELUDE + r'''
from flux.sessions import SQLiteSession


async def main():
    db, sid, new_sid, n, pause = ARGS["db"], ARGS["sid"], ARGS["new"], ARGS["n"], ARGS["pause"]
    session = SQLiteSession(db_path=db, session_id=sid)
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        await session.add_messages([{"role": role, "content": f"flux live {i}"}])
        log(write=i)
        if i == n // 2:
            await SQLiteSession(db_path=db, session_id=new_sid).add_messages(
                [{"role": "user", "content": "a session born live"}])
            log(created=new_sid)
        await asyncio.sleep(pause)
    log(items=await session.get_messages())


run(main)
'''

PG_WRITER = _PRELUDE + r'''
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession


async def main():
    url, sid, new_sid, n, pause = ARGS["url"], ARGS["sid"], ARGS["new"], ARGS["n"], ARGS["pause"]
    session = SQLAlchemySession.from_url(sid, url=url)
    for i in range(n):
        await session.add_items([item(i)])
        log(write=i)
        if i == n // 2:
            other = SQLAlchemySession(new_sid, engine=session.engine)
            await other.add_items([{"role": "user", "content": "a session born live"}])
            log(created=new_sid)
        await asyncio.sleep(pause)
    log(items=await session.get_items())
    # An agent keeps its connection: stay connected until the test has seen everything.
    deadline = time.time() + 60
    while not os.path.exists(ARGS["stop"]) and time.time() < deadline:
        await asyncio.sleep(0.05)
    await session.engine.dispose()


run(main)
'''

JOURNAL_WRITER = _PRELUDE + r'''
import sqlite3


async def main():
    # An agent writing the Agents SDK schema through plain sqlite3 on a rollback-journal
    # file (as older SDKs did): a reader holding a SHARED lock makes its COMMIT wait, and
    # past the (short) timeout fail with "database is locked".
    db, sid, n = ARGS["db"], ARGS["sid"], ARGS["n"]
    for i in range(n):
        conn = sqlite3.connect(db, timeout=ARGS["timeout"])
        try:
            conn.execute("INSERT OR IGNORE INTO agent_sessions (session_id) VALUES (?)", (sid,))
            conn.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                         (sid, json.dumps(item(i))))
            conn.execute("UPDATE agent_sessions SET updated_at = CURRENT_TIMESTAMP "
                         "WHERE session_id = ?", (sid,))
            conn.commit()
        finally:
            conn.close()
        log(write=i)
        await asyncio.sleep(ARGS["pause"])
    conn = sqlite3.connect(db, timeout=ARGS["timeout"])
    rows = conn.execute("SELECT message_data FROM agent_messages WHERE session_id = ? "
                        "ORDER BY id", (sid,)).fetchall()
    conn.close()
    log(items=[json.loads(r[0]) for r in rows])


run(main)
'''

DELETER = _PRELUDE + r'''
from agents import SQLiteSession


async def main():
    for sid in ARGS["delete"]:
        session = SQLiteSession(sid, ARGS["db"])
        await session.clear_session()  # deletes the session row too
        session.close()
        log(deleted=sid)
    for sid in ARGS.get("recreate", []):
        session = SQLiteSession(sid, ARGS["db"])
        await session.add_items([{"role": "user", "content": "back again"}])
        session.close()
        log(recreated=sid)


run(main)
'''


class Writer:
    """A writer subprocess: its log (one JSON record a line) and how it ended."""

    def __init__(self, tmp_path: Path, name: str, code: str, args: dict[str, Any]) -> None:
        script = tmp_path / f"{name}.py"
        script.write_text(code)
        self.log_path = tmp_path / f"{name}.log"
        self.err_path = tmp_path / f"{name}.err"
        self._err = self.err_path.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(self.log_path), json.dumps(args)],
            stdout=self._err,
            stderr=subprocess.STDOUT,
        )

    @property
    def done(self) -> bool:
        return self.proc.poll() is not None

    @property
    def failed(self) -> bool:
        return self.proc.poll() not in (None, 0)

    def records(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]

    def written(self) -> int:
        return sum(1 for r in self.records() if "write" in r)

    def last_write_time(self) -> float:
        return max(r["t"] for r in self.records() if "write" in r or "created" in r)

    def items(self) -> list[Any]:
        return next(r["items"] for r in self.records() if "items" in r)

    def check(self) -> None:
        """The writer ended and every write succeeded."""
        code = self.proc.wait(timeout=60)
        self._err.close()
        assert code == 0, f"the writer failed (exit {code}):\n{self.err_path.read_text()}"
        assert "locked" not in self.err_path.read_text()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


@pytest.fixture
def writers() -> Iterator[list[Writer]]:
    started: list[Writer] = []
    yield started
    for w in started:
        w.kill()


# --------------------------------------------------------------------------- window


class Live:
    """The window with a watcher wired as the window wires it, and what the test watches."""

    def __init__(self, qtbot: Any, window: Any, watcher: StoreWatcher) -> None:
        self.qtbot, self.window, self.watcher = qtbot, window, watcher
        self.resets = {"sessions": 0, "messages": 0}
        window.sessions.modelReset.connect(lambda: self._count("sessions"))
        window.conversation.model.modelReset.connect(lambda: self._count("messages"))
        self.counting = False

    def _count(self, which: str) -> None:
        if self.counting:
            self.resets[which] += 1

    def open(self, target: str, session_id: str) -> None:
        window = self.window
        with self.qtbot.waitSignal(window.messagesShown, timeout=WAIT):
            window.stores.open_target(target, session_id=session_id)
        self.qtbot.waitUntil(lambda: not window.bridge.busy, timeout=WAIT)
        assert window.current_session_id == session_id
        self.watcher.set_store(window.stores.store)
        self.qtbot.waitUntil(lambda: self.watcher.polls > 0, timeout=WAIT)  # baseline taken
        self.counting = True

    def texts(self) -> list[str]:
        return [m.text for m in self.window.conversation.model.messages]

    def rows(self) -> dict[str, int]:
        model = self.window.sessions
        return {model.session_at(r).id: model.session_at(r).messages for r in range(model.rowCount())}

    def ids(self) -> list[str]:
        model = self.window.sessions
        return [model.session_at(r).id for r in range(model.rowCount())]

    def scroll(self, step: int) -> None:
        """Move both views the way a reader does while the agent writes."""
        for view in (self.window.conversation.view, self.window.session_view):
            bar = view.verticalScrollBar()
            if bar.maximum() > 0:
                bar.setValue((bar.value() + step * 37) % (bar.maximum() + 1))


@pytest.fixture
def live(qtbot: Any, window: Any, qloop: asyncio.AbstractEventLoop) -> Iterator[Live]:
    wired = getattr(window, "watcher", None)
    if isinstance(wired, StoreWatcher):  # the window wires its own watcher
        watcher = wired
    else:
        watcher = StoreWatcher(window.bridge)

        def on_changed() -> None:
            window.sessions.refresh()
            window.conversation.live.catch_up()

        watcher.changed.connect(on_changed)
    yield Live(qtbot, window, watcher)
    run_on(qtbot, qloop, watcher.aclose())


def item_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def wait_for(
    qtbot: Any,
    writer: Writer,
    conditions: dict[str, Callable[[], bool]],
    *,
    tick: Callable[[int], None] | None = None,
) -> dict[str, float]:
    """Pump events until the writer has ended and every condition holds; return when each
    first held (``time.time()``). Stops early (to fail clearly) when the writer fails."""
    seen: dict[str, float] = {}
    ticks = [0]

    def check() -> bool:
        ticks[0] += 1
        if tick is not None:
            tick(ticks[0])
        now = time.time()
        for name, cond in conditions.items():
            if name not in seen and cond():
                seen[name] = now
        if writer.failed:
            return True
        # A condition that held may stop holding (a row moved on): they must all hold now.
        return writer.done and all(cond() for cond in conditions.values())

    qtbot.waitUntil(check, timeout=WAIT)
    writer.check()
    return seen


# --------------------------------------------------------------------------- SQLite, WAL


def test_agents_writer_appends_while_the_window_watches(
    qtbot: Any, live: Live, tmp_path: Path, writers: list[Writer], qtmodeltester: Any
) -> None:
    db = write_agents_store(
        tmp_path / "agents.db",
        {
            "live": [[{"role": "user", "content": "start"}], [SEEDED]],
            "older-a": [[{"role": "user", "content": "a"}]],
            "older-b": [[{"role": "user", "content": "b"}]],
        },
    )
    live.open(str(db), "live")
    window = live.window
    assert live.ids()[-1] == "live"  # written first: the least recently active
    qtmodeltester.check(window.sessions)  # Qt's model tester stays attached: every change
    qtmodeltester.check(window.conversation.model)
    session_row = QPersistentModelIndex(window.sessions.index(window.sessions.row_of("live"), 0))
    n = 40
    expected = ["start", "seeded answer"] + [item_text(item_for(i)) for i in range(n)]
    writer = Writer(tmp_path, "agents_writer", AGENTS_WRITER,
                    {"db": str(db), "sid": "live", "new": "born-live", "n": n, "pause": 0.02})
    writers.append(writer)

    seen = wait_for(
        qtbot,
        writer,
        {
            "pane": lambda: live.texts() == expected,
            "list": lambda: live.rows().get("live") == n + 2 and "born-live" in live.rows(),
        },
        tick=live.scroll,
    )
    # What the library itself reads back is what the pane shows.
    assert [item_text(i) for i in writer.items()] == live.texts()
    latency = seen["pane"] - writer.last_write_time()
    list_latency = seen["list"] - writer.last_write_time()
    print(f"\n[live refresh] agents.SQLiteSession: pane {latency:.2f} s, list {list_latency:.2f} s "
          f"after the last write ({n} writes, {live.watcher.polls} polls)")
    assert latency < MAX_LATENCY and list_latency < MAX_LATENCY

    # Nothing was reset: rows moved and were inserted; the selection followed them.
    assert live.resets == {"sessions": 0, "messages": 0}
    assert session_row.isValid() and window.sessions.session_at(session_row.row()).id == "live"
    current = window.session_view.currentIndex()
    assert window.sessions.session_at(current.row()).id == "live"
    assert window.current_session_id == "live"
    # The list is in the store's order: the session written last on top.
    assert live.ids() == store_ids(db)
    assert live.ids()[0] == "live"
    assert window.conversation.status.text() == f"all {n + 2} messages"


def test_flux_writer_wal_catch_up_in_pages(
    qtbot: Any, live: Live, tmp_path: Path, writers: list[Writer]
) -> None:
    first = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"old {i}"} for i in range(30)]
    db = write_flux_store(
        tmp_path / "flux.db",
        {"flux-live": first, "flux-other": [{"role": "user", "content": "other"}]},
    )
    pane = live.window.conversation
    pane.page_size = 8  # so that catching up takes several forward pages
    live.open(str(db), "flux-live")
    n = 40
    writer = Writer(tmp_path, "flux_writer", FLUX_WRITER,
                    {"db": str(db), "sid": "flux-live", "new": "flux-born", "n": n, "pause": 0.015})
    writers.append(writer)
    tail = [f"flux live {i}" for i in range(n)]

    seen = wait_for(
        qtbot,
        writer,
        {
            "pane": lambda: live.texts()[-n:] == tail,
            "list": lambda: live.rows().get("flux-live") == 30 + n and "flux-born" in live.rows(),
        },
        tick=live.scroll,
    )
    everything = [m["content"] for m in writer.items()]
    shown = live.texts()
    assert shown == everything[-len(shown):]  # one contiguous run, ending at the last
    latency = seen["pane"] - writer.last_write_time()
    print(f"\n[live refresh] flux SQLiteSession (WAL): pane {latency:.2f} s after the last write")
    assert latency < MAX_LATENCY
    assert live.resets == {"sessions": 0, "messages": 0}
    assert live.ids() == store_ids(db)
    assert str(30 + n) in pane.status.text()


# --------------------------------------------------------------------------- Postgres


def test_postgres_writer_appends_while_the_window_watches(
    qtbot: Any, live: Live, tmp_path: Path, writers: list[Writer], pg_url: str
) -> None:
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    async def seed() -> None:
        for sid, items in {"pg-older": [{"role": "user", "content": "older"}],
                           "pg-live": [{"role": "user", "content": "start"}]}.items():
            session = SQLAlchemySession.from_url(sid, url=pg_url, create_tables=True)
            await session.add_items(items)  # type: ignore[arg-type]
            await session.engine.dispose()

    run_async(seed())
    live.open(pg_url, "pg-live")
    # A short burst (as an agent's turn is), from a writer that stays connected until the
    # view has shown everything.
    n = 10
    stop = tmp_path / "stop"
    writer = Writer(tmp_path, "pg_writer", PG_WRITER,
                    {"url": pg_url, "sid": "pg-live", "new": "pg-born", "n": n,
                     "pause": 0.03, "stop": str(stop)})
    writers.append(writer)
    expected = ["start"] + [item_text(item_for(i)) for i in range(n)]
    seen: dict[str, float] = {}

    def check() -> bool:
        now = time.time()
        if "pane" not in seen and live.texts() == expected:
            seen["pane"] = now
        if "list" not in seen and live.rows().get("pg-live") == n + 1 and "pg-born" in live.rows():
            seen["list"] = now
        return writer.failed or len(seen) == 2

    qtbot.waitUntil(check, timeout=WAIT)
    stop.touch()
    writer.check()
    assert [item_text(i) for i in writer.items()] == live.texts()
    assert live.resets == {"sessions": 0, "messages": 0}
    assert live.ids() == ["pg-live", "pg-born", "pg-older"]
    latency = max(seen.values()) - writer.last_write_time()
    print(f"\n[live refresh] SQLAlchemySession on Postgres: view complete {latency:.2f} s "
          "after the last write (writer still connected)")
    assert latency < MAX_LATENCY


# --------------------------------------------------------------------------- deletions


def test_deleted_sessions_leave_the_list_and_the_pane_says_so(
    qtbot: Any, live: Live, tmp_path: Path, writers: list[Writer]
) -> None:
    db = write_agents_store(
        tmp_path / "agents.db",
        {sid: [[{"role": "user", "content": f"hello {sid}"}]] for sid in ("s1", "s2", "s3", "s4")},
    )
    live.open(str(db), "s4")  # the most recent: row 0
    writer = Writer(tmp_path, "deleter", DELETER, {"db": str(db), "delete": ["s2"]})
    writers.append(writer)
    wait_for(qtbot, writer, {"gone": lambda: live.ids() == ["s4", "s3", "s1"]})
    assert live.resets == {"sessions": 0, "messages": 0}
    assert live.window.current_session_id == "s4" and live.texts() == ["hello s4"]


def test_open_session_deleted_then_recreated(
    qtbot: Any, tmp_path: Path, writers: list[Writer], qloop: asyncio.AbstractEventLoop
) -> None:
    """The pane on its own (a window moves the list's current row off a removed row)."""
    from fluxgui.qt.bridge import AsyncBridge
    from fluxgui.qt.conversation import ConversationPane

    db = write_agents_store(
        tmp_path / "agents.db",
        {"keep": [[{"role": "user", "content": "stays"}]],
         "doomed": [[{"role": "user", "content": "about to go"}]]},
    )
    bridge = AsyncBridge()
    pane = ConversationPane(bridge)
    qtbot.addWidget(pane)
    pane.show()
    store = run_on(qtbot, qloop, open_store(str(db)))
    watcher = StoreWatcher(bridge, interval=0.1)
    watcher.changed.connect(pane.live.catch_up)
    gone: list[str] = []
    pane.sessionGone.connect(gone.append)
    try:
        with qtbot.waitSignal(pane.loaded, timeout=WAIT):
            pane.show_session(store, "doomed")
        watcher.set_store(store)
        qtbot.waitUntil(lambda: watcher.polls > 0, timeout=WAIT)

        writer = Writer(tmp_path, "deleter", DELETER, {"db": str(db), "delete": ["doomed"]})
        writers.append(writer)
        wait_for(qtbot, writer, {"gone": lambda: pane.view.placeholder == GONE_TEXT})
        assert gone == ["doomed"] and pane.gone and pane.loaded_count == 0
        assert pane.session_id == "doomed"

        # The agent starts the session again: the pane shows it again.
        again = Writer(tmp_path, "again", DELETER,
                       {"db": str(db), "delete": [], "recreate": ["doomed"]})
        writers.append(again)
        wait_for(qtbot, again, {"back": lambda: [m.text for m in pane.model.messages] == ["back again"]})
        assert not pane.gone and pane.view.placeholder == ""
    finally:
        run_on(qtbot, qloop, watcher.aclose())
        run_on(qtbot, qloop, bridge.aclose())
        run_on(qtbot, qloop, store.close())


# --------------------------------------------------------------------------- locking


def test_rollback_journal_writer_never_sees_database_is_locked(
    qtbot: Any, live: Live, tmp_path: Path, writers: list[Writer]
) -> None:
    """A writer that does not use WAL needs every reader out of the file to commit: the
    window's polls and reads must not keep a SHARED lock, even while the views scroll."""
    sessions = {f"bg-{i:02d}": [[{"role": "user", "content": f"background {i} " * 20}]] for i in range(60)}
    sessions["journal"] = [[{"role": "user", "content": "start"}]]
    db = write_agents_store(tmp_path / "journal.db", sessions)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    conn.close()
    live.open(str(db), "journal")
    # Between polls the window holds no lock at all: another connection can take the
    # whole file at once (it would wait, then fail, if a reader kept a SHARED lock).
    qtbot.waitUntil(lambda: live.watcher.polls >= 3, timeout=WAIT)
    probe = sqlite3.connect(db, timeout=0.2)
    probe.execute("BEGIN EXCLUSIVE")
    probe.rollback()
    probe.close()
    n = 120
    writer = Writer(tmp_path, "journal_writer", JOURNAL_WRITER,
                    {"db": str(db), "sid": "journal", "n": n, "pause": 0.005, "timeout": 0.5})
    writers.append(writer)
    expected = ["start"] + [item_text(item_for(i)) for i in range(n)]
    seen = wait_for(qtbot, writer, {"pane": lambda: live.texts() == expected}, tick=live.scroll)
    assert writer.written() == n
    assert [item_text(i) for i in writer.items()] == expected
    latency = seen["pane"] - writer.last_write_time()
    print(f"\n[live refresh] rollback-journal writer (0.5 s busy timeout): {n} writes, none "
          f"locked; pane {latency:.2f} s after the last write")
    assert latency < MAX_LATENCY
    assert live.ids()[0] == "journal"
    assert live.resets == {"sessions": 0, "messages": 0}


# --------------------------------------------------------------------------- helpers


def item_for(i: int) -> dict[str, Any]:
    """The item the writer scripts write as their ``i``-th."""
    if i % 2 == 0:
        return {"role": "user", "content": f"live question {i}"}
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": f"live answer {i}"}]}


def store_ids(path: Path) -> list[str]:
    """The store's own listing (every session, most recently active first)."""

    async def listing() -> list[str]:
        async with await open_store(str(path)) as store:
            page = await store.reader.list_sessions(limit=10_000)
            return [s.id for s in page.sessions]

    return run_async(listing())


SEEDED = {"type": "message", "role": "assistant",
          "content": [{"type": "output_text", "text": "seeded answer"}]}


# =========================================================================== the pieces
#
# Below, "another process" is another connection in this process (a library writer on a
# worker thread, or plain sqlite3): for SQLite's data_version that is the same thing, and
# it makes each step deterministic.


@pytest.fixture
def stores(qtbot: Any, qloop: asyncio.AbstractEventLoop) -> Iterator[Callable[[Path], Any]]:
    opened: list[Any] = []

    def open_(path: Path) -> Any:
        store = run_on(qtbot, qloop, open_store(str(path)))
        opened.append(store)
        return store

    yield open_
    for store in opened:
        run_on(qtbot, qloop, store.close())


# --------------------------------------------------------------------------- watcher


class FakeStore:
    """A store whose change token the test sets; it can be made to fail."""

    def __init__(self) -> None:
        self.token: Any = 1
        self.error: Exception | None = None
        self.calls: list[float] = []

    async def change_token(self) -> Any:
        self.calls.append(time.monotonic())
        if self.error is not None:
            raise self.error
        return self.token


def test_watcher_emits_on_change_backs_off_on_errors_and_pauses(
    qtbot: Any, bridge: Any, qloop: asyncio.AbstractEventLoop
) -> None:
    from fluxgui.core.errors import StoreUnavailable

    store = FakeStore()
    watcher = StoreWatcher(bridge, interval=0.02, max_backoff=0.16)
    changes: list[int] = []
    watcher.changed.connect(lambda: changes.append(watcher.polls))
    down: list[Any] = []
    watcher.unavailable.connect(down.append)
    up: list[bool] = []
    watcher.available.connect(lambda: up.append(True))
    try:
        watcher.set_store(store)  # type: ignore[arg-type]
        assert watcher.running and watcher.store is store
        qtbot.waitUntil(lambda: watcher.polls >= 3, timeout=WAIT)
        assert changes == [] and watcher.token == 1  # the first poll is the baseline

        store.token = 2
        qtbot.waitUntil(lambda: len(changes) == 1, timeout=WAIT)
        polls = watcher.polls
        qtbot.waitUntil(lambda: watcher.polls >= polls + 3, timeout=WAIT)
        assert len(changes) == 1  # once per change

        # The server goes away: no error reaches anyone, and polls slow down.
        store.error = StoreUnavailable("server unreachable")
        qtbot.waitUntil(lambda: len(down) == 1, timeout=WAIT)
        failing_from = len(store.calls)
        qtbot.waitUntil(lambda: len(store.calls) >= failing_from + 6, timeout=WAIT)
        gaps = [b - a for a, b in zip(store.calls[failing_from:], store.calls[failing_from + 1:])]
        assert gaps[-1] >= 0.15 and gaps[-1] > gaps[0]  # backed off to the maximum
        assert len(down) == 1 and watcher.error is store.error and len(changes) == 1

        # It comes back, changed meanwhile: one change.
        store.error = None
        store.token = 3
        qtbot.waitUntil(lambda: len(changes) == 2, timeout=WAIT)
        assert up == [True] and watcher.error is None

        # Paused: no polls; resumed: the change made meanwhile is seen (or ignored).
        watcher.pause()
        watcher.pause()
        assert watcher.paused
        calls = len(store.calls)
        store.token = 4
        watcher.resume()  # still paused once
        qtbot.wait(100)  # nothing to wait *for*: no poll may happen
        assert len(store.calls) <= calls + 1 and len(changes) == 2
        watcher.resume()
        qtbot.waitUntil(lambda: len(changes) == 3, timeout=WAIT)
        watcher.pause()
        store.token = 5
        watcher.resume(ignore_changes=True)
        polls = watcher.polls
        qtbot.waitUntil(lambda: watcher.polls >= polls + 3, timeout=WAIT)
        assert len(changes) == 3 and watcher.token == 5

        # Stopping: set_store(None) ends the loop; aclose() waits for it.
        watcher.set_store(None)
        calls = len(store.calls)
        qtbot.waitUntil(lambda: not watcher.running, timeout=WAIT)
        assert len(store.calls) <= calls + 1
        watcher.set_store(store)  # type: ignore[arg-type]
        qtbot.waitUntil(lambda: watcher.polls > 0, timeout=WAIT)
    finally:
        run_on(qtbot, qloop, watcher.aclose())
    assert not watcher.running and watcher.store is None


def test_watcher_polls_a_real_store_with_one_tiny_query(
    qtbot: Any, bridge: Any, stores: Callable[[Path], Any], tmp_path: Path,
    qloop: asyncio.AbstractEventLoop,
) -> None:
    db = write_flux_store(tmp_path / "flux.db", {"a": [{"role": "user", "content": "x"}]})
    store = stores(db)
    sql: list[str] = []
    fetch = store.backend.fetchall

    async def counting(query: str, params: Any = None) -> Any:
        sql.append(" ".join(query.split()))
        return await fetch(query, params)

    store.backend.fetchall = counting
    watcher = StoreWatcher(bridge)
    changed: list[bool] = []
    watcher.changed.connect(lambda: changed.append(True))
    try:
        watcher.set_store(store)
        qtbot.waitUntil(lambda: watcher.polls >= 2, timeout=WAIT)
        assert set(sql) == {"PRAGMA data_version"}
        write_flux_store(db, {"a": [{"role": "assistant", "content": "y"}]})
        qtbot.waitUntil(lambda: bool(changed), timeout=WAIT)
    finally:
        run_on(qtbot, qloop, watcher.aclose())


# --------------------------------------------------------------------------- session list


def flux_sessions(n: int) -> dict[str, list[dict[str, Any]]]:
    return {
        f"s{i:02d}": [{"role": "user", "content": f"hello {i}"}]
        + [{"role": "assistant", "content": f"reply {i}.{k}"} for k in range(i % 4)]
        for i in range(n)
    }


def flux_clear(path: Path, session_id: str) -> None:
    from flux.sessions import SQLiteSession

    run_async(SQLiteSession(db_path=str(path), session_id=session_id).clear())


def listing(path: Path, order: str, descending: bool) -> list[str]:
    async def run() -> list[str]:
        async with await open_store(str(path)) as store:
            page = await store.reader.list_sessions(limit=10_000, order=order, descending=descending)  # type: ignore[arg-type]
            return [s.id for s in page.sessions]

    return run_async(run())


def model_ids(model: Any) -> list[str]:
    return [model.session_at(r).id for r in range(model.rowCount())]


def model_counts(model: Any) -> dict[str, int]:
    return {model.session_at(r).id: model.session_at(r).messages for r in range(model.rowCount())}


def load_rows(qtbot: Any, model: Any, n: int) -> None:
    """Fetch pages the way a view does until ``n`` rows are loaded."""
    while True:
        qtbot.waitUntil(lambda: not model.loading, timeout=WAIT)
        if model.rowCount() >= n or not model.canFetchMore(QModelIndex()):
            return
        with qtbot.waitSignal(model.pageLoaded, timeout=WAIT):
            model.fetchMore(QModelIndex())


def refresh(qtbot: Any, model: Any, ids: tuple[str, ...] = ()) -> list[Any]:
    with qtbot.waitSignal(model.refreshed, timeout=WAIT) as blocker:
        model.refresh(ids)
    return blocker.args


ORDERS = [
    pytest.param(-1, "activity", True, id="activity"),
    pytest.param(1, "messages", True, id="messages-desc"),
    pytest.param(0, "id", False, id="id-asc"),
    pytest.param(2, "activity", False, id="activity-asc"),
]


@pytest.mark.parametrize(("column", "order", "descending"), ORDERS)
def test_refresh_merges_appends_new_and_deleted_sessions_in_every_order(
    qtbot: Any, bridge: Any, stores: Callable[[Path], Any], tmp_path: Path, qtmodeltester: Any,
    column: int, order: str, descending: bool,
) -> None:
    from PySide6.QtCore import QItemSelectionModel, Qt

    from fluxgui.qt.sessions import SessionListModel

    db = write_flux_store(tmp_path / "flux.db", flux_sessions(30))
    model = SessionListModel(bridge, page_size=10)
    model.set_store(stores(db))
    if column >= 0:
        model.sort(column, Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder)
    load_rows(qtbot, model, 20)  # two pages of three
    assert model.rowCount() == 20 and not model.at_end
    assert model_ids(model) == listing(db, order, descending)[:20]
    qtmodeltester.check(model)
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    keep = {model.session_at(r).id: QPersistentModelIndex(model.index(r, 0)) for r in range(20)}
    selection = QItemSelectionModel(model)
    picked = model_ids(model)[7]
    selection.select(model.index(7, 0), QItemSelectionModel.SelectionFlag.Select)

    before = listing(db, order, descending)
    low = before[15]  # a loaded row low in the list
    write_flux_store(db, {low: [{"role": "user", "content": "more"}] * 3,
                          "new-session": [{"role": "user", "content": "new"}]})
    flux_clear(db, before[3])
    inserted, removed, updated = refresh(qtbot, model)

    after = listing(db, order, descending)
    ids = model_ids(model)
    assert ids == after[: len(ids)], "the loaded rows are the head of the store's listing"
    assert before[3] not in ids and removed >= 1 and updated >= 1
    counts = dict(sqlite_rows(db, "SELECT session_id, COUNT(*) FROM messages GROUP BY session_id"))
    assert model_counts(model) == {sid: counts[sid] for sid in ids}
    assert counts[low] == 3 + len(flux_sessions(30)[low])
    assert resets == []
    for sid, index in keep.items():  # persistent indexes followed their rows
        if sid in ids:
            assert model.session_at(index.row()).id == sid
        else:
            assert not index.isValid()
    if picked in ids:
        assert [model.session_at(i.row()).id for i in selection.selectedIndexes()] == [picked]
    # Paging on gives every other session once, in order.
    load_rows(qtbot, model, 10**6)
    assert model_ids(model) == after
    model.set_store(None)


def test_refresh_in_search_mode_updates_and_removes_rows(
    qtbot: Any, bridge: Any, stores: Callable[[Path], Any], tmp_path: Path, qtmodeltester: Any
) -> None:
    from PySide6.QtCore import Qt

    from fluxgui.qt.sessions import SessionListModel

    db = write_flux_store(tmp_path / "flux.db", flux_sessions(12))
    model = SessionListModel(bridge, page_size=5)
    model.set_store(stores(db))
    with qtbot.waitSignal(model.searchFinished, timeout=WAIT):
        model.set_search("hello 1")  # s01, s10, s11
    assert sorted(model_ids(model)) == ["s01", "s10", "s11"]
    model.sort(SessionListModel.COUNT, Qt.SortOrder.DescendingOrder)
    qtmodeltester.check(model)
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))

    write_flux_store(db, {"s01": [{"role": "user", "content": "x"}] * 5,
                          "s05": [{"role": "user", "content": "hello 1 too"}]})
    flux_clear(db, "s10")
    refresh(qtbot, model)
    assert model_ids(model) == ["s01", "s11"]  # s01 now has the most; s05 is not searched for
    assert model_counts(model) == {"s01": 7, "s11": 4}
    assert resets == [] and model.search_text == "hello 1"
    # A later batch of a search still lands in its sorted place.
    with qtbot.waitSignal(model.searchFinished, timeout=WAIT):
        model.set_search("hello")
    assert model_ids(model)[0] == "s01"
    model.set_store(None)


def test_refresh_costs_a_page_on_a_10k_session_store(
    qtbot: Any, bridge: Any, stores: Callable[[Path], Any], tmp_path: Path
) -> None:
    from fluxgui.qt.sessions import REFRESH_SWEEP, SessionListModel

    db = tmp_path / "big.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        """CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
               role TEXT NOT NULL, content TEXT, metadata TEXT,
               created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
           CREATE INDEX idx_session ON messages(session_id);"""
    )
    conn.executemany(
        "INSERT INTO messages (session_id, role, content) VALUES (?, 'user', ?)",
        [(f"big-{i % 10_000:05d}", f"message {i}") for i in range(30_000)],
    )
    conn.commit()
    conn.close()
    store = stores(db)
    model = SessionListModel(bridge, page_size=100)
    model.set_store(store)
    load_rows(qtbot, model, 300)
    assert model.rowCount() == 300

    queries: list[int] = []
    fetch = store.backend.fetchall

    async def counting(sql: str, params: Any = None) -> Any:
        rows = await fetch(sql, params)
        queries.append(len(rows))
        return rows

    store.backend.fetchall = counting
    write_flux_store(db, {"big-04242": [{"role": "user", "content": "new"}]})
    started = time.perf_counter()
    refresh(qtbot, model)
    took = time.perf_counter() - started
    print(f"\n[live refresh] refresh of a 10,000-session store (300 rows loaded): "
          f"{took * 1000:.0f} ms, {len(queries)} queries, {sum(queries)} rows")
    assert model.session_at(0).id == "big-04242" and model.session_at(0).messages == 4
    assert len(queries) <= 3 and sum(queries) <= 2 * 100 + REFRESH_SWEEP
    model.set_store(None)


# --------------------------------------------------------------------------- conversation


@pytest.fixture
def pane(qtbot: Any, bridge: Any) -> Any:
    from fluxgui.qt.conversation import ConversationPane

    p = ConversationPane(bridge)
    qtbot.addWidget(p)
    p.resize(900, 600)
    p.show()
    qtbot.waitExposed(p)
    return p


def many(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
            for i in range(start, start + n)]


def show(qtbot: Any, pane: Any, store: Any, session_id: str) -> None:
    with qtbot.waitSignal(pane.loaded, timeout=WAIT):
        pane.show_session(store, session_id)
    qtbot.waitUntil(lambda: not pane.busy, timeout=WAIT)


def catch_up(qtbot: Any, pane: Any) -> int:
    with qtbot.waitSignal(pane.caughtUp, timeout=WAIT) as blocker:
        pane.live.catch_up()
    return blocker.args[0]


def top_of_view(pane: Any) -> tuple[int, int]:
    anchor = pane.view.anchor()
    return anchor.index.data(pane.model.MessageRole).id, anchor.top


def at_bottom(pane: Any) -> bool:
    bar = pane.view.verticalScrollBar()
    return bar.value() == bar.maximum()


def test_catch_up_appends_and_keeps_the_reader_where_they_were(
    qtbot: Any, pane: Any, stores: Callable[[Path], Any], tmp_path: Path
) -> None:
    db = write_agents_store(tmp_path / "a.db", {"s": [many(150)]})
    store = stores(db)
    show(qtbot, pane, store, "s")
    assert pane.loaded_count == 100 and at_bottom(pane)
    resets: list[bool] = []
    pane.model.modelReset.connect(lambda: resets.append(True))
    assert catch_up(qtbot, pane) == 0

    # At the bottom: new messages arrive and the view stays at the bottom.
    write_agents_store(db, {"s": [many(3, 150)]})
    assert catch_up(qtbot, pane) == 3
    assert [m.text for m in pane.model.messages[-3:]] == ["message 150", "message 151", "message 152"]
    qtbot.waitUntil(lambda: at_bottom(pane))
    assert pane.status.text() == "latest 103 of 153 messages"

    # Scrolled up: the same message stays at the same place, the current one current.
    # 250 new ones: three forward pages.
    current = pane.model.message(50)
    pane.select_message(current.id)
    bar = pane.view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    before = top_of_view(pane)
    write_agents_store(db, {"s": [many(250, 153)]})
    assert catch_up(qtbot, pane) == 250
    assert top_of_view(pane) == before and not at_bottom(pane)
    assert pane.current_message() == current
    assert [m.text for m in pane.model.messages] == [f"message {i}" for i in range(50, 403)]
    assert resets == []


def test_catch_up_reloads_when_messages_changed_otherwise(
    qtbot: Any, pane: Any, stores: Callable[[Path], Any], tmp_path: Path
) -> None:
    db = write_agents_store(tmp_path / "a.db", {"s": [many(60)]})
    store = stores(db)
    show(qtbot, pane, store, "s")
    bar = pane.view.verticalScrollBar()
    bar.setValue(bar.maximum() // 3)
    before = top_of_view(pane)

    # The last message edited in place (same id): reload, same place, new text.
    conn = sqlite3.connect(db)
    last_id = conn.execute("SELECT MAX(id) FROM agent_messages").fetchone()[0]
    conn.execute("UPDATE agent_messages SET message_data = ? WHERE id = ?",
                 (json.dumps({"role": "assistant", "content": "edited"}), last_id))
    conn.commit()
    with qtbot.waitSignal(pane.loaded, timeout=WAIT):
        pane.live.catch_up()
    assert pane.model.messages[-1].text == "edited"
    assert top_of_view(pane) == before
    assert pane.delegate.document(pane.model.messages[-1]).toPlainText() == "edited"

    # A message in the middle deleted (the count goes down): reload, still in place.
    middle = pane.model.messages[40]
    conn.execute("DELETE FROM agent_messages WHERE id = ?", (middle.id,))
    conn.commit()
    conn.close()
    with qtbot.waitSignal(pane.loaded, timeout=WAIT):
        pane.live.catch_up()
    assert middle.id not in [m.id for m in pane.model.messages] and pane.loaded_count == 59
    assert top_of_view(pane) == before
    assert pane.status.text() == "all 59 messages"
    # In step again: an append is an append.
    write_agents_store(db, {"s": [many(1, 60)]})
    assert catch_up(qtbot, pane) == 1


def test_catch_up_never_disturbs_a_running_load(
    qtbot: Any, pane: Any, stores: Callable[[Path], Any], tmp_path: Path
) -> None:
    db = write_agents_store(tmp_path / "a.db", {"s": [many(5)], "t": [many(7)]})
    store = stores(db)
    caught: list[int] = []
    pane.caughtUp.connect(caught.append)
    with qtbot.waitSignal(pane.loaded, timeout=WAIT):
        pane.show_session(store, "s")
        task = pane.task
        pane.live.catch_up()  # while "s" loads: runs after it
    qtbot.waitUntil(lambda: caught == [0], timeout=WAIT)
    assert not task.cancelled() and pane.loaded_count == 5

    # A catch-up running when another session is shown is dropped, not applied to it.
    write_agents_store(db, {"s": [many(2, 5)]})
    pane.live.catch_up()
    show(qtbot, pane, store, "t")
    qtbot.waitUntil(lambda: not pane._catching, timeout=WAIT)  # noqa: SLF001
    assert [m.text for m in pane.model.messages] == [f"message {i}" for i in range(7)]
    assert caught == [0]
