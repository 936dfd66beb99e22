"""What the package says about itself (issue 15 point 11): a license file that matches
its metadata, and a package-page description with no relative link that would break
there (the README's screenshot is left out of it by the build's readme hook)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_license_file_is_the_one_the_metadata_names():
    assert PROJECT["project"]["license"] == "MIT"
    assert PROJECT["project"]["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_the_package_description_has_no_relative_image():
    hook = PROJECT["tool"]["hatch"]["metadata"]["hooks"]["fancy-pypi-readme"]
    assert "readme" in PROJECT["project"]["dynamic"]
    text = "".join((REPO / f["path"]).read_text(encoding="utf-8") for f in hook["fragments"])
    assert re.search(r"!\[[^\]]*\]\(docs/", text)  # the README shows the screenshot
    for sub in hook["substitutions"]:
        text = re.sub(sub["pattern"], sub["replacement"], text)
    assert not re.search(r"!\[[^\]]*\]\((?!https?://)", text)
    assert "## Command line" in text and text.startswith("```")  # the rest is kept


def test_the_test_line_runs_the_type_checker_the_extras_install() -> None:
    """The README's test line (what .ci/run runs) type-checks the package before the
    suite, with the mypy the test extras pin."""
    import re
    import tomllib

    root = Path(__file__).resolve().parent.parent
    line = next(
        ln for ln in (root / "README.md").read_text(encoding="utf-8").splitlines()
        if re.match(r"^python3 -m venv \.venv && .*pytest", ln)
    )
    assert ".venv/bin/mypy &&" in line and line.index("mypy") < line.index("pytest")
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(dep.startswith("mypy>=") and "<" in dep for dep in config["project"]["optional-dependencies"]["test"])
    assert config["tool"]["mypy"]["files"] == ["fluxgui"]
