"""The per-address rate limit (in memory only) and the per-survey cap: 429 + Retry-After."""

from __future__ import annotations

import json
import math

import pytest
from starlette.testclient import TestClient

from rrsite.collect.edge import SWEEP_AT, RateLimit
from rrsite.collect.store import Store
from rrsite.commands.serve import parse_caps
from rrsite.errors import UsageError

JSON = {"content-type": "application/json"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket():
    clock = Clock()
    limit = RateLimit(6, clock=clock)  # a burst of 6, then one every 10 s
    assert [limit.check("192.0.2.1") for _ in range(6)] == [0] * 6
    assert limit.check("192.0.2.1") == 10
    assert limit.check("192.0.2.2") == 0  # another address has its own bucket
    clock.now += 4.0
    assert limit.check("192.0.2.1") == math.ceil(10 - 4)
    clock.now += 6.0  # 10 s since the bucket was empty: one token
    assert limit.check("192.0.2.1") == 0
    assert limit.check("192.0.2.1") == 10
    clock.now += 3600
    assert [limit.check("192.0.2.1") for _ in range(7)] == [0] * 6 + [10]  # never above N
    with pytest.raises(ValueError, match="at least 1"):
        RateLimit(0)


def test_addresses_are_not_kept_in_the_clear_and_memory_stays_bounded():
    clock = Clock()
    limit = RateLimit(60, clock=clock)
    for i in range(SWEEP_AT):
        limit.check(f"198.51.100.{i % 256}-{i}")
    assert len(limit) == SWEEP_AT
    held = b"".join(limit._buckets)  # the only per-address state
    assert b"198.51.100" not in held
    assert all(len(key) == 16 for key in limit._buckets)
    clock.now += 61  # every bucket has refilled: the next check sweeps them out
    limit.check("203.0.113.9")
    assert len(limit) == 1
    other = RateLimit(60, clock=clock)  # a fresh random key: the digests differ per process
    other.check("203.0.113.9")
    assert set(other._buckets).isdisjoint(limit._buckets)


def post(client: TestClient, body: dict):
    return client.post("/api/submissions", content=json.dumps(body), headers=JSON)


def test_burst_over_the_limit_gets_429(dist, tmp_path, kit):
    db = tmp_path / "c.db"
    with kit.client(dist, Store(db), rate_limit=5) as client:
        answers = [post(client, kit.body()) for _ in range(8)]
        assert [r.status_code for r in answers] == [201] * 5 + [429] * 3
        refused = answers[-1]
        assert 1 <= int(refused.headers["retry-after"]) <= 12
        assert "too many submissions" in refused.json()["error"]
        assert client.get("/api/health").json()["submissions"] == 5
    assert b"testclient" not in db.read_bytes()  # the address is never stored


def test_cap(dist, tmp_path, kit):
    db = tmp_path / "c.db"
    first = kit.body()
    with kit.client(dist, Store(db, caps={"honor": 3})) as client:
        assert post(client, first).status_code == 201
        assert [post(client, kit.body()).status_code for _ in range(2)] == [201, 201]
        full = post(client, kit.body())
        assert full.status_code == 429 and int(full.headers["retry-after"]) > 0
        assert full.json() == {"error": "survey 'honor' has reached its limit of 3 submissions",
                               "field": "survey"}
        assert post(client, first).status_code == 200  # a resend is still recognised
        changed = {**first, "answers": {**first["answers"], "violated": "no"}}
        assert post(client, changed).status_code == 409
    with kit.client(dist, Store(db, caps={"honor": 4})) as client:
        # a restarted collector counts what the database holds
        assert [post(client, kit.body()).status_code for _ in range(2)] == [201, 429]
        assert client.get("/api/health").json()["submissions"] == 4


def test_cap_option():
    assert parse_caps(["honor=500", "a=b=2"]) == {"honor": 500, "a=b": 2}
    for bad in (["honor"], ["honor=0"], ["=5"], ["honor=x"], ["h=1", "h=2"]):
        with pytest.raises(UsageError, match="--cap"):
            parse_caps(bad)
