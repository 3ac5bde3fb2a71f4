"""What the store keeps for blind invitations, in tables of their own, on SQLite and PostgreSQL.

- ``blind_surveys(survey, key_id)``: the surveys whose codes are traded for blind tokens
  (`rrsite invite --blind`), with the id of the key that signs them.
- ``blind_codes(survey, code_hash, blinded_hash)``: the codes already traded, each with the
  SHA-256 of the blinded message it was traded for (so an identical resend of the trade is
  answered again; the blinded message is a uniformly random number, unrelated to the token).
- ``blind_tokens(survey, token_hash)``: the SHA-256 of each token's prepared message, once spent.

The code is spent in a transaction of its own when the page opens (`exchange`), the token with
the submission (`spend_token`, called from the store's submission job). Nothing in these tables
joins a code to a token: the collector never sees the token while the code is spent.
SQLite tables are WITHOUT ROWID (no row ids); none holds a time.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

from .storebase import BAD_CODE, USED_CODE

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS blind_surveys (
    survey TEXT PRIMARY KEY,
    key_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blind_codes (
    survey       TEXT NOT NULL,
    code_hash    TEXT NOT NULL,
    blinded_hash TEXT NOT NULL,
    PRIMARY KEY (survey, code_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blind_tokens (
    survey     TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    PRIMARY KEY (survey, token_hash)
) WITHOUT ROWID;
"""
PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS blind_surveys (survey text PRIMARY KEY, key_id text NOT NULL);
CREATE TABLE IF NOT EXISTS blind_codes (
    survey text NOT NULL, code_hash text NOT NULL, blinded_hash text NOT NULL,
    PRIMARY KEY (survey, code_hash));
CREATE TABLE IF NOT EXISTS blind_tokens (
    survey text NOT NULL, token_hash text NOT NULL, PRIMARY KEY (survey, token_hash));
"""
#: Outcomes: the trade may go ahead; the survey's codes are not blind; a token spent already; a
#: token sent to a survey without blind invitations; a plain code sent to a blind survey.
SIGN, NOT_BLIND, USED_TOKEN, BAD_TOKEN, BLIND_ONLY = (
    "sign", "not-blind", "used-token", "bad-token", "blind-only")


def sha256(data: bytes) -> str:
    """Hex SHA-256: what is kept of a blinded message or a token."""
    return hashlib.sha256(data).hexdigest()


# ---- SQLite ---------------------------------------------------------------------------------

def _blind_key_id(connection: Any, survey: str) -> str | None:
    row = connection.execute("SELECT key_id FROM blind_surveys WHERE survey = ?",
                             (survey,)).fetchone()
    return None if row is None else str(row[0])


def mark_blind_sqlite(path: Path, survey: str, key_id: str) -> None:
    """Record that `survey` trades its codes for tokens signed by key `key_id`."""
    connection = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    try:
        connection.execute(
            "INSERT INTO blind_surveys (survey, key_id) VALUES (?, ?) "
            "ON CONFLICT (survey) DO UPDATE SET key_id = excluded.key_id", (survey, key_id))
    finally:
        connection.close()


def exchange_job(survey: str, code_hash: str, blinded_hash: str) -> Any:
    """The writer job spending a code for one blinded message: SIGN, or why not.

    An unknown code is BAD_CODE, a code used already (traded for another blinded message, or
    spent with a submission before the survey went blind) USED_CODE; the same code with the same
    blinded message again is SIGN (a resend after a lost answer gets the same blind signature).
    """
    def run(connection: sqlite3.Connection) -> str:
        if _blind_key_id(connection, survey) is None:
            return NOT_BLIND
        row = connection.execute("SELECT used FROM invitations WHERE survey = ? AND code_hash = ?",
                                 (survey, code_hash)).fetchone()
        if row is None:
            return BAD_CODE
        if row[0]:
            return USED_CODE
        cursor = connection.execute(
            "INSERT INTO blind_codes (survey, code_hash, blinded_hash) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING", (survey, code_hash, blinded_hash))
        if cursor.rowcount:
            return SIGN
        stored = connection.execute(
            "SELECT blinded_hash FROM blind_codes WHERE survey = ? AND code_hash = ?",
            (survey, code_hash)).fetchone()
        return SIGN if stored and stored[0] == blinded_hash else USED_CODE

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
    cursor = connection.execute(
        "INSERT INTO blind_tokens (survey, token_hash) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (survey, token_hash))
    return None if cursor.rowcount else USED_TOKEN


# ---- PostgreSQL -----------------------------------------------------------------------------

async def setup_pg(connection: Any) -> None:
    """Create the tables if missing (under the schema's advisory lock, in its transaction)."""
    await connection.execute(PG_SCHEMA)


async def mark_blind_pg(connection: Any, survey: str, key_id: str) -> None:
    """PostgreSQL's `mark_blind_sqlite`."""
    await connection.execute(
        "INSERT INTO blind_surveys (survey, key_id) VALUES ($1, $2) "
        "ON CONFLICT (survey) DO UPDATE SET key_id = excluded.key_id", survey, key_id)


async def check_pg(connection: Any, survey: str, invitation: str | None,
                   token_hash: str | None) -> str | None:
    """PostgreSQL's `check_sqlite` (in the submission's transaction)."""
    blind = await connection.fetchval("SELECT key_id FROM blind_surveys WHERE survey = $1",
                                      survey)
    if token_hash is None:
        return BLIND_ONLY if invitation is not None and blind is not None else None
    if blind is None:
        return BAD_TOKEN
    status = await connection.execute(
        "INSERT INTO blind_tokens (survey, token_hash) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        survey, token_hash)
    return None if status.endswith(" 1") else USED_TOKEN


# ---- either store ---------------------------------------------------------------------------

async def exchange(store: Any, survey: str, code_hash: str, blinded_hash: str) -> str:
    """Spend a code for a blinded message, durably, on the store behind the collector.

    StoreUnavailable (from the store) if the database cannot take it. Each store does it in its
    own way (``Store.exchange``, ``PgStore.exchange``).
    """
    return str(await store.exchange(survey, code_hash, blinded_hash))


def mark_blind(store: Any, survey: str, key_id: str) -> None:
    """Record a blind survey on either store (`rrsite invite --blind`)."""
    store.mark_blind(survey, key_id)
