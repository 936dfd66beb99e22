"""The review database is never the store being reviewed (issue 33.2): every spelling of
the store's file — a path, ``sqlite:///`` URLs, a symlink, a hard link — is refused in one
line before anything is written (the store byte-identical, its mode unchanged), by every
command that opens a review database; on PostgreSQL, the store's own database and schema
is refused and a schema of the review role's own in the same database is not."""

from __future__ import annotations

import asyncio
import os
import stat
import uuid
from urllib.parse import urlsplit, urlunsplit

from helpers import snapshot, sqlite_rows
from stores17 import make_store

from fluxgui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _spellings(tmp_path, target: str) -> list[str]:
    os.symlink(target, tmp_path / "link.db")
    os.link(target, tmp_path / "hard.db")
    return [
        target,
        os.path.relpath(target),
        f"sqlite:///{os.path.relpath(target)}",
        f"sqlite:///{target}",  # (four slashes: an absolute path)
        f"sqlite+aiosqlite:///{target}",
        str(tmp_path / "link.db"),
        str(tmp_path / "hard.db"),
    ]


def test_every_spelling_of_the_store_is_refused_and_the_store_left_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target, _, ids = make_store("flux", tmp_path)
    mode = stat.S_IMODE(os.stat(target).st_mode)
    assert mode != 0o600  # (a narrowed mode would show)
    before = snapshot(tmp_path / "flux.db")
    rubric = tmp_path / "rubric.json"
    rubric.write_text('{"criteria": [{"name": "ok", "kind": "boolean"}]}')
    for reviews in _spellings(tmp_path, target):
        for argv in (
            ["review", "set", target, ids[0], "--state", "reviewed"],
            ["review", "ls", target],
            ["review", "next", target, "--claim"],
            ["review", "export", target, "--format", "csv"],
            ["review", "rubric", "set", target, str(rubric)],
            ["export", target, "-o", str(tmp_path / "out.md"), "--with-reviews"],
        ):
            code, out, err = run(capsys, *argv, "--reviews", reviews)
            assert code == 3, (argv, reviews, err)
            assert err.count("\n") == 1 and "refusing the review database" in err and "store being reviewed" in err, err
    assert snapshot(tmp_path / "flux.db") == before
    assert stat.S_IMODE(os.stat(target).st_mode) == mode
    assert [r[0] for r in sqlite_rows(tmp_path / "flux.db", "SELECT name FROM sqlite_master WHERE name LIKE 'fluxgui%'")] == []
    assert not (tmp_path / "out.md").exists()
    # its side files and a JSON session folder (a file inside it) are refused alike
    code, _, err = run(capsys, "review", "ls", target, "--reviews", target + "-wal")
    assert code == 3 and "wal file of the store" in err
    folder, _, _ = make_store("json", tmp_path)
    code, _, err = run(capsys, "review", "ls", folder, "--reviews", os.path.join(folder, "reviews.db"))
    assert code == 3 and "inside the session folder" in err
    assert not os.path.exists(os.path.join(folder, "reviews.db"))
    # another file is a review database as before
    code, out, err = run(capsys, "review", "set", target, ids[0], "--state", "reviewed", "--reviews", "sqlite:///r.db")
    assert code == 0, err
    assert snapshot(tmp_path / "flux.db") == before


async def _tables(url: str) -> list[tuple[str, str]]:
    import asyncpg

    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        rows = await conn.fetch("SELECT table_schema, table_name FROM information_schema.tables "
                                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2")
        return [tuple(r) for r in rows]
    finally:
        await conn.close()


async def _admin(url: str, *statements: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        for sql in statements:
            await conn.execute(sql)
    finally:
        await conn.close()


def test_the_stores_postgres_database_and_schema_is_refused_a_schema_of_its_own_is_not(tmp_path, capsys, pg_url, pg_database):
    target, _, ids = make_store("postgres", tmp_path, pg_url=pg_url)
    before = asyncio.run(_tables(pg_database))
    assert ("public", "agent_messages") in before
    for reviews in (pg_database, pg_url, pg_database.replace("127.0.0.1", "localhost")):
        code, _, err = run(capsys, "review", "set", target, ids[0], "--state", "reviewed", "--reviews", reviews)
        assert code == 3 and err.count("\n") == 1, err
        assert "database of the store being reviewed" in err and "schema public" in err, err
    code, _, err = run(capsys, "export", target, "-o", str(tmp_path / "x.json"), "--with-reviews", "--reviews", pg_database)
    assert code == 3 and "refusing the review database" in err
    assert asyncio.run(_tables(pg_database)) == before  # no review table made
    # a reviewer role whose schema is its own, in the same database: its reviews go there
    role = f"fluxgui_rev_{uuid.uuid4().hex[:8]}"
    asyncio.run(_admin(pg_database, f'CREATE ROLE "{role}" LOGIN', f'CREATE SCHEMA "{role}" AUTHORIZATION "{role}"',
                       f'ALTER ROLE "{role}" SET search_path = "{role}"'))
    try:
        parts = urlsplit(pg_database)
        own = urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port or 5432}"))
        code, out, err = run(capsys, "review", "set", target, ids[0], "--state", "reviewed", "--reviews", own)
        assert code == 0, err
        after = asyncio.run(_tables(pg_database))
        assert [t for t in after if t not in before] and all(s == role for s, _t in after if (s, _t) not in before)
    finally:
        asyncio.run(_admin(pg_database, f'DROP SCHEMA "{role}" CASCADE', f'DROP OWNED BY "{role}"'))
        asyncio.run(_admin(pg_database, f'DROP ROLE "{role}"'))
