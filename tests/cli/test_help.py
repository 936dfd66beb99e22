"""The command line explains itself and keeps its promises (issue 15 points 5–7): every
command has a description, help on each argument and examples; the README's synopses are
the parser's; ``--version``; the previous release's flag spellings still work."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from helpers import run_cli

from fluxgui.cli import main
from fluxgui.cli.parser import COMMANDS, build_parser, build_window_parser, overview, synopsis

README = Path(__file__).resolve().parents[2] / "README.md"


def _sub(command: str) -> argparse.ArgumentParser:
    [action] = [a for a in build_parser(command)._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices[command]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_describes_itself_and_every_argument(command):
    parser = _sub(command)
    assert parser.description and parser.description.endswith((".", ")"))
    assert parser.epilog and parser.epilog.startswith("examples:\n  fluxgui " + command)
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or "-h" in action.option_strings:
            continue
        assert action.help, (command, action.dest)


def test_the_window_parser_has_help_on_every_argument():
    for action in build_window_parser()._actions:
        assert action.help, action.dest


def test_the_command_list_is_aligned():
    lines = [line for line in overview().splitlines() if line.startswith("  ") and line.split()[0] in COMMANDS]
    assert [line.split()[0] for line in lines] == list(COMMANDS)
    columns = {len(line) - len(line[2:].split(" ", 1)[1].lstrip()) for line in lines}
    assert len(columns) == 1, lines


def test_the_readme_synopses_are_the_parsers():
    text = README.read_text(encoding="utf-8")
    block = text.split("## Command line\n", 1)[1].split("```", 2)[1]
    shown = [line for line in block.splitlines() if line.startswith("fluxgui")]
    expected = [synopsis(None)] + [line for c in COMMANDS for line in synopsis(c).split("\n")]
    expected += ["fluxgui --version"]
    assert shown == expected


def test_version(capsys):
    from importlib.metadata import version

    for flag in ("--version", "-V"):
        assert main([flag]) == 0
        assert capsys.readouterr().out == f"fluxgui {version('fluxgui')}\n"


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["ls", "x.db", "--format", "flux"], "format", "flux"),
        (["export", "x.db", "-o", "out", "--format", "md"], "export_format", "md"),
        (["import", "x.db", "f.json", "--format", "json"], "format", "json"),
        (["copy", "a.db", "b.db", "--format", "json"], "dest_format", "json"),
        (["copy", "a.db", "b.db", "--source-format", "flux"], "format", "flux"),
    ],
)
def test_old_spellings_still_work_and_stay_out_of_the_help(argv, dest, value):
    args = build_parser(argv[0]).parse_args(argv)
    assert getattr(args, dest) == value
    assert not re.search(r"--format\b|--source-format", _sub(argv[0]).format_help())


def test_the_demo_examples_run(tmp_path):
    """Every example that reads the demo store works as written."""
    examples = [line.strip() for c in COMMANDS for line in (_sub(c).epilog or "").splitlines()[1:]]
    demo = [e for e in examples if " demo" in e and e.split()[1] in ("ls", "show", "export")]
    assert len(demo) >= 3
    for example in demo:
        result = run_cli(*example.split()[1:], cwd=tmp_path)
        assert result.returncode == 0, (example, result.stderr)
