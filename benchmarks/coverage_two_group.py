"""Coverage of the intervals with two-group designs (joint table and correlations).

Joint table: an unrelated-unknown question (p = 0.7 / 0.3, innocuous yes-rate 0.35, estimated)
and a Warner question (p = 0.8), groups drawn with probability 1/2, true table (no-no, no-yes,
yes-no, yes-yes) = (0.45, 0.15, 0.10, 0.30); report counts drawn from the model. Coverage of
each cell's profile-likelihood interval (re-maximised over the innocuous rate) and of the
innocuous rate's own profile interval.

Correlation: Warner p = 0.8 and SLD (p = 0.3 / 0.7, carriers' honesty t = 0.8, estimated)
yes-no questions whose true answers come from a Gaussian copula (latent correlation 0.5; the
true correlation of the yes-no answers from 10^6 draws); bootstrap percentile intervals with t
re-estimated in every replicate.

    .venv/bin/python benchmarks/coverage_two_group.py [--reps 200] [--n 1000] [--boot 200]
        [--seed 5] [--only joint|cor]

Prints each interval's coverage and its Monte-Carlo standard error.
"""

from __future__ import annotations

import itertools
import math
import sys
import time

import numpy as np
from study import study_parser  # benchmarks/, beside this script

from rrsite.estimate.correlation import CorVariable, GroupedDesign, rrcor_groups
from rrsite.estimate.joint_groups import GroupedPart, fit_joint_groups

TABLE = np.array([0.45, 0.15, 0.10, 0.30])
P_UQT, Q = (0.7, 0.3), 0.35
WARNER = np.array([[0.8, 0.2], [0.2, 0.8]])
P_SLD, T = (0.3, 0.7), 0.8


def uqt(p: float, q: float) -> np.ndarray:
    return np.array([[1 - (1 - p) * q, (1 - p) * q], [(1 - p) * (1 - q), p + (1 - p) * q]])


def joint_coverage(rng: np.random.Generator, n: int, reps: int) -> np.ndarray:
    covered = np.zeros(5)
    for _ in range(reps):
        parts = []
        sizes = rng.multinomial(n, [0.5, 0.5])
        for g, size in zip((1, 2), sizes, strict=True):
            p = P_UQT[g - 1]
            probabilities = TABLE @ np.kron(uqt(p, Q), WARNER)
            counts = rng.multinomial(size, probabilities).astype(float)
            base = uqt(p, 0.0)
            parts.append(GroupedPart((base, WARNER), (uqt(p, 1.0) - base, None), (0, None),
                                     counts))
        fit = fit_joint_groups(parts, [("no", "yes"), ("no", "yes")], [("u", "piUQ", "")])
        covered[:4] += (fit.ci_low <= TABLE) & (TABLE <= fit.ci_high)
        t = fit.nuisance[0]
        covered[4] += t.ci_low <= Q <= t.ci_high
    return covered / reps


def truths(rng: np.random.Generator, n: int) -> np.ndarray:
    z = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], n)
    return (z > np.array([0.3, -0.2])).astype(float)


def cor_coverage(rng: np.random.Generator, n: int, reps: int, boot: int,
                 truth: float) -> float:
    hit = 0
    rates = {g: (1 - p, 0.0, p - 1, 1.0) for g, p in zip((1, 2), P_SLD, strict=True)}
    for _ in range(reps):
        x = truths(rng, n)
        w = np.where(rng.random(n) < 0.8, x[:, 0], 1 - x[:, 0])
        g = rng.integers(1, 3, n)
        s = np.where(x[:, 1] == 1, rng.random(n) < T,
                     rng.random(n) > np.array(P_SLD)[g - 1]).astype(float)
        fit = rrcor_groups([CorVariable("w", w, np.full(n, 0.2), np.full(n, 0.6), True),
                            CorVariable("s", s, np.zeros(n), np.ones(n), True,
                                        GroupedDesign(g, rates, "t"))],
                           replicates=boot, seed=int(rng.integers(1 << 30)))
        hit += fit.ci_low[0, 1] <= truth <= fit.ci_high[0, 1]
    return hit / reps


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=200, seed=5)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--boot", type=int, default=200)
    parser.add_argument("--only", choices=("joint", "cor"), default=None)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    mcse = math.sqrt(0.95 * 0.05 / args.reps)
    if args.only in (None, "joint"):
        start = time.perf_counter()
        coverage = joint_coverage(rng, args.n, args.reps)
        labels = [", ".join(c) for c in itertools.product(("no", "yes"), repeat=2)]
        print(f"joint table with unrelated-unknown, N = {args.n}, {args.reps} surveys "
              f"({time.perf_counter() - start:.0f} s; Monte-Carlo SE {mcse:.1%}):")
        for label, value in zip([*labels, "innocuous rate piUQ"], coverage, strict=True):
            print(f"  {label:>22}: {value:.1%}")
    if args.only in (None, "cor"):
        start = time.perf_counter()
        truth = float(np.corrcoef(truths(np.random.default_rng(1), 1_000_000).T)[0, 1])
        value = cor_coverage(rng, args.n, args.reps, args.boot, truth)
        print(f"correlation Warner ~ SLD (true {truth:.4f}), N = {args.n}, {args.reps} surveys, "
              f"{args.boot} bootstrap replicates ({time.perf_counter() - start:.0f} s): "
              f"{value:.1%} (Monte-Carlo SE {mcse:.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
