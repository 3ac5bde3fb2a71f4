"""`rrsite simulate --cor "q1,q2,x=0.5"`: true answers correlated through a Gaussian copula.

The questions' true values are monotone transforms of standard normals whose correlations are
the ones given (one value for every pair, or the upper triangle row by row: r12, r13, r23, ...):
a yes-no question is "yes" when its normal lies above the quantile of its ``--truth`` rate (equal
shares without one, or the simulator's own shares for a direct question), a number is
``min + (max - min) Phi(normal)`` (uniform over its range, as the simulator's other numbers;
whole numbers rounded down). Each true value is then randomized by its question's own design
(by the respondent's group for a two-group design), so the export holds only the reports, as
always. This is the data of `analyze --cor` (rrsite.estimate.correlation).

The Pearson correlation of the transformed values is not the normals' (a yes-no answer cannot
correlate 0.5 with anything at a 10% rate, say); the simulator prints the true answers' own
Pearson correlations in the sample it wrote, the figures `analyze --cor` estimates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from ..core.designs import TwoGroupDesign
from ..errors import UsageError
from ..estimate.numbers import simulate_reports
from ..exports.catalog import VersionSpec
from .draws import GROUP_SUFFIX, parse_question_numbers, randomize, randomize_in_groups
from .numbers import NumberTruth


@dataclass
class CorTruth:
    """Question ids, the normals' correlation matrix, and the true values' running sums."""

    questions: tuple[str, ...]
    matrix: np.ndarray
    #: Over the respondents who answered every question: n, sum x, sum x x'.
    count: int = 0
    sums: np.ndarray = field(default_factory=lambda: np.zeros(0))
    products: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def pearson(self) -> np.ndarray:
        """The true values' Pearson correlations over the complete respondents written."""
        mean = self.sums / self.count
        cov = self.products / self.count - np.outer(mean, mean)
        sd = np.sqrt(np.diag(cov))
        with np.errstate(invalid="ignore", divide="ignore"):
            out: np.ndarray = cov / np.outer(sd, sd)
        return out


def parse_cor(text: str, version: VersionSpec) -> CorTruth:
    """``q1,q2,x=0.5`` or ``q1,q2,x=0.5,0.2,0.1`` -> CorTruth, checked against the survey."""
    where = f"--cor {text!r}"
    ids, _, given = parse_question_numbers(
        text, "--cor", version, ("yes-no", "number"),
        "write Q1,Q2[,...]=R (every pair) or =R12,R13,R23 (each pair)", "correlations")
    k = len(ids)
    pairs = k * (k - 1) // 2
    if len(given) not in (1, pairs):
        raise UsageError(f"{where}: give one correlation for every pair or {pairs} (r12, r13, "
                         f"..., row by row), got {len(given)}")
    if any(not -1 < r < 1 for r in given):
        raise UsageError(f"{where}: correlations must lie strictly between -1 and 1")
    matrix = np.eye(k)
    upper = np.triu_indices(k, 1)
    matrix[upper] = given * pairs if len(given) == 1 else given
    matrix.T[upper] = matrix[upper]
    if np.linalg.eigvalsh(matrix).min() <= 1e-10:
        raise UsageError(f"{where}: these correlations are not a valid correlation matrix (not "
                         "positive definite): no set of variables has them")
    return CorTruth(ids, matrix, 0, np.zeros(k), np.zeros((k, k)))


def check_cor(cors: Sequence[CorTruth], others: Sequence[str]) -> None:
    """A question is drawn by one --cor at most, and not by --joint, --logit or --predictor."""
    seen = set(others)
    for cor in cors:
        for qid in cor.questions:
            if qid in seen:
                raise UsageError(f"--cor: {qid} is given twice (in --cor, --joint, --logit or "
                                 "--predictor)")
            seen.add(qid)


def _range(question: Any) -> tuple[float, float]:
    low = question.minimum if question.minimum is not None else 0.0
    high = question.maximum if question.maximum is not None else max(low + 100.0, 100.0)
    return float(low), float(high)


def cor_answers(rng: np.random.Generator, version: VersionSpec, truth: CorTruth,
                columns: dict[str, list[Any]], shares: Mapping[str, np.ndarray],
                count: int, numbers: Mapping[str, NumberTruth] | None = None) -> None:
    """Overwrite the questions' columns with reports of copula-correlated true values.

    A number with a ``--truth`` distribution (``numbers``) takes it as its margin.
    """
    normals = rng.standard_normal((count, len(truth.questions))) @ np.linalg.cholesky(
        truth.matrix).T
    uniform = special.ndtr(normals)
    values = np.zeros((count, len(truth.questions)))
    answered = np.ones(count, dtype=bool)
    for j, qid in enumerate(truth.questions):
        question = version.question(qid)
        assert question is not None
        answered &= np.array([v is not None for v in columns[qid]])
        if question.type == "yes-no":
            yes = question.values.index("yes") if "yes" in question.values else 1
            rate = float(shares[qid][yes])
            true_yes = uniform[:, j] > 1 - rate
            index = np.where(true_yes, yes, 1 - yes)
            values[:, j] = true_yes
            if isinstance(question.design, TwoGroupDesign):
                group = np.array([g or 1 for g in columns[qid + GROUP_SUFFIX]])
                index = randomize_in_groups(rng, question.design, index, group)
            elif question.sensitive:
                index = randomize(rng, question.matrix, index)
            reported: list[Any] = np.array(question.answers, dtype=object)[index].tolist()
        else:
            low, high = _range(question)
            margin = (numbers or {}).get(qid)
            if margin is not None:
                true_numbers = margin.quantile(uniform[:, j])
            elif question.integer:
                true_numbers = np.minimum(np.floor(math.ceil(low) + uniform[:, j] * (
                    math.floor(high) - math.ceil(low) + 1)), math.floor(high))
            else:
                true_numbers = np.round(low + uniform[:, j] * (high - low), 1).clip(low, high)
            values[:, j] = true_numbers
            reported = true_numbers.astype(int).tolist() if question.integer else \
                true_numbers.tolist()
            if question.number_design is not None:
                design = question.number_design
                reports, drawn = simulate_reports(rng, design, true_numbers,
                                                  rng.uniform(low, high, count))
                reported = [float(v) for v in reports.tolist()]
                if question.integer and design.name in ("mixture", "mixture-unknown"):
                    reported = [int(v) if float(v).is_integer() else v for v in reported]
                if drawn is not None:
                    columns[qid + GROUP_SUFFIX] = [None if old is None else int(g) for old, g in
                                                   zip(columns[qid], drawn.tolist(), strict=True)]
        columns[qid] = [None if old is None else new
                        for old, new in zip(columns[qid], reported, strict=True)]
    kept = values[answered]
    truth.count += len(kept)
    truth.sums += kept.sum(axis=0)
    truth.products += kept.T @ kept
