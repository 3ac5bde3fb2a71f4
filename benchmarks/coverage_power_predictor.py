"""`rrsite power --predictor`'s asymptotic variance against the fit's spread over simulated surveys.

The scenario of tests/joint/test_predictor_simulate_power.py (randomized yes-no predictor under a
design with P(truthful report) 0.8 both ways, 40% exposed, outcome prevalence 0.3 without it and
odds ratio 2): --reps surveys of --n respondents, each fitted by
`rrsite.estimate.regression.predictors.fit_predictors` on every respondent's row, as
`rrsite analyze --model "y ~ q"` does. Prints the variance of the slope across surveys beside the
asymptotic variance of `rrsite.plan.power_predictor.slope_variance` (a ratio, with its
Monte-Carlo standard error), the slope's mean beside log(odds ratio), and the coverage of its
Wald interval beside the nominal 95% (with its Monte-Carlo standard error). The test keeps a
smaller check (the fit on the cell counts in closed form, 4,000 surveys).

    .venv/bin/python benchmarks/coverage_power_predictor.py [--reps 400] [--n 2000] [--seed 7]
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import special
from study import study_parser  # benchmarks/, beside this script

from rrsite.estimate.joint import JointPart
from rrsite.estimate.regression.predictors import fit_predictors, latent_classes
from rrsite.plan.power_predictor import PredictorScenario, slope_variance

Z95 = 1.959963984540054


def spread(s: PredictorScenario, n: int, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The slope and its standard error in ``reps`` simulated surveys of ``n``."""
    rng = np.random.default_rng(seed)
    slopes, ses = np.zeros(reps), np.zeros(reps)
    for rep in range(reps):
        truth = (rng.random(n) < s.exposed).astype(int)
        y = (rng.random(n) < special.expit(s.theta[0] + s.theta[1] * truth)).astype(float)
        report = np.where(truth == 1, rng.random(n) < s.p11, rng.random(n) >= s.p00).astype(int)
        part = JointPart((s.matrix,), np.bincount(report, minlength=2).astype(float))
        classes = latent_classes([part], [report], [["no", "yes"]], ["no"], ["q"])
        fit = fit_predictors("logistic", y, np.ones((n, 1)), ["(Intercept)"], [], classes,
                             [("q", [0])], tests=False, profile=[])
        slopes[rep], ses[rep] = fit.beta[1], fit.se[1]
    return slopes, ses


def main(argv: list[str] | None = None) -> int:
    """Run the study and print its figures."""
    parser = study_parser(__doc__, reps=400, seed=7)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args(argv)
    s = PredictorScenario(0.8, 0.8, 0.3, 0.4, 2.0)
    started = time.perf_counter()
    slopes, ses = spread(s, args.n, args.reps, args.seed)
    predicted = slope_variance(s) / args.n
    ratio = float(np.var(slopes, ddof=1)) / predicted
    truth = math.log(s.odds_ratio)
    covered = float(np.mean(np.abs(slopes - truth) <= Z95 * ses))
    print(f"{args.reps} surveys of N = {args.n:,} ({time.perf_counter() - started:.0f} s)")
    print(f"slope variance, simulated / asymptotic: {ratio:.3f} "
          f"(Monte-Carlo SE {math.sqrt(2 / (args.reps - 1)) * ratio:.3f}; 1 is the target)")
    print(f"mean slope {np.mean(slopes):.4f} beside log(odds ratio) {truth:.4f} "
          f"(Monte-Carlo SE {math.sqrt(predicted / args.reps):.4f})")
    print(f"Wald 95% interval's coverage: {covered:.1%} "
          f"(Monte-Carlo SE {math.sqrt(0.95 * 0.05 / args.reps):.1%}; nominal 95.0%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
