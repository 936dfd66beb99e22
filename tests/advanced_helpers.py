"""AdvancedSQLiteSession stores written by the real library, and what it tells of them.

Shared by tests/adapters/test_advanced.py and tests/cli/test_branches_cli.py. Usage is
stored through the library's own ``store_run_usage``, given a result that carries a real
``agents.usage.Usage`` (all it reads of a ``RunResult``): no model, no network.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agents.extensions.memory import AdvancedSQLiteSession
from agents.usage import Usage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

SID = "conv"
OTHER = "other"


def user(text: Any) -> dict:
    return {"role": "user", "content": text}


def answer(text: str) -> dict:
    return {
        "type": "message",
        "role": "assistant",
        "id": f"msg_{abs(hash(text)) % 10**8}",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call(call_id: str, name: str, args: str) -> dict:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}


def output(call_id: str, text: str) -> dict:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def reasoning(text: str) -> dict:
    return {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": text}]}


def run_result(requests: int, inp: int, out: int, cached: int = 0, reasoning_tokens: int = 0):
    """What ``store_run_usage`` reads of a ``RunResult``: ``context_wrapper.usage``."""
    usage = Usage(
        requests=requests,
        input_tokens=inp,
        output_tokens=out,
        total_tokens=inp + out,
        input_tokens_details=InputTokensDetails(cached_tokens=cached, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=reasoning_tokens),
    )
    return SimpleNamespace(context_wrapper=SimpleNamespace(usage=usage))


LONG = "a long question " * 12  # over the 100-character preview


async def write_library_store(path: Path) -> None:
    """Two sessions; ``conv`` has turns with tool calls and usage on main, a named branch
    from turn 2 with its own turns, an auto-named branch from turn 3 (by content), and a
    branch that was created and deleted again (its id stays reserved)."""
    s = AdvancedSQLiteSession(session_id=SID, db_path=str(path), create_tables=True)
    try:
        await s.add_items([user("hello, what is the weather?")])
        await s.add_items(
            [call("c1", "get_weather", '{"city": "Oslo"}'), output("c1", "sunny, 21 °C"), answer("It is sunny.")]
        )
        await s.store_run_usage(run_result(2, 100, 20, cached=10, reasoning_tokens=5))
        await s.add_items([user([{"type": "input_text", "text": "second: multimodal"}]), answer("ok")])
        await s.store_run_usage(run_result(1, 150, 30))
        await s.add_items([user(LONG), reasoning("thinking"), answer("long answer")])
        await s.store_run_usage(run_result(1, 200, 40))
        await s.add_items([user("fourth é ü"), answer("vier")])
        await s.store_run_usage(run_result(1, 250, 50))
        # A named branch from turn 2: turns 1 copied, then two turns of its own.
        assert await s.create_branch_from_turn(2, "alt") == "alt"
        await s.add_items([user("alt two"), call("c2", "lookup", "{}"), output("c2", "found"), answer("alt answer")])
        await s.store_run_usage(run_result(3, 30, 3))
        await s.add_items([user("alt three"), answer("alt three answer")])
        await s.store_run_usage(run_result(1, 40, 4))
        # A branch made and deleted again.
        await s.switch_to_branch("main")
        await s.create_branch_from_turn(4, "gone")
        await s.add_items([user("soon gone"), answer("bye")])
        await s.switch_to_branch("main")
        await s.delete_branch("gone")
        # An auto-named branch, by content, from turn 3 of main.
        auto = await s.create_branch_from_content("long question")
        assert auto.startswith("branch_from_turn_3_")
        await s.add_items([user("auto three"), answer("auto answer")])
        await s.store_run_usage(run_result(1, 60, 6))
    finally:
        s.close()
    o = AdvancedSQLiteSession(session_id=OTHER, db_path=str(path))
    try:
        await o.add_items([user("another session"), answer("yes")])
        await o.store_run_usage(run_result(1, 5, 5))
    finally:
        o.close()


class Library:
    """The library on a file, one fresh session object per call (a fresh reader)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def session(self, sid: str = SID) -> AdvancedSQLiteSession:
        return AdvancedSQLiteSession(session_id=sid, db_path=str(self.path))

    async def view(self, sid: str = SID, current: str | None = None) -> dict[str, Any]:
        """Everything the library tells about a session, from a fresh object (switched
        to ``current`` first when given)."""
        s = self.session(sid)
        try:
            if current is not None:
                await s.switch_to_branch(current)
            branches = await s.list_branches()
            out: dict[str, Any] = {"branches": branches, "per_branch": {}}
            for b in branches:
                bid = b["branch_id"]
                out["per_branch"][bid] = {
                    "items": await s.get_items(branch_id=bid),
                    "turns": await s.get_conversation_turns(bid),
                    "turn_usage": await s.get_turn_usage(branch_id=bid),
                    "usage": await s.get_session_usage(bid),
                }
            out["current_items"] = await s.get_items()
            out["current_turn_usage"] = await s.get_turn_usage()
            out["session_usage"] = await s.get_session_usage()
            return out
        finally:
            s.close()
