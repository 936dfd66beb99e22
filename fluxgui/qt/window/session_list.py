"""The session list on the window's left: a table view over the
:class:`~fluxgui.qt.sessions.SessionListModel`, which row to select as pages arrive, the
count in the status bar, its context menu and its Delete key.

A table view, not a tree view: QTreeView's layout calls ``fetchMore`` until the model is
exhausted, QTableView only when the last row scrolls into view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTableView, QWidget

from fluxgui.core.redact import redact_url
from fluxgui.core.text import plural
from fluxgui.core.visible import visible

from ..sessions import SessionListModel
from ..sessions.cells import SessionCells
from ..widgets import session_table

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel

    from ..conversation import ConversationPane
    from ..shell import Stores


class ListHost(Protocol):
    """What the session list uses of the window (its parts made after the list, and
    showing a session)."""

    @property
    def conversation(self) -> ConversationPane: ...
    @property
    def count_label(self) -> QLabel: ...
    @property
    def stores(self) -> Stores: ...
    def forget_shown(self) -> None: ...
    def show_session(self, session_id: str) -> None: ...
    def show_session_at_hit(self, session_id: str, message_id: int, text: str) -> None: ...
    def show_error(self, exc: BaseException) -> None: ...


def make_session_view(parent: QWidget, model: SessionListModel) -> QTableView:
    """The table of sessions: several rows can be selected (Shift/Ctrl+click) for export
    and copy, the current row is the one shown; sorted by the header, newest first."""
    view = QTableView(parent)
    view.setModel(model)
    view.setItemDelegate(SessionCells(model, view))  # each scroll step repaints every row
    view.horizontalHeader().setSortIndicator(
        SessionListModel.UPDATED, Qt.SortOrder.DescendingOrder
    )
    session_table(view, QAbstractItemView.SelectionMode.ExtendedSelection)
    view.setCornerButtonEnabled(False)
    rows = view.verticalHeader()
    rows.hide()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(parent.fontMetrics().height() + 10)
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    header.setSectionResizeMode(SessionListModel.ID, QHeaderView.ResizeMode.Stretch)
    # Fixed widths from the font, not ResizeToContents: that measures every loaded
    # row and is not redone when a page arrives.
    metrics = view.fontMetrics()
    pad = 3 * metrics.averageCharWidth()
    widths = {
        SessionListModel.COUNT: metrics.horizontalAdvance("Messages") + pad,
        SessionListModel.UPDATED: metrics.horizontalAdvance("2088-08-28 08:08") + pad,
    }
    for column, width in widths.items():
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(column, width)
    view.setSortingEnabled(True)
    header.setSectionsClickable(True)
    header.setSortIndicatorShown(True)
    view.installEventFilter(NarrowColumns(view, widths))
    return view


class NarrowColumns(QObject):
    """A narrow list (the chat dock open, 2× scale) keeps its ids readable: the Last
    active column, then the Messages column, are hidden while the ids would get less than
    :attr:`ID_SHARE` of the width, and come back when there is room (each row's tooltip
    carries both)."""

    ID_SHARE = 0.35

    def __init__(self, view: QTableView, widths: dict[int, int]) -> None:
        super().__init__(view)
        self._view = view
        self._widths = widths

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        if event.type() == QEvent.Type.Resize:
            self.fit(self._view.contentsRect().width())
        return False

    def fit(self, width: int) -> None:
        header = self._view.horizontalHeader()
        left = width
        for column in (SessionListModel.COUNT, SessionListModel.UPDATED):
            left -= self._widths[column]
        hide_updated = left < width * self.ID_SHARE
        hide_count = hide_updated and left + self._widths[SessionListModel.UPDATED] < width * self.ID_SHARE
        for column, hide in ((SessionListModel.UPDATED, hide_updated), (SessionListModel.COUNT, hide_count)):
            if header.isSectionHidden(column) != hide:
                header.setSectionHidden(column, hide)
                if not hide:
                    header.resizeSection(column, self._widths[column])


class SessionKeys(QObject):
    """Keys of the session list: Delete deletes the session (not the selected messages);
    Home/End go to the first/last row, Ctrl+End to the true end (fetching every page);
    Enter/Shift+Enter step through the search's hits in the conversation."""

    def __init__(
        self, parent: QObject, delete_session: Callable[[], None], rows: SessionList
    ) -> None:
        super().__init__(parent)
        self._delete_session = delete_session
        self._rows = rows

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) or not isinstance(
            event, QKeyEvent
        ):
            return False
        if event.matches(QKeySequence.StandardKey.Delete):
            if kind == QEvent.Type.ShortcutOverride:
                event.accept()  # the key comes to the list, not the window's action
            else:
                self._delete_session()
            return True
        if kind != QEvent.Type.KeyPress:
            return False
        key, mods = event.key(), event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        ctrl = Qt.KeyboardModifier.ControlModifier
        if key in (Qt.Key.Key_Home, Qt.Key.Key_End) and mods in (Qt.KeyboardModifier.NoModifier, ctrl):
            if key == Qt.Key.Key_Home:
                self._rows.go_home()
            else:
                self._rows.go_end(fetch=mods == ctrl)
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self._rows.model.search_text:
            self._rows.find_step(backward=bool(mods & Qt.KeyboardModifier.ShiftModifier))
            return True
        return False


class SessionList(QObject):
    """The session list's part in a :class:`~.main.MainWindow`: the row to select once
    its page arrives (the session asked for, else the first), the shown session
    following the current row, the count and search progress in the status bar.

    It is given the window's widget (the view's parent), the session list model and
    what it uses of the window (``host``, see :class:`ListHost`)."""

    def __init__(self, parent: QWidget, model: SessionListModel, host: ListHost) -> None:
        super().__init__(parent)
        self._parent = parent
        self._host = host
        self.model = model
        self.view = make_session_view(parent, self.model)
        #: select this session's row once its page arrives
        self.pending: str | None = None
        #: select the first row once it arrives (the most recently active session)
        self.auto = False
        #: the conversation pane says the list is empty (cleared by the next rows)
        self.said_empty = False
        #: Ctrl+End: fetch pages until the last, then select it
        self.to_end = False
        self.view.selectionModel().currentRowChanged.connect(self._on_current_row)
        self.model.searchProgress.connect(self._on_search_progress)
        self.model.searchFinished.connect(self._on_search_finished)

    def install(
        self,
        delete_session: Callable[[], None],
        session_menu: Callable[[str], QMenu],
        extend_menu: Callable[[QMenu, str], None],
    ) -> None:
        """Wire what needs the rest of the window: the Delete key, the context menu (the
        edit controller's ``session_menu``, extended by ``extend_menu``: the reviews'),
        the pages arriving."""
        self._session_menu, self._extend_menu = session_menu, extend_menu
        self._keys = SessionKeys(self._parent, delete_session, self)
        self.view.installEventFilter(self._keys)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.model.pageLoaded.connect(self._on_page_loaded)
        self.model.loadFailed.connect(self._on_failed)
        # the ids as the window shows them (View › Redact): shown again when that changes
        ids = self._host.conversation.ids
        self.model.id_text = ids.text
        ids.changed.connect(lambda: self.model.marks_changed())

    def build_menu(self, session_id: str) -> QMenu:
        """The context menu for ``session_id`` (not shown)."""
        menu = self._session_menu(session_id)
        self._extend_menu(menu, session_id)
        return menu

    def selected_ids(self) -> list[str]:
        """The sessions selected in the list, in list order."""
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [info.id for info in (self.model.session_at(r) for r in rows) if info]

    def select_row(self, row: int) -> None:
        index = self.model.index(row, 0)
        self.view.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.view.scrollTo(index)

    def focus(self) -> None:
        """Ctrl+L (and ↓ or Enter in the search box): the list has the focus and a current
        row (the first, once rows arrive)."""
        self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if not self.view.currentIndex().isValid():
            if self.model.rowCount():
                self.select_row(0)
            else:
                self.auto = True

    def go_home(self) -> None:
        """Home: the first row."""
        self.to_end = False
        if self.model.rowCount():
            self.select_row(0)

    def go_end(self, *, fetch: bool = False) -> None:
        """End: the last loaded row; with ``fetch`` (Ctrl+End) the true last one, every
        page fetched first."""
        if fetch and self.model.canFetchMore(QModelIndex()):
            self.to_end = True
            if not self.model.loading:
                self.model.fetchMore(QModelIndex())
            return
        self.to_end = False
        if self.model.rowCount():
            self.select_row(self.model.rowCount() - 1)

    def on_search_text(self, text: str) -> None:
        """The search was cleared: the conversation no longer highlights its text (the
        find bar's own text stays while the bar is open)."""
        pane = self._host.conversation
        if not text and not pane.find_bar.isVisible() and pane.finding.find_text:
            pane.finding.stop_finding()

    def find_step(self, *, backward: bool = False) -> None:
        """F3 / Shift+F3 (and Enter / Shift+Enter in the list): the next or previous
        message containing the text looked for (the find bar's, else the search's)."""
        pane = self._host.conversation
        text = pane.finding.find_text or self.model.search_text
        if text and pane.session_id is not None:
            pane.finding.find(text, backward=backward)

    def show_count(self, more: bool) -> None:
        """The status bar's count of listed sessions (``+``: more to come)."""
        count, word = plural(self.model.rowCount(), "session").split(" ", 1)
        self._host.count_label.setText(f"{count}{'+' if more else ''} {word}")

    def _on_page_loaded(self, _added: int, more: bool) -> None:
        host = self._host
        rows = self.model.rowCount()
        self.show_count(more)
        host.stores.update_problems()  # a JSON folder finds unreadable files as it lists
        if rows and self.said_empty:
            # The pane still says the list was empty (an earlier search found nothing):
            # that text belongs to the earlier search — show this one's first session.
            self.said_empty = False
            if host.conversation.session_id is None and self.pending is None:
                host.forget_shown()
                self.view.setCurrentIndex(QModelIndex())
                self.auto = True
        if self.pending is not None:
            row = self.model.row_of(self.pending)
            if row is not None:
                self.pending = None
                self.select_row(row)
        elif self.auto and rows:
            self.auto = False
            self.select_row(0)
        if self.to_end:
            self.go_end(fetch=more)
        if not rows and not more and not self.model.searching:
            self.said_empty = True
            host.conversation.clear(self.empty_text())

    def empty_text(self) -> str:
        """What the conversation pane says when the list is empty."""
        text = self.model.search_text
        if text:
            return f"No session matches “{visible(text, keep_layout=False)}”."
        return "This store has no sessions."

    def _on_failed(self, error: Exception) -> None:
        self._host.count_label.setText(f"{plural(self.model.rowCount(), 'session')} (loading failed)")
        self._host.show_error(error)

    def _on_search_progress(self, found: int) -> None:
        self._host.count_label.setText(f"Searching… {plural(found, 'session')} found")

    def _on_search_finished(self, found: int) -> None:
        text = redact_url(self.model.search_text)
        self._host.count_label.setText(f"{plural(found, 'session')} matching {text!r}")
        if not found:
            self.said_empty = True
            self._host.conversation.clear(self.empty_text())

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self.model.removing:
            # The shown session's row left the list (deleted elsewhere): keep showing
            # it, and let the pane find out and say so.
            self._host.conversation.live.catch_up()
            return
        info = self.model.session_at(current.row()) if current.isValid() else None
        if info is None:
            return
        hit = self.model.hit_message(info.id)
        if hit is not None:  # found through the search index: open it at the hit
            self._host.show_session_at_hit(info.id, hit, self.model.search_text)
        else:
            self._host.show_session(info.id)

    def _menu(self, pos: QPoint) -> None:
        index = self.view.indexAt(pos)
        info = self.model.session_at(index.row()) if index.isValid() else None
        if info is None:
            return
        menu = self.build_menu(info.id)
        menu.exec(self.view.viewport().mapToGlobal(pos))
        menu.deleteLater()
