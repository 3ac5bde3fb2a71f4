"""Intervals for the report rate: closed forms, exact binomial tails, Wilson/Wald formulas."""

import math

import numpy as np
import pytest

from rrsite.core import z_value
from rrsite.estimate.intervals import (
    chebyshev_k,
    clopper_pearson,
    mapped_interval,
    rate_interval,
    to_true_rate,
    wald,
    wilson,
)

from .stats import binomial_lower_tail, binomial_upper_tail, clopper_pearson_reference


@pytest.mark.parametrize("total", [1, 2, 5, 10, 50, 200, 1000, 10_000])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_clopper_pearson_closed_forms_at_zero_and_all(total, confidence):
    alpha = 1 - confidence
    low, high = clopper_pearson(0, total, confidence)
    assert low == 0.0
    assert high == pytest.approx(1 - (alpha / 2) ** (1 / total), rel=1e-12)
    low, high = clopper_pearson(total, total, confidence)
    assert high == 1.0
    assert low == pytest.approx((alpha / 2) ** (1 / total), rel=1e-12)


def test_clopper_pearson_one_respondent():
    # N = 1: [0, 1 - alpha/2] for a "no", [alpha/2, 1] for a "yes"
    assert clopper_pearson(0, 1, 0.95) == (0.0, pytest.approx(0.975, abs=1e-14))
    assert clopper_pearson(1, 1, 0.95) == (pytest.approx(0.025, abs=1e-14), 1.0)


@pytest.mark.parametrize(("n", "total"), [(1, 2), (1, 10), (3, 10), (7, 10), (9, 10), (1, 50),
                                          (17, 50), (49, 50), (100, 200), (3, 200)])
def test_clopper_pearson_tails_are_alpha_over_two(n, total):
    low, high = clopper_pearson(n, total, 0.95)
    assert binomial_upper_tail(n, total, low) == pytest.approx(0.025, abs=1e-10)
    assert binomial_lower_tail(n, total, high) == pytest.approx(0.025, abs=1e-10)
    ref_low, ref_high = clopper_pearson_reference(n, total, 0.95)
    assert low == pytest.approx(ref_low, abs=1e-10)
    assert high == pytest.approx(ref_high, abs=1e-10)


def test_clopper_pearson_is_vectorised():
    n = np.arange(0, 21)
    low, high = clopper_pearson(n, 20, 0.95)
    for k in range(21):
        assert (low[k], high[k]) == clopper_pearson(int(k), 20, 0.95)
    assert np.all(np.diff(low) > 0) and np.all(np.diff(high) > 0)


@pytest.mark.parametrize(("n", "total"), [(0, 10), (3, 10), (10, 10), (40, 100), (1, 1000)])
def test_wilson_formula(n, total):
    z = z_value(0.95)
    p = n / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z / (1 + z * z / total) * math.sqrt(p * (1 - p) / total + z * z / (4 * total**2))
    low, high = wilson(n, total, 0.95)
    assert low == pytest.approx(max(centre - half, 0), abs=1e-14)
    assert high == pytest.approx(min(centre + half, 1), abs=1e-14)


def test_wald_formula_and_its_collapse():
    z = z_value(0.95)
    low, high = wald(30, 100, 0.95)
    assert (low, high) == (pytest.approx(0.3 - z * math.sqrt(0.21 / 100)),
                           pytest.approx(0.3 + z * math.sqrt(0.21 / 100)))
    assert wald(0, 50, 0.95) == (0.0, 0.0)  # why Wald is never the default


def test_mapping_through_the_design():
    # fair two coins: pi = 2 lambda - 1/2 (seeds 003, 004)
    assert to_true_rate(0.25, 0.75, 0.75) == pytest.approx(0.0)
    assert to_true_rate(0.75, 0.75, 0.75) == pytest.approx(1.0)
    assert to_true_rate(0.5, 0.75, 0.75) == pytest.approx(0.5)
    low, high = rate_interval(40, 100, 0.95, "exact")
    mapped = mapped_interval(40, 100, 0.75, 0.75, 0.95)
    assert mapped == (pytest.approx(2 * low - 0.5), pytest.approx(2 * high - 0.5))
    # clipped: no "yes" at all under forced response collapses to [0, 0]
    assert mapped_interval(0, 100, 0.75, 0.75, 0.95) == (0.0, 0.0)
    assert mapped_interval(100, 100, 0.75, 0.75, 0.95) == (1.0, 1.0)


def test_chebyshev_k():
    assert chebyshev_k(0.95) == pytest.approx(1 / math.sqrt(0.05))
    assert chebyshev_k(0.75) == pytest.approx(2.0)


def test_unknown_method():
    with pytest.raises(ValueError, match="unknown interval method"):
        rate_interval(1, 2, 0.95, "bayes")
