"""Running the async runner from synchronous front ends."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


def run_sync(awaitable: Awaitable[T]) -> T:
    """Runs an awaitable to completion in a new event loop and returns its result.

    The result is handed out through a holder rather than as the main task's result: on
    Python 3.11, `asyncio.run` restoring its SIGINT handler can `repr()` the finished main task,
    result included, and the repr of a 10,000-case result document takes about a minute.
    """
    holder: list[T] = []

    async def main() -> None:
        holder.append(await awaitable)

    asyncio.run(main())
    return holder[0]
