"""docs/FORMATS.md cannot go stale silently: every path it names exists (fluxgui's in this
tree, a library's among the files of the installed distribution), the library versions it
names are the installed ones, and a library it says is not installed is not."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "FORMATS.md"
#: the top-level package of a library path, and the distribution that installs it
LIBRARIES = {
    "flux": "flux-agents",
    "agents": "openai-agents",
    "openai": "openai",
    "hello_agents": "hello-agents",
}
#: folders of this tree a backticked path may start with
TREE = ("fluxgui/", "tests/", "docs/")

FLUXGUI_PATH = re.compile(r"(?<![\w/.-])fluxgui/[\w./-]*[\w/]")
BACKTICKED_PY = re.compile(r"`([^`\s]+\.py)`")
VERSION = re.compile(r"(?<![\w-])(flux-agents|openai-agents|openai|hello-agents) (\d+(?:\.\d+)+)\b")
NOT_INSTALLED = re.compile(r"`([\w.-]+)` is not installed")
MAX_LINE = 120


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _files(dist: str) -> set[str]:
    return {str(f).replace("\\", "/") for f in metadata.files(dist) or ()}


def test_every_fluxgui_path_exists() -> None:
    paths = set(FLUXGUI_PATH.findall(_doc()))
    assert len(paths) >= 20, f"the page names fluxgui's readers: only found {sorted(paths)}"
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"docs/FORMATS.md names paths that do not exist: {missing}"


def test_every_backticked_module_path_exists() -> None:
    text = _doc()
    declared_absent = set(NOT_INSTALLED.findall(text))
    problems = []
    checked = 0
    for path in sorted(set(BACKTICKED_PY.findall(text))):
        top = path.split("/", 1)[0]
        if path.startswith(TREE):
            if not (ROOT / path).is_file():
                problems.append(f"{path}: no such file in this tree")
        elif "/" in path and top in LIBRARIES:
            dist = LIBRARIES[top]
            if _version(dist) is None:
                if dist not in declared_absent:
                    problems.append(f"{path}: {dist} is not installed and the page does not say so")
            elif path not in _files(dist):
                problems.append(f"{path}: not a file of {dist} {_version(dist)}")
        else:
            problems.append(f"{path}: name a path from fluxgui/, tests/ or a library's package")
        checked += 1
    assert checked >= 30, f"only {checked} module paths found: is the pattern still right?"
    assert not problems, "\n".join(problems)


def test_named_library_versions_are_the_installed_ones() -> None:
    named = VERSION.findall(_doc())
    dists = {d for d, _v in named}
    assert {"flux-agents", "openai-agents"} <= dists, f"versions found: {named}"
    wrong = sorted(
        f"{dist} {version} (installed: {_version(dist) or 'none'})"
        for dist, version in set(named)
        if _version(dist) != version
    )
    assert not wrong, f"docs/FORMATS.md names versions that are not installed: {wrong}"


def test_libraries_said_to_be_absent_are_absent() -> None:
    absent = set(NOT_INSTALLED.findall(_doc()))
    installed = sorted(f"{d} {_version(d)}" for d in absent if _version(d) is not None)
    assert not installed, f"docs/FORMATS.md says these are not installed, but they are: {installed}"


def test_lines_fit() -> None:
    long = [n for n, line in enumerate(_doc().splitlines(), 1) if len(line) > MAX_LINE]
    assert not long, f"lines over {MAX_LINE} characters: {long}"
