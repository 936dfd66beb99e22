"""Moved: :mod:`fluxgui.qt.dialogs.encryption_key`.

This name stays importable while the other modules switch to the new one.
"""

from .dialogs.encryption_key import MAX_TTL, KeyDialog  # noqa: F401 - re-exported
