"""Redis stores: the Agents SDK ``RedisSession`` layout on a Redis server.

One module per responsibility: :mod:`.url` (recognising ``redis://`` targets; no driver
imported), :mod:`.backend` (the connection and its errors), :mod:`.connect` (opening a
store under a key prefix), :mod:`.detect` (what the prefix holds, checked on open),
:mod:`.store` (the :class:`~fluxgui.adapters.handle.OpenStore` and its parts, which share
the prefix's :class:`~.keyspace.Keyspace`), :mod:`.reading` (the reader: listing, paging,
search), :mod:`.writing` (the writer and forks: appends, clears, imports) and
:mod:`.sessions` (whole-session changes, undoable).

Nothing is imported here: the registry recognises a Redis URL without loading the
``redis`` driver.
"""
