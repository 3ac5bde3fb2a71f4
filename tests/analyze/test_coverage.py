"""Coverage of the default interval by simulation (MATH.md section 4's table).

For each design, N in {50, 200, 1000} and true rate in {0.02, 0.2, 0.5}: 20,000 surveys drawn at
once with numpy (the "yes" count of a survey is Binomial(N, lambda)), the default (exact) interval
must cover the true rate in at least 94% of them. The Wald and Wilson coverages are printed beside
it (run with -s to see the table), and the exact coverage (the binomial sum, no simulation) is
checked to be at least the nominal 95%.
"""

import numpy as np
import pytest

from rrsite.core import ForcedResponse, ForcedYes, optimal_design
from rrsite.estimate.estimators import binary_estimate
from rrsite.estimate.intervals import mapped_interval

SURVEYS = 20_000
DESIGNS = {
    "fair two coins": ForcedResponse(),
    "forced yes": ForcedYes(),
    "optimal A (eps 1, delta 0.05)": optimal_design(1.0, 0.05, 0.01).design,
}


def interval_table(total: int, p00: float, p11: float, method: str) -> tuple[np.ndarray, ...]:
    """The interval the analyzer reports for every possible count n = 0..N (the default through
    binary_estimate itself, the others through the same vectorised map)."""
    if method != "exact":
        return mapped_interval(np.arange(total + 1), total, p00, p11, 0.95, method)
    results = [binary_estimate(n, total, p00, p11, 0.95, method) for n in range(total + 1)]
    return (np.array([r.ci_low[0] for r in results]), np.array([r.ci_high[0] for r in results]))


def binomial_pmf(total: int, p: float) -> np.ndarray:
    k = np.arange(total + 1)
    from scipy.special import gammaln

    logs = (gammaln(total + 1) - gammaln(k + 1) - gammaln(total - k + 1)
            + np.where(k > 0, k * np.log(max(p, 1e-300)), 0)
            + np.where(k < total, (total - k) * np.log(max(1 - p, 1e-300)), 0))
    return np.exp(logs)


@pytest.mark.parametrize("name", DESIGNS)
@pytest.mark.parametrize("total", [50, 200, 1000])
@pytest.mark.parametrize("pi", [0.02, 0.2, 0.5])
def test_default_interval_covers(name, total, pi):
    design = DESIGNS[name]
    p00, p11 = design.p00, design.p11
    lam = pi * p11 + (1 - pi) * (1 - p00)
    rng = np.random.default_rng(20_000 + total + int(pi * 1000))
    counts = rng.binomial(total, lam, size=SURVEYS)  # all 20,000 surveys at once
    coverage = {}
    for method in ("exact", "wilson", "wald"):
        low, high = interval_table(total, p00, p11, method)
        covered = (low[counts] <= pi) & (pi <= high[counts])
        coverage[method] = covered.mean()
        if method == "exact":
            exact_coverage = float(np.sum(binomial_pmf(total, lam) * ((low <= pi) & (pi <= high))))
    print(f"{name:>30}  N={total:<5} pi={pi:<5} exact {coverage['exact']:.3f} "
          f"(binomial sum {exact_coverage:.4f})  wilson {coverage['wilson']:.3f}  "
          f"wald {coverage['wald']:.3f}")
    assert coverage["exact"] >= 0.94, coverage
    assert exact_coverage >= 0.95 - 1e-9, exact_coverage


def test_wald_fails_where_math_md_says():
    # design A with pi = 0.02, N = 50: Wald covers about 5% of the time (MATH.md section 4)
    design = DESIGNS["optimal A (eps 1, delta 0.05)"]
    lam = 0.02 * design.p11 + 0.98 * (1 - design.p00)
    low, high = interval_table(50, design.p00, design.p11, "wald")
    covered = (low <= 0.02) & (0.02 <= high)
    assert float(np.sum(binomial_pmf(50, lam) * covered)) < 0.2
