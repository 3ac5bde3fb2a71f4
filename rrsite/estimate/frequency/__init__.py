"""Shares from frequency-oracle reports (rrsite.core.frequency): unbiased, maximum likelihood.

Each report supports some answers; with p = P(support v | truth v), q = P(support v | another
truth) and c_v the reports supporting v among N, the count c_v is Binomial(N, lambda_v) with
lambda_v = q + (p - q) f_v under random sampling (each respondent's support of v is one draw).
Hence (Wang et al. 2017, section 4):

    unbiased f_v = (c_v / N - q) / (p - q),   Var = lambda_v (1 - lambda_v) / (N (p - q)^2),

and the exact (Clopper-Pearson) interval for lambda_v mapped through the same affine map covers
f_v with at least the stated confidence at every share (MATH.md section 1's argument);
benchmarks/coverage_frequency.py measures it. The estimate is the maximum-likelihood estimate on
the simplex: every report's likelihood is ``ratio`` for the answers it supports and 1 for the
others (up to a factor common to all answers), so the EM step, the iterative Bayesian update of
Agrawal & Aggarwal (2001) and ElSalamouny & Palamidessi (2020), is

    f_v <- f_v / N sum_i L_i(v) / sum_u f_u L_i(u),

whose fixed point is reached fast by maximising the same likelihood with scipy's SLSQP first
(:func:`em_shares`); the optimality conditions are checked. For "tick all that
apply" every box is its own yes/no question (its share does not sum with the others): its
maximum-likelihood estimate is the unbiased one clipped to [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from ...core import z_value
from ..estimators import KIND_CATEGORICAL, Estimate
from ..intervals import chebyshev_k, mapped_interval

#: A "tick all that apply" question: each box's share is estimated on its own.
KIND_MULTI = "multi-choice"
#: EM stops when the optimality conditions hold within this (:func:`violation`).
EM_TOLERANCE = 1e-6
EM_MAX_ITERATIONS = 5_000
#: Shares are kept at least this large while EM runs (a share at 0 could never grow again).
FLOOR = 1e-12


@dataclass(frozen=True)
class Law:
    """What the estimates need of a frequency oracle: its support chances and likelihood ratio."""

    p: float
    q: float
    ratio: float
    sets: bool = False

    @classmethod
    def of(cls, oracle: Any) -> Law:
        """The law of a rrsite.core.frequency oracle (or of a wave's)."""
        return cls(float(oracle.p), float(oracle.q),
                   float(oracle.ratio), bool(getattr(oracle, "sets", False)))

    def variance(self, share: np.ndarray | float, n: float) -> np.ndarray:
        """The exact variance of the unbiased share at true share(s) ``share`` (random sampling)."""
        rate = self.q + (self.p - self.q) * np.asarray(share, dtype=np.float64)
        out: np.ndarray = rate * (1.0 - rate) / (n * (self.p - self.q) ** 2)
        return out


@dataclass
class Part:
    """The reports of one design: which answers each supports (n x k), and the design's law."""

    supports: np.ndarray
    law: Law

    @property
    def n(self) -> int:
        """How many reports."""
        return int(self.supports.shape[0])

    def counts(self) -> np.ndarray:
        """c_v: the reports supporting each answer."""
        out: np.ndarray = self.supports.sum(axis=0).astype(np.float64)
        return out

    def unbiased(self) -> np.ndarray:
        """(c_v / N - q) / (p - q)."""
        out: np.ndarray = (self.counts() / self.n - self.law.q) / (self.law.p - self.law.q)
        return out

    def debiased_rows(self) -> np.ndarray:
        """Per report and answer, (support - q) / (p - q): unbiased for the truth's indicator."""
        out: np.ndarray = (self.supports - self.law.q) / (self.law.p - self.law.q)
        return out


def _compressed(part: Part) -> tuple[np.ndarray, np.ndarray, float]:
    """The distinct support rows (as 0/1 floats), how often each occurs, and ratio - 1."""
    packed = np.packbits(part.supports, axis=1)
    unique, counts = np.unique(packed, axis=0, return_counts=True)
    rows = np.unpackbits(unique, axis=1, count=part.supports.shape[1]).astype(np.float64)
    return rows, counts.astype(np.float64), part.law.ratio - 1.0


def log_likelihood(shares: np.ndarray, parts: Sequence[Part]) -> float:
    """sum_i log sum_v f_v L_i(v), with L_i(v) = 1 + (ratio - 1) [report i supports v]."""
    total = 0.0
    for rows, weights, extra in (_compressed(p) for p in parts if p.n):
        total += float(weights @ np.log(1.0 + extra * (rows @ shares)))
    return total


def _em_step(shares: np.ndarray, data: list[tuple[np.ndarray, np.ndarray, float]],
             total: float) -> tuple[np.ndarray, np.ndarray]:
    """One EM step, and the multipliers (the log-likelihood's gradient over N) it applied."""
    update = np.zeros_like(shares)
    for rows, weights, extra in data:
        ratio = weights / (1.0 + extra * (rows @ shares))
        update += ratio.sum() + extra * (ratio @ rows)
    multiplier: np.ndarray = update / total
    out: np.ndarray = shares * multiplier
    normalised: np.ndarray = out / out.sum()
    return normalised, multiplier


def violation(shares: np.ndarray, multiplier: np.ndarray) -> float:
    """How far the shares are from the optimum on the simplex (Karush-Kuhn-Tucker).

    At the maximum the gradient over N is 1 on every share above 0 and at most 1 elsewhere.
    """
    inside = shares > FLOOR * 10
    off = np.abs(multiplier[inside] - 1.0).max(initial=0.0)
    return float(max(off, (multiplier[~inside] - 1.0).max(initial=0.0)))


def em_shares(parts: Sequence[Part], start: np.ndarray | None = None) -> np.ndarray:
    """The maximum-likelihood shares on the simplex, the iterative Bayesian update's fixed point.

    Plain EM creeps towards shares of 0 (thousands of steps with many answers), so the same
    likelihood is first maximised by scipy's SLSQP with its exact gradient over the simplex;
    EM steps then polish the result until the optimality conditions hold within EM_TOLERANCE
    (:func:`violation`), or EM_MAX_ITERATIONS steps have been taken.
    """
    used = [p for p in parts if p.n]
    k = used[0].supports.shape[1]
    total = float(sum(p.n for p in used))
    data = [_compressed(p) for p in used]
    shares = np.full(k, 1.0 / k) if start is None else np.clip(start, FLOOR, None)
    shares = shares / shares.sum()

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = 0.0, np.zeros(k)
        for rows, weights, extra in data:
            mix = 1.0 + extra * (rows @ x)
            value += float(weights @ np.log(np.maximum(mix, 1e-300)))
            ratio = weights / mix
            gradient += ratio.sum() + extra * (ratio @ rows)
        return -value / total, -gradient / total

    found = optimize.minimize(
        negative, shares, jac=True, method="SLSQP", bounds=[(0.0, 1.0)] * k,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0,
                      "jac": lambda x: np.ones_like(x)}],
        options={"maxiter": 500, "ftol": 1e-15})
    if np.all(np.isfinite(found.x)):
        shares = np.clip(found.x, FLOOR, None)
        shares = shares / shares.sum()
    for _ in range(EM_MAX_ITERATIONS):
        stepped, multiplier = _em_step(shares, data, total)
        if violation(shares, multiplier) < EM_TOLERANCE:
            break
        shares = stepped
    shares[shares < FLOOR * 10] = 0.0
    out: np.ndarray = shares / shares.sum()
    return out


def estimate(parts: Sequence[Part], values: Sequence[str], confidence: float = 0.95,
             method: str = "exact", mle: bool = True) -> Estimate:
    """Every answer's share: the maximum-likelihood estimate, the unbiased one, exact intervals.

    One design: the mapped ``method`` interval ("exact" Clopper-Pearson by default) per answer.
    Several designs (the survey was edited): the unbiased estimates combined with fixed weights
    1 / Var at the uniform share, a Wald interval from their variance (``ci_method`` "wald"),
    and the likelihood maximised over every design's reports together. ``mle`` False skips
    the maximum likelihood (the estimate is then the unbiased share clipped to [0, 1]): the
    intervals do not depend on it (benchmarks/coverage_frequency.py).
    """
    used = [p for p in parts if p.n]
    k = len(values)
    sets = bool(used and used[0].law.sets) or bool(parts and parts[0].law.sets)
    kind = KIND_MULTI if sets else KIND_CATEGORICAL
    total = sum(p.n for p in used)
    counts = np.sum([p.counts() for p in used], axis=0) if used else np.zeros(k)
    count_map = {v: int(c) for v, c in zip(values, counts, strict=True)}
    pooled = len(used) > 1
    method_name = "wald" if pooled else method
    if not used:
        nan = np.full(k, np.nan)
        return Estimate(kind=kind, values=tuple(values), labels=tuple(values), n=0,
                        counts=count_map, confidence=confidence, ci_method=method_name,
                        observed=nan, estimate=nan.copy(), unbiased=nan.copy(), se=nan.copy(),
                        se_fixed=nan.copy(), ci_low=nan.copy(), ci_high=nan.copy(),
                        chebyshev=nan.copy(), degenerate=np.zeros(k, dtype=bool),
                        notes=["no answers"])
    unbiased_parts = np.array([p.unbiased() for p in used])
    rates = [p.counts() / p.n for p in used]
    var_parts = np.array([r * (1 - r) / (p.n * (p.law.p - p.law.q) ** 2)
                          for r, p in zip(rates, used, strict=True)])
    weights = np.array([1.0 / p.law.variance(np.full(k, 1.0 / k), p.n) for p in used])
    weights /= weights.sum(axis=0)
    unbiased = np.sum(weights * unbiased_parts, axis=0)
    se = np.sqrt(np.sum(weights ** 2 * var_parts, axis=0))
    if pooled:
        z = z_value(confidence)
        low, high = np.clip(unbiased - z * se, 0, 1), np.clip(unbiased + z * se, 0, 1)
    else:
        part = used[0]
        low, high = mapped_interval(part.counts(), part.n, 1.0 - part.law.q, part.law.p,
                                    confidence, method)
        low, high = np.atleast_1d(low), np.atleast_1d(high)
    if sets or not mle:
        shares = np.clip(unbiased, 0.0, 1.0)
        clipped = bool(np.any(shares != unbiased))
    else:
        shares = em_shares(used, _start(unbiased))
        clipped = True
    fixed = np.sum([p.law.p * (1 - p.law.p) * shares + p.law.q * (1 - p.law.q) * (1 - shares)
                    for p in used], axis=0) / len(used)
    se_fixed = np.sqrt(fixed / (total * np.mean([(p.law.p - p.law.q) ** 2 for p in used])))
    result = Estimate(
        kind=kind, values=tuple(values), labels=tuple(values), n=int(total), counts=count_map,
        confidence=confidence, ci_method=method_name, observed=counts / total, estimate=shares,
        unbiased=unbiased, se=se, se_fixed=se_fixed, ci_low=np.asarray(low, dtype=np.float64),
        ci_high=np.asarray(high, dtype=np.float64), chebyshev=chebyshev_k(confidence) * se,
        clipped=clipped and bool(np.any(np.abs(shares - unbiased) > 1e-12)), pooled=pooled,
    )
    result.degenerate = (result.ci_high <= 0.0) | (result.ci_low >= 1.0)
    result.notes.append(
        "observed: the share of reports supporting each answer; " + (
            "each box's estimate is its unbiased share clipped to [0, 1]" if sets else
            "estimate: the maximum-likelihood shares on the simplex (EM, iterative Bayesian "
            "update); unbiased: (observed - q) / (p - q), which need not sum to 1"))
    if pooled:
        result.notes.append(f"{len(used)} designs pooled: the unbiased estimates combined with "
                            "fixed weights, Wald intervals; one likelihood for the estimate")
    return result


def _start(unbiased: np.ndarray) -> np.ndarray:
    """A starting point strictly inside the simplex from the unbiased shares."""
    start = np.clip(unbiased, 0.0, None) + 1e-3
    out: np.ndarray = start / start.sum()
    return out


@dataclass(frozen=True)
class Change:
    """The change of one answer's share between two waves, with its interval."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    n: int
    method: str


def paired_change(before: np.ndarray, after: np.ndarray, confidence: float) -> list[Change]:
    """Per answer, the mean of the respondents' de-biased changes and a normal interval.

    ``before``/``after``: n x k de-biased rows (:meth:`Part.debiased_rows`) of the same n
    respondents in two waves. Each respondent's difference is unbiased for the change of their
    true indicator whatever the permanent report both waves share; their sample variance is the
    honest variance of the mean under random sampling of respondents.
    """
    n = before.shape[0]
    diff = after - before
    mean = diff.mean(axis=0) if n else np.full(before.shape[1], np.nan)
    sd = diff.std(axis=0, ddof=1) if n > 1 else np.full(before.shape[1], np.nan)
    se = sd / math.sqrt(max(n, 1))
    z = z_value(confidence)
    return [Change(float(m), float(s), float(m - z * s), float(m + z * s), n,
                   "paired: mean of each respondent's de-biased change, normal interval")
            for m, s in zip(mean, se, strict=True)]


def independent_change(first: Estimate, second: Estimate, confidence: float) -> list[Change]:
    """Per answer, the difference of two waves' unbiased shares, se from both (no pairs)."""
    z = z_value(confidence)
    out = []
    for i in range(len(first.labels)):
        diff = float(second.unbiased[i] - first.unbiased[i])
        se = math.hypot(float(first.se[i]), float(second.se[i]))
        out.append(Change(diff, se, diff - z * se, diff + z * se, min(first.n, second.n),
                          "independent samples: difference of the unbiased shares"))
    return out
