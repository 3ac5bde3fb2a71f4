"""Profile-likelihood intervals, with a boundary-calibrated critical value near the bounds.

{v : 2 (loglik_max - max_{target = v} loglik) <= critical}: the critical value is chi2_1, or for
the prevalence of the two-group models the likelihood ratio's large-sample quantile with the
bounds of the parameter space kept (``boundary_critical``), never below chi2_1.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy import optimize

from .intervals import quantiles
from .likelihood import Part, constraint_rows, profile_max, segment_in, target_map
from .models import TWO_GROUP_MODELS, Design


def chi2_quantile(confidence: float) -> float:
    """The chi-square quantile with one degree of freedom."""
    return float(quantiles.chi2_ppf(confidence, 1))


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
    return _SLD_ROWS if design.model == "SLD" else constraint_rows(design)


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
    return np.asarray(quantiles.norm_ppf(uniform))


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
    chi2 = chi2_quantile(confidence)
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
    low, high = segment_in(rows, np.array([phi0[0], 0.0]), np.array([0.0, 1.0]))
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
    """The profile-likelihood interval of the quantity ``name`` (see ``targets``).

    {v : 2 (loglik_max - max_{name = v} loglik) <= critical}, the critical value chi2_1
    (``confidence``), or with ``calibrated`` ``boundary_critical`` at the constrained fit.
    """
    c, d0 = target_map(parts[0].design)[name]
    estimate = float(c @ theta_hat + d0)
    chi2 = chi2_quantile(confidence)
    # the calibrated critical value lies in [chi2, ceiling]
    ceiling = boundary_ceiling(confidence) if calibrated else math.inf

    def excess(value: float) -> float:
        # At the estimate itself the profile is the maximum by definition; the numerical
        # profile there can come out lower (a constrained optimiser stopping early), which
        # would leave brentq without a sign change.
        if abs(value - estimate) < 1e-12:
            return -chi2 / 2
        theta, profile = profile_max(parts, c, d0, value)
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
