"""Real file systems for tests of folders that are full or read-only: a tmpfs mounted for
the test (root can mount; CI runs as root). Where mounting is refused the test is
skipped locally and fails in CI (``CI`` set), as the server fixtures do."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        why = f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode})"
        if os.environ.get("CI"):
            pytest.fail(f"{why}: CI runs as root and must run these tests")
        pytest.skip(why)


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``64k``) mounted on ``folder`` (made), unmounted after."""
    folder.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def read_only(folder: Path) -> None:
    """Remount the tmpfs on ``folder`` read-only."""
    _mount("-o", "remount,ro", str(folder))
