"""`rrsite simulate --cor`: true values correlated through a Gaussian copula, then randomized.

Independent checks: two uniform margins of normals with correlation rho have Pearson correlation
(6 / pi) asin(rho / 2) (Spearman's rho of the normal copula); `analyze --cor` recovers the
printed true correlations within its bootstrap error; bad input exits with 2.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from rrsite.cli import main
from tests.joint.clitools import refused
from tests.surveytext import NOTE, question, survey_text

SURVEY = survey_text(
    "simcor", question("cheat", "yes-no", randomize="warner", p=0.8),
    question("income", "number", min=0, max=1000, randomize="additive",
             scramble="\n  normal: {mean: 0, sd: 100}", accept_no_epsilon="true"),
    question("hours", "number", min=0, max=100, required="true"),
    question("age", "number", min=18, max=90, required="true"), NOTE, title="simulate --cor")


@pytest.fixture(scope="module")
def survey(tmp_path_factory):
    path = tmp_path_factory.mktemp("simcor") / "s.md"
    path.write_text(SURVEY, encoding="utf-8")
    return path


def _printed(err: str) -> dict[str, float]:
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"(\w+~\w+) (-?[0-9.]+) \(normals", err)}


def test_uniform_margins_follow_the_copula(survey, tmp_path, capsys):
    out = tmp_path / "out.csv"
    assert main(["simulate", str(survey), "--respondents", "40000", "--seed", "1",
                 "--cor", "hours,age=0.6", "-o", str(out)]) == 0
    printed = _printed(capsys.readouterr().err)
    assert printed["hours~age"] == pytest.approx(6 / math.pi * math.asin(0.3), abs=0.01)
    # the direct answers in the export carry that correlation themselves
    assert main(["analyze", str(out), "--survey", str(survey), "--cor", "hours,age",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["correlations"]
    assert data["r"][0][1] == pytest.approx(printed["hours~age"], abs=0.002)


def test_analyze_recovers_the_true_correlations(survey, tmp_path, capsys):
    out = tmp_path / "out.csv"
    assert main(["simulate", str(survey), "--respondents", "20000", "--seed", "2",
                 "--truth", "cheat=0.3", "--cor", "cheat,income,hours=0.5,-0.3,0.4",
                 "-o", str(out)]) == 0
    printed = _printed(capsys.readouterr().err)
    assert set(printed) == {"cheat~income", "cheat~hours", "income~hours"}
    assert printed["cheat~hours"] < 0
    assert main(["analyze", str(out), "--survey", str(survey), "--cor", "cheat,income,hours",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["correlations"]
    names = data["variables"]
    for pair, truth in printed.items():
        a, b = pair.split("~")
        i, k = names.index(a), names.index(b)
        assert abs(data["r"][i][k] - truth) < 4 * data["se"][i][k] + 0.005, pair
    assert data["prevalence"]["cheat"] == pytest.approx(0.3, abs=0.03)


@pytest.mark.parametrize("spec, message", [
    ("hours,age", "write Q1,Q2"),
    ("hours=0.5", "two or more"),
    ("hours,note=0.5", "not a yes-no or number"),
    ("hours,age=1.2", "strictly between"),
    ("hours,age,income=0.5,0.5", "give one correlation for every pair or 3"),
    ("hours,age,income=0.9,0.9,-0.9", "not a valid correlation matrix"),
])
def test_bad_input_exits_2(survey, tmp_path, capsys, spec, message):
    refused(capsys, message, "simulate", survey, "--respondents", "10", "--cor", spec,
            "-o", tmp_path / "x.csv")


def test_a_question_in_two_draws_is_refused(survey, tmp_path, capsys):
    refused(capsys, "given twice", "simulate", survey, "--respondents", "10",
            "--cor", "hours,age=0.2", "--cor", "age,income=0.1", "-o", tmp_path / "x.csv")
