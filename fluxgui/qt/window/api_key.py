"""**Enter another key…** on the error bar (issue 37): a server that refused the API key
(401), or found none, gets a button that asks for a key — the password prompt, with
the offer to file it in the system keyring — and opens the store again with it.

The key lives in the request's options (memory) and, when the user asks, the keyring
once the store has opened; never a log line, the settings or a label.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from fluxgui.core.errors import ApiKeyRefused

from ..dialogs.opening import OpenedStore, OpenRequest, ask_api_key
from ..widgets import ErrorBar
from .store_controller import StoreController


def offer_another_key(bar: ErrorBar, parent: QWidget, stores: StoreController, error: ApiKeyRefused,
                      *, on_open: bool) -> None:
    """Put the button on ``bar`` for ``error``: ``on_open``, the open that failed is tried
    again; else (a read of the open store refused) the open store is opened again."""
    failed = stores.failed if on_open else None
    opened, request = failed if failed is not None else (stores.opened, None)
    if opened is None:
        return
    text = "Enter Key…" if error.missing else "Enter Another Key…"
    bar.set_action(text, lambda: retry(parent, stores, opened, request))


def retry(parent: QWidget, stores: StoreController, opened: OpenedStore, request: OpenRequest | None) -> bool:
    """Ask for the key and open ``opened`` with it; ``False`` when cancelled."""
    again = ask_api_key(parent, opened, request)
    if again is None:
        return False
    stores.open_request(again)
    return True
