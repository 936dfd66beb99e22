"""Opening a store imports only what its format needs (the registry's lazy imports).

A ``ls`` of a flux SQLite file loads neither the Redis driver, nor the encryption code
(nor ``cryptography``), nor the Agents SDK or ``AdvancedSQLiteSession`` stores, nor the
JSON folder store, nor SQLAlchemy; an Agents SDK file loads its store and the envelope
reader, still without ``cryptography`` (no key given) or the other formats.
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
        return [s.id for s in (await store.list_sessions()).sessions]

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
            await store.add_messages("s1", [{"role": "user", "content": "hi"}])

    asyncio.run(make())
    ids, modules = loaded(path)
    assert ids == ["s1"]
    assert matching(modules, NEVER) == []
    assert f"fluxgui.adapters.sql.{fmt}" in modules  # the check looks at the right names
    if fmt == "flux":
        assert matching(modules, ("fluxgui.adapters.encryption", "fluxgui.adapters.sql.agents")) == []
