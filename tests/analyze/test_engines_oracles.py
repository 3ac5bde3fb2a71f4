"""Frequency oracles, "tick all that apply" and the waves of a series on the analyzer's paths.

The tally in SQL (DuckDB over export files, ``--sql`` for any engine, ``--db`` in PostgreSQL)
counts reports by value; a frequency oracle's report supports several answers at once and is
decoded by rrsite's own reader. So: ``--engine duckdb``, ``--sql`` and ``--db`` refuse a survey
with an oracle and name its questions and the way that works; ``--engine auto`` reads it with
rrsite's reader even where it would pick DuckDB (and says so), with the estimates of
``--engine numpy``. A wave of a series whose questions are all matrix designs (each one
wave's chain of the permanent report and its re-randomization) counts the same in DuckDB as in
rrsite's reader; several waves read together are rrsite's reader's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rrsite.analyze import analyze
from rrsite.analyze import api as analyze_api
from rrsite.analyze.api import analyze_database, tally_sql
from rrsite.cli import main
from rrsite.collect.pgstore import run_outside_loop
from rrsite.errors import UsageError
from rrsite.exports.catalog import manifest_from_survey_file
from tests.surveytext import LEAVE, TEAM_KRR, wave_front

from .test_engines_sql import _fill, _pgserver, same_analysis

SURVEYS = Path(__file__).resolve().parents[2] / "surveys"
ORACLES = SURVEYS / "substances.md"
#: The questions of substances.md with a frequency oracle, as the refusal names them.
NAMED = ("'most' (", "'risks' (oue)", "'district' (olh)")

SERIES = wave_front("morale", "Morale", 4, 0.6) + """\
## Did you think of leaving?

""" + LEAVE + """
## Which team?

""" + TEAM_KRR + """
## Your site?

```question
id: site
type: choice
options: [North, South]
```
"""


@pytest.fixture(scope="module")
def oracle_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oracles") / "substances.csv"
    assert main(["simulate", str(ORACLES), "--respondents", "1200", "--seed", "2", "-o",
                 str(out)]) == 0
    return out


def test_duckdb_refuses_an_oracle_and_names_its_questions(oracle_export: Path, capsys) -> None:
    with pytest.raises(UsageError) as refused:
        analyze([oracle_export], survey=ORACLES, engine="duckdb")
    message = str(refused.value)
    assert message.startswith("--engine duckdb: ") and "frequency oracle" in message
    assert all(name in message for name in NAMED), message
    assert "'age'" not in message  # a direct question is counted in SQL
    assert "--engine numpy" in message
    capsys.readouterr()
    assert main(["analyze", str(oracle_export), "--survey", str(ORACLES), "--engine",
                 "duckdb"]) == 2
    assert "frequency oracle" in capsys.readouterr().err


def test_auto_reads_an_oracle_with_rrsites_reader(oracle_export: Path, monkeypatch) -> None:
    """Where auto would pick DuckDB (here: every export counts as big), an oracle's survey is
    read by rrsite's reader, with a note, and gives the estimates of --engine numpy."""
    numpy = analyze([oracle_export], survey=ORACLES, engine="numpy", by="age").to_dict()
    monkeypatch.setattr(analyze_api, "SMALL_EXPORT", 0)
    auto = analyze([oracle_export], survey=ORACLES, by="age").to_dict()
    same_analysis(auto, numpy)
    assert any(note.startswith("read by rrsite's own reader: ") and "'risks' (oue)" in note
               for note in auto["notes"]), auto["notes"]
    assert not any("rrsite's own reader" in note for note in numpy["notes"])
    shares = {q["id"]: q for q in auto["questions"]}
    assert set(shares) >= {"most", "risks", "district"}


def test_sql_refuses_an_oracle(capsys) -> None:
    with pytest.raises(UsageError) as refused:
        tally_sql(ORACLES, dialect="duckdb")
    assert str(refused.value).startswith("--sql: ") and all(n in str(refused.value)
                                                            for n in NAMED)
    capsys.readouterr()
    assert main(["analyze", "--survey", str(ORACLES), "--sql", "duckdb"]) == 2
    captured = capsys.readouterr()
    assert "frequency oracle" in captured.err and captured.out == ""


@pytest.mark.slow  # a PostgreSQL server
def test_postgres_refuses_an_oracle(oracle_export: Path, capsys) -> None:
    server = _pgserver.PgServer().start()
    try:
        dsn = server.create_database()
        built = manifest_from_survey_file(ORACLES)
        jsonl = oracle_export.with_suffix(".jsonl")
        assert main(["simulate", str(ORACLES), "--respondents", "50", "--seed", "4", "-o",
                     str(jsonl)]) == 0
        records = [json.loads(line) for line in jsonl.read_text().splitlines()]
        rows = [(r["survey"], r["version"], r["respondent"], r["submitted_at"],
                 json.dumps(r["answers"])) for r in records]
        run_outside_loop(_fill(dsn, [built], rows))
        with pytest.raises(UsageError) as refused:
            analyze_database(dsn, built["id"])
        message = str(refused.value)
        assert message.startswith("--db: ") and all(n in message for n in NAMED)
        assert "rrsite export" in message
        capsys.readouterr()
        assert main(["analyze", "--db", dsn, "--survey", built["id"]]) == 2
        assert "frequency oracle" in capsys.readouterr().err
        # what it says works: the export of the same rows analyses
        exported = jsonl.with_name("exported.jsonl")
        assert main(["export", "--db", dsn, "--survey", built["id"], "-o", str(exported)]) == 0
        assert analyze([exported], survey=ORACLES).question("risks").estimate.n == 50
    finally:
        server.remove()


@pytest.fixture(scope="module")
def waves(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], list[Path]]:
    root = tmp_path_factory.mktemp("series")
    surveys = []
    for wave in (1, 2):
        path = root / f"w{wave}.md"
        path.write_text(SERIES.format(wave=wave), encoding="utf-8")
        surveys.append(path)
    assert main(["simulate", str(surveys[0]), "--wave", str(surveys[1]), "--respondents",
                 "900", "--seed", "6", "--keep", "0.7", "--truth", "leave=0.25",
                 "-o", str(root / "out-{wave}.csv")]) == 0
    return surveys, [root / f"out-{w}.csv" for w in (1, 2)]


def test_a_wave_of_matrix_designs_counts_the_same_in_duckdb(waves) -> None:
    surveys, exports = waves
    duck = analyze([exports[0]], survey=surveys[0], engine="duckdb", by="site").to_dict()
    numpy = analyze([exports[0]], survey=surveys[0], engine="numpy", by="site").to_dict()
    same_analysis(duck, numpy)
    assert {q["id"] for q in duck["questions"]} == {"leave", "team"}
    assert duck["rows"]["accepted"] == 900


def test_waves_read_together_are_rrsites_readers(waves, capsys) -> None:
    surveys, exports = waves
    with pytest.raises(UsageError, match="waves of a series"):
        analyze(exports, survey=surveys[0], engine="duckdb", siblings=("morale-w2",))
    capsys.readouterr()
    args = ["analyze", *map(str, exports), "--survey", str(surveys[0]), "--survey",
            str(surveys[1]), "--format", "json"]
    assert main([*args, "--engine", "duckdb"]) == 2
    assert "--engine duckdb" in capsys.readouterr().err
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [w["wave"] for w in printed["waves"]] == [1, 2]
    assert all(w["analysis"]["rows"]["accepted"] == 900 for w in printed["waves"])
