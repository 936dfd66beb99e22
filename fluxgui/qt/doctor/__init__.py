"""The session doctor's window parts: :class:`DoctorController` (the Doctor dock, markers,
badges, Test-chat's warning), the panel's tabs (:mod:`.problems_tab`,
:mod:`.preflight_view`, :mod:`.ledger_view`) and the session list's badges
(:mod:`.badges`). The work is :mod:`fluxgui.services.doctor`'s."""

from __future__ import annotations

from .badges import SessionBadges
from .controller import DoctorController

__all__ = ["DoctorController", "SessionBadges"]
