"""`rrsite analyze --counts`: the same estimates as from the rows, both ways; bad rows named."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from rrsite.analyze import analyze
from rrsite.analyze.api import analyze_counts
from rrsite.cli import main

from .helpers import counts_refused

SURVEY = str(Path(__file__).resolve().parents[2] / "surveys" / "honor-code.md")


def estimates(result: dict) -> list:
    return [(q["id"], q["estimate"], q["ci"], q["se"], q["n"], q.get("groups"))
            for q in result["questions"]]


def write_counts(path: Path, rows: list[tuple[str, str, str, str, int]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "version", "group", "report", "subgroup", "count"])
        for question, version, report, subgroup, count in rows:
            writer.writerow([question, version, "", report, subgroup, count])


def test_counts_of_an_export_give_its_estimates(tmp_path: Path) -> None:
    export = tmp_path / "export.csv"
    assert main(["simulate", SURVEY, "--respondents", "2000", "--truth", "violated=0.15",
                 "--seed", "4", "-o", str(export)]) == 0
    with open(export, newline="", encoding="utf-8") as handle:
        tallied = Counter((r["version"], r["violated"], r["year"]) for r in csv.DictReader(handle))
    counts = tmp_path / "counts.csv"
    write_counts(counts, [("violated", v, report, year, n)
                          for (v, report, year), n in sorted(tallied.items())])
    from_rows = analyze([export], survey=SURVEY, by="year").to_dict()
    from_counts = analyze_counts(counts, survey=SURVEY, by="year").to_dict()
    assert estimates(from_counts) == estimates(from_rows)
    assert from_counts["questions"][0]["n"] == 2000


def test_a_published_table_gives_what_its_rows_give(tmp_path: Path, capsys) -> None:
    # a table as a paper would print it: 130 "yes", 270 "no"
    from rrsite.exports.catalog import build_catalog

    version_id = build_catalog([SURVEY]).versions[0].version
    counts = tmp_path / "counts.csv"
    write_counts(counts, [("violated", "forced-response", "yes", "", 130),
                          ("violated", "forced-response", "no", "", 270)])
    export = tmp_path / "rows.csv"
    with open(export, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["survey", "version", "respondent", "submitted_at", "violated", "year",
                         "courses"])
        for i, answer in enumerate(["yes"] * 130 + ["no"] * 270):
            writer.writerow(["honor-code", version_id, f"respondent{i:016d}aaaaaa",
                             "2026-11-02T10:00Z", answer, "First", "4"])
    assert main(["analyze", "--counts", str(counts), "--survey", SURVEY, "--format",
                 "json"]) == 0
    from_counts = json.loads(capsys.readouterr().out)
    from_rows = analyze([export], survey=SURVEY).to_dict()
    assert estimates(from_counts) == estimates(from_rows)
    # independent closed form: fair forced response, pi = 2 * P(yes) - 1/2
    assert from_counts["questions"][0]["estimate"] == pytest.approx(2 * 130 / 400 - 0.5)


def test_bad_rows_are_named_with_their_line(tmp_path: Path) -> None:
    counts = tmp_path / "counts.csv"
    write_counts(counts, [("violated", "forced-response", "maybe", "", 3),
                          ("nothere", "forced-response", "yes", "", 3),
                          ("violated", "forced-response", "yes", "", -2)])
    message = counts_refused(counts, SURVEY)
    assert f"{counts}:2: report 'maybe'" in message
    assert f"{counts}:3: question 'nothere'" in message
    assert f"{counts}:4: count '-2'" in message
    assert main(["analyze", "--counts", str(counts), "--survey", SURVEY]) == 2
