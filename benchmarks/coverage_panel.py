"""Coverage of the change between waves of a panel whose devices keep permanent reports.

Three waves; each respondent keeps their true answer except a share (``--churn``) that draws
anew from the wave's shares, which move between waves. Every question keeps a permanent report
and sends a re-randomization of it each wave (rrsite.core.frequency.Memoized; sampled by
rrsite.simulate.oracles as the device does): k-RR over 4 answers, OUE over 6 and a yes-no
forced-response design. The change of each share from wave to wave is estimated as
`rrsite analyze` does for linked respondents (rrsite.estimate.frequency.paired_change) and its
95% interval checked against the expected change. Prints per question and pair of waves the
coverage over ``--reps`` panels (and the interval's mean half-width); exits 1 below 0.94 by
more than three standard errors.

    .venv/bin/python benchmarks/coverage_panel.py [--reps 500] [--respondents 2000] [--seed 3]
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np
from study import study_parser  # benchmarks/, beside this script

from rrsite.core import KRR, design_from_spec
from rrsite.core.frequency import Memoized, UnaryEncoding
from rrsite.estimate.frequency import Law, paired_change
from rrsite.exports.oracles import supports
from rrsite.simulate.oracles import panel_reports, panel_tables
from rrsite.simulate.panel import expected_shares

QUESTIONS: list[tuple[str, Any, list[list[float]]]] = [
    ("k-rr (4)", Memoized(KRR(4, epsilon=2.0), 1.0),
     [[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]),
    ("oue (6)", Memoized(UnaryEncoding(6, 2.0), 1.0),
     [[0.5, 0.2, 0.1, 0.1, 0.05, 0.05], [0.1, 0.1, 0.1, 0.1, 0.1, 0.5],
      [0.3, 0.3, 0.1, 0.1, 0.1, 0.1]]),
    ("forced-response", Memoized(design_from_spec(
        {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25}), 0.6),
     [[0.8, 0.2], [0.5, 0.5], [0.6, 0.4]]),
]


def debiased(memo: Memoized, reports: list[Any]) -> np.ndarray:
    """Per respondent and answer, the unbiased copy of the truth's indicator from one wave."""
    one = memo.one_wave()
    if memo.kind == "matrix":
        inverse = np.linalg.inv(np.asarray(one.matrix, dtype=np.float64))
        out: np.ndarray = inverse[np.asarray(reports)]
        return out
    law = Law.of(one)
    return (supports(one, reports) - law.q) / (law.p - law.q)


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=500, seed=3)
    parser.add_argument("--respondents", type=int, default=2000)
    parser.add_argument("--churn", type=float, default=0.3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    n = args.respondents
    se = math.sqrt(0.95 * 0.05 / args.reps)
    failed = False
    print(f"coverage of the 95% change intervals, {args.reps} panels of {n} respondents, "
          f"3 waves, churn {args.churn:g}")
    for name, memo, shares in QUESTIONS:
        started = time.perf_counter()
        k = len(shares[0])
        expected = expected_shares([np.array(s) for s in shares], args.churn)
        covered = np.zeros((2, k))
        width = np.zeros((2, k))
        for _ in range(args.reps):
            truth = rng.choice(k, size=n, p=shares[0])
            tables = panel_tables(rng, memo, n)
            rows = []
            for wave in range(3):
                if wave:
                    redraw = rng.random(n) < args.churn
                    truth[redraw] = rng.choice(k, size=int(redraw.sum()), p=shares[wave])
                rows.append(debiased(memo, panel_reports(rng, memo, tables, truth)))
            for pair in range(2):
                change = expected[pair + 1] - expected[pair]
                found = paired_change(rows[pair], rows[pair + 1], 0.95)
                low = np.array([c.ci_low for c in found])
                high = np.array([c.ci_high for c in found])
                covered[pair] += (low <= change) & (change <= high)
                width[pair] += (high - low) / 2
        rate = covered / args.reps
        failed |= bool(rate.min() < 0.94 - 3 * se)
        for pair in range(2):
            print(f"  {name:<16} waves {pair + 1}->{pair + 2}: coverage "
                  + " ".join(f"{r:.3f}" for r in rate[pair])
                  + f"  (lowest {rate[pair].min():.3f}, se {se:.4f}; half-width "
                  f"{width[pair].mean() / args.reps:.3f})")
        print(f"  {name:<16} ledger of 1, 2, 3 waves: "
              + ", ".join(f"{e:.4f}" for e in memo.ledger(3))
              + f" (permanent report {memo.bound:.4f}); {time.perf_counter() - started:.0f} s",
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
