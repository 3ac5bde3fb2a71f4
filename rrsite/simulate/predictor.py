r"""A direct outcome driven by randomized answers' TRUE values (`simulate --predictor`).

    rrsite simulate surveys/doping.md --respondents 2000 -o doping.csv --truth doped=0.2 \
        --predictor 'hours ~ 8 + 4*doped[yes] + 0.5*other[x]; sd=3'

The outcome is a directly asked number (normal around the linear predictor with sd ``sd``,
clipped to the question's min/max and rounded if it is an integer; the number clipped is
printed) or a directly asked yes-no question (logistic). The columns are those of `--logit`
(``year[Second]``, ``courses``, ``a[x]:b[y]``), and a randomized yes-no or choice question's
``q[level]`` is 1 when its TRUE answer is ``level``. Those true answers are drawn from the
question's ``--truth`` shares (equal shares without one), then randomized through the question's
own design (a two-group design in each row's group, its respondents compliant: the innocuous
rate of the survey, SLD's carriers honest, no cheaters), so the export holds only the reports, as
always. This is the data-generating model of `analyze --model "y ~ q + x"`
(rrsite.estimate.regression.predictors).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import TwoGroupDesign
from ..errors import UsageError
from ..exports.catalog import VersionSpec
from .draws import GROUP_SUFFIX, randomize, randomize_in_groups
from .logit import column_values, parse_terms

_SD = re.compile(r";\s*sd\s*=\s*(?P<sd>[0-9.eE+-]+)\s*$")


@dataclass
class PredictorModel:
    """``outcome ~ b0 + b1*col + ...; sd=S``."""

    outcome: str
    intercept: float
    coefficients: dict[str, float]
    sd: float
    randomized: list[str]
    #: Number-outcome values clipped to the question's range so far.
    clipped: int = 0


def parse_predictor(text: str, version: VersionSpec) -> PredictorModel:
    """Parse and check one ``--predictor`` (see the module docstring)."""
    where = f"--predictor {text!r}"
    sd = 1.0
    match = _SD.search(text)
    body = text
    if match:
        try:
            sd = float(match["sd"])
        except ValueError:
            raise UsageError(f"{where}: sd must be a number") from None
        body = text[:match.start()]
    outcome, tilde, rest = body.partition("~")
    outcome = outcome.strip()
    question = version.question(outcome)
    if not tilde or question is None:
        raise UsageError(f"{where}: write OUTCOME ~ INTERCEPT + COEF*COLUMN + ...[; sd=S] with "
                         "OUTCOME a question of the survey")
    if question.sensitive or question.type not in ("number", "yes-no"):
        raise UsageError(f"{where}: the outcome {outcome!r} must be a directly asked number or "
                         "yes-no question")
    if question.type == "yes-no" and match:
        raise UsageError(f"{where}: sd is for a number outcome")
    if not sd > 0:
        raise UsageError(f"{where}: sd must be above 0")
    intercept, coefficients = parse_terms(rest, where)
    randomized: list[str] = []
    for column in coefficients:
        for part in column.split(":"):
            qid, _, level = part.partition("[")
            q = version.question(qid)
            if q is None:
                raise UsageError(f"{where}: no question {qid!r}")
            if q.sensitive:
                if q.type not in ("yes-no", "choice"):
                    raise UsageError(f"{where}: {qid!r} must be a randomized yes-no or choice "
                                     "question")
                if level[:-1] not in q.values:
                    raise UsageError(f"{where}: {part!r}: write {qid}[ANSWER] with ANSWER one "
                                     f"of {', '.join(q.values)}")
                if qid not in randomized:
                    randomized.append(qid)
    if not randomized:
        raise UsageError(f"{where}: name a randomized question's true answer, e.g. q[yes] (for "
                         "direct covariates only, the outcome is simulated as usual)")
    return PredictorModel(outcome, intercept, coefficients, sd, randomized)


def predictor_answers(rng: np.random.Generator, version: VersionSpec, model: PredictorModel,
                      columns: dict[str, list[Any]], shares: Mapping[str, np.ndarray],
                      count: int) -> int:
    """Redraw the randomized predictors (truth, then report) and the outcome in ``columns``.

    Returns the number of number-outcome values clipped to the question's range.
    """
    truths: dict[str, list[Any]] = {}
    for qid in model.randomized:
        question = version.question(qid)
        assert question is not None and question.design is not None
        p = np.asarray(shares.get(qid, np.full(len(question.values), 1 / len(question.values))))
        truth = rng.choice(len(question.values), size=count, p=p / p.sum())

        if isinstance(question.design, TwoGroupDesign):   # each row in its drawn group
            group = np.array([g or 1 for g in columns[qid + GROUP_SUFFIX]])
            index = randomize_in_groups(rng, question.design, truth, group)
        else:
            index = randomize(rng, question.matrix, truth)
        reports = np.array(question.answers, dtype=object)[index].tolist()
        columns[qid] = [None if old is None else new
                        for old, new in zip(columns[qid], reports, strict=True)]
        truths[qid] = np.array(question.values, dtype=object)[truth].tolist()
    eta = np.full(count, model.intercept)
    for column, beta in model.coefficients.items():
        value = np.ones(count)
        for part in column.split(":"):
            qid, _, level = part.partition("[")
            if qid in truths:
                value = value * np.array([1.0 if v == level[:-1] else 0.0 for v in truths[qid]])
            else:
                value = value * column_values(version, columns, part, count)
        eta += beta * value
    question = version.question(model.outcome)
    assert question is not None
    clipped = 0
    if question.type == "number":
        y = eta + model.sd * rng.normal(size=count)
        low = question.minimum if question.minimum is not None else -np.inf
        high = question.maximum if question.maximum is not None else np.inf
        clipped = int(np.count_nonzero((y < low) | (y > high)))
        y = np.clip(y, low, high)
        values: list[Any] = (np.round(y).astype(int).tolist() if question.integer
                             else np.round(y, 4).tolist())
    else:
        yes = rng.random(count) < 1 / (1 + np.exp(-eta))
        values = ["yes" if v else "no" for v in yes.tolist()]
    columns[model.outcome] = [None if old is None else new
                              for old, new in zip(columns[model.outcome], values, strict=True)]
    return clipped


def check_predictors(models: Sequence[PredictorModel], taken: Sequence[str]) -> None:
    """A question is generated by one model at most."""
    seen = set(taken)
    for model in models:
        for qid in [model.outcome, *model.randomized]:
            if qid in seen:
                raise UsageError(f"--predictor: {qid!r} is already simulated by another option")
            seen.add(qid)
