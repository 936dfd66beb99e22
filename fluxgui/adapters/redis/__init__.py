"""Redis stores: the Agents SDK ``RedisSession`` layout on a Redis server.

One module per responsibility: :mod:`.url` (recognising ``redis://`` targets; no driver
imported), :mod:`.backend` (the connection and its errors), :mod:`.connect` (opening a
store under a key prefix), :mod:`.reading` (the key layout, listing, paging, search) and
:mod:`.writing` (appends, clears, imports: the :class:`~.writing.RedisStore` itself).

Nothing is imported here: the registry recognises a Redis URL without loading the
``redis`` driver.
"""
