"""`rrsite simulate`: exports through the same design matrices, reproducible, and recovered."""

import csv
import json

import numpy as np
import pytest

from rrsite.analyze import analyze
from rrsite.cli import main
from rrsite.core import KRR, ForcedResponse
from rrsite.errors import UsageError
from rrsite.exports.catalog import version_from_manifest
from rrsite.simulate.draws import randomize
from rrsite.simulate.export import parse_truths

from .helpers import manifest, write_manifest


@pytest.fixture
def survey_json(tmp_path):
    return write_manifest(tmp_path / "survey.json", manifest())


def test_randomize_follows_the_matrix():
    rng = np.random.default_rng(3)
    matrix = np.asarray(KRR(3, epsilon=1.0).matrix)
    truth = np.repeat(np.arange(3), 100_000)
    report = randomize(rng, matrix, truth)
    for i in range(3):
        frequencies = np.bincount(report[truth == i], minlength=3) / 100_000
        assert np.allclose(frequencies, matrix[i], atol=0.006)
    fair = np.asarray(ForcedResponse().matrix)
    report = randomize(rng, fair, np.ones(200_000, dtype=int))
    assert report.mean() == pytest.approx(0.75, abs=0.005)


def test_csv_export_is_reproducible_and_in_contract_format(tmp_path, survey_json, capsys):
    args = ["simulate", str(survey_json), "--respondents", "1000", "--truth", "violated=0.2",
            "--truth", "major=arts:0.5,law:0.1", "--seed", "9"]
    assert main([*args, "-o", str(tmp_path / "a.csv")]) == 0
    assert main([*args, "-o", str(tmp_path / "b.csv")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert "wrote 1,000 simulated submissions" in capsys.readouterr().err
    with open(tmp_path / "a.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["survey", "version", "respondent", "submitted_at", "violated",
                             "major", "year", "age", "comment", "clubs"]
    assert len({r["respondent"] for r in rows}) == 1000
    assert all(len(r["respondent"]) == 22 for r in rows)
    assert all(r["submitted_at"].endswith("Z") and len(r["submitted_at"]) == 17 for r in rows)
    assert {r["violated"] for r in rows} == {"yes", "no"}
    assert all(r["clubs"] == "" or isinstance(json.loads(r["clubs"]), list) for r in rows)
    assert all(r["age"] == "" or 16 <= int(r["age"]) <= 99 for r in rows)
    result = analyze(tmp_path / "a.csv", manifests=[survey_json])
    assert result.rejected.total == 0 and result.rows_accepted == 1000


def test_jsonl_export(tmp_path, survey_json):
    out = tmp_path / "sim.jsonl"
    assert main(["simulate", str(survey_json), "--respondents", "500", "--seed", "1",
                 "-o", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 500
    assert set(records[0]) == {"survey", "version", "respondent", "submitted_at", "answers"}
    assert isinstance(records[0]["answers"]["violated"], str)
    result = analyze(out, manifests=[survey_json])
    assert result.rejected.total == 0 and result.rows_accepted == 500


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_analyzer_recovers_the_truth(tmp_path, survey_json, seed):
    out = tmp_path / "sim.csv"
    assert main(["simulate", str(survey_json), "--respondents", "20000", "--seed", str(seed),
                 "--truth", "violated=0.12", "--truth", "major=arts:0.6,science:0.3,law:0.1",
                 "-o", str(out)]) == 0
    result = analyze(out, manifests=[survey_json])
    violated = result.question("violated").estimate
    assert violated.ci_low[0] <= 0.12 <= violated.ci_high[0]
    major = result.question("major").estimate
    for i, share in enumerate([0.6, 0.3, 0.1]):
        assert major.ci_low[i] - 0.01 <= share <= major.ci_high[i] + 0.01


def test_truth_errors(survey_json, tmp_path, capsys):
    version = version_from_manifest(manifest(), "test")
    for bad, message in [("violated=1.5", "not a rate"), ("nope=0.5", "no question 'nope'"),
                         ("major=0.4", "shares per answer"), ("major=arts:0.9,law:0.4",
                                                             "add up to 1.3"),
                         ("age=0.5", "number question"), ("violated", "QID=RATE"),
                         ("major=medicine:1", "'medicine' is not an answer")]:
        with pytest.raises(UsageError, match=message):
            parse_truths([bad], version)
    shares = parse_truths(["major=arts:0.5"], version)["major"]
    assert shares.tolist() == [0.5, 0.25, 0.25]
    assert main(["simulate", str(survey_json), "--respondents", "10", "--truth", "violated=2",
                 "-o", str(tmp_path / "x.csv")]) == 2
    assert "not a rate in [0, 1]" in capsys.readouterr().err
    assert main(["simulate", str(survey_json), "--respondents", "10",
                 "-o", str(tmp_path / "x.txt")]) == 2
