"""Fixtures of the review tests: a review database on SQLite (a file in a temporary data
folder) and on the local PostgreSQL (a fresh database named with this issue's number)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import getpass
import os
import uuid

import pytest

PG_ADMIN = os.environ.get(
    "FLUXGUI_TEST_PG",
    f"postgresql://{os.environ.get('PGUSER') or getpass.getuser()}@127.0.0.1:5432/test",
)


def pg_admin(sql: str) -> None:
    """Run one statement on the test server's admin database (from a worker thread: the
    test thread may have a loop running)."""
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(PG_ADMIN, timeout=5)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result()


@pytest.fixture(autouse=True)
def private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FLUXGUI_REVIEWS", raising=False)
    monkeypatch.setenv("FLUXGUI_REVIEWER", "tester")


@pytest.fixture
def review_pg(pg_available):
    """``postgresql://…/fluxgui_reviews17_<hex>``: a fresh review database, dropped after."""
    name = f"fluxgui_reviews17_{uuid.uuid4().hex[:10]}"
    pg_admin(f'CREATE DATABASE "{name}"')
    yield f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}"
    pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgres"])
def reviews_url(request, tmp_path):
    """A review database URL on each back-end."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'team-reviews.db'}"
    return request.getfixturevalue("review_pg")
