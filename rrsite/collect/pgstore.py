"""The collector's PostgreSQL store: the same interface and semantics as the SQLite `Store`.

For a survey that outgrows one process: several `rrsite serve --db postgresql://...` processes (or
machines) share one database. Every decision is the database's, never one process's memory:
the respondent's uniqueness is `UNIQUE (survey, respondent)`, a survey's cap is counted under a
transaction-level advisory lock per survey, and submissions that carry an invitation code are
serialised by the lock that spending a code takes (below), so an identical resend, one token with
two codes, or one code with two tokens resolve the same way on every process.

Invitation codes without a trail. `invitation_codes` holds the hash of every code issued, written
once by `rrsite invite` in hash order. Which codes are still unused lives in `unused_codes`, one
row per survey holding the sorted SHA-256 digests of its unused codes end to end, and a code is
spent by rewriting that table whole in the submission's own transaction: `LOCK` it, read it,
`TRUNCATE` it (new files; the old ones are emptied at commit) and write the rows back without the
code. Every row then carries the same `xmin` (the newest spending transaction's), its content is
a function of the set alone, and no earlier version of the table survives in the heap: the
database holds the set of spent codes (issued minus unused) and nothing about when or by which
submission each was spent. Updating a `used` flag in place, as schema 1 did, gave the code's new
row version the submission's `xmin` and appended it to the heap in spending order. PostgreSQL's
write-ahead log still records each rewrite unless the server runs with `wal_level = minimal`
(with `max_wal_senders = 0` and `wal_skip_threshold = 0`): then a table rewritten in its own
transaction is fsynced instead of logged (the docs' threat model). The cost: a spend rewrites the
unused codes of every survey under a table lock (32 bytes a code), so invitation-only submissions
commit one at a time (benchmarks/collector.py measures it).

A submission is answered 201 only after its transaction committed (PostgreSQL's default
`synchronous_commit = on`: the commit is flushed to its WAL). When the database cannot be reached,
`submit` raises StoreUnavailable (503 + Retry-After); the connection pool (asyncpg) opens new
connections by itself once it is back, so no restart is needed.

Schema: created on first start under an advisory lock (several processes may start at once) and
versioned in `rrsite_schema`, so a later rrsite can migrate it.
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import logging
from collections.abc import Iterable
from typing import Any

import asyncpg

from . import blindstore
from .completion import record as completion
from .storebase import (
    BAD_CODE,
    CONFLICT,
    DUPLICATE,
    FULL,
    NO_CODE,
    STORED,
    UNUSED,
    USED_CODE,
    StoreError,
    StoreUnavailable,
    canonical_json,
    code_hash,
    minute_now,
    shown,
)

#: 1: `invitations` with a `used` flag; 2: `invitation_codes` and `unused_codes`.
SCHEMA_VERSION = 2
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
CREATE TABLE IF NOT EXISTS invitation_codes (
    survey    text NOT NULL,
    code_hash text NOT NULL,
    PRIMARY KEY (survey, code_hash)
);
CREATE TABLE IF NOT EXISTS unused_codes (
    survey text PRIMARY KEY,
    hashes bytea NOT NULL
);
"""
#: Schema 1's invitations, moved into schema 2's tables (the old table, and its history, dropped).
MIGRATE_1 = """
INSERT INTO invitation_codes (survey, code_hash)
    SELECT survey, code_hash FROM invitations ORDER BY survey, code_hash ON CONFLICT DO NOTHING;
INSERT INTO unused_codes (survey, hashes)
    SELECT survey, string_agg(decode(code_hash, 'hex'), ''::bytea ORDER BY code_hash)
    FROM invitations WHERE NOT used GROUP BY survey;
DROP TABLE invitations;
"""
#: Errors meaning "the database cannot be used right now" (answered 503, retried by the page).
#: Taken on `unused_codes` by every transaction that may spend or add a code: one at a time.
SPEND_LOCK = "ACCESS EXCLUSIVE"
#: The settings under which PostgreSQL fsyncs a table rewritten in one transaction instead of
#: copying it into its write-ahead log (the accepted spellings of each value).
MINIMAL_WAL = {"wal_level": ("minimal",), "max_wal_senders": ("0",),
               "wal_skip_threshold": ("0", "0kb")}
#: Bytes of a SHA-256 digest, as `unused_codes.hashes` stores them end to end.
DIGEST = 32
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


def run_outside_loop(work: Any) -> Any:
    """`asyncio.run(work)` in a thread of its own.

    The caller may be inside a running event loop (the server's, or a test's browser driver).
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


async def _connect(dsn: str) -> asyncpg.Connection:
    return await asyncpg.connect(dsn, timeout=10)


async def setup_schema(connection: asyncpg.Connection, dsn: str) -> None:
    """Create the schema if missing, record its version; StoreError if a newer rrsite wrote it."""
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", SCHEMA_LOCK)
        await connection.execute(SCHEMA)
        await blindstore.setup_pg(connection)  # [blind hook, issue 24]
        await completion.setup_pg(connection)  # [the completion record of panels]
        version = await connection.fetchval("SELECT max(version) FROM rrsite_schema")
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(f"{shown(dsn)}: written by a newer rrsite (schema {version}); "
                             "upgrade rrsite")
        if version == 1:
            await connection.execute(MIGRATE_1)
        if version != SCHEMA_VERSION:
            await connection.execute("DELETE FROM rrsite_schema")
            await connection.execute("INSERT INTO rrsite_schema (version) VALUES ($1)",
                                     SCHEMA_VERSION)


async def _unused(connection: asyncpg.Connection) -> dict[str, list[bytes]]:
    """Every survey's unused codes: sorted SHA-256 digests (read under SPEND_LOCK)."""
    unused: dict[str, list[bytes]] = {}
    for survey, blob in await connection.fetch("SELECT survey, hashes FROM unused_codes"):
        unused[survey] = [blob[i:i + DIGEST] for i in range(0, len(blob), DIGEST)]
    return unused


async def _rewrite(connection: asyncpg.Connection, unused: dict[str, list[bytes]]) -> None:
    """Replace `unused_codes` by new files holding `unused` (under SPEND_LOCK, in a transaction).

    TRUNCATE gives the table (and its TOAST table and index) new files and empties the old ones
    at commit, so no earlier version of the set survives in the heap (see the module docstring).
    """
    await connection.execute("TRUNCATE unused_codes")
    rows = [(survey, b"".join(digests)) for survey, digests in sorted(unused.items()) if digests]
    if rows:
        await connection.executemany(
            "INSERT INTO unused_codes (survey, hashes) VALUES ($1, $2)", rows)


async def code_state(connection: asyncpg.Connection, survey: str, hashed: str) -> str:
    """UNUSED, USED_CODE or BAD_CODE (never issued) for a code's hash, as of now."""
    if not await connection.fetchval(
            "SELECT EXISTS (SELECT 1 FROM invitation_codes WHERE survey = $1 AND code_hash = $2)",
            survey, hashed):
        return BAD_CODE
    blob = await connection.fetchval("SELECT hashes FROM unused_codes WHERE survey = $1", survey)
    digests = [blob[i:i + DIGEST] for i in range(0, len(blob or b""), DIGEST)]
    at = bisect.bisect_left(digests, bytes.fromhex(hashed))
    return UNUSED if at < len(digests) and digests[at] == bytes.fromhex(hashed) else USED_CODE


async def exchange_pg(connection: Any, survey: str, code_hash: str, blinded_hash: str) -> str:
    """PostgreSQL's `blindstore.exchange_job`, in the caller's transaction (races: the key)."""
    if await connection.fetchval("SELECT key_id FROM blind_surveys WHERE survey = $1",
                                 survey) is None:
        return blindstore.NOT_BLIND
    state = await code_state(connection, survey, code_hash)
    if state != UNUSED:
        return state
    status = await connection.execute(
        "INSERT INTO blind_codes (survey, code_hash, blinded_hash) VALUES ($1, $2, $3) "
        "ON CONFLICT DO NOTHING", survey, code_hash, blinded_hash)
    if status.endswith(" 1"):
        return blindstore.SIGN
    stored = await connection.fetchval(
        "SELECT blinded_hash FROM blind_codes WHERE survey = $1 AND code_hash = $2",
        survey, code_hash)
    return blindstore.SIGN if stored == blinded_hash else USED_CODE


class _RolledBack(Exception):
    """Raised inside a submission's transaction to undo it and answer `outcome` instead."""

    def __init__(self, outcome: str) -> None:
        super().__init__(outcome)
        self.outcome = outcome


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
        try:
            return run_outside_loop(work)
        except UNAVAILABLE as error:
            raise StoreError(f"{self.path}: cannot use the database: {error}") from error

    async def _setup(self) -> None:
        connection = await _connect(self.dsn)
        try:
            await setup_schema(connection, self.dsn)
        finally:
            await connection.close()

    def advice(self) -> list[str]:
        """Warnings for the operator at start-up: WAL settings that keep codes' spending order."""
        async def work() -> tuple[bool, dict[str, str]]:
            connection = await _connect(self.dsn)
            try:
                invited = bool(await connection.fetchval(
                    "SELECT EXISTS (SELECT 1 FROM invitation_codes)"))
                # [panels] a completion record is rewritten like the codes: the same settings
                invited = invited or bool(await connection.fetchval(
                    "SELECT EXISTS (SELECT 1 FROM manifests "
                    "WHERE manifest::jsonb -> 'panel' ->> 'record' = 'true')"))
                settings = {name: str(await connection.fetchval(f"SHOW {name}"))
                            for name in MINIMAL_WAL}
                return invited, settings
            finally:
                await connection.close()

        invited, settings = self._run(work())
        off = [f"{name} = {settings[name]}" for name, wanted in MINIMAL_WAL.items()
               if settings[name].lower() not in wanted]
        if not invited or not off:
            return []
        return [f"PostgreSQL runs with {', '.join(off)}: its write-ahead log keeps, for a while, "
                "the order in which invitation codes were spent (and panel completions "
                "recorded); set "
                + ", ".join(f"{name} = {values[0]}" for name, values in MINIMAL_WAL.items())
                + " (docs: the threat model of invitation codes)"]

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
        """Record invitation codes (their hashes) for a survey, in one transaction; how many.

        New hashes go into both tables in hash order (no trace of the order they were drawn in).
        """
        hashes = sorted({code_hash(code) for code in codes})

        async def work() -> int:
            connection = await _connect(self.dsn)
            try:
                async with connection.transaction():
                    await connection.execute(f"LOCK TABLE unused_codes IN {SPEND_LOCK} MODE")
                    known = {row[0] for row in await connection.fetch(
                        "SELECT code_hash FROM invitation_codes WHERE survey = $1", survey)}
                    new = [h for h in hashes if h not in known]
                    await connection.executemany(
                        "INSERT INTO invitation_codes (survey, code_hash) VALUES ($1, $2)",
                        [(survey, h) for h in new])
                    unused = await _unused(connection)
                    unused[survey] = sorted(unused.get(survey, []) + [bytes.fromhex(h)
                                                                       for h in new])
                    await _rewrite(connection, unused)
                    return len(new)
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

    # -- blind invitations --------------------------------------------------------------------

    async def exchange(self, survey: str, code_hash: str, blinded_hash: str) -> str:
        """Spend a code for a blinded message (`blindstore.exchange`), in one transaction."""
        pool = self._require_pool()
        try:
            async with pool.acquire(timeout=5) as connection, connection.transaction():
                return await exchange_pg(connection, survey, code_hash, blinded_hash)
        except UNAVAILABLE as error:
            raise StoreUnavailable(f"the database could not record it ({error})") from error

    def mark_blind(self, survey: str, key_id: str) -> None:
        """Record a blind survey (`rrsite invite --blind`)."""
        async def work() -> None:
            connection = await _connect(self.dsn)
            try:
                async with connection.transaction():
                    await blindstore.setup_pg(connection)
                    await blindstore.mark_blind_pg(connection, survey, key_id)
            finally:
                await connection.close()

        self._run(work())

    # -- submissions --------------------------------------------------------------------------

    async def submit(self, survey: str, version: str, respondent: str,
                     answers: dict[str, Any], invitation: str | None = None,
                     token: str | None = None) -> str:
        """Store one validated submission; its outcome once committed (as `Store.submit`).

        Raises StoreUnavailable if the database cannot be reached or the commit failed.
        """
        pool = self._require_pool()
        try:
            async with pool.acquire(timeout=5) as connection, connection.transaction():
                outcome = await self._write(connection, survey, version, respondent,
                                            canonical_json(answers), invitation, token)
        except _RolledBack as rolled_back:
            outcome = rolled_back.outcome
        except UNAVAILABLE as error:
            raise StoreUnavailable(f"the database could not store it ({self._failed(error)})"
                                   ) from error
        self.last_error = None
        return outcome

    async def record_completion(self, survey: str, digest: bytes) -> str:
        """Add a digest to the survey's completion record, in a transaction of its own.

        STORED, or DUPLICATE when it is there already; StoreUnavailable if it could not commit.
        """
        pool = self._require_pool()
        try:
            async with pool.acquire(timeout=5) as connection:
                outcome = await completion.add_pg(connection, survey, digest)
        except UNAVAILABLE as error:
            raise StoreUnavailable(f"the database could not store it ({self._failed(error)})"
                                   ) from error
        self.last_error = None
        return outcome

    async def _write(self, connection: asyncpg.Connection, survey: str, version: str,
                     respondent: str, answers_text: str, invitation: str | None,
                     token: str | None = None) -> str:
        async def existing() -> str | None:
            row = await connection.fetchrow(
                "SELECT version, answers FROM submissions WHERE survey = $1 AND respondent = $2",
                survey, respondent)
            if row is None:
                return None
            return DUPLICATE if (row[0], row[1]) == (version, answers_text) else CONFLICT

        cap = self.caps.get(survey)
        invited = invitation is not None or token is not None or bool(await connection.fetchval(
            "SELECT EXISTS (SELECT 1 FROM invitation_codes WHERE survey = $1)", survey))
        if invited:
            # before anything is read: every process sees the others' committed spends and
            # submissions, so a resend, a token with two codes or a code with two tokens are
            # decided one after the other
            await connection.execute(f"LOCK TABLE unused_codes IN {SPEND_LOCK} MODE")
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
        if invited:  # [blind hook, issue 24] a blind token instead of a code
            refused = await blindstore.check_pg(connection, survey, invitation, token)
            if refused == blindstore.USED_TOKEN:  # an identical resend racing its first copy
                return await existing() or refused
            if refused is not None:
                return refused
        if invited and token is None:
            if invitation is None:
                return NO_CODE
            hashed = code_hash(invitation)
            if not await self._spend(connection, survey, hashed):
                known = await connection.fetchval(
                    "SELECT EXISTS (SELECT 1 FROM invitation_codes WHERE survey = $1 "
                    "AND code_hash = $2)", survey, hashed)
                return USED_CODE if known else BAD_CODE
        status = await connection.execute(
            "INSERT INTO submissions (survey, version, respondent, submitted_at, answers) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (survey, respondent) DO NOTHING",
            survey, version, respondent, minute_now(), answers_text)
        if status.endswith(" 1"):
            return STORED
        outcome = await existing() or CONFLICT
        if invited:  # cannot happen under SPEND_LOCK; if it did, the code must not stay spent
            raise _RolledBack(outcome)
        return outcome

    @staticmethod
    async def _spend(connection: asyncpg.Connection, survey: str, hashed: str) -> bool:
        """Spend an unused code by rewriting `unused_codes` without it; False if it is not there.

        Runs under SPEND_LOCK, in the submission's transaction (a failed insert rolls it back).
        """
        unused = await _unused(connection)
        digests = unused.get(survey, [])
        digest = bytes.fromhex(hashed)
        at = bisect.bisect_left(digests, digest)
        if at == len(digests) or digests[at] != digest:
            return False
        del digests[at]
        await _rewrite(connection, unused)
        return True

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
