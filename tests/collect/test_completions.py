"""The completion record of panel surveys (`panel: record: true`): the collector keeps each
participant's digest apart from the answers, in a set per survey, in both stores; `rrsite
completions` matches a panel's list of ids against it. The unlinkability of the record is
measured in test_completion_unlinkability.py."""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from rrsite.collect.completion.ids import completion_digest
from rrsite.collect.completion.record import DIGEST, split, with_digest
from rrsite.collect.pgstore import PgStore, run_outside_loop
from rrsite.collect.store import Store, StoreUnavailable

JSON = {"content-type": "application/json"}
PANEL = {"provider": "prolific", "id": "PROLIFIC_PID", "name": "Prolific",
         "complete": "C1A2B3C4", "redirect": None, "screen_out": None, "over_quota": None,
         "no_consent": None, "record": True}


def digest_hex(participant: str, survey: str = "honor") -> str:
    """What the page sends (panel.js), computed here independently of rrsite's code."""
    return hashlib.sha256(f"rrsite-completion\n{survey}\n{participant}".encode()).hexdigest()


def panel_dist(kit: Any, root: Path, record: bool = True) -> Path:
    manifest = kit.manifest()
    manifest["panel"] = {**PANEL, "record": record}
    return kit.write_dist(root, [manifest])


def post(client: Any, body: dict[str, Any]) -> Any:
    return client.post("/api/submissions", content=json.dumps(body), headers=JSON)


def stored_digests(db: Path) -> list[bytes]:
    connection = sqlite3.connect(db)
    try:
        row = connection.execute("SELECT digests FROM completion_sets WHERE survey = 'honor'"
                                 ).fetchone()
        return split(row[0] if row else None)
    finally:
        connection.close()


def test_the_digest_is_kept_apart_from_the_answers(tmp_path: Path, kit: Any) -> None:
    dist = panel_dist(kit, tmp_path / "dist")
    db = tmp_path / "c.db"
    with kit.make_client(dist, db) as client:
        first = {**kit.body(), "completion": digest_hex("5f1a2b3c4d5e6f7a8b9c0d1e")}
        assert post(client, first).status_code == 201
        assert post(client, first).status_code == 200  # a resend: recorded once
        second = {**kit.body(), "completion": digest_hex("0a1b2c3d4e5f6a7b8c9d0e1f")}
        assert post(client, second).status_code == 201
        assert post(client, kit.body()).status_code == 201  # a participant without an id
    digests = stored_digests(db)
    want = sorted(bytes.fromhex(digest_hex(p)) for p in ("5f1a2b3c4d5e6f7a8b9c0d1e",
                                                          "0a1b2c3d4e5f6a7b8c9d0e1f"))
    assert digests == want  # sorted: a set, not an order of arrival
    connection = sqlite3.connect(db)
    answers = [json.loads(row[0]) for row in connection.execute("SELECT answers FROM submissions")]
    connection.close()
    assert all(set(a) == {"violated", "year"} for a in answers) and len(answers) == 3
    export = tmp_path / "export.jsonl"
    subprocess.run([sys.executable, "-m", "rrsite", "export", "--db", str(db), "-o", str(export)],
                   check=True, capture_output=True)
    text = export.read_text()
    assert all(d.hex() not in text for d in digests) and "completion" not in text


@pytest.mark.parametrize(("completion", "status"), [
    ("ABCDEF" * 10 + "abcd", 400), ("0" * 63, 400), (42, 400), ("0" * 64 + "0", 400)])
def test_a_malformed_completion_is_refused(tmp_path: Path, kit: Any, completion: object,
                                           status: int) -> None:
    with kit.make_client(panel_dist(kit, tmp_path / "dist"), tmp_path / "c.db") as client:
        response = post(client, {**kit.body(), "completion": completion})
    assert response.status_code == status
    assert response.json()["field"] == "completion"


def test_a_survey_without_a_record_refuses_a_completion(tmp_path: Path, kit: Any) -> None:
    dist = panel_dist(kit, tmp_path / "dist", record=False)
    with kit.make_client(dist, tmp_path / "c.db") as client:
        response = post(client, {**kit.body(), "completion": digest_hex("x")})
        assert response.status_code == 422 and response.json()["field"] == "completion"
        assert post(client, kit.body()).status_code == 201
    assert stored_digests(tmp_path / "c.db") == []


def test_a_record_that_cannot_be_written_is_a_503_and_the_resend_records_it(
        tmp_path: Path, kit: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = panel_dist(kit, tmp_path / "dist")
    db = tmp_path / "c.db"
    failing = {"on": True}
    original = Store.record_completion

    async def flaky(self: Store, survey: str, digest: bytes) -> str:
        if failing["on"]:
            raise StoreUnavailable("disk full")
        return await original(self, survey, digest)

    monkeypatch.setattr(Store, "record_completion", flaky)
    body = {**kit.body(), "completion": digest_hex("participant-1")}
    with kit.make_client(dist, db) as client:
        first = post(client, body)
        assert first.status_code == 503 and first.headers["retry-after"] == "1"
        failing["on"] = False
        assert post(client, body).status_code == 200  # the submission was stored: a duplicate
    assert stored_digests(db) == [bytes.fromhex(digest_hex("participant-1"))]


def test_the_set_helpers_keep_the_digests_sorted_and_unique() -> None:
    digests: list[bytes] = []
    for value in (b"\x03", b"\x01", b"\x02", b"\x01"):
        added = with_digest(digests, value * DIGEST)
        if added is not None:
            digests = added
    assert digests == [b"\x01" * DIGEST, b"\x02" * DIGEST, b"\x03" * DIGEST]
    assert split(b"".join(digests)) == digests
    assert completion_digest("honor", "abc").hex() == digest_hex("abc")


def test_postgres_keeps_the_same_record(pg_db: str, tmp_path: Path, kit: Any) -> None:
    from starlette.testclient import TestClient

    from rrsite.collect.server import create_app

    dist = panel_dist(kit, tmp_path / "dist")
    with TestClient(create_app(dist, PgStore(pg_db))) as client:
        for participant in ("p1", "p2", "p1"):
            body = {**kit.body(), "completion": digest_hex(participant)}
            assert post(client, body).status_code == 201
        body = {**kit.body(), "completion": digest_hex("p3")}
        assert post(client, body).status_code == 201
        assert post(client, body).status_code == 200

    async def read() -> list[Any]:
        connection = await asyncpg.connect(pg_db)
        try:
            return list(await connection.fetch("SELECT survey, digests FROM completion_sets"))
        finally:
            await connection.close()

    rows = run_outside_loop(read())
    assert [row[0] for row in rows] == ["honor"]
    assert split(rows[0][1]) == sorted(bytes.fromhex(digest_hex(p)) for p in ("p1", "p2", "p3"))


def write_ids(path: Path, ids: list[str], separator: str = ",") -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=separator)
        writer.writerow(["Submission id", "Participant id", "Status"])
        for number, participant in enumerate(ids):
            writer.writerow([f"S{number}", participant, "AWAITING REVIEW"])


@pytest.mark.parametrize("separator", [",", ";"])
def test_rrsite_completions_matches_a_panels_list(tmp_path: Path, kit: Any,
                                                  separator: str) -> None:
    dist = panel_dist(kit, tmp_path / "dist")
    db = tmp_path / "c.db"
    with kit.make_client(dist, db) as client:
        for participant in ("p1", "p3", "not-listed"):
            assert post(client, {**kit.body(), "completion": digest_hex(participant)}
                        ).status_code == 201
    ids = tmp_path / "participants.csv"
    write_ids(ids, ["p1", "p2", "p3", "p4"], separator)
    out = tmp_path / "completed.csv"
    result = subprocess.run(
        [sys.executable, "-m", "rrsite", "completions", "--db", str(db), "--survey", "honor",
         "--ids", str(ids), "--column", "Participant id", "-o", str(out)],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [(r["Participant id"], r["completed"]) for r in rows] == [
        ("p1", "yes"), ("p2", "no"), ("p3", "yes"), ("p4", "no")]
    assert "2 of 4 ids" in result.stderr and "1 recorded completion match no id" in result.stderr


def test_rrsite_completions_refuses_a_list_without_ids(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    Store(db).close()
    ids = tmp_path / "list.csv"
    ids.write_text("name,email\nAda,ada@example.org\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "rrsite", "completions", "--db", str(db), "--survey", "honor",
         "--ids", str(ids)], capture_output=True, text=True)
    assert result.returncode == 2
    assert "no column whose name contains 'id'" in result.stderr
    ids.write_text("Participant id\np1\n\n,\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "rrsite", "completions", "--db", str(db), "--survey", "honor",
         "--ids", str(ids)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.splitlines() == ["Participant id,completed",
                                                                      "p1,no"]


def test_postgres_warns_of_a_logging_wal_when_a_survey_keeps_a_record(pg_db: str,
                                                                       kit: Any) -> None:
    """The session's server logs rewritten tables (the default wal_level): a collector whose
    survey keeps a completion record says so at start-up, as for invitation codes."""
    store = PgStore(pg_db)
    try:
        store.register_manifests([kit.manifest()])
        assert store.advice() == []
        manifest = kit.manifest(version="fedcba9876543210")
        manifest["panel"] = PANEL
        store.register_manifests([manifest])
        advice = store.advice()
        assert len(advice) == 1 and "panel completions recorded" in advice[0]
        assert "wal_level = minimal" in advice[0]
    finally:
        store.close()
