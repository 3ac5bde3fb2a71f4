"""Random intercept for a randomized yes-no outcome.

Independent computations written here: each cluster's integral by scipy.integrate.quad and by a
non-adaptive Gauss-Hermite rule with 300 nodes; the maximum by scipy.optimize (BFGS) on the
test's own likelihood; the observed information by central differences of it; the profile
interval's ends by scipy fits with s held; recovery by simulation.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from rrsite.cli import main
from rrsite.estimate.regression import mixed
from rrsite.estimate.regression.mixed import ClusterData, fit_mixed, loglik
from rrsite.exports.catalog import build_catalog
from tests.analyze.stats import numerical_hessian
from tests.joint.clitools import refused
from tests.surveytext import CHEATED_FORCED, HOURS, question, survey_text


def simulate(clusters, size, s, beta, seed, p_truth=0.5, sizes=None):
    """Forced response: the truth with p_truth, else a fair coin."""
    rng = np.random.default_rng(seed)
    sizes = sizes or [size] * clusters
    cluster = np.repeat(np.arange(clusters), sizes)
    n = len(cluster)
    u = rng.normal(0, s, clusters)
    x = rng.normal(size=n)
    truth = rng.random(n) < special.expit(beta[0] + beta[1] * x + u[cluster])
    report = np.where(rng.random(n) < p_truth, truth, rng.random(n) < 0.5).astype(float)
    a = np.full(n, (1 - p_truth) / 2)
    b = np.full(n, p_truth)
    return np.column_stack([np.ones(n), x]), report, a, b, cluster


def own_loglik(X, y, a, b, cluster, beta, s, nodes=300):
    """sum_j log integral prod_i P(y_i | x_i, z) phi(z) dz by a plain 300-node Hermite rule."""
    z, w = np.polynomial.hermite.hermgauss(nodes)
    total = 0.0
    for j in np.unique(cluster):
        rows = cluster == j
        eta = (X[rows] @ beta)[:, None] + s * math.sqrt(2) * z[None, :]
        lam = a[rows, None] + b[rows, None] * special.expit(eta)
        logp = np.where(y[rows, None] > 0, np.log(lam), np.log(1 - lam)).sum(axis=0)
        total += special.logsumexp(logp + np.log(w)) - 0.5 * math.log(math.pi)
    return total


def quad_loglik(X, y, a, b, cluster, beta, s):
    """The same by scipy.integrate.quad, cluster by cluster."""
    total = 0.0
    for j in np.unique(cluster):
        rows = cluster == j
        lin = X[rows] @ beta

        def logf(z, lin=lin, rows=rows):
            lam = a[rows] + b[rows] * special.expit(lin + s * z)
            return np.sum(np.where(y[rows] > 0, np.log(lam), np.log(1 - lam)))

        peak = max(logf(z) for z in np.linspace(-6, 6, 121))
        value, _ = integrate.quad(lambda z, logf=logf, peak=peak:
                                  math.exp(logf(z) - peak) * stats.norm.pdf(z), -12, 12,
                                  epsabs=0, epsrel=1e-12, limit=200)
        total += math.log(value) + peak
    return total


@pytest.mark.parametrize("s0, size, tolerance", [(1.2, 40, 1e-8), (0.5, 300, 1e-8),
                                                  (2.5, 40, 1e-4)])
def test_adaptive_quadrature_matches_high_node_quadrature_and_quad(s0, size, tolerance):
    X, y, a, b, cluster = simulate(12, size, s0, [-0.3, 0.8], 1)
    data = ClusterData(X, y, a, b, cluster, 12)
    assert mixed.NODES == 51
    for beta, s in (([-0.3, 0.8], s0), ([0.0, 0.5], 0.8 * s0)):
        ours = loglik(data, np.array(beta), s)
        assert ours == pytest.approx(quad_loglik(X, y, a, b, cluster, np.array(beta), s),
                                     abs=tolerance)
        if size <= 40:   # 300 plain nodes are too coarse for 300 respondents per cluster
            assert ours == pytest.approx(own_loglik(X, y, a, b, cluster, np.array(beta), s),
                                         abs=tolerance)


@pytest.mark.slow
def test_maximum_ses_and_profile_interval_against_scipy():
    X, y, a, b, cluster = simulate(30, 40, 0.9, [-0.4, 0.7], 2)
    fit = fit_mixed(X, y, a, b, cluster, ["(Intercept)", "x"])
    assert fit.converged and not fit.sd.on_boundary

    def minus(theta):
        return -own_loglik(X, y, a, b, cluster, theta[:2], theta[2], nodes=120)

    best = optimize.minimize(minus, np.array([-0.4, 0.7, 0.9]), method="BFGS",
                             options={"gtol": 1e-7})
    assert fit.loglik >= -best.fun - 1e-6
    np.testing.assert_allclose(fit.beta, best.x[:2], atol=1e-4)
    assert fit.sd.estimate == pytest.approx(abs(best.x[2]), abs=1e-4)
    theta = np.concatenate([fit.beta, [fit.sd.estimate]])
    hessian = numerical_hessian(minus, theta)
    np.testing.assert_allclose(fit.se, np.sqrt(np.diag(np.linalg.inv(hessian)))[:2], rtol=2e-3)
    critical = stats.chi2.ppf(0.95, 1)
    for end in (fit.sd.ci_low, fit.sd.ci_high):
        held = optimize.minimize(lambda bb, end=end: minus(np.concatenate([bb, [end]])),
                                 fit.beta, method="BFGS")
        assert 2 * (fit.loglik + held.fun) == pytest.approx(critical, abs=2e-3)


@pytest.mark.slow
def test_recovery_by_simulation():
    X, y, a, b, cluster = simulate(80, 50, 0.8, [-0.5, 0.6], 3, p_truth=0.7)
    fit = fit_mixed(X, y, a, b, cluster, ["(Intercept)", "x"])
    assert np.all(np.abs(fit.beta - [-0.5, 0.6]) < 4 * fit.se)
    assert fit.sd.ci_low < 0.8 < fit.sd.ci_high
    assert fit.sd.p_zero < 0.01


def test_no_cluster_effect_is_the_boundary_with_the_fixed_effects_fit():
    X, y, a, b, cluster = simulate(20, 40, 0.0, [0.2, 0.5], 4)
    fit = fit_mixed(X, y, a, b, cluster, ["(Intercept)", "x"])
    ll_plain = own_loglik(X, y, a, b, cluster, fit.beta, 0.0, nodes=5)
    if fit.sd.on_boundary:
        assert fit.sd.estimate == 0 and fit.sd.ci_low == 0
        assert fit.loglik == pytest.approx(ll_plain, abs=1e-8)
        assert fit.sd.p_zero == 1.0
    assert fit.sd.ci_low == 0.0


def test_small_clusters_are_refused():
    X, y, a, b, cluster = simulate(5, 0, 0.5, [0.0, 0.5], 5, sizes=[30, 30, 9, 30, 30])
    with pytest.raises(mixed.RegressionError, match="fewer than 10 respondents"):
        fit_mixed(X, y, a, b, cluster, ["(Intercept)", "x"])


def test_non_convergence_is_reported(monkeypatch):
    X, y, a, b, cluster = simulate(10, 30, 0.7, [0.0, 0.5], 6)
    monkeypatch.setattr(mixed, "GRADIENT_TOLERANCE", 0.0)
    fit = fit_mixed(X, y, a, b, cluster, ["(Intercept)", "x"])
    assert not fit.converged
    assert any("NOT CONVERGED" in m and "gradient" in m for m in fit.messages)


SURVEY = survey_text(
    "mixtest", CHEATED_FORCED, question("school", "choice", options="[A, B, C, D, E, F]"), HOURS,
    question("other", "yes-no", randomize="forced-response", truth="1/2", yes="1/4", no="1/4"),
    title="Random intercept", budget=3, language=None, collector=True)


def _export(tmp: Path, sizes: list[int], seed: int) -> tuple[Path, Path]:
    survey = tmp / "mixtest.md"
    survey.write_text(SURVEY, encoding="utf-8")
    version = build_catalog([survey]).versions[0].version
    rng = np.random.default_rng(seed)
    export = tmp / "export.csv"
    u = rng.normal(0, 1.0, len(sizes))
    with export.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["survey", "version", "respondent", "submitted_at", "cheated", "school",
                         "hours", "other"])
        i = 0
        for j, size in enumerate(sizes):
            for _ in range(size):
                hours = rng.uniform(0, 20)
                truth = rng.random() < special.expit(-0.5 + 0.05 * hours + u[j])
                coin = rng.random()
                report = truth if coin < 0.5 else coin < 0.75
                writer.writerow(["mixtest", version, f"r{i:021d}", "2026-11-02T09:00Z",
                                 "yes" if report else "no", "ABCDEF"[j], f"{hours:.2f}",
                                 "yes" if rng.random() < 0.5 else "no"])
                i += 1
    return survey, export


def test_cli_json_and_formats(tmp_path, capsys):
    survey, export = _export(tmp_path, [300] * 6, 7)
    assert main(["analyze", str(export), "--survey", str(survey), "--format", "json",
                 "--model", "cheated ~ hours + (1 | school)"]) == 0
    model = json.loads(capsys.readouterr().out)["models"][0]
    assert model["kind"] == "logistic (random intercept)"
    assert model["clusters"] == 6 and model["smallest_cluster"] == 300
    assert model["quadrature"]["nodes"] == 51 and model["quadrature"]["check"] < 1e-6
    assert model["converged"] is True
    ri = model["random_intercept"]
    assert ri["ci_low"] <= ri["sd"] <= ri["ci_high"]
    assert ri["variance"] == pytest.approx(ri["sd"] ** 2)
    # every other format prints the model (a smaller export: the fit is not what is checked)
    (tmp_path / "small").mkdir()
    survey, export = _export(tmp_path / "small", [60] * 6, 7)
    for fmt in ("table", "markdown", "html"):
        assert main(["analyze", str(export), "--survey", str(survey), "--format", fmt,
                     "--model", "cheated ~ hours + (1 | school)"]) == 0
        assert "random intercept" in capsys.readouterr().out


@pytest.mark.parametrize("sizes, formula, message", [
    ([300, 300, 5, 300, 300, 300], "cheated ~ hours + (1 | school)", "fewer than 10 respondents"),
    ([50] * 6, "cheated ~ hours + (1 | other)", "the cluster variable 'other' is randomized"),
    ([50] * 6, "cheated ~ other + (1 | school)", "'other' is randomized"),
    ([50] * 6, "cheated ~ hours + (2 | school)", "only a random intercept"),
    ([50] * 6, "cheated ~ hours + (1 | school) + (1 | other)", "one random intercept"),
])
def test_cli_refusals_exit_2(tmp_path, capsys, sizes, formula, message):
    survey, export = _export(tmp_path, sizes, 8)
    refused(capsys, message, "analyze", export, "--survey", survey, "--model", formula)
