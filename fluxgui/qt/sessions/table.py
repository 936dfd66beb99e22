"""The session list's table: rows of sessions as Qt shows them, and the row changes a
live list makes (inserting runs, re-sorting, merging a refresh) done so that views keep
their selection and scroll position.

What goes where is decided elsewhere (:mod:`fluxgui.services.session_list`);
:class:`SessionTable` only carries it out, with the right model signals.
"""

from __future__ import annotations

import time

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from fluxgui.core.display import esc, short_time, time_zone
from fluxgui.core.model import SessionInfo
from fluxgui.core.text import plural
from fluxgui.core.ports import SessionOrder
from fluxgui.services.session_list import (
    MergePlan,
    SortKey,
    insertion_runs,
    runs,
    search_key,
)

from ..shown_ids import one_line as shown_id

_Index = QModelIndex | QPersistentModelIndex

#: item data role of the :class:`~fluxgui.core.model.SessionInfo` itself
SESSION_ROLE = Qt.ItemDataRole.UserRole + 1
# The roles data() answers, and its constant answers, as plain values made once (an enum
# operation per call would cost more than the rest of the call).
_DISPLAY, _DECORATION, _TOOLTIP, _ALIGN, _SESSION = (
    int(Qt.ItemDataRole.DisplayRole), int(Qt.ItemDataRole.DecorationRole),
    int(Qt.ItemDataRole.ToolTipRole), int(Qt.ItemDataRole.TextAlignmentRole), int(SESSION_ROLE),
)
_ANSWERED = frozenset((_DISPLAY, _DECORATION, _TOOLTIP, _ALIGN, _SESSION))
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
_NO_FLAGS = Qt.ItemFlag.NoItemFlags


@dataclass(frozen=True)
class RowMark:
    """What another part of the window adds to a session's row: an icon before the id,
    text after it (tags) and a line for the tooltip."""

    icon: Any = None
    suffix: str = ""
    tip: str = ""


class SessionTable(QAbstractTableModel):
    """Sessions as table rows: id, message count, last activity (the base of
    :class:`~fluxgui.qt.sessions.model.SessionListModel`)."""

    COLUMNS = ("Session", "Messages", "Last active")
    ID, COUNT, UPDATED = range(3)
    #: the store order behind each sortable column
    COLUMN_ORDERS: dict[int, SessionOrder] = {ID: "id", COUNT: "messages", UPDATED: "activity"}

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[SessionInfo] = []
        self._known: set[str] = set()  # the ids shown
        self._found_order: dict[str, int] = {}  # search mode: id → position found in
        self._keys: list[Any] = []  # search mode: the rows' sort keys, ascending
        self._sort_column = -1  # -1: the store's natural order (most recently active first)
        self._sort_order = Qt.SortOrder.DescendingOrder
        self._removing = False
        #: extra marks for a row (the review state's icon, its tags and a tooltip line),
        #: provided by the review workflow (``qt.reviews``); ``None``: none
        self.row_marks: Callable[[SessionInfo], RowMark | None] | None = None
        #: session id → (branch shown, its message count, how many branches): a session
        #: with branches whose branches were listed (the branch bar tells)
        self._branches: dict[str, tuple[str, int, int]] = {}
        self._times: dict[tuple[str | None, str, int, int], str] = {}  # (ISO time, zone, local offsets) → text
        #: how an id is shown (View › Redact: redacted, ``qt.shown_ids``); ``None``: as it
        #: is. Only the text shown: the rows, sorting and selection keep the real id.
        self.id_text: Callable[[str], str] | None = None

    def display_id(self, session_id: str) -> str:
        """``session_id`` as the list shows it (and Copy Session Id copies it)."""
        return self.id_text(session_id) if self.id_text is not None else session_id

    # -- branches ----------------------------------------------------------------------

    def set_branch_note(self, session_id: str, branch: str, count: int, branches: int) -> None:
        """Show that ``session_id`` has ``branches`` branches and that ``branch`` (with
        ``count`` messages) is the one shown: its row says "⑂ N" and counts that branch."""
        note = (branch, count, branches)
        if self._branches.get(session_id) == note:
            return
        if branches > 1 or branch != "main":
            self._branches[session_id] = note
        else:
            self._branches.pop(session_id, None)
        row = self.row_of(session_id)
        if row is not None:
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))

    def branch_note(self, session_id: str) -> tuple[str, int, int] | None:
        return self._branches.get(session_id)

    # -- order -------------------------------------------------------------------------

    @property
    def list_order(self) -> tuple[SessionOrder, bool]:
        """The ``(order, descending)`` the listing asks the store for."""
        if self._sort_column < 0:
            return "activity", True
        return (
            self.COLUMN_ORDERS[self._sort_column],
            self._sort_order == Qt.SortOrder.DescendingOrder,
        )

    def sortColumn(self) -> int:  # noqa: N802 - Qt's naming (as QSortFilterProxyModel)
        """The column set by ``sort``; -1 while the store's natural order is shown."""
        return self._sort_column

    def sortOrder(self) -> Qt.SortOrder:  # noqa: N802
        return self._sort_order

    def _search_key(self) -> tuple[SortKey, bool]:
        """Sort key and direction of the rows in search mode."""
        if self._sort_column < 0:
            return search_key(None, False, self._found_order)
        order, descending = self.list_order
        return search_key(order, descending, self._found_order)

    @property
    def removing(self) -> bool:
        """A refresh is removing rows of sessions that are gone (true while views react to
        ``rowsAboutToBeRemoved``/``rowsRemoved``: a selection model moving its current row
        off a removed row is not the user's choice)."""
        return self._removing

    def session_at(self, row: int) -> SessionInfo | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, session_id: str) -> int | None:
        """The row of a loaded session, or ``None`` (it may be on a page not fetched yet)."""
        for row, info in enumerate(self._rows):
            if info.id == session_id:
                return row
        return None

    # -- Qt model API ----------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Called for every role of every visible cell at each paint (Qt passes roles as
        # ints): the roles answered are looked up first, with plain ints, and nothing is
        # worked out for a role that is not asked for.
        if role not in _ANSWERED or not index.isValid():
            return None
        row = index.row()
        if not 0 <= row < len(self._rows):
            return None
        col = index.column()
        if role == _ALIGN:
            return _RIGHT if col == self.COUNT else _LEFT
        info = self._rows[row]
        if role == _SESSION:
            return info
        mark = self.row_marks(info) if self.row_marks is not None else None
        if role == _DECORATION:
            return mark.icon if col == self.ID and mark is not None else None
        if role == _DISPLAY:
            return self._display(info, col, mark)
        note = self._branches.get(info.id)
        # the tooltip
        lines = [shown_id(self.display_id(info.id)), plural(info.messages, "message") if info.count_exact
                 else f"{info.count_text} messages"]
        if info.created_at:
            lines.append(f"started {short_time(info.created_at)}")
        if info.updated_at:
            lines.append(f"last active {short_time(info.updated_at)}")
        if note is not None:
            lines.append(
                f"{plural(note[2], 'branch', 'branches')}; showing branch {note[0]} "
                f"({plural(note[1], 'message')})"
            )
        elif info.branches > 1:
            lines.append(f"{plural(info.branches, 'branch', 'branches')} (counted: main)")
        if mark is not None and mark.tip:
            lines.append(mark.tip)
        # Qt guesses whether a tooltip is rich text; make it HTML we wrote, with the
        # id escaped, so an id that looks like markup stays text.
        return "<p style='white-space:pre-wrap'>" + esc("\n".join(lines)) + "</p>"

    def cell(self, row: int, col: int) -> tuple[str | None, bool]:
        """What the cell at ``row``, ``col`` shows (its ``DisplayRole``) and whether it
        shows an icon (a review mark on the id), for the cell painter: no role dispatch,
        no model index, and the row's mark asked for once, in the id column only."""
        if not 0 <= row < len(self._rows):
            return None, False
        info = self._rows[row]
        mark = self.row_marks(info) if col == self.ID and self.row_marks is not None else None
        return self._display(info, col, mark), mark is not None and mark.icon is not None

    def _display(self, info: SessionInfo, col: int, mark: RowMark | None) -> str | None:
        if col == self.ID:
            # one line, hidden characters as markers (a bidi override must not reorder
            # the id, a newline must not break the row); "" is a visible placeholder,
            # not a blank row
            shown = shown_id(self.display_id(info.id))
            note = self._branches.get(info.id)
            branches = note[2] if note is not None else info.branches
            if branches > 1:
                shown = f"{shown}  ⑂{branches}"
            # the review's tags (and who holds its claim), when reviews are on
            return f"{shown}   {mark.suffix}" if mark is not None and mark.suffix else shown
        if col == self.COUNT:
            note = self._branches.get(info.id)
            return str(note[1]) if note is not None else info.count_text
        if col == self.UPDATED:
            return self._time_text(info.updated_at or info.created_at)
        return None

    def _time_text(self, iso: str | None) -> str:
        """The Last active text: parsing and formatting a time costs more than painting
        it, and each visible row is painted again at every scroll step."""
        # the local zone itself too: a "local" text made before the zone changed (TZ) is stale
        key = (iso, time_zone(), time.timezone, time.altzone)
        text = self._times.get(key)
        if text is None:
            if len(self._times) >= 4096:
                self._times.clear()
            text = self._times[key] = short_time(iso, seconds=False, zone=False)
        return text

    def marks_changed(self, rows: list[int] | None = None) -> None:
        """The row marks of ``rows`` (all when ``None``) changed: repaint their id cells."""
        if not self._rows:
            return
        if rows is None:
            self.dataChanged.emit(self.index(0, self.ID), self.index(len(self._rows) - 1, self.ID))
            return
        for first, last in runs(sorted(rows)):
            self.dataChanged.emit(self.index(first, self.ID), self.index(last, self.ID))

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section == self.COUNT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.InitialSortOrderRole:
            # a first click on a column: ids A→Z, the most messages / most recent first
            if section == self.ID:
                return Qt.SortOrder.AscendingOrder
            return Qt.SortOrder.DescendingOrder
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else _NO_FLAGS


    # -- row changes ---------------------------------------------------------------------

    def _append_rows(self, fresh: list[SessionInfo]) -> None:
        """Add rows at the end (a page of the listing)."""
        if not fresh:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
        self._rows.extend(fresh)
        self._known.update(info.id for info in fresh)
        self.endInsertRows()

    def _insert_sorted(self, fresh: list[SessionInfo], key_of: SortKey, descending: bool) -> None:
        """Insert rows where they sort among rows already in ``key_of`` order (kept in
        ``_keys``), in as few insertions as their places allow."""
        keyed = sorted(((key_of(info), info) for info in fresh), key=lambda kv: kv[0])
        if descending:
            keyed.reverse()
        keys = self._keys
        # Places computed before any insertion: inserted from the last one up.
        for pos, run in reversed(insertion_runs(keys, len(self._rows), keyed, descending)):
            self.beginInsertRows(QModelIndex(), pos, pos + len(run) - 1)
            self._rows[pos:pos] = run
            self.endInsertRows()
        keys.extend(key for key, _ in keyed)
        keys.sort()  # two sorted runs: linear

    def _insert_found(self, fresh: list[SessionInfo]) -> None:
        """Rows that come in an order of their own (search results, a review filter's
        pages): that order remembered, each row inserted where the sort puts it."""
        for info in fresh:
            self._known.add(info.id)
            self._found_order[info.id] = len(self._found_order)
        self._insert_sorted(fresh, *self._search_key())

    def _rearrange(self) -> None:
        """Put rows inserted by :meth:`_insert_found` in the current sort's order."""
        if self._rows:
            self._sort_rows(*self._search_key())

    def _rekey(self, key_of: SortKey) -> None:
        """Take the rows' keys again (after rows changed or left)."""
        self._keys = sorted(key_of(info) for info in self._rows)

    def _sort_rows(self, key_of: SortKey, descending: bool) -> None:
        """Put the rows in ``key_of`` order (a layout change, so that selections and
        persistent indexes follow their rows) and keep their keys."""
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        ids = [self._rows[p.row()].id if 0 <= p.row() < len(self._rows) else None for p in persistent]
        self._rows.sort(key=key_of, reverse=descending)
        where = {info.id: row for row, info in enumerate(self._rows)}
        moved = [
            self.index(where[sid], p.column()) if sid is not None else QModelIndex()
            for p, sid in zip(persistent, ids)
        ]
        self._rekey(key_of)
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    def _forget(self, session_id: str) -> None:
        """A row left: forget that it was shown (and where a search found it)."""
        self._known.discard(session_id)
        self._branches.pop(session_id, None)
        self._found_order.pop(session_id, None)

    def _apply_merge(self, plan: MergePlan) -> tuple[int, int, int]:
        """Carry out a refresh's :class:`~fluxgui.services.session_list.MergePlan`:
        update rows in place, remove the gone ones, move and insert the placed ones.
        Returns ``(inserted, removed, updated)`` row counts."""
        rows = self._rows

        # 1. Rows whose data changed, in place.
        for row, new in plan.updated:
            rows[row] = new
        last_column = len(self.COLUMNS) - 1
        for first, last in runs([row for row, _new in plan.updated]):
            self.dataChanged.emit(self.index(first, 0), self.index(last, last_column))

        # 2. Remove the vanished and the dropped rows, bottom up.
        removed_rows = [row for row, info in enumerate(rows) if info.id in plan.gone]
        if removed_rows:
            self._removing = True
            try:
                for first, last in reversed(runs(removed_rows)):
                    self.beginRemoveRows(QModelIndex(), first, last)
                    for info in rows[first : last + 1]:
                        self._forget(info.id)
                    del rows[first : last + 1]
                    self.endRemoveRows()
            finally:
                self._removing = False

        # 3. Move and insert: each placed row goes right after the row before it in the
        # wanted order (the rows that stay put already are in order).
        ids = [info.id for info in rows]
        inserted = 0
        target = plan.target
        for at, info in enumerate(target):
            sid = info.id
            if sid not in plan.placing:
                continue
            dest = ids.index(target[at - 1].id) + 1 if at else 0
            if sid in self._known:
                src = ids.index(sid)
                if src == dest:
                    continue
                self.beginMoveRows(QModelIndex(), src, src, QModelIndex(), dest)
                del rows[src], ids[src]
                to = dest - 1 if dest > src else dest
                rows.insert(to, info)
                ids.insert(to, sid)
                self.endMoveRows()
            else:
                self.beginInsertRows(QModelIndex(), dest, dest)
                rows.insert(dest, info)
                ids.insert(dest, sid)
                self._known.add(sid)
                self.endInsertRows()
                inserted += 1
        return inserted, len(removed_rows), len(plan.updated)
