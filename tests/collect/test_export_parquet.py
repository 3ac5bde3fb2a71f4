"""`rrsite export --format parquet`: the CSV's columns and rows, as text, read back the same."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest

from rrsite.analyze import analyze
from rrsite.cli import main
from rrsite.spreadsheet import restore

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def filled(tmp_path_factory, kit) -> tuple[Path, Path, list[dict]]:
    """A database with a few submissions (one with a formula-like, multi-line text)."""
    root = tmp_path_factory.mktemp("parquet")
    dist = kit.write_dist(root / "dist")
    db = root / "collector.db"
    sent = [kit.body(tools=["phone", "pen"], age=20, hours=2.5, comment='=1+1, "hi"\nthen'),
            kit.body(violated="no", year="First"),
            kit.body(comment="-5 and, a comma"),
            kit.body(violated="yes", year="Second", age=33)]
    with kit.make_client(dist, db) as client:
        for submission in sent:
            response = client.post("/api/submissions", content=json.dumps(submission),
                                   headers=JSON)
            assert response.status_code == 201, response.text
    return db, dist / "honor" / "survey.json", sent


def test_parquet_holds_the_csv_cells_as_stored(filled, tmp_path, capsys):
    db, _, sent = filled
    out = tmp_path / "all.parquet"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    assert "4 submissions" in capsys.readouterr().err
    assert out.read_bytes()[:4] == b"PAR1"
    csv_out = tmp_path / "all.csv"
    assert main(["export", "--db", str(db), "-o", str(csv_out)]) == 0
    with open(csv_out, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        rows = [[restore(cell) for cell in row] for row in reader]
    with duckdb.connect() as connection:
        described = connection.execute("DESCRIBE SELECT * FROM read_parquet(?)",
                                       [str(out)]).fetchall()
        stored = connection.execute("SELECT * FROM read_parquet(?)", [str(out)]).fetchall()
    assert [d[0] for d in described] == header
    assert {d[1] for d in described} == {"VARCHAR"}
    assert [[cell or "" for cell in row] for row in stored] == rows
    comment = header.index("comment")
    assert '=1+1, "hi"\nthen' in [row[comment] for row in stored]  # no formula guard
    assert len(stored) == len(sent)


def test_parquet_analyzes_as_the_csv(filled, tmp_path):
    db, manifest, _ = filled
    parquet, csv_file = tmp_path / "e.parquet", tmp_path / "e.csv"
    assert main(["export", "--db", str(db), "-o", str(parquet)]) == 0
    assert main(["export", "--db", str(db), "-o", str(csv_file)]) == 0
    for engine in ("duckdb", "numpy"):
        from_parquet = analyze([parquet], manifests=[manifest], engine=engine).to_dict()
        from_csv = analyze([csv_file], manifests=[manifest], engine=engine).to_dict()
        assert from_parquet["questions"] == from_csv["questions"]
        assert from_parquet["rows"] == from_csv["rows"]


def test_parquet_to_stdout_and_by_format(filled, tmp_path, capsysbinary):
    db, _, _ = filled
    assert main(["export", "--db", str(db), "-o", "-", "--format", "parquet"]) == 0
    data = capsysbinary.readouterr().out
    assert data[:4] == b"PAR1" and data[-4:] == b"PAR1"
    named = tmp_path / "named.out"
    assert main(["export", "--db", str(db), "-o", str(named), "--format", "parquet"]) == 0
    assert named.read_bytes()[:4] == b"PAR1"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_failed_parquet_export_keeps_the_previous_file(tmp_path):
    previous = tmp_path / "keep.parquet"
    previous.write_bytes(b"old")
    assert main(["export", "--db", str(tmp_path / "missing.db"), "-o", str(previous)]) != 0
    assert previous.read_bytes() == b"old"
