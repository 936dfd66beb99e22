"""Stores chosen as files: the file and folder dialogs, and files dropped on the window.

Each hands back a path for :meth:`fluxgui.qt.window.store_controller.StoreController.open_target`. The modal
helpers run a nested Qt event loop (the qasync loop keeps running inside it): call them
from Qt slots, not from inside a coroutine.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QEvent, QMimeData, QObject, Signal
from PySide6.QtWidgets import QDialog, QFileDialog, QWidget

from ..screen_fit import fit_to_screen

SQLITE_FILTER = "SQLite databases (*.db *.sqlite *.sqlite3 *.db3)"
ALL_FILTER = "All files (*)"


def _run(dialog: QFileDialog) -> str | None:
    """Run a file dialog; the first path chosen, or ``None`` when cancelled."""
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        chosen = dialog.selectedFiles()
        return chosen[0] if chosen else None
    finally:
        dialog.deleteLater()


def make_file_dialog(parent: QWidget | None = None, directory: str = "") -> QFileDialog:
    """The (not yet shown) dialog :func:`open_file_dialog` runs."""
    dialog = QFileDialog(parent, "Open session store", directory)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    dialog.setNameFilters([SQLITE_FILTER, ALL_FILTER])
    dialog.selectNameFilter(SQLITE_FILTER)
    return fit_to_screen(dialog)


def open_file_dialog(parent: QWidget | None = None, directory: str = "") -> str | None:
    """Ask for a SQLite session store file; its path, or ``None`` when cancelled.

    JSON session folders (one JSON file per session, HelloAgent's ``SessionStore``) are
    opened with :func:`open_folder_dialog` (File › Open Folder…) or by dropping the folder
    on the window.
    """
    return _run(make_file_dialog(parent, directory))


def make_folder_dialog(parent: QWidget | None = None, directory: str = "") -> QFileDialog:
    """The (not yet shown) dialog :func:`open_folder_dialog` runs."""
    dialog = QFileDialog(parent, "Open JSON session folder", directory)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    return fit_to_screen(dialog)


def open_folder_dialog(parent: QWidget | None = None, directory: str = "") -> str | None:
    """Ask for a folder of JSON session files; its path, or ``None`` when cancelled."""
    return _run(make_folder_dialog(parent, directory))


# --------------------------------------------------------------------------- drag & drop


def local_paths_from_mime(mime: QMimeData) -> list[str]:
    """The local file and folder paths of a drag & drop, in order, without duplicates.

    Remote URLs (``http:``, ``ftp:``, ``file://otherhost/…`` outside Windows) are ignored:
    a drop never makes anything be fetched.
    """
    paths: list[str] = []
    if mime is None or not mime.hasUrls():
        return paths
    for url in mime.urls():
        if not url.isLocalFile():
            continue
        if url.host() not in ("", "localhost") and sys.platform != "win32":
            continue
        path = url.toLocalFile()
        if path and path not in paths:
            paths.append(path)
    return paths


class FileDropFilter(QObject):
    """Accepts drops of local files on the widgets it watches; emits their paths.

    ``watch(window)`` covers the window and every descendant that takes drops itself
    (a text view swallows drops it cannot paste, so it must be watched too).
    """

    filesDropped = Signal(list)

    def watch(self, widget: QWidget) -> None:
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)
        for child in widget.findChildren(QWidget):
            if child.acceptDrops():
                child.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop):
            paths = local_paths_from_mime(event.mimeData())  # type: ignore[attr-defined]
            if not paths:
                return False
            event.acceptProposedAction()  # type: ignore[attr-defined]
            if kind == QEvent.Type.Drop:
                self.filesDropped.emit(paths)
            return True
        return False
