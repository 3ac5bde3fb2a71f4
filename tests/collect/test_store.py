"""The store's two entry points (async for the server, blocking for tools) agree on outcomes."""

import asyncio
import concurrent.futures

from rrsite.collect.store import CONFLICT, DUPLICATE, STORED, Store


def run(coroutine):
    """asyncio.run in its own thread: the session's Playwright driver may own this thread's loop."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_sync_and_async_submissions_report_stored_duplicate_and_conflict(tmp_path):
    store = Store(tmp_path / "s.db")
    store.start()
    try:
        token = "A" * 22
        assert store.submit_sync("s", "v1", token, {"q": "yes"}) == STORED
        assert store.submit_sync("s", "v1", token, {"q": "yes"}) == DUPLICATE
        assert store.submit_sync("s", "v1", token, {"q": "no"}) == CONFLICT
        assert run(store.submit("s", "v1", token, {"q": "yes"})) == DUPLICATE
        assert run(store.submit("s", "v1", token, {"q": "no"})) == CONFLICT
        other = "B" * 22
        assert run(store.submit("s", "v1", other, {"q": "no"})) == STORED
        assert store.submit_sync("s", "v1", other, {"q": "yes"}) == CONFLICT
    finally:
        store.close()
