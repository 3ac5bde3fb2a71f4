"""The likelihood of RRreg's univariate models over their bounded parameter space.

A ``Part`` holds the report counts of one survey version (a ``Design``) in one group; several
parts of one question are pooled in one likelihood. The parameter space is a convex polytope
(every parameter in [0, 1], every latent share non-negative); the helpers here maximise over it,
along a segment of it, or with one quantity fixed (the profile likelihood).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from .models import Design

#: Probabilities below this count as zero inside logarithms (a zero-probability report observed
#: makes the log-likelihood -inf, which the optimiser sees as a very large penalty).
TINY = 1e-300



@dataclass(frozen=True)
class Part:
    """Report counts (one per ``design.reports``) of one survey version in one group."""

    design: Design
    group: int
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.counts) != len(self.design.reports):
            raise ValueError(
                f"{self.design.model}: need one count per report {self.design.reports}, "
                f"got {list(self.counts)}"
            )
        if any(int(c) != c or c < 0 for c in self.counts):
            raise ValueError(f"counts must be non-negative integers, got {list(self.counts)}")
        if self.group not in self.design.groups:
            raise ValueError(
                f"{self.design.model} has groups {self.design.groups}, got group {self.group}"
            )

    @property
    def n(self) -> int:
        """Respondents in this part."""
        return int(sum(self.counts))



# -- likelihood ------------------------------------------------------------------------------
def loglik(theta: Sequence[float] | np.ndarray, parts: Sequence[Part]) -> float:
    """The pooled multinomial log-likelihood (without the multinomial coefficients)."""
    total = 0.0
    for part in parts:
        probs = part.design.report_probabilities(theta, part.group)
        counts = np.asarray(part.counts, dtype=float)
        seen = counts > 0
        total += float(np.sum(counts[seen] * np.log(np.maximum(probs[seen], TINY))))
    return total


def target_map(design: Design) -> dict[str, tuple[np.ndarray, float]]:
    """Every reported quantity as an affine function c . theta + d of theta: name -> (c, d)."""
    d = len(design.parameters)
    unit = np.eye(d)
    if design.model in ("FR", "custom"):
        out = {"pi0": (-np.ones(d), 1.0)}
        out.update({f"pi{j + 1}": (unit[j], 0.0) for j in range(d)})
        return out
    out = {"pi": (unit[0], 0.0)}
    if d == 2:
        out[design.parameters[1]] = (unit[1], 0.0)
    if design.model in ("CDM", "CDMsym"):
        out["gamma"] = (-np.ones(2), 1.0)
    return out


def feasible(design: Design, theta: np.ndarray) -> bool:
    """Whether theta lies in the parameter space (to 1e-12)."""
    return design.in_bounds(theta, tolerance=1e-12)


def maximise_on_segment(
    function: Callable[[np.ndarray], float], start: np.ndarray, direction: np.ndarray,
    low: float, high: float,
) -> tuple[np.ndarray, float]:
    """Maximise a function of start + s * direction over s in [low, high] (concave there)."""
    if high - low < 1e-15:
        point = start + low * direction
        return point, function(point)
    result = optimize.minimize_scalar(
        lambda s: -function(start + s * direction), bounds=(low, high), method="bounded",
        options={"xatol": 1e-12, "maxiter": 500},
    )
    best_s, best_value = float(result.x), -float(result.fun)
    for s in (low, high):
        value = function(start + s * direction)
        if value > best_value:
            best_s, best_value = s, value
    return start + best_s * direction, best_value


def constraint_rows(design: Design) -> list[tuple[np.ndarray, float]]:
    """The parameter space as rows (a, b) with a . theta + b >= 0 (a convex polytope)."""
    # constraints: 0 <= theta_i <= 1 and 0 <= share_j; shares are affine in theta
    rows: list[tuple[np.ndarray, float]] = []
    d = len(design.parameters)
    for i in range(d):
        e = np.eye(d)[i]
        rows += [(e, 0.0), (-e, 1.0)]
    base = design.state_shares(np.zeros(d))
    for j in range(len(base)):
        grad = np.array([design.state_shares(np.eye(d)[i])[j] - base[j] for i in range(d)])
        rows.append((grad, float(base[j])))
    return rows


def segment(design: Design, point: np.ndarray, direction: np.ndarray) -> tuple[float, float]:
    """The range of s with point + s * direction inside the parameter space (a convex polytope)."""
    return segment_in(constraint_rows(design), point, direction)


def segment_in(
    rows: Sequence[tuple[np.ndarray, float]], point: np.ndarray, direction: np.ndarray
) -> tuple[float, float]:
    """The range of s with a . (point + s * direction) + b >= 0 for every row (a, b)."""
    low, high = -math.inf, math.inf
    for a, b in rows:
        slope = float(a @ direction)
        value = float(a @ point + b)
        if abs(slope) < 1e-15:
            if value < -1e-12:
                return 1.0, 0.0
            continue
        bound = -value / slope
        if slope > 0:
            low = max(low, bound)
        else:
            high = min(high, bound)
    return low, high


def profile_max(
    parts: Sequence[Part], c: np.ndarray, d0: float, value: float
) -> tuple[np.ndarray, float]:
    """Maximum of loglik subject to c . theta + d0 = value (dimension 1 or 2; SLSQP beyond)."""
    design = parts[0].design
    dim = len(c)
    if dim == 1:
        theta = np.array([(value - d0) / c[0]])
        return theta, loglik(theta, parts)
    if dim == 2:
        # a point on the line, and the line's direction
        point = c * (value - d0) / float(c @ c)
        direction = np.array([-c[1], c[0]])
        low, high = segment(design, point, direction)
        if low > high:
            return point, -math.inf
        return maximise_on_segment(lambda t: loglik(t, parts), point, direction, low, high)
    return slsqp(parts, extra=(c, d0, value))


def slsqp(
    parts: Sequence[Part], extra: tuple[np.ndarray, float, float] | None = None
) -> tuple[np.ndarray, float]:
    """General maximisation over the polytope (FR with four or more categories)."""
    design = parts[0].design
    dim = len(design.parameters)
    constraints: list[dict[str, Any]] = [
        {"type": "ineq", "fun": lambda t: design.state_shares(t)},
    ]
    if extra is not None:
        c, d0, value = extra
        constraints.append({"type": "eq", "fun": lambda t: float(c @ t + d0 - value)})
    best: tuple[np.ndarray, float] = (np.full(dim, 1.0 / (dim + 1)), -math.inf)
    for start in (np.full(dim, 1.0 / (dim + 1)), np.full(dim, 0.5 / (dim + 1))):
        result = optimize.minimize(
            lambda t: -loglik(t, parts), start, method="SLSQP", bounds=[(0.0, 1.0)] * dim,
            constraints=constraints, options={"ftol": 1e-14, "maxiter": 1000},
        )
        value = -float(result.fun)
        if value > best[1] and feasible(design, result.x):
            best = (np.asarray(result.x, dtype=float), value)
    return best
