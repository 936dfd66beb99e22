"""The parser of ``fluxgui review set|ls|next|export|rubric`` (issue 17).

Each action takes ``--reviews URL`` (default ``$FLUXGUI_REVIEWS``, else ``reviews.db``
in fluxgui's data folder) and ``--store-label NAME`` (file the reviews under a name
instead of the store's own key), besides the store options; the README's synopses leave
those shared options out, as they do the store options.
"""

from __future__ import annotations

import argparse
from typing import Any

from . import arguments
from .stores import add_store_options

STATE_CHOICES = ("unreviewed", "in-review", "reviewed", "flagged")
STATES_METAVAR = "|".join(STATE_CHOICES)
ACTIONS = {
    "set": "change a session's review: state, tags, scores, notes",
    "ls": "list reviews (or the unreviewed sessions, paged from the store)",
    "next": "the next unreviewed, unclaimed session (exit 1 when none is left)",
    "export": "write the review results as CSV or JSON",
    "rubric": "show or define the scorecard's criteria",
}


def _shared(parser: argparse.ArgumentParser) -> None:
    for action in (
        parser.add_argument("--reviews", metavar="URL", help="the review database: a SQLAlchemy URL "
                            "(postgresql://… for a team) or a SQLite path (default: $FLUXGUI_REVIEWS, "
                            "else reviews.db in fluxgui's data folder)"),
        parser.add_argument("--store-label", metavar="NAME", help="file the reviews under NAME instead "
                            "of the store's own key (a team names a copied file alike)"),
    ):
        action.store_option = True  # type: ignore[attr-defined]


def add_window_review_options(parser: argparse.ArgumentParser) -> None:
    """The window's ``--reviews URL`` and ``--store-label NAME``: open the review panel
    on that review database, the store's reviews filed under that name."""
    parser.add_argument("--reviews", metavar="URL", help="open the review panel on this review database "
                        "(a SQLAlchemy URL or a SQLite path; default: the one in the settings)")
    parser.add_argument("--store-label", metavar="NAME", action="append", help="file the store's reviews "
                        "under NAME (opens the review panel); with several TARGETs, the label of each in "
                        "the workspace, once per TARGET in order")


def add_export_review_options(parser: argparse.ArgumentParser) -> None:
    """``export --with-reviews``: each session's review results (state, scores, tags,
    notes): under its title in Markdown and HTML, its ``"review"`` in JSON and JSONL."""
    parser.add_argument("--with-reviews", action="store_true", help="add each session's review "
                        "(state, scores, tags, notes): under its title in Markdown and HTML, as "
                        "\"review\" in JSON and JSONL")
    _shared(parser)


def _reviewer(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reviewer", metavar="NAME", help="who is reviewing (default: $FLUXGUI_REVIEWER, else the OS user name)")


def _action(sub: Any, name: str, description: str, examples: list[str]) -> argparse.ArgumentParser:
    epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
    return sub.add_parser(name, help=ACTIONS[name], description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", type=arguments.target, metavar="TARGET",
                        help="the store whose sessions are reviewed (as for 'ls')")


def add_review(sub: Any, name: str, command_parser: Any) -> None:
    """``fluxgui review``: ``command_parser(sub, name, description, examples)`` makes the
    command's own parser (:func:`fluxgui.cli.parser._command`)."""
    review = command_parser(
        sub, name,
        "Review conversations: states, rubric scores, tags and notes kept in a review "
        "database beside the store (never in it); a team shares one PostgreSQL URL.",
        ["fluxgui review next demo --claim", "fluxgui review set demo support-48213-double-charge --state reviewed --score tone=4",
         "fluxgui review ls demo --state flagged --json"],
    )
    actions = review.add_subparsers(dest="review_action", metavar="ACTION", required=True,
                                    help="set, ls, next, export or rubric")

    s = _action(actions, "set", "Change one session's review; every change is kept in its history.",
                ["fluxgui review set demo support-48213-double-charge --state flagged --tag refund --note 'charged twice'",
                 "fluxgui review set demo support-48213-double-charge --message 3 --note 'wrong amount'"])
    _target(s)
    s.add_argument("session_id", metavar="SESSION_ID", help="a session id, as 'ls' prints it")
    # checked by the command (an unknown state is one line, exit 3, as a bad score is)
    s.add_argument("--state", metavar=STATES_METAVAR, help="the review state (in-review claims the session)")
    s.add_argument("--tag", action="append", default=[], metavar="T", help="add a tag (repeatable)")
    s.add_argument("--untag", action="append", default=[], metavar="T", help="remove a tag (repeatable)")
    s.add_argument("--score", action="append", default=[], metavar="NAME=VALUE", help="a rubric score (repeatable)")
    s.add_argument("--note", metavar="TEXT", help="add a note on the session (on a message with --message)")
    s.add_argument("--message", metavar="MESSAGE_ID", help="the message the note is about (its id, as 'show' prints it)")
    s.add_argument("--take-over", action="store_true", help="change it though another reviewer holds "
                   "its claim (the claim passes to you unless the change ends it)")
    _reviewer(s)

    ls = _action(actions, "ls", "List the store's reviews, most recently changed first; --state "
                 "unreviewed lists the sessions without one (the store is paged, never loaded whole).",
                 ["fluxgui review ls demo --state reviewed --json", "fluxgui review ls demo --state unreviewed"])
    _target(ls)
    ls.add_argument("--state", metavar=STATES_METAVAR, help="only reviews in this state")
    ls.add_argument("--tag", metavar="T", help="only reviews carrying this tag")
    ls.add_argument("--reviewer", metavar="NAME", help="only reviews by NAME")
    ls.add_argument("--json", action="store_true", help="print JSON instead of text")

    nx = _action(actions, "next", "The most recently active unreviewed, unclaimed session (exit 1 "
                 "when none is left); --claim takes it for the reviewer, so no one else is handed it "
                 "until the claim expires.",
                 ["fluxgui review next demo", "fluxgui review next demo --claim --reviewer ann --json"])
    _target(nx)
    nx.add_argument("--claim", action="store_true", help="claim the session for the reviewer")
    nx.add_argument("--tag", metavar="T", help="only sessions carrying this tag")
    nx.add_argument("--claim-minutes", type=arguments.count, default=30, metavar="N",
                    help="how long a claim lasts (default 30)")
    _reviewer(nx)
    nx.add_argument("--json", action="store_true", help="print JSON instead of text")

    ex = _action(actions, "export", "Write one row per reviewed session (CSV: id, state, reviewer, a "
                 "column per criterion, tags, notes count, first note, updated_at) or everything, message "
                 "notes included (JSON). The file is written whole or not at all.",
                 ["fluxgui review export demo --format csv -o reviews.csv"])
    _target(ex)
    ex.add_argument("--format", dest="review_format", choices=("csv", "json"), required=True, help="csv or json")
    ex.add_argument("-o", "--output", metavar="FILE", help="the file to write (default: standard output)")

    rb = _action(actions, "rubric", "Show the rubric (the criteria of the scorecard; fluxgui's default "
                 "for customer support until one is set) or define it from a JSON file.",
                 ["fluxgui review rubric show demo", "fluxgui review rubric set reviews.db rubric.json"])
    rb.add_argument("rubric_action", choices=("show", "set"), metavar="show|set", help="show or set")
    rb.add_argument("target", metavar="TARGET_OR_REVIEWS", help="a store (its review database: --reviews or "
                    "the default) or the review database itself")
    rb.add_argument("file", nargs="?", metavar="FILE.json", help="the rubric to set: "
                    '{"criteria": [{"name", "kind": categorical|numeric|boolean, "options" | "min", "max"}]}')

    for parser in (s, ls, nx, ex, rb):
        _shared(parser)
        add_store_options(parser, legacy_format=False)


def nested_synopses(parser: argparse.ArgumentParser, command: str, part: Any) -> list[str]:
    """One README synopsis line per action of a command with actions."""
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    lines = []
    for name, action_parser in sub.choices.items():
        parts = []
        for action in action_parser._actions:
            if action.help == argparse.SUPPRESS or getattr(action, "store_option", False):
                continue
            if "-h" in action.option_strings or "--store-format" in action.option_strings:
                continue
            parts.append(part(action))
        lines.append(" ".join(["fluxgui", command, name, *parts]))
    return lines
