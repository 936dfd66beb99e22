"""Headless commands over the services, and the window when no command is given.

    fluxgui [TARGET] [--session ID] [--writable] [--screenshot FILE.png]   open the window
    fluxgui ls TARGET [--json] [--search TEXT] [--limit N]      list sessions
    fluxgui show TARGET SESSION_ID [--json] [--limit N] [--branch B]   show one session
    fluxgui branches TARGET SESSION_ID [--json] [--usage]       an AdvancedSQLiteSession's branches
    fluxgui branch TARGET SESSION_ID --at MESSAGE_ID [--name NEW_ID]   fork a session
    fluxgui diff TARGET A B [--json] [--branch-a X] [--branch-b Y]   compare two sessions or branches
    fluxgui clear TARGET SESSION_ID --yes                       remove a session's messages
    fluxgui rm TARGET SESSION_ID --yes                          delete a session
    fluxgui export TARGET [SESSION_ID…] -o PATH [--format json|jsonl|md|html] [--no-metadata] [--force]
    fluxgui import TARGET FILE… [--format flux|agents] [--rename]
    fluxgui copy SOURCE DEST [SESSION_ID…] [--format flux|agents] [--rename]
    fluxgui chat TARGET SESSION_ID --message TEXT [--provider offline|openai|ollama]
                 [--base-url URL] [--model NAME] [--copy]     test-chat with a session

``show`` reads the ``main`` branch of an AdvancedSQLiteSession store unless ``--branch``
names another; ``branches`` lists a session's branches as the library's
``list_branches()`` does (``--usage`` adds token usage per branch and per turn).

``export`` writes one file (format from ``--format`` or PATH's suffix), complete or not
at all; ``-o -`` writes to standard output. ``import`` reads fluxgui's JSON/JSONL exports
and HelloAgent JSON session files; ``import`` and ``copy`` write new sessions, one
transaction each, and make a new SQLite store when the target path does not exist
(``--format`` says which; default: the Agents SDK format for items, else flux).

``chat`` streams the agent's reply to standard output as it arrives and then saves the
user's message and the reply in the session (with ``--copy``: in a fork of it, the
original untouched); on a provider error nothing is saved. The OpenAI provider takes its
key from ``OPENAI_API_KEY``.

``diff`` exits 0 when the sessions are the same and 1 when they differ.
A known error prints one line on stderr and exits 3; a usage error exits 2 (so does
``clear``/``rm`` without ``--yes`` when there is no terminal to ask on).

The package: :mod:`~fluxgui.cli.dispatch` (``main``: parse, run, the error sink),
:mod:`~fluxgui.cli.parser` (argparse), :mod:`~fluxgui.cli.stores` (the store flags built
from the adapters' declared options, and the typed open options), :mod:`~fluxgui.cli.output`
(terminal-safe text and JSON), and one module per command group:
:mod:`~fluxgui.cli.browse` (ls, show, branches, diff), :mod:`~fluxgui.cli.edit` (clear,
rm, branch), :mod:`~fluxgui.cli.transfer` (export, import, copy), :mod:`~fluxgui.cli.chat`.
"""

from __future__ import annotations

from .dispatch import main
from .parser import build_parser, build_window_parser

__all__ = ["build_parser", "build_window_parser", "main"]
