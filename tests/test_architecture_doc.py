"""docs/ARCHITECTURE.md stays a true one-page map: at most 80 lines of at most 120
characters; every path it names exists; every name it cites is defined (``path.py:Name``:
in that file; a bare ``Name`` or ``name()``: somewhere in the package); and the layers it
lists are the import-linter contract's."""

from __future__ import annotations

import ast
import builtins
import re
import tomllib
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "ARCHITECTURE.md"
PACKAGE = REPO / "fluxgui"

CODE = re.compile(r"`([^`\n]+)`")
PATHLIKE = re.compile(r"^[\w./-]+(/|\.py|\.md|\.toml)$|^[\w./-]+\.py:\w+$")
NAME = re.compile(r"^(?:[A-Z][A-Za-z0-9]+|[a-z_][a-z0-9_]*\(\))$")


def _text() -> str:
    return DOC.read_text(encoding="utf-8")


def _where(path: str) -> Path | None:
    """A path as the map writes it: from ``fluxgui/`` (the package's own), else from the
    repository's root (``tests/``, ``pyproject.toml``)."""
    for base in (PACKAGE, REPO):
        if (base / path).exists():
            return base / path
    return None


def _defined_in(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


@cache
def _package_names() -> frozenset[str]:
    out: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        out |= _defined_in(path)
    return frozenset(out)


def test_the_map_fits_on_a_page() -> None:
    lines = _text().splitlines()
    assert len(lines) <= 80, len(lines)
    long = [n for n, line in enumerate(lines, 1) if len(line) > 120]
    assert not long, long


def test_every_path_it_names_exists() -> None:
    missing = []
    for token in CODE.findall(_text()):
        for part in token.split():
            part = part.strip(",;()")
            if not PATHLIKE.match(part):
                continue
            path, _, name = part.partition(":")
            found = _where(path)
            if found is None:
                missing.append(part)
            elif name and name not in _defined_in(found):
                missing.append(part)
    assert not missing, f"docs/ARCHITECTURE.md names what does not exist: {missing}"


def test_every_name_it_cites_is_defined() -> None:
    names = _package_names()
    unknown = [
        t for t in CODE.findall(_text())
        if NAME.match(t) and t.removesuffix("()") not in names and t not in dir(builtins)
    ]
    assert not unknown, f"docs/ARCHITECTURE.md cites names the package does not define: {unknown}"


def test_the_layers_it_draws_are_the_contracts() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(
        c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"
    )
    text = _text()
    words = ["one", "two", "three", "four", "five", "six", "seven"]
    assert f"{words[len(layers) - 1].capitalize()} layers" in text
    drawn = re.findall(r"^(\w+)/ ", text, re.M)
    assert drawn[: len(layers)] == layers


def test_the_checks_see_what_they_look_for() -> None:
    assert PATHLIKE.match("adapters/handle.py") and PATHLIKE.match("core/roles.py:Traits")
    assert PATHLIKE.match("services/workspace/") and not PATHLIKE.match("store.reader")
    assert NAME.match("OpenStore") and NAME.match("open_store()") and not NAME.match("store.reader")
    assert "OpenStore" in _package_names() and "NoSuchThing" not in _package_names()
