"""``openai-conversations:`` targets: the server, the conversations to list, the API key.

A target is ``openai-conversations:`` (the server from ``--base-url``, else
``$OPENAI_BASE_URL``, else the public endpoint) or ``openai-conversations:BASE_URL``. The
Conversations API cannot list conversations, so the store lists the ids it is given
(``--conversation ID``, repeatable, and ``--ids FILE``, one a line). The API key comes
from the options (the window's form), else ``$OPENAI_API_KEY``, else the system keyring
(the entry the test chat's OpenAI provider uses) — never from a flag, never shown.

No ``openai`` import here: recognising a target stays cheap.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from fluxgui.core.errors import ApiKeyRefused, TargetError, show_id
from fluxgui.core.redact import redact_url

#: what every target starts with
SCHEME = "openai-conversations:"
#: the public endpoint
PUBLIC_BASE_URL = "https://api.openai.com/v1"
#: the environment variables the ``openai`` client reads too
BASE_URL_ENV = "OPENAI_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"
#: the keyring entry of the API key (service, name): the test chat's, see
#: :mod:`fluxgui.services.credentials` (``SERVICE``, ``API_KEY_KEYRING``)
KEYRING = ("fluxgui", "api-key:openai")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_conversations_target(target: str) -> bool:
    """Whether ``target`` names the OpenAI Conversations API."""
    return target[: len(SCHEME)].lower() == SCHEME


def base_url_of(target: str, option: str | None = None) -> str:
    """The server a target names: the URL after ``openai-conversations:``, else
    ``option`` (``--base-url``), else ``$OPENAI_BASE_URL``, else the public endpoint;
    checked and without a trailing ``/``. Two different URLs (target and option) are
    refused."""
    inline = target[len(SCHEME) :].strip()
    given = (option or "").strip()
    if inline and given and _clean(inline) != _clean(given):
        raise TargetError(
            f"two base URLs given: {show_id(redact_url(inline))} in the target and "
            f"{show_id(redact_url(given))} with --base-url; give one"
        )
    return _clean(inline or given or os.environ.get(BASE_URL_ENV, "").strip() or PUBLIC_BASE_URL)


def _clean(url: str) -> str:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a bad port
    except ValueError:
        raise TargetError(f"bad base URL {show_id(redact_url(url))}: not a URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise TargetError(
            f"bad base URL {show_id(redact_url(url))}: use http(s)://host/…, e.g. {PUBLIC_BASE_URL}"
        )
    return urlunsplit(parts._replace(scheme=parts.scheme.lower())).rstrip("/")


def location(base_url: str) -> str:
    """The store key's location (:mod:`fluxgui.core.storekey`): ``openai-conversations:``
    and the base URL without user, password, query or default port; host lower-cased."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if host in ("127.0.0.1", "::1"):  # as core.storekey spells loopback
        host = "localhost"
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    where = host if port in (None, _DEFAULT_PORTS.get(parts.scheme)) else f"{host}:{port}"
    return SCHEME + urlunsplit((parts.scheme, where, parts.path.rstrip("/"), "", ""))


def shown(base_url: str) -> str:
    """How a store at ``base_url`` is named to people (secrets hidden)."""
    return f"OpenAI Conversations at {redact_url(base_url)}"


def read_ids_file(path: str) -> list[str]:
    """The conversation ids of a file: one a line; blank lines and ``#`` comments
    skipped."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise TargetError(f"cannot read the ids file {show_id(str(file))}: {reason}") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def conversation_ids(given: tuple[str, ...] | list[str], ids_file: str | None) -> list[str]:
    """The ids to list, each once, in the order given (the file's after the others)."""
    ids = [i.strip() for i in given if i and i.strip()]
    if ids_file:
        ids += read_ids_file(ids_file)
    return list(dict.fromkeys(ids))


def find_api_key(given: str | None) -> str:
    """The API key: ``given``, else ``$OPENAI_API_KEY``, else the keyring's; one line
    when there is none. Blocking (the keyring may wait): call it in a worker thread."""
    key = given or os.environ.get(API_KEY_ENV) or _keyring_key()
    if not key:
        raise ApiKeyRefused(
            "no API key for the OpenAI Conversations API: set OPENAI_API_KEY, or file the "
            f"key in the system keyring (service {KEYRING[0]!r}, name {KEYRING[1]!r})",
            missing=True,
        )
    return key


def _keyring_key() -> str | None:
    # Any keyring failure (no backend on a headless box, a locked keychain, a broken
    # D-Bus) is "no key here": the caller says where a key may come from.
    try:
        import keyring

        value = keyring.get_password(*KEYRING)
    except Exception:  # noqa: BLE001 - see above
        return None
    return value if isinstance(value, str) and value else None
