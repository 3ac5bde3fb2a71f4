"""PostgreSQL's pool of spent codes (rrsite/collect/invitations/pgspend.py), with a small MIX.

What a copy of the database reveals is each settled code's settling batch and each submission's
batch: the pool mix of benchmarks/pool_mix.py. Here, on a real server, one respondent at a time
(each submission its own batch, the worst case): every spend stays spent wherever it lies, the
pool keeps between MIX and 2 * MIX - 1 entries in one transaction's rows, settled rows lie in hash
order, and the attacker of the model pairs as many as the model's closed form says (within four
standard deviations) and the generic attacks no more. Also: schemas 1 and 2 are moved into 3 with
what they had spent.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

import asyncpg

from rrsite.collect.pgstore import PgStore, run_outside_loop
from rrsite.collect.store import DUPLICATE, STORED, USED_CODE, Store, code_hash

MIX = 8
ISSUED, SPENT = 300, 200


def spend_one_at_a_time(store: PgStore, kit: Any, codes: list[str]) -> list[tuple[str, str]]:
    """(code, respondent) in the order stored, each in its own batch."""
    async def work() -> list[tuple[str, str]]:
        await store.open()
        try:
            done = []
            for code in codes:
                respondent = kit.token()
                outcome = await store.submit("honor", kit.VERSION, respondent,
                                             {"violated": "yes"}, code)
                assert outcome == STORED
                done.append((code, respondent))
            return done
        finally:
            await store.aclose()

    return list(run_outside_loop(work()))


async def _read(dsn: str) -> dict[str, Any]:
    connection = await asyncpg.connect(dsn)
    try:
        return {
            "pool": await connection.fetch(
                "SELECT xmin::text::bigint AS xmin, ctid::text AS ctid, "
                "uuid_send(hash_hi) || uuid_send(hash_lo) AS hash FROM spent_pool"),
            "settled": await connection.fetch(
                "SELECT xmin::text::bigint AS xmin, ctid::text AS ctid, hash FROM spent"),
            "submissions": await connection.fetch(
                "SELECT xmin::text::bigint AS xmin, respondent FROM submissions"),
            "all": await connection.fetch("SELECT kind, hash FROM spent_all"),
        }
    finally:
        await connection.close()


def ctid(text: str) -> tuple[int, int]:
    page, item = text.strip("()").split(",")
    return int(page), int(item)


def test_the_pool_keeps_every_spend_and_reveals_only_the_settlings(pg_db, kit):
    codes = [f"code-number-{i:06d}" for i in range(ISSUED)]
    opened = PgStore(pg_db, mix=MIX)
    opened.add_invitations("honor", codes)
    done = spend_one_at_a_time(PgStore(pg_db, mix=MIX), kit, codes[:SPENT])
    state = run_outside_loop(_read(pg_db))
    digest = {code: hashlib.sha256(code.encode()).digest() for code in codes}
    assert {bytes(row["hash"]) for row in state["all"]} == {digest[c] for c, _ in done}
    assert MIX <= len(state["pool"]) < 2 * MIX
    assert len({row["xmin"] for row in state["pool"]}) == 1  # one rewrite, one transaction
    pool_order = [bytes(row["hash"])
                  for row in sorted(state["pool"], key=lambda r: ctid(r["ctid"]))]
    assert pool_order == sorted(pool_order)
    by_settling: dict[int, list[Any]] = {}
    for row in state["settled"]:
        by_settling.setdefault(row["xmin"], []).append(row)
    expected_settlings = (SPENT - 2 * MIX) // MIX + 1
    assert len(by_settling) == expected_settlings
    for rows in by_settling.values():
        assert len(rows) == MIX or len(rows) == len(state["settled"]) - MIX * (
            expected_settlings - 1)
        placed = [bytes(row["hash"]) for row in sorted(rows, key=lambda r: ctid(r["ctid"]))]
        assert placed == sorted(placed)  # in hash order, not spending order

    # every spent code is refused wherever it lies; a resend is still a duplicate
    async def again() -> list[str]:
        store = PgStore(pg_db, mix=MIX)
        await store.open()
        try:
            outcomes = [await store.submit("honor", kit.VERSION, kit.token(),
                                           {"violated": "yes"}, code) for code, _ in done]
            outcomes.append(await store.submit("honor", kit.VERSION, done[0][1],
                                               {"violated": "yes"}, done[0][0]))
            return outcomes
        finally:
            await store.aclose()

    outcomes = run_outside_loop(again())
    assert outcomes[:-1] == [USED_CODE] * SPENT and outcomes[-1] == DUPLICATE
    # batches that stored nothing rolled back: the pool kept its rows and its one transaction
    after = run_outside_loop(_read(pg_db))
    assert sorted((row["xmin"], bytes(row["hash"])) for row in after["pool"]) == sorted(
        (row["xmin"], bytes(row["hash"])) for row in state["pool"])

    # the model's attacker: for each submission, a code of the first settling at or after it
    submitted = {row["respondent"]: row["xmin"] for row in state["submissions"]}
    settled_in = {bytes(row["hash"]): row["xmin"] for row in state["settled"]}
    settlings = sorted(by_settling)
    expected_right = 0.0
    for code, respondent in done:
        first = next((x for x in settlings if x >= submitted[respondent]), None)
        if first is not None and settled_in.get(digest[code]) == first:
            expected_right += 1 / len(by_settling[first])
        elif first is None and digest[code] not in settled_in:
            expected_right += 1 / len(state["pool"])
    closed_form = SPENT / (2 * MIX)  # benchmarks/pool_mix.py: each settling takes half
    spread = (SPENT * 0.25) ** 0.5 / MIX  # a Bernoulli(1/2) per submission, over MIX
    assert abs(expected_right - closed_form) <= 4 * spread, (expected_right, closed_form)


def test_schema_2_of_postgresql_is_moved_with_what_it_spent(pg_db, kit):
    """A database of the previous schema (unused codes as one sorted blob per survey, blind
    trades and tokens in tables of their own) opens as schema 3: the codes it spent stay spent,
    its unused codes still work, its old tables are gone."""
    codes = sorted(f"old-code-number-{i:04d}" for i in range(10))
    hashes = sorted(code_hash(code) for code in codes)
    unused = [h for h in hashes if h not in {code_hash(codes[0]), code_hash(codes[1])}]

    async def old_schema() -> None:
        connection = await asyncpg.connect(pg_db)
        try:
            await connection.execute("""
                CREATE TABLE rrsite_schema (version integer NOT NULL);
                INSERT INTO rrsite_schema VALUES (2);
                CREATE TABLE invitation_codes (survey text NOT NULL, code_hash text NOT NULL,
                    PRIMARY KEY (survey, code_hash));
                CREATE TABLE unused_codes (survey text PRIMARY KEY, hashes bytea NOT NULL);
                CREATE TABLE blind_codes (survey text NOT NULL, code_hash text NOT NULL,
                    blinded_hash text NOT NULL, PRIMARY KEY (survey, code_hash));
                CREATE TABLE blind_tokens (survey text NOT NULL, token_hash text NOT NULL,
                    PRIMARY KEY (survey, token_hash));""")
            await connection.executemany("INSERT INTO invitation_codes VALUES ('honor', $1)",
                                         [(h,) for h in hashes])
            await connection.execute("INSERT INTO unused_codes VALUES ('honor', $1)",
                                     b"".join(bytes.fromhex(h) for h in unused))
            await connection.execute("INSERT INTO blind_tokens VALUES ('other', $1)", "ab" * 32)
        finally:
            await connection.close()

    run_outside_loop(old_schema())
    store = PgStore(pg_db)

    async def use() -> list[str]:
        await store.open()
        try:
            return [await store.submit("honor", kit.VERSION, kit.token(), {"violated": "yes"},
                                       code) for code in codes[:3]]
        finally:
            await store.aclose()

    assert run_outside_loop(use()) == [USED_CODE, USED_CODE, STORED]

    async def tables() -> set[str]:
        connection = await asyncpg.connect(pg_db)
        try:
            return {row[0] for row in await connection.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        finally:
            await connection.close()

    assert not {"unused_codes", "blind_codes", "blind_tokens"} & run_outside_loop(tables())


def test_schema_2_of_sqlite_is_moved_with_what_it_traded(tmp_path):
    """SQLite's previous blind_codes held a row per trade, inserted in trade order; schema 3 holds
    one per code of a blind survey, written in hash order, and the traded codes are marked used."""
    db = tmp_path / "c.db"
    codes = [f"old-code-number-{i:04d}" for i in range(20)]
    with sqlite3.connect(db) as connection:
        connection.executescript("""
            CREATE TABLE manifests (survey TEXT NOT NULL, version TEXT NOT NULL,
                manifest TEXT NOT NULL, first_seen TEXT NOT NULL, PRIMARY KEY (survey, version));
            CREATE TABLE submissions (id INTEGER PRIMARY KEY, survey TEXT NOT NULL,
                version TEXT NOT NULL, respondent TEXT NOT NULL, submitted_at TEXT NOT NULL,
                answers TEXT NOT NULL, UNIQUE (survey, respondent));
            CREATE TABLE invitations (survey TEXT NOT NULL, code_hash TEXT NOT NULL,
                used INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (survey, code_hash)) WITHOUT ROWID;
            CREATE TABLE blind_surveys (survey TEXT PRIMARY KEY, key_id TEXT NOT NULL)
                WITHOUT ROWID;
            CREATE TABLE blind_codes (survey TEXT NOT NULL, code_hash TEXT NOT NULL,
                blinded_hash TEXT NOT NULL, PRIMARY KEY (survey, code_hash)) WITHOUT ROWID;
            CREATE TABLE blind_tokens (survey TEXT NOT NULL, token_hash TEXT NOT NULL,
                PRIMARY KEY (survey, token_hash)) WITHOUT ROWID;
            PRAGMA user_version = 2;""")
        connection.executemany("INSERT INTO invitations (survey, code_hash) VALUES ('honor', ?)",
                               [(code_hash(code),) for code in sorted(codes)])
        connection.execute("INSERT INTO blind_surveys VALUES ('honor', ?)", ("0" * 32,))
        for code in codes[:5]:  # traded, in trade order
            connection.execute("INSERT INTO blind_codes VALUES ('honor', ?, ?)",
                               (code_hash(code), hashlib.sha256(code.encode()).hexdigest()))
    Store(db).close()
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT code_hash, blinded_hash FROM blind_codes").fetchall()
        used = {row[0] for row in connection.execute(
            "SELECT code_hash FROM invitations WHERE used = 1")}
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 3
    assert len(rows) == len(codes) and [r[0] for r in rows] == sorted(r[0] for r in rows)
    traded = {code_hash(code) for code in codes[:5]}
    assert {r[0] for r in rows if r[1] != "0" * 64} == traded == used


def test_a_survey_without_codes_never_reads_the_codes_of_another(pg_db, kit):
    """Submissions without a code, to a survey without codes, beside a survey with many: the
    table of codes is never scanned (a generic plan of "does this survey have codes?" asked of
    the codes themselves scanned them all, once per submission)."""
    opened = PgStore(pg_db)
    opened.add_invitations("invited", [f"code-number-{i:06d}" for i in range(20_000)])

    async def scans() -> int:
        connection = await asyncpg.connect(pg_db)
        try:
            return int(await connection.fetchval(
                "SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables "
                "WHERE relname = 'invitation_codes'"))
        finally:
            await connection.close()

    async def submit() -> list[str]:
        store = PgStore(pg_db)
        await store.open()
        try:
            return [await store.submit("honor", kit.VERSION, kit.token(), {"violated": "yes"})
                    for _ in range(20)]
        finally:
            await store.aclose()

    before = run_outside_loop(scans())
    assert run_outside_loop(submit()) == [STORED] * 20
    import time

    time.sleep(1)  # the statistics collector reports within a moment (PostgreSQL 15: at once)
    assert run_outside_loop(scans()) == before
