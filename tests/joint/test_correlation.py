"""Correlations with randomized variables (issue 23, item 2): RRcor's estimator.

Independent checks: numpy's corrcoef for direct variables; RRreg's own formulation of the noise
(mask.var = (1 - pt)/pt (x.var + y.var/pt + (x.mu - y.mu)^2), RRcor.models.R) written out here;
the true correlation of simulated latent answers; bootstrap SEs against the Monte-Carlo spread.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rrsite.cli import main
from rrsite.estimate.correlation import CorVariable, mixture_moments, rrcor


def warner(rng, truth, p):
    keep = rng.random(len(truth)) < p
    n = len(truth)
    return np.where(keep, truth, 1 - truth), np.full(n, 1 - p), np.full(n, 2 * p - 1)


def direct(name, values):
    return CorVariable(name, values, np.zeros(len(values)), np.ones(len(values)), False)


def latent(rng, n, rho=0.5):
    """Binary X1, X2 and normal Y, all correlated through a common factor."""
    common = rng.normal(size=n)
    y = common + rng.normal(size=n)
    x1 = (common + rng.normal(size=n) > 0.3).astype(float)
    x2 = (rho * common + rng.normal(size=n) > -0.2).astype(float)
    return x1, x2, y


def test_direct_variables_are_pearson():
    rng = np.random.default_rng(1)
    x1, _, y = latent(rng, 300)
    fit = rrcor([direct("x", x1), direct("y", y)], replicates=50)
    assert fit.r[0, 1] == pytest.approx(np.corrcoef(x1, y)[0, 1], abs=1e-12)


def test_equals_rrregs_formulation():
    rng = np.random.default_rng(2)
    x1, x2, y = latent(rng, 1000)
    (z1, a1, b1), (z2, a2, b2) = warner(rng, x1, 0.8), warner(rng, x2, 0.7)
    fit = rrcor([CorVariable("x1", z1, a1, b1, True), direct("y", y),
                 CorVariable("x2", z2, a2, b2, True)], replicates=50)

    def quotient(z, p):  # RRcor.models.R for Warner: pt = 2p - 1, y.mu = 1/2
        pt, y_mu = 2 * p - 1, 0.5
        x_est = (z - (1 - pt) * y_mu) / pt
        pi = (np.mean(z) + p - 1) / (2 * p - 1)           # RRuni's Warner moment estimate
        x_var = pi * (1 - pi)
        mask = (1 - pt) / pt * (x_var + y_mu * (1 - y_mu) / pt + (pi - y_mu) ** 2)
        return x_est, mask / x_var

    e1, q1 = quotient(z1, 0.8)
    e2, q2 = quotient(z2, 0.7)
    assert fit.r[0, 1] == pytest.approx(np.corrcoef(e1, y)[0, 1] * math.sqrt(1 + q1), abs=1e-10)
    assert fit.r[0, 2] == pytest.approx(
        np.corrcoef(e1, e2)[0, 1] * math.sqrt((1 + q1) * (1 + q2)), abs=1e-10)


def test_consistent_for_the_latent_correlation():
    rng = np.random.default_rng(3)
    x1, x2, y = latent(rng, 200_000)
    (z1, a1, b1), (z2, a2, b2) = warner(rng, x1, 0.8), warner(rng, x2, 0.75)
    fit = rrcor([CorVariable("x1", z1, a1, b1, True), direct("y", y),
                 CorVariable("x2", z2, a2, b2, True)], replicates=40)
    truth = np.corrcoef([x1, y, x2])
    assert np.all(np.abs(fit.r - truth) < 4 * fit.se + 1e-12), (fit.r, truth, fit.se)


def test_bootstrap_se_matches_the_monte_carlo_spread():
    rng = np.random.default_rng(4)
    estimates, ses = [], []
    for _ in range(300):
        x1, _, y = latent(rng, 400)
        z1, a1, b1 = warner(rng, x1, 0.8)
        fit = rrcor([CorVariable("x1", z1, a1, b1, True), direct("y", y)], replicates=200,
                    seed=int(rng.integers(1 << 30)))
        estimates.append(fit.r[0, 1])
        ses.append(fit.se[0, 1])
    spread = np.std(estimates, ddof=1)
    # the sd of 300 estimates is known to about 4%: 15% allows for it and the bootstrap's bias
    assert np.mean(ses) == pytest.approx(spread, rel=0.15)


def test_mixture_variance_is_not_the_binary_one():
    rng = np.random.default_rng(5)
    n, p = 400_000, 0.7
    x = rng.gamma(4.0, 2.0, size=n)                       # mean 8, variance 16
    mask = rng.normal(10.0, 3.0, size=n)
    z = np.where(rng.random(n) < p, x, mask)
    mean, variance = mixture_moments(z, p, 10.0, 10.0**2 + 3.0**2)
    assert mean == pytest.approx(8.0, abs=0.05)
    assert variance == pytest.approx(16.0, rel=0.03)
    assert abs(variance - mean * (1 - mean)) > 50         # RRcor's pi (1 - pi) is far off


SURVEY = """\
---
id: cor-test
title: Cor
language: en
privacy:
  budget: 20
---

## Q

```question
id: cheat
type: yes-no
randomize: forced-response
```

## Q

```question
id: hours
type: number
min: 0
max: 100
```

## Q

```question
id: faculty
type: choice
options: [arts, science]
```

## Q

```question
id: sld
type: yes-no
randomize: sld
p: [0.3, 0.7]
accept_no_epsilon: true
```
"""


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    root = tmp_path_factory.mktemp("cor")
    survey = root / "s.md"
    survey.write_text(SURVEY, encoding="utf-8")
    out = root / "out.csv"
    assert main(["simulate", str(survey), "--respondents", "800", "--seed", "8",
                 "-o", str(out)]) == 0
    return survey, out


def test_cli_json(export, capsys):
    survey, out = export
    assert main(["analyze", str(out), "--survey", str(survey), "--cor", "cheat,hours",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["correlations"]
    assert data["variables"] == ["cheat", "hours"]
    assert data["se_method"] == "nonparametric bootstrap"
    r, low, high = data["r"][0][1], data["ci_low"][0][1], data["ci_high"][0][1]
    assert low <= r <= high and data["se"][0][1] > 0
    # the simulator draws the answers independently: no correlation
    assert abs(r) < 4 * data["se"][0][1]


@pytest.mark.parametrize("variables, message", [
    ("cheat,cheat", "cheat appears twice"),
    ("cheat,faculty", "'faculty' is a choice question"),
    ("cheat", "two or more"),
])
def test_bad_input_exits_2(export, capsys, variables, message):
    survey, out = export
    assert main(["analyze", str(out), "--survey", str(survey), "--cor", variables]) == 2
    assert message in capsys.readouterr().err
