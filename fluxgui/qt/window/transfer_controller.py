"""Export, import and copy from the window, in the background with a progress dialog.

The work is :mod:`fluxgui.services.transfer`'s; this controller asks what to transfer
(the dialogs of :mod:`fluxgui.qt.dialogs.transfer`), runs it through the bridge under the
key ``"transfer"`` (one at a time), shows its progress and says in the status bar what it
did. Cancel stops it: an export leaves no file, a copy stops after the session it is
writing.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QTimer
from PySide6.QtWidgets import QFileDialog

from fluxgui.core.errors import FluxguiError, UnreadableItems
from fluxgui.core.redact import redact_url
from fluxgui.core.text import plural
from fluxgui.services.export import export_sessions
from fluxgui.services.transfer import (
    TransferResult,
    copy_destination,
    copy_sessions,
    import_files,
)

from ..dialogs.confirm import confirm_drop_unreadable
from ..dialogs.progress import TransferProgress
from ..dialogs.transfer import IMPORT_FILTER, CopyDialog, ExportDialog, export_folder

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMainWindow

    from fluxgui.services.redaction import Redactor

    from ..bridge import AsyncBridge
    from ..sessions import SessionListModel
    from ..shell import Edits, Reviewing, Stores

#: reports ``(done, total)`` as a transfer advances
Progress = Callable[[int, int], None]
#: starts a transfer given its progress callback
Start = Callable[[Progress], Coroutine[Any, Any, TransferResult]]
#: the status bar's sentence for a finished transfer
Describe = Callable[[TransferResult], str]
#: a transfer ("copy", "import") and how to run it again without unreadable items
Again = tuple[str, Callable[[], None]]

KEY = "transfer"
#: the settings key of the folder the last export went to
LAST_EXPORT_DIR = "export/lastDir"


def _counted(result: TransferResult) -> str:
    return f"{plural(result.sessions, 'session')} ({plural(result.messages, 'message')})"


def describe_import(result: TransferResult) -> str:
    """``Imported 2 sessions (9 messages)``, naming sessions renamed on the way in."""
    text = f"Imported {_counted(result)}"
    renamed = [f"{a} → {b}" for a, b in result.written if a != b]
    if renamed:
        text += "; already there, so renamed: " + ", ".join(renamed[:5])
        if len(renamed) > 5:
            text += f" and {len(renamed) - 5} more"
    return text


class TransferController:
    """Exports, imports and copies sessions for a :class:`~.main.MainWindow`.

    It is given what it uses: the window (the dialogs' parent, its status bar), the
    bridge, the settings (the last export's folder), the open store (``stores``), the
    session list, the edits (the store to import into), the reviews (``reviews()``: an
    export's review columns), the shown and selected sessions (callables), where errors
    are shown and what to tell when a transfer finished (``finished(result)``)."""

    def __init__(
        self,
        window: QMainWindow,
        bridge: AsyncBridge,
        settings: QSettings,
        stores: Stores,
        sessions: SessionListModel,
        edits: Edits,
        *,
        reviews: Callable[[], Reviewing],
        shown: Callable[[], str | None],
        selected: Callable[[], list[str]],
        show_error: Callable[[BaseException], None],
        finished: Callable[[TransferResult | None], None],
    ) -> None:
        self._window = window
        self._bridge = bridge
        self._settings = settings
        self._stores = stores
        self._sessions = sessions
        self._edits = edits
        self._reviews = reviews
        self._shown = shown
        self._selected = selected
        self._show_error = show_error
        self._finished = finished
        #: the progress dialog of the running transfer, and how to describe its result
        self._running: tuple[TransferProgress, Describe] | None = None

    @property
    def progress(self) -> TransferProgress | None:
        """The running transfer's progress dialog (``None``: none is running)."""
        return self._running[0] if self._running is not None else None

    # -- export ----------------------------------------------------------------------

    def last_export_dir(self) -> str | None:
        """The folder the last export went to (the settings; ``None``: none yet)."""
        value = self._settings.value(LAST_EXPORT_DIR)
        return str(value) if value else None

    def remember_export_dir(self, folder: Path) -> None:
        settings = self._settings
        settings.setValue(LAST_EXPORT_DIR, str(folder.absolute()))
        settings.sync()

    def export_dialog(self) -> None:
        """File › Export: the open session, the selected ones or the whole store."""
        dialog = self.make_export_dialog()
        if dialog is None:
            return
        try:
            if dialog.exec():
                self.remember_export_dir(dialog.path().parent)
                self.run_export(
                    dialog.path(), dialog.format(), dialog.session_ids(), metadata=dialog.metadata(),
                    reviews=dialog.reviews(),
                )
        finally:
            dialog.deleteLater()

    def make_export_dialog(self) -> ExportDialog | None:
        """The export dialog as File › Export opens it (not shown yet): the count of the
        store's sessions exact once every page is listed, the file in the last export's
        folder (else Documents)."""
        if self._stores.store is None:
            return None
        sessions = self._sessions
        # (a review filter's rows are not the store's either)
        listing = not sessions.searching and not sessions.search_text and sessions.review_filter is None
        dialog = ExportDialog(
            self._window,
            session_id=self._shown(),
            selected=self._selected(),
            store_sessions=sessions.rowCount() if listing else None,
            # every page listed: the count is the store's, not a bound
            store_exact=listing and not sessions.canFetchMore(QModelIndex()),
            default_dir=str(export_folder(self.last_export_dir())),
        )
        dialog.reviews_check.setVisible(self._reviews().on)
        return dialog

    def run_export(
        self, path: object, fmt: str, session_ids: list[str] | None, *, metadata: bool = True,
        reviews: bool = False, redactor: Redactor | None = None,
    ) -> None:
        """Export in the background with a progress dialog (Cancel leaves no file);
        ``reviews``: with each session's review results; ``redactor``: redacted (what it
        left out said in the result line)."""
        store = self._stores.store
        if store is None:
            return
        annotate = self._reviews().annotator() if reviews else None
        target = Path(str(path))
        title = f"Sessions from {self._stores.label}"
        self._run(
            "Exporting…",
            lambda progress: export_sessions(
                store, target, fmt, session_ids=session_ids, metadata=metadata,
                progress=progress, title=title, annotate=annotate,
                transform=redactor.page if redactor is not None else None,
                unchanged=redactor.unchanged_rows if redactor is not None else None,
                transform_id=redactor.session_id if redactor is not None else None,
            ),
            lambda r: f"Exported {_counted(r)}{' redacted' if redactor is not None else ''} to {target}"
            + "".join(f"; {n}" for n in [*r.notes, *(redactor.notes() if redactor is not None else [])]),
        )

    # -- import ----------------------------------------------------------------------

    def import_dialog(self) -> None:
        """File › Import: exports and session files become new sessions of this store."""
        if self._edits.editable_store() is None:
            return
        files, _filter = QFileDialog.getOpenFileNames(self._window, "Import sessions", "", IMPORT_FILTER)
        if files:
            self.run_import(files)

    def run_import(self, files: list[str], *, drop_unreadable: bool = False) -> None:
        """Import ``files`` into the open store (a taken id gets ``-2``…); encrypted items
        still sealed in a session imported under a new id are refused, or left out when
        the user agrees (``drop_unreadable``)."""
        store = self._edits.editable_store()
        if store is None:
            return
        paths = [Path(f) for f in files]
        self._run(
            "Importing…",
            lambda progress: import_files(
                store, paths, rename=True, progress=progress, drop_unreadable=drop_unreadable
            ),
            describe_import,
            again=None if drop_unreadable else (
                "import", lambda: self.run_import(files, drop_unreadable=True)
            ),
        )

    # -- copy ------------------------------------------------------------------------

    def copy_dialog(self) -> None:
        """File › Copy Sessions To: the selected sessions into another store."""
        store = self._stores.store
        ids = self._selected()
        if store is None or not ids:
            return
        dialog = CopyDialog(self._window, count=len(ids), source_format=store.format)
        try:
            if dialog.exec():
                self.run_copy(dialog.target(), ids, new_format=dialog.new_format(),
                              rename=dialog.rename())
        finally:
            dialog.deleteLater()

    def run_copy(
        self, target: str, session_ids: list[str] | None, *, new_format: str | None = None,
        rename: bool = True, drop_unreadable: bool = False,
    ) -> None:
        """Copy sessions into ``target``; encrypted items no key opens in a session copied
        under a new id are refused, or left out when the user agrees (``drop_unreadable``)."""
        store = self._stores.store
        if store is None:
            return
        opened = self._stores.opened
        source_target = opened.target if opened is not None else None
        source_prefix = opened.options.key_prefix if opened is not None else None

        async def copy(progress: Progress) -> TransferResult:
            # A new file or folder appears only once every session is in it; the store
            # being read is never a destination.
            async with copy_destination(
                target, store, fmt=new_format, source_target=source_target,
                source_prefix=source_prefix,
            ) as dest:
                return await copy_sessions(
                    store, dest, session_ids, rename=rename, progress=progress,
                    drop_unreadable=drop_unreadable,
                )

        self._run(
            "Copying…", copy, lambda r: f"Copied {_counted(r)} to {redact_url(target)}",
            again=None if drop_unreadable else ("copy", lambda: self.run_copy(
                target, session_ids, new_format=new_format, rename=rename,
                drop_unreadable=True,
            )),
        )

    # -- running -----------------------------------------------------------------------

    def _run(
        self, title: str, start: Start, describe: Describe, *, again: Again | None = None
    ) -> None:
        """Run a transfer; ``again``: what it is ("copy", "import") and how to run it
        without the encrypted items that do not open, offered when it is refused for
        them and some others open."""
        if self._bridge.running(KEY):
            self._show_error(FluxguiError("an export, import or copy is still running"))
            return
        progress = TransferProgress(self._window, title)
        self._running = (progress, describe)
        progress.canceled.connect(self.cancel)
        self._bridge.start(
            KEY,
            start(progress.update_progress),
            lambda result: self._done(result, None),
            lambda error: self._done(None, error, again),
        )

    def _offer_drop(self, error: UnreadableItems, again: Again) -> None:
        """Ask whether to copy or import without the encrypted items that do not open
        (the box names how many); no: the refusal shows."""
        verb, run = again
        if confirm_drop_unreadable(self._window, error, verb):
            run()
        else:
            self._show_error(error)

    def cancel(self) -> None:
        """Stop the running export, import or copy (an export leaves no file; a copy
        stops after the session it is writing)."""
        running, self._running = self._running, None
        if running is None:
            return
        self._bridge.cancel(KEY)
        running[0].deleteLater()
        self._window.statusBar().showMessage("Cancelled: nothing was left half-written.", 8000)

    def _done(
        self, result: TransferResult | None, error: Exception | None, again: Again | None = None
    ) -> None:
        running, self._running = self._running, None
        if running is not None:
            running[0].reset()
            running[0].deleteLater()
        if isinstance(error, UnreadableItems) and error.droppable and again is not None:
            # (asked once this transfer's callbacks are over, not inside them)
            QTimer.singleShot(0, lambda: self._offer_drop(error, again))
            return
        if error is not None:
            self._show_error(error)
            return
        if running is not None and result is not None:
            self._window.statusBar().showMessage(running[1](result), 15000)
        self._sessions.refresh()
        self._finished(result)
