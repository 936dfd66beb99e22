"""Code colouring without Qt: pygments' lexers and styles, and tokens lexed ahead.

Lexing is the slow half of colouring a code block (pure Python, ~1 ms per 1,000
characters); applying the colours needs Qt and the UI thread. So the conversation pane
asks :func:`highlight_jobs` which blocks the messages it is about to show will colour,
lexes them in a worker thread with :func:`pretokenize`, and the document builder
(:mod:`fluxgui.qt.markdown`) then takes each block's tokens with :func:`take_tokens`
(or lexes it on the spot when the worker did not get to it).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from .bodies import body_plan, split_fences
from .model import Message

#: a code block longer than this (characters) is shown uncoloured: colouring costs about
#: 1 ms per 1,000 characters on the UI thread (after lexing in a worker), and one
#: message's document is built in one go, so this keeps it near one frame (~13 ms)
HIGHLIGHT_LIMIT = 12_000

#: a pygments token: (token type, text)
Token = tuple[Any, str]


@lru_cache(maxsize=2)
def pygments_style(dark: bool) -> Any:
    """pygments' style for a light or a dark background."""
    from pygments.styles import get_style_by_name

    return get_style_by_name("github-dark" if dark else "default")


def lang_key(language: str) -> str:
    """The lexer name a fence's info string names (``"Python  linenums"`` → ``python``)."""
    stripped = language.strip()
    return stripped.split()[0].lower() if stripped else ""


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    name = lang_key(language)
    if not name:
        return None
    try:
        # Keep the text exactly as given: positions must match the document's.
        return get_lexer_by_name(name, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return None


_warm_languages: set[str] = set()
_styles_warm = False


def warm_up_pygments(languages: Iterable[str] = ("json", "python")) -> None:
    """Import pygments' styles and these languages' lexers and compile their rules (a
    lexer costs ~10 ms the first time). Pure Python: safe in a worker thread."""
    global _styles_warm
    if not _styles_warm:
        from pygments.token import Keyword

        for dark in (False, True):
            pygments_style(dark).style_for_token(Keyword)
        _styles_warm = True
    for name in languages:
        lexer = _lexer(name)
        if lexer is not None:
            list(lexer.get_tokens("x = {'a': [1, \"b\"]}  # c\n"))
        _warm_languages.add(name)


def tokens(code: str, language: str) -> list[Token] | None:
    """pygments' tokens for ``code``, or ``None`` (no lexer, too long, text changed)."""
    if not language or len(code) > HIGHLIGHT_LIMIT:
        return None
    lexer = _lexer(language)
    if lexer is None:
        return None
    try:
        found = list(lexer.get_tokens(code))
    except Exception:  # noqa: BLE001 - a lexer bug must not break rendering
        return None
    if sum(len(value) for _t, value in found) != len(code):
        return None  # the lexer changed the text (tabs, newlines): positions would be wrong
    return found


# --------------------------------------------------------------------------- lexed ahead

#: (language, code) -> pygments tokens, lexed ahead of time in a worker thread; an entry
#: is taken out when its document is built (so the table stays small)
_TOKENS: dict[tuple[str, str], list[Token]] = {}
_TOKENS_MAX = 2_000


def take_tokens(code: str, language: str) -> list[Token] | None:
    """The tokens of a code block: those :func:`pretokenize` lexed (taken out of the
    table), else lexed now; ``None`` when it is not coloured."""
    found = _TOKENS.pop((lang_key(language), code), None)
    return found if found is not None else tokens(code, language)


def highlight_jobs(messages: Iterable[Message], *, full: Iterable[int] = ()) -> list[
    tuple[str, str]
]:
    """The ``(language, code)`` pairs that building these messages' bodies will colour
    (``full``: ids of messages shown whole)."""
    whole = set(full)
    jobs: list[tuple[str, str]] = []
    for m in messages:
        plan = body_plan(m, full=m.id in whole)
        if plan.mode == "code" and plan.language:
            code = plan.text[:-1] if plan.text.endswith("\n") else plan.text
            jobs.append((plan.language, code))
        elif plan.mode == "markdown" and ("```" in plan.text):
            jobs.extend(
                (lang, chunk) for is_code, chunk, lang in split_fences(plan.text) if is_code and lang
            )
    return [(lang, code) for lang, code in jobs if len(code) <= HIGHLIGHT_LIMIT]


def pretokenize(jobs: Iterable[tuple[str, str]]) -> int:
    """Lex these code blocks now, so that building their documents on the UI thread only
    applies colours. Meant for a worker thread (pygments is pure Python); returns how many
    were lexed."""
    warm_up_pygments(())
    done = 0
    for language, code in jobs:
        key = (lang_key(language), code)
        if key in _TOKENS:
            continue
        found = tokens(code, language)
        _warm_languages.add(lang_key(language))
        if found is None:
            continue
        if len(_TOKENS) >= _TOKENS_MAX:
            _TOKENS.clear()  # documents not built after all (a cancelled page): start over
        _TOKENS[key] = found
        done += 1
    return done
