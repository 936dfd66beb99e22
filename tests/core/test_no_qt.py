"""The core, the adapters, the services and the CLI commands never load Qt."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from helpers import cli_env

SCRIPT = r"""
import asyncio, importlib, io, json, pkgutil, sys, tempfile, os

import fluxgui.core
import fluxgui.core.model
import fluxgui.core.errors
import fluxgui.adapters
for info in pkgutil.walk_packages(fluxgui.adapters.__path__, "fluxgui.adapters."):
    importlib.import_module(info.name)
import fluxgui.services
for pkg in (fluxgui.core, fluxgui.services):
    for info in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{info.name}")
import fluxgui.cli

from fluxgui.adapters import open_store
from fluxgui.services.browse import list_sessions

async def main(path):
    async with await open_store(path, create="flux") as store:
        await store.writer.add_messages("s1", [{"role": "user", "content": "hi"}])
    async with await open_store(path) as store:
        listing = await list_sessions(store)
    # The SQLAlchemy/asyncpg road too (a closed port: it fails fast, after importing all).
    from fluxgui.core.errors import StoreUnavailable
    try:
        await open_store("postgresql+asyncpg://root@127.0.0.1:1/none")
    except StoreUnavailable:
        pass
    assert "sqlalchemy.ext.asyncio" in sys.modules and "asyncpg" in sys.modules
    return [s.id for s in listing.sessions]

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "store.db")
    ids = asyncio.run(main(path))
    out = io.StringIO()
    sys.stdout, real = out, sys.stdout
    try:
        code = fluxgui.cli.main(["ls", path, "--json"])
        code2 = fluxgui.cli.main(["show", path, "s1", "--json"])
    finally:
        sys.stdout = real

loaded = sorted(
    name for name in sys.modules
    if name.split(".")[0] in ("PySide6", "shiboken6", "qasync", "PyQt5", "PyQt6")
    or name.startswith("fluxgui.qt")
)
print(json.dumps({"ids": ids, "codes": [code, code2], "loaded": loaded,
                  "modules": sorted(n for n in sys.modules if n.startswith("fluxgui"))}))
"""


def test_core_adapters_services_cli_do_not_import_qt():
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["ids"] == ["s1"]
    assert report["codes"] == [0, 0]
    # The script really loaded what it claims to check.
    for name in (
        "fluxgui.core.model",
        "fluxgui.adapters.sql.flux",
        "fluxgui.adapters.sql.agents",
        "fluxgui.adapters.sql.backend",
        "fluxgui.services.browse",
        "fluxgui.cli",
    ):
        assert name in report["modules"]
    assert report["loaded"] == []


def test_qt_is_installed_so_the_check_means_something():
    """PySide6 is importable here: its absence above is a property of fluxgui, not of the venv."""
    result = subprocess.run(
        [sys.executable, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('PySide6') is None)"],
        capture_output=True,
        env=cli_env(),
        timeout=60,
    )
    assert result.returncode == 0
