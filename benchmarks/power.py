"""`rrsite power`: the documented example's wall clock, and one simulated survey's fit two ways.

Run: python benchmarks/power.py [--runs 3]

- `rrsite power --odds-ratio 1.8 --epsilon 1` as a command (Python's start included), the
  example of docs/how-to/simulate-and-power.md;
- the Wald test of one simulated survey of 2,663 respondents: the Newton fit of every
  respondent's row (`rrsite.estimate.regression.logistic.fit`, what each simulated survey cost
  before) beside the closed form on the four cell counts (`rrsite.plan.power.wald_statistic`),
  on the same surveys; the ratio is the speed-up of the simulation loop's fitting.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

from rrsite.estimate.regression.logistic import RegressionError, fit
from rrsite.plan.power import Scenario, wald_statistic

COMMAND = [sys.executable, "-m", "rrsite", "power", "--odds-ratio", "1.8", "--epsilon", "1",
           "--no-progress"]


def surveys(s: Scenario, n: int, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` simulated surveys: (covariate, report) of every respondent."""
    rng = np.random.default_rng(1)
    out = []
    for _ in range(count):
        x = rng.random(n) < s.exposed
        truth = rng.random(n) < 1 / (1 + np.exp(-(s.beta[0] + s.beta[1] * x)))
        u = rng.random(n)
        out.append((x, np.where(truth, u < s.p11, u >= s.p00)))
    return out


def main() -> None:
    """Print the command's time and the two fits' times per survey, with their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run(COMMAND, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    print(f"rrsite power --odds-ratio 1.8 --epsilon 1: median {statistics.median(times):.2f} s "
          f"(runs: {', '.join(f'{t:.2f}' for t in times)})")
    p = 0.7310585786300049  # the optimal design at epsilon 1: e / (1 + e)
    s = Scenario(p, p, prevalence=0.2, exposed=0.5, odds_ratio=1.8)
    drawn = surveys(s, 2663, 100)
    start = time.perf_counter()
    rows = []
    for x, y in drawn:
        try:
            result = fit(np.column_stack([np.ones(len(x)), x]), y.astype(float), s.p00, s.p11,
                         ["(Intercept)", "x"])
            rows.append(result.beta[1] / result.se[1])
        except RegressionError:
            rows.append(None)
    per_row = (time.perf_counter() - start) / len(drawn)
    start = time.perf_counter()
    cells = [wald_statistic(np.bincount(2 * x + y, minlength=4), s) for x, y in drawn]
    closed = (time.perf_counter() - start) / len(drawn)
    same = sum(a is None and b is None or (a is not None and b is not None
                                             and abs(a - b) < 1e-6 * abs(a))
               for a, b in zip(rows, cells, strict=True))
    print(f"one survey of 2,663: fit of every row {per_row * 1e3:.2f} ms (baseline), "
          f"closed form on the cells {closed * 1e3:.3f} ms, ratio {per_row / closed:.0f}x; "
          f"the same statistic in {same} of {len(drawn)} surveys")


if __name__ == "__main__":
    main()
