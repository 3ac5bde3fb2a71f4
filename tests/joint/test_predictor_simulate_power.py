"""`rrsite simulate --predictor` and `rrsite power --predictor` (issue 23, item 6).

Independent checks: the simulated export, analysed, recovers the coefficients it was made with;
the export holds reports only (the true answers are never written); the asymptotic variance of
the power calculation against the empirical variance of the estimates over simulated surveys, and
against the cell probabilities summed by hand.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import special

from rrsite.cli import main
from rrsite.estimate.joint import JointPart
from rrsite.estimate.regression.predictors import fit_predictors, latent_classes
from rrsite.plan.power_predictor import PredictorScenario, cell_probabilities, slope_variance

ROOT = Path(__file__).resolve().parents[2]
DOPING = ROOT / "surveys" / "doping.md"
HONOR = ROOT / "surveys" / "honor-code.md"


def test_simulated_export_recovers_the_linear_model(tmp_path, capsys):
    export = tmp_path / "doping.csv"
    assert main(["simulate", str(DOPING), "--respondents", "20000", "--seed", "4",
                 "--truth", "doped=0.25", "--predictor", "hours ~ 10 + 5*doped[yes]; sd=3",
                 "-o", str(export)]) == 0
    with export.open(encoding="utf-8") as handle:
        doped = {row["doped"] for row in csv.DictReader(handle)}
    assert doped <= {"same", "different"}        # crosswise reports, never the true answers
    capsys.readouterr()
    assert main(["analyze", str(export), "--survey", str(DOPING), "--format", "json",
                 "--model", "hours ~ doped"]) == 0
    model = json.loads(capsys.readouterr().out)["models"][0]
    coef = {c["name"]: c for c in model["coefficients"]}
    assert abs(coef["(Intercept)"]["estimate"] - 10) < 4 * coef["(Intercept)"]["se"]
    assert abs(coef["doped[yes]"]["estimate"] - 5) < 4 * coef["doped[yes]"]["se"]
    assert abs(model["sigma"] - 3) < 4 * model["sigma_se"]
    shares = {tuple(c["answers"]): c for c in model["classes"]}
    assert abs(shares[("yes",)]["estimate"] - 0.25) < 4 * shares[("yes",)]["se"]


def test_simulated_export_recovers_a_logistic_model_with_a_direct_covariate(tmp_path, capsys):
    survey = tmp_path / "s.md"
    survey.write_text("""---
id: simpred
title: t
privacy:
  budget: 2
submit:
  to: collector
---
## Q

```question
id: cheated
type: yes-no
randomize: forced-response
truth: 1/2
yes: 1/4
no: 1/4
```

## P

```question
id: passed
type: yes-no
required: true
```

## Y

```question
id: year
type: choice
options: [First, Second]
required: true
```
""", encoding="utf-8")
    export = tmp_path / "x.csv"
    assert main(["simulate", str(survey), "--respondents", "20000", "--seed", "5",
                 "--truth", "cheated=0.3", "--truth", "year=First:0.5,Second:0.5",
                 "--predictor", "passed ~ 0.5 - 1.2*cheated[yes] + 0.6*year[Second]",
                 "-o", str(export)]) == 0
    capsys.readouterr()
    assert main(["analyze", str(export), "--survey", str(survey), "--format", "json",
                 "--model", "passed ~ cheated + year"]) == 0
    model = json.loads(capsys.readouterr().out)["models"][0]
    coef = {c["name"]: c for c in model["coefficients"]}
    for name, truth in (("(Intercept)", 0.5), ("cheated[yes]", -1.2), ("year[Second]", 0.6)):
        assert abs(coef[name]["estimate"] - truth) < 4 * coef[name]["se"], name


@pytest.mark.parametrize("text, message", [
    ("doped ~ 1 + 2*hours", "must be a directly asked number or yes-no"),
    ("hours ~ 1 + 2*doped[maybe]", "write doped[ANSWER]"),
    ("hours ~ 1; sd=-1", "sd must be above 0"),
    ("hours ~ 1", "name a randomized question's true answer"),
])
def test_simulate_predictor_refusals(tmp_path, capsys, text, message):
    assert main(["simulate", str(DOPING), "--respondents", "10", "--predictor", text,
                 "-o", str(tmp_path / "x.csv")]) == 2
    assert message in capsys.readouterr().err


def test_cell_probabilities_by_hand():
    s = PredictorScenario(0.8, 0.7, 0.2, 0.3, 2.0)
    p0 = 0.2
    p1 = 2 * p0 / (1 - p0) / (1 + 2 * p0 / (1 - p0))
    # report yes, outcome yes: truth no (0.7 * 0.2 * p0) + truth yes (0.3 * 0.7 * p1)
    expected = 0.7 * 0.2 * p0 + 0.3 * 0.7 * p1
    assert cell_probabilities(s.theta, s.matrix)[3] == pytest.approx(expected, rel=1e-12)
    assert cell_probabilities(s.theta, s.matrix).sum() == pytest.approx(1.0, rel=1e-12)


def test_asymptotic_variance_matches_the_spread_of_simulated_estimates():
    s = PredictorScenario(0.8, 0.8, 0.3, 0.4, 2.0)
    n, reps = 2000, 150
    rng = np.random.default_rng(7)
    slopes = []
    for _ in range(reps):
        truth = (rng.random(n) < s.exposed).astype(int)
        y = (rng.random(n) < special.expit(s.theta[0] + s.theta[1] * truth)).astype(float)
        report = np.where(truth == 1, rng.random(n) < s.p11, rng.random(n) >= s.p00).astype(int)
        part = JointPart((s.matrix,), np.bincount(report, minlength=2).astype(float))
        classes = latent_classes([part], [report], [["no", "yes"]], ["no"], ["q"])
        fit = fit_predictors("logistic", y, np.ones((n, 1)), ["(Intercept)"], [], classes,
                             [("q", [0])], tests=False, profile=[])
        slopes.append(fit.beta[1])
    empirical = float(np.var(slopes, ddof=1))
    predicted = slope_variance(s) / n
    # the sample variance of 150 draws has a relative SE of about sqrt(2 / 149) = 12%
    assert abs(empirical / predicted - 1) < 0.4
    assert abs(np.mean(slopes) - math.log(2)) < 4 * math.sqrt(predicted / reps) + 0.02


def test_power_cli_predictor(capsys):
    assert main(["power", "--odds-ratio", "3", "--design", "0.8,0.8", "--prevalence", "0.3",
                 "--exposed", "0.4", "--predictor", "--simulations", "10",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "randomized predictor" in out
    n0 = int(out.split("expected information): ")[1].split(" ")[0].replace(",", ""))
    s = PredictorScenario(0.8, 0.8, 0.3, 0.4, 3.0)
    z = 1.959963984540054 + 0.8416212335729143
    assert n0 == math.ceil(z * z * slope_variance(s) / math.log(3) ** 2)
