"""Database passwords in the system keyring, and nowhere else.

A password belongs to a URL; the keyring entry is keyed by that URL *without* its
password (``postgresql+asyncpg://root@127.0.0.1:5432/test``) under the service
``"fluxgui"``. ``keyring`` is imported lazily (it probes D-Bus and friends on first use)
and every failure — no backend on a headless box (``NoKeyringError``), the ``fail`` or
``null`` backend, a locked or refusing keychain, a broken D-Bus — becomes ``None`` or
``False``: callers then ask the user each time. Nothing here raises, logs a password or
writes one anywhere but the keyring.

An OpenAI-compatible API key comes from ``OPENAI_API_KEY`` or the keyring entry
:data:`API_KEY_KEYRING` (:func:`api_key_for`); fluxgui never writes one anywhere.

A keyring call may block for seconds (choosing a backend probes D-Bus; a locked keychain
waits for its unlock prompt), so the window never makes one on its UI thread: it awaits
the ``*_async`` twins, which run the same call with :func:`asyncio.to_thread`.
:func:`backend_chosen` says whether keyring has already picked its backend (then
:func:`keyring_available` answers at once, without probing anything).

The URL helpers (:func:`split_password`, :func:`with_password`, :func:`url_key`) are
here because the keyring key must be spelled the same way everywhere.

Pure Python (no Qt): the window, the settings and the command line share it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Coroutine
from typing import Any

from fluxgui.core.quiet import quietly
from fluxgui.core.redact import join_secrets, redact_url, split_secrets

log = logging.getLogger(__name__)

#: the keyring service every fluxgui password is filed under
SERVICE = "fluxgui"
#: the keyring entry an OpenAI-compatible API key may be filed under (service "fluxgui")
API_KEY_KEYRING = "api-key:openai"
#: the environment variable an OpenAI-compatible API key is read from first
API_KEY_ENV = "OPENAI_API_KEY"


# --------------------------------------------------------------------------- URL helpers


def is_url(target: str) -> bool:
    """Whether ``target`` is a URL (``scheme://…``) rather than a file path."""
    return "://" in target


def _parse(target: str) -> Any | None:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(target)
    except (ArgumentError, ValueError, TypeError):
        return None


#: how a password held with other secrets (query parameters) is filed in the keyring
_BUNDLE = "fluxgui-secrets:"


def split_password(target: str) -> tuple[str, str | None]:
    """``(target without its secrets, the secret)``; a path, a URL without secrets or an
    empty password gives ``(target, None)``.

    The secret is the ``user:password@`` password or, when the URL also carries secret
    query parameters (``?password=…``, ``?token=…``, see :mod:`fluxgui.core.redact`), all
    of them in one string that :func:`with_password` takes apart again.

    Raises ``ValueError`` (without the URL in the message) for a URL that does not parse,
    so a caller never stores or shows it by accident.
    """
    if not is_url(target):
        return target, None
    url = _parse(target)
    if url is None:
        raise ValueError("not a valid SQLAlchemy URL")
    bare_text, found = split_secrets(target)
    if any(found.keys() - {""}):
        return bare_text, _BUNDLE + json.dumps(found, sort_keys=True)
    # Not url.set(password=None): URL.set ignores None ("unchanged"); _replace is the
    # documented way to clear a field.
    password = str(url.password) if url.password else None
    bare = url._replace(password=None) if url.password is not None else url
    return bare.render_as_string(hide_password=False), password


def url_key(target: str) -> str:
    """The keyring key of a URL: the URL without its secrets."""
    return split_password(target)[0]


def with_password(target: str, password: str | None) -> str:
    """``target`` with ``password`` put in (escaped by SQLAlchemy), or the secrets
    :func:`split_password` bundled; unchanged when ``password`` is ``None``/empty or
    ``target`` is a path."""
    if not password or not is_url(target):
        return target
    if password.startswith(_BUNDLE):
        try:
            found = json.loads(password[len(_BUNDLE):])
        except ValueError:
            found = None
        if isinstance(found, dict):
            return join_secrets(target, {str(k): str(v) for k, v in found.items()})
    url = _parse(target)
    if url is None:
        raise ValueError("not a valid SQLAlchemy URL")
    return str(url.set(password=password).render_as_string(hide_password=False))


def display_target(target: str) -> str:
    """``target`` as it may be shown: passwords and secret query values become ``***``
    (the one redaction, :func:`fluxgui.core.redact.redact_url`)."""
    return redact_url(target)


# --------------------------------------------------------------------------- keyring


def _backend() -> Any | None:
    """The keyring backend when it is one that can hold a password, else ``None``."""
    try:
        import keyring
        from keyring.backends import chainer, fail

        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring):
            return None
        try:
            from keyring.backends import null

            if isinstance(backend, null.Keyring):
                return None
        except ImportError:  # pragma: no cover - older keyring
            pass
        if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
            return None
        return backend
    except Exception as exc:  # noqa: BLE001 - a broken keyring install is "no keyring"
        log.debug("no usable keyring: %s", type(exc).__name__)
        return None


def backend_chosen() -> bool:
    """Whether keyring has already chosen its backend, so that :func:`keyring_available`
    answers without probing anything (the first choice may take seconds: it asks D-Bus).

    Reads keyring's module state; ``False`` (ask off the UI thread) when it cannot tell.
    """
    try:
        import keyring.core
    except Exception:  # noqa: BLE001 - a broken keyring install: "not chosen", the async road
        return False
    return getattr(keyring.core, "_keyring_backend", None) is not None


def keyring_available() -> bool:
    """Whether a keyring backend that can store passwords is configured.

    ``True`` does not promise that a store succeeds (a keychain may be locked or refuse);
    :func:`set_password` reports that. May block while keyring chooses its backend: see
    :func:`keyring_available_async`.
    """
    return _backend() is not None


def get_password(url_key: str) -> str | None:
    """The password filed for ``url_key``; ``None`` when there is none or no keyring."""
    backend = _backend()
    if backend is None:
        return None
    try:
        password = backend.get_password(SERVICE, url_key)
    except Exception as exc:  # noqa: BLE001 - NoKeyringError, locked keychain, D-Bus…
        log.debug("keyring lookup failed: %s", type(exc).__name__)
        return None
    return password if isinstance(password, str) and password else None


def set_password(url_key: str, password: str) -> bool:
    """File ``password`` for ``url_key``; ``False`` when no keyring took it."""
    if not password:
        return False
    backend = _backend()
    if backend is None:
        return False
    try:
        backend.set_password(SERVICE, url_key, password)
    except Exception as exc:  # noqa: BLE001 - PasswordSetError, locked keychain, …
        log.debug("keyring store failed: %s", type(exc).__name__)
        return False
    return True


def delete_password(url_key: str) -> bool:
    """Forget the password of ``url_key``; ``False`` when there was none or no keyring."""
    backend = _backend()
    if backend is None:
        return False
    try:
        backend.delete_password(SERVICE, url_key)
    except Exception as exc:  # noqa: BLE001 - PasswordDeleteError (none filed), …
        log.debug("keyring delete failed: %s", type(exc).__name__)
        return False
    return True


def file_password(target: str) -> bool:
    """File the password a URL ``target`` carries under its :func:`url_key`; ``False``
    when it carries none, does not parse or no keyring took it."""
    if not is_url(target):
        return False
    try:
        key, password = split_password(target)
    except ValueError:
        return False
    return bool(password) and set_password(key, password or "")


def api_key_for(provider: str) -> str | None:
    """The API key a chat provider is sent: ``OPENAI_API_KEY``, else the keyring; ``None``
    for the offline provider and Ollama (which need none) or when there is none."""
    if provider != "openai":
        return None
    return os.environ.get(API_KEY_ENV) or get_password(API_KEY_KEYRING)


# --------------------------------------------------------------------------- off the UI thread


async def keyring_available_async() -> bool:
    """:func:`keyring_available` on a worker thread."""
    return await asyncio.to_thread(keyring_available)


async def get_password_async(url_key: str) -> str | None:
    """:func:`get_password` on a worker thread (the password in no log line)."""
    return await quietly(lambda: get_password(url_key))


async def set_password_async(url_key: str, password: str) -> bool:
    """:func:`set_password` on a worker thread (the password in no log line)."""
    return await quietly(lambda: set_password(url_key, password))


async def delete_password_async(url_key: str) -> bool:
    """:func:`delete_password` on a worker thread."""
    return await asyncio.to_thread(delete_password, url_key)


async def api_key_for_async(provider: str) -> str | None:
    """:func:`api_key_for`, the keyring asked on a worker thread (the environment
    variable, when set, answers at once)."""
    if provider != "openai":
        return None
    return os.environ.get(API_KEY_ENV) or await get_password_async(API_KEY_KEYRING)


async def file_password_async(target: str) -> bool:
    """:func:`file_password` on a worker thread (the target's password in no log line)."""
    return await quietly(lambda: file_password(target))


#: keyring writes started by :func:`file_password_soon` and not finished yet (a task
#: nobody holds may be collected before it ran)
_writes: set[asyncio.Task[bool]] = set()


def file_password_soon(target: str) -> None:
    """File ``target``'s password without blocking the caller: on a worker thread when
    an event loop runs in this thread (the window), else at once (a script)."""
    _soon(lambda: file_password(target), lambda: file_password_async(target))


def api_key_soon(key: str) -> None:
    """File an API key in the keyring (the entry the Conversations store and the test
    chat read), as :func:`file_password_soon` files a password."""
    if key:
        _soon(
            lambda: set_password(API_KEY_KEYRING, key),
            lambda: set_password_async(API_KEY_KEYRING, key),
        )


def _soon(now: Callable[[], object], later: Callable[[], Coroutine[Any, Any, bool]]) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        now()
        return
    task = loop.create_task(later())
    _writes.add(task)
    task.add_done_callback(_writes.discard)
