"""Comparing sessions of real stores (flux written by flux, Agents SDK by the SDK)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages

from fluxgui.adapters import open_store
from fluxgui.core.errors import FluxguiError, SessionNotFound
from fluxgui.services.compare import (
    SessionTooLarge,
    compare_sessions,
    first_line,
    format_diff_text,
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call(n: int) -> list[dict[str, Any]]:
    return [
        {"type": "function_call", "call_id": f"c{n}", "name": "lookup", "arguments": f'{{"n": {n}}}'},
        {"type": "function_call_output", "call_id": f"c{n}", "output": f"result {n}"},
    ]


ORIGIN: list[list[dict[str, Any]]] = [
    [user("Where is my order 1001?")],
    [*call(1), answer("It shipped yesterday.", "msg_a")],
    [user("Can you refund the shipping?")],
    [answer("Yes, refunded $5.", "msg_b")],
    [user("Thanks!")],
    [answer("You're welcome.", "msg_c")],
]


def fork_of(origin: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """The same conversation with turn 2's answer changed (new item id too) and a 4th turn."""
    items = [list(batch) for batch in origin]
    items[3] = [answer("Sorry, shipping is not refundable.\nSecond line.", "msg_other")]
    return [*items, [user("One more thing")], [answer("Sure.", "msg_d")]]


async def write_agents(path: Path, sessions: dict[str, list[list[dict[str, Any]]]]) -> None:
    for sid, batches in sessions.items():
        s = AgentsSQLiteSession(sid, str(path))
        try:
            for batch in batches:
                await s.add_items(batch)  # type: ignore[arg-type]
        finally:
            s.close()


async def write_flux(path: Path, sessions: dict[str, list[dict[str, Any]]]) -> None:
    for sid, messages in sessions.items():
        await FluxSQLiteSession(str(path), session_id=sid).add_messages(messages)


@pytest.fixture
async def agents_store(tmp_path: Path) -> AsyncIterator[Any]:
    path = tmp_path / "agents.db"
    await write_agents(path, {"origin": ORIGIN, "fork": fork_of(ORIGIN), "copy": ORIGIN})
    store = await open_store(str(path))
    yield store
    await store.close()


async def test_two_forks_differ_in_one_turn_plus_an_extra_turn(agents_store: Any) -> None:
    c = await compare_sessions(agents_store, "origin", agents_store, "fork")
    assert {t.number: t.status for t in c.turns} == {1: "same", 2: "differs", 3: "same", 4: "only_b"}
    assert c.first_difference == 2
    assert c.a.session_id == "origin" and c.a.messages == 8 and c.a.turns == 3
    assert c.b.session_id == "fork" and c.b.messages == 10 and c.b.turns == 4
    t2 = c.turn(2)
    assert t2 is not None
    assert [ch.to_dict() for ch in t2.changes] == [{"change": "changed", "a": 1, "b": 1}]
    assert t2.messages_b[1].text.startswith("Sorry")
    assert c.usage_dict() is None  # a plain Agents SDK store keeps no usage

    d = json.loads(json.dumps(c.to_dict()))
    assert d["first_difference"] == 2 and d["usage"] is None
    assert [t["same"] for t in d["turns"]] == [True, False, True, False]
    assert d["turns"][3]["a"] == [] and len(d["turns"][3]["b"]) == 2

    # reversed, the extra turn is only in A
    r = await compare_sessions(agents_store, "fork", agents_store, "origin")
    assert r.turn(4).status == "only_a"  # type: ignore[union-attr]


async def test_a_copy_is_identical_and_defaults(agents_store: Any) -> None:
    c = await compare_sessions(agents_store, "origin", session_b="copy")
    assert c.identical and c.first_difference is None
    assert c.counts == {"same": 3, "differs": 0, "only_a": 0, "only_b": 0}
    text = format_diff_text(c)
    assert "identical" in text and "3 turns: 3 same, 0 differ" in text
    # one session against itself (what two branches of one session start from)
    assert (await compare_sessions(agents_store, "origin")).identical


async def test_text_summary(agents_store: Any) -> None:
    text = format_diff_text(await compare_sessions(agents_store, "origin", agents_store, "fork"))
    lines = text.splitlines()
    assert lines[0] == 'A: origin — 8 messages, 3 turns'
    assert lines[1] == 'B: fork — 10 messages, 4 turns'
    assert lines[2] == "first difference: turn 2"
    assert lines[3] == "= turn 1  Where is my order 1001?"
    assert lines[4] == "≠ turn 2 differs  Can you refund the shipping?"
    assert lines[5] == "    ~ A assistant: Yes, refunded $5."
    assert lines[6] == "      B assistant: Sorry, shipping is not refundable."
    assert lines[7] == "= turn 3  Thanks!"
    assert lines[8] == "+ turn 4 only in B  One more thing"
    assert lines[9] == "    + user: One more thing"
    assert lines[10] == "    + assistant: Sure."
    assert lines[11] == "4 turns: 2 same, 1 differ, 1 only in B"


async def test_flux_stores_and_across_formats(tmp_path: Path) -> None:
    flux_path = tmp_path / "flux.db"
    base = [
        {"role": "user", "content": "Translate cat", "metadata": {"lang": "de"}},
        {"role": "assistant", "content": "Katze"},
        {"role": "user", "content": "and dog"},
        {"role": "assistant", "content": "Hund"},
    ]
    other = [dict(m) for m in base]
    other[0]["metadata"] = {"lang": "fr"}  # metadata is content in flux
    await write_flux(flux_path, {"one": base, "two": other})
    agents_path = tmp_path / "agents.db"
    await write_agents(agents_path, {"same": [[{"role": m["role"], "content": m["content"]} for m in base]]})
    flux_store = await open_store(str(flux_path))
    agents_store = await open_store(str(agents_path))
    try:
        c = await compare_sessions(flux_store, "one", flux_store, "two")
        assert [t.status for t in c.turns] == ["differs", "same"]
        assert c.turn(1).changes[0].to_dict() == {"change": "changed", "a": 0, "b": 0}  # type: ignore[union-attr]
        # a flux session against the same words in an Agents SDK store: the same turns
        x = await compare_sessions(flux_store, "one", agents_store, "same")
        assert x.identical
        assert x.a.target == flux_store.target and x.b.target == agents_store.target
        assert f"in {agents_store.target}" in format_diff_text(x)
    finally:
        await flux_store.close()
        await agents_store.close()


async def test_unknown_session_and_size_limit(agents_store: Any) -> None:
    with pytest.raises(SessionNotFound):
        await compare_sessions(agents_store, "origin", agents_store, "nope")
    with pytest.raises(SessionTooLarge) as info:
        await compare_sessions(agents_store, "origin", agents_store, "fork", max_messages=9)
    assert '"fork" has 10 messages' in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, FluxguiError)


async def test_branches_need_a_store_that_reads_them(agents_store: Any) -> None:
    with pytest.raises(FluxguiError, match="keeps no branches"):
        await compare_sessions(agents_store, "origin", branch_a="main", branch_b="b1")


class WithBranchesAndUsage:
    """A real store that declares branches and usage: a branch other than ``main`` reads
    another session of the store standing in for it; usage comes from a table."""

    def __init__(self, store: Any, branches: dict[str, str], usage: dict[str, Any]) -> None:
        self._store = store
        self._branches = branches  # branch -> session whose messages stand in for it
        self._usage = usage
        self.asked: list[tuple[str, str | None]] = []

    @property
    def reader(self) -> WithBranchesAndUsage:  # the roles it stands in for
        return self

    @property
    def branches(self) -> WithBranchesAndUsage:
        return self

    @property
    def usage(self) -> WithBranchesAndUsage:
        return self

    def __getattr__(self, name: str) -> Any:
        # the reader's other reads, else what the store is (both parts of one store)
        reader = self._store.reader
        return getattr(reader if hasattr(reader, name) else self._store, name)

    async def branch_exists(self, session_id: str, branch: str) -> bool:
        return branch == "main" or branch in self._branches

    async def iter_messages(
        self, session_id: str, *, batch: int = 500, branch: str | None = None
    ) -> AsyncIterator[list[Any]]:
        async for page in self._store.reader.iter_messages(self._branches.get(branch or "main", session_id), batch=batch):
            yield page

    async def turn_usage(self, session_id: str, branch: str | None = None) -> Any:
        self.asked.append((session_id, branch))
        return self._usage.get(branch)


async def test_branches_and_turn_usage_through_the_store(agents_store: Any) -> None:
    usage = {
        "main": [
            {"user_turn_number": 1, "requests": 1, "input_tokens": 100, "output_tokens": 20, "total_tokens": 120},
            {"user_turn_number": 2, "requests": 1, "input_tokens": 150, "output_tokens": 30, "total_tokens": 180},
        ],
        "retry": [
            {"user_turn_number": 1, "requests": 1, "input_tokens": 100, "output_tokens": 20, "total_tokens": 120},
            {"user_turn_number": 2, "requests": 2, "input_tokens": 300, "output_tokens": 50, "total_tokens": 350},
        ],
    }
    store = WithBranchesAndUsage(agents_store, {"retry": "fork"}, usage)
    c = await compare_sessions(store, "origin", branch_a="main", branch_b="retry")
    assert store.asked == [("origin", "main"), ("origin", "retry")]
    assert c.a.label == "origin @ main" and c.b.label == "origin @ retry"
    assert c.to_dict()["a"]["branch"] == "main"
    assert c.first_difference == 2
    t2 = c.turn(2)
    assert t2 and (t2.tokens_a, t2.tokens_b, t2.token_delta) == (180, 350, 170)
    u = c.to_dict()["usage"]
    assert (u["a_total_tokens"], u["b_total_tokens"], u["delta_total_tokens"]) == (300, 470, 170)
    text = format_diff_text(c)
    assert "≠ turn 2 differs  Can you refund the shipping?  [tokens A 180, B 350, +170]" in text
    assert "= turn 1  Where is my order 1001?  [tokens A 120, B 120, +0]" in text
    assert text.rstrip().endswith("tokens A 300, B 470 (+170)")
    # no branch named: main on both sides, its usage asked for
    plain = await compare_sessions(store, "origin", store, "copy")
    assert store.asked[-2:] == [("origin", "main"), ("copy", "main")]
    assert plain.a.label == "origin @ main" and plain.turn(1).token_delta == 0  # type: ignore[union-attr]


def test_first_line_is_one_safe_line() -> None:
    assert first_line("\n\n  hello\nworld") == "hello"
    assert first_line("a\x1b[31mred\x07") == "a␛[31mred␇"
    assert first_line("x" * 300, 10) == "x" * 9 + "…"
    assert first_line("   ") == ""


def test_text_of_turn_zero_and_only_in_a() -> None:
    from fluxgui.core.diff import compare_messages
    from fluxgui.core.model import Message

    a = [
        Message(1, "system", "message", "Be brief.\nAlways."),
        Message(2, "user", "message", "hi"),
        Message(3, "assistant", "message", "hello"),
    ]
    text = format_diff_text(compare_messages(a, a[:1], session_a="long", session_b="short"))
    assert "= turn 0  Be brief.\n" in text
    assert "- turn 1 only in A  hi\n    - user: hi\n    - assistant: hello\n" in text
    assert text.endswith("2 turns: 1 same, 0 differ, 1 only in A\n")


# --------------------------------------------------------------------------- real branches


def run_result(inp: int, out: int) -> Any:
    """What ``AdvancedSQLiteSession.store_run_usage`` reads of a ``RunResult``."""
    from types import SimpleNamespace

    from agents.usage import Usage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    usage = Usage(
        requests=1,
        input_tokens=inp,
        output_tokens=out,
        total_tokens=inp + out,
        input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
    )
    return SimpleNamespace(context_wrapper=SimpleNamespace(usage=usage))


async def test_two_branches_of_an_advanced_session(tmp_path: Path) -> None:
    pytest.importorskip("fluxgui.adapters.sql.advanced")
    from agents.extensions.memory import AdvancedSQLiteSession

    path = tmp_path / "advanced.db"
    s = AdvancedSQLiteSession(session_id="conv", db_path=str(path), create_tables=True)
    try:
        await s.add_items([user("Where is my order?"), answer("Shipped.", "m1")])
        await s.store_run_usage(run_result(100, 20))
        await s.add_items([user("Refund the shipping?"), answer("Refunded $5.", "m2")])
        await s.store_run_usage(run_result(150, 30))
        await s.add_items([user("Thanks"), answer("Welcome.", "m3")])
        await s.store_run_usage(run_result(200, 10))
        # a branch from turn 2 that answers turn 2 differently and stops there
        assert await s.create_branch_from_turn(2, "retry") == "retry"
        await s.add_items([user("Refund the shipping?"), answer("Shipping is not refundable.", "m9")])
        await s.store_run_usage(run_result(150, 90))
    finally:
        s.close()
    store = await open_store(str(path))
    try:
        c = await compare_sessions(store, "conv", branch_a="main", branch_b="retry")
        assert {t.number: t.status for t in c.turns} == {1: "same", 2: "differs", 3: "only_a"}
        assert c.a.label == "conv @ main" and c.b.label == "conv @ retry"
        assert c.turn(2).changes[0].to_dict() == {"change": "changed", "a": 1, "b": 1}  # type: ignore[union-attr]
        t1, t2 = c.turn(1), c.turn(2)
        assert t1 and t2
        # the library does not copy usage into a branch: turn 1 is unknown on "retry"
        assert (t1.tokens_a, t1.tokens_b, t1.token_delta) == (120, None, None)
        assert (t2.tokens_a, t2.tokens_b, t2.token_delta) == (180, 240, 60)
        text = format_diff_text(c)
        assert "A: conv @ main — 6 messages, 3 turns" in text
        assert "≠ turn 2 differs  Refund the shipping?  [tokens A 180, B 240, +60]" in text
        # without branches named: main, named
        plain = await compare_sessions(store, "conv")
        assert plain.identical and plain.a.label == "conv @ main"
        one = await compare_sessions(store, "conv", branch_b="retry")
        assert one.b.label == "conv @ retry" and not one.identical
        with pytest.raises(SessionNotFound):
            await compare_sessions(store, "conv", branch_a="main", branch_b="nope")
    finally:
        await store.close()


async def test_compare_never_switches_the_shared_store(tmp_path: Path) -> None:
    """The old race: comparing branches switched the window's own store to each branch
    while reading, so the conversation or the live watcher reading the same store
    meanwhile saw the wrong branch. Reads now name their branch: interleave a compare of
    main and "retry" with reads of "retry" and of main on the same store object."""
    from agents.extensions.memory import AdvancedSQLiteSession

    path = tmp_path / "advanced.db"
    s = AdvancedSQLiteSession(session_id="conv", db_path=str(path), create_tables=True)
    try:
        await s.add_items([user("one"), answer("first", "m1"), user("two"), answer("second", "m2")])
        await s.create_branch_from_turn(2, "retry")
        await s.add_items([user("two again"), answer("other", "m3")])
    finally:
        s.close()
    store = await open_store(str(path))
    try:
        retry = [m.raw for m in await all_messages(store, "conv", branch="retry")]
        main = [m.raw for m in await all_messages(store, "conv")]
        assert retry != main

        async def watcher_reads() -> None:
            for _ in range(40):
                got = await store.reader.page_messages("conv", limit=10, branch="retry")
                assert [m.raw for m in got] == retry
                assert [m.raw for m in await store.reader.page_messages("conv", limit=10)] == main
                await asyncio.sleep(0)

        async def compares() -> None:
            for _ in range(10):
                c = await compare_sessions(store, "conv", branch_a="main", branch_b="retry")
                assert not c.identical
                await asyncio.sleep(0)

        await asyncio.gather(watcher_reads(), compares(), watcher_reads())
    finally:
        await store.close()
