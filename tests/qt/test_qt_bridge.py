"""The async bridge: each outcome to its own typed handler, stale tasks cancelled, idle
when done."""

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


def test_result_arrives_at_its_own_handler(qtbot, bridge):
    got: list[int] = []

    async def work() -> int:
        return await asyncio.to_thread(lambda: 6 * 7)

    with qtbot.waitSignal(bridge.idle):
        bridge.start("answer", work(), got.append, lambda e: pytest.fail(str(e)))
    assert got == [42]


def test_known_error_arrives_at_the_failure_handler(qtbot, bridge):
    errors: list[Exception] = []

    async def work() -> None:
        await asyncio.sleep(0)
        raise TargetError("no such file: x.db")

    with qtbot.waitSignal(bridge.idle):
        bridge.start("open", work(), lambda _r: pytest.fail("no result"), errors.append)
    assert len(errors) == 1 and isinstance(errors[0], TargetError)


def test_unexpected_error_is_reported_not_raised(qtbot, bridge, caplog):
    errors: list[Exception] = []

    async def work() -> None:
        raise ZeroDivisionError("boom")

    with qtbot.waitSignal(bridge.idle):
        bridge.start("bug", work(), failed=errors.append)
    assert isinstance(errors[0], ZeroDivisionError)
    assert "boom" in caplog.text  # logged with its traceback for the bug report


def test_a_new_task_under_the_same_key_cancels_the_stale_one(qtbot, bridge):
    gate = asyncio.Event()
    cancelled: list[str] = []
    started: list[str] = []
    results: list[object] = []

    async def slow(name: str) -> str:
        started.append(name)
        try:
            await gate.wait()
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return name

    first = bridge.start("messages", slow("first"), results.append)
    qtbot.waitUntil(lambda: started == ["first"])  # it is waiting on the gate
    with qtbot.waitSignal(bridge.idle):
        bridge.start("messages", slow("second"), results.append)
        bridge.start("other", slow("other"), results.append)
        gate.set()
    assert first.cancelled()
    assert cancelled == ["first"]
    assert sorted(results) == ["other", "second"]  # the stale one delivered nothing
    assert not bridge.busy


def test_cancel_without_a_replacement_reports_nothing(qtbot, bridge):
    results: list[object] = []

    async def never() -> None:
        await asyncio.Event().wait()

    with qtbot.waitSignal(bridge.idle):
        bridge.start("k", never(), results.append, results.append)
        bridge.cancel("k")
    assert results == []
    assert not bridge.running("k")


def test_a_handler_may_start_the_same_key_again(qtbot, bridge):
    results: list[int] = []

    async def work(n: int) -> int:
        await asyncio.sleep(0)
        return n

    def again(n: int) -> None:
        results.append(n)
        if n < 3:
            bridge.start("k", work(n + 1), again)

    with qtbot.waitSignal(bridge.idle):
        bridge.start("k", work(1), again)
    assert results == [1, 2, 3]


def test_closed_bridge_refuses_new_tasks(qtbot, qloop):
    b = AsyncBridge()
    task = qloop.create_task(b.aclose())
    qtbot.waitUntil(task.done)

    async def work() -> None:
        return None

    coro = work()
    with pytest.raises(RuntimeError):
        b.start("k", coro)
