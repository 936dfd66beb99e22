"""The main window: sessions on the left, the selected conversation on the right.

* :mod:`.main` — :class:`MainWindow`, the shell: layout, bars, status bar, wiring (each
  controller below is given the parts it uses, not the window), the public methods.
* :mod:`.store_controller` — opening, reopening for editing, the encryption key, recent
  stores (their passwords off the UI thread), the key and skipped-files notices.
* :mod:`.edit_controller` — edit commands (clear, delete, pop, edit, insert, fork), the
  edit actions' state, what is shown after an edit, its undo or redo.
* :mod:`.transfer_controller` — export, import and copy with progress.
* :mod:`.compare_opening` — what View › Compare Sessions compares; a fork's origin.
* :mod:`.chat_dock` — the chat panel's dock.
* :mod:`.session_list`, :mod:`.status` — the session table and the status bar.
* :mod:`.actions` — menus and keyboard shortcuts.
"""

from ..errors import describe_error
from .chat_dock import CHAT_VISIBLE
from .main import MainWindow
from .store_controller import KEY_NOTICE, OpenedStore, skipped_files_text

__all__ = [
    "CHAT_VISIBLE",
    "KEY_NOTICE",
    "MainWindow",
    "OpenedStore",
    "describe_error",
    "skipped_files_text",
]
