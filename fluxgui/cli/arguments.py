"""Argument value types: counts, message ids, numbers in a range, targets; and the
parser class every command's parser is (:class:`Parser`).

They are checked at the parser, so that a bad value is a usage error (one line, exit 2)
before anything is opened, and no driver ever sees a number it would fail on with a
traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

#: the largest count a command takes (--limit, --ttl): what a 32-bit signed int holds
MAX_COUNT = 2**31 - 1
#: the largest message id (SQLite's and Postgres' 64-bit integer)
MAX_ID = 2**63 - 1


def _whole(text: str, top: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    if value > top:
        raise argparse.ArgumentTypeError(f"must be at most {top}")
    return value


def count(text: str) -> int:
    """A count: a whole number from 0 to :data:`MAX_COUNT`."""
    return _whole(text, MAX_COUNT)


def message_id(text: str) -> int:
    """A message id: a whole number from 0 to :data:`MAX_ID`."""
    return _whole(text, MAX_ID)


def _finite(text: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not low <= value <= high:  # (NaN fails both)
        raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}")
    return value


def temperature(text: str) -> float:
    """A sampling temperature: from 0 to 2."""
    return _finite(text, 0.0, 2.0)


def seconds(text: str) -> float:
    """A timeout: more than 0 seconds, at most a day."""
    value = _finite(text, 0.0, 86400.0)
    if value == 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def needle(text: str) -> str:
    """A text to search for: not empty (spaces are a text; an empty one would match
    nothing on one path and everything on another)."""
    if not text:
        raise argparse.ArgumentTypeError("TEXT is empty: give the text to find")
    return text


#: the TARGET that names the bundled demo store (unless a file of that name is here)
DEMO = "demo"
#: what a TARGET may be, for every command's help
TARGET_HELP = (
    "a SQLite file, a JSON session folder, a SQLAlchemy URL, redis://…, "
    "openai-conversations: (the OpenAI Conversations API) or 'demo'"
)


def target(text: str) -> str:
    """A TARGET: anything but the empty string (which would name the current folder);
    ``demo`` names the bundled demo store when nothing of that name is in the current
    folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("TARGET is empty: name a SQLite file, a folder or a URL")
    if text == DEMO and not os.path.lexists(DEMO):
        from fluxgui.core.demo import demo_store_path

        path = demo_store_path()
        if path is None:
            raise argparse.ArgumentTypeError("the demo store is not installed with this fluxgui")
        return str(path)
    return text


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size().columns`` finds it
    (``$COLUMNS``, else standard output's terminal, else 80), without importing
    :mod:`shutil` (and the compression modules it loads)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


#: the arguments that name a file, a URL, or something a store holds (a session, a branch,
#: a Redis key prefix): kept as Python decoded them from the command line — bytes that
#: are not UTF-8 as ``surrogateescape`` characters, which name those same bytes again
#: (a file name, a Redis key, a flux session id read from such bytes)
NAMES = frozenset({
    "target", "source", "dest", "files", "output", "file", "ids_file", "dest_ids_file",
    "screenshot", "reviews", "session", "session_id", "session_ids", "a", "b", "branch",
    "branch_a", "branch_b", "key_prefix", "dest_key_prefix", "targets", "more", "sessions",
    "workspace", "save_workspace",
})


def plain_text(text: str) -> str:
    """A command-line text as text: the bytes that were not UTF-8 (which Python decodes
    as lone surrogates) as U+FFFD, as a card shows them."""
    if text.isascii():
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # (not from a command line: left as the caller gave it)
        return text


def _plain_values(args: argparse.Namespace) -> argparse.Namespace:
    """Every text argument but :data:`NAMES` made :func:`plain_text` (a note, a search
    text, a tag, a model name…: text that is written or sent somewhere)."""
    for name, value in vars(args).items():
        if name in NAMES:
            continue
        if isinstance(value, str):
            setattr(args, name, plain_text(value))
        elif isinstance(value, list):
            setattr(args, name, [plain_text(v) if isinstance(v, str) else v for v in value])
    return args


class Parser(argparse.ArgumentParser):
    """argparse's parser, with formatters as wide as argparse makes them (the terminal's
    width less 2). argparse makes one for every argument added and finds the width
    through :mod:`shutil`; a command's start-up need not load it.

    The command line in one place: bytes that are not UTF-8 in a text argument (a note,
    a search text) become U+FFFD, in a name of something (:data:`NAMES`) they stay the
    bytes they were.

    A command taking several TARGETs before other positionals (``show A B SESSION_ID``)
    sets ``intermixed``: its options may stand between them (``show URL --key-prefix P
    SESSION_ID``), as argparse's ``parse_intermixed_args`` reads them."""

    #: options may stand between the positionals (see the class text)
    intermixed = False
    _mixing = False

    def parse_known_args(  # type: ignore[override]  # one signature for argparse's overloads
        self, args: Any = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self.intermixed and not self._mixing:
            self._mixing = True  # it calls this method again, twice
            try:
                parsed, rest = super().parse_known_intermixed_args(args, namespace)
            finally:
                self._mixing = False
        else:
            parsed, rest = super().parse_known_args(args, namespace)
        return _plain_values(parsed), rest

    def error(self, message: str) -> NoReturn:
        """argparse's usage error; an option whose value starts with ``-`` (a Fernet key
        may: ``-kX3…``) says how to give it, as argparse takes it for another option."""
        import re

        found = re.fullmatch(r"argument (\S+): expected one argument", message)
        if found:
            option = found.group(1).split("/")[-1]
            message += f" (a value that starts with '-' is given as {option}=VALUE)"
        super().error(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        formatter = self.formatter_class(prog=self.prog, width=terminal_columns() - 2)  # type: ignore[call-arg]
        if hasattr(formatter, "_set_color"):  # Python 3.14's coloured help, as argparse does
            formatter._set_color(getattr(self, "color", False))
        return formatter
