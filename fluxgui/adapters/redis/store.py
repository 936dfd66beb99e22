"""The Redis store: a :class:`~fluxgui.adapters.handle.OpenStore` holding the reader
(:mod:`.reading`), the writer and forks (:mod:`.writing`), which share the sessions under
one key prefix and the store's ``EncryptedSession`` keys (:mod:`.keyspace`)."""

from __future__ import annotations

from fluxgui.core.roles import Traits

from ..handle import OpenStore
from .keyspace import Keyspace
from .reading import RedisReader
from .writing import RedisForks, RedisWriter

#: Agents SDK items, which may be ``EncryptedSession`` envelopes; a session can be a
#: message list without its hash. Clear keeps the session's hash; delete removes its keys
#: as ``clear_session()`` does; a fork is a new hash and list (all undoable); single
#: items are not edited in place.
TRAITS = Traits(items=True, rowless_sessions=True, encryption=True, why_not={
    "editor": ": single items of Redis sessions cannot be edited in place "
    "(clear, delete and fork whole sessions instead)",
})


def redis_store(space: Keyspace) -> OpenStore:
    """The store over the sessions under one key prefix (checked by :mod:`.detect`)."""
    return OpenStore(
        format="agents",
        target=space.target,
        backend=space.backend,
        traits=TRAITS,
        reader=RedisReader(space),
        writer=RedisWriter(space),
        forks=RedisForks(space),
        keys=space.keys,
        # one server may hold several stores
        key_parts={"prefix": space.prefix},
    )
