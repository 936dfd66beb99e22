"""Shared fixtures: offscreen Qt, fresh PostgreSQL databases, store writers.

PostgreSQL: ``FLUXGUI_TEST_PG`` (default ``postgresql://root@127.0.0.1:5432/test``,
trust auth). Each ``pg_url`` is a fresh database, dropped afterwards. When the server
cannot be reached a Postgres test is skipped locally but fails in CI (``CI`` set).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

PG_ADMIN = os.environ.get("FLUXGUI_TEST_PG", "postgresql://root@127.0.0.1:5432/test")


def _run(coro) -> None:
    """Run ``coro`` on a fresh loop in a worker thread: the test thread may have a
    (qasync) loop marked as running, where ``asyncio.run`` refuses to start."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coro).result()


def _pg_base() -> str:
    return PG_ADMIN.rsplit("/", 1)[0]


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_ADMIN, timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def pg_available() -> bool:
    try:
        _run(_admin("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL at {PG_ADMIN} is not reachable in CI: {exc}")
        pytest.skip(f"PostgreSQL at {PG_ADMIN} is not reachable: {exc}")
    return True


@pytest.fixture
def pg_url(pg_available: bool):
    """``postgresql+asyncpg://…/<fresh database>``; dropped after the test."""
    name = f"fluxgui_t_{uuid.uuid4().hex[:12]}"
    _run(_admin(f'CREATE DATABASE "{name}"'))
    url = f"{_pg_base()}/{name}".replace("postgresql://", "postgresql+asyncpg://", 1)
    yield url
    _run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


REDIS_URL = os.environ.get("FLUXGUI_TEST_REDIS", "redis://127.0.0.1:6379/0")


async def _redis_ping() -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    try:
        await client.ping()
    finally:
        await client.aclose()


@pytest.fixture(scope="session")
def redis_available() -> bool:
    try:
        _run(_redis_ping())
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        if os.environ.get("CI"):
            pytest.fail(f"Redis at {REDIS_URL} is not reachable in CI: {exc}")
        pytest.skip(f"Redis at {REDIS_URL} is not reachable: {exc}")
    return True


async def _redis_drop(prefix: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@pytest.fixture
def redis_prefix(redis_available: bool):
    """A fresh key prefix on the test Redis server (``REDIS_URL``); its keys are deleted
    afterwards."""
    prefix = f"fluxgui-test-{uuid.uuid4().hex[:12]}:agents:session"
    yield prefix
    _run(_redis_drop(prefix))


@pytest.fixture
def local_zone():
    """This process in a zone with an offset, so that local times are told apart."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()
