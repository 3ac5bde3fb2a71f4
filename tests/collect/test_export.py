"""`rrsite export`: CSV and JSONL from the database file, offline (docs/contracts.md)."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rrsite.cli import main
from rrsite.collect.pgstore import PgStore
from rrsite.collect.server import create_app
from rrsite.collect.store import Store
from rrsite.spreadsheet import restore

JSON = {"content-type": "application/json"}
NEW_VERSION = "fedcba9876543210"
CLIMATE_VERSION = "abcdefabcdefabcd"


@pytest.fixture(scope="module")
def filled(tmp_path_factory, kit) -> tuple[Path, list[dict]]:
    """A database with two versions of one survey and a second survey, and what was sent."""
    root = tmp_path_factory.mktemp("export")
    dist = kit.write_dist(root / "dist")
    db = root / "collector.db"
    sent: list[dict] = []

    def send(client, submission):
        response = client.post("/api/submissions", content=json.dumps(submission), headers=JSON)
        assert response.status_code == 201, response.text
        sent.append(submission)

    with kit.make_client(dist, db) as client:
        send(client, kit.body(tools=["phone", "pen"], age=20, hours=2.5,
                              comment='said "hi", then\nleft'))
        send(client, kit.body(violated="no", year="First"))
    questions = [q for q in kit.QUESTIONS if q["id"] != "comment"] + [
        {"id": "club", "text": "Club?", "type": "yes-no", "required": False,
         "values": ["no", "yes"]}]
    climate = kit.manifest(survey="climate", version=CLIMATE_VERSION, title="Climate",
                           questions=[{"id": "worried", "text": "Worried?", "type": "choice",
                                       "required": True, "values": ["a", "b"]},
                                      {"id": "year", "text": "Year", "type": "choice",
                                       "required": False, "values": ["First", "Second"]}])
    kit.write_dist(dist, [kit.manifest(version=NEW_VERSION, questions=questions), climate])
    with kit.make_client(dist, db) as client:
        send(client, {**kit.body(club="yes"), "version": NEW_VERSION})
        send(client, {"survey": "climate", "version": CLIMATE_VERSION,
                      "respondent": kit.token(), "answers": {"worried": "b", "year": "First"}})
        send(client, kit.body(comment="old page, after the rebuild"))
    return db, sent


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def expected_cell(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def test_csv(filled, tmp_path, capsys):
    db, sent = filled
    out = tmp_path / "all.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    assert "5 submissions" in capsys.readouterr().err
    header, rows = read_csv(out)
    assert header == ["survey", "version", "respondent", "submitted_at", "violated", "year",
                      "tools", "age", "hours", "comment", "club", "worried"]
    assert len(rows) == len(sent)
    by_token = sorted(sent, key=lambda item: (item["survey"], item["respondent"]))
    for row, submission in zip(rows, by_token, strict=True):  # by survey, then random token
        assert row["survey"] == submission["survey"]
        assert row["version"] == submission["version"]
        assert restore(row["respondent"]) == submission["respondent"]
        assert len(row["submitted_at"]) == 17 and row["submitted_at"].endswith("Z")
        for qid in header[4:]:
            assert row[qid] == expected_cell(submission["answers"].get(qid)), qid
    first = next(r for r in rows if restore(r["respondent"]) == sent[0]["respondent"])
    assert first["tools"] == '["phone","pen"]' and first["age"] == "20"
    assert first["hours"] == "2.5" and first["comment"] == 'said "hi", then\nleft'


def test_csv_one_survey(filled, tmp_path):
    db, sent = filled
    out = tmp_path / "climate.csv"
    assert main(["export", "--db", str(db), "--survey", "climate", "-o", str(out)]) == 0
    header, rows = read_csv(out)
    assert header == ["survey", "version", "respondent", "submitted_at", "worried", "year"]
    assert [restore(row["respondent"]) for row in rows] == [
        s["respondent"] for s in sent if s["survey"] == "climate"]


def test_jsonl(filled, tmp_path):
    db, sent = filled
    out = tmp_path / "all.jsonl"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == len(sent)
    by_token = sorted(sent, key=lambda item: (item["survey"], item["respondent"]))
    for record, submission in zip(records, by_token, strict=True):
        assert set(record) == {"survey", "version", "respondent", "submitted_at", "answers"}
        assert {k: record[k] for k in ("survey", "version", "respondent", "answers")} == \
            submission


def test_stdout(filled, capsys):
    db, sent = filled
    assert main(["export", "--db", str(db), "--survey", "honor", "-o", "-",
                 "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == sum(s["survey"] == "honor" for s in sent)


def test_empty_survey_has_a_header(tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    with kit.make_client(dist, tmp_path / "c.db"):
        pass
    out = tmp_path / "empty.csv"
    assert main(["export", "--db", str(tmp_path / "c.db"), "-o", str(out)]) == 0
    header, rows = read_csv(out)
    assert header[4:] == [q["id"] for q in kit.QUESTIONS] and rows == []


def test_errors(filled, tmp_path, capsys):
    db, _ = filled
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE t (x)")
    (tmp_path / "garbage.db").write_bytes(b"not a database at all" * 100)
    previous = tmp_path / "keep.csv"
    previous.write_text("previous export\n")
    cases = [
        (["--db", str(tmp_path / "missing.db"), "-o", str(tmp_path / "x.csv")],
         "no such database file"),
        (["--db", str(other), "-o", str(tmp_path / "x.csv")], "not an rrsite collector database"),
        (["--db", str(tmp_path / "garbage.db"), "-o", str(tmp_path / "x.csv")], "garbage.db"),
        (["--db", str(db), "-o", str(tmp_path / "x.txt")], "name the file .csv or .jsonl"),
        (["--db", str(db), "--survey", "nope", "-o", str(previous)],
         "no survey 'nope' in this database (surveys: climate, honor)"),
        (["--db", str(db), "-o", str(tmp_path / "no" / "x.csv")], "does not exist"),
        (["--db", str(tmp_path), "-o", str(tmp_path / "x.csv")], "is a folder"),
    ]
    for arguments, message in cases:
        assert main(["export", *arguments]) == 2, arguments
        assert message in capsys.readouterr().err, arguments
    assert previous.read_text() == "previous export\n"
    assert not (tmp_path / "missing.db").exists()  # export never creates a database
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


BREAKS = ["\r", "\n", "\r\n"]
AFTER = ["=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "'=quoted", "plain", ""]
#: Text answers with every line break followed by every formula start (and harmless text).
LINE_TEXTS = sorted({text for brk in BREAKS for after in AFTER for text in (
    f"a{brk}{after}", f"{brk}{after}", f"a{brk}b{brk}{after}", f'"q",{brk}{after}{brk}')})
LINE_RE = re.compile(r"\r\n|\r|\n")


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_line_breaks_read_back(store, tmp_path, kit, request):
    """CR, LF and CRLF in text answers: the CSV reads back (csv module) with one row per
    submission and the sent text, no line in any cell starts a formula; JSONL exact."""
    db = request.getfixturevalue("pg_db") if store == "postgresql" else str(tmp_path / "c.db")
    dist = kit.write_dist(tmp_path / "dist")
    sent = {}
    opened = PgStore(db) if store == "postgresql" else Store(Path(db))
    with TestClient(create_app(dist, opened)) as client:
        for text in LINE_TEXTS:
            body = kit.body(comment=text)
            response = client.post("/api/submissions", content=json.dumps(body), headers=JSON)
            assert response.status_code == 201, response.text
            sent[body["respondent"]] = body
    out = tmp_path / "lines.csv"
    assert main(["export", "--db", db, "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 1 + len(sent)
    header = rows[0]
    assert all(len(row) == len(header) for row in rows)
    seen = set()
    for row in rows[1:]:
        record = dict(zip(header, row, strict=True))
        respondent = restore(record["respondent"])  # a token may start with '-'
        body = sent[respondent]
        seen.add(respondent)
        assert restore(record["comment"]) == body["answers"]["comment"]
        for cell in row:
            assert cell[:1] not in set("=+-@\t\r"), repr(cell)
            for line in LINE_RE.split(cell)[1:]:
                assert line[:1] not in set("=+-@\t"), repr(cell)
    assert seen == set(sent)
    raw = out.read_bytes()
    inside = sum(text.count("\n") for text in LINE_TEXTS)
    assert raw.count(b"\n") - inside == 1 + len(sent)  # rows end in LF, as before
    jsonl = tmp_path / "lines.jsonl"
    assert main(["export", "--db", db, "-o", str(jsonl)]) == 0
    records = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").split("\n") if line]
    assert len(records) == len(sent)
    for record in records:
        assert record["answers"] == sent[record["respondent"]]["answers"]
