"""Independent reference computations for the analyzer's tests: exact binomial sums, no scipy."""

from __future__ import annotations

import math


def binomial_upper_tail(n: int, total: int, p: float) -> float:
    """P(X >= n) for X ~ Binomial(total, p), summed exactly term by term."""
    return math.fsum(math.comb(total, k) * p**k * (1 - p) ** (total - k)
                     for k in range(n, total + 1))


def binomial_lower_tail(n: int, total: int, p: float) -> float:
    """P(X <= n)."""
    return math.fsum(math.comb(total, k) * p**k * (1 - p) ** (total - k) for k in range(0, n + 1))


def bisect(function, low: float, high: float, iterations: int = 200) -> float:
    """Root of a monotone function between low and high."""
    f_low = function(low)
    for _ in range(iterations):
        middle = (low + high) / 2
        if function(middle) * f_low > 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def clopper_pearson_reference(n: int, total: int, confidence: float) -> tuple[float, float]:
    """Clopper-Pearson from its definition: the tail probabilities equal alpha/2."""
    alpha = 1 - confidence
    low = 0.0 if n == 0 else bisect(
        lambda p: binomial_upper_tail(n, total, p) - alpha / 2, 0.0, 1.0)
    high = 1.0 if n == total else bisect(
        lambda p: binomial_lower_tail(n, total, p) - alpha / 2, 0.0, 1.0)
    return low, high


def numerical_hessian(function, theta, h: float = 1e-4):
    """Central second differences of a scalar function at theta (a numpy vector)."""
    import numpy as np

    k = len(theta)
    steps = np.eye(k) * h
    return np.array([[(function(theta + a + b) - function(theta + a - b)
                       - function(theta - a + b) + function(theta - a - b)) / (4 * h * h)
                      for b in steps] for a in steps])
