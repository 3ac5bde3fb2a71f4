"""The completion record in both stores: a set of 32-byte digests per survey, with no order.

Per survey one row holds the digests sorted, end to end; adding a digest rewrites the row (SQLite)
or the whole table (PostgreSQL, TRUNCATE and insert, under an exclusive lock) in a transaction of
its own, after the submission's. The content is then a function of the set alone: no row id, no
insertion order, no time, no system column per digest. SQLite's write-ahead log, which keeps each
commit's pages in commit order, is emptied after every commit that added a digest (the store's
writer does it for jobs marked as spending, as for invitation codes), and ``secure_delete``
overwrites the freed pages; PostgreSQL logs the rewrite unless it runs with ``wal_level =
minimal`` (the threat model of invitation codes and completion records says so).
"""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..storebase import DUPLICATE, STORED

#: Bytes of one digest (SHA-256).
DIGEST = 32

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS completion_sets (
    survey  TEXT NOT NULL PRIMARY KEY,
    digests BLOB NOT NULL
) WITHOUT ROWID;
"""
PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS completion_sets (
    survey  text PRIMARY KEY,
    digests bytea NOT NULL
);
"""


def split(blob: bytes | None) -> list[bytes]:
    """The digests of a stored row, in their (sorted) order."""
    data = bytes(blob or b"")
    return [data[at:at + DIGEST] for at in range(0, len(data), DIGEST)]


def with_digest(digests: list[bytes], digest: bytes) -> list[bytes] | None:
    """The sorted digests with ``digest`` added, or None if it is there already."""
    at = bisect.bisect_left(digests, digest)
    if at < len(digests) and digests[at] == digest:
        return None
    return [*digests[:at], digest, *digests[at:]]


# ---- SQLite -----------------------------------------------------------------------------------


def sqlite_job(survey: str, digest: bytes) -> Callable[[sqlite3.Connection], str]:
    """The writer-thread job adding ``digest`` to the survey's set: STORED, or DUPLICATE."""

    def add(connection: sqlite3.Connection) -> str:
        row = connection.execute("SELECT digests FROM completion_sets WHERE survey = ?",
                                 (survey,)).fetchone()
        digests = with_digest(split(row[0] if row else None), digest)
        if digests is None:
            return DUPLICATE
        connection.execute(
            "INSERT INTO completion_sets (survey, digests) VALUES (?, ?) "
            "ON CONFLICT (survey) DO UPDATE SET digests = excluded.digests",
            (survey, b"".join(digests)))
        return STORED

    return add


def read_sqlite(path: Path, survey: str) -> list[bytes]:
    """The survey's recorded digests, from a SQLite database (read-only)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found = connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'completion_sets'"
        ).fetchone()
        if found is None:
            return []
        row = connection.execute("SELECT digests FROM completion_sets WHERE survey = ?",
                                 (survey,)).fetchone()
        return split(row[0] if row else None)
    finally:
        connection.close()


# ---- PostgreSQL -------------------------------------------------------------------------------


async def setup_pg(connection: Any) -> None:
    """Create the table if missing (under the schema's advisory lock, in its transaction)."""
    await connection.execute(PG_SCHEMA)


async def add_pg(connection: Any, survey: str, digest: bytes) -> str:
    """Add ``digest`` to the survey's set in a transaction of its own: STORED or DUPLICATE.

    The table is locked, read, emptied with TRUNCATE (new files; the old ones are emptied at
    commit) and written back whole, every survey's row in survey order: each row then carries the
    newest addition's ``xmin``, and nothing of an earlier version of the set survives in the heap.
    """
    async with connection.transaction():
        await connection.execute("LOCK TABLE completion_sets IN ACCESS EXCLUSIVE MODE")
        sets = {row[0]: split(row[1]) for row in await connection.fetch(
            "SELECT survey, digests FROM completion_sets")}
        digests = with_digest(sets.get(survey, []), digest)
        if digests is None:
            return DUPLICATE
        sets[survey] = digests
        await connection.execute("TRUNCATE completion_sets")
        await connection.executemany(
            "INSERT INTO completion_sets (survey, digests) VALUES ($1, $2)",
            [(name, b"".join(sets[name])) for name in sorted(sets)])
        return STORED


async def read_pg(connection: Any, survey: str) -> list[bytes]:
    """The survey's recorded digests, from PostgreSQL."""
    if not await connection.fetchval("SELECT to_regclass('completion_sets') IS NOT NULL"):
        return []
    blob = await connection.fetchval("SELECT digests FROM completion_sets WHERE survey = $1",
                                     survey)
    return split(blob)
