"""Coverage of issue 23's intervals: the joint table's profile-likelihood intervals and the
correlations' bootstrap percentile intervals, at N = 500 and 2000.

Joint table: two yes-no questions, forced response (truth 1/2, yes 1/4, no 1/4) and Warner
p = 0.8, in two survey versions with the designs swapped (half the respondents each), true
table (no-no, no-yes, yes-no, yes-yes) = (0.55, 0.10, 0.25, 0.10); counts drawn from the model.
Correlation: a randomized yes-no X (Warner p = 0.8) and a direct number Y, both driven by one
normal factor (true correlation computed from 10^6 draws).

    .venv/bin/python benchmarks/coverage_joint.py [--reps 1000] [--boot 400] [--seed 23]

Prints each interval's coverage (and its Monte-Carlo standard error) and the worst cell.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from rrsite.estimate.correlation import CorVariable, rrcor
from rrsite.estimate.joint import JointPart, fit_joint

FORCED = np.array([[0.75, 0.25], [0.25, 0.75]])
WARNER = np.array([[0.8, 0.2], [0.2, 0.8]])
TABLE = np.array([0.55, 0.10, 0.25, 0.10])


def joint_coverage(rng: np.random.Generator, n: int, reps: int) -> np.ndarray:
    covered = np.zeros(4)
    versions = [(FORCED, WARNER), (WARNER, FORCED)]
    for _ in range(reps):
        parts = []
        for matrices, size in zip(versions, (n // 2, n - n // 2), strict=True):
            matrix = np.kron(*matrices)
            truths = rng.multinomial(size, TABLE)
            counts = sum(rng.multinomial(truths[t], matrix[t]) for t in range(4))
            parts.append(JointPart(matrices, np.asarray(counts, dtype=float)))
        fit = fit_joint(parts, [["no", "yes"], ["no", "yes"]])
        covered += (fit.ci_low <= TABLE) & (TABLE <= fit.ci_high)
    return covered / reps


def latent(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    common = rng.normal(size=n)
    x = (common + rng.normal(size=n) > 0.3).astype(float)
    y = common + rng.normal(size=n)
    return x, y


def cor_coverage(rng: np.random.Generator, n: int, reps: int, boot: int, truth: float) -> float:
    covered = 0
    for _ in range(reps):
        x, y = latent(rng, n)
        z = np.where(rng.random(n) < 0.8, x, 1 - x)
        fit = rrcor([CorVariable("x", z, np.full(n, 0.2), np.full(n, 0.6), True),
                     CorVariable("y", y, np.zeros(n), np.ones(n), False)],
                    replicates=boot, seed=int(rng.integers(1 << 30)))
        covered += fit.ci_low[0, 1] <= truth <= fit.ci_high[0, 1]
    return covered / reps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--boot", type=int, default=400)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    x, y = latent(rng, 1_000_000)
    truth = float(np.corrcoef(x, y)[0, 1])
    worst = 1.0
    mc = np.sqrt(0.95 * 0.05 / args.reps)
    for n in (500, 2000):
        start = time.perf_counter()
        cover = joint_coverage(rng, n, args.reps)
        labels = ["no,no", "no,yes", "yes,no", "yes,yes"]
        print(f"joint table, N = {n}: " + ", ".join(
            f"{label} {c:.1%}" for label, c in zip(labels, cover, strict=True))
            + f" (MC se {mc:.1%}; {time.perf_counter() - start:.0f} s)")
        worst = min(worst, float(cover.min()))
        start = time.perf_counter()
        c = cor_coverage(rng, n, args.reps, args.boot, truth)
        print(f"correlation (RRcor, bootstrap percentile), N = {n}, true r = {truth:.3f}: "
              f"{c:.1%} (MC se {mc:.1%}; {time.perf_counter() - start:.0f} s)")
        worst = min(worst, c)
    print(f"worst coverage: {worst:.1%} (target >= 94%)")
    return 0 if worst >= 0.94 else 1


if __name__ == "__main__":
    sys.exit(main())
