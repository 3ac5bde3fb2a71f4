"""Two collector stores on one PostgreSQL database, as two processes have them: ``both_open``
opens both, runs the work (their requests racing), and closes both, whatever happens."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from rrsite.collect.pgstore import run_outside_loop

T = TypeVar("T")


def both_open(first: Any, second: Any, work: Callable[[], Awaitable[T]]) -> T:
    """``await work()`` with both stores open (outside any running event loop)."""
    async def run() -> T:
        await first.open()
        await second.open()
        try:
            return await work()
        finally:
            await first.aclose()
            await second.aclose()

    return run_outside_loop(run())
