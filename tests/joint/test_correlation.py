"""Correlations with randomized variables: RRcor's estimator.

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
from tests.joint.clitools import module_export, refused
from tests.surveytext import CHEAT_FORCED, FACULTY, HOURS, SLD, question, survey_text


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


def warner_fit(rng, n, p1, p2, replicates):
    """Latent X1, X2, Y; X1 and X2 asked with Warner p1 and p2; their rrcor (x1, y, x2)."""
    x1, x2, y = latent(rng, n)
    (z1, a1, b1), (z2, a2, b2) = warner(rng, x1, p1), warner(rng, x2, p2)
    fit = rrcor([CorVariable("x1", z1, a1, b1, True), direct("y", y),
                 CorVariable("x2", z2, a2, b2, True)], replicates=replicates)
    return fit, (x1, x2, y), (z1, z2)


def test_direct_variables_are_pearson():
    rng = np.random.default_rng(1)
    x1, _, y = latent(rng, 300)
    fit = rrcor([direct("x", x1), direct("y", y)], replicates=50)
    assert fit.r[0, 1] == pytest.approx(np.corrcoef(x1, y)[0, 1], abs=1e-12)


def test_equals_rrregs_formulation():
    fit, (_, _, y), (z1, z2) = warner_fit(np.random.default_rng(2), 1000, 0.8, 0.7, 50)

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


@pytest.mark.slow
def test_consistent_for_the_latent_correlation():
    fit, (x1, x2, y), _ = warner_fit(np.random.default_rng(3), 200_000, 0.8, 0.75, 40)
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


SURVEY = survey_text("cor-test", CHEAT_FORCED, HOURS, FACULTY, SLD, title="Cor")


export = module_export("cor", SURVEY, "--respondents", "800", "--seed", "8")


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
    refused(capsys, message, "analyze", out, "--survey", survey, "--cor", variables)


# ------------------------------------------------------------------ randomized numbers

def _bivariate(rng, n, rho):
    """A direct number x and a true number y with correlation rho (both normal)."""
    x = rng.normal(size=n)
    y = 50 + 10 * (rho * x + math.sqrt(1 - rho * rho) * rng.normal(size=n))
    return x, y


def test_mixture_number_uses_the_moment_variance_not_pi_one_minus_pi():
    """Z = Y with p = 0.7, else N(40, 15^2): the formula written out here from the moments."""
    from rrsite.core.numbers import number_design_from_spec
    from rrsite.estimate.correlation import number_variable

    rng = np.random.default_rng(21)
    x, y = _bivariate(rng, 4000, 0.6)
    keep = rng.random(4000) < 0.7
    # the device sends a mask draw rounded at random to its report grid, 0.01 without a range:
    # E[draw^2] gains 0.01^2 E[f (1 - f)] = 0.01^2 / 6 (f uniform: sd 15 is far above 0.01)
    mask = rng.normal(40, 15, 4000) / 0.01
    mask = (np.floor(mask) + (rng.random(4000) < mask - np.floor(mask))) * 0.01
    z = np.where(keep, y, mask)
    design = number_design_from_spec({"name": "mixture", "p": 0.7,
                                      "mask": {"normal": {"mean": 40, "sd": 15}}})
    fit = rrcor([number_variable("y", design, z), direct("x", x)], replicates=50)
    mu = (z.mean() - 0.3 * 40) / 0.7
    var_y = (np.mean(z ** 2) - 0.3 * (15 ** 2 + 0.01 ** 2 / 6 + 40 ** 2)) / 0.7 - mu ** 2
    cov = np.mean((z - 0.3 * 40) / 0.7 * x) - mu * x.mean()
    expected = cov / math.sqrt(var_y * x.var())
    assert fit.r[0, 1] == pytest.approx(expected, rel=1e-9)
    assert fit.means["y"] == pytest.approx(mu, rel=1e-12)
    assert fit.r[0, 1] == pytest.approx(0.6, abs=0.05)


def test_mixture_unknown_cancels_the_innocuous_number_even_when_it_correlates():
    """Groups p = 0.3 / 0.8; the innocuous number U correlates with x: it must cancel."""
    from rrsite.core.numbers import MixtureUnknown
    from rrsite.estimate.correlation import number_variable

    rng = np.random.default_rng(22)
    n = 40_000
    x, y = _bivariate(rng, n, 0.5)
    u = 30 - 8 * x + rng.normal(0, 5, n)          # innocuous answers depend on x
    g = np.where(rng.random(n) < 0.5, 1, 2)
    z = np.where(rng.random(n) < np.where(g == 1, 0.3, 0.8), y, u)
    fit = rrcor([number_variable("y", MixtureUnknown((0.3, 0.8), 0.5, None, None), z, g),
                 direct("x", x)], replicates=50)
    c1, c2 = (1 - 0.8) / (0.3 - 0.8), -(1 - 0.3) / (0.3 - 0.8)
    first, second = g == 1, g == 2
    mu = c1 * z[first].mean() + c2 * z[second].mean()
    ey2 = c1 * np.mean(z[first] ** 2) + c2 * np.mean(z[second] ** 2)
    exy = c1 * np.mean(z[first] * x[first]) + c2 * np.mean(z[second] * x[second])
    expected = (exy - mu * x.mean()) / math.sqrt((ey2 - mu ** 2) * x.var())
    assert fit.r[0, 1] == pytest.approx(expected, rel=1e-9)
    assert fit.r[0, 1] == pytest.approx(0.5, abs=0.04)
    # the naive correlation of the reports with x is pulled towards U's
    assert abs(np.corrcoef(z, x)[0, 1] - 0.5) > 0.1


@pytest.mark.parametrize("spec", [
    {"name": "additive", "scramble": {"normal": {"mean": 0, "sd": 20}}},
    {"name": "multiplicative", "scramble": {"uniform": {"min": 0.5, "max": 1.5}}},
    {"name": "laplace", "epsilon": 8, "min": 0, "max": 100},
    {"name": "piecewise", "epsilon": 8, "min": 0, "max": 100},
], ids=lambda s: s["name"])
def test_number_designs_recover_the_correlation(spec):
    """Two randomized numbers and a direct one, 20,000 respondents, true correlations known."""
    from rrsite.core.numbers import number_design_from_spec
    from rrsite.estimate.correlation import number_variable
    from rrsite.estimate.numbers import simulate_reports

    rng = np.random.default_rng(23)
    n = 20_000
    x, y = _bivariate(rng, n, 0.6)
    _, y2 = _bivariate(rng, n, 0.0)
    y2 = 50 + 0.5 * (y - 50) + 0.5 * (y2 - 50)  # corr(y, y2) = 0.5 / sqrt(0.5) ~ 0.707
    design = number_design_from_spec(spec)
    z1, _ = simulate_reports(rng, design, y)
    z2, _ = simulate_reports(rng, design, y2)
    fit = rrcor([number_variable("y", design, z1), number_variable("y2", design, z2),
                 direct("x", x)], replicates=100)
    assert fit.r[0, 2] == pytest.approx(np.corrcoef(y, x)[0, 1], abs=4 * fit.se[0, 2] + 0.005)
    assert fit.r[0, 1] == pytest.approx(np.corrcoef(y, y2)[0, 1], abs=4 * fit.se[0, 1] + 0.005)
    assert fit.se[0, 2] < 0.05


@pytest.mark.slow
def test_mixture_unknown_bootstrap_se_matches_the_spread():
    """200 surveys of 1,000: the stratified bootstrap's SE against the Monte-Carlo SD."""
    from rrsite.core.numbers import MixtureUnknown
    from rrsite.estimate.correlation import number_variable

    rng = np.random.default_rng(24)
    design = MixtureUnknown((0.3, 0.8), 0.5, None, None)
    estimates, ses = [], []
    for _ in range(200):
        x, y = _bivariate(rng, 1000, 0.5)
        g = np.where(rng.random(1000) < 0.5, 1, 2)
        z = np.where(rng.random(1000) < np.where(g == 1, 0.3, 0.8), y,
                     rng.normal(45, 10, 1000))
        fit = rrcor([number_variable("y", design, z, g), direct("x", x)], replicates=200,
                    seed=int(rng.integers(1 << 30)))
        estimates.append(fit.r[0, 1])
        ses.append(fit.se[0, 1])
    spread = float(np.std(estimates, ddof=1))
    assert float(np.mean(ses)) == pytest.approx(spread, rel=0.15)  # MC error of the SD: ~5%
    assert float(np.mean(estimates)) == pytest.approx(0.5, abs=3 * spread / math.sqrt(200) + 0.01)


NUMBER_SURVEY = survey_text(
    "cornum",
    question("income", "number", min=0, max=1000, randomize="mixture", p=0.7,
             mask="\n  uniform: {min: 0, max: 1000}", accept_no_epsilon="true"),
    question("spend", "number", min=0, max=100, randomize="duchi", epsilon=1),
    HOURS, title="Correlations of numbers")


def test_cli_randomized_numbers_and_duchi_refused(tmp_path, capsys):
    survey = tmp_path / "s.md"
    survey.write_text(NUMBER_SURVEY, encoding="utf-8")
    out = tmp_path / "out.csv"
    assert main(["simulate", str(survey), "--respondents", "500", "--seed", "3",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["analyze", str(out), "--survey", str(survey), "--cor", "income,hours",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["correlations"]
    assert set(data["means"]) == {"income"} and data["prevalence"] == {}
    assert abs(data["r"][0][1]) < 4 * data["se"][0][1]  # simulated independently
    refused(capsys, "duchi", "analyze", out, "--survey", survey, "--cor", "income,spend")


@pytest.mark.slow
def test_fieller_interval_is_the_set_of_accepted_correlations():
    """The quadratic's roots against a brute-force scan: rho in the interval exactly when
    (C - rho S)^2 <= z^2 Var(C - rho S), the variance taken directly over the replicates.

    The scan visits the points of a grid of step 0.00005 on [-1, 1]: every 20th point, then all
    points next to the ends found (the accepted set of a quadratic inequality is one interval,
    or the whole range minus one)."""
    from rrsite.estimate.correlation import _fieller

    rng = np.random.default_rng(40)
    for _ in range(20):
        c, s = rng.normal(0.3, 0.05), rng.normal(1.0, 0.15)
        boot_c = c + rng.normal(0, 0.05, 500)
        boot_s = s + 0.3 * (boot_c - c) + rng.normal(0, 0.15, 500)
        low, high = _fieller(np.array([[1.0, c], [c, 1.0]]), np.array([1.0, s]),
                             np.stack([np.stack([np.ones(500), boot_c]),
                                       np.stack([boot_c, np.ones(500)])]).transpose(2, 0, 1),
                             np.column_stack([np.ones(500), boot_s]), 0.95)
        def accepted(grid, c=c, s=s, boot_c=boot_c, boot_s=boot_s):
            spread = np.var(boot_c[None, :] - grid[:, None] * boot_s[None, :], axis=1, ddof=1)
            return grid[(c - grid * s) ** 2 <= 1.959963984540054 ** 2 * spread]

        coarse = accepted(np.linspace(-1, 1, 2_001))                  # every 20th point
        first = accepted(np.linspace(max(coarse.min() - 0.001, -1), coarse.min(), 21)).min()
        last = accepted(np.linspace(coarse.max(), min(coarse.max() + 0.001, 1), 21)).max()
        assert low[0, 1] == pytest.approx(first, abs=1e-4)
        assert high[0, 1] == pytest.approx(last, abs=1e-4)
        assert low[0, 0] == high[0, 0] == 1.0


@pytest.mark.slow
def test_fieller_covers_a_noisy_number_correlation():
    """300 surveys of 1,000: a number under a noisy mixture (reliability about 0.15) and a
    direct variable, true correlation 0.5; the interval covers about 95%."""
    from rrsite.core.numbers import number_design_from_spec
    from rrsite.estimate.correlation import number_variable
    from rrsite.estimate.numbers import simulate_reports

    design = number_design_from_spec({"name": "mixture", "p": 0.7,
                                      "mask": {"uniform": {"min": 0, "max": 100}}})
    rng = np.random.default_rng(41)
    covered = 0
    for _ in range(300):
        x, y = _bivariate(rng, 1000, 0.5)
        z, _ = simulate_reports(rng, design, y)
        fit = rrcor([number_variable("y", design, z), direct("x", x)], replicates=200,
                    seed=int(rng.integers(1 << 30)))
        covered += fit.ci_low[0, 1] <= 0.5 <= fit.ci_high[0, 1]
        assert fit.ci_low[0, 1] <= fit.r[0, 1] <= fit.ci_high[0, 1]
    assert 0.92 <= covered / 300 <= 0.985
    assert fit.to_dict()["interval_method"] == "Fieller, bootstrap covariance"
