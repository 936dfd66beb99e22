"""The shape of the package, checked: the import-linter contracts of ``pyproject.toml``
(layers, the adapters reached only through the opening registry, no import cycles) and
the size of its modules (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "fluxgui"
#: no module of the package grows past this many lines
MAX_LINES = 500
#: a capability probe: attributes of a store looked up by name, a store's concrete class
#: tested, or its current branch switched
PROBE = re.compile(r"\b(getattr|hasattr)\((self\.)?_?store\b|isinstance\([^)]*Store\b|\.set_branch\(")


def test_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_module_is_over_the_limit() -> None:
    sizes = {
        path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert sizes, "no modules found"
    too_big = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not too_big, too_big


def test_no_capability_probing_outside_the_adapters() -> None:
    """Callers ask ``store.capabilities``; they never probe a store's attributes, test its
    concrete class or switch its branch."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PACKAGE / "adapters"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if PROBE.search(code):
                offenders.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not offenders, offenders
