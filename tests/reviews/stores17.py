"""Stores of every format, written by the real libraries, and snapshots of what they
hold (to show that reviewing them writes nothing)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

FERNET = "uGm8G3p3m0JtQxq0xk0t5y0y2n3sL8mX9q2r5VbJ1Yw="
FORMATS = ("flux", "agents", "advanced", "encrypted", "redis", "json", "postgres")


def items(n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"question {n}"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"answer {n}"}]}]


def make_store(kind: str, tmp_path: Path, *, sessions: int = 3, redis_prefix: str = "", pg_url: str = "") -> tuple[str, list[str], list[str]]:
    """``(target, extra CLI options, session ids)`` of a store of ``kind``."""
    ids = [f"conv-{i:03d}" for i in range(sessions)]
    if kind == "flux":
        from helpers import write_flux

        path = tmp_path / "flux.db"
        write_flux(path, {sid: [{"role": "user", "content": f"hi {sid}"}, {"role": "assistant", "content": "ok"}] for sid in ids})
        return str(path), [], ids
    if kind == "agents":
        from helpers import write_agents

        path = tmp_path / "agents.db"
        write_agents(path, {sid: items(i) for i, sid in enumerate(ids)})
        return str(path), [], ids
    if kind == "advanced":
        from advanced_helpers import OTHER, SID, write_library_store

        path = tmp_path / "advanced.db"
        asyncio.run(write_library_store(path))
        return str(path), [], [SID, OTHER]
    if kind == "encrypted":
        from agents import SQLiteSession
        from agents.extensions.memory import EncryptedSession

        path = tmp_path / "encrypted.db"

        async def run() -> None:
            for i, sid in enumerate(ids):
                under = SQLiteSession(sid, str(path))
                try:
                    await EncryptedSession(sid, under, encryption_key=FERNET).add_items(items(i))  # type: ignore[arg-type]
                finally:
                    under.close()

        asyncio.run(run())
        return str(path), ["--key", FERNET], ids
    if kind == "redis":
        from agents.extensions.memory.redis_session import RedisSession
        from helpers import REDIS_URL

        async def run() -> None:
            for i, sid in enumerate(ids):
                s = RedisSession.from_url(sid, url=REDIS_URL, key_prefix=redis_prefix)
                try:
                    await s.add_items(items(i))  # type: ignore[arg-type]
                finally:
                    await s.close()

        asyncio.run(run())
        return REDIS_URL, ["--key-prefix", redis_prefix], ids
    if kind == "json":
        from json_helpers import hello_entry, hello_save

        folder = tmp_path / "sessions"
        for sid in ids:
            hello_save(folder, sid, [hello_entry("user", f"hi {sid}"), hello_entry("assistant", "ok")])
        return str(folder), [], ids
    if kind == "postgres":
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

        async def run() -> None:
            for i, sid in enumerate(ids):
                s = SQLAlchemySession.from_url(sid, url=pg_url, create_tables=True)
                try:
                    await s.add_items(items(i))  # type: ignore[arg-type]
                finally:
                    await s.engine.dispose()

        asyncio.run(run())
        return pg_url, [], ids
    raise AssertionError(kind)


def snapshot(kind: str, target: str, *, redis_prefix: str = "") -> Any:
    """Everything the store holds, byte for byte where it is files."""
    if kind in ("flux", "agents", "advanced", "encrypted"):
        from helpers import snapshot as file_snapshot

        return file_snapshot(Path(target)), sorted(p.name for p in Path(target).parent.iterdir())
    if kind == "json":
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(target).iterdir())}
    if kind == "redis":
        import redis

        client = redis.Redis.from_url(target)
        try:
            keys = sorted(client.scan_iter(match=f"{redis_prefix}:*"))
            return {k: (client.type(k), client.dump(k), client.ttl(k)) for k in keys}
        finally:
            client.close()

    async def dump() -> Any:
        import asyncpg

        conn = await asyncpg.connect(target.replace("+asyncpg", ""))
        try:
            tables = [r[0] for r in await conn.fetch(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")]
            rows = {t: [tuple(r) for r in await conn.fetch(f'SELECT * FROM "{t}" ORDER BY 1')] for t in tables}
            return json.dumps({"tables": tables, "rows": rows}, default=str, sort_keys=True)
        finally:
            await conn.close()

    return asyncio.run(dump())
