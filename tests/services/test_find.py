"""Finding text inside one session and paging to it, over stores written by the real
libraries (flux-agents, openai-agents)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fluxgui.adapters import open_store
from fluxgui.services.find import anchor_of, find_in_session, first_found, page_around
from helpers import write_agents, write_flux

N = 250  # messages; every 40th holds the needle (i = 7, 47, 87, …)


def _texts() -> list[str]:
    out = []
    for i in range(N):
        text = f"line {i}"
        if i % 40 == 7:
            text += " the Straße NEEDLE here"
        out.append(text)
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: Any) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("find")
    texts = _texts()
    flux = folder / "flux.db"
    write_flux(flux, {"s": [{"role": "user", "content": t} for t in texts], "other": [{"role": "user", "content": "NEEDLE"}]})
    agents = folder / "agents.db"
    write_agents(agents, {"s": [{"role": "user", "content": t} for t in texts], "other": [{"role": "user", "content": "NEEDLE"}]})
    return {"flux": flux, "agents": agents}


@pytest.fixture(params=["flux", "agents"])
async def store(request: Any, written: dict[str, Path], tmp_path: Path) -> AsyncIterator[Any]:
    path = tmp_path / "store.db"
    shutil.copy(written[request.param], path)
    s = await open_store(str(path))
    try:
        yield s
    finally:
        await s.close()


async def test_find_gives_every_hit_in_order_with_its_snippet(store: Any) -> None:
    found = await find_in_session(store, "s", "needle", batch=64)  # several pages
    expected = [i for i in range(N) if i % 40 == 7]
    assert len(found) == len(expected)
    all_msgs = [m async for page in store.reader.iter_messages("s") for m in page]
    ids = [all_msgs[i].id for i in expected]
    assert [f.message_id for f in found] == ids
    hit = found[0].hit
    assert hit.session_id == "s" and hit.role == "user"
    assert hit.snippet[hit.start : hit.start + hit.length] == "NEEDLE"
    # the anchor is the message's keyset key: paging from it works
    assert found[0].anchor == tuple(all_msgs[7].sort_key)


async def test_find_folds_case_the_unicode_way(store: Any) -> None:
    # "STRAßE" lowers to "straße", as does "Straße"; "STRASSE" does not, as in the
    # store's own search (core.hits.fold)
    assert await find_in_session(store, "s", "STRASSE") == []
    found = await find_in_session(store, "s", "STRAßE")
    assert len(found) == len([i for i in range(N) if i % 40 == 7])
    hit = found[0].hit
    assert hit.snippet[hit.start : hit.start + hit.length] == "Straße"
    assert await find_in_session(store, "s", "absent") == []
    assert await find_in_session(store, "s", "") == []


async def test_page_around_lands_on_the_message(store: Any) -> None:
    found = await find_in_session(store, "s", "needle")
    target = found[3]  # message 127
    around = await page_around(store, "s", target.message_id, anchor=target.anchor, limit=30)
    assert around is not None
    assert around.messages[around.index].id == target.message_id
    assert around.messages[around.index].text.startswith("line 127 ")
    texts = [m.text.split()[1] for m in around.messages]
    assert texts == [str(i) for i in range(127 - 10, 127 + 20)]
    assert not around.at_start and not around.at_end
    # without the anchor: looked for by id
    again = await page_around(store, "s", target.message_id, limit=30)
    assert again is not None and [m.id for m in again.messages] == [m.id for m in around.messages]


async def test_page_around_near_the_edges(store: Any) -> None:
    first = (await find_in_session(store, "s", "needle"))[0]  # message 7
    around = await page_around(store, "s", first.message_id, limit=30)
    assert around is not None and around.at_start and not around.at_end
    assert around.messages[0].text == "line 0" and around.index == 7
    assert len(around.messages) == 30  # the page filled with later messages
    last = [m async for page in store.reader.iter_messages("s") for m in page][-2]
    around = await page_around(store, "s", last.id, limit=30)
    assert around is not None and around.at_end and not around.at_start
    assert around.messages[around.index].id == last.id and len(around.messages) == 12


async def test_first_found_reads_only_as_far_as_the_first_hit(store: Any) -> None:
    first = await first_found(store, "s", "needle", batch=16)
    assert first is not None and first.hit.snippet.startswith("line 7 ")
    assert await first_found(store, "s", "absent") is None


async def test_page_around_an_unknown_message(store: Any) -> None:
    assert await page_around(store, "s", 10**9, limit=30) is None
    assert await anchor_of(store, "s", 10**9) is None


async def test_message_anchor_is_the_messages_sort_key(store: Any) -> None:
    messages = [m async for page in store.reader.iter_messages("s") for m in page]
    for m in messages[::37]:
        assert await store.reader.message_anchor("s", m.id) == tuple(m.sort_key)
    assert await store.reader.message_anchor("other", messages[0].id) is None  # another session's
    assert await store.reader.message_anchor("s", 10**9) is None


async def test_message_anchor_of_a_branch_and_of_a_json_folder(tmp_path: Path) -> None:
    from advanced_helpers import SID, write_library_store
    from json_helpers import hello_entry, hello_save

    adv = tmp_path / "advanced.db"
    await write_library_store(adv)
    s = await open_store(str(adv))
    try:
        for info in await s.branches.list_branches(SID):
            msgs = [m async for page in s.reader.iter_messages(SID, branch=info.branch_id) for m in page]
            for m in msgs:
                assert await s.reader.message_anchor(SID, m.id, branch=info.branch_id) == tuple(m.sort_key)
            around = await page_around(s, SID, msgs[-1].id, limit=10, branch=info.branch_id)
            assert around is not None and around.messages[around.index].id == msgs[-1].id
    finally:
        await s.close()
    folder = tmp_path / "folder"
    hello_save(folder, "chat", [hello_entry("user", f"line {i}") for i in range(30)])
    s = await open_store(str(folder))
    try:
        sid = (await s.reader.list_sessions()).sessions[0].id
        msgs = [m async for page in s.reader.iter_messages(sid) for m in page]
        assert await s.reader.message_anchor(sid, msgs[17].id) == tuple(msgs[17].sort_key)  # the default
        around = await page_around(s, sid, msgs[17].id, limit=9)
        assert around is not None and around.messages[around.index].text == "line 17"
    finally:
        await s.close()
