"""The collector's PostgreSQL store: the same interface and semantics as the SQLite `Store`.

For a survey that outgrows one process: several `rrsite serve --db postgresql://...` processes (or
machines) share one database. Every decision is the database's, never one process's memory:
the respondent's uniqueness is `UNIQUE (survey, respondent)`, an invitation code is spent by an
`UPDATE ... WHERE NOT used` (row lock: once), a survey's cap is counted under a
transaction-level advisory lock per survey. A submission is answered 201 only after its
transaction committed (PostgreSQL's default `synchronous_commit = on`: the commit is flushed to
its WAL). When the database cannot be reached, `submit` raises StoreUnavailable (503 +
Retry-After); the connection pool (asyncpg) opens new connections by itself once it is back, so
no restart is needed.

Schema: created on first start under an advisory lock (several processes may start at once) and
versioned in `rrsite_schema`, so a later rrsite can migrate it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Iterable
from typing import Any

import asyncpg

from .store import (
    BAD_CODE,
    CONFLICT,
    DUPLICATE,
    FULL,
    NO_CODE,
    STORED,
    USED_CODE,
    StoreError,
    StoreUnavailable,
    canonical_json,
    code_hash,
    minute_now,
    shown,
)

SCHEMA_VERSION = 1
#: Key of the advisory lock held while the schema is created or checked.
SCHEMA_LOCK = 0x72727369
SCHEMA = """
CREATE TABLE IF NOT EXISTS rrsite_schema (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS manifests (
    seq        bigserial,
    survey     text NOT NULL,
    version    text NOT NULL,
    manifest   text NOT NULL,
    first_seen text NOT NULL,
    PRIMARY KEY (survey, version)
);
CREATE TABLE IF NOT EXISTS submissions (
    id           bigserial PRIMARY KEY,
    survey       text NOT NULL,
    version      text NOT NULL,
    respondent   text NOT NULL,
    submitted_at text NOT NULL,
    answers      text NOT NULL,
    UNIQUE (survey, respondent)
);
CREATE TABLE IF NOT EXISTS invitations (
    survey    text NOT NULL,
    code_hash text NOT NULL,
    used      boolean NOT NULL DEFAULT false,
    PRIMARY KEY (survey, code_hash)
);
"""
#: Errors meaning "the database cannot be used right now" (answered 503, retried by the page).
UNAVAILABLE = (OSError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)

log = logging.getLogger("rrsite.collect")


def public_reason(error: BaseException) -> str:
    """A database error as clients may see it: its kind, never its message.

    asyncpg's messages name the server's address (host and port, or socket path), the user and
    the database.
    """
    if isinstance(error, asyncpg.PostgresError):
        state = getattr(error, "sqlstate", None)
        return f"{type(error).__name__} (SQLSTATE {state})" if state else type(error).__name__
    if isinstance(error, (OSError, asyncio.TimeoutError)):
        return f"{type(error).__name__}: the database cannot be reached"
    return type(error).__name__


async def _connect(dsn: str) -> asyncpg.Connection:
    return await asyncpg.connect(dsn, timeout=10)


async def setup_schema(connection: asyncpg.Connection, dsn: str) -> None:
    """Create the schema if missing, record its version; StoreError if a newer rrsite wrote it."""
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", SCHEMA_LOCK)
        await connection.execute(SCHEMA)
        version = await connection.fetchval("SELECT max(version) FROM rrsite_schema")
        if version is None:
            await connection.execute("INSERT INTO rrsite_schema (version) VALUES ($1)",
                                     SCHEMA_VERSION)
        elif version > SCHEMA_VERSION:
            raise StoreError(f"{shown(dsn)}: written by a newer rrsite (schema {version}); "
                             "upgrade rrsite")


class PgStore:
    """The PostgreSQL store behind `rrsite serve --db postgresql://...`."""

    def __init__(self, dsn: str, *, caps: dict[str, int] | None = None,
                 pool_size: int = 10) -> None:
        self.dsn = dsn
        self.path = shown(dsn)
        self.caps = dict(caps or {})
        self.pool_size = pool_size
        self.last_error: str | None = None
        self._pool: asyncpg.Pool | None = None
        self._run(self._setup())

    def _run(self, work: Any) -> Any:
        """Run a coroutine before the server's loop exists (start-up, tools); StoreError if down."""
        try:  # in a thread of its own: the caller may itself be inside a running event loop
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                return pool.submit(asyncio.run, work).result()
        except UNAVAILABLE as error:
            raise StoreError(f"{self.path}: cannot use the database: {error}") from error

    async def _setup(self) -> None:
        connection = await _connect(self.dsn)
        try:
            await setup_schema(connection, self.dsn)
        finally:
            await connection.close()

    # -- manifests ----------------------------------------------------------------------------

    @staticmethod
    async def _register(connection: asyncpg.Connection, manifest: dict[str, Any]) -> bool:
        text = canonical_json(manifest)
        status = await connection.execute(
            "INSERT INTO manifests (survey, version, manifest, first_seen) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT (survey, version) DO NOTHING",
            manifest["id"], manifest["version"], text, minute_now())
        if status.endswith(" 1"):
            return True
        await connection.execute(
            "UPDATE manifests SET manifest = $1 WHERE survey = $2 AND version = $3 "
            "AND manifest != $1", text, manifest["id"], manifest["version"])
        return False

    def register_manifests(self, manifests: Iterable[dict[str, Any]]) -> int:
        """Record manifests at start-up; the number that were new."""
        items = list(manifests)

        async def work() -> int:
            connection = await _connect(self.dsn)
            try:
                async with connection.transaction():
                    return sum([await self._register(connection, m) for m in items])
            finally:
                await connection.close()

        return int(self._run(work()))

    def stored_manifests(self) -> list[dict[str, Any]]:
        """Every manifest version recorded, in the order first seen."""
        import json

        async def work() -> list[str]:
            connection = await _connect(self.dsn)
            try:
                return [row[0] for row in await connection.fetch(
                    "SELECT manifest FROM manifests ORDER BY seq")]
            finally:
                await connection.close()

        return [json.loads(text) for text in self._run(work())]

    async def register(self, manifest: dict[str, Any]) -> bool:
        """Record a manifest version seen while running."""
        pool = self._require_pool()
        try:
            async with pool.acquire(timeout=5) as connection, connection.transaction():
                return await self._register(connection, manifest)
        except UNAVAILABLE as error:
            raise StoreUnavailable(f"the database could not record it ({self._failed(error)})"
                                   ) from error

    def add_invitations(self, survey: str, codes: Iterable[str]) -> int:
        """Record invitation codes (their hashes) for a survey, in one transaction; how many."""
        hashes = [code_hash(code) for code in codes]

        async def work() -> int:
            connection = await _connect(self.dsn)
            try:
                async with connection.transaction():
                    before = await connection.fetchval(
                        "SELECT count(*) FROM invitations WHERE survey = $1", survey)
                    await connection.executemany(
                        "INSERT INTO invitations (survey, code_hash) VALUES ($1, $2) "
                        "ON CONFLICT DO NOTHING", [(survey, h) for h in hashes])
                    after = await connection.fetchval(
                        "SELECT count(*) FROM invitations WHERE survey = $1", survey)
                    return int(after - before)
            finally:
                await connection.close()

        return int(self._run(work()))

    def _failed(self, error: BaseException) -> str:
        """What answers and /api/health may say about a database error; the full error is logged.

        Only the error's class and SQLSTATE (`public_reason`), never its message.
        """
        reason = public_reason(error)
        if reason != self.last_error:  # once per change, not once per request
            log.warning("%s: %s: %s", self.path, type(error).__name__, error)
        self.last_error = reason
        return reason

    # -- the pool -----------------------------------------------------------------------------

    async def open(self) -> None:
        """Create the connection pool (on the server's event loop); connections open lazily."""
        if self._pool is None:
            self._pool = await asyncpg.create_pool(
                self.dsn, min_size=0, max_size=self.pool_size, timeout=5, command_timeout=15)

    async def aclose(self) -> None:
        """Close the pool, letting running transactions finish."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            try:
                await asyncio.wait_for(pool.close(), timeout=10)
            except (TimeoutError, *UNAVAILABLE):
                pool.terminate()

    def close(self) -> None:
        """Nothing to release outside the event loop: the pool is closed by `aclose`."""

    def _require_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StoreUnavailable("the store is not open")
        return self._pool

    # -- submissions --------------------------------------------------------------------------

    async def submit(self, survey: str, version: str, respondent: str,
                     answers: dict[str, Any], invitation: str | None = None) -> str:
        """Store one validated submission; its outcome once committed (as `Store.submit`).

        Raises StoreUnavailable if the database cannot be reached or the commit failed.
        """
        pool = self._require_pool()
        try:
            async with pool.acquire(timeout=5) as connection, connection.transaction():
                outcome = await self._write(connection, survey, version, respondent,
                                            canonical_json(answers), invitation)
        except UNAVAILABLE as error:
            raise StoreUnavailable(f"the database could not store it ({self._failed(error)})"
                                   ) from error
        self.last_error = None
        return outcome

    async def _write(self, connection: asyncpg.Connection, survey: str, version: str,
                     respondent: str, answers_text: str, invitation: str | None) -> str:
        async def existing() -> str | None:
            row = await connection.fetchrow(
                "SELECT version, answers FROM submissions WHERE survey = $1 AND respondent = $2",
                survey, respondent)
            if row is None:
                return None
            return DUPLICATE if (row[0], row[1]) == (version, answers_text) else CONFLICT

        cap = self.caps.get(survey)
        invited = invitation is not None or bool(await connection.fetchval(
            "SELECT EXISTS (SELECT 1 FROM invitations WHERE survey = $1)", survey))
        if invited or cap is not None:
            previous = await existing()
            if previous is not None:
                return previous
        if cap is not None:
            # one counter per survey across every process: serialise the capped inserts
            await connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", survey)
            count = await connection.fetchval(
                "SELECT count(*) FROM submissions WHERE survey = $1", survey)
            if count >= cap:
                return FULL
        if invited:
            if invitation is None:
                return NO_CODE
            hashed = code_hash(invitation)
            status = await connection.execute(
                "UPDATE invitations SET used = true WHERE survey = $1 AND code_hash = $2 "
                "AND NOT used", survey, hashed)
            if not status.endswith(" 1"):
                known = await connection.fetchval(
                    "SELECT EXISTS (SELECT 1 FROM invitations WHERE survey = $1 "
                    "AND code_hash = $2)", survey, hashed)
                return USED_CODE if known else BAD_CODE
        status = await connection.execute(
            "INSERT INTO submissions (survey, version, respondent, submitted_at, answers) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (survey, respondent) DO NOTHING",
            survey, version, respondent, minute_now(), answers_text)
        if status.endswith(" 1"):
            return STORED
        return await existing() or CONFLICT

    # -- reading ------------------------------------------------------------------------------

    async def state(self) -> dict[str, Any]:
        """The store's state for `GET /api/health`; StoreUnavailable if the database is down."""
        pool = self._require_pool()
        try:
            async with pool.acquire(timeout=5) as connection:
                per_survey = {row[0]: row[1] for row in await connection.fetch(
                    "SELECT survey, count(*) FROM submissions GROUP BY survey")}
                versions: dict[str, list[str]] = {}
                for row in await connection.fetch(
                        "SELECT survey, version FROM manifests ORDER BY seq"):
                    versions.setdefault(row[0], []).append(row[1])
        except UNAVAILABLE as error:
            raise StoreUnavailable(self._failed(error)) from error
        self.last_error = None  # the database answered: it is up now, whatever failed before
        return {
            "ok": True,
            "store": "postgresql",
            "last_error": self.last_error,
            "submissions": sum(per_survey.values()),
            "surveys": [
                {"id": survey, "versions": survey_versions,
                 "submissions": per_survey.get(survey, 0)}
                for survey, survey_versions in versions.items()
            ],
        }
