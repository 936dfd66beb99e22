"""The main window's menus, actions and keyboard shortcuts.

Ctrl+O open a file, Ctrl+K Ctrl+O open a folder of JSON sessions (Ctrl+Shift+O is taken
by Open URL; the chord is the one editors use for Open Folder), Ctrl+Shift+O open a URL
(a database or a Redis server), Ctrl+F search, Ctrl+L the session list,
Ctrl+C copy the selected message's text, Ctrl+Shift+C its raw JSON, F5 reload,
Ctrl+Shift+T the chat panel, Ctrl+Q quit. Arrow keys move through the sessions in the list.

Editing (once Ctrl+Shift+E has made the store writable): Ctrl+Z undo, Ctrl+Shift+Z redo,
F2 edit the message, Ctrl+Return insert a message after it, Delete delete the selected
messages, Shift+Delete delete the session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox

from fluxgui.core.display import set_time_zone
from fluxgui.core.roles import Store

from ..branches import branch_from_turn

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from ..conversation import ConversationPane
    from ..editing import Editor
    from ..sessions import SearchBox, SessionListModel
    from ..settings import RecentStores
    from ..shell import BranchBar, Comparing, Doctoring, Edits, SessionRows, Stores, Transfers
    from .chat_dock import ChatDock


Shortcut = QKeySequence | QKeySequence.StandardKey | str
#: the settings key of View › Times in UTC
UTC_TIMES_KEY = "view/timesUtc"


def _action(
    window: QMainWindow,
    text: str,
    slot: Callable[[], object],
    shortcut: Shortcut | None = None,
    tip: str = "",
) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if tip:
        action.setStatusTip(tip)
    action.triggered.connect(lambda _checked=False: slot())
    window.addAction(action)  # shortcuts work wherever the focus is in the window
    return action


@dataclass(frozen=True)
class MenuHost:
    """What the menus call: the window's actions by name (filled here), the recent
    stores and the settings, the controllers (open stores, edits, transfers, compare,
    the doctor, the chat dock), the session list (rows and model), the search box, the
    conversation pane, View › Reload, and what Branch from This Turn… uses (the editor,
    the branch bar, the shown session, where errors are shown)."""

    actions: dict[str, QAction]
    recent: RecentStores
    stores: Stores
    edits: Edits
    transfers: Transfers
    comparing: Comparing
    doctor: Doctoring
    chat: ChatDock
    session_list: SessionRows
    sessions: SessionListModel
    search_box: SearchBox
    conversation: ConversationPane
    reload: Callable[[], None]
    editor: Editor
    branch_bar: BranchBar
    shown: Callable[[], str | None]
    show_error: Callable[[BaseException], None]


def install_actions(window: QMainWindow, host: MenuHost) -> dict[str, QAction]:
    """Build the menu bar of ``window``; return its actions by name (tests use them:
    ``host.actions``, filled)."""
    actions = host.actions
    bar = window.menuBar()

    file_menu = bar.addMenu("&File")
    actions["open"] = _action(window, "&Open…", host.stores.open_file, QKeySequence.StandardKey.Open,
                              "Open a SQLite session store")
    actions["open_folder"] = _action(
        window, "Open &Folder…", host.stores.open_folder, "Ctrl+K, Ctrl+O",
        "Open a folder of JSON session files (HelloAgent Store)",
    )
    actions["open_url"] = _action(window, "Open &URL…", host.stores.open_url, "Ctrl+Shift+O",
                                  "Open a database or Redis server by URL (PostgreSQL, Redis, …)")
    file_menu.addAction(actions["open"])
    file_menu.addAction(actions["open_folder"])
    file_menu.addAction(actions["open_url"])
    recent_menu = QMenu("Open &Recent", window)
    recent_menu.aboutToShow.connect(lambda: _fill_recent(host, recent_menu))
    file_menu.addMenu(recent_menu)
    actions["open_demo"] = _action(window, "Open &Demo Store", host.stores.open_demo)
    file_menu.addAction(actions["open_demo"])
    file_menu.addSeparator()
    actions["enter_key"] = _action(
        window, "Enter Encryption &Key…", host.stores.enter_key,
        tip="Give the key of a store written by the Agents SDK's EncryptedSession "
        "(kept in memory only)",
    )
    actions["enter_key"].setEnabled(False)  # enabled for stores that hold encrypted items
    file_menu.addAction(actions["enter_key"])
    file_menu.addSeparator()
    actions["export"] = _action(window, "&Export…", host.transfers.export_dialog, "Ctrl+Shift+S",
                                "Export sessions as JSON, JSONL, Markdown or HTML")
    actions["import"] = _action(window, "&Import…", host.transfers.import_dialog, "Ctrl+Shift+I",
                                "Import exports and session files as new sessions")
    actions["copy_to"] = _action(window, "Copy Sessions &To…", host.transfers.copy_dialog,
                                 tip="Copy the selected sessions into another store")
    for name in ("export", "import", "copy_to"):
        file_menu.addAction(actions[name])
    file_menu.addSeparator()
    actions["quit"] = _action(window, "&Quit", window.close, QKeySequence.StandardKey.Quit)
    file_menu.addAction(actions["quit"])

    edit_menu = bar.addMenu("&Edit")
    actions["undo"] = _action(window, "&Undo", host.edits.undo, QKeySequence.StandardKey.Undo)
    actions["redo"] = _action(window, "&Redo", host.edits.redo, "Ctrl+Shift+Z")
    actions["edit_message"] = _action(window, "&Edit Message…", host.edits.edit_message, "F2",
                                      "Edit the selected message's text, role and metadata")
    actions["insert_before"] = _action(window, "Insert Message &Before…",
                                       lambda: host.edits.insert_message("before"))
    actions["insert_after"] = _action(window, "&Insert Message After…",
                                      lambda: host.edits.insert_message("after"), "Ctrl+Return",
                                      "Insert a message after the selected one (or at the end)")
    actions["delete_messages"] = _action(window, "&Delete Messages", host.edits.delete_messages,
                                         QKeySequence.StandardKey.Delete,
                                         "Delete the selected messages")
    actions["pop_message"] = _action(window, "Remove &Last Message", host.edits.pop_message)
    actions["fork"] = _action(window, "&Fork from Here…", host.edits.fork_here, "Ctrl+Shift+F",
                              "A new session with the conversation up to the selected message")
    actions["branch_from_turn"] = _action(
        window, "&Branch from This Turn…", lambda: branch_from_turn(
            window, host.stores.store, host.shown(), host.conversation,
            host.editor, host.branch_bar, host.show_error,
        ),
        tip="A new branch of an AdvancedSQLiteSession session, before the selected user turn",
    )
    actions["clear_session"] = _action(window, "C&lear Session…", host.edits.clear_session,
                                       tip="Remove every message of the open session")
    actions["delete_session"] = _action(window, "Delete &Session…", host.edits.delete_session,
                                        "Shift+Del", "Delete the open session")
    actions["editing"] = _action(window, "&Allow Editing", lambda: None, "Ctrl+Shift+E",
                                 "Reopen the store writable (or read-only again)")
    actions["editing"].setCheckable(True)
    actions["editing"].triggered.connect(host.stores.set_editing)
    for name in ("undo", "redo"):
        edit_menu.addAction(actions[name])
    edit_menu.addSeparator()
    for name in ("edit_message", "insert_before", "insert_after", "delete_messages",
                 "pop_message", "fork", "branch_from_turn"):
        edit_menu.addAction(actions[name])
    edit_menu.addSeparator()
    for name in ("clear_session", "delete_session"):
        edit_menu.addAction(actions[name])
    edit_menu.addSeparator()
    edit_menu.addAction(actions["editing"])
    edit_menu.addSeparator()
    actions["copy"] = _action(window, "&Copy Text", host.conversation.menus.copy_text, QKeySequence.StandardKey.Copy,
                              "Copy the selected message's text")
    actions["copy_raw"] = _action(window, "Copy &Raw JSON", host.conversation.menus.copy_raw, "Ctrl+Shift+C",
                                  "Copy the selected message as stored")
    actions["find"] = _action(window, "&Find…", lambda: focus_search(host), QKeySequence.StandardKey.Find,
                              "Search sessions and messages")
    actions["find_in_conversation"] = _action(
        window, "Find in C&onversation…", host.conversation.finding.open_find_bar, None,
        "Find text in the open conversation (Ctrl+F there)")
    actions["find_next"] = _action(window, "Find &Next", lambda: host.session_list.find_step(),
                                   "F3",
                                   "The next message containing the text looked for")
    actions["find_previous"] = _action(window, "Find Pre&vious",
                                       lambda: host.session_list.find_step(backward=True),
                                       "Shift+F3",
                                       "The previous message containing the text looked for")
    for name in ("copy", "copy_raw"):
        edit_menu.addAction(actions[name])
    edit_menu.addSeparator()
    for name in ("find", "find_in_conversation", "find_next", "find_previous"):
        edit_menu.addAction(actions[name])

    view_menu = bar.addMenu("&View")
    actions["sessions"] = _action(window, "Session &List", host.session_list.focus, "Ctrl+L")
    actions["reload"] = _action(window, "&Reload", host.reload, QKeySequence.StandardKey.Refresh)
    if actions["reload"].shortcut().isEmpty():
        actions["reload"].setShortcut(QKeySequence("F5"))
    view_menu.addAction(actions["sessions"])
    view_menu.addAction(actions["reload"])
    actions["compare"] = _action(window, "&Compare Sessions", host.comparing.compare_sessions, "Ctrl+D",
                                 "The two selected sessions (or a fork and its origin) side by side")
    view_menu.addAction(actions["compare"])
    actions["plain_text"] = _plain_text_action(window, host)
    view_menu.addAction(actions["plain_text"])
    inspector = host.conversation.inspector
    actions["inspector"] = QAction("&Inspector", window)
    actions["inspector"].setCheckable(True)
    actions["inspector"].setChecked(True)
    actions["inspector"].setShortcut(QKeySequence("Ctrl+I"))
    actions["inspector"].setStatusTip("Show the selected message's metadata and raw item")
    actions["inspector"].toggled.connect(inspector.setVisible)
    window.addAction(actions["inspector"])
    view_menu.addAction(actions["inspector"])
    # Times in UTC (as stored) or in the local zone: cards, inspector and list alike.
    actions["utc_times"] = QAction("Times in &UTC", window)
    actions["utc_times"].setCheckable(True)
    actions["utc_times"].setStatusTip("Show message and session times in UTC instead of the local zone")
    utc = str(host.recent.settings.value(UTC_TIMES_KEY, "false")).lower() == "true"
    actions["utc_times"].setChecked(utc)
    set_time_zone("utc" if utc else "local")
    actions["utc_times"].toggled.connect(lambda on: show_times_in_utc(host, on))
    view_menu.addAction(actions["utc_times"])
    # Chat (issue 7): the dock's own toggle, so closing the dock unchecks it.
    chat = host.chat.dock.toggleViewAction()
    chat.setText("C&hat")
    chat.setShortcut(QKeySequence("Ctrl+Shift+T"))
    chat.setStatusTip("Send a message to an agent in the open session")
    chat.triggered.connect(host.chat.remember_visible)  # the user's choice, not a hide
    chat.toggled.connect(
        lambda on: on and host.chat.panel.message.setFocus()
    )
    actions["chat"] = chat
    window.addAction(chat)
    view_menu.addAction(chat)
    # The session doctor (issue 18): problems and repairs, Preflight, Ledger.
    doctor = host.doctor.dock.toggleViewAction()
    doctor.setText("&Doctor")
    doctor.setShortcut(QKeySequence("Ctrl+Shift+H"))
    doctor.setStatusTip("What breaks resuming the open session, its repairs, preflight and ledger")
    doctor.toggled.connect(lambda on: host.doctor.check_shown() if on else None)
    actions["doctor"] = doctor
    window.addAction(doctor)
    view_menu.addAction(doctor)

    help_menu = bar.addMenu("&Help")
    actions["about"] = _action(window, "&About fluxgui", lambda: _about(window))
    help_menu.addAction(actions["about"])
    return actions


#: settings key: whether Markdown messages are shown as plain text (View menu)
PLAIN_TEXT = "ui/plain_text"


def _plain_text_action(window: QMainWindow, host: MenuHost) -> QAction:
    """View › Show Markdown as Plain Text: every assistant message exactly as written
    (remembered in the settings; a message's own context-menu toggle overrides it)."""
    action = QAction("Show Markdown as &Plain Text", window)
    action.setCheckable(True)
    action.setStatusTip("Show assistant messages exactly as written, not as Markdown")
    settings = host.recent.settings
    value = settings.value(PLAIN_TEXT, False)
    on = value is True or str(value).lower() == "true"
    action.setChecked(on)
    host.conversation.menus.set_all_plain(on)

    def toggled(checked: bool) -> None:
        host.conversation.menus.set_all_plain(checked)
        settings.setValue(PLAIN_TEXT, bool(checked))
        settings.sync()

    action.toggled.connect(toggled)
    return action


def show_times_in_utc(host: MenuHost, on: bool) -> None:
    """View › Times in UTC: every time shown in UTC (``on``) or the local zone, the
    choice kept in the settings."""
    set_time_zone("utc" if on else "local")
    host.recent.settings.setValue(UTC_TIMES_KEY, "true" if on else "false")
    pane = host.conversation
    pane.view.viewport().update()
    current = pane.current_message()
    if current is not None:
        pane.inspector.show_message(current, pane.raw_of(current))
    model = host.sessions
    if model.rowCount():
        model.dataChanged.emit(
            model.index(0, 0), model.index(model.rowCount() - 1, model.columnCount() - 1)
        )


def focus_search(host: MenuHost) -> None:
    """Ctrl+F: in the conversation, its find bar; elsewhere the session search."""
    focus = QApplication.focusWidget()
    pane = host.conversation
    if focus is not None and pane.isAncestorOf(focus) and pane.session_id is not None:
        pane.finding.open_find_bar()
        return
    host.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
    host.search_box.selectAll()


def _fill_recent(host: MenuHost, menu: QMenu) -> None:
    menu.clear()
    items = host.recent.entries()
    for entry in items:
        action = menu.addAction(entry.label.replace("&", "&&"))
        action.setToolTip(entry.label)
        action.triggered.connect(
            lambda _checked=False, e=entry: host.stores.open_recent(e.target, e.label, e.key_prefix)
        )
    if not items:
        empty = menu.addAction("No recent stores")
        empty.setEnabled(False)
        return
    menu.addSeparator()
    clear = menu.addAction("Clear Recent Stores")
    clear.triggered.connect(lambda _checked=False: host.recent.clear())


def _about(window: QMainWindow) -> None:
    from fluxgui import __version__

    QMessageBox.about(
        window,
        "About fluxgui",
        f"fluxgui {__version__}\n\nBrowse and edit the conversation histories AI agents "
        "keep in session stores. Stores open read-only; Edit › Allow Editing makes them "
        "writable, and every edit can be undone.",
    )
