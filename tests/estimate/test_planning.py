"""Planning figures against closed forms and brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rrsite.estimate.models import Design
from rrsite.estimate.planning import (
    compare,
    delta_at,
    epsilon_of,
    prevalence_variance,
    respondents,
)


def test_one_group_variances_closed_form() -> None:
    pi = 0.3
    lam = pi * 0.7 + (1 - pi) * 0.3
    assert prevalence_variance(Design("Warner", 0.7), pi) == pytest.approx(
        lam * (1 - lam) / 0.4**2, rel=1e-7)
    lam = 0.6 * pi + 0.4 * 0.2
    assert prevalence_variance(Design("UQTknown", [0.6, 0.2]), pi) == pytest.approx(
        lam * (1 - lam) / 0.36, rel=1e-7)
    lam = pi + (1 - pi) * 0.25  # triangular: carriers always "triangle"
    assert prevalence_variance(Design("Triangular", 0.25), pi) == pytest.approx(
        lam * (1 - lam) / 0.75**2, rel=1e-7)


def test_kuk_variance_is_the_binomial_mixture_information() -> None:
    pi, m, p1, p0 = 0.2, 3, 0.7, 0.3
    f1 = stats.binom.pmf(np.arange(m + 1), m, p1)
    f0 = stats.binom.pmf(np.arange(m + 1), m, p0)
    information = float(np.sum((f1 - f0) ** 2 / (pi * f1 + (1 - pi) * f0)))
    assert prevalence_variance(Design("Kuk", [p1, p0], m), pi) == pytest.approx(
        1 / information, rel=1e-6)


def test_uqt_unknown_variance_closed_form() -> None:
    # half the respondents in each group: Var = 2 [(1-p2)^2 V1 + (1-p1)^2 V2] / (p1 - p2)^2
    p1, p2, pi, q = 0.75, 0.25, 0.2, 0.5
    lam1, lam2 = p1 * pi + (1 - p1) * q, p2 * pi + (1 - p2) * q
    expected = 2 * ((1 - p2) ** 2 * lam1 * (1 - lam1) + (1 - p1) ** 2 * lam2 * (1 - lam2)) / (
        p1 - p2) ** 2
    assert prevalence_variance(Design("UQTunknown", [p1, p2]), pi, q) == pytest.approx(
        expected, rel=1e-6)


def test_privacy_of_designs() -> None:
    assert epsilon_of(Design("Warner", 0.75)) == pytest.approx(math.log(3))
    assert epsilon_of(Design("Crosswise", 0.25)) == pytest.approx(math.log(3))
    assert epsilon_of(Design("Mangat", 0.8)) == math.inf
    assert epsilon_of(Design("SLD", [0.3, 0.7])) == math.inf
    assert delta_at(Design("Mangat", 0.8), 1.0) == pytest.approx(0.8)  # a "no" reveals
    # CDMsym group 2 (y, n) = (0.2, 0.2): ln(0.8 / 0.2); group 1 (0.1, 0.3): ln(0.9/0.3)
    assert epsilon_of(Design("CDMsym", [0.1, 0.3, 0.2, 0.2])) == pytest.approx(
        max(math.log(0.8 / 0.2), math.log(0.9 / 0.3), math.log(0.7 / 0.1)))
    kuk = Design("Kuk", [0.6, 0.4], 2)
    assert epsilon_of(kuk) == pytest.approx(2 * math.log(1.5))


def test_compare_tunes_every_family_to_the_budget_and_warner_is_best_among_warners() -> None:
    epsilon, prior = 1.0, 0.1
    rows = compare(epsilon, prior)
    for row in rows:
        if row.design is not None:
            assert row.epsilon == pytest.approx(epsilon, abs=1e-9)
        else:
            assert math.isinf(row.variance)
    warner = next(r for r in rows if r.family == "Warner")
    grid = np.linspace(0.5001, 0.9999, 5000)
    feasible = [p for p in grid if math.log(p / (1 - p)) <= epsilon + 1e-12]
    best = min(prevalence_variance(Design("Warner", float(p)), prior) for p in feasible)
    assert warner.variance == pytest.approx(best, rel=1e-3)
    assert warner.variance <= best * (1 + 1e-9)
    # Holohan et al.: at delta = 0 the symmetric design is optimal among all binary designs,
    # so no binary family beats Warner
    for row in rows:
        if row.family in ("Crosswise", "FR", "UQTknown"):
            assert row.variance >= warner.variance * (1 - 1e-9)
    assert respondents(warner.variance, 0.05, 0.95) == math.ceil(
        stats.norm.ppf(0.975) ** 2 * warner.variance / 0.05**2)
