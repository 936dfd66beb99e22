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
