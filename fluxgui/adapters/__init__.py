"""Storage adapters: the store formats, behind the opening registry.

Callers outside the adapters open stores through :mod:`fluxgui.adapters.registry`
(:func:`open_store`) and talk to them through their roles (:mod:`fluxgui.core.roles`).

Inside: :mod:`.handle` (:class:`~.handle.OpenStore`, what every format opens as: one part
per role), :mod:`.parts` (what the parts share: the back-end, the place), :mod:`.reading`
(the reading part formats build on), :mod:`.session` (the flux ``Session`` adapter),
:mod:`.encryption` (``EncryptedSession`` envelopes), and one package per kind of storage:
:mod:`.sql` (flux and Agents SDK tables on SQLite or a SQLAlchemy URL), :mod:`.redis`
(``RedisSession``), :mod:`.jsonfolder` (HelloAgent JSON session files),
:mod:`.conversations` (the OpenAI Conversations API). The names below are re-exported lazily, so importing this package stays
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
