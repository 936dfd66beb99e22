"""Moved: :mod:`fluxgui.qt.dialogs.transfer` and :mod:`fluxgui.qt.dialogs.progress`.

This name stays importable while the other modules switch to the new ones.
"""

from .dialogs.progress import TransferProgress  # noqa: F401 - re-exported
from .dialogs.transfer import (  # noqa: F401 - re-exported
    FILE_FILTERS,
    FORMAT_LABELS,
    IMPORT_FILTER,
    SCOPES,
    CopyDialog,
    ExportDialog,
)
