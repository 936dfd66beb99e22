"""The window's workspace of several stores (issue 36): see :mod:`.controller`."""

from __future__ import annotations

from .controller import WorkspaceController
from .host import WorkspaceHost
from .install import install_workspace

__all__ = ["WorkspaceController", "WorkspaceHost", "install_workspace"]
