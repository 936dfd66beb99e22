"""A fork, an import or a copy from the window that would write encrypted items under a new
id where no key opens them: refused with one line in the error bar, nothing written; when
some of the session's items open, a confirmation names how many would be left out, and
the fork (import, copy) is made without them only when the user agrees.

The store is written by the real ``EncryptedSession`` around ``SQLiteSession``; what the
window writes is read back through the library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QInputDialog, QMessageBox
from qt_helpers import OFFSCREEN_NOISE, run_async, when_modal

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

KEY_A = "alice's passphrase"
KEY_B = "bob's passphrase"
ONE = [{"role": "user", "content": "sealed with A"}, {"role": "assistant", "content": "A again"}]
MIXED_B = [{"role": "user", "content": "mixed, B"}, {"role": "assistant", "content": "mixed, B too"}]
MIXED_A = [{"role": "user", "content": "mixed, but A"}]


def _library(path: Path, sid: str, key: str, items: list[Any] | None = None) -> list[Any]:
    """Write ``items`` (when given) through ``EncryptedSession``; what it reads back."""
    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    async def run() -> list[Any]:
        under = SQLiteSession(sid, str(path))
        try:
            session = EncryptedSession(sid, under, encryption_key=key)
            if items:
                await session.add_items(items)  # type: ignore[arg-type]
            return list(await session.get_items())
        finally:
            under.close()

    return run_async(run())


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "enc.db"
    _library(path, "enc-1", KEY_A, ONE)
    _library(path, "mixed", KEY_B, MIXED_B)
    _library(path, "mixed", KEY_A, MIXED_A)
    return path


def _open(qtbot: Any, window: Any, path: Path, sid: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), key=KEY_B, session_id=sid)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.actions_by_name["editing"].trigger()
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    assert window.stores.store.can_write


def _fork_last(qtbot: Any, window: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *_a: ("", True)))
    qtbot.waitUntil(lambda: bool(window.conversation.model.messages), timeout=20_000)
    window.conversation.select_message(window.conversation.model.messages[-1].id)
    window.edits.fork_here()


def _answer(answer: str, asked: list[str]) -> None:
    """Answer the next confirmation box (``confirm`` or ``cancel``), keeping its text."""
    from fluxgui.qt.dialogs.confirm import confirm_button

    def act(box: QMessageBox) -> None:
        asked.append(f"{box.text()} {box.informativeText()}")
        button = confirm_button(box) if answer == "confirm" else box.button(QMessageBox.StandardButton.Cancel)
        button.click()

    when_modal(QMessageBox, act)


def test_a_fork_the_key_does_not_open_is_refused_in_one_line(qtbot, window, store, monkeypatch):
    before = store.read_bytes()
    # (no box may ask: nothing of the session opens. One that did would wait for an
    # answer, and the refusal below would never show.)
    _open(qtbot, window, store, "enc-1")
    _fork_last(qtbot, window, monkeypatch)
    qtbot.waitUntil(lambda: "fork needs the key" in window.error_bar.text(), timeout=20_000)
    assert window.error_bar.text() == (
        'the key does not open the items of session "enc-1"; a fork needs the key that '
        "sealed them (nothing was written)"
    )
    qtbot.waitUntil(lambda: not window.editor.running, timeout=20_000)
    assert store.read_bytes() == before
    assert _library(store, "enc-1", KEY_A) == ONE  # the agent still reads its session


def test_a_fork_without_the_items_that_do_not_open_is_asked_first(qtbot, window, store, monkeypatch):
    before = store.read_bytes()
    _open(qtbot, window, store, "mixed")
    asked: list[str] = []
    _answer("cancel", asked)
    _fork_last(qtbot, window, monkeypatch)
    qtbot.waitUntil(lambda: "would be lost in a fork" in window.error_bar.text(), timeout=20_000)
    assert len(asked) == 1
    assert "1 of the 3 encrypted items of session" in asked[0] and "mixed" in asked[0]
    assert "(1 item left out)" in asked[0]
    assert store.read_bytes() == before

    _answer("confirm", asked)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000) as shown:
        _fork_last(qtbot, window, monkeypatch)
    assert shown.args == ["mixed-fork"] and len(asked) == 2
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.editor.running, timeout=20_000)
    assert _library(store, "mixed-fork", KEY_B) == MIXED_B
    assert _library(store, "mixed", KEY_B) == MIXED_B and _library(store, "mixed", KEY_A) == MIXED_A


def test_an_import_under_a_new_id_is_asked_first(qtbot, window, store, tmp_path):
    _open(qtbot, window, store, "mixed")
    out = tmp_path / "mixed.jsonl"
    with qtbot.waitSignal(window.transferFinished, timeout=30_000):
        window.transfers.run_export(out, "jsonl", ["mixed"])  # with key B: one item stays sealed
    before = store.read_bytes()
    asked: list[str] = []
    _answer("cancel", asked)
    window.transfers.run_import([str(out)])  # "mixed" is taken: it would be "mixed-2"
    qtbot.waitUntil(lambda: "would be lost in an import" in window.error_bar.text(), timeout=30_000)
    assert "1 of the 3 encrypted items of session" in asked[0] and "import the session" in asked[0]
    assert store.read_bytes() == before

    _answer("confirm", asked)
    with qtbot.waitSignal(window.transferFinished, timeout=30_000) as done:
        window.transfers.run_import([str(out)])
    assert done.args[0].written == [("mixed", "mixed-2")] and len(asked) == 2
    assert _library(store, "mixed-2", KEY_B) == MIXED_B
