"""`rrsite power --predictor`: respondents needed to detect a randomized PREDICTOR's effect.

The randomized yes-no question is now the exposure: a share ``--exposed`` truly has it (its answer
goes through the design at epsilon, or ``--design``), and a directly asked yes-no outcome has the
prevalence ``--prevalence`` among those without it and odds ratio R with it. The test is the Wald
test of the coefficient in `analyze --model "y ~ q"` (estimate.regression.predictors, the
shares of q estimated with it).

Asymptotic N: from the expected information of one respondent over the four (report, outcome)
cells, P(r, y) = sum_t pi_t M[t, r] p_t^y (1 - p_t)^(1 - y), parameters (b0, b1, logit pi), the
derivatives by central differences. Simulated N: as `rrsite power`, the smallest N whose simulated
power reaches the target (bisection between half and twice the asymptotic N).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..estimate.intervals import quantiles
from ..estimate.joint import JointPart
from ..estimate.regression.logistic import RegressionError
from ..estimate.regression.predictors import fit_predictors, latent_classes
from .power import Scenario
from .search import smallest_n


@dataclass
class PredictorScenario(Scenario):
    """The data-generating model of a randomized predictor and a direct yes-no outcome.

    The numbers (and ``beta``) are those of `rrsite power`'s Scenario; here the design randomizes
    the predictor, and ``exposed`` is the share of its true "yes".
    """

    @property
    def matrix(self) -> np.ndarray:
        """[truth][report] of the randomized predictor."""
        return np.array([[self.p00, 1 - self.p00], [1 - self.p11, self.p11]])

    @property
    def theta(self) -> np.ndarray:
        """(b0, b1, logit of the exposed share)."""
        return np.append(self.beta, math.log(self.exposed / (1 - self.exposed)))


def cell_probabilities(theta: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """P(report r, outcome y) for (r, y) in (0,0), (0,1), (1,0), (1,1)."""
    pi = np.array([1 - special.expit(theta[2]), special.expit(theta[2])])
    p = special.expit(np.array([theta[0], theta[0] + theta[1]]))
    out = np.zeros(4)
    for r in (0, 1):
        for y in (0, 1):
            out[2 * r + y] = sum(pi[t] * matrix[t, r] * (p[t] if y else 1 - p[t]) for t in (0, 1))
    return out


def slope_variance(s: PredictorScenario) -> float:
    """[I^-1]_11 per respondent, I = sum_cells dP dP' / P (central differences)."""
    theta, matrix = s.theta, s.matrix
    probabilities = cell_probabilities(theta, matrix)
    jac = np.zeros((4, 3))
    for j in range(3):
        h = 1e-6
        up, down = theta.copy(), theta.copy()
        up[j] += h
        down[j] -= h
        jac[:, j] = (cell_probabilities(up, matrix) - cell_probabilities(down, matrix)) / (2 * h)
    info = (jac.T / probabilities) @ jac
    return float(np.linalg.inv(info)[1, 1])


def asymptotic_n(s: PredictorScenario, power: float, alpha: float) -> int:
    """(z_{1-alpha/2} + z_power)^2 Var1 / log(R)^2, rounded up."""
    z = quantiles.norm_ppf(1 - alpha / 2) + quantiles.norm_ppf(power)
    return int(math.ceil(z * z * slope_variance(s) / math.log(s.odds_ratio) ** 2))


def simulated_power(s: PredictorScenario, n: int, simulations: int, alpha: float,
                    seed: int, bar: object | None = None) -> float:
    """Share of simulated surveys of n whose Wald test of the predictor rejects at alpha."""
    rng = np.random.default_rng(seed)
    critical = quantiles.norm_ppf(1 - alpha / 2)
    theta = s.theta
    rejected = 0
    for _ in range(simulations):
        truth = (rng.random(n) < s.exposed).astype(int)
        y = (rng.random(n) < special.expit(theta[0] + theta[1] * truth)).astype(float)
        report = np.where(truth == 1, rng.random(n) < s.p11, rng.random(n) >= s.p00).astype(int)
        part = JointPart((s.matrix,), np.bincount(report, minlength=2).astype(float))
        try:
            classes = latent_classes([part], [report], [["no", "yes"]], ["no"], ["q"])
            fit = fit_predictors("logistic", y, np.ones((n, 1)), ["(Intercept)"], [], classes,
                                 [("q", [0])], tests=False, profile=[])
        except (RegressionError, ValueError, np.linalg.LinAlgError):
            pass                    # not identified in this sample: counted as not rejected
        else:
            rejected += abs(fit.beta[1] / fit.se[1]) > critical
        if bar is not None:
            bar.advance(f"N = {n:,}")  # type: ignore[attr-defined]
    return rejected / simulations


def required_n(s: PredictorScenario, power: float, alpha: float, simulations: int, seed: int,
               bar: object | None = None, steps: int = 7) -> tuple[int, int, float]:
    """(asymptotic N, simulated N, simulated power at it): bisection over [N0 / 2, 2 N0]."""
    n0 = asymptotic_n(s, power, alpha)
    n, at_n = smallest_n(lambda size: simulated_power(s, size, simulations, alpha, seed, bar),
                         max(n0 // 2, 20), max(2 * n0, 40), power, steps)
    return n0, n, at_n
