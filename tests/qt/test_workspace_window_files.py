"""The window's workspace files and consolidation (issue 36): Save Workspace… writes no
password or key and Open Workspace… opens the same stores; Consolidate refuses a store
of the workspace as its destination, previews the plan, writes every session in its
true order (read back by ``agents.SQLiteSession``) leaving the replicas byte-identical,
and a second run writes nothing; ``fluxgui A B C`` opens a workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_async
from test_workspace_window import open_workspace
from workspace_helpers import PO, agents_items, digests, user_texts

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def test_a_saved_workspace_holds_no_key_and_reopens_the_same_stores(qtbot, window, replicas, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    ws = open_workspace(qtbot, window, replicas.paths, key="sekrit-key-36")
    # the chip's Rename…: the label typed
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("  replica-b ", True))
    ws.rename("b/conversations.db")
    assert ws.members.labels == ["a/conversations.db", "replica-b", "c/conversations.db"]
    assert [ws.bar.chips.item(i).text() for i in range(ws.bar.chips.count())][2] == "replica-b"
    qtbot.waitUntil(lambda: not ws.model.loading and ws.model.row_of("sticky_7") is not None, timeout=20_000)
    assert ws.model.listed(ws.model.row_of("sticky_7")).labels == ["replica-b"]
    assert ws.members.rename("replica-b", "a/conversations.db") == "another store is labelled 'a/conversations.db'"
    saved = tmp_path / "team.json"
    ws.files.save_file(saved)
    text = saved.read_text(encoding="utf-8")
    assert "sekrit" not in text
    doc = json.loads(text)
    assert [s["label"] for s in doc["stores"]] == ["a/conversations.db", "replica-b", "c/conversations.db"]
    assert [Path(s["target"]) for s in doc["stores"]] == [p.absolute() for p in replicas.paths]
    # open it again over a single store
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(replicas.paths[0]))
    qtbot.waitUntil(lambda: len(ws.members) == 1, timeout=20_000)
    ws.files.open_file(saved)
    qtbot.waitUntil(lambda: ws.members.labels == ["a/conversations.db", "replica-b", "c/conversations.db"]
                    and ws.model.rowCount() == len(replicas.routes) and not ws.model.loading, timeout=30_000)
    row = ws.model.listed(ws.model.row_of("sticky_7"))
    assert row.labels == ["replica-b"]


def test_consolidation_previews_refuses_a_source_writes_in_order_and_changes_no_source(qtbot, window, replicas, tmp_path):
    ws = open_workspace(qtbot, window, replicas.paths)
    before = digests(replicas.paths)
    dialog = ws.files.consolidate()
    # a store of the workspace is refused
    dialog.dest.setText(str(replicas.paths[1]))
    with qtbot.waitSignal(dialog.failed, timeout=20_000) as refused:
        dialog.preview_button.click()
    assert "b/conversations.db" in str(refused.args[0]) and "never changed" in str(refused.args[0])
    assert "refusing" in dialog.status.text()
    # a new file: the preview, then the write
    merged = tmp_path / "merged.db"
    dialog.dest.setText(str(merged))
    with qtbot.waitSignal(dialog.planned, timeout=30_000) as planned:
        dialog.preview_button.click()
    plan = planned.args[0]
    assert {s.session_id for s in plan.sessions} == set(replicas.routes)
    assert dialog.table.rowCount() == len(replicas.routes)
    assert not merged.exists() and dialog.write_button.isEnabled()
    with qtbot.waitSignal(dialog.written, timeout=60_000) as done:
        dialog.write_button.click()
    assert done.args[0].count("write") == len(replicas.routes)
    assert dialog.progress.value() == len(replicas.routes)
    assert "not changed" in dialog.status.text()
    for sid in replicas.routes:
        assert user_texts(run_async(agents_items(merged, sid))) == replicas.texts(sid), sid
    assert PO in user_texts(run_async(agents_items(merged, "user_123")))[0]
    assert digests(replicas.paths) == before
    # Cancel before the write has run: nothing is written (a new file is made whole or not at all)
    other = tmp_path / "cancelled.db"
    dialog.dest.setText(str(other))
    with qtbot.waitSignal(dialog.planned, timeout=30_000):
        dialog.preview_button.click()
    dialog.write_button.click()
    assert dialog.cancel_button.text() == "Cancel"
    dialog.cancel_button.click()
    assert "Cancelled" in dialog.status.text() and dialog.cancel_button.text() == "Close"
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    assert not other.exists()
    dialog.dest.setText(str(merged))
    # again: everything is already there, nothing is written
    once = digests([merged])[0]
    with qtbot.waitSignal(dialog.planned, timeout=30_000) as again:
        dialog.preview_button.click()
    assert again.args[0].count("same") == len(replicas.routes)
    assert not dialog.write_button.isEnabled()
    assert digests([merged])[0] == once
    dialog.close()


def test_the_command_line_opens_several_targets_as_a_workspace(replicas, tmp_path):
    from fluxgui.cli import build_window_parser
    from fluxgui.qt.launch import workspace_entries

    args = build_window_parser().parse_args([*map(str, replicas.paths), "--writable"])
    entries = workspace_entries(args.target, args.workspace)
    assert [e.target for e in entries] == [str(p) for p in replicas.paths]
    one = build_window_parser().parse_args([str(replicas.paths[0])])
    assert workspace_entries(one.target, one.workspace) == []


def test_store_labels_name_the_workspace_stores_in_order(qtbot, window, replicas):
    import subprocess
    import sys

    from fluxgui.cli import build_window_parser
    from fluxgui.qt.launch import workspace_entries

    args = build_window_parser().parse_args(
        [*map(str, replicas.paths), "--store-label", "replica-a", "--store-label", "replica-b"])
    entries = workspace_entries(args.target, args.workspace, args.store_label)
    assert [e.label for e in entries] == ["replica-a", "replica-b", None]
    ws = window.workspace
    ws.open_entries(entries)
    qtbot.waitUntil(lambda: len(ws.members) == 3, timeout=30_000)
    assert [ws.bar.chips.item(i).text() for i in range(1, ws.bar.chips.count())] == [
        "replica-a", "replica-b", "conversations.db"]
    # more labels than targets: one line, exit 3, no window
    done = subprocess.run(
        [sys.executable, "-m", "fluxgui", str(replicas.paths[0]), "--store-label", "x", "--store-label", "y"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        "fluxgui: error: 2 --store-labels for 1 TARGET: give one per TARGET, in order"]


def test_a_workspace_opens_at_the_session_asked_for_or_says_no_store_holds_it(qtbot, window, replicas):
    from fluxgui.core.errors import SessionNotFound
    from fluxgui.services.workspace import Entry

    ws = window.workspace
    with qtbot.waitSignal(window.messagesShown, timeout=30_000) as shown:
        ws.open_entries([Entry(str(p)) for p in replicas.paths], session_id="sticky_7")
    assert shown.args == ["sticky_7"]
    assert window.stores.store is ws.members.member("b/conversations.db").store
    ws.open_entries([Entry(str(p)) for p in replicas.paths[:2]], session_id="nope")
    qtbot.waitUntil(lambda: isinstance(window.last_error, SessionNotFound), timeout=30_000)
    assert "no store of this workspace holds session 'nope'" in str(window.last_error)


def test_consolidating_into_postgres_then_a_workspace_with_it_keeps_its_password_in_memory_only(
        qtbot, window, replicas, tmp_path, pg_url):
    from conversations_server import memory_keyring

    from fluxgui.services.credentials import SERVICE, url_key
    from fluxgui.services.workspace import Entry

    ws = open_workspace(qtbot, window, replicas.paths)
    dialog = ws.files.consolidate()
    dialog.dest.setText(pg_url)
    with qtbot.waitSignal(dialog.planned, timeout=30_000):
        dialog.preview_button.click()
    with qtbot.waitSignal(dialog.written, timeout=60_000) as done:
        dialog.write_button.click()
    assert done.args[0].count("write") == len(replicas.routes)
    dialog.close()
    # the consolidated store beside a replica; its password (trust auth ignores it) from the keyring
    with memory_keyring() as values:
        values[(SERVICE, url_key(pg_url))] = "pg-sekrit"
        ws.open_entries([Entry(str(replicas.paths[0])), Entry(pg_url, "merged")])
        qtbot.waitUntil(lambda: ws.members.labels == ["conversations.db", "merged"]
                        and not ws.model.loading and not ws.model.splitting and ws.model.rowCount() > 0,
                        timeout=30_000)
    assert "pg-sekrit" in ws.members.member("merged").opened.target  # to reopen it (memory)
    row = ws.model.listed(ws.model.row_of("user_123"))
    assert row.labels == ["conversations.db", "merged"] and row.split is False  # merged holds it whole
    saved = tmp_path / "ws.json"
    ws.files.save_file(saved)
    assert "pg-sekrit" not in saved.read_text(encoding="utf-8")


def test_a_split_row_s_menu_consolidates_that_session_only(qtbot, window, replicas, tmp_path):
    ws = open_workspace(qtbot, window, replicas.paths)
    menu = ws.row_menu(ws.model.row_of("user_123"))
    texts = [a.text() for a in menu.actions()]
    assert texts == ["Compare", "Consolidate This Session…"]
    next(a for a in menu.actions() if a.text() == "Consolidate This Session…").trigger()
    dialog = ws.files.dialog
    assert dialog is not None and dialog.session_ids == ["user_123"]
    dialog.dest.setText(str(tmp_path / "one.db"))
    with qtbot.waitSignal(dialog.planned, timeout=30_000) as planned:
        dialog.preview_button.click()
    assert [s.session_id for s in planned.args[0].sessions] == ["user_123"]
    with qtbot.waitSignal(dialog.written, timeout=30_000):
        dialog.write_button.click()
    assert user_texts(run_async(agents_items(tmp_path / "one.db", "user_123"))) == replicas.texts("user_123")
    dialog.close()
    menu.deleteLater()
    # a session in one store has the session list's own menu
    single = ws.row_menu(ws.model.row_of("sticky_7"))
    assert single is not None and any("Delete" in a.text() for a in single.actions())
    single.deleteLater()
