"""Test chat (fluxgui.services.chat) on stores the real libraries wrote, against the
built-in offline model and real loopback servers speaking the OpenAI and Ollama streams.

Every turn is read back with the libraries themselves (flux ``SQLiteSession.get_messages``,
the Agents SDK's ``SQLiteSession.get_items``); failures and cancels are checked against the
raw rows of the file, which must not change.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from chat_servers import ChatServer, closed_port
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import sqlite_rows

from fluxgui.adapters import open_store
from fluxgui.core.errors import FluxguiError, InvalidItem, ProviderError, ReadOnlyError, SessionNotFound
from fluxgui.services.chat import AgentConfig, ChatEvent, ChatResult, chat
from fluxgui.services.offline_model import split_words

SID = "s1"
HISTORY = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
]
OFFLINE_REPLY = "[offline] You said: And of Italy?. I was given 3 earlier messages as history."


@pytest.fixture
def flux_db(tmp_path: Path) -> Path:
    path = tmp_path / "flux.db"
    asyncio.run(FluxSQLiteSession(str(path), SID).add_messages(HISTORY))
    asyncio.run(FluxSQLiteSession(str(path), "other").add_messages([{"role": "user", "content": "x"}]))
    return path


def rows(path: Path) -> list[tuple]:
    return sqlite_rows(path, "SELECT * FROM messages ORDER BY id")


async def library_messages(path: Path, sid: str = SID) -> list[dict]:
    """What flux itself reads back from the file."""
    return await FluxSQLiteSession(str(path), sid).get_messages()


class Recorder:
    def __init__(self) -> None:
        self.events: list[ChatEvent] = []

    def __call__(self, event: ChatEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    def text(self) -> str:
        return "".join(e.text for e in self.events if e.kind == "text")


async def run_chat(path: Path, message: str, config: AgentConfig, **kw) -> tuple[ChatResult, Recorder]:
    rec = Recorder()
    async with await open_store(str(path), writable=True) as store:
        result = await chat(store, kw.pop("sid", SID), message, config, on_event=rec, **kw)
    return result, rec


# --------------------------------------------------------------------------- offline


async def test_offline_chat_streams_and_saves_the_turn(flux_db):
    result, rec = await run_chat(flux_db, "And of Italy?", AgentConfig())
    assert result == ChatResult(SID, OFFLINE_REPLY, 2)
    assert rec.text() == OFFLINE_REPLY
    assert rec.kinds().count("text") == len(split_words(OFFLINE_REPLY)) > 5
    assert rec.kinds()[-2:] == ["message", "done"]
    assert rec.events[-1].data == {"session_id": SID, "added": 2}
    assert await library_messages(flux_db) == HISTORY + [
        {"role": "user", "content": "And of Italy?"},
        {"role": "assistant", "content": OFFLINE_REPLY},
    ]
    assert await library_messages(flux_db, "other") == [{"role": "user", "content": "x"}]
    # A second turn sees the first one in its history.
    again, _ = await run_chat(flux_db, "ok", AgentConfig())
    assert again.reply == "[offline] You said: ok. I was given 5 earlier messages as history."


async def test_offline_chat_on_an_agents_sdk_store(tmp_path):
    path = tmp_path / "agents.db"
    lib = AgentsSQLiteSession(SID, str(path))
    await lib.add_items([
        {"role": "user", "content": "hello"},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Hi!", "annotations": []}]},
    ])
    lib.close()
    result, rec = await run_chat(path, "again", AgentConfig())
    assert result.reply == "[offline] You said: again. I was given 2 earlier messages as history."
    assert rec.text() == result.reply
    lib = AgentsSQLiteSession(SID, str(path))
    items = await lib.get_items()
    lib.close()
    assert len(items) == 4
    assert items[2]["role"] == "user" and items[2]["content"] == "again"
    assert items[3]["role"] == "assistant"
    last = items[3]["content"]
    text = last if isinstance(last, str) else "".join(p.get("text", "") for p in last)
    assert text == result.reply


async def test_chat_on_a_new_session_id_starts_it(flux_db):
    # Without ``new`` an unknown id is refused before anything is sent or written.
    with pytest.raises(SessionNotFound):
        await run_chat(flux_db, "first", AgentConfig(), sid="fresh")
    assert await library_messages(flux_db, "fresh") == []
    result, _ = await run_chat(flux_db, "first", AgentConfig(), sid="fresh", new=True)
    assert result.reply == "[offline] You said: first. I was given 0 earlier messages as history."
    assert await library_messages(flux_db, "fresh") == [
        {"role": "user", "content": "first"}, {"role": "assistant", "content": result.reply},
    ]


async def test_read_only_store_is_refused_before_the_model_is_called(flux_db):
    before = rows(flux_db)
    with ChatServer("openai") as server:
        async with await open_store(str(flux_db)) as store:
            with pytest.raises(ReadOnlyError):
                await chat(store, SID, "hi", AgentConfig(provider="openai", base_url=server.base_url))
        assert not server.received.is_set()
    assert rows(flux_db) == before


async def test_empty_message_is_refused(flux_db):
    before = rows(flux_db)
    async with await open_store(str(flux_db), writable=True) as store:
        with pytest.raises(InvalidItem):
            await chat(store, SID, "  \n", AgentConfig())
    assert rows(flux_db) == before


async def test_cancel_mid_stream_saves_nothing_offline(flux_db):
    before = rows(flux_db)
    seen: list[str] = []
    async with await open_store(str(flux_db), writable=True) as store:
        task: asyncio.Task | None = None

        def on_event(event: ChatEvent) -> None:
            seen.append(event.kind)
            if event.kind == "text" and seen.count("text") == 2:
                assert task is not None
                task.cancel()  # the Stop button: lands at the task's next await

        task = asyncio.ensure_future(chat(store, SID, "stop me", AgentConfig(), on_event=on_event))
        with pytest.raises(asyncio.CancelledError):
            await task
    assert seen == ["text", "text"]
    assert rows(flux_db) == before


# --------------------------------------------------------------------------- copy


async def test_copy_chats_on_a_fork_and_leaves_the_original(flux_db):
    before = rows(flux_db)
    result, rec = await run_chat(flux_db, "And of Italy?", AgentConfig(), copy=True)
    assert result.session_id == "s1-fork"
    assert result.reply == OFFLINE_REPLY
    assert rec.events[-1].data == {"session_id": "s1-fork", "added": 2}
    original = [r for r in before if r[1] == SID]
    assert [r for r in rows(flux_db) if r[1] == SID] == original
    assert await library_messages(flux_db) == HISTORY
    assert await library_messages(flux_db, "s1-fork") == HISTORY + [
        {"role": "user", "content": "And of Italy?"},
        {"role": "assistant", "content": OFFLINE_REPLY},
    ]


async def test_copy_that_fails_leaves_no_fork(flux_db):
    before = rows(flux_db)
    with ChatServer("openai", "401") as server:
        with pytest.raises(ProviderError):
            await run_chat(flux_db, "hi", AgentConfig(provider="openai", base_url=server.base_url), copy=True)
    assert rows(flux_db) == before
    assert server.received.is_set()
    forks = sqlite_rows(flux_db, "SELECT name FROM sqlite_master WHERE name = 'fluxgui_forks'")
    assert not forks or sqlite_rows(flux_db, "SELECT COUNT(*) FROM fluxgui_forks") == [(0,)]


async def test_copy_of_an_unknown_session(flux_db):
    async with await open_store(str(flux_db), writable=True) as store:
        with pytest.raises(SessionNotFound):
            await chat(store, "nope", "hi", AgentConfig(), copy=True)


# --------------------------------------------------------------------------- OpenAI


async def test_openai_stream_gets_the_history_and_is_saved(flux_db, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-123")
    config = AgentConfig(provider="openai", base_url=None, model="gpt-test", temperature=0.3,
                         instructions="You are a geographer.", timeout=10)
    with ChatServer("openai", reply="Rome is the capital.", chunks=5) as server:
        config.base_url = server.base_url
        result, rec = await run_chat(flux_db, "And of Italy?", config)
    assert result == ChatResult(SID, "Rome is the capital.", 2)
    assert rec.text() == "Rome is the capital."
    assert rec.kinds().count("text") == 5
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer sk-from-env-123"
    body = request["body"]
    assert body["model"] == "gpt-test" and body["stream"] is True and body["temperature"] == 0.3
    assert body["messages"] == [
        {"role": "system", "content": "You are a geographer."},
        *HISTORY,
        {"role": "user", "content": "And of Italy?"},
    ]
    assert (await library_messages(flux_db))[-2:] == [
        {"role": "user", "content": "And of Italy?"},
        {"role": "assistant", "content": "Rome is the capital."},
    ]
    assert b"sk-from-env-123" not in flux_db.read_bytes()


async def test_openai_given_key_wins_over_the_environment(flux_db, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    with ChatServer("openai") as server:
        await run_chat(flux_db, "hi", AgentConfig(provider="openai", base_url=server.base_url, api_key="sk-given"))
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-given"


async def test_openai_tool_call_is_reported_and_only_the_final_reply_saved(flux_db):
    with ChatServer("openai", "tool", reply="It is sunny.") as server:
        result, rec = await run_chat(flux_db, "Weather?", AgentConfig(provider="openai", base_url=server.base_url))
    calls = [e for e in rec.events if e.kind == "tool_call"]
    assert len(calls) == 1
    assert calls[0].data == {"id": "call_1", "name": "lookup", "arguments": '{"q": "weather"}'}
    # flux runs the (unknown) tool itself; its result reaches the model and is reported once.
    outputs = [e for e in rec.events if e.kind == "tool_output"]
    assert [o.data for o in outputs] == [
        {"id": "call_1", "name": "lookup", "output": "Error: Tool 'lookup' not found"}
    ]
    kinds = [e.kind for e in rec.events if e.kind in ("tool_call", "tool_output", "done")]
    assert kinds == ["tool_call", "tool_output", "done"]
    assert result.reply == "It is sunny."
    assert len(server.requests) == 2  # the tool's result went back to the model
    second = server.requests[1]["body"]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "lookup"
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_1"
    assert (await library_messages(flux_db))[-2:] == [
        {"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "It is sunny."},
    ]


async def test_openai_without_any_key_for_api_openai_com(flux_db, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = rows(flux_db)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        await run_chat(flux_db, "hi", AgentConfig(provider="openai", model="gpt-4o-mini"))
    assert rows(flux_db) == before


# --------------------------------------------------------------------------- Ollama


async def test_ollama_stream_gets_the_history_and_is_saved(flux_db):
    with ChatServer("ollama", reply="Roma.", chunks=3) as server:
        result, rec = await run_chat(
            flux_db, "And of Italy?",
            AgentConfig(provider="ollama", base_url=server.base_url, model="llama-test", temperature=0.1),
        )
    assert result.reply == "Roma." and rec.text() == "Roma."
    assert rec.kinds().count("text") == 3
    (request,) = server.requests
    assert request["path"] == "/api/chat"
    body = request["body"]
    assert body["model"] == "llama-test" and body["stream"] is True
    assert body["options"]["temperature"] == 0.1
    assert body["messages"] == [*HISTORY, {"role": "user", "content": "And of Italy?"}]
    assert (await library_messages(flux_db))[-2:] == [
        {"role": "user", "content": "And of Italy?"}, {"role": "assistant", "content": "Roma."},
    ]


# --------------------------------------------------------------------------- failures


ERRORS = [
    ("openai", "401", "the endpoint refused the API key"),
    ("openai", "malformed", "malformed stream"),
    ("openai", "truncated", "malformed stream"),
    ("openai", "hang", "did not answer within 0.5 s"),
    ("openai", "stall", "did not answer within 0.5 s"),
    ("ollama", "401", "the endpoint refused the API key"),
    ("ollama", "malformed", "malformed stream"),
    ("ollama", "truncated", "malformed stream"),
    ("ollama", "hang", "did not answer within 0.5 s"),
    ("ollama", "stall", "did not answer within 0.5 s"),
]


@pytest.mark.parametrize(("kind", "mode", "needle"), ERRORS, ids=[f"{k}-{m}" for k, m, _ in ERRORS])
async def test_provider_errors_are_one_line_and_save_nothing(flux_db, kind, mode, needle):
    before = rows(flux_db)
    rec = Recorder()
    with ChatServer(kind, mode) as server:
        config = AgentConfig(provider=kind, base_url=server.base_url, api_key="sk-wrong", timeout=0.5)
        async with await open_store(str(flux_db), writable=True) as store:
            with pytest.raises(ProviderError) as info:
                await chat(store, SID, "hi", config, on_event=rec)
    text = str(info.value)
    assert needle in text
    assert "\n" not in text and "sk-wrong" not in text
    assert server.base_url in text
    assert isinstance(info.value, FluxguiError)
    assert rec.events[-1] == ChatEvent("error", text)
    assert "done" not in rec.kinds()
    assert rows(flux_db) == before
    # a retry against a working server saves the message once
    with ChatServer(kind) as good:
        config = AgentConfig(provider=kind, base_url=good.base_url, timeout=5)
        await run_chat(flux_db, "hi", config)
    assert [m["content"] for m in (await library_messages(flux_db))].count("hi") == 1


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_connection_refused(flux_db, kind):
    before = rows(flux_db)
    url = f"http://127.0.0.1:{closed_port()}" + ("/v1" if kind == "openai" else "")
    with pytest.raises(ProviderError) as info:
        await run_chat(flux_db, "hi", AgentConfig(provider=kind, base_url=url, timeout=5))
    assert str(info.value) == f"cannot reach {url}: connection refused (is the server running?)"
    assert rows(flux_db) == before


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_cancel_mid_stream_saves_nothing(flux_db, kind):
    before = rows(flux_db)
    got_text = asyncio.Event()

    def on_event(event: ChatEvent) -> None:
        if event.kind == "text":
            got_text.set()

    with ChatServer(kind, "stall", reply="one two three four") as server:
        async with await open_store(str(flux_db), writable=True) as store:
            config = AgentConfig(provider=kind, base_url=server.base_url, timeout=30)
            task = asyncio.ensure_future(chat(store, SID, "hi", config, on_event=on_event))
            await asyncio.wait_for(got_text.wait(), 10)
            assert server.first_sent.is_set()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    assert rows(flux_db) == before


# --------------------------------------------------------------------------- config


def test_agent_config_settings_never_hold_the_key():
    config = AgentConfig(name="geo", instructions="Be brief.", model="gpt-x", temperature=0.2,
                         provider="openai", base_url="http://h/v1", api_key="sk-secret", timeout=12)
    settings = config.to_settings()
    assert "api_key" not in settings and "sk-secret" not in repr(settings)
    assert settings == {"name": "geo", "instructions": "Be brief.", "model": "gpt-x", "temperature": 0.2,
                        "provider": "openai", "base_url": "http://h/v1", "timeout": 12}
    back = AgentConfig.from_settings({**settings, "api_key": "sk-smuggled", "unknown": 1})
    assert back.api_key is None
    assert back == AgentConfig(name="geo", instructions="Be brief.", model="gpt-x", temperature=0.2,
                               provider="openai", base_url="http://h/v1", timeout=12)
    odd = AgentConfig.from_settings({"provider": "nonsense", "temperature": "hot", "base_url": ""})
    assert odd.provider == "offline" and odd.temperature == 0.7 and odd.base_url is None
    assert AgentConfig.from_settings({}) == AgentConfig()
