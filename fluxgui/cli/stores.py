"""Opening stores from the command line.

The store flags (``--sessions-table``, ``--messages-table``, ``--key``, ``--ttl``,
``--key-prefix``, ``--base-url``, ``--conversation``, ``--ids``, ``--api-timeout``, and
their ``--dest-…`` forms for ``copy``) are built from the options
the adapters declare (:data:`fluxgui.adapters.registry.OPTIONS`), and a parsed namespace
becomes a typed :class:`~fluxgui.core.ports.OpenOptions` in one place,
:func:`open_options` (an option left out falls back to its environment variable: the
key to ``FLUXGUI_KEY``). Every command that opens a store goes through it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fluxgui.adapters.registry import KEY_ENV, OPTIONS, open_store, options_from
from fluxgui.core.ports import OpenOptions, OptionSpec
from fluxgui.core.roles import Store

from . import arguments
from .output import one_line

T = TypeVar("T")

#: the formats ``--store-format`` chooses between when a database holds both
READ_FORMATS = ("flux", "agents")
#: the formats a store is written in (``import``/``copy`` make or choose one)
STORE_FORMATS = ("flux", "agents", "json")


def _flag(spec: OptionSpec, prefix: str) -> str:
    return "--" + prefix + spec.flag.removeprefix("--")


def _dest(spec: OptionSpec, prefix: str) -> str:
    return prefix.replace("-", "_") + spec.name


#: where ``add_store_options`` notes the options it renamed (option name → dest)
RENAMED = "store_option_dests"


def add_store_options(
    parser: argparse.ArgumentParser, *, prefix: str = "", whose: str = "",
    format_flag: str | None = "--store-format", legacy_format: bool = True,
    taken: tuple[str, ...] = (),
) -> None:
    """Add the declared store options to ``parser``.

    ``prefix`` (``"dest-"``) makes ``--dest-key`` and friends (namespace names
    ``dest_key`` …); ``whose`` (``"SOURCE"``) says in the help which store they are for.
    ``format_flag`` adds the choice of format to read (``args.format``; ``None``: the
    command has its own); ``legacy_format`` keeps the previous release's ``--format``
    for it working, hidden (not where ``--format`` meant something else). A flag in
    ``taken`` (``chat``'s own ``--base-url``) becomes ``--store-…`` (namespace
    ``store_…``). Options without a flag (an API key) are left to their environment
    variable."""
    if format_flag is not None:
        text = "which format to read when a database holds both"
        parser.add_argument(
            format_flag, dest="format", choices=READ_FORMATS,
            help=f"{whose}: {text}" if whose else text,
        )
        if legacy_format:
            parser.add_argument("--format", dest="format", choices=READ_FORMATS, help=argparse.SUPPRESS)
    renamed: dict[str, str] = {}
    for spec in OPTIONS:
        if not spec.cli:
            continue
        flag, dest = _flag(spec, prefix), _dest(spec, prefix)
        if flag in taken:
            flag, dest = "--store-" + flag.removeprefix("--"), "store_" + dest
            renamed[spec.name] = dest
        action = parser.add_argument(
            flag,
            dest=dest,
            metavar=spec.metavar,
            # Counts are checked at the parser (a bad --ttl is a usage error).
            type=arguments.count if spec.type is int else spec.type,
            action="append" if spec.repeat else "store",
            default=spec.default,
            help=f"{whose}: {spec.help}" if whose else spec.help,
        )
        # Marked: the README's synopses leave the shared store options out (a flag name
        # alone cannot tell: chat's own --base-url is the provider's).
        action.store_option = True  # type: ignore[attr-defined]
    if renamed:
        parser.set_defaults(**{RENAMED: renamed})


def open_options(args: argparse.Namespace, prefix: str = "", **fields: Any) -> OpenOptions:
    """The declared options of ``args`` (``prefix`` ``"dest_"``: a copy's destination)
    as an :class:`OpenOptions`, with ``fields`` (``writable``, ``format``, …) set too.

    An option not given falls back to its environment variable (``--key`` to
    ``$FLUXGUI_KEY``); an empty variable counts as not set. A repeated option gives a
    tuple."""
    renamed = getattr(args, RENAMED, None) or {}

    def given(spec: OptionSpec) -> Any:
        dest = (renamed.get(spec.name) if not prefix else None) or _dest(spec, prefix)
        return getattr(args, dest, spec.default)

    return options_from(given, **fields)


def option_values(options: OpenOptions) -> dict[str, Any]:
    """The declared options as keywords, for the services that take them that way
    (``import_destination``, ``copy_destination``)."""
    return {spec.name: getattr(options, spec.name) for spec in OPTIONS}


async def open_target(args: argparse.Namespace, *, writable: bool = False) -> Store:
    """Open ``args.target`` with the command's options (read-only unless ``writable``)
    and warn about what the store could not read."""
    store = await open_store(
        args.target, open_options(args, writable=writable, format=args.format)
    )
    warn_about(store)
    return store


async def on_target(args: argparse.Namespace, work: Callable[[Store], Awaitable[T]]) -> T:
    """``work`` done on ``args.target`` opened read-only (:func:`open_target`), the store
    closed after it, whatever happens."""
    store = await open_target(args)
    try:
        return await work(store)
    finally:
        await store.close()


def warn_about(store: Store) -> None:
    """One line on stderr for each file of a folder that could not be read, and when the
    store's items are encrypted but no key was given."""
    for problem in store.problems:
        print(f"fluxgui: skipped {one_line(str(problem), 400)}", file=sys.stderr)
    if store.needs_key and not store.has_key:
        print(
            f"fluxgui: {store.target} holds encrypted items: give the key with --key or "
            f"{KEY_ENV} to read them",
            file=sys.stderr,
        )
