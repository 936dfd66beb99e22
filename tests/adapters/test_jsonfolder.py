"""The JSON session folder store (HelloAgent ``SessionStore`` files) beyond the contract:
files the library writes are read right, files fluxgui writes load in the library, a
rewrite changes nothing but ``history`` and ``saved_at``, bad files are reported by name,
ids become file names inside the folder, and a write cut short leaves the old file.

The library's save and load are followed step by step in tests/json_helpers.py.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from helpers import all_messages, all_sessions, cli_env
from json_helpers import (
    hello_entry,
    hello_history,
    hello_list,
    hello_load,
    hello_save,
    library_bytes,
)

from fluxgui.core.roles import missing, refuse
from fluxgui.adapters import open_store
from fluxgui.adapters.jsonfolder import MAX_STEM_BYTES, file_stem, session_id_of
from fluxgui.core.errors import Conflict, InvalidItem, NotASessionStore, ReadOnlyError, TargetError
from fluxgui.services.transfer import IdTaken, copy_sessions, open_copy_target


def local(text: str) -> str:
    """A naive (local) time as fluxgui shows it: with this machine's zone."""
    return datetime.fromisoformat(text).astimezone().isoformat()


def files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


GAMMA = [
    hello_entry("system", "You are HelloAgent.", "2026-03-01T10:00:00"),
    hello_entry("user", "Bonjour ✓ HELLO there", "2026-03-01T10:00:01.250000", {"source": "cli"}),
    hello_entry("assistant", "Salut!", "2026-03-01T10:00:02"),
    hello_entry("tool", '{"result": 42}', "2026-03-01T10:00:03"),
    hello_entry("summary", "They greeted.", "2026-03-01T10:00:04"),
]


def library_folder(folder: Path) -> dict[str, Path]:
    """Three sessions saved by the library, gamma first and beta last."""
    return {
        "gamma": hello_save(folder, "gamma", GAMMA, metadata={"created_at": "2026-03-01T09:59:00", "total_tokens": 7}),
        "alpha": hello_save(folder, "alpha", [hello_entry("user", f"a{i}") for i in range(3)]),
        "beta": hello_save(folder, "beta", [hello_entry("user", "b0")]),
    }


# --------------------------------------------------------------------------- reading library files


async def test_library_files_are_listed_and_read(tmp_path, local_zone):
    folder = tmp_path / "sessions"
    paths = library_folder(folder)
    docs = {sid: hello_load(p) for sid, p in paths.items()}
    async with await open_store(str(folder)) as store:
        assert store.format == "json" and store.can_write is False and store.problems == []
        listed = await all_sessions(store, page_size=1)
        assert [s.id for s in listed] == ["beta", "alpha", "gamma"]  # newest saved_at first
        assert [s.id for s in listed] == [
            Path(s["filename"]).stem for s in hello_list(folder)
        ]  # the library's own order
        info = {s.id: s for s in listed}
        assert {sid: s.messages for sid, s in info.items()} == {"gamma": 5, "alpha": 3, "beta": 1}
        assert info["gamma"].created_at == "2026-03-01T09:59:00-05:00"
        for sid, doc in docs.items():
            assert info[sid].updated_at == local(doc["saved_at"])
            assert (await store.reader.session_info(sid)).to_dict() == info[sid].to_dict()
        assert await store.reader.session_info(docs["gamma"]["session_id"]) is None  # not the id

        msgs = await all_messages(store, "gamma", batch=2)
        assert [(m.id, m.role, m.kind, m.text) for m in msgs] == [
            (1, "system", "message", "You are HelloAgent."),
            (2, "user", "message", "Bonjour ✓ HELLO there"),
            (3, "assistant", "message", "Salut!"),
            (4, "tool", "tool_output", '{"result": 42}'),
            (5, "summary", "message", "They greeted."),
        ]
        assert [m.created_at for m in msgs] == [
            "2026-03-01T10:00:00-05:00",
            "2026-03-01T10:00:01.250000-05:00",
            "2026-03-01T10:00:02-05:00",
            "2026-03-01T10:00:03-05:00",
            "2026-03-01T10:00:04-05:00",
        ]
        assert [m.metadata for m in msgs] == [None, {"source": "cli"}, None, None, None]
        assert await store.reader.count_messages("gamma") == 5

        # Paging from either end and around an anchor.
        assert [m.id for m in await store.reader.page_messages("gamma", limit=2)] == [4, 5]
        assert [m.id for m in await store.reader.page_messages("gamma", limit=2, direction="forward")] == [1, 2]
        mid = msgs[2].sort_key
        assert [m.id for m in await store.reader.page_messages("gamma", limit=5, anchor=mid)] == [1, 2]
        assert [m.id for m in await store.reader.page_messages("gamma", limit=1, anchor=mid, direction="forward")] == [4]
        assert await store.reader.page_messages("gamma", limit=3, anchor=msgs[0].sort_key) == []

        # The flux view: role, content and metadata when set, most recent last.
        assert await store.session("gamma").get_messages(limit=2) == [
            {"role": "tool", "content": '{"result": 42}'},
            {"role": "summary", "content": "They greeted."},
        ]
        assert (await store.session("gamma").get_messages())[1] == {
            "role": "user", "content": "Bonjour ✓ HELLO there", "metadata": {"source": "cli"},
        }

        # Search: ids and texts, case-insensitive, each once.
        assert {s.id for s in await store.reader.search_sessions("hello")} == {"gamma"}
        assert {s.id for s in await store.reader.search_sessions("ALP")} == {"alpha"}
        assert [s.id for s in await store.reader.search_sessions("a")] == ["beta", "alpha", "gamma"]
        assert [s.id for s in await store.reader.search_sessions("b0")] == ["beta"]
        assert await store.reader.search_sessions("nowhere") == []


@pytest.mark.parametrize("order", ["activity", "id", "messages"])
@pytest.mark.parametrize("descending", [True, False])
async def test_every_order_pages_with_cursors(tmp_path, order, descending):
    folder = tmp_path / "s"
    for i, (name, n) in enumerate([("m", 2), ("c", 2), ("x", 1), ("a", 4), ("k", 1)]):
        hello_save(folder, name, [hello_entry("user", f"{name}{j}") for j in range(n)])
    keys = {
        "activity": lambda s: s.sort_key,
        "id": lambda s: s.id,
        "messages": lambda s: (s.messages, s.id),
    }
    async with await open_store(str(folder)) as store:
        everything = (await store.reader.list_sessions(limit=100, order=order, descending=descending)).sessions
        assert len(everything) == 5
        assert everything == sorted(everything, key=keys[order], reverse=descending)
        paged, cursor = [], None
        while True:
            page = await store.reader.list_sessions(limit=2, cursor=cursor, order=order, descending=descending)
            paged.extend(page.sessions)
            if page.cursor is None:
                break
            cursor = json.loads(json.dumps(page.cursor))  # a cursor that went through JSON
        assert [s.id for s in paged] == [s.id for s in everything]
    if order == "activity":
        assert [s.id for s in everything] == (["k", "a", "x", "c", "m"] if descending else ["m", "c", "x", "a", "k"])


async def test_malformed_entries_browse_as_other(tmp_path):
    folder = tmp_path / "s"
    path = hello_save(folder, "odd", [hello_entry("user", "fine")])
    doc = hello_load(path)
    doc["history"] += [
        "just text",
        {"role": "wizard", "content": "abracadabra"},
        {"role": "user", "content": 5},
        {"role": "user", "content": "ok", "metadata": "not an object"},
    ]
    path.write_bytes(library_bytes(doc))
    async with await open_store(str(folder)) as store:
        msgs = await all_messages(store, "odd")
        assert [(m.role, m.kind) for m in msgs] == [
            ("user", "message"), ("unknown", "other"), ("wizard", "other"), ("user", "other"), ("user", "other"),
        ]
        for m, entry in zip(msgs[1:], doc["history"][1:]):
            assert m.text == m.raw == json.dumps(entry, ensure_ascii=False)
        assert await store.reader.count_messages("odd") == 5
        assert [s.id for s in await store.reader.search_sessions("ABRACADABRA")] == ["odd"]


async def test_folder_changed_on_disk_is_read_again(tmp_path):
    folder = tmp_path / "s"
    hello_save(folder, "one", [hello_entry("user", "1")])
    async with await open_store(str(folder)) as store:
        token = await store.change_token()
        assert await store.change_token() == token
        assert await store.reader.count_messages("one") == 1
        hello_save(folder, "one", [hello_entry("user", "1"), hello_entry("assistant", "2")])
        hello_save(folder, "two", [hello_entry("user", "x")])
        assert await store.change_token() != token
        assert await store.reader.count_messages("one") == 2
        assert [m.text for m in await all_messages(store, "one")] == ["1", "2"]
        assert [s.id for s in await all_sessions(store)] == ["two", "one"]
        (folder / "one.json").unlink()
        assert [s.id for s in await all_sessions(store)] == ["two"]
        assert await store.reader.session_info("one") is None


# --------------------------------------------------------------------------- writing


async def test_fluxgui_writes_load_in_the_library(tmp_path):
    folder = tmp_path / "new" / "sessions"
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": "x"}'}
    output = {"type": "function_call_output", "call_id": "c1", "output": "found"}
    async with await open_store(str(folder), create="json") as store:
        assert store.can_write and await all_sessions(store) == []
        await store.writer.add_messages("chat", [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi ✓", "metadata": {"k": [1, 2]}},
            {"role": "assistant", "content": 42},
        ])
        await store.writer.add_messages("chat", [call, output])
    path = folder / "chat.json"
    assert files(folder) == {"chat.json"}
    doc = hello_load(path)
    assert path.read_bytes() == library_bytes(doc)  # json.dump(indent=2, ensure_ascii=False)
    assert list(doc) == [
        "session_id", "created_at", "saved_at", "agent_config", "history",
        "tool_schema_hash", "read_cache", "metadata",
    ]
    assert doc["session_id"] == "chat"
    assert (doc["agent_config"], doc["tool_schema_hash"], doc["read_cache"]) == ({}, None, {})
    assert doc["metadata"] == {"created_at": doc["created_at"]}
    assert all(list(e) == ["role", "content", "timestamp", "metadata"] for e in doc["history"])
    loaded = hello_history(doc)
    assert [(m.role, m.content, m.metadata) for m in loaded] == [
        ("system", "be brief", {}),
        ("user", "hi ✓", {"k": [1, 2]}),
        ("assistant", "42", {}),
        ("assistant", 'lookup({"q": "x"})', {"agents_item": call}),
        ("tool", "found", {"agents_item": output}),
    ]
    assert all(m.timestamp.tzinfo is None for m in loaded)  # local time, no zone
    for key in ("created_at", "saved_at"):
        assert datetime.fromisoformat(doc[key]).tzinfo is None
    assert datetime.fromisoformat(doc["created_at"]) <= datetime.fromisoformat(doc["saved_at"])
    assert [s["filename"] for s in hello_list(folder)] == ["chat.json"]


async def test_rewrite_changes_only_history_and_saved_at(tmp_path):
    folder = tmp_path / "s"
    path = hello_save(
        folder, "keep",
        [hello_entry("user", "first"), hello_entry("assistant", "second")],
        metadata={"created_at": "2026-01-02T03:04:05", "total_tokens": 99, "nested": {"a": [1, None]}},
        agent_config={"name": "helper", "llm_model": "gpt-4", "max_steps": 7},
        read_cache={"/tmp/a.txt": {"mtime": 1.5, "lines": [1, 2]}},
    )
    # A key the layout does not know, in the middle, and a restrictive mode: both stay.
    doc = hello_load(path)
    doc = {**{k: doc[k] for k in list(doc)[:4]}, "x_future": ["kept", {"as": "is"}], **{k: doc[k] for k in list(doc)[4:]}}
    path.write_bytes(library_bytes(doc))
    os.chmod(path, 0o600)
    before = hello_load(path)
    async with await open_store(str(folder), writable=True) as store:
        await store.writer.add_messages("keep", [{"role": "user", "content": "third"}])
        after = hello_load(path)
        assert list(after) == list(before)
        assert {k: v for k, v in after.items() if k not in ("history", "saved_at")} == {
            k: v for k, v in before.items() if k not in ("history", "saved_at")
        }
        assert after["history"][:2] == before["history"]
        assert [(m.role, m.content) for m in hello_history(after)][2:] == [("user", "third")]
        assert datetime.fromisoformat(after["saved_at"]) > datetime.fromisoformat(before["saved_at"])
        assert path.read_bytes() == library_bytes(after)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600

        # Clearing empties the history and keeps the file with everything else.
        assert await store.writer.clear_session("keep") == 3
        cleared = hello_load(path)
        assert cleared["history"] == []
        assert {k: v for k, v in cleared.items() if k not in ("history", "saved_at")} == {
            k: v for k, v in before.items() if k not in ("history", "saved_at")
        }
        assert [(s.id, s.messages) for s in await all_sessions(store)] == [("keep", 0)]
        assert await store.writer.clear_session("keep") == 0
        assert await store.writer.clear_session("never-was") == 0
        assert files(folder) == {"keep.json"}


async def test_a_library_save_in_between_is_not_lost(tmp_path):
    folder = tmp_path / "s"
    hello_save(folder, "busy", [hello_entry("user", "one")])
    async with await open_store(str(folder), writable=True) as store:
        assert await store.reader.count_messages("busy") == 1
        # The agent saves again (a new session_id, more history) while the store is open.
        hello_save(folder, "busy", [hello_entry("user", "one"), hello_entry("assistant", "two")])
        library_id = hello_load(folder / "busy.json")["session_id"]
        await store.writer.add_messages("busy", [{"role": "user", "content": "three"}])
    doc = hello_load(folder / "busy.json")
    assert [m.content for m in hello_history(doc)] == ["one", "two", "three"]
    assert doc["session_id"] == library_id


async def test_read_only_store_refuses_writes_and_changes_nothing(tmp_path):
    folder = tmp_path / "s"
    paths = library_folder(folder)
    before = {p.name: p.read_bytes() for p in paths.values()}
    async with await open_store(str(folder)) as store:
        for call in (
            store.writer.add_messages("alpha", [{"role": "user", "content": "no"}]),
            store.writer.add_messages("brand-new", [{"role": "user", "content": "no"}]),
            store.writer.add_messages("alpha", []),
            store.writer.clear_session("alpha"),
            store.session("beta").clear(),
            store.writer.import_session("other", iter([])),
        ):
            with pytest.raises(ReadOnlyError) as err:
                await call
            assert "read-only" in str(err.value) and "\n" not in str(err.value)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


async def test_editing_in_place_is_refused_with_a_reason(tmp_path):
    folder = tmp_path / "s"
    library_folder(folder)
    async with await open_store(str(folder), writable=True) as store:
        # Whole sessions can be cleared, deleted and forked (test_session_edits.py);
        # single messages cannot be edited in place.
        assert store.writer is not None and store.forks is not None and store.editor is None
        with pytest.raises(ReadOnlyError, match="single messages of JSON session files cannot be edited"):
            await (store.editor or refuse(store, "editor")).update_message("alpha", 1, {"role": "user", "content": "x"})
        with pytest.raises(ReadOnlyError, match="cannot be edited in place"):
            await (store.editor or refuse(store, "editor")).delete_messages("alpha", [1])
        assert await store.forks.fork_origin("alpha") is None
        assert await store.reader.count_messages("alpha") == 3


async def test_missing_folder_and_new_folder(tmp_path):
    from fluxgui.adapters.jsonfolder.store import open_folder

    with pytest.raises(TargetError) as err:
        await open_folder(tmp_path / "nope", "nope", writable=False, create=False)
    assert str(err.value) == "no such folder: nope"
    assert not (tmp_path / "nope").exists()
    async with await open_store(str(tmp_path / "a" / "b"), create="json") as store:
        assert await all_sessions(store) == [] and store.problems == []
    assert (tmp_path / "a" / "b").is_dir()
    # An empty folder is not taken for a session store, unless writing into it.
    with pytest.raises(NotASessionStore, match="is a folder with no JSON session files"):
        await open_store(str(tmp_path / "a" / "b"))
    async with await open_store(str(tmp_path / "a" / "b"), create="json") as store:
        assert await all_sessions(store) == []


# --------------------------------------------------------------------------- bad files


async def test_bad_files_are_reported_by_name_and_the_rest_opens(tmp_path):
    folder = tmp_path / "s"
    good = hello_save(folder, "good", [hello_entry("user", "still here")])
    whole = library_bytes(hello_load(good))
    (folder / "broken.json").write_bytes(whole[: whole.index(b'"history"')])  # cut short
    (folder / "list.json").write_bytes(b"[1, 2]")
    (folder / "nohistory.json").write_bytes(b'{"session_id": "x", "history": {}}')
    (folder / "latin.json").write_bytes(b'{"history": ["caf\xe9"]}')
    (folder / "empty.json").write_bytes(b"")
    async with await open_store(str(folder), writable=True) as store:
        assert store.problems == [
            "broken.json: not valid JSON (line 9 column 3)",
            "empty.json: not valid JSON (line 1 column 1)",
            "latin.json: not UTF-8 text",
            'list.json: not a JSON session file (no "history" list)',
            'nohistory.json: not a JSON session file (no "history" list)',
        ]
        assert [(s.id, s.messages) for s in await all_sessions(store)] == [("good", 1)]
        assert [m.text for m in await all_messages(store, "good")] == ["still here"]
        assert await store.reader.session_info("broken") is None
        assert await store.reader.page_messages("broken") == []
        # A broken file is not written over.
        with pytest.raises(TargetError) as err:
            await store.writer.add_messages("broken", [{"role": "user", "content": "x"}])
        assert str(err.value) == (
            "broken.json: not valid JSON (line 9 column 3): not changed (fix or remove the file first)"
        )
        assert (folder / "broken.json").read_bytes() == whole[: whole.index(b'"history"')]
        # Once the agent saves it again, it is a session and no longer a problem.
        hello_save(folder, "broken", [hello_entry("user", "repaired")])
        assert {s.id for s in await all_sessions(store)} == {"good", "broken"}
        assert "broken.json" not in " ".join(store.problems)


async def test_leftover_tmp_and_other_files_are_ignored(tmp_path):
    folder = tmp_path / "s"
    good = hello_save(folder, "chat", [hello_entry("user", "saved")])
    # An agent killed between writing the .tmp and renaming it, and unrelated files.
    (folder / "chat.json.tmp").write_bytes(good.read_bytes()[:40])
    (folder / "other.json.tmp").write_bytes(good.read_bytes())
    (folder / "notes.txt").write_text("not a session")
    (folder / "dir.json").mkdir()
    async with await open_store(str(folder), writable=True) as store:
        assert [s.id for s in await all_sessions(store)] == ["chat"] and store.problems == []
        await store.writer.add_messages("chat", [{"role": "assistant", "content": "more"}])
        assert [m.text for m in await all_messages(store, "chat")] == ["saved", "more"]
    assert files(folder) == {"chat.json", "chat.json.tmp", "other.json.tmp", "notes.txt", "dir.json"}


# --------------------------------------------------------------------------- ids and file names


HOSTILE = [
    "../escape", "../../etc/passwd", "/abs/path", "a/b", "back\\slash", "..", ".", ".hidden",
    "nul\x00byte", "line\nbreak", 'q"uote', "c:on", "wild*?<>|", "trailing. ", "trailing.",
    "100%", "%41", "%_%", "", " ", "-", "é" * 100, "日本語",
]


def test_file_stems_encode_only_what_a_name_cannot_hold():
    assert file_stem("plain-id_1") == "plain-id_1"
    assert file_stem("naïve café 日本") == "naïve café 日本"
    assert file_stem("../x") == "%2E.%2Fx"
    assert file_stem("..") == "%2E%2E"
    assert file_stem("100%") == "100%25"
    assert file_stem("") == "%"
    assert file_stem("a\x00b\nc") == "a%00b%0Ac"
    assert file_stem("trailing ") == "trailing%20"
    for sid in HOSTILE:
        stem = file_stem(sid)
        assert "/" not in stem and "\\" not in stem and "\x00" not in stem
        assert not stem.startswith(".")
        assert session_id_of(stem) == sid
    # Names the library wrote that this rule would not make are ids as they are.
    for stem in ("50%off", "a%41", "session-s-20260301-100000-abcd1234", "%zz", ".hidden"):
        assert session_id_of(stem) == stem


async def test_hostile_ids_stay_inside_the_folder_and_round_trip(tmp_path):
    folder = tmp_path / "s"
    async with await open_store(str(folder), create="json") as store:
        for sid in HOSTILE:
            await store.writer.add_messages(sid, [{"role": "user", "content": f"for {sid!r}"}])
    assert files(tmp_path) == {"s"}  # nothing outside the folder
    assert all(p.is_file() for p in folder.iterdir())  # no sub-folders
    assert files(folder) == {file_stem(sid) + ".json" for sid in HOSTILE}
    async with await open_store(str(folder)) as store:
        assert sorted(s.id for s in await all_sessions(store)) == sorted(HOSTILE)
        for sid in HOSTILE:
            assert [m.text for m in await all_messages(store, sid)] == [f"for {sid!r}"]
        assert store.problems == []


async def test_ids_that_cannot_be_file_names_are_refused(tmp_path):
    folder = tmp_path / "s"
    fits = "é" * (MAX_STEM_BYTES // 2)
    async with await open_store(str(folder), create="json") as store:
        await store.writer.add_messages(fits, [{"role": "user", "content": "ok"}])
        for sid in ("é" * (MAX_STEM_BYTES // 2 + 1), "x" * 300, "%" * 80, "lone \ud800"):
            for call in (
                store.writer.add_messages(sid, [{"role": "user", "content": "no"}]),
                store.writer.add_messages(sid, []),
                store.writer.import_session(sid, iter([])),
            ):
                with pytest.raises(InvalidItem) as err:
                    await call
                assert "\n" not in str(err.value) and "session id" in str(err.value)
        assert [s.id for s in await all_sessions(store)] == [fits]
    assert len(files(folder)) == 1


async def test_library_names_with_percent_are_written_in_place(tmp_path):
    folder = tmp_path / "s"
    hello_save(folder, "50%off", [hello_entry("user", "deal")])
    async with await open_store(str(folder), writable=True) as store:
        assert [s.id for s in await all_sessions(store)] == ["50%off"]
        await store.writer.add_messages("50%off", [{"role": "assistant", "content": "sure"}])
    assert files(folder) == {"50%off.json"}
    assert [m.content for m in hello_history(hello_load(folder / "50%off.json"))] == ["deal", "sure"]


# --------------------------------------------------------------------------- interrupted writes


async def test_a_failed_rename_leaves_the_old_file(tmp_path, monkeypatch):
    folder = tmp_path / "s"
    path = hello_save(folder, "chat", [hello_entry("user", "old")])
    old = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError(5, "Input/output error")

    async with await open_store(str(folder), writable=True) as store:
        monkeypatch.setattr(os, "replace", broken_replace)
        with pytest.raises(TargetError) as err:
            await store.writer.add_messages("chat", [{"role": "user", "content": "new"}])
        assert str(err.value) == f"cannot write {path}: Input/output error"
        monkeypatch.undo()
        assert path.read_bytes() == old
        assert files(folder) == {"chat.json"}  # the temporary file is gone
        assert [m.text for m in await all_messages(store, "chat")] == ["old"]
        await store.writer.add_messages("chat", [{"role": "user", "content": "new"}])
        assert [m.text for m in await all_messages(store, "chat")] == ["old", "new"]


KILLED_WRITER = """
import asyncio, os, signal, sys
from fluxgui.adapters import open_store

async def main():
    store = await open_store(sys.argv[1], writable=True)
    # Die at the worst moment: the new file is written and synced, not yet renamed.
    os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
    await store.writer.add_messages("chat", [{"role": "user", "content": "never renamed"}])

asyncio.run(main())
"""


async def test_a_killed_writer_leaves_the_old_file(tmp_path):
    folder = tmp_path / "s"
    path = hello_save(folder, "chat", [hello_entry("user", "old")])
    old = path.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_WRITER), str(folder)],
        env=cli_env(), capture_output=True, timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert path.read_bytes() == old
    [stray] = [p for p in folder.iterdir() if p.name != "chat.json"]
    assert stray.name.startswith("chat.json.") and stray.name.endswith(".tmp")
    assert [m["content"] for m in hello_load(stray)["history"]] == ["old", "never renamed"]
    async with await open_store(str(folder), writable=True) as store:
        assert [(s.id, s.messages) for s in await all_sessions(store)] == [("chat", 1)]
        assert store.problems == []
        await store.writer.add_messages("chat", [{"role": "user", "content": "after"}])
        assert [m.text for m in await all_messages(store, "chat")] == ["old", "after"]


# --------------------------------------------------------------------------- copy and import


async def test_copy_from_agents_store_and_back_keeps_items(tmp_path):
    items = [
        {"role": "user", "content": "weather?"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city": "Oslo"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "rain"},
        {"type": "message", "role": "assistant", "id": "m1", "status": "completed",
         "content": [{"type": "output_text", "text": "It rains.", "annotations": []}]},
    ]
    source_path = tmp_path / "agents.db"
    session = AgentsSQLiteSession("trip", str(source_path))
    try:
        await session.add_items(items)
    finally:
        session.close()
    folder = tmp_path / "json"
    async with await open_store(str(source_path)) as source:
        async with await open_copy_target(str(folder), source, fmt="json") as dest:
            assert dest.format == "json"
            result = await copy_sessions(source, dest)
            assert result.written == [("trip", "trip")]
            with pytest.raises(IdTaken):
                await copy_sessions(source, dest)
            again = await copy_sessions(source, dest, rename=True)
            assert again.written == [("trip", "trip-2")]
            again = await copy_sessions(source, dest, rename=True)
            assert again.written == [("trip", "trip-3")]
            with pytest.raises(Conflict) as err:
                await dest.writer.import_session("trip", iter([]))
            assert str(err.value) == f'session "trip" already exists in {folder}; nothing was written for it'
    doc = hello_load(folder / "trip.json")
    assert [(m.role, m.content) for m in hello_history(doc)] == [
        ("user", "weather?"),
        ("assistant", 'weather({"city": "Oslo"})'),
        ("tool", "rain"),
        ("assistant", "It rains."),
    ]
    assert [e["metadata"].get("agents_item") for e in doc["history"]] == [None, *items[1:]]
    # And back into a new Agents SDK store: the same items.
    async with await open_store(str(folder)) as source:
        async with await open_copy_target(str(tmp_path / "back.db"), source, fmt="agents") as dest:
            await copy_sessions(source, dest, ["trip"])
    back = AgentsSQLiteSession("trip", str(tmp_path / "back.db"))
    try:
        assert await back.get_items() == items
    finally:
        back.close()


async def test_import_keeps_times_as_local_time(tmp_path, local_zone):
    from fluxgui.core.model import Message

    folder = tmp_path / "s"
    page = [
        Message(id=1, role="user", kind="message", text="q", created_at="2026-03-01T15:00:00+00:00"),
        Message(id=2, role="developer", kind="message", text="rules", created_at=None),
        Message(id=3, role="unknown", kind="other", text="{bad", raw="{bad", created_at="2026-03-01T15:00:05+00:00"),
    ]
    async with await open_store(str(folder), create="json") as store:
        assert await store.writer.import_session("imp", iter([page]), created_at="2026-03-01T14:00:00+00:00") == ("imp", 3)
        info = await store.reader.session_info("imp")
        assert info.created_at == "2026-03-01T09:00:00-05:00"
        assert info.updated_at == "2026-03-01T10:00:05-05:00"  # the last message's time
    doc = hello_load(folder / "imp.json")
    assert doc["created_at"] == "2026-03-01T09:00:00"
    loaded = hello_history(doc)
    assert [(m.role, m.content) for m in loaded] == [("user", "q"), ("system", "rules"), ("user", "{bad")]
    assert loaded[0].timestamp == datetime(2026, 3, 1, 10, 0, 0)


# --------------------------------------------------------------------------- index and concurrency


async def test_only_changed_files_are_parsed_again(tmp_path, monkeypatch):
    from fluxgui.adapters.jsonfolder import index as jsonfolder  # where files are parsed

    folder = tmp_path / "s"
    for i in range(12):
        hello_save(folder, f"s{i:02d}", [hello_entry("user", f"m{i}")])
    parsed: list[int] = []
    real = jsonfolder._problem_of

    def counting(name: str, data: bytes):
        parsed.append(len(data))
        return real(name, data)

    monkeypatch.setattr(jsonfolder, "_problem_of", counting)
    async with await open_store(str(folder)) as store:
        assert len(parsed) == 12  # each file once, to index it
        parsed.clear()
        await all_sessions(store, page_size=5)
        await store.reader.session_info("s03")
        assert parsed == []  # nothing changed: nothing parsed
        hello_save(folder, "s03", [hello_entry("user", "m3"), hello_entry("assistant", "r3")])
        listed = await all_sessions(store)
        assert len(parsed) == 1
        assert (listed[0].id, listed[0].messages) == ("s03", 2)


async def test_concurrent_writes_from_one_store_all_land(tmp_path):
    import asyncio

    folder = tmp_path / "s"
    async with await open_store(str(folder), create="json") as store:
        await asyncio.gather(*(
            store.writer.add_messages("shared", [{"role": "user", "content": f"m{i}"}]) for i in range(20)
        ))
        await asyncio.gather(*(
            store.writer.add_messages(f"own{i}", [{"role": "user", "content": "x"}]) for i in range(5)
        ))
        assert await store.reader.count_messages("shared") == 20
        assert len(await all_sessions(store)) == 6
    assert sorted(m.content for m in hello_history(hello_load(folder / "shared.json"))) == sorted(
        f"m{i}" for i in range(20)
    )


async def test_a_writable_folder_takes_new_sessions_but_refuses_edits(tmp_path):
    folder = tmp_path / "s"
    hello_save(folder, "one", [hello_entry("user", "hi")])
    async with await open_store(str(folder), writable=True) as store:
        store.writer.check_importable()  # import and copy may write here
        assert store.editor is None
        assert "cannot be edited in place" in missing(store, "editor")
    async with await open_store(str(folder)) as ro:
        with pytest.raises(ReadOnlyError, match="open read-only"):
            ro.writer.check_importable()
