"""Storage adapters: the store formats, behind the opening registry.

Callers outside the adapters open stores through :mod:`fluxgui.adapters.registry`
(:func:`open_store`) and talk to them through the ports (:mod:`fluxgui.core.ports`).

Inside: :mod:`.base` (the format-neutral :class:`~.base.Store` every format builds on),
:mod:`.refusals` (what a store answers for a capability it lacks), :mod:`.session` (the
flux ``Session`` adapter), :mod:`.encryption` (``EncryptedSession`` envelopes), and one
package per kind of storage: :mod:`.sql` (flux and Agents SDK tables on SQLite or a
SQLAlchemy URL), :mod:`.redis` (``RedisSession``), :mod:`.jsonfolder` (HelloAgent JSON
session files). The names below are re-exported lazily, so importing this package stays
cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["open_store", "parse_target"]


def __getattr__(name: str) -> Any:
    if name in ("open_store", "parse_target", "OPTIONS", "DEFAULT_TTL", "DEFAULT_PREFIX"):
        from . import registry

        return getattr(registry, name)
    raise AttributeError(f"module 'fluxgui.adapters' has no attribute {name!r}")
