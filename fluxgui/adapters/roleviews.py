"""The roles a store plays (:mod:`fluxgui.core.roles`), read off its declared capabilities.

While the formats are being recomposed from parts, a store offers itself as each role its
:class:`~fluxgui.core.ports.Capabilities` declare, and ``None`` for the others.
"""

from __future__ import annotations

from typing import Any

from fluxgui.core.ports import Capabilities
from fluxgui.core.roles import TablePairs, Traits


class RoleViews:
    """The role attributes of a store (see the module text)."""

    other_tables: list[tuple[str, str]]
    table_sessions: dict[tuple[str, str], int]

    @property
    def capabilities(self) -> Capabilities:
        raise NotImplementedError

    # -- the roles it plays (see fluxgui.core.roles) -----------------------------------

    #: how this format differs where callers must know it
    TRAITS = Traits()
    #: single messages are changed in place and put between others (not only removed
    #: and appended)
    in_place: bool = True

    @property
    def traits(self) -> Traits:
        """The format's declared differences (see :class:`~fluxgui.core.roles.Traits`)."""
        return self.TRAITS

    @property
    def tables(self) -> TablePairs:
        """The other Agents SDK table pairs the database holds, with their counts."""
        return TablePairs(self.other_tables, self.table_sessions)

    @property
    def reader(self) -> Any:
        return self

    @property
    def editor(self) -> Any | None:
        return self if self.capabilities.edit else None

    @property
    def writer(self) -> Any | None:
        caps = self.capabilities
        return self if caps.append or caps.clear else None

    @property
    def forks(self) -> Any | None:
        return self if self.capabilities.fork else None

    @property
    def branches(self) -> Any | None:
        return self if self.capabilities.branches else None

    @property
    def usage(self) -> Any | None:
        return self if self.capabilities.usage else None

    @property
    def feed(self) -> Any | None:
        return self if self.capabilities.watermark else None

    @property
    def text_filter(self) -> Any | None:
        return self if self.capabilities.text_filter else None

    @property
    def server_index(self) -> Any | None:
        return self if self.capabilities.server_search else None

    @property
    def rows(self) -> Any | None:
        return None
