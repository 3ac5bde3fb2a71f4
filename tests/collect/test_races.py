"""Two `rrsite serve` processes on one PostgreSQL database, two requests released together.

The races, 25 trials each: an identical resend is answered 200 by whichever process
comes second and stored once; one token sent with two codes spends exactly one code (and the
second answer is 200 for the same answers, 409 for different ones, its code left unused); one
code sent with two tokens is stored once and the other is refused with a clear message. A code
is never spent without its answers stored.
"""

from __future__ import annotations

import csv
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from rrsite.cli import main
from rrsite.collect.pgstore import run_outside_loop
from rrsite.collect.store import code_hash

TRIALS = 25


JSON_HEADERS = {"content-type": "application/json"}


def together(requests: Sequence[tuple[httpx.Client, dict[str, Any]]]) -> list[httpx.Response]:
    """POST each body with its client, all released at the same moment."""
    barrier = threading.Barrier(len(requests))
    responses: list[httpx.Response | None] = [None] * len(requests)

    def send(index: int, client: httpx.Client, body: dict[str, Any]) -> None:
        content = json.dumps(body)
        barrier.wait()
        responses[index] = client.post("/api/submissions", content=content,
                                       headers=JSON_HEADERS)

    threads = [threading.Thread(target=send, args=(i, client, body))
               for i, (client, body) in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(response is not None for response in responses)
    return [response for response in responses if response is not None]


async def _state(dsn: str) -> tuple[set[str], dict[str, str]]:
    connection = await asyncpg.connect(dsn)
    try:
        spent = {bytes(digest).hex() for (digest,) in await connection.fetch(
            "SELECT hash FROM spent_all WHERE kind = 'c'")}
        stored = {row[0]: row[1] for row in await connection.fetch(
            "SELECT respondent, answers FROM submissions")}
        return spent, stored
    finally:
        await connection.close()


def state(dsn: str) -> tuple[set[str], dict[str, str]]:
    return run_outside_loop(_state(dsn))


@pytest.fixture
def two_servers(pg_db: str, tmp_path: Path, kit: Any) -> Any:
    dist = kit.write_dist(tmp_path / "dist")
    out = tmp_path / "codes.csv"
    assert main(["invite", "--survey", "honor", "-n", str(6 * TRIALS + 10), "--url",
                 "https://surveys.example.org/honor/", "-o", str(out), "--db", pg_db]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        codes = [row["code"] for row in csv.DictReader(handle)]
    with kit.Server(dist, pg_db) as first, kit.Server(dist, pg_db) as second:
        with httpx.Client(base_url=first.url, timeout=30) as a, \
                httpx.Client(base_url=second.url, timeout=30) as b:
            a.get("/api/health")
            b.get("/api/health")  # connections open before the first race
            yield a, b, codes


def test_races_between_two_processes(two_servers, pg_db, kit):
    a, b, codes = two_servers
    pool = iter(codes)
    spent: set[str] = set()

    # an identical resend, to both processes at once: 201 and 200, stored once
    for _ in range(TRIALS):
        body = kit.body()
        body["invitation"] = next(pool)
        answers = sorted(r.status_code for r in together([(a, body), (b, body)]))
        assert answers == [200, 201], answers
        spent.add(code_hash(body["invitation"]))

    # one token with two codes at once: exactly one code spent
    for different in (False, True):
        for _ in range(TRIALS):
            token = kit.token()
            first, second = kit.body(token), kit.body(token, year="First" if different else None)
            if not different:
                second = dict(first)
            first["invitation"], second["invitation"] = next(pool), next(pool)
            responses = together([(a, first), (b, second)])
            answers = sorted(r.status_code for r in responses)
            assert answers == ([201, 409] if different else [200, 201]), answers
            winner = next(body for body, r in zip((first, second), responses, strict=True)
                          if r.status_code == 201)
            spent.add(code_hash(winner["invitation"]))

    # one code with two tokens at once: one stored, the other told the code is used
    for _ in range(TRIALS):
        code = next(pool)
        first, second = kit.body(), kit.body()
        first["invitation"] = second["invitation"] = code
        responses = together([(a, first), (b, second)])
        assert sorted(r.status_code for r in responses) == [201, 403]
        refused = next(r for r in responses if r.status_code == 403)
        assert refused.json()["field"] == "invitation"
        assert "already been used" in refused.json()["error"]
        spent.add(code_hash(code))

    spent_in_database, stored = state(pg_db)
    assert spent_in_database == spent  # exactly the winners' codes are spent
    assert len(stored) == len(spent)  # each spent code has its answers, each answer one code
