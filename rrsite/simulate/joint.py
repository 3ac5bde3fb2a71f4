"""`rrsite simulate --joint "q1,q2=s1,s2,s3,s4"`: true answers of several questions drawn together.

The shares are the table of true-answer combinations, row-major over the questions' answers (the
last question varying fastest; for two yes-no questions: no-no, no-yes, yes-no, yes-yes), the
same order as `rrsite analyze --joint` prints. Each question's true answer is then randomized by
its own design (by the respondent's group for a two-group design); a question the simulator
skipped stays unanswered.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.designs import TwoGroupDesign
from ..errors import UsageError
from ..exports.catalog import VersionSpec
from .draws import GROUP_SUFFIX, parse_question_numbers, randomize, randomize_in_groups


@dataclass(frozen=True)
class JointTruth:
    """Question ids and the table of their true-answer combinations."""

    questions: tuple[str, ...]
    table: np.ndarray


def parse_joint(text: str, version: VersionSpec) -> JointTruth:
    """``q1,q2=0.5,0.1,0.3,0.1`` -> JointTruth, checked against the survey."""
    where = f"--joint {text!r}"
    ids, questions, shares = parse_question_numbers(
        text, "--joint", version, ("yes-no", "choice"),
        "write Q1,Q2=SHARE,SHARE,... (one share per combination)", "shares")
    sizes = [len(question.values) for question in questions]
    table = np.array(shares)
    if len(table) != math.prod(sizes):
        raise UsageError(f"{where}: need {math.prod(sizes)} shares (one per combination of "
                         f"answers), got {len(table)}")
    if np.any(table < 0) or abs(table.sum() - 1) > 1e-9:
        raise UsageError(f"{where}: the shares must be >= 0 and add up to 1")
    return JointTruth(ids, table)


def joint_answers(rng: np.random.Generator, version: VersionSpec, truth: JointTruth,
                  columns: dict[str, list[Any]], count: int) -> None:
    """Overwrite the questions' columns with reports of jointly drawn true answers."""
    specs = [version.question(q) for q in truth.questions]
    sizes = [len(q.values) for q in specs if q is not None]
    combos = rng.choice(len(truth.table), size=count, p=truth.table)
    indices = np.unravel_index(combos, sizes)
    for qid, question, index in zip(truth.questions, specs, indices, strict=True):
        assert question is not None
        if isinstance(question.design, TwoGroupDesign):
            group = np.array([g or 1 for g in columns[qid + GROUP_SUFFIX]])
            reported = randomize_in_groups(rng, question.design, index, group)
        elif question.sensitive:
            reported = randomize(rng, question.matrix, index)
        else:
            reported = index
        values = np.array(question.answers, dtype=object)[reported].tolist()
        columns[qid] = [None if old is None else new
                        for old, new in zip(columns[qid], values, strict=True)]


def check_disjoint(joints: Sequence[JointTruth], others: Sequence[str]) -> None:
    """A question is drawn by one --joint (or --truth / --logit) at most."""
    seen = set(others)
    for joint in joints:
        for qid in joint.questions:
            if qid in seen:
                raise UsageError(f"--joint: {qid} is given twice (in --joint, --truth or --logit)")
            seen.add(qid)
