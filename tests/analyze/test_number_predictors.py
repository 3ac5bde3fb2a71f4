"""A randomized number as a predictor: least squares with the scrambling noise's variance
subtracted (errors-in-variables by moments), checked against the one-predictor closed form
written here, by recovery and by the spread over simulated surveys."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rrsite.analyze.regression.number_predictors import fit_corrected
from rrsite.cli import main

SURVEY = Path(__file__).resolve().parents[2] / "surveys" / "hidden-numbers.md"


def _additive(rng, q, sd):
    return q + rng.normal(0, sd, len(q)), np.full(len(q), sd * sd)


def _mixture(rng, q, p, low, high):
    """Z = Q with chance p, else uniform(low, high); r and its unbiased noise variance."""
    z = np.where(rng.random(len(q)) < p, q, rng.uniform(low, high, len(q)))
    m, v = (low + high) / 2, (high - low) ** 2 / 12
    r = (z - (1 - p) * m) / p
    # Var(r | q) = ((1 - p) v + p (1 - p) (q - m)^2) / p^2, with q^2 estimated without bias
    w0 = ((1 - p) * v + p * (1 - p) * m * m) / p ** 2
    w1 = -2 * p * (1 - p) * m / p ** 2
    w2 = p * (1 - p) / p ** 2
    square = (r * r - w1 * r - w0) / (1 + w2)
    return r, w0 + w1 * r + w2 * square


def test_one_predictor_matches_the_closed_form() -> None:
    rng = np.random.default_rng(1)
    n = 500
    q = rng.normal(10, 3, n)
    y = 1 + 2 * q + rng.normal(0, 2, n)
    r, v = _additive(rng, q, 4)
    X = np.column_stack([np.ones(n), r])
    fit = fit_corrected(X, y, np.column_stack([np.zeros(n), v]), ["(Intercept)", "q"])
    centred = r - r.mean()
    slope = np.sum(centred * (y - y.mean())) / (np.sum(centred ** 2) - v.sum())
    assert fit.beta[1] == pytest.approx(slope, rel=1e-10)
    assert fit.beta[0] == pytest.approx(y.mean() - slope * r.mean(), rel=1e-10)


@pytest.mark.parametrize("kind", ["additive", "mixture"])
def test_recovers_the_slopes_where_least_squares_attenuates(kind: str) -> None:
    rng = np.random.default_rng(2)
    n = 20_000
    q = rng.normal(10, 3, n)
    x = rng.normal(0, 1, n) + 0.3 * (q - 10)
    y = 1 + 2 * q + 0.5 * x + rng.normal(0, 2, n)
    r, v = _additive(rng, q, 5) if kind == "additive" else _mixture(rng, q, 0.5, 0, 20)
    X = np.column_stack([np.ones(n), r, x])
    fit = fit_corrected(X, y, np.column_stack([np.zeros(n), v, np.zeros(n)]),
                        ["(Intercept)", "q", "x"])
    assert abs(fit.beta[1] - 2) < 4 * fit.se[1]
    assert abs(fit.beta[2] - 0.5) < 4 * fit.se[2]
    naive = np.linalg.lstsq(X, y, rcond=None)[0]
    assert naive[1] < 2 - 10 * fit.se[1]  # ordinary least squares is biased towards zero


def test_standard_errors_match_the_spread_and_intervals_cover() -> None:
    rng = np.random.default_rng(3)
    estimates, ses, covered = [], [], 0
    reps = 400
    for _ in range(reps):
        n = 800
        q = rng.normal(10, 3, n)
        x = rng.normal(0, 1, n)
        y = 1 + 2 * q + 0.5 * x + rng.normal(0, 2, n)
        r, v = _mixture(rng, q, 0.8, 0, 20)
        X = np.column_stack([np.ones(n), r, x])
        fit = fit_corrected(X, y, np.column_stack([np.zeros(n), v, np.zeros(n)]),
                            ["(Intercept)", "q", "x"])
        estimates.append(fit.beta[1])
        ses.append(fit.se[1])
        row = fit.coefficients()[1]
        covered += row["ci_low"] <= 2 <= row["ci_high"]
    spread = float(np.std(estimates, ddof=1))
    assert float(np.mean(ses)) == pytest.approx(spread, rel=0.12)  # MC error of the SD ~3.5%
    assert abs(float(np.mean(estimates)) - 2) < 4 * spread / math.sqrt(reps)
    assert covered / reps >= 0.92


def test_noise_larger_than_the_spread_is_refused() -> None:
    rng = np.random.default_rng(4)
    n = 50
    q = rng.normal(10, 0.5, n)
    r, v = _additive(rng, q, 30)
    X = np.column_stack([np.ones(n), r])
    with pytest.raises(Exception, match="outweighs their spread"):
        fit_corrected(X, q, np.column_stack([np.zeros(n), v * 4]), ["(Intercept)", "q"])


def test_cli_end_to_end_and_refusals(tmp_path, capsys) -> None:
    out = tmp_path / "sim.csv"
    assert main(["simulate", str(SURVEY), "--respondents", "800", "--seed", "5",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["analyze", str(out), "--survey", str(SURVEY), "--model",
                 "undeclared ~ days", "--format", "json"]) == 0
    model = json.loads(capsys.readouterr().out)["models"][0]
    assert model["randomized_predictors"] == ["days"]
    assert "errors-in-variables" in model["method"]
    assert [c["name"] for c in model["coefficients"]] == ["(Intercept)", "days"]
    slope = model["coefficients"][1]
    assert slope["ci_low"] < slope["ci_high"]
    for formula, message in (("undeclared ~ scale(days)", "main effect"),
                             ("undeclared ~ region:days", "main effect")):
        assert main(["analyze", str(out), "--survey", str(SURVEY), "--model", formula]) == 2
        assert message in capsys.readouterr().err
