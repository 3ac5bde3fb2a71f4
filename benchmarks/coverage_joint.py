"""Coverage of the intervals: the joint table's profile-likelihood intervals and the
correlations' Fieller intervals (bootstrap covariance), at N = 500 and 2000.

Joint table: two yes-no questions, forced response (truth 1/2, yes 1/4, no 1/4) and Warner
p = 0.8, in two survey versions with the designs swapped (half the respondents each), true
table (no-no, no-yes, yes-no, yes-yes) = (0.55, 0.10, 0.25, 0.10); counts drawn from the model.
Correlation: a randomized yes-no X (Warner p = 0.8) and a direct number Y, both driven by one
normal factor (true correlation computed from 10^6 draws).

Randomized predictors (linear and logistic, one randomized yes-no predictor under forced
response 3/4, true share 0.3, and a normal covariate): the profile-likelihood and the Wald
intervals of the predictor's coefficient, from the same fits, with the estimator's bias (in
Monte-Carlo standard errors) and its spread across surveys beside its mean standard error.
Random intercept (forced response, truth with probability 1/2; s = 0.8; 20 clusters of 25 at
N = 500, 40 of 50 at N = 2000): the profile-likelihood interval of s. These fits are slower:
--model-reps (default 200) replications for the predictors, --mixed-reps (default: as
--model-reps) for the random intercept.

    .venv/bin/python benchmarks/coverage_joint.py [--reps 1000] [--boot 400] [--seed 23]
        [--model-reps 200] [--mixed-reps N] [--only joint|cor|models|predictors|mixed]

Prints each interval's coverage (and its Monte-Carlo standard error) and the worst cell.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from rrsite.estimate.correlation import CorVariable, rrcor
from rrsite.estimate.joint import JointPart, fit_joint
from rrsite.estimate.regression.mixed import fit_mixed
from rrsite.estimate.regression.predictors import fit_predictors, latent_classes

FORCED = np.array([[0.75, 0.25], [0.25, 0.75]])
Z95 = 1.959963984540054
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


def predictor_coverage(rng: np.random.Generator, n: int, reps: int,
                       kind: str) -> dict[str, float]:
    """Profile and Wald coverage of the predictor's coefficient, with the estimator's figures."""
    beta = np.array([0.5, 1.0, 0.5]) if kind == "linear" else np.array([-0.5, 1.0, 0.5])
    profile = wald = 0
    estimates, ses = np.zeros(reps), np.zeros(reps)
    for rep in range(reps):
        truth = (rng.random(n) < 0.3).astype(int)
        x = rng.normal(size=n)
        eta = beta[0] + beta[1] * truth + beta[2] * x
        if kind == "linear":
            y = eta + rng.normal(size=n)
        else:
            y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
        report = np.where(rng.random(n) < 0.75, truth, 1 - truth)
        part = JointPart((FORCED,), np.bincount(report, minlength=2).astype(float))
        classes = latent_classes([part], [report], [["no", "yes"]], ["no"], ["q"])
        fit = fit_predictors(kind, y, np.column_stack([np.ones(n), x]), ["(Intercept)", "x"],
                             [("x", [1])], classes, [("q", [0])], tests=False, profile=[1])
        c = fit.coefficients[1]
        profile += c.ci_low <= beta[1] <= c.ci_high
        wald += abs(c.estimate - beta[1]) <= Z95 * c.se
        estimates[rep], ses[rep] = c.estimate, c.se
    spread = float(estimates.std(ddof=1))
    return {"profile": profile / reps, "wald": wald / reps,
            "bias_mc": float(estimates.mean() - beta[1]) / (spread / np.sqrt(reps)),
            "sd": spread, "mean_se": float(ses.mean())}


def sd_coverage(rng: np.random.Generator, n: int, reps: int, s: float = 0.8) -> float:
    clusters = 20 if n <= 500 else 40
    cluster = np.repeat(np.arange(clusters), n // clusters)
    covered = 0
    for _ in range(reps):
        u = rng.normal(0, s, clusters)
        x = rng.normal(size=len(cluster))
        truth = rng.random(len(cluster)) < 1 / (1 + np.exp(-(-0.3 + 0.5 * x + u[cluster])))
        report = np.where(rng.random(len(cluster)) < 0.5, truth, rng.random(len(cluster)) < 0.5)
        fit = fit_mixed(np.column_stack([np.ones(len(cluster)), x]), report.astype(float),
                        np.full(len(cluster), 0.25), np.full(len(cluster), 0.5), cluster,
                        ["(Intercept)", "x"])
        covered += fit.sd.ci_low <= s <= fit.sd.ci_high
    return covered / reps


def main(argv: list[str] | None = None) -> int:
    # benchmarks/, beside this script; imported here, as tests load this module by its path
    from study import study_parser

    parser = study_parser(__doc__, reps=1000, seed=23)
    parser.add_argument("--boot", type=int, default=400)
    parser.add_argument("--model-reps", type=int, default=200)
    parser.add_argument("--mixed-reps", type=int, default=None,
                        help="replications of the random-intercept fit (default: --model-reps)")
    parser.add_argument("--only", choices=("joint", "cor", "models", "predictors", "mixed"),
                        default=None)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    x, y = latent(rng, 1_000_000)
    truth = float(np.corrcoef(x, y)[0, 1])
    worst = 1.0
    mc = np.sqrt(0.95 * 0.05 / args.reps)
    for n in (500, 2000):
        if args.only in (None, "joint"):
            start = time.perf_counter()
            cover = joint_coverage(rng, n, args.reps)
            labels = ["no,no", "no,yes", "yes,no", "yes,yes"]
            print(f"joint table, N = {n}: " + ", ".join(
                f"{label} {c:.1%}" for label, c in zip(labels, cover, strict=True))
                + f" (MC se {mc:.1%}; {time.perf_counter() - start:.0f} s)")
            worst = min(worst, float(cover.min()))
        if args.only in (None, "cor"):
            start = time.perf_counter()
            c = cor_coverage(rng, n, args.reps, args.boot, truth)
            print(f"correlation (RRcor, Fieller interval), N = {n}, true r = {truth:.3f}: "
                  f"{c:.1%} (MC se {mc:.1%}; {time.perf_counter() - start:.0f} s)")
            worst = min(worst, c)
        if args.only in (None, "models", "predictors"):
            model_mc = np.sqrt(0.95 * 0.05 / args.model_reps)
            for kind in ("linear", "logistic"):
                start = time.perf_counter()
                f = predictor_coverage(rng, n, args.model_reps, kind)
                print(f"randomized predictor's coefficient ({kind}), N = {n}: profile likelihood "
                      f"{f['profile']:.1%}, Wald {f['wald']:.1%} (MC se {model_mc:.1%}; "
                      f"{args.model_reps} surveys); estimate - truth {f['bias_mc']:+.1f} MC se, "
                      f"sd {f['sd']:.4f} vs mean se {f['mean_se']:.4f} "
                      f"({time.perf_counter() - start:.0f} s)")
                worst = min(worst, f["profile"])
        if args.only in (None, "models", "mixed"):
            mixed_reps = args.mixed_reps or args.model_reps
            start = time.perf_counter()
            c = sd_coverage(rng, n, mixed_reps)
            print(f"random intercept's sd (profile likelihood), N = {n}: {c:.1%} "
                  f"(MC se {np.sqrt(0.95 * 0.05 / mixed_reps):.1%}; {mixed_reps} surveys; "
                  f"{time.perf_counter() - start:.0f} s)")
            worst = min(worst, c)
    print(f"worst coverage: {worst:.1%} (target >= 94%)")
    return 0 if worst >= 0.94 else 1


if __name__ == "__main__":
    sys.exit(main())
