"""Recent stores, kept in ``QSettings`` — without passwords.

A URL is stored with its password removed; whether it *had* one is stored as a flag, so
that reopening knows to look in the keyring (:mod:`fluxgui.services.credentials`) or to
ask. A keyring call may block for seconds: the window looks passwords up off its UI
thread (:func:`resolve_target_async`).
File and folder paths are stored absolute, so a store opened from the command line in one
folder reopens from anywhere. A Redis store keeps its key prefix (not a secret) with it;
an encryption key is never stored here.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from fluxgui.adapters.registry import DEFAULT_PREFIX, kind_of
from fluxgui.core.paths import private_dir
from fluxgui.core.redact import redact_text, split_secrets
from fluxgui.services import credentials

ORGANIZATION = "fluxgui"
APPLICATION = "fluxgui"
#: how many recent stores are kept
MAX_RECENT = 10

_GROUP = "recent"
_ARRAY = "stores"


def default_settings() -> QSettings:
    """The user's settings: an ini file (``~/.config/fluxgui/fluxgui.ini`` on Linux).

    Ini on every platform (not the Windows registry) so tests can redirect it with
    ``QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)``.
    """
    settings = QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION
    )
    # Qt would make the folder (and its missing parents) by the umask: 0755
    try:
        private_dir(Path(settings.fileName()).parent)
    except OSError:  # (a read-only home: Qt's writes fail quietly too)
        pass
    return settings


def normalize_target(target: str) -> tuple[str, bool]:
    """``(what is stored, whether a password was removed)`` for a target.

    Raises ``ValueError`` for a URL that does not parse (it is never stored: it might
    hold a password we cannot find). An OpenAI Conversations target is kept as it is
    (its key is never part of it)."""
    if kind_of(target) == "conversations":
        return redact_text(target), False
    if credentials.is_url(target):
        bare, password = credentials.split_password(target)
        return bare, password is not None
    return os.path.abspath(os.path.expanduser(target)), False


def resolve_target(stored: str, needs_password: bool = False) -> str | None:
    """The target to open for a stored one: a URL gets its password back from the keyring.

    Returns ``None`` when ``needs_password`` and the keyring has no password for it —
    the caller asks the user for it. (An OpenAI Conversations store finds its API key
    itself, in the environment or the keyring.)
    """
    if not credentials.is_url(stored) or kind_of(stored) == "conversations":
        return stored
    try:
        key, password = credentials.split_password(stored)
    except ValueError:
        return None
    if password is not None:  # already complete (not one of ours, but fine)
        return stored
    found = credentials.get_password(key)
    if found:
        return credentials.with_password(key, found)
    return None if needs_password else key


@dataclass(frozen=True)
class RecentEntry:
    """One recent store: its target (no password), its label and, for a Redis store
    opened under another key prefix than the default, that prefix."""

    target: str
    label: str
    key_prefix: str | None = None


class RecentStores:
    """The recently opened stores, most recent first, at most :data:`MAX_RECENT`.

    A store is one entry per target and key prefix: the same Redis server under two
    prefixes is two entries."""

    def __init__(self, settings: QSettings | None = None) -> None:
        self._settings = settings if settings is not None else default_settings()

    @property
    def settings(self) -> QSettings:
        """The settings this list lives in (the window keeps its own flags there too)."""
        return self._settings

    # -- reading ---------------------------------------------------------------------

    def _entries(self) -> list[dict[str, Any]]:
        s = self._settings
        entries: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        s.beginGroup(_GROUP)
        try:
            size = s.beginReadArray(_ARRAY)
            for i in range(size):
                s.setArrayIndex(i)
                target = str(s.value("target", "", type=str))
                prefix = str(s.value("key_prefix", "", type=str) or "")
                if not target or (target, prefix) in seen:
                    continue
                seen.add((target, prefix))
                entries.append(
                    {
                        "target": target,
                        "label": s.value("label", "", type=str) or target,
                        "password": s.value("password", False, type=bool),
                        "key_prefix": prefix,
                    }
                )
            s.endArray()
        finally:
            s.endGroup()
        return entries[:MAX_RECENT]

    def items(self) -> list[tuple[str, str]]:
        """``[(target, label), …]``, most recent first; targets carry no password."""
        return [(e["target"], e["label"]) for e in self._entries()]

    def entries(self) -> list[RecentEntry]:
        """The recent stores with their key prefixes, most recent first."""
        return [
            RecentEntry(e["target"], e["label"], e["key_prefix"] or None)
            for e in self._entries()
        ]

    def key_prefix(self, target: str) -> str | None:
        """The key prefix ``target`` was last opened with (``None``: the default)."""
        try:
            stored, _ = normalize_target(target)
        except ValueError:
            return None
        found = next((e for e in self._entries() if e["target"] == stored), None)
        return (found["key_prefix"] or None) if found else None

    def last(self) -> str | None:
        """The most recently opened target (no password), or ``None``."""
        entries = self._entries()
        return entries[0]["target"] if entries else None

    def needs_password(self, target: str) -> bool:
        """Whether ``target`` was opened with a password (so reopening needs one)."""
        try:
            key, had = normalize_target(target)
        except ValueError:
            return False
        return had or any(e["target"] == key and e["password"] for e in self._entries())

    def resolve_target(self, stored: str) -> str | None:
        """:func:`resolve_target` with the flag this list recorded for ``stored``."""
        return resolve_target(stored, self.needs_password(stored))

    # -- writing ---------------------------------------------------------------------

    def add(self, target: str, label: str | None = None, *, key_prefix: str | None = None) -> bool:
        """Put ``target`` first (its password removed); ``False`` for an invalid URL.
        ``key_prefix``: the Redis key prefix it was opened with (``None``: the default)."""
        try:
            stored, had_password = normalize_target(target)
        except ValueError:
            return False
        prefix = "" if key_prefix in (None, "", DEFAULT_PREFIX) else str(key_prefix)
        entries = self._entries()
        same = [e for e in entries if e["target"] == stored and e["key_prefix"] == prefix]
        if not label:  # keep the label it was given before
            label = same[0]["label"] if same else None
        label = _safe_label(label, target, stored)
        entries = [e for e in entries if not (e["target"] == stored and e["key_prefix"] == prefix)]
        entries.insert(
            0, {"target": stored, "label": label, "password": had_password, "key_prefix": prefix}
        )
        self._write(entries[:MAX_RECENT])
        return True

    def remove(self, target: str) -> None:
        """Drop ``target`` (with or without its password) from the list. The keyring is
        left alone: :func:`fluxgui.services.credentials.delete_password` forgets a password."""
        try:
            stored, _ = normalize_target(target)
        except ValueError:
            return
        entries = self._entries()
        kept = [e for e in entries if e["target"] != stored]
        if len(kept) != len(entries):
            self._write(kept)

    def clear(self) -> None:
        self._settings.remove(_GROUP)
        self._settings.sync()

    def _write(self, entries: list[dict[str, Any]]) -> None:
        s = self._settings
        s.remove(_GROUP)
        s.beginGroup(_GROUP)
        s.beginWriteArray(_ARRAY, len(entries))
        for i, e in enumerate(entries):
            s.setArrayIndex(i)
            s.setValue("target", e["target"])
            s.setValue("label", e["label"])
            s.setValue("password", bool(e["password"]))
            if e.get("key_prefix"):
                s.setValue("key_prefix", e["key_prefix"])
        s.endArray()
        s.endGroup()
        s.sync()


def _safe_label(label: str | None, target: str, stored: str) -> str:
    """A label that cannot carry a secret: a caller may pass the full URL."""
    if not label:
        return credentials.display_target(target)  # "***" where a secret was
    label = redact_text(label)
    if not credentials.is_url(target):
        return label
    from urllib.parse import quote, quote_plus, unquote_plus

    _bare, found = split_secrets(target)
    for value in found.values():
        for form in {value, unquote_plus(value), quote(value, safe=""), quote_plus(value)}:
            if form and form in label:
                # The label showed a secret; fall back to the URL with "***".
                return credentials.display_target(target)
    return label


def startup_candidate(recent: RecentStores) -> tuple[str, str, bool] | None:
    """``(stored target, label, whether it needs a password)`` of the last store when it
    may reopen at start without asking; the keyring is not asked here (a URL's password
    is looked up by the caller, off the UI thread: :func:`resolve_target_async`).

    ``None``: no recent store, a file or folder that is gone, or a Redis store opened
    under its own key prefix (a target alone would list the default prefix's sessions
    under its label)."""
    entries = recent.entries()
    if not entries:
        return None
    last, label = entries[0].target, entries[0].label
    if entries[0].key_prefix:
        return None
    if not credentials.is_url(last):
        return (last, label, False) if os.path.isfile(last) or os.path.isdir(last) else None
    return last, label, recent.needs_password(last)


def startup_target(recent: RecentStores) -> tuple[str, str] | None:
    """``(target, label)`` to reopen at start: the last store when it can be opened
    without asking (a file or folder that still exists, a URL with no password or one
    the keyring has), else ``None`` — the caller opens the demo store. Asks the keyring
    on the calling thread (the window uses :func:`startup_candidate` and
    :func:`resolve_target_async` instead)."""
    found = startup_candidate(recent)
    if found is None:
        return None
    stored, label, needs = found
    target = resolve_target(stored, needs)
    return (target, label) if target is not None else None


# --------------------------------------------------------------------------- off the UI thread


async def resolve_target_async(stored: str, needs_password: bool = False) -> str | None:
    """:func:`resolve_target` on a worker thread: a keyring may block for seconds (the
    first question probes D-Bus; a locked keychain waits for its unlock prompt)."""
    return await asyncio.to_thread(resolve_target, stored, needs_password)


# --------------------------------------------------------------------------- agent settings

_AGENTS = "agents"


class AgentSettings:
    """The chat panel's agent settings (name, model, provider, …), one set per store.

    Keyed by the store's target without its password (:func:`normalize_target`); the
    values are the dict of ``AgentConfig.to_settings()`` as JSON. An API key is never
    written, whatever the dict holds."""

    def __init__(self, settings: QSettings | None = None) -> None:
        self._settings = settings if settings is not None else default_settings()

    @staticmethod
    def _key(target: str) -> tuple[str, str] | None:
        import hashlib

        try:
            stored, _ = normalize_target(target)
        except ValueError:
            return None
        return stored, hashlib.sha1(stored.encode("utf-8")).hexdigest()[:20]

    def load(self, target: str) -> dict[str, Any] | None:
        """The settings saved for ``target``, or ``None``."""
        import json

        key = self._key(target)
        if key is None:
            return None
        raw = str(self._settings.value(f"{_AGENTS}/{key[1]}/config", "", type=str) or "")
        if not raw:
            return None
        try:
            values = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(values, dict):
            return None
        values.pop("api_key", None)
        return values

    def save(self, target: str, values: dict[str, Any]) -> bool:
        """Remember ``values`` for ``target`` (without any API key)."""
        import json

        key = self._key(target)
        if key is None:
            return False
        clean = {k: v for k, v in values.items() if k != "api_key"}
        self._settings.setValue(f"{_AGENTS}/{key[1]}/target", key[0])
        self._settings.setValue(f"{_AGENTS}/{key[1]}/config", json.dumps(clean, sort_keys=True))
        self._settings.sync()
        return True
