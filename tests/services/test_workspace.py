"""A workspace of replicas (issue 36): the merged listing, the merged timeline in the
true order with copies folded, ``split_session`` exactly on the split sessions, and the
workspace file without secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import snapshot
from workspace_helpers import PO, agents_add, agents_replicas, flux_replicas, minute

from fluxgui.core.ports import OpenOptions
from fluxgui.services.workspace import Entry, Workspace, load_workspace, save_workspace
from fluxgui.services.workspace.labels import default_labels
from fluxgui.services.workspace.listing import merged_sessions, session_rows
from fluxgui.services.workspace.timeline import merged_turns, timeline

LABELS = ["a/conversations.db", "b/conversations.db", "c/conversations.db"]


async def _open(paths: list[Path]) -> Workspace:
    return await Workspace.open([Entry(str(p)) for p in paths], keyring=False)


def test_labels_are_file_names_told_apart_by_their_folders():
    assert default_labels(["/x/a/conversations.db", "/x/b/conversations.db", "/y/other.db"]) == [
        "a/conversations.db", "b/conversations.db", "other.db"]
    assert default_labels(["/x/a.db", "/y/a.db"], ["prod", None]) == ["prod", "a.db"]
    assert default_labels(["a.db", "a.db"]) == ["a.db", "a.db#2"]
    assert default_labels(["postgresql://me:pw@db.example:5432/agents"]) == ["agents"]
    assert "pw" not in default_labels(["redis://:pw@cache:6379/0"])[0]


async def test_the_merged_list_names_every_session_once_with_its_stores(tmp_path):
    reps = await agents_replicas(tmp_path)
    ws = await _open(reps.paths)
    try:
        assert ws.labels == LABELS
        rows = await session_rows(ws)
        assert sorted(r.id for r in rows) == sorted(reps.routes)
        for r in rows:
            holders = sorted({LABELS[i] for _t, i in reps.routes[r.id]})
            if r.id == "copied_9":
                holders = [LABELS[0], LABELS[2]]
            assert r.labels == holders, r.id
            assert r.messages == 2 * len(reps.routes[r.id]), r.id  # copies once
        # most recently active first: each session's last turn was later than the one before
        last = {sid: n for n, sid in enumerate(reps.routes)}
        assert [r.id for r in rows] == sorted(last, key=lambda s: -last[s])
        # lazily, a page at a time: the first two rows need not read every list
        first = []
        async for row in merged_sessions(ws, page=2):
            first.append(row.id)
            if len(first) == 2:
                break
        assert first == [r.id for r in rows[:2]]
    finally:
        await ws.close()


async def test_the_timeline_is_the_true_order_with_whole_turns_and_copies_folded(tmp_path):
    reps = await agents_replicas(tmp_path)
    before = [snapshot(p) for p in reps.paths]
    ws = await _open(reps.paths)
    try:
        for sid in reps.routes:
            line = await timeline(ws, sid)
            users = [p.message.text for p in line.placed() if p.message.role == "user"]
            assert users == reps.texts(sid), sid
            for t in line.turns:  # a turn is whole: a user message and its answer
                assert [m.role for m in t.messages] == ["user", "assistant"]
            assert not line.uncertain
        po = await timeline(ws, "user_123")
        assert [t.store for t in po.turns] == [LABELS[0], LABELS[1], LABELS[0], LABELS[2]]
        assert PO in po.placed()[0].message.text and po.placed()[0].store == LABELS[0]
        copied = await timeline(ws, "copied_9")
        assert copied.total == 6 and copied.folded == 4
        assert [t.stores for t in copied.turns] == [[LABELS[0], LABELS[2]]] * 2 + [[LABELS[2]]]
        assert copied.placed()[0].to_dict()["stores"] == [LABELS[0], LABELS[2]]
    finally:
        await ws.close()
    assert [snapshot(p) for p in reps.paths] == before  # read only


async def test_split_session_is_found_exactly_on_the_split_ones(tmp_path):
    reps = await agents_replicas(tmp_path)
    ws = await _open(reps.paths)
    try:
        found = set()
        for sid in reps.routes:
            finding = (await timeline(ws, sid)).split_finding()
            if finding:
                found.add(sid)
        assert found == reps.split()
        assert "sticky_7" not in found and "copied_9" not in found
        finding = (await timeline(ws, "user_123")).split_finding()
        assert finding is not None
        assert finding["code"] == "split_session"
        assert "split across 3 stores" in finding["detail"]
        assert f"turns 1 and 3 are in {LABELS[0]} (its turns 1 and 2)" in finding["detail"]
        assert f"turn 2 is in {LABELS[1]} (its turn 1)" in finding["detail"]
        assert finding["message_ids"][0].startswith(LABELS[0] + ":")
    finally:
        await ws.close()


async def test_turns_in_the_same_second_of_two_stores_are_marked_uncertain(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    await agents_add(a, "s", [{"role": "user", "content": "early"}], minute(0))
    await agents_add(a, "s", [{"role": "user", "content": "one"}, {"role": "user", "content": "one more"}], minute(1))
    await agents_add(b, "s", [{"role": "user", "content": "two"}], minute(1))
    ws = await _open([a, b])
    try:
        line = await timeline(ws, "s")
        marks = {p.message.text: p.order_uncertain for p in line.placed()}
        assert marks == {"early": False, "one": True, "one more": True, "two": True}
        assert line.placed()[-1].to_dict()["order_uncertain"] is True
        # the first screen comes from the first turns, without the rest
        first = [t async for t in merged_turns(ws, "s")][:1]
        assert first[0].messages[0].text == "early"
    finally:
        await ws.close()


async def test_flux_replicas_merge_too(tmp_path):
    reps = await flux_replicas(tmp_path)
    ws = await _open(reps.paths)
    try:
        line = await timeline(ws, "user_123")
        assert [p.message.text for p in line.placed() if p.message.role == "user"] == reps.texts("user_123")
        assert line.split and not (await timeline(ws, "sticky_7")).split
    finally:
        await ws.close()


@pytest.mark.postgres
async def test_a_saved_workspace_holds_no_password_or_key(tmp_path, pg_url):
    secret_url = pg_url.replace("@", ":hunter2-secret@", 1) if "@" in pg_url else pg_url
    path = tmp_path / "w.json"
    entries = [
        Entry(str(tmp_path / "a.db"), "replica-a", {"ttl": 60, "key": "fernet-secret-key"}),
        Entry(secret_url + "?sslmode=disable&password=other-secret", "pg", {}),
        Entry("redis://:redis-secret@127.0.0.1:6379/0", None, {"key_prefix": "p"}),
    ]
    save_workspace(path, entries)
    text = path.read_text()
    for secret in ("hunter2-secret", "other-secret", "redis-secret", "fernet-secret-key"):
        assert secret not in text
    doc = json.loads(text)
    assert [s["label"] for s in doc["stores"]] == ["replica-a", "pg", None]
    assert doc["stores"][0]["options"] == {"ttl": 60}
    assert doc["stores"][1]["target"].endswith("?sslmode=disable")
    again = load_workspace(path)
    assert again[0].target == str(tmp_path / "a.db") and again[2].options == {"key_prefix": "p"}
    # no temporary file is left beside it; a second save replaces it whole
    save_workspace(path, entries[:1])
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"]
    assert len(load_workspace(path)) == 1


async def test_a_workspace_file_reopens_the_same_stores(tmp_path):
    reps = await agents_replicas(tmp_path, sessions=1)
    ws = await Workspace.open([Entry(str(p), label) for p, label in zip(reps.paths, "xyz")],
                              OpenOptions(), keyring=False)
    try:
        ws.save(tmp_path / "w.json")
    finally:
        await ws.close()
    again = await Workspace.open(load_workspace(tmp_path / "w.json"), keyring=False)
    try:
        assert again.labels == ["x", "y", "z"]
        assert [m.label for m, _i in await again.holders("user_123")] == ["x", "y", "z"]
    finally:
        await again.close()


def test_a_bad_workspace_file_is_one_line(tmp_path):
    from fluxgui.core.errors import TargetError

    bad = tmp_path / "w.json"
    bad.write_text('{"stores": [{"label": "x"}]}')
    with pytest.raises(TargetError, match="names no target"):
        load_workspace(bad)
    bad.write_text("not json")
    with pytest.raises(TargetError, match="is not JSON"):
        load_workspace(bad)


def _open_files() -> set[str]:
    import os

    fds = Path("/proc/self/fd")
    found = set()
    for fd in fds.iterdir():
        try:
            found.add(os.readlink(fd))
        except OSError:
            pass
    return found


async def test_a_store_that_fails_to_open_leaves_none_of_the_others_open(tmp_path):
    from fluxgui.core.errors import FluxguiError

    reps = await agents_replicas(tmp_path)
    before = _open_files()
    bad = tmp_path / "not-a-store.db"
    bad.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(FluxguiError):
        await _open([reps.paths[0], bad, reps.paths[1]])
    # the two good stores opened side by side with the bad one: both closed again
    assert {p for p in _open_files() - before if p.endswith(".db")} == set()
    ws = await _open(reps.paths)  # and they open as ever
    try:
        assert ws.labels == LABELS
    finally:
        await ws.close()
