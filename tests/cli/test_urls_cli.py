"""The URL forms a newcomer types (issue 15 points 1 and 2): a bare ``postgresql://`` and
Heroku's ``postgres://`` use asyncpg; a URL fluxgui cannot use is one line, exit 3,
naming what to do."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from helpers import assert_known_error, ok_lines, run_cli, write_agents

from fluxgui.cli.errors import EXIT_KNOWN_ERROR


def _write_pg_store(url: str) -> None:
    """An Agents SDK store written by the real ``SQLAlchemySession``."""
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    async def write() -> None:
        s = SQLAlchemySession.from_url("conv-1", url=url, create_tables=True)
        try:
            await s.add_items([{"role": "user", "content": "Where is my refund?"}])
        finally:
            await s.engine.dispose()

    asyncio.run(write())


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_a_bare_postgres_url_uses_asyncpg(pg_url, tmp_path, scheme):
    _write_pg_store(pg_url)
    bare = pg_url.replace("postgresql+asyncpg://", f"{scheme}://", 1)
    listed = run_cli("ls", bare, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)["sessions"]] == ["conv-1"]
    dest = tmp_path / "copy.db"
    assert ok_lines(run_cli("copy", bare, str(dest))) == [f"copied 1 session (1 message) into {dest}"]
    back = run_cli("copy", str(dest), bare, "--rename")
    assert back.returncode == 0, back.stderr


@pytest.mark.skipif("psycopg" in sys.modules, reason="psycopg is installed here")
def test_a_driver_that_is_not_installed_names_its_package(tmp_path):
    err = assert_known_error(run_cli("ls", "postgresql+psycopg://u@127.0.0.1:1/x"), "pip install psycopg")
    assert "postgresql+asyncpg://" in err


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("nosuchdb://host/db", "unknown database kind 'nosuchdb'"),
        ("postgres://u:pw@127.0.0.1:notaport/x", "bad URL"),
        ("mysql://u@127.0.0.1:1/x", "pip install mysqlclient"),
    ],
)
def test_urls_fluxgui_cannot_use_are_one_line(url, needle):
    result = run_cli("ls", url)
    assert result.returncode == EXIT_KNOWN_ERROR
    assert "Traceback" not in result.stderr
    assert_known_error(result, needle)
    assert "pw" not in result.stderr
