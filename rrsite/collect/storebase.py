"""What the collector's two stores share: outcomes, errors, the protocol, and small helpers.

`store.Store` (SQLite) and `pgstore.PgStore` (PostgreSQL) both import from here and never from each
other; `stores.open_store` picks one for a --db value.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ..errors import RRSiteError

STORED, DUPLICATE, CONFLICT, FULL = "stored", "duplicate", "conflict", "full"
#: Outcomes for invitation-only surveys: no code sent, a code not issued, a code already used.
NO_CODE, BAD_CODE, USED_CODE = "no-code", "bad-code", "used-code"
#: Entries of one survey (and kind) that stay in a pool of spent entries when some settle (at
#: 2 * MIX): PostgreSQL's spent codes and tokens (invitations/pgspend.py), SQLite's tokens
#: (invitations/blindstore.py).
MIX = 1024
#: Outcomes of blind invitations: the trade may go ahead; the survey's codes are not blind; a
#: token spent already; a token sent to a survey without blind invitations; a plain code sent to
#: a blind survey.
SIGN, NOT_BLIND, USED_TOKEN, BAD_TOKEN, BLIND_ONLY = (
    "sign", "not-blind", "used-token", "bad-token", "blind-only")


class StoreError(RRSiteError):
    """The database file cannot be used (path and reason)."""


class StoreUnavailable(Exception):
    """A write failed (disk full, I/O error, locked by another program): answer 503, retry later."""


def is_postgres(db: str | Path) -> bool:
    """True if a --db value names a PostgreSQL database (a postgresql:// or postgres:// URL)."""
    return str(db).startswith(("postgresql://", "postgres://"))


def shown(db: str | Path) -> str:
    """A --db value for messages: a URL without its password."""
    head, sep, rest = str(db).partition("://")
    credentials, at, place = rest.rpartition("@")
    if not sep or not at or ":" not in credentials:
        return str(db)
    return f"{head}{sep}{credentials.split(':', 1)[0]}:***@{place}"


def minute_now() -> str:
    """The current time, UTC, truncated to the minute: ``2026-11-22T13:05Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%MZ")


def code_hash(code: str) -> str:
    """What the database keeps of an invitation code: its SHA-256, hex (the code is not stored)."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """JSON text with sorted keys and no spaces: equal content gives equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class SubmissionStore(Protocol):
    """What the collector needs of a store: `Store` (SQLite) and `PgStore` (PostgreSQL)."""

    path: Any
    caps: dict[str, int]

    def register_manifests(self, manifests: Iterable[dict[str, Any]]) -> int:
        """Record manifests at start-up; the number that were new."""

    def stored_manifests(self) -> list[dict[str, Any]]:
        """Every manifest version recorded, in the order first seen."""

    async def register(self, manifest: dict[str, Any]) -> bool:
        """Record a manifest version seen while running."""

    def add_invitations(self, survey: str, codes: Iterable[str]) -> int:
        """Record invitation codes' hashes for a survey; how many were new."""

    def advice(self) -> list[str]:
        """Warnings for the operator at start-up (settings that weaken a guarantee)."""

    async def open(self) -> None:
        """Get ready to store (in the app's lifespan, on its event loop)."""

    async def aclose(self) -> None:
        """Finish and release everything."""

    def close(self) -> None:
        """Release what is held outside an event loop (after `aclose`, or if never opened)."""

    async def submit(self, survey: str, version: str, respondent: str,
                     answers: dict[str, Any], invitation: str | None = None,
                     token: str | None = None) -> str:
        """Store one submission; STORED, DUPLICATE, CONFLICT, FULL or an invitation outcome.

        `token`: the SHA-256 of a verified blind token (blind invitations), instead of a code.
        """

    async def record_completion(self, survey: str, digest: bytes) -> str:
        """Add a digest to a survey's completion record (panels): STORED or DUPLICATE."""

    async def exchange(self, survey: str, code_hash: str, blinded_hash: str) -> str:
        """Spend a code for a blinded message (blind invitations): SIGN or why not."""

    def mark_blind(self, survey: str, key_id: str) -> None:
        """Record that a survey trades its codes for tokens signed by key `key_id`."""

    async def survey_keys(self) -> dict[str, str]:
        """{survey: key id} of every blind survey, read now."""

    def survey_keys_now(self) -> dict[str, str]:
        """`survey_keys` outside an event loop."""

    async def state(self) -> dict[str, Any]:
        """What `GET /api/health` shows, with `ok`; StoreUnavailable if unreadable."""
