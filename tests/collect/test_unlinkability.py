"""The attacker who holds the collector's database tries to pair invitation codes with answers.

The attack, on both stores: 50 codes issued, 40 used by 40 submissions in shuffled order,
then everything an operator or a stolen backup has: SQLite's file with its `-wal` and `-shm` (live
and after a clean stop); PostgreSQL's system columns (`xmin`, `ctid`), a `pg_dump`, the export,
and the raw files of the data directory with the write-ahead log (under the documented WAL
settings). Each linkage ranks the spent codes by what it reads and the submissions by the same
kind of order, and pairs them. A random pairing of 40 gets about 1 right (the number right is
close to Poisson(1): 5 or more has probability 0.004), so every attack must get at most
CHANCE right. The codes and tokens come from a fixed seed: the outcome is deterministic.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg

from rrsite.collect.pgstore import PgStore, run_outside_loop
from rrsite.collect.server import create_app
from rrsite.collect.store import Store, code_hash
from rrsite.collect.stores import open_store
from tests.collect.linkage import ctid, rank_pairs, right, row_order, snapshot, wal_frames

ISSUED, USED = 50, 40
CHANCE = 4


JSON_HEADERS = {"content-type": "application/json"}
#: PostgreSQL settings under which a rewritten table is not copied into the write-ahead log.


def study(seed: int = 24) -> tuple[list[str], list[tuple[str, str]]]:
    """Issued codes, and the (code, respondent token) pairs used, in the order they are sent."""
    rng = random.Random(seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    codes = ["".join(rng.choice(alphabet) for _ in range(16)) for _ in range(ISSUED)]
    tokens = ["".join(rng.choice(alphabet) for _ in range(22)) for _ in range(USED)]
    used = rng.sample(codes, USED)
    return codes, list(zip(used, tokens, strict=True))


def submit_all(client: Any, kit: Any, pairs: Sequence[tuple[str, str]]) -> None:
    for i, (code, token) in enumerate(pairs):
        body = kit.body(token, year=["First", "Second", "Third or later"][i % 3])
        body["invitation"] = code
        response = client.post("/api/submissions", content=json.dumps(body),
                               headers=JSON_HEADERS)
        assert response.status_code == 201, response.text


def hashed(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs as the attacker can know them: a code's SHA-256 (stored), the token."""
    return [(code_hash(code), token) for code, token in pairs]


# -- SQLite -------------------------------------------------------------------------------------


def wal_attack(wal: bytes, pairs: Sequence[tuple[str, str]], survey: bytes = b"honor") -> int:
    """Rank each code by the first frame showing it used, each token by its first frame."""
    first_used: dict[str, int] = {}
    first_seen: dict[str, int] = {}
    for index, page in enumerate(wal_frames(wal)):
        for hash_, token in pairs:
            if hash_ not in first_used:
                for match in re.finditer(re.escape(hash_.encode()), page):
                    start = match.start() - len(survey)
                    # the record's last header byte, the `used` column's serial type: 9 is 1
                    if page[start:match.start()] == survey and page[start - 1] == 9:
                        first_used[hash_] = index
                        break
            if token not in first_seen and token.encode() in page:
                first_seen[token] = index
    return right(rank_pairs(first_used, first_seen), pairs)


def file_order_attack(data: bytes, pairs: Sequence[tuple[str, str]]) -> int:
    """Rank codes and tokens by where in a file they stand (cell offsets, page order)."""
    codes = {h: data.find(h.encode()) for h, _ in pairs if h.encode() in data}
    tokens = {t: data.find(t.encode()) for _, t in pairs if t.encode() in data}
    return right(rank_pairs(codes, tokens), pairs)


def sqlite_attacks(folder: Path, pairs: Sequence[tuple[str, str]]) -> dict[str, int]:

    db = folder / "c.db"
    wal = folder / "c.db-wal"
    results = {"wal": wal_attack(wal.read_bytes() if wal.exists() else b"", pairs),
               "file order": file_order_attack(db.read_bytes(), pairs)}
    codes = {h: db.read_bytes().find(h.encode()) for h, _ in pairs}
    results["code offset x row id"] = right(rank_pairs(codes, row_order(db)), pairs)
    return results


def test_sqlite_holds_no_link_between_codes_and_answers(tmp_path, kit):
    codes, pairs = study()
    dist = kit.write_dist(tmp_path / "dist")
    db = tmp_path / "c.db"
    store = Store(db)
    store.add_invitations("honor", codes)
    store.close()
    known = hashed(pairs)
    with kit.make_client(dist, db) as client:
        submit_all(client, kit, pairs)
        live = snapshot(tmp_path)  # the whole database while the collector runs
    stopped = sqlite_attacks(tmp_path, known)
    running = sqlite_attacks(live, known)
    assert max(running.values()) <= CHANCE, running
    assert max(stopped.values()) <= CHANCE, stopped


# -- PostgreSQL ---------------------------------------------------------------------------------


async def _rows(dsn: str) -> dict[str, list[Any]]:
    connection = await asyncpg.connect(dsn)
    try:
        tables = [row[0] for row in await connection.fetch(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'code_hash' "
            "AND table_schema = 'public'")]
        found: dict[str, list[Any]] = {"submissions": await connection.fetch(
            "SELECT respondent, xmin::text::bigint AS xmin, ctid::text AS ctid "
            "FROM submissions")}
        for table in tables:
            found[table] = await connection.fetch(
                f"SELECT code_hash, xmin::text::bigint AS xmin, ctid::text AS ctid FROM {table}")
        return found
    finally:
        await connection.close()


def system_column_attacks(dsn: str, pairs: Sequence[tuple[str, str]]) -> dict[str, int]:

    tables = run_outside_loop(_rows(dsn))
    submissions = tables.pop("submissions")
    spent = {h for h, _ in pairs}
    results: dict[str, int] = {}
    by_xmin: dict[int, list[str]] = {}
    for row in submissions:
        by_xmin.setdefault(row["xmin"], []).append(row["respondent"])
    for name, rows in tables.items():
        rows = [row for row in rows if row["code_hash"] in spent]
        same_xmin = {row["code_hash"]: by_xmin[row["xmin"]][0] for row in rows
                     if len(by_xmin.get(row["xmin"], [])) == 1}
        results[f"{name}: same xmin"] = right(same_xmin, pairs)
        results[f"{name}: xmin order"] = right(rank_pairs(
            {row["code_hash"]: row["xmin"] for row in rows},
            {row["respondent"]: row["xmin"] for row in submissions}), pairs)
        results[f"{name}: heap order"] = right(rank_pairs(
            {row["code_hash"]: ctid(row["ctid"]) for row in rows},
            {row["respondent"]: ctid(row["ctid"]) for row in submissions}), pairs)
    return results


def dump_attack(server: Any, dbname: str, pairs: Sequence[tuple[str, str]]) -> int:
    dump = subprocess.run(
        [str(server.bin / "pg_dump"), "-h", str(server.root), "-p", str(server.port), "-U",
         "rrsite", "--data-only", dbname], check=True, capture_output=True, text=True).stdout
    return file_order_attack(dump.encode(), pairs)


def wal_stream(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((data / "pg_wal").glob("0*")))


def raw_file_attacks(data: Path, pairs: Sequence[tuple[str, str]]) -> dict[str, int]:
    """The data directory's bytes: each code's last place in the WAL (the newest version written
    of its row) and how many copies of it the files hold, against each token's first place."""
    wal = wal_stream(data)
    heap = b"".join(p.read_bytes() for p in (data / "base").rglob("*") if p.is_file())
    forms = {h: (h.encode(), bytes.fromhex(h)) for h, _ in pairs}  # as text and as a digest
    last = {h: max(wal.rfind(form) for form in forms[h]) for h, _ in pairs}
    copies = {h: sum(wal.count(form) + heap.count(form) for form in forms[h]) for h, _ in pairs}
    tokens = {t: wal.find(t.encode()) for _, t in pairs}
    return {"wal: newest copy": right(rank_pairs(last, tokens), pairs),
            "data directory: copies": right(rank_pairs(copies, tokens), pairs),
            "wal: newest copy, descending": right(
                rank_pairs({h: -at for h, at in last.items()}, tokens), pairs)}


def run_pg_study(dsn: str, tmp_path: Path, kit: Any) -> list[tuple[str, str]]:
    codes, pairs = study()
    store = open_store(dsn)
    assert isinstance(store, PgStore)
    store.add_invitations("honor", codes)
    dist = kit.write_dist(tmp_path / "dist")
    from starlette.testclient import TestClient

    with TestClient(create_app(dist, PgStore(dsn))) as client:
        submit_all(client, kit, pairs)
    return hashed(pairs)


def test_postgres_system_columns_and_dump_hold_no_link(postgres, pg_db, tmp_path, kit):
    known = run_pg_study(pg_db, tmp_path, kit)
    results = system_column_attacks(pg_db, known)
    results["pg_dump order"] = dump_attack(postgres, urlsplit(pg_db).path.lstrip("/"), known)
    assert results and max(results.values()) <= CHANCE, results


def test_postgres_data_directory_holds_no_link_under_minimal_wal(minimal_wal_server, tmp_path,
                                                                kit):
    server = minimal_wal_server
    dsn = server.create_database()
    known = run_pg_study(dsn, tmp_path, kit)
    results = system_column_attacks(dsn, known)
    server.stop()  # a clean stop: everything on disk, as in a backup of the data directory
    results.update(raw_file_attacks(server.data, known))
    assert max(results.values()) <= CHANCE, results
    # the spent codes are still all there to be read: issued minus unused
    assert sum(wal_stream(server.data).count(h.encode()) > 0 for h, _ in known) == USED


def test_attacks_find_a_link_that_is_there():
    """The attackers are not blind: given data written in arrival order, they pair it all."""
    codes, pairs = study()
    known = hashed(pairs)
    written = b"".join(f"[{h}|{t}]".encode() for h, t in known)
    assert file_order_attack(written, known) == USED
    page_size = 4096
    frames = b"".join(
        (0).to_bytes(24, "big") + (b"\x09honor" + h.encode() + t.encode()).ljust(page_size, b"\0")
        for h, t in known)
    header = b"\0" * 8 + page_size.to_bytes(4, "big") + b"\0" * 20
    assert wal_attack(header + frames, known) == USED
    assert len(codes) == ISSUED


def test_sqlite_log_left_by_a_reader_is_emptied_by_a_later_commit(tmp_path):
    """A reader on an older snapshot keeps the spending commit in the log; the next commit,
    with or without a code, empties it once the reader is gone."""
    import sqlite3

    db = tmp_path / "c.db"
    store = Store(db)
    store.add_invitations("honor", ["C" * 16])
    store.add_invitations("open", [])
    store.start()
    try:
        reader = sqlite3.connect(db, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM submissions").fetchone()  # holds a snapshot
        assert store.submit_sync("honor", "v", "t1", {"a": 1}, "C" * 16) == "stored"
        wal = db.with_name("c.db-wal")
        # the answer comes before the checkpoint: wait until it was tried and gave way
        deadline = time.monotonic() + 10
        while not store.log_holds_codes and time.monotonic() < deadline:
            time.sleep(0.01)
        assert store.log_holds_codes and wal.stat().st_size > 0
        reader.execute("COMMIT")
        reader.close()
        assert store.submit_sync("open", "v", "t2", {"a": 1}) == "stored"  # no code
        # emptied right after that commit was answered, before the writer takes another batch
        deadline = time.monotonic() + 10
        while wal.stat().st_size and time.monotonic() < deadline:
            time.sleep(0.01)
        assert wal.stat().st_size == 0
        assert code_hash("C" * 16).encode() not in wal.read_bytes()
    finally:
        store.close()


def test_serve_warns_when_postgres_logs_spends(postgres, pg_db, tmp_path, kit,
                                               minimal_wal_server):
    """On a server whose WAL keeps rewritten tables, an invitation-only collector says so at
    start-up and names the settings; under the documented settings it is silent."""
    dist = kit.write_dist(tmp_path / "dist")
    quiet = minimal_wal_server.create_database()
    for dsn, warned in ((pg_db, True), (quiet, False)):
        store = open_store(dsn)
        store.add_invitations("honor", ["C" * 16])
        with kit.Server(dist, dsn) as server:
            pass
        said = server.stop()
        assert ("wal_level = minimal" in said) is warned, said
        assert (f"wal_level = {'replica'}" in said) is warned
