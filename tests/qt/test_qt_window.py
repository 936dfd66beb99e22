"""The main window over stores written by the real libraries (offscreen, pytest-qt)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from helpers import snapshot
from qt_helpers import (
    AGENTS_SESSIONS,
    OFFSCREEN_NOISE,
    run_on,
    write_agents_store,
    write_flux_store,
)

from fluxgui.core.errors import SessionNotFound, TargetError

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _ids(model: Any) -> list[str]:
    return [model.session_at(r).id for r in range(model.rowCount())]


def _select(window: Any, session_id: str) -> None:
    row = window.sessions.row_of(session_id)
    assert row is not None, session_id
    window.session_view.setCurrentIndex(window.sessions.index(row, 0))


def _open_and_wait(qtbot: Any, window: Any, path: Path, **kw: Any) -> str:
    """Open a store; wait until its first session (or ``session_id``) is shown."""
    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as blocker:
        window.stores.open_target(str(path), **kw)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=10_000)
    return blocker.args[0]


# --------------------------------------------------------------------------- real stores


def test_agents_store_lists_sessions_and_shows_messages(qtbot, window, qtmodeltester, agents_db):
    qtmodeltester.check(window.sessions)
    first = _open_and_wait(qtbot, window, agents_db)

    assert sorted(_ids(window.sessions)) == sorted(AGENTS_SESSIONS)
    assert window.sessions.data(window.sessions.index(0, 1)) is not None
    # The most recently active session is selected and shown at start.
    assert first == _ids(window.sessions)[0]
    assert window.session_view.currentIndex().row() == 0
    assert window.format_label.text() == "agents format"
    assert window.mode_label.text() == "read-only"
    # the full path is in the tooltip (the label elides a long one in the middle)
    assert str(agents_db) in window.store_label.toolTip()
    assert window.error_bar.isHidden()

    if first == "refund-1001":  # selecting the shown session again loads nothing
        with qtbot.waitSignal(window.messagesShown, timeout=10_000):
            _select(window, "hello-3003")
    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as blocker:
        _select(window, "refund-1001")
    assert blocker.args == ["refund-1001"]
    text = window.conversation.toPlainText()
    for expected in (
        "I was charged twice for order 1001.",
        "lookup_order",
        '"order": 1001',
        '"charges": 2',
        "Two charges: refund one.",
        "Refunded the second charge.",  # Markdown rendered: ** is emphasis
        "tool call",
        "reasoning",
    ):
        assert expected in text
    assert text.index("charged twice") < text.index("lookup_order") < text.index("Refunded")

    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as blocker:
        _select(window, "bugfix-2002")
    text = window.conversation.toPlainText()
    assert "Why does test_roundtrip flake?" in text
    assert "dt.astimezone(timezone.utc)" in text
    assert "charged twice" not in text


def test_flux_store_lists_sessions_and_shows_messages(qtbot, window, qtmodeltester, flux_db):
    qtmodeltester.check(window.sessions)
    first = _open_and_wait(qtbot, window, flux_db)

    assert sorted(_ids(window.sessions)) == ["flux-a", "flux-b"]
    assert window.format_label.text() == "flux format"
    if first != "flux-b":
        with qtbot.waitSignal(window.messagesShown, timeout=10_000):
            _select(window, "flux-b")
    text = window.conversation.toPlainText()
    assert "Translate 'cat' to German" in text
    assert "Katze" in text
    assert "Lima." not in text
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        _select(window, "flux-a")
    assert "Lima." in window.conversation.toPlainText()


def test_session_option_selects_that_session_at_start(qtbot, window, agents_db):
    shown = _open_and_wait(qtbot, window, agents_db, session_id="bugfix-2002")
    assert shown == "bugfix-2002"
    row = window.sessions.row_of("bugfix-2002")
    assert row is not None
    qtbot.waitUntil(lambda: window.session_view.currentIndex().row() == row)
    assert "Why does test_roundtrip flake?" in window.conversation.toPlainText()


def test_unknown_session_option_shows_the_error_bar(qtbot, window, agents_db):
    window.stores.open_target(str(agents_db), session_id="no-such-session")
    qtbot.waitUntil(lambda: not window.error_bar.isHidden(), timeout=10_000)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=10_000)
    assert isinstance(window.last_error, SessionNotFound)
    assert "no-such-session" in window.error_bar.text()
    # The store itself opened: its sessions are listed.
    assert sorted(_ids(window.sessions)) == sorted(AGENTS_SESSIONS)


def test_a_new_selection_cancels_the_previous_load(qtbot, window, agents_db):
    _open_and_wait(qtbot, window, agents_db, session_id="hello-3003")
    shown: list[str] = []
    window.messagesShown.connect(shown.append)
    window.show_session("refund-1001")
    window.show_session("bugfix-2002")  # before the first load could finish
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=10_000)
    assert shown == ["bugfix-2002"]
    assert "Why does test_roundtrip flake?" in window.conversation.toPlainText()


# --------------------------------------------------------------------------- content is data


@pytest.fixture
def listening_port():
    """A local HTTP-ish port that records whether anything connected to it."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.setblocking(False)
    yield server
    server.close()


def _assert_no_connection(server: socket.socket) -> None:
    with pytest.raises(BlockingIOError):
        conn, _ = server.accept()
        conn.close()


@pytest.mark.parametrize("writer", ["agents", "flux"])
def test_html_in_a_message_is_shown_literally(qtbot, window, tmp_path, listening_port, writer):
    port = listening_port.getsockname()[1]
    hostile = f'<img src="http://127.0.0.1:{port}/x"><script>alert(1)</script>'
    markdown_image = f"![x](http://127.0.0.1:{port}/md.png) <b>bold?</b> &amp; done"
    if writer == "agents":
        path = write_agents_store(
            tmp_path / "h.db",
            {
                "<b>evil-id</b>": [
                    [
                        {"role": "user", "content": hostile},
                        {
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": markdown_image}],
                        },
                    ]
                ]
            },
        )
    else:
        path = write_flux_store(
            tmp_path / "h.db",
            {
                "<b>evil-id</b>": [
                    {"role": "user", "content": hostile},
                    {"role": "assistant", "content": markdown_image},
                ]
            },
        )
    _open_and_wait(qtbot, window, path)
    qtbot.wait(0)  # let the document lay out (and try to load anything it would load)

    pane = window.conversation
    text = pane.toPlainText()
    assert hostile in text  # the HTML is text, not markup
    assert "<b>bold?</b> & done" in text  # (the Markdown image shows as its alt text)
    assert pane.title.text() == "<b>evil-id</b>"
    for m in pane.model.messages:  # no document holds an image or a script
        doc = pane.delegate.document(m)
        assert "<img" not in doc.toHtml() and "<script" not in doc.toHtml().lower()
    assert window.sessions.data(window.sessions.index(0, 0)) == "<b>evil-id</b>"
    _assert_no_connection(listening_port)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "content",
    [
        b"this is a text file, not a database\n",
        b"SQLite format 3\x00" + b"\xff" * 4080,  # the magic, then garbage
    ],
    ids=["text", "corrupt-sqlite"],
)
def test_corrupt_file_shows_the_error_bar(qtbot, window, tmp_path, content):
    path = tmp_path / "broken.db"
    path.write_bytes(content)
    window.stores.open_target(str(path))
    qtbot.waitUntil(lambda: not window.error_bar.isHidden(), timeout=10_000)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=10_000)
    assert isinstance(window.stores.open_error, TargetError)
    assert "broken.db" in window.error_bar.text()
    assert "\n" not in window.error_bar.text()
    assert window.stores.store is None
    assert window.sessions.rowCount() == 0
    assert path.read_bytes() == content  # browsing never writes


def test_missing_file_shows_the_error_bar(qtbot, window, tmp_path):
    window.stores.open_target(str(tmp_path / "nope.db"))
    qtbot.waitUntil(lambda: not window.error_bar.isHidden(), timeout=10_000)
    assert "no such file" in window.error_bar.text()
    assert not (tmp_path / "nope.db").exists()


def test_error_bar_can_be_dismissed_and_a_store_opened_after_a_failure(qtbot, window, tmp_path, flux_db):
    window.stores.open_target(str(tmp_path / "nope.db"))
    qtbot.waitUntil(lambda: not window.error_bar.isHidden(), timeout=10_000)
    _open_and_wait(qtbot, window, flux_db)
    assert window.error_bar.isHidden()
    assert window.stores.open_error is None
    assert sorted(_ids(window.sessions)) == ["flux-a", "flux-b"]


# --------------------------------------------------------------------------- paging


def test_session_list_pages_lazily(qtbot, window, tmp_path):
    path = write_flux_store(
        tmp_path / "many.db",
        {f"s{i:03d}": [{"role": "user", "content": f"m{i}"}] for i in range(230)},
    )
    _open_and_wait(qtbot, window, path)
    model = window.sessions
    assert model.rowCount() == 100  # one page, not the whole store
    assert model.canFetchMore(model.index(-1, -1).parent())
    from PySide6.QtCore import QModelIndex

    with qtbot.waitSignal(model.pageLoaded, timeout=10_000):
        model.fetchMore(QModelIndex())
    assert model.rowCount() == 200
    with qtbot.waitSignal(model.pageLoaded, timeout=10_000) as blocker:
        model.fetchMore(QModelIndex())
    assert blocker.args == [30, False]
    assert model.rowCount() == 230
    assert not model.canFetchMore(QModelIndex())
    ids = _ids(model)
    assert len(set(ids)) == 230
    assert window.count_label.text() == "230 sessions"


def test_pane_shows_the_latest_page_and_the_store_is_not_changed(
    qtbot, qloop, window, tmp_path
):

    path = write_flux_store(
        tmp_path / "long.db",
        {
            "long": [
                {"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i:03d}"}
                for i in range(250)
            ]
        },
    )
    before = snapshot(path)
    _open_and_wait(qtbot, window, path)
    pane = window.conversation
    page = pane.page_size
    assert page < 250
    text = pane.toPlainText()
    assert pane.status.text() == f"latest {page} of 250 messages"
    first = 250 - page
    assert f"line {first - 1:03d}" not in text
    assert f"line {first:03d}" in text and "line 249" in text
    assert text.index(f"line {first:03d}") < text.index("line 249")
    run_on(qtbot, qloop, window.aclose())  # closed: nothing left behind either
    assert snapshot(path) == before


# --------------------------------------------------------------------------- keyring off the UI thread


def _record_lookups(monkeypatch: Any) -> list[tuple[str, bool]]:
    """Record on which thread recent targets are resolved (``True``: the main thread)."""
    import threading

    from fluxgui.qt import settings

    seen: list[tuple[str, bool]] = []
    resolve = settings.resolve_target

    def recording(stored: str, needs_password: bool = False) -> str | None:
        seen.append((stored, threading.current_thread() is threading.main_thread()))
        return resolve(stored, needs_password)

    monkeypatch.setattr(settings, "resolve_target", recording)
    return seen


def test_a_recent_store_is_resolved_off_the_ui_thread(qtbot, window, agents_db, monkeypatch):
    seen = _record_lookups(monkeypatch)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        window.stores.open_recent(str(agents_db), "my label")
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=10_000)
    assert seen == [(str(agents_db), False)]  # looked up, on a worker thread
    # the app name once, last (Qt appends the display name to a title not ending with it)
    assert window.windowTitle() == "my label — fluxgui"
    assert window.recent.items()[0] == (str(agents_db), "my label")


async def test_the_startup_store_is_resolved_off_the_ui_thread(agents_db, monkeypatch):
    from fluxgui.core.ports import OpenOptions
    from fluxgui.qt.launch import Launch, RecentUrl

    seen = _record_lookups(monkeypatch)
    url = "postgresql+asyncpg://root@127.0.0.1:5432/test"
    # No keyring (the fail backend): a URL that needs a password falls back to the demo.
    needs = Launch("demo.db", OpenOptions(), label="Demo", recent=RecentUrl(url, "pg", True))
    fallback = await needs.resolved()
    assert (fallback.target, fallback.label, fallback.recent) == ("demo.db", "Demo", None)
    # One that never had a password opens as it is, under its own label.
    plain = Launch("demo.db", OpenOptions(), session_id="s", recent=RecentUrl(url, "pg", False))
    opened = await plain.resolved()
    assert (opened.target, opened.label, opened.session_id) == (url, "pg", "s")
    assert seen == [(url, False), (url, False)]  # both on a worker thread
    same = Launch(str(agents_db), OpenOptions())
    assert await same.resolved() is same  # nothing to look up
