"""The conversation's list model: the loaded messages of one session, oldest first."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QByteArray, QModelIndex, QObject, QPersistentModelIndex, Qt

from fluxgui.core.display import LOCK, encryption_badge, kind_label
from fluxgui.core.model import Message

_Index = QModelIndex | QPersistentModelIndex

#: item data role of the :class:`~fluxgui.core.model.Message` itself
MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 1


class MessageListModel(QAbstractListModel):
    """The loaded messages of one session, oldest first: a thin list of Message objects.

    ``DisplayRole`` is the message text, ``MESSAGE_ROLE`` the :class:`Message` itself.
    """

    MessageRole = MESSAGE_ROLE

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._messages: list[Message] = []
        self._rows: dict[int, int] | None = None  # message id -> row, built on demand

    # -- Qt API --------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's default
        return 0 if parent.isValid() else len(self._messages)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.parent().isValid() or index.column() != 0:
            return None
        row = index.row()
        if not 0 <= row < len(self._messages):
            return None
        m = self._messages[row]
        if role == Qt.ItemDataRole.DisplayRole:
            return m.text
        if role == MESSAGE_ROLE:
            return m
        if role == Qt.ItemDataRole.AccessibleTextRole:
            badge = encryption_badge(m)
            state = f" ({badge[0].replace(LOCK, '').strip()})" if badge else ""
            return f"{m.role}, {kind_label(m.kind)}{state}: {m.text[:500]}"
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    def roleNames(self) -> dict[int, QByteArray]:
        names = dict(super().roleNames())
        names[MESSAGE_ROLE] = QByteArray(b"message")
        return names

    # -- our API -------------------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self._messages)

    def message(self, row: int) -> Message | None:
        return self._messages[row] if 0 <= row < len(self._messages) else None

    def row_of(self, message_id: int) -> int | None:
        if self._rows is None:
            self._rows = {m.id: r for r, m in enumerate(self._messages)}
        return self._rows.get(message_id)

    def set_messages(self, messages: list[Message]) -> None:
        self.beginResetModel()
        self._messages = list(messages)
        self._rows = None
        self.endResetModel()

    def prepend(self, messages: list[Message]) -> None:
        if not messages:
            return
        self.beginInsertRows(QModelIndex(), 0, len(messages) - 1)
        self._messages[:0] = messages
        self._rows = None
        self.endInsertRows()

    def append(self, messages: list[Message]) -> None:
        if not messages:
            return
        start = len(self._messages)
        self.beginInsertRows(QModelIndex(), start, start + len(messages) - 1)
        self._messages.extend(messages)
        self._rows = None
        self.endInsertRows()

    def clear(self) -> None:
        self.set_messages([])
