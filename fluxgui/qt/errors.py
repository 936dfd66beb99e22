"""How an error reads in the window's error bar (and in a screenshot run's one line).

Its own module, with no widget in it, so that every pane can word an error the same way
without importing the main window.
"""

from __future__ import annotations

from fluxgui.core.errors import FluxguiError
from fluxgui.core.redact import redact_text


def describe_error(exc: BaseException) -> str:
    """One line for the error bar: a known error's own sentence, else the bug's type."""
    if isinstance(exc, FluxguiError):
        return redact_text(str(exc))
    text = redact_text(" ".join(str(exc).split())) or "(no message)"
    return f"Unexpected error ({type(exc).__name__}: {text}); details are on stderr."
