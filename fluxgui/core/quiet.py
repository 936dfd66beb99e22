"""Blocking calls that handle a secret, run on a worker thread without the secret
reaching a log line.

The window's event loop (qasync) logs every call it hands to a worker thread at DEBUG,
with the call's arguments and its result: ``asyncio.to_thread(set_password, key,
secret)`` would log the secret, and a call that returns a password would log it on its
way back. :func:`quietly` hands over a closure (its arguments do not show) and carries
the result in a box whose ``repr`` says nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Box(Generic[T]):
    """A value whose ``repr`` does not show it."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<not shown>"


async def quietly(call: Callable[[], T]) -> T:
    """``call()`` on a worker thread (``asyncio.to_thread``); neither what it was given
    nor what it returns appears in a log line of the loop's executor."""
    box: _Box[T] = await asyncio.to_thread(lambda: _Box(call()))
    return box.value
