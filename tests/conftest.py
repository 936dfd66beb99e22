"""Shared fixtures: offscreen Qt, fresh PostgreSQL databases, store writers.

PostgreSQL: ``FLUXGUI_TEST_PG`` (default ``postgresql://<$PGUSER or your user
name>@127.0.0.1:5432/test``, trust auth). Each ``pg_url`` is a fresh database, dropped
afterwards. Redis: ``FLUXGUI_TEST_REDIS`` (default ``redis://127.0.0.1:6379/0``); each
``redis_prefix`` is a fresh key prefix. When a server cannot be reached its tests are
skipped locally (one summary line says which and how to enable them) but fail in CI
(``CI`` set). Every test that needs a server carries its marker (``postgres``,
``redis``), so ``-m "not postgres"`` leaves those out.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import time
import uuid

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

PG_ADMIN = os.environ.get(
    "FLUXGUI_TEST_PG",
    f"postgresql://{os.environ.get('PGUSER') or getpass.getuser()}@127.0.0.1:5432/test",
)
#: fixtures that need a server → the marker their tests carry
SERVER_FIXTURES = {"pg_available": "postgres", "redis_available": "redis"}
#: the servers, as the skip reasons name them → the variable that points elsewhere
SERVERS = {"PostgreSQL": "FLUXGUI_TEST_PG", "Redis": "FLUXGUI_TEST_REDIS"}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these markers
def pytest_collection_modifyitems(config, items) -> None:
    """Mark every test that needs a server: by the fixtures it uses (directly or not),
    or, for tests parametrised over back-ends that ask for a server's fixture by name
    (``request.getfixturevalue("pg_url")``), by a ``postgres``/``redis`` parameter id."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        ids = set(callspec.id.replace("[", "-").replace("]", "-").split("-")) if callspec else set()
        for fixture, marker in SERVER_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()) or marker in ids:
                item.add_marker(marker)


def pytest_terminal_summary(terminalreporter) -> None:
    """One line per server whose tests were skipped: which, why, how to enable them
    (read from the skip reasons, which pytest-xdist's workers send back)."""
    counts: dict[str, tuple[int, str]] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        for server in SERVERS:
            if f"{server} at " in reason and "is not reachable" in reason:
                n, _ = counts.get(server, (0, ""))
                counts[server] = (n + 1, reason.split(": ", 1)[-1].split(" is not reachable")[0])
    for server, (n, where) in counts.items():
        terminalreporter.write_line(
            f"fluxgui: {n} tests skipped: {where} is not reachable; start it or point "
            f"{SERVERS[server]} at one (in CI they fail instead)"
        )


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
def pg_database(pg_available: bool):
    """``postgresql://…/<fresh database>`` (no driver named); dropped after the test."""
    name = f"fluxgui_t_{uuid.uuid4().hex[:12]}"
    _run(_admin(f'CREATE DATABASE "{name}"'))
    yield f"{_pg_base()}/{name}"
    _run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def pg_url(pg_database: str) -> str:
    """``postgresql+asyncpg://…/<fresh database>``; dropped after the test."""
    return pg_database.replace("postgresql://", "postgresql+asyncpg://", 1)


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
