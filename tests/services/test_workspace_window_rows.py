"""What the window's workspace reads (issue 36): the all-stores list a page at a time
with each row's split flag and badge, the search over every store naming the stores
hit, and the consolidation into a target that refuses a store of the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from workspace_helpers import PO, agents_replicas

from fluxgui.core.errors import TargetError
from fluxgui.services.workspace import Entry, Workspace
from fluxgui.services.workspace.into import consolidate_into, preview_into
from fluxgui.services.workspace.rows import listed_pages, search_pages, split_of


async def test_listed_pages_flag_the_split_sessions_and_name_their_stores(tmp_path: Path) -> None:
    reps = await agents_replicas(tmp_path)
    async with await Workspace.open([Entry(str(p)) for p in reps.paths], keyring=False) as ws:
        pages = [page async for page in listed_pages(ws, page=4)]
        assert [len(p) for p in pages[:-1]] == [4] * (len(pages) - 1)
        rows = {item.id: item for page in pages for item in page}
        assert set(rows) == set(reps.routes)
        assert {sid for sid, item in rows.items() if item.split} == reps.split()
        assert rows["user_123"].badge() == "split across 3 stores"
        assert rows["copied_9"].badge() == "in 2 stores" and not rows["copied_9"].split
        assert rows["sticky_7"].badge() is None
        assert rows["user_123"].row.messages == 8
        # unexact pages leave the split flags to split_of
        first = [item async for page in listed_pages(ws, exact=False) for item in page]
        assert {i.id for i in first if i.split is None} == {sid for sid, r in rows.items() if r.row.several}
        told = {i.id: (await split_of(ws, i)).split for i in first}
        assert {sid for sid, split in told.items() if split} == reps.split()
        hits = [item async for page in search_pages(ws, PO) for item in page]
        assert [(h.id, h.hits) for h in hits] == [("user_123", ["a/conversations.db"])]
        assert hits[0].where() == ("in 3 stores: a/conversations.db, b/conversations.db, "
                                   "c/conversations.db; found in a/conversations.db")


async def test_consolidating_into_a_store_of_the_workspace_is_refused(tmp_path: Path) -> None:
    reps = await agents_replicas(tmp_path)
    before = [p.read_bytes() for p in reps.paths]
    async with await Workspace.open([Entry(str(p)) for p in reps.paths], keyring=False) as ws:
        for call in (preview_into, consolidate_into):
            with pytest.raises(TargetError, match="b/conversations.db, one of the stores merged"):
                await call(ws, str(reps.paths[1]))
        plan = await preview_into(ws, str(tmp_path / "new.db"))
        assert plan.count("write") == len(reps.routes) and not (tmp_path / "new.db").exists()
        done = await consolidate_into(ws, str(tmp_path / "new.db"), ["user_123"])
        assert [(s.session_id, s.action, s.written) for s in done.sessions] == [("user_123", "write", 8)]
        again = await preview_into(ws, str(tmp_path / "new.db"), ["user_123"])
        assert again.count("same") == 1
    assert [p.read_bytes() for p in reps.paths] == before


async def test_the_first_screen_is_the_merged_timeline_s_first_whole_turns(tmp_path: Path) -> None:
    from fluxgui.services.workspace.screen import first_placed
    from fluxgui.services.workspace.timeline import timeline

    reps = await agents_replicas(tmp_path)
    async with await Workspace.open([Entry(str(p)) for p in reps.paths], keyring=False) as ws:
        whole = [(p.message.text, p.store) for p in (await timeline(ws, "user_123")).placed()]
        first = [(p.message.text, p.store) for p in await first_placed(ws, "user_123", limit=3)]
        assert first == whole[:4]  # two whole turns: the second kept whole
        assert [(p.message.text, p.store) for p in await first_placed(ws, "user_123")] == whole
