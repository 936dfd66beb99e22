"""Broken session shapes for the session doctor's tests, written with the real libraries.

Each shape is a session's items as ``add_items`` takes them, and the problems the doctor
must find in it: ``(code, [positions of the items involved])``. ``write_shapes`` writes
them with ``agents.SQLiteSession`` (a file) or ``SQLAlchemySession`` (a URL); pop_item
makes the half turn it leaves, as it does for real.
"""

from __future__ import annotations

from typing import Any


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str, ident: str) -> dict[str, Any]:
    return {
        "type": "message", "role": "assistant", "id": ident, "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call(call_id: str, name: str = "lookup", args: str = '{"q": "x"}') -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}


def output(call_id: str, text: str = "found it") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def reasoning(ident: str, text: str | None = "thinking it over") -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": text}] if text else []
    return {"type": "reasoning", "id": ident, "summary": summary}


HEALTHY = [
    user("what is the weather in Oslo?"),
    reasoning("rs_ok1"),
    call("call_ok1", "get_weather", '{"city": "Oslo"}'),
    output("call_ok1", "sunny, 21 °C"),
    answer("It is sunny in Oslo.", "msg_ok1"),
    user("and tomorrow?"),
    answer("Rain, probably.", "msg_ok2"),
]

#: session id → (items, the problems: (code, positions))
SHAPES: dict[str, tuple[list[dict[str, Any]], list[tuple[str, list[int]]]]] = {
    "healthy": (HEALTHY, []),
    "orphan-call": (
        [user("look it up"), reasoning("rs_oc"), call("call_oc"), user("hello?"), answer("Hi.", "msg_oc")],
        [("orphan_call", [2])],
    ),
    "orphan-output": (
        [user("hi"), output("call_gone", "late result"), answer("Hello.", "msg_oo")],
        [("orphan_output", [1])],
    ),
    "dangling-reasoning": (
        [user("think"), reasoning("rs_dr"), user("still there?"), answer("Yes.", "msg_dr")],
        [("dangling_reasoning", [1])],
    ),
    "empty-reasoning": (
        [user("think"), reasoning("rs_er", None), answer("Done.", "msg_er")],
        [("empty_reasoning", [1])],
    ),
    "duplicate-id": (
        [user("hi"), answer("Hello.", "msg_dup"), user("again"), answer("Hello.", "msg_dup")],
        [("duplicate_id", [1, 3])],
    ),
    "malformed": (
        [user("hi"), ["not", "an", "item"], {"type": "message", "role": "robot", "content": "beep"},
         answer("Hello.", "msg_mf")],
        [("malformed_item", [1]), ("malformed_item", [2])],
    ),
}
#: a turn that pop_item cut in half: the call stays, its output and the answer went
POPPED = [user("look it up"), call("call_pop"), output("call_pop"), answer("Found.", "msg_pop")]
POPPED_PROBLEMS = [("orphan_call", [1])]


async def write_shapes(session_factory: Any) -> None:
    """Write every shape (and the popped turn) through ``session_factory(session_id)``,
    a real Agents SDK session."""
    for sid, (items, _problems) in SHAPES.items():
        s = session_factory(sid)
        try:
            await s.add_items(items)
        finally:
            _close(s)
    s = session_factory("popped")
    try:
        await s.add_items(POPPED)
        await s.pop_item()
        await s.pop_item()
    finally:
        _close(s)


def _close(session: Any) -> None:
    close = getattr(session, "close", None)
    if callable(close):
        close()


def expected() -> dict[str, list[tuple[str, list[int]]]]:
    out = {sid: problems for sid, (_items, problems) in SHAPES.items()}
    out["popped"] = POPPED_PROBLEMS
    return out


def found(report: Any, messages: list[Any]) -> list[tuple[str, list[int]]]:
    """A report's problems as ``(code, positions)``, positions in ``messages``."""
    at = {m.id: i for i, m in enumerate(messages)}
    return [(p.code, [at[i] for i in p.message_ids]) for p in report.problems]


async def add_agents(path: Any, data: dict[str, list[Any]]) -> None:
    """Write sessions with ``agents.SQLiteSession`` (one ``add_items`` each), awaited."""
    from agents import SQLiteSession

    for sid, items in data.items():
        s = SQLiteSession(sid, str(path))
        try:
            await s.add_items(items)
        finally:
            s.close()


async def add_flux(path: Any, data: dict[str, list[dict[str, Any]]]) -> None:
    """Write sessions with ``flux.sessions.SQLiteSession``, awaited."""
    from flux.sessions import SQLiteSession

    for sid, messages in data.items():
        await SQLiteSession(str(path), session_id=sid).add_messages(messages)


class AlchemySessions:
    """``SQLAlchemySession`` factory on a URL (Postgres), disposing its engines after."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.made: list[Any] = []

    def __call__(self, sid: str) -> Any:
        from agents.extensions.memory import SQLAlchemySession

        s = SQLAlchemySession.from_url(sid, url=self.url, create_tables=True)
        self.made.append(s)
        return s

    async def dispose(self) -> None:
        for s in self.made:
            await s.engine.dispose()


# -- the shapes sessions really break in (issue 34), each written by the real library --


async def save_output_twice(session: Any, text: str = "sunny") -> None:
    """A streamed run's saves as the Agents SDK's own ``save_result_to_session`` makes
    them: the first step saves the call and its output, the next one the answer — and,
    since it looks for outputs in the turn's every item, the output once more."""
    from agents import Agent, RunContextWrapper
    from agents.items import MessageOutputItem, ToolCallItem, ToolCallOutputItem
    from agents.run_internal.session_persistence import save_result_to_session
    from agents.run_state import RunState
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    agent = Agent(name="streamer")
    state = RunState(RunContextWrapper(None), "weather in Oslo?", agent)
    fc = ToolCallItem(agent=agent, raw_item=ResponseFunctionToolCall(
        type="function_call", call_id="call_stream", name="get_weather", arguments='{"city": "Oslo"}'))
    out = ToolCallOutputItem(agent=agent, raw_item=output("call_stream", text), output=text)
    msg = MessageOutputItem(agent=agent, raw_item=ResponseOutputMessage(
        id="msg_stream", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text="Sunny in Oslo.", annotations=[])]))
    await save_result_to_session(session, "weather in Oslo?", [fc, out], state)
    await save_result_to_session(session, [], [fc, out, msg], state)


async def save_differing_outputs(session: Any) -> None:
    """A tool output saved again after the tool ran again and answered otherwise."""
    await session.add_items([user("weather in Bergen?"), call("call_twice", "get_weather")])
    await session.add_items([output("call_twice", "rain, 9 °C")])
    await session.add_items([output("call_twice", "rain, 11 °C"), answer("Rain in Bergen.", "msg_twice")])


#: an assistant answer and the reasoning before it, as a reader that returns rows of the
#: same instant out of order gives them back (and a copy of that history stores them)
MISORDERED = [
    user("why is the sky blue?"),
    answer("Rayleigh scattering.", "msg_mo1"),
    reasoning("rs_mo1", "short light scatters more"),
    user("and sunsets?"),
    call("call_mo2", "lookup", '{"q": "sunset"}'),
    reasoning("rs_mo2", "look it up first"),
    output("call_mo2", "longer path through air"),
    answer("More air, more scattering.", "msg_mo2"),
]


async def approval_orphans(session_factory: Any) -> None:
    """What an approval resumed through the SDK's "run again" path leaves when the
    deferred items are never saved: the output without its call (a function tool, which
    keeps no approval items), and an MCP approval response without its request (the
    turn's ``mcp_call`` names it)."""
    s = session_factory("approval-function")
    try:
        await s.add_items([user("look it up, then delete a.txt")])
        await s.add_items([call("call_LOOKUP"), output("call_LOOKUP")])
        await s.add_items([output("call_ORPHAN", "deleted a.txt")])
        await s.add_items([answer("Done: a.txt is deleted.", "msg_fn")])
    finally:
        _close(s)
    s = session_factory("approval-mcp")
    try:
        await s.add_items([user("list the repo's issues")])
        await s.add_items([{"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}])
        await s.add_items([
            {"type": "mcp_call", "id": "mcp_1", "approval_request_id": "mcpr_1", "name": "list_issues",
             "arguments": '{"repo": "fluxgui"}', "server_label": "github", "output": "[]", "status": "completed"},
            answer("There are no open issues.", "msg_mcp"),
        ])
    finally:
        _close(s)


async def resume(server: Any, session: Any) -> str | None:
    """Run the real ``agents.Runner`` on ``session`` with one new user message ("next
    question") against the loopback Responses ``server``; the API's error, or None
    when the request was accepted."""
    from agents import Agent, Runner
    from openai import BadRequestError
    from responses_server import sdk_model

    async with sdk_model(server) as model:
        agent = Agent(name="resumer", instructions="Answer briefly.", model=model)
        try:
            await Runner.run(agent, "next question", session=session)
        except BadRequestError as exc:
            return str(exc)
    return None


async def preflight_equals_sent(store: Any, server: Any, sid: str, session: Any) -> str | None:
    """Preflight, then resume: the request's input is the preflight's input plus the new
    user message; the API's error, or None."""
    from fluxgui.services.doctor.preflight import preflight

    expected_input = list((await preflight(store, sid)).input)
    before = len(server.requests)
    error = await resume(server, session)
    assert server.requests[before]["input"] == [*expected_input, {"role": "user", "content": "next question"}], sid
    return error
