"""rrsite.estimate.intervals.quantiles equals scipy.stats where the estimators call it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rrsite.estimate.intervals import quantiles

RNG = np.random.default_rng(2026)
PROBABILITIES = np.concatenate([RNG.random(500), [0.5, 0.9, 0.95, 0.975, 0.995, 1e-9, 1 - 1e-9]])
POINTS = np.concatenate([RNG.normal(0, 3, 500), [0.0, 1.96, -1.96, 8.0]])


def test_normal() -> None:
    np.testing.assert_array_equal(quantiles.norm_ppf(PROBABILITIES), stats.norm.ppf(PROBABILITIES))
    np.testing.assert_array_equal(quantiles.norm_cdf(POINTS), stats.norm.cdf(POINTS))
    np.testing.assert_array_equal(quantiles.norm_sf(POINTS), stats.norm.sf(POINTS))
    assert quantiles.norm_ppf(0.975) == pytest.approx(1.959963984540054, abs=1e-15)


@pytest.mark.parametrize("df", [1, 2.5, 7, 30, 1e6, np.inf])
def test_student_t(df: float) -> None:
    np.testing.assert_array_equal(quantiles.t_ppf(PROBABILITIES, df),
                                  stats.t.ppf(PROBABILITIES, df))
    np.testing.assert_array_equal(quantiles.t_sf(POINTS, df), stats.t.sf(POINTS, df))


@pytest.mark.parametrize("df", [1, 2, 3.5, 10])
def test_chi_square(df: float) -> None:
    np.testing.assert_allclose(quantiles.chi2_ppf(PROBABILITIES, df),
                               stats.chi2.ppf(PROBABILITIES, df), rtol=1e-15, atol=0)
    points = np.abs(POINTS) * 3
    np.testing.assert_array_equal(quantiles.chi2_sf(points, df), stats.chi2.sf(points, df))
    assert quantiles.chi2_ppf(0.95, 1) == pytest.approx(3.841458820694124, abs=1e-12)


@pytest.mark.parametrize(("a", "b"), [(1, 10), (5, 96), (50, 51), (199, 2)])
def test_beta_at_the_counts_the_exact_interval_uses(a: int, b: int) -> None:
    np.testing.assert_allclose(quantiles.beta_ppf(PROBABILITIES, a, b),
                               stats.beta.ppf(PROBABILITIES, a, b), rtol=1e-13, atol=1e-300)
