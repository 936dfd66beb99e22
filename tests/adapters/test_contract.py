"""One contract, every adapter: flux and Agents SDK formats, each on SQLite and on Postgres.

Stores are created through ``open_store(target, create=...)`` (the only way to make the
flux schema on Postgres) and filled through the store's own writer; format-specific
agreement with the real libraries lives in test_real_libraries.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import pytest
from flux import Agent, Runner
from flux.sessions import Session
from helpers import FixedModel, all_messages, all_sessions

from fluxgui.adapters import open_store
from fluxgui.core.errors import ReadOnlyError, SessionNotFound

ADAPTERS = [
    ("flux", "sqlite"),
    ("flux", "postgres"),
    ("agents", "sqlite"),
    ("agents", "postgres"),
    ("agents", "redis"),
    ("agents-encrypted", "sqlite"),
    ("agents-encrypted", "redis"),
    ("json", "folder"),
]

#: the master key of the encrypted targets (a Fernet key, as the SDK suggests)
KEY = "uGm8G3p3m0JtQxq0xk0t5y0y2n3sL8mX9q2r5VbJ1Yw="

#: The OpenAI Conversations API (a loopback server, tests/conversations_server.py) runs
#: the tests its semantics allow: the server names conversations itself (here each test's
#: names are made on the server first, and listed), keeps no times to order by, cannot
#: write a deleted conversation again, and takes no ids it cannot put in a URL path.
CONVERSATIONS = ("agents", "conversations")
CONVERSATION_NAMES: dict[str, list[str]] = {
    **{name: ["long", "other"] for name in (
        "test_page_messages_backward_from_end", "test_page_messages_forward_from_start",
        "test_iter_messages_is_stored_order", "test_messages_of_unknown_session_are_empty",
        "test_session_object_satisfies_flux_protocol",
    )},
    "test_flux_runner_runs_on_a_store_session": ["chat"],
    "test_items_with_json_specials_round_trip": ["j"],
    "test_get_messages_limit_zero_as_flux_sessions_do": ["z"],
    "test_cancelled_write_is_all_or_nothing": ["keep", "torn?"],
    "test_search_mixed_case_non_ascii": ["s1", "s2", "s3"],
    "test_search_limit": [f"s{i}" for i in range(6)],
    "test_search_sessions": [],  # filled in below: the ids of SEARCH_WRITES
    **{name: [] for name in (  # the ids of WRITES
        "test_read_only_store_refuses_writes", "test_search_empty_query_matches_every_session",
        "test_list_sessions_limit_zero", "test_store_key_names_the_store_not_the_login",
    )},
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test taking ``target`` runs on every adapter; the Conversations API joins
    the tests of :data:`CONVERSATION_NAMES`."""
    if "target" in metafunc.fixturenames:
        params = list(ADAPTERS)
        if metafunc.function.__name__ in CONVERSATION_NAMES:
            params.append(CONVERSATIONS)
        metafunc.parametrize("target", params, ids=[f"{f}-{b}" for f, b in params], indirect=True)


@dataclass
class Target:
    format: str
    backend: str
    url: str
    options: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.format}-{self.backend}"


@pytest.fixture
def target(request, tmp_path) -> Target:
    fmt, backend = request.param
    options: dict[str, Any] = {}
    if backend == "conversations":
        from conversations_server import API_KEY, ConversationsServer

        server = ConversationsServer().start()
        request.addfinalizer(server.stop)
        names = CONVERSATION_NAMES[request.function.__name__]
        for name in names:
            server.seed(name)
        options = {"base_url": server.base_url, "api_key": API_KEY, "conversations": tuple(names)}
        return Target(fmt, backend, "openai-conversations:", options)
    if fmt == "agents-encrypted":
        fmt, options["key"] = "agents", KEY
    if backend == "sqlite":
        url = str(tmp_path / "store.db")
    elif backend == "folder":
        url = str(tmp_path / "sessions")
    elif backend == "redis":
        from helpers import REDIS_URL

        url = REDIS_URL
        options["key_prefix"] = request.getfixturevalue("redis_prefix")
    else:
        url = request.getfixturevalue("pg_url")
    return Target(fmt, backend, url, options)


async def open_target(target: Target, **kw: Any):
    """Open the target (read-only unless ``kw`` says otherwise) with its options."""
    return await open_store(target.url, **target.options, **kw)


async def writable(target: Target):
    return await open_target(target, create=target.format)



async def fill(store, sessions: list[tuple[str, list[str]]]) -> None:
    """Write ``(session_id, [texts])`` in this order, one write per entry, alternating roles."""
    for sid, texts in sessions:
        await store.writer.add_messages(
            sid,
            [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)],
        )


def activity_order(writes: list[tuple[str, list[str]]]) -> list[str]:
    """Session ids, most recently written first."""
    out: list[str] = []
    for sid, _ in reversed(writes):
        if sid not in out:
            out.append(sid)
    return out


def texts_by_session(writes: list[tuple[str, list[str]]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for sid, texts in writes:
        out.setdefault(sid, []).extend(texts)
    return out


# Ids whose sort order disagrees with the write order, so an order by id would show.
WRITES = [
    ("s-m", ["m1", "m2"]),
    ("s-z", ["z1"]),
    ("s-a", ["a1", "a2", "a3"]),
    ("s-q", ["q1"]),
    ("s-b", ["b1", "b2"]),
    ("s-y", ["y1"]),
    ("s-z", ["z2", "z3"]),  # s-z becomes active again
    ("s-c", ["c1"]),
    ("s-m", ["m3"]),  # and s-m
]


# --------------------------------------------------------------------------- sessions


@pytest.mark.parametrize("page_size", [1, 3, 50])
async def test_list_sessions_pages_cover_every_session_once(target, page_size):
    async with await writable(target) as store:
        await fill(store, WRITES)
    expected = texts_by_session(WRITES)
    async with await open_target(target) as ro:
        listed: list = []
        cursor = None
        pages = 0
        while True:
            page = await ro.reader.list_sessions(limit=page_size, cursor=cursor)
            pages += 1
            assert len(page.sessions) <= page_size
            listed.extend(page.sessions)
            if page.cursor is None:
                break
            cursor = page.cursor
            assert pages < 100, "paging does not end"
    ids = [s.id for s in listed]
    assert len(ids) == len(set(ids)), f"a session listed twice: {ids}"
    assert set(ids) == set(expected)
    assert {s.id: s.messages for s in listed} == {sid: len(t) for sid, t in expected.items()}
    # Never older activity before newer: updated_at does not increase down the list.
    stamps = [datetime.fromisoformat(s.updated_at) for s in listed]
    assert stamps == sorted(stamps, reverse=True)


async def test_list_sessions_most_recently_active_first(target):
    # All writes land within a second or so: on SQLite updated_at ties (one-second
    # resolution), so this also checks the tie-break by latest item.
    async with await writable(target) as store:
        await fill(store, WRITES)
        ids = [s.id for s in await all_sessions(store, page_size=2)]
    assert ids == activity_order(WRITES)


async def test_session_info_and_require_session(target):
    async with await writable(target) as store:
        await fill(store, WRITES)
    now = datetime.now(timezone.utc)
    async with await open_target(target) as ro:
        listed = {s.id: s for s in await all_sessions(ro)}
        for sid, texts in texts_by_session(WRITES).items():
            info = await ro.reader.session_info(sid)
            assert info is not None
            assert info.to_dict() == listed[sid].to_dict()
            assert info.messages == len(texts) == await ro.reader.count_messages(sid)
            required = await ro.reader.require_session(sid)
            assert required.to_dict() == info.to_dict()
            created = datetime.fromisoformat(info.created_at)
            updated = datetime.fromisoformat(info.updated_at)
            # Stored times are UTC on every backend here: they read as "now", with a zone.
            assert created.utcoffset() == timedelta(0)
            assert abs(now - updated) < timedelta(minutes=5)
            assert created <= updated
        assert await ro.reader.session_info("no-such-session") is None
        assert await ro.reader.count_messages("no-such-session") == 0
        with pytest.raises(SessionNotFound) as err:
            await ro.reader.require_session("no-such-session")
        assert "no-such-session" in str(err.value)
        assert "\n" not in str(err.value)


# --------------------------------------------------------------------------- messages


LONG = [f"message {i:02d} " + "ä" * (i % 4) for i in range(23)]


async def write_long(store, sid: str = "long") -> None:
    # Several writes (separate transactions): on Postgres each has its own created_at.
    for start in range(0, len(LONG), 6):
        await store.writer.add_messages(
            sid, [{"role": "user", "content": t} for t in LONG[start : start + 6]]
        )
    await store.writer.add_messages("other", [{"role": "user", "content": "not in long"}])


async def test_page_messages_backward_from_end(target):
    async with await writable(target) as store:
        await write_long(store)
    async with await open_target(target) as ro:
        last = await ro.reader.page_messages("long", limit=5)
        assert [m.text for m in last] == LONG[-5:]
        collected = list(last)
        anchor = last[0].sort_key
        while True:
            page = await ro.reader.page_messages("long", limit=5, anchor=anchor, direction="backward")
            if not page:
                break
            assert len(page) <= 5
            collected[:0] = page
            anchor = page[0].sort_key
        assert [m.text for m in collected] == LONG
        assert len({m.id for m in collected}) == len(LONG)


async def test_page_messages_forward_from_start(target):
    async with await writable(target) as store:
        await write_long(store)
    async with await open_target(target) as ro:
        first = await ro.reader.page_messages("long", limit=4, direction="forward")
        assert [m.text for m in first] == LONG[:4]
        collected = list(first)
        anchor = first[-1].sort_key
        while True:
            page = await ro.reader.page_messages("long", limit=4, anchor=anchor, direction="forward")
            if not page:
                break
            collected.extend(page)
            anchor = page[-1].sort_key
        assert [m.text for m in collected] == LONG
        # From an anchor in the middle, both directions.
        mid = collected[10]
        after = await ro.reader.page_messages("long", limit=3, anchor=mid.sort_key, direction="forward")
        before = await ro.reader.page_messages("long", limit=3, anchor=mid.sort_key, direction="backward")
        assert [m.text for m in after] == LONG[11:14]
        assert [m.text for m in before] == LONG[7:10]


@pytest.mark.parametrize("batch", [1, 4, 23, 500])
async def test_iter_messages_is_stored_order(target, batch):
    async with await writable(target) as store:
        await write_long(store)
    async with await open_target(target) as ro:
        got = await all_messages(ro, "long", batch=batch)
        assert [m.text for m in got] == LONG
        assert [m.role for m in got] == ["user"] * len(LONG)
        assert await ro.reader.count_messages("long") == len(LONG)
        assert await ro.reader.count_messages("other") == 1
        # The flux view of the session agrees with the browser view.
        flux_view = await ro.session("long").get_messages()
        assert [d["content"] for d in flux_view] == LONG


async def test_messages_of_unknown_session_are_empty(target):
    async with await writable(target) as store:
        await write_long(store)
        assert await store.reader.page_messages("nope") == []
        assert await store.reader.page_messages("nope", direction="forward") == []
        assert await all_messages(store, "nope") == []


# --------------------------------------------------------------------------- search


SEARCH_WRITES = [
    ("Alpha-Session", ["The Quick brown fox"]),
    ("beta", ["café au lait", "second"]),
    ("gamma", ["we are 100% sure_thing"]),
    ("delta", ["we are 100 percent sureXthing"]),
    ("eps%ilon_id", ["nothing special"]),
    ("zeta", ["Ünïcödé Straße ✓"]),
]


def expected_hits(query: str) -> set[str]:
    q = query.casefold()
    return {
        sid
        for sid, texts in texts_by_session(SEARCH_WRITES).items()
        if q in sid.casefold() or any(q in t.casefold() for t in texts)
    }


@pytest.mark.parametrize(
    "query",
    [
        "alpha",  # id, case-insensitive
        "SESSION",
        "quick BROWN",  # message text, case-insensitive
        "CAFÉ",  # non-ASCII case
        "café",
        "Café",
        "%",  # LIKE wildcards are literal
        "_",
        "100%",
        "e_t",
        "%ilon_",
        "Ünïcödé",  # exact case; mixed case is test_search_mixed_case_non_ascii
        "✓",
        "no such text anywhere",
    ],
)
async def test_search_sessions(target, query):
    async with await writable(target) as store:
        await fill(store, SEARCH_WRITES)
    async with await open_target(target) as ro:
        found = await ro.reader.search_sessions(query)
        ids = [s.id for s in found]
        assert len(ids) == len(set(ids))
        assert set(ids) == expected_hits(query)
        order = [s.id for s in await all_sessions(ro)]
        assert ids == [sid for sid in order if sid in set(ids)], "not most recently active first"
        counts = {s.id: s.messages for s in await all_sessions(ro)}
        assert all(s.messages == counts[s.id] for s in found)


async def test_search_mixed_case_non_ascii(target):
    """SQLite LIKE folds ASCII only and Agents SDK JSON holds \\uXXXX escapes."""
    async with await writable(target) as store:
        await fill(store, [("s1", ["Un café Élégant"]), ("s2", ["Ünïcödé"]), ("s3", ["nothing"])])
        for query, hit in [("élégant", "s1"), ("ÉLÉGANT", "s1"), ("ünïcödé", "s2"), ("ÜNÏCÖDÉ", "s2")]:
            assert [s.id for s in await store.reader.search_sessions(query)] == [hit], query


async def test_search_limit(target):
    async with await writable(target) as store:
        await fill(store, [(f"s{i}", [f"needle {i}"]) for i in range(6)])
        found = await store.reader.search_sessions("NEEDLE", limit=2)
        assert len(found) == 2
        everything = await store.reader.search_sessions("needle")
        assert {s.id for s in everything} == {f"s{i}" for i in range(6)}
        assert [s.id for s in found] == [s.id for s in everything][:2]


# --------------------------------------------------------------------------- flux Session protocol


async def test_session_object_satisfies_flux_protocol(target):
    async with await writable(target) as store:
        await write_long(store)
        session = store.session("long")
        assert isinstance(session, Session)
        assert session.session_id == "long"
        everything = await session.get_messages()
        assert [d["content"] for d in everything] == LONG
        assert all(d["role"] == "user" for d in everything)
        for n in (1, 3, 22, 23, 40):
            recent = await session.get_messages(limit=n)
            assert recent == everything[-n:], n
        assert await store.session("nobody").get_messages() == []


async def test_flux_runner_runs_on_a_store_session(target):
    async with await writable(target) as store:
        await store.writer.add_messages(
            "chat",
            [{"role": "user", "content": "earlier question"}, {"role": "assistant", "content": "earlier answer"}],
        )
        model = FixedModel("the fixed reply ✓")
        agent = Agent(name="tester", instructions="be brief")
        result = await Runner.run(agent, "new question?", session=store.session("chat"), model=model)
        assert result.final_output == model.reply
        # The run saw the stored history before the new input.
        seen = [(m.role, m.content) for m in model.requests[0].messages]
        assert seen == [
            ("user", "earlier question"),
            ("assistant", "earlier answer"),
            ("user", "new question?"),
        ]
        second = FixedModel("second reply")
        await Runner.run(agent, "and again", session=store.session("chat"), model=second)
        assert [m.content for m in second.requests[0].messages][-3:] == [
            "new question?",
            model.reply,
            "and again",
        ]
    async with await open_target(target) as ro:
        got = await all_messages(ro, "chat")
        assert [(m.role, m.text) for m in got] == [
            ("user", "earlier question"),
            ("assistant", "earlier answer"),
            ("user", "new question?"),
            ("assistant", model.reply),
            ("user", "and again"),
            ("assistant", "second reply"),
        ]
        assert (await ro.reader.session_info("chat")).messages == 6


async def test_clear(target):
    async with await writable(target) as store:
        await fill(store, WRITES)
        before = {s.id: s.messages for s in await all_sessions(store)}
        await store.session("s-a").clear()
        assert await store.reader.count_messages("s-a") == 0
        assert await store.session("s-a").get_messages() == []
        # A JSON session folder keeps a cleared session's file (its other keys stay), so
        # the session stays listed with no messages; the SQL and Redis stores drop it.
        keeps = store.traits.keeps_cleared_sessions
        info = await store.reader.session_info("s-a")
        if keeps:
            assert info is not None and info.messages == 0
        else:
            assert info is None
        removed = await store.writer.clear_session("s-m")
        assert removed == before["s-m"]
        after = {s.id: s.messages for s in await all_sessions(store)}
        if keeps:
            assert after == {**before, "s-a": 0, "s-m": 0}
        else:
            assert after == {k: v for k, v in before.items() if k not in ("s-a", "s-m")}
        # A cleared session can be written again.
        await store.session("s-a").add_messages([{"role": "user", "content": "fresh"}])
        assert [d["content"] for d in await store.session("s-a").get_messages()] == ["fresh"]


async def test_read_only_store_refuses_writes(target):
    async with await writable(target) as store:
        await fill(store, WRITES)
    async with await open_target(target) as ro:
        assert ro.can_write is False
        with pytest.raises(ReadOnlyError):
            await ro.writer.add_messages("s-a", [{"role": "user", "content": "nope"}])
        with pytest.raises(ReadOnlyError):
            await ro.writer.add_messages("brand-new", [{"role": "user", "content": "nope"}])
        with pytest.raises(ReadOnlyError):
            await ro.writer.clear_session("s-a")
        with pytest.raises(ReadOnlyError):
            await ro.session("s-a").add_messages([{"role": "user", "content": "nope"}])
        with pytest.raises(ReadOnlyError):
            await ro.session("s-a").clear()
        with pytest.raises(ReadOnlyError):
            await Runner.run(Agent(name="x"), "hi", session=ro.session("s-a"), model=FixedModel("r"))
    async with await open_target(target) as again:
        assert {s.id: s.messages for s in await all_sessions(again)} == {
            sid: len(t) for sid, t in texts_by_session(WRITES).items()
        }
        assert again.can_write is False


# --------------------------------------------------------------------------- hostile data


HOSTILE_IDS = [
    "it's",
    'say "hi"',
    "100%",
    "a_b",
    "%_%",
    "'; DROP TABLE messages; --",
    "'; DROP TABLE agent_messages; --",
    "back\\slash",
    "naïve café",
    "日本語のセッション",
    "emoji 🧪🔥",
    "line one\nline two",
    "tab\there",
    " leading and trailing ",
    "",
]

HOSTILE_CONTENT = [
    "'; DROP TABLE messages; --",
    'quotes " and \' and `',
    "<script>alert(1)</script><img src=http://example.invalid/x.png>",
    "% _ \\ %% __ \\%",
    "multi\nline\r\nwith\ttabs",
    "emoji 🧪 and RTL \u202e text and ZWJ 👩‍💻",
    '{"type": "function_call", "name": "not_really"}',
    "\u2028line separator",
    "",
]


async def test_hostile_ids_and_content_round_trip(target):
    async with await writable(target) as store:
        for sid in HOSTILE_IDS:
            await store.writer.add_messages(sid, [{"role": "user", "content": c} for c in HOSTILE_CONTENT])
    async with await open_target(target) as ro:
        listed = await all_sessions(ro, page_size=4)
        assert sorted(s.id for s in listed) == sorted(HOSTILE_IDS)
        for sid in HOSTILE_IDS:
            info = await ro.reader.require_session(sid)
            assert info.id == sid
            assert info.messages == len(HOSTILE_CONTENT)
            got = await all_messages(ro, sid)
            assert [m.text for m in got] == HOSTILE_CONTENT
            assert [d["content"] for d in await ro.session(sid).get_messages()] == HOSTILE_CONTENT
            back = await ro.reader.page_messages(sid, limit=3)
            assert [m.text for m in back] == HOSTILE_CONTENT[-3:]
        # The tables survived the ids and contents above.
        assert await ro.reader.count_messages(HOSTILE_IDS[0]) == len(HOSTILE_CONTENT)


@pytest.mark.parametrize("query", ["%", "_", "'", '"', "\\", "DROP TABLE", "🧪", "\n", "naÏve"])
async def test_hostile_search_queries(target, query):
    sessions = {sid: [f"body of {i}"] for i, sid in enumerate(HOSTILE_IDS)}
    async with await writable(target) as store:
        for sid, texts in sessions.items():
            await store.writer.add_messages(sid, [{"role": "user", "content": t} for t in texts])
        found = {s.id for s in await store.reader.search_sessions(query)}
    q = query.casefold()
    assert found == {
        sid for sid, texts in sessions.items() if q in sid.casefold() or any(q in t.casefold() for t in texts)
    }


async def test_items_with_json_specials_round_trip(target):
    """Content that looks like JSON or holds escapes is stored as text, not reinterpreted."""
    contents = ['{"role": "system"}', "[1, 2]", "null", "\\u00e9 literal backslash-u", "\x01\x7f"]
    async with await writable(target) as store:
        await store.writer.add_messages("j", [{"role": "assistant", "content": c} for c in contents])
        got = await all_messages(store, "j")
    assert [m.text for m in got] == contents
    assert [m.kind for m in got] == ["message"] * len(contents)
    assert json.loads(json.dumps([m.to_dict() for m in got]))  # exportable


# --------------------------------------------------------------------------- edges


async def test_search_empty_query_matches_every_session(target):
    async with await writable(target) as store:
        await fill(store, WRITES)
        found = await store.reader.search_sessions("")
        assert {s.id for s in found} == set(texts_by_session(WRITES))


async def test_list_sessions_limit_zero(target):
    async with await writable(target) as store:
        await fill(store, WRITES)
        page = await store.reader.list_sessions(limit=0)
        assert page.sessions == []


async def test_cancelled_write_is_all_or_nothing(target):
    """A caller cancelled mid-write does not tear the transaction: it completes whole."""
    rows = [{"role": "user", "content": f"row {i}"} for i in range(300)]
    async with await writable(target) as store:
        await store.writer.add_messages("keep", [{"role": "user", "content": "before"}])
        task = asyncio.ensure_future(store.writer.add_messages("torn?", rows))
        # Cancel right after the task's first step, i.e. once the write has begun.
        asyncio.get_running_loop().call_soon(task.cancel)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await store.reader.count_messages("torn?") == len(rows)
        assert [m.text for m in await all_messages(store, "torn?")] == [r["content"] for r in rows]
        # The store is still usable.
        await store.writer.add_messages("keep", [{"role": "user", "content": "after"}])
        assert [m.text for m in await all_messages(store, "keep")] == ["before", "after"]


async def test_get_messages_limit_zero_as_flux_sessions_do(target):
    """flux's own sessions treat ``limit=0`` as no limit (``if limit:``); every adapter
    should answer the same call the same way."""
    from flux.sessions import InMemorySession

    msgs = [{"role": "user", "content": f"m{i}"} for i in range(4)]
    reference = InMemorySession()
    await reference.add_messages(msgs)
    expected = await reference.get_messages(limit=0)
    async with await writable(target) as store:
        await store.writer.add_messages("z", msgs)
        assert await store.session("z").get_messages(limit=0) == expected


# --------------------------------------------------------------------------- store key


def _with_password(url: str) -> str:
    """The same server URL with a password (trust auth ignores it), ``localhost`` for the
    loopback address and no driver."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = f"{parts.username}:pw-S3cret@localhost" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(scheme="postgresql", netloc=netloc))


async def test_store_key_names_the_store_not_the_login(target: Target, tmp_path) -> None:
    """The key stays the same across opens and logins, never holds a password, tells the
    store's own parts apart (format, tables, prefix) and, for a file, is its absolute path."""
    store = await writable(target)
    await fill(store, WRITES[:2])
    key = store.store_key
    await store.close()
    assert key.split("?")[0].split(":")[0] in {
        "sqlite", "postgresql", "redis", "folder", "openai-conversations",
    }
    assert f"format={target.format}" in key
    again = await open_target(target)
    try:
        assert again.store_key == key
    finally:
        await again.close()
    if target.backend in ("sqlite", "folder"):
        assert str((tmp_path / ("store.db" if target.backend == "sqlite" else "sessions")).resolve()) in key
        link = tmp_path / "link"
        link.symlink_to(target.url)
        via_link = await open_store(str(link), **target.options)
        try:
            assert via_link.store_key == key
        finally:
            await via_link.close()
    else:
        if target.backend == "postgres":
            assert "+asyncpg" not in key and "@" not in key
            other = await open_store(_with_password(target.url), **target.options)
            try:
                assert other.store_key == key
            finally:
                await other.close()
        if target.backend == "redis":
            assert "prefix=" in key and target.options["key_prefix"].split(":")[0] in key
    assert "pw-S3cret" not in key


for _name, _names in CONVERSATION_NAMES.items():  # the sessions those tests write
    if not _names:
        _names.extend(dict.fromkeys(
            sid for sid, _ in (SEARCH_WRITES if _name == "test_search_sessions" else WRITES)
        ))
