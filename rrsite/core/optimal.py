"""Variance of a yes/no design and the optimal design for a privacy budget.

MATH.md sections 1 and 4; Holohan, Leith & Mason (2017), "Optimal differentially private
mechanisms for randomised response" (seed 002).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .designs import KRR, BinaryDesign, BinaryMatrix, check_probability
from .errors import DesignError

#: Designs whose variances agree to this relative tolerance are reported as a tie.
TIE_TOLERANCE = 1e-9


def report_rates(design: BinaryDesign, pi: float) -> tuple[float, float]:
    """(lambda, 1 - lambda): the chance of a "yes" report and of a "no" report at true rate pi.

    1 - lambda is computed as pi (1 - p11) + (1 - pi) p00, not as 1 - lambda, which loses about
    eight digits near design B with pi close to 1 (MATH.md section 4).
    """
    yes = pi * design.p11 + (1.0 - pi) * (1.0 - design.p00)
    no = pi * (1.0 - design.p11) + (1.0 - pi) * design.p00
    return yes, no


def variance(design: BinaryDesign, pi: float, n: int = 1) -> float:
    """Var(pi_unbiased) for n respondents at true rate pi: lambda (1-lambda) / ((p00+p11-1)^2 n)."""
    pi = check_probability("pi", pi)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise DesignError(f"n must be a whole number of respondents >= 1, got {n!r}")
    yes, no = report_rates(design, pi)
    gain = design.p00 + design.p11 - 1.0
    return yes * no / (gain * gain * n)


def krr_variance(design: KRR, share: float, n: int = 1) -> float:
    """Var of one category's estimate under k-RR at true share f, under random sampling.

    q(1-q) / (N (p-q)^2) + f (1-p-q) / (N (p-q)) + f (1-f) / N (MATH.md section 5); at k = 2 this
    is the binary formula of section 1.
    """
    share = check_probability("share", share)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise DesignError(f"n must be a whole number of respondents >= 1, got {n!r}")
    p, q = design.p, design.q
    return (q * (1 - q) / (p - q) ** 2 + share * (1 - p - q) / (p - q) + share * (1 - share)) / n


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for a confidence level in (0, 1)."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise TypeError(f"confidence must be a number, got {confidence!r}")
    if not 0.0 < confidence < 1.0:
        raise DesignError(f"confidence must be between 0 and 1, got {confidence!r}")
    from statistics import NormalDist  # imported here: the respondent's page never needs it

    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def respondents_needed(
    design: BinaryDesign, margin: float, confidence: float = 0.95, prior: float = 0.5
) -> int:
    """N = z^2 lambda (1 - lambda) / ((p00 + p11 - 1)^2 m^2), rounded up."""
    if isinstance(margin, bool) or not isinstance(margin, int | float):
        raise TypeError(f"margin must be a number, got {margin!r}")
    if not 0.0 < margin < 1.0:
        raise DesignError(f"margin must be between 0 and 1, got {margin!r}")
    z = z_value(confidence)
    exact = z * z * variance(design, prior) / (margin * margin)
    return max(1, math.ceil(exact - 1e-9))


def threshold(epsilon: float, delta: float) -> float:
    """g(epsilon, delta) = delta (E + delta) / (E - 1 + 2 delta)^2, E = e^epsilon."""
    e = math.exp(epsilon)
    return delta * (e + delta) / (e - 1.0 + 2.0 * delta) ** 2


@dataclass(frozen=True)
class OptimalDesign:
    """The designs of least variance at the prior for an (epsilon, delta) budget.

    ``designs`` holds every design that ties for the minimum (usually one); ``design`` is the
    first. ``labels`` names each: "S" (symmetric), "A" (p00 = 1) or "B" (p11 = 1).
    """

    epsilon: float
    delta: float
    prior: float
    designs: tuple[BinaryMatrix, ...]
    labels: tuple[str, ...]
    variance: float

    @property
    def design(self) -> BinaryMatrix:
        """The first optimal design."""
        return self.designs[0]


def _check_budget(epsilon: float, delta: float) -> tuple[float, float]:
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{name} must be a number, got {value!r}")
    if not 0.0 < epsilon < math.inf:
        raise DesignError(f"epsilon must be positive and finite, got {epsilon!r}")
    if not 0.0 <= delta < 1.0:
        raise DesignError(f"delta must be in [0, 1), got {delta!r}")
    return float(epsilon), float(delta)


def candidate_designs(epsilon: float, delta: float = 0.0) -> dict[str, BinaryMatrix]:
    """The vertices where the optimum lies: S alone for delta = 0; S, A and B for delta > 0."""
    epsilon, delta = _check_budget(epsilon, delta)
    e = math.exp(epsilon)
    symmetric = (e + delta) / (1.0 + e)
    candidates = {"S": BinaryMatrix(symmetric, symmetric)}
    if delta > 0.0:
        candidates["A"] = BinaryMatrix(1.0, delta)
        candidates["B"] = BinaryMatrix(delta, 1.0)
    return candidates


def optimal_design(epsilon: float, delta: float = 0.0, prior: float = 0.5) -> OptimalDesign:
    """The (epsilon, delta)-DP design(s) of least variance when the true rate is ``prior``.

    delta = 0: p00 = p11 = e^eps / (1 + e^eps), whatever the prior. delta > 0: the best of the
    vertices S, A, B (docs/explanation/randomized-response.md); ties are reported as ties.
    """
    prior = check_probability("prior", prior)
    candidates = candidate_designs(epsilon, delta)
    variances = {label: variance(design, prior) for label, design in candidates.items()}
    best = min(variances.values())
    tied = [
        label for label, v in variances.items() if v <= best + TIE_TOLERANCE * max(best, 1e-300)
    ]
    return OptimalDesign(
        epsilon=float(epsilon),
        delta=float(delta),
        prior=prior,
        designs=tuple(candidates[label] for label in tied),
        labels=tuple(tied),
        variance=best,
    )
