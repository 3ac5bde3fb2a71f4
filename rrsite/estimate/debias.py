"""Per-respondent de-biased values of randomized answers, for design-based estimation.

Each respondent's report becomes ``r_i`` with ``E[r_i | truth] = truth`` (for a 2x2 design
``(z_i - (1 - p00)) / (p00 + p11 - 1)``), with an unbiased estimate ``v_i`` of its randomization
variance; rrsite.estimate.survey_design weights, stratifies and clusters them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .models import Design


@dataclass(frozen=True)
class Debiased:
    """Per-respondent de-biased variable ``r`` and randomization-variance estimate ``v``.

    ``linear`` is the variable the variance is computed from when it differs from ``r`` (two-group
    designs, whose r depends on estimated group shares); ``None`` means ``r``.
    """

    r: np.ndarray
    v: np.ndarray
    linear: np.ndarray | None = None

    @property
    def u(self) -> np.ndarray:
        """The variable to linearize (``linear`` or ``r``)."""
        return self.r if self.linear is None else self.linear


def _indicator_variance(r: np.ndarray) -> np.ndarray:
    """The estimate r (r - 1), unbiased for Var(r | y) when E[r | y] = y and y is 0 or 1."""
    return np.asarray(r * (r - 1.0), dtype=np.float64)


def debias_binary(reports: Sequence[int] | np.ndarray, p00: float, p11: float) -> Debiased:
    """A 2 x 2 design: reports 1 ("yes") or 0; r = (z - (1 - p00)) / (p00 + p11 - 1)."""
    z = np.asarray(reports, dtype=np.float64)
    if not np.all((z == 0) | (z == 1)):
        raise ValueError("binary reports must be 0 or 1")
    slope = p00 + p11 - 1.0
    if abs(slope) < 1e-12:
        raise ValueError(f"p00 + p11 = 1 (p00={p00}, p11={p11}): the reports carry no information")
    r = (z - (1.0 - p00)) / slope
    return Debiased(r, _indicator_variance(r))


def debias_matrix(reports: Sequence[int] | np.ndarray, matrix: np.ndarray) -> list[Debiased]:
    """A k x k design P[truth][report]: one ``Debiased`` per true category j.

    ``reports`` are report indices 0..k-1; r_ij = (P^-1)[z_i, j].
    """
    P = np.asarray(matrix, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError(f"the design matrix must be square, got shape {P.shape}")
    Q = np.linalg.inv(P)
    z = np.asarray(reports, dtype=np.int64)
    if np.any((z < 0) | (z >= P.shape[0])):
        raise ValueError(f"report indices must be in 0..{P.shape[0] - 1}")
    return [Debiased(Q[z, j], _indicator_variance(Q[z, j])) for j in range(P.shape[0])]


#: RRreg's two-group models: lambda_g = c_g + A_g . (pi, kappa), per group g = 1, 2.
def _two_group_system(design: Design) -> tuple[np.ndarray, np.ndarray]:
    """(A, c): P(report 1 in group g) = c[g] + A[g] @ (pi, kappa) for any state shares."""
    p = design.p
    if design.model == "UQTunknown":  # kappa = innocuous yes-rate q
        A = np.array([[p[0], 1 - p[0]], [p[1], 1 - p[1]]])
        c = np.zeros(2)
    elif design.model == "SLD":  # kappa = pi * t (honest carriers)
        A = np.array([[-(1 - p[0]), 1.0], [-(1 - p[1]), 1.0]])
        c = np.array([1 - p[0], 1 - p[1]])
    elif design.model == "CDM":  # kappa = beta (honest non-carriers)
        A = np.array([[1.0, p[0]], [1.0, p[1]]])
        c = np.zeros(2)
    elif design.model == "CDMsym":  # kappa = beta; p = (y1, n1, y2, n2)
        A = np.array([[1 - p[1], p[0]], [1 - p[3], p[2]]])
        c = np.zeros(2)
    else:
        raise ValueError(f"{design.model} is not a two-group model")
    return A, c


def two_group_coefficients(design: Design) -> tuple[float, float, float]:
    """(const, alpha_1, alpha_2) with prevalence = const + alpha_1 lambda_1 + alpha_2 lambda_2."""
    A, c = _two_group_system(design)
    if abs(np.linalg.det(A)) < 1e-12:
        raise ValueError(f"{design.model}: the two groups' p must differ (the model is not "
                         "identified)")
    alpha = np.linalg.inv(A)[0]
    return float(-alpha @ c), float(alpha[0]), float(alpha[1])


def prevalence_row(design: Design) -> np.ndarray:
    """One-group RRreg models: a[report] with E[a[z] | state] = 1{state = sensitive}."""
    if design.model in ("UQTunknown", "SLD", "CDM", "CDMsym"):
        raise ValueError(f"{design.model} is a two-group model: use debias_two_group")
    pw = design.pw()
    state = design.prevalence_state
    if design.model == "Kuk":
        m = design.kukrep
        p1, p0 = design.p
        if abs(p1 - p0) < 1e-12:
            raise ValueError("Kuk: the two decks must differ (p1 != p0)")
        return (np.arange(m + 1) / m - p0) / (p1 - p0)
    if pw.shape[0] != pw.shape[1]:
        raise ValueError(f"{design.model}: no linear de-biasing for a {pw.shape} matrix")
    # a @ PW = e_state, i.e. a = row `state` of PW^-1
    return np.asarray(np.linalg.inv(pw)[state], dtype=np.float64)


def debias_rrreg(design: Design, reports: Sequence[int] | np.ndarray) -> Debiased:
    """RRreg's one-group models; ``reports`` are RRreg report indices (PW's rows)."""
    a = prevalence_row(design)
    z = np.asarray(reports, dtype=np.int64)
    if np.any((z < 0) | (z >= len(a))):
        raise ValueError(f"report indices must be in 0..{len(a) - 1}")
    r = a[z]
    return Debiased(r, _indicator_variance(r))


def debias_two_group(
    design: Design, reports: Sequence[int] | np.ndarray, groups: Sequence[int] | np.ndarray,
    weights: Sequence[float] | np.ndarray, domain: np.ndarray | None = None,
) -> Debiased:
    """RRreg's two-group models: reports 0/1 (RRreg's report 1 = "yes"), groups 1 or 2.

    The group shares a_g and yes-rates lambda_g are Hajek estimates (within ``domain`` when
    given: a boolean mask; rows outside it get r = e = v = 0).
    """
    const, a1, a2 = two_group_coefficients(design)
    alpha = np.array([0.0, a1, a2])
    z = np.asarray(reports, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    inside = np.ones(len(z), dtype=bool) if domain is None else np.asarray(domain, dtype=bool)
    if np.any(inside & ~np.isin(g, (1, 2))):
        raise ValueError("every row of a two-group design needs its group, 1 or 2")
    total = float(w[inside].sum())
    share = np.zeros(3)
    rate = np.zeros(3)
    for k in (1, 2):
        rows = inside & (g == k)
        weight = float(w[rows].sum())
        if weight <= 0:
            raise ValueError(f"{design.model}: no respondent in group {k}; the prevalence needs "
                             "both groups")
        share[k] = weight / total
        rate[k] = float(np.sum(w[rows] * z[rows])) / weight
    estimate = const + a1 * rate[1] + a2 * rate[2]
    gi = np.where(inside, g, 1)
    r = np.where(inside, const + alpha[gi] * z / share[gi], 0.0)
    e = np.where(inside, estimate + alpha[gi] * (z - rate[gi]) / share[gi], 0.0)
    return Debiased(r, np.where(inside, _indicator_variance(r), 0.0), e)
