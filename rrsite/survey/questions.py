"""The questions of a survey file: each fence's keys checked together, its design built.

Which design takes which parameter, the defaults the front matter gives (epsilon, delta,
priors), options, the number designs' ranges, the optimal design for a budget, and the
conditions between questions; every problem is reported with its file line
(rrsite.survey.loader reads the file and assembles the survey).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..core import (
    NAMED_DESIGNS,
    NUMBER_DESIGNS,
    Design,
    NumberDesign,
    Privacy,
    design_from_spec,
    number_design_from_spec,
    optimal_design,
    privacy_of,
)
from ..core.designs import check_probability
from ..core.frequency import FrequencyOracle
from . import frequency, schema, yaml_words
from .errors import Problems
from .model import Option, Question
from .render import plain_text, render_inline, render_prose
from .source import Heading, Prose, QuestionBlock

#: Keys that only make sense on a randomized question.
DESIGN_KEYS = (
    "randomize", "truth", "yes", "no", "p", "innocuous_rate", "innocuous", "mirrored", "p00",
    "p11", "matrix", "epsilon", "delta", "prior", "accept_no_epsilon", "red_yes", "red_no",
    "cards", "probability", "mask", "scramble", "complement", "anchor", "g", "d", "max_ticks",
    "wave_epsilon",
)
#: Keys that only make sense for some question types.
TYPE_KEYS: dict[str, tuple[str, ...]] = {
    "options": ("choice", "multi-choice"),
    "min": ("number",),
    "max": ("number",),
    "integer": ("number",),
    "max_length": ("text",),
    "unit": ("number",),
}
#: Keys a number design takes besides its parameters (mixture-unknown's innocuous question).
NUMBER_EXTRAS: dict[str, tuple[str, ...]] = {"mixture-unknown": ("innocuous",)}
#: Number designs' parameters a survey file must give, and why.
NUMBER_REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    "mixture": (("p", "the chance that the true number is sent"),
                ("mask", "the distribution drawn instead, e.g. {uniform: {min: 0, max: 30}}")),
    "mixture-unknown": (("p", "a list of two: the chance of sending the true number in group 1 "
                              "and in group 2"),
                        ("innocuous", "the innocuous number question's text")),
    "additive": (("scramble", "the distribution of the number added, e.g. {normal: {mean: 0, "
                              "sd: 500}}"),),
    "multiplicative": (("scramble", "the distribution of the positive factor, e.g. {uniform: "
                                    "{min: 0.5, max: 1.5}}"),),
    "laplace": (("epsilon", "the privacy budget of the mechanism"),
                ("min", "the smallest answer (the range the privacy covers)"),
                ("max", "the largest answer")),
    "duchi": (("epsilon", "the privacy budget of the mechanism"),
              ("min", "the smallest answer"), ("max", "the largest answer")),
    "piecewise": (("epsilon", "the privacy budget of the mechanism"),
                  ("min", "the smallest answer"), ("max", "the largest answer")),
}
#: Designs for yes/no questions only (k-rr and matrix work for any number of answers).
BINARY_ONLY = (
    "forced-response", "forced-yes", "warner", "unrelated", "crosswise", "triangular", "mangat",
    "kuk", "unrelated-unknown", "cdm", "cdm-sym", "sld", "extended-crosswise",
)
#: Keys a design takes besides its core parameters.
DESIGN_EXTRAS: dict[str, tuple[str, ...]] = {
    "unrelated": ("innocuous",), "warner": ("mirrored",), "unrelated-unknown": ("innocuous",),
    "crosswise": ("innocuous", "anchor"), "triangular": ("innocuous",),
    "extended-crosswise": ("innocuous", "complement"),
}
#: Designs that need a parameter a survey file must give (no sensible default), and why.
REQUIRED_PARAMS: dict[str, tuple[tuple[str, str], ...]] = {
    "crosswise": (("p", "the known yes-rate of the innocuous statement"),
                  ("innocuous", "the innocuous statement's text")),
    "triangular": (("p", "the known yes-rate of the innocuous statement"),
                   ("innocuous", "the innocuous statement's text")),
    "extended-crosswise": (("p", "the known yes-rate of group 1's innocuous statement"),
                           ("innocuous", "group 1's innocuous statement, true for p of people"),
                           ("complement", "group 2's innocuous statement, true for 1 - p of "
                                          "people (the complement of group 1's)")),
    "kuk": (("red_yes", "the red-card proportion of the deck for respondents with the attribute"),
            ("red_no", "the red-card proportion of the other deck")),
    "unrelated-unknown": (("p", "a list of two: P(sensitive question) in group 1 and group 2"),
                          ("innocuous", "the innocuous question's text")),
    "cdm": (("p", "a list of two: P(forced yes) in group 1 and group 2"),),
    "cdm-sym": (("yes", "a list of two: P(forced yes) per group"),
                ("no", "a list of two: P(forced no) per group")),
    "sld": (("p", "a list of two: P(a non-carrier is shown \"I have A\") per group"),),
}
#: Errors core raises for impossible parameters (their messages name the parameter and value).
DESIGN_FAILURES = (ValueError, TypeError, ArithmeticError)
#: Fewest answers a choice question may have.
MIN_OPTIONS = 2


@dataclass
class RawQuestion:
    """A heading, the question fence under it, and the prose around it, as the file has them."""

    heading: Heading | None
    block: QuestionBlock
    help: list[Prose] = field(default_factory=list)
    before: list[Prose] = field(default_factory=list)
    page: int = 1


@dataclass
class Defaults:
    """What the front matter gives every question: epsilon, delta, priors (and broken keys)."""

    epsilon: float | None = None
    delta: float = 0.0
    priors: dict[str, tuple[float, int]] = field(default_factory=dict)
    broken: set[str] = field(default_factory=set)
    #: The repeated study this survey is one wave of (``series:``), or None.
    series: frequency.Series | None = None

    @classmethod
    def from_front(cls, front: schema.Fields | None,
                   problems: Problems | None = None) -> Defaults:
        """The defaults of a front matter (none when it failed to parse)."""
        if front is None:
            return cls()
        privacy = front.get("privacy")
        epsilon = privacy.get("epsilon") if privacy is not None else None
        delta = privacy.get("delta") if privacy is not None else 0.0
        series = frequency.read_series(
            front, problems if problems is not None else Problems("<survey>"))
        return cls(epsilon, float(delta), dict(front.get("priors") or {}), series=series)


# --------------------------------------------------------------------------------------------
# Questions


def build_question(
    raw: RawQuestion,
    words: dict[str, str],
    defaults: Defaults,
    problems: Problems,
    before: list[Prose],
) -> Question | None:
    """One question from its heading and fence, or None when the fence cannot make one."""
    if not raw.block.closed:
        return None  # reported; its "YAML" runs to the end of the file
    known = len(problems.errors)
    node = yaml_words.compose(raw.block.yaml_text, problems, "the question block")
    if node is None:
        if len(problems.errors) == known:
            problems.error(raw.block.line, "the question block is empty: give at least id and type")
        return None
    fields = schema.read_block(schema.QUESTION, node, problems, raw.block.line)
    qtype = fields.get("type")
    qid = fields.get("id")
    heading_line = raw.heading.line if raw.heading is not None else raw.block.line
    text = raw.heading.text if raw.heading is not None else ""
    if raw.heading is not None and not text:
        problems.error(heading_line, "the question heading is empty: write the question after "
                                     "'## '")
    for key, types in TYPE_KEYS.items():
        if fields.given(key) and qtype is not None and qtype not in types:
            problems.error(fields.line_of(key), f"{key} applies to {' and '.join(types)} "
                                                f"questions, not {qtype}")
    options = read_options(fields, qtype, words, problems)
    number_design: NumberDesign | None = None
    oracle: FrequencyOracle | None = None
    if qtype == "number" and fields.get("randomize") in NUMBER_DESIGNS:
        design, chosen_for, prior = None, None, None
        number_design, privacy = read_number_design(fields, problems)
    elif frequency.applies(fields, qtype) and qtype is not None:
        # frequency oracles, auto, and "tick all that apply" (rrsite.survey.frequency)
        design, privacy, chosen_for, prior = None, None, None, None
        found = None if options is None else frequency.read(
            fields, qtype, [o.value for o in options], defaults.epsilon, problems, DESIGN_KEYS,
            defaults.series)
        if found is not None:
            chosen, privacy, chosen_for = found
            if isinstance(chosen, FrequencyOracle):
                oracle = chosen
            else:
                design = chosen
    else:
        design, privacy, chosen_for, prior = read_design(fields, qtype, options, defaults, problems)
    memo = frequency.memoize(fields, oracle or design or number_design, defaults.series,
                             problems)
    if qid is None or qtype is None or raw.heading is None or not text:
        return None
    text_html = render_inline(text)
    question = Question(
        id=qid,
        type=qtype,
        text=plain_text(text_html),
        text_html=text_html,
        line=fields.line_of("id"),
        required=fields.get("required") if fields.given("required") else (
            design is not None or number_design is not None or oracle is not None),
        options=options or [],
        help_html=render_prose(raw.help),
        before_html=render_prose(before),
        prose_source=[(part.line + offset, line) for part in (*before, *raw.help)
                      for offset, line in enumerate(part.lines)],
        design=design,
        privacy=privacy,
        accept_no_epsilon=bool(fields.get("accept_no_epsilon")),
        prior=prior,
        chosen_for=chosen_for,
        number_design=number_design,
        oracle=oracle,
        memo=memo,
        fields=fields,
    )
    if fields.given("unit"):
        question.unit = fields.get("unit")
    if fields.given("short"):
        question.short = fields.get("short")
    if qtype == "number":
        question.minimum, question.maximum = fields.get("min"), fields.get("max")
        question.integer = bool(fields.get("integer"))
        if question.minimum is not None and question.maximum is not None and (
            question.minimum > question.maximum
        ):
            problems.error(fields.line_of("max"), f"max ({question.maximum:g}) is below min "
                                                  f"({question.minimum:g})")
    if qtype == "text":
        question.max_length = int(fields.get("max_length"))
    if fields.get("practice"):
        if design is None or qtype != "yes-no":
            problems.error(fields.line_of("practice"), "practice applies to randomized yes-no "
                           "questions: its practice round runs the question's own design on a "
                           "neutral yes-no question")
        else:
            question.practice = True
    condition = fields.get("show_if")
    if condition is not None and condition.given("question") and condition.given("is"):
        question.show_if = {"question": condition.get("question"), "is": condition.get("is"),
                            "line": fields.line_of("show_if"),
                            "is_line": condition.line_of("is")}
    if fields.given("innocuous"):
        question.innocuous = fields.get("innocuous")
        question.innocuous_html = render_inline(fields.get("innocuous"))
    if fields.given("mirrored"):
        question.mirrored = fields.get("mirrored")
        question.mirrored_html = render_inline(fields.get("mirrored"))
    if fields.given("complement"):  # extended crosswise: group 2's innocuous statement
        question.complement = fields.get("complement")
        question.complement_html = render_inline(fields.get("complement"))
    if fields.get("anchor"):  # a crosswise anchor question: its statement is false for all
        question.anchor = True
    return question


def make_option(value: str, label: str, line: int) -> Option:
    """An option with its label rendered as inline Markdown."""
    label_html = render_inline(label)
    return Option(value, label, label_html, plain_text(label_html) or value, line)


def read_options(
    fields: schema.Fields, qtype: str | None, words: dict[str, str], problems: Problems
) -> list[Option] | None:
    """The answers of a question: yes-no's two, or a choice's options checked."""
    if qtype == "yes-no":
        return [make_option("no", words["no"], fields.line), make_option("yes", words["yes"],
                                                                           fields.line)]
    if qtype not in ("choice", "multi-choice"):
        return None
    if not fields.given("options"):
        if "options" not in fields.lines:
            problems.error(fields.line, f"a {qtype} question needs options: a list of its answers, "
                                        "e.g. options: [First, Second, Third]")
        return None
    specs: list[schema.OptionSpec] = fields.get("options")
    if len(specs) < MIN_OPTIONS:
        problems.error(fields.line_of("options"), f"a {qtype} question needs at least "
                                                  f"{MIN_OPTIONS} options, got {len(specs)}")
    return [make_option(spec.value, spec.label, spec.line) for spec in specs]


def read_design(
    fields: schema.Fields,
    qtype: str | None,
    options: list[Option] | None,
    defaults: Defaults,
    problems: Problems,
) -> tuple[Design | None, Privacy | None, dict[str, Any] | None, float | None]:
    """The design of a randomized question (None for a direct one), its privacy and prior."""
    name = fields.get("randomize")
    sensitive = fields.get("sensitive") if fields.given("sensitive") else None
    stated_epsilon = fields.given("epsilon")
    if any(key in fields.lines and not fields.given(key)
           for key in ("randomize", "epsilon", "sensitive")):
        return None, None, None, None  # meant to be randomized, but unreadable: reported
    if sensitive is False and (name is not None or stated_epsilon):
        problems.error(fields.line_of("sensitive"), "sensitive: false conflicts with "
                       + ("randomize" if name is not None else "epsilon")
                       + ": remove one of them")
        return None, None, None, None
    if name is None and not stated_epsilon and sensitive is not True:
        for key in DESIGN_KEYS:
            if fields.given(key):
                problems.error(fields.line_of(key), f"{key} applies to randomized questions; add "
                                                    "`randomize: <design>` or `epsilon: <budget>`, "
                                                    "or remove it")
        return None, None, None, None
    where = "randomize" if name is not None else ("epsilon" if stated_epsilon else "sensitive")
    if name in NUMBER_DESIGNS:
        problems.error(fields.line_of("randomize"), f"design {name} is for number questions "
                       f"(type: number); a {qtype} question can use "
                       f"{', '.join(NAMED_DESIGNS)}")
        return None, None, None, None
    if qtype == "number":
        problems.error(fields.line_of(where), "a number question is randomized with "
                       f"`randomize:` and one of {', '.join(NUMBER_DESIGNS)} "
                       "(docs/explanation/number-designs.md)"
                       + ("" if name is None else f"; {name} is for yes-no and choice questions"))
        return None, None, None, None
    if qtype is not None and qtype not in schema.RANDOMIZABLE_TYPES:
        problems.error(fields.line_of(where), f"only {', '.join(schema.RANDOMIZABLE_TYPES)} "
                                              f"questions can be randomized; a {qtype} question "
                                              "is asked directly")
        return None, None, None, None
    if qtype is None or options is None:
        return None, None, None, None
    values = [option.value for option in options]
    prior = read_prior(fields, qtype, defaults, problems)
    if name is not None:
        result = named_design(name, fields, qtype, values, problems)
        if result is None:
            return None, None, None, prior
        design, privacy = result
        chosen_for = None
    else:
        result2 = chosen_design(fields, qtype, values, defaults, prior, problems)
        if result2 is None:
            return None, None, None, prior
        design, privacy, chosen_for = result2
    accept = bool(fields.get("accept_no_epsilon"))
    if math.isinf(privacy.epsilon) and not accept:
        reasons = "; ".join(privacy.reasons)
        problems.error(fields.line_of(where), f"design {design.name} is not differentially "
                       f"private for any epsilon: {reasons}. Add `accept_no_epsilon: true` if you "
                       "accept that")
        return None, None, None, prior
    if accept and math.isfinite(privacy.epsilon):
        problems.error(fields.line_of("accept_no_epsilon"), "accept_no_epsilon: true, but this "
                       f"design has epsilon {privacy.epsilon:.6g}: remove the line")
        return None, None, None, prior
    return design, privacy, chosen_for, prior


def read_number_design(
    fields: schema.Fields, problems: Problems
) -> tuple[NumberDesign | None, Privacy | None]:
    """The design of a randomized number question (rrsite.core.numbers) and its privacy."""
    name = fields.get("randomize")
    params = NUMBER_DESIGNS[name]
    takes = list(params) + list(NUMBER_EXTRAS.get(name, ()))
    ok = True
    for key in DESIGN_KEYS:
        if key in ("randomize", "accept_no_epsilon", "wave_epsilon") or not fields.given(key):
            continue
        if key not in takes:
            problems.error(fields.line_of(key), f"{key} is not a parameter of {name} ({name} "
                           f"takes {', '.join(takes)})")
            ok = False
    for key, what in NUMBER_REQUIRED.get(name, ()):
        if not fields.given(key) and key not in fields.lines:
            problems.error(fields.line_of("randomize"), f"design {name} needs {key}: {what}")
            ok = False
    if not ok or any(key in fields.lines and not fields.given(key)
                     for key in (*takes, "min", "max", "integer")):
        return None, None
    spec: dict[str, Any] = {"name": name}
    for key in params:
        if fields.given(key):
            spec[key] = fields.get(key)
    spec["min"], spec["max"] = fields.get("min"), fields.get("max")
    spec["integer"] = bool(fields.get("integer"))
    if spec["min"] is not None and spec["max"] is not None and spec["min"] > spec["max"]:
        return None, None  # one mistake, one message: the question's "max is below min"
    try:
        design = number_design_from_spec(spec)
    except DESIGN_FAILURES as error:
        message = str(error)
        fallback = fields.line_of("randomize")
        keys = [*params, "min", "max"]
        first = message.split(":")[0].split()[0] if message else ""
        line = fields.line_of(first) if first in keys and fields.given(first) else \
            line_for(message, fields, keys, fallback)
        problems.error(line, message)
        return None, None
    privacy = design.privacy()
    accept = bool(fields.get("accept_no_epsilon"))
    if math.isinf(privacy.epsilon) and not accept:
        problems.error(fields.line_of("randomize"), f"design {name} is not differentially "
                       f"private for any epsilon here: {'; '.join(privacy.reasons)}. Add "
                       "`accept_no_epsilon: true` if you accept that")
        return None, None
    if accept and math.isfinite(privacy.epsilon):
        problems.error(fields.line_of("accept_no_epsilon"), "accept_no_epsilon: true, but this "
                       f"design has epsilon {privacy.epsilon:.6g}: remove the line")
        return None, None
    return design, privacy


def read_prior(
    fields: schema.Fields, qtype: str, defaults: Defaults, problems: Problems
) -> float | None:
    """The question's prior guess of the yes-rate (for an optimal design), or None."""
    qid = fields.get("id")
    if fields.given("prior"):
        if qtype != "yes-no":
            problems.error(fields.line_of("prior"), "prior applies to yes-no questions only")
            return None
        if qid in defaults.priors:
            problems.error(fields.line_of("prior"), f"the prior of '{qid}' is also given in the "
                           f"front matter's priors (line {defaults.priors[qid][1]}): keep one")
        value = fields.get("prior")
        line = fields.line_of("prior")
    elif qid in defaults.priors:
        value, line = defaults.priors[qid]
    else:
        return None
    try:
        return check_probability("prior", value)
    except DESIGN_FAILURES as error:
        problems.error(line, str(error))
        return None


def line_for(message: str, fields: schema.Fields, keys: list[str], fallback: int) -> int:
    """The line of the parameter a core message names (it starts with the name), else fallback."""
    keys = [key for key in keys if key in fields.lines]
    if message.startswith("design "):
        return fallback  # about the design as a whole ("design matrix needs p00 and p11")
    for key in sorted(keys, key=len, reverse=True):
        if message.startswith(key + " ") or message.startswith(key + "[") or (
            message.startswith("matrix") and key == "matrix"
        ):
            return fields.line_of(key)
    for key in sorted(keys, key=len, reverse=True):
        if f" {key} " in f" {message} ":
            return fields.line_of(key)
    return fallback


def named_design(
    name: str, fields: schema.Fields, qtype: str, values: list[str], problems: Problems
) -> tuple[Design, Privacy] | None:
    """A design named in the fence, built from its parameters, with its privacy."""
    params = [param for param in NAMED_DESIGNS[name] if param != "k"]
    takes = params + list(DESIGN_EXTRAS.get(name, ()))
    ok = True
    for key in DESIGN_KEYS:
        if key in ("randomize", "accept_no_epsilon", "prior", "wave_epsilon") or \
                not fields.given(key):
            continue
        if key not in takes:
            if key in ("epsilon", "delta"):
                hint = (f"{key} is for questions without `randomize`, where rrsite chooses the "
                        f"design; {name}'s epsilon follows from its parameters")
            else:
                hint = f"{key} is not a parameter of {name}"
            problems.error(fields.line_of(key), f"{hint} ({name} takes {', '.join(takes)})")
            ok = False
    if name in BINARY_ONLY and qtype != "yes-no":
        problems.error(fields.line_of("randomize"), f"design {name} is for yes-no questions; a "
                       f"{qtype} question can use k-rr or matrix")
        return None
    spec: dict[str, Any] = {"name": name}
    for param in params:
        if fields.given(param):
            spec[param] = fields.get(param)
    if name == "unrelated":
        for key in ("innocuous_rate", "innocuous"):
            if not fields.given(key) and key not in fields.lines:
                what = ("the known yes-rate of the innocuous question" if key == "innocuous_rate"
                        else "the innocuous question's text")
                problems.error(fields.line_of("randomize"), f"design unrelated needs {key}: {what}")
                ok = False
    for key, what in REQUIRED_PARAMS.get(name, ()):
        if not fields.given(key) and key not in fields.lines:
            problems.error(fields.line_of("randomize"), f"design {name} needs {key}: {what}")
            ok = False
    if name == "k-rr":
        spec["k"] = len(values)
        if not fields.given("epsilon") and not fields.given("p"):
            if "epsilon" not in fields.lines and "p" not in fields.lines:
                problems.error(fields.line_of("randomize"), "design k-rr needs epsilon or p (the "
                                                            "probability of reporting the truth)")
            return None
        if fields.given("epsilon") and fields.given("p"):
            problems.error(fields.line_of("p"), "design k-rr takes epsilon or p, not both")
            return None
    if name == "matrix":
        if qtype != "yes-no" and (fields.given("p00") or fields.given("p11")):
            problems.error(fields.line_of("p00" if fields.given("p00") else "p11"),
                           f"p00 and p11 describe a yes-no design; give this {qtype} question a "
                           f"{len(values)} x {len(values)} matrix")
            return None
        if qtype != "yes-no" and "matrix" not in fields.lines:
            problems.error(fields.line_of("randomize"), f"design matrix needs matrix: "
                           f"{len(values)} rows of {len(values)} probabilities, one row per answer")
            return None
        if fields.given("matrix") and len(fields.get("matrix")) != len(values):
            problems.error(fields.line_of("matrix"), f"matrix has {len(fields.get('matrix'))} rows "
                           f"but the question has {len(values)} answers ({', '.join(values)})")
            return None
    if not ok:
        return None
    if any(param not in spec and param in fields.lines for param in params):
        return None  # a parameter was written but unreadable: already reported
    try:
        design = design_from_spec(spec)
    except DESIGN_FAILURES as error:
        message = str(error)
        problems.error(line_for(message, fields, params, fields.line_of("randomize")), message)
        return None
    return design, privacy_of(design, labels=values)


def chosen_design(
    fields: schema.Fields,
    qtype: str,
    values: list[str],
    defaults: Defaults,
    prior: float | None,
    problems: Problems,
) -> tuple[Design, Privacy, dict[str, Any]] | None:
    """The design rrsite chooses from an epsilon for a yes-no question: the optimal one.

    Choice and multi-choice questions under an epsilon get ``auto`` (rrsite.survey.frequency).
    """
    for key in DESIGN_KEYS:
        if fields.given(key) and key not in ("epsilon", "delta", "prior", "accept_no_epsilon",
                                             "wave_epsilon"):
            using = [name for name, params in NAMED_DESIGNS.items() if key in params] or [
                name for name, extras in DESIGN_EXTRAS.items() if key in extras
            ]
            problems.error(fields.line_of(key), f"{key} is a parameter of {' and '.join(using)}: "
                           f"add `randomize: {using[0]}`, or remove it to let epsilon choose the "
                           "design")
            return None
    epsilon = fields.get("epsilon") if fields.given("epsilon") else defaults.epsilon
    if epsilon is None:
        if "epsilon" not in fields.lines:
            problems.error(fields.line_of("sensitive"), "sensitive: true without randomize or "
                           "epsilon needs a default epsilon: add epsilon here, or privacy.epsilon "
                           "to the front matter")
        return None
    delta = fields.get("delta") if fields.given("delta") else defaults.delta
    guess = 0.5 if prior is None else prior
    try:
        best = optimal_design(epsilon, delta, guess)
    except DESIGN_FAILURES as error:
        problems.error(fields.line_of("epsilon"), str(error))
        return None
    design = best.design
    if delta > 0:
        found = privacy_of(design, epsilon, labels=values)
        privacy = Privacy(epsilon, delta if abs(found.delta - delta) < 1e-12 else found.delta,
                          found.reasons)
    else:
        privacy = privacy_of(design, labels=values)
    if len(best.designs) > 1:
        tied = ", ".join(f"{label} (p00 = {d.p00:.4g}, p11 = {d.p11:.4g})"
                         for label, d in zip(best.labels, best.designs, strict=True))
        problems.warn(fields.line_of("epsilon"), f"several designs are optimal at prior {guess:g}: "
                      f"{tied}; using {best.labels[0]}")
    chosen = {"epsilon": epsilon, "delta": delta, "prior": guess, "vertex": best.labels[0]}
    return design, privacy, chosen


# --------------------------------------------------------------------------------------------
# Conditions (show_if)

#: Question types whose answers a condition can name.
CONDITION_TYPES = ("yes-no", "choice", "multi-choice")


def check_conditions(questions: list[Question], problems: Problems) -> None:
    """Every show_if names an earlier direct question and some of its answers; lines kept apart."""
    earlier: dict[str, Question] = {}
    for question in questions:
        condition = question.show_if
        if condition is not None:
            target_id = condition.pop("question")
            values = condition.pop("is")
            line, is_line = condition.pop("line"), condition.pop("is_line")
            target = earlier.get(target_id)
            later = {q.id for q in questions} - set(earlier)
            if target is None:
                problems.error(line, f"show_if: '{target_id}' is a later question: a condition "
                               "can only look back" if target_id in later else
                               f"show_if: no question has id '{target_id}'"
                               f"{schema.suggest(target_id, earlier)}")
                question.show_if = None
            elif target.sensitive:
                problems.error(line, f"show_if depends on '{target_id}', a randomized question: "
                               "which questions follow would reveal its true answer, which the "
                               "randomization exists to hide (the true answer never leaves the "
                               "device). Condition on a direct question instead")
                question.show_if = None
            elif target.type not in CONDITION_TYPES:
                problems.error(line, f"show_if: '{target_id}' is a {target.type} question; a "
                               f"condition needs a {', '.join(CONDITION_TYPES)} question")
                question.show_if = None
            else:
                unknown = [value for value in values if value not in target.values]
                for value in unknown:
                    problems.error(is_line, f"show_if: '{value}' is not an answer of "
                                   f"'{target_id}' ({', '.join(target.values)})"
                                   f"{schema.suggest(value, target.values)}")
                question.show_if = {"question": target_id, "is": values} if not unknown else None
        earlier[question.id] = question
