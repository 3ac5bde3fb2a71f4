"""Coverage of the design-based 95% interval: a stratified, clustered finite population.

A fixed finite population of 4 strata with 40 to 120 clusters each (cluster sizes 10 to 40,
prevalence varying between strata and between clusters: intra-cluster correlation) is sampled
again and again without replacement: in each stratum a simple random sample of a quarter to a
third of its clusters, everyone in a chosen cluster answering through the fair two-coin forced
response (p00 = p11 = 3/4). Each sample's Hajek prevalence gets the intervals of:

- rrsite's default with an fpc: linearization with strata, clusters and the finite-population
  correction, plus the randomization term sum f_h w_i^2 v_i added back (t with PSUs - strata df);
- the same without the added term (the error the term corrects);
- linearization with replacement (no fpc: conservative here);
- the delete-one-cluster jackknife with fpc and the term;
- RRTCS's analytic default (Deville's single-stage variance, strata and clusters ignored, known N);
- RRTCS's jackknife (strata and clusters, its fpc, no randomization term; known N).

The true prevalence is the population's (the finite-population parameter). It prints the
coverage of each, its Monte Carlo standard error, and the mean estimated variance over the
variance of the estimates across samples (RRTCS's rows estimate the known-N mean, total / N,
the others the Hajek mean).

    .venv/bin/python benchmarks/coverage_design.py [--reps 4000] [--seed 22]
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from scipy import stats
from study import study_parser  # benchmarks/, beside this script

from rrsite.estimate import survey_design as sd

P00 = P11 = 0.75
#: (clusters in the population, clusters sampled, the stratum's mean prevalence)
STRATA = [(40, 12, 0.10), (60, 15, 0.20), (80, 20, 0.30), (120, 40, 0.15)]
METHODS = ("linearization + fpc + term (rrsite)", "linearization + fpc, no term",
           "linearization, with replacement", "jackknife + fpc + term",
           "RRTCS default (Deville)", "RRTCS jackknife")


def population(rng: np.random.Generator) -> list[list[np.ndarray]]:
    """Per stratum, per cluster: the true answers (0/1) of its members."""
    out = []
    for clusters, _, prevalence in STRATA:
        a = 2.0  # beta(a, b) cluster prevalences around the stratum's: ICC about 1 / (a + b + 1)
        b = a * (1 - prevalence) / prevalence
        out.append([(rng.random(int(rng.integers(10, 41))) < rng.beta(a, b)).astype(np.int8)
                    for _ in range(clusters)])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=4000, seed=22)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    frame = population(np.random.default_rng(1))
    size = sum(len(c) for stratum in frame for c in stratum)
    truth = sum(int(c.sum()) for stratum in frame for c in stratum) / size
    print(f"population: {size:,} people in {sum(len(s) for s in frame)} clusters, 4 strata; "
          f"prevalence {truth:.4f}; forced response p00 = p11 = {P00}")
    estimates = np.zeros((len(METHODS), args.reps))
    variances = np.zeros((len(METHODS), args.reps))
    covered = np.zeros(len(METHODS))
    started = time.perf_counter()
    for rep in range(args.reps):
        y, strata, clusters, weights, fpc = [], [], [], [], []
        for h, (stratum, (total, chosen, _)) in enumerate(zip(frame, STRATA, strict=True)):
            for c in rng.choice(total, chosen, replace=False):
                members = stratum[c]
                y.append(members)
                strata += [h] * len(members)
                clusters += [int(c)] * len(members)
                weights += [total / chosen] * len(members)
                fpc += [total] * len(members)
        truths = np.concatenate(y)
        p_yes = np.where(truths == 1, P11, 1 - P00)
        reports = (rng.random(len(truths)) < p_yes).astype(int)
        data = sd.debias_binary(reports, P00, P11)
        with_fpc = sd.SampleDesign.build(weights, strata, clusters, fpc)
        without = sd.SampleDesign.build(weights, strata, clusters)
        results = [
            sd.mean(data, with_fpc),
            None,
            sd.mean(data, without),
            sd.mean(data, with_fpc, method="jackknife"),
            sd.mean(data, with_fpc, population=size, method="rrtcs-deville"),
            sd.mean(data, with_fpc, population=size, method="rrtcs-jackknife"),
        ]
        base = results[0]
        assert base is not None
        no_term = base.variance - base.randomization_added
        for m, result in enumerate(results):
            if result is None:  # the same estimate and df, the variance without the term
                variance, centre, df = no_term, base.estimate, base.df
            else:
                variance, centre, df = result.variance, result.estimate, result.df
            variances[m, rep] = variance
            estimates[m, rep] = centre
            q = float(stats.norm.ppf(0.975) if math.isinf(df) else stats.t.ppf(0.975, df))
            half = q * math.sqrt(max(variance, 0.0))
            covered[m] += centre - half <= truth <= centre + half
    elapsed = time.perf_counter() - started
    print(f"{args.reps} samples of {len(truths):,} people in "
          f"{sum(s[1] for s in STRATA)} clusters (df {base.df}); bias of the Hajek estimate "
          f"{np.mean(estimates[0]) - truth:+.5f}, of the known-N mean (RRTCS's) "
          f"{np.mean(estimates[4]) - truth:+.5f}; {elapsed:.1f} s")
    print(f"{'variance estimator':40s} {'coverage':>9s} {'(MC se)':>8s} {'E[V]/Var':>9s}")
    for m, name in enumerate(METHODS):
        rate = covered[m] / args.reps
        mc = math.sqrt(rate * (1 - rate) / args.reps)
        ratio = float(np.mean(variances[m])) / float(np.var(estimates[m]))
        print(f"{name:40s} {rate:9.4f} {mc:8.4f} {ratio:9.3f}")
    rrsite_rate = covered[0] / args.reps
    rrtcs_rate = covered[4] / args.reps
    print(f"ratio of coverages, rrsite / RRTCS default: {rrsite_rate / rrtcs_rate:.3f}")
    return 0 if rrsite_rate >= 0.94 else 1


if __name__ == "__main__":
    sys.exit(main())
