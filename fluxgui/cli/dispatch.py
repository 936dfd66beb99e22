"""``main``: parse, run the command, and turn known errors into one line.

A command's module is imported only when that command runs (``ls`` loads neither the
transfer nor the chat code), and the window (Qt) only when no command is given. Every
known error (:class:`~fluxgui.core.errors.FluxguiError`) ends here: one line on stderr,
URLs redacted and hidden characters visible, exit 3. A usage error exits 2 (argparse).
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Sequence

from fluxgui.core.errors import FluxguiError
from fluxgui.core.redact import install_log_redaction, redact_text
from fluxgui.core.visible import visible

from .errors import EXIT_KNOWN_ERROR
from .parser import COMMANDS, build_parser, build_window_parser, overview

#: command → (its module in this package, the coroutine function that runs it)
HANDLERS: dict[str, tuple[str, str]] = {
    "ls": ("browse", "cmd_ls"),
    "show": ("browse", "cmd_show"),
    "search": ("search", "cmd_search"),
    "index": ("search", "cmd_index"),
    "branches": ("browse", "cmd_branches"),
    "diff": ("browse", "cmd_diff"),
    "branch": ("edit", "cmd_branch"),
    "clear": ("edit", "cmd_edit"),
    "rm": ("edit", "cmd_edit"),
    "export": ("replay", "cmd_export"),  # --eval there, other exports transfer's
    "import": ("transfer", "cmd_import"),
    "copy": ("transfer", "cmd_copy"),
    "chat": ("chat", "cmd_chat"),
    "check": ("doctor", "cmd_check"),
    "merge": ("workspace", "cmd_merge"),
    "repair": ("doctor", "cmd_repair"),
    "rewind": ("doctor", "cmd_rewind"),
    "preflight": ("doctor", "cmd_preflight"),
    "ledger": ("doctor", "cmd_ledger"),
    "review": ("review", "cmd_review"),
    "replay": ("replay", "cmd_replay"),
    "scan": ("scan", "cmd_scan"),
}
assert HANDLERS.keys() == COMMANDS.keys()


def version() -> str:
    """The installed package's version (the source's when it is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("fluxgui")
    except PackageNotFoundError:
        from fluxgui import __version__

        return __version__


def error_line(exc: BaseException) -> str:
    """A known error as the one line the terminal shows: URLs redacted, hidden characters
    visible."""
    return visible(redact_text(str(exc)), keep_layout=False)


def _run_command(argv: list[str]) -> int:
    args = build_parser(argv[0]).parse_args(argv)
    module, name = HANDLERS[args.command]
    handler = getattr(importlib.import_module(f"{__package__}.{module}"), name)
    return asyncio.run(handler(args, sys.stdout))


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``fluxgui ARGV`` (default: the process's arguments); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    install_log_redaction()
    # Stored text may hold anything, lone surrogates included: escape what the terminal
    # cannot encode instead of dying (inside a JSON string the escape is valid JSON).
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        if argv and argv[0] in COMMANDS:
            return _run_command(argv)
        if argv and argv[0] in ("-h", "--help"):
            build_window_parser().print_help()
            sys.stdout.write(overview())
            return 0
        args = build_window_parser().parse_args(argv)
        if args.version:
            print(f"fluxgui {version()}")
            return 0
        from .redact_args import window_detectors

        redact = window_detectors(args)  # (checked before Qt starts)
        from fluxgui.qt.launch import launch

        return launch(args, redact=redact)
    except FluxguiError as exc:
        print(f"fluxgui: error: {error_line(exc)}", file=sys.stderr)
        return EXIT_KNOWN_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
