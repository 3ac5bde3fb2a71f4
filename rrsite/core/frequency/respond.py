"""What the respondent's page calls for a frequency oracle or a question asked in every wave.

``respond`` (rrsite.core.respond) sends a question here when its design is a frequency oracle or
when the manifest gives it a ``memoize`` block (a panel). A multi-choice truth arrives as the JSON
text of the list of ticked values. A panel question comes with the permanent reports the device
kept (``permanent``, None the first time): the result carries them back under ``permanent`` for
the page to keep (only if the respondent lets the device keep them); they are a report for every
possible truth, so they say nothing about which one is true.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from ..base import FREQUENCY_DESIGNS, Design, Step
from ..designs import design_from_spec
from ..errors import DesignError
from . import oracle_from_spec
from .oracles import FrequencyOracle
from .waves import Memoized


def truth_index(values: Sequence[str], truth: str, multi: bool) -> Any:
    """The truth as an index, or (multi-choice: a JSON list of values) a frozenset of indices."""
    if not multi:
        if truth not in values:
            raise DesignError(f"answer {truth!r} is not one of {list(values)}")
        return values.index(truth)
    try:
        ticked = json.loads(truth)
    except (TypeError, ValueError):
        raise DesignError(f"a multi-choice answer is a JSON list of values, got {truth!r}") \
            from None
    if not isinstance(ticked, list) or not all(isinstance(v, str) for v in ticked):
        raise DesignError(f"a multi-choice answer is a JSON list of values, got {truth!r}")
    unknown = [v for v in ticked if v not in values]
    if unknown:
        raise DesignError(f"answer {unknown[0]!r} is not one of {list(values)}")
    if len(set(ticked)) != len(ticked):
        raise DesignError(f"answer lists a value twice: {ticked!r}")
    return frozenset(values.index(v) for v in ticked)


def design_of(question: Mapping[str, Any]) -> FrequencyOracle | Design:
    """The question's own design (its epsilon bounds every wave together)."""
    spec = question["design"]
    if spec.get("name") in FREQUENCY_DESIGNS:
        return oracle_from_spec(spec)
    return design_from_spec(spec)


#: Solved schemes by (design spec, wave epsilon): solving one takes a hundred bisection steps,
#: and a page or a simulation asks the same question many times. Bounded: a survey has few.
_SCHEMES: dict[tuple[str, str, Any], Memoized] = {}
_MOST_SCHEMES = 64


def memo_of(question: Mapping[str, Any], design: Any) -> Memoized | None:
    """The panel's permanent-report scheme of the question, or None outside a panel.

    ``design`` is ``design_of(question)``; the scheme is solved once per design spec and wave
    epsilon (it holds no state that a draw changes).
    """
    block = question.get("memoize")
    if not isinstance(block, Mapping):
        return None
    wave_epsilon = block["wave_epsilon"]
    try:
        key = (json.dumps(question["design"], sort_keys=True), type(wave_epsilon).__name__,
               wave_epsilon)
        scheme = _SCHEMES.get(key)
    except TypeError:  # a spec or epsilon that cannot be a key: Memoized says what is wrong
        return Memoized(design, wave_epsilon)
    if scheme is None:
        scheme = Memoized(design, wave_epsilon)
        if len(_SCHEMES) < _MOST_SCHEMES:
            _SCHEMES[key] = scheme
    return scheme


def encode(design: Any, report: Any, values: Sequence[str]) -> Any:
    """A report as the submission carries it (a matrix design's report is its value)."""
    if isinstance(design, FrequencyOracle):
        return design.encode(report, values)
    reports = design.report_values() or tuple(values)
    return reports[report]


def respond_frequency(
    question: Mapping[str, Any], truth: str, rng: random.Random | None = None,
    permanent: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``{"report", "steps"[, "permanent", "drawn_now"]}``: the report, never the truth."""
    values: Sequence[str] = question["values"]
    design = design_of(question)
    if design.k != len(values):
        raise DesignError(f"question {question.get('id')!r} has {len(values)} values for a "
                          f"design with {design.k} answers")
    index = truth_index(values, truth, question.get("type") == "multi-choice")
    memo = memo_of(question, design)
    steps: list[Step]
    result: dict[str, Any] = {}
    if memo is None:
        if isinstance(design, FrequencyOracle):
            report, steps = design.randomize(index, rng)
        else:
            outcome = design.randomize(index, rng)
            report, steps = outcome.report, list(outcome.steps)
    else:
        table = dict(permanent) if permanent is not None else memo.draw_table(rng)
        report, steps = memo.wave_report(table, index, rng)
        result["permanent"] = table
        result["drawn_now"] = permanent is None
    result["report"] = encode(design, report, values)
    result["steps"] = [step.to_dict() for step in steps]
    return result
