"""Moors' design: unrelated-unknown with p = 0 in one group.

Checked against closed forms written here: with p2 = 0 group 2 reports the innocuous rate q, so
pi = (lam1 - (1 - p1) lam2) / p1 and RRreg's UQTunknown SE with variances over n - 1.
"""

from __future__ import annotations

import csv
import math
import random

import pytest

from rrsite.analyze import analyze
from rrsite.cli import main
from rrsite.core.designs import DesignError, UnrelatedUnknown
from rrsite.core.privacy import smallest_epsilon
from tests.surveytext import question, survey_text

SURVEY = survey_text("moors", question("uqt", "yes-no", randomize="unrelated-unknown", p="[0.6, 0]",
                                 innocuous="Were you born in spring?", innocuous_rate=0.3),
                title="Moors")


def test_p_zero_in_one_group_is_accepted_and_private_as_the_other_group():
    for p in ((0.6, 0.0), (0.0, 0.6)):
        design = UnrelatedUnknown(p=p, innocuous_rate=0.3)
        other = [g for g in design.group_matrices() if g[0][0] != g[1][0]]
        assert len(other) == 1
        # the p = 0 group's matrix does not depend on the truth: epsilon 0
        zero = [g for g in design.group_matrices() if g[0] == g[1]]
        assert smallest_epsilon(zero[0]) == 0.0
        q, pp = 0.3, 0.6
        p00, p11 = pp + (1 - pp) * (1 - q), pp + (1 - pp) * q
        expected = math.log(max(p00 / (1 - p11), p11 / (1 - p00)))
        assert smallest_epsilon(design.matrix) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(DesignError, match="differ"):
        UnrelatedUnknown(p=(0.0, 0.0))


def test_the_innocuous_only_group_reports_the_innocuous_answer():
    design = UnrelatedUnknown(p=(0.6, 0.0), innocuous_rate=0.3)
    rng = random.Random(5)
    for truth in (0, 1):
        for own in (0, 1):
            outcome = design.randomize(truth, rng, group=2, innocuous=own)
            assert outcome.report == own and outcome.group == 2
    drawn = [design.randomize(1, rng, group=2).report for _ in range(20_000)]
    assert abs(sum(drawn) / len(drawn) - 0.3) < 4 * math.sqrt(0.21 / 20_000)


def test_estimated_as_uqtunknown_with_p2_zero(tmp_path):
    survey = tmp_path / "s.md"
    survey.write_text(SURVEY, encoding="utf-8")
    out = tmp_path / "out.csv"
    assert main(["simulate", str(survey), "--respondents", "6000", "--truth", "uqt=0.25",
                 "--seed", "3", "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    result = analyze([out], survey=survey, progress=False)
    by_group = {g: [r["uqt"] == "yes" for r in rows if r["uqt.group"] == g] for g in "12"}
    n1, n2 = len(by_group["1"]), len(by_group["2"])
    lam1, lam2 = sum(by_group["1"]) / n1, sum(by_group["2"]) / n2
    p1 = 0.6
    pi = (lam1 - (1 - p1) * lam2) / p1
    v1, v2 = lam1 * (1 - lam1) / (n1 - 1), lam2 * (1 - lam2) / (n2 - 1)
    se = math.sqrt(v1 + (1 - p1) ** 2 * v2) / p1
    question = result.question("uqt")
    assert question.estimate.estimate[0] == pytest.approx(pi, abs=1e-9)
    assert question.estimate.se[0] == pytest.approx(se, rel=1e-9)
    assert question.fit is not None
    assert question.fit.estimates["piUQ"] == pytest.approx(lam2, abs=1e-9)
    assert abs(pi - 0.25) < 4 * se
