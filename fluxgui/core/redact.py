"""One redaction for every URL fluxgui shows: passwords and secret query values hidden.

A URL reaches the user in errors, the window title, the status bar, the recent-stores
list and logs. Every one of those goes through :func:`redact_url` (one URL) or
:func:`redact_text` (any text that may hold URLs), which hide

* the password of the ``user:password@`` part, and
* the value of every query parameter that names a secret: ``password``, ``pass``,
  ``pwd``, ``key``, ``token``, ``secret``, ``api_key`` (any case), and names ending in
  one of them after ``_`` or ``-`` (``access_token``, ``client-secret``, ``x-api-key``).

Parsing is by hand, not ``urllib``: a URL that does not parse (a port out of range, a
stray ``%``) must still lose its secrets before it is shown. :func:`split_secrets` takes
the secrets out of a URL (to keep them in the keyring) and :func:`join_secrets` puts them
back.
"""

from __future__ import annotations

import re

#: shown in place of a secret
MASK = "***"
SECRET_NAMES = frozenset({"password", "pass", "pwd", "key", "token", "secret", "api_key", "apikey"})
# (patterns, compiled by re on first use and kept in its cache: every command's start
# loads this module, few redact anything)
_SECRET_SUFFIX = r"[_-](password|pass|pwd|key|token|secret)$"
#: a URL inside running text: a scheme, "://", then anything up to white space or a quote
_URL_IN_TEXT = r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]*"


def is_secret_name(name: str) -> bool:
    """Whether a query parameter called ``name`` holds a secret."""
    lowered = name.strip().lower()
    return lowered in SECRET_NAMES or bool(re.search(_SECRET_SUFFIX, lowered))


def _split(url: str) -> tuple[str, str, str, str, str] | None:
    """``(scheme://, authority, path, ?query, #fragment)`` of ``url``; ``None`` when it
    has no ``://``. Pieces keep their leading separator so joining them gives ``url``."""
    head, sep, rest = url.partition("://")
    if not sep:
        return None
    # A password may hold "/" (SQLAlchemy allows it): the authority runs to the first "/"
    # after the last "@" that comes before the query.
    before_query = re.split(r"[?#]", rest, maxsplit=1)[0]
    start = before_query.rfind("@") + 1
    end = len(rest)
    for stop in "/?#":
        at = rest.find(stop, start)
        if at != -1:
            end = min(end, at)
    authority, rest = rest[:end], rest[end:]
    fragment = ""
    if "#" in rest:
        rest, hash_, fragment = rest.partition("#")
        fragment = hash_ + fragment
    path, q, query = rest.partition("?")
    return head + sep, authority, path, q + query, fragment


def _redact_authority(authority: str) -> str:
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return authority
    user, colon, password = userinfo.partition(":")
    if colon and password:
        return f"{user}:{MASK}@{host}"
    return authority


def _redact_query(query: str) -> str:
    if not query:
        return query
    parts = re.split(r"([&;])", query[1:])
    out = []
    for part in parts:
        name, eq, value = part.partition("=")
        if eq and value and is_secret_name(_unquote(name)):
            part = f"{name}={MASK}"
        out.append(part)
    return "?" + "".join(out)


def _unquote(text: str) -> str:
    from urllib.parse import unquote_plus

    return unquote_plus(text)


def redact_url(url: str) -> str:
    """``url`` with its password and secret query values replaced by ``***``; text
    without ``://`` (a file path) comes back unchanged."""
    parts = _split(url)
    if parts is None:
        return url
    scheme, authority, path, query, fragment = parts
    return scheme + _redact_authority(authority) + path + _redact_query(query) + fragment


def redact_text(text: str) -> str:
    """``text`` with every URL in it redacted (see :func:`redact_url`)."""
    if "://" not in text:
        return text
    return re.sub(_URL_IN_TEXT, lambda m: redact_url(m.group(0)), text)


def split_secrets(url: str) -> tuple[str, dict[str, str]]:
    """``(url without secrets, the secrets)``: the userinfo password under ``""`` and
    each secret query parameter under its name (values as written, still %-encoded).
    A path or a URL without secrets gives ``(url, {})``."""
    parts = _split(url)
    if parts is None:
        return url, {}
    scheme, authority, path, query, fragment = parts
    found: dict[str, str] = {}
    userinfo, at, host = authority.rpartition("@")
    if at:
        user, colon, password = userinfo.partition(":")
        if colon and password:
            found[""] = password
            authority = f"{user}@{host}" if user else host
    if query:
        kept = []
        for part in re.split(r"[&;]", query[1:]):
            name, eq, value = part.partition("=")
            if eq and value and is_secret_name(_unquote(name)):
                found[name] = value
            elif part:
                kept.append(part)
        query = "?" + "&".join(kept) if kept else ""
    return scheme + authority + path + query + fragment, found


def join_secrets(url: str, secrets: dict[str, str]) -> str:
    """Put the secrets :func:`split_secrets` took out of ``url`` back in."""
    parts = _split(url)
    if parts is None or not secrets:
        return url
    scheme, authority, path, query, fragment = parts
    password = secrets.get("")
    if password:
        userinfo, at, host = authority.rpartition("@")
        if at:
            authority = f"{userinfo.partition(':')[0]}:{password}@{host}"
        else:
            authority = f":{password}@{authority}"
    extra = [f"{name}={value}" for name, value in secrets.items() if name]
    if extra:
        query = (query + "&" if query else "?") + "&".join(extra)
    return scheme + authority + path + query + fragment


_installed = False


def install_log_redaction() -> None:
    """Redact every log record of this process as it is made (its message, arguments and
    traceback), whoever logs it and wherever it goes: a URL with a password that reaches a
    log shows ``***``. Idempotent."""
    global _installed
    if _installed:
        return
    import logging
    import traceback

    make = logging.getLogRecordFactory()

    def redacting(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is the logger's problem
            return record
        if "://" in message:
            record.msg, record.args = redact_text(message), None
        if record.exc_info and record.exc_info[0] is not None:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            record.exc_text = redact_text(text)
        return record

    logging.setLogRecordFactory(redacting)
    _installed = True
