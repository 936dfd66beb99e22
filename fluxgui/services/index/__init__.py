"""The local search index of a store (SQLite FTS5, trigram tokenizer) and the searches
that use it, the server's trigram index or a scan. Qt-free; the store is read only
through the :class:`~fluxgui.core.roles.Store` roles.

* :mod:`.indexfile` — the file in fluxgui's cache folder, one per store;
* :mod:`.update` — building it (resumable) and keeping it up to date;
* :mod:`.query` — :func:`search` giving :class:`~fluxgui.core.hits.Hit` values and the
  path taken.
"""

from .indexfile import IndexFile, index_path
from .query import (
    MIN_INDEXED, SearchResult, found_session_ids, full_scan, index_ready, indexable, scan, search,
)
from .update import UpdateReport, has_index, note_changed, update_index

__all__ = [
    "MIN_INDEXED", "IndexFile", "SearchResult", "UpdateReport", "found_session_ids", "full_scan",
    "has_index", "index_path", "index_ready", "indexable", "note_changed", "scan", "search", "update_index",
]
