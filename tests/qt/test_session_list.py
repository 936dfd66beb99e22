"""The session list model: lazy paging, store-side sorting, incremental cancellable search;
and the debounced search box. Offscreen, over stores written by the real libraries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from helpers import sqlite_rows
from PySide6.QtCore import QElapsedTimer, QModelIndex, QPersistentModelIndex, QPoint, Qt, QTimer
from PySide6.QtWidgets import QTableView
from qt_helpers import OFFSCREEN_NOISE, run_async, run_on, write_flux_store

from fluxgui.adapters import open_store
from fluxgui.qt.sessions import SessionListModel
from fluxgui.qt.sessions import PLACEHOLDER, SearchBox

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

ROOT = QModelIndex()
ASC, DESC = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder
N_SESSIONS = 400


def big_sessions() -> dict[str, list[dict[str, Any]]]:
    """400 sessions of 1-5 messages: three in four mention "needle", one in four "hay"."""
    out: dict[str, list[dict[str, Any]]] = {}
    for i in range(N_SESSIONS):
        word = "hay" if i % 4 == 3 else "needle"
        msgs = [{"role": "user", "content": f"a {word} in message {i}"}]
        msgs += [{"role": "assistant", "content": f"reply {k}"} for k in range(i % 5)]
        out[f"sess-{(i * 7919) % N_SESSIONS:04d}"] = msgs  # ids not in write order
    return out


NEEDLE = {sid for sid, msgs in big_sessions().items() if "needle" in msgs[0]["content"]}
HAY = set(big_sessions()) - NEEDLE


@pytest.fixture(scope="module")
def big_db(tmp_path_factory) -> Path:
    """Written by ``flux.sessions.SQLiteSession``, once for the module (opened read-only)."""
    return write_flux_store(tmp_path_factory.mktemp("big") / "flux.db", big_sessions())


@pytest.fixture(scope="module")
def big_truth(big_db) -> dict[str, Any]:
    """What the rows say: count and last row id per session."""
    count: dict[str, int] = {}
    last: dict[str, int] = {}
    for row_id, sid in sqlite_rows(big_db, "SELECT id, session_id FROM messages"):
        count[sid] = count.get(sid, 0) + 1
        last[sid] = max(last.get(sid, 0), row_id)
    return {"count": count, "last": last}


def expected_order(truth: dict[str, Any], column: int, order: Qt.SortOrder) -> list[str]:
    ids = list(truth["count"])
    if column == SessionListModel.ID:
        key: Any = lambda s: s  # noqa: E731
    elif column == SessionListModel.COUNT:
        key = lambda s: (truth["count"][s], s)  # noqa: E731
    else:
        key = lambda s: truth["last"][s]  # noqa: E731
    return sorted(ids, key=key, reverse=order == DESC)


@pytest.fixture
def store(qtbot, qloop, big_db):
    s = run_on(qtbot, qloop, open_store(str(big_db)))
    yield s
    run_on(qtbot, qloop, s.close())


@pytest.fixture
def model(qtbot, bridge, store) -> Iterator[SessionListModel]:
    m = SessionListModel(bridge, page_size=50)
    m.set_store(store)
    yield m
    m.set_store(None)


def ids_of(model: SessionListModel) -> list[str]:
    return [model.session_at(r).id for r in range(model.rowCount())]


def load_all(qtbot, model: SessionListModel) -> None:
    """Fetch pages the way a view does, one at a time, until the listing is complete."""
    for _ in range(1000):
        qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
        if not model.canFetchMore(ROOT):
            return
        with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
            model.fetchMore(ROOT)
    raise AssertionError("paging does not end")


def wait_search(qtbot, model: SessionListModel, start: Any, timeout: int = 20_000) -> int:
    with qtbot.waitSignal(model.searchFinished, timeout=timeout) as blocker:
        start()
    return blocker.args[0]


def found_order(store_path: Path, text: str) -> list[str]:
    """The order the store's search yields ids in (its own, on another loop)."""

    async def collect() -> list[str]:
        async with await open_store(str(store_path)) as s:
            return [sid async for sid in s.reader.search_session_ids(text)]

    return run_async(collect())


class StallProbe:
    """Longest gap (ms) between ticks of a 1 ms timer: the longest time the UI thread was
    busy with one thing (a batch handled, rows inserted, a page painted)."""

    def __init__(self) -> None:
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(1)
        self._timer.timeout.connect(self._tick)
        self.worst = 0.0

    def __enter__(self) -> StallProbe:
        self._clock.start()
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.stop()

    def _tick(self) -> None:
        self.worst = max(self.worst, self._clock.nsecsElapsed() / 1e6)
        self._clock.restart()


# --------------------------------------------------------------------------- listing


def test_list_mode_pages_lazily(qtbot, qtmodeltester, model, big_truth):
    assert model.sortColumn() == -1 and model.search_text == "" and not model.searching
    assert model.rowCount() == 0 and model.canFetchMore(ROOT)
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000) as blocker:
        qtmodeltester.check(model)  # the tester itself asks for the first page
        model.fetchMore(ROOT)
    assert blocker.args == [50, True]
    assert model.rowCount() == 50, "one page, not the store"
    pages = []
    model.pageLoaded.connect(lambda added, more: pages.append((added, more)))
    load_all(qtbot, model)
    assert pages[-1] == (0, False) or pages[-1][1] is False
    assert sum(a for a, _ in pages) + 50 == N_SESSIONS
    assert ids_of(model) == expected_order(big_truth, SessionListModel.UPDATED, DESC)
    assert [model.session_at(r).messages for r in range(3)] == [
        big_truth["count"][sid] for sid in ids_of(model)[:3]
    ]
    assert model.at_end and not model.canFetchMore(ROOT)


@pytest.mark.parametrize(
    "column, order",
    [
        (SessionListModel.ID, ASC),
        (SessionListModel.ID, DESC),
        (SessionListModel.COUNT, DESC),
        (SessionListModel.COUNT, ASC),
        (SessionListModel.UPDATED, ASC),
    ],
)
def test_sorted_mode_reloads_in_the_store_order(qtbot, qtmodeltester, model, big_truth, column, order):
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        model.fetchMore(ROOT)
    qtmodeltester.check(model)
    with qtbot.waitSignal(model.modelReset), qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        model.sort(column, order)
    assert model.sortColumn() == column and model.sortOrder() == order
    assert model.rowCount() == 50, "the new order is paged too"
    load_all(qtbot, model)
    assert ids_of(model) == expected_order(big_truth, column, order)
    # Back to the store's natural order.
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        model.sort(-1, DESC)
    assert model.sortColumn() == -1
    load_all(qtbot, model)
    assert ids_of(model) == expected_order(big_truth, SessionListModel.UPDATED, DESC)


def test_sorting_by_last_active_descending_is_the_natural_order(qtbot, model):
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        model.fetchMore(ROOT)
    before = ids_of(model)
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    model.sort(SessionListModel.UPDATED, DESC)  # same store order: nothing to reload
    assert resets == [] and ids_of(model) == before
    assert model.sortColumn() == SessionListModel.UPDATED


def test_header_click_sorts_through_the_view(qtbot, model, big_truth):
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    header = view.horizontalHeader()
    header.setSectionsClickable(True)
    header.setSortIndicator(-1, DESC)  # no sort yet: the store's natural order
    view.setSortingEnabled(True)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    assert model.sortColumn() == -1
    qtbot.waitUntil(lambda: model.rowCount() > 0 and not model.loading, timeout=10_000)
    x = header.sectionViewportPosition(SessionListModel.COUNT) + 5
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    assert model.sortColumn() == SessionListModel.COUNT
    assert model.sortOrder() == DESC  # the model's initial order for counts: most first
    assert header.sortIndicatorSection() == SessionListModel.COUNT
    first = model.session_at(0)
    assert first.messages == max(big_truth["count"].values())


# --------------------------------------------------------------------------- search


def test_search_results_arrive_while_the_search_runs(qtbot, qtmodeltester, model, big_db, capsys):
    qtmodeltester.check(model)
    events: list[tuple[str, int]] = []
    model.searchStarted.connect(lambda text: events.append(("started", 0)))
    model.searchProgress.connect(lambda n: events.append(("progress", n)))
    model.searchFinished.connect(lambda n: events.append(("finished", n)))
    model.pageLoaded.connect(lambda added, more: events.append(("page", int(more))))
    with StallProbe() as probe:
        found = wait_search(qtbot, model, lambda: model.set_search("NEEDLE"))
    assert found == len(NEEDLE) == model.rowCount()
    assert set(ids_of(model)) == NEEDLE
    # Without a sort, rows keep the order the store found them in.
    assert ids_of(model) == found_order(big_db, "NEEDLE")
    progress = [n for kind, n in events if kind == "progress"]
    assert events[0] == ("started", 0)
    assert len(progress) >= 2, "several batches, each shown as it arrived"
    assert progress == sorted(progress) and progress[-1] == found
    assert events.index(("progress", progress[0])) < events.index(("finished", found))
    assert events[-2:] == [("page", 0), ("finished", found)]
    assert model.search_text == "NEEDLE" and not model.searching
    assert not model.canFetchMore(ROOT)
    with capsys.disabled():
        print(f"\n[session list] longest UI-thread stall during a {found}-session search: "
              f"{probe.worst:.1f} ms (batches of 50)")
    assert probe.worst < 100  # a frame is 16 ms; generous for a loaded CI machine


def test_search_in_sorted_mode_inserts_in_place(qtbot, qtmodeltester, model, big_db):
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        model.sort(SessionListModel.ID, ASC)
    qtmodeltester.check(model)
    snapshots: list[list[str]] = []
    model.searchProgress.connect(lambda n: snapshots.append(ids_of(model)))
    wait_search(qtbot, model, lambda: model.set_search("needle"))
    assert len(snapshots) >= 2
    assert all(snap == sorted(snap) for snap in snapshots), "sorted at every step"
    assert ids_of(model) == sorted(NEEDLE)

    # Sorting search results rearranges them in place; a persistent index follows its row.
    keep = QPersistentModelIndex(model.index(3, 0))
    kept_id = model.session_at(3).id
    with qtbot.waitSignal(model.layoutChanged):
        model.sort(SessionListModel.COUNT, DESC)
    infos = [model.session_at(r) for r in range(model.rowCount())]
    assert [(i.messages, i.id) for i in infos] == sorted(((i.messages, i.id) for i in infos), reverse=True)
    assert keep.isValid() and model.session_at(keep.row()).id == kept_id
    # No sort: the order they were found in.
    with qtbot.waitSignal(model.layoutChanged):
        model.sort(-1, DESC)
    assert ids_of(model) == found_order(big_db, "needle")


def test_a_new_search_cancels_the_running_one(qtbot, qtmodeltester, model):
    qtmodeltester.check(model)
    inserted: list[str] = []

    def on_inserted(parent: QModelIndex, first: int, last: int) -> None:
        inserted.extend(model.session_at(r).id for r in range(first, last + 1))

    model.rowsInserted.connect(on_inserted)
    finished: list[int] = []
    model.searchFinished.connect(finished.append)
    started: list[str] = []
    model.searchStarted.connect(started.append)
    found = wait_search(qtbot, model, lambda: (model.set_search("needle"), model.set_search("hay")))
    qtbot.waitUntil(lambda: not model._bridge.busy, timeout=10_000)
    assert started == ["needle", "hay"]
    assert finished == [found] == [len(HAY)]
    assert set(inserted) == HAY, "no result of the first search ever showed"
    assert set(ids_of(model)) == HAY and model.search_text == "hay"


def test_cancelling_mid_search_drops_its_later_results(qtbot, model):
    after_switch: list[str] = []
    switched = []

    def on_progress(found: int) -> None:
        if not switched:
            switched.append(found)
            model.set_search("hay")  # from inside the first search's own batch

    def on_inserted(parent: QModelIndex, first: int, last: int) -> None:
        if switched:
            after_switch.extend(model.session_at(r).id for r in range(first, last + 1))

    model.searchProgress.connect(on_progress)
    model.rowsInserted.connect(on_inserted)
    finished: list[int] = []
    model.searchFinished.connect(finished.append)
    with qtbot.waitSignal(model.searchFinished, timeout=20_000):
        model.set_search("needle")
    qtbot.waitUntil(lambda: not model._bridge.busy, timeout=10_000)
    assert switched and switched[0] < len(NEEDLE), "the first search was cut short"
    assert finished == [len(HAY)]
    assert set(after_switch) == HAY
    assert set(ids_of(model)) == HAY


def test_empty_search_restores_the_listing(qtbot, qtmodeltester, model, big_truth):
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        model.fetchMore(ROOT)
    first_page = ids_of(model)
    qtmodeltester.check(model)
    wait_search(qtbot, model, lambda: model.set_search("hay"))
    assert set(ids_of(model)) == HAY
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000) as blocker:
        model.set_search("")
    assert blocker.args == [50, True]
    assert ids_of(model) == first_page
    assert model.search_text == "" and not model.searching and model.canFetchMore(ROOT)
    # Blank text is no search either; the same text again is a no-op.
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    model.set_search("   ")
    model.set_search("")
    assert resets == []


def test_search_with_no_hits_and_set_store_cancelling(qtbot, model, store):
    found = wait_search(qtbot, model, lambda: model.set_search("no such text anywhere"))
    assert found == 0 and model.rowCount() == 0
    finished: list[int] = []
    model.searchFinished.connect(finished.append)
    model.set_search("needle")
    assert model.searching
    model.set_store(store)  # the same store again: a fresh listing, the search is gone
    assert not model.searching and model.search_text == "" and model.rowCount() == 0
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        model.fetchMore(ROOT)
    qtbot.waitUntil(lambda: not model._bridge.busy, timeout=10_000)
    assert finished == []
    assert model.rowCount() == 50


# --------------------------------------------------------------------------- Postgres


async def _busy_backends(url: str) -> list[tuple[str, str]]:
    """(state, query) of every other connection to this database that is inside a
    statement or a transaction (an open cursor is one)."""
    name = url.rsplit("/", 1)[1]
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    try:
        rows = await conn.fetch(
            "SELECT state, query FROM pg_stat_activity WHERE datname = $1 "
            "AND pid <> pg_backend_pid() AND state IS NOT NULL AND state <> 'idle'",
            name,
        )
        return [(r["state"], r["query"]) for r in rows]
    finally:
        await conn.close()


def test_cancelled_search_releases_its_postgres_cursor(pg_url, qtbot, qloop, bridge):
    """An Agents SDK store on Postgres written by ``SQLAlchemySession``: the first search
    is cancelled while its cursor is open; afterwards no connection is left in it."""
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
    from sqlalchemy.ext.asyncio import create_async_engine

    async def write() -> None:
        engine = create_async_engine(pg_url)
        try:
            for i in range(200):
                session = SQLAlchemySession(f"pg-{i:03d}", engine=engine, create_tables=True)
                word = "hay" if i % 4 == 3 else "needle"
                await session.add_items(
                    [{"role": "user", "content": f"{word} {i} part {k}"} for k in range(150)]
                )
        finally:
            await engine.dispose()

    run_async(write())
    store = run_on(qtbot, qloop, open_store(pg_url))
    model = SessionListModel(bridge, search_batch=20)
    model.set_store(store)
    seen_open: list[list[tuple[str, str]]] = []

    def on_progress(found: int) -> None:
        if not seen_open:
            # The loop is not pumped while this runs: the search is frozen mid-way.
            seen_open.append(run_async(_busy_backends(pg_url)))
            model.set_search("hay")

    model.searchProgress.connect(on_progress)
    try:
        with qtbot.waitSignal(model.searchFinished, timeout=30_000) as blocker:
            model.set_search("needle")
        qtbot.waitUntil(lambda: not bridge.busy, timeout=10_000)
        assert blocker.args == [50] and model.search_text == "hay"
        assert {model.session_at(r).id for r in range(model.rowCount())} == {
            f"pg-{i:03d}" for i in range(200) if i % 4 == 3
        }
        assert seen_open and any("ILIKE" in q for _, q in seen_open[0]), seen_open
        assert run_async(_busy_backends(pg_url)) == []
    finally:
        model.set_store(None)
        run_on(qtbot, qloop, bridge.aclose())
        run_on(qtbot, qloop, store.close())


# --------------------------------------------------------------------------- search box


@pytest.fixture
def box(qtbot) -> SearchBox:
    b = SearchBox()
    qtbot.addWidget(b)
    b.show()
    qtbot.waitExposed(b)
    return b


def test_search_box_debounces_typing(qtbot, box):
    assert box.placeholderText() == PLACEHOLDER
    assert box.isClearButtonEnabled()
    got: list[str] = []
    box.searchRequested.connect(got.append)
    with qtbot.waitSignal(box.searchRequested, timeout=2_000) as blocker:
        qtbot.keyClicks(box, "refund")
        assert got == [] and box.pending  # nothing yet: typing has not paused
    assert blocker.args == ["refund"]
    assert got == ["refund"] and not box.pending  # one request for the whole word
    with qtbot.waitSignal(box.searchRequested, timeout=2_000) as blocker:
        qtbot.keyClicks(box, " 1001")
    assert blocker.args == ["refund 1001"]
    assert got == ["refund", "refund 1001"]


def test_search_box_return_escape_and_no_repeats(qtbot, box):
    got: list[str] = []
    box.searchRequested.connect(got.append)
    qtbot.keyClicks(box, "abc")
    qtbot.keyClick(box, Qt.Key.Key_Return)  # at once
    assert got == ["abc"] and not box.pending
    qtbot.keyClick(box, Qt.Key.Key_Backspace)
    qtbot.keyClicks(box, "c")  # back to the text already requested
    with qtbot.waitSignal(box._timer.timeout, timeout=2_000):
        pass
    assert got == ["abc"], "the same text is not requested again"
    qtbot.keyClick(box, Qt.Key.Key_Escape)  # clears, and asks for the full list at once
    assert box.text() == "" and got == ["abc", ""] and not box.pending
    qtbot.keyClick(box, Qt.Key.Key_Escape)  # nothing left to clear: nothing requested
    assert got == ["abc", ""]
    assert box.requested_text == ""


def test_search_box_drives_the_model(qtbot, box, model):
    box.searchRequested.connect(model.set_search)
    with qtbot.waitSignal(model.searchFinished, timeout=20_000) as blocker:
        qtbot.keyClicks(box, "hay")
    assert blocker.args == [len(HAY)] and model.search_text == "hay"
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        qtbot.keyClick(box, Qt.Key.Key_Escape)
    assert model.search_text == "" and model.rowCount() == 50
