"""Reading files to import (fluxgui.core.imports): fluxgui's JSON and JSONL exports and
HelloAgent's JSON session files. Every problem is one line naming the file (and, for
JSONL, the line).

HelloAgent session files: ``hello-agents`` 1.0.0 cannot be installed beside the Agents
SDK (it pins ``openai<2``; ``openai-agents`` 0.24 needs ``openai>=3``), so
:func:`hello_save` writes them exactly as its ``SessionStore.save`` does (FORMATS.md):
the same keys in the same order, ``Message.to_dict`` entries, ``json.dump(indent=2,
ensure_ascii=False)`` to ``<file>.tmp`` and ``os.replace``.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages, all_sessions

from fluxgui.adapters import open_store
from fluxgui.core.errors import InvalidItem, TargetError
from fluxgui.core.imports import read_sessions
from fluxgui.services.export import export_sessions


def hello_save(folder: Path, name: str, history: list[dict], *, created_at: str | None = None) -> Path:
    """A HelloAgent ``SessionStore.save(..., session_name=name)``: history entries are
    ``Message.to_dict()`` dicts (role, content, timestamp, metadata)."""
    session_id = f"s-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
    metadata = {"total_tokens": 12}
    if created_at:
        metadata["created_at"] = created_at
    session_data = {
        "session_id": session_id,
        "created_at": metadata.get("created_at", datetime.now().isoformat()),
        "saved_at": datetime.now().isoformat(),
        "agent_config": {"name": "assistant", "llm_model": "gpt-4"},
        "history": history,
        "tool_schema_hash": "abc123",
        "read_cache": {},
        "metadata": metadata,
    }
    folder.mkdir(parents=True, exist_ok=True)
    filepath = folder / f"{name}.json"
    temp_path = str(filepath) + ".tmp"
    with open(temp_path, "w", encoding="utf-8") as f:
        json.dump(session_data, f, indent=2, ensure_ascii=False)
    os.replace(temp_path, filepath)
    return filepath


def entry(role: str, content: str, timestamp: str | None, metadata: dict | None = None) -> dict:
    return {"role": role, "content": content, "timestamp": timestamp, "metadata": metadata if metadata is not None else {}}


def read_all(path: Path) -> list[tuple[str, str | None, str | None, list]]:
    out = []
    for s in read_sessions(path):
        msgs = [m for page in s.pages for m in page]
        out.append((s.id, s.created_at, s.updated_at, msgs))
    return out


def key(m) -> tuple:
    return (m.role, m.kind, m.text, m.metadata, m.created_at, m.raw)


# --------------------------------------------------------------------------- exports


async def test_json_and_jsonl_exports_read_back(tmp_path):
    path = tmp_path / "agents.db"
    for sid, items in (
        ("a", [{"role": "user", "content": "x"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]),
        ("b", [{"role": "user", "content": "y"}]),
    ):
        session = AgentsSQLiteSession(sid, str(path))
        try:
            await session.add_items(items)
        finally:
            session.close()
    async with await open_store(str(path)) as store:
        expected = [
            (info.id, info.created_at, info.updated_at, [key(m) for m in await all_messages(store, info.id)])
            for info in reversed(await all_sessions(store))  # exported oldest activity first
        ]
        await export_sessions(store, tmp_path / "e.json", "json")
        await export_sessions(store, tmp_path / "e.jsonl", "jsonl")
    got = [(sid, c, u, [key(m) for m in msgs]) for sid, c, u, msgs in read_all(tmp_path / "e.json")]
    assert got == expected
    got = [(sid, c, u, [key(m) for m in msgs]) for sid, c, u, msgs in read_all(tmp_path / "e.jsonl")]
    assert got == [(sid, None, None, msgs) for sid, _c, _u, msgs in expected]


def test_jsonl_groups_consecutive_lines_and_skips_blank_ones(tmp_path):
    path = tmp_path / "x.jsonl"
    lines = [
        {"session_id": "a", "role": "user", "text": "1"},
        {"session_id": "a", "role": "assistant", "kind": "message", "text": "2", "metadata": {"k": 1}},
        {"session_id": "b", "raw": {"type": "function_call_output", "call_id": "c", "output": "out"}},
        {"session_id": "a", "role": "user", "text": "3", "created_at": "2026-01-02T03:04:05+00:00"},
    ]
    body = "\n".join(json.dumps(x) for x in lines[:2]) + "\n\n   \n" + "\n".join(json.dumps(x) for x in lines[2:])
    path.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))  # a BOM too
    got = read_all(path)
    assert [(sid, [m.text for m in msgs]) for sid, _c, _u, msgs in got] == [("a", ["1", "2"]), ("b", ["out"]), ("a", ["3"])]
    b = got[1][3][0]
    assert (b.role, b.kind, b.raw) == ("tool", "tool_output", lines[2]["raw"])  # from the raw item alone
    assert got[0][3][1].metadata == {"k": 1}
    assert got[2][3][0].created_at == "2026-01-02T03:04:05+00:00"


BAD_LINES = [
    (b'{"session_id": "a", "role": "user", "text": "ok"}\n{"session_id": "a", "role": \n', 2, "not valid JSON"),
    (b'{"session_id": "a", "role": "user", "text": "ok"}\n{"session_id": "a", "text": "\xff\xfe"}\n', 2, "not UTF-8 text"),
    (b'{"role": "user", "text": "no session"}\n', 1, 'needs a "session_id"'),
    (b'[1, 2]\n', 1, 'needs a "session_id"'),
    (b'{"session_id": "a", "role": "user"}\n{"session_id": "a", "text": "no role"}\n', 2, 'needs a "role"'),
    # (metadata may be any JSON value: a flux row's may be a list, as flux returns it)
    (b'\n\n{"session_id": "a", "role": "user", "created_at": [1]}\n', 3, '"created_at" must be text'),
    (b'{"session_id": "a", "role": "user", "created_at": 5}\n', 1, '"created_at" must be text'),
]


@pytest.mark.parametrize("data,line,message", BAD_LINES)
def test_bad_jsonl_lines_name_the_file_and_line(tmp_path, data, line, message):
    path = tmp_path / "broken export.jsonl"
    path.write_bytes(data)
    with pytest.raises(InvalidItem) as err:
        read_all(path)
    text = str(err.value)
    assert f"{path}, line {line}: " in text and message in text, text
    assert "\n" not in text


BAD_JSON = [
    (b"", "is not valid JSON (Expecting value: line 1 column 1"),
    (b'{"fluxgui_export": 1, "sessions": [', "is not valid JSON"),
    (b"[]", 'neither a fluxgui export nor a JSON session file'),
    (b'{"hello": 1}', 'neither a fluxgui export nor a JSON session file'),
    (b'{"fluxgui_export": 2, "sessions": []}', "version 2 export"),
    (b'{"fluxgui_export": true, "sessions": []}', "must be a version number"),
    (b'{"fluxgui_export": 1, "sessions": {}}', '"sessions" must be a list'),
    (b'{"fluxgui_export": 1, "sessions": [{"messages": []}]}', 'session 1: a session needs an "id"'),
    (b'{"fluxgui_export": 1, "sessions": [{"id": "a"}]}', 'session 1: "messages" must be a list'),
    (b'{"fluxgui_export": 1, "sessions": [{"id": "a", "messages": [{"role": "user"}, 7]}]}',
     "session 1, message 2: a message must be a JSON object"),
    (b'{"history": [{"role": "wizard", "content": "x"}]}', "history entry 1: unknown role 'wizard'"),
    (b'{"history": [{"role": "user", "content": "x", "metadata": "m"}]}', 'history entry 1: "metadata" must be a JSON object'),
    (b'{"history": ["text"]}', "history entry 1: must be a JSON object"),
    ('{"history": [{"role": "user", "content": "trunc'.encode(), "is not valid JSON"),
]


@pytest.mark.parametrize("data,message", BAD_JSON)
def test_bad_json_files_name_the_file(tmp_path, data, message):
    path = tmp_path / "some file.json"
    path.write_bytes(data)
    with pytest.raises(InvalidItem) as err:
        read_all(path)
    text = str(err.value)
    assert str(path) in text and message in text, text
    assert "\n" not in text


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(TargetError, match="no such file"):
        read_all(tmp_path / "nope.json")
    with pytest.raises(TargetError, match="is a folder"):
        read_all(tmp_path)


# --------------------------------------------------------------------------- HelloAgent


def test_hello_agent_session_file(tmp_path, local_zone):
    history = [
        entry("system", "You are HelloAgent.", "2026-03-01T10:00:00"),
        entry("user", "Bonjour ✓", "2026-03-01T10:00:01.250000", {"source": "cli"}),
        entry("assistant", "Salut!", "2026-03-01T10:00:02"),
        entry("tool", '{"result": 42}', "2026-03-01T10:00:03"),
        entry("summary", "They greeted.", None),
    ]
    path = hello_save(tmp_path / "sessions", "my-chat", history, created_at="2026-03-01T09:59:00")
    assert not Path(str(path) + ".tmp").exists()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["session_id"] != "my-chat"  # the id changes on every save
    [(sid, created, saved, msgs)] = read_all(path)
    assert sid == "my-chat"  # the file name is the stable id
    assert created == "2026-03-01T09:59:00-05:00"  # local time, with this machine's zone
    assert saved == datetime.fromisoformat(data["saved_at"]).astimezone().isoformat()
    assert [(m.role, m.kind, m.text) for m in msgs] == [
        ("system", "message", "You are HelloAgent."),
        ("user", "message", "Bonjour ✓"),
        ("assistant", "message", "Salut!"),
        ("tool", "tool_output", '{"result": 42}'),
        ("summary", "message", "They greeted."),
    ]
    assert [m.created_at for m in msgs] == [
        "2026-03-01T10:00:00-05:00",
        "2026-03-01T10:00:01.250000-05:00",
        "2026-03-01T10:00:02-05:00",
        "2026-03-01T10:00:03-05:00",
        None,
    ]
    assert [m.metadata for m in msgs] == [None, {"source": "cli"}, None, None, None]
    assert all(m.raw is None for m in msgs)


async def test_hello_agent_file_imported_keeps_its_times_in_utc(tmp_path, local_zone):
    from fluxgui.services.transfer import import_files, open_import_target

    path = hello_save(tmp_path, "chat", [entry("user", "hi", "2026-03-01T10:00:00"), entry("assistant", "ho", "2026-03-01T10:00:05")])
    new = tmp_path / "store.db"
    async with await open_import_target(str(new), [path]) as store:
        assert store.format == "flux"  # no Agents SDK items
        await import_files(store, [path])
    assert await FluxSQLiteSession(str(new), session_id="chat").get_messages() == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ho"},
    ]
    async with await open_store(str(new)) as store:
        msgs = await all_messages(store, "chat")
    assert [m.created_at for m in msgs] == ["2026-03-01T15:00:00+00:00", "2026-03-01T15:00:05+00:00"]
