"""The ``openai`` client on an event loop of its own, in a worker thread.

The client does real work on every call: it turns the items of a request into JSON
through its typed transform and builds pydantic models of every item of a page —
tens of milliseconds for a page of 100 items. On the window's event loop that would
stall the UI; here it runs in a thread, and the caller awaits the outcome (a result or
the client's own exception) on its loop. Cancelling the caller cancels the call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from openai import AsyncOpenAI

T = TypeVar("T")


class ClientThread:
    """An ``AsyncOpenAI`` client, made by ``make`` on first use, living in a thread."""

    def __init__(self, make: Callable[[], AsyncOpenAI]) -> None:
        self._make = make
        self._client: AsyncOpenAI | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="fluxgui-openai", daemon=True
        )
        self._thread.start()
        self._closed = False

    async def run(self, call: Callable[[AsyncOpenAI], Awaitable[T]]) -> T:
        """``await call(client)`` in the thread; its result or exception here."""
        if self._closed:
            raise RuntimeError("the Conversations client is closed")

        async def job() -> T:
            if self._client is None:
                self._client = self._make()
            return await call(self._client)

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(job(), self._loop))

    async def close(self) -> None:
        """Close the client and end the thread."""
        if self._closed:
            return
        self._closed = True

        async def shut() -> None:
            if self._client is not None:
                await self._client.close()

        try:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(shut(), self._loop))
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            await asyncio.to_thread(self._thread.join, 10)
            self._loop.close()
