"""Spreadsheet formula neutralisation: the export's apostrophe, `--keep-formulas`, and the
analyzer reading neutralised cells back to what the respondent sent."""

from __future__ import annotations

import csv
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from rrsite.analyze import analyze
from rrsite.cli import main
from rrsite.spreadsheet import neutralise, restore

JSON = {"content-type": "application/json"}
STARTERS = "=+-@\t\r"
#: Groups whose values a spreadsheet would run as formulas, plus a harmless one.
GROUPS = ["=1+1", "-2", "+3", "@SUM(A1)", "\tx", "'=quoted", "plain"]


LINE_STARTERS = set("=+-@\t")
BREAK_RE = re.compile(r"\r\n|\r|\n")


def guarded_lines(text: str) -> int:
    """How many places of the text a spreadsheet could run as a formula: the cell's start and the
    start of each line after a CR, LF or CRLF (any number of apostrophes before the trigger)."""
    lines = BREAK_RE.split(text)
    count = int(text.lstrip("'")[:1] in set(STARTERS))
    return count + sum(line.lstrip("'")[:1] in LINE_STARTERS for line in lines[1:])


def test_rule_by_brute_force():
    """Every string over a small alphabet: no line of the cell starts a formula, read back exactly,
    two texts never give one cell, and only apostrophes are added, one per formula-like line."""
    alphabet = ["'", "=", "-", "\t", "\r", "\n", "a"]
    seen: dict[str, str] = {}
    for length in range(7):
        for letters in itertools.product(alphabet, repeat=length):
            text = "".join(letters)
            cell = neutralise(text)
            assert cell[:1] not in set(STARTERS), repr(text)  # never runs as a formula
            for line in BREAK_RE.split(cell)[1:]:
                assert line[:1] not in LINE_STARTERS, repr(text)
            assert restore(cell) == text, repr(text)
            assert seen.setdefault(cell, text) == text, "two texts written as the same cell"
            assert cell.replace("'", "") == text.replace("'", "")
            assert len(cell) - len(text) == guarded_lines(text), repr(text)
    for text, cell in [("=1", "'=1"), ("'=1", "''=1"), ("'hello", "'hello"), ("a\r=1", "a\r'=1"),
                       ("\r=1", "'\r'=1"), ("a\r\n-1", "a\r\n'-1"), ("a\n\t@", "a\n'\t@")]:
        assert neutralise(text) == cell


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def grouped_dist(tmp_path: Path, kit: Any) -> tuple[dict, Path]:
    """The kit's survey with its year question turned into a choice of GROUPS: its manifest, and
    the site built from it."""
    questions = [q for q in kit.QUESTIONS if q["id"] != "year"] + [
        {"id": "year", "text": "Group", "type": "choice", "sensitive": False, "required": True,
         "values": GROUPS, "options": [{"value": v, "label": v} for v in GROUPS]}]
    manifest = kit.manifest(questions=questions)
    return manifest, kit.write_dist(tmp_path / "dist", [manifest])


@pytest.fixture
def hostile(tmp_path, kit) -> tuple[Path, list[dict], dict]:
    """A database holding formula-like text answers, choice values and a token starting '-'."""
    manifest, dist = grouped_dist(tmp_path, kit)
    db = tmp_path / "c.db"
    sent: list[dict] = []
    with kit.make_client(dist, db) as client:
        for i in range(140):
            group = GROUPS[i % len(GROUPS)]
            respondent = ("-" if i % 3 == 0 else "") + kit.token()
            body = kit.body(respondent=respondent, violated="yes" if i % 4 else "no",
                            year=group, comment=group + " said", hours=-0.0 if i == 0 else 1)
            response = client.post("/api/submissions", content=json.dumps(body), headers=JSON)
            assert response.status_code == 201, response.text
            sent.append(body)
    # the export's order: by survey, then (random) respondent token
    return db, sorted(sent, key=lambda b: (b["survey"], b["respondent"])), manifest


def test_export_neutralises_text_cells(hostile, tmp_path):
    db, sent, _ = hostile
    out = tmp_path / "safe.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    rows = read_rows(out)
    assert len(rows) == len(sent)
    for row, body in zip(rows, sent, strict=True):
        for column, value in row.items():
            if column != "hours":  # a JSON number: "-0.0" is a number to a spreadsheet too
                assert value[:1] not in STARTERS or value == "", value
        year = body["answers"]["year"]
        expected = year if year == "plain" else "'" + year
        assert row["year"] == expected
        assert row["comment"] == ("'" if year != "plain" else "") + year + " said"
        token = body["respondent"]
        assert row["respondent"] == ("'" + token if token[0] == "-" else token)
        assert row["hours"] == json.dumps(body["answers"]["hours"])  # numbers: never changed
    raw = tmp_path / "raw.csv"
    assert main(["export", "--db", str(db), "-o", str(raw), "--keep-formulas"]) == 0
    for row, body in zip(read_rows(raw), sent, strict=True):
        assert row["year"] == body["answers"]["year"]
        assert row["comment"] == body["answers"]["comment"]
        assert row["respondent"] == body["respondent"]
    jsonl = tmp_path / "all.jsonl"
    assert main(["export", "--db", str(db), "-o", str(jsonl)]) == 0
    records = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert [r["answers"]["year"] for r in records] == [b["answers"]["year"] for b in sent]


def test_analyze_reads_neutralised_cells_back(hostile, tmp_path):
    db, sent, manifest = hostile
    out = tmp_path / "safe.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    assert "'=1+1" in out.read_text(encoding="utf-8")
    result = analyze(out, manifests=[manifest], by="year", progress=False)
    violated = result.question("violated")
    assert violated.estimate.n == len(sent)  # no row rejected, no token misread as a duplicate
    for group in GROUPS:
        mine = [b["answers"]["violated"] for b in sent if b["answers"]["year"] == group]
        assert violated.groups[group].counts == {"no": mine.count("no"),
                                                 "yes": mine.count("yes")}, group


def test_analyze_reads_multiline_text_back(tmp_path, kit):
    """Text answers with CR, LF and CRLF followed by formulas: every row reaches the analyzer
    (a bare CR used to go out unquoted and split its row in two)."""
    manifest, dist = grouped_dist(tmp_path, kit)
    db = tmp_path / "c.db"
    sent = []
    with kit.make_client(dist, db) as client:
        for i in range(90):
            brk = ["\r", "\n", "\r\n"][i % 3]
            group = GROUPS[i % len(GROUPS)]
            body = kit.body(violated="yes" if i % 4 else "no", year=group,
                            comment=f"x{brk}{group}{brk}{GROUPS[(i + 1) % len(GROUPS)]}")
            response = client.post("/api/submissions", content=json.dumps(body), headers=JSON)
            assert response.status_code == 201, response.text
            sent.append(body)
    out = tmp_path / "safe.csv"
    assert main(["export", "--db", str(db), "-o", str(out)]) == 0
    result = analyze(out, manifests=[manifest], by="year", progress=False)
    violated = result.question("violated")
    assert violated.estimate.n == len(sent)
    for group in GROUPS:
        mine = [b["answers"]["violated"] for b in sent if b["answers"]["year"] == group]
        assert violated.groups[group].counts == {"no": mine.count("no"),
                                                 "yes": mine.count("yes")}, group
