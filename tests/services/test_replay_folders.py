"""Replay and eval datasets on a JSON session folder (HelloAgent ``SessionStore`` files,
chat messages with ``tool_calls`` metadata): the fork is a file the library loads."""

from __future__ import annotations

from json_helpers import hello_entry, hello_history, hello_load, hello_save
from replay_helpers import CALLS, ScriptedServer, faithful_script, flux_messages

from fluxgui.adapters import open_store
from fluxgui.services.chat import AgentConfig
from fluxgui.services.evals import collect
from fluxgui.services.replay import ReplayOptions, replay


async def test_replay_into_a_session_file(tmp_path):
    folder = tmp_path / "sessions"
    hist = [hello_entry(m["role"], m["content"], metadata=m.get("metadata")) for m in flux_messages()]
    original = hello_save(folder, "conv", hist)
    before = original.read_bytes()
    store = await open_store(f"{folder}/", writable=True)
    try:
        with ScriptedServer(faithful_script()) as server:
            config = AgentConfig(provider="openai", model="scripted", base_url=server.base_url, timeout=20)
            report = await replay(store, "conv", 1, ReplayOptions(config))
        items, result = await collect(store)
    finally:
        await store.close()
    assert report.to_json() == {"fork": "conv-fork", "replayed_turns": 3, "stopped": None,
                                "tool_calls": {"matched": 3, "unmatched": 0}}
    assert original.read_bytes() == before  # the original file, byte for byte
    fork = hello_history(hello_load(folder / "conv-fork.json"))
    tools = [m for m in fork if m.role == "tool"]
    assert [m.content for m in tools] == [out for n in (1, 2) for _c, _n, _a, out in CALLS[n]]
    callers = [m for m in fork if m.metadata and m.metadata.get("tool_calls")]
    ids = [c["id"] for m in callers for c in m.metadata["tool_calls"]]
    assert ids == [m.metadata["tool_call_id"] for m in tools]
    assert result.sessions == 2 and result.items == len(items) == 6 and not result.left_out
