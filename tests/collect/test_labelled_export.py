"""`rrsite export --db FILE -o FILE.sav|.dta`: the collector's submissions as labelled files.

Every stored submission becomes a row whose codes agree with the CSV export of the same
database; the codebook and the R script come from the stored manifests.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyreadstat
import pytest

from rrsite.cli import main
from rrsite.spreadsheet import restore
from rrsite.survey import load_survey

ROOT = Path(__file__).resolve().parents[2]
JSON = {"content-type": "application/json"}


@pytest.fixture
def database(tmp_path: Path, kit) -> Path:
    manifest = load_survey(str(ROOT / "surveys" / "doping.md")).manifest()
    dist = kit.write_dist(tmp_path / "dist", [manifest])
    db = tmp_path / "collector.db"
    bodies = [
        {"answers": {"doped": "same", "competition": "yes", "hours": 3}, "groups":
         {"competition": 1}},
        {"answers": {"doped": "different", "competition": "no", "hours": 10.5}, "groups":
         {"competition": 2}},
        {"answers": {"doped": "same", "competition": "yes", "hours": 0}, "groups":
         {"competition": 2}},
    ]
    # One token starts with "-": the CSV guards it against spreadsheet formulas, the labelled
    # files (read by statistics programs, not spreadsheets) hold it as it is.
    tokens = ["-" + kit.token()[1:], kit.token(), kit.token()]
    with kit.make_client(dist, db) as client:
        for body, token in zip(bodies, tokens, strict=True):
            sent = {"survey": "doping", "version": manifest["version"],
                    "respondent": token, **body}
            response = client.post("/api/submissions", content=json.dumps(sent), headers=JSON)
            assert response.status_code == 201, response.text
    return db


def test_the_database_exports_as_labelled_files_that_match_its_csv(
        database: Path, tmp_path: Path) -> None:
    csv_out, sav, dta = tmp_path / "a.csv", tmp_path / "a.sav", tmp_path / "a.dta"
    assert main(["export", "--db", str(database), "-o", str(csv_out)]) == 0
    book = tmp_path / "codebook.json"
    assert main(["export", "--db", str(database), "-o", str(sav), "--codebook", str(book),
                 "--r-script", str(tmp_path / "fit.R")]) == 0
    assert main(["export", "--db", str(database), "-o", str(dta)]) == 0
    with open(csv_out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for reader, path in ((pyreadstat.read_sav, sav), (pyreadstat.read_dta, dta)):
        data, meta = reader(str(path))
        assert len(data) == len(rows) == 3
        assert meta.column_names_to_labels["doped"].startswith("[randomized report]")
        for i, row in enumerate(rows):
            assert data["respondent"].iloc[i] == restore(row["respondent"])
            doped = ["different", "same"].index(row["doped"])
            assert data["doped"].iloc[i] == doped
            if row["competition"]:
                assert data["competition"].iloc[i] == ["no", "yes"].index(row["competition"])
                assert data["competition_group"].iloc[i] == float(row["competition.group"])
            assert data["hours"].iloc[i] == float(row["hours"])
    columns = [v["column"] for v in json.loads(book.read_text("utf-8"))["variables"]]
    assert columns == list(rows[0])
    assert 'RRuni(response = y[keep], model = "SLD"' in (tmp_path / "fit.R").read_text("utf-8")
    assert 'else "' + str(sav) + '"' in (tmp_path / "fit.R").read_text("utf-8")


def test_export_says_what_it_needs(database: Path, tmp_path: Path, capsys) -> None:
    assert main(["export", "--db", str(database)]) == 2
    assert "give -o FILE" in capsys.readouterr().err
    assert main(["export", "--from", "x.csv", "-o", str(tmp_path / "x.sav")]) == 2
    assert "--manifest" in capsys.readouterr().err
    assert main(["export", "--db", str(database), "--from", "x.csv", "-o", "y.sav"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["export", "--db", str(database), "--codebook", str(tmp_path / "c.txt")]) == 2
    assert ".md, .html or .json" in capsys.readouterr().err
