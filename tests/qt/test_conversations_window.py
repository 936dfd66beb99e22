"""The window on OpenAI Conversations stores (a loopback Conversations API,
tests/conversations_server.py) and on compaction items: Open URL's Conversations entry,
a 10,000-item conversation paged from its end, "Add conversation…" remembered per server,
clear with its confirmation and undo, the Compacted history card. Offscreen, pytest-qt;
waits on signals, never sleeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conversations_server import API_KEY, ConversationsServer, sdk_items, sdk_write, texts
from PySide6.QtWidgets import QMessageBox
from qt_helpers import OFFSCREEN_NOISE, run_async, when_modal

from fluxgui.qt.conversations import ConversationIds
from fluxgui.qt.dialogs.open_url import OpenUrlDialog
from fluxgui.qt.dialogs.opening import OpenRequest, request_from

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

SHOTS = Path("/tmp/fluxgui_shots")
SCHEME = "openai-conversations:"


@pytest.fixture
def server(conversations_api):
    return conversations_api


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=30_000)


def _open(qtbot: Any, window: Any, request: OpenRequest) -> str:
    with qtbot.waitSignal(window.messagesShown, timeout=30_000) as blocker:
        window.stores.open_request(request)
    _settle(qtbot, window)
    return blocker.args[0]


def _listed(window: Any) -> list[str]:
    return [window.sessions.session_at(r).id for r in range(window.sessions.rowCount())]


def _form(qtbot: Any, server: ConversationsServer, ids: str) -> OpenUrlDialog:
    dialog = OpenUrlDialog(keyring_ok=False)
    qtbot.addWidget(dialog)
    dialog.driver_combo.setCurrentIndex(dialog.driver_combo.findData(SCHEME))
    fields = dialog.option_fields.edits
    fields["base_url"].setText(server.base_url)
    fields["api_key"].setText(API_KEY)
    fields["conversations"].setText(ids)
    return dialog


def test_open_url_has_a_conversations_entry(qtbot, server):
    dialog = _form(qtbot, server, "conv_a, conv_b conv_c")
    form, fields = dialog._form, dialog.option_fields.edits
    for name in ("base_url", "api_key", "conversations", "api_timeout"):
        assert form.isRowVisible(fields[name]), name
    for widget in (dialog._host_row, dialog._database_row, dialog.user_edit, dialog.password_edit,
                   dialog.key_prefix_edit, fields["sessions_table"]):
        assert not form.isRowVisible(widget)
    assert form.isRowVisible(dialog.remember_key_check)
    assert fields["api_key"].echoMode() == fields["api_key"].EchoMode.Password
    assert dialog.ok_button.isEnabled() and dialog.problem() is None
    request = request_from(dialog)
    assert request.target == SCHEME + server.base_url
    assert request.label == f"OpenAI Conversations at {server.base_url}"
    assert request.options.conversations == ("conv_a", "conv_b", "conv_c")
    assert request.options.api_key == API_KEY and API_KEY not in repr(request)
    assert API_KEY not in dialog.preview.text()
    fields["base_url"].setText("api.openai.com")
    assert not dialog.ok_button.isEnabled() and "https://" in dialog.problem()


def test_a_10000_item_conversation_opens_at_its_end_and_pages_back(qtbot, window, server):
    server.seed("conv_big", texts(10_000))
    small = run_async(sdk_write(server, texts(3, "s")))
    request = request_from(_form(qtbot, server, f"conv_big {small}"))
    shown = _open(qtbot, window, request)
    assert shown == "conv_big" and _listed(window) == ["conv_big", small]
    counts = [window.sessions.index(r, window.sessions.COUNT).data() for r in range(2)]
    assert counts == ["≥ 100", "3"]
    pane = window.conversation
    size = pane.page_size
    assert pane.loaded_count == size
    assert pane.model.message(size - 1).text == "m9999"
    assert pane.model.message(0).text == f"m{10_000 - size}"
    assert "latest" in pane.status.text() and "more on scroll" in pane.status.text()
    reads = server.item_requests("conv_big")
    assert all(r["query"]["order"] == "desc" for r in reads)  # never from the start
    assert len(reads) <= 4
    bar = pane.view.verticalScrollBar()
    for _ in range(2):
        first = pane.model.message(0)
        with qtbot.waitSignal(pane.earlierLoaded, timeout=30_000):
            bar.setValue(0)  # the user drags to the top
        assert server.item_requests("conv_big")[-1]["query"]["after"] == first.ref
        assert pane.model.message(size) is first
        qtbot.waitUntil(lambda: not pane.busy, timeout=30_000)
    assert pane.loaded_count <= 5 * size  # never the whole conversation
    assert all(r["query"]["order"] == "desc" for r in server.item_requests("conv_big"))
    SHOTS.mkdir(exist_ok=True)
    assert window.grab().save(str(SHOTS / "conversations_10000.png"))


def test_add_conversation_lists_it_and_remembers_it_per_server(qtbot, window, server):
    a = run_async(sdk_write(server, texts(2, "a")))
    b = run_async(sdk_write(server, texts(4, "b")))
    request = OpenRequest(SCHEME + server.base_url, "conversations", options=request_from(
        _form(qtbot, server, a)).options)
    _open(qtbot, window, request)
    bar = window.conversations_bar
    assert bar.isVisible() and _listed(window) == [a]
    bar.edit.setText(" two words ")
    bar.submit()
    assert bar.hint.isVisible() and "no spaces" in bar.hint.text()
    bar.edit.setText("conv_unknown")
    bar.submit()
    qtbot.waitUntil(lambda: bar.hint.isVisible(), timeout=30_000)
    assert "has no conversation \"conv_unknown\"" in bar.hint.text() and _listed(window) == [a]
    with qtbot.waitSignal(window.messagesShown, timeout=30_000) as shown:
        bar.edit.setText(b)
        bar.submit()
    _settle(qtbot, window)
    assert shown.args == [b] and _listed(window) == [b, a]
    location = f"{SCHEME}http://localhost:{server.base_url.split(':')[2]}"
    assert ConversationIds(window.recent.settings).ids(location) == [b, a]
    # The same server opened again lists them, the key given again (never in settings).
    settings_file = Path(window.recent.settings.fileName())
    assert API_KEY not in settings_file.read_text(encoding="utf-8")
    again = OpenRequest(f"{SCHEME}{server.base_url}/", "again", options=request.options.with_(
        conversations=()))
    _open(qtbot, window, again)
    assert _listed(window) == [b, a]
    # Forget drops one from the list (the server keeps it).
    window.session_list.select_row(1)
    with qtbot.waitSignal(window.messagesShown, timeout=30_000):
        bar.forget_button.click()
    _settle(qtbot, window)
    assert _listed(window) == [b] and a in server.conversations
    assert ConversationIds(window.recent.settings).ids(location) == [b]


def test_the_bar_is_hidden_for_other_stores(qtbot, window, agents_db):
    with qtbot.waitSignal(window.messagesShown, timeout=30_000):
        window.stores.open_target(str(agents_db))
    _settle(qtbot, window)
    assert not window.conversations_bar.isVisible()


def test_clear_asks_naming_it_and_undo_makes_a_new_conversation(qtbot, window, server):
    cid = run_async(sdk_write(server, texts(5)))
    before = run_async(sdk_items(server, cid))
    request = OpenRequest(SCHEME + server.base_url, "c", options=request_from(
        _form(qtbot, server, cid)).options.with_(writable=True))
    _open(qtbot, window, request)
    seen: list[str] = []

    def accept(box: QMessageBox) -> None:
        seen.append(box.text() + "\n" + box.informativeText())
        from fluxgui.qt.dialogs.confirm import confirm_button

        confirm_button(box).click()

    when_modal(QMessageBox, accept)
    with qtbot.waitSignal(window.editor.applied, timeout=30_000):
        window.edits.clear_session(cid)
    _settle(qtbot, window)
    # (A long id is shown with its middle elided.)
    assert cid[:20] in seen[0] and cid[-20:] in seen[0] and "Delete conversation" in seen[0]
    assert "new id" in seen[0] and server.base_url in seen[0]
    assert cid not in server.conversations
    with qtbot.waitSignal(window.editor.applied, timeout=30_000) as undone:
        window.edits.undo()
    _settle(qtbot, window)
    new_id = undone.args[0].session_id
    assert new_id != cid and new_id in server.conversations
    bare = [{k: v for k, v in i.items() if k != "id"} for i in before]
    assert [{k: v for k, v in i.items() if k != "id"} for i in run_async(sdk_items(server, new_id))] == bare
    assert "new conversation id" in window.statusBar().currentMessage()
    location = f"{SCHEME}http://localhost:{server.base_url.split(':')[2]}"
    assert ConversationIds(window.recent.settings).ids(location) == [new_id]


def test_a_compaction_item_is_its_own_card(qtbot, window, tmp_path):
    from agents import SQLiteSession

    path = tmp_path / "compacted.db"
    items = [
        {"role": "user", "content": "How do I reset my router?"},
        {"type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Hold the reset button for 10 s.", "annotations": []}]},
        {"id": "cmp_1", "type": "compaction", "created_by": "resp_42",
         "encrypted_content": "gAAAAABn" + "Z" * 2400},
        {"role": "user", "content": "It still blinks orange."},
        {"type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Then call support.", "annotations": []}]},
    ]

    session = SQLiteSession("support-7", str(path))
    try:
        run_async(session.add_items(items))
    finally:
        session.close()
    with qtbot.waitSignal(window.messagesShown, timeout=30_000):
        window.stores.open_target(str(path))
    _settle(qtbot, window)
    pane = window.conversation
    card = pane.model.message(2)
    assert card.kind == "compaction"
    header = pane.delegate.header_text(card)
    assert header.startswith("compaction · compacted history")
    body = pane.delegate.document(card).toPlainText()
    assert body.startswith("Compacted history\n2.4 kB of encrypted content · created by resp_42")
    assert "opaque" in body and "ZZZZ" not in body
    # The turns after it are numbered from it.
    assert pane.turn_of(pane.model.message(0)) == 1
    assert pane.turn_of(pane.model.message(3)) == 1
    SHOTS.mkdir(exist_ok=True)
    assert window.grab().save(str(SHOTS / "compaction_card.png"))


def test_remembered_ids_the_server_lost_are_forgotten(qtbot, window, server):
    a = run_async(sdk_write(server, texts(2)))
    location = f"{SCHEME}http://localhost:{server.base_url.split(':')[2]}"
    ConversationIds(window.recent.settings).add(location, ["conv_gone", a])
    request = OpenRequest(SCHEME + server.base_url, "c", options=request_from(
        _form(qtbot, server, "")).options)
    _open(qtbot, window, request)
    assert _listed(window) == [a]
    assert window.problems_bar.isVisible()
    assert "Skipped 1 conversation" in window.stores.problems[0] or "conv_gone" in window.stores.problems[0]
    assert ConversationIds(window.recent.settings).ids(location) == [a]


def test_remembering_the_api_key_files_it_in_the_keyring(qtbot, server):
    from conversations_server import memory_keyring

    from fluxgui.qt.dialogs.opening import remember_opened
    from fluxgui.qt.settings import RecentStores
    from fluxgui.services.credentials import API_KEY_KEYRING, SERVICE

    with memory_keyring() as values:
        dialog = OpenUrlDialog(keyring_ok=True)
        qtbot.addWidget(dialog)
        dialog.driver_combo.setCurrentIndex(dialog.driver_combo.findData(SCHEME))
        dialog.option_fields.edits["api_key"].setText("sk-remember-me")
        dialog.remember_key_check.setChecked(True)
        request = request_from(dialog)
        assert request.remember
        recent = RecentStores()
        remember_opened(request, recent)
        assert values[(SERVICE, API_KEY_KEYRING)] == "sk-remember-me"
    assert recent.entries()[0].target == SCHEME
    assert "sk-remember-me" not in Path(recent.settings.fileName()).read_text(encoding="utf-8")
