"""Inattentive respondents in the crosswise model: the anchor question's correction and bounds.

Atsusaka & Stevenson (2023, "A bias-corrected estimator for the crosswise model with inattentive
respondents", Political Analysis 31(1); R package cWise): a share 1 - gamma of respondents
answers at random, "same" with chance 1/2, whatever the statements. With p the innocuous
statement's yes-rate, the share of "same" reports is

    lambda = gamma (pi p + (1 - pi)(1 - p)) + (1 - gamma) / 2,

so pi_bc = 1/2 + (lambda - 1/2) / (gamma (2p - 1)), where the naive crosswise estimate has
gamma = 1. The **anchor question** measures gamma: a crosswise question whose sensitive statement
is false for everyone (innocuous yes-rate p'), whose share of "same" is alpha = gamma (1 - p') +
(1 - gamma) / 2, so gamma = (alpha - 1/2) / (1/2 - p'). cWise's ``bc.est`` writes the same
estimate as the naive one minus its bias,

    pi_bc = pi_naive - Bias,
    Bias = (1/2) (lambda - 1/2) / (p - 1/2) - (1 / (2 gamma)) (lambda - 1/2) / (p - 1/2)

(cWise clips the naive estimate to [0, 1] before subtracting; here the unclipped one is used, so
the two agree whenever the naive estimate is inside [0, 1], and the estimate is clipped last).
cWise bootstraps the standard error (200 resamples, seed 123456); here it is the delta method
over the respondents' joint reports to both questions (a multinomial of four cells, variances
over n - 1 as RRreg's), with a normal interval; its coverage is measured by simulation
(benchmarks/compliance.py).

Without an anchor, cWise's ``cmBound`` is a sensitivity analysis: the estimate and interval for
every assumed share of inattentive respondents from 0 to 1/2; its standard error is the crosswise
one divided by gamma, sqrt(lambda (1 - lambda) / (n - 1)) / (gamma |2p - 1|) (cmBound plugs the
corrected estimate into the crosswise variance formula instead; the two differ slightly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..intervals import quantiles

#: The assumed shares of inattentive respondents of the sensitivity bounds (cmBound's range).
INATTENTIVE_SHARES = tuple(round(0.05 * i, 2) for i in range(11))


@dataclass
class BiasCorrected:
    """A crosswise question corrected with the anchor question (the module docstring)."""

    n: int
    same: float
    anchor_same: float
    attentive: float
    attentive_se: float
    naive: float
    unbiased: float
    estimate: float
    se: float
    ci: tuple[float, float]
    confidence: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON keys (docs/reference/contracts.md)."""
        return {"n": self.n, "same": self.same, "anchor_same": self.anchor_same,
                "attentive": _finite(self.attentive), "attentive_se": _finite(self.attentive_se),
                "naive": _finite(self.naive), "unbiased": _finite(self.unbiased),
                "estimate": _finite(self.estimate), "se": _finite(self.se),
                "ci": [_finite(self.ci[0]), _finite(self.ci[1])],
                "confidence": self.confidence, "notes": list(self.notes)}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def naive(same: float, p: float) -> float:
    """The crosswise moment estimate (lambda + p - 1) / (2p - 1) (Yu, Tian & Tang 2008)."""
    return (same + p - 1) / (2 * p - 1)


def attentive_share(anchor_same: float, p_anchor: float) -> float:
    """The attentive share gamma = (alpha - 1/2) / (1/2 - p') from the anchor's "same" share."""
    return (anchor_same - 0.5) / (0.5 - p_anchor)


def corrected(same: float, p: float, attentive: float) -> float:
    """pi_bc = 1/2 + (lambda - 1/2) / (gamma (2p - 1)); gamma = 1 is the naive estimate."""
    return 0.5 + (same - 0.5) / (attentive * (2 * p - 1))


def bias_corrected(table: np.ndarray, p: float, p_anchor: float,
                   confidence: float = 0.95) -> BiasCorrected:
    """The anchor-corrected estimate from the joint reports ``table[y, a]``.

    ``y`` and ``a`` index the question's and the anchor's reports, 0 = different, 1 = same, over
    the respondents who answered both.
    """
    counts = np.asarray(table, dtype=float)
    n = int(counts.sum())
    z = float(quantiles.norm_ppf(0.5 + confidence / 2))
    notes: list[str] = []
    if n < 2:
        nan = math.nan
        return BiasCorrected(n, nan, nan, nan, nan, nan, nan, nan, nan, (nan, nan), confidence,
                             ["fewer than 2 respondents answered both questions: no estimate"])
    cells = counts / n
    same, anchor_same = float(cells[1].sum()), float(cells[:, 1].sum())
    gamma = attentive_share(anchor_same, p_anchor)
    gamma_se = math.sqrt(anchor_same * (1 - anchor_same) / (n - 1)) / abs(0.5 - p_anchor)
    if not gamma > 0:
        notes.append(f"the anchor's reports give no attentive respondents (share {gamma:.3g}): "
                     "the correction is undefined")
        nan = math.nan
        return BiasCorrected(n, same, anchor_same, gamma, gamma_se, naive(same, p), nan, nan,
                             nan, (nan, nan), confidence, notes)
    if gamma > 1:
        notes.append(f"the anchor's reports give an attentive share above 1 ({gamma:.3g}), "
                     "within chance of 1: the correction is then the naive estimate's or "
                     "slightly below")
    unbiased = corrected(same, p, gamma)
    # delta method over the four cells: gradient of pi_bc in (lambda, alpha)
    d_same = 1.0 / (gamma * (2 * p - 1))
    d_anchor = -(same - 0.5) / (gamma * gamma * (2 * p - 1) * (0.5 - p_anchor))
    both = float(cells[1, 1])
    covariance = np.array([[same * (1 - same), both - same * anchor_same],
                           [both - same * anchor_same, anchor_same * (1 - anchor_same)]]) / (n - 1)
    gradient = np.array([d_same, d_anchor])
    se = math.sqrt(max(float(gradient @ covariance @ gradient), 0.0))
    estimate = min(max(unbiased, 0.0), 1.0)
    ci = (min(max(unbiased - z * se, 0.0), 1.0), min(max(unbiased + z * se, 0.0), 1.0))
    return BiasCorrected(n, same, anchor_same, gamma, gamma_se, naive(same, p), unbiased,
                         estimate, se, ci, confidence, notes)


def sensitivity(same_count: int, n: int, p: float, confidence: float = 0.95,
                shares: tuple[float, ...] = INATTENTIVE_SHARES) -> list[dict[str, Any]]:
    """Sensitivity bounds (cWise's cmBound): per inattentive share, the estimate and interval."""
    if n < 2:
        return []
    same = same_count / n
    z = float(quantiles.norm_ppf(0.5 + confidence / 2))
    base = math.sqrt(same * (1 - same) / (n - 1)) / abs(2 * p - 1)
    out = []
    for share in shares:
        gamma = 1.0 - share
        value = corrected(same, p, gamma)
        se = base / gamma
        out.append({"inattentive": share, "unbiased": value,
                    "estimate": min(max(value, 0.0), 1.0), "se": se,
                    "ci": [min(max(value - z * se, 0.0), 1.0), min(max(value + z * se, 0.0), 1.0)]})
    return out
