"""Coverage of the frequency oracles' intervals: k in {5, 20, 100}, N in {500, 2000, 20000}.

Each cell simulates ``--reps`` surveys of N respondents whose true answers follow a skewed law
(shares proportional to 0.8^i: a few common answers, many rare ones), sends them through the
design ``randomize: auto`` picks at ``--epsilon`` (rrsite.simulate.oracles, the same draws as
the device), and counts how often each share's 95% interval (rrsite.estimate.frequency: exact
Clopper-Pearson for the support rate, mapped) holds the true share. Prints per cell the mean
coverage over the shares, the lowest share's coverage, its binomial standard error, and the
seconds taken. The lowest of many simulated rates falls below the true rate by chance (by about
2.5 standard errors for 100 shares), so each cell also prints the exact coverage at the worst
share: each support count is Binomial(N, lambda_v), and the chance that the interval holds f_v
is summed over every count (no simulation). Exits 1 if an exact coverage is below 0.94, or a
simulated one below 0.94 by more than three standard errors. ``--design`` compares another
design instead of auto's.

    .venv/bin/python benchmarks/coverage_frequency.py [--reps 1000] [--epsilon 1] [--seed 5]
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from study import study_parser  # benchmarks/, beside this script

from rrsite.core.frequency import SubsetSelection, auto
from rrsite.core.frequency.choose import build
from rrsite.estimate.frequency import Law, Part, estimate
from rrsite.estimate.intervals import mapped_interval
from rrsite.exports.oracles import supports
from rrsite.simulate.oracles import sample

KS = (5, 20, 100)
NS = (500, 2000, 20000)


def exact_coverage(law: Law, share: np.ndarray, n: int) -> np.ndarray:
    """Per share, the exact chance that its mapped Clopper-Pearson interval holds it."""
    from scipy.stats import binom

    counts = np.arange(n + 1)
    low, high = mapped_interval(counts, n, 1.0 - law.q, law.p, 0.95)
    out = np.empty(len(share))
    for v, f in enumerate(share):
        rate = law.q + (law.p - law.q) * f
        out[v] = float(binom.pmf(counts, n, rate) @ ((low <= f) & (f <= high)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=1000, seed=5)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--design", default="auto", help="auto (default), oue, olh, subset, ...")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    failed = False
    print(f"coverage of 95% intervals, epsilon {args.epsilon:g}, {args.reps} surveys per cell, "
          "true shares proportional to 0.8^i")
    print(f"{'k':>4} {'N':>6} {'design':>9} {'mean':>7} {'lowest':>7} {'(share)':>9} "
          f"{'se':>6} {'exact lowest':>13} {'seconds':>8}")
    for k in KS:
        weights = 0.8 ** np.arange(k)
        share = weights / weights.sum()
        design = auto(k, args.epsilon).design if args.design == "auto" else \
            build(args.design, k, args.epsilon)
        name = design.name
        if not hasattr(design, "ratio"):  # k-RR is subset selection with subsets of one answer
            design = SubsetSelection(k, args.epsilon, d=1)
        law = Law.of(design)
        values = [str(i) for i in range(k)]
        for n in NS:
            started = time.perf_counter()
            covered = np.zeros(k)
            for _ in range(args.reps):
                truth = rng.choice(k, size=n, p=share)
                table = supports(design, sample(rng, design, truth))
                found = estimate([Part(table, law)], values, mle=False)
                covered += (found.ci_low <= share) & (share <= found.ci_high)
            rate = covered / args.reps
            low = int(np.argmin(rate))
            se = math.sqrt(0.95 * 0.05 / args.reps)
            exact = exact_coverage(law, share, n)
            failed |= bool(rate[low] < 0.94 - 3 * se) or bool(exact.min() < 0.94)
            print(f"{k:>4} {n:>6} {name:>9} {rate.mean():>7.4f} {rate[low]:>7.4f} "
                  f"{share[low]:>9.2g} {se:>6.4f} {exact.min():>13.4f} "
                  f"{time.perf_counter() - started:>8.1f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
