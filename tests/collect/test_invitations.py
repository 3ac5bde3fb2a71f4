"""Invitation codes: `rrsite invite`, each code accepted once, forged and missing codes refused,
and the code's use kept in a table that cannot be joined to the submission."""

from __future__ import annotations

import csv
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from rrsite.cli import main
from rrsite.collect.store import BAD_CODE, STORED, USED_CODE, Store, code_hash

JSON = {"content-type": "application/json"}
URL = "https://surveys.example.org/honor/"


def invite(tmp_path: Path, db: Path, n: int, name: str = "codes.csv") -> list[str]:
    out = tmp_path / name
    assert main(["invite", "--survey", "honor", "-n", str(n), "--url", URL, "-o", str(out),
                 "--db", str(db)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        assert row["link"] == f"{URL}#invitation={row['code']}"  # in the fragment only
        assert "?" not in row["link"]
    return [row["code"] for row in rows]


def post(client, body):
    return client.post("/api/submissions", content=json.dumps(body), headers=JSON)


def test_invite_writes_codes_and_stores_only_hashes(tmp_path, capsys):
    db = tmp_path / "c.db"
    codes = invite(tmp_path, db, 500)
    assert "500 codes" in capsys.readouterr().err
    assert len(set(codes)) == 500
    assert all(len(code) == 16 for code in codes)
    with sqlite3.connect(db) as connection:
        stored = {row[0] for row in connection.execute(
            "SELECT code_hash FROM invitations WHERE survey = 'honor' AND used = 0")}
    assert stored == {code_hash(code) for code in codes}
    raw = db.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("c.db-*"))
    assert not any(code.encode() in raw for code in codes)  # the codes themselves: not stored
    # an existing file is never overwritten: its codes may have been sent out already
    before = (tmp_path / "codes.csv").read_bytes()
    assert main(["invite", "--survey", "honor", "-n", "3", "--url", URL,
                 "-o", str(tmp_path / "codes.csv"), "--db", str(db)]) == 2
    assert "the file exists" in capsys.readouterr().err
    assert (tmp_path / "codes.csv").read_bytes() == before
    for option, value, message in (("-n", "0", "-n must be"), ("--url", "ftp://x", "--url"),
                                   ("--url", URL + "#x", "--url"),
                                   ("--survey", "../x", "not a survey")):
        args = {"--survey": "honor", "-n": "2", "--url": URL, option: value}
        argv = ["invite", *[part for pair in args.items() for part in pair],
                "-o", str(tmp_path / "new.csv"), "--db", str(db)]
        assert main(argv) == 2
        assert message in capsys.readouterr().err
        assert not (tmp_path / "new.csv").exists()


def test_each_code_once_forged_and_missing_refused(tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    db = tmp_path / "c.db"
    codes = invite(tmp_path, db, 3)
    with kit.make_client(dist, db) as client:
        missing = post(client, kit.body())
        assert missing.status_code == 403 and missing.json()["field"] == "invitation"
        assert "personal invitation link" in missing.json()["error"]
        forged = post(client, {**kit.body(), "invitation": "A" * 16})
        assert forged.status_code == 403 and "not valid" in forged.json()["error"]
        malformed = post(client, {**kit.body(), "invitation": "short"})
        assert malformed.status_code == 400 and malformed.json()["field"] == "invitation"
        first = {**kit.body(), "invitation": codes[0]}
        assert post(client, first).status_code == 201
        assert post(client, first).status_code == 200  # the page's resend: still a duplicate
        again = post(client, {**kit.body(), "invitation": codes[0]})
        assert again.status_code == 403 and "already been used" in again.json()["error"]
        assert post(client, {**kit.body(), "invitation": codes[1]}).status_code == 201
        assert client.get("/api/health").json()["submissions"] == 2
    with sqlite3.connect(db) as connection:
        used = dict(connection.execute("SELECT code_hash, used FROM invitations"))
    assert used == {code_hash(codes[0]): 1, code_hash(codes[1]): 1, code_hash(codes[2]): 0}


def test_a_survey_without_invitations_refuses_a_code(tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    with kit.make_client(dist, tmp_path / "c.db") as client:
        assert post(client, kit.body()).status_code == 201
        assert post(client, {**kit.body(), "invitation": "B" * 16}).status_code == 403


def test_concurrent_use_of_one_code_stores_one(tmp_path, kit):
    db = tmp_path / "c.db"
    store = Store(db)
    store.add_invitations("honor", ["C" * 16])
    store.start()
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def send() -> None:
        barrier.wait()
        outcomes.append(store.submit_sync("honor", kit.VERSION, kit.token(),
                                          {"violated": "yes"}, "C" * 16))

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.close()
    assert sorted(outcomes) == sorted([STORED] + [USED_CODE] * 7)
    assert BAD_CODE not in outcomes


def test_the_use_of_a_code_cannot_be_joined_to_the_submission(tmp_path, kit):
    """The invitations table has no time, no order and no reference: only survey, hash, used."""
    dist = kit.write_dist(tmp_path / "dist")
    db = tmp_path / "c.db"
    codes = invite(tmp_path, db, 20)
    with kit.make_client(dist, db) as client:
        for code in codes[::2]:
            assert post(client, {**kit.body(), "invitation": code}).status_code == 201
    with sqlite3.connect(db) as connection:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(invitations)")]
        assert columns == ["survey", "code_hash", "used"]
        with pytest.raises(sqlite3.OperationalError):  # WITHOUT ROWID: no insertion order
            connection.execute("SELECT rowid FROM invitations")
        submission_columns = [row[1] for row in connection.execute(
            "PRAGMA table_info(submissions)")]
        assert not any("invit" in name or "code" in name for name in submission_columns)
        stored = "".join(row[0] for row in connection.execute("SELECT answers FROM submissions"))
        assert not any(code in stored or code_hash(code) in stored for code in codes)
        # the table reads back in hash order, unrelated to the order codes were used
        order = [row[0] for row in connection.execute("SELECT code_hash FROM invitations")]
        assert order == sorted(order)
