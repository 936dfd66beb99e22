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
