"""Coverage of the checks of whether randomized response worked (rrsite.analyze.compliance).

- Split ballot: the difference of the randomized arm's estimate (forced response, p00 = p11 =
  3/4; crosswise, p = 1/4) and the direct arm's share (30% of respondents, a share of the
  carriers denying), its one-sided lower bound and its two-sided interval (MOVER with the exact
  bounds of both arms), beside the plain Wald interval d +- z se for comparison, and the
  one-sided test's rejections (its size where nobody denies).
- Comprehension: the estimate among those who answered the check right when the others answer
  at random, beside the estimate over everyone.
- The anchor question's bias-corrected crosswise estimate (delta method), beside the naive one.
- The extended crosswise model: its goodness-of-fit test's size under compliance and its power
  when a fifth answer "different" whatever the statements; the prevalence's interval.

    .venv/bin/python benchmarks/coverage_compliance.py [--reps 4000] [--seed 36]

Exit status 1 when an interval of rrsite covers less than 94%.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats
from study import study_parser  # benchmarks/, beside this script

from rrsite.estimate.compliance import crosswise as cw
from rrsite.estimate.compliance.split import difference
from rrsite.estimate.estimators import binary_estimate
from rrsite.estimate.univariate import fit, parts_from_manifest

SPLIT_CASES = [  # prevalence, share of carriers denying when asked directly, respondents
    (0.02, 0.0, 300), (0.02, 0.0, 2000), (0.05, 0.0, 300), (0.05, 0.5, 300), (0.15, 0.3, 1000),
    (0.3, 0.0, 1000), (0.3, 0.3, 3000),
]
DESIGNS = {"forced response (3/4)": (0.75, 0.75), "crosswise (p = 1/4)": (0.25, 0.25)}
ECWM = {"id": "x", "rrreg": {"model": "Crosswise", "p": 0.25, "group_p": [0.25, 0.75]},
        "reports": ["different", "same"]}


def split(reps: int, rng: np.random.Generator) -> float:
    """The split-ballot table; the worst coverage of rrsite's bound and interval."""
    z1, z2 = stats.norm.ppf(0.95), stats.norm.ppf(0.975)
    worst = 1.0
    print("Split ballot, 30% direct (coverage of the true difference; rejections at 5%):")
    print(f"  {'design':<22} {'prev':>5} {'deny':>5} {'n':>5}  {'bound':>6} {'interval':>8}  "
          f"{'Wald bound':>10} {'Wald int':>8}  {'rejects':>7}")
    for name, (p00, p11) in DESIGNS.items():
        for prevalence, deny, n in SPLIT_CASES:
            direct_n = round(0.3 * n)
            randomized_n = n - direct_n
            rate = (1 - p00) + prevalence * (p00 + p11 - 1)
            truth = prevalence * deny
            hits = np.zeros(5)
            for _ in range(reps):
                yes = int(rng.binomial(randomized_n, rate))
                said = int(rng.binomial(direct_n, prevalence * (1 - deny)))
                estimate = binary_estimate(yes, randomized_n, p00, p11)
                found = difference(float(estimate.unbiased[0]), float(estimate.se[0]), said,
                                   direct_n, 0.95, (yes, randomized_n, p00, p11))
                assert found is not None
                hits += (found.lower <= truth, found.ci[0] <= truth <= found.ci[1],
                         found.estimate - z1 * found.se <= truth,
                         abs(found.estimate - truth) <= z2 * found.se, found.p_value < 0.05)
            share = hits / reps
            worst = min(worst, share[0], share[1])
            print(f"  {name:<22} {prevalence:>5g} {deny:>5g} {n:>5}  {share[0]:>6.3f} "
                  f"{share[1]:>8.3f}  {share[2]:>10.3f} {share[3]:>8.3f}  {share[4]:>7.3f}")
    return worst


def comprehension(reps: int, rng: np.random.Generator) -> float:
    """Coverage among those who understood, and over everyone, when 30% answer at random."""
    print("Comprehension check, 30% answer at random (forced response 3/4, n 1,500):")
    worst = 1.0
    for prevalence in (0.05, 0.15, 0.3):
        among = everyone = 0
        for _ in range(reps):
            understood = int(rng.binomial(1500, 0.7))
            yes = int(rng.binomial(understood, 0.25 + 0.5 * prevalence))
            other = int(rng.binomial(1500 - understood, 0.5))
            a = binary_estimate(yes, understood, 0.75, 0.75)
            b = binary_estimate(yes + other, 1500, 0.75, 0.75)
            among += a.ci_low[0] <= prevalence <= a.ci_high[0]
            everyone += b.ci_low[0] <= prevalence <= b.ci_high[0]
        worst = min(worst, among / reps)
        print(f"  prevalence {prevalence:<5g} understood {among / reps:.3f}   everyone "
              f"{everyone / reps:.3f}")
    return worst


def anchor(reps: int, rng: np.random.Generator) -> float:
    """Coverage of the anchor-corrected estimate, and of the naive one, with inattention."""
    print("Anchor question (p = p' = 1/4; the inattentive answer at random):")
    worst = 1.0
    for prevalence, attentive, n in [(0.2, 0.8, 2000), (0.1, 0.9, 1000), (0.3, 0.7, 3000),
                                     (0.05, 0.85, 1000), (0.2, 1.0, 1000)]:
        corrected = naive = 0
        for _ in range(reps):
            careful = rng.random(n) < attentive
            truth = rng.random(n) < prevalence
            y = np.where(careful, truth == (rng.random(n) < 0.25), rng.random(n) < 0.5)
            a = np.where(careful, rng.random(n) >= 0.25, rng.random(n) < 0.5)
            table = np.zeros((2, 2))
            np.add.at(table, (y.astype(int), a.astype(int)), 1)
            found = cw.bias_corrected(table, 0.25, 0.25)
            corrected += found.ci[0] <= prevalence <= found.ci[1]
            same = table[1].sum() / n
            naive += abs(found.naive - prevalence) <= 1.96 * math.sqrt(
                same * (1 - same) / (n - 1)) / 0.5
        worst = min(worst, corrected / reps)
        print(f"  prevalence {prevalence:<5g} attentive {attentive:<5g} n {n:>5}  corrected "
              f"{corrected / reps:.3f}   naive {naive / reps:.3f}")
    return worst


def extended(reps: int, rng: np.random.Generator) -> float:
    """The extended crosswise model's test (size, power) and its interval's coverage."""
    print("Extended crosswise (p = 1/4 and 3/4, half the respondents each):")
    worst = 1.0
    for n, rebels in [(500, 0.0), (1000, 0.0), (3000, 0.0), (1000, 0.1), (2000, 0.2)]:
        rejected = covered = 0
        for _ in range(reps):
            counts = {}
            for group, p in ((1, 0.25), (2, 0.75)):
                size = n // 2
                out = int(rng.binomial(size, rebels))
                same = int(rng.binomial(size - out, 0.2 * p + 0.8 * (1 - p)))
                counts[group] = {"different": size - same, "same": same}
            result = fit(parts_from_manifest(ECWM, counts))
            assert result.gof is not None
            rejected += result.gof["p_value"] < 0.05
            low, high = result.intervals["pi"]
            covered += low <= 0.2 <= high
        if rebels == 0:
            worst = min(worst, covered / reps)
        print(f"  n {n:>5}, answering 'different' whatever: {rebels:<4g}  rejects "
              f"{rejected / reps:.3f}   interval covers {covered / reps:.3f}")
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=4000, seed=36)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    worst = min(split(args.reps, rng), comprehension(args.reps, rng), anchor(args.reps, rng),
                extended(max(args.reps // 4, 500), rng))
    print(f"worst coverage of rrsite's intervals {worst:.4f} (target >= 0.94); "
          f"{args.reps} simulations a case, {time.perf_counter() - started:.0f} s")
    return 0 if worst >= 0.94 else 1


if __name__ == "__main__":
    raise SystemExit(main())
