"""Blind invitations on the collector: the key file, RFC 9474's BlindSign on the collector's key
code (checked against the RFC's vector), `POST /api/blind-sign` and submissions carrying a token,
on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.testclient import TestClient

from rrsite.cli import main
from rrsite.collect.invitations.blindkey import (
    BlindKeyError,
    BlindSigner,
    create_key,
    load_key,
    read_ring,
)
from rrsite.collect.pgstore import run_outside_loop
from rrsite.collect.server import create_app
from rrsite.collect.stores import open_store
from rrsite.core import blind as rb
from tests.collect.twostores import both_open

JSON = {"content-type": "application/json"}
URL = "https://surveys.example.org/honor/"
VECTORS = json.loads((Path(__file__).parents[1] / "core" / "rfc9474_vectors.json")
                     .read_text("utf-8"))["vectors"]


def vector_signer(v: dict[str, str]) -> BlindSigner:
    p, q, d = int(v["p"], 16), int(v["q"], 16), int(v["d"], 16)
    public = rsa.RSAPublicNumbers(int(v["e"], 16), int(v["n"], 16))
    numbers = rsa.RSAPrivateNumbers(p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q),
                                    rsa.rsa_crt_iqmp(p, q), public)
    return BlindSigner(numbers.private_key())


@pytest.mark.parametrize("v", VECTORS, ids=[v["name"] for v in VECTORS])
def test_blind_sign_matches_the_rfc_vectors(v):
    signer = vector_signer(v)
    assert signer.blind_sign(bytes.fromhex(v["blinded_msg"])) == bytes.fromhex(v["blind_sig"])


def test_verify_uses_pss_sha384_with_a_48_byte_salt():
    pss, zero = VECTORS[0], VECTORS[1]  # RSABSSA-SHA384-PSS-Randomized, -PSSZERO-Randomized
    signer = vector_signer(pss)
    assert signer.verify(bytes.fromhex(pss["prepared_msg"]), bytes.fromhex(pss["sig"]))
    assert not signer.verify(bytes.fromhex(pss["msg"]), bytes.fromhex(pss["sig"]))
    # a zero-salt signature by the same key is not a token of this variant
    assert not signer.verify(bytes.fromhex(zero["prepared_msg"]), bytes.fromhex(zero["sig"]))


def test_blind_sign_refuses_bad_input():
    signer = vector_signer(VECTORS[0])
    size = signer.public.size
    with pytest.raises(rb.BlindError, match="unexpected input size"):
        signer.blind_sign(bytes(size - 1))
    with pytest.raises(rb.BlindError, match="out of range"):
        signer.blind_sign(signer.public.n.to_bytes(size, "big"))


def test_key_file_is_private_and_never_replaced(tmp_path):
    path = tmp_path / "k.pem"
    signer = create_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert signer.public.n.bit_length() == 2048 and signer.public.e == 65537
    assert load_key(path).key_id == signer.key_id
    before = path.read_bytes()
    with pytest.raises(BlindKeyError, match="exists already"):
        create_key(path)
    assert path.read_bytes() == before
    path.chmod(0o644)
    with pytest.raises(BlindKeyError, match="chmod 600"):
        load_key(path)
    with pytest.raises(BlindKeyError, match="no such key file"):
        load_key(tmp_path / "missing.pem")


@pytest.fixture(scope="module")
def key_file(tmp_path_factory) -> Path:
    """One key for the module's tests (key generation takes a moment)."""
    path = tmp_path_factory.mktemp("key") / "rrsite-blind.pem"
    create_key(path)
    return path


def blind_invite(tmp_path: Path, db: str, key: Path, n: int) -> tuple[list[str], str]:
    out = tmp_path / f"codes-{n}.csv"
    assert main(["invite", "--survey", "honor", "-n", str(n), "--url", URL, "-o", str(out),
                 "--db", db, "--blind", "--blind-key", str(key)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    key_ids = set()
    for row in rows:
        fragment = row["link"].removeprefix(URL + "#")
        fields = dict(part.split("=") for part in fragment.split("&"))
        assert set(fields) == {"invitation", "key"} and fields["invitation"] == row["code"]
        key_ids.add(fields["key"])
    assert len(key_ids) == 1  # every link names the same key: no per-person keys
    return [row["code"] for row in rows], key_ids.pop()


def trade(client: TestClient, code: str, blinded: str | None = None) -> tuple[dict, object]:
    """The page's side: fetch the key, blind a new token, trade the code, finalize."""
    key_text = client.get("/api/blind-key?survey=honor").text
    state = json.loads(rb.blind_json(key_text, "honor"))
    answer = client.post("/api/blind-sign", headers=JSON, content=json.dumps(
        {"survey": "honor", "invitation": code, "blinded_msg": blinded or state["blinded_msg"]}))
    if answer.status_code != 200:
        return {}, answer
    token = json.loads(rb.finalize_json(key_text, state["msg"], answer.json()["blind_sig"],
                                        state["inv"]))
    return token, answer


def post(client, body):
    return client.post("/api/submissions", content=json.dumps(body), headers=JSON)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "c.db")
    return str(request.getfixturevalue("pg_db"))


def test_blind_survey_end_to_end(tmp_path, kit, key_file, db, capsys):
    dist = kit.write_dist(tmp_path / "dist")
    codes, key_id = blind_invite(tmp_path, db, key_file, 4)
    err = capsys.readouterr().err
    assert f"key id {key_id}" in err and "rrsite serve --blind-key" in err
    ring = read_ring(key_file)
    assert ring.signer(key_id) is not None  # the survey's own key, added to the file
    with kit.client(dist, open_store(db), blind_key=ring) as client:
        public = client.get("/api/blind-key?survey=honor").json()
        assert public["key_id"] == key_id and public["variant"] == "RSABSSA-SHA384-PSS-Randomized"

        token, answer = trade(client, codes[0])
        assert answer.status_code == 200
        body = {**kit.body(), "token": token}
        assert "invitation" not in body
        assert post(client, body).status_code == 201
        assert post(client, body).status_code == 200  # the page's resend: idempotent
        changed = post(client, {**body, "answers": {"violated": "no", "year": "Second"}})
        assert changed.status_code == 409
        # the same token for another respondent: refused, nothing stored
        again = post(client, {**kit.body(), "token": token})
        assert again.status_code == 403 and again.json()["field"] == "token"
        assert "already been used" in again.json()["error"]

        # a spent code cannot be traded again for another blinded message ...
        _, spent = trade(client, codes[0])
        assert spent.status_code == 403 and spent.json()["field"] == "invitation"
        assert "already been used" in spent.json()["error"]
        # ... but the identical trade (a resend after a lost answer) gets the same signature
        key_text = client.get("/api/blind-key?survey=honor").text
        state = json.loads(rb.blind_json(key_text, "honor"))
        request = json.dumps({"survey": "honor", "invitation": codes[1],
                              "blinded_msg": state["blinded_msg"]})
        first = client.post("/api/blind-sign", headers=JSON, content=request)
        second = client.post("/api/blind-sign", headers=JSON, content=request)
        assert first.status_code == second.status_code == 200
        assert first.json()["blind_sig"] == second.json()["blind_sig"]

        _, unknown = trade(client, "A" * 16)
        assert unknown.status_code == 403 and "not valid" in unknown.json()["error"]

        # a token whose signature is not the collector's
        token2, _ = trade(client, codes[2])
        sig = bytearray(rb.unb64(token2["sig"]))
        sig[10] ^= 1
        forged = post(client, {**kit.body(), "token": {**token2, "sig": rb.b64(bytes(sig))}})
        assert forged.status_code == 403 and "not the collector's" in forged.json()["error"]
        # the message changed under a valid signature
        msg = rb.unb64(token2["msg"])
        other = {"msg": rb.b64(msg[:-1] + bytes([msg[-1] ^ 1])), "sig": token2["sig"]}
        assert post(client, {**kit.body(), "token": other}).status_code == 403
        # the real one still works: the refused attempts spent nothing
        assert post(client, {**kit.body(), "token": token2}).status_code == 201

        # a plain code is refused on a blind survey (the code would travel with the answers)
        plain = post(client, {**kit.body(), "invitation": codes[3]})
        assert plain.status_code == 403 and "blind tokens" in plain.json()["error"]
        both = post(client, {**kit.body(), "invitation": codes[3], "token": token2})
        assert both.status_code == 400
        assert post(client, kit.body()).status_code == 403  # neither code nor token
        bad_shape = post(client, {**kit.body(), "token": {"msg": "x"}})
        assert bad_shape.status_code == 400 and bad_shape.json()["field"] == "token"
        wrong_size = client.post("/api/blind-sign", headers=JSON, content=json.dumps(
            {"survey": "honor", "invitation": codes[3], "blinded_msg": "AAAA"}))
        assert wrong_size.status_code == 400 and wrong_size.json()["field"] == "blinded_msg"
        # the refused trade did not spend the code
        _, fine = trade(client, codes[3])
        assert fine.status_code == 200
        health = client.get("/api/health").json()
        assert health["submissions"] == 2


def test_tokens_of_another_survey_or_key_are_refused(tmp_path, kit, key_file):
    db = str(tmp_path / "c.db")
    manifests = [kit.manifest(), {**kit.manifest(), "id": "other"}]
    dist = kit.write_dist(tmp_path / "dist", manifests)
    codes, _ = blind_invite(tmp_path, db, key_file, 2)
    with TestClient(create_app(dist, open_store(db), blind_key=read_ring(key_file))) as client:
        token, _ = trade(client, codes[0])
        other = {**kit.body(), "survey": "other", "token": token}
        refused = post(client, other)
        assert refused.status_code == 403 and "another survey" in refused.json()["error"]
        # a survey without blind invitations refuses a trade
        zeros = rb.b64(bytes(load_key(key_file).public.size))
        not_blind = client.post("/api/blind-sign", headers=JSON, content=json.dumps(
            {"survey": "other", "invitation": codes[1], "blinded_msg": zeros}))
        assert not_blind.status_code == 403 and not_blind.json()["field"] == "survey"
    # a collector started without the survey's key does not accept its tokens (and says why)
    stranger = create_key(tmp_path / "other.pem")
    with TestClient(create_app(dist, open_store(db), blind_key=stranger)) as client:
        refused = post(client, {**kit.body(), "token": token})
        assert refused.status_code == 503 and "key of survey 'honor'" in refused.json()["error"]
    # without a key: no blind endpoints
    with TestClient(create_app(dist, open_store(db))) as client:
        assert client.get("/api/blind-key").status_code == 404
        assert post(client, {**kit.body(), "token": token}).status_code == 403


def test_what_the_sqlite_store_keeps(tmp_path, kit, key_file):
    """The code's trade and the token's use are in different tables with nothing in common:
    the code's row holds the hash of the blinded message, the token's row the hash of the token,
    and neither value appears on the other side."""
    db = tmp_path / "c.db"
    dist = kit.write_dist(tmp_path / "dist")
    codes, _ = blind_invite(tmp_path, str(db), key_file, 1)
    with TestClient(create_app(dist, open_store(db), blind_key=read_ring(key_file))) as client:
        token, _ = trade(client, codes[0])
        assert post(client, {**kit.body(), "token": token}).status_code == 201
    with sqlite3.connect(db) as connection:
        traded = connection.execute("SELECT * FROM blind_codes").fetchall()
        spent = connection.execute("SELECT * FROM blind_token_pool").fetchall()
        columns = [row[1] for row in connection.execute("PRAGMA table_info(blind_token_pool)")]
    assert len(traded) == 1 and len(spent) == 1
    assert columns == ["survey", "token_hash"]
    assert spent[0][1] == hashlib.sha256(rb.unb64(token["msg"])).hexdigest()
    assert spent[0][1] not in traded[0] and traded[0][2] not in spent[0]


def test_identical_token_resends_racing_on_two_postgresql_stores(pg_db, kit):
    """Two stores (two pools, as two processes have): each blind token's submission sent to both
    at once is stored once and the other copy is answered as a duplicate, never "used"."""
    import asyncio

    from rrsite.collect.invitations.blindstore import mark_blind
    from rrsite.collect.pgstore import PgStore
    from rrsite.collect.store import DUPLICATE, STORED

    first, second = PgStore(pg_db), PgStore(pg_db)
    mark_blind(first, "honor", "0" * 32)
    tokens = [(kit.token(), bytes([i]).hex() * 32) for i in range(25)]

    async def race() -> list[str]:
        jobs = [store.submit("honor", kit.VERSION, respondent, {"violated": "yes"}, None,
                             token_hash)
                for respondent, token_hash in tokens for store in (first, second)]
        return list(await asyncio.gather(*jobs))

    outcomes = both_open(first, second, race)
    assert outcomes.count(STORED) == len(tokens)
    assert outcomes.count(DUPLICATE) == len(tokens)


def test_one_code_traded_twice_at_once_on_two_postgresql_stores(pg_db):
    """The same code traded for two different blinded messages at once, on two stores: exactly
    one trade goes ahead; the identical trade on both is answered on both (a resend)."""
    import asyncio

    from rrsite.collect.invitations.blindstore import SIGN, exchange, mark_blind
    from rrsite.collect.pgstore import PgStore
    from rrsite.collect.store import USED_CODE, code_hash

    first, second = PgStore(pg_db), PgStore(pg_db)
    codes = [f"code-number-{i:05d}" for i in range(40)]
    first.add_invitations("honor", codes)
    mark_blind(first, "honor", "0" * 32)

    async def race() -> list[str]:
        jobs = [exchange(store, "honor", code_hash(code), code_hash(f"{i}-{n}"))
                for i, code in enumerate(codes[:20]) for n, store in enumerate((first, second))]
        jobs += [exchange(store, "honor", code_hash(code), code_hash("same"))
                 for code in codes[20:] for store in (first, second)]
        return list(await asyncio.gather(*jobs))

    outcomes = both_open(first, second, race)
    different, same = outcomes[:40], outcomes[40:]
    for i in range(20):
        assert sorted(different[2 * i:2 * i + 2]) == sorted([SIGN, USED_CODE])
    assert same == [SIGN] * 40


def test_one_respondent_with_two_tokens_at_once_spends_one(pg_db, kit):
    """The same respondent token sent with two different blind tokens at once, on two stores:
    exactly one blind token is spent (the other answer is a duplicate or a conflict, its token
    left unspent), never a token spent without its answers."""
    import asyncio

    import asyncpg

    from rrsite.collect.invitations.blindstore import mark_blind
    from rrsite.collect.pgstore import PgStore
    from rrsite.collect.store import CONFLICT, DUPLICATE, STORED

    first, second = PgStore(pg_db), PgStore(pg_db)
    mark_blind(first, "honor", "0" * 32)
    cases = [(kit.token(), bytes([i]).hex() * 32, bytes([100 + i]).hex() * 32, i % 2 == 0)
             for i in range(25)]

    async def race() -> list[list[str]]:
        results = []
        for respondent, one, other, same in cases:
            answers = ({"violated": "yes"}, {"violated": "yes" if same else "no"})
            results.append(list(await asyncio.gather(
                first.submit("honor", kit.VERSION, respondent, answers[0], None, one),
                second.submit("honor", kit.VERSION, respondent, answers[1], None, other))))
        return results

    async def spent() -> int:
        connection = await asyncpg.connect(pg_db)
        try:
            return int(await connection.fetchval(  # tokens redeemed: in the pool or settled
                "SELECT count(*) FROM spent_all WHERE kind = 'k'"))
        finally:
            await connection.close()

    for (_, _, _, same), outcome in zip(cases, both_open(first, second, race), strict=True):
        assert sorted(outcome) == sorted([STORED, DUPLICATE if same else CONFLICT]), outcome
    assert run_outside_loop(spent()) == len(cases)
