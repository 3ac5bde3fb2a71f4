"""`rrsite power`: respondents needed to detect an odds ratio with a randomized answer.

    rrsite power --odds-ratio 1.8 --epsilon 1 [--prevalence 0.2] [--exposed 0.5]
                 [--power 0.8] [--alpha 0.05] [--simulations 400] [--seed 1]
                 [--design P00,P11] [--progress/--no-progress] [--predictor]

With --predictor the randomized answer is the covariate, not the outcome
(rrsite.plan.power_predictor).

The model: a yes/no covariate held by a share ``--exposed`` of respondents, a true prevalence
``--prevalence`` among the others, and an odds ratio R between the two; the sensitive answer
goes through the optimal design at epsilon (rrsite.core.optimal; or ``--design``). The test is
the Wald test of the covariate's coefficient at level alpha, as `analyze --model` reports it.

First the asymptotic answer from the expected information (closed form over the four
covariate x report cells); then, by simulation (``--simulations`` surveys per size, the same
random numbers at every size), the smallest N whose simulated power reaches the target, found by
bisection between half and twice the asymptotic N. Prints both, with the simulated power's
Monte-Carlo standard error. Each simulated survey is tested on its four covariate x report
counts (:func:`wald_statistic`, the per-row fit's figures in closed form): the documented example
takes about a second (benchmarks/power.py).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from statistics import NormalDist
from typing import TextIO

import numpy as np

#: |log odds| beyond which the fit reports separation: rrsite.estimate.regression.logistic's
#: SEPARATION_BOUND (that module loads scipy, which `rrsite power` does not need).
SEPARATION_BOUND = 25.0


@dataclass
class Scenario:
    """Everything that fixes the data-generating model."""

    p00: float
    p11: float
    prevalence: float
    exposed: float
    odds_ratio: float

    @property
    def beta(self) -> np.ndarray:
        """(intercept, slope)."""
        p = self.prevalence
        return np.array([math.log(p / (1 - p)), math.log(self.odds_ratio)])


def slope_variance(s: Scenario) -> float:
    """Asymptotic variance of the slope for one respondent: [I^-1]_11, I the expected information.

    I = sum over x in {0, 1} of P(x) * (b s(1-s))^2 / (lambda (1 - lambda)) * (1, x)(1, x)'.
    """
    info = np.zeros((2, 2))
    for x, weight in ((0.0, 1 - s.exposed), (1.0, s.exposed)):
        row = np.array([1.0, x])
        sig = 1 / (1 + math.exp(-float(row @ s.beta)))
        lam = (1 - s.p00) + (s.p00 + s.p11 - 1) * sig
        d = (s.p00 + s.p11 - 1) * sig * (1 - sig)
        info += weight * d * d / (lam * (1 - lam)) * np.outer(row, row)
    return float(np.linalg.inv(info)[1, 1])


def asymptotic_n(s: Scenario, power: float, alpha: float) -> int:
    """(z_{1-alpha/2} + z_power)^2 Var1 / log(R)^2, rounded up."""
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return int(math.ceil(z * z * slope_variance(s) / math.log(s.odds_ratio) ** 2))


class Bar:
    """A count-based progress bar on stderr."""

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None) -> None:
        self.total, self.done, self.enabled = max(total, 1), 0, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.last = 0.0

    def advance(self, label: str) -> None:
        """One more unit done."""
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self.last > 0.2 or self.done == self.total):
            self.last = now
            filled = int(30 * min(self.done / self.total, 1.0))
            self.stream.write(f"\rsimulating [{'#' * filled}{'.' * (30 - filled)}] "
                              f"{self.done}/{self.total} {label}   ")
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled:
            self.stream.write("\n")


def wald_statistic(counts: np.ndarray, s: Scenario) -> float | None:
    """The Wald statistic of the slope from the four (x, report) cell counts, or None.

    ``counts[2 x + report]``. With one yes/no covariate the model is saturated: the maximum-
    likelihood report rate of each covariate value is its observed rate, so the prevalence is
    sigma_x = (rate_x - (1 - p00)) / (p00 + p11 - 1) and the slope logit(sigma_1) -
    logit(sigma_0); at that optimum the observed information equals the expected one, giving
    Var(eta_x) = rate_x (1 - rate_x) / (n_x (b sigma_x (1 - sigma_x))^2). This is the estimate
    and observed-information SE that the Newton fit of every respondent's row gives
    (`analyze --model`, rrsite.estimate.regression.logistic), in closed form. None where that
    fit fails: a covariate value nobody has, or a prevalence estimate at 0 or 1 or a log odds
    beyond the separation bound (separation).
    """
    a, b = 1.0 - s.p00, s.p00 + s.p11 - 1.0
    etas, variance = [], 0.0
    for x in (0, 1):
        size = float(counts[2 * x] + counts[2 * x + 1])
        if size <= 0:
            return None
        rate = float(counts[2 * x + 1]) / size
        sigma = (rate - a) / b
        if not 0.0 < sigma < 1.0:
            return None
        etas.append(math.log(sigma / (1.0 - sigma)))
        variance += rate * (1.0 - rate) / (size * (b * sigma * (1.0 - sigma)) ** 2)
    slope = etas[1] - etas[0]
    if abs(etas[0]) > SEPARATION_BOUND or abs(slope) > SEPARATION_BOUND:
        return None
    return slope / math.sqrt(variance)


def simulated_power(s: Scenario, n: int, simulations: int, alpha: float, seed: int,
                    bar: Bar | None = None) -> float:
    """Share of simulated surveys of n whose Wald test of the slope rejects at alpha.

    Each survey draws every respondent's covariate, true answer and report, then is fitted on
    its four cell counts (:func:`wald_statistic`).
    """
    rng = np.random.default_rng(seed)
    critical = NormalDist().inv_cdf(1 - alpha / 2)
    rejected = 0
    for _ in range(simulations):
        x = rng.random(n) < s.exposed
        truth = rng.random(n) < 1 / (1 + np.exp(-(s.beta[0] + s.beta[1] * x)))
        u = rng.random(n)
        y = np.where(truth, u < s.p11, u >= s.p00)
        statistic = wald_statistic(np.bincount(2 * x + y, minlength=4), s)
        rejected += statistic is not None and abs(statistic) > critical
        if bar is not None:
            bar.advance(f"N = {n:,}")
    return rejected / simulations


def required_n(s: Scenario, power: float, alpha: float, simulations: int, seed: int,
               bar: Bar | None = None, steps: int = 7) -> tuple[int, int, float]:
    """(asymptotic N, simulated N, simulated power at it): bisection over [N0 / 2, 2 N0]."""
    n0 = asymptotic_n(s, power, alpha)
    low, high = max(n0 // 2, 10), 2 * n0
    at_high = simulated_power(s, high, simulations, alpha, seed, bar)
    for _ in range(steps):
        if high - low <= max(2, high // 100):
            break
        middle = (low + high) // 2
        value = simulated_power(s, middle, simulations, alpha, seed, bar)
        if value >= power:
            high, at_high = middle, value
        else:
            low = middle
    return n0, high, at_high
