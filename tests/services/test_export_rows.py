"""The JSON/JSONL export's fast path (rows straight to records) writes exactly what the
Message path writes.

SQL stores hand the export pages of rows (``iter_row_pages``, ``row_pages_of``) that
the writers turn into records without Messages (:mod:`fluxgui.core.jsonrecords`). Here
every export is compared byte for byte with the one the Message path gives (the writer
fed ``iter_messages`` pages), on stores the real libraries wrote: items of every kind,
non-finite numbers, values damaged by SQL as a buggy writer would leave them (not JSON,
not UTF-8), an envelope the store only meets while exporting; and row by row on rows the
stores themselves read.
"""

from __future__ import annotations

import io
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession

from fluxgui.adapters import open_store
from fluxgui.core.export import make_writer
from fluxgui.core.jsonrecords import RowPage
from fluxgui.core.jsonsafe import BIG
from fluxgui.core.model import SessionInfo
from fluxgui.services.export import export_to_stream
from fluxgui.services.transfer_common import session_infos

AGENT_ITEMS: list[Any] = [
    {"role": "system", "content": "Be terse."},
    {"role": "user", "content": "Wie ist das Wetter in Zürich? ☀️ \u202e rtl \x00 nul"},
    {"role": "user", "content": [{"type": "input_text", "text": "Danke! 日本語も"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
    {"type": "function_call", "call_id": "c1", "name": "get_weather",
     "arguments": json.dumps({"city": "Zürich"}), "id": "fc_1", "status": "completed"},
    {"type": "function_call_output", "call_id": "c1", "output": "22 °C"},
    {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "t"}]},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "It is 22 °C. 🌤", "annotations": []}]},
    {"type": "compaction", "encrypted_content": "opaque"},
    {"type": "some_future_item", "payload": {"nested": [1, 2.5, -0.0, 10**30, {"x": None}]}},
    {"type": 7, "role": ["not", "a", "string"]},
    {"role": "user", "content": "scores", "score": math.nan, "hi": math.inf, "lo": -math.inf},
    {"role": "user", "content": "x" * (BIG + 10)},  # big: written in slices
]
FLUX_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "hello ünï 😀", "metadata": {"k": 1, "l": [1.5, "x", None]}},
    {"role": "assistant", "content": "", "metadata": {"tool_calls": [{"id": "c", "name": "f"}]}},
    {"role": "tool", "content": "out", "metadata": {"tool_call_id": "c"}},
    {"role": "user", "content": "nan", "metadata": {"v": math.nan, "w": [math.inf]}},
    {"role": "user", "content": "big", "metadata": {"blob": "y" * (BIG + 5)}},
]
#: values written by SQL into flux rows (column, stored value): not what flux writes
FLUX_DAMAGE = [
    ("metadata", "not json"), ("metadata", ' {"lead": "space"} '), ("metadata", '{"a":1,"a":2}'),
    ("metadata", '"a string"'), ("metadata", "[1, 2]"), ("metadata", "1e400"),
    ("metadata", ""), ("metadata", '{"esc": "\\u00e9\\ud83d\\ude00\\ud800"}'),
    ("metadata", '{"x": 1} trailing'), ("role", ""), ("content", None),
    ("created_at", "2024-01-02T03:04:05Z"), ("created_at", "not a time"), ("created_at", None),
    ("created_at", 1700000000), ("content", 42), ("metadata", "[" * 100_000 + "]" * 100_000),
    ("metadata", '{"n": -9223372036854775809, "m": 18446744073709551616, "e": "e+1", "f": 1E5}'),
    ("metadata", '{"v": NaN}'), ("metadata", '{"d": ' + "[" * 1100 + "]" * 1100 + "}"),
]
#: message_data values written by SQL into Agents SDK rows
AGENT_DAMAGE = [
    "not json", ' {"role": "user", "content": "spaced"} ', '{"role":"user","content":"compact"}',
    '"just a string"', "42", "null", "[1, 2]", '{"role": "user", "content": "\\ud800 lone"}',
    '{"role": "user", "content": "a"} extra', "1e400", "[" * 100_000 + "]" * 100_000,
    '{"role": "assistant", "content": [{"type": ["output_text"], "text": "a list for a type"}]}',
    # what orjson (the export's fast parser) reads otherwise than json, or refuses
    '{"role": "user", "content": "ints", "n": [-9223372036854775809, 18446744073709551616, '
    '18446744073709551615, -9223372036854775808, 1234567890123456789]}',
    '{"role": "user", "content": "e+ in a string, 1e+30", "x": 1E5, "y": 2.5e-7}',
    '{"role": "user", "content": "NaN", "v": NaN, "w": -Infinity}',
    '{"role": "user", "content": "dup", "k": 1, "z": 2, "k": 3}',
    '{"role": "user", "content": "deep", "d": ' + "[" * 1100 + "]" * 1100 + "}",
    '{"role": "user", "content": "escapes \\u00e9\\/ \\ud83d\\ude00"}',
]


def sql(path: Path, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(str(path))
    try:
        rows = conn.execute(statement, params).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


async def write_agents(path: Path, sessions: dict[str, list[Any]]) -> None:
    for sid, items in sessions.items():
        session = AgentsSQLiteSession(sid, str(path))
        try:
            await session.add_items(items)
        finally:
            session.close()


async def agents_store(path: Path) -> None:
    await write_agents(path, {"a": AGENT_ITEMS, "b": AGENT_ITEMS[:3], "c": AGENT_ITEMS[4:6]})
    # the damaged rows: each a copy of a row of session "d", its item replaced by SQL
    await write_agents(path, {"d": [{"role": "user", "content": str(i)} for i in range(len(AGENT_DAMAGE))]})
    ids = [r[0] for r in sql(path, "SELECT id FROM agent_messages WHERE session_id = 'd' ORDER BY id")]
    for row_id, value in zip(ids, AGENT_DAMAGE):
        sql(path, "UPDATE agent_messages SET message_data = ? WHERE id = ?", (value, row_id))
    bad = bytes.fromhex("7B22726F6C65223A2275736572222C22636F6E74656E74223A22FF227D")  # not UTF-8
    sql(path, "UPDATE agent_messages SET message_data = CAST(? AS TEXT) WHERE id = ?", (bad, ids[0]))


async def flux_store(path: Path) -> None:
    await FluxSQLiteSession(str(path), session_id="a").add_messages(FLUX_MESSAGES)
    await FluxSQLiteSession(str(path), session_id="b").add_messages(FLUX_MESSAGES[:2])
    await FluxSQLiteSession(str(path), session_id="d").add_messages(
        [{"role": "user", "content": str(i)} for i in range(len(FLUX_DAMAGE) + 1)]
    )
    ids = [r[0] for r in sql(path, "SELECT id FROM messages WHERE session_id = 'd' ORDER BY id")]
    for row_id, (column, value) in zip(ids, FLUX_DAMAGE):
        sql(path, f"UPDATE messages SET {column} = ? WHERE id = ?", (value, row_id))
    sql(path, "UPDATE messages SET content = CAST(? AS TEXT) WHERE id = ?", (b"caf\xe9", ids[-1]))


MAKERS = {"agents": agents_store, "flux": flux_store}


async def message_path(path: Path, fmt: str, metadata: bool) -> tuple[str, int]:
    """The export as the writer writes the stores' Messages (``iter_messages`` pages)."""
    async with await open_store(str(path)) as store:
        out = io.StringIO()
        writer = make_writer(fmt, out, metadata=metadata)
        writer.begin(store.format, "t", columns=store.traits.columns)
        async for info in session_infos(store, None):
            writer.session(info)
            async for page in store.reader.iter_messages(info.id):
                writer.messages(page)
            writer.end_session()
        writer.end()
        return out.getvalue(), writer.replaced_non_finite


async def exported(path: Path, fmt: str, metadata: bool) -> tuple[str, list[str]]:
    async with await open_store(str(path)) as store:
        out = io.StringIO()
        result = await export_to_stream(store, out, fmt, metadata=metadata, title="t")
        return out.getvalue(), result.notes


@pytest.mark.parametrize("kind", ["agents", "flux"])
@pytest.mark.parametrize("fmt", ["json", "jsonl"])
@pytest.mark.parametrize("metadata", [True, False])
async def test_export_is_byte_for_byte_the_message_path(tmp_path, kind, fmt, metadata):
    path = tmp_path / f"{kind}.db"
    await MAKERS[kind](path)
    expected, replaced = await message_path(path, fmt, metadata)
    text, notes = await exported(path, fmt, metadata)
    same(text, expected)
    if metadata or kind == "agents":  # (flux keeps its non-finite numbers in metadata)
        assert replaced > 0 and any(f"{replaced:,} number" in n for n in notes)
    if fmt == "jsonl":
        assert text.count("\n") > 20
    else:
        json.loads(text)  # strict JSON (the NaN and the infinities are strings)


@pytest.mark.parametrize("kind", ["agents", "flux"])
async def test_each_row_gives_the_record_of_the_message_the_store_reads(tmp_path, kind):
    """Row by row, through one writer fed RowPages and one fed the stores' Messages."""
    path = tmp_path / f"{kind}.db"
    await MAKERS[kind](path)
    table, cols = (("messages", "id, role, content, metadata, created_at") if kind == "flux"
                   else ("agent_messages", "id, message_data, created_at"))
    async with await open_store(str(path)) as store:
        rows = await store.backend.fetchall(f"SELECT {cols}, session_id FROM {table} ORDER BY id")
        read = store.reader.message if kind == "flux" else (lambda r: store.reader.message(r, str(r[-1])))
        for fmt in ("json", "jsonl"):
            for row in rows:
                fast, slow = io.StringIO(), io.StringIO()
                outs = []
                for out, page in ((fast, RowPage(kind, [row], read)), (slow, None)):
                    writer = make_writer(fmt, out)
                    writer.begin(kind, columns=kind == "flux")
                    writer.session(SessionInfo(str(row[-1]), 1, None, None))
                    if page is None:
                        writer.messages([read(row)])
                    else:
                        writer.rows(page)
                    writer.end_session()
                    writer.end()
                    outs.append(writer.replaced_non_finite)
                same(fast.getvalue(), slow.getvalue(), row[:2])
                assert outs[0] == outs[1]


async def test_an_envelope_met_while_exporting_is_read_as_the_message_path_reads_it(tmp_path):
    """A store whose envelopes the sample at open misses: the page holding one is read
    as Messages, and what follows is marked as the Message path marks it."""
    from agents.extensions.memory import EncryptedSession
    from cryptography.fernet import Fernet

    path = tmp_path / "enc.db"
    # "zz-early" is exported before the envelope's session, though it sorts after it
    await write_agents(path, {"plain": [{"role": "user", "content": "first"}],
                              "zz-early": [{"role": "user", "content": "before"}]})
    under = AgentsSQLiteSession("hidden", str(path))
    try:
        sealed = EncryptedSession("hidden", under, encryption_key=Fernet.generate_key().decode())
        await sealed.add_items([{"role": "user", "content": "secret"}])
    finally:
        under.close()
    await write_agents(path, {"plain": [{"role": "user", "content": f"m{i}"} for i in range(60)],
                              "later": [{"role": "user", "content": "after"}]})
    for fmt in ("json", "jsonl"):
        expected, _ = await message_path(path, fmt, True)
        text, _ = await exported(path, fmt, True)
        same(text, expected)
        assert '"state": "locked"' in text and '"state": "plaintext"' in text


@pytest.mark.parametrize("kind", ["agents", "flux"])
async def test_sessions_read_together_are_read_whole(tmp_path, kind):
    path = tmp_path / f"{kind}.db"
    await MAKERS[kind](path)
    async with await open_store(str(path)) as store:
        alone = {}
        for sid in ("a", "b", "d"):
            alone[sid] = [r for page in [p async for p in store.rows.iter_row_pages(sid)] for r in rows_of(page)]
        together = await store.rows.row_pages_of(["a", "b", "d", "nobody"], limit=1000)
        assert {sid: rows_of(p) for sid, p in together.items()} == {**alone, "nobody": []}
        # past the limit, the last session met (and those after it) is left to read alone
        cut = await store.rows.row_pages_of(["a", "b"], limit=len(alone["a"]) + 1)
        assert {sid: rows_of(p) for sid, p in cut.items()} == {"a": alone["a"]}


def same(text: str, expected: str, what: Any = "") -> None:
    """``text == expected``, told by where they part (the texts are megabytes long)."""
    if text != expected:
        at = next((i for i, (a, b) in enumerate(zip(text, expected)) if a != b), min(len(text), len(expected)))
        raise AssertionError(f"{what} differs at {at}: {text[at - 80:at + 80]!r} != {expected[at - 80:at + 80]!r}")


def rows_of(page: Any) -> list[tuple[Any, ...]]:
    """A page's rows as (id, …) without the trailing session id a group read adds."""
    if isinstance(page, RowPage):
        width = 5 if page.layout == "flux" else 3
        return [tuple(r[:width]) for r in page.rows]
    return [(m.id,) for m in page]
