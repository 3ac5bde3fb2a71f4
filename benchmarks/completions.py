"""The completion record of panel surveys: what adding a digest costs, beside a submission.

Run: python benchmarks/completions.py [--repeat 200] [--sizes 0,1000,10000] [--no-postgres]

Adding a participant's digest rewrites the survey's sorted set whole (SQLite: one row, with the
write-ahead log emptied after the commit; PostgreSQL: the table, TRUNCATE and insert under an
exclusive lock), so that nothing orders the digests (docs: the threat model). Its cost grows with
the digests already recorded. For each store this measures, one operation after another through
the store's own interface (no HTTP), in the same run:

1. the baseline: storing a submission without a completion (`Store.submit`, `PgStore.submit`);
2. adding one digest to a record that already holds 0, 1,000 or 10,000 (`record_completion`).

Prints the median and p90 per operation and the ratio digest / submission. A panel submission
with a record costs the sum of the two.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rrsite.collect.completion.record import DIGEST  # noqa: E402
from rrsite.collect.pgstore import PgStore  # noqa: E402
from rrsite.collect.store import Store  # noqa: E402

SURVEY = "bench"


def token() -> str:
    return secrets.token_urlsafe(16)


async def timed(repeat: int, operation: Callable[[], Awaitable[Any]]) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await operation()
        times.append(time.perf_counter() - start)
    return times


def shown(times: list[float]) -> str:
    ordered = sorted(times)
    return (f"median {statistics.median(ordered) * 1000:7.2f} ms, "
            f"p90 {ordered[int(len(ordered) * 0.9)] * 1000:7.2f} ms")


def blob(count: int) -> bytes:
    return b"".join(sorted(secrets.token_bytes(DIGEST) for _ in range(count)))


async def measure(store: Any, preload: Callable[[int], Awaitable[None]], repeat: int,
                  sizes: list[int], label: str) -> None:
    await store.open()
    try:
        baseline = await timed(repeat, lambda: store.submit(
            SURVEY, "0123456789abcdef", token(), {"q": "yes"}))
        print(f"{label}: a submission                  {shown(baseline)}")
        base = statistics.median(baseline)
        for size in sizes:
            await preload(size)
            added = await timed(repeat, lambda: store.record_completion(
                SURVEY, secrets.token_bytes(DIGEST)))
            ratio = statistics.median(added) / base
            print(f"{label}: a digest, {size:>6,} recorded   {shown(added)}   "
                  f"x{ratio:.2f} a submission")
    finally:
        await store.aclose()


def sqlite_run(repeat: int, sizes: list[int]) -> None:
    folder = Path(tempfile.mkdtemp(prefix="rrsite-bench-"))
    db = folder / "c.db"
    store = Store(db)

    async def preload(size: int) -> None:  # a connection of its own while the writer waits
        import sqlite3

        connection = sqlite3.connect(db, timeout=10)
        try:
            with connection:
                connection.execute("INSERT INTO completion_sets (survey, digests) VALUES (?, ?) "
                                   "ON CONFLICT (survey) DO UPDATE SET digests = "
                                   "excluded.digests", (SURVEY, blob(size)))
        finally:
            connection.close()

    asyncio.run(measure(store, preload, repeat, sizes, "SQLite    "))


def postgres_run(repeat: int, sizes: list[int]) -> None:
    spec = importlib.util.spec_from_file_location("pgserver", ROOT / "tests" / "collect" /
                                                  "pgserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.PgServer(settings={"wal_level": "minimal", "max_wal_senders": "0",
                                       "wal_skip_threshold": "0"}).start()
    try:
        dsn = server.create_database()
        store = PgStore(dsn)

        async def preload(size: int) -> None:
            import asyncpg

            connection = await asyncpg.connect(dsn)
            try:
                await connection.execute("TRUNCATE completion_sets")
                await connection.execute("INSERT INTO completion_sets (survey, digests) "
                                         "VALUES ($1, $2)", SURVEY, blob(size))
            finally:
                await connection.close()

        asyncio.run(measure(store, preload, repeat, sizes, "PostgreSQL"))
    finally:
        server.remove()


def main() -> None:
    """Measure both stores and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--sizes", default="0,1000,10000")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    sqlite_run(args.repeat, sizes)
    if not args.no_postgres:
        postgres_run(args.repeat, sizes)


if __name__ == "__main__":
    main()
