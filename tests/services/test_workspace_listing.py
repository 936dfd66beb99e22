"""The merged session list's first rows (issue 36): the first store's first page tells
how recent the others' must be, and a SQLite store reads just those
(``list_sessions(since=…)``). What the list gives is the same as without it: every
session once, in the same order, page after page."""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path
from typing import Any

from doctor_helpers import answer, user
from workspace_helpers import agents_add, minute

from fluxgui.core.times import unix_time
from fluxgui.services.workspace import Entry, Workspace
from fluxgui.services.workspace.listing import merged_sessions


async def _store(path: Path, sessions: dict[str, int]) -> Path:
    for sid, at in sessions.items():
        await agents_add(path, sid, [user(f"{sid} asks"), answer("ok", f"msg_{sid}")], minute(at))
    return path


async def _listed(ws: Workspace, page: int) -> list[tuple[str, tuple[str, ...]]]:
    async with aclosing(merged_sessions(ws, page=page, exact=False)) as rows:
        return [(row.id, tuple(row.labels)) async for row in rows]


async def test_the_list_is_the_same_with_and_without_the_first_store_s_reach(tmp_path, monkeypatch):
    a = await _store(tmp_path / "a.db", {f"a{n}": 100 + n for n in range(6)} | {"shared": 103})
    b = await _store(tmp_path / "b.db", {f"b{n}": n for n in range(4)} | {"shared": 1})  # all older
    c = await _store(tmp_path / "c.db", {f"c{n}": 200 + n // 2 for n in range(7)})  # newer, ties
    d = await _store(tmp_path / "d.db", {"d0": 104, "d1": 102, "d2": 50})  # some in reach
    ws = await Workspace.open([Entry(str(p)) for p in (a, b, c, d)], keyring=False)
    asked: list[Any] = []
    try:
        for m in ws.members:
            original = m.store.reader.list_sessions

            async def spy(*, _original: Any = original, **kw: Any) -> Any:
                got = await _original(**kw)
                if kw.get("since") is not None:
                    asked.append((kw["since"], [i.id for i in got.sessions]))
                return got

            m.store.reader.list_sessions = spy  # type: ignore[method-assign]
        with_reach = {page: await _listed(ws, page) for page in (1, 2, 3, 50)}
        assert asked and any(ids for _t, ids in asked) and any(not ids for _t, ids in asked)
        for m in ws.members:  # the stores' first pages read whole
            monkeypatch.setattr(m.store.reader, "_page_since", lambda _limit, _since: _none())
        for page, listed in with_reach.items():
            assert listed == await _listed(ws, page), page
        ids = [sid for sid, _s in with_reach[50]]
        assert len(ids) == len(set(ids)) == 6 + 1 + 4 + 7 + 3
        assert ids[:2] == ["c6", "c5"] or ids[:2] == ["c5", "c6"]  # newest first
        assert dict(with_reach[2])["shared"] == ("a.db", "b.db")
    finally:
        await ws.close()


async def _none() -> None:
    return None


async def test_a_first_page_since_a_time_is_the_start_of_the_activity_order(tmp_path):
    path = await _store(tmp_path / "s.db", {f"s{n}": n // 3 for n in range(12)})
    ws = await Workspace.open([Entry(str(path))], keyring=False)
    try:
        reader = ws.members[0].store.reader
        whole = (await reader.list_sessions(limit=100)).sessions
        for cut in range(len(whole)):
            since = unix_time(whole[cut].updated_at)
            for limit in (1, 4, 100):
                got = (await reader.list_sessions(limit=limit, since=since)).sessions
                assert [i.sort_key for i in got] == [i.sort_key for i in whole[: len(got)]]
                newer = [i for i in whole if i.updated_at >= whole[cut].updated_at]
                assert len(got) == min(limit, len(newer))
    finally:
        await ws.close()
