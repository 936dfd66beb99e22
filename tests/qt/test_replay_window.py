"""Replay from Here… in the window (issue 38): the context menu of a user message, the
settings dialog, the progress turn by turn with Cancel, the stop at an unmatched call,
the Compare view against the original, Undo deleting the fork. The model is a scripted
one on a loopback OpenAI-compatible server (tests/replay_helpers.py); the sessions are
written and read back by the owning libraries."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from helpers import agents_read, flux_read
from qt_helpers import OFFSCREEN_NOISE
from replay_helpers import CALLS, SID, USERS, ScriptedServer, faithful_script, write_session

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def in_thread(fn: Any, *args: Any) -> Any:
    """The libraries run their own event loop: in a thread of its own here."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def read(path: Path, fmt: str, sid: str) -> list[Any]:
    return in_thread(agents_read if fmt == "agents" else flux_read, path, sid)


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.editor.running, timeout=20_000)


def _open_writable(qtbot: Any, window: Any, path: Path) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=SID)
    _settle(qtbot, window)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.actions_by_name["editing"].trigger()
    _settle(qtbot, window)
    assert window.stores.store.can_write


def _user_message(window: Any, turn: int) -> Any:
    users = [m for m in window.conversation.model.messages if m.role == "user"]
    return users[turn - 1]


def _menu_replay(qtbot: Any, window: Any, turn: int) -> Any:
    """Right-click the user message of ``turn``, choose Replay from Here…; the dialog."""
    m = _user_message(window, turn)
    window.conversation.select_message(m.id)
    row = window.conversation.model.messages.index(m)
    menu = window.conversation.menus.build_context_menu(window.conversation.model.index(row, 0))
    found = [a for a in menu.actions() if a.text() == "Replay from Here…"]
    assert len(found) == 1 and found[0].isEnabled()
    found[0].trigger()
    controller = window.replay.replays
    qtbot.waitUntil(lambda: controller.dialog is not None and controller.dialog.isVisible(), timeout=20_000)
    menu.deleteLater()
    return controller.dialog


def _use_server(dialog: Any, server: ScriptedServer, **more: Any) -> None:
    dialog.provider.setCurrentIndex(dialog.provider.findData("openai"))
    dialog.model.setText("scripted")
    dialog.base_url.setText(server.base_url)
    if "unmatched" in more:
        dialog.use_unmatched.setChecked(True)
        dialog.unmatched.setText(more["unmatched"])


@pytest.fixture(params=["agents", "flux"])
def fmt(request: Any) -> str:
    return str(request.param)


@pytest.fixture
def store_path(tmp_path: Path, fmt: str) -> Path:
    path = tmp_path / "s.db"
    in_thread(write_session, path, fmt)
    return path


def test_replay_from_here_shows_progress_opens_compare_and_undo_deletes_the_fork(
    qtbot, window, store_path, fmt,
):
    _open_writable(qtbot, window, store_path)
    original = read(store_path, fmt, SID)
    # a message that is not a user message has no Replay entry
    other = next(m for m in window.conversation.model.messages if m.role == "assistant")
    menu = window.conversation.menus.build_context_menu(
        window.conversation.model.index(window.conversation.model.messages.index(other), 0))
    assert "Replay from Here…" not in [a.text() for a in menu.actions()]
    menu.deleteLater()

    controller = window.replay.replays
    with ScriptedServer(faithful_script()) as server:
        dialog = _menu_replay(qtbot, window, 2)
        assert dialog.windowTitle() == "Replay from turn 2"
        _use_server(dialog, server)
        live: list[str] = []  # the streamed answer as the progress shows it meanwhile
        controller.progressed.connect(
            lambda e: live.append(controller.progress.live.text()) if e.kind == "text" else None)
        with qtbot.waitSignal(controller.compareOpened, timeout=30_000) as opened:
            dialog.buttons.button(dialog.buttons.StandardButton.Ok).click()
        compare = opened.args[0]
        with qtbot.waitSignal(compare.view.compared, timeout=20_000) as got:
            pass
    progress = controller.progress
    log = progress.log.toPlainText()
    assert "turn 2: sent the recorded user message" in log and "turn 3 done" in log
    assert 'call lookup_order({"order_id": 42})' in log and "call refund(" in log
    assert "← recorded output" in log and "unmatched" not in log.split("\n")[-1]
    assert progress.bar.value() == 2 and not progress.cancel_button.isVisible()
    assert "turn 2 answering: replayed answer 2" in live and not progress.live.isVisible()
    assert progress.outcome.text().startswith(f"Replayed 2 turns of {SID!r} into ") or \
        progress.outcome.text().startswith(f'Replayed 2 turns of "{SID}" into ')
    assert "Undo (Ctrl+Z) deletes the fork" in progress.outcome.text()
    fork = controller.outcome.fork
    comparison = got.args[0]
    assert (comparison.a.session_id, comparison.b.session_id) == (SID, fork)
    assert compare.view.highlighted_turns() == [2, 3]  # turn 1 is the same on both sides
    note = compare.findChild(type(progress.outcome), "replayUsage").text()
    assert "B (replay): turn 2: 2 requests" in note and "turn 3: 1 request" in note
    assert note.startswith("A (recorded): its store recorded no token usage for these turns.")
    # the fork: turn 1 as recorded, turns 2-3 replayed with the recorded tool outputs
    forked = read(store_path, fmt, fork)
    if fmt == "agents":
        outs = [i["output"] for i in forked if i.get("type") == "function_call_output"]
    else:
        outs = [m["content"] for m in forked if m["role"] == "tool"]
    assert outs == [c[3] for n in (1, 2) for c in CALLS[n]]
    assert read(store_path, fmt, SID) == original
    compare.close()
    progress.close()
    # Undo (the edit stack) deletes the fork; Redo brings it back
    _settle(qtbot, window)
    assert window.actions_by_name["undo"].text().startswith("&Undo Replay")
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        window.actions_by_name["undo"].trigger()
    _settle(qtbot, window)
    assert read(store_path, fmt, fork) == []
    assert read(store_path, fmt, SID) == original
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        window.actions_by_name["redo"].trigger()
    _settle(qtbot, window)
    assert read(store_path, fmt, fork) == forked


@pytest.mark.parametrize("fmt", ["agents"])
def test_cancel_keeps_the_turns_replayed_before(qtbot, window, store_path, fmt):
    _open_writable(qtbot, window, store_path)
    controller = window.replay.replays
    with ScriptedServer(faithful_script()) as server:
        dialog = _menu_replay(qtbot, window, 1)
        _use_server(dialog, server)
        dialog.accept()
        progress = controller.progress
        assert progress is not None and progress.cancel_button.isVisible()

        def cancel_after_turn_1(event: Any) -> None:
            if event.kind == "turn_done" and event.turn == 1:
                progress.cancel_button.click()

        # Cancel is clicked as turn 1 is reported done; the replay is in turn 2 then
        controller.progressed.connect(cancel_after_turn_1)
        with qtbot.waitSignal(controller.finished, timeout=30_000) as ended:
            pass
    outcome = ended.args[0]
    assert outcome.cancelled and outcome.report is None and outcome.replayed_turns == 1
    assert progress.cancel_button.text() == "Cancelling…" and not progress.cancel_button.isVisible()
    assert progress.outcome.text().startswith("Cancelled: the fork ")
    assert "keeps the 1 turn replayed before" in progress.outcome.text()
    forked = read(store_path, fmt, outcome.fork)
    # turn 1 replayed (its call answered from the record), nothing of turn 2
    assert [i["content"] for i in forked if i.get("role") == "user"] == USERS[:1]
    assert [i["output"] for i in forked if i.get("type") == "function_call_output"] == [CALLS[1][0][3]]
    # the cancelled replay's fork is on the undo stack too, and opens in Compare
    qtbot.waitUntil(lambda: controller.compare is not None, timeout=20_000)
    _settle(qtbot, window)


def test_the_stop_at_an_unmatched_call_shows_the_call_and_opens_compare(qtbot, window, store_path, fmt):
    _open_writable(qtbot, window, store_path)
    controller = window.replay.replays
    script = faithful_script()
    script[USERS[1]] = [[("delete_account", {"user": "bob"})], "never"]
    with ScriptedServer(script) as server:
        dialog = _menu_replay(qtbot, window, 1)
        _use_server(dialog, server)
        with qtbot.waitSignal(controller.compareOpened, timeout=30_000) as opened:
            dialog.accept()
        with qtbot.waitSignal(opened.args[0].view.compared, timeout=20_000):
            pass
    progress = controller.progress
    assert progress.stop_box.isVisible()
    assert progress.stop_reason.text() == "turn 2 recorded no call of 'delete_account'"
    shown = progress.stop_call.toPlainText()
    assert "delete_account" in shown and '"user": "bob"' in shown
    assert "Nearest recorded calls of this turn:" in shown and 'lookup_order({"order_id": 42})' in shown
    assert "Stopped at an unmatched call: turn 2 recorded no call" in progress.outcome.text()
    assert shown.startswith("The model called delete_account in turn 2 with:")
    report = controller.outcome.report
    assert report.replayed_turns == 1 and report.stopped.name == "delete_account"
    forked = read(store_path, fmt, report.fork)
    users = [i.get("content") for i in forked if i.get("role") == "user"]
    assert users == USERS[:1]
    _settle(qtbot, window)


@pytest.mark.parametrize("fmt", ["flux"])
def test_the_dialog_starts_from_the_test_chats_agent_and_offline_replays_without_a_server(
    qtbot, window, store_path, fmt,
):
    from fluxgui.qt.settings import AgentSettings
    from fluxgui.services.chat import AgentConfig

    saved = AgentConfig(instructions="Be brief.", model="llama3.2", temperature=0.2, provider="ollama",
                        base_url="http://127.0.0.1:9")
    AgentSettings(window.recent.settings).save(str(store_path), saved.to_settings())
    _open_writable(qtbot, window, store_path)
    dialog = _menu_replay(qtbot, window, 3)
    assert dialog.provider.currentData() == "ollama" and dialog.model.text() == "llama3.2"
    assert dialog.instructions.toPlainText() == "Be brief." and dialog.temperature.value() == 0.2
    assert dialog.base_url.text() == "http://127.0.0.1:9" and dialog.base_url.isEnabled()
    # the offline model: no server, deterministic; the fork's id as given
    dialog.provider.setCurrentIndex(dialog.provider.findData("offline"))
    assert not dialog.base_url.isEnabled() and dialog.model.text() == "offline"
    dialog.fork_name.setText("what-if")
    controller = window.replay.replays
    with qtbot.waitSignal(controller.compareOpened, timeout=30_000):
        dialog.accept()
    assert controller.outcome.report.to_json()["replayed_turns"] == 1
    assert controller.outcome.fork == "what-if"
    msgs = read(store_path, fmt, "what-if")
    assert [m["content"] for m in msgs if m["role"] == "user"] == USERS
    # the fork joins the session list
    qtbot.waitUntil(lambda: window.sessions.row_of("what-if") is not None, timeout=20_000)
    controller.compare.close()
    controller.progress.close()
    _settle(qtbot, window)


def test_a_read_only_store_says_how_to_replay(qtbot, window, tmp_path):
    path = tmp_path / "s.db"
    in_thread(write_session, path, "agents")
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=SID)
    _settle(qtbot, window)
    m = _user_message(window, 1)
    window.conversation.select_message(m.id)
    assert not window.replay.replay_current()
    assert window.error_bar.text() == "the store is open read-only: turn on editing (Ctrl+Shift+E) first"
    assert window.replay.replays.dialog is None


@pytest.mark.parametrize("fmt", ["agents"])
def test_a_fixed_text_for_unmatched_calls_lets_the_replay_go_on(qtbot, window, store_path, fmt):
    _open_writable(qtbot, window, store_path)
    controller = window.replay.replays
    script = faithful_script()
    script[USERS[1]] = [[("delete_account", {"user": "bob"})], "could not delete"]
    with ScriptedServer(script) as server:
        # Edit › Replay from Here… on the selected user message, as the context menu
        m = _user_message(window, 2)
        window.conversation.select_message(m.id)
        assert window.actions_by_name["replay_from_here"] in window.menuBar().actions()[1].menu().actions()
        window.actions_by_name["replay_from_here"].trigger()
        qtbot.waitUntil(lambda: controller.dialog is not None and controller.dialog.isVisible(), timeout=20_000)
        dialog = controller.dialog
        _use_server(dialog, server, unmatched='{"error": "not recorded"}')
        options = dialog.options()
        assert (options.match, options.unmatched) == ("strict", '{"error": "not recorded"}')
        with qtbot.waitSignal(controller.compareOpened, timeout=30_000):
            dialog.accept()
    report = controller.outcome.report
    assert report.stopped is None and (report.matched, report.unmatched) == (0, 1)
    assert report.replayed_turns == 2
    log = controller.progress.log.toPlainText()
    assert '← the fixed text (unmatched): {"error": "not recorded"}' in log
    assert not controller.progress.stop_box.isVisible()
    forked = read(store_path, fmt, report.fork)
    assert [i["output"] for i in forked if i.get("type") == "function_call_output"] == [
        CALLS[1][0][3], '{"error": "not recorded"}']
    _settle(qtbot, window)
