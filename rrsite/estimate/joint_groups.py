"""The joint table when some questions use a two-group design: pi and tau together.

A two-group question (unrelated-unknown, SLD, CDM, CDM-sym) has in group g a matrix
``[truth][report]`` that is affine in its second parameter tau (the innocuous question's yes-rate,
SLD's carriers' honesty t, CDM's cheaters' share gamma):

    P(yes | truth t) = a0 + a1 tau + (b0 + b1 tau) t        (``regression.two_group_rates``)

so ``M_g(tau) = B_g + tau S_g`` with ``B_g`` the matrix at tau = 0 and ``S_g`` its slope (rows
summing to zero). A ``GroupedPart`` is the respondents with one version and one group of every
two-group question; ``at(tau)`` gives its ``JointPart`` at a vector tau (one entry per two-group
question). The log-likelihood l(pi, tau) = sum over parts of count * log (pi @ kron M(tau)) is
maximised over the simplex and tau in [0, 1]^K by profiling:

    l*(tau) = max_pi l(pi, tau)           (joint.py's EM + Newton, exact for each tau)

maximised over the box by L-BFGS-B with the envelope gradient dl*/dtau_j = dl/dtau_j at the
inner maximum (the inner maximum's own change does not move l to first order), from the best
point of a grid. tau's covariance: the inverse of minus the profile's Hessian (central differences
of that gradient; one-sided at a bound), which for an interior pi is tau's block of the inverse
observed information. tau's interval and every cell's interval are profile-likelihood intervals
that re-maximise over everything else (pi and the other taus; for a cell, tau too).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from .intervals import quantiles
from .joint import (
    IMPOSSIBLE,
    TINY,
    JointFit,
    JointPart,
    Stacked,
    kron_all,
    maximise_shares,
    optimality_gap,
    product_labels,
    profile_ends,
)

#: Starting grid of each tau for the outer maximisation (the best point is refined).
GRID = (0.05, 0.25, 0.5, 0.75, 0.95)
#: Step of the central differences of the envelope gradient (tau's Hessian).
STEP = 1e-5
#: tau within this of 0 or 1 is reported on the boundary.
BOUNDARY = 1e-6


@dataclass(frozen=True)
class GroupedPart:
    """Respondents with one combination of design matrices, some affine in a nuisance tau.

    ``base[q]`` is question q's matrix ``[truth][report]`` at tau = 0; ``slope[q]`` its change per
    unit of tau (None for a question with a known matrix); ``nuisance[q]`` the index of q's tau in
    the vector of taus (None likewise). ``counts`` as ``JointPart``'s.
    """

    base: tuple[np.ndarray, ...]
    slope: tuple[np.ndarray | None, ...]
    nuisance: tuple[int | None, ...]
    counts: np.ndarray

    def __post_init__(self) -> None:
        if not len(self.base) == len(self.slope) == len(self.nuisance):
            raise ValueError("need one slope and one nuisance index per question")
        for b, s, j in zip(self.base, self.slope, self.nuisance, strict=True):
            if (s is None) != (j is None):
                raise ValueError("a question has a slope exactly when it has a nuisance index")
            if s is not None:
                if np.shape(s) != np.shape(b) or not np.allclose(np.sum(s, axis=1), 0.0,
                                                                  atol=1e-12):
                    raise ValueError("a slope must have the matrix's shape and rows summing to 0")
                for end in (b, b + s):   # affine in tau: valid at 0 and 1, valid between
                    if np.any(end < -1e-12) or np.any(end > 1 + 1e-12):
                        raise ValueError("the matrix leaves [0, 1] for a tau in [0, 1]")

    def matrices(self, tau: np.ndarray) -> list[np.ndarray]:
        """Each question's matrix at tau (clipped to [0, 1] against rounding)."""
        return [b if j is None else np.clip(b + tau[j] * s, 0.0, 1.0)
                for b, s, j in zip(self.base, self.slope, self.nuisance, strict=True)]

    def at(self, tau: np.ndarray) -> JointPart:
        """The part with every matrix at tau."""
        return JointPart(tuple(self.matrices(tau)), np.asarray(self.counts, dtype=np.float64))

    def derivative(self, tau: np.ndarray, j: int) -> np.ndarray | None:
        """D (kron of the matrices) / d tau_j, or None when no question of the part has tau_j."""
        matrices = self.matrices(tau)
        hit = False
        for q, index in enumerate(self.nuisance):
            if index == j:
                matrices[q] = np.asarray(self.slope[q])
                hit = True
        return kron_all(matrices) if hit else None


def _data(parts: Sequence[GroupedPart], tau: np.ndarray) -> Stacked:
    return Stacked([p.at(tau) for p in parts])


def gradient_tau(parts: Sequence[GroupedPart], pi: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """dl/dtau at (pi, tau): sum over observed report cells of n / lambda * d lambda / d tau."""
    out = np.zeros(len(tau))
    for part in parts:
        seen = np.asarray(part.counts) > 0
        if not np.any(seen):
            continue
        n = np.asarray(part.counts, dtype=np.float64)[seen]
        lam = pi @ part.at(tau).matrix[:, seen]
        for j in range(len(tau)):
            d = part.derivative(tau, j)
            if d is not None:
                out[j] += float((n / np.maximum(lam, TINY)) @ (pi @ d[:, seen]))
    return out


def loglik(pi: Sequence[float] | np.ndarray, tau: Sequence[float] | np.ndarray,
           parts: Sequence[GroupedPart]) -> float:
    """l(pi, tau) (without the multinomial coefficients)."""
    return _data(parts, np.asarray(tau, dtype=np.float64)).loglik(np.asarray(pi, dtype=float))


class _Profile:
    """l*(tau) = max_pi l(pi, tau) (optionally with a cell of pi held), warm-started."""

    def __init__(self, parts: Sequence[GroupedPart], k: int,
                 fixed: tuple[int, float] | None = None) -> None:
        self.parts, self.k, self.fixed = parts, k, fixed
        self.start: np.ndarray | None = None
        self.cache: dict[tuple[float, ...], tuple[np.ndarray, float]] = {}

    def __call__(self, tau: np.ndarray) -> tuple[np.ndarray, float]:
        key = tuple(float(t) for t in tau)
        if key not in self.cache:
            pi, value = maximise_shares(_data(self.parts, tau), self.start, self.fixed)
            self.cache[key] = (pi, value)
        return self.cache[key]

    def maximise(self, starts: Sequence[np.ndarray], free: np.ndarray | None = None,
                 held: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
        """The best (tau, pi, l*) from the starts, refined by L-BFGS-B over the free taus.

        ``held`` (with ``free`` False there) gives the values of the taus not maximised over.
        """

        def warm_start(tau: np.ndarray) -> None:
            self.start = self(tau)[0]

        tau, _ = maximise_taus(lambda t: self(t)[1],
                               lambda t: gradient_tau(self.parts, self(t)[0], t), starts, free,
                               held, float(sum(np.sum(p.counts) for p in self.parts)),
                               gtol=1e-11, maxiter=500, chosen=warm_start)
        pi, value = self(tau)
        return tau, pi, value


def maximise_taus(value: Callable[[np.ndarray], float],
                  gradient: Callable[[np.ndarray], np.ndarray], starts: Sequence[np.ndarray],
                  free: np.ndarray | None, held: np.ndarray | None, scale: float, gtol: float,
                  maxiter: int, chosen: Callable[[np.ndarray], None] | None = None,
                  ) -> tuple[np.ndarray, float]:
    """The best (tau, value) over [0, 1]^k: the best start, refined by L-BFGS-B.

    ``value(tau)`` is the profile log-likelihood (-inf where it cannot be had) and
    ``gradient(tau)`` its gradient in every tau (called only where the value is finite); the
    objective is divided by ``scale``. Only the ``free`` taus move; the others keep ``held``'s
    values (or the first start's). ``chosen(tau)`` sees the best start before it is refined; the
    refined point is kept only when its value is no lower. No free tau, or no finite value at
    any start: the best start as it is.
    """
    k = len(starts[0])
    free = np.ones(k, dtype=bool) if free is None else free
    base = np.asarray(starts[0], dtype=float) if held is None else held

    def full(x: np.ndarray) -> np.ndarray:
        tau = base.copy()
        tau[free] = np.clip(x, 0.0, 1.0)
        return tau

    scored = []
    for s in starts:
        tau = full(np.asarray(s, dtype=float)[free])
        scored.append((value(tau), tau))
    best, tau = max(scored, key=lambda item: item[0])
    if not np.any(free) or not math.isfinite(best):
        return tau, best
    if chosen is not None:
        chosen(tau)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        t = full(x)
        v = value(t)
        if not math.isfinite(v):
            return 1e10, np.zeros(int(free.sum()))
        return -v / scale, -gradient(t)[free] / scale

    found = optimize.minimize(objective, tau[free], jac=True, method="L-BFGS-B",
                              bounds=[(0.0, 1.0)] * int(free.sum()),
                              options={"ftol": 1e-15, "gtol": gtol, "maxiter": maxiter})
    refined = full(found.x)
    refined_value = value(refined)
    return (refined, refined_value) if refined_value >= best else (tau, best)


def simplex_grid(k: int) -> list[np.ndarray]:
    """Starting points spread over the k-cell simplex."""
    points = GRID if k <= 1 else (0.2, 0.5, 0.8)
    return [np.array(p) for p in itertools.product(points, repeat=k)]


def mle(parts: Sequence[GroupedPart], k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(pi, tau, loglik) at the maximum over the simplex and [0, 1]^k."""
    tau, pi, value = _Profile(parts, k).maximise(simplex_grid(k))
    return pi, tau, value


def _hessian(parts: Sequence[GroupedPart], tau: np.ndarray) -> np.ndarray:
    """The profile's Hessian in tau: differences of the envelope gradient (one-sided at a bound)."""
    k = len(tau)
    profile = _Profile(parts, k)
    h = np.zeros((k, k))
    for j in range(k):
        up, down = tau.copy(), tau.copy()
        up[j] = min(tau[j] + STEP, 1.0)
        down[j] = max(tau[j] - STEP, 0.0)
        g_up = gradient_tau(parts, profile(up)[0], up)
        g_down = gradient_tau(parts, profile(down)[0], down)
        h[:, j] = (g_up - g_down) / (up[j] - down[j])
    return (h + h.T) / 2


@dataclass
class NuisanceEstimate:
    """One two-group question's tau: estimate, SE, profile-likelihood interval."""

    question: str
    name: str
    meaning: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    on_boundary: bool
    ci_method: str = "profile likelihood (re-maximised over the table)"

    def to_dict(self) -> dict[str, Any]:
        """docs/reference/contracts.md ("analyze --joint": ``nuisance``)."""
        return {"question": self.question, "name": self.name, "meaning": self.meaning,
                "estimate": self.estimate,
                "se": self.se if math.isfinite(self.se) else None,
                "ci_low": self.ci_low, "ci_high": self.ci_high,
                "ci_method": self.ci_method, "on_boundary": self.on_boundary}


def fit_joint_groups(parts: Sequence[GroupedPart], values: Sequence[Sequence[str]],
                     nuisance: Sequence[tuple[str, str, str]],
                     confidence: float = 0.95) -> JointFit:
    """The table and every tau (``nuisance``: per tau, (question, name, meaning)).

    As ``joint.fit_joint``; the cells' intervals re-maximise over tau, and ``JointFit.nuisance``
    holds each tau's estimate (see the module docstring).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    parts = [p for p in parts if np.sum(p.counts) > 0]
    if not parts:
        raise ValueError("no respondent answered every question of the table")
    k = len(nuisance)
    labels = [tuple(str(v) for v in combo) for combo in product_labels(values)]
    for j, (question, _, _) in enumerate(nuisance):
        # tau is identified by the two groups' different matrices: both must have answered
        groups = {tuple(np.round(p.base[q], 12).ravel()) for p in parts
                  for q, index in enumerate(p.nuisance) if index == j}
        if len(groups) < 2:
            raise ValueError(f"{question!r}: every respondent is in one group; the two groups "
                             "together estimate its second parameter")
    pi, tau, ll_max = mle(parts, k)
    data = _data(parts, tau)
    if data.cells != len(labels):
        raise ValueError("the matrices do not match the questions' answers")
    full = np.hstack([p.at(tau).matrix for p in parts])
    if np.linalg.matrix_rank(full, tol=1e-10) < len(labels):
        raise ValueError("the designs cannot separate the combinations of true answers: the "
                         "table is not identified")
    messages: list[str] = []
    gap = optimality_gap(pi, [p.at(tau) for p in parts])
    inside = (tau > BOUNDARY) & (tau < 1 - BOUNDARY)
    score = gradient_tau(parts, pi, tau) / data.total
    tau_gap = float(np.max(np.abs(score[inside]))) if np.any(inside) else 0.0
    if gap > 1e-5 or tau_gap > 1e-5:
        messages.append(f"the maximisation did not converge tightly (optimality gap "
                        f"{max(gap, tau_gap):.2g})")
    critical = float(quantiles.chi2_ppf(confidence, 1))
    hessian = _hessian(parts, tau)
    try:
        covariance = np.linalg.inv(-hessian)
        se = np.sqrt(np.where(np.diag(covariance) > 0, np.diag(covariance), math.nan))
    except np.linalg.LinAlgError:
        se = np.full(k, math.nan)
    estimates = []
    for j, (question, name, meaning) in enumerate(nuisance):
        def excess_tau(value: float, j: int = j) -> float:
            held = tau.copy()
            held[j] = value
            free = np.arange(k) != j
            _, _, profile = _Profile(parts, k).maximise([held], free, held)
            if not math.isfinite(profile):
                return IMPOSSIBLE
            return min((2 * (ll_max - profile) - critical) / 2, IMPOSSIBLE)

        low, high = profile_ends(excess_tau, float(tau[j]), xtol=1e-9)
        if not math.isfinite(float(se[j])):
            messages.append(f"{question}: the information about {name} is singular at the "
                            "estimate; its SE is not given (the interval is the profile "
                            "likelihood's)")
        estimates.append(NuisanceEstimate(question, name, meaning, float(tau[j]), float(se[j]),
                                          low, high, not BOUNDARY < tau[j] < 1 - BOUNDARY))
    low_cells, high_cells = np.zeros(len(labels)), np.zeros(len(labels))
    for cell in range(len(labels)):
        def excess(value: float, cell: int = cell) -> float:
            if abs(value - pi[cell]) < 1e-12:
                return -critical / 2
            profile = _Profile(parts, k, (cell, value))
            profile.start = pi
            _, _, best = profile.maximise([tau])
            if not math.isfinite(best):
                return IMPOSSIBLE
            return min((2 * (ll_max - best) - critical) / 2, IMPOSSIBLE)

        low_cells[cell], high_cells[cell] = profile_ends(excess, float(pi[cell]), xtol=1e-9)
    result = JointFit(labels, pi, low_cells, high_cells, ll_max, int(data.total), confidence,
                      max(gap, tau_gap), None, messages)
    result.nuisance = estimates
    return result
