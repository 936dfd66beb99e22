"""Preflight equals what the libraries send (limits, encryption with expiry, Advanced
branches, flux's Runner); token counts are tested in test_doctor_tokens.py."""

from __future__ import annotations

import time

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession
from agents.memory import SessionSettings
from doctor_helpers import HEALTHY, add_agents, add_flux, user
from helpers import FixedModel
from responses_server import ResponsesServer, sdk_model

from fluxgui.adapters import open_store
from fluxgui.services.doctor.preflight import preflight


async def _sent(session, *, limit: int | None = None) -> list:
    with ResponsesServer() as server:
        async with sdk_model(server) as model:
            agent = Agent(name="a", instructions="x", model=model)
            config = RunConfig(session_settings=SessionSettings(limit=limit)) if limit else None
            await Runner.run(agent, "next", session=session, run_config=config)
        return server.requests[0]["input"][:-1]


@pytest.mark.parametrize("limit", [None, 2, 4, 6])
async def test_limits(tmp_path, limit):
    path = tmp_path / "a.db"
    await add_agents(path, {"s": HEALTHY})
    store = await open_store(str(path))
    try:
        got = await preflight(store, "s", limit=limit)
    finally:
        await store.close()
    session = SQLiteSession("s", str(path))
    assert list(got.input) == await _sent(session, limit=limit)
    session.close()
    if limit == 4:
        # The window starts at the output: the SDK drops it. The assistant message then
        # first is sent by value, without its msg_ id (its reasoning was cut off).
        assert got.input[0] == {k: v for k, v in HEALTHY[4].items() if k != "id"}
        assert HEALTHY[4]["id"].startswith("msg_")


async def test_encrypted_with_expiry(tmp_path):
    from agents.extensions.memory import EncryptedSession

    path = tmp_path / "enc.db"
    key = "another secret"
    inner = SQLiteSession("s", str(path))
    enc = EncryptedSession(session_id="s", underlying_session=inner, encryption_key=key, ttl=3)
    await enc.add_items([user("old question"), HEALTHY[-1]])
    time.sleep(4.1)  # those two expire (the TTL is the library's, in whole seconds)
    await enc.add_items(HEALTHY)
    store = await open_store(str(path), key=key, ttl=3)
    try:
        got = await preflight(store, "s")
    finally:
        await store.close()
    assert list(got.input) == await _sent(enc)
    assert list(got.input) == HEALTHY
    locked = await open_store(str(path))
    try:
        with pytest.raises(Exception, match="give the key"):
            await preflight(locked, "s")
    finally:
        await locked.close()
    inner.close()


async def test_advanced_main_branch(tmp_path):
    from advanced_helpers import SID, write_library_store
    from agents.extensions.memory import AdvancedSQLiteSession

    path = tmp_path / "adv.db"
    await write_library_store(path)
    store = await open_store(str(path))
    try:
        got = await preflight(store, SID)
    finally:
        await store.close()
    session = AdvancedSQLiteSession(session_id=SID, db_path=str(path))
    assert list(got.input) == await _sent(session)
    session.close()


async def test_flux_runner(tmp_path):
    from flux import Agent as FluxAgent
    from flux import Runner as FluxRunner
    from flux.sessions import SQLiteSession as FluxSession

    path = tmp_path / "flux.db"
    await add_flux(path, {"s": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "metadata": {"tool_calls": [{"id": "t1"}]}},
        {"role": "tool", "content": "found", "metadata": {"tool_call_id": "t1"}},
        {"role": "assistant", "content": "done"},
    ]})
    store = await open_store(str(path))
    try:
        got = await preflight(store, "s")
    finally:
        await store.close()
    model = FixedModel("ok")
    await FluxRunner.run(FluxAgent(name="a", instructions="x"), "next",
                         session=FluxSession(str(path), session_id="s"), model=model)
    sent = [{"role": m.role, "content": m.content} for m in model.requests[0].messages][:-1]
    assert list(got.input) == sent
    # flux drops the metadata: the tool message goes without its tool_call_id.
    assert [p.code for p in got.problems] == ["orphan_output"]
