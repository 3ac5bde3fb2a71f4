"""Randomized predictors under two-group designs: tau estimated in the mixture.

Independent computations written here: the likelihood of each row as a sum over its latent true
answers, with the group matrices from the designs' definitions (unrelated-unknown: the sensitive
question with probability p_g, else an innocuous one with yes-rate q; SLD: non-carriers say "no"
with probability p_g, carriers "yes" with probability t), maximised by scipy.optimize over
(beta, log sigma, the shares' log-ratios, tau); its Hessian by finite differences for the SEs;
recovery on simulated data; and the CLI on `rrsite simulate --predictor` exports.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, special

from rrsite.cli import main
from rrsite.estimate.joint_groups import GroupedPart
from rrsite.estimate.regression.predictors_groups import GroupedRows, fit_predictors_groups
from tests.analyze.stats import numerical_hessian

DOPING = Path(__file__).resolve().parents[2] / "surveys" / "doping.md"


def uqt(p, q):
    return np.array([[1 - (1 - p) * q, (1 - p) * q], [(1 - p) * (1 - q), p + (1 - p) * q]])


def sld(p, t):
    return np.array([[p, 1 - p], [1 - t, t]])


def warner(p):
    return np.array([[p, 1 - p], [1 - p, p]])


P_UQT, P_SLD = (0.7, 0.2), (0.3, 0.75)
# per predictor: (matrix of group g at tau, whether it has a tau)
DESIGNS = {
    "uqt": (lambda g, tau: uqt(P_UQT[g - 1], tau), True),
    "sld": (lambda g, tau: sld(P_SLD[g - 1], tau), True),
    "warner": (lambda g, tau: warner(0.8), False),
}


def simulate(rng, n, predictors, table, taus, beta, sigma, kind):
    """Rows: x, groups, reports, y (true answers from the table, outcome from them and x)."""
    combos = list(itertools.product((0, 1), repeat=len(predictors)))
    truth = np.array([combos[i] for i in rng.choice(len(combos), size=n, p=table)])
    x = rng.normal(size=n)
    groups = rng.integers(1, 3, size=(n, len(predictors)))
    reports = np.zeros_like(truth)
    j = 0
    for q, name in enumerate(predictors):
        make, has_tau = DESIGNS[name]
        tau = taus[j] if has_tau else None
        j += has_tau
        for i in range(n):
            m = make(groups[i, q], tau)
            reports[i, q] = int(rng.random() < m[truth[i, q], 1])
    eta = beta[0] + truth @ np.array(beta[1:1 + len(predictors)]) + beta[-1] * x
    if kind == "linear":
        y = eta + sigma * rng.normal(size=n)
    else:
        y = (rng.random(n) < special.expit(eta)).astype(float)
    return x, groups, reports, y


def brute_loglik(params, data, predictors, kind):
    """sum_i log sum_t pi_t prod_q M_q(g_iq, tau_q)[t_q, r_iq] f(y_i | t, x_i)."""
    x, groups, reports, y = data
    q = len(predictors)
    k = 2 ** q
    beta = params[:q + 2]
    at = q + 2
    sigma = 1.0
    if kind == "linear":
        sigma = math.exp(params[at])
        at += 1
    logits = np.concatenate(([0.0], params[at:at + k - 1]))
    pi = np.exp(logits - special.logsumexp(logits))
    taus = params[at + k - 1:]
    total = np.zeros(len(y))
    for index, combo in enumerate(itertools.product((0, 1), repeat=q)):
        p_reports = np.ones(len(y))
        j = 0
        for c, name in enumerate(predictors):
            make, has_tau = DESIGNS[name]
            tau = taus[j] if has_tau else None
            j += has_tau
            for g in (1, 2):
                rows = groups[:, c] == g
                p_reports[rows] *= make(g, tau)[combo[c], reports[rows, c]]
        eta = beta[0] + np.dot(beta[1:1 + q], combo) + beta[-1] * x
        if kind == "linear":
            f = np.exp(-0.5 * ((y - eta) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))
        else:
            f = np.where(y > 0, special.expit(eta), special.expit(-eta))
        total += pi[index] * p_reports * f
    return float(np.sum(np.log(total)))


def rrsite_fit(data, predictors, kind):
    """The rows as GroupedParts (one per combination of groups), fitted by rrsite."""
    x, groups, reports, y = data
    q = len(predictors)
    key = [tuple(r) for r in groups.tolist()]
    order = sorted(range(len(y)), key=lambda i: key[i])
    parts, cells = [], []
    taus = [name for name in predictors if DESIGNS[name][1]]
    for combo in sorted(set(key)):
        rows = [i for i in order if key[i] == combo]
        cell = np.array([sum(reports[i, c] * 2 ** (q - 1 - c) for c in range(q)) for i in rows])
        base, slope, index = [], [], []
        for c, name in enumerate(predictors):
            make, has_tau = DESIGNS[name]
            at0 = make(combo[c], 0.0)
            base.append(at0)
            slope.append(make(combo[c], 1.0) - at0 if has_tau else None)
            index.append(taus.index(name) if has_tau else None)
        parts.append(GroupedPart(tuple(base), tuple(slope), tuple(index),
                                 np.bincount(cell, minlength=2 ** q).astype(float)))
        cells.append(cell)
    order = np.array(order)
    X = np.column_stack((np.ones(len(y)), x))[order]
    rows = GroupedRows(parts, cells, [("no", "yes")] * q, ["no"] * q, predictors, len(taus))
    terms = [(name, [c]) for c, name in enumerate(predictors)]
    fit = fit_predictors_groups(kind, y[order], X, ["(Intercept)", "x"], [("x", [1])], rows,
                                terms, [(name, "tau", "") for name in taus])
    return fit


def scipy_max(data, predictors, kind, start):
    q = len(predictors)
    k = 2 ** q
    ntau = sum(DESIGNS[name][1] for name in predictors)
    n = len(data[3])
    bounds = [(None, None)] * (q + 2 + (kind == "linear") + k - 1) + [(0.0, 1.0)] * ntau
    best = None
    for shift in (0.0, 0.3, -0.3):
        x0 = np.array(start, dtype=float)
        x0[-ntau:] = np.clip(x0[-ntau:] + shift, 0.05, 0.95)
        found = optimize.minimize(lambda p: -brute_loglik(p, data, predictors, kind) / n, x0,
                                  method="L-BFGS-B", bounds=bounds,
                                  options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 5000})
        if best is None or found.fun < best.fun:
            best = found
    return best.x, -best.fun * n


def params_of(fit, kind, q):
    """rrsite's estimates in brute_loglik's parametrisation."""
    pi = np.array([s.estimate for s in fit.shares])
    parts = [fit.beta]
    if kind == "linear":
        parts.append([math.log(fit.sigma)])
    parts.append(np.log(pi[1:]) - math.log(pi[0]))
    parts.append([t.estimate for t in fit.nuisance])
    return np.concatenate(parts)


@pytest.mark.slow
@pytest.mark.parametrize("predictors, kind, taus", [
    (["uqt", "warner"], "linear", [0.35]),
    (["sld"], "logistic", [0.8]),
])
def test_rrsite_is_the_generic_maximum(predictors, kind, taus):
    rng = np.random.default_rng(21)
    table = [0.4, 0.2, 0.15, 0.25] if len(predictors) == 2 else [0.6, 0.4]
    beta = [1.0, *([1.5, -1.0][:len(predictors)]), 0.5]
    data = simulate(rng, 1500, predictors, table, taus, beta, 2.0, kind)
    fit = rrsite_fit(data, predictors, kind)
    mine = params_of(fit, kind, len(predictors))
    assert brute_loglik(mine, data, predictors, kind) == pytest.approx(fit.loglik, abs=1e-8)
    start = mine + 0.05       # a start near, not at, the maximum
    best, value = scipy_max(data, predictors, kind, start)
    assert fit.loglik >= value - 1e-8
    assert np.allclose(mine, best, atol=1e-5)
    # SEs: the inverse of minus the brute likelihood's Hessian (finite differences)
    hess = numerical_hessian(lambda x: brute_loglik(x, data, predictors, kind), mine)
    covariance = np.linalg.inv(-hess)
    p = len(fit.beta)
    assert np.allclose(fit.se, np.sqrt(np.diag(covariance)[:p]), rtol=2e-3)
    assert fit.nuisance[0].se == pytest.approx(math.sqrt(covariance[-1, -1]), rel=2e-3)
    # with tau held at its estimate the SEs would be smaller: tau's uncertainty is carried
    held = np.linalg.inv(-hess[:-1, :-1])
    assert np.all(np.sqrt(np.diag(held)[:p]) <= fit.se * (1 + 1e-6))


@pytest.mark.slow
def test_recovery_with_two_two_group_predictors():
    rng = np.random.default_rng(8)
    truth = [1.0, 1.5, -1.0, 0.5]
    data = simulate(rng, 3000, ["uqt", "sld"], [0.4, 0.2, 0.15, 0.25], [0.35, 0.8], truth,
                    2.0, "linear")
    fit = rrsite_fit(data, ["uqt", "sld"], "linear")
    for estimate, se, value in zip(fit.beta, fit.se, truth, strict=True):
        assert abs(estimate - value) < 4 * se and se < 0.3
    for t, value in zip(fit.nuisance, [0.35, 0.8], strict=True):
        assert abs(t.estimate - value) < 4 * t.se and t.ci_low < t.estimate < t.ci_high
    assert abs(fit.sigma - 2.0) < 4 * fit.sigma_se


def test_cli_linear_model_with_an_sld_predictor(tmp_path, capsys):
    out = tmp_path / "doping.csv"
    assert main(["simulate", str(DOPING), "--respondents", "2000", "--seed", "5",
                 "--truth", "competition=0.3", "--predictor",
                 "hours ~ 8 + 4*competition[yes]; sd=3", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["analyze", str(out), "--survey", str(DOPING), "--format", "json",
                 "--model", "hours ~ competition"]) == 0
    model = json.loads(capsys.readouterr().out)["models"][0]
    coef = {c["name"]: c for c in model["coefficients"]}
    for name, value in (("(Intercept)", 8.0), ("competition[yes]", 4.0)):
        assert abs(coef[name]["estimate"] - value) < 4 * coef[name]["se"]
    (t,) = model["nuisance"]
    assert t["question"] == "competition" and t["name"] == "t"
    assert t["ci_low"] <= 1.0 <= t["ci_high"] + 1e-9      # simulated carriers are honest
    assert t["ci_method"].startswith("Wald")
    assert model["terms"][0]["term"] == "competition" and model["terms"][0]["p_value"] < 1e-6


def test_cli_refuses_one_group_only(tmp_path, capsys):
    out = tmp_path / "doping.csv"
    assert main(["simulate", str(DOPING), "--respondents", "300", "--seed", "5",
                 "--predictor", "hours ~ 8 + 4*competition[yes]; sd=3", "-o", str(out)]) == 0
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(r for r in rows if r["competition.group"] == "1")
    assert main(["analyze", str(out), "--survey", str(DOPING), "--model",
                 "hours ~ competition"]) == 2
    assert "'competition': every respondent is in one group" in capsys.readouterr().err
