"""Storage adapters: one module per store format, behind the opening registry.

Callers outside the adapters open stores through :mod:`fluxgui.adapters.registry`
(:func:`open_store`) and talk to them through the ports (:mod:`fluxgui.core.ports`). The
names below are re-exported lazily, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["open_store", "parse_target"]


def __getattr__(name: str) -> Any:
    if name in ("open_store", "parse_target", "OPTIONS", "DEFAULT_TTL", "DEFAULT_PREFIX"):
        from . import registry

        return getattr(registry, name)
    raise AttributeError(f"module 'fluxgui.adapters' has no attribute {name!r}")
