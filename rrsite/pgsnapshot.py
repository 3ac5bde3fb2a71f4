"""A read-only snapshot of a PostgreSQL database, driven from synchronous code.

asyncpg runs on an event loop in a thread of its own (the caller may itself be inside a running
loop); the connection holds one REPEATABLE READ, read-only transaction, so every query sees the
database as it was when the snapshot opened. `rrsite export --db postgresql://...` and
`rrsite analyze --db` read through it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any


class Snapshot:
    """An asyncpg connection in one read-only REPEATABLE READ transaction, on its own thread."""

    def __init__(self, dsn: str, name: str) -> None:  # noqa: D107
        import asyncpg

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name=name)
        self._thread.start()
        self._connection: Any = None
        try:
            self._connection = self.call(asyncpg.connect(dsn, timeout=10))
            self.call(self._connection.transaction(isolation="repeatable_read",
                                                   readonly=True).start())
        except BaseException:
            self.close()
            raise

    def call(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine on the connection's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def fetch(self, query: str, *args: Any) -> list[Any]:
        """Rows of a query."""
        return list(self.call(self._connection.fetch(query, *args)))

    def close(self) -> None:
        """End the snapshot and close the connection."""
        if self._connection is not None:
            self.call(self._connection.close())
            self._connection = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
