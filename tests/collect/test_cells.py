"""The design cell of an `rrsite invite --frame` link: accepted, stored with the submission (part
of its content), exported as a `cell` column / key, never with the invitation code."""

from __future__ import annotations

import csv
import json

import pytest
from starlette.testclient import TestClient

from rrsite.cli import main
from rrsite.collect.server import create_app
from rrsite.collect.stores import open_store
from rrsite.spreadsheet import restore

JSON = {"content-type": "application/json"}


def post(client, body):
    return client.post("/api/submissions", content=json.dumps(body), headers=JSON)


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_cells_are_stored_and_exported(tmp_path, kit, store, request):
    dist = kit.write_dist(tmp_path / "dist")
    db = tmp_path / "c.db" if store == "sqlite" else request.getfixturevalue("pg_db")
    with TestClient(create_app(dist, open_store(db))) as client:
        with_cell = kit.body(violated="no")
        with_cell["cell"] = "Ab3_-cell9x"
        assert post(client, with_cell).status_code == 201
        assert post(client, with_cell).status_code == 200  # an identical resend
        assert post(client, {**with_cell, "cell": "Zz9_other-1"}).status_code == 409
        plain = kit.body()
        assert post(client, plain).status_code == 201
        for bad in ("short", "x" * 33, "has space!", 12345678):
            response = post(client, {**kit.body(), "cell": bad})
            assert response.status_code == 400 and response.json()["field"] == "cell", bad
    out = tmp_path / "all.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = {restore(row["respondent"]): row for row in csv.DictReader(handle)}
    assert rows[with_cell["respondent"]]["cell"] == "Ab3_-cell9x"
    assert rows[plain["respondent"]]["cell"] == ""
    assert rows[with_cell["respondent"]]["violated"] == "no"
    assert "@cell" not in out.read_text(encoding="utf-8")
    out = tmp_path / "all.jsonl"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    records = {r["respondent"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert records[with_cell["respondent"]]["cell"] == "Ab3_-cell9x"
    assert "cell" not in records[plain["respondent"]]
    assert "@cell" not in records[with_cell["respondent"]]["answers"]


def test_no_cell_column_without_cells(tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    db = tmp_path / "c.db"
    with kit.make_client(dist, db) as client:
        assert post(client, kit.body()).status_code == 201
    out = tmp_path / "all.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        assert "cell" not in next(csv.reader(handle))
