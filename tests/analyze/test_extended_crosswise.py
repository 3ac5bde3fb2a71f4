"""The extended crosswise model (Heck, Hoffmann & Moshagen 2018): design, survey keys, analysis.

Group 1 is shown the innocuous statement true for p of people, group 2 its complement (1 - p);
one prevalence explains both groups. The maximum-likelihood estimate and the goodness-of-fit
statistic are checked against the two binomial likelihoods written out here; the test's size and
power, and the interval's coverage, by simulation.
"""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats

from rrsite.analyze import analyze
from rrsite.analyze.sample_design import SampleOptions
from rrsite.cli import main
from rrsite.core import DesignError, ExtendedCrosswise, design_from_spec, privacy_of
from rrsite.estimate.univariate import fit, parts_from_manifest
from rrsite.survey import load_survey

SURVEY = """---
id: campus
title: Campus
language: en
privacy: {budget: 1.1}
submit: {to: collector}
---

## I have used a stimulant to study.

```question
id: stimulants
type: yes-no
short: Study stimulants
randomize: extended-crosswise
p: 1/4
innocuous: My mother was born in January, February or March.
complement: My mother was born between April and December.
```
"""
QUESTION = {"id": "x", "rrreg": {"model": "Crosswise", "p": 0.25, "group_p": [0.25, 0.75]},
            "reports": ["different", "same"]}


def test_the_design_is_crosswise_with_p_and_its_complement() -> None:
    design = design_from_spec({"name": "extended-crosswise", "p": 0.25})
    assert isinstance(design, ExtendedCrosswise)
    assert design.group_matrices() == (((0.25, 0.75), (0.75, 0.25)),
                                       ((0.75, 0.25), (0.25, 0.75)))
    assert design.report_values() == ("different", "same")
    assert design.rrreg() == {"model": "Crosswise", "p": 0.25, "group_p": [0.25, 0.75]}
    assert privacy_of(design).epsilon == pytest.approx(math.log(3))
    assert design.spec() == {"name": "extended-crosswise", "p": 0.25, "probability": 0.5}
    with pytest.raises(DesignError, match="0.5"):
        ExtendedCrosswise(p=0.5)
    # simulated respondents: P(same | truth, group) is p or 1 - p as the group says
    rng = random.Random(5)
    same = {(t, g): 0 for t in (0, 1) for g in (1, 2)}
    for _ in range(20000):
        for truth in (0, 1):
            outcome = design.randomize(truth, rng)
            same[(truth, outcome.group)] += outcome.report
    for (truth, group), count in same.items():
        rate = 0.25 if group == 1 else 0.75
        expected = rate if truth else 1 - rate
        assert count / 10000 == pytest.approx(expected, abs=0.02), (truth, group)


def loglik(pi: float, counts: dict[int, tuple[int, int]]) -> float:
    """Two binomials: P(same | group g) = pi p_g + (1 - pi)(1 - p_g), p = (1/4, 3/4)."""
    total = 0.0
    for group, (different, same) in counts.items():
        p = 0.25 if group == 1 else 0.75
        rate = pi * p + (1 - pi) * (1 - p)
        total += same * math.log(rate) + different * math.log(1 - rate)
    return total


@pytest.mark.parametrize("counts", [{1: (600, 400), 2: (420, 580)},
                                    {1: (520, 480), 2: (505, 495)},
                                    {1: (700, 300), 2: (380, 620)}])
def test_the_estimate_and_the_test_are_the_two_binomials_likelihood(counts) -> None:
    parts = parts_from_manifest(QUESTION, {g: {"different": d, "same": s}
                                           for g, (d, s) in counts.items()})
    result = fit(parts)
    best = optimize.minimize_scalar(lambda pi: -loglik(pi, counts), bounds=(1e-9, 1 - 1e-9),
                                    method="bounded", options={"xatol": 1e-10})
    assert result.estimates["pi"] == pytest.approx(best.x, abs=1e-6)
    saturated = sum(s * math.log(s / (d + s)) + d * math.log(d / (d + s))
                    for d, s in counts.values())
    g2 = 2 * (saturated - loglik(best.x, counts))
    assert result.gof is not None
    assert result.gof["G2"] == pytest.approx(g2, abs=1e-6)
    assert result.gof["df"] == 1
    assert result.gof["p_value"] == pytest.approx(stats.chi2.sf(g2, 1), abs=1e-6)


def simulate_groups(rng: np.random.Generator, n: int, prevalence: float,
                    always_different: float = 0.0) -> dict[int, dict[str, int]]:
    out = {}
    for group, p in ((1, 0.25), (2, 0.75)):
        size = n // 2
        rebels = rng.binomial(size, always_different)
        rate = prevalence * p + (1 - prevalence) * (1 - p)
        same = int(rng.binomial(size - rebels, rate))
        out[group] = {"different": size - same, "same": same}
    return out


@pytest.mark.slow
def test_the_test_holds_its_size_and_finds_non_compliance_by_simulation() -> None:
    rng = np.random.default_rng(2018)
    reps = 2000
    rejected = covered = 0
    for _ in range(reps):
        result = fit(parts_from_manifest(QUESTION, simulate_groups(rng, 1000, 0.2)))
        assert result.gof is not None
        rejected += result.gof["p_value"] < 0.05
        low, high = result.intervals["pi"]
        covered += low <= 0.2 <= high
    se = math.sqrt(0.05 * 0.95 / reps)
    assert 0.05 - 3 * se <= rejected / reps <= 0.05 + 3 * se
    assert covered / reps >= 0.94
    # a fifth answering "different" whatever the statements: the groups disagree
    found = sum(fit(parts_from_manifest(QUESTION, simulate_groups(rng, 2000, 0.2, 0.2)))
                .gof["p_value"] < 0.05 for _ in range(300))
    assert found / 300 > 0.9


def test_an_analysis_reports_the_test_and_each_groups_estimate(tmp_path: Path, capsys) -> None:
    survey = tmp_path / "campus.md"
    survey.write_text(SURVEY, "utf-8")
    export = tmp_path / "export.csv"
    assert main(["simulate", str(survey), "--respondents", "3000", "--truth",
                 "stimulants=0.2", "--seed", "1", "-o", str(export)]) == 0
    data = analyze([export], survey=survey, progress=False).to_dict()
    question = data["questions"][0]
    with open(export, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    counts = {g: (sum(r["stimulants"] == "different" for r in rows if r["stimulants.group"] == g),
                  sum(r["stimulants"] == "same" for r in rows if r["stimulants.group"] == g))
              for g in ("1", "2")}
    numbered = {int(g): c for g, c in counts.items()}
    best = optimize.minimize_scalar(lambda pi: -loglik(pi, numbered), bounds=(1e-9, 1 - 1e-9),
                                    method="bounded", options={"xatol": 1e-10})
    assert question["estimate"] == pytest.approx(best.x, abs=1e-6)
    assert question["ci"][0] <= 0.2 <= question["ci"][1]
    extended = data["compliance"]["extended"][0]
    assert extended["question"] == "stimulants"
    for g in ("1", "2"):
        different, same = counts[g]
        p = 0.25 if g == "1" else 0.75
        assert extended["groups"][g]["n"] == different + same
        assert extended["groups"][g]["estimate"] == pytest.approx(
            (same / (different + same) + p - 1) / (2 * p - 1), abs=1e-12)
    assert extended["goodness_of_fit"]["df"] == 1
    assert "agree with one prevalence" in extended["verdict"]
    assert main(["analyze", str(export), "--survey", str(survey)]) == 0
    text = capsys.readouterr().out
    assert "Extended crosswise: do the two groups agree?" in text
    assert "Study stimulants (stimulants): group 1 (p = 0.25" in text


def test_the_survey_keys_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"

    def errors(text: str) -> str:
        path.write_text(text, "utf-8")
        from rrsite.survey.errors import SurveyErrors

        try:
            load_survey(str(path))
        except SurveyErrors as error:
            return str(error)
        return ""

    no_complement = SURVEY.replace("complement: My mother was born between April and December.\n",
                                   "")
    assert "design extended-crosswise needs complement" in errors(no_complement)
    assert "bad.md:15:" in errors(no_complement)  # the randomize line
    crosswise_complement = SURVEY.replace("randomize: extended-crosswise", "randomize: crosswise")
    message = errors(crosswise_complement)
    assert "bad.md:18:" in message and "complement is not a parameter of crosswise" in message
    anchor_on_sld = SURVEY.replace(
        "randomize: extended-crosswise\np: 1/4\ninnocuous: My mother was born in January, "
        "February or March.\ncomplement: My mother was born between April and December.\n",
        "randomize: sld\np: [0.2, 0.8]\naccept_no_epsilon: true\nanchor: true\n")
    assert "anchor is not a parameter of sld" in errors(anchor_on_sld)
    anchor = ("\n## I was born on 30 February.\n\n```question\nid: {id}\ntype: yes-no\n"
              "randomize: crosswise\nanchor: true\np: 1/4\ninnocuous: My father was born in "
              "January to March.\n```\n")
    two = SURVEY.replace("budget: 1.1", "budget: 9") + anchor.format(id="a1") + anchor.format(
        id="a2")
    assert "'a2' is a second anchor question (the first is 'a1'" in errors(two)


def test_the_r_script_fits_each_group_and_both(tmp_path: Path) -> None:
    survey = tmp_path / "campus.md"
    survey.write_text(SURVEY, "utf-8")
    script = tmp_path / "fit.R"
    assert main(["export", "--manifest", str(survey), "--r-script", str(script)]) == 0
    text = script.read_text("utf-8")
    assert ('group <- suppressWarnings(as.numeric(column(data, "stimulants.group", '
            '"stimulants_group")))') in text
    assert "pg <- if (g == 1) 0.25 else 1 - 0.25" in text
    assert ('print(summary(RRuni(response = y[ingroup(g)], model = "Crosswise", p = pg)))'
            in text)
    assert "lambda <- pi * pgroup + (1 - pi) * (1 - pgroup)" in text  # one prevalence, two p
    assert "G2 <- 2 * (saturated - best$objective)" in text and "pchisq(G2, 1)" in text


def simulated(tmp_path: Path, respondents: int, stimulants: float, seed: int
              ) -> tuple[Path, Path, list[dict[str, str]]]:
    """SURVEY simulated into tmp_path/export.csv: the survey file, the export, and its rows."""
    survey = tmp_path / "campus.md"
    survey.write_text(SURVEY, "utf-8")
    export = tmp_path / "export.csv"
    assert main(["simulate", str(survey), "--respondents", str(respondents), "--truth",
                 f"stimulants={stimulants}", "--seed", str(seed), "-o", str(export)]) == 0
    with open(export, newline="", encoding="utf-8") as handle:
        return survey, export, list(csv.DictReader(handle))


def test_report_counts_give_the_same_test(tmp_path: Path) -> None:
    from rrsite.analyze.api import analyze_counts

    survey, export, rows = simulated(tmp_path, 1000, 0.3, seed=4)
    counts = tmp_path / "counts.csv"
    with open(counts, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "version", "group", "report", "count"])
        for group in ("1", "2"):
            for report in ("different", "same"):
                writer.writerow(["stimulants", rows[0]["version"], group, report,
                                 sum(r["stimulants.group"] == group and r["stimulants"] == report
                                     for r in rows)])
    from_rows = analyze([export], survey=survey, progress=False).to_dict()["compliance"]
    from_counts = analyze_counts(counts, survey=survey).to_dict()["compliance"]
    assert from_counts["extended"] == from_rows["extended"]


def test_plan_sizes_it_as_the_crosswise_model(capsys) -> None:
    # each group's variance is the crosswise model's: |2p - 1| and lambda (1 - lambda) agree
    sizes = []
    for design in ("extended-crosswise", "crosswise"):
        assert main(["plan", "--design", design, "--rrreg-p", "0.25", "--prior", "0.2",
                     "--margin", "0.05", "--format", "json"]) == 0
        sizes.append(json.loads(capsys.readouterr().out)["respondents"])
    assert sizes[0] == sizes[1]
    # by the likelihood: the information of n/2 reports in each group equals n crosswise ones
    parts = parts_from_manifest(QUESTION, {1: {"different": 300, "same": 200},
                                           2: {"different": 200, "same": 300}})
    from rrsite.estimate.univariate import observed_information

    pi = np.array([0.7])
    group_info = observed_information(pi, parts)[0, 0]
    lam = 0.7 * 0.25 + 0.3 * 0.75
    assert group_info == pytest.approx(1000 * (2 * 0.25 - 1) ** 2 / (lam * (1 - lam)), rel=0.05)


def test_design_based_estimates_debias_each_row_with_its_groups_p(tmp_path: Path) -> None:
    survey, export, rows = simulated(tmp_path, 1200, 0.25, seed=9)
    for i, row in enumerate(rows):
        row["w"] = str(1 + i % 4)
    weighted = tmp_path / "weighted.csv"
    with open(weighted, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    data = analyze([weighted], survey=survey, progress=False,
                   sample=SampleOptions(weights="w")).to_dict()
    based = data["questions"][0]["design_based"]["values"]["yes"]["estimate"]
    # each row: (same + p_g - 1) / (2 p_g - 1), p_1 = 1/4, p_2 = 3/4; the weighted (Hajek) mean
    values = [((r["stimulants"] == "same") + p - 1) / (2 * p - 1)
              for r in rows for p in [0.25 if r["stimulants.group"] == "1" else 0.75]]
    weights = [float(r["w"]) for r in rows]
    assert based == pytest.approx(np.average(values, weights=weights), abs=1e-12)
