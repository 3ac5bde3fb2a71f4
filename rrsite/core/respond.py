"""What the respondent's browser calls: a manifest question and a true answer in, a report out.

The page passes the question's entry from survey.json (its ``design`` spec and its ``values``,
index-aligned with the design matrix) and the respondent's true answer; it gets back only the
report and the transcript of the coins. The random source is the operating system's CSPRNG, which
Pyodide maps to ``crypto.getRandomValues``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from .base import FREQUENCY_DESIGNS
from .designs import (
    TwoGroupDesign,
    UnrelatedQuestion,
    UnrelatedUnknown,
    design_from_spec,
    secure_random,
)
from .errors import DesignError


def is_frequency(question: Mapping[str, Any]) -> bool:
    """Whether a manifest question is answered by rrsite.core.frequency (an oracle, a panel's)."""
    design = question.get("design")
    return (isinstance(design, Mapping) and design.get("name") in FREQUENCY_DESIGNS) or \
        isinstance(question.get("memoize"), Mapping)


def modules_for(questions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The modules :func:`respond` imports when first asked for these manifest questions.

    The page's worker imports them once it is ready, before a respondent asks (a survey of
    yes-no and choice questions needs none).
    """
    needed = set()
    for question in questions:
        if not question.get("sensitive"):
            continue  # asked directly: the page sends its answer as given, never to the worker
        if question.get("type") == "number":
            needed.add(f"{__package__}.numbers")
        elif is_frequency(question):
            needed.add(f"{__package__}.frequency.respond")
    return sorted(needed)


def respond(
    question: Mapping[str, Any],
    truth: str,
    innocuous: str | None = None,
    rng: random.Random | None = None,
    permanent: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Randomize one answer: ``{"report": value, "steps": [...]}``; the truth is not in it.

    For a two-group design the result also has ``"group"`` (1 or 2), drawn here from ``rng``
    (the secure source: crypto.getRandomValues in the browser). For designs whose reports are not
    the truth values (kuk, crosswise, triangular) the report is one of the question's ``reports``.
    A number question (``"type": "number"``) goes to :func:`numbers.respond_number`: its report
    is a number and the result adds ``drawn`` and ``operation`` for the page's arithmetic.
    A frequency oracle, a multi-choice question (``truth`` the JSON list of the ticked values)
    and a panel's question (``memoize``; ``permanent`` the reports the device kept) go to
    :func:`frequency.respond.respond_frequency`.
    """
    # Numbers and frequency oracles are imported when first asked for: a page whose survey has
    # none never compiles them (the worker imports what its survey needs once it is ready).
    if question.get("type") == "number":
        from .numbers import respond_number

        return respond_number(question, truth, innocuous, rng)
    if is_frequency(question):  # frequency oracles, multi-choice, and every panel question
        from .frequency.respond import respond_frequency

        return respond_frequency(question, truth, rng, permanent)
    values: Sequence[str] = question["values"]
    design = design_from_spec(question["design"])
    if len(values) != design.k:
        raise DesignError(
            f"question {question.get('id')!r} has {len(values)} values for a "
            f"design with {design.k} answers"
        )
    if truth not in values:
        raise DesignError(f"answer {truth!r} is not one of {list(values)}")
    rng = rng or secure_random()
    if isinstance(design, UnrelatedQuestion | UnrelatedUnknown) and innocuous is not None:
        if innocuous not in values:
            raise DesignError(f"innocuous answer {innocuous!r} is not one of {list(values)}")
        outcome = design.randomize(values.index(truth), rng, innocuous=values.index(innocuous))
    else:
        outcome = design.randomize(values.index(truth), rng)
    reports = design.report_values() or tuple(values)
    result: dict[str, Any] = {
        "report": reports[outcome.report],
        "steps": [step.to_dict() for step in outcome.steps],
    }
    if isinstance(design, TwoGroupDesign):
        result["group"] = outcome.group
    return result


def respond_json(question_json: str, truth: str, innocuous: str | None = None,
                 permanent_json: str | None = None) -> str:
    """JSON in, JSON out: the narrow bridge the page's worker uses."""
    permanent = json.loads(permanent_json) if permanent_json else None
    return json.dumps(respond(json.loads(question_json), truth, innocuous, None, permanent))
