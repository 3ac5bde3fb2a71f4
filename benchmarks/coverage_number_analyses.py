"""Coverage of the 95% intervals of the analyses of randomized numbers with other questions.

- `--cor` with a randomized number (Fieller's interval, bootstrap covariance): a true number
  Y (normal, mean 50, sd 10) and a direct X correlated 0.5; Y under `mixture` (p 0.7, uniform
  mask over 0..100) and under `mixture-unknown` (p 0.3 / 0.8, innocuous answers depending on X).
- `--model "y ~ amount + x"` with a randomized number predictor (errors-in-variables by
  moments, Student's t interval): amount ~ normal(10, 3) under `additive` (normal noise, sd 4)
  and `mixture` (p 0.8, uniform 0..20), y = 1 + 2 amount + 0.5 x + normal(0, 2).

At N = 500 and 2000, fresh data each survey; prints each cell's coverage with its Monte-Carlo
SE, the worst cell, and the naive interval (the reports used as if they were the truth) beside
it as the baseline.

    .venv/bin/python benchmarks/coverage_number_analyses.py [--reps 2000] [--boot 400] [--seed 7]
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from scipy import stats
from study import study_parser  # benchmarks/, beside this script

from rrsite.analyze.regression.number_predictors import fit_corrected
from rrsite.core.numbers import MixtureUnknown, number_design_from_spec
from rrsite.estimate.correlation import CorVariable, number_variable, rrcor
from rrsite.estimate.numbers import conditional_variance, debias, simulate_reports

SIZES = (500, 2000)
MIXTURE = number_design_from_spec({"name": "mixture", "p": 0.7,
                                   "mask": {"uniform": {"min": 0, "max": 100}}})
UNKNOWN = MixtureUnknown((0.3, 0.8), 0.5, None, None)
ADDITIVE = number_design_from_spec({"name": "additive",
                                    "scramble": {"normal": {"mean": 0, "sd": 4}}})
SMALL_MIXTURE = number_design_from_spec({"name": "mixture", "p": 0.8,
                                         "mask": {"uniform": {"min": 0, "max": 20}}})


def direct(name: str, values: np.ndarray) -> CorVariable:
    return CorVariable(name, values, np.zeros(len(values)), np.ones(len(values)), False)


def cor_cell(rng: np.random.Generator, design: object, n: int, reps: int, boot: int
             ) -> tuple[float, float]:
    """(coverage of rrsite's interval, coverage of the naive bootstrap on the reports)."""
    rho = 0.5
    hit = naive = 0
    for _ in range(reps):
        x = rng.normal(size=n)
        y = 50 + 10 * (rho * x + math.sqrt(1 - rho * rho) * rng.normal(size=n))
        if design is UNKNOWN:
            g = np.where(rng.random(n) < 0.5, 1, 2)
            u = 40 - 8 * x + rng.normal(0, 5, n)
            z = np.where(rng.random(n) < np.where(g == 1, 0.3, 0.8), y, u)
            variable = number_variable("y", UNKNOWN, z, g)
        else:
            z, _ = simulate_reports(rng, design, y)
            variable = number_variable("y", design, z)
        seed = int(rng.integers(1 << 30))
        fit = rrcor([variable, direct("x", x)], replicates=boot, seed=seed)
        hit += fit.ci_low[0, 1] <= rho <= fit.ci_high[0, 1]
        plain = rrcor([direct("z", z), direct("x", x)], replicates=boot, seed=seed)
        naive += plain.ci_low[0, 1] <= rho <= plain.ci_high[0, 1]
    return hit / reps, naive / reps


def predictor_cell(rng: np.random.Generator, design: object, n: int, reps: int
                   ) -> tuple[float, float]:
    """(coverage of the corrected slope's t interval, of least squares on the reports)."""
    hit = naive = 0
    q_t = float(stats.t.ppf(0.975, n - 3))
    for _ in range(reps):
        q = rng.normal(10, 3, n)
        x = rng.normal(size=n)
        y = 1 + 2 * q + 0.5 * x + rng.normal(0, 2, n)
        z, _ = simulate_reports(rng, design, q)
        r = debias(design, z)  # type: ignore[arg-type]
        v = conditional_variance(design, r)  # type: ignore[arg-type]
        X = np.column_stack([np.ones(n), r, x])
        fit = fit_corrected(X, y, np.column_stack([np.zeros(n), v, np.zeros(n)]),
                            ["(Intercept)", "amount", "x"])
        row = fit.coefficients()[1]
        hit += row["ci_low"] <= 2 <= row["ci_high"]
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        residual = y - X @ beta
        cov = np.linalg.inv(X.T @ X) * residual.var(ddof=3)
        naive += abs(beta[1] - 2) <= q_t * math.sqrt(cov[1, 1])
    return hit / reps, naive / reps


def main(argv: list[str] | None = None) -> int:
    parser = study_parser(__doc__, reps=2000, seed=7)
    parser.add_argument("--boot", type=int, default=400)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    mc = 100 * math.sqrt(0.95 * 0.05 / args.reps)
    print(f"95% interval coverage over {args.reps:,} surveys per cell (Monte Carlo SE about "
          f"{mc:.2f} points); rrsite / naive (the reports taken as the truth)")
    print(f"{'analysis':<44}" + "".join(f"{'N=' + str(n):>18}" for n in SIZES))
    worst = 1.0
    cells = [("--cor, mixture (p 0.7)", lambda n: cor_cell(rng, MIXTURE, n, args.reps,
                                                          args.boot)),
             ("--cor, mixture-unknown (U depends on x)",
              lambda n: cor_cell(rng, UNKNOWN, n, args.reps, args.boot)),
             ("--model slope, additive (sd 4)",
              lambda n: predictor_cell(rng, ADDITIVE, n, args.reps)),
             ("--model slope, mixture (p 0.8)",
              lambda n: predictor_cell(rng, SMALL_MIXTURE, n, args.reps))]
    for label, run in cells:
        out = []
        for n in SIZES:
            ours, naive = run(n)
            worst = min(worst, ours)
            out.append(f"{100 * ours:7.1f} / {100 * naive:5.1f}")
        print(f"{label:<44}" + "".join(f"{c:>18}" for c in out), flush=True)
    print(f"lowest coverage: {100 * worst:.1f}%  ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
