"""A folder of JSON session files, as HelloAgent's ``SessionStore`` keeps them.

Each ``<name>.json`` holds one session: ``{session_id, created_at, saved_at, agent_config,
history: [{role, content, timestamp, metadata}], tool_schema_hash, read_cache, metadata}``
(FORMATS.md). The library makes a new ``session_id`` on every save, so the file name is
the stable session id.

One module per responsibility: :mod:`.names` (session ids ↔ file names), :mod:`.entries`
(history entries and documents as the library writes them), :mod:`.index` (the small
index of the folder's files, read in worker threads), :mod:`.folder` (opening the folder
and atomic file writes), :mod:`.reader`, :mod:`.writer` (its parts) and :mod:`.store` (the
store holding them).
"""

from __future__ import annotations

from .names import MAX_STEM_BYTES, file_stem, session_id_of

__all__ = ["MAX_STEM_BYTES", "file_stem", "session_id_of"]
