"""Coverage of the 95% interval for the mean of a randomized number, every design, skewed truths.

Three tables: surveys of 100, 500 and 2,000 respondents (the t interval beside Wald's); small
surveys of 3 to 50; and the subgroups of a survey of 60 split 6% / 24% / 70% by a direct
question (about 4, 14 and 42 respondents), estimated as `rrsite analyze --by` does. The small
tables also count what must never happen: an estimate outside [min, max], an interval reaching
outside it or of zero width; and how often the interval is too wide to inform (it holds both a
quarter and three quarters of the range), which the report then says.

Truths (a fresh random sample each survey, so the interval must cover sampling and randomization):
log-normal incomes (mu 8, sigma 1.2, clipped to [0, 100000]) and zero-inflated counts of days
(70% zeros, else Poisson(8), clipped to 0..30). The estimand is the population mean, computed
exactly. Every design draws with rrsite.estimate.numbers.simulate_reports and is estimated with
the analyzer's code (fit_part + combine: Hall's skewness-corrected t with Satterthwaite's
degrees of freedom, joined with the log-scale interval where the truths' spread drives the
variance). The Wald (normal quantile) interval is shown beside it as the baseline.

    .venv/bin/python benchmarks/coverage_numbers.py [--reps 10000] [--small-reps 2000]
        [--seed 21] [--only large|small|subgroups]
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator

import numpy as np
from scipy import stats
from study import study_parser  # benchmarks/, beside this script

from rrsite.analyze.numbers import number_estimate
from rrsite.analyze.results import NumberPart
from rrsite.core import Privacy
from rrsite.core.numbers import NumberDesign, number_design_from_spec
from rrsite.estimate.numbers import (
    NumberEstimate,
    NumberEstimateError,
    combine,
    fit_part,
    simulate_reports,
)

SIZES = (100, 500, 2000)
SMALL_SIZES = (3, 5, 10, 20, 50)
#: The subgroups: a survey of SUBGROUP_N respondents split by a direct question in these shares.
SUBGROUP_N = 60
SUBGROUP_SHARES = (0.06, 0.24, 0.70)
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


def each_design() -> Iterator[tuple[str, dict, NumberDesign]]:
    """Every design of DESIGNS on its quantity's bounds: (kind, spec with the bounds, design)."""
    for kind, specs in DESIGNS.items():
        for spec in specs:
            bounded = {**spec, **(INCOME if kind == "income" else DAYS)}
            yield kind, bounded, number_design_from_spec(bounded)


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
        hit_wald += abs(result.mean - truth) <= z * result.se  # Wald: the unbiased mean
    return hit_t / reps, hit_wald / reps


class Tally:
    """Coverage and the things that must never happen, over many small estimates."""

    def __init__(self) -> None:
        self.surveys = self.hits = self.outside = self.reaching = self.zero = 0
        self.wide = self.refused = 0

    def add(self, found: NumberEstimate | None, truth: float, low: float, high: float) -> None:
        """One estimate (None: the design could not estimate, e.g. a mixture-unknown group of 1)."""
        if found is None:
            self.refused += 1
            return
        self.surveys += 1
        self.hits += found.ci_low <= truth <= found.ci_high
        self.outside += not low <= found.estimate <= high
        self.reaching += not (low <= found.ci_low and found.ci_high <= high)
        self.zero += not found.ci_high > found.ci_low
        quarter, three = low + (high - low) / 4, low + 3 * (high - low) / 4
        self.wide += found.ci_low <= quarter and found.ci_high >= three

    def cell(self) -> str:
        """``coverage% (too wide%)``; ``-`` when nothing could be estimated."""
        if not self.surveys:
            return "-"
        return (f"{100 * self.hits / self.surveys:5.1f} ({100 * self.wide / self.surveys:3.0f})"
                + ("" if not self.refused else f" r{self.refused}"))


def small_table(rng: np.random.Generator, reps: int, truths: dict[str, float],
                total: Tally) -> None:
    """Surveys of 3 to 50 respondents, every design: coverage (and % too wide to inform)."""
    print(f"\nsmall surveys: 95% coverage (% of intervals too wide to inform) over {reps:,} "
          "surveys per cell; rN: N surveys a design could not estimate (mixture-unknown needs "
          "2 reports per group)")
    print(f"{'truth':<8}{'design':<17}" + "".join(f"{'N=' + str(n):>17}" for n in SMALL_SIZES))
    for kind, spec, design in each_design():
        cells = []
        for n in SMALL_SIZES:
            tally = Tally()
            for _ in range(reps):
                y, other = draw_truths(rng, kind, n)
                reports, groups = simulate_reports(rng, design, y, other)
                if groups is not None and min(np.sum(groups == 1), np.sum(groups == 2)) < 2:
                    found = None
                else:
                    found = combine([fit_part(design, reports, groups)], 0.95)
                for counter in (tally, total):
                    counter.add(found, truths[kind], spec["min"], spec["max"])
            cells.append(tally.cell())
        print(f"{kind:<8}{spec['name']:<17}" + "".join(f"{c:>17}" for c in cells),
              flush=True)


def subgroup_table(rng: np.random.Generator, reps: int, truths: dict[str, float],
                   total: Tally) -> None:
    """The subgroups of surveys of SUBGROUP_N, estimated by the analyzer (`analyze --by`)."""
    shares = " / ".join(f"{share:.0%}" for share in SUBGROUP_SHARES)
    print(f"\nsubgroups of a survey of {SUBGROUP_N} split {shares}: 95% coverage (% too wide to "
          f"inform) over {reps:,} surveys; mean size of each subgroup in brackets")
    sizes = [f"~{SUBGROUP_N * share:.0f}" for share in SUBGROUP_SHARES]
    print(f"{'truth':<8}{'design':<17}" + "".join(f"{'n' + s:>17}" for s in sizes))
    for kind, spec, design in each_design():
        tallies = [Tally() for _ in SUBGROUP_SHARES]
        for _ in range(reps):
            y, other = draw_truths(rng, kind, SUBGROUP_N)
            reports, groups = simulate_reports(rng, design, y, other)
            subgroup = rng.choice(len(SUBGROUP_SHARES), SUBGROUP_N, p=SUBGROUP_SHARES)
            part = NumberPart(design, ["v"], reports, subgroup,
                              np.zeros(SUBGROUP_N, dtype=int) if groups is None else groups,
                              Privacy(1.0, 0.0))
            for g, tally in enumerate(tallies):
                try:
                    found: NumberEstimate | None = number_estimate([part], g, 0.95, None)
                except NumberEstimateError:  # a subgroup of 0 or 1, or a group too small
                    found = None
                for counter in (tally, total):
                    counter.add(found, truths[kind], spec["min"], spec["max"])
        print(f"{kind:<8}{spec['name']:<17}" + "".join(f"{t.cell():>17}" for t in tallies),
              flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=10000, seed=21)
    parser.add_argument("--small-reps", type=int, default=2000,
                        help="surveys per cell of the small-survey and subgroup tables")
    parser.add_argument("--only", choices=("large", "small", "subgroups"))
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    truths = {"income": income_mean(), "days": days_mean()}
    started = time.perf_counter()
    if args.only in (None, "small", "subgroups"):
        total = Tally()
        if args.only != "subgroups":
            small_table(rng, args.small_reps, truths, total)
        if args.only != "small":
            subgroup_table(rng, args.small_reps, truths, total)
        print(f"small surveys and subgroups estimated: {total.surveys:,} ({total.refused:,} "
              f"could not be); estimates outside [min, max]: {total.outside}; intervals "
              f"reaching outside it: {total.reaching}; of zero width: {total.zero}")
        if args.only is not None:
            print(f"({time.perf_counter() - started:.0f} s)")
            return 0
    worst = 1.0
    print(f"\n95% interval coverage over {args.reps:,} surveys per cell "
          f"(Monte Carlo SE about {100 * math.sqrt(0.95 * 0.05 / args.reps):.2f} points)")
    print(f"{'truth':<8}{'design':<17}" + "".join(f"{'N=' + str(n):>16}" for n in SIZES))
    print(f"{'':<25}" + "".join(f"{'t / Wald':>16}" for _ in SIZES))
    for kind, spec, design in each_design():
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
