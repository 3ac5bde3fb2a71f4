"""`rrsite power`: the asymptotic sample size against closed forms, the simulated power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rrsite.cli import main
from rrsite.plan.power import Scenario, asymptotic_n, required_n, simulated_power, slope_variance

from .stats import numerical_hessian


def test_identity_design_variance_is_the_two_group_logit_closed_form() -> None:
    s = Scenario(1.0, 1.0, prevalence=0.2, exposed=0.3, odds_ratio=2.0)
    p0 = 0.2
    p1 = 2.0 * p0 / (1 - p0) / (1 + 2.0 * p0 / (1 - p0))
    closed = 1 / (0.7 * p0 * (1 - p0)) + 1 / (0.3 * p1 * (1 - p1))
    assert slope_variance(s) == pytest.approx(closed, rel=1e-12)


def test_randomized_variance_matches_numerical_information() -> None:
    """Expected information by brute force over the four (x, report) cells, differentiated."""
    s = Scenario(0.8, 0.7, prevalence=0.25, exposed=0.4, odds_ratio=1.5)

    def expected_loglik(beta: np.ndarray, at: np.ndarray) -> float:
        total = 0.0
        for x, wx in ((0.0, 0.6), (1.0, 0.4)):
            lam_true = 0.2 + 0.5 / (1 + math.exp(-(at[0] + at[1] * x)))
            lam = 0.2 + 0.5 / (1 + math.exp(-(beta[0] + beta[1] * x)))
            total += wx * (lam_true * math.log(lam) + (1 - lam_true) * math.log(1 - lam))
        return total

    at = s.beta
    hessian = numerical_hessian(lambda beta: expected_loglik(beta, at), at)
    assert slope_variance(s) == pytest.approx(np.linalg.inv(-hessian)[1, 1], rel=1e-5)


def test_simulated_power_at_the_asymptotic_n_of_a_plain_logit() -> None:
    """No randomization: the Wald test's power at N0 is the target, within 3 MC SEs (1,000)."""
    s = Scenario(1.0, 1.0, prevalence=0.3, exposed=0.5, odds_ratio=2.0)
    n0 = asymptotic_n(s, 0.8, 0.05)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert n0 == math.ceil(z * z * slope_variance(s) / math.log(2.0) ** 2)
    power = simulated_power(s, n0, 1000, 0.05, seed=9)
    assert abs(power - 0.8) < 3 * math.sqrt(0.8 * 0.2 / 1000), power


def test_required_n_reaches_the_target_and_the_cli_prints_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    s = Scenario(0.75, 0.75, prevalence=0.2, exposed=0.5, odds_ratio=2.5)
    n0, n, achieved = required_n(s, 0.8, 0.05, 200, seed=3)
    assert achieved >= 0.8
    assert n0 // 2 <= n <= 2 * n0
    # An independent check at the chosen N with other random numbers.
    again = simulated_power(s, n, 600, 0.05, seed=77)
    assert again > 0.8 - 3 * math.sqrt(0.8 * 0.2 / 600) - 0.03
    assert main(["power", "--odds-ratio", "2.5", "--design", "0.75,0.75", "--simulations", "50",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "asymptotic (expected information)" in out and "by simulation" in out


def test_power_refuses_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["power", "--odds-ratio", "1", "--epsilon", "1"]) == 2
    assert "--odds-ratio must be positive and not 1" in capsys.readouterr().err
    assert main(["power", "--odds-ratio", "2", "--design", "0.5,0.5"]) == 2
    assert "p00 + p11 > 1" in capsys.readouterr().err


@pytest.mark.slow
def test_the_grouped_wald_statistic_is_the_fit_of_every_respondent() -> None:
    """The closed form on four cell counts against the Newton fit of every respondent's row.

    Tables drawn at sizes from 12 to 3,000 (some with a report rate outside the design's range:
    separation, where both must refuse), under the optimal design at epsilon 1 and under a
    lopsided one.
    """
    from rrsite.estimate.regression.logistic import RegressionError, fit
    from rrsite.plan.power import wald_statistic

    rng = np.random.default_rng(5)
    agreed = refused = 0
    for p00, p11 in ((0.7311, 0.7311), (0.9, 0.6)):
        s = Scenario(p00, p11, prevalence=0.2, exposed=0.5, odds_ratio=1.8)
        for _ in range(150):
            n = int(rng.integers(12, 3000))
            x = (rng.random(n) < 0.5).astype(float)
            y = (rng.random(n) < rng.uniform(0.15, 0.75, 2)[x.astype(int)]).astype(float)
            counts = np.bincount((2 * x + y).astype(int), minlength=4)
            statistic = wald_statistic(counts, s)
            try:
                result = fit(np.column_stack([np.ones(n), x]), y, p00, p11, ["(Intercept)", "x"])
            except RegressionError:
                assert statistic is None, counts
                refused += 1
                continue
            assert statistic is not None, counts
            assert statistic == pytest.approx(result.beta[1] / result.se[1], rel=1e-6), counts
            agreed += 1
    assert agreed > 150 and refused > 10  # both kinds of table were really met


def test_power_uses_the_fits_separation_bound() -> None:
    from rrsite.estimate.regression import logistic
    from rrsite.plan import power

    assert power.SEPARATION_BOUND == logistic.SEPARATION_BOUND
