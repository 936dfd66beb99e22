"""The async bridge: outcomes as signals, stale tasks cancelled, idle when done."""

from __future__ import annotations

import asyncio

import pytest

from fluxgui.core.errors import TargetError
from fluxgui.qt.bridge import AsyncBridge


@pytest.fixture
def bridge(qtbot, qloop):
    b = AsyncBridge()
    yield b
    task = qloop.create_task(b.aclose())
    qtbot.waitUntil(task.done)


def test_result_arrives_as_a_signal(qtbot, bridge):
    async def work() -> int:
        return await asyncio.to_thread(lambda: 6 * 7)

    with qtbot.waitSignal(bridge.succeeded) as blocker:
        bridge.start("answer", work())
    assert blocker.args == ["answer", 42]


def test_known_error_arrives_as_a_signal(qtbot, bridge):
    async def work() -> None:
        await asyncio.sleep(0)
        raise TargetError("no such file: x.db")

    with qtbot.waitSignal(bridge.failed) as blocker:
        bridge.start("open", work())
    key, error = blocker.args
    assert key == "open" and isinstance(error, TargetError)


def test_unexpected_error_is_reported_not_raised(qtbot, bridge, caplog):
    async def work() -> None:
        raise ZeroDivisionError("boom")

    with qtbot.waitSignal(bridge.failed) as blocker:
        bridge.start("bug", work())
    assert isinstance(blocker.args[1], ZeroDivisionError)
    assert "boom" in caplog.text  # logged with its traceback for the bug report


def test_a_new_task_under_the_same_key_cancels_the_stale_one(qtbot, bridge):
    gate = asyncio.Event()
    cancelled: list[str] = []
    started: list[str] = []
    results: list[object] = []
    bridge.succeeded.connect(lambda key, value: results.append((key, value)))

    async def slow(name: str) -> str:
        started.append(name)
        try:
            await gate.wait()
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return name

    first = bridge.start("messages", slow("first"))
    qtbot.waitUntil(lambda: started == ["first"])  # it is waiting on the gate
    with qtbot.waitSignal(bridge.idle):
        bridge.start("messages", slow("second"))
        bridge.start("other", slow("other"))
        gate.set()
    assert first.cancelled()
    assert cancelled == ["first"]
    assert sorted(results) == [("messages", "second"), ("other", "other")]
    assert not bridge.busy


def test_cancel_without_a_replacement_reports_nothing(qtbot, bridge):
    results: list[object] = []
    bridge.succeeded.connect(lambda *a: results.append(a))
    bridge.failed.connect(lambda *a: results.append(a))

    async def never() -> None:
        await asyncio.Event().wait()

    with qtbot.waitSignal(bridge.idle):
        bridge.start("k", never())
        bridge.cancel("k")
    assert results == []
    assert not bridge.running("k")


def test_closed_bridge_refuses_new_tasks(qtbot, qloop):
    b = AsyncBridge()
    task = qloop.create_task(b.aclose())
    qtbot.waitUntil(task.done)

    async def work() -> None:
        return None

    coro = work()
    with pytest.raises(RuntimeError):
        b.start("k", coro)
