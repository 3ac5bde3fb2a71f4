"""The attacker who holds the collector's database tries to pair completion records with answers.

The linkage test of invitation codes (test_unlinkability.py), on the completion record of panel
surveys: 40 participants of a panel send 40 submissions, each with its completion digest, in
shuffled order; then everything an operator or a stolen backup has: SQLite's file with its
`-wal` and `-shm` (live and after a clean stop); PostgreSQL's system columns, a `pg_dump`, and the
raw files of the data directory with the write-ahead log (under the documented WAL settings).
Each attack ranks the digests by what it reads (where a digest first appears in the log, where
it stands in a file, how many copies of it the files hold) and the submissions by the same kind
of order, and pairs them. A random pairing of 40 gets about 1 right (close to Poisson(1): 5 or
more has probability 0.004), so every attack must get at most CHANCE right; the same attacks on
data written in arrival order pair all 40 (the last test), so they are not blind.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest

from rrsite.collect.pgstore import PgStore, run_outside_loop
from tests.collect.linkage import rank_pairs, right, row_order, snapshot, wal_frames

PARTICIPANTS = 40
CHANCE = 4
JSON = {"content-type": "application/json"}
PANEL = {"provider": "prolific", "id": "PROLIFIC_PID", "name": "Prolific", "complete": "C1",
         "redirect": None, "screen_out": None, "over_quota": None, "no_consent": None,
         "record": True}


def digest(participant: str) -> bytes:
    return hashlib.sha256(f"rrsite-completion\nhonor\n{participant}".encode()).digest()


def study(seed: int = 36, participants: int = PARTICIPANTS) -> list[tuple[bytes, str]]:
    """(completion digest, respondent token) of each submission, in the order they are sent."""
    rng = random.Random(seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    ids = ["".join(rng.choice("0123456789abcdef") for _ in range(24))
           for _ in range(participants)]
    tokens = ["".join(rng.choice(alphabet) for _ in range(22)) for _ in range(participants)]
    rng.shuffle(ids)
    return [(digest(i), t) for i, t in zip(ids, tokens, strict=True)]


def panel_dist(kit: Any, root: Path) -> Path:
    manifest = kit.manifest()
    manifest["panel"] = PANEL
    return kit.write_dist(root, [manifest])


def submit_all(client: Any, kit: Any, pairs: Sequence[tuple[bytes, str]]) -> None:
    for number, (digest_, token) in enumerate(pairs):
        body = kit.body(token, year=["First", "Second", "Third or later"][number % 3])
        body["completion"] = digest_.hex()
        response = client.post("/api/submissions", content=json.dumps(body), headers=JSON)
        assert response.status_code == 201, response.text


def forms(digest_: bytes) -> tuple[bytes, bytes]:
    """A digest as the files may hold it: the bytes, and as hex text (a dump)."""
    return digest_, digest_.hex().encode()


def first_at(data: bytes, digest_: bytes) -> int:
    found = [at for at in (data.find(form) for form in forms(digest_)) if at >= 0]
    return min(found) if found else -1


def order_attacks(data: bytes, pairs: Sequence[tuple[bytes, str]],
                  label: str) -> dict[str, int]:
    """Digests and tokens by where in ``data`` they first stand (both ways), and by copies."""
    digests = {d: first_at(data, d) for d, _ in pairs if first_at(data, d) >= 0}
    tokens = {t: data.find(t.encode()) for _, t in pairs if t.encode() in data}
    copies = {d: sum(data.count(form) for form in forms(d)) for d, _ in pairs}
    return {f"{label}: place": right(rank_pairs(digests, tokens), pairs),
            f"{label}: place, reversed": right(rank_pairs(
                {d: -at for d, at in digests.items()}, tokens), pairs),
            f"{label}: copies": right(rank_pairs(copies, tokens), pairs)}


# -- SQLite -------------------------------------------------------------------------------------


def wal_attack(wal: bytes, pairs: Sequence[tuple[bytes, str]]) -> int:
    """Rank each digest by the first frame holding it, each token by its first frame."""
    first_digest: dict[bytes, int] = {}
    first_token: dict[str, int] = {}
    for index, page in enumerate(wal_frames(wal)):
        for digest_, token in pairs:
            if digest_ not in first_digest and digest_ in page:
                first_digest[digest_] = index
            if token not in first_token and token.encode() in page:
                first_token[token] = index
    return right(rank_pairs(first_digest, first_token), pairs)


def sqlite_attacks(folder: Path, pairs: Sequence[tuple[bytes, str]]) -> dict[str, int]:
    db, wal = folder / "c.db", folder / "c.db-wal"
    log = wal.read_bytes() if wal.exists() else b""
    data = db.read_bytes()
    results = {"wal: first frame": wal_attack(log, pairs),
               **order_attacks(data, pairs, "file"), **order_attacks(data + log, pairs,
                                                                     "file and log")}
    order = row_order(db)
    places = {d: first_at(data, d) for d, _ in pairs}
    results["digest place x row id"] = right(rank_pairs(places, order), pairs)
    return results


@pytest.mark.parametrize("participants", [PARTICIPANTS, 300])
def test_sqlite_holds_no_link_between_completions_and_answers(tmp_path: Path, kit: Any,
                                                              participants: int) -> None:
    """40 participants, and 300 (9,600 bytes of digests: the record spills into overflow
    pages, freed and taken again at each addition)."""
    pairs = study(participants=participants)
    dist = panel_dist(kit, tmp_path / "dist")
    db = tmp_path / "c.db"
    with kit.make_client(dist, db) as client:
        submit_all(client, kit, pairs)
        live = snapshot(tmp_path)  # the whole database while the collector runs
    stopped = sqlite_attacks(tmp_path, pairs)
    running = sqlite_attacks(live, pairs)
    print("SQLite, stopped:", stopped)
    print("SQLite, running:", running)
    assert max(running.values()) <= CHANCE, running
    assert max(stopped.values()) <= CHANCE, stopped
    # what is there: the record, every digest in it, and no older copy of it anywhere in the file
    # (a digest that straddles two overflow pages is not found whole: at most one copy)
    from rrsite.collect.completion.record import read_sqlite

    assert sorted(read_sqlite(db, "honor")) == sorted(d for d, _ in pairs)
    assert all(db.read_bytes().count(d) <= 1 for d, _ in pairs)


def test_sqlite_log_kept_by_a_reader_is_emptied_by_the_next_record(tmp_path: Path,
                                                                  kit: Any) -> None:
    """A reader on an older snapshot keeps additions in the log; the next one empties it."""
    pairs = study()[:3]
    dist = panel_dist(kit, tmp_path / "dist")
    db = tmp_path / "c.db"
    with kit.make_client(dist, db) as client:
        submit_all(client, kit, pairs[:1])
        reader = sqlite3.connect(db, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM submissions").fetchone()  # holds a snapshot
        submit_all(client, kit, pairs[1:2])
        wal = db.with_name("c.db-wal")
        assert pairs[1][0] in wal.read_bytes()  # the checkpoint gave way to the reader
        reader.execute("COMMIT")
        reader.close()
        submit_all(client, kit, pairs[2:])
        # the collector answers before it empties the log (before it takes the next batch)
        deadline = time.monotonic() + 10
        while wal.stat().st_size and time.monotonic() < deadline:
            time.sleep(0.01)
        assert wal.stat().st_size == 0


# -- PostgreSQL ---------------------------------------------------------------------------------


async def _system_rows(dsn: str) -> tuple[list[Any], list[Any]]:
    connection = await asyncpg.connect(dsn)
    try:
        submissions = await connection.fetch(
            "SELECT respondent, xmin::text::bigint AS xmin, ctid::text AS ctid FROM submissions")
        records = await connection.fetch(
            "SELECT survey, digests, xmin::text::bigint AS xmin, ctid::text AS ctid "
            "FROM completion_sets")
        return list(submissions), list(records)
    finally:
        await connection.close()


def system_column_attacks(dsn: str, pairs: Sequence[tuple[bytes, str]]) -> dict[str, int]:
    """Per digest, what the record's rows say (xmin, ctid, place in the row) against each
    submission's xmin and heap order."""
    submissions, records = run_outside_loop(_system_rows(dsn))
    keys: dict[bytes, tuple[int, int, int]] = {}
    for row in records:
        blob = bytes(row["digests"])
        page, item = (int(x) for x in row["ctid"].strip("()").split(","))
        for digest_, _ in pairs:
            at = blob.find(digest_)
            if at >= 0:
                keys[digest_] = (row["xmin"], page * 1000 + item, at)
    by_xmin = {row["respondent"]: row["xmin"] for row in submissions}
    by_heap = {row["respondent"]: tuple(int(x) for x in row["ctid"].strip("()").split(","))
               for row in submissions}
    results = {}
    for name, index in (("xmin", 0), ("ctid", 1), ("place in the row", 2)):
        mine = {d: key[index] for d, key in keys.items()}
        results[f"record {name} x submission xmin"] = right(rank_pairs(mine, by_xmin), pairs)
        results[f"record {name} x heap order"] = right(rank_pairs(mine, by_heap), pairs)
    assert len(keys) == len(pairs)  # every digest is in the record
    return results


def run_pg_study(dsn: str, tmp_path: Path, kit: Any) -> list[tuple[bytes, str]]:
    from starlette.testclient import TestClient

    from rrsite.collect.server import create_app

    pairs = study()
    dist = panel_dist(kit, tmp_path / "dist")
    with TestClient(create_app(dist, PgStore(dsn))) as client:
        submit_all(client, kit, pairs)
    return pairs


def dump(server: Any, dbname: str) -> bytes:
    return subprocess.run(
        [str(server.bin / "pg_dump"), "-h", str(server.root), "-p", str(server.port), "-U",
         "rrsite", "--data-only", dbname], check=True, capture_output=True).stdout


def test_postgres_system_columns_and_dump_hold_no_link(postgres: Any, pg_db: str,
                                                       tmp_path: Path, kit: Any) -> None:
    pairs = run_pg_study(pg_db, tmp_path, kit)
    results = system_column_attacks(pg_db, pairs)
    results.update(order_attacks(dump(postgres, urlsplit(pg_db).path.lstrip("/")), pairs,
                                 "pg_dump"))
    print("PostgreSQL, columns and dump:", results)
    assert max(results.values()) <= CHANCE, results


def test_postgres_data_directory_holds_no_link_under_minimal_wal(minimal_wal_server: Any,
                                                                tmp_path: Path,
                                                                kit: Any) -> None:
    server = minimal_wal_server
    dsn = server.create_database()
    pairs = run_pg_study(dsn, tmp_path, kit)
    results = system_column_attacks(dsn, pairs)
    server.stop()  # a clean stop: everything on disk, as in a backup of the data directory
    wal = b"".join(p.read_bytes() for p in sorted((server.data / "pg_wal").glob("0*")))
    heap = b"".join(p.read_bytes() for p in (server.data / "base").rglob("*") if p.is_file())
    results.update(order_attacks(wal, pairs, "wal"))
    results.update(order_attacks(heap + wal, pairs, "data directory"))
    print("PostgreSQL, data directory:", results)
    assert max(results.values()) <= CHANCE, results
    assert all(heap.count(d) >= 1 for d, _ in pairs)  # the record is all there to be read


def test_the_attacks_find_a_link_that_is_there() -> None:
    """Given data written in arrival order, the same attacks pair all 40."""
    pairs = study()
    written = b"".join(b"[" + d + t.encode() + b"]" for d, t in pairs)
    assert order_attacks(written, pairs, "x")["x: place"] == PARTICIPANTS
    page_size = 4096
    frames = b"".join((0).to_bytes(24, "big") + (d + t.encode()).ljust(page_size, b"\0")
                      for d, t in pairs)
    header = b"\0" * 8 + page_size.to_bytes(4, "big") + b"\0" * 20
    assert wal_attack(header + frames, pairs) == PARTICIPANTS
    # a log that keeps every version of the sorted set (one frame per addition, beside its
    # submission) links each addition to its submission: why the log must be emptied
    sets = [(0).to_bytes(24, "big") + (b"".join(sorted(d for d, _ in pairs[:number + 1]))
                                        + token.encode()).ljust(page_size, b"\0")
            for number, (_, token) in enumerate(pairs)]
    assert wal_attack(header + b"".join(sets), pairs) == PARTICIPANTS
