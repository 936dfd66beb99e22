"""Opening a store imports only what its format needs (the registry's lazy imports).

A ``ls`` of a flux SQLite file loads neither the Redis driver, nor the encryption code
(nor ``cryptography``), nor the Agents SDK or ``AdvancedSQLiteSession`` stores, nor the
JSON folder store, nor SQLAlchemy; an Agents SDK file loads its store and the envelope
reader, still without ``cryptography`` (no key given) or the other formats.

``fluxgui ls`` and ``show`` of a plain SQLite store load only what they use (issue 19): no
other command's code or parser, no search or export pieces (speed targets live in
benchmarks/bench_search.py's CLI part).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from helpers import cli_env

from fluxgui.adapters import open_store

SCRIPT = r"""
import asyncio, json, sys

from fluxgui.adapters import open_store

async def main(path):
    async with await open_store(path) as store:
        return [s.id for s in (await store.reader.list_sessions()).sessions]

ids = asyncio.run(main(sys.argv[1]))
print(json.dumps({"ids": ids, "modules": sorted(sys.modules)}))
"""

#: never loaded to read a SQLite file of either format
NEVER = ("redis", "cryptography", "sqlalchemy", "fluxgui.adapters.jsonfolder",
         "fluxgui.adapters.redis.connect", "fluxgui.adapters.sql.advanced")


def loaded(path: str) -> tuple[list[str], list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, path], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return report["ids"], report["modules"]


def matching(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


@pytest.mark.parametrize("fmt", ["flux", "agents"])
def test_a_sqlite_file_loads_only_its_format(tmp_path, fmt):
    path = str(tmp_path / f"{fmt}.db")

    async def make() -> None:
        async with await open_store(path, create=fmt) as store:
            await store.writer.add_messages("s1", [{"role": "user", "content": "hi"}])

    asyncio.run(make())
    ids, modules = loaded(path)
    assert ids == ["s1"]
    assert matching(modules, NEVER) == []
    assert f"fluxgui.adapters.sql.{fmt}" in modules  # the check looks at the right names
    if fmt == "flux":
        assert matching(modules, ("fluxgui.adapters.encryption", "fluxgui.adapters.sql.agents")) == []


CLI_SCRIPT = r"""
import sys
from fluxgui.cli import main

code = main(sys.argv[1:])
modules = sorted(sys.modules)
import json
print(json.dumps({"code": code, "modules": modules}), file=sys.stderr)
"""

#: what ``ls`` and ``show`` of a plain SQLite store never load: other formats and their
#: drivers, the encryption code, export writers, AdvancedSQLiteSession stores, the search
#: index and matcher, the other commands and their parsers, Qt; nor the standard modules
#: only those need (shutil: argparse's terminal width, found without it here)
CLI_NEVER = NEVER + (
    "PySide6", "qasync", "shiboken6", "fluxgui.qt", "fluxgui.adapters.encryption",
    "fluxgui.core.export", "fluxgui.core.mdsafe", "fluxgui.services.export",
    "fluxgui.services.transfer", "fluxgui.services.index", "fluxgui.adapters.sql.agents",
    "agents", "flux", "openai", "tiktoken", "tempfile", "html",
    "asyncpg", "psycopg", "keyring", "httpx", "shutil", "bz2", "lzma", "zipfile",
    "unicodedata", "importlib.metadata", "importlib.resources",
    "fluxgui.cli.review_parser", "fluxgui.cli.review", "fluxgui.cli.doctor_args",
    "fluxgui.cli.doctor", "fluxgui.cli.search_args", "fluxgui.cli.search",
    "fluxgui.cli.transfer", "fluxgui.cli.edit", "fluxgui.cli.chat",
    "fluxgui.services.doctor", "fluxgui.services.reviews", "fluxgui.core.demo",
    "fluxgui.services.compare", "fluxgui.core.hits", "fluxgui.core.turns",
    "fluxgui.core.changes", "fluxgui.core.storekey", "fluxgui.adapters.textmatch",
    "fluxgui.adapters.session", "fluxgui.adapters.sql.editor",
    "fluxgui.adapters.sql.fluxpages", "fluxgui.adapters.sql.alchemy",
)
#: ... and what ``ls`` does not load either (``show`` parses the rows' JSON metadata)
LS_NEVER = ("json",)


@pytest.mark.parametrize("command", ["ls", "show"])
def test_the_commands_of_a_plain_sqlite_store_import_only_what_they_use(tmp_path, command):
    path = str(tmp_path / "flux.db")

    async def make() -> None:
        async with await open_store(path, create="flux") as store:
            await store.writer.add_messages("s1", [{"role": "user", "content": "hi"}])

    asyncio.run(make())
    args = [command, path] + (["s1"] if command == "show" else [])
    result = subprocess.run([sys.executable, "-c", CLI_SCRIPT, *args], capture_output=True,
                            text=True, env=cli_env(), timeout=120)
    report = json.loads(result.stderr.strip().splitlines()[-1])
    assert report["code"] == 0 and "s1" in result.stdout
    assert matching(report["modules"], CLI_NEVER + (LS_NEVER if command == "ls" else ())) == []
    assert "fluxgui.adapters.sql.flux" in report["modules"]  # the check names real modules
