"""Frequency oracles, "tick all that apply" and panels in a survey file.

A choice question with ``randomize: oue | sue | olh | subset | hadamard | auto`` (or only an
epsilon: ``auto`` is the default for choices), a randomized multi-choice question (``oue``,
``sue`` or ``auto``, with ``max_ticks``), and in a survey that declares ``series:`` the permanent
report of every question that has one (rrsite.core.frequency.waves) with its ``wave_epsilon``.
Every problem is reported with its file line (rrsite.survey.questions calls in here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...core import KRR, Design, Privacy, TwoGroupDesign, privacy_of
from ...core.frequency import (
    CANDIDATES,
    FREQUENCY_DESIGNS,
    FrequencyOracle,
    Memoized,
    auto,
    oracle_from_spec,
)
from .. import schema
from ..errors import Problems

#: Frequency oracles a survey file may name, and the one that chooses among them.
ORACLES = tuple(FREQUENCY_DESIGNS)
AUTO = "auto"
#: Designs a multi-choice question may use (unary encoding randomizes a set box by box).
SET_DESIGNS = ("oue", "sue", AUTO)
#: Parameters each oracle takes from the question block besides epsilon.
EXTRA_KEYS = {"olh": ("g",), "subset": ("d",)}
#: Keys this module reads; any other design key on such a question is refused.
OWN_KEYS = ("randomize", "epsilon", "g", "d", "max_ticks", "wave_epsilon")
#: Designs whose permanent report a panel keeps (the others are charged once per wave).
MEMOIZABLE = ("forced-response", "warner", "matrix", "k-rr", "oue", "sue", "olh")
FAILURES = (ValueError, TypeError, ArithmeticError)


@dataclass
class Series:
    """The front matter's repeated study: its id, this wave, the waves planned."""

    id: str
    wave: int
    waves: int | None
    wave_epsilon: float | None
    line: int


def applies(fields: schema.Fields, qtype: str | None) -> bool:
    """Whether the question's design is read here (an oracle, ``auto``, a multi-choice set)."""
    if fields.given("sensitive") and fields.get("sensitive") is False:
        return False  # a conflict with randomize or epsilon: rrsite.survey.questions says so
    if any(key in fields.lines and not fields.given(key)
           for key in ("randomize", "epsilon", "sensitive")):
        return False  # unreadable, and reported
    name = fields.get("randomize")
    if name in ORACLES or name == AUTO:
        return True
    chosen = name is None and (fields.given("epsilon") or fields.get("sensitive") is True)
    return qtype in ("choice", "multi-choice") and (chosen or (qtype == "multi-choice"
                                                               and name is not None))


def read(
    fields: schema.Fields, qtype: str, values: list[str], default_epsilon: float | None,
    problems: Problems, design_keys: tuple[str, ...], series: Series | None = None,
) -> tuple[FrequencyOracle | Design, Privacy, dict[str, Any] | None] | None:
    """The design of a choice or multi-choice question read here, and its privacy.

    Also why it was chosen (``auto``); None when it cannot be built (every reason reported).
    ``design_keys``: every key that belongs to a design (those this design does not take are
    refused). In a series ``auto`` weighs only the designs with a permanent report
    (:data:`MEMOIZABLE`).
    """
    name = fields.get("randomize") or AUTO
    where = fields.line_of("randomize" if fields.given("randomize") else
                           "epsilon" if fields.given("epsilon") else "sensitive")
    multi = qtype == "multi-choice"
    if qtype not in ("choice", "multi-choice"):
        problems.error(where, f"design {name} is for choice and multi-choice questions, not "
                              f"{qtype}")
        return None
    if multi and name not in SET_DESIGNS:
        problems.error(where, f"design {name} sends one answer; a multi-choice question (a set of "
                              f"ticks) can use {', '.join(SET_DESIGNS)}")
        return None
    ok = True
    takes = ("epsilon", *EXTRA_KEYS.get(name, ()), *(("max_ticks",) if multi else ()))
    for key in design_keys:
        if key in ("randomize", "wave_epsilon") or not fields.given(key) or key in takes:
            continue
        if key == "max_ticks":
            hint = "max_ticks applies to randomized multi-choice questions"
        elif key in ("g", "d"):
            hint = f"{key} is a parameter of {'olh' if key == 'g' else 'subset'}, not {name}"
        else:
            hint = f"{key} is not a parameter of {name}"
        problems.error(fields.line_of(key), f"{hint} ({name} takes {', '.join(takes)})")
        ok = False
    epsilon = fields.get("epsilon") if fields.given("epsilon") else default_epsilon
    if epsilon is None:
        if "epsilon" not in fields.lines:
            problems.error(where, f"design {name} needs epsilon: add `epsilon:` here, or "
                                  "privacy.epsilon to the front matter")
        return None
    max_ticks = fields.get("max_ticks") if multi else None
    if multi and max_ticks is None:
        if "max_ticks" not in fields.lines:
            problems.error(where, "a randomized multi-choice question needs max_ticks: the most "
                                  "boxes a respondent may tick (epsilon covers any two sets of "
                                  "that many)")
        return None
    if max_ticks is not None and max_ticks > len(values):
        problems.error(fields.line_of("max_ticks"), f"max_ticks is {max_ticks} but the question "
                       f"has {len(values)} options")
        return None
    if name == "subset" and len(values) < 3:
        problems.error(where, f"subset selection needs at least 3 options, got {len(values)}")
        return None
    if not ok:
        return None
    try:
        if name == AUTO:
            choice = auto(len(values), epsilon, max_ticks,
                          MEMOIZABLE if series is not None else CANDIDATES)
            design: FrequencyOracle | Design = choice.design
            chosen: dict[str, Any] | None = {"epsilon": epsilon, "delta": 0.0,
                                             **choice.to_dict()}
        else:
            spec: dict[str, Any] = {"name": name, "k": len(values), "epsilon": epsilon}
            for key in (*EXTRA_KEYS.get(name, ()), "max_ticks"):
                if fields.given(key) and (key != "max_ticks" or multi):
                    spec[key] = fields.get(key)
            design, chosen = oracle_from_spec(spec), None
    except FAILURES as error:
        message = str(error)
        key = message.split()[0] if message else ""
        problems.error(fields.line_of(key) if key in fields.lines else where, message)
        return None
    if isinstance(design, KRR):
        return design, privacy_of(design, labels=values), chosen
    assert isinstance(design, FrequencyOracle)
    return design, design.privacy(), chosen


def read_series(front: schema.Fields | None, problems: Problems) -> Series | None:
    """The front matter's ``series``/``wave``/``waves`` (None outside a series)."""
    if front is None:
        return None
    privacy = front.get("privacy")
    default = privacy.get("wave_epsilon") if privacy is not None else None
    if not front.given("series"):
        for key in ("wave", "waves"):
            if front.given(key):
                problems.error(front.line_of(key), f"{key} applies to one wave of a repeated "
                                                   "study: add `series: <id>` too")
        if default is not None:
            problems.error(privacy.line_of("wave_epsilon"), "wave_epsilon applies to a survey in "
                           "a series (series: in the front matter)")
        return None
    if not front.given("wave"):
        if "wave" not in front.lines:
            problems.error(front.line_of("series"), "a survey in a series needs wave: this "
                                                    "wave's number (1 for the first)")
        return None
    if front.get("mode") == "kiosk":
        problems.error(front.line_of("series"), "a series cannot be fielded in kiosk mode: a "
                       "shared device cannot keep each respondent's permanent reports")
    wave, waves = int(front.get("wave")), front.get("waves")
    if waves is not None and wave > waves:
        problems.error(front.line_of("wave"), f"wave {wave} is after the last planned wave "
                                              f"(waves: {waves})")
    return Series(str(front.get("series")), wave, None if waves is None else int(waves),
                  default, front.line_of("series"))


def memoize(
    fields: schema.Fields, design: Any, series: Series | None, problems: Problems,
) -> Memoized | None:
    """The question's permanent report in a panel, or None.

    None outside a panel or without a design that has one; a design without a permanent report
    in a series needs ``waves`` planned.
    """
    given = fields.given("wave_epsilon")
    if series is None or design is None:
        if given and series is None:
            problems.error(fields.line_of("wave_epsilon"), "wave_epsilon applies to a survey in "
                           "a series (series: in the front matter)")
        return None
    name = design.name
    if name not in MEMOIZABLE or isinstance(design, TwoGroupDesign) or fields.given("innocuous"):
        if given:
            problems.error(fields.line_of("wave_epsilon"), f"design {name} has no permanent "
                           "report: its privacy is charged once per wave; remove wave_epsilon")
        if series.waves is None:
            problems.error(fields.line_of("randomize" if fields.given("randomize") else "id"),
                           f"design {name} has no permanent report, so each wave adds its "
                           "epsilon: give waves: N (the waves planned) in the front matter, or "
                           f"use one of {', '.join(MEMOIZABLE)}")
        return None
    epsilon = design.exact_epsilon() if isinstance(design, FrequencyOracle) else \
        privacy_of(design).epsilon
    wave_epsilon = (fields.get("wave_epsilon") if given else series.wave_epsilon
                    if series.wave_epsilon is not None else epsilon / 2)
    if not math.isfinite(epsilon):
        return None  # refused already: no epsilon at all
    try:
        return Memoized(design, wave_epsilon)
    except FAILURES as error:
        line = fields.line_of("wave_epsilon") if given else series.line
        problems.error(line, f"question {fields.get('id')}: {error}")
        return None


def charged(question: Any, series: Series | None) -> float:
    """What a respondent spends on one question over the whole study (its budget share).

    Outside a series its epsilon; in one, a kept permanent report's epsilon (no number of waves
    exceeds it), or the waves planned times the epsilon of a design without one.
    """
    privacy = question.privacy
    if privacy is None or not math.isfinite(privacy.epsilon):
        return 0.0
    if series is None or question.memo is not None:
        return float(privacy.epsilon)
    return float(privacy.epsilon) * (series.waves or series.wave)


def ledger(questions: list[Any], series: Series) -> dict[str, Any]:
    """The manifest's ``privacy.series``: one wave, waves so far, all waves, no kept reports.

    Without kept reports a device draws new permanent reports every wave.
    """
    one = through = total = 0.0
    for question in questions:
        if question.privacy is None or not math.isfinite(question.privacy.epsilon):
            continue
        if question.memo is not None:
            one += question.memo.epsilon(1)
            through += question.memo.epsilon(series.wave)
        else:
            one += question.privacy.epsilon
            through += question.privacy.epsilon * series.wave
        total += charged(question, series)
    return {
        "id": series.id, "wave": series.wave, "waves": series.waves,
        "one_wave": {"epsilon": one},
        "through_this_wave": {"epsilon": through},
        "all_waves": {"epsilon": total},
        "without_kept_reports": {"epsilon": one * series.wave,
                                 "all_waves": None if series.waves is None
                                 else one * series.waves},
        "composition": "exact for the questions with a permanent report (their waves' reports "
                       "share it); basic (added) across questions and for the others",
    }
