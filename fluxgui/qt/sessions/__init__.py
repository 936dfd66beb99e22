"""The session list: a store's sessions, paged, sorted, searched, merged live.

* :mod:`.model` — :class:`SessionListModel` (listing, sorting, search, live refresh);
* :mod:`.table` — :class:`SessionTable`, its rows as Qt shows them and the row changes;
* :mod:`.cells` — :class:`~.cells.SessionCells`, the painter of the list's cells;
* :mod:`.search_box` — :class:`SearchBox`, the field that asks for a search once typing
  pauses.

The Qt-free rules live in :mod:`fluxgui.services.search` (batched search) and
:mod:`fluxgui.services.session_list` (sort keys, refresh reads and merge plans).
"""

from __future__ import annotations

from fluxgui.services.search import SEARCH_FLUSH_SECONDS, SEARCH_SHOW_MAX, SEARCH_SHOW_SECONDS
from fluxgui.services.session_list import ID_BATCH, REFRESH_SWEEP

from .model import SessionListModel
from .search_box import DEBOUNCE_MS, PLACEHOLDER, SearchBox
from .table import SESSION_ROLE, SessionTable

__all__ = [
    "DEBOUNCE_MS",
    "ID_BATCH",
    "PLACEHOLDER",
    "REFRESH_SWEEP",
    "SEARCH_FLUSH_SECONDS",
    "SEARCH_SHOW_MAX",
    "SEARCH_SHOW_SECONDS",
    "SESSION_ROLE",
    "SearchBox",
    "SessionListModel",
    "SessionTable",
]
