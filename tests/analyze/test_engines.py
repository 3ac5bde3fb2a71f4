"""Each engine on the same exports: identical estimates, rejection counts and shown rows.

rrsite's own reader (engine "numpy", block by block) is the reference; DuckDB (engine "duckdb",
rrsite.exports.sql) must give the very same analysis, to the JSON report's last digit, on
exports holding bad rows of every kind: CSV read both ways, JSONL, gzip, Parquet, several files.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import duckdb
import pytest

from rrsite.analyze import analyze
from rrsite.cli import main

from .helpers import (
    SURVEY,
    VERSION,
    VERSION_2,
    bad_jsonl_clubs,
    bad_jsonl_lines,
    good_jsonl,
    manifest,
    token,
    write_csv,
)
from .helpers import write_manifest as write_manifest_file
from .test_validation import V2_QUESTIONS, bad_rows, good_rows

SURVEYS = Path(__file__).resolve().parents[2] / "surveys"


def both(paths, **options) -> dict:
    """The analysis of each engine; they must be equal (and DuckDB must really have run)."""
    reference = analyze(paths, engine="numpy", **options).to_dict()
    engine = analyze(paths, engine="duckdb", **options).to_dict()
    assert not [note for note in engine["notes"] if "own reader" in note], engine["notes"]
    assert engine == reference
    return reference


@pytest.fixture
def manifests(tmp_path):
    return [write_manifest_file(tmp_path / "v1.json", manifest()),
            write_manifest_file(tmp_path / "v2.json", manifest(VERSION_2, V2_QUESTIONS))]


def every_bad_row() -> list[dict[str, str]]:
    return good_rows() + [r for r, _, _ in bad_rows()]


def test_every_reason_in_a_plain_csv(tmp_path, manifests):
    export = write_csv(tmp_path / "export.csv", every_bad_row())
    assert b'"' not in export.read_bytes()
    result = both([export], manifests=manifests)
    assert result["rows"]["accepted"] == 40
    assert result["rows"]["rejected"] == len(bad_rows())
    both([export], manifests=manifests, by="year")


def test_every_reason_with_quotes_gzip_and_crlf(tmp_path, manifests):
    rows = every_bad_row()
    rows[1]["clubs"] = '["chess","rowing"]'
    rows[2]["comment"] = 'two\nlines, "quoted"'
    rows[3]["comment"] = "x" * 30 + "\n"
    quoted = write_csv(tmp_path / "quoted.csv", rows)
    assert b'"' in quoted.read_bytes()
    both([quoted], manifests=manifests)
    packed = tmp_path / "quoted.csv.gz"
    packed.write_bytes(gzip.compress(quoted.read_bytes()))
    both([packed], manifests=manifests, by="year")
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(write_csv(tmp_path / "plain.csv", every_bad_row()).read_bytes()
                     .replace(b"\n", b"\r\n"))
    both([crlf], manifests=manifests)


def test_malformed_rows_blank_lines_and_lines_spanning_records(tmp_path, manifests):
    header = ",".join(["survey", "version", "respondent", "submitted_at", "violated", "major",
                       "year", "age", "comment", "clubs"])

    def line(i, comment="", extra=""):
        cells = [SURVEY, VERSION, token(i), "2026-11-22T13:05Z", "yes", "arts", "First", "20",
                 comment, ""]
        return ",".join(cells) + extra

    text = "\n".join([
        header, line(1), line(2, '"a\nb\nc"'), "", line(3, extra=",EXTRA"), line(4),
        ",".join(line(5).split(",")[:-3]), "", "", line(6, '"multi\n\nline"'), line(7, "bad,"),
        line(8, '"' + "y" * 25 + '"'), line(2), line(9, "'=1+1"), line(10, '"a\n\'=b"'),
        '""', line(11),
    ]) + "\n"
    export = tmp_path / "export.csv"
    export.write_text(text)
    result = both([export], manifests=manifests)
    shown = {r: [(e["row"], e["message"]) for e in v["examples"]]
             for r, v in result["rejected"].items()}
    assert shown["malformed-row"] == [(7, "11 columns where the header has 10"),
                                      (9, "7 columns where the header has 10"),
                                      (15, "11 columns where the header has 10")]
    assert shown["duplicate-respondent"][0][0] == 17
    assert shown["invalid-value"] == [(16, "comment: text longer than 20 characters (or not "
                                           "text)")]
    assert result["rows"]["accepted"] == 7  # the line holding only "" is blank, as skipped


def test_duplicates_across_files(tmp_path, manifests):
    monday = write_csv(tmp_path / "monday.csv", good_rows(30))
    friday = write_csv(tmp_path / "friday.csv", good_rows(40))
    result = both([monday, friday], manifests=manifests, by="year")
    assert result["rejected"]["duplicate-respondent"]["count"] == 30
    assert result["rejected"]["duplicate-respondent"]["examples"][0]["file"] == str(friday)
    # a file without a respondent column is not checked for duplicates, the others are
    no_tokens = tmp_path / "no-tokens.csv"
    write_csv(no_tokens, good_rows(10), header=["survey", "version", "submitted_at", "violated",
                                                 "major", "year"])
    both([monday, no_tokens, friday], manifests=manifests)


def jsonl_records(rows):
    records = []
    for r in rows:
        r = dict(r)
        if r["clubs"].startswith("["):
            r["clubs"] = json.loads(r["clubs"])
        if r["age"].isdigit():
            r["age"] = int(r["age"])
        answers = {k: v for k, v in r.items()
                   if k not in ("survey", "version", "respondent", "submitted_at")
                   and v not in ("", None)}
        records.append({"survey": r["survey"], "version": r["version"],
                        "respondent": r["respondent"], "submitted_at": r["submitted_at"],
                        "answers": answers})
    return records


def test_jsonl_every_reason_and_its_own(tmp_path, manifests):
    good = good_jsonl()
    lines = [json.dumps(r) for r in jsonl_records(every_bad_row())] + [
        "",
        "   ",
        *bad_jsonl_lines(good),
        json.dumps(good | {"respondent": token(11), "survey": 7}),
        json.dumps(good | {"respondent": token(12), "version": None}),
        json.dumps(good | {"respondent": token(13), "groups": None}),
        json.dumps(good | {"respondent": token(14), "groups": {"violated": 1}}),
        *bad_jsonl_clubs(good),
        json.dumps(good | {"respondent": token(15), "answers": {"clubs": '["rowing"]',
                                                                 "age": 30.0, "comment": 5}}),
        json.dumps(good | {"respondent": token(16), "answers": {"age": 1e300 * 10}})
        .replace("Infinity", "1e400"),
        json.dumps(good | {"respondent": token(17), "answers": {"comment": "café"}}),
        '{"survey": "x"} trailing',
    ]
    export = tmp_path / "export.jsonl"
    export.write_text("\n".join(lines) + "\n")
    result = both([export], manifests=manifests, by="year")
    counts = {reason: entry["count"] for reason, entry in result["rejected"].items()}
    assert counts["malformed-json"] == 5
    assert counts["missing-field"] == 5


def test_parquet_reads_as_its_csv(tmp_path, manifests):
    export = write_csv(tmp_path / "export.csv", every_bad_row())
    parquet = tmp_path / "export.parquet"
    with duckdb.connect() as connection:
        connection.execute(f"COPY (SELECT * FROM read_csv('{export}', all_varchar=true)) TO "
                           f"'{parquet}' (FORMAT parquet)")
    from_parquet = both([parquet], manifests=manifests, by="year")
    from_csv = analyze([export], manifests=manifests, by="year").to_dict()
    assert from_parquet["questions"] == from_csv["questions"]
    for reason, entry in from_csv["rejected"].items():
        other = from_parquet["rejected"][reason]
        assert other["count"] == entry["count"]
        # a Parquet row is its record number; the CSV's line is one more (the header)
        assert [(e["row"] + 1, e["message"]) for e in other["examples"]] == [
            (e["row"], e["message"]) for e in entry["examples"]]


def inject(export: Path, changes: list[dict[str, str]], copies: int = 3) -> Path:
    """Bad rows added to a simulated export: each change applied to a copy of a good row."""
    with open(export, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = list(reader.fieldnames or [])
        rows = list(reader)
    extra = []
    for i, change in enumerate(changes):
        for j in range(copies):
            base = dict(rows[(7 * i + j) % len(rows)])
            base["respondent"] = f"bad{i:04d}x{j:03d}" + "z" * 14
            base.update(change)
            extra.append(base)
    rows = rows[:len(rows) // 2] + extra + rows[len(rows) // 2:] + rows[:5]  # 5 duplicates
    out = export.with_name("bad-" + export.name)
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name, truths, by, changes", [
    ("hidden-numbers.md", ["undeclared=lognormal:7,1", "days=poisson:8,zeros:0.6"], "region",
     [{"undeclared": "-99999999"}, {"undeclared": "abc"}, {"days": "0.5"}, {"days": "1e400"},
      {"days": "31"}, {"region": "Atlantis"}, {"undeclared": ""}]),
    ("doping.md", [], None,
     [{"doped": "maybe"}, {"sld.group": "3"}, {"sld.group": ""}, {"doped": ""}]),
    ("undeclared-income.md", [], "work", [{"undeclared": "lots"}, {"work": ""}]),
    ("honor-code.md", ["violated=0.2"], "year", [{"violated": "Yes"}, {"year": ""}]),
])
def test_simulated_surveys_with_bad_rows(tmp_path, name, truths, by, changes):
    survey = SURVEYS / name
    export = tmp_path / "export.csv"
    arguments = ["simulate", str(survey), "--respondents", "3000", "--seed", "11", "-o",
                 str(export)]
    for truth in truths:
        arguments += ["--truth", truth]
    assert main(arguments) == 0
    with open(export, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    changes = [c for c in changes if all(k in header for k in c)]
    assert changes, header
    bad = inject(export, changes)
    result = both([bad], survey=survey, by=by)
    assert result["rejected"]["duplicate-respondent"]["count"] == 5
    parquet = tmp_path / "bad.parquet"
    with duckdb.connect() as connection:
        connection.execute(f"COPY (SELECT * FROM read_csv('{bad}', all_varchar=true)) TO "
                           f"'{parquet}' (FORMAT parquet)")
    assert both([parquet], survey=survey, by=by)["questions"] == result["questions"]


def test_a_mapped_csv_without_a_version_column(tmp_path):
    single = write_manifest_file(tmp_path / "v1.json", manifest())
    header = ["Form Name", "Token", "Q1", "major", "year", "created_at"]
    rows = [{"Form Name": "x", "Token": token(i), "Q1": ["yes", "no", "maybe", ""][i % 4],
             "major": "arts", "year": "First", "created_at": "today"} for i in range(40)]
    export = write_csv(tmp_path / "netlify.csv", rows, header=header)
    result = both([export], manifests=[single], mapping={"Q1": "violated"})
    assert result["rejected"]["invalid-value"]["count"] == 10


def test_two_group_and_numbers_in_json_lines(tmp_path):
    survey = SURVEYS / "doping.md"
    export = tmp_path / "export.jsonl"
    assert main(["simulate", str(survey), "--respondents", "500", "--seed", "3", "-o",
                 str(export)]) == 0
    lines = export.read_text().splitlines()
    record = json.loads(lines[0])
    lines.append(json.dumps(record | {"respondent": token(900), "groups": {"sld": 3}}))
    lines.append(json.dumps(record | {"respondent": token(901), "groups": {"doped": 1}}))
    lines.append(json.dumps(record | {"respondent": token(902), "groups": {"sld": "1"}}))
    lines.append(lines[3])
    export.write_text("\n".join(lines) + "\n")
    result = both([export], survey=survey)
    assert result["rejected"]["invalid-value"]["count"] == 3


def test_a_file_duckdb_cannot_read_is_read_by_rrsites_reader(tmp_path, manifests):
    export = write_csv(tmp_path / "export.csv", every_bad_row())
    data = export.read_bytes().split(b"\n")
    mixed = tmp_path / "mixed.csv"
    mixed.write_bytes(b"\n".join(data[:10]) + b"\r\n" + b"\n".join(data[10:]))
    result = analyze([mixed], manifests=manifests, engine="duckdb")
    assert any("own reader" in note for note in result.notes)
    reference = analyze([mixed], manifests=manifests, engine="numpy").to_dict()
    assert {k: v for k, v in result.to_dict().items() if k != "notes"} == {
        k: v for k, v in reference.items() if k != "notes"}


@pytest.mark.slow
def test_the_engine_option_is_checked(tmp_path, manifests):
    export = write_csv(tmp_path / "export.csv", good_rows(5))
    with pytest.raises(Exception, match="--engine must be one of"):
        analyze([export], manifests=manifests, engine="spark")
    assert main(["analyze", str(export), "--manifest", str(manifests[0]), "--manifest",
                 str(manifests[1]), "--engine", "duckdb", "--format", "json"]) == 0
