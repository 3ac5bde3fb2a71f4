"""Benchmark the randomized-response logit against statsmodels' plain Logit, and its coverage.

    python benchmarks/regression.py                       # speed: 100,000 rows, 10 parameters
    python benchmarks/regression.py --coverage 1000       # + recovery/coverage table

Speed: the same 100,000 rows x 10 columns (an intercept, five normal and four binary
covariates) are fitted by estimate.regression.logistic.fit with the identity design (where it is
the ordinary logit; checked to agree with statsmodels to 1e-6) and with forced response
(p00 = p11 = 3/4, the honor-code design), and by statsmodels.Logit(...).fit(method="newton")
(the baseline, measured in the same run). Each is the best of --repeat runs (wall clock); the
ratio is rrsite / statsmodels. LR tests are not included in the timing (one refit per term).

Coverage: --coverage R simulated surveys of N = 2,000 with three covariates for forced response
at epsilon 1, Warner at epsilon 1 (= rrsite's optimal design at epsilon 1) and the honor-code
forced response; prints, for the maximum-likelihood and the bias-reduced estimates, the mean,
the bias in Monte-Carlo SEs and the 95% Wald coverage.
Needs statsmodels (in the `test` extra).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from rrsite.estimate.regression.logistic import fit


def _data(rng: np.random.Generator, n: int, p00: float, p11: float) -> tuple[np.ndarray, ...]:
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 5)),
                         (rng.random((n, 4)) < 0.4).astype(float)])
    beta = np.array([-0.8, 0.4, -0.3, 0.2, 0.1, -0.2, 0.5, -0.4, 0.3, 0.2])
    truth = rng.random(n) < 1 / (1 + np.exp(-X @ beta))
    u = rng.random(n)
    return X, np.where(truth, u < p11, u >= p00).astype(float)


def _best(repeat: int, job: object) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = job()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best, out


def speed(rows: int, repeat: int) -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    names = [f"x{j}" for j in range(10)]
    X, y = _data(rng, rows, 1.0, 1.0)
    t_sm, ref = _best(repeat, lambda: sm.Logit(y, X).fit(disp=0, method="newton", tol=1e-10))
    t_id, ours = _best(repeat, lambda: fit(X, y, 1.0, 1.0, names))
    diff = float(np.max(np.abs(ours.beta - ref.params)))  # type: ignore[attr-defined]
    Xf, yf = _data(rng, rows, 0.75, 0.75)
    t_fr, _ = _best(repeat, lambda: fit(Xf, yf, 0.75, 0.75, names))
    print(f"{rows:,} rows x 10 parameters, best of {repeat}")
    print(f"  statsmodels Logit (newton)          {t_sm:8.3f} s")
    print(f"  rrsite fit, identity design         {t_id:8.3f} s   ratio {t_id / t_sm:5.2f}"
          f"   max |beta diff| {diff:.1e}")
    print(f"  rrsite fit, forced response 3/4     {t_fr:8.3f} s   ratio {t_fr / t_sm:5.2f}")
    t_br, _ = _best(repeat, lambda: fit(Xf, yf, 0.75, 0.75, names, bias_reduction=True))
    print(f"  ... with bias reduction             {t_br:8.3f} s   ratio {t_br / t_sm:5.2f}")


def coverage(reps: int, n: int = 2000) -> None:
    t = 0.2 * (math.e - 1.0)
    designs = {
        "forced response eps 1 (yes 0.2)": (t + 0.8 - t, t + 0.2),
        "Warner = optimal eps 1": (math.e / (1 + math.e),) * 2,
        "forced response 3/4 (honor code)": (0.75, 0.75),
    }
    truth = np.array([-0.8, 0.4, -0.4, 0.2])
    names = ["(Intercept)", "age", "female", "income"]
    for label, (p00, p11) in designs.items():
        rng = np.random.default_rng(2026)
        est = {"ML": np.empty((reps, 4)), "BR": np.empty((reps, 4))}
        cov = {"ML": np.zeros((reps, 4), dtype=bool), "BR": np.zeros((reps, 4), dtype=bool)}
        start = time.perf_counter()
        for r in range(reps):
            X = np.column_stack([np.ones(n), rng.normal(size=n),
                                 rng.integers(0, 2, n).astype(float), rng.normal(size=n)])
            latent = rng.random(n) < 1 / (1 + np.exp(-X @ truth))
            u = rng.random(n)
            y = np.where(latent, u < p11, u >= p00).astype(float)
            result = fit(X, y, p00, p11, names, bias_reduction=True)
            assert result.bias_reduced is not None
            for kind, found in (("ML", result), ("BR", result.bias_reduced)):
                est[kind][r] = found.beta
                cov[kind][r] = [c.ci_low <= b <= c.ci_high
                                for c, b in zip(found.coefficients, truth, strict=True)]
        print(f"\n{label}: p00 = {p00:.4f}, p11 = {p11:.4f}; {reps} surveys of {n} "
              f"({time.perf_counter() - start:.1f} s); ML = maximum likelihood (RRlog's), "
              "BR = bias-reduced (Kosmidis & Firth)")
        print(f"  {'coefficient':<12} {'truth':>7} {'ML mean':>8} {'bias/MCse':>9} "
              f"{'coverage':>8} {'BR mean':>8} {'bias/MCse':>9} {'coverage':>8}")
        summary = {}
        for kind in ("ML", "BR"):
            mean = est[kind].mean(axis=0)
            mc = est[kind].std(axis=0, ddof=1) / math.sqrt(reps)
            summary[kind] = (mean, (mean - truth) / mc, cov[kind].mean(axis=0))
        for j, name in enumerate(names):
            cells = "".join(f" {summary[k][0][j]:8.4f} {summary[k][1][j]:9.2f} "
                            f"{summary[k][2][j]:8.3f}" for k in ("ML", "BR"))
            print(f"  {name:<12} {truth[j]:7.3f}{cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--coverage", type=int, default=0, metavar="SURVEYS")
    args = parser.parse_args()
    speed(args.rows, args.repeat)
    if args.coverage:
        coverage(args.coverage)


if __name__ == "__main__":
    main()
