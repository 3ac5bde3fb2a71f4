"""What the linkage attacks of tests/collect share: pairing two rankings, counting the pairs an
attack got right, reading a SQLite `-wal` file's pages and a PostgreSQL ctid.

An attack ranks the codes (or digests) and the respondents' tokens each by what the stored files
show of them (place, order, time); ``rank_pairs`` pairs the i-th of one with the i-th of the
other, and ``right`` counts how many of its pairs are true ones.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

Key = TypeVar("Key", bound=Hashable)


def rank_pairs(code_keys: Mapping[Key, Any], token_keys: Mapping[str, Any]) -> dict[Key, str]:
    """Pair the i-th code with the i-th token, each ranked by its key (ties by name)."""
    codes = sorted(code_keys, key=lambda c: (code_keys[c], c))
    tokens = sorted(token_keys, key=lambda t: (token_keys[t], t))
    return dict(zip(codes, tokens, strict=False))


def right(guess: Mapping[Key, str], pairs: Mapping[Key, str] | Iterable[tuple[Key, str]]) -> int:
    """How many of the guessed pairs are true (``pairs``: the true ones, or a mapping of them)."""
    truth = dict(pairs)
    return sum(truth.get(code) == token for code, token in guess.items())


def wal_frames(wal: bytes) -> list[bytes]:
    """Every page image in a `-wal` file, in file order (older generations' frames too)."""
    if len(wal) < 32:
        return []
    page_size = int.from_bytes(wal[8:12], "big")
    step = 24 + page_size
    return [wal[at + 24:at + step] for at in range(32, len(wal) - step + 1, step)]


def ctid(text: str) -> tuple[int, int]:
    """A PostgreSQL ctid, ``(page,item)``, as numbers."""
    page, item = text.strip("()").split(",")
    return int(page), int(item)


def row_order(db: Path) -> dict[str, int]:
    """Each respondent token's place in the submissions table (by row id), read from a stopped
    copy of the SQLite file (immutable: nothing is written to it)."""
    connection = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return {row[0]: i for i, row in enumerate(connection.execute(
            "SELECT respondent FROM submissions ORDER BY rowid"))}
    finally:
        connection.close()


def snapshot(folder: Path) -> Path:
    """Copy the whole SQLite database of ``folder`` (c.db and its -wal and -shm), as it stands
    while the collector runs, into ``folder``/live."""
    live = folder / "live"
    live.mkdir()
    for path in folder.glob("c.db*"):
        shutil.copy(path, live / path.name)
    return live
