"""Replicas as a load balancer makes them (issue 36): one user's turns routed to
several stores, each written by the owning library (``agents.SQLiteSession``, flux's
``SQLiteSession``), some sessions sticky (one store only), some copied from one replica
into another before the split.

The libraries stamp rows with SQLite's ``CURRENT_TIMESTAMP`` (whole seconds, when they
are written); a test writes in milliseconds, so each turn's rows are then given the
minute its request arrived (``created_at`` only, a plain ``UPDATE``): the times a
deployment would have left. Nothing else is touched.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from doctor_helpers import answer, user

#: the forgotten purchase order
PO = "PO-7781"
BASE = "2025-03-01 10:00:00"


def minute(n: int) -> str:
    """``BASE`` plus ``n`` minutes, as SQLite's ``CURRENT_TIMESTAMP`` writes times."""
    conn = sqlite3.connect(":memory:")
    try:
        return conn.execute("SELECT datetime(?, ?)", (BASE, f"+{n} minutes")).fetchone()[0]
    finally:
        conn.close()


def _stamp(path: Path, table: str, sid: str, after: int, when: str, sessions: str | None) -> None:
    conn = sqlite3.connect(str(path))
    try:
        conn.execute(f"UPDATE {table} SET created_at = ? WHERE session_id = ? AND id > ?", (when, sid, after))
        if sessions:
            conn.execute(f"UPDATE {sessions} SET updated_at = ? WHERE session_id = ?", (when, sid))
        conn.commit()
    finally:
        conn.close()


def _max_id(path: Path, table: str) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


async def agents_add(path: Path, sid: str, items: list[dict[str, Any]], when: str) -> None:
    """``agents.SQLiteSession(sid, path).add_items(items)``, its rows then at ``when``."""
    from agents import SQLiteSession

    before = _max_id(path, "agent_messages")
    s = SQLiteSession(sid, str(path))
    try:
        await s.add_items(items)  # type: ignore[arg-type]
    finally:
        s.close()
    _stamp(path, "agent_messages", sid, before, when, "agent_sessions")


async def agents_items(path: Path, sid: str) -> list[Any]:
    from agents import SQLiteSession

    s = SQLiteSession(sid, str(path))
    try:
        return list(await s.get_items())
    finally:
        s.close()


async def flux_add(path: Path, sid: str, messages: list[dict[str, Any]], when: str) -> None:
    """flux's ``SQLiteSession(path, sid).add_messages(messages)``, its rows then at
    ``when``."""
    from flux.sessions import SQLiteSession

    before = _max_id(path, "messages")
    await SQLiteSession(str(path), session_id=sid).add_messages(messages)
    _stamp(path, "messages", sid, before, when, None)


@dataclass
class Replicas:
    """What was written where, and the true order of every session's turns."""

    paths: list[Path]
    #: session id → [(turn's user text, replica index)] in the true order
    routes: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    #: sessions copied from one replica into another before the split
    copied: set[str] = field(default_factory=set)

    def split(self) -> set[str]:
        """The sessions no one replica holds whole."""
        out = set()
        for sid, turns in self.routes.items():
            holders = {i for _t, i in turns}
            if sid in self.copied:
                continue
            if len(holders) > 1:
                out.add(sid)
        return out

    def texts(self, sid: str) -> list[str]:
        return [t for t, _i in self.routes[sid]]


def _turn_text(sid: str, n: int) -> str:
    if sid == "user_123" and n == 1:
        return f"I'd like 40 blue widgets, purchase order {PO}"
    return f"{sid} question {n}"


async def agents_replicas(folder: Path, *, seed: int = 36, sessions: int = 6, turns: int = 4) -> Replicas:
    """Three replicas ``a|b|c/conversations.db`` written by ``agents.SQLiteSession``: the
    PO conversation ``user_123`` (turn 1 on a, turn 2 on b, turn 3 on a, turn 4 on c),
    ``sessions`` more routed at random, a sticky one, and ``copied_9`` (two turns on a,
    copied into c by the library, then a third on c: c holds it whole)."""
    paths = [folder / name / "conversations.db" for name in "abc"]
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
    reps = Replicas(paths)
    rng = random.Random(seed)
    plan: dict[str, list[int]] = {"user_123": [0, 1, 0, 2], "sticky_7": [1, 1, 1]}
    for k in range(sessions):
        plan[f"conv_{k}"] = [rng.randrange(3) for _ in range(turns)]
    clock = 0
    for sid, route in plan.items():
        for n, where in enumerate(route, 1):
            clock += 1
            text = _turn_text(sid, n)
            await agents_add(paths[where], sid, [user(text), answer(f"answer {n} to {sid}", f"msg_{sid}_{n}")], minute(clock))
            reps.routes.setdefault(sid, []).append((text, where))
    # copied_9: a replica that copied history from another, then went on alone
    for n in (1, 2):
        clock += 1
        await agents_add(paths[0], "copied_9", [user(_turn_text("copied_9", n)), answer(f"answer {n}", f"msg_c9_{n}")], minute(clock))
        reps.routes.setdefault("copied_9", []).append((_turn_text("copied_9", n), 0))
    clock += 1
    await agents_add(paths[2], "copied_9", await agents_items(paths[0], "copied_9"), minute(clock))
    clock += 1
    await agents_add(paths[2], "copied_9", [user(_turn_text("copied_9", 3)), answer("answer 3", "msg_c9_3")], minute(clock))
    reps.routes["copied_9"].append((_turn_text("copied_9", 3), 2))
    reps.copied.add("copied_9")
    return reps


async def flux_replicas(folder: Path) -> Replicas:
    """Three flux replicas ``a|b|c/flux.db`` (flux's ``SQLiteSession``): ``user_123``
    with its turns on a, b, a, c, and a sticky session on b."""
    paths = [folder / name / "flux.db" for name in "abc"]
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
    reps = Replicas(paths)
    clock = 0
    for sid, route in {"user_123": [0, 1, 0, 2], "sticky_7": [1, 1]}.items():
        for n, where in enumerate(route, 1):
            clock += 1
            text = _turn_text(sid, n)
            await flux_add(paths[where], sid, [{"role": "user", "content": text},
                                                {"role": "assistant", "content": f"answer {n}"}], minute(clock))
            reps.routes.setdefault(sid, []).append((text, where))
    return reps


def user_texts(items: list[Any]) -> list[str]:
    """The user texts of items (Agents SDK) or messages (flux), in order."""
    return [i["content"] for i in items if isinstance(i, dict) and i.get("role") == "user"
            and isinstance(i.get("content"), str)]


def digests(paths: list[Path]) -> list[str]:
    """The SHA-256 of each file (a store left byte-identical)."""
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
