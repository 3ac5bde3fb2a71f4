"""Two-group designs and report-valued designs at the collector: validation and export columns."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rrsite.cli import main
from rrsite.core import Crosswise, StochasticLieDetector
from rrsite.spreadsheet import restore

JSON = {"content-type": "application/json"}
VERSION = "00112233aabbccdd"
SLD = StochasticLieDetector((0.3, 0.75))
QUESTIONS = [
    {"id": "cheated", "text": "Cheated?", "type": "yes-no", "sensitive": True, "required": True,
     "values": ["no", "yes"], "design": SLD.spec(), "groups": SLD.groups(),
     "rrreg": SLD.rrreg(), "epsilon": None, "delta": 0.75},
    {"id": "tax", "text": "Evaded tax?", "type": "yes-no", "sensitive": True, "required": False,
     "values": ["no", "yes"], "reports": ["different", "same"], "design": Crosswise(0.25).spec(),
     "matrix": [list(r) for r in Crosswise(0.25).matrix], "epsilon": 1.0986, "delta": 0.0},
    {"id": "year", "text": "Year?", "type": "choice", "sensitive": False, "required": False,
     "values": ["First", "Second"]},
]


@pytest.fixture
def setup(tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist", [kit.manifest(survey="groups", version=VERSION,
                                                           questions=QUESTIONS)])
    return dist, tmp_path / "collector.db"


def submission(kit, answers, groups=None):
    body = {"survey": "groups", "version": VERSION, "respondent": kit.token(), "answers": answers}
    if groups is not None:
        body["groups"] = groups
    return body


def post(client, body):
    return client.post("/api/submissions", content=json.dumps(body), headers=JSON)


@pytest.mark.parametrize(
    ("answers", "groups", "field", "words"),
    [
        ({"cheated": "yes"}, None, "groups.cheated", "missing"),
        ({"cheated": "yes"}, {}, "groups.cheated", "missing"),
        ({"cheated": "yes"}, {"cheated": 3}, "groups.cheated", "1 or 2"),
        ({"cheated": "yes"}, {"cheated": "1"}, "groups.cheated", "1 or 2"),
        ({"cheated": "yes"}, {"cheated": True}, "groups.cheated", "1 or 2"),
        ({"cheated": "yes"}, {"cheated": 1.0}, "groups.cheated", "1 or 2"),
        ({"cheated": "yes", "tax": "same"}, {"cheated": 1, "tax": 2}, "groups.tax",
         "has no groups"),
        ({"cheated": "yes"}, {"cheated": 1, "nope": 2}, "groups.nope", "unknown question"),
        ({"cheated": "yes"}, [1], "groups", "object"),
        ({"cheated": "yes", "tax": "yes"}, {"cheated": 1}, "answers.tax", "not one of"),
    ],
)
def test_refused(setup, kit, answers, groups, field, words):
    dist, db = setup
    with kit.make_client(dist, db) as client:
        response = post(client, submission(kit, answers, groups))
    assert response.status_code == 422, response.text
    assert response.json()["field"] == field
    assert words in response.json()["error"]


def test_export_puts_the_group_after_its_question(setup, kit, tmp_path):
    dist, db = setup
    sent = [
        submission(kit, {"cheated": "yes", "tax": "same", "year": "First"}, {"cheated": 2}),
        submission(kit, {"cheated": "no"}, {"cheated": 1}),
    ]
    with kit.make_client(dist, db) as client:
        for body in sent:
            assert post(client, body).status_code == 201
        again = post(client, {**sent[1], "groups": {"cheated": 2}})
        assert again.status_code == 409  # the group is part of the content
    out = tmp_path / "out.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][4:] == ["cheated", "cheated.group", "tax", "year"]
    by_token = {restore(row[2]): row for row in rows[1:]}  # the export's order: random tokens
    assert by_token[sent[0]["respondent"]][4:] == ["yes", "2", "same", "First"]
    assert by_token[sent[1]["respondent"]][4:] == ["no", "1", "", ""]
    out = tmp_path / "out.jsonl"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    records = {r["respondent"]: r for r in map(json.loads, Path(out).read_text().splitlines())}
    assert [records[b["respondent"]]["answers"] for b in sent] == [b["answers"] for b in sent]
    assert [records[b["respondent"]]["groups"] for b in sent] == [b["groups"] for b in sent]
