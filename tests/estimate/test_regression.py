"""The randomized-response logit (estimate.regression.logistic) against independent computation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import special, stats

from rrsite.estimate.regression.logistic import RegressionError, fit, loglik, logsumexp
from tests.analyze.stats import numerical_hessian

NAMES = ["(Intercept)", "age", "female", "income"]
TRUTH = np.array([-0.8, 0.4, -0.4, 0.2])

# Forced response at epsilon 1: forced "yes" 0.2, truthful t = 0.2 (e - 1), forced "no" the rest
# (the symmetric one, forced 1 / (1 + e) each way, is the Warner matrix below).
_T = 0.2 * (math.e - 1.0)
FR_EPS1 = (_T + (1.0 - 0.2 - _T), _T + 0.2)          # (p00, p11)
# Warner at epsilon 1: p = e / (1 + e); rrsite.core.optimal's design at epsilon 1 is the same.
WARNER_EPS1 = (math.e / (1 + math.e), math.e / (1 + math.e))


def _covariates(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.column_stack([
        np.ones(n), rng.normal(size=n), rng.integers(0, 2, n).astype(float), rng.normal(size=n),
    ])


def _reports(rng: np.random.Generator, X: np.ndarray, p00: float, p11: float) -> np.ndarray:
    truth = rng.random(len(X)) < 1.0 / (1.0 + np.exp(-X @ TRUTH))
    u = rng.random(len(X))
    return np.where(truth, u < p11, u >= p00).astype(float)


def test_identity_design_is_statsmodels_logit() -> None:
    rng = np.random.default_rng(10)
    X = _covariates(rng, 3000)
    y = (rng.random(3000) < 1 / (1 + np.exp(-X @ TRUTH))).astype(float)
    ours = fit(X, y, 1.0, 1.0, NAMES)
    ref = sm.Logit(y, X).fit(disp=0, method="newton", tol=1e-14, maxiter=100)
    np.testing.assert_allclose(ours.beta, ref.params, rtol=0, atol=1e-6)
    np.testing.assert_allclose(ours.se, ref.bse, rtol=0, atol=1e-6)
    assert abs(ours.loglik - ref.llf) < 1e-6
    assert abs(ours.aic - ref.aic) < 1e-6


def test_likelihood_ratio_tests_against_refits_by_statsmodels() -> None:
    rng = np.random.default_rng(11)
    X = _covariates(rng, 1500)
    y = (rng.random(1500) < 1 / (1 + np.exp(-X @ TRUTH))).astype(float)
    ours = fit(X, y, 1.0, 1.0, NAMES, terms=[("female", [2])])
    reduced = sm.Logit(y, X[:, [0, 1, 3]]).fit(disp=0, tol=1e-14)
    full = sm.Logit(y, X).fit(disp=0, tol=1e-14)
    chi2 = 2 * (full.llf - reduced.llf)
    assert ours.terms[0].chi2 == pytest.approx(chi2, abs=1e-6)
    assert ours.terms[0].p_value == pytest.approx(stats.chi2.sf(chi2, 1), rel=1e-6)
    assert ours.model_test is not None
    assert ours.model_test.chi2 == pytest.approx(full.llr, abs=1e-6)
    assert ours.model_test.df == 3


def test_randomized_loglik_and_se_match_numerical_derivatives() -> None:
    rng = np.random.default_rng(12)
    X = _covariates(rng, 2000)
    p00, p11 = FR_EPS1
    y = _reports(rng, X, p00, p11)
    result = fit(X, y, p00, p11, NAMES)
    a, b = np.full(2000, 1 - p00), np.full(2000, p00 + p11 - 1)
    # Direct sum of the likelihood, written out independently.
    lam = (1 - p00) + (p00 + p11 - 1) / (1 + np.exp(-X @ result.beta))
    direct = float(np.sum(y * np.log(lam) + (1 - y) * np.log(1 - lam)))
    assert result.loglik == pytest.approx(direct, abs=1e-9)
    # Numerical Hessian by central differences of the log-likelihood.
    k = len(result.beta)
    hessian = numerical_hessian(lambda beta: loglik(beta, X, y, a, b), result.beta)
    np.testing.assert_allclose(result.se, np.sqrt(np.diag(np.linalg.inv(-hessian))), rtol=1e-4)
    # The optimum: no small move increases the likelihood.
    for i in range(k):
        for sign in (-1, 1):
            assert loglik(result.beta + sign * 1e-3 * np.eye(k)[i], X, y, a, b) < result.loglik


def test_versions_pooled_row_by_row() -> None:
    """Two versions with different designs: one likelihood, each row under its own design."""
    rng = np.random.default_rng(13)
    X = _covariates(rng, 4000)
    p00 = np.where(np.arange(4000) < 2000, 0.9, 0.7)
    p11 = np.where(np.arange(4000) < 2000, 0.75, 0.8)
    truth = rng.random(4000) < 1 / (1 + np.exp(-X @ TRUTH))
    u = rng.random(4000)
    y = np.where(truth, u < p11, u >= p00).astype(float)
    result = fit(X, y, p00, p11, NAMES)
    lam = (1 - p00) + (p00 + p11 - 1) / (1 + np.exp(-X @ result.beta))
    direct = float(np.sum(np.where(y > 0, np.log(lam), np.log(1 - lam))))
    assert result.loglik == pytest.approx(direct)
    assert np.all(np.abs(result.beta - TRUTH) < 4 * result.se)


@pytest.mark.slow
@pytest.mark.parametrize(("label", "design"), [
    ("forced response eps 1", FR_EPS1), ("Warner / optimal eps 1", WARNER_EPS1),
])
def test_recovery_and_coverage(label: str, design: tuple[float, float]) -> None:
    """500 surveys of N = 2,000, three covariates: unbiased and 95% Wald intervals cover.

    The criterion (each mean within 2 Monte-Carlo SEs of the truth, coverage within 3 binomial
    SEs of 95%) is met by the bias-reduced estimates (up to multiplicity, below); the
    maximum-likelihood ones (RRlog's) cover as well but carry the O(1/N) bias away from zero, a
    few percent of the binary covariate's coefficient at epsilon 1: checked to be that small.
    The study at 2,000 surveys and more designs: benchmarks/regression.py --coverage 2000.
    """
    rng = np.random.default_rng(2026)
    reps, n = 500, 2000
    p00, p11 = design
    ml, reduced = np.empty((reps, 4)), np.empty((reps, 4))
    covered_ml = np.zeros((reps, 4), dtype=bool)
    covered = np.zeros((reps, 4), dtype=bool)
    for r in range(reps):
        X = _covariates(rng, n)
        y = _reports(rng, X, p00, p11)
        result = fit(X, y, p00, p11, NAMES, bias_reduction=True)
        assert result.bias_reduced is not None
        ml[r], reduced[r] = result.beta, result.bias_reduced.beta
        covered_ml[r] = [c.ci_low <= t <= c.ci_high
                         for c, t in zip(result.coefficients, TRUTH, strict=True)]
        covered[r] = [c.ci_low <= t <= c.ci_high
                      for c, t in zip(result.bias_reduced.coefficients, TRUTH, strict=True)]
    print(f"\n{label}: p00={p00:.4f} p11={p11:.4f}, {reps} surveys of {n}")
    print(f"{'coefficient':<12} {'truth':>7} {'ML mean':>8} {'(MCse)':>7} {'BR mean':>8} "
          f"{'(MCse)':>7} {'ML cov':>7} {'BR cov':>7}")
    stats_ = {}
    for label_, values in (("ml", ml), ("br", reduced)):
        stats_[label_] = (values.mean(axis=0), values.std(axis=0, ddof=1) / math.sqrt(reps))
    for j, name in enumerate(NAMES):
        print(f"{name:<12} {TRUTH[j]:7.3f} {stats_['ml'][0][j]:8.4f} {stats_['ml'][1][j]:7.4f} "
              f"{stats_['br'][0][j]:8.4f} {stats_['br'][1][j]:7.4f} "
              f"{covered_ml[:, j].mean():7.3f} {covered[:, j].mean():7.3f}")
    # Eight means (two designs x four coefficients) each within 2 MC SEs fail together by chance
    # alone about a third of the time even for an unbiased estimator; the bound is Bonferroni's
    # for the eight at a 5% family-wise level (z = 2.73). The ML estimator misses it (its female
    # coefficient sits 3.3 MC SEs off with forced response): see the next test for the contrast.
    mean, mc_se = stats_["br"]
    assert np.all(np.abs(mean - TRUTH) <= 2.73 * mc_se), (mean, mc_se)
    # 500 surveys: the binomial SE of a 95% coverage is 0.97%; 3 SEs either side
    assert np.all((covered.mean(axis=0) >= 0.92) & (covered.mean(axis=0) <= 0.98))
    ml_mean, ml_se = stats_["ml"]
    assert np.all(np.abs(ml_mean - TRUTH) <= np.maximum(2 * ml_se, 0.10 * np.abs(TRUTH)))
    assert np.all((covered_ml.mean(axis=0) >= 0.92) & (covered_ml.mean(axis=0) <= 0.98))


def _penalised_firth(X: np.ndarray, y: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Firth's logistic regression as Jeffreys-penalised likelihood (Firth 1993), maximised
    numerically: independent of the adjusted-score iteration it checks."""
    from scipy import optimize

    def negative(beta: np.ndarray) -> float:
        p = 1.0 / (1.0 + np.exp(-(X @ beta)))
        info = (X.T * (p * (1 - p))) @ X
        return -float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))
                      + 0.5 * np.linalg.slogdet(info)[1])

    found = optimize.minimize(negative, start, method="BFGS", options={"gtol": 1e-11})
    return np.asarray(found.x)


def test_bias_reduction_with_the_identity_design_is_firth_logistic_regression() -> None:
    rng = np.random.default_rng(44)
    X = _covariates(rng, 150)
    y = (rng.random(150) < 1 / (1 + np.exp(-X @ TRUTH))).astype(float)
    result = fit(X, y, 1.0, 1.0, NAMES, bias_reduction=True)
    assert result.bias_reduced is not None
    firth = _penalised_firth(X, y, result.beta)
    np.testing.assert_allclose(result.bias_reduced.beta, firth, atol=1e-6)
    # Firth shrinks towards zero relative to ML here, and ML itself is unchanged by the option.
    assert np.all(np.abs(result.bias_reduced.beta[1:]) < np.abs(result.beta[1:]))
    plain = fit(X, y, 1.0, 1.0, NAMES)
    np.testing.assert_array_equal(plain.beta, result.beta)


@pytest.mark.slow
def test_bias_reduction_removes_the_small_sample_bias_of_forced_response() -> None:
    """N = 500 with forced response 3/4: the ML bias is several Monte-Carlo SEs, the
    bias-reduced estimator's within 2.5 (2,000 surveys)."""
    rng = np.random.default_rng(7)
    reps, n = 2000, 500
    ml, reduced = np.full((reps, 4), np.nan), np.full((reps, 4), np.nan)
    for r in range(reps):
        X = _covariates(rng, n)
        try:
            result = fit(X, _reports(rng, X, 0.75, 0.75), 0.75, 0.75, NAMES,
                         bias_reduction=True)
        except RegressionError:     # ML separates in a few of these small surveys
            continue
        assert result.bias_reduced is not None
        ml[r], reduced[r] = result.beta, result.bias_reduced.beta
    fitted = ~np.isnan(ml[:, 0])
    assert fitted.mean() > 0.99
    ml, reduced = ml[fitted], reduced[fitted]
    reps = len(ml)

    def z(values: np.ndarray) -> np.ndarray:
        return (values.mean(axis=0) - TRUTH) / (values.std(axis=0, ddof=1) / math.sqrt(reps))
    assert np.max(np.abs(z(ml))) > 4, z(ml)          # the bias this removes is really there
    assert np.all(np.abs(z(reduced)) < 2.5), z(reduced)


def test_separation_is_named() -> None:
    rng = np.random.default_rng(14)
    X = _covariates(rng, 500)
    y = (X[:, 2] > 0).astype(float)          # "female" predicts the report perfectly
    with pytest.raises(RegressionError, match=r"separation: the coefficient of .*female"):
        fit(X, y, 1.0, 1.0, NAMES)


def test_design_that_does_not_randomize_the_truth_away_is_refused() -> None:
    rng = np.random.default_rng(15)
    X = _covariates(rng, 500)
    y = rng.integers(0, 2, 500).astype(float)
    with pytest.raises(RegressionError, match=r"cannot identify the model: p00 \+ p11 = 1"):
        fit(X, y, 0.5, 0.5, NAMES)


def test_collinear_columns_are_refused() -> None:
    rng = np.random.default_rng(16)
    X = _covariates(rng, 500)
    X[:, 3] = 2 * X[:, 1]
    y = rng.integers(0, 2, 500).astype(float)
    with pytest.raises(RegressionError, match="singular"):
        fit(X, y, 0.9, 0.9, NAMES)


def test_no_convergence_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import rrsite.estimate.regression.logistic as regression

    monkeypatch.setattr(regression, "MAX_ITERATIONS", 1)
    rng = np.random.default_rng(17)
    X = _covariates(rng, 800)
    y = _reports(rng, X, *FR_EPS1)
    with pytest.raises(RegressionError, match="no convergence after 1 Newton iterations"):
        fit(X, y, *FR_EPS1, NAMES)


def _sld_data(rng: np.random.Generator, n: int, t: float) -> tuple[np.ndarray, ...]:
    from rrsite.estimate.models import Design
    from rrsite.estimate.regression.logistic import two_group_rates

    X = _covariates(rng, n)
    group = rng.integers(1, 3, n)
    coef = two_group_rates(Design("SLD", [0.2, 0.8]), group)
    truth = rng.random(n) < 1 / (1 + np.exp(-X @ TRUTH))
    # Independent of two_group_rates: SLD's device written out (MATH.md 7): a carrier says
    # "yes" with probability t, a non-carrier in group g says "no" with probability p_g.
    p_g = np.where(group == 1, 0.2, 0.8)
    y = np.where(truth, rng.random(n) < t, rng.random(n) >= p_g).astype(float)
    return X, y, coef, p_g


def test_sld_nuisance_fit_is_the_maximum_with_numerical_information() -> None:
    from rrsite.estimate.regression.logistic import fit_nuisance

    rng = np.random.default_rng(21)
    X, y, coef, p_g = _sld_data(rng, 4000, 0.85)
    result = fit_nuisance(X, y, coef, NAMES)

    def ll(theta: np.ndarray) -> float:
        lam = (1 - p_g) + (theta[-1] - (1 - p_g)) / (1 + np.exp(-X @ theta[:-1]))
        return float(np.sum(y * np.log(lam) + (1 - y) * np.log(1 - lam)))

    theta = np.append(result.beta, result.tau)
    assert result.loglik == pytest.approx(ll(theta), abs=1e-9)
    k = len(theta)
    hessian = numerical_hessian(ll, theta)
    np.testing.assert_allclose(result.se, np.sqrt(np.diag(np.linalg.inv(-hessian))), rtol=1e-4)
    for i in range(k):
        for sign in (-1, 1):
            assert ll(theta + sign * 1e-3 * np.eye(k)[i]) < result.loglik
    assert not result.on_boundary


@pytest.mark.slow
def test_sld_recovery_and_coverage_over_400_surveys() -> None:
    from rrsite.estimate.regression.logistic import fit_nuisance

    rng = np.random.default_rng(22)
    reps, truth = 400, np.append(TRUTH, 0.85)
    est = np.empty((reps, 5))
    covered = np.zeros((reps, 5), dtype=bool)
    for r in range(reps):
        X, y, coef, _ = _sld_data(rng, 3000, 0.85)
        result = fit_nuisance(X, y, coef, NAMES)
        est[r] = np.append(result.beta, result.tau)
        covered[r] = np.abs(est[r] - truth) <= 1.959964 * result.se
    mean, mc = est.mean(axis=0), est.std(axis=0, ddof=1) / math.sqrt(reps)
    coverage = covered.mean(axis=0)
    print("\nSLD p = (0.2, 0.8), t = 0.85, 400 surveys of 3,000:", mean.round(4), coverage)
    bias = np.abs(mean - truth)
    assert np.all((bias <= 3 * mc) | (bias <= 0.10 * np.abs(truth))), (mean, mc)
    # 400 surveys: binomial SE of a 95% coverage is 1.1%; 3 SEs either side.
    assert np.all((coverage >= 0.917) & (coverage <= 0.983)), coverage


def test_crosswise_through_models_design_is_a_2x2_fit() -> None:
    """Crosswise (report 1 = "same"): RRreg's PW from models.Design gives p00 = p11 = p."""
    from rrsite.estimate.models import Design

    pw = Design("Crosswise", 0.25).pw(1, [0.5])
    p00, p11 = float(pw[0, 0]), float(pw[1, 1])
    assert (p00, p11) == (0.25, 0.25)       # p00 + p11 < 1: allowed, as in RRreg's RRlog
    rng = np.random.default_rng(23)
    X = _covariates(rng, 3000)
    truth = rng.random(3000) < 1 / (1 + np.exp(-X @ TRUTH))
    innocuous = rng.random(3000) < 0.25
    y = (truth == innocuous).astype(float)                  # "same": both or neither
    result = fit(X, y, p00, p11, NAMES)
    lam = 0.75 - 0.5 / (1 + np.exp(-X @ result.beta))       # P("same") = 0.75 - 0.5 pi
    direct = float(np.sum(y * np.log(lam) + (1 - y) * np.log(1 - lam)))
    assert result.loglik == pytest.approx(direct, abs=1e-9)
    assert np.all(np.abs(result.beta - TRUTH) < 4 * result.se)


def test_logsumexp_is_the_sum_of_exponentials_written_out() -> None:
    """The mixture models' logsumexp against log(sum(exp)) in exact fractions of e^x and scipy's,
    with large terms (no overflow), rows of -inf (an impossible class) and one +inf."""
    rng = np.random.default_rng(4)
    values = rng.normal(size=(50, 4)) * 5
    for i, row in enumerate(values):
        written = math.log(sum(Fraction(math.exp(x)) for x in row))
        assert abs(float(logsumexp(values, axis=1)[i]) - written) < 1e-13 * max(1, abs(written))
    values[3] = -np.inf
    values[4, :3] = -np.inf
    values[5] += 1000.0                         # e^1000 overflows a float: the sum must not
    values[6, 2] = np.inf
    got = logsumexp(values, axis=1)
    np.testing.assert_allclose(got, special.logsumexp(values, axis=1), rtol=1e-14)
    assert got[3] == -np.inf and got[4] == values[4, 3] and got[6] == np.inf
    assert abs(got[5] - 1000.0 - math.log(sum(math.exp(x - 1000.0) for x in values[5]))) < 1e-12
    np.testing.assert_allclose(logsumexp(values.T, axis=0), got, rtol=1e-14)
