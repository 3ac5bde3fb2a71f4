"""The collector's PostgreSQL store: the same interface and semantics as the SQLite `Store`.

For a survey that outgrows one process: several `rrsite serve --db postgresql://...` processes (or
machines) share one database. Every decision is the database's, never one process's memory:
the respondent's uniqueness is `UNIQUE (survey, respondent)`, a survey's cap is counted under a
transaction-level advisory lock per survey, and submissions that carry an invitation code are
serialised by the lock that spending a code takes (below), so an identical resend, one token with
two codes, or one code with two tokens resolve the same way on every process.

Invitation codes without a trail. `invitation_codes` holds the hash of every code issued, written
once by `rrsite invite` in hash order. A submission that carries a code or a blind token, and a
trade of a code for a blind signature, is decided by this process's batch writer, through a pool
that every spending batch rewrites whole (invitations/pgspend.py: what it hides and what it
reveals). A spend costs the same with a thousand or a million codes issued.

A submission is answered 201 only after its transaction committed (PostgreSQL's default
`synchronous_commit = on`: the commit is flushed to its WAL). When the database cannot be reached,
`submit` raises StoreUnavailable (503 + Retry-After); the connection pool (asyncpg) opens new
connections by itself once it is back, so no restart is needed.

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

from .completion import record as completion
from .invitations import blindstore, pgspend
from .storebase import (
    CONFLICT,
    DUPLICATE,
    FULL,
    MIX,
    NO_CODE,
    STORED,
    StoreError,
    StoreUnavailable,
    canonical_json,
    code_hash,
    minute_now,
    shown,
)

#: 1: `invitations` with a `used` flag; 2: `invitation_codes` and `unused_codes`; 3: spent codes
#: and tokens in the pool (`spent_pool`) and `spent` (invitations/pgspend.py).
SCHEMA_VERSION = 3
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
CREATE TABLE IF NOT EXISTS invited_surveys (survey text PRIMARY KEY);
""" + pgspend.SCHEMA
#: The settings under which PostgreSQL fsyncs a table rewritten in one transaction instead of
#: copying it into its write-ahead log (the accepted spellings of each value).
MINIMAL_WAL = {"wal_level": ("minimal",), "max_wal_senders": ("0",),
               "wal_skip_threshold": ("0", "0kb")}
#: Server settings read to tell whether PostgreSQL writes statements or their durations to its
#: log (`log_advice`).
LOG_SETTINGS = ["log_statement", "log_min_duration_statement", "log_min_duration_sample",
                "log_statement_sample_rate", "log_transaction_sample_rate", "log_duration",
                "shared_preload_libraries", "session_preload_libraries",
                "local_preload_libraries"]
#: Bytes of a SHA-256 digest (schema 2's `unused_codes.hashes` held them end to end).
DIGEST = 32
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


def log_advice(settings: dict[str, str]) -> list[str]:
    """The start-up warning when PostgreSQL logs statements or their timings; [] if it does not.

    `settings`: name -> value as pg_settings shows it.

    A statement logged with its parameters puts a submission's answers, and its invitation code or
    blind token, in the log, one line after another in arrival order: whoever reads the log pairs
    every code with its answers, whatever the tables hold.
    """
    def number(name: str) -> float:
        try:
            return float(settings.get(name, "-1"))
        except ValueError:
            return -1.0

    found = []
    statement = settings.get("log_statement", "none").lower()
    if statement in ("mod", "all"):
        found.append(f"log_statement = {statement}")
    for name in ("log_min_duration_statement", "log_min_duration_sample"):
        if number(name) >= 0 and (name == "log_min_duration_statement"
                                  or number("log_statement_sample_rate") > 0):
            found.append(f"{name} = {settings[name]}")
    if number("log_transaction_sample_rate") > 0:
        found.append(f"log_transaction_sample_rate = {settings['log_transaction_sample_rate']}")
    if settings.get("log_duration", "off").lower() == "on":
        found.append("log_duration = on")
    libraries = {library.strip().strip('"') for name in LOG_SETTINGS if name.endswith("libraries")
                 for library in settings.get(name, "").split(",")}
    if "auto_explain" in libraries and number("auto_explain.log_min_duration") >= 0:
        found.append("auto_explain (auto_explain.log_min_duration = "
                     f"{settings['auto_explain.log_min_duration']})")
    if "pg_stat_statements" in libraries:
        found.append("pg_stat_statements (loaded)")
    if not found:
        return []
    return [f"PostgreSQL logs statements or their timings ({'; '.join(found)}): its log then "
            "holds each submission (its answers, and its invitation code or token) or its "
            "timing, in arrival order; turn these off for this database, e.g. ALTER DATABASE "
            "... SET log_statement = 'none' (docs: the threat model of invitation codes)"]


def run_outside_loop(work: Any) -> Any:
    """`asyncio.run(work)` in a thread of its own.

    The caller may be inside a running event loop (the server's, or a test's browser driver).
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


async def _connect(dsn: str) -> asyncpg.Connection:
    return await asyncpg.connect(dsn, timeout=10)


async def _prepare_connection(connection: asyncpg.Connection) -> None:
    """Each pooled connection's temporary copy of the pool (pgspend.COPY_TABLE)."""
    await connection.execute(pgspend.COPY_TABLE)


async def setup_schema(connection: asyncpg.Connection, dsn: str) -> None:
    """Create the schema if missing, record its version; StoreError if a newer rrsite wrote it."""
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", SCHEMA_LOCK)
        await connection.execute(SCHEMA)
        await blindstore.setup_pg(connection)
        await completion.setup_pg(connection)  # [the completion record of panels]
        version = await connection.fetchval("SELECT max(version) FROM rrsite_schema")
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(f"{shown(dsn)}: written by a newer rrsite (schema {version}); "
                             "upgrade rrsite")
        if version in (1, 2):
            await _migrate(connection, version)
        if version in (1, 2, 3) and not await connection.fetchval(
                "SELECT EXISTS (SELECT 1 FROM invited_surveys)"):
            await connection.execute("INSERT INTO invited_surveys SELECT DISTINCT survey "
                                     "FROM invitation_codes ON CONFLICT DO NOTHING")
        if version != SCHEMA_VERSION:
            await connection.execute("DELETE FROM rrsite_schema")
            await connection.execute("INSERT INTO rrsite_schema (version) VALUES ($1)",
                                     SCHEMA_VERSION)


async def _migrate(connection: asyncpg.Connection, version: int) -> None:
    """Schema 1 or 2 moved into schema 3; the old tables dropped.

    What was spent (codes used, codes traded, tokens redeemed) is placed as a batch would place
    it (pgspend.place).
    """
    spent: dict[pgspend.Key, bytes | None] = {}
    if version == 1:
        await connection.execute(
            "INSERT INTO invitation_codes (survey, code_hash) SELECT survey, code_hash "
            "FROM invitations ORDER BY survey, code_hash ON CONFLICT DO NOTHING")
        for survey, hashed in await connection.fetch(
                "SELECT survey, code_hash FROM invitations WHERE used"):
            spent[(survey, pgspend.CODE, bytes.fromhex(hashed))] = None
        await connection.execute("DROP TABLE invitations")
    else:
        unused = {(survey, bytes(blob[i:i + DIGEST])) for survey, blob in await connection.fetch(
            "SELECT survey, hashes FROM unused_codes") for i in range(0, len(blob), DIGEST)}
        for survey, hashed in await connection.fetch(
                "SELECT survey, code_hash FROM invitation_codes"):
            if (survey, bytes.fromhex(hashed)) not in unused:
                spent[(survey, pgspend.CODE, bytes.fromhex(hashed))] = None
        if await connection.fetchval("SELECT to_regclass('blind_codes') IS NOT NULL"):
            for survey, hashed, blinded in await connection.fetch(
                    "SELECT survey, code_hash, blinded_hash FROM blind_codes"):
                spent[(survey, pgspend.CODE, bytes.fromhex(hashed))] = bytes.fromhex(blinded)
        if await connection.fetchval("SELECT to_regclass('blind_tokens') IS NOT NULL"):
            for survey, hashed in await connection.fetch(
                    "SELECT survey, token_hash FROM blind_tokens"):
                spent[(survey, pgspend.TOKEN, bytes.fromhex(hashed))] = None
        await connection.execute(
            "DROP TABLE IF EXISTS unused_codes, blind_codes, blind_tokens")
    await connection.execute("LOCK TABLE spent_pool IN ACCESS EXCLUSIVE MODE")
    await pgspend.place(connection, spent)


class PgStore:
    """The PostgreSQL store behind `rrsite serve --db postgresql://...`."""

    def __init__(self, dsn: str, *, caps: dict[str, int] | None = None,
                 pool_size: int = 10, mix: int = MIX) -> None:
        self.dsn = dsn
        self.path = shown(dsn)
        self.caps = dict(caps or {})
        self.pool_size = pool_size
        self.last_error: str | None = None
        self._pool: asyncpg.Pool | None = None
        #: Submissions with a code or a token, and trades: decided in batches (pgspend).
        self.writer = pgspend.SpendWriter(self.acquire, UNAVAILABLE, self._failed, mix=mix)
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
        """Warnings for the operator at start-up.

        WAL settings that keep the order of spends (on a database with invitation codes), and
        logs that write statements or their durations.
        """
        async def work() -> tuple[bool, dict[str, str]]:
            connection = await _connect(self.dsn)
            try:
                invited = bool(await connection.fetchval(
                    "SELECT EXISTS (SELECT 1 FROM invited_surveys)"))
                # [panels] a completion record is rewritten like the codes: the same settings
                invited = invited or bool(await connection.fetchval(
                    "SELECT EXISTS (SELECT 1 FROM manifests "
                    "WHERE manifest::jsonb -> 'panel' ->> 'record' = 'true')"))
                settings = {name: str(await connection.fetchval(f"SHOW {name}"))
                            for name in MINIMAL_WAL}
                for name, value in await connection.fetch(
                        "SELECT name, setting FROM pg_settings WHERE name = ANY($1)",
                        LOG_SETTINGS):
                    settings[name] = str(value)
                explain = await connection.fetchval(
                    "SELECT current_setting('auto_explain.log_min_duration', true)")
                if explain is not None:
                    settings["auto_explain.log_min_duration"] = str(explain)
                return invited, settings
            finally:
                await connection.close()

        invited, settings = self._run(work())
        advice = log_advice(settings)
        off = [f"{name} = {settings[name]}" for name, wanted in MINIMAL_WAL.items()
               if settings[name].lower() not in wanted]
        if invited and off:
            advice.insert(0, f"PostgreSQL runs with {', '.join(off)}: its write-ahead log keeps, "
                          "for a while, the order in which invitation codes were spent (and "
                          "panel completions recorded); set "
                          + ", ".join(f"{name} = {values[0]}"
                                      for name, values in MINIMAL_WAL.items())
                          + " (docs: the threat model of invitation codes)")
        return advice

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

        New hashes go in hash order (no trace of the order they were drawn in), by COPY (a
        million codes in seconds).
        """
        hashes = sorted({code_hash(code) for code in codes})

        async def work() -> int:
            connection = await _connect(self.dsn)
            try:
                async with connection.transaction():
                    await connection.execute(
                        "LOCK TABLE invitation_codes IN SHARE ROW EXCLUSIVE MODE")
                    known = {row[0] for row in await connection.fetch(
                        "SELECT code_hash FROM invitation_codes WHERE survey = $1", survey)}
                    new = [h for h in hashes if h not in known]
                    await connection.copy_records_to_table(
                        "invitation_codes", columns=("survey", "code_hash"),
                        records=[(survey, h) for h in new])
                    await connection.execute("INSERT INTO invited_surveys VALUES ($1) "
                                             "ON CONFLICT DO NOTHING", survey)
                # now, not during the survey: the planner learns the table's size (a batch
                # looks codes up by index, never by scanning them all) and the rows' hint bits
                # are set once, not by the first batches that read them
                await connection.execute("VACUUM (ANALYZE) invitation_codes")
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
                self.dsn, min_size=0, max_size=self.pool_size, timeout=5, command_timeout=15,
                init=_prepare_connection)

    async def aclose(self) -> None:
        """Close the pool, letting running transactions and queued batches finish."""
        await self.writer.close()
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

    def acquire(self) -> Any:
        """A pooled connection (an async context manager); StoreUnavailable if not open."""
        return self._require_pool().acquire(timeout=5)

    # -- submissions --------------------------------------------------------------------------

    async def submit(self, survey: str, version: str, respondent: str,
                     answers: dict[str, Any], invitation: str | None = None,
                     token: str | None = None) -> str:
        """Store one validated submission; its outcome once committed (as `Store.submit`).

        With a code or a token it goes to the batch writer (pgspend); without, in a transaction
        of its own. Raises StoreUnavailable if the database cannot be reached or the commit
        failed.
        """
        answers_text = canonical_json(answers)
        if invitation is not None or token is not None:
            future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            outcome = await self.writer.run(pgspend.Job(
                survey, future, version=version, respondent=respondent, answers=answers_text,
                code=None if invitation is None else bytes.fromhex(code_hash(invitation)),
                token=None if token is None else bytes.fromhex(token),
                cap=self.caps.get(survey)))
            self.last_error = None
            return outcome
        pool = self._require_pool()
        try:
            async with pool.acquire(timeout=5) as connection, connection.transaction():
                outcome = await self._write(connection, survey, version, respondent,
                                            answers_text)
        except UNAVAILABLE as error:
            raise StoreUnavailable(f"the database could not store it ({self._failed(error)})"
                                   ) from error
        self.last_error = None
        return outcome

    async def exchange(self, survey: str, hashed: str, blinded_hash: str) -> str:
        """Spend a code for a blinded message (blind invitations), through the batch writer.

        blindstore.SIGN, NOT_BLIND, BAD_CODE or USED_CODE.
        """
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        return await self.writer.run(pgspend.Job(
            survey, future, trade=(bytes.fromhex(hashed), bytes.fromhex(blinded_hash))))

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

    async def survey_keys(self) -> dict[str, str]:
        """{survey: key id} of every blind survey, read now."""
        try:
            async with self.acquire() as connection:
                return await blindstore.pg_keys(connection)
        except UNAVAILABLE as error:
            raise StoreUnavailable(f"the database could not be read ({self._failed(error)})"
                                   ) from error

    def survey_keys_now(self) -> dict[str, str]:
        """{survey: key id} of every blind survey (start-up, `rrsite invite`)."""
        async def work() -> dict[str, str]:
            connection = await _connect(self.dsn)
            try:
                return await blindstore.pg_keys(connection)
            finally:
                await connection.close()

        return dict(self._run(work()))

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
                     respondent: str, answers_text: str) -> str:
        """A submission without a code or token, in its own transaction."""
        async def existing() -> str | None:
            row = await connection.fetchrow(
                "SELECT version, answers FROM submissions WHERE survey = $1 AND respondent = $2",
                survey, respondent)
            if row is None:
                return None
            return DUPLICATE if (row[0], row[1]) == (version, answers_text) else CONFLICT

        cap = self.caps.get(survey)
        # a table of its own: asked of a million codes of another survey, a generic plan
        # would scan them all for each submission without a code
        invited = bool(await connection.fetchval(
            "SELECT EXISTS (SELECT 1 FROM invited_surveys WHERE survey = $1)", survey))
        if invited or cap is not None:
            previous = await existing()
            if previous is not None:
                return previous
        if invited:
            return NO_CODE
        if cap is not None:
            # one counter per survey across every process: serialise the capped inserts
            await connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", survey)
            count = await connection.fetchval(
                "SELECT count(*) FROM submissions WHERE survey = $1", survey)
            if count >= cap:
                return FULL
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
