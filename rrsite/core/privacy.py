"""Differential privacy of a design (MATH.md section 3) and basic composition.

A design P is (epsilon, delta)-differentially private when for every pair of true answers i, i'
and every set S of reports, P(S | i) <= e^epsilon P(S | i') + delta. For delta = 0 the sets reduce
to single reports; the smallest delta for a given epsilon is the largest over (i, i') of
sum_j max(0, P[i][j] - e^epsilon P[i'][j]), which for a 2 x 2 design is the largest of 0 and the
four left-minus-right differences of MATH.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# The two bounds of a bare matrix live in designs.py, which needs them to pick a two-group
# design's worst group; they are part of this module's interface too.
from .base import ROUNDING, Design, Matrix, smallest_delta, smallest_epsilon

__all__ = ["ROUNDING", "Privacy", "compose", "privacy_of", "revealing_reports", "smallest_delta",
           "smallest_epsilon"]

def revealing_reports(
    matrix: Matrix, labels: Sequence[str] | None = None, reports: Sequence[str] | None = None
) -> list[str]:
    """Plain sentences naming each report that rules out a true answer (why epsilon is infinite).

    ``labels`` name the truths (rows), ``reports`` the reports (columns) when they differ.
    """
    names = list(labels) if labels is not None else [str(j + 1) for j in range(len(matrix))]
    report_names = list(reports) if reports is not None else names
    sentences = []
    for j, column in enumerate(zip(*matrix, strict=True)):
        if max(column) == 0.0:
            continue
        possible = [names[i] for i, chance in enumerate(column) if chance > 0.0]
        if len(possible) < len(column):
            sources = " or ".join(f'"{name}"' for name in possible)
            sentences.append(
                f'a "{report_names[j]}" report only ever comes from a true {sources}, '
                "so it reveals the respondent's answer"
                + ("" if len(possible) == 1 else " is one of those")
            )
    return sentences


@dataclass(frozen=True)
class Privacy:
    """The guarantee of one design: epsilon (``math.inf`` if none) and delta at that epsilon."""

    epsilon: float
    delta: float
    reasons: tuple[str, ...] = ()

    @property
    def is_pure(self) -> bool:
        """Finite epsilon with delta = 0."""
        return math.isfinite(self.epsilon) and self.delta == 0.0

    def describe(self) -> str:
        """One line for people: the epsilon, or why there is none."""
        if math.isinf(self.epsilon):
            return "not differentially private for any epsilon: " + "; ".join(self.reasons)
        if self.delta:
            return f"({self.epsilon:.6g}, {self.delta:.6g})-differentially private"
        return f"{self.epsilon:.6g}-differentially private"


def privacy_of(
    design: Design, epsilon: float | None = None, labels: Sequence[str] | None = None
) -> Privacy:
    """The design's guarantee: its smallest pure epsilon, or delta at a given ``epsilon``.

    Where no epsilon works (a report rules out a truth), epsilon is ``math.inf`` and delta is the
    floor no epsilon can lower (1/2 for the fair one-sided forced-yes design), with ``reasons``.
    """
    matrix = design.matrix
    if labels is None and design.k == 2:
        labels = ("no", "yes")
    reasons = tuple(revealing_reports(matrix, labels, design.report_values()))
    if epsilon is None:
        smallest = smallest_epsilon(matrix)
        if math.isinf(smallest):
            return Privacy(math.inf, smallest_delta(matrix, math.inf), reasons)
        return Privacy(smallest, 0.0, reasons)
    return Privacy(float(epsilon), smallest_delta(matrix, epsilon), reasons)


def compose(guarantees: Iterable[Privacy | tuple[float, float]]) -> Privacy:
    """Basic composition: answering several questions costs (sum of epsilons, sum of deltas)."""
    epsilon = delta = 0.0
    reasons: list[str] = []
    for item in guarantees:
        if isinstance(item, Privacy):
            epsilon += item.epsilon
            delta += item.delta
            reasons.extend(item.reasons)
        else:
            epsilon += item[0]
            delta += item[1]
    return Privacy(epsilon, min(delta, 1.0), tuple(reasons))
