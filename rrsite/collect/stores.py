"""`open_store`: the collector's store that a --db value names."""

from __future__ import annotations

from pathlib import Path

from .storebase import SubmissionStore, is_postgres


def open_store(db: str | Path, *, caps: dict[str, int] | None = None) -> SubmissionStore:
    """The store a --db value names: a postgresql:// URL, else a SQLite file (created if new)."""
    if is_postgres(db):
        from .pgstore import PgStore

        return PgStore(str(db), caps=caps)
    from .store import Store

    return Store(Path(db), caps=caps)

