"""Small asyncio helpers shared by the layers (no Qt, no drivers)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def run_to_end(work: Awaitable[T]) -> T:
    """Await ``work`` in its own task; a caller cancelled meanwhile waits for it to end
    and then sees the cancellation, so a write once begun is never cut in two."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        if not task.cancelled():
            task.exception()  # retrieved: superseded by the cancellation
        raise asyncio.CancelledError
    return task.result()
