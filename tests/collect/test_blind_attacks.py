"""Attacks on blind invitations and on the collector's edges, each as the attacker plays it.

- a code of one survey traded for a token that another survey accepts (one key for every survey);
- the private key inside the site folder, made there by `rrsite invite --blind` or served by
  `rrsite serve` (anyone could mint tokens);
- a malformed token (base64 of a length that cannot be) answered with a server error;
- one code's identical trade replayed: the RSA operation must run off the event loop, and a code's
  trades are limited;
- `/api/health` polled by an outsider to time each submission from the counts;
- PostgreSQL writing statements or their timings to its log.
"""

from __future__ import annotations

import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from rrsite.cli import main
from rrsite.collect.invitations import blindkey
from rrsite.collect.invitations.blindkey import BlindKeyError, create_key, load_key, read_ring
from rrsite.collect.pgstore import run_outside_loop
from rrsite.collect.server import create_app
from rrsite.collect.stores import open_store
from rrsite.core import blind as rb

JSON = {"content-type": "application/json"}
URL = "https://surveys.example.org/honor/"


def invite(tmp_path: Path, db: str, survey: str, n: int, key: Path,
           name: str | None = None) -> list[str]:
    out = tmp_path / (name or f"codes-{survey}.csv")
    assert main(["invite", "--survey", survey, "-n", str(n), "--url", URL, "-o", str(out),
                 "--db", db, "--blind", "--blind-key", str(key)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        return [row["code"] for row in csv.DictReader(handle)]


def post(client: TestClient, body: dict) -> Any:
    return client.post("/api/submissions", content=json.dumps(body), headers=JSON)


def crafted_token(client: TestClient, code: str, trade_in: str, spend_in: str) -> dict[str, str]:
    """A token whose message names `spend_in`, blind-signed for a code of `trade_in`."""
    key_text = client.get(f"/api/blind-key?survey={trade_in}").text
    key = rb.key_from_json(json.loads(key_text))
    prepared = rb.prepare(rb.token_message(spend_in))
    blinded, inv = rb.blind(key, prepared)
    answer = client.post("/api/blind-sign", headers=JSON, content=json.dumps(
        {"survey": trade_in, "invitation": code, "blinded_msg": rb.b64(blinded)}))
    assert answer.status_code == 200, answer.text
    signature = rb.finalize(key, prepared, rb.unb64(answer.json()["blind_sig"]), inv)
    return {"msg": rb.b64(prepared), "sig": rb.b64(signature)}


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "c.db")
    return str(request.getfixturevalue("pg_db"))


def test_a_token_bought_with_a_code_of_one_survey_buys_nothing_in_another(tmp_path, kit, db):
    """Each survey has its own key: a token blind-signed for survey A's code, with a message
    naming survey B, does not verify with B's key; B stores nothing and spends none of its codes.
    (With one key for every survey, 4 of 4 such tokens were accepted.)"""
    manifests = [kit.manifest(), {**kit.manifest(), "id": "other"}]
    dist = kit.write_dist(tmp_path / "dist", manifests)
    key = tmp_path / "rrsite-blind.pem"
    honor = invite(tmp_path, db, "honor", 4, key)
    other = invite(tmp_path, db, "other", 4, key)
    ring = read_ring(key)
    assert len(ring.signers) == 2 and set(ring.labels) == {"honor", "other"}
    assert ring.labels["honor"] != ring.labels["other"]
    with kit.client(dist, open_store(db), blind_key=ring) as client:
        for code in honor:
            token = crafted_token(client, code, "honor", "other")
            refused = post(client, {**kit.body(), "survey": "other", "token": token})
            assert refused.status_code == 403, refused.text
            assert refused.json()["field"] == "token"
        health = client.get("/api/health").json()
        assert {s["id"]: s["submissions"] for s in health["surveys"]}["other"] == 0
        # B's own codes are all still unspent: each trades once
        for code in other:
            assert crafted_token(client, code, "other", "other")["msg"]


def test_each_survey_keeps_its_own_key_in_one_file(tmp_path):
    """`invite --blind` adds a key per survey to the key file (mode 0600), keeps the keys there
    byte for byte, and gives a survey's later invitations the same key."""
    db, key = str(tmp_path / "c.db"), tmp_path / "keys.pem"
    invite(tmp_path, db, "honor", 2, key)
    first = key.read_bytes()
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    invite(tmp_path, db, "other", 2, key)
    assert key.read_bytes().startswith(first)
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    invite(tmp_path, db, "honor", 2, key, name="more-honor.csv")
    ring = read_ring(key)
    assert len(ring.signers) == 2
    with open(tmp_path / "more-honor.csv", newline="", encoding="utf-8") as handle:
        links = [row["link"] for row in csv.DictReader(handle)]
    assert all(link.endswith(f"&key={ring.labels['honor']}") for link in links)


def test_two_surveys_on_one_key_are_refused_at_start(tmp_path, kit):
    """A database where two blind surveys name one key (as one key for every survey made them):
    the collector does not start, and says why."""
    from rrsite.collect.store import Store

    dist = kit.write_dist(tmp_path / "dist", [kit.manifest(), {**kit.manifest(), "id": "other"}])
    signer = create_key(tmp_path / "one.pem")
    store = Store(tmp_path / "c.db")
    for survey in ("honor", "other"):
        store.mark_blind(survey, signer.key_id)
    with pytest.raises(BlindKeyError, match="signed by one key"):
        create_app(dist, store, blind_key=signer)
    store.close()


def test_the_private_key_is_never_made_in_nor_served_from_the_site_folder(tmp_path, kit,
                                                                           monkeypatch, capsys):
    """`rrsite invite --blind` run inside a built site refuses to write the key there;
    `rrsite serve` refuses a key inside DIST; and a key left there is never served."""
    dist = kit.write_dist(tmp_path / "dist")
    monkeypatch.chdir(dist)
    code = main(["invite", "--survey", "honor", "-n", "2", "--url", URL, "-o",
                 str(tmp_path / "codes.csv"), "--db", str(tmp_path / "c.db"), "--blind"])
    assert code == 2 and "inside the built site" in capsys.readouterr().err
    assert not (dist / "rrsite-blind.pem").exists()
    monkeypatch.chdir(tmp_path)
    create_key(dist / "rrsite-blind.pem")  # put there by hand
    started = subprocess.Popen(
        [sys.executable, "-m", "rrsite", "serve", str(dist), "--port", "0", "--db",
         str(tmp_path / "c.db"), "--blind-key", str(dist / "rrsite-blind.pem")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        out, err = started.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        started.kill()
        out, err = started.communicate()
    assert started.returncode == 2, (out, err)
    assert "inside" in err and "served to anyone" in err
    with kit.make_client(dist, tmp_path / "c.db") as client:
        for path in ("/rrsite-blind.pem", "/RRSITE-BLIND.PEM"):
            assert client.get(path).status_code == 404


def test_a_malformed_token_is_a_400_not_a_500(tmp_path, kit):
    """A token whose base64 cannot be (length 1 mod 4) is refused as bad input."""
    dist = kit.write_dist(tmp_path / "dist")
    db = str(tmp_path / "c.db")
    key = tmp_path / "rrsite-blind.pem"
    invite(tmp_path, db, "honor", 1, key)
    app = create_app(dist, open_store(db), blind_key=load_key(key))
    with TestClient(app, raise_server_exceptions=False) as client:
        for token in ({"msg": "AAAAA", "sig": "AAAA"}, {"msg": "AAAA", "sig": "A"}):
            answer = post(client, {**kit.body(), "token": token})
            assert answer.status_code == 400, answer.text
            assert answer.json()["field"] == "token"


def test_a_replayed_trade_is_limited_and_signed_off_the_event_loop(tmp_path, kit, monkeypatch):
    """One code's identical trade sent again and again gets 429 after a few; and while a blind
    signature is being computed the collector still answers other requests."""
    dist = kit.write_dist(tmp_path / "dist")
    db = str(tmp_path / "c.db")
    key = tmp_path / "rrsite-blind.pem"
    codes = invite(tmp_path, db, "honor", 2, key)
    entered, release = threading.Event(), threading.Event()
    real = blindkey.rsasp1

    def slow(numbers: Any, blinded: bytes) -> bytes:
        entered.set()
        release.wait(30)
        return real(numbers, blinded)

    with kit.client(dist, open_store(db), blind_key=read_ring(key),
                    signing=blindkey.SigningPool(concurrent.futures.ThreadPoolExecutor(1))
                    ) as client:
        key_text = client.get("/api/blind-key?survey=honor").text
        state = json.loads(rb.blind_json(key_text, "honor"))
        request = json.dumps({"survey": "honor", "invitation": codes[0],
                              "blinded_msg": state["blinded_msg"]})
        answers = [client.post("/api/blind-sign", headers=JSON, content=request)
                   for _ in range(10)]
        statuses = [answer.status_code for answer in answers]
        assert statuses[:3] == [200, 200, 200] and set(statuses[3:]) == {429}, statuses
        assert len({answer.json()["blind_sig"] for answer in answers[:3]}) == 1
        assert int(answers[-1].headers["retry-after"]) >= 1
        assert answers[-1].json()["field"] == "invitation"

        monkeypatch.setattr(blindkey, "rsasp1", slow)
        state = json.loads(rb.blind_json(key_text, "honor"))
        trade: list[Any] = []
        trading = threading.Thread(target=lambda: trade.append(client.post(
            "/api/blind-sign", headers=JSON, content=json.dumps(
                {"survey": "honor", "invitation": codes[1],
                 "blinded_msg": state["blinded_msg"]}))))
        trading.start()
        try:
            assert entered.wait(30), "the signature was never asked for"
            health: list[Any] = []
            asking = threading.Thread(target=lambda: health.append(client.get("/api/health")))
            asking.start()
            asking.join(10)
            assert health and health[0].status_code == 200, "the event loop waited for RSA"
            assert not trade  # the trade is still being signed
        finally:
            release.set()
            trading.join(30)
        assert trade[0].status_code == 200


def test_the_signing_process_signs():
    """The default pool runs RSASP1 in a worker process; the result verifies."""
    signer = create_key_in_memory()
    key = signer.public
    prepared = rb.prepare(b"message")
    blinded, inv = rb.blind(key, prepared)
    pool = blindkey.SigningPool()
    try:
        blind_sig = run_outside_loop(pool.sign(signer, blinded))
    finally:
        pool.close()
    assert rb.finalize(key, prepared, blind_sig, inv)  # raises if it does not verify


def create_key_in_memory() -> blindkey.BlindSigner:
    from cryptography.hazmat.primitives.asymmetric import rsa

    return blindkey.BlindSigner(rsa.generate_private_key(public_exponent=65537, key_size=2048))


def test_health_counts_nothing_for_the_public(tmp_path, kit):
    """An outsider polling /api/health cannot time submissions: no counts without the
    operator's token; with it, every count."""
    dist = kit.write_dist(tmp_path / "dist")
    app = create_app(dist, open_store(tmp_path / "c.db"), operator_token=kit.OPERATOR_TOKEN)
    with TestClient(app) as client:
        before = client.get("/api/health").json()
        assert post(client, kit.body()).status_code == 201
        after = client.get("/api/health").json()
        assert before == after, (before, after)  # nothing tells a submission arrived
        assert "submissions" not in json.dumps(after) and "waiting" not in after
        assert after["status"] == "ok" and after["surveys"][0]["versions"] == [kit.VERSION]
        wrong = client.get("/api/health", headers={"authorization": "Bearer nope"}).json()
        assert "submissions" not in json.dumps(wrong)
        counted = client.get("/api/health", headers=kit.OPERATOR_HEADERS).json()
        assert counted["submissions"] == 1 and counted["surveys"][0]["submissions"] == 1


def test_operator_token_file_must_be_private_and_long(tmp_path, kit):
    from rrsite.commands.serve import read_operator_token
    from rrsite.errors import UsageError

    token = tmp_path / "token"
    token.write_text("a-secret-of-24-characters\n")
    token.chmod(0o644)
    with pytest.raises(UsageError, match="chmod 600"):
        read_operator_token(token)
    token.chmod(0o600)
    assert read_operator_token(token) == "a-secret-of-24-characters"
    token.write_text("short")
    with pytest.raises(UsageError, match="at least 16"):
        read_operator_token(token)


@pytest.mark.parametrize("settings, named", [
    ({"log_statement": "all"}, "log_statement = all"),
    ({"log_statement": "mod"}, "log_statement = mod"),
    ({"log_min_duration_statement": "0"}, "log_min_duration_statement = 0"),
    ({"log_duration": "on"}, "log_duration = on"),
    ({"shared_preload_libraries": "auto_explain", "auto_explain.log_min_duration": "0"},
     "auto_explain"),
])
def test_serve_warns_when_postgres_logs_statements(kit, tmp_path, settings, named):
    """A server that logs statements puts each submission, with its code or token, in its log in
    arrival order: `rrsite serve` says so at start, naming the setting."""
    server = kit.PgServer(settings=settings).start()
    try:
        dsn = server.create_database()
        store = open_store(dsn)
        advice = " ".join(store.advice())
        assert named in advice and "log" in advice, advice
        dist = kit.write_dist(tmp_path / "dist")
        store.add_invitations("honor", ["C" * 16])
        with kit.Server(dist, dsn) as running:
            pass
        said = running.stop()
        assert named in said, said
        if settings.get("log_statement") == "all":  # what the warning is about
            log = (server.root / "server.log").read_text()
            assert "invitation_codes" in log
    finally:
        server.remove()


def test_serve_is_silent_when_postgres_logs_nothing(postgres, pg_db):
    store = open_store(pg_db)
    assert not any("log" in advice for advice in store.advice())


def test_log_advice_reads_each_setting():
    from rrsite.collect.pgstore import log_advice

    quiet = {"log_statement": "ddl", "log_min_duration_statement": "-1",
             "log_min_duration_sample": "-1", "log_statement_sample_rate": "1",
             "log_transaction_sample_rate": "0", "log_duration": "off",
             "shared_preload_libraries": "", "session_preload_libraries": "",
             "local_preload_libraries": ""}
    assert log_advice(quiet) == []
    for change, named in (({"log_min_duration_statement": "250"}, "= 250"),
                          ({"log_min_duration_sample": "0"}, "log_min_duration_sample"),
                          ({"log_transaction_sample_rate": "0.01"}, "sample_rate = 0.01"),
                          ({"shared_preload_libraries": "pg_stat_statements"},
                           "pg_stat_statements")):
        said = log_advice({**quiet, **change})
        assert len(said) == 1 and named in said[0], said
    assert log_advice({**quiet, "log_min_duration_sample": "0",
                       "log_statement_sample_rate": "0"}) == []

