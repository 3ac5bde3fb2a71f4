"""Randomized answers as predictors: likelihood, maximum, SEs, recovery, CLI.

Independent computations written here: the likelihood as a loop over every respondent's latent
true answers (no Kronecker product, scipy.stats densities), its maximum by scipy.optimize (BFGS on
an unconstrained parameterisation of this brute-force likelihood, from the true values), the
observed information by central differences of the brute-force likelihood, recovery by simulation.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, special, stats

from rrsite.cli import main
from rrsite.estimate.joint import JointPart
from rrsite.estimate.regression.logistic import hessian_of_gradient
from rrsite.estimate.regression.predictors import (
    LatentModel,
    class_design,
    fit_predictors,
    latent_classes,
    loglik,
)
from rrsite.exports.catalog import build_catalog
from tests.analyze.stats import numerical_hessian
from tests.joint.clitools import refused
from tests.surveytext import CHEATED_FORCED, HOURS, YEAR, question, survey_text

FORCED = np.array([[0.75, 0.25], [0.25, 0.75]])
WARNER = np.array([[0.8, 0.2], [0.2, 0.8]])
ONE_SIDED = np.array([[0.6, 0.4], [0.0, 1.0]])


def simulate(n, seed, kind, table, beta, sigma=1.0, versions=((FORCED, WARNER), (WARNER, FORCED))):
    """Rows of two versions (designs swapped) with two randomized yes-no predictors and one x."""
    rng = np.random.default_rng(seed)
    combos = list(itertools.product((0, 1), repeat=2))
    cls = rng.choice(4, size=n, p=table)
    t = np.array([combos[c] for c in cls])
    x = rng.normal(size=n)
    eta = beta[0] + beta[1] * t[:, 0] + beta[2] * t[:, 1] + beta[3] * x
    if kind == "linear":
        y = eta + sigma * rng.normal(size=n)
    else:
        y = (rng.random(n) < special.expit(eta)).astype(float)
    version = rng.integers(0, len(versions), n)
    reports = np.zeros((n, 2), dtype=int)
    for q in range(2):
        for v, matrices in enumerate(versions):
            rows = version == v
            p_yes = matrices[q][t[rows, q], 1]
            reports[rows, q] = rng.random(int(rows.sum())) < p_yes
    return {"y": y, "x": x, "version": version, "reports": reports, "versions": versions}


def prepare(data):
    """Order rows by version and build the joint parts (as the analyze layer does)."""
    order = np.argsort(data["version"], kind="stable")
    parts, cells = [], []
    for v, matrices in enumerate(data["versions"]):
        rows = data["version"][order] == v
        cell = data["reports"][order][rows, 0] * 2 + data["reports"][order][rows, 1]
        parts.append(JointPart(matrices, np.bincount(cell, minlength=4).astype(float)))
        cells.append(cell)
    classes = latent_classes(parts, cells, [["no", "yes"], ["no", "yes"]], ["no", "no"],
                             ["q1", "q2"])
    X = np.column_stack([np.ones(len(order)), data["x"][order]])
    return data["y"][order], X, classes, order


def brute_loglik(kind, data, beta, sigma, table):
    """sum_i log sum_{t1, t2} pi_t P(r_i1 | t1) P(r_i2 | t2) f(y_i | t, x_i), term by term."""
    total = np.zeros(len(data["y"]))
    for index, (t1, t2) in enumerate(itertools.product((0, 1), repeat=2)):
        eta = beta[0] + beta[1] * t1 + beta[2] * t2 + beta[3] * data["x"]
        if kind == "linear":
            density = stats.norm.pdf(data["y"], loc=eta, scale=sigma)
        else:
            density = stats.bernoulli.pmf(data["y"], special.expit(eta))
        design = np.ones(len(data["y"]))
        for v, (m1, m2) in enumerate(data["versions"]):
            rows = data["version"] == v
            design[rows] = m1[t1, data["reports"][rows, 0]] * m2[t2, data["reports"][rows, 1]]
        total += table[index] * design * density
    return float(np.sum(np.log(total)))


def unpack(kind, theta):
    beta = theta[:4]
    sigma = math.exp(theta[4]) if kind == "linear" else 1.0
    logits = np.concatenate([[0.0], theta[-3:]])
    return beta, sigma, np.exp(logits) / np.exp(logits).sum()


TABLE = np.array([0.45, 0.15, 0.25, 0.15])


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_likelihood_equals_brute_force_sum_over_latent_answers(kind):
    data = simulate(300, 1, kind, TABLE, [0.5, 1.0, -0.7, 0.4])
    y, X, classes, order = prepare(data)
    rng = np.random.default_rng(2)
    for _ in range(3):
        beta = rng.normal(size=4)
        table = rng.dirichlet(np.ones(4))
        sigma = float(rng.uniform(0.5, 2.0))
        ours = loglik(kind, y, X, classes, beta, table, sigma)
        assert ours == pytest.approx(brute_loglik(kind, data, beta, sigma, table), rel=1e-12)


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_maximum_and_ses_agree_with_scipy_on_the_brute_force_likelihood(kind):
    beta_true = [0.5, 1.0, -0.7, 0.4]
    data = simulate(1500, 3, kind, TABLE, beta_true)
    y, X, classes, _ = prepare(data)
    fit = fit_predictors(kind, y, X, ["(Intercept)", "x"], [("x", [1])], classes,
                         [("q1", [0]), ("q2", [1])], tests=False,
                         profile=[])
    assert fit.names == ["(Intercept)", "q1[yes]", "q2[yes]", "x"]

    def minus(theta):
        beta, sigma, table = unpack(kind, theta)
        return -brute_loglik(kind, data, beta, sigma, table)

    start = np.concatenate([beta_true, [0.0] if kind == "linear" else [],
                            np.log(TABLE[1:] / TABLE[0])])
    best = optimize.minimize(minus, start, method="BFGS", options={"gtol": 1e-7})
    scipy_ll = -best.fun
    assert fit.loglik >= scipy_ll - 1e-7
    beta_scipy, sigma_scipy, table_scipy = unpack(kind, best.x)
    np.testing.assert_allclose(fit.beta, beta_scipy, atol=1e-5)
    np.testing.assert_allclose([s.estimate for s in fit.shares], table_scipy, atol=1e-5)
    if kind == "linear":
        assert fit.sigma == pytest.approx(sigma_scipy, abs=1e-5)
    # observed information of the brute-force likelihood, by central differences at our optimum
    theta = np.concatenate([fit.beta, [math.log(fit.sigma)] if kind == "linear" else [],
                            np.log([s.estimate for s in fit.shares][1:])
                            - math.log(fit.shares[0].estimate)])
    hessian = numerical_hessian(minus, theta)
    se = np.sqrt(np.diag(np.linalg.inv(hessian)))[:4]
    np.testing.assert_allclose(fit.se, se, rtol=1e-3)


@pytest.mark.parametrize("kind, n, beta", [("linear", 20000, [0.5, 1.0, -0.7, 0.4]),
                                          ("logistic", 20000, [-0.5, 1.0, -0.7, 0.4])])
def test_recovers_the_true_coefficients_by_simulation(kind, n, beta):
    data = simulate(n, 11, kind, TABLE, beta, sigma=1.5)
    y, X, classes, _ = prepare(data)
    fit = fit_predictors(kind, y, X, ["(Intercept)", "x"], [("x", [1])], classes,
                         [("q1", [0]), ("q2", [1])], tests=False,
                         profile=[])
    assert np.all(np.abs(fit.beta - beta) < 4 * fit.se), (fit.beta, fit.se)
    shares = np.array([s.estimate for s in fit.shares])
    assert np.all(np.abs(shares - TABLE) < 4 * np.array([s.se for s in fit.shares]))
    if kind == "linear":
        assert abs(fit.sigma - 1.5) < 4 * fit.sigma_se


def test_lr_test_equals_refit_without_the_term():
    data = simulate(800, 5, "linear", TABLE, [0.5, 1.0, 0.0, 0.4])
    y, X, classes, _ = prepare(data)
    fit = fit_predictors("linear", y, X, ["(Intercept)", "x"], [("x", [1])], classes,
                         [("q1", [0]), ("q2", [1])])
    # without q2: the brute-force likelihood maximised by scipy with beta_2 = 0

    def minus(theta):
        beta, sigma, table = unpack("linear", np.insert(theta, 2, 0.0))
        return -brute_loglik("linear", data, beta, sigma, table)

    best = optimize.minimize(minus, np.array([0.5, 1.0, 0.4, 0.0, *np.log(TABLE[1:] / TABLE[0])]),
                             method="BFGS", options={"gtol": 1e-7})
    test = {t.term: t for t in fit.terms}["q2"]
    assert test.df == 1
    assert test.chi2 == pytest.approx(2 * (fit.loglik + best.fun), abs=1e-5)
    assert test.p_value == pytest.approx(stats.chi2.sf(test.chi2, 1), rel=1e-9)


def test_a_combination_that_does_not_occur_is_held_at_zero():
    table = np.array([0.5, 0.0, 0.3, 0.2])
    data = simulate(3000, 8, "linear", table, [0.5, 1.0, -0.7, 0.4],
                    versions=((ONE_SIDED, ONE_SIDED),))
    y, X, classes, _ = prepare(data)
    fit = fit_predictors("linear", y, X, ["(Intercept)", "x"], [("x", [1])], classes,
                         [("q1", [0]), ("q2", [1])], tests=False,
                         profile=[])
    assert fit.gradient_norm < 1e-6
    # no better point on the brute-force likelihood nearby (scipy from our optimum)
    shares = np.array([s.estimate for s in fit.shares])

    def minus(theta):
        table_ = np.abs(theta[5:]) / np.abs(theta[5:]).sum()
        return -brute_loglik("linear", data, theta[:4], math.exp(theta[4]), table_)

    start = np.concatenate([fit.beta, [math.log(fit.sigma)], shares])
    best = optimize.minimize(minus, start, method="Nelder-Mead",
                             options={"maxiter": 4000, "xatol": 1e-9, "fatol": 1e-10})
    assert fit.loglik >= -best.fun - 1e-6


SURVEY = survey_text("predtest", CHEATED_FORCED, HOURS, question("passed", "yes-no"), YEAR,
                title="Randomized predictors", budget=3, language=None, collector=True)


def _export(tmp: Path, n: int, seed: int) -> tuple[Path, Path, dict[str, np.ndarray]]:
    survey = tmp / "predtest.md"
    survey.write_text(SURVEY, encoding="utf-8")
    version = build_catalog([survey]).versions[0].version
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.3
    year = rng.random(n) < 0.5
    hours = 10 + 4 * truth + 2 * year + rng.normal(0, 2, n)
    passed = rng.random(n) < special.expit(0.5 - 1.2 * truth + 0.3 * year)
    coin = rng.random(n)
    report = np.where(coin < 0.5, truth, coin < 0.75)
    export = tmp / "export.csv"
    with export.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["survey", "version", "respondent", "submitted_at", "cheated", "hours",
                         "passed", "year"])
        for i in range(n):
            writer.writerow(["predtest", version, f"r{i:021d}", "2026-11-02T09:00Z",
                             "yes" if report[i] else "no",
                             "" if i == 0 else f"{hours[i]:.4f}",
                             "yes" if passed[i] else "no", "Second" if year[i] else "First"])
    return survey, export, {"hours": hours, "truth": truth, "year": year}


@pytest.mark.slow
def test_cli_linear_and_logistic_json(tmp_path, capsys):
    survey, export, _ = _export(tmp_path, 3000, 4)
    code = main(["analyze", str(export), "--survey", str(survey), "--format", "json",
                 "--model", "hours ~ cheated + year", "--model", "passed ~ cheated + year"])
    assert code == 0
    linear, logistic = json.loads(capsys.readouterr().out)["models"]
    assert linear["kind"] == "linear (randomized predictors)"
    assert linear["left_out"]["outcome"] == 1 and linear["n"] == 2999
    coef = {c["name"]: c for c in linear["coefficients"]}
    assert abs(coef["cheated[yes]"]["estimate"] - 4) < 4 * coef["cheated[yes]"]["se"]
    assert abs(coef["year[Second]"]["estimate"] - 2) < 4 * coef["year[Second]"]["se"]
    assert abs(linear["sigma"] - 2) < 4 * linear["sigma_se"]
    assert [c["answers"] for c in linear["classes"]] == [["no"], ["yes"]]
    assert {t["term"] for t in linear["terms"]} == {"cheated", "year"}
    assert logistic["kind"] == "logistic (randomized predictors)"
    coef = {c["name"]: c for c in logistic["coefficients"]}
    assert abs(coef["cheated[yes]"]["estimate"] + 1.2) < 4 * coef["cheated[yes]"]["se"]
    assert coef["cheated[yes]"]["odds_ratio"] == pytest.approx(
        math.exp(coef["cheated[yes]"]["estimate"]))
    # every other format prints both models (a smaller export: the fit is not what is checked)
    (tmp_path / "small").mkdir()
    survey, export, _ = _export(tmp_path / "small", 500, 4)
    for fmt in ("table", "markdown", "html"):
        assert main(["analyze", str(export), "--survey", str(survey), "--format", fmt,
                     "--model", "hours ~ cheated", "--model", "cheated ~ year"]) == 0
        out = capsys.readouterr().out
        assert "randomized predictors" in out and "cheated[yes]" in out


@pytest.mark.parametrize("formula, message", [
    ("hours ~ cheated:year", "interaction with a randomized question"),
    ("year ~ cheated", "must be a number"),
    ("hours ~ scale(cheated)", "randomized predictor is a yes-no or choice"),
    ("hours ~ C(cheated, ref=\"maybe\")", "no answer 'maybe'"),
])
def test_cli_refuses_unsupported_models(tmp_path, capsys, formula, message):
    survey, export, _ = _export(tmp_path, 200, 5)
    refused(capsys, message, "analyze", export, "--survey", survey, "--model", formula)


def test_profile_interval_ends_against_scipy_on_the_brute_force_likelihood():
    data = simulate(600, 12, "logistic", TABLE, [-0.3, 1.0, -0.7, 0.4])
    y, X, classes, _ = prepare(data)
    fit = fit_predictors("logistic", y, X, ["(Intercept)", "x"], [("x", [1])], classes,
                         [("q1", [0]), ("q2", [1])], tests=False, profile=[1])
    assert fit.ci_method == "profile likelihood"
    c = fit.coefficients[1]
    wald = fit.coefficients[2]      # not profiled: estimate -/+ z se
    z = stats.norm.ppf(0.975)
    assert wald.ci_low == pytest.approx(wald.estimate - z * wald.se, rel=1e-12)
    critical = stats.chi2.ppf(0.95, 1)
    start = np.concatenate([np.delete(fit.beta, 1),
                            np.log([s.estimate for s in fit.shares][1:])
                            - math.log(fit.shares[0].estimate)])
    for end in (c.ci_low, c.ci_high):
        def minus(theta, end=end):
            beta, _, table = unpack("logistic", np.insert(theta, 1, end))
            return -brute_loglik("logistic", data, beta, 1.0, table)

        held = optimize.minimize(minus, start, method="BFGS", options={"gtol": 1e-7})
        assert 2 * (fit.loglik + held.fun) == pytest.approx(critical, abs=1e-4)
    assert c.ci_low < fit.beta[1] < c.ci_high


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_analytic_derivatives_are_the_brute_force_likelihoods(kind):
    """The gradient and the Hessian each Newton step uses, away from the maximum too (where the
    score's outer products do not cancel), and with a class held at zero and a fixed part of the
    linear predictor (a profile's point)."""
    data = simulate(400, 4, kind, TABLE, [0.5, 1.0, -0.7, 0.4])
    y, X, classes, _ = prepare(data)  # rows reordered; the brute force sums them in any order
    D = class_design(X, classes.coding)
    model = LatentModel(kind, y, D, classes.likelihood, np.ones(4, dtype=bool))
    rng = np.random.default_rng(3)
    for _ in range(3):
        theta = np.concatenate([rng.normal(size=4), rng.uniform(-0.5, 0.5, int(kind == "linear")),
                                rng.normal(scale=0.5, size=3)])
        brute = numerical_hessian(
            lambda t: brute_loglik(kind, data, *unpack(kind, t)), theta, h=1e-4)
        np.testing.assert_allclose(model.hessian(theta), brute, rtol=1e-4,
                                   atol=1e-4 * np.max(np.abs(brute)))
        step = 1e-5 * np.eye(len(theta))
        slope = np.array([(brute_loglik(kind, data, *unpack(kind, theta + e))
                           - brute_loglik(kind, data, *unpack(kind, theta - e))) / 2e-5
                          for e in step])
        np.testing.assert_allclose(model.gradient(theta), slope, rtol=1e-5,
                                   atol=1e-6 * np.max(np.abs(slope)))
    free = np.array([True, True, False, True])
    offset = rng.normal(scale=0.3, size=D.shape[:2])
    held = LatentModel(kind, y, D, classes.likelihood, free, offset)
    theta = np.concatenate([rng.normal(size=4), [0.2] if kind == "linear" else [],
                            rng.normal(scale=0.5, size=2)])
    analytic = held.hessian(theta)
    np.testing.assert_allclose(analytic, hessian_of_gradient(held.gradient, theta),
                               rtol=1e-5, atol=1e-6 * np.max(np.abs(analytic)))
