"""The whole open flows: what to open and how to show it, from the URL form or the
recent stores, and what is remembered once it has opened.

Nothing here opens a store; each flow hands back an :class:`OpenRequest` — a *target*
(a file or folder path, a SQLAlchemy URL or a ``redis://`` URL), the *label* to show
instead of it (a URL's password never reaches a label, a log line or the settings) and
the typed :class:`~fluxgui.core.ports.OpenOptions` of its kind (a Redis key prefix,
Agents SDK table names) — for :meth:`fluxgui.qt.window.store_controller.StoreController.open_target`.

:func:`ask_url` and :func:`request_for_stored` run a nested Qt event loop; the qasync
loop keeps running inside it. Call them from Qt slots (a menu action), not from inside a
coroutine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtWidgets import QDialog, QWidget

from fluxgui.adapters.registry import DEFAULT_PREFIX, conversations_label
from fluxgui.core.ports import OpenOptions
from fluxgui.services import credentials
from fluxgui.services.database_urls import SQLITE

from ..settings import RecentStores
from .open_url import OpenUrlDialog
from .passwords import PasswordDialog


@dataclass(frozen=True)
class OpenRequest:
    """What to open and how to show it. ``target`` may hold a password: pass it to
    ``open_target`` and nowhere else (it is left out of ``repr``).

    ``options`` are the typed options to open with (never an encryption key: that stays
    in the window's memory); ``key_prefix`` is the same value as ``options.key_prefix``
    (either may be given)."""

    target: str = field(repr=False)
    label: str
    #: file the target's password in the keyring once the store has opened
    remember: bool = False
    #: a Redis store's key prefix (``None``: the default, ``agents:session``); not secret,
    #: so it is remembered with the recent entry
    key_prefix: str | None = None
    options: OpenOptions = field(default_factory=OpenOptions)

    def __post_init__(self) -> None:
        # One value, two spellings: the window reads either.
        if self.key_prefix is not None and self.options.key_prefix != self.key_prefix:
            object.__setattr__(self, "options", self.options.with_(key_prefix=self.key_prefix))
        elif self.key_prefix is None and self.options.key_prefix is not None:
            object.__setattr__(self, "key_prefix", self.options.key_prefix)


@dataclass(frozen=True)
class OpenedStore:
    """How a store was (or is being) opened: to reopen it for editing or with a key.
    Its options may hold the encryption key: memory only (``repr`` leaves it out)."""

    target: str = field(repr=False)
    options: OpenOptions
    #: the label shown (no secret in it)
    shown: str


def redis_label(display_url: str, key_prefix: str | None) -> str:
    """The label of a Redis store: its URL (password as ``***``) and a prefix that is not
    the default."""
    if key_prefix and key_prefix != DEFAULT_PREFIX:
        return f"{display_url} · {key_prefix}"
    return display_url


def request_from(dialog: OpenUrlDialog) -> OpenRequest:
    """The request an accepted :class:`OpenUrlDialog` makes. A plain SQLite file comes
    back as its path (recent stores keep paths absolute)."""
    options = dialog.open_options()
    if dialog.is_conversations():  # the key stays in memory; the keyring when asked
        return OpenRequest(
            dialog.url(), conversations_label(dialog.url()) or "OpenAI Conversations",
            dialog.remember_api_key(),
            options=options,
        )
    if dialog.drivername() == SQLITE and not dialog.options_edit.text().strip():
        path = dialog.database_edit.text().strip()
        return OpenRequest(path, path, options=options)
    prefix = dialog.key_prefix()
    label = redis_label(dialog.display_url(), prefix) if prefix is not None else dialog.display_url()
    return OpenRequest(dialog.url(), label, dialog.remember_password(), options=options)


def ask_url(parent: QWidget | None, initial: str | None = None) -> OpenRequest | None:
    """Run :class:`OpenUrlDialog`; the request, or ``None`` when cancelled."""
    dialog = OpenUrlDialog(parent, initial=initial)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return request_from(dialog)
    finally:
        dialog.deleteLater()


def ask_password(
    parent: QWidget | None,
    stored: str,
    label: str | None = None,
    key_prefix: str | None = None,
) -> OpenRequest | None:
    """The request for a recent store whose password the keyring does not have: asked
    for (with the offer to remember it when a keyring can); ``None`` when cancelled."""
    label = label or credentials.display_target(stored)
    dialog = PasswordDialog(parent, credentials.display_target(stored), offer_remember=None)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return OpenRequest(
            credentials.with_password(stored, dialog.password()), label,
            dialog.remember_password(), key_prefix=key_prefix,
        )
    finally:
        dialog.deleteLater()


def request_for_stored(
    parent: QWidget | None,
    stored: str,
    recent: RecentStores,
    label: str | None = None,
    key_prefix: str | None = None,
) -> OpenRequest | None:
    """The request for a recent store: its password from the keyring, else asked for
    (``None`` when the user cancels). ``key_prefix`` (a Redis store's): the one given,
    else the one the recent list remembers for ``stored``."""
    label = label or credentials.display_target(stored)
    prefix = key_prefix or recent.key_prefix(stored)
    target = recent.resolve_target(stored)
    if target is not None:
        return OpenRequest(target, label, key_prefix=prefix)
    return ask_password(parent, stored, label, prefix)


def remember_opened(request: OpenRequest, recent: RecentStores) -> None:
    """After ``request`` opened: put it first in the recent stores (without its password,
    with its key prefix) and, when asked, file its password in the keyring — on a worker
    thread when the event loop runs. (An encryption key is never part of a request: it
    stays in the window's memory.)"""
    recent.add(request.target, request.label, key_prefix=request.key_prefix)
    if request.remember and request.options.api_key:  # an OpenAI Conversations key
        credentials.api_key_soon(request.options.api_key or "")
    elif request.remember and credentials.is_url(request.target):
        credentials.file_password_soon(request.target)


def ask_api_key(parent: QWidget | None, opened: OpenedStore, request: OpenRequest | None = None) -> OpenRequest | None:
    """The request to open ``opened`` again with another API key (a server refused the
    one given, or found none): asked for as a password is, with the offer to file it in
    the keyring; ``None`` when cancelled. The key goes into the request's options only
    (memory), and to the keyring once the store has opened when the user asks."""
    dialog = PasswordDialog(parent, opened.shown, offer_remember=None, secret="API key")
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted or not dialog.password().strip():
            return None
        label = request.label if request is not None else opened.shown
        options = opened.options.with_(api_key=dialog.password().strip())
        return OpenRequest(opened.target, label, dialog.remember_password(),
                           key_prefix=opened.options.key_prefix, options=options)
    finally:
        dialog.deleteLater()
