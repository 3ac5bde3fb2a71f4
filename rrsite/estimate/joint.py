"""Joint prevalence of several randomized questions: the table of true-answer combinations.

MATH.md section 11. Each respondent answered questions 1..Q, question q under its own design
matrix M_q (``[truth][report]``, rrsite's convention; the matrix of the version the respondent
answered). The respondent's reports (r_1, .., r_Q) then have probability

    P(r_1, .., r_Q) = sum_t pi_t prod_q M_q[t_q, r_q] = (pi @ (M_1 kron M_2 kron ..))_r

over the table pi of true-answer combinations t = (t_1, .., t_Q) (row-major: the last question
varies fastest). Respondents with the same versions form a ``JointPart`` (its counts over the
combinations of reports); the log-likelihood is sum over parts and report cells of
count * log (pi @ M)_cell, one likelihood over every version (never adding counts across versions).

It is concave in pi. The estimate is its maximum over the simplex: EM (monotone, the step of
``estimators.em_simplex``, MATH.md section 5) from the uniform table, then Newton's method on
the cells still positive (the sum-to-one constraint kept by a bordered system, steps halved to stay
in the simplex and to raise the likelihood), with the optimality (Karush-Kuhn-Tucker) conditions
checked for the cells at zero: score_k <= N there, = N on the positive cells. Intervals per cell
from the profile likelihood: {v : 2 (loglik_max - max_{pi_cell = v} loglik) <= chi2_1(conf)}, the
constrained maximum by the same EM + Newton with the cell held at v.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import numpy as np
from scipy import optimize

from .intervals import quantiles

#: EM iterations before the Newton polish, and the polish's limits.
EM_ITERATIONS = 50
EM_TOLERANCE = 1e-11
NEWTON_ITERATIONS = 100
#: A cell below this share is treated as zero in the Newton polish (and put back if the
#: optimality conditions ask for it).
ZERO = 1e-12
#: Relative tolerance of the optimality conditions at the reported maximum.
KKT_TOLERANCE = 1e-7
#: Report probabilities below this count as zero (a report the table cannot produce).
TINY = 1e-300
#: Half the likelihood-ratio statistic's excess over the critical value where the profile is
#: -inf (the value makes an observed report impossible): outside the interval.
IMPOSSIBLE = 1e6


def kron_all(matrices: Sequence[np.ndarray]) -> np.ndarray:
    """M_1 kron M_2 kron ... (rows: truth combinations, columns: report combinations)."""
    return reduce(np.kron, [np.asarray(m, dtype=np.float64) for m in matrices])


@dataclass(frozen=True)
class JointPart:
    """The respondents who answered with one combination of design matrices.

    ``matrices[q]`` is question q's matrix ``[truth][report]``; ``counts`` has one entry per
    combination of reports, row-major (the last question's report varies fastest).
    """

    matrices: tuple[np.ndarray, ...]
    counts: np.ndarray

    def __post_init__(self) -> None:
        cells = math.prod(m.shape[1] for m in self.matrices)
        if np.shape(self.counts) != (cells,):
            raise ValueError(f"need {cells} report-combination counts, got {np.shape(self.counts)}")
        for m in self.matrices:
            if np.any(m < 0) or not np.allclose(m.sum(axis=1), 1.0, atol=1e-9):
                raise ValueError("every design matrix row must be a probability distribution")

    @property
    def matrix(self) -> np.ndarray:
        """The Kronecker product of the questions' matrices."""
        return kron_all(self.matrices)


class Stacked:
    """Every part's observed report columns side by side: P(report cell) = pi @ A."""

    def __init__(self, parts: Sequence[JointPart]) -> None:
        columns, counts = [], []
        for part in parts:
            seen = np.asarray(part.counts) > 0
            columns.append(part.matrix[:, seen])
            counts.append(np.asarray(part.counts, dtype=np.float64)[seen])
        self.A = np.hstack(columns)
        self.n = np.concatenate(counts)
        self.total = float(self.n.sum())
        self.cells = self.A.shape[0]

    def loglik(self, pi: np.ndarray) -> float:
        """The log-likelihood of the table ``pi`` (-inf where a seen cell has no chance)."""
        lam = pi @ self.A
        if np.any(lam <= 0):
            return -math.inf
        return float(self.n @ np.log(lam))

    def score(self, pi: np.ndarray) -> np.ndarray:
        """Its gradient in ``pi``."""
        return np.asarray(self.A @ (self.n / np.maximum(pi @ self.A, TINY)))

    def hessian(self, pi: np.ndarray) -> np.ndarray:
        """Its Hessian in ``pi``."""
        lam = pi @ self.A
        weighted = self.A * (self.n / np.maximum(lam, 1e-150) ** 2)
        return np.asarray(-weighted @ self.A.T)


def loglik(pi: Sequence[float] | np.ndarray, parts: Sequence[JointPart]) -> float:
    """The log-likelihood of the table pi (without the multinomial coefficients)."""
    return Stacked(parts).loglik(np.asarray(pi, dtype=np.float64))


def _em(data: Stacked, pi: np.ndarray, fixed: tuple[int, float] | None,
        iterations: int) -> np.ndarray:
    """EM steps; with ``fixed`` = (cell, v) that cell stays at v and the rest share 1 - v."""
    for _ in range(iterations):
        update = pi * data.score(pi)
        if fixed is None:
            new = update / data.total
        else:
            cell, value = fixed
            update[cell] = 0.0
            rest = update.sum()
            new = update * ((1.0 - value) / rest) if rest > 0 else update
            new[cell] = value
        moved = float(np.max(np.abs(new - pi)))
        pi = new
        if moved < EM_TOLERANCE:
            break
    return pi


def _newton(data: Stacked, pi: np.ndarray, fixed: tuple[int, float] | None) -> np.ndarray:
    """Newton's method on the positive free cells, the sum kept; zeros put back by the KKT test."""
    frozen = -1 if fixed is None else fixed[0]
    for _round in range(10):
        for _ in range(NEWTON_ITERATIONS):
            free = np.flatnonzero((pi > ZERO) & (np.arange(data.cells) != frozen))
            pi[(pi <= ZERO) & (np.arange(data.cells) != frozen)] = 0.0
            if len(free) <= 1:
                break
            g = data.score(pi)[free]
            h = data.hessian(pi)[np.ix_(free, free)]
            k = len(free)
            bordered = np.zeros((k + 1, k + 1))
            bordered[:k, :k] = h
            bordered[:k, k] = 1.0
            bordered[k, :k] = 1.0
            try:
                step = np.linalg.solve(bordered, np.concatenate((-g, [0.0])))[:k]
            except np.linalg.LinAlgError:
                break
            before = data.loglik(pi)
            scale = 1.0
            negative = step < 0
            if np.any(negative):
                scale = min(1.0, float(np.min(-pi[free][negative] / step[negative])))
            improved = False
            for _halving in range(60):
                trial = pi.copy()
                trial[free] = np.maximum(pi[free] + scale * step, 0.0)
                after = data.loglik(trial)
                if after >= before - 1e-12 * abs(before):
                    improved = True
                    break
                scale /= 2
            if not improved:
                break
            pi = trial
            if np.max(np.abs(scale * step)) < 1e-14 or after - before < 1e-13 * abs(before):
                break
        # KKT: a zero cell whose score exceeds the positive cells' multiplier would raise the
        # likelihood if it grew: give it a little mass and polish again
        score = data.score(pi)
        movable = (np.arange(data.cells) != frozen)
        positive = movable & (pi > ZERO)
        if not np.any(positive):
            break
        multiplier = float(np.mean(score[positive]))
        wanting = movable & (pi <= ZERO) & (score > multiplier * (1 + KKT_TOLERANCE))
        if not np.any(wanting):
            break
        pi[wanting] = 1e-6
        pi[positive] *= (pi[positive].sum() - 1e-6 * wanting.sum()) / pi[positive].sum()
        pi = _em(data, pi, fixed, 200)
    return pi


def maximise_shares(data: Stacked, start: np.ndarray | None,
                    fixed: tuple[int, float] | None = None) -> tuple[np.ndarray, float]:
    """The table of largest likelihood over the simplex (cell ``fixed[0]`` held at ``fixed[1]``)."""
    k = data.cells
    if start is None:
        pi = np.full(k, 1.0 / k)
    else:
        pi = 0.9 * np.asarray(start, dtype=np.float64) + 0.1 / k  # strictly inside
    if fixed is not None:
        cell, value = fixed
        others = np.arange(k) != cell
        pi[others] *= (1.0 - value) / pi[others].sum()
        pi[cell] = value
    pi = _em(data, pi, fixed, EM_ITERATIONS)
    pi = _newton(data, pi, fixed)
    return pi, data.loglik(pi)


def mle(parts: Sequence[JointPart]) -> tuple[np.ndarray, float]:
    """The maximum-likelihood table over the simplex and its log-likelihood."""
    data = Stacked(parts)
    return maximise_shares(data, None)


def optimality_gap(pi: np.ndarray, parts: Sequence[JointPart]) -> float:
    """Largest relative violation of the optimality conditions (0 at the exact maximum)."""
    data = Stacked(parts)
    score = data.score(pi) / data.total  # the multiplier of sum(pi) = 1 is N: scaled to 1
    positive = pi > ZERO
    gap = float(np.max(np.abs(score[positive] - 1.0)))
    if np.any(~positive):
        gap = max(gap, float(np.max(score[~positive] - 1.0)))
    return gap


def profile_loglik(parts: Sequence[JointPart], cell: int, value: float,
                   start: np.ndarray | None = None) -> float:
    """The largest log-likelihood over the tables with pi[cell] = value."""
    return maximise_shares(Stacked(parts), start, (cell, value))[1]


def _profile_interval(data: Stacked, cell: int, pi_hat: np.ndarray, ll_max: float,
                      critical: float) -> tuple[float, float]:
    estimate = float(pi_hat[cell])

    def excess(value: float) -> float:
        if abs(value - estimate) < 1e-12:
            return -critical / 2
        _, profile = maximise_shares(data, pi_hat, (cell, value))
        if not math.isfinite(profile):
            return IMPOSSIBLE
        return min((2 * (ll_max - profile) - critical) / 2, IMPOSSIBLE)

    return profile_ends(excess, estimate)


def profile_ends(excess: Callable[[float], float], estimate: float, low: float = 0.0,
                 high: float = 1.0, xtol: float = 1e-10) -> tuple[float, float]:
    """Where ``excess`` (negative inside the interval) crosses 0 on each side of ``estimate``.

    A side whose bound is still inside (or is the estimate itself) ends at the bound.
    """
    ends = []
    for bound in (low, high):
        if abs(bound - estimate) < 1e-12 or excess(bound) <= 0:
            ends.append(bound)
        else:
            ends.append(float(optimize.brentq(excess, estimate, bound, xtol=xtol)))
    return ends[0], ends[1]


@dataclass
class JointFit:
    """The table of true-answer combinations: estimates, profile intervals, margins."""

    labels: list[tuple[str, ...]]
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    loglik: float
    n: int
    confidence: float
    optimality_gap: float
    unbiased: np.ndarray | None = None
    messages: list[str] = field(default_factory=list)
    #: Two-group questions' second parameters (``joint_groups.NuisanceEstimate``), estimated
    #: with the table; empty when every matrix is known.
    nuisance: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (docs/contracts.md, "analyze --joint")."""
        return {
            "cells": [
                {"answers": list(label), "estimate": float(e), "ci": [float(lo), float(hi)]}
                for label, e, lo, hi in zip(self.labels, self.estimate, self.ci_low,
                                            self.ci_high, strict=True)
            ],
            "interval_method": "profile likelihood",
            "confidence": self.confidence,
            "loglik": self.loglik,
            "n": self.n,
            "optimality_gap": self.optimality_gap,
            "messages": self.messages,
            "nuisance": [n.to_dict() for n in self.nuisance],
        }


def fit_joint(parts: Sequence[JointPart], values: Sequence[Sequence[str]],
              confidence: float = 0.95) -> JointFit:
    """Estimate the table of true-answer combinations (values: each question's truths)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    parts = [p for p in parts if np.sum(p.counts) > 0]
    if not parts:
        raise ValueError("no respondent answered every question of the table")
    labels = [tuple(str(v) for v in combo) for combo in product_labels(values)]
    data = Stacked(parts)
    if data.cells != len(labels):
        raise ValueError("the matrices do not match the questions' answers")
    messages: list[str] = []
    # identified: the stacked Kronecker matrices (over every report cell) have full row rank
    full = np.hstack([p.matrix for p in parts])
    if np.linalg.matrix_rank(full, tol=1e-10) < len(labels):
        raise ValueError("the designs cannot separate the combinations of true answers: the "
                         "table is not identified")
    pi, ll_max = maximise_shares(data, None)
    gap = optimality_gap(pi, parts)
    if gap > 1e-5:
        messages.append(f"the maximisation did not converge tightly (optimality gap {gap:.2g})")
    critical = float(quantiles.chi2_ppf(confidence, 1))
    low, high = np.zeros(len(labels)), np.zeros(len(labels))
    for cell in range(len(labels)):
        low[cell], high[cell] = _profile_interval(data, cell, pi, ll_max, critical)
    unbiased = None
    if len(parts) == 1 and all(m.shape[0] == m.shape[1] for m in parts[0].matrices):
        counts = np.asarray(parts[0].counts, dtype=np.float64)
        unbiased = (counts / counts.sum()) @ np.linalg.inv(parts[0].matrix)
        if np.any(unbiased < -1e-12):
            messages.append("the unbiased (moment) table has negative cells; the estimate is the "
                            "maximum-likelihood table on the simplex")
    return JointFit(labels, pi, low, high, ll_max, int(data.total), confidence, gap, unbiased,
                    messages)


def product_labels(values: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """Every combination of the questions' answers, the last question varying fastest."""
    import itertools

    return list(itertools.product(*values))
