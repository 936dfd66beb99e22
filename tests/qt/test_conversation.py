"""The conversation pane over stores written by the real libraries (offscreen, pytest-qt)."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QPoint, Qt, QUrl
from PySide6.QtGui import QColor, QGuiApplication, QPalette, QTextDocument
from qt_helpers import (
    FLUX_SESSIONS,
    OFFSCREEN_NOISE,
    run_on,
    write_agents_store,
    write_flux_store,
)

from fluxgui.core.bodies import PARTIAL_BYTES
from fluxgui.core.errors import SessionNotFound
from fluxgui.core.model import Message

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

BIG = 100_000


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100,000 items in one session, written by ``agents.SQLiteSession`` 10,000 at a time."""
    items = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"}
        for i in range(BIG)
    ]
    batches = [items[i : i + 10_000] for i in range(0, BIG, 10_000)]
    sessions = {"big": batches, "small": [[{"role": "user", "content": "just one"}]]}
    return write_agents_store(tmp_path_factory.mktemp("big") / "big.db", sessions)


class Stores:
    """Opens stores on the qasync loop and closes them after the test."""

    def __init__(self, qtbot: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.qtbot, self.loop, self.opened = qtbot, loop, []

    def open(self, path: Path) -> Any:
        from fluxgui.adapters import open_store

        store = run_on(self.qtbot, self.loop, open_store(str(path)))
        self.opened.append(store)
        return store


@pytest.fixture
def stores(qtbot: Any, qloop: asyncio.AbstractEventLoop) -> Iterator[Stores]:
    s = Stores(qtbot, qloop)
    try:
        yield s
    finally:
        for store in s.opened:
            run_on(qtbot, qloop, store.close())


def show(qtbot: Any, pane: Any, store: Any, session_id: str) -> None:
    with qtbot.waitSignal(pane.loaded, timeout=20_000) as blocker:
        pane.show_session(store, session_id)
    assert blocker.args == [session_id]
    qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)


def row_of(pane: Any, predicate: Any) -> QModelIndex:
    for row in range(pane.model.rowCount()):
        m = pane.model.message(row)
        if predicate(m):
            return pane.model.index(row, 0)
    raise AssertionError("no such message")


def visible(pane: Any, index: QModelIndex) -> bool:
    return pane.view.visualRect(index).intersects(pane.view.viewport().rect())


def doc_text(pane: Any, index: QModelIndex) -> str:
    return pane.delegate.document(index.data(pane.model.MessageRole)).toPlainText()


# --------------------------------------------------------------------------- model


def test_message_model_passes_the_model_tester(qtmodeltester: Any) -> None:
    from fluxgui.qt.conversation import MessageListModel

    model = MessageListModel()
    qtmodeltester.check(model)
    msgs = [Message(id=i, role="user", kind="message", text=f"m{i}") for i in range(5, 10)]
    model.set_messages(msgs)
    qtmodeltester.check(model)
    model.prepend([Message(id=i, role="assistant", kind="message", text="") for i in range(5)])
    model.append([Message(id=10, role="tool", kind="tool_output", text="x")])
    qtmodeltester.check(model)
    assert model.rowCount() == 11
    assert [model.message(r).id for r in range(11)] == list(range(11))
    assert model.row_of(7) == 7 and model.row_of(99) is None
    assert model.data(model.index(5, 0)) == "m5"
    assert model.data(model.index(5, 0), model.MessageRole) is msgs[0]
    model.clear()
    assert model.rowCount() == 0


# --------------------------------------------------------------------------- paging


def test_big_session_opens_at_its_end_and_pages_back_on_scroll(
    qtbot: Any, pane: Any, stores: Stores, big_db: Path
) -> None:
    store = stores.open(big_db)
    calls: list[dict[str, Any]] = []
    page = store.reader.page_messages

    async def spy(session_id: str, **kw: Any) -> list[Message]:
        calls.append(kw)
        return await page(session_id, **kw)

    store.reader.page_messages = spy
    show(qtbot, pane, store, "big")

    # The latest page only, shown at its end.
    assert pane.loaded_count in (pane.page_size, 2 * pane.page_size)
    assert not pane.at_start
    assert pane.model.message(pane.loaded_count - 1).text == f"message {BIG - 1}"
    bar = pane.view.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    assert visible(pane, pane.model.index(pane.loaded_count - 1, 0))
    # (huge items are read as their start: the window's reads)
    assert calls[0] == {"limit": pane.page_size, "branch": None, "whole_up_to": PARTIAL_BYTES}
    assert all(kw.get("limit") == pane.page_size for kw in calls)
    assert "latest" in pane.status.text() and f"{BIG:,}" in pane.status.text()

    for _ in range(2):
        before = pane.loaded_count
        first = pane.model.message(0)
        with qtbot.waitSignal(pane.earlierLoaded, timeout=20_000) as blocker:
            bar.setValue(0)  # the user drags to the top
        assert blocker.args == [pane.page_size]
        assert pane.loaded_count == before + pane.page_size
        # The earlier page was prepended in order, right before the old first message …
        assert calls[-1] == {
            "limit": pane.page_size,
            "anchor": first.sort_key,
            "direction": "backward",
            "branch": None,
            "whole_up_to": PARTIAL_BYTES,
        }
        new_first = pane.model.message(0)
        assert new_first.text == f"message {BIG - pane.loaded_count}"
        assert pane.model.message(pane.page_size) is first
        # … and the message that was at the top is still in view.
        assert visible(pane, pane.model.index(pane.page_size, 0))
        assert bar.value() > 0
        qtbot.waitUntil(lambda: not pane.busy)

    assert pane.loaded_count <= 5 * pane.page_size  # never the whole session


def test_short_session_is_complete_and_does_not_page(
    qtbot: Any, pane: Any, stores: Stores, agents_db: Path
) -> None:
    store = stores.open(agents_db)
    show(qtbot, pane, store, "refund-1001")
    assert pane.at_start and pane.loaded_count == 5
    assert pane.session_id == "refund-1001"
    assert pane.status.text() == "all 5 messages"
    assert pane.paging.load_earlier() is False


def test_switching_sessions_cancels_the_stale_load(
    qtbot: Any, pane: Any, bridge: Any, stores: Stores, agents_db: Path
) -> None:
    store = stores.open(agents_db)
    page = store.reader.page_messages
    gate = asyncio.Event()  # never set: the first session's load hangs until cancelled
    started: list[str] = []

    async def slow(session_id: str, **kw: Any) -> list[Message]:
        started.append(session_id)
        if session_id == "refund-1001":
            await gate.wait()
        return await page(session_id, **kw)

    store.reader.page_messages = slow
    seen: list[str] = []
    pane.loaded.connect(seen.append)
    pane.show_session(store, "refund-1001")
    qtbot.waitUntil(lambda: started == ["refund-1001"])
    stale = pane.task
    assert pane.busy

    show(qtbot, pane, store, "bugfix-2002")
    qtbot.waitUntil(stale.done)
    assert stale.cancelled()
    assert seen == ["bugfix-2002"]
    assert pane.session_id == "bugfix-2002"
    assert [m.text for m in pane.model.messages][0] == "Why does test_roundtrip flake?"
    qtbot.waitUntil(lambda: not bridge.busy)


def test_unknown_session_fails_with_a_known_error(
    qtbot: Any, pane: Any, stores: Stores, agents_db: Path
) -> None:
    store = stores.open(agents_db)
    with qtbot.waitSignal(pane.failed, timeout=10_000) as blocker:
        pane.show_session(store, "no-such-session")
    assert isinstance(blocker.args[0], SessionNotFound)
    assert not pane.busy and pane.loaded_count == 0
    assert pane.view.placeholder == "This session could not be loaded."


def test_clear_and_reload(qtbot: Any, pane: Any, stores: Stores, tmp_path: Path) -> None:
    path = write_flux_store(tmp_path / "flux.db", FLUX_SESSIONS)
    store = stores.open(path)
    show(qtbot, pane, store, "flux-a")
    assert pane.loaded_count == 2
    write_flux_store(path, {"flux-a": [{"role": "user", "content": "And of Chile?"}]})
    with qtbot.waitSignal(pane.loaded, timeout=10_000):
        pane.paging.reload()
    assert pane.loaded_count == 3
    assert pane.model.message(2).text == "And of Chile?"

    pane.clear("Nothing here.")
    assert pane.session_id is None and pane.loaded_count == 0 and not pane.busy
    assert pane.view.placeholder == "Nothing here."
    assert pane.inspector.message is None


# --------------------------------------------------------------------------- rendering


def test_tool_call_shows_name_pretty_arguments_and_is_paired_with_its_output(
    qtbot: Any, pane: Any, stores: Stores, agents_db: Path
) -> None:
    store = stores.open(agents_db)
    show(qtbot, pane, store, "refund-1001")
    call_index = row_of(pane, lambda m: m.kind == "tool_call")
    out_index = row_of(pane, lambda m: m.kind == "tool_output")
    call = call_index.data(pane.model.MessageRole)
    out = out_index.data(pane.model.MessageRole)

    assert pane.pairs.output_for(call) is out and pane.pairs.call_for(out) is call
    text = doc_text(pane, call_index)
    assert text.startswith("lookup_order")
    assert "call_1" in text
    assert '{\n  "order": 1001\n}' in text  # pretty-printed arguments
    assert pane.delegate.pair_text(call) == f"→ output #{out.id}"
    assert pane.delegate.pair_text(out) == f"← lookup_order #{call.id}"
    assert '{\n  "charges": 2\n}' in doc_text(pane, out_index)

    shown = pane.toPlainText()
    assert f"assistant · tool call · → output #{out.id}" in shown
    assert f"tool · tool output · ← lookup_order #{call.id}" in shown
    assert shown.index("I was charged twice") < shown.index("lookup_order") < shown.index(
        "Refunded the second charge."
    )

    menu = pane.menus.build_context_menu(call_index)
    go = [a for a in menu.actions() if a.text() == "Go to tool output"]
    assert go
    go[0].trigger()
    assert pane.current_message() is out


def test_markdown_and_code_blocks(qtbot: Any, pane: Any, stores: Stores, agents_db: Path) -> None:
    from fluxgui.qt.markdown import highlight_jobs, markdown_document

    store = stores.open(agents_db)
    show(qtbot, pane, store, "refund-1001")
    reply = row_of(pane, lambda m: m.text.startswith("Refunded"))
    assert doc_text(pane, reply) == "Refunded the second charge."  # ** is Markdown

    show(qtbot, pane, store, "bugfix-2002")
    answer = row_of(pane, lambda m: m.role == "assistant")
    doc = pane.delegate.document(answer.data(pane.model.MessageRole))
    assert "dt.astimezone(timezone.utc)" in doc.toPlainText()
    assert "```" not in doc.toPlainText()
    # The fenced block is coloured by pygments: more than one colour in the code line.
    block = doc.findBlock(doc.toPlainText().index("dt.astimezone"))
    colours = set()
    it = block.begin()
    while not it.atEnd():
        colours.add(it.fragment().charFormat().foreground().color().name())
        it += 1
    assert len(colours) >= 2, colours

    # The page's code was lexed ahead, off the UI thread: these are the blocks it found.
    assert ("python", "dt.astimezone(timezone.utc)") in highlight_jobs(pane.model.messages)

    doc = markdown_document("```nosuchlanguage\nx = 1\n```", pane.delegate.theme)
    assert doc.toPlainText() == "x = 1"


def test_reasoning_is_collapsed_until_clicked_or_toggled_by_keys(
    qtbot: Any, pane: Any, stores: Stores, agents_db: Path
) -> None:
    store = stores.open(agents_db)
    show(qtbot, pane, store, "refund-1001")
    index = row_of(pane, lambda m: m.kind == "reasoning")
    m = index.data(pane.model.MessageRole)
    delegate = pane.delegate
    assert delegate.is_collapsed(m)
    collapsed_height = pane.view.visualRect(index).height()
    line = pane.view.fontMetrics().height()
    assert collapsed_height < 5 * line

    pane.view.scrollTo(index)
    rect = pane.view.visualRect(index)
    qtbot.mouseClick(pane.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert not delegate.is_collapsed(m)
    assert "Two charges: refund one." in doc_text(pane, index)
    qtbot.waitUntil(lambda: pane.view.visualRect(index).height() >= collapsed_height)

    pane.view.setFocus()
    pane.view.setCurrentIndex(index)
    qtbot.keyClick(pane.view, Qt.Key.Key_Return)
    assert delegate.is_collapsed(m)
    assert pane.view.visualRect(index).height() == collapsed_height
    qtbot.keyClick(pane.view, Qt.Key.Key_Space)
    assert not delegate.is_collapsed(m)


def test_long_message_is_collapsed_until_show_all(
    qtbot: Any, pane: Any, stores: Stores, tmp_path: Path
) -> None:
    body = "\n".join(f"line {i}: " + "lorem ipsum dolor " * 3 for i in range(600)) + "\nTHE END"
    assert len(body.encode()) > 20_000
    path = write_flux_store(
        tmp_path / "long.db",
        {"long": [{"role": "user", "content": "paste"}, {"role": "assistant", "content": body}]},
    )
    store = stores.open(path)
    show(qtbot, pane, store, "long")
    index = pane.model.index(1, 0)
    m = index.data(pane.model.MessageRole)
    delegate = pane.delegate
    assert delegate.is_collapsed(m) and delegate.long_size(m) == len(body.encode())
    assert "THE END" not in doc_text(pane, index)
    assert len(doc_text(pane, index)) < 3_000
    short = pane.view.visualRect(index).height()
    assert short < pane.view.viewport().height()

    # Click the "Show all" link under the preview.
    pane.view.scrollTo(index, pane.view.ScrollHint.PositionAtBottom)
    rows = delegate.layout_rows(pane.view.visualRect(index), m)
    assert rows.footer is not None
    assert visible(pane, index)
    qtbot.mouseClick(
        pane.view.viewport(),
        Qt.MouseButton.LeftButton,
        pos=rows.footer.topLeft() + QPoint(10, rows.footer.height() // 2),
    )
    assert not delegate.is_collapsed(m)
    assert doc_text(pane, index).endswith("THE END")
    qtbot.waitUntil(lambda: pane.view.visualRect(index).height() > 10 * short)


def test_inspector_shows_metadata_and_raw(
    qtbot: Any, pane: Any, stores: Stores, flux_db: Path, agents_db: Path
) -> None:
    seen: list[Any] = []
    pane.currentMessageChanged.connect(seen.append)
    store = stores.open(flux_db)
    show(qtbot, pane, store, "flux-b")
    pane.select_message(pane.model.message(0).id)
    m = pane.current_message()
    assert m.metadata == {"lang": "de"} and seen[-1] is m
    rows = dict((k, v) for k, v, _t in pane.inspector.item_texts())
    assert rows["metadata.lang"] == '"de"'
    assert rows["raw.role"] == '"user"'
    assert rows["raw.content"] == "\"Translate 'cat' to German\""
    assert rows["message.kind"] == '"message"'

    store = stores.open(agents_db)
    show(qtbot, pane, store, "refund-1001")
    call = row_of(pane, lambda m: m.kind == "tool_call")
    pane.view.setCurrentIndex(call)
    rows = dict((k, v) for k, v, _t in pane.inspector.item_texts())
    assert rows["raw.call_id"] == '"call_1"'
    assert rows["raw.arguments"] == '"{"order": 1001}"'
    assert rows["metadata"] == "null"
    # Selecting a node shows its whole value as plain text.
    tree = pane.inspector.tree
    raw_item = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())][-1]
    tree.setCurrentItem(raw_item)
    assert json.loads(pane.inspector.value_view.toPlainText()) == call.data(
        pane.model.MessageRole
    ).raw


def test_inspector_shows_a_malformed_raw_as_text(qtbot: Any) -> None:
    from fluxgui.core.model import from_agents_row
    from fluxgui.qt.inspector import MessageInspector

    inspector = MessageInspector()
    qtbot.addWidget(inspector)
    m = from_agents_row(7, '{"type": "message", <b>broken', None)
    inspector.show_message(m)
    rows = dict((k, v) for k, v, _t in inspector.item_texts())
    assert rows["raw (text, not JSON)"] == '"{"type": "message", <b>broken"'
    inspector.show_message(None)
    assert inspector.tree.topLevelItemCount() == 0


def test_copy_text_and_raw_json(
    qtbot: Any, pane: Any, stores: Stores, agents_db: Path, flux_db: Path
) -> None:
    clipboard = QGuiApplication.clipboard()
    store = stores.open(agents_db)
    show(qtbot, pane, store, "refund-1001")
    index = row_of(pane, lambda m: m.kind == "tool_call")
    m = index.data(pane.model.MessageRole)
    pane.view.setFocus()
    pane.view.setCurrentIndex(index)

    clipboard.clear()
    qtbot.keyClick(pane.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == m.text == 'lookup_order({"order": 1001})'

    mods = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(pane.view, Qt.Key.Key_C, mods)
    assert json.loads(clipboard.text()) == m.raw
    assert clipboard.text().startswith('{\n  "type": "function_call"')

    menu = pane.menus.build_context_menu(index)
    actions = {a.text(): a for a in menu.actions()}
    assert {"Copy text", "Copy raw JSON"} <= set(actions)
    clipboard.clear()
    actions["Copy text"].trigger()
    assert clipboard.text() == m.text

    # A flux row's raw JSON is the dict of its columns.
    store = stores.open(flux_db)
    show(qtbot, pane, store, "flux-b")
    pane.select_message(pane.model.message(0).id)
    clipboard.clear()
    build = pane.menus.build_context_menu(pane.view.currentIndex())
    [a for a in build.actions() if a.text() == "Copy raw JSON"][0].trigger()
    assert json.loads(clipboard.text()) == {
        "role": "user",
        "content": "Translate 'cat' to German",
        "metadata": {"lang": "de"},
    }


def test_copy_keys_win_over_window_shortcuts_when_the_list_has_focus(
    qtbot: Any, bridge: Any, stores: Stores, agents_db: Path
) -> None:
    """A main window with its own Ctrl+C / Ctrl+Shift+C actions: the focused message list
    still copies (no ambiguous-shortcut warning), and the window's actions fire elsewhere."""
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QLineEdit, QMainWindow, QSplitter

    from fluxgui.qt.conversation import ConversationPane

    window = QMainWindow()
    qtbot.addWidget(window)
    fired: list[str] = []
    for name, keys in (("copy", QKeySequence.StandardKey.Copy), ("raw", "Ctrl+Shift+C")):
        action = QAction(name, window)
        action.setShortcut(QKeySequence(keys))
        action.triggered.connect(lambda _c=False, n=name: fired.append(n))
        window.addAction(action)
    splitter = QSplitter(window)
    other = QLineEdit(splitter)
    pane = ConversationPane(bridge, splitter)
    window.setCentralWidget(splitter)
    window.resize(1000, 700)
    window.show()
    qtbot.waitExposed(window)
    show(qtbot, pane, stores.open(agents_db), "hello-3003")
    pane.view.setFocus()
    pane.view.setCurrentIndex(pane.model.index(0, 0))
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(pane.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "hello there"
    assert fired == []
    other.setFocus()
    qtbot.keyClick(
        other,
        Qt.Key.Key_C,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert fired == ["raw"]


def test_current_message_follows_selection_and_session_changes(
    qtbot: Any, pane: Any, stores: Stores, agents_db: Path
) -> None:
    seen: list[Any] = []
    pane.currentMessageChanged.connect(seen.append)
    store = stores.open(agents_db)
    show(qtbot, pane, store, "refund-1001")
    last = pane.model.message(pane.loaded_count - 1)
    assert seen[-1] is last and pane.inspector.message is last  # the latest is current
    pane.view.setCurrentIndex(pane.model.index(0, 0))
    assert seen[-1] is pane.model.message(0)
    show(qtbot, pane, store, "hello-3003")
    assert None in seen[2:]  # the old message went away with its session
    assert seen[-1].text == "hello there"
    pane.clear("Bye")
    assert seen[-1] is None and pane.inspector.message is None


def test_follows_a_dark_palette(qtbot: Any, pane: Any, stores: Stores, agents_db: Path) -> None:
    palette = QPalette(pane.palette())
    for role, colour in (
        (QPalette.ColorRole.Window, "#202124"),
        (QPalette.ColorRole.Base, "#17181a"),
        (QPalette.ColorRole.Text, "#e8eaed"),
        (QPalette.ColorRole.WindowText, "#e8eaed"),
    ):
        palette.setColor(role, QColor(colour))
    pane.setPalette(palette)
    store = stores.open(agents_db)
    show(qtbot, pane, store, "hello-3003")
    assert pane.delegate.theme.dark
    image = pane.view.viewport().grab().toImage()
    rect = pane.view.visualRect(pane.model.index(0, 0))
    # Inside the card, right of the text: the palette's dark base, never white.
    sample = image.pixelColor(rect.right() - 40, rect.bottom() - 8)
    assert sample.lightnessF() < 0.3, sample.name()


# --------------------------------------------------------------------------- safe rendering


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[tuple[int, list[str]]]:
    """An HTTP server on 127.0.0.1 that records every request path."""
    requests: list[str] = []
    handler = type("Handler", (_Recorder,), {"requests": requests})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_message_content_is_never_markup_and_nothing_is_fetched(
    qtbot: Any, pane: Any, stores: Stores, tmp_path: Path, loopback: tuple[int, list[str]]
) -> None:
    import urllib.request

    from fluxgui.qt import markdown

    port, requests = loopback
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=5):
        pass  # the server answers: a fetch would be seen
    assert requests == ["/ready"]

    evil = (
        f'Look: <img src="http://127.0.0.1:{port}/x"> and ![x](http://127.0.0.1:{port}/y)\n\n'
        "<script>alert(1)</script>\n\n"
        f"![](file:///etc/passwd) [link](http://127.0.0.1:{port}/z)"
    )
    agents_path = write_agents_store(
        tmp_path / "evil-agents.db",
        {"evil": [[{"role": "user", "content": evil},
                   {"type": "function_call_output", "call_id": "c", "output": evil}]]},
    )
    flux_path = write_flux_store(
        tmp_path / "evil-flux.db", {"evil": [{"role": "assistant", "content": evil}]}
    )
    refused_before = len(markdown.REFUSED)
    for path in (agents_path, flux_path):
        store = stores.open(path)
        show(qtbot, pane, store, "evil")
        pane.view.viewport().grab()  # paint every row: layout, images, everything
        for row in range(pane.model.rowCount()):
            index = pane.model.index(row, 0)
            doc = pane.delegate.document(index.data(pane.model.MessageRole))
            text = doc.toPlainText()
            assert "<script>alert(1)</script>" in text
            assert f'<img src="http://127.0.0.1:{port}/x">' in text
            assert doc.refused == []  # never even asked for a resource
            m = index.data(pane.model.MessageRole)
            assert "\ufffc" not in text  # no image object, ever
            if m.kind == "message" and m.role == "assistant":
                assert "[x]" in text  # the Markdown image is its alt text
                assert "passwd" not in text
            elif m.kind == "message":  # a user's text is shown as typed, nothing parsed
                assert text == evil
    assert len(markdown.REFUSED) == refused_before

    # Asked directly, a document refuses, and records it.
    doc = markdown.markdown_document("x", pane.delegate.theme)
    url = QUrl(f"http://127.0.0.1:{port}/direct")
    assert doc.resource(QTextDocument.ResourceType.ImageResource.value, url) is None
    assert doc.refused == [url.toString()]
    assert requests == ["/ready"]


# --------------------------------------------------------------------------- turns


def test_user_messages_carry_their_turn_numbers_across_pages(
    qtbot: Any, pane: Any, stores: Stores, tmp_path: Path
) -> None:
    from qt_helpers import write_agents_store

    from fluxgui.core.turns import starts_turn

    # 150 turns of user, tool call, tool output, answer: the latest page starts mid-way.
    batches = []
    for n in range(1, 151):
        batches.append([
            {"role": "user", "content": f"question {n}"},
            {"type": "function_call", "call_id": f"c{n}", "name": "look", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"c{n}", "output": "user data"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": f"answer {n}"}]},
        ])
    db = write_agents_store(tmp_path / "turns.db", {"t": batches})
    store = stores.open(db)
    show(qtbot, pane, store, "t")
    assert not pane.at_start

    def numbered() -> list[tuple[str, int | None]]:
        return [(m.text, pane.turn_of(m)) for m in pane.model.messages if starts_turn(m)]

    qtbot.waitUntil(lambda: all(n is not None for _t, n in numbered()), timeout=20_000)
    assert all(text == f"question {n}" for text, n in numbered())
    assert numbered()[-1] == ("question 150", 150)
    assert all(pane.turn_of(m) is None for m in pane.model.messages if not starts_turn(m))
    header_of_last_user = [m for m in pane.model.messages if starts_turn(m)][-1]
    assert pane.turn_of(header_of_last_user) == 150

    with qtbot.waitSignal(pane.earlierLoaded, timeout=20_000):
        pane.view.verticalScrollBar().setValue(0)
    assert all(text == f"question {n}" for text, n in numbered())
    assert len(numbered()) > 25
