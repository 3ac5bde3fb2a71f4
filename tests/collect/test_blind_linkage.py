"""The holder of the database tries to pair codes with answers, blind invitations and plain codes.

The attack of test_unlinkability.py, with blind invitations and with a scan that looks at every
table and every form a code's hash can take (hex text, bytes, two uuids), on both stores: 50 codes
issued, 40 respondents (codes and respondent tokens from a fixed seed: the outcome of every attack
is deterministic); with blind invitations each trades a code when the survey opens and sends a
token with the answers. Respondents arrive one at a time (open, answer, send, then the next) or
overlap (each opens at a random moment of the fielding window and answers after a random time,
exponential with a mean of 2.5, 5 or 10 % of the window). The holder ranks the traded or spent
codes by every order the database keeps (PostgreSQL: `xmin`, `ctid`, the `pg_dump` order of
each table; SQLite: the `-wal` frames of a live copy, the place of each record in the file, and
how closely the cells of a page follow the submissions: Kendall's tau) and the submissions by
the same kind of order, and pairs them. A random pairing of 40 gets about one
right; every attack must get at most CHANCE. The same attacks pair all 40 where the database
keeps an order (the schema this replaces: tested on it).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest
from starlette.testclient import TestClient

from rrsite.collect.invitations.blindkey import add_key, load_key
from rrsite.collect.pgstore import run_outside_loop
from rrsite.collect.server import create_app
from rrsite.collect.stores import open_store
from rrsite.core import blind as rb
from tests.collect.linkage import ctid, rank_pairs, right, row_order, snapshot, wal_frames

ISSUED, USED = 50, 40
CHANCE = 4
JSON = {"content-type": "application/json"}
#: Kendall's tau between the cells of a page and the submissions' order reached by chance about
#: once in a hundred pages of 20 cells (its standard deviation is then 0.16).
TAU_CHANCE = 0.4
#: Mean time to answer, as a share of the fielding window (None: one respondent at a time).
ARRIVALS = [None, 0.025, 0.05, 0.10]


def forms(hashed: str) -> list[str]:
    """A code's SHA-256 (hex) as a row's text may show it: hex, bytea, or its first uuid."""
    hi = hashed[:32]
    return [hashed, hi, f"{hi[:8]}-{hi[8:12]}-{hi[12:16]}-{hi[16:20]}-{hi[20:]}"]


# -- the study: invite, trade (blind), submit ---------------------------------------------------

def events(seed: int, spread: float | None) -> list[tuple[str, int]]:
    """The order of ("open", i) and ("send", i) events of USED respondents."""
    if spread is None:
        return [(kind, i) for i in range(USED) for kind in ("open", "send")]
    rng = random.Random(seed)
    timed = []
    for i in range(USED):
        opened = rng.random()
        timed += [(opened, "open", i), (opened + rng.expovariate(1 / spread), "send", i)]
    return [(kind, i) for _, kind, i in sorted(timed)]


def invite(tmp_path: Path, db: str, blind: bool, seed: int = 24) -> tuple[list[str], Path]:
    """ISSUED codes drawn from a fixed seed (the outcome of every attack is then deterministic),
    recorded as `rrsite invite` records them; with blind invitations, the survey's key first."""
    rng = random.Random(seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    codes = ["".join(rng.choice(alphabet) for _ in range(16)) for _ in range(ISSUED)]
    key = tmp_path / "rrsite-blind.pem"
    store = open_store(db)
    try:
        if blind:
            store.mark_blind("honor", add_key(key, "honor").key_id)
        store.add_invitations("honor", codes)
    finally:
        store.close()
    return codes, key


def play(client: TestClient, kit: Any, codes: list[str], order: list[tuple[str, int]],
         blind: bool, seed: int) -> dict[str, str]:
    """Run the respondents' events; {code hash: respondent token} as the truth to beat."""
    rng = random.Random(seed)
    used = rng.sample(codes, USED)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    respondents = ["".join(rng.choice(alphabet) for _ in range(22)) for _ in range(USED)]
    tokens: dict[int, dict[str, str]] = {}
    key_text = client.get("/api/blind-key?survey=honor").text if blind else ""
    for kind, i in order:
        if kind == "open" and blind:
            state = json.loads(rb.blind_json(key_text, "honor"))
            signed = client.post("/api/blind-sign", headers=JSON, content=json.dumps(
                {"survey": "honor", "invitation": used[i], "blinded_msg": state["blinded_msg"]}))
            assert signed.status_code == 200, signed.text
            tokens[i] = json.loads(rb.finalize_json(key_text, state["msg"],
                                                     signed.json()["blind_sig"], state["inv"]))
        elif kind == "send":
            body = kit.body(respondents[i], year=["First", "Second", "Third or later"][i % 3])
            body.update({"token": tokens[i]} if blind else {"invitation": used[i]})
            answer = client.post("/api/submissions", content=json.dumps(body), headers=JSON)
            assert answer.status_code == 201, answer.text
    return {hashlib.sha256(code.encode()).hexdigest(): respondents[i]
            for i, code in enumerate(used)}


# -- PostgreSQL ---------------------------------------------------------------------------------

async def _everything(dsn: str) -> dict[str, list[tuple[int, tuple[int, int], str]]]:
    """Every row of every table: (xmin, ctid, the row as text)."""
    connection = await asyncpg.connect(dsn)
    try:
        found = {}
        for (table,) in await connection.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"):
            rows = await connection.fetch(
                f'SELECT xmin::text::bigint, ctid::text, t::text FROM "{table}" t')
            found[table] = [(row[0], ctid(row[1]), row[2].lower()) for row in rows]
        return found
    finally:
        await connection.close()


def pg_attacks(dsn: str, truth: dict[str, str]) -> dict[str, int]:
    """Every table holding codes against the submissions: same xmin, xmin order, heap order."""
    tables = run_outside_loop(_everything(dsn))
    submissions = {}
    for xmin, place, text in tables.pop("submissions"):
        for respondent in truth.values():
            if respondent.lower() in text:
                submissions[respondent] = (xmin, place)
    alone = {}
    for respondent, (xmin, _) in submissions.items():
        sharing = [r for r, (x, _) in submissions.items() if x == xmin]
        if len(sharing) == 1:
            alone[xmin] = respondent
    results = {}
    for table, rows in tables.items():
        codes: dict[str, tuple[int, tuple[int, int]]] = {}
        for xmin, place, text in rows:
            for hashed in truth:
                if hashed not in codes and any(form in text for form in forms(hashed)):
                    codes[hashed] = (xmin, place)
        if not codes:
            continue
        results[f"{table}: same xmin"] = right(
            {h: alone[x] for h, (x, _) in codes.items() if x in alone}, truth)
        results[f"{table}: xmin order"] = right(rank_pairs(
            {h: x for h, (x, _) in codes.items()},
            {r: x for r, (x, _) in submissions.items()}), truth)
        results[f"{table}: heap order"] = right(rank_pairs(
            {h: p for h, (_, p) in codes.items()},
            {r: p for r, (_, p) in submissions.items()}), truth)
    return results


def dump_attacks(server: Any, dsn: str, truth: dict[str, str]) -> dict[str, int]:
    """`pg_dump --data-only`, each table's block apart: codes' order against submissions'."""
    dbname = urlsplit(dsn).path.lstrip("/")
    dump = subprocess.run(
        [str(server.bin / "pg_dump"), "-h", str(server.root), "-p", str(server.port), "-U",
         "rrsite", "--data-only", dbname], check=True, capture_output=True, text=True
    ).stdout.lower()
    blocks = {match.group(1): match.group(2) for match in re.finditer(
        r"copy public\.(\w+) .*?from stdin;\n(.*?)\n\\\.", dump, re.DOTALL)}
    submissions = blocks.pop("submissions", "")
    respondents = {r: submissions.find(r.lower()) for r in truth.values()}
    results = {}
    for table, block in blocks.items():
        places = {h: min(block.find(f) for f in forms(h) if f in block)
                  for h in truth if any(f in block for f in forms(h))}
        if places:
            results[f"pg_dump {table}"] = right(rank_pairs(places, respondents), truth)
    return results


@pytest.mark.parametrize("spread", ARRIVALS, ids=lambda s: f"overlap{s}" if s else "one-by-one")
@pytest.mark.parametrize("blind", [True, False], ids=["blind", "plain"])
def test_postgres_holds_no_order_of_codes(postgres, tmp_path, kit, blind, spread):
    dsn = postgres.create_database()
    codes, key = invite(tmp_path, dsn, blind)
    dist = kit.write_dist(tmp_path / "dist")
    signer = load_key(key) if blind else None
    with TestClient(create_app(dist, open_store(dsn), blind_key=signer)) as client:
        truth = play(client, kit, codes, events(7, spread), blind, seed=30)
    results = pg_attacks(dsn, truth)
    results.update(dump_attacks(postgres, dsn, truth))
    assert results and max(results.values()) <= CHANCE, str(results)


# -- SQLite -------------------------------------------------------------------------------------

def traded(page: bytes, hashed: str) -> bool:
    """Whether a page holds the code's blind_codes record with a blinded message's hash (not the
    placeholder of zeros), or its invitations record marked used (serial type 9: the integer 1)."""
    for match in re.finditer(re.escape(hashed.encode()), page):
        after = page[match.end():match.end() + 64]
        if re.fullmatch(rb"[0-9a-f]{64}", after) and after != b"0" * 64:
            return True
        start = match.start() - len(b"honor")
        if page[start:match.start()] == b"honor" and page[start - 1] == 9:
            return True
    return False


def sqlite_attacks(folder: Path, truth: dict[str, str]) -> tuple[dict[str, int], float]:
    """Pairs right by each attack, and how closely cells follow the submissions (tau)."""
    db, wal = folder / "c.db", folder / "c.db-wal"
    frames = wal_frames(wal.read_bytes() if wal.exists() else b"")
    first_traded: dict[str, int] = {}
    first_seen: dict[str, int] = {}
    for index, page in enumerate(frames):
        for hashed, respondent in truth.items():
            if hashed not in first_traded and traded(page, hashed):
                first_traded[hashed] = index
            if respondent not in first_seen and respondent.encode() in page:
                first_seen[respondent] = index
    results = {"wal": right(rank_pairs(first_traded, first_seen), truth)}
    data = db.read_bytes()
    order = row_order(db)
    records: dict[str, int] = {}
    for hashed in truth:  # where the record that changed with the trade or spend lies
        for match in re.finditer(re.escape(hashed.encode()), data):
            if traded(data[match.start() - 6:match.end() + 64], hashed):
                records[hashed] = match.start()
    for name, place in (("ascending", lambda at: at), ("descending", lambda at: -at),
                        ("pages up, cells down", lambda at: (at // 4096, -(at % 4096)))):
        results[f"file: {name}"] = right(rank_pairs(
            {h: place(at) for h, at in records.items()}, order), truth)
    # inside a page, cells are placed from the end down as they are inserted: how closely does
    # that order follow the order of the submissions (Kendall's tau, 0 for no relation)?
    pages: dict[int, list[tuple[int, int]]] = {}
    for hashed, at in records.items():
        if truth[hashed] in order:
            pages.setdefault(at // 4096, []).append((-(at % 4096), order[truth[hashed]]))
    taus = [kendall_tau(cells) for cells in pages.values() if len(cells) >= 8]
    return results, max(taus, default=0.0)


def kendall_tau(pairs: list[tuple[int, int]]) -> float:
    """Kendall's tau-a of the pairs' two orders."""
    concordant = discordant = 0
    for i, (a1, b1) in enumerate(pairs):
        for a2, b2 in pairs[i + 1:]:
            sign = (a1 - a2) * (b1 - b2)
            concordant += sign > 0
            discordant += sign < 0
    n = len(pairs)
    return (concordant - discordant) / (n * (n - 1) / 2)


@pytest.mark.parametrize("spread", ARRIVALS, ids=lambda s: f"overlap{s}" if s else "one-by-one")
@pytest.mark.parametrize("blind", [True, False], ids=["blind", "plain"])
def test_sqlite_holds_no_order_of_codes(tmp_path, kit, blind, spread):
    db = tmp_path / "c.db"
    codes, key = invite(tmp_path, str(db), blind)
    dist = kit.write_dist(tmp_path / "dist")
    signer = load_key(key) if blind else None
    with TestClient(create_app(dist, open_store(db), blind_key=signer)) as client:
        truth = play(client, kit, codes, events(7, spread), blind, seed=30)
        live = snapshot(tmp_path)  # the whole database while the collector runs
    running, running_tau = sqlite_attacks(live, truth)
    stopped, stopped_tau = sqlite_attacks(tmp_path, truth)
    assert max(running.values()) <= CHANCE, str(running)
    assert max(stopped.values()) <= CHANCE, str(stopped)
    assert max(running_tau, stopped_tau) < TAU_CHANCE, (running_tau, stopped_tau)


@pytest.mark.parametrize("mix", [1024, 8])
def test_sqlite_keeps_no_order_of_redemptions(tmp_path, kit, mix):
    """The redeemed tokens' records do not lie in the order the submissions came (a token links
    to its own submission only; still, nothing orders the redemptions); every token stays
    redeemed, in the pool or settled (with a MIX of 8, settled groups are in settling order:
    the pool mix, as on PostgreSQL)."""
    from rrsite.collect.store import Store

    db = tmp_path / "c.db"
    codes, key = invite(tmp_path, str(db), True)
    dist = kit.write_dist(tmp_path / "dist")
    with TestClient(create_app(dist, Store(db, mix=mix), blind_key=load_key(key))) as client:
        key_text = client.get("/api/blind-key?survey=honor").text
        sent = []
        for code in codes[:USED]:
            state = json.loads(rb.blind_json(key_text, "honor"))
            signed = client.post("/api/blind-sign", headers=JSON, content=json.dumps(
                {"survey": "honor", "invitation": code, "blinded_msg": state["blinded_msg"]}))
            token = json.loads(rb.finalize_json(key_text, state["msg"],
                                                signed.json()["blind_sig"], state["inv"]))
            body = {**kit.body(), "token": token}
            assert client.post("/api/submissions", content=json.dumps(body),
                               headers=JSON).status_code == 201
            sent.append((hashlib.sha256(rb.unb64(token["msg"])).hexdigest(), body))
        again = client.post("/api/submissions", headers=JSON,
                            content=json.dumps({**kit.body(), "token": sent[0][1]["token"]}))
        assert again.status_code == 403 and "already been used" in again.text
    with sqlite3.connect(db) as connection:
        kept = {row[0] for row in connection.execute(
            "SELECT token_hash FROM blind_tokens UNION ALL "
            "SELECT token_hash FROM blind_token_pool")}
        pooled = connection.execute("SELECT count(*) FROM blind_token_pool").fetchone()[0]
    assert kept == {hashed for hashed, _ in sent}
    assert pooled == (USED if 2 * mix > USED else mix + (USED - 2 * mix) % mix)
    if mix < USED:
        return
    data = db.read_bytes()
    pages: dict[int, list[tuple[int, int]]] = {}
    for order, (hashed, _) in enumerate(sent):
        at = data.find(b"honor" + hashed.encode())
        assert at >= 0
        pages.setdefault(at // 4096, []).append((-(at % 4096), order))
    taus = [kendall_tau(cells) for cells in pages.values() if len(cells) >= 8]
    assert taus and max(taus) < TAU_CHANCE, taus


def test_the_attacks_find_an_order_that_is_there():
    """Given rows and frames written in trading order, the attacks pair every code."""
    hashes = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(USED)]
    respondents = [f"respondent{i:02d}x" for i in range(USED)]
    truth = dict(zip(hashes, respondents, strict=True))
    written = b"".join(h.encode() + hashlib.sha256(h.encode()).hexdigest().encode() for h in hashes)
    page_size = 4096
    frames = b"".join(
        (0).to_bytes(24, "big") + (h.encode() + b"1" * 64 + r.encode()).ljust(page_size, b"\0")
        for h, r in truth.items())
    header = b"\0" * 8 + page_size.to_bytes(4, "big") + b"\0" * 20
    assert sum(traded(written, h) for h in hashes) == USED
    first = {h: i for i, h in enumerate(hashes)}
    seen = {r: i for i, r in enumerate(respondents)}
    assert right(rank_pairs(first, seen), truth) == USED
    assert len(wal_frames(header + frames)) == USED
    assert kendall_tau([(i, i) for i in range(10)]) == 1.0
    assert kendall_tau([(i, -i) for i in range(10)]) == -1.0
    assert all(traded(page, h) for page, h in zip(wal_frames(header + frames), hashes,
                                                  strict=True))
