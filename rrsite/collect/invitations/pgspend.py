"""Invitation codes, blind trades and blind tokens on PostgreSQL: spent in batches, through a pool.

Everything PostgreSQL writes carries the id of the transaction that wrote it (`xmin`), lands in
the table files in the order it was written (`ctid`, and so `pg_dump`), and leaves its older
version behind until a vacuum. A code marked spent in the submission's own transaction is
therefore joined to that submission by `xmin`, and a table of spent codes read in file order lists
them in spending order. Rewriting the whole set of unused codes at each spend (TRUNCATE, then the
set again) hides both, but costs a write of every unused code per spend and serialises every
spend behind one lock: 28 submissions a second with 200,000 codes issued.

Here a spend costs the same with a thousand or a million codes issued, and nothing PostgreSQL
keeps orders the spends finer than a pool of at least `MIX` of them:

- **Batches.** Every submission that carries a code or a token, and every trade of a code for a
  blind signature, is queued to this process's writer. A batch first takes the pool's lock; then
  it takes every job waiting (up to `MAX_BATCH`: the requests that arrived while another
  process's batch held the lock join it) and decides them in one transaction, committed once
  ("group commit"): the submissions of a batch share one `xmin` and are inserted ordered by
  their random respondent token, not by arrival. A request is answered only after the commit
  returned. The lock is held for six round trips to the database (`BEGIN_BATCH`, the read, the
  write, the pool out and back in, COMMIT), so batches of several processes follow each other.
- **The pool.** What was spent lives first in `spent_pool`: one row per spent code (with the
  hash of the blinded message it was traded for, if it was) and per redeemed token, of every
  survey. Each batch moves the pool into a temporary table of its connection (never written to
  the write-ahead log, emptied at commit) and `TRUNCATE`s it (new files; the old ones are emptied
  at commit, so no earlier version survives in the heap), all in its first round trip; it adds
  its own entries to the copy and writes the pool back ordered by hash, by COPY in binary
  (passed through rrsite unread: COPY into a table truncated in the same transaction makes no
  free-space map, where `INSERT ... SELECT` would make one, a second file to fsync). A batch
  that adds nothing rolls back, pool and all (committing it would leave the pool empty). Every
  row of the pool then carries the same `xmin`, the newest batch's, and its content is a set, in
  hash order. The table has fixed-width columns only (no TOAST table), so the rewrite makes one
  new file; under `wal_level = minimal` it is fsynced at commit, not logged. A batch costs the
  database a rewrite of at most `2 * MIX` rows per survey, whatever the number of codes issued.
- **Settling.** When the pool holds `2 * MIX` entries of one survey and kind, a uniformly random
  set of them (from the operating system's random source) moves to `spent`, an ordinary table with
  an index, so that `MIX` stay: the pool's cost stays bounded whatever the number of codes issued.
  What `spent` reveals: each settled row carries the `xmin` of the batch that settled it, so an
  entry is known to have been spent before that batch; a pool mix. While fewer than `2 * MIX`
  codes of a survey were spent, none is settled and nothing orders them at all (the linkage tests
  of tests/collect/test_unlinkability.py); beyond, the holder of the database pairs a submission
  with its code about once in `MIX` to `2 * MIX` tries (measured in tests/collect/test_pool_mix.py
  and stated in docs/explanation/threat-model.md).

PostgreSQL's write-ahead log would still record every rewrite of the pool unless the server runs
with `wal_level = minimal`, `max_wal_senders = 0` and `wal_skip_threshold = 0` (a table rewritten
in its own transaction is then fsynced instead of logged); `rrsite serve` warns otherwise, and
when the server logs statements (`pgstore.log_advice`).
"""

from __future__ import annotations

import asyncio
import io
import secrets
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..storebase import (
    BAD_CODE,
    BAD_TOKEN,
    BLIND_ONLY,
    CONFLICT,
    DUPLICATE,
    FULL,
    MIX,
    NOT_BLIND,
    SIGN,
    STORED,
    USED_CODE,
    USED_TOKEN,
    StoreUnavailable,
    minute_now,
)

#: Jobs decided in one transaction at most.
MAX_BATCH = 256
#: Kinds of entries: a spent (or traded) invitation code, a redeemed blind token.
CODE, TOKEN = b"c", b"k"
SCHEMA = """
CREATE TABLE IF NOT EXISTS spent_pool (
    survey   varchar(128) NOT NULL,
    kind     "char" NOT NULL,
    hash_hi  uuid NOT NULL,
    hash_lo  uuid NOT NULL,
    extra_hi uuid,
    extra_lo uuid
);
CREATE TABLE IF NOT EXISTS spent (
    survey text NOT NULL,
    kind   "char" NOT NULL,
    hash   bytea NOT NULL,
    extra  bytea,
    PRIMARY KEY (survey, kind, hash)
);
CREATE OR REPLACE VIEW spent_all (survey, kind, hash, extra) AS
    SELECT survey::text, kind, uuid_send(hash_hi) || uuid_send(hash_lo),
           uuid_send(extra_hi) || uuid_send(extra_lo) FROM spent_pool
    UNION ALL
    SELECT survey, kind, hash, extra FROM spent;
"""
#: The temporary copy of the pool each connection of the batch writer makes (pool `init`).
COPY_TABLE = ("CREATE TEMPORARY TABLE IF NOT EXISTS spent_pool_copy (LIKE spent_pool) "
              "ON COMMIT DELETE ROWS")
POOL_COLUMNS = ("survey", "kind", "hash_hi", "hash_lo", "extra_hi", "extra_lo")
#: Key of an entry: (survey, kind, 32-byte digest); its value: the traded blinded message's
#: digest, or None.
Key = tuple[str, bytes, bytes]


def _halves(digest: bytes | None) -> tuple[uuid.UUID | None, uuid.UUID | None]:
    if digest is None:
        return None, None
    return uuid.UUID(bytes=digest[:16]), uuid.UUID(bytes=digest[16:])


def _joined(hi: Any, lo: Any) -> bytes | None:
    return None if hi is None else bytes(hi.bytes) + bytes(lo.bytes)


def _record(key: Key, extra: bytes | None) -> tuple[Any, ...]:
    return (key[0], key[1], *_halves(key[2]), *_halves(extra))


def _key(row: Any) -> Key:
    return (row[0], bytes(row[1]), _joined(row[2], row[3]) or b"")


#: The first round trip of a batch (one simple query): the transaction, the pool's lock, the pool
#: moved aside into the connection's temporary copy, and the pool's files replaced by empty ones.
BEGIN_BATCH = ("BEGIN; LOCK TABLE spent_pool IN ACCESS EXCLUSIVE MODE; "
               "INSERT INTO spent_pool_copy SELECT * FROM spent_pool; TRUNCATE spent_pool")


async def rewrite_pool(connection: Any, added: dict[Key, bytes | None],
                       counts: dict[tuple[str, bytes], int], inserts: list[tuple[str, ...]],
                       mix: int = MIX) -> int:
    """Write the batch: its submissions, and the pool with `added`, settling what is due.

    The pool was moved aside (`BEGIN_BATCH`: `spent_pool_copy` holds it, `spent_pool` is empty).
    `counts`: the pool's entries per (survey, kind) before the batch. Under the pool's lock, in
    the batch's transaction (see the module docstring); the number of entries settled. The pool
    goes back by COPY (binary), passed through unread: COPY into a table truncated in the same
    transaction makes no free-space map, so the rewrite is one new file to fsync, not two.
    """
    columns = [list(column) for column in zip(*inserts, strict=True)] if inserts else [[]] * 5
    new = [list(column) for column in zip(*(_record(key, extra) for key, extra in added.items()),
                                          strict=True)] if added else [[]] * 6
    await connection.execute(
        "WITH stored AS (INSERT INTO submissions (survey, version, respondent, submitted_at, "
        "answers) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], "
        "$5::text[])) INSERT INTO spent_pool_copy "
        "SELECT * FROM unnest($6::varchar[], $7::\"char\"[], $8::uuid[], $9::uuid[], "
        "$10::uuid[], $11::uuid[])", *columns, *new)
    for key in added:
        counts[key[:2]] = counts.get(key[:2], 0) + 1
    settled: dict[Key, bytes | None] = {}
    for group, count in sorted(counts.items()):
        if count >= 2 * mix:  # rare: once every `mix` entries of a group
            entries = {}
            for row in await connection.fetch(
                    f"SELECT {', '.join(POOL_COLUMNS)} FROM spent_pool_copy "
                    "WHERE survey = $1 AND kind = $2", *group):
                entries[_key(row)] = _joined(row[4], row[5])
            for key in secrets.SystemRandom().sample(sorted(entries), len(entries) - mix):
                settled[key] = entries[key]
    if settled:
        gone = [_record(key, None)[:4] for key in settled]
        await connection.execute(
            "DELETE FROM spent_pool_copy WHERE (survey, kind, hash_hi, hash_lo) IN (SELECT * "
            "FROM unnest($1::varchar[], $2::\"char\"[], $3::uuid[], $4::uuid[]))",
            *(list(column) for column in zip(*gone, strict=True)))
    pool = bytearray()

    async def keep(chunk: bytes) -> None:
        pool.extend(chunk)

    await connection.copy_from_query(
        "SELECT * FROM spent_pool_copy ORDER BY survey, kind, hash_hi, hash_lo",
        output=keep, format="binary")
    await connection.copy_to_table("spent_pool", source=io.BytesIO(pool), format="binary")
    if settled:
        await connection.copy_records_to_table(
            "spent", columns=("survey", "kind", "hash", "extra"),
            records=[(key[0], key[1], key[2], settled[key]) for key in sorted(settled)])
    return len(settled)


async def place(connection: Any, entries: dict[Key, bytes | None], mix: int = MIX) -> None:
    """Put entries spent elsewhere (a migration) where a batch would put them.

    In the pool, settling a random part of each group as a batch does; under the pool's lock,
    in the caller's transaction.
    """
    await connection.execute(COPY_TABLE)
    await connection.execute("INSERT INTO spent_pool_copy SELECT * FROM spent_pool; "
                             "TRUNCATE spent_pool")
    counts: dict[tuple[str, bytes], int] = {}
    for survey, kind, count in await connection.fetch(
            "SELECT survey, kind, count(*) FROM spent_pool_copy GROUP BY survey, kind"):
        counts[(survey, bytes(kind))] = int(count)
    await rewrite_pool(connection, entries, counts, [], mix)


@dataclass
class Job:
    """A submission carrying a code or a token, or a trade; `outcome` once its batch committed."""

    survey: str
    future: asyncio.Future[str]
    #: A trade: the code's digest and the blinded message's digest.
    trade: tuple[bytes, bytes] | None = None
    version: str = ""
    respondent: str = ""
    answers: str = ""
    code: bytes | None = None
    token: bytes | None = None
    cap: int | None = None


@dataclass
class _Batch:
    """What one batch knows: read from the database, then changed by each job in turn."""

    #: The batch's keys found in the pool, then the batch's own additions.
    pool: dict[Key, bytes | None]
    settled: dict[Key, bytes | None]
    issued: set[tuple[str, bytes]]
    blind: set[str]
    existing: dict[tuple[str, str], tuple[str, str]]
    counts: dict[str, int]
    #: The pool's entries per (survey, kind) before the batch.
    groups: dict[tuple[str, bytes], int]
    inserts: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    added: dict[Key, bytes | None] = field(default_factory=dict)

    def spent(self, key: Key) -> tuple[bool, bytes | None]:
        """(spent already, the blinded digest it was traded for) for an entry's key."""
        if key in self.pool:
            return True, self.pool[key]
        if key in self.settled:
            return True, self.settled[key]
        return False, None

    def add(self, key: Key, extra: bytes | None = None) -> None:
        self.pool[key] = extra
        self.added[key] = extra


def decide(batch: _Batch, job: Job) -> str:
    """The outcome of one job against the batch's state, which it updates.

    The rules of `PgStore.submit` and `blindstore.exchange` for a code, a token or a trade.
    """
    if job.trade is not None:
        code, blinded = job.trade
        if job.survey not in batch.blind:
            return NOT_BLIND
        if (job.survey, code) not in batch.issued:
            return BAD_CODE
        spent, traded_for = batch.spent((job.survey, CODE, code))
        if spent:  # an identical resend is signed again; another blinded message is not
            return SIGN if traded_for == blinded else USED_CODE
        batch.add((job.survey, CODE, code), blinded)
        return SIGN
    previous = batch.existing.get((job.survey, job.respondent))
    if previous is not None:
        return DUPLICATE if previous == (job.version, job.answers) else CONFLICT
    if job.cap is not None and batch.counts.get(job.survey, 0) >= job.cap:
        return FULL
    blind = job.survey in batch.blind
    if job.token is not None:
        if not blind:
            return BAD_TOKEN
        key = (job.survey, TOKEN, job.token)
        if batch.spent(key)[0]:
            return USED_TOKEN
        batch.add(key)
    else:
        assert job.code is not None
        if blind:
            return BLIND_ONLY
        if (job.survey, job.code) not in batch.issued:
            return BAD_CODE
        key = (job.survey, CODE, job.code)
        if batch.spent(key)[0]:
            return USED_CODE
        batch.add(key)
    batch.existing[(job.survey, job.respondent)] = (job.version, job.answers)
    batch.inserts.append((job.survey, job.version, job.respondent, minute_now(), job.answers))
    if job.cap is not None:
        batch.counts[job.survey] = batch.counts.get(job.survey, 0) + 1
    return STORED


#: What a batch reads, in one query: each row tagged with what it is.
READ = """
WITH keys AS (SELECT * FROM unnest($1::text[], $2::"char"[], $3::bytea[]) AS k(survey, kind, hash)),
     people AS (SELECT * FROM unnest($4::text[], $5::text[]) AS p(survey, respondent))
SELECT 'pool', p.survey::text, p.kind, k.hash, uuid_send(p.extra_hi) || uuid_send(p.extra_lo),
       NULL, NULL, NULL
    FROM spent_pool_copy p JOIN keys k ON p.survey = k.survey AND p.kind = k.kind
    AND uuid_send(p.hash_hi) || uuid_send(p.hash_lo) = k.hash
UNION ALL
SELECT 'spent', s.survey, s.kind, s.hash, s.extra, NULL, NULL, NULL
    FROM spent s JOIN keys k USING (survey, kind, hash)
UNION ALL
SELECT 'issued', i.survey, NULL, k.hash, NULL, NULL, NULL, NULL
    FROM invitation_codes i JOIN keys k ON k.kind = 'c' AND i.survey = k.survey
    AND i.code_hash = encode(k.hash, 'hex')
UNION ALL
SELECT 'existing', s.survey, NULL, NULL, NULL, s.respondent, s.version, s.answers
    FROM submissions s JOIN people p USING (survey, respondent)
UNION ALL
SELECT 'blind', survey, NULL, NULL, NULL, NULL, NULL, NULL FROM blind_surveys
    WHERE survey = ANY($6)
UNION ALL
SELECT 'group', survey::text, kind, NULL, NULL, NULL, NULL, count(*)::text
    FROM spent_pool_copy GROUP BY survey, kind
"""


async def _load(connection: Any, jobs: list[Job]) -> _Batch:
    """Read what the batch's jobs need, under the pool's lock (`BEGIN_BATCH`, sent first)."""
    counts = {}
    for survey in sorted({job.survey for job in jobs if job.cap is not None}):
        # the per-request path counts under the same lock
        await connection.execute("SELECT pg_advisory_xact_lock(hashtext($1))", survey)
        counts[survey] = int(await connection.fetchval(
            "SELECT count(*) FROM submissions WHERE survey = $1", survey))
    keys: list[Key] = []
    for job in jobs:
        code = job.trade[0] if job.trade is not None else job.code
        if code is not None:
            keys.append((job.survey, CODE, code))
        if job.token is not None:
            keys.append((job.survey, TOKEN, job.token))
    people = [(job.survey, job.respondent) for job in jobs if job.trade is None]
    batch = _Batch(pool={}, settled={}, issued=set(), blind=set(), existing={}, counts=counts,
                   groups={})
    for tag, survey, kind, digest, extra, respondent, version, text in await connection.fetch(
            READ, [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys],
            [p[0] for p in people], [p[1] for p in people], sorted({j.survey for j in jobs})):
        if tag in ("pool", "spent"):
            key = (survey, bytes(kind), bytes(digest))
            (batch.pool if tag == "pool" else batch.settled)[key] = (
                None if extra is None else bytes(extra))
        elif tag == "issued":
            batch.issued.add((survey, bytes(digest)))
        elif tag == "existing":
            batch.existing[(survey, respondent)] = (version, text)
        elif tag == "blind":
            batch.blind.add(survey)
        else:
            batch.groups[(survey, bytes(kind))] = int(text)
    return batch


async def run_batch(connection: Any, jobs: list[Job], mix: int = MIX) -> tuple[list[str], bool]:
    """Decide `jobs` in arrival order and write the result: (the outcomes, anything to commit).

    In the transaction `BEGIN_BATCH` opened. A batch that adds nothing (every job refused, or a
    resend) leaves the database as it was: its transaction is rolled back, pool and all.
    """
    batch = await _load(connection, jobs)
    outcomes = [decide(batch, job) for job in jobs]
    if batch.added:  # every stored submission added an entry; inserted by respondent token
        await rewrite_pool(connection, batch.added, batch.groups,
                           sorted(batch.inserts, key=lambda r: (r[0], r[2])), mix)
    return outcomes, bool(batch.added)


class SpendWriter:
    """The process's writer of invited submissions and trades: one batch at a time.

    `acquire()` gives a pooled connection (an async context manager); `unavailable` are the
    errors meaning "the database cannot be used now" (answered 503), `failed(error)` says why.
    """

    def __init__(self, acquire: Callable[[], Any], unavailable: tuple[type[BaseException], ...],
                 failed: Callable[[BaseException], str], *, mix: int = MIX,
                 max_batch: int = MAX_BATCH) -> None:
        self.acquire = acquire
        self.unavailable = unavailable
        self.failed = failed
        self.mix = mix
        self.max_batch = max_batch
        self.commits = 0
        self.committed_jobs = 0
        self._waiting: list[Job] = []
        self._task: asyncio.Task[None] | None = None

    async def run(self, job: Job) -> str:
        """Queue a job; its outcome once the batch holding it committed.

        StoreUnavailable if the database could not take it.
        """
        self._waiting.append(job)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())
        return await job.future

    async def close(self) -> None:
        """Let the batches queued finish."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _drain(self) -> None:
        while self._waiting:
            await self._commit()

    def _take(self) -> list[Job]:
        jobs, self._waiting = self._waiting[:self.max_batch], self._waiting[self.max_batch:]
        return jobs

    async def _commit(self) -> None:
        """One batch: the jobs waiting once the pool's lock is held (`BEGIN_BATCH`).

        Taken then rather than before: the requests that arrive while this process waits for
        the lock (another process's batch holds it) join this batch instead of the next.
        """
        jobs: list[Job] = []
        try:
            async with self.acquire() as connection:
                try:
                    await connection.execute(BEGIN_BATCH)
                    jobs = self._take()
                    outcomes = await _decide_and_write(connection, jobs, self.mix)
                except BaseException:
                    await _roll_back(connection)
                    raise
        except self.unavailable as error:
            failure: BaseException = StoreUnavailable(
                f"the database could not store it ({self.failed(error)})")
            failure.__cause__ = error
            _settle_futures(jobs or self._take(), error=failure)
            return
        except Exception as error:  # a bug: every job of the batch answers it (500)
            _settle_futures(jobs or self._take(), error=error)
            return
        self.commits += 1
        self.committed_jobs += len(jobs)
        _settle_futures(jobs, outcomes=outcomes)


async def _decide_and_write(connection: Any, jobs: list[Job], mix: int) -> list[str]:
    """Decide and write one batch in the transaction `BEGIN_BATCH` opened; COMMIT or ROLLBACK.

    Six round trips to the database in all, each a wait for this process while the pool's lock
    is held: `BEGIN_BATCH` (one simple query: begin, lock, move the pool aside), the read, the
    write (the submissions and the additions), the pool back (COPY out and in), COMMIT. The
    plain way (BEGIN, LOCK, the read, the write, TRUNCATE, COPY out and in, COMMIT) took eight.
    """
    outcomes, changed = await run_batch(connection, jobs, mix)
    await connection.execute("COMMIT" if changed else "ROLLBACK")
    return outcomes


async def _roll_back(connection: Any) -> None:
    """End a failed batch's transaction, if the connection still has one (else nothing to do)."""
    if not connection.is_closed() and connection.is_in_transaction():
        try:
            await connection.execute("ROLLBACK")
        except Exception:  # the connection is broken: the pool discards it
            pass


def _settle_futures(jobs: Iterable[Job], *, outcomes: list[str] | None = None,
                    error: BaseException | None = None) -> None:
    for index, job in enumerate(jobs):
        if job.future.done():  # the request went away
            continue
        if error is not None:
            job.future.set_exception(error)
        else:
            assert outcomes is not None
            job.future.set_result(outcomes[index])
