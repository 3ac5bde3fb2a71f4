"""The collector's SQLite store: submissions and every manifest version seen, one writer thread.

Durability: the database is in WAL mode with ``synchronous=FULL``, so each COMMIT fsyncs the
write-ahead log before it returns; a submission is acknowledged only after the COMMIT that holds it
has returned, so an acknowledged submission survives the process being killed and the machine
losing power. (``synchronous=NORMAL`` with WAL would survive a killed process but could lose the
last commits on power loss; it is not used.)

Concurrency: SQLite allows one writer at a time. Rather than a connection per request fighting over
the write lock with ``busy_timeout``, one dedicated thread owns the write connection and serves a
queue: it takes every job waiting (up to `max_batch`), runs them in one transaction and commits once
("group commit"), then wakes each waiting request on its event loop. Under load the fsync is shared
by all the submissions that arrived while the previous commit was running. benchmarks/collector.py
measures both ways.

No history of the commits. The write-ahead log keeps every committed page image in commit order
until a checkpoint copies them into the database file, and a plain checkpoint leaves old frames in
the `-wal` file to be overwritten later: anyone holding the live database with its `-wal` could
read, commit by commit, which invitation code was marked used beside which new submission (or,
with blind invitations, which code was traded when). So after every commit that spent a code,
traded one for a blind signature or redeemed a blind token, the writer checkpoints with TRUNCATE
(the log is emptied: the file is cut to zero bytes) before it takes the next batch, and
`secure_delete` overwrites freed content with zeros. Such a commit is made without SQLite's own
flushes and the writer flushes the log once (`unflushed`: the log's new header and the frames
together, where SQLite flushes the header on its own first). It answers the batch's requests
then, before the checkpoint: the commit is durable in the log, and the log holds the same frames
until the checkpoint either way, while the requests that arrive meanwhile make the next batch
larger (benchmarks/collector.py). Commits without a code keep the log (a submission's arrival
order links it to nothing) and SQLite's own flushes.
A checkpoint cannot empty the log while a reader (an export, a health check) still
reads an older snapshot; it then gives up at once rather than wait, and every later commit tries
again until the log is empty. A copy of the `-wal` taken continuously (a backup or file-sync
agent reading it as it is written) sees every commit before it is emptied: such an agent must
not read the live database (docs: the threat model). In the database file itself an invitation's
`used` flag is overwritten in place, in a table ordered by the code's hash, with no row id and no
time: nothing there orders the spent codes (invitations/blindstore.py: the same for trades). A
spend costs the same with a thousand or a million codes issued: one row updated in place.

What is stored per submission: survey id, manifest version, the respondent token, the answers as
the page sent them (validated, unanswered ones left out) and `submitted_at`, UTC truncated to the
minute.
Nothing about the request (no address, no user agent, no headers) ever reaches this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .completion import record as completion
from .invitations import blindstore
from .storebase import (
    BAD_CODE,
    CONFLICT,
    DUPLICATE,
    FULL,
    MIX,
    NO_CODE,
    SIGN,
    STORED,
    USED_CODE,
    StoreError,
    StoreUnavailable,
    SubmissionStore,
    canonical_json,
    code_hash,
    is_postgres,
    minute_now,
    shown,
)

__all__ = [  # the names tests and tools import from here (they live in storebase)
    "BAD_CODE", "CONFLICT", "DUPLICATE", "FULL", "NO_CODE", "STORED", "USED_CODE", "Store",
    "StoreError", "StoreUnavailable", "SubmissionStore", "canonical_json", "code_hash", "connect",
    "is_postgres", "minute_now", "shown",
]


#: PRAGMA user_version of the schema this code writes (2: the invitations table; 3: a blind
#: survey's codes each have a `blind_codes` row from the start, overwritten in place by a trade).
SCHEMA_VERSION = 3
SCHEMA = """
CREATE TABLE IF NOT EXISTS manifests (
    survey     TEXT NOT NULL,
    version    TEXT NOT NULL,
    manifest   TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    PRIMARY KEY (survey, version)
);
CREATE TABLE IF NOT EXISTS submissions (
    id           INTEGER PRIMARY KEY,
    survey       TEXT NOT NULL,
    version      TEXT NOT NULL,
    respondent   TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    answers      TEXT NOT NULL,
    UNIQUE (survey, respondent)
);
CREATE TABLE IF NOT EXISTS invitations (
    survey     TEXT NOT NULL,
    code_hash  TEXT NOT NULL,
    used       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (survey, code_hash)
) WITHOUT ROWID;
"""
#: Submissions waiting for the writer beyond which new ones are refused (503, retry later).
MAX_QUEUE = 20_000
#: Pages in the write-ahead log beyond which a commit copies them into the database file
#: (SQLite's default, turned off for each spending commit and back on after it: `unflushed`).
AUTOCHECKPOINT = 1000
#: The writer connection's page cache, KiB (SQLite's default is 2,000).
WRITER_CACHE_KIB = 65_536


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); StoreError if unusable."""
    if path.is_dir():
        raise StoreError(f"{path}: is a folder, not a database file")
    if not create and not path.is_file():
        raise StoreError(f"{path}: no such database file")
    if create and not path.parent.is_dir():
        raise StoreError(f"{path}: the folder {path.parent} does not exist")
    try:
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                     timeout=10.0)
        connection.execute("PRAGMA busy_timeout = 10000")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as error:
        raise StoreError(f"{path}: cannot open the database: {error}") from error
    if version > SCHEMA_VERSION:
        connection.close()
        raise StoreError(f"{path}: written by a newer rrsite (schema {version}); upgrade rrsite")
    if not create:
        tables = {row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"manifests", "submissions"} <= tables:
            connection.close()
            raise StoreError(f"{path}: not an rrsite collector database")
    return connection


@dataclass
class _Job:
    """One unit of work for the writer thread and the future of the request waiting for it."""

    run: Callable[[sqlite3.Connection], Any]
    loop: asyncio.AbstractEventLoop | None
    future: asyncio.Future[Any] | None
    result: Any = None
    error: BaseException | None = None
    #: The job may spend an invitation code, trade one or redeem a token (it carries one).
    spends: bool = False
    #: The job may redeem a blind token (the pool of tokens is written anew before the commit).
    redeems: bool = False
    done: threading.Event = field(default_factory=threading.Event)



def _submission_writer(survey: str, version: str, respondent: str, answers: dict[str, Any],
                       cap: int | None = None, counts: dict[str, int] | None = None,
                       invitation: str | None = None,
                       token: str | None = None) -> Callable[[sqlite3.Connection], str]:
    """The writer-thread job storing one submission.

    STORED, DUPLICATE or CONFLICT; FULL when a `cap` is set and the survey already holds `cap`
    submissions (`counts` caches each capped survey's total: exact, the writer is the only one);
    NO_CODE, BAD_CODE or USED_CODE when the survey has invitation codes (or a code is sent) and
    the code is missing, was never issued, or was used. A resend of a stored submission is
    recognised before any of these, so retrying stays safe. The code's use is marked in the
    same transaction as the insert, in a table that holds nothing joining the two.
    `token`: the SHA-256 of a verified blind token (blindstore.check_sqlite), instead of a code.
    """
    answers_text = canonical_json(answers)

    def existing(connection: sqlite3.Connection) -> str | None:
        row = connection.execute(
            "SELECT version, answers FROM submissions WHERE survey = ? AND respondent = ?",
            (survey, respondent)).fetchone()
        if row is None:
            return None
        return DUPLICATE if row == (version, answers_text) else CONFLICT

    def write(connection: sqlite3.Connection) -> str:
        invited = invitation is not None or token is not None or connection.execute(
            "SELECT 1 FROM invitations WHERE survey = ? LIMIT 1", (survey,)).fetchone()
        if invited or cap is not None:
            previous = existing(connection)
            if previous is not None:
                return previous
        if cap is not None and counts is not None:
            if survey not in counts:
                counts[survey] = connection.execute(
                    "SELECT count(*) FROM submissions WHERE survey = ?", (survey,)).fetchone()[0]
            if counts[survey] >= cap:
                return FULL
        if invited:  # a blind token instead of a code
            refused = blindstore.check_sqlite(connection, survey, invitation, token)
            if refused is not None:
                return refused
        if invited and token is None:
            if invitation is None:
                return NO_CODE
            hashed = code_hash(invitation)
            cursor = connection.execute(
                "UPDATE invitations SET used = 1 WHERE survey = ? AND code_hash = ? AND used = 0",
                (survey, hashed))
            if not cursor.rowcount:
                known = connection.execute(
                    "SELECT 1 FROM invitations WHERE survey = ? AND code_hash = ?",
                    (survey, hashed)).fetchone()
                return USED_CODE if known else BAD_CODE
        cursor = connection.execute(
            "INSERT INTO submissions (survey, version, respondent, submitted_at, answers) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (survey, respondent) DO NOTHING",
            (survey, version, respondent, minute_now(), answers_text))
        if cursor.rowcount:
            if counts is not None and survey in counts:
                counts[survey] += 1
            return STORED
        return existing(connection) or CONFLICT

    return write

class Store:
    """The SQLite store behind `rrsite serve`; `start()` its writer, `await submit(...)`."""

    def __init__(self, path: Path, *, max_batch: int = 512,
                 caps: dict[str, int] | None = None, mix: int = MIX) -> None:
        self.path = path
        self.max_batch = max_batch
        #: Redeemed blind tokens kept in the pool when some settle (blindstore.reorder_tokens).
        self.mix = mix
        #: Per-survey limits on the number of submissions (new respondents get FULL beyond).
        self.caps = dict(caps or {})
        self._counts: dict[str, int] = {}  # the writer's running totals of capped surveys
        self._connection = connect(path, create=True)
        try:
            mode = self._connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise StoreError(f"{path}: SQLite cannot use WAL mode here (got {mode!r})")
            self._connection.execute("PRAGMA synchronous = FULL")
            self._connection.execute("PRAGMA secure_delete = ON")
            # a spend reads one page of the invitations (a million codes: 90 MB) at random:
            # keep them in the writer's cache rather than read each one again
            self._connection.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
            self._connection.executescript(
                f"BEGIN IMMEDIATE; {SCHEMA} {blindstore.SQLITE_SCHEMA} "
                f"{completion.SQLITE_SCHEMA}")  # [the completion record of panels]
            previous = self._connection.execute("PRAGMA user_version").fetchone()[0]
            if previous == 2:  # schema 2's blind_codes: a row per trade, in trade order
                blindstore.migrate_sqlite(self._connection)
            self._connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self._connection.execute("COMMIT")
        except sqlite3.Error as error:
            if self._connection.in_transaction:
                self._connection.execute("ROLLBACK")
            self._connection.close()
            raise StoreError(f"{path}: cannot set up the database: {error}") from error
        # a previous run killed mid-way may have left frames
        self._log_holds_codes = not self.empty_log(self._connection)
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.last_error: str | None = None
        self.commits = 0
        self.committed_jobs = 0

    # -- manifests ----------------------------------------------------------------------------

    @staticmethod
    def _register(connection: sqlite3.Connection, manifest: dict[str, Any]) -> bool:
        """Record a manifest version; True if it was new. The newest prose replaces the old."""
        text = canonical_json(manifest)
        cursor = connection.execute(
            "INSERT INTO manifests (survey, version, manifest, first_seen) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (survey, version) DO NOTHING",
            (manifest["id"], manifest["version"], text, minute_now()))
        if cursor.rowcount:
            return True
        connection.execute(
            "UPDATE manifests SET manifest = ? WHERE survey = ? AND version = ? AND manifest != ?",
            (text, manifest["id"], manifest["version"], text))
        return False

    def register_manifests(self, manifests: Iterable[dict[str, Any]]) -> int:
        """Record manifests before the writer starts (at start-up); the number that were new."""
        if self._thread is not None:
            raise RuntimeError("register_manifests runs before start(); use register()")
        new = 0
        try:
            self._connection.execute("BEGIN IMMEDIATE")
            for manifest in manifests:
                new += self._register(self._connection, manifest)
            self._connection.execute("COMMIT")
        except sqlite3.Error as error:
            self._connection.execute("ROLLBACK")
            raise StoreError(f"{self.path}: cannot record the manifests: {error}") from error
        return new

    def add_invitations(self, survey: str, codes: Iterable[str]) -> int:
        """Record invitation codes (their hashes) for a survey, in one transaction; how many.

        From then on the survey accepts only submissions carrying an unused code. The hashes are
        written in hash order (with, on a blind survey, their `blind_codes` placeholders).
        """
        try:
            self._connection.execute("BEGIN IMMEDIATE")
            hashes = sorted({code_hash(code) for code in codes})
            added = 0
            for hashed in hashes:
                added += self._connection.execute(
                    "INSERT INTO invitations (survey, code_hash) VALUES (?, ?) "
                    "ON CONFLICT DO NOTHING", (survey, hashed)).rowcount
            blindstore.untraded_rows(self._connection, survey, hashes)
            self._connection.execute("COMMIT")
        except sqlite3.Error as error:
            self._connection.execute("ROLLBACK")
            raise StoreError(f"{self.path}: cannot record the invitation codes: {error}") from error
        return added

    def advice(self) -> list[str]:
        """Nothing to warn of: the SQLite store's settings are its own (see the docstring)."""
        return []

    def stored_manifests(self) -> list[dict[str, Any]]:
        """Every manifest version recorded, in the order first seen."""
        with _reader(self.path) as connection:
            return [json.loads(text) for (text,) in connection.execute(
                "SELECT manifest FROM manifests ORDER BY rowid")]

    async def register(self, manifest: dict[str, Any]) -> bool:
        """Record a manifest version seen while running (through the writer)."""
        return bool(await self._submit_job(lambda c: self._register(c, manifest)))

    # -- submissions --------------------------------------------------------------------------

    async def submit(self, survey: str, version: str, respondent: str,
                     answers: dict[str, Any], invitation: str | None = None,
                     token: str | None = None) -> str:
        """Store one validated submission; its outcome (`_submission_writer`) once durable.

        Raises StoreUnavailable if the write could not be committed.
        """
        write = _submission_writer(survey, version, respondent, answers,
                                   self.caps.get(survey), self._counts, invitation, token)
        spends = invitation is not None or token is not None
        return str(await self._submit_job(write, spends=spends, redeems=token is not None))

    def submit_sync(self, survey: str, version: str, respondent: str,
                    answers: dict[str, Any], invitation: str | None = None) -> str:
        """`submit` for a caller without an event loop (benchmarks, tools); blocks until durable."""
        write = _submission_writer(survey, version, respondent, answers,
                                   self.caps.get(survey), self._counts, invitation)
        job = _Job(run=write, loop=None, future=None, spends=invitation is not None)
        self._put(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        return str(job.result)

    def _put(self, job: _Job) -> None:
        if self._thread is None or not self._thread.is_alive():
            raise StoreUnavailable("the store's writer is not running")
        if self._queue.qsize() > MAX_QUEUE:
            raise StoreUnavailable("too many submissions waiting; retry in a moment")
        self._queue.put(job)

    async def exchange(self, survey: str, code_hash: str, blinded_hash: str) -> str:
        """Spend a code for a blinded message (`blindstore.exchange`), through the writer."""
        return str(await self._submit_job(blindstore.exchange_job(survey, code_hash,
                                                                  blinded_hash), spends=True))

    async def record_completion(self, survey: str, digest: bytes) -> str:
        """Add a digest to the survey's completion record (its own commit, the log emptied after).

        STORED, or DUPLICATE when it is there already; StoreUnavailable if it could not commit.
        """
        return str(await self._submit_job(completion.sqlite_job(survey, digest), spends=True))

    def mark_blind(self, survey: str, key_id: str) -> None:
        """Record a blind survey (`rrsite invite --blind`)."""
        blindstore.mark_blind_sqlite(self.path, survey, key_id)

    async def survey_keys(self) -> dict[str, str]:
        """{survey: key id} of every blind survey, read now (in a worker thread)."""
        try:
            return await asyncio.to_thread(blindstore.sqlite_keys, self.path)
        except sqlite3.Error as error:
            raise StoreUnavailable(f"{type(error).__name__}: {error}") from error

    def survey_keys_now(self) -> dict[str, str]:
        """{survey: key id} of every blind survey (start-up, `rrsite invite`)."""
        return blindstore.sqlite_keys(self.path)

    async def _submit_job(self, run: Callable[[sqlite3.Connection], Any], *,
                          spends: bool = False, redeems: bool = False) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._put(_Job(run=run, loop=loop, future=future, spends=spends, redeems=redeems))
        return await future

    # -- the writer ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the writer thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._writer, name="rrsite-store-writer",
                                            daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Finish every queued job, stop the writer and close the database."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=30)
            self._thread = None
        self._connection.close()

    def _writer(self) -> None:
        connection = self._connection
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            batch = [first]
            while len(batch) < self.max_batch:
                try:
                    job = self._queue.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    stopping = True
                    break
                batch.append(job)
            self._run_batch(connection, batch)

    def _run_batch(self, connection: sqlite3.Connection, batch: list[_Job]) -> None:
        # a batch that may spend commits without SQLite's own flushes, and its log is flushed
        # here before any of its requests is answered (`unflushed`), emptied after
        may_spend = self._log_holds_codes or any(job.spends for job in batch)
        spent = False
        try:
            with unflushed(connection, may_spend):
                connection.execute("BEGIN IMMEDIATE")
                for job in batch:
                    connection.execute("SAVEPOINT job")
                    try:
                        job.result = job.run(connection)
                    except sqlite3.Error:
                        raise
                    except Exception as error:  # a bug in one job must not fail the others
                        connection.execute("ROLLBACK TO job")
                        job.error = error
                    connection.execute("RELEASE job")
                if any(job.redeems and job.result == STORED for job in batch):
                    blindstore.reorder_tokens(connection, self.mix)  # not in arrival order
                connection.execute("COMMIT")
            self.commits += 1
            self.committed_jobs += len(batch)
            self.last_error = None
            spent = self._log_holds_codes or any(
                job.spends and job.result in (STORED, SIGN) for job in batch)
            if may_spend and not self._flush_log():  # durable before it is answered
                self.last_error = "OSError: the write-ahead log could not be flushed"
                for job in batch:
                    job.error = StoreUnavailable("the database could not store it (the "
                                                 "write-ahead log could not be flushed)")
        except sqlite3.Error as error:
            self.last_error = f"{type(error).__name__}: {error}"
            try:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            for job in batch:
                job.error = StoreUnavailable(f"the database could not store it ({error})")
            self._counts.clear()  # the rolled-back inserts were counted: count again
        for job in batch:
            self._wake(job)
        if spent:  # before the next batch is taken (the module docstring)
            self._log_holds_codes = not self.empty_log(connection)

    def _flush_log(self) -> bool:
        """Flush the write-ahead log to the disk (fdatasync); False if that failed.

        After a commit made `unflushed`: its header and frames in one flush.
        """
        try:
            descriptor = os.open(f"{self.path}-wal", os.O_RDONLY)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        try:
            os.fdatasync(descriptor)
        except OSError:
            return False
        finally:
            os.close(descriptor)
        return True

    @property
    def log_holds_codes(self) -> bool:
        """Whether the last try to empty the log gave way (a reader on an older snapshot)."""
        return self._log_holds_codes

    @staticmethod
    def empty_log(connection: sqlite3.Connection) -> bool:
        """Checkpoint and truncate the write-ahead log, without waiting; True if it is empty.

        The commit is already durable in the log: a checkpoint that fails (a reader on an older
        snapshot, an I/O error) loses nothing and is tried again after the next commit.
        """
        try:
            connection.execute("PRAGMA busy_timeout = 0")
            try:
                busy, frames, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                connection.execute("PRAGMA busy_timeout = 10000")
        except sqlite3.Error:
            return False
        return not busy and frames == 0

    @staticmethod
    def _wake(job: _Job) -> None:
        job.done.set()
        if job.loop is None or job.future is None:
            return
        future = job.future

        def resolve() -> None:
            if future.done():  # the request was cancelled (client went away)
                return
            if job.error is not None:
                future.set_exception(job.error)
            else:
                future.set_result(job.result)

        try:
            job.loop.call_soon_threadsafe(resolve)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    async def open(self) -> None:
        """Start the writer (the interface `PgStore` shares: called in the app's lifespan)."""
        self.start()

    async def aclose(self) -> None:
        """Finish the queued jobs and close, off the event loop."""
        await asyncio.to_thread(self.close)

    # -- reading ------------------------------------------------------------------------------

    async def state(self) -> dict[str, Any]:
        """`health()` read in a worker thread, with `ok`; StoreUnavailable if unreadable."""
        try:
            state = await asyncio.to_thread(self.health)
        except sqlite3.Error as error:
            raise StoreUnavailable(f"{type(error).__name__}: {error}") from error
        state["ok"] = state["writer"] == "running" and state["journal_mode"] == "wal"
        return {"store": "sqlite", **state}

    def health(self) -> dict[str, Any]:
        """The store's state, read from the database (runs in a worker thread)."""
        with _reader(self.path) as connection:
            mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
            total = connection.execute("SELECT count(*) FROM submissions").fetchone()[0]
            per_survey = dict(connection.execute(
                "SELECT survey, count(*) FROM submissions GROUP BY survey").fetchall())
            versions: dict[str, list[str]] = {}
            for survey, version in connection.execute(
                    "SELECT survey, version FROM manifests ORDER BY rowid"):
                versions.setdefault(survey, []).append(version)
        writer_alive = self._thread is not None and self._thread.is_alive()
        return {
            "journal_mode": mode,
            "writer": "running" if writer_alive else "stopped",
            "waiting": self._queue.qsize(),
            "last_error": self.last_error,
            "submissions": total,
            "surveys": [
                {"id": survey, "versions": survey_versions,
                 "submissions": per_survey.get(survey, 0)}
                for survey, survey_versions in versions.items()
            ],
        }


@contextlib.contextmanager
def unflushed(connection: sqlite3.Connection, on: bool) -> Iterator[None]:
    """Commits inside without SQLite's own flushes of the log (when `on`); the caller flushes.

    After the log was emptied, a commit flushes the log's new header on its own and then its
    frames: two flushes before the commit returns. Committed with ``synchronous = OFF``
    instead, the header and the frames reach the disk in one flush, the caller's
    (`Store._flush_log`), before any request of the commit is answered and before the
    checkpoint copies anything into the database file (so no frame that is not on the disk is
    ever copied, which is what the header's own flush guards against): a commit lost before
    that flush was never acknowledged. No automatic checkpoint may run inside such a commit (it
    would copy frames not flushed yet), so it is turned off for it. (SQLite refuses to change
    ``synchronous`` inside a transaction: hence around it.)
    """
    if not on:
        yield
        return
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    connection.execute("PRAGMA synchronous = OFF")
    try:
        yield
    finally:
        if connection.in_transaction:  # a failed batch: its ROLLBACK comes first
            connection.execute("ROLLBACK")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT}")


class _reader:
    """A short-lived read connection (WAL readers never block the writer)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> sqlite3.Connection:
        self.connection = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
        return self.connection

    def __exit__(self, *exc: object) -> None:
        self.connection.close()
