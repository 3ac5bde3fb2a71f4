"""Binary estimates against the closed forms of MATH.md section 1, for many designs, n and N."""

import math

import pytest

from rrsite.core import (
    ForcedResponse,
    ForcedYes,
    UnrelatedQuestion,
    Warner,
    optimal_design,
    z_value,
)
from rrsite.estimate.estimators import binary_estimate

from .stats import clopper_pearson_reference

DESIGNS = {
    "fair two coins": ForcedResponse(),
    "biased coin": ForcedResponse(truth=0.6, yes=0.3, no=0.1),
    "die (truth 1/6)": ForcedResponse(truth=1 / 6),
    "forced yes": ForcedYes(),
    "warner 0.7": Warner(p=0.7),
    "unrelated": UnrelatedQuestion(p=2 / 3, innocuous_rate=0.3),
    "optimal A": optimal_design(1.0, 0.05, 0.01).design,
}
CASES = [(0, 1), (1, 1), (0, 10), (1, 10), (5, 10), (10, 10), (0, 50), (3, 50), (25, 50),
         (49, 50), (50, 50), (0, 200), (37, 200), (150, 200), (200, 200)]


@pytest.mark.parametrize("name", DESIGNS)
@pytest.mark.parametrize(("n", "total"), CASES)
def test_estimate_matches_closed_forms(name, n, total):
    design = DESIGNS[name]
    p00, p11 = design.p00, design.p11
    gain = p00 + p11 - 1
    result = binary_estimate(n, total, p00, p11, 0.95)
    rate = n / total
    unbiased = (rate - (1 - p00)) / gain
    assert result.observed[0] == rate
    assert result.unbiased[0] == pytest.approx(unbiased, abs=1e-12)
    assert result.estimate[0] == pytest.approx(min(max(unbiased, 0), 1), abs=1e-12)
    assert result.clipped == (not 0 <= unbiased <= 1)
    se = math.sqrt(rate * (1 - rate) / total) / gain
    assert result.se[0] == pytest.approx(se, abs=1e-12)
    assert result.chebyshev[0] == pytest.approx(se / math.sqrt(0.05), abs=1e-12)
    low, high = clopper_pearson_reference(n, total, 0.95)
    mapped = sorted(min(max((x - (1 - p00)) / gain, 0), 1) for x in (low, high))
    assert result.ci_low[0] == pytest.approx(mapped[0], abs=1e-9)
    assert result.ci_high[0] == pytest.approx(mapped[1], abs=1e-9)
    assert result.degenerate[0] == (mapped[1] <= 0 or mapped[0] >= 1)
    assert result.ci_method == "exact"
    assert result.counts == {"no": total - n, "yes": n}


def test_estimates_outside_zero_one_are_clipped_and_flagged():
    # fair coins: a "yes" rate below 1/4 means a negative unbiased estimate
    low = binary_estimate(10, 100, 0.75, 0.75)
    assert low.unbiased[0] == pytest.approx(-0.3)
    assert low.estimate[0] == 0.0 and low.clipped
    assert any("clipped" in note for note in low.notes)
    high = binary_estimate(90, 100, 0.75, 0.75)
    assert high.unbiased[0] == pytest.approx(1.3)
    assert high.estimate[0] == 1.0 and high.clipped
    # the whole interval beyond 0: [0, 0], flagged
    none = binary_estimate(0, 100, 0.75, 0.75)
    assert (none.ci_low[0], none.ci_high[0]) == (0.0, 0.0) and none.degenerate[0]
    inside = binary_estimate(40, 100, 0.75, 0.75)
    assert not inside.clipped and not inside.degenerate[0]


def test_seed_formulas():
    # fair two coins: pi = 2 Pr(yes) - 1/2 (seeds 003, 004); one-sided: true no = 2 x observed no
    assert binary_estimate(300, 1000, 0.75, 0.75).unbiased[0] == pytest.approx(2 * 0.3 - 0.5)
    forced_yes = binary_estimate(700, 1000, 0.5, 1.0)
    assert 1 - forced_yes.unbiased[0] == pytest.approx(2 * 0.3)


def test_wilson_and_wald_on_request():
    z = z_value(0.95)
    wald = binary_estimate(40, 100, 0.75, 0.75, method="wald")
    assert wald.ci_method == "wald"
    assert wald.ci_low[0] == pytest.approx(wald.unbiased[0] - z * wald.se[0])
    assert wald.ci_high[0] == pytest.approx(wald.unbiased[0] + z * wald.se[0])
    wilson = binary_estimate(40, 100, 0.75, 0.75, method="wilson")
    exact = binary_estimate(40, 100, 0.75, 0.75)
    assert wilson.ci_method == "wilson"
    assert wilson.ci_high[0] - wilson.ci_low[0] < exact.ci_high[0] - exact.ci_low[0]


def test_fixed_population_variance_is_smaller_by_pi_one_minus_pi_over_n():
    result = binary_estimate(40, 100, 0.75, 0.75)
    pi = result.estimate[0]
    assert result.se_fixed[0] ** 2 == pytest.approx(result.se[0] ** 2 - pi * (1 - pi) / 100)


def test_no_answers():
    result = binary_estimate(0, 0, 0.75, 0.75)
    assert result.empty and math.isnan(result.estimate[0])
    figures = result.to_dict()
    assert figures["estimate"] is None and figures["ci"] == [None, None]
