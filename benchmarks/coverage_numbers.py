"""Coverage of the 95% interval for the mean of a randomized number, every design, skewed truths.

Truths (a fresh random sample each survey, so the interval must cover sampling and randomization):
log-normal incomes (mu 8, sigma 1.2, clipped to [0, 100000]) and zero-inflated counts of days
(70% zeros, else Poisson(8), clipped to 0..30). The estimand is the population mean, computed
exactly. Every design draws with rrsite.estimate.numbers.simulate_reports and is estimated with
the analyzer's code (fit_part + combine: Hall's skewness-corrected t with Satterthwaite's
degrees of freedom, joined with the log-scale interval where the truths' spread drives the
variance). The Wald (normal quantile) interval is shown beside it as the baseline.

    .venv/bin/python benchmarks/coverage_numbers.py [--reps 10000] [--seed 21]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from scipy import stats

from rrsite.core.numbers import NumberDesign, number_design_from_spec
from rrsite.estimate.numbers import combine, fit_part, simulate_reports

SIZES = (100, 500, 2000)
INCOME = {"min": 0, "max": 100000, "integer": False}
DAYS = {"min": 0, "max": 30, "integer": True}
DESIGNS: dict[str, list[dict]] = {
    "income": [
        {"name": "mixture", "p": 0.7, "mask": {"normal": {"mean": 5000, "sd": 3000}}},
        {"name": "mixture-unknown", "p": [0.3, 0.8]},
        {"name": "additive", "scramble": {"normal": {"mean": 0, "sd": 2000}}},
        {"name": "multiplicative", "scramble": {"uniform": {"min": 0.5, "max": 1.5}}},
        {"name": "laplace", "epsilon": 1},
        {"name": "duchi", "epsilon": 1},
        {"name": "piecewise", "epsilon": 2},
    ],
    "days": [
        {"name": "mixture", "p": 0.5, "mask": {"uniform": {"min": 0, "max": 30}}},
        {"name": "mixture-unknown", "p": [0.3, 0.8]},
        {"name": "additive", "scramble": {"values": [-5, 0, 5, 10]}},
        {"name": "multiplicative", "scramble": {"exponential": {"mean": 1}}},
        {"name": "laplace", "epsilon": 1},
        {"name": "duchi", "epsilon": 1},
        {"name": "piecewise", "epsilon": 2},
    ],
}


def income_mean() -> float:
    """E[min(Y, c)] for log-normal Y (mu 8, sigma 1.2), c = 100000, in closed form."""
    mu, sigma, c = 8.0, 1.2, 100000.0
    top = stats.norm.cdf((math.log(c) - mu - sigma ** 2) / sigma)
    above = stats.norm.sf((math.log(c) - mu) / sigma)
    return float(math.exp(mu + sigma ** 2 / 2) * top + c * above)


def days_mean() -> float:
    """E[min(Y, 30)] for 70% zeros, else Poisson(8), by summing the pmf."""
    k = np.arange(0, 31)
    pmf = stats.poisson.pmf(k, 8.0)
    return float(0.3 * (np.sum(k * pmf) + 30 * stats.poisson.sf(30, 8.0)))


def draw_truths(rng: np.random.Generator, kind: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """True numbers and innocuous answers (for mixture-unknown)."""
    if kind == "income":
        return (np.minimum(rng.lognormal(8.0, 1.2, n), 100000.0),
                rng.uniform(0, 10000, n))
    zero = rng.random(n) < 0.7
    return (np.where(zero, 0, np.minimum(rng.poisson(8.0, n), 30)).astype(np.float64),
            rng.integers(0, 8, n).astype(np.float64))


def coverage(rng: np.random.Generator, design: NumberDesign, kind: str, n: int, reps: int,
             truth: float) -> tuple[float, float]:
    """(t coverage, Wald coverage) over ``reps`` surveys of ``n`` respondents."""
    hit_t = hit_wald = 0
    z = float(stats.norm.ppf(0.975))
    for _ in range(reps):
        y, other = draw_truths(rng, kind, n)
        reports, groups = simulate_reports(rng, design, y, other)
        result = combine([fit_part(design, reports, groups)], 0.95)
        hit_t += result.ci_low <= truth <= result.ci_high
        hit_wald += abs(result.mean - truth) <= z * result.se
    return hit_t / reps, hit_wald / reps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    truths = {"income": income_mean(), "days": days_mean()}
    started = time.perf_counter()
    worst = 1.0
    print(f"95% interval coverage over {args.reps:,} surveys per cell "
          f"(Monte Carlo SE about {100 * math.sqrt(0.95 * 0.05 / args.reps):.2f} points)")
    print(f"{'truth':<8}{'design':<17}" + "".join(f"{'N=' + str(n):>16}" for n in SIZES))
    print(f"{'':<25}" + "".join(f"{'t / Wald':>16}" for _ in SIZES))
    for kind, specs in DESIGNS.items():
        bounds = INCOME if kind == "income" else DAYS
        for spec in specs:
            design = number_design_from_spec({**spec, **bounds})
            cells = []
            for n in SIZES:
                t_cov, wald = coverage(rng, design, kind, n, args.reps, truths[kind])
                worst = min(worst, t_cov)
                cells.append(f"{100 * t_cov:6.1f} / {100 * wald:5.1f}")
            print(f"{kind:<8}{spec['name']:<17}" + "".join(f"{c:>16}" for c in cells))
    print(f"lowest t coverage: {100 * worst:.1f}%  ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
