"""What the store keeps for blind invitations, on SQLite and PostgreSQL.

- ``blind_surveys(survey, key_id)`` (both stores): the surveys whose codes are traded for blind
  tokens (`rrsite invite --blind`), each with the id of its own key: a token signed for one
  survey is worthless in another.
- SQLite: ``blind_codes(survey, code_hash, blinded_hash)`` holds one row per code of a blind
  survey, written when the code is issued (or when the survey goes blind), in hash order, with a
  placeholder of zeros; a trade overwrites the placeholder in place (the record keeps its size, so
  its cell does not move) with the SHA-256 of the blinded message it was traded for, and marks
  the code used in place too. So nothing in the file orders the trades, and the write-ahead log
  is emptied after every commit that traded a code or redeemed a token, as after a spend
  (store.py). A redeemed token's SHA-256 goes into ``blind_token_pool(survey, token_hash)``,
  which every batch that redeemed one writes anew in hash order (`reorder_tokens`: the cells of a
  table written row after row lie in the order they came), settling a uniformly random part of
  it into ``blind_tokens(survey, token_hash)`` once it holds 2 * MIX of a survey, as PostgreSQL's
  pool does (pgspend.py). A token links to nothing but its own submission anyway (it cannot be
  related to a code: RFC 9474); so nothing orders the redemptions either.
- PostgreSQL: traded codes and redeemed tokens go through the batch writer's pool with the spent
  plain codes (pgspend.py): no row of them carries the transaction of its trade or redemption.

The code is spent when the page opens (`exchange`), the token with the submission (the store's
submission job). Nothing here joins a code to a token: the collector never sees the token while
the code is spent. SQLite tables are WITHOUT ROWID (no row ids); none holds a time.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..storebase import (
    BAD_CODE,
    BAD_TOKEN,
    BLIND_ONLY,
    MIX,
    NOT_BLIND,
    SIGN,
    USED_CODE,
    USED_TOKEN,
)

__all__ = ["BAD_TOKEN", "BLIND_ONLY", "NOT_BLIND", "SIGN", "USED_TOKEN", "check_sqlite",
           "exchange", "exchange_job", "mark_blind", "sha256", "survey_keys"]

BLIND_CODES = """
CREATE TABLE IF NOT EXISTS blind_codes (
    survey       TEXT NOT NULL,
    code_hash    TEXT NOT NULL,
    blinded_hash TEXT NOT NULL,
    PRIMARY KEY (survey, code_hash)
) WITHOUT ROWID;
"""
SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS blind_surveys (
    survey TEXT PRIMARY KEY,
    key_id TEXT NOT NULL
) WITHOUT ROWID;
""" + BLIND_CODES + """
CREATE TABLE IF NOT EXISTS blind_tokens (
    survey     TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    PRIMARY KEY (survey, token_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blind_token_pool (
    survey     TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    PRIMARY KEY (survey, token_hash)
) WITHOUT ROWID;
"""
PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS blind_surveys (survey text PRIMARY KEY, key_id text NOT NULL);
"""
#: The placeholder of a code not traded yet: as long as a SHA-256 in hex, so a trade overwrites
#: it in place.
UNTRADED = "0" * 64


def sha256(data: bytes) -> str:
    """Hex SHA-256: what is kept of a blinded message or a token."""
    return hashlib.sha256(data).hexdigest()


# ---- SQLite ---------------------------------------------------------------------------------

def _blind_key_id(connection: Any, survey: str) -> str | None:
    row = connection.execute("SELECT key_id FROM blind_surveys WHERE survey = ?",
                             (survey,)).fetchone()
    return None if row is None else str(row[0])


def untraded_rows(connection: sqlite3.Connection, survey: str,
                  hashes: Iterable[str] | None = None) -> None:
    """Write the placeholder row of each code of a blind survey, in hash order.

    All its codes if `hashes` is None; nothing for a survey that is not blind. In the caller's
    transaction.
    """
    if _blind_key_id(connection, survey) is None:
        return
    if hashes is None:
        hashes = [row[0] for row in connection.execute(
            "SELECT code_hash FROM invitations WHERE survey = ? ORDER BY code_hash", (survey,))]
    connection.executemany(
        "INSERT INTO blind_codes (survey, code_hash, blinded_hash) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING", [(survey, hashed, UNTRADED) for hashed in sorted(hashes)])


def migrate_sqlite(connection: sqlite3.Connection) -> None:
    """Rebuild schema 2's `blind_codes` (a row inserted per trade, in trade order) as schema 3's.

    A row per code of every blind survey, in hash order; traded codes marked used; the tokens
    redeemed moved to the pool (written in hash order). In the caller's transaction.
    """
    traded = connection.execute("SELECT survey, code_hash, blinded_hash FROM blind_codes"
                                ).fetchall()
    redeemed = connection.execute("SELECT survey, token_hash FROM blind_tokens").fetchall()
    connection.execute("DELETE FROM blind_tokens")  # inserted in redemption order: anew
    connection.executemany("INSERT INTO blind_token_pool (survey, token_hash) VALUES (?, ?)",
                           sorted(redeemed))
    reorder_tokens(connection)
    connection.execute("DROP TABLE blind_codes")
    connection.execute(BLIND_CODES)
    for (survey,) in connection.execute("SELECT survey FROM blind_surveys").fetchall():
        untraded_rows(connection, survey)
    for survey, hashed, blinded in sorted(traded):
        connection.execute("UPDATE invitations SET used = 1 WHERE survey = ? AND code_hash = ?",
                           (survey, hashed))
        connection.execute("UPDATE blind_codes SET blinded_hash = ? WHERE survey = ? "
                           "AND code_hash = ?", (blinded, survey, hashed))


def mark_blind_sqlite(path: Path, survey: str, key_id: str) -> None:
    """Record that `survey` trades its codes for tokens signed by key `key_id`.

    With the placeholder rows of its codes issued already.
    """
    connection = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO blind_surveys (survey, key_id) VALUES (?, ?) "
                           "ON CONFLICT (survey) DO NOTHING", (survey, key_id))
        untraded_rows(connection, survey)
        connection.execute("COMMIT")
    finally:
        connection.close()


def exchange_job(survey: str, code_hash: str, blinded_hash: str) -> Any:
    """The writer job spending a code for one blinded message: SIGN, or why not.

    An unknown code is BAD_CODE, a code used already (traded for another blinded message, or
    spent with a submission before the survey went blind) USED_CODE; the same code with the same
    blinded message again is SIGN (a resend after a lost answer gets the same blind signature).
    The code's rows are overwritten in place (see the module docstring).
    """
    def run(connection: sqlite3.Connection) -> str:
        if _blind_key_id(connection, survey) is None:
            return NOT_BLIND
        row = connection.execute("SELECT used FROM invitations WHERE survey = ? AND code_hash = ?",
                                 (survey, code_hash)).fetchone()
        if row is None:
            return BAD_CODE
        traded = connection.execute(
            "SELECT blinded_hash FROM blind_codes WHERE survey = ? AND code_hash = ?",
            (survey, code_hash)).fetchone()
        if row[0]:
            return SIGN if traded is not None and traded[0] == blinded_hash else USED_CODE
        if traded is None:  # a placeholder is written for every code of a blind survey
            untraded_rows(connection, survey, [code_hash])
        connection.execute("UPDATE blind_codes SET blinded_hash = ? WHERE survey = ? "
                           "AND code_hash = ?", (blinded_hash, survey, code_hash))
        connection.execute("UPDATE invitations SET used = 1 WHERE survey = ? AND code_hash = ?",
                           (survey, code_hash))
        return SIGN

    return run


def check_sqlite(connection: sqlite3.Connection, survey: str, invitation: str | None,
                 token_hash: str | None) -> str | None:
    """Hook of the submission job: spend a token, or refuse a plain code on a blind survey.

    None to go on (no token and not a plain code on a blind survey, or the token now spent);
    else the outcome: BAD_TOKEN, USED_TOKEN or BLIND_ONLY.
    """
    if token_hash is None:
        if invitation is not None and _blind_key_id(connection, survey) is not None:
            return BLIND_ONLY
        return None
    if _blind_key_id(connection, survey) is None:
        return BAD_TOKEN
    if connection.execute("SELECT 1 FROM blind_tokens WHERE survey = ? AND token_hash = ?",
                          (survey, token_hash)).fetchone():
        return USED_TOKEN
    cursor = connection.execute(
        "INSERT INTO blind_token_pool (survey, token_hash) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (survey, token_hash))
    return None if cursor.rowcount else USED_TOKEN


def reorder_tokens(connection: sqlite3.Connection, mix: int = MIX) -> None:
    """Write the pool of redeemed tokens anew, in hash order, settling what is due.

    Run by the writer before the commit of a batch that redeemed a token. A survey with 2 * mix
    tokens or more in the pool settles a uniformly random part of them (the operating system's
    random source) into `blind_tokens` so that `mix` stay. With `secure_delete` on, the deleted
    records are overwritten with zeros.
    """
    rows = connection.execute(
        "SELECT survey, token_hash FROM blind_token_pool ORDER BY survey, token_hash").fetchall()
    groups: dict[str, list[str]] = {}
    for survey, hashed in rows:
        groups.setdefault(survey, []).append(hashed)
    settled = []
    for survey, hashes in groups.items():
        if len(hashes) >= 2 * mix:
            chosen = set(secrets.SystemRandom().sample(hashes, len(hashes) - mix))
            settled += [(survey, h) for h in sorted(chosen)]
            groups[survey] = [h for h in hashes if h not in chosen]
    connection.execute("DELETE FROM blind_token_pool")
    connection.executemany("INSERT INTO blind_tokens (survey, token_hash) VALUES (?, ?)", settled)
    connection.executemany(
        "INSERT INTO blind_token_pool (survey, token_hash) VALUES (?, ?)",
        [(survey, h) for survey in sorted(groups) for h in groups[survey]])


def sqlite_keys(path: Path) -> dict[str, str]:
    connection = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    try:
        return {str(survey): str(key_id) for survey, key_id in connection.execute(
            "SELECT survey, key_id FROM blind_surveys")}
    finally:
        connection.close()


# ---- PostgreSQL -----------------------------------------------------------------------------

async def pg_keys(connection: Any) -> dict[str, str]:
    """{survey: key id} of every blind survey (PostgreSQL)."""
    return {row[0]: row[1] for row in await connection.fetch(
        "SELECT survey, key_id FROM blind_surveys")}


async def setup_pg(connection: Any) -> None:
    """Create the table if missing (under the schema's advisory lock, in its transaction)."""
    await connection.execute(PG_SCHEMA)


async def mark_blind_pg(connection: Any, survey: str, key_id: str) -> None:
    """PostgreSQL's `mark_blind_sqlite` (its codes need no placeholder: pgspend.py)."""
    await connection.execute(
        "INSERT INTO blind_surveys (survey, key_id) VALUES ($1, $2) "
        "ON CONFLICT (survey) DO NOTHING", survey, key_id)


# ---- either store ---------------------------------------------------------------------------

async def exchange(store: Any, survey: str, code_hash: str, blinded_hash: str) -> str:
    """Spend a code for a blinded message (its SHA-256, hex), durably, on the collector's store.

    StoreUnavailable (from the store) if the database cannot take it. Each store does it in its
    own way (``Store.exchange``: the writer, in place; ``PgStore.exchange``: the batch writer).
    """
    return str(await store.exchange(survey, code_hash, blinded_hash))


async def survey_keys(store: Any) -> dict[str, str]:
    """{survey: key id} of every blind survey, read from the database now."""
    return dict(await store.survey_keys())


def survey_keys_now(store: Any) -> dict[str, str]:
    """`survey_keys` outside an event loop (start-up, `rrsite invite`)."""
    return dict(store.survey_keys_now())


def mark_blind(store: Any, survey: str, key_id: str) -> None:
    """Record a blind survey on either store (`rrsite invite --blind`)."""
    store.mark_blind(survey, key_id)
