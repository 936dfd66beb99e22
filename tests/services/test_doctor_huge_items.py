"""The session doctor beside huge items (issue 34): the checks run in a worker thread, and
an item holding more than ``jsonsafe.BIG`` characters is compared by the SHA-256 of its
content key, made a slice at a time (one ``json.dumps`` of a 50 MB item held the
interpreter's lock for 190 ms: the window stalled that long) — with the same findings."""

from __future__ import annotations

import json
import math
import threading
from typing import Any

from doctor_helpers import add_agents, add_flux, call, output, user

from fluxgui.adapters import open_store
from fluxgui.core.jsonsafe import BIG
from fluxgui.core.model import Message
from fluxgui.services import doctor
from fluxgui.services.doctor import check_session
from fluxgui.services.doctor.repeats import content_key

HUGE = BIG + 1000


def _big(tail: str = "", *, keys: str = "ab") -> Message:
    """A message whose raw item holds a text of more than BIG characters."""
    text = "x" * HUGE + tail
    raw = {keys[0]: text, keys[1]: [1, 2.5, None, True, {"z": "é\udc80"}], "type": "function_call_output"}
    return Message(id=1, role="tool", kind="tool_output", text=text, raw=raw)


def _dumped(m: Message) -> str:
    body = {k: v for k, v in m.raw.items() if k != "id"}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)


def test_a_huge_items_key_is_a_digest_equal_exactly_when_the_dump_is() -> None:
    a, same, reordered, other = _big(), _big(), _big(keys="ba"), _big("!")
    reordered.raw = dict(reversed(list(reordered.raw.items())))  # (keys sorted: no matter)
    keys = [content_key(m) for m in (a, same, reordered, other)]
    assert all(isinstance(k, bytes) and len(k) == 32 for k in keys)  # not a copy of the item
    for m, k in zip((same, reordered, other), keys[1:]):
        assert (k == keys[0]) == (_dumped(m) == _dumped(a))
    assert keys[0] == keys[1] and keys[0] != keys[3]
    # a value iter_json would write otherwise (NaN, a non-JSON value) is dumped whole
    nan, nan_again, nan_text = _big(), _big(), _big()
    nan.raw["b"] = nan_again.raw["b"] = [math.nan]
    nan_text.raw["b"] = ["NaN"]
    assert content_key(nan) == content_key(nan_again) != content_key(nan_text)
    odd = _big()
    odd.raw["b"] = {1, 2}  # not JSON: default=str, as before
    assert isinstance(content_key(odd), bytes)
    # a small item keeps its key: the dump itself
    small = Message(id=2, role="user", kind="message", text="hi", raw={"role": "user", "content": "hi"})
    assert content_key(small) == json.dumps({"content": "hi", "role": "user"}, sort_keys=True)


async def test_the_checks_run_in_a_worker_thread(tmp_path, monkeypatch) -> None:
    path = tmp_path / "agents.db"
    await add_agents(path, {"s": [user("hi"), call("c1"), output("c1")]})
    threads: list[threading.Thread] = []
    check = doctor.check_messages

    def spy(*args: Any, **kw: Any) -> Any:
        threads.append(threading.current_thread())
        return check(*args, **kw)

    monkeypatch.setattr(doctor, "check_messages", spy)
    store = await open_store(str(path))
    try:
        report = await check_session(store, "s")
    finally:
        await store.close()
    assert report.problems == ()
    assert threads and threads[0] is not threading.main_thread()


async def test_huge_outputs_saved_again_are_judged_as_before(tmp_path) -> None:
    """Copies of a huge output: identical, differing in the last character, and a huge
    exchange saved twice — the findings of the checks on every item's whole dump."""
    path = tmp_path / "agents.db"
    big = "y" * HUGE
    await add_agents(path, {
        "same": [user("go"), call("c1"), output("c1", big), output("c1", big), user("end")],
        "differ": [user("go"), call("c1"), output("c1", big), output("c1", big + "!"), user("end")],
        "again": [user(big), user("ok")] * 2,
    })
    store = await open_store(str(path))
    try:
        same = await check_session(store, "same")
        differ = await check_session(store, "differ")
        again = await check_session(store, "again")
    finally:
        await store.close()
    assert [p.code for p in same.problems] == ["duplicate_output"]
    assert "2 identical copies" in same.problems[0].detail
    assert [p.code for p in differ.problems] == ["duplicate_output"]
    assert "2 outputs that differ" in differ.problems[0].detail
    assert [(p.code, len(p.message_ids)) for p in again.problems] == [("repeated_items", 2)]


async def test_a_huge_flux_row_said_twice_is_a_repeated_run(tmp_path) -> None:
    path = tmp_path / "flux.db"
    big = "z" * HUGE
    await add_flux(path, {
        "again": [{"role": "user", "content": big}, {"role": "assistant", "content": "ok"}] * 2,
        "once": [{"role": "user", "content": big}, {"role": "assistant", "content": "ok"},
                 {"role": "user", "content": big + "."}, {"role": "assistant", "content": "ok"}],
    })
    store = await open_store(str(path))
    try:
        again = await check_session(store, "again")
        once = await check_session(store, "once")
    finally:
        await store.close()
    assert [p.code for p in again.problems] == ["repeated_items"]
    assert once.problems == ()
