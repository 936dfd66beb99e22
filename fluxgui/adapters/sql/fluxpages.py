"""flux's session list on a database server, by activity, without aggregating the table.

A session of flux's one table is a distinct ``session_id``; its activity is its last
row's id. On SQLite the walk by id with a per-row check is cheap; on Postgres a check per
row walked is not, so :func:`latest_sessions` reads the newest rows a window at a time.
"""

from __future__ import annotations

from typing import Any

from .backend import Backend, Params


async def latest_sessions(backend: Backend, limit: int, bound: int) -> list[tuple[Any, ...]]:
    """The ``limit`` sessions whose last row is the latest below ``bound`` (Postgres).

    The newest rows are read a window at a time (an index range on the primary key,
    no sort, no GROUP BY over the table); each session's first row met walking down
    is its last one unless the session has rows above ``bound`` (shown on an earlier
    page: one seek on the session index tells). The window doubles until the page
    is full. Counts and times are read for the page's sessions only."""
    found: list[tuple[str, int]] = []
    window = max(1000, 20 * limit)
    while len(found) < limit:
        rows = await backend.fetchall(
            """WITH recent AS (
                   SELECT session_id, id FROM messages WHERE id < :b
                   ORDER BY id DESC LIMIT :w),
               firsts AS (SELECT session_id, MAX(id) AS last_id FROM recent GROUP BY session_id)
               SELECT f.session_id, f.last_id, (SELECT MIN(id) FROM recent),
                      (SELECT COUNT(*) FROM recent)
               FROM firsts f
               WHERE f.last_id = (SELECT MAX(x.id) FROM messages x
                                  WHERE x.session_id = f.session_id)
               ORDER BY f.last_id DESC""",
            {"b": bound, "w": window},
        )
        found += [(str(r[0]), int(r[1])) for r in rows[: limit - len(found)]]
        if not rows:
            edge = await backend.fetchone(
                """SELECT MIN(id), COUNT(*) FROM (SELECT id FROM messages WHERE id < :b
                   ORDER BY id DESC LIMIT :w) r""", {"b": bound, "w": window})
            if edge is None or not edge[1] or int(edge[1]) < window:
                break
            bound = int(edge[0])
        elif int(rows[0][3]) < window:
            break  # the table's start was reached
        else:
            bound = int(rows[0][2])
        window = min(window * 2, 200_000)
    if not found:
        return []
    params: Params = {}
    values = ", ".join(
        f"(:s{i}, CAST(:l{i} AS BIGINT))" for i in range(len(found))
    )
    for i, (sid, last) in enumerate(found):
        params[f"s{i}"], params[f"l{i}"] = sid, last
    return await backend.fetchall(
        f"""SELECT p.sid,
                   (SELECT COUNT(*) FROM messages c WHERE c.session_id = p.sid),
                   (SELECT f.created_at FROM messages f WHERE f.session_id = p.sid
                    ORDER BY f.id LIMIT 1),
                   (SELECT l.created_at FROM messages l WHERE l.id = p.last_id),
                   p.last_id
            FROM (VALUES {values}) AS p(sid, last_id) ORDER BY p.last_id DESC""",
        params,
    )
