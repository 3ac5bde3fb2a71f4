r"""True answers of a sensitive yes/no question from a known logistic model (`simulate --logit`).

    rrsite simulate S.md --respondents N -o X.csv \
        --logit 'violated ~ -1.2 + 0.6*year[Second] + 0.05*courses + 0.4*kinds[married]'

The columns are named as `analyze --model` names them: ``year[Second]`` is 1 when the direct
answer to ``year`` is "Second" (a choice or direct yes-no), ``kinds[married]`` 1 when the
multi-choice ``kinds`` has "married" chosen, ``courses`` the number itself, and ``a[x]:b[y]``
their product. The constant is the intercept. A covariate a row did not answer counts as 0.
The true answer is drawn from logistic(x'beta) and then randomized through the question's own
design, as every simulated sensitive answer is (a two-group design through the matrix of the
group each respondent was drawn into; respondents follow the instructions: SLD's t = 1, no
cheaters).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UsageError
from ..exports.catalog import QuestionSpec, VersionSpec

_NAME = r"[A-Za-z_][A-Za-z0-9_.\-]*(?:\[[^\]]*\])?"
TERM = re.compile(
    rf"\s*(?P<sign>[+-])?\s*(?P<coef>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    rf"\s*(?:\*\s*(?P<column>{_NAME}(?::{_NAME})*))?\s*"
)


@dataclass
class LogitModel:
    """``outcome ~ b0 + b1*col1 + ...``: an intercept and coefficients on named columns."""

    outcome: str
    intercept: float
    coefficients: dict[str, float]

    def linear_predictor(self, version: VersionSpec, columns: Mapping[str, Sequence[Any]],
                         count: int) -> np.ndarray:
        """The linear predictor x'beta of every simulated row."""
        eta = np.full(count, self.intercept)
        for column, beta in self.coefficients.items():
            value = np.ones(count)
            for part in column.split(":"):
                value = value * column_values(version, columns, part, count)
            eta += beta * value
        return eta


def column_values(version: VersionSpec, columns: Mapping[str, Sequence[Any]], part: str,
                  count: int) -> np.ndarray:
    """A term's factor as numbers: a number question's answers, or 0/1 for ``qid[level]``."""
    qid, _, level = part.partition("[")
    level = level[:-1] if level else ""
    question: QuestionSpec | None = version.question(qid)
    if question is None or question.sensitive:
        raise UsageError(f"--logit: {qid!r} is not a directly asked question of the survey")
    answers = columns[qid]
    if question.type == "number":
        if level:
            raise UsageError(f"--logit: {part!r}: a number question takes no [level]")
        return np.array([0.0 if v is None else float(v) for v in answers])
    if level not in question.values:
        raise UsageError(f"--logit: {part!r}: {qid} has levels {', '.join(question.values)}; "
                         f"write {qid}[LEVEL]")
    if question.type == "multi-choice":
        return np.array([1.0 if v is not None and level in _as_list(v) else 0.0 for v in answers])
    if question.type in ("yes-no", "choice"):
        return np.array([1.0 if v == level else 0.0 for v in answers])
    raise UsageError(f"--logit: {qid!r} is a {question.type} question")


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    parsed = json.loads(value) if isinstance(value, str) else []
    return parsed if isinstance(parsed, list) else []


def parse_terms(rest: str, where: str) -> tuple[float, dict[str, float]]:
    """``b0 + b1*column + ...``: the intercept and each column's coefficient (added up).

    ``where`` starts the error message of a term that cannot be read.
    """
    intercept, position = 0.0, 0
    coefficients: dict[str, float] = {}
    rest = rest.rstrip()
    while position < len(rest):
        match = TERM.match(rest, position)
        if not match or match.end() == position:
            raise UsageError(f"{where}: cannot read {rest[position:].strip()!r}")
        value = float(match["coef"]) * (-1.0 if match["sign"] == "-" else 1.0)
        if match["column"]:
            coefficients[match["column"]] = coefficients.get(match["column"], 0.0) + value
        else:
            intercept += value
        position = match.end()
    return intercept, coefficients


def parse_logit(text: str, version: VersionSpec) -> LogitModel:
    """``QID ~ b0 + b1*column + ...`` (see the module docstring)."""
    outcome, tilde, rest = text.partition("~")
    outcome = outcome.strip()
    if not tilde or not outcome:
        raise UsageError(f"--logit {text!r}: write QID ~ INTERCEPT + COEF*COLUMN + ...")
    question = version.question(outcome)
    if question is None or question.type != "yes-no":
        raise UsageError(f"--logit {text!r}: {outcome!r} is not a yes-no question of the survey")
    intercept, coefficients = parse_terms(rest, f"--logit {text!r}")
    model = LogitModel(outcome, intercept, coefficients)
    dummy: dict[str, list[Any]] = {q.id: [] for q in version.questions}
    model.linear_predictor(version, dummy, 0)      # unknown columns fail here, before writing
    return model
