"""A workspace of several stores (issue 36), Qt-free, shared by the window and the
command line; one module per job:

* :mod:`.workspace` — the open stores with their labels (:mod:`.labels`), which of them
  hold a session;
* :mod:`.file` — the workspace file (no secret in it), written atomically;
* :mod:`.listing` — every store's sessions in one lazy list, newest first;
* :mod:`.turns`, :mod:`.timeline` — one session's merged timeline across the stores:
  whole turns by time, copies folded, uncertain order marked, ``split_session``;
* :mod:`.consolidate` — the merged sessions written into one store, planned first
  (:mod:`.into`: a destination named by its target; :mod:`.undoable`: what a
  consolidation wrote as one reversible change, for the window's undo stack).
"""

from __future__ import annotations

from .file import Entry, load_workspace, save_workspace
from .workspace import Member, Workspace

__all__ = ["Entry", "Member", "Workspace", "load_workspace", "save_workspace"]
