"""Headless commands over the services, and the window when no command is given.

``fluxgui --help`` lists the commands and ``fluxgui COMMAND -h`` shows each one's options
and examples; the README's "Command line" section carries the same synopses (a test keeps
them in step with the parser, :func:`fluxgui.cli.parser.synopsis`). A known error prints
one line on stderr and exits 3; a usage error exits 2.

The package: :mod:`~fluxgui.cli.dispatch` (``main``: parse, run, the error sink),
:mod:`~fluxgui.cli.parser` (argparse), :mod:`~fluxgui.cli.arguments` (value types),
:mod:`~fluxgui.cli.stores` (the store flags built from the adapters' declared options,
and the typed open options), :mod:`~fluxgui.cli.output` (terminal-safe text and JSON), and
one module per command group: :mod:`~fluxgui.cli.browse` (ls, show, branches, diff),
:mod:`~fluxgui.cli.edit` (clear, rm, branch), :mod:`~fluxgui.cli.transfer` (export,
import, copy), :mod:`~fluxgui.cli.chat`.
"""

from __future__ import annotations

from .dispatch import main
from .parser import build_parser, build_window_parser

__all__ = ["build_parser", "build_window_parser", "main"]
