"""A number's estimate and interval stay within [min, max] and never have zero width.

The case that started it: a duchi design (epsilon 1, 0 to 30 days) whose three respondents all
sent the low report gave a mean of -17.46 with se 0 and the interval "-17.46 to -17.46". Checked
here against independent computations: the design's variance polynomial scanned on a grid, the
Clopper-Pearson quantiles from scipy's beta distribution, the score interval's inequality
scanned on a grid, and coverage by simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rrsite.core.numbers import number_design_from_spec
from rrsite.estimate.numbers import (
    SMALL_SAMPLE,
    combine,
    fit_part,
    noise_floor,
    range_score_interval,
    simulate_reports,
    within_range,
)

DAYS = {"min": 0, "max": 30, "integer": True}
INCOME = {"min": 0, "max": 100_000, "integer": False}
SPECS = [
    {"name": "mixture", "p": 0.5, "mask": {"uniform": {"min": 0, "max": 30}}, **DAYS},
    {"name": "mixture", "p": 0.7, "mask": {"normal": {"mean": 5000, "sd": 3000}}, **INCOME},
    {"name": "mixture-unknown", "p": [0.3, 0.8], **DAYS},
    {"name": "additive", "scramble": {"values": [-5, 0, 5, 10]}, **DAYS},
    {"name": "additive", "scramble": {"normal": {"mean": 0, "sd": 2000}}, **INCOME},
    {"name": "multiplicative", "scramble": {"uniform": {"min": 0.5, "max": 1.5}}, **INCOME},
    {"name": "laplace", "epsilon": 1, **DAYS},
    {"name": "duchi", "epsilon": 1, **DAYS},
    {"name": "piecewise", "epsilon": 2, **INCOME},
]


def _truths(rng: np.random.Generator, spec: dict, n: int) -> np.ndarray:
    """Skewed true numbers: zero-inflated days, or log-normal incomes, clipped to the range."""
    if spec["max"] == 30:
        return np.where(rng.random(n) < 0.7, 0, np.minimum(rng.poisson(8.0, n), 30)) \
            .astype(np.float64)
    return np.minimum(rng.lognormal(8.0, 1.2, n), 100_000.0)


def test_three_duchi_reports_all_low_give_a_possible_estimate_and_a_real_interval() -> None:
    design = number_design_from_spec({"name": "duchi", "epsilon": 1, **DAYS})
    low_report, _ = design.values()
    found = combine([fit_part(design, np.full(3, low_report))], 0.95)
    c = (math.e + 1) / (math.e - 1)
    assert found.mean == pytest.approx(15 * (1 - c))  # the unbiased mean: -17.46 days
    assert found.estimate == 0.0 and found.clipped  # the nearest possible mean
    # the randomization alone: Var(r | y) = 15^2 (C^2 - x^2) >= 15^2 (C^2 - 1), over 3 reports
    assert found.se == pytest.approx(15 * math.sqrt(c * c - 1) / math.sqrt(3))
    # exact: Clopper-Pearson for 0 high reports of 3, mapped through p = 1/2 + x / (2 C)
    upper_rate = stats.beta.ppf(0.975, 1, 3)
    assert found.ci_low == 0.0
    assert found.ci_high == pytest.approx(15 * (1 + c * (2 * upper_rate - 1)))
    assert 0 < found.ci_high < 30
    data = found.to_dict()
    assert data["estimate"] == 0.0 and data["unbiased"] == pytest.approx(found.mean)
    assert data["clipped"] is True and data["range"] == [0, 30]
    assert data["ci_method"].startswith("exact: Clopper-Pearson")
    assert any("outside the range [0, 30]" in note for note in data["notes"])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s['name']}-{s['max']}")
def test_small_surveys_never_give_an_impossible_estimate_or_a_zero_width_interval(spec) -> None:
    """300 surveys of 3 to 12 respondents per design (benchmarks/coverage_numbers.py: 10,000)."""
    design = number_design_from_spec(spec)
    rng = np.random.default_rng(11)
    done = 0
    for _ in range(300):
        n = int(rng.integers(3, 13))
        reports, groups = simulate_reports(rng, design, _truths(rng, spec, n),
                                           rng.uniform(0, 10, n))
        if groups is not None and min(np.sum(groups == 1), np.sum(groups == 2)) < 2:
            continue  # mixture-unknown needs two reports in each group
        found = combine([fit_part(design, reports, groups)], 0.95)
        assert spec["min"] <= found.estimate <= spec["max"], (n, found.mean)
        assert spec["min"] <= found.ci_low < found.ci_high <= spec["max"], \
            (n, found.ci_low, found.ci_high)
        assert found.se > 0
        done += 1
    assert done > 100


@pytest.mark.parametrize("spec", [s for s in SPECS if s["name"] != "mixture-unknown"],
                         ids=lambda s: f"{s['name']}-{s['max']}")
def test_noise_floor_is_the_smallest_report_variance_over_the_range(spec) -> None:
    design = number_design_from_spec(spec)
    _, slope = design.linear()
    grid = np.linspace(spec["min"], spec["max"], 200_001)
    v0, v1, v2 = design.variance_coefficients()
    smallest = float(np.min(v0 + v1 * grid + v2 * grid * grid)) / slope ** 2
    assert noise_floor(design) == pytest.approx(max(smallest, 0.0), rel=1e-6, abs=1e-9)


def test_noise_floor_of_an_unbounded_side() -> None:
    # multiplicative over [0, inf): Var(r | y) = y^2 Var(S) / ..., smallest at 0
    open_top = number_design_from_spec({"name": "multiplicative", "min": 0,
                                        "scramble": {"uniform": {"min": 0.5, "max": 1.5}}})
    assert noise_floor(open_top) == 0.0
    # additive without bounds: the scramble's own variance, (5^2 + 0 + 5^2 + 10^2) / 4 - 2.5^2
    free = number_design_from_spec({"name": "additive", "scramble": {"values": [-5, 0, 5, 10]}})
    assert noise_floor(free) == pytest.approx(31.25)
    unknown = number_design_from_spec({"name": "mixture-unknown", "p": [0.3, 0.8], **DAYS})
    assert noise_floor(unknown) == 0.0


def test_range_score_interval_solves_its_inequality() -> None:
    """The means mu with n^2 (m - mu)^2 <= t^2 sum n Var(mu), by scanning mu on a grid."""
    design = number_design_from_spec(SPECS[4])  # additive normal sd 2000 over incomes
    rng = np.random.default_rng(4)
    reports, _ = simulate_reports(rng, design, _truths(rng, SPECS[4], 6))
    part = fit_part(design, reports)
    found = range_score_interval([part], part.mean, 5, 0.95, 0, 100_000)
    assert found is not None
    _, slope = design.linear()
    w0, w1, w2 = (v / slope ** 2 for v in design.variance_coefficients())
    mu = np.linspace(-50_000, 150_000, 2_000_001)
    largest = (1 + w2) * (mu - 0) * (100_000 - mu) + w0 + w1 * mu + w2 * mu * mu
    t2 = stats.t.ppf(0.975, 5) ** 2
    inside = mu[36 * (part.mean - mu) ** 2 <= t2 * 6 * largest]
    assert found[0] == pytest.approx(inside[0], abs=0.2)
    assert found[1] == pytest.approx(inside[-1], abs=0.2)


def test_within_range_cuts_and_moves() -> None:
    assert within_range(-5, 12, 3, 8, 0, 30) == (0, 12, False)
    assert within_range(-20, -5, 0, 8, 0, 30) == (0, 8, True)  # wholly below: 0 to 0 + margin
    assert within_range(35, 50, 30, 100, 0, 30) == (0, 30, True)
    assert within_range(-20, -5, 0, 8, None, None) == (-20, -5, False)


def test_no_spread_at_an_end_gives_the_rule_of_three_bound() -> None:
    """Multiplicative reports all 0: every answer is 0 and the design adds no noise there."""
    design = number_design_from_spec({"name": "multiplicative", **DAYS,
                                      "scramble": {"uniform": {"min": 0.5, "max": 1.5}}})
    found = combine([fit_part(design, np.zeros(8))], 0.95)
    assert found.ci_low == 0.0
    # P(8 answers all 0) <= (1 - mu / 30)^8 >= 0.025  <=>  mu <= 30 (1 - 0.025^(1/8))
    assert found.ci_high == pytest.approx(30 * (1 - 0.025 ** (1 / 8)))
    assert "no spread" in found.to_dict()["ci_method"]


def test_duchi_exact_interval_covers_at_ten_respondents() -> None:
    """Exact: at least 95% whatever the truths (1,500 surveys: MC SE 0.56 points)."""
    design = number_design_from_spec({"name": "duchi", "epsilon": 1, **DAYS})
    rng = np.random.default_rng(8)
    truth = 0.3 * 8.0  # zero-inflated Poisson(8) days, barely clipped at 30
    hits = 0
    for _ in range(1500):
        y = _truths(rng, DAYS, 10)
        reports, _ = simulate_reports(rng, design, y)
        found = combine([fit_part(design, reports)], 0.95)
        hits += found.ci_low <= truth <= found.ci_high
    assert hits / 1500 >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 1500)


def test_few_skewed_incomes_are_covered() -> None:
    """Five log-normal incomes behind additive noise: the t interval alone covered 89%.

    Below SMALL_SAMPLE respondents the interval also spans the range's worst-case score
    interval (1,000 surveys: MC SE 0.7 points).
    """
    assert SMALL_SAMPLE > 5
    design = number_design_from_spec(SPECS[4])
    mu, sigma, c = 8.0, 1.2, 100_000.0
    truth = math.exp(mu + sigma ** 2 / 2) * stats.norm.cdf(
        (math.log(c) - mu - sigma ** 2) / sigma) + c * stats.norm.sf((math.log(c) - mu) / sigma)
    rng = np.random.default_rng(21)
    hits = 0
    for _ in range(1000):
        reports, _ = simulate_reports(rng, design, _truths(rng, SPECS[4], 5))
        found = combine([fit_part(design, reports)], 0.95)
        hits += found.ci_low <= truth <= found.ci_high
        assert "worst-case score interval" in found.method
    assert hits / 1000 >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 1000)
