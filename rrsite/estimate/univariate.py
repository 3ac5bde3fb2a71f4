"""Maximum likelihood for RRreg's univariate models, from report counts per group.

The data are ``Part``s: the report counts of one survey version (a ``Design``) in one group.
Several versions of one question are pooled in one likelihood (never by adding counts):

    loglik(theta) = sum over parts, reports r of  count_r * log (PW_part(theta) @ shares(theta))_r

``fit`` returns

- the maximum-likelihood estimate over the bounded parameter space (``theta``; ``on_boundary``
  says when it sits on a bound), with standard errors from the observed information (the inverse of
  the negative Hessian of the log-likelihood at the estimate, ``se_observed``);
- for a single design, RRreg 0.7.x's own estimates and standard errors (``rrreg``): its moment
  estimators with variances over n - 1 (RRuni.<model>), replaced like RRreg by the bounded ML
  estimate when a moment estimate leaves (0, 1). ``se`` is RRreg's standard error when there is
  one, else the observed-information one;
- intervals for the prevalence and every nuisance parameter: for one-group designs with binary
  reports and a fixed matrix the exact Clopper-Pearson interval of the "1" rate mapped through the
  design's affine map (MATH.md section 4), otherwise the profile-likelihood interval
  {v : 2 (loglik_max - max_{target = v} loglik) <= chi2_1(confidence)}; for the prevalence of
  the two-group models the critical value is boundary-calibrated (``boundary_critical``: the
  likelihood ratio's large-sample quantile at the constrained fit with the parameter bounds kept,
  never below chi2_1; near pi = 0 the chi2_1 interval undercovers, e.g. SLD (0.3, 0.7) at
  N = 100 per group and pi = 0.02: 93.9% with t = 1, 94.9% calibrated, summed exactly);
  ``method`` names which;
- messages: non-identified designs (e.g. both groups with the same p), moment estimates outside the
  parameter space, and a likelihood-ratio goodness-of-fit test where the model is not saturated.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, stats

from .models import TWO_GROUP_MODELS, Design

METHOD_EXACT = "exact (Clopper-Pearson, mapped)"
METHOD_PROFILE = "profile likelihood"
METHOD_PROFILE_BOUNDARY = "profile likelihood, boundary-calibrated critical value"
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


@dataclass
class UniFit:
    """The estimates of one question (see the module docstring for every field)."""

    model: str
    parameters: tuple[str, ...]
    theta: np.ndarray
    estimates: dict[str, float]
    se_observed: dict[str, float | None]
    se: dict[str, float | None]
    intervals: dict[str, tuple[float, float]]
    method: dict[str, str]
    on_boundary: bool
    loglik: float
    n: dict[int, int]
    confidence: float
    identified: bool = True
    rrreg: dict[str, Any] | None = None
    gof: dict[str, float] | None = None
    messages: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (keys documented in docs/contracts.md)."""
        return {
            "model": self.model,
            "estimates": self.estimates,
            "se": self.se,
            "se_observed": self.se_observed,
            "intervals": {k: list(v) for k, v in self.intervals.items()},
            "interval_method": self.method,
            "confidence": self.confidence,
            "on_boundary": self.on_boundary,
            "identified": self.identified,
            "loglik": self.loglik,
            "n": {str(g): v for g, v in self.n.items()},
            "rrreg": self.rrreg,
            "goodness_of_fit": self.gof,
            "messages": self.messages,
        }


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


def _targets(design: Design) -> dict[str, tuple[np.ndarray, float]]:
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


def _feasible(design: Design, theta: np.ndarray) -> bool:
    return design.in_bounds(theta, tolerance=1e-12)


def _maximise_on_segment(
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


def _constraint_rows(design: Design) -> list[tuple[np.ndarray, float]]:
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


def _segment(design: Design, point: np.ndarray, direction: np.ndarray) -> tuple[float, float]:
    """The range of s with point + s * direction inside the parameter space (a convex polytope)."""
    return _segment_in(_constraint_rows(design), point, direction)


def _segment_in(
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


def _profile(
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
        low, high = _segment(design, point, direction)
        if low > high:
            return point, -math.inf
        return _maximise_on_segment(lambda t: loglik(t, parts), point, direction, low, high)
    return _slsqp(parts, extra=(c, d0, value))


def _slsqp(
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
        if value > best[1] and _feasible(design, result.x):
            best = (np.asarray(result.x, dtype=float), value)
    return best


def mle(parts: Sequence[Part]) -> tuple[np.ndarray, float]:
    """The maximum-likelihood theta over the bounded parameter space, and its log-likelihood."""
    design = parts[0].design
    dim = len(design.parameters)
    candidates: list[tuple[np.ndarray, float]] = []
    saturated = sum(len(p.design.reports) - 1 for p in parts) == dim
    if saturated and len(parts) == len(design.groups) and len({p.design for p in parts}) == 1:
        moment = _moment_theta(parts)
        if moment is not None and _feasible(design, moment):
            return moment, loglik(moment, parts)  # saturated: the moment estimate is the MLE
    if dim == 1:
        candidates.append(
            _maximise_on_segment(lambda t: loglik(t, parts), np.zeros(1), np.ones(1), 0.0, 1.0)
        )
    elif dim == 2:
        # every edge of the polytope, then a free search from the best edge point
        for c, d0 in ((np.array([1.0, 0.0]), 0.0), (np.array([0.0, 1.0]), 0.0)):
            for value in (0.0, 1.0):
                candidates.append(_profile(parts, c, d0, value))
        if design.model in ("CDM", "CDMsym"):
            candidates.append(_profile(parts, np.array([-1.0, -1.0]), 1.0, 0.0))
        for start in ([0.3, 0.3], [0.1, 0.6], [0.6, 0.1], [0.5, 0.5]):
            start_theta = np.array(start)
            if not _feasible(design, start_theta):
                continue
            result = optimize.minimize(
                lambda t: -loglik(t, parts) if _feasible(design, t) else 1e300, start_theta,
                method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-13, "maxiter": 4000},
            )
            if _feasible(design, result.x):
                candidates.append((np.asarray(result.x, dtype=float), -float(result.fun)))
    else:
        candidates.append(_slsqp(parts))
    theta, _ = max(candidates, key=lambda item: item[1])
    theta = np.clip(theta, 0.0, 1.0)
    return theta, loglik(theta, parts)


# -- RRreg's own estimators ------------------------------------------------------------------
def _group_rates(parts: Sequence[Part]) -> dict[int, tuple[float, int, np.ndarray]]:
    """Per group: the mean report ("1" rate, or red-card rate for Kuk), n, and the counts."""
    out: dict[int, tuple[float, int, np.ndarray]] = {}
    for part in parts:
        counts = np.asarray(part.counts, dtype=float)
        n = part.n
        if part.design.model == "Kuk":
            red = float(counts @ np.arange(len(counts)))
            rate = red / (n * part.design.kukrep) if n else math.nan
        else:
            rate = float(counts[1] / n) if n else math.nan
        out[part.group] = (rate, n, counts)
    return out


def rrreg_moments(parts: Sequence[Part]) -> dict[str, float]:
    """RRreg's RRuni.<model>: moment estimates and standard errors (variances over n - 1).

    One design, one part per group. Keys: pi (or pi0 .. pi{k-1} for FR), its ``<name>SE``, and
    the model's nuisance (piUQ, t, beta, gamma) with its SE where RRreg gives one.
    """
    design = parts[0].design
    p = design.p
    model = design.model
    rates = _group_rates(parts)
    lam_, n_, counts = rates[1]
    lam, n = np.float64(lam_), np.float64(n_)  # numpy floats: 0/0 gives nan, not an exception
    out: dict[str, float] = {}
    with np.errstate(all="ignore"):
        if model in ("Warner", "Crosswise"):
            out["pi"] = (lam + p[0] - 1) / (2 * p[0] - 1)
            out["piSE"] = _sqrt(lam * (1 - lam) / ((n - 1) * (2 * p[0] - 1) ** 2))
        elif model == "Triangular":
            out["pi"] = 1 - (1 - lam) / (1 - p[0])
            out["piSE"] = _sqrt(lam * (1 - lam) / ((n - 1) * (1 - p[0]) ** 2))
        elif model == "UQTknown":
            out["pi"] = (lam - (1 - p[0]) * p[1]) / p[0]
            out["piSE"] = _sqrt(lam * (1 - lam) / ((n - 1) * p[0] ** 2))
        elif model == "Mangat":
            out["pi"] = (lam - 1 + p[0]) / p[0]
            out["piSE"] = _sqrt(lam * (1 - lam) / ((n - 1) * p[0] ** 2))
        elif model == "Kuk":
            m = design.kukrep
            pi = (lam - p[1]) / (p[0] - p[1])
            phi = pi * p[0] + (1 - pi) * p[1]
            out["pi"] = pi
            out["piSE"] = _sqrt(
                phi * (1 - phi) / ((m * n - 1) * (p[0] - p[1]) ** 2)
                + (1 - 1 / m) * pi * (1 - pi) / (n - 1)
            )
        elif model == "custom":
            # RRuni.custom (van den Hout & van der Heijden 2002)
            total = float(counts.sum())
            rate = counts / total
            inverse = np.linalg.inv(design.pw())
            shares = inverse @ rate
            covariance = inverse @ (np.diag(rate) - np.outer(rate, rate)) @ inverse.T / (
                total - 1)
            for i in range(len(shares)):
                out[f"pi{i}"] = shares[i]
                out[f"pi{i}SE"] = _sqrt(float(covariance[i, i]))
        elif model == "FR":
            p_true = 1 - sum(p)
            for i, count in enumerate(counts):
                share = count / n
                out[f"pi{i}"] = (share - p[i]) / p_true
                out[f"pi{i}SE"] = _sqrt(share * (1 - share) / (p_true**2 * (n - 1)))
        else:
            lam2, n2 = np.float64(rates[2][0]), np.float64(rates[2][1])
            v1 = lam * (1 - lam) / (n - 1)
            v2 = lam2 * (1 - lam2) / (n2 - 1)
            if model == "UQTunknown":
                out["pi"] = (lam * (1 - p[1]) - lam2 * (1 - p[0])) / (p[0] - p[1])
                out["piSE"] = _sqrt((v1 * (1 - p[1]) ** 2 + v2 * (1 - p[0]) ** 2)
                                        / (p[0] - p[1]) ** 2)
                out["piUQ"] = (p[1] * lam - p[0] * lam2) / (p[1] - p[0])
                out["piUQSE"] = _sqrt((p[1] ** 2 * v1 + p[0] ** 2 * v2) / (p[0] - p[1]) ** 2)
            elif model == "SLD":
                p1, p2 = p
                out["pi"] = ((lam2 - lam) + (p2 - p1)) / (p2 - p1)
                out["piSE"] = _sqrt(v1 / (p1 - p2) ** 2 + v2 / (p2 - p1) ** 2)
                out["t"] = (lam2 * (1 - p1) - lam * (1 - p2)) / ((lam2 - lam) + (p2 - p1))
                denominator = (p1 - p2 + lam - lam2) ** 2
                out["tSE"] = _sqrt(
                    v1 * ((p1 - p2) * (p2 + lam2 - 1) / denominator) ** 2
                    + v2 * ((p1 - p2) * (p1 + lam - 1) / denominator) ** 2
                )
            elif model == "CDM":
                p1, p2 = p
                out["pi"] = (p2 * lam - p1 * lam2) / (p2 - p1)
                out["piSE"] = _sqrt((p1**2 * v2 + p2**2 * v1) / (p1 - p2) ** 2)
                out["beta"] = (lam2 - lam) / (p2 - p1)
                out["betaSE"] = _sqrt((v2 + v1) / (p1 - p2) ** 2)
                out["gamma"] = 1 + ((p2 - 1) * lam + (1 - p1) * lam2) / (p1 - p2)
                out["gammaSE"] = _sqrt(((p2 - 1) ** 2 * v1 + (1 - p1) ** 2 * v2)
                                           / (p1 - p2) ** 2)
            else:  # CDMsym, p = (y1, n1, y2, n2)
                pi_denominator = p[2] * (1 - p[1]) - p[0] * (1 - p[3])
                out["pi"] = (p[2] * lam - p[0] * lam2) / pi_denominator
                gamma_denominator = p[0] * (1 - p[3]) - p[2] * (1 - p[1])
                out["gamma"] = ((p[0] - lam) * (1 - p[2] - p[3])
                                - (p[2] - lam2) * (1 - p[0] - p[1])) / gamma_denominator
                out["beta"] = 1 - out["pi"] - out["gamma"]
                out["piSE"] = _sqrt(p[2] ** 2 * v1 + p[0] ** 2 * v2) / abs(pi_denominator)
                out["gammaSE"] = _sqrt((1 - p[2] - p[3]) ** 2 * v1
                                           + (1 - p[0] - p[1]) ** 2 * v2) / abs(gamma_denominator)
    return {key: float(value) for key, value in out.items()}


def _sqrt(value: float) -> float:
    return float(np.sqrt(value)) if value >= 0 else math.nan


def _moment_theta(parts: Sequence[Part]) -> np.ndarray | None:
    """RRreg's moment estimate as a theta vector (None where undefined)."""
    try:
        moments = rrreg_moments(parts)
    except (ZeroDivisionError, ValueError):
        return None
    design = parts[0].design
    if design.model in ("FR", "custom"):
        theta = np.array([moments[f"pi{j}"] for j in range(1, design.categories)])
    else:
        theta = np.array([moments[name] for name in design.parameters])
    return theta if np.all(np.isfinite(theta)) else None


def _rrreg_outside(design: Design, moments: dict[str, float]) -> bool:
    """RRuni's test for switching to ML: a prevalence or the model's nuisance outside (0, 1)."""
    names = [k for k in moments if k.startswith("pi") and not k.endswith("SE") and k != "piUQ"]
    names += {"SLD": ["t"], "UQTunknown": ["piUQ"], "CDM": ["gamma"], "CDMsym": ["gamma"]}.get(
        design.model, []
    )
    return any(not 0 < moments[name] < 1 for name in names)


# -- information and intervals ---------------------------------------------------------------
def observed_information(theta: np.ndarray, parts: Sequence[Part]) -> np.ndarray:
    """Minus the Hessian of the log-likelihood at theta.

    The report probabilities are polynomials of degree <= 2 in theta, so their central differences
    are exact up to rounding; the Hessian is assembled from them analytically.
    """
    dim = len(theta)
    step = 1e-4
    information = np.zeros((dim, dim))
    for part in parts:
        counts = np.asarray(part.counts, dtype=float)
        def probs(t: np.ndarray, part: Part = part) -> np.ndarray:
            return part.design.report_probabilities(t, part.group)
        base = probs(theta)
        unit = np.eye(dim) * step
        jac = np.array([(probs(theta + unit[i]) - probs(theta - unit[i])) / (2 * step)
                        for i in range(dim)])  # (dim, reports)
        second = np.zeros((dim, dim, len(base)))
        for i in range(dim):
            for j in range(dim):
                second[i, j] = (probs(theta + unit[i] + unit[j]) - probs(theta + unit[i] - unit[j])
                                - probs(theta - unit[i] + unit[j])
                                + probs(theta - unit[i] - unit[j])) / (4 * step * step)
        seen = counts > 0
        weight = np.zeros_like(base)
        weight[seen] = counts[seen] / np.maximum(base[seen], TINY)
        information += np.einsum("r,ir,jr->ij", weight / np.maximum(base, TINY) * seen, jac, jac)
        information -= np.einsum("r,ijr->ij", weight, second)
    return information


def _chi2(confidence: float) -> float:
    return float(stats.chi2.ppf(confidence, 1))


# -- the boundary-calibrated critical value (two-group designs) -----------------------------
#: The linear coordinates phi of the two-group models: the report probabilities are affine in
#: phi and the parameter space is a polygon in phi. SLD's are (pi, u = pi t) (its theta enters
#: the report probabilities as pi t); the others' are theta itself.
_SLD_ROWS = [(np.array([0.0, 1.0]), 0.0), (np.array([1.0, -1.0]), 0.0),
             (np.array([-1.0, 0.0]), 1.0), (np.array([1.0, 0.0]), 0.0)]
#: Scrambled-Sobol standard normal points of the large-sample reference (fixed: reproducible).
REFERENCE_POINTS = 2**14
REFERENCE_SEED = 20240917
#: Beyond this many standard errors from every edge of the polygon the bounds do not matter and
#: the reference is chi2_1 (the chance of a normal point that far out is below 1e-7).
FAR_FROM_BOUNDS = 6.0


def boundary_calibrated(parts: Sequence[Part], name: str) -> bool:
    """Whether ``name``'s interval uses ``boundary_critical``.

    It does for the prevalence of the two-parameter two-group models (UQTunknown, SLD, CDM,
    CDMsym).
    """
    design = parts[0].design
    return (name == "pi" and design.model in TWO_GROUP_MODELS
            and len(design.parameters) == 2)


def _to_linear(design: Design, theta: np.ndarray) -> np.ndarray:
    theta = np.asarray(theta, dtype=float)
    return np.array([theta[0], theta[0] * theta[1]]) if design.model == "SLD" else theta


def _from_linear(design: Design, phi: np.ndarray) -> np.ndarray:
    if design.model == "SLD":
        return np.array([phi[0], min(max(phi[1] / phi[0], 0.0), 1.0) if phi[0] > 0 else 0.0])
    return np.asarray(phi, dtype=float)


def _linear_rows(design: Design) -> list[tuple[np.ndarray, float]]:
    return _SLD_ROWS if design.model == "SLD" else _constraint_rows(design)


def _polygon(rows: Sequence[tuple[np.ndarray, float]]) -> np.ndarray:
    """The vertices of the polygon {a . phi + b >= 0} (two dimensions), counter-clockwise."""
    points: list[np.ndarray] = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            matrix = np.array([rows[i][0], rows[j][0]])
            if abs(np.linalg.det(matrix)) < 1e-12:
                continue
            point = np.linalg.solve(matrix, [-rows[i][1], -rows[j][1]])
            if all(float(a @ point + b) >= -1e-9 for a, b in rows) and not any(
                np.allclose(point, q, atol=1e-9) for q in points
            ):
                points.append(point)
    vertices = np.array(points)
    centre = vertices.mean(axis=0)
    angles = np.arctan2(vertices[:, 1] - centre[1], vertices[:, 0] - centre[0])
    return vertices[np.argsort(angles)]


@functools.cache
def _reference_normals() -> np.ndarray:
    """REFERENCE_POINTS standard normal points in the plane (computed once)."""
    from scipy.stats import qmc

    uniform = qmc.Sobol(2, scramble=True, seed=REFERENCE_SEED).random(REFERENCE_POINTS)
    return np.asarray(stats.norm.ppf(uniform))


@functools.cache
def boundary_ceiling(confidence: float) -> float:
    """The most ``boundary_critical`` can return.

    LR(xi) <= |xi|^2 point by point, so its quantile is at most that of |xi|^2 over the same
    reference points (about chi2_2's).
    """
    return float(np.quantile((_reference_normals() ** 2).sum(axis=1), confidence))


def _distance2_to_segment(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance of every row of ``points`` to the segment [a, b]."""
    d = b - a
    length2 = float(d @ d)
    if length2 <= 0:
        s = np.zeros(len(points))
    else:
        s = np.clip((points - a) @ d / length2, 0.0, 1.0)
    nearest = a[None, :] + s[:, None] * d[None, :]
    return np.asarray(((points - nearest) ** 2).sum(axis=1))


def boundary_critical(parts: Sequence[Part], theta0: np.ndarray, confidence: float) -> float:
    """The critical value of 2 x the profile log-likelihood ratio for the prevalence.

    It is computed at the constrained fit theta0 = (pi0, the nuisance that maximises the
    likelihood with pi = pi0) from the likelihood ratio's large-sample law there with the bounds
    of the parameter space kept: in the linear coordinates phi the estimate is normal,
    N(phi0, I(phi0)^-1) with the expected information I, and with a standard normal xi in the
    coordinates w = R (phi - phi0) (I = R'R) the statistic is

        LR(xi) = d(xi, null segment)^2 - d(xi, parameter polygon)^2

    (the null segment: the points of the polygon with pi = pi0). Far from the bounds this is
    chi2_1; near them it is not: the null segment is short when pi0 is near 0 (at pi0 = 0 it is
    a point and LR a mixture of chi2_0, chi2_1 and chi2_2), and a nuisance on its bound bends
    the null set against the estimate's correlation. The value returned is the ``confidence``
    quantile of LR over REFERENCE_POINTS fixed scrambled-Sobol points, but never below
    chi2_1(confidence): where the bounds would lower it, the chi-square interval is kept (the
    normal law ignores the discreteness of the counts, and those intervals cover).
    """
    chi2 = _chi2(confidence)
    design = parts[0].design
    rows = _linear_rows(design)
    vertices = _polygon(rows)
    phi0 = _to_linear(design, theta0)
    # the report probabilities are affine in phi: their Jacobian from three vertices
    base = vertices[0]
    steps = np.array([vertices[1] - base, vertices[-1] - base]).T  # columns: phi differences
    information = np.zeros((2, 2))
    for part in parts:
        def probs(phi: np.ndarray, part: Part = part) -> np.ndarray:
            return part.design.report_probabilities(_from_linear(design, phi), part.group)
        jacobian = np.array([probs(vertices[1]) - probs(base),
                             probs(vertices[-1]) - probs(base)]).T @ np.linalg.inv(steps)
        at = probs(phi0)
        moving = np.abs(jacobian).sum(axis=1) > 1e-12
        if np.any(at[moving] < 1e-9):
            return chi2  # a report of probability 0 at theta0: no normal law
        information += part.n * np.einsum(
            "r,ri,rj->ij", moving / np.maximum(at, 1e-300), jacobian, jacobian)
    try:
        root = np.linalg.cholesky(information).T  # information = root' root
    except np.linalg.LinAlgError:
        return chi2
    inverse_t = np.linalg.inv(root).T
    rows_w = [(inverse_t @ a, float(a @ phi0 + b)) for a, b in rows]
    distances = [value / float(np.linalg.norm(a)) for a, value in rows_w if np.linalg.norm(a) > 0]
    if min(distances) >= FAR_FROM_BOUNDS:
        return chi2
    corners = [root @ (v - phi0) for v in vertices]
    low, high = _segment_in(rows, np.array([phi0[0], 0.0]), np.array([0.0, 1.0]))
    if low > high:
        return chi2
    xi = _reference_normals()
    inside = np.ones(len(xi), dtype=bool)
    for a, b in rows_w:
        inside &= xi @ a + b >= -1e-12
    to_polygon = np.min([_distance2_to_segment(xi, corners[i], corners[(i + 1) % len(corners)])
                         for i in range(len(corners))], axis=0)
    to_polygon = np.where(inside, 0.0, to_polygon)
    to_null = _distance2_to_segment(xi, root @ (np.array([phi0[0], low]) - phi0),
                                    root @ (np.array([phi0[0], high]) - phi0))
    return max(chi2, float(np.quantile(to_null - to_polygon, confidence)))


def profile_interval(
    parts: Sequence[Part], name: str, theta_hat: np.ndarray, loglik_max: float,
    confidence: float, calibrated: bool = False,
) -> tuple[float, float]:
    """The profile-likelihood interval of the quantity ``name`` (see ``_targets``).

    {v : 2 (loglik_max - max_{name = v} loglik) <= critical}, the critical value chi2_1
    (``confidence``), or with ``calibrated`` ``boundary_critical`` at the constrained fit.
    """
    c, d0 = _targets(parts[0].design)[name]
    estimate = float(c @ theta_hat + d0)
    chi2 = _chi2(confidence)
    # the calibrated critical value lies in [chi2, ceiling]
    ceiling = boundary_ceiling(confidence) if calibrated else math.inf

    def excess(value: float) -> float:
        # At the estimate itself the profile is the maximum by definition; the numerical
        # profile there can come out lower (a constrained optimiser stopping early), which
        # would leave brentq without a sign change.
        if abs(value - estimate) < 1e-12:
            return -chi2 / 2
        theta, profile = _profile(parts, c, d0, value)
        statistic = 2 * (loglik_max - profile)
        if not calibrated or statistic < chi2 or statistic > ceiling:
            # the sign is that of statistic - critical without computing the critical value
            return (statistic - chi2) / 2
        return (statistic - boundary_critical(parts, theta, confidence)) / 2

    ends = []
    for bound in (0.0, 1.0):
        if abs(bound - estimate) < 1e-12 or excess(bound) <= 0:
            ends.append(bound)
        else:
            ends.append(float(optimize.brentq(excess, estimate, bound, xtol=1e-12)))
    return ends[0], ends[1]


def clopper_pearson(count: int, n: int, confidence: float) -> tuple[float, float]:
    """The exact interval for a binomial rate."""
    alpha = 1 - confidence
    low = 0.0 if count == 0 else float(stats.beta.ppf(alpha / 2, count, n - count + 1))
    high = 1.0 if count == n else float(stats.beta.ppf(1 - alpha / 2, count + 1, n - count))
    return low, high


def _exact_applies(parts: Sequence[Part]) -> bool:
    design = parts[0].design
    return (
        len(parts) == 1 and len(design.groups) == 1 and len(design.reports) == 2
        and len(design.parameters) == 1
    )


def _exact_interval(part: Part, confidence: float) -> tuple[float, float]:
    """Clopper-Pearson for the "1" rate, mapped through lambda = a + b pi and clipped."""
    design = part.design
    a = float(design.report_probabilities([0.0])[1])
    b = float(design.report_probabilities([1.0])[1]) - a
    low, high = clopper_pearson(part.counts[1], part.n, confidence)
    ends = sorted(((low - a) / b, (high - a) / b))
    return min(max(ends[0], 0.0), 1.0), min(max(ends[1], 0.0), 1.0)


def identifiable(parts: Sequence[Part], theta: np.ndarray) -> bool:
    """Whether the report probabilities determine theta locally (full-rank Jacobian)."""
    dim = len(theta)
    point = np.clip(theta, 0.05, 0.9) if dim == 1 else np.full(dim, 0.8 / (dim + 1))
    rows = []
    for part in parts:
        for i in range(dim):
            e = np.eye(dim)[i] * 1e-4
            rows.append(
                (part.design.report_probabilities(point + e, part.group)
                 - part.design.report_probabilities(point - e, part.group)) / 2e-4
            )
    jac = np.concatenate([r[None, :] for r in rows]).reshape(len(parts), dim, -1)
    stacked = np.concatenate([jac[k].T for k in range(len(parts))])
    singular = np.linalg.svd(stacked, compute_uv=False)
    return bool(singular.min() > 1e-8 * max(singular.max(), 1e-300))


def fit(parts: Sequence[Part], confidence: float = 0.95) -> UniFit:
    """Estimate one question's parameters from its parts (see the module docstring)."""
    if not parts:
        raise ValueError("no counts to estimate from")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    design = parts[0].design
    for part in parts:
        if part.design.parameters != design.parameters or part.design.states != design.states:
            raise ValueError(
                f"cannot pool {part.design.model} with {design.model}: different parameters"
            )
    n: dict[int, int] = {}
    for part in parts:
        n[part.group] = n.get(part.group, 0) + part.n
    messages: list[str] = []
    targets = _targets(design)
    empty_groups = [g for g in design.groups if n.get(g, 0) == 0]
    if empty_groups:
        messages.append(f"no answers in group(s) {empty_groups}: the model is not identified")
    theta_probe = np.full(len(design.parameters), 0.8 / (len(design.parameters) + 1))
    is_identified = not empty_groups and identifiable(parts, theta_probe)
    if not is_identified:
        if not empty_groups:
            messages.append(
                "the data cannot separate the parameters (e.g. both groups with the same p): "
                "the model is not identified; no estimates"
            )
        nan = dict.fromkeys(targets, math.nan)
        return UniFit(
            design.model, design.parameters, np.full(len(design.parameters), math.nan),
            nan, dict.fromkeys(targets), dict.fromkeys(targets),
            dict.fromkeys(targets, (0.0, 1.0)), dict.fromkeys(targets, "none"), False,
            math.nan, n, confidence, identified=False, messages=messages,
        )
    theta, ll_max = mle(parts)
    on_boundary = not design.in_bounds(theta, tolerance=-1e-9)
    estimates = {name: float(c @ theta + d0) for name, (c, d0) in targets.items()}
    # observed information on the free directions (drop directions pinned at a bound)
    se_observed: dict[str, float | None] = dict.fromkeys(targets)
    try:
        covariance = np.linalg.inv(observed_information(theta, parts))
        for name, (c, _) in targets.items():
            variance = float(c @ covariance @ c)
            se_observed[name] = math.sqrt(variance) if variance >= 0 else None
    except np.linalg.LinAlgError:
        messages.append("the observed information is singular at the estimate: no standard errors")
    intervals: dict[str, tuple[float, float]] = {}
    method: dict[str, str] = {}
    for name in targets:
        if _exact_applies(parts) and name in ("pi", "pi1"):
            intervals[name] = _exact_interval(parts[0], confidence)
            method[name] = METHOD_EXACT
        else:
            calibrated = boundary_calibrated(parts, name)
            intervals[name] = profile_interval(parts, name, theta, ll_max, confidence,
                                               calibrated)
            method[name] = METHOD_PROFILE_BOUNDARY if calibrated else METHOD_PROFILE
    for name, (low, high) in intervals.items():
        if high - low < 1e-12:
            messages.append(
                f"the interval of {name} collapsed to [{low:g}, {high:g}]: the reports are "
                "outside what the design can produce for any rate; check the design and the data"
            )
    if _exact_applies(parts) and design.model in ("FR", "custom"):
        low, high = intervals["pi1"]
        intervals["pi0"] = (1 - high, 1 - low)
        method["pi0"] = METHOD_EXACT
    rrreg: dict[str, Any] | None = None
    se = dict(se_observed)
    if len({p.design for p in parts}) == 1 and len(parts) == len(design.groups):
        moments = rrreg_moments(parts)
        if _rrreg_outside(design, moments):
            messages.append(
                "the moment estimate lies outside the parameter space: the estimate is the "
                "maximum-likelihood one on its boundary (RRreg switches to ML here too)"
            )
            rrreg = {"estimator": "ML (bounded)", **estimates,
                     **{f"{k}SE": v for k, v in se_observed.items()}}
        else:
            rrreg = {"estimator": "moment", **moments}
            is_saturated = sum(len(p.design.reports) - 1 for p in parts) == len(design.parameters)
            if is_saturated:  # the moment estimate is the MLE: RRreg's SE goes with it
                se = {name: moments.get(f"{name}SE", se_observed[name]) for name in targets}
            else:
                messages.append(
                    "RRreg's moment estimate (in 'rrreg') is not the maximum-likelihood "
                    "estimate here; the standard errors are those of the MLE"
                )
    if on_boundary:
        messages.append("the estimate is on the boundary of the parameter space")
    saturated_df = sum(len(p.design.reports) - 1 for p in parts if p.n > 0)
    df = saturated_df - len(design.parameters)
    gof = None
    if df > 0:
        saturated = 0.0
        for part in parts:
            counts = np.asarray(part.counts, dtype=float)
            seen = counts > 0
            saturated += float(np.sum(counts[seen] * np.log(counts[seen] / part.n)))
        g2 = max(2 * (saturated - ll_max), 0.0)
        p_value = float(stats.chi2.sf(g2, df))
        gof = {"G2": g2, "df": float(df), "p_value": p_value}
        if p_value < 0.05:
            messages.append(
                f"the model fits the counts poorly (G2 = {g2:.2f}, df = {df}, p = {p_value:.3g}): "
                "check the design parameters and the respondents' compliance"
            )
    return UniFit(
        design.model, design.parameters, theta, estimates, se_observed, se, intervals, method,
        on_boundary, ll_max, n, confidence, rrreg=rrreg, gof=gof, messages=messages,
    )


def parts_from_manifest(
    question: dict[str, Any], counts: dict[int, dict[str, int]]
) -> list[Part]:
    """Parts of one manifest question (docs/contracts.md) from counts {group: {report: n}}.

    The question's ``"rrreg"`` block gives the model; its report labels are ``"reports"`` when
    present (crosswise, triangular, kuk), else ``"values"``, in RRreg's report order (0, 1, ...).
    One-group designs use group 1.
    """
    from .models import from_manifest

    block = question.get("rrreg")
    if not isinstance(block, dict):
        raise ValueError(f"question {question.get('id')!r} has no RRreg mapping ('rrreg')")
    design = from_manifest(block)
    labels = question.get("reports") or question.get("values")
    if not isinstance(labels, list) or len(labels) != len(design.reports):
        raise ValueError(
            f"question {question.get('id')!r}: {design.model} has {len(design.reports)} reports, "
            f"the manifest lists {labels!r}"
        )
    parts = []
    for group in design.groups:
        given = counts.get(group, {})
        unknown = set(given) - {str(label) for label in labels}
        if unknown:
            raise ValueError(f"question {question.get('id')!r}: unknown report(s) "
                             f"{sorted(unknown)}; the reports are {labels}")
        parts.append(Part(design, group, tuple(int(given.get(str(label), 0))
                                               for label in labels)))
    return parts
