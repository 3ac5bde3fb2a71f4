"""The tally as SQL: printed for any engine and read back with --counts, and counted in
PostgreSQL (`rrsite analyze --db`): the same estimates, rejection counts and shown rows as the
export read by rrsite.

The printed query runs in DuckDB as printed, and its Spark SQL, BigQuery and Trino spellings
run in DuckDB after sqlglot translates them (sqlglot also parses each in its own dialect). The
PostgreSQL path runs on a real server (tests/collect/pgserver.py) holding bad rows of every kind
the collector's table can hold, against the JSONL `rrsite export` writes of the same database.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import asyncpg
import duckdb
import pytest
import sqlglot

from rrsite.analyze import analyze
from rrsite.analyze.api import analyze_counts, analyze_database, tally_sql
from rrsite.cli import main
from rrsite.collect.pgstore import SCHEMA, run_outside_loop
from rrsite.exports.sql.aggregate import COLUMNS

from .helpers import SURVEY, VERSION, VERSION_2, manifest, token, write_csv
from .helpers import write_manifest as write_manifest_file
from .test_validation import V2_QUESTIONS, bad_rows, good_rows

SURVEYS = Path(__file__).resolve().parents[2] / "surveys"
_spec = importlib.util.spec_from_file_location(
    "rrsite_tests_pgserver_analyze", Path(__file__).resolve().parents[1] / "collect" /
    "pgserver.py")
assert _spec is not None and _spec.loader is not None
_pgserver = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_pgserver)


def same_analysis(got: dict, expected: dict) -> None:
    """Everything but the files read: estimates, rows, rejections with the rows shown."""
    for key in ("questions", "numbers", "direct", "rows", "privacy"):
        assert got.get(key) == expected.get(key), key
    assert [{k: v for k, v in e.items() if k != "source"} for e in got["versions"]] == [
        {k: v for k, v in e.items() if k != "source"} for e in expected["versions"]]
    assert set(got["rejected"]) == set(expected["rejected"])
    for reason, entry in expected["rejected"].items():
        other = got["rejected"][reason]
        assert other["count"] == entry["count"], reason
        assert [(e["row"], e["message"]) for e in other["examples"]] == [
            (e["row"], e["message"]) for e in entry["examples"]], reason


def table(connection, paths: list[Path]) -> None:
    """The exports as a table ``t`` with the columns ``file`` and ``row`` (the CSV's line)."""
    parts = [f"SELECT '{p}' AS file, row_number() OVER () + 1 AS row, * FROM "
             f"read_csv('{p}', all_varchar=true)" for p in paths]
    connection.execute(f"CREATE OR REPLACE TABLE t AS {' UNION ALL BY NAME '.join(parts)}")


def write_result(rows, path: Path) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for r in rows:
            writer.writerow(["" if v is None else v for v in r])
    return path


def run_printed(tmp_path: Path, paths: list[Path], dialect: str, **options) -> Path:
    """The printed query run in DuckDB (translated by sqlglot unless it is DuckDB's)."""
    connection = duckdb.connect()
    table(connection, paths)
    survey_options = {k: v for k, v in options.items() if k in ("survey", "manifests", "by")}
    sql = tally_sql(dialect=dialect, table="t", **survey_options)
    sqlglot.parse_one(sql, read=dialect)  # valid in its own dialect
    runnable = sql if dialect == "duckdb" else sqlglot.transpile(sql, read=dialect,
                                                                 write="duckdb")[0]
    return write_result(connection.execute(runnable).fetchall(),
                        tmp_path / f"counts-{dialect}.csv")


@pytest.fixture
def manifests(tmp_path):
    return [write_manifest_file(tmp_path / "v1.json", manifest()),
            write_manifest_file(tmp_path / "v2.json", manifest(VERSION_2, V2_QUESTIONS))]


@pytest.mark.parametrize("dialect", ["duckdb", "spark", "bigquery", "trino"])
def test_printed_sql_gives_the_exports_analysis(tmp_path, manifests, dialect):
    first = write_csv(tmp_path / "a-monday.csv", good_rows(30))
    rows = good_rows() + [r for r, _, _ in bad_rows()]
    rows[3]["clubs"] = '["chess", "rowing"]'
    rows[4]["clubs"] = '["chess","chess"]'
    rows[6]["comment"] = "café ok"
    second = write_csv(tmp_path / "b-friday.csv", rows)
    counts = run_printed(tmp_path, [first, second], dialect, manifests=manifests, by="year")
    from_counts = analyze_counts(counts, manifests=manifests, by="year").to_dict()
    from_rows = analyze([first, second], manifests=manifests, by="year").to_dict()
    same_analysis(from_counts, from_rows)
    # friday repeats monday's 30 tokens and one of its own, less the repeat rejected before
    assert from_rows["rejected"]["duplicate-respondent"]["count"] == 30


def test_printed_sql_for_randomized_numbers_takes_two_steps(tmp_path):
    survey = SURVEYS / "hidden-numbers.md"
    export = tmp_path / "export.csv"
    assert main(["simulate", str(survey), "--respondents", "2000", "--seed", "5", "--truth",
                 "undeclared=lognormal:7,1", "--truth", "days=poisson:8,zeros:0.6", "-o",
                 str(export)]) == 0
    with open(export, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header, rows = list(reader.fieldnames or []), list(reader)
    for i, change in enumerate([{"days": "0.5"}, {"days": "31"}, {"undeclared": "-1e12"},
                                {"days": "abc"}, {"region": ""}]):
        rows[10 * i + 3].update(change)
    rows.append(dict(rows[7]))
    bad = tmp_path / "bad.csv"
    write_csv(bad, rows, header=header)
    connection = duckdb.connect()
    table(connection, [bad])
    first = tally_sql(survey=survey, dialect="duckdb", table="t", by="region")
    assert "COUNT(" not in first
    reports = write_result(connection.execute(first).fetchall(), tmp_path / "reports.csv")
    with open(reports, newline="") as handle:  # the first query's three columns
        lines = list(csv.reader(handle))
    with open(reports, "w", newline="") as handle:
        csv.writer(handle).writerows([["question", "version", "report"]]
                                     + [line[:3] for line in lines[1:]])
    sql = tally_sql(survey=survey, dialect="duckdb", table="t", by="region", reports=reports)
    counts = write_result(connection.execute(sql).fetchall(), tmp_path / "counts.csv")
    from_counts = analyze_counts(counts, survey=survey, by="region").to_dict()
    from_rows = analyze([bad], survey=survey, by="region").to_dict()
    same_analysis(from_counts, from_rows)
    assert from_rows["numbers"] and from_rows["rejected"]["invalid-value"]["count"] >= 3


def test_the_sql_command_prints_the_query(tmp_path, manifests, capsys):
    assert main(["analyze", "--sql", "spark", "--table", "db.responses", "--manifest",
                 str(manifests[0]), "--manifest", str(manifests[1])]) == 0
    printed = capsys.readouterr().out
    assert "db.responses" in printed and "ROW_NUMBER() OVER (PARTITION BY rr_tok" in printed
    sqlglot.parse_one(printed, read="spark")
    with pytest.raises(SystemExit):
        main(["analyze", "--sql", "oracle", "--manifest", str(manifests[0])])


def test_a_counts_file_with_a_row_rrsite_would_not_reject_is_refused(tmp_path, manifests):
    counts = tmp_path / "counts.csv"
    values = json.dumps({"survey": SURVEY, "version": VERSION, "respondent": token(1),
                         "violated": "yes"})
    write_result([["", VERSION, "", "", "", 1, "", "", "", ""],
                  ["", "", "", "", "", 1, "invalid-value", "", "", ""],
                  ["", "", "", "", "", None, "invalid-value", "x.csv", 7, values]], counts)
    with pytest.raises(Exception, match="not rejected as invalid-value"):
        analyze_counts(counts, manifests=manifests)


# ----------------------------------------------------------------------------------- PostgreSQL


@pytest.fixture(scope="module")
def postgres():
    server = _pgserver.PgServer().start()
    yield server
    server.remove()


async def _fill(dsn: str, manifests: list[dict], submissions: list[tuple]) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(SCHEMA)
        for m in manifests:
            await connection.execute(
                "INSERT INTO manifests (survey, version, manifest, first_seen) VALUES "
                "($1, $2, $3, '2026-11-01')", m["id"], m["version"], json.dumps(m))
        await connection.executemany(
            "INSERT INTO submissions (survey, version, respondent, submitted_at, answers) "
            "VALUES ($1, $2, $3, $4, $5)", submissions)
    finally:
        await connection.close()


def stored_good(count: int) -> list[tuple]:
    """``count`` good rows as a collector's table holds them (the answers as JSON)."""
    out = []
    for r in good_rows(count):
        answers = {k: v for k, v in r.items() if k in ("violated", "major", "year", "comment")
                   and v}
        answers["age"] = int(r["age"])
        if r["clubs"]:
            answers["clubs"] = json.loads(r["clubs"])
        out.append((SURVEY, r["version"], r["respondent"], "2026-11-22T13:05Z",
                    json.dumps(answers)))
    return out


def stored_rows() -> list[tuple]:
    """Good rows and every kind of bad row a collector's table can hold."""
    out = stored_good(60)
    bad = [
        (VERSION, token(100), {"violated": "maybe"}),
        (VERSION, token(101), {"major": "medicine"}),
        ("0000000000000000", token(102), {"violated": "yes"}),
        (VERSION, "", {"violated": "yes"}),
        (VERSION, "short", {"violated": "yes"}),
        (VERSION, token(103), {"age": "20"}),
        (VERSION, token(104), {"age": 200}),
        (VERSION, token(105), {"clubs": ["chess", "golf"]}),
        (VERSION, token(106), {"clubs": ["chess", "chess"]}),
        (VERSION, token(107), {"comment": "x" * 21}),
        (VERSION, token(108), {"cheat": "no"}),
        (VERSION, token(109), {"violated": 1}),
        (VERSION_2, token(110), {"clubs": []}),
        (VERSION, token(111), {"violated": "yes", "violated.group": 1}),
        (VERSION, token(112), {"violated": "yes", "@cell": "a"}),
        (VERSION, token(113), {"year": None, "age": 30.0}),
    ]
    for version, respondent, answers in bad:
        out.append((SURVEY, version, respondent, "2026-11-22T13:05Z", json.dumps(answers)))
    out.append(("other-survey", VERSION, token(1), "2026-11-22T13:05Z", "{}"))
    return out


def ways_chosen(monkeypatch) -> list[bool]:  # type: ignore[no-untyped-def]
    """Each way the database was asked to check rows (grouped or not), in order."""
    from rrsite.exports.sql import postgres as database

    chosen: list[bool] = []
    real = database.source

    def source(catalog, survey, grouped=True):  # type: ignore[no-untyped-def]
        chosen.append(grouped)
        return real(catalog, survey, grouped)

    monkeypatch.setattr(database, "source", source)
    return chosen


@pytest.fixture(params=["grouped", "per row"])
def grouping(request, monkeypatch):
    """Both ways the database checks rows: rows alike grouped (chosen when the first rows'
    answers repeat), and each row on its own (nearly every answers text different)."""
    from rrsite.exports.sql import postgres as database

    grouped = request.param == "grouped"
    monkeypatch.setattr(database, "GROUPED_SHARE", 1.0 if grouped else -1.0)
    chosen = ways_chosen(monkeypatch)
    yield grouped
    assert chosen and set(chosen) == {grouped}


def test_postgres_counts_in_place_what_its_export_gives(postgres, tmp_path, grouping):
    dsn = postgres.create_database()
    manifests = [manifest(), manifest(VERSION_2, V2_QUESTIONS)]
    run_outside_loop(_fill(dsn, manifests, stored_rows()))
    export = tmp_path / "export.jsonl"
    assert main(["export", "--db", dsn, "--survey", SURVEY, "-o", str(export)]) == 0
    files = [write_manifest_file(tmp_path / f"m{i}.json", m) for i, m in enumerate(manifests)]
    for by in (None, "year"):
        in_place = analyze_database(dsn, SURVEY, by=by).to_dict()
        from_export = analyze([export], manifests=files, by=by, engine="numpy").to_dict()
        same_analysis(in_place, from_export)
        assert in_place["files"][0]["format"] == "PostgreSQL"
    # every bad row but the one with a design cell and the one with a null answer
    assert in_place["rows"]["rejected"] == 14
    assert main(["analyze", "--db", dsn, "--survey", SURVEY, "--format", "json", "-o",
                 str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["rows"] == in_place["rows"]


def test_postgres_counts_rows_alike_as_one_group_and_shows_each_row(postgres, tmp_path,
                                                                    grouping):
    """The database checks rows alike (same version, answers and kind of token) once: a
    rejected group of many rows still counts every row and shows the first five of its
    reason by token, interleaved with another group's; two texts of the same JSON are two
    groups that count alike; tokens malformed in different ways fall in one group."""
    dsn = postgres.create_database()
    good = stored_good(40)
    rows = list(good)
    maybe = json.dumps({"violated": "maybe"})
    for i in range(12):  # one group of twelve rejected rows, tokens spread among others'
        rows.append((SURVEY, VERSION, token(300 + 2 * i), "2026-11-22T13:05Z", maybe))
    for i in range(4):  # the same reason from another group, tokens between the first's
        rows.append((SURVEY, VERSION, token(301 + 2 * i), "2026-11-22T13:05Z",
                     json.dumps({"major": "medicine"})))
    for i, bad in enumerate(["short", "has space" + "x" * 20, "x" * 65, "é" * 30]):
        rows.append((SURVEY, VERSION, bad, "2026-11-22T13:05Z", json.dumps({"age": 20 + i})))
    assert good[1][1] == VERSION
    spaced = json.dumps(json.loads(good[1][4]), indent=1)  # the same answers, written otherwise
    rows.append((SURVEY, VERSION, token(400), "2026-11-22T13:05Z", spaced))
    manifests = [manifest(), manifest(VERSION_2, V2_QUESTIONS)]
    run_outside_loop(_fill(dsn, manifests, rows))
    export = tmp_path / "export.jsonl"
    assert main(["export", "--db", dsn, "--survey", SURVEY, "-o", str(export)]) == 0
    files = [write_manifest_file(tmp_path / f"m{i}.json", m) for i, m in enumerate(manifests)]
    in_place = analyze_database(dsn, SURVEY).to_dict()
    from_export = analyze([export], manifests=files, engine="numpy").to_dict()
    same_analysis(in_place, from_export)
    invalid = in_place["rejected"]["invalid-value"]
    assert invalid["count"] == 12 + 4 + 4 and len(invalid["examples"]) == 5
    assert in_place["rows"]["accepted"] == 41  # the spaced copy counts as its twin does


def test_postgres_numbers_and_two_group_designs(postgres, tmp_path, grouping):
    dsn = postgres.create_database()
    survey = SURVEYS / "hidden-numbers.md"
    export = tmp_path / "simulated.jsonl"
    assert main(["simulate", str(survey), "--respondents", "1500", "--seed", "8", "--truth",
                 "undeclared=lognormal:7,1", "-o", str(export)]) == 0
    records = [json.loads(line) for line in export.read_text().splitlines()]
    records[5]["answers"]["days"] = 0.5
    records[9]["answers"]["undeclared"] = "12"
    records[11]["answers"]["region"] = "Atlantis"
    from rrsite.exports.catalog import manifest_from_survey_file

    built = manifest_from_survey_file(survey)
    rows = [(r["survey"], r["version"], r["respondent"], r["submitted_at"],
             json.dumps(r["answers"] | {f"{k}.group": v for k, v in r.get("groups", {}).items()}))
            for r in records]
    run_outside_loop(_fill(dsn, [built], rows))
    exported = tmp_path / "export.jsonl"
    assert main(["export", "--db", dsn, "--survey", built["id"], "-o", str(exported)]) == 0
    in_place = analyze_database(dsn, built["id"], by="region").to_dict()
    from_export = analyze([exported], survey=survey, by="region").to_dict()
    same_analysis(in_place, from_export)
    assert in_place["rows"]["rejected"] == 3 and in_place["numbers"]


def test_postgres_groups_rows_only_where_answers_repeat(postgres, tmp_path, monkeypatch):
    """The first rows decide: answers that repeat are grouped, answers that nearly all differ
    (randomized numbers) are checked a row at a time. The grouped tally runs with the server's
    JIT compiler off (its estimate of the groups would have it compile first), inside its own
    transaction only; the tally row by row keeps the server's setting."""
    from rrsite.exports.catalog import manifest_from_survey_file
    from rrsite.exports.sql import postgres as database

    chosen = ways_chosen(monkeypatch)
    jit: list[str] = []
    fetch = database.Connection.fetch

    def spied(self, query, *args):  # type: ignore[no-untyped-def]
        if query.startswith("WITH rr_rows"):  # the tally itself
            jit.append(fetch(self, "SHOW jit")[0][0])
        return fetch(self, query, *args)

    monkeypatch.setattr(database.Connection, "fetch", spied)
    repeating = postgres.create_database()
    run_outside_loop(_fill(repeating, [manifest()], stored_good(400)))
    analyze_database(repeating, SURVEY)
    survey = SURVEYS / "hidden-numbers.md"
    export = tmp_path / "numbers.jsonl"
    assert main(["simulate", str(survey), "--respondents", "400", "--seed", "2", "-o",
                 str(export)]) == 0
    records = [json.loads(line) for line in export.read_text().splitlines()]
    distinct = postgres.create_database()
    built = manifest_from_survey_file(survey)
    run_outside_loop(_fill(distinct, [built], [
        (r["survey"], r["version"], r["respondent"], r["submitted_at"], json.dumps(r["answers"]))
        for r in records]))
    analyze_database(distinct, built["id"])
    assert len({json.dumps(r["answers"]) for r in records}) > 0.9 * len(records)
    assert chosen == [True, False]
    default = run_outside_loop(_show_jit(distinct))
    assert jit == ["off", default] and default == "on"


async def _show_jit(dsn: str) -> str:
    connection = await asyncpg.connect(dsn)
    try:
        return str(await connection.fetchval("SHOW jit"))
    finally:
        await connection.close()


def test_postgres_refuses_what_it_cannot_count(postgres):
    dsn = postgres.create_database()
    run_outside_loop(_fill(dsn, [manifest()], []))
    with pytest.raises(Exception, match="no survey 'nope'"):
        analyze_database(dsn, "nope")
    with pytest.raises(Exception, match="PostgreSQL"):
        analyze_database("collector.db", SURVEY)
    assert main(["analyze", "--db", dsn.replace("rrsite@", "nobody@"), "--survey",
                 SURVEY]) == 2


@pytest.mark.parametrize("dialect", ["duckdb", "spark"])
def test_crossed_subgroups_are_the_same_cells_on_every_path(tmp_path, dialect):
    """--by year --by housing: rrsite's reader, DuckDB over the file and the printed SQL read
    back by --counts give the same cells, estimates and notes (each numbers the cells of the
    crossed answers in the same mixed-radix order)."""
    from .test_subgroups import simulate, survey_file

    survey = survey_file(tmp_path)
    export = simulate(tmp_path, survey, respondents=2500, seed=17)
    by = ["year", "housing"]
    reference = analyze([export], survey=survey, by=by, engine="numpy").to_dict()
    groups = reference["questions"][0]["by"]["groups"]
    assert len(groups) > 8 and any("(no answer)" in name for name in groups)  # really crossed
    engine = analyze([export], survey=survey, by=by, engine="duckdb").to_dict()
    assert engine == reference
    counts = run_printed(tmp_path, [export], dialect, survey=survey, by=by)
    same_analysis(analyze_counts(counts, survey=survey, by=by).to_dict(), reference)
