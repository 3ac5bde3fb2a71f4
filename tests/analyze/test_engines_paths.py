"""Every path on the same rows: identical estimates and identical rejection counts.

One collector database (a throwaway PostgreSQL, tests/collect/pgserver.py) holds good rows and
bad rows of every reason a CSV, a JSONL and a Parquet export can all carry; rrsite exports it in
each format and analyses: in place (``--db``), and each export with rrsite's own reader and with
DuckDB. DuckDB reduces each row to a few codes and checks each distinct codes once
(rrsite.exports.sql.codes): the tests here also aim at what that could get wrong (cells the
formula guard changes, codes spread over several packed columns, verdicts judged per row).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rrsite.analyze import analyze
from rrsite.analyze.api import analyze_database
from rrsite.cli import main
from rrsite.collect.pgstore import run_outside_loop
from rrsite.exports.catalog import build_catalog
from rrsite.exports.sql.codes import CODE_BINS, Coding
from rrsite.exports.sql.files import Reader
from rrsite.spreadsheet import restore

from .helpers import SURVEY, VERSION, VERSION_2, manifest, question, token, write_csv
from .helpers import write_manifest as write_manifest_file
from .test_engines_sql import _fill, _pgserver, same_analysis, stored_good
from .test_validation import V2_QUESTIONS

#: What two paths must agree on when their files differ (row numbers and messages name lines).
FIGURES = ("questions", "numbers", "direct", "rows", "privacy")


def figures(result: dict) -> dict:
    """The estimates, the rows accepted and rejected, and the count of each rejection reason."""
    out = {key: result.get(key) for key in FIGURES}
    out["versions"] = [{k: v for k, v in e.items() if k != "source"} for e in result["versions"]]
    out["rejected"] = {reason: entry["count"] for reason, entry in result["rejected"].items()}
    return out


def stored() -> list[tuple]:
    """Good rows, and bad rows of every reason that reads the same in CSV, JSONL and Parquet."""
    out = stored_good(80)
    bad = [
        (VERSION, token(100), {"violated": "maybe"}),                 # not an answer
        (VERSION, token(101), {"major": "medicine"}),
        (VERSION_2, token(102), {"year": "Fifth"}),
        ("0000000000000000", token(103), {"violated": "yes"}),        # unknown version
        (VERSION, "", {"violated": "yes"}),                           # no respondent
        (VERSION, "short", {"violated": "yes"}),                      # malformed token
        (VERSION, "tok'=" + "x" * 20, {"violated": "yes"}),           # guarded, malformed
        (VERSION, token(104), {"age": 200}),                          # out of range
        (VERSION, token(105), {"age": 20.5}),                         # not an integer
        (VERSION, token(106), {"clubs": ["chess", "golf"]}),          # not a listed club
        (VERSION, token(107), {"clubs": ["chess", "chess"]}),         # twice
        (VERSION, token(108), {"comment": "x" * 21}),                 # too long
        (VERSION_2, token(109), {"clubs": []}),                       # not asked in v2
        (VERSION, token(110), {"violated": "-1"}),                    # guarded in the CSV
        (VERSION, token(111), {"comment": "=1+1", "violated": "no"}),  # guarded, valid
        (VERSION, token(112), {"year": None, "age": 30}),
    ]
    for version, respondent, answers in bad:
        out.append((SURVEY, version, respondent, "2026-11-22T13:05Z", json.dumps(answers)))
    out.append(("other-survey", VERSION, token(1), "2026-11-22T13:05Z", "{}"))
    return out


@pytest.fixture(scope="module")
def postgres():
    server = _pgserver.PgServer().start()
    yield server
    server.remove()


def test_every_path_counts_the_same_rows(postgres, tmp_path):
    dsn = postgres.create_database()
    manifests = [manifest(), manifest(VERSION_2, V2_QUESTIONS)]
    run_outside_loop(_fill(dsn, manifests, stored()))
    files = [write_manifest_file(tmp_path / f"m{i}.json", m) for i, m in enumerate(manifests)]
    exports = {}
    for kind in ("csv", "jsonl", "parquet"):
        exports[kind] = tmp_path / f"export.{kind}"
        assert main(["export", "--db", dsn, "--survey", SURVEY, "-o", str(exports[kind])]) == 0
    for by in (None, "year"):
        in_place = analyze_database(dsn, SURVEY, by=by).to_dict()
        assert in_place["rows"]["rejected"] == 14  # all but the null and the "=1+1" rows
        assert set(in_place["rejected"]) == {"invalid-value", "unknown-version", "missing-field"}
        for kind, path in exports.items():
            reference = analyze([path], manifests=files, by=by, engine="numpy").to_dict()
            engine = analyze([path], manifests=files, by=by, engine="duckdb").to_dict()
            assert not [n for n in engine["notes"] if "own reader" in n], engine["notes"]
            assert engine == reference, kind  # the same file: the same rows shown, too
            assert figures(engine) == figures(in_place), kind
        jsonl = analyze([exports["jsonl"]], manifests=files, by=by, engine="duckdb").to_dict()
        same_analysis(in_place, jsonl)  # rows numbered as the JSONL export lists them


def both(paths: list[Path], **options) -> dict:
    reference = analyze(paths, engine="numpy", **options).to_dict()
    engine = analyze(paths, engine="duckdb", **options).to_dict()
    assert not [n for n in engine["notes"] if "own reader" in n], engine["notes"]
    assert engine == reference
    return reference


def test_answers_the_formula_guard_changes(tmp_path):
    """Answers that look like formulas: `rrsite export` writes them with an apostrophe, which
    the reader takes off; a cell that is the answer with no apostrophe is that answer too, and
    an answer that itself starts with an apostrophe is compared once restored."""
    answers = ["-1", "+1", "=x", "@home", "'+2", "plain"]
    questions = [question("level", "choice", values=answers),
                 question("year", "choice", values=["First", "Second"])]
    path = write_manifest_file(tmp_path / "m.json", manifest(questions=questions))
    cells = ["'-1", "-1", "'+1", "+1", "'=x", "=x", "'@home", "@home", "''+2", "'+2", "+2",
             "plain", "'plain", "''-1", "", "other"]
    rows = [{"survey": SURVEY, "version": VERSION, "respondent": token(i),
             "submitted_at": "2026-11-22T13:05Z", "level": cells[i % len(cells)],
             "year": ["First", "'Second", "Second"][i % 3]} for i in range(96)]
    header = ["survey", "version", "respondent", "submitted_at", "level", "year"]
    export = write_csv(tmp_path / "guarded.csv", rows, header)
    result = both([export], manifests=[path], by="year")
    # what each cell reads as, once the apostrophe `rrsite export` adds is taken off
    kept = [(restore(r["level"]), restore(r["year"])) for r in rows]
    kept = [(level, year) for level, year in kept
            if level in ("", *answers) and year in ("First", "Second")]
    expected = {a: sum(1 for level, _ in kept if level == a) for a in answers}
    assert result["direct"][0]["counts"] == expected
    assert expected["-1"] == 8 and expected["'+2"] == 4  # "'-1" and "-1"; "''+2" only
    assert result["rejected"]["invalid-value"]["count"] == len(rows) - len(kept)


def many_questions(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    qids = [f"q{i}" for i in range(count)]
    questions = [question(q, "choice", values=["a", "b", "c", "d", "e"]) for q in qids]
    questions.append(question("age", "number", min=16, max=99, integer=True, required=False))
    return write_manifest_file(tmp_path / "m.json", manifest(questions=questions)), qids


def test_many_questions_spread_their_codes_over_several_columns(tmp_path):
    path, qids = many_questions(tmp_path, 14)
    catalog = build_catalog([], [path])
    generator = random.Random(5)
    rows = []
    for i in range(3000):
        r = {"survey": SURVEY, "version": VERSION, "respondent": token(i % 2900),
             "submitted_at": "2026-11-22T13:05Z", "age": str(generator.choice([20, 30, 15, ""]))}
        for q in qids:
            r[q] = generator.choice(["a", "b", "c", "d", "e", "", "z"] if i % 50 == 0
                                    else ["a", "b", "c", "d", "e", ""])
        rows.append(r)
    header = ["survey", "version", "respondent", "submitted_at", *qids, "age"]
    export = write_csv(tmp_path / "wide.csv", rows, header)
    plan = Reader(catalog, None, {}).plan(str(export), 0)
    coding = Coding(catalog, None, plan.source, {}, plan.raw)
    packed = coding.packed()
    assert len(packed) > 1  # 7^14 codes do not fit one column of CODE_BINS
    assert all(eval_size(column) <= CODE_BINS for column in packed)
    result = both([export], manifests=[path])
    assert result["rejected"]["duplicate-respondent"]["count"] > 0
    assert result["rejected"]["invalid-value"]["count"] > 0
    jsonl = tmp_path / "wide.jsonl"
    with jsonl.open("w") as handle:
        for r in rows:
            answers = {q: r[q] for q in qids if r[q]}
            if r["age"]:
                answers["age"] = int(r["age"])
            handle.write(json.dumps({"survey": SURVEY, "version": VERSION,
                                     "respondent": r["respondent"], "answers": answers}) + "\n")
    from_jsonl = both([jsonl], manifests=[path])
    assert figures(from_jsonl) == figures(result)


def eval_size(column: list) -> int:
    """How many values a packed column can hold (the product of its codes' sizes)."""
    size = 1
    for code, _ in column:
        size *= code.size
    return size
