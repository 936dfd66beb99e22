"""The transfer commands: ``export`` (to a file or standard output), ``import`` (exports
and session files as new sessions) and ``copy`` (sessions into another store).

The work is :mod:`fluxgui.services.transfer`'s: a file appears complete or not at all,
every imported file is checked before the store is touched, and a new store is built
beside its path and moved there once every session is written.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

from fluxgui.core.errors import UnreadableItems, show_id
from fluxgui.core.text import plural

from .errors import EXIT_USAGE, Known, drop_hint
from .output import one_line, size
from .stores import open_options, open_target, option_values, warn_about

if TYPE_CHECKING:
    from fluxgui.services.transfer import TransferResult


def _export_format(args: argparse.Namespace) -> str | None:
    from fluxgui.services.export import format_for_path

    if args.export_format:
        return args.export_format
    if args.output == "-":
        return "json"
    return format_for_path(args.output)


async def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    """``export``: the sessions (all, or the ones named) to ``-o PATH`` or stdout."""
    from pathlib import Path

    from fluxgui.services.export import export_sessions, export_to_stream

    fmt = _export_format(args)
    if fmt is None:  # a usage error, before the store is opened
        from fluxgui.core.export import EXPORT_FORMATS

        print(
            f"fluxgui: error: export: cannot tell the format from {show_id(args.output)}: "
            f"pass --file-format ({'|'.join(EXPORT_FORMATS)})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from .redact_args import redactor_for, report_left

    redactor = redactor_for(args)
    transform = redactor.page if redactor is not None else None
    unchanged = redactor.unchanged_rows if redactor is not None else None
    transform_id = redactor.session_id if redactor is not None else None
    store = await open_target(args)
    reviews = annotate = None
    try:
        if getattr(args, "with_reviews", False):
            from fluxgui.services.reviews import ReviewDB, review_key
            from fluxgui.services.reviews.results import annotator

            reviews = await ReviewDB.open(args.reviews, stores=[store])
            annotate = annotator(reviews, review_key(store.store_key, args.store_label))
        if args.output == "-":
            result = await export_to_stream(
                store, out, fmt, session_ids=args.session_ids or None,
                metadata=not args.no_metadata, annotate=annotate, transform=transform,
                unchanged=unchanged, transform_id=transform_id,
            )
            out.flush()
            where, report = "standard output", sys.stderr
        else:
            result = await export_sessions(
                store, Path(args.output), fmt, session_ids=args.session_ids or None,
                metadata=not args.no_metadata, force=args.force, annotate=annotate,
                transform=transform, unchanged=unchanged, transform_id=transform_id,
            )
            where, report = one_line(args.output, 400), out
    finally:
        if reviews is not None:
            await reviews.close()
        await store.close()
    written = f", {size(result.bytes)}" if args.output != "-" and result.bytes else ""
    report.write(
        f"exported {plural(result.sessions, 'session')} "
        f"({plural(result.messages, 'message')}{written}) to {where}\n"
    )
    for note in result.notes:
        print(f"fluxgui: {note}", file=sys.stderr)
    report_left(redactor)
    return 0


def _report_written(out: TextIO, verb: str, result: TransferResult, where: str) -> None:
    out.write(
        f"{verb} {plural(result.sessions, 'session')} "
        f"({plural(result.messages, 'message')}) into {where}\n"
    )
    out.writelines(
        f"renamed {show_id(old)} to {show_id(new)}\n" for old, new in result.renamed
    )


@contextlib.contextmanager
def _hints(taken: type[Exception], verb: str) -> Iterator[None]:
    """An id taken, or items no key opens, said with what to do about it."""
    try:
        yield
    except taken as exc:
        raise _taken_hint(exc) from None
    except UnreadableItems as exc:
        raise drop_hint(exc, verb) from None


def _taken_hint(exc: Exception) -> Known:
    return Known(f"{exc} (pass --rename to write it under a new id)")


async def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    """``import``: exports and session files as new sessions of TARGET (made when it
    does not exist)."""
    from pathlib import Path

    from fluxgui.services.transfer import (
        IdTaken,
        import_destination,
        import_files,
        scan_files,
    )

    files = [Path(f) for f in args.files]
    plan = await asyncio.to_thread(scan_files, files)  # every file checked before the store is touched
    async with import_destination(
        args.target, plan, files, fmt=args.format, **option_values(open_options(args)),
    ) as store:
        with _hints(IdTaken, "import"):
            result = await import_files(
                store, files, rename=args.rename, plan=plan,
                drop_unreadable=args.drop_unreadable,
            )
        where = store.target
    _report_written(out, "imported", result, where)
    return 0


async def cmd_copy(args: argparse.Namespace, out: TextIO) -> int:
    """``copy``: sessions of SOURCE into DEST (made when it does not exist), converted to
    DEST's format."""
    from fluxgui.adapters.registry import open_store
    from fluxgui.services.transfer import IdTaken, copy_destination, copy_sessions

    from .redact_args import redactor_for, report_left

    redactor = redactor_for(args)
    source_options = open_options(args, format=args.format)
    source = await open_store(args.source, source_options)
    warn_about(source)
    try:
        if args.session_ids:
            for sid in args.session_ids:  # an unknown id stops it before DEST is made
                await source.reader.require_session(sid)
        async with copy_destination(
            args.dest, source, fmt=args.dest_format,
            source_target=args.source, source_prefix=source_options.key_prefix,
            **option_values(open_options(args, "dest_")),
        ) as dest:
            with _hints(IdTaken, "copy"):
                result = await copy_sessions(
                    source, dest, args.session_ids or None, rename=args.rename,
                    drop_unreadable=args.drop_unreadable,
                    transform=redactor.page if redactor is not None else None,
                    transform_id=redactor.session_id if redactor is not None else None,
                )
            where = dest.target
    finally:
        await source.close()
    _report_written(out, "copied", result, where)
    report_left(redactor)
    return 0
