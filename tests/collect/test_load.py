"""Load and fault tests against a real `rrsite serve` on loopback.

Load: many concurrent clients post thousands of submissions, some retried (one after the other and
at the same moment); the export then holds every acknowledged submission exactly once.
Fault: the server is SIGKILLed while clients are posting; after a restart every acknowledged
submission is in the export, the database passes `PRAGMA integrity_check`, and retries of the
unacknowledged ones are stored at most once.
"""

from __future__ import annotations

import csv
import json
import queue
import random
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from rrsite.cli import main
from rrsite.collect.pgstore import run_outside_loop
from rrsite.spreadsheet import restore

VERSION = "0123456789abcdef"


JSON = {"content-type": "application/json"}
ACKED = (200, 201)


def make_bodies(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    bodies = []
    for _ in range(count):
        answers: dict[str, Any] = {"violated": rng.choice(["no", "yes"]),
                                   "year": rng.choice(["First", "Second", "Third or later"])}
        if rng.random() < 0.5:
            answers["tools"] = rng.sample(["pen", "laptop", "phone"], rng.randint(0, 3))
        if rng.random() < 0.5:
            answers["age"] = rng.randint(16, 99)
        if rng.random() < 0.3:
            answers["comment"] = "ok " * rng.randint(1, 30)
        bodies.append({"survey": "honor", "version": VERSION,
                       "respondent": secrets.token_urlsafe(16), "answers": answers})
    return bodies


def post_all(url: str, jobs: list[dict[str, Any]], concurrency: int, deadline: float,
             results: dict[str, list[int]], stop: threading.Event | None = None) -> None:
    """Post each job (a body) once from `concurrency` client threads, each with its own
    keep-alive connection; results[respondent] gets each status (0: no answer)."""
    pending: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
    for job in jobs:
        pending.put(job)
    lock = threading.Lock()

    def worker() -> None:
        with httpx.Client(timeout=10.0) as client:
            while time.monotonic() < deadline and not (stop is not None and stop.is_set()):
                try:
                    body = pending.get_nowait()
                except queue.Empty:
                    return
                try:
                    status = client.post(url + "/api/submissions", json=body).status_code
                except httpx.HTTPError:
                    status = 0
                with lock:
                    results.setdefault(body["respondent"], []).append(status)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def export_records(db: Path, tmp_path: Path) -> list[dict[str, Any]]:
    out = tmp_path / f"export-{time.monotonic_ns()}.jsonl"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def database(store: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A fresh database of either store: a SQLite file, or a PostgreSQL URL."""
    return tmp_path / "c.db" if store == "sqlite" else request.getfixturevalue("pg_db")


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_load_exactly_once(tmp_path, kit, store, request):
    dist = kit.write_dist(tmp_path / "dist")
    db = database(store, request, tmp_path)
    bodies = make_bodies(3000, seed=1)
    by_token = {body["respondent"]: body for body in bodies}
    rng = random.Random(2)
    # retries: 300 sent again later, 200 sent twice at the same moment (adjacent in the queue)
    later = rng.sample(bodies, 300)
    jobs: list[dict[str, Any]] = []
    for body in bodies:
        jobs.append(body)
        if rng.random() < 200 / 3000:
            jobs.append(body)
    jobs += later
    results: dict[str, list[int]] = {}
    with kit.Server(dist, db) as server:
        started = time.monotonic()
        post_all(server.url, jobs, concurrency=32, deadline=started + 60, results=results)
        elapsed = time.monotonic() - started
        health = httpx.get(server.url + "/api/health", headers=server.operator_headers).json()
    assert sum(len(statuses) for statuses in results.values()) == len(jobs), "ran out of time"
    for token, statuses in results.items():
        assert sorted(statuses) == [200] * (len(statuses) - 1) + [201], (token, statuses)
    acked = {token for token, statuses in results.items() if set(statuses) & set(ACKED)}
    assert len(acked) == len(bodies)
    records = export_records(db, tmp_path)
    exported = [record["respondent"] for record in records]
    assert len(exported) == len(set(exported)) == len(bodies)
    assert set(exported) == acked
    for record in records:
        assert record["answers"] == by_token[record["respondent"]]["answers"]
    assert health["submissions"] == len(bodies)
    # the CSV holds the same rows
    out = tmp_path / "all.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    with open(out, newline="") as handle:  # tokens starting "-" carry the formula apostrophe
        assert sorted(restore(row["respondent"]) for row in csv.DictReader(handle)) == \
            sorted(exported)
    print(f"\nload: {len(jobs)} posts in {elapsed:.2f} s ({len(jobs) / elapsed:.0f}/s)")


def post_until_killed(server: Any, bodies: list[dict[str, Any]], concurrency: int,
                      results: dict[str, list[int]], after: int) -> None:
    """Post the bodies; SIGKILL the server once `after` of them were acknowledged."""
    stop = threading.Event()

    def killer() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if sum(1 for s in list(results.values()) if s and s[-1] in ACKED) >= after:
                break
            time.sleep(0.002)
        server.kill()  # with requests in flight
        time.sleep(0.3)
        stop.set()

    killing = threading.Thread(target=killer)
    killing.start()
    post_all(server.url, bodies, concurrency, time.monotonic() + 40, results, stop)
    killing.join()


def answered(results: dict[str, list[int]]) -> tuple[set[str], set[str]]:
    """The tokens whose last post was acknowledged, and those whose last post got no answer."""
    acked = {token for token, statuses in results.items() if statuses[-1] in ACKED}
    failed = {token for token, statuses in results.items() if statuses[-1] == 0}
    return acked, failed


def integrity(db: Path) -> str:
    with sqlite3.connect(db) as connection:
        return connection.execute("PRAGMA integrity_check").fetchone()[0]


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_sigkill_mid_load(tmp_path, kit, store, request):
    dist = kit.write_dist(tmp_path / "dist")
    db = database(store, request, tmp_path)
    bodies = make_bodies(2500, seed=3)
    results: dict[str, list[int]] = {}
    server = kit.Server(dist, db).start()
    try:
        post_until_killed(server, bodies, 32, results, after=600)  # ~32 requests in flight
    finally:
        server.kill()
    acked, failed = answered(results)
    assert len(acked) >= 600 and failed, (len(acked), len(failed))
    assert all(statuses[-1] in (0, *ACKED) for statuses in results.values())

    # offline, right after the kill: the database is sound and holds every acknowledgement
    assert store == "postgresql" or integrity(db) == "ok"
    stored = {record["respondent"] for record in export_records(db, tmp_path)}
    assert acked <= stored
    assert stored <= acked | failed  # nothing that was never sent

    # restart; clients retry what got no answer (and some acknowledged ones)
    by_token = {body["respondent"]: body for body in bodies}
    retries = [by_token[token] for token in sorted(failed)] + \
        [by_token[token] for token in sorted(acked)[:100]]
    again: dict[str, list[int]] = {}
    with kit.Server(dist, db) as server:
        post_all(server.url, retries, 16, time.monotonic() + 30, again)
    for token, statuses in again.items():
        expected = 200 if token in stored else 201
        assert statuses == [expected], (token, statuses, token in acked)
    records = export_records(db, tmp_path)
    exported = [record["respondent"] for record in records]
    assert len(exported) == len(set(exported))
    assert set(exported) == acked | failed
    assert store == "postgresql" or integrity(db) == "ok"
    for record in records:
        assert record["answers"] == by_token[record["respondent"]]["answers"]
    print(f"\nfault: {len(acked)} acknowledged before SIGKILL, {len(failed)} without answer, "
          f"{len(stored - acked)} of those stored anyway")


def test_two_processes_on_postgres_one_killed_mid_load(tmp_path, kit, pg_db):
    """Two `rrsite serve` on one PostgreSQL database; one SIGKILLed while both take posts. Every
    acknowledged submission is stored once; retries through the survivor are recognised."""
    dist = kit.write_dist(tmp_path / "dist")
    bodies = make_bodies(2000, seed=5)
    halves = bodies[::2], bodies[1::2]
    results: list[dict[str, list[int]]] = [{}, {}]
    victim = kit.Server(dist, pg_db).start()
    survivor = kit.Server(dist, pg_db).start()
    try:
        stop = threading.Event()

        def killer() -> None:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                done = sum(1 for s in list(results[0].values()) if s and s[-1] in ACKED)
                if done >= 300:
                    break
                time.sleep(0.002)
            victim.kill()  # SIGKILL with requests in flight
            time.sleep(0.3)
            stop.set()

        threads = [threading.Thread(target=killer),
                   threading.Thread(target=post_all, args=(
                       victim.url, halves[0], 16, time.monotonic() + 40, results[0], stop)),
                   threading.Thread(target=post_all, args=(
                       survivor.url, halves[1], 16, time.monotonic() + 60, results[1]))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        merged = {**results[0], **results[1]}
        acked = {token for token, statuses in merged.items() if statuses[-1] in ACKED}
        failed = {token for token, statuses in merged.items() if statuses[-1] == 0}
        assert len(acked) >= 300 + len(halves[1]) and failed, (len(acked), len(failed))
        stored = {record["respondent"] for record in export_records(pg_db, tmp_path)}
        assert acked <= stored and stored <= acked | failed
        # the clients of the killed process retry through the survivor: what got no answer, what
        # they never got to send before they gave up on it, and some acknowledged ones too
        by_token = {body["respondent"]: body for body in bodies}
        unsent = set(by_token) - set(merged)
        assert not unsent & stored, "stored without being sent"
        retries = [by_token[t] for t in sorted(failed | unsent)] + \
            [by_token[t] for t in sorted(acked)[:50]]
        again: dict[str, list[int]] = {}
        post_all(survivor.url, retries, 8, time.monotonic() + 30, again)
        assert set(again) == {body["respondent"] for body in retries}, "ran out of time"
        for token, statuses in again.items():
            assert statuses == [200 if token in stored else 201], (token, statuses)
    finally:
        victim.kill()
        survivor.stop()
    records = export_records(pg_db, tmp_path)
    exported = [record["respondent"] for record in records]
    assert len(exported) == len(set(exported)) == len(bodies)  # none lost, none twice
    for record in records:
        assert record["answers"] == by_token[record["respondent"]]["answers"]
    print(f"\ntwo processes: {len(acked)} acknowledged, {len(failed)} without answer at the kill, "
          f"{len(unsent)} not yet sent")


def spent_codes(db: Any) -> set[str]:
    """The hashes of the codes a database counts as used (PostgreSQL: in the pool or settled)."""
    if isinstance(db, Path):
        with sqlite3.connect(db) as connection:
            return {row[0] for row in connection.execute(
                "SELECT code_hash FROM invitations WHERE used = 1")}

    import asyncpg

    async def read() -> set[str]:
        connection = await asyncpg.connect(db)
        try:
            spent = {bytes(digest).hex() for (digest,) in await connection.fetch(
                "SELECT hash FROM spent_all WHERE kind = 'c'")}
            return spent
        finally:
            await connection.close()

    return run_outside_loop(read())


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_sigkill_with_invitation_codes(tmp_path, kit, store, request):
    """SIGKILL while invited respondents post: every acknowledged submission is stored, and the
    spent codes are exactly the stored submissions' codes (never one without the other)."""
    from rrsite.collect.store import code_hash
    from rrsite.collect.stores import open_store

    dist = kit.write_dist(tmp_path / "dist")
    db = database(store, request, tmp_path)
    bodies = make_bodies(500, seed=5)
    code_of = {}
    for body in bodies:
        body["invitation"] = secrets.token_urlsafe(12)
        code_of[body["respondent"]] = code_hash(body["invitation"])
    opened = open_store(db)
    opened.add_invitations("honor", [body["invitation"] for body in bodies])
    opened.close()
    results: dict[str, list[int]] = {}
    server = kit.Server(dist, db).start()
    try:
        post_until_killed(server, bodies, 16, results, after=100)
    finally:
        server.kill()
    acked, failed = answered(results)
    assert len(acked) >= 100 and failed, (len(acked), len(failed))
    assert store == "postgresql" or integrity(db) == "ok"
    stored = {record["respondent"] for record in export_records(db, tmp_path)}
    assert acked <= stored <= acked | failed
    assert spent_codes(db) == {code_of[token] for token in stored}
    # after a restart the unanswered retry: stored ones are duplicates, the others are stored
    by_token = {body["respondent"]: body for body in bodies}
    again: dict[str, list[int]] = {}
    with kit.Server(dist, db) as server:
        post_all(server.url, [by_token[t] for t in sorted(failed)], 8, time.monotonic() + 30,
                 again)
    for token, statuses in again.items():
        assert statuses == [200 if token in stored else 201], (token, statuses)
    stored = {record["respondent"] for record in export_records(db, tmp_path)}
    assert stored == acked | failed
    assert spent_codes(db) == {code_of[token] for token in stored}
