"""Confidence intervals for a report rate lambda and their map to the true rate (MATH.md section 1).

Every interval here is first computed for lambda = P(report "yes") from (n, N) and then mapped
through the design's affine map ``lambda -> (lambda - (1 - p00)) / (p00 + p11 - 1)``; the map is
monotone, so the coverage of the lambda interval carries over. Results are clipped to [0, 1].

The beta quantile of the exact (Clopper-Pearson) interval is ``scipy.special.betaincinv``; the
tests check it against the closed forms at n = 0 and n = N and against exact binomial sums.
All functions accept numpy arrays (vectorised) as well as plain numbers. The normal, t,
chi-square and beta quantiles the other estimators use are in ``quantiles``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import betaincinv

from ...core import z_value

#: The interval methods ``rrsite analyze --interval`` accepts.
METHODS = ("exact", "wilson", "wald")

ArrayLike = Any


def chebyshev_k(confidence: float) -> float:
    """K = 1 / sqrt(1 - confidence): Chebyshev's inequality gives P(|X - mu| >= k sd) <= 1/k^2."""
    return 1.0 / math.sqrt(1.0 - confidence)


def clopper_pearson(n: ArrayLike, total: ArrayLike, confidence: float) -> tuple[Any, Any]:
    """Exact interval [L, U] for a binomial rate from n successes in ``total`` trials.

    L = Beta quantile (alpha/2; n, N - n + 1) (0 when n = 0), U = Beta quantile
    (1 - alpha/2; n + 1, N - n) (1 when n = N). Each tail holds at most alpha/2.
    """
    n = np.asarray(n, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(
            n <= 0, 0.0, betaincinv(np.maximum(n, 1.0), total - n + 1.0, alpha / 2.0)
        )
        upper = np.where(
            n >= total, 1.0, betaincinv(n + 1.0, np.maximum(total - n, 1.0), 1.0 - alpha / 2.0)
        )
    return _scalar(lower), _scalar(upper)


def wilson(n: ArrayLike, total: ArrayLike, confidence: float) -> tuple[Any, Any]:
    """Wilson score interval for a binomial rate."""
    z = z_value(confidence)
    n = np.asarray(n, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    rate = n / total
    z2 = z * z
    denominator = 1.0 + z2 / total
    centre = (rate + z2 / (2.0 * total)) / denominator
    half = z / denominator * np.sqrt(rate * (1.0 - rate) / total + z2 / (4.0 * total * total))
    return _scalar(np.maximum(centre - half, 0.0)), _scalar(np.minimum(centre + half, 1.0))


def wald(n: ArrayLike, total: ArrayLike, confidence: float) -> tuple[Any, Any]:
    """Wald interval rate +- z sqrt(rate (1 - rate) / N) for a binomial rate (not clipped)."""
    z = z_value(confidence)
    n = np.asarray(n, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    rate = n / total
    half = z * np.sqrt(rate * (1.0 - rate) / total)
    return _scalar(rate - half), _scalar(rate + half)


def rate_interval(
    n: ArrayLike, total: ArrayLike, confidence: float, method: str = "exact"
) -> tuple[Any, Any]:
    """The interval for lambda by name: "exact" (Clopper-Pearson), "wilson" or "wald"."""
    if method == "exact":
        return clopper_pearson(n, total, confidence)
    if method == "wilson":
        return wilson(n, total, confidence)
    if method == "wald":
        return wald(n, total, confidence)
    raise ValueError(f"unknown interval method {method!r}; known: {', '.join(METHODS)}")


def to_true_rate(rate: ArrayLike, p00: float, p11: float) -> Any:
    """The affine map of MATH.md: (lambda - (1 - p00)) / (p00 + p11 - 1)."""
    return (np.asarray(rate, dtype=np.float64) - (1.0 - p00)) / (p00 + p11 - 1.0)


def mapped_interval(
    n: ArrayLike, total: ArrayLike, p00: float, p11: float, confidence: float,
    method: str = "exact",
) -> tuple[Any, Any]:
    """The lambda interval mapped to the true rate and clipped to [0, 1]."""
    low, high = rate_interval(n, total, confidence, method)
    return (
        _scalar(np.clip(to_true_rate(low, p00, p11), 0.0, 1.0)),
        _scalar(np.clip(to_true_rate(high, p00, p11), 0.0, 1.0)),
    )


def _scalar(value: Any) -> Any:
    """0-d arrays become floats so that scalar callers get plain numbers."""
    array = np.asarray(value)
    return float(array) if array.ndim == 0 else array
