"""Drawing reports through a design: the pieces every simulated answer shares.

A true answer (an index into the question's values) becomes report j with probability
matrix[truth][j] of the question's design (rrsite.core); a two-group design sends each respondent
through their group's matrix. The options that draw several questions together (``--joint``,
``--cor``) name them as ``q1,q2,...=x,y,...``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import TwoGroupDesign
from ..errors import UsageError
from ..exports.catalog import QuestionSpec, VersionSpec

#: The export column of a two-group question's group follows its own (docs/contracts.md).
GROUP_SUFFIX = ".group"


def parse_question_numbers(text: str, option: str, version: VersionSpec, types: Sequence[str],
                           usage: str, what: str) -> tuple[tuple[str, ...], list[QuestionSpec],
                                                           list[float]]:
    """``q1,q2,...=x,y,...`` (--joint, --cor) -> (ids, their questions, the numbers).

    Two or more different ids of questions whose type is one of ``types``; ``usage`` is said
    when there is no "=", ``what`` names the numbers when one is not a number.
    """
    where = f"{option} {text!r}"
    if "=" not in text:
        raise UsageError(f"{where}: {usage}")
    names, _, values = text.partition("=")
    ids = tuple(q.strip() for q in names.split(",") if q.strip())
    if len(ids) < 2 or len(set(ids)) != len(ids):
        raise UsageError(f"{where}: give two or more different question ids")
    questions = []
    for qid in ids:
        question = version.question(qid)
        if question is None or question.type not in types:
            raise UsageError(f"{where}: {qid!r} is not a {' or '.join(types)} question of the "
                             "survey")
        questions.append(question)
    try:
        numbers = [float(v) for v in values.split(",")]
    except ValueError:
        raise UsageError(f"{where}: the {what} must be numbers") from None
    return ids, questions, numbers


def draw(rng: np.random.Generator, probabilities: np.ndarray, count: int) -> np.ndarray:
    """Indices drawn with the given probabilities."""
    cumulative = np.cumsum(probabilities)
    cumulative[-1] = 1.0
    return np.searchsorted(cumulative, rng.random(count), side="right").clip(0, len(cumulative) - 1)


def randomize(rng: np.random.Generator, matrix: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Reports for true answers (indices): report j with probability matrix[truth, j]."""
    cumulative = np.cumsum(matrix, axis=1)
    cumulative[:, -1] = 1.0
    uniform = rng.random(len(truth))
    reports: np.ndarray = np.sum(uniform[:, None] >= cumulative[truth][:, :-1], axis=1)
    return reports


def randomize_in_groups(rng: np.random.Generator, design: TwoGroupDesign, truth: np.ndarray,
                        group: np.ndarray) -> np.ndarray:
    """Reports (indices) of a two-group design: each respondent through their group's matrix."""
    first, second = (np.asarray(m, dtype=np.float64) for m in design.group_matrices())
    return np.where(group == 1, randomize(rng, first, truth), randomize(rng, second, truth))


def sensitive_reports(
    rng: np.random.Generator, question: QuestionSpec, truth: np.ndarray
) -> tuple[list[Any], list[int] | None]:
    """Reported values and, for a two-group design, each respondent's group (else None).

    The reports are the design's own where they differ from the truths (crosswise, kuk, ...);
    the group is drawn with the design's probability of group 1.
    """
    design = question.design
    assert design is not None
    reports = np.array(design.report_values() or question.values, dtype=object)
    if isinstance(design, TwoGroupDesign):
        group = np.where(rng.random(len(truth)) < design.probability, 1, 2)
        return reports[randomize_in_groups(rng, design, truth, group)].tolist(), group.tolist()
    return reports[randomize(rng, question.matrix, truth)].tolist(), None


def probability(item: str, text: str) -> float:
    """A rate ``text`` of ``--truth ITEM``: a number in [0, 1], or a UsageError naming ITEM."""
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--truth {item!r}: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"--truth {item!r}: {value:g} is not a rate in [0, 1]")
    return value
