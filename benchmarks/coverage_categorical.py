"""Coverage of the categorical (k x k, general matrix) intervals: the failing case and more.

Matrix rows (.8,.1,.1), (.2,.7,.1), (.1,.2,.7) (rrsite's matrix[truth][report]); the current
analyzer's profile-likelihood intervals against the Wald intervals it used before.

    .venv/bin/python benchmarks/coverage_categorical.py [--reps 2000] [--seed 9]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from study import study_parser  # benchmarks/, beside this script

from rrsite.estimate.estimators import categorical_estimate

MATRIX = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]])
CASES = [(50, (0.02, 0.18, 0.80)), (200, (0.02, 0.18, 0.80)), (50, (1 / 3, 1 / 3, 1 / 3))]


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=2000, seed=9)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    worst = 1.0
    for n, truth in CASES:
        started = time.perf_counter()
        shares = np.array(truth)
        counts = rng.multinomial(n, shares @ MATRIX, size=args.reps)
        covered = {"profile-likelihood": np.zeros(3), "wald": np.zeros(3)}
        for row in counts:
            for method in ("exact", "wald"):
                estimate = categorical_estimate(row, MATRIX, ["a", "b", "c"], method=method)
                key = "wald" if method == "wald" else estimate.ci_method
                covered[key] += (estimate.ci_low - 1e-12 <= shares) & (
                    shares <= estimate.ci_high + 1e-12)
        profile = covered["profile-likelihood"] / args.reps
        wald = covered["wald"] / args.reps
        worst = min(worst, float(profile.min()))
        print(f"N={n:<4} truth={tuple(round(t, 3) for t in truth)}  profile "
              f"{np.round(profile, 4).tolist()}  wald {np.round(wald, 4).tolist()}  "
              f"({args.reps} simulations, {time.perf_counter() - started:.0f} s)")
    print(f"worst profile-likelihood coverage {worst:.4f} (target >= 0.94)")
    return 0 if worst >= 0.94 else 1


if __name__ == "__main__":
    sys.exit(main())
