"""The validated survey: questions with their designs, and the manifest (docs/contracts.md)."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import Design, NumberDesign, Privacy, TwoGroupDesign
from ..core.frequency import FrequencyOracle, Memoized
from ..core.numbers import MixtureUnknown
from .bundle import core_hash
from .catalog import Catalog
from .errors import SurveyError
from .frequency import Series, ledger

MANIFEST_FORMAT = 1
COLLECTOR_URL = "/api/submissions"


#: Significant digits at which rrsite prints epsilons, and at which a survey's epsilons are
#: compared with its privacy budget: a sum that prints equal to the budget is within it (a design
#: copied from `rrsite plan` at the digits it prints may spend 1.0000021 of a budget of 1).
BUDGET_DIGITS = 6


def over_budget(spent: float, budget: float) -> bool:
    """Whether ``spent`` exceeds ``budget`` once both are rounded to :data:`BUDGET_DIGITS`."""
    return spent > budget and f"{spent:.{BUDGET_DIGITS}g}" != f"{budget:.{BUDGET_DIGITS}g}"


def shown_apart(value: float, other: float) -> str:
    """``value`` with the digits that tell it from ``other`` (at least BUDGET_DIGITS).

    1.00021 beside a budget of 1, never 1 beside 1.
    """
    for digits in range(BUDGET_DIGITS, 18):
        shown = f"{value:.{digits}g}"
        if shown != f"{other:.{digits}g}":
            return shown
    return repr(value)


@dataclass(frozen=True)
class Option:
    """One answer: the value stored and exported, its label (Markdown) and the label as HTML."""

    value: str
    label: str
    label_html: str
    label_text: str
    line: int


@dataclass
class Question:
    """One question: text, answers, and for a sensitive question its design and privacy."""

    id: str
    type: str
    text: str
    text_html: str
    line: int
    required: bool
    options: list[Option] = field(default_factory=list)
    help_html: str = ""
    before_html: str = ""
    #: The Markdown source of the prose shown with it (before its heading, and between heading
    #: and block), ``(file line, text)`` per line, for `rrsite check`'s warnings.
    prose_source: list[tuple[int, str]] = field(default_factory=list)
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False
    max_length: int | None = None
    design: Design | None = None
    privacy: Privacy | None = None
    accept_no_epsilon: bool = False
    prior: float | None = None
    innocuous: str | None = None
    innocuous_html: str = ""
    mirrored: str | None = None
    mirrored_html: str = ""
    #: extended-crosswise: group 2's innocuous statement (true for 1 - p).
    complement: str | None = None
    complement_html: str = ""
    #: A crosswise anchor question (its statement is false for everyone; not in the budget).
    anchor: bool = False
    chosen_for: dict[str, Any] | None = None
    #: ``{"question": id, "is": [values]}``: shown only when that direct question has one of them.
    show_if: dict[str, Any] | None = None
    #: Its page (1-based) when the survey is split into pages with ``+++``, else None.
    page: int | None = None
    #: A practice round of its device comes first (randomized yes-no questions).
    practice: bool = False
    #: A randomized number question's design (rrsite.core.numbers); ``design`` is then None.
    number_design: NumberDesign | None = None
    #: The unit shown beside a number (``EUR``, ``days``).
    unit: str | None = None
    #: A frequency oracle (choice or multi-choice; rrsite.core.frequency); ``design`` is then None.
    oracle: FrequencyOracle | None = None
    #: In a series: the permanent report kept across waves and each wave's re-randomization.
    memo: Memoized | None = None
    #: The question block's keys as read (a translation's are compared with them), or None.
    fields: Any = field(default=None, repr=False, compare=False)
    #: A question the build adds (rrsite.survey.fielding): ``language``, ``arm``, ``check`` or
    #: ``direct``; None for the survey's own questions.
    role: str | None = None
    #: The manifest keys of an added question (``check``, ``direct``, ``direct_share``).
    role_info: dict[str, Any] = field(default_factory=dict)
    #: Answers of a direct question that screen a panel participant out (``screen_out:``).
    screen_out: list[str] | None = None
    #: The short name for reports, the codebook and variable labels (``short:``).
    short: str | None = None

    @property
    def sensitive(self) -> bool:
        """Randomized in the browser before it is sent."""
        return self.design is not None or self.number_design is not None or \
            self.oracle is not None

    @property
    def wave_privacy(self) -> Privacy | None:
        """The privacy of one wave's report (the question's own, outside a series)."""
        if self.memo is not None:
            return Privacy(self.memo.epsilon(1), 0.0)
        return self.privacy

    def spec(self) -> dict[str, Any] | None:
        """The design's spec (a matrix design's, a number design's or an oracle's), or None."""
        design = self.design or self.number_design or self.oracle
        return None if design is None else design.spec()

    @property
    def values(self) -> list[str]:
        """The possible answers, index-aligned with the design matrix (yes-no: no, yes)."""
        return [option.value for option in self.options]

    def manifest(self) -> dict[str, Any]:
        """The question's entry in survey.json."""
        entry: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "type": self.type,
            "sensitive": self.sensitive,
            "required": self.required,
        }
        if self.short is not None:
            entry["short"] = self.short
        if self.options:
            entry["values"] = self.values
            entry["options"] = [{"value": o.value, "label": o.label_text} for o in self.options]
        if self.type == "number":
            entry.update({"min": self.minimum, "max": self.maximum, "integer": self.integer})
            if self.unit is not None:
                entry["unit"] = self.unit
        if self.number_design is not None and self.privacy is not None:
            entry["design"] = self.number_design.spec()
            epsilon = self.privacy.epsilon
            entry["epsilon"] = None if math.isinf(epsilon) else epsilon
            entry["delta"] = self.privacy.delta
            if math.isinf(epsilon):
                entry["not_private"] = list(self.privacy.reasons)
            if isinstance(self.number_design, MixtureUnknown):
                entry["groups"] = [{"id": 1, "probability": self.number_design.probability},
                                   {"id": 2, "probability": 1 - self.number_design.probability}]
            if self.innocuous is not None:
                entry["innocuous"] = self.innocuous
        if self.type == "text":
            entry["max_length"] = self.max_length
        if self.page is not None:
            entry["page"] = self.page
        if self.practice:
            entry["practice"] = True
        if self.show_if is not None:
            entry["show_if"] = {"question": self.show_if["question"],
                                "is": list(self.show_if["is"])}
        if self.oracle is not None and self.privacy is not None:
            oracle = self.oracle
            entry["design"] = oracle.spec()
            entry["oracle"] = {"p": oracle.p, "q": oracle.q, "ratio": oracle.ratio}
            entry["epsilon"], entry["delta"] = self.privacy.epsilon, self.privacy.delta
            if self.chosen_for is not None:
                entry["chosen_for"] = dict(self.chosen_for)
        if self.role is not None:
            entry["role"] = self.role
            entry.update(self.role_info)
        if self.screen_out is not None:
            entry["screen_out"] = list(self.screen_out)
        if self.design is not None and self.privacy is not None:
            entry["design"] = self.design.spec()
            if isinstance(self.design, TwoGroupDesign):
                entry["groups"] = self.design.groups()
            else:
                entry["matrix"] = [list(row) for row in self.design.matrix]
            reports = self.design.report_values()
            if reports is not None:
                entry["reports"] = list(reports)
            entry["rrreg"] = self.design.rrreg()
            epsilon = self.privacy.epsilon
            entry["epsilon"] = None if math.isinf(epsilon) else epsilon
            entry["delta"] = self.privacy.delta
            if self.privacy.reasons and math.isinf(epsilon):
                entry["not_private"] = list(self.privacy.reasons)
            if self.chosen_for is not None:
                entry["chosen_for"] = dict(self.chosen_for)
            if self.prior is not None:
                entry["prior"] = self.prior
            if self.innocuous is not None:
                entry["innocuous"] = self.innocuous
            if self.mirrored is not None:
                entry["mirrored"] = self.mirrored
            if self.complement is not None:
                entry["complement"] = self.complement
            if self.anchor:
                entry["anchor"] = True
        if self.memo is not None:  # a panel: one wave's epsilon; the bound is epsilon_all_waves
            entry["memoize"] = self.memo.spec()
            entry["epsilon"] = self.memo.epsilon(1)
        return entry

    def meaning(self) -> dict[str, Any]:
        """What the version hash covers for this question (docs/contracts.md)."""
        meaning = {
            "id": self.id,
            "type": self.type,
            "sensitive": self.sensitive,
            "values": self.values,
            "design": self.spec(),
            "matrix": (
                [list(row) for row in self.design.matrix] if self.design is not None else None
            ),
            "required": self.required,
            "min": self.minimum,
            "max": self.maximum,
        }
        if self.show_if is not None:  # only when given, so that older versions do not change
            meaning["show_if"] = self.show_if
        if self.memo is not None:  # likewise: a panel's re-randomization changes the reports
            meaning["memoize"] = {"wave_epsilon": self.memo.wave_epsilon}
        if self.anchor:  # the analysis corrects the other crosswise questions with it
            meaning["anchor"] = True
        return meaning


@dataclass
class Survey:
    """A survey file, parsed and validated; ``manifest()`` is what `rrsite build` writes."""

    path: Path
    file: str
    id: str
    title: str
    language: str
    questions: list[Question]
    submit: dict[str, str]
    epsilon: float | None = None
    delta: float = 0.0
    budget: float | None = None
    intro_html: str = ""
    outro_html: str = ""
    review: str = "full"
    lines: dict[str, int] = field(default_factory=dict)
    warnings: list[SurveyError] = field(default_factory=list)
    #: The consent text (Markdown) and its HTML, when the front matter gives ``consent:``.
    consent: str | None = None
    consent_html: str = ""
    #: Page titles ("" when untitled), one per page, when the file has page breaks (``+++``).
    pages: list[str] = field(default_factory=list)
    #: Questions shown in an order drawn on the device, page by page (``shuffle: true``).
    shuffle: bool = False
    #: ``web`` (one respondent per device) or ``kiosk`` (many in turn, an offline queue).
    mode: str = "web"
    #: The Markdown source of the introduction and of the closing text, ``(file line, text)`` per
    #: line (for `rrsite check`'s warnings about words meant for the author).
    intro_source: list[tuple[int, str]] = field(default_factory=list)
    outro_source: list[tuple[int, str]] = field(default_factory=list)
    #: The survey's own message catalog (front matter ``messages:``), if it brings one.
    messages: Catalog | None = None
    #: The repeated study this survey is one wave of (front matter ``series:``), or None.
    series: Series | None = None
    #: The survey's languages (``languages:``), its own first; empty for a one-language survey.
    languages: list[str] = field(default_factory=list)
    #: The survey in each of its other languages (its translation file), by language code.
    translations: dict[str, Survey] = field(default_factory=dict)
    #: ``panel:`` as the manifest gives it (rrsite.survey.fielding), or None.
    panel: dict[str, Any] | None = None
    #: ``validation:`` as the manifest gives it (rrsite.survey.fielding), or None.
    validation: dict[str, Any] | None = None

    def question(self, question_id: str) -> Question:
        """The question with this id."""
        for question in self.questions:
            if question.id == question_id:
                return question
        raise KeyError(question_id)

    @property
    def sensitive_questions(self) -> list[Question]:
        """The randomized questions, in order."""
        return [question for question in self.questions if question.sensitive]

    def spent(self) -> tuple[float, float]:
        """(epsilon, delta) one respondent spends over the questions that have an epsilon."""
        epsilon = delta = 0.0
        for question in self.sensitive_questions:
            if question.anchor:  # its statement is false for all: it tells no attribute
                continue
            privacy = question.wave_privacy
            assert privacy is not None
            if math.isfinite(privacy.epsilon):
                epsilon += privacy.epsilon
                delta += privacy.delta
        return epsilon, min(delta, 1.0)

    @property
    def version(self) -> str:
        """16 hex digits of SHA-256 over what changes an answer's meaning (not prose, not core)."""
        # the page's language is not part of what an answer means: every language, one version
        meaning = {"id": self.id, "questions": [q.meaning() for q in self.questions
                                                if q.role != "language"]}
        canonical = json.dumps(meaning, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]

    def texts(self) -> dict[str, Any]:
        """The title and the question texts and option labels (a translation's, in the manifest)."""
        return {"title": self.title, "questions": {
            question.id: {"text": question.text, **({"options": {
                option.value: option.label_text for option in question.options}}
                if question.options else {})}
            for question in self.questions}}

    def fielding(self) -> dict[str, Any]:
        """The manifest keys of languages, panel and validation (docs/contracts.md); {} if none."""
        keys: dict[str, Any] = {}
        if self.languages:
            keys["languages"] = list(self.languages)
            keys["translations"] = {language: translation.texts()
                                    for language, translation in self.translations.items()}
        if self.panel is not None:
            keys["panel"] = dict(self.panel)
        if self.validation is not None:
            keys["validation"] = dict(self.validation)
        return keys

    def direct_arm(self) -> dict[str, Any]:
        """``privacy.direct_arm``: what the direct arm gives away; {} without a split."""
        if self.validation is None:
            return {}
        share = self.validation["direct_share"]
        direct = list(self.validation["direct"].values())
        return {"direct_arm": {
            "share": share, "questions": direct, "epsilon": None,
            "note": f"About {share:.0%} of respondents, drawn on each device, are asked "
                    f"{', '.join(self.validation['questions'])} directly ({', '.join(direct)}): "
                    "a direct answer is sent as given and has no deniability (no epsilon); "
                    "spent and budget are the randomized arm's."}}

    def manifest(self) -> dict[str, Any]:
        """The manifest dict of docs/contracts.md (``core_hash`` included)."""
        manifest = self._manifest()
        if self.series is not None:  # a wave of a repeated study: the ledger
            manifest["series"] = {"id": self.series.id, "wave": self.series.wave,
                                  "waves": self.series.waves}
            manifest["privacy"]["series"] = ledger(self.questions, self.series)
            for question, entry in zip(self.questions, manifest["questions"], strict=True):
                if question.memo is not None:
                    entry["memoize"]["ledger"] = question.memo.ledger(self.series.wave)
        return manifest

    def _manifest(self) -> dict[str, Any]:
        epsilon, delta = self.spent()
        return {
            "format": MANIFEST_FORMAT,
            "id": self.id,
            "title": self.title,
            "language": self.language,
            "version": self.version,
            "core_hash": core_hash(),
            "submit": dict(self.submit),
            "privacy": {
                "epsilon": self.epsilon,
                "delta": self.delta,
                "budget": self.budget,
                "spent": {"epsilon": epsilon, "delta": delta},
                "not_private": [
                    q.id for q in self.sensitive_questions
                    if q.privacy is not None and math.isinf(q.privacy.epsilon)
                ],
                **self.direct_arm(),
            },
            "questions": [question.manifest() for question in self.questions],
            **({"consent": self.consent} if self.consent is not None else {}),
            **({"pages": [{"title": title} for title in self.pages]} if self.pages else {}),
            **({"shuffle": True} if self.shuffle else {}),
            **({"mode": self.mode} if self.mode != "web" else {}),
            **self.fielding(),
        }
