"""The parser of ``fluxgui replay`` and the eval options of ``fluxgui export`` (issue 38):
replay a session from turn N with another model, its tools answered from the record;
write eval datasets from sessions."""

from __future__ import annotations

import argparse
from typing import Any

from . import arguments
from .review_parser import STATE_CHOICES
from .stores import add_store_options

EVAL_FORMATS = ("jsonl", "promptfoo", "openai", "langfuse", "langsmith")
MATCH_MODES = ("strict", "name")


def turn_number(text: str) -> int:
    """A turn number: a whole number from 1."""
    value = arguments.count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("turns are numbered from 1")
    return value


def min_score(text: str) -> tuple[str, float]:
    """``NAME=V``: a rubric score's name and the least value kept (a number)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError("use NAME=V (a rubric score and the least value, e.g. tone=4)")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None


def add_replay(sub: Any, name: str, command_parser: Any) -> None:
    """``fluxgui replay``: ``command_parser(sub, name, description, examples)`` makes the
    command's own parser (:func:`fluxgui.cli.parser._command`)."""
    p = command_parser(
        sub, name,
        "Replay a session from turn N with another model, prompt or temperature into a fork "
        "(the original is not changed): each recorded user message from turn N is sent in "
        "turn, with the replayed answers before it. The recorded tools are offered to the "
        "model and answered from the record, never run; a call with no recorded match stops "
        "the replay (exit 1) unless --unmatched gives a text for it. Exit 0 when every turn "
        "was replayed, 3 on an error (turns replayed before stay in the fork).",
        ["fluxgui replay sessions.db conv-42 --from-turn 3",
         "fluxgui replay sessions.db conv-42 --from-turn 1 --provider openai "
         "--base-url http://127.0.0.1:8000/v1 --instructions 'Be brief.' --json"],
    )
    p.add_argument("target", type=arguments.target, metavar="TARGET",
                   help="the store holding the session (opened writable: the fork is written there)")
    p.add_argument("session_id", metavar="SESSION_ID", help="a session id, as 'ls' prints it")
    p.add_argument("--from-turn", type=turn_number, required=True, metavar="N",
                   help="the first turn replayed (turns are numbered from 1, as 'diff' numbers them)")
    p.add_argument("--provider", choices=("offline", "openai", "ollama"), default="offline",
                   help="offline (built in, no network, deterministic; the default), openai (any "
                   "OpenAI-compatible endpoint) or ollama")
    p.add_argument("--base-url", metavar="URL", help="the endpoint: …/v1 for openai, http://HOST:11434 for ollama")
    p.add_argument("--model", metavar="M", help="the model name (default: gpt-4o-mini for openai, llama3.2 for ollama)")
    p.add_argument("--instructions", metavar="TEXT", default="", help="the agent's system prompt")
    p.add_argument("--temperature", type=arguments.temperature, default=0.7, metavar="T",
                   help="sampling temperature, 0 to 2 (default 0.7)")
    p.add_argument("--timeout", type=arguments.seconds, default=60.0, metavar="SECONDS",
                   help="how long to wait for the server (default 60)")
    p.add_argument("--match", choices=MATCH_MODES, default="strict",
                   help="strict: a call matches a recorded call of its turn with the same name and "
                   "JSON-equal arguments (the default); name: the first unused one of that name")
    p.add_argument("--unmatched", metavar="TEXT",
                   help="answer a call with no recorded match with TEXT and go on (default: stop there)")
    p.add_argument("--name", metavar="NEW_ID", help="the fork's id (default: SESSION_ID-fork, …)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_store_options(p, taken=("--base-url",))


def add_eval_options(parser: argparse.ArgumentParser) -> None:
    """``export --eval FORMAT`` and the review filter that chooses its sessions."""
    parser.add_argument(
        "--eval", choices=EVAL_FORMATS, metavar="|".join(EVAL_FORMATS),
        help="write an eval dataset instead: one item per assistant turn (the history with "
        "every call and its output, the recorded answer as reference): jsonl, promptfoo test "
        "cases (YAML; JSON when PATH ends with .json), openai (chat fine-tuning JSONL), "
        "langfuse or langsmith import lines",
    )
    parser.add_argument("--review-state", choices=STATE_CHOICES, metavar="|".join(STATE_CHOICES),
                        help="with --eval: only sessions in this review state")
    parser.add_argument("--tag", metavar="T", help="with --eval: only sessions with this review tag")
    parser.add_argument("--min-score", type=min_score, action="append", default=[], metavar="NAME=V",
                        help="with --eval: only sessions whose review scores NAME at least V (repeatable)")
