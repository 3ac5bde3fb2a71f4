"""The designs an export is analysed against: manifests from survey files and built survey.json.

A row's (survey, version) picks its manifest; each sensitive question's design comes from
rrsite.core (``design_from_spec`` of the manifest's spec, checked against the manifest's matrix),
never re-derived here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core import (
    BinaryMatrix,
    CategoricalMatrix,
    Design,
    DesignError,
    NumberDesign,
    Privacy,
    TwoGroupDesign,
    compose,
    design_from_spec,
    number_design_from_spec,
    privacy_of,
)
from ..core.frequency import FREQUENCY_DESIGNS, FrequencyOracle, Memoized, oracle_from_spec
from ..errors import RRSiteError, UsageError

#: Question types whose answers are one value of ``values`` (these can be counted and grouped).
CHOICE_TYPES = ("yes-no", "choice")
KNOWN_TYPES = ("yes-no", "choice", "multi-choice", "number", "text")
#: A manifest's matrix and the design rebuilt from its spec agree within this tolerance.
MATRIX_TOLERANCE = 1e-9
#: Designs (by spec name) estimated with RRreg's models (rrsite.estimate.univariate.fit): their
#: reports may differ from the true answers, and the two-group ones carry each row's group.
RRREG_DESIGNS = ("crosswise", "triangular", "kuk", "mangat", "unrelated-unknown", "cdm",
                 "cdm-sym", "sld", "extended-crosswise")
#: The field of a two-group question's group: ``<question id>.group`` (docs/contracts.md).
GROUP_SUFFIX = ".group"


class ManifestError(RRSiteError):
    """A manifest (survey.json, or the one a survey file yields) cannot be used."""


@dataclass
class QuestionSpec:
    """One question of one manifest version, as the analyzer needs it."""

    id: str
    text: str
    type: str
    sensitive: bool
    required: bool
    values: tuple[str, ...]
    design: Design | None = None
    design_spec: dict[str, Any] | None = None
    privacy: Privacy | None = None
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False
    max_length: int = 500
    #: The values a row may report when they differ from ``values`` (crosswise, triangular, kuk).
    reports: tuple[str, ...] = ()
    #: Two-group designs: each answered row carries its group (1 or 2) in ``<id>.group``.
    two_group: bool = False
    #: The manifest's question object (what rrsite.estimate reads: ``rrreg``, ``reports``).
    manifest: dict[str, Any] = field(default_factory=dict)
    #: A randomized number question's design (rrsite.core.numbers); ``design`` is then None.
    number_design: NumberDesign | None = None
    #: The unit of a number question (``EUR``), or None.
    unit: str | None = None
    #: A frequency oracle (choice or multi-choice): one wave's report law (rrsite.core.frequency).
    oracle: FrequencyOracle | None = None
    #: In a series: the permanent report and the waves' re-randomization (its ledger).
    memo: Memoized | None = None
    #: The question's short name for reports and variable labels (``short:``), or None.
    short: str | None = None
    #: Each value's label as the respondent saw it (the manifest's ``options``).
    labels: dict[str, str] = field(default_factory=dict)
    #: A variable the page adds (``language``, ``arm``, ``check``, ``direct``), or None.
    role: str | None = None
    #: A comprehension check's ``{"question", "instruction", "correct"}`` (role ``check``).
    check: dict[str, Any] | None = None
    #: The randomized question this one asks directly in the direct arm (role ``direct``).
    direct_of: str | None = None
    #: A crosswise anchor question (its statement is false for everyone).
    anchor: bool = False

    @property
    def name(self) -> str:
        """The short name when the survey gives one, else the id."""
        return self.short or self.id

    def label(self, value: str) -> str:
        """A value's label (the value itself when it has none)."""
        return self.labels.get(value, value)

    @property
    def numeric(self) -> bool:
        """A randomized number question (estimated by rrsite.estimate.numbers)."""
        return self.number_design is not None

    @property
    def answers(self) -> tuple[str, ...]:
        """What a row may send: the reports of designs that have their own, else the values."""
        return self.reports or self.values

    @property
    def uses_rrreg(self) -> bool:
        """Estimated with RRreg's models (one of RRREG_DESIGNS) rather than the classic path."""
        return self.sensitive and (self.design_spec or {}).get("name") in RRREG_DESIGNS

    @property
    def matrix(self) -> np.ndarray:
        """The design matrix (values x values), from rrsite.core."""
        assert self.design is not None
        return np.asarray(self.design.matrix, dtype=np.float64)

    @property
    def binary(self) -> bool:
        """A sensitive yes/no question (MATH.md section 1); other sensitive ones are categorical."""
        return self.type == "yes-no"


@dataclass
class VersionSpec:
    """One manifest: a survey at one version."""

    survey: str
    version: str
    title: str
    source: str
    questions: list[QuestionSpec]
    budget: dict[str, Any] = field(default_factory=dict)
    #: The split ballot (``validation`` of the manifest): direct_share, questions, arm, direct.
    validation: dict[str, Any] = field(default_factory=dict)

    def question(self, qid: str) -> QuestionSpec | None:
        """The question with this id in this version, if any."""
        for question in self.questions:
            if question.id == qid:
                return question
        return None

    @property
    def privacy(self) -> Privacy:
        """Basic composition over the sensitive questions: what one respondent gives away.

        An anchor question is left out: its statement is false for everyone, so its report
        tells no sensitive attribute.
        """
        return compose(q.privacy for q in self.questions
                       if q.sensitive and q.privacy is not None and not q.anchor)


@dataclass
class Catalog:
    """Every version of one survey that rows may belong to, in the order they were given."""

    survey: str
    title: str
    versions: list[VersionSpec]

    @property
    def version_ids(self) -> list[str]:
        """The known versions, in order (the survey file's first, then manifests)."""
        return [v.version for v in self.versions]

    def question_ids(self) -> list[str]:
        """Every question id of every version, the primary version's order first."""
        return list(dict.fromkeys(q.id for version in self.versions for q in version.questions))

    def grouped_ids(self) -> list[str]:
        """Question ids that some version asks with a two-group design."""
        return [qid for qid in self.question_ids()
                if any(q.two_group for _, q in self.questions_named(qid))]

    def questions_named(self, qid: str) -> list[tuple[int, QuestionSpec]]:
        """(version index, question) for every version that has this question."""
        found = []
        for index, version in enumerate(self.versions):
            question = version.question(qid)
            if question is not None:
                found.append((index, question))
        return found


def _design_of(raw: Mapping[str, Any], values: Sequence[str], where: str) -> Design:
    """The design of a sensitive manifest question, from its spec, checked against its matrix."""
    spec = raw.get("design")
    matrix = raw.get("matrix")
    design: Design | None = None
    problem = ""
    if isinstance(spec, Mapping):
        try:
            design = design_from_spec(spec)
        except (DesignError, TypeError) as error:
            problem = str(error)
    if design is None:
        # e.g. a design chosen by `epsilon:` whose spec is not a named design: use the matrix
        if not isinstance(matrix, Sequence) or not matrix:
            reason = problem or "no design and no matrix"
            raise ManifestError(f"{where}: no usable design ({reason})")
        try:
            rows = tuple(tuple(float(x) for x in row) for row in matrix)
            if len(rows) == 2 and all(len(row) == 2 for row in rows):
                design = BinaryMatrix(rows[0][0], rows[1][1])
            else:
                design = CategoricalMatrix(rows)
        except (DesignError, TypeError, ValueError) as error:
            raise ManifestError(f"{where}: bad matrix: {error}") from error
    if design.k != len(values):
        raise ManifestError(
            f"{where}: the design has {design.k} answers but the question has {len(values)} values"
        )
    if isinstance(matrix, Sequence) and matrix:
        try:
            given = np.asarray(matrix, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ManifestError(f"{where}: bad matrix: {error}") from error
        built = np.asarray(design.matrix, dtype=np.float64)
        if given.shape != built.shape or np.max(np.abs(given - built)) > MATRIX_TOLERANCE:
            raise ManifestError(
                f"{where}: the manifest's matrix {given.tolist()} does not match its design "
                f"{dict(spec) if isinstance(spec, Mapping) else spec} ({built.tolist()})"
            )
    return design


def _reports_and_groups(
    raw: Mapping[str, Any], design: Design, where: str
) -> tuple[tuple[str, ...], bool]:
    """The question's own report values (empty when they are its values), and its groups.

    The reports come from the design (checked against the manifest's ``reports``); the second
    item says whether the design has two groups.
    """
    own = design.report_values()
    given = raw.get("reports")
    if given is not None and (not isinstance(given, list)
                              or not all(isinstance(v, str) for v in given)):
        raise ManifestError(f"{where}: reports must be a list of strings")
    if own is not None and given is not None and tuple(given) != tuple(own):
        raise ManifestError(f"{where}: the manifest's reports {given} are not the design's "
                            f"{list(own)}")
    reports = tuple(own or given or ())
    if len(set(reports)) != len(reports):
        raise ManifestError(f"{where}: reports repeat: {list(reports)}")
    return reports, isinstance(design, TwoGroupDesign)


def _memo(design: Any, raw: Mapping[str, Any], where: str) -> Memoized:
    """The panel's permanent-report scheme of a question (its manifest's ``memoize``)."""
    block = raw["memoize"]
    try:
        memo = Memoized(design, block.get("wave_epsilon"))
    except (DesignError, TypeError) as error:
        raise ManifestError(f"{where}: memoize: {error}") from error
    given = block.get("p2")
    if isinstance(given, int | float) and abs(given - memo.p2) > MATRIX_TOLERANCE:
        raise ManifestError(f"{where}: memoize: p2 {given!r} is not the design's {memo.p2!r}")
    return memo


def _oracle_of(spec: QuestionSpec, raw: Mapping[str, Any], where: str) -> None:
    """A frequency oracle's question: the design (one wave's, in a panel) and its privacy."""
    try:
        oracle = oracle_from_spec(raw["design"])
    except (DesignError, TypeError) as error:
        raise ManifestError(f"{where}: no usable frequency design ({error})") from error
    if oracle.k != len(spec.values):
        raise ManifestError(f"{where}: the design has {oracle.k} answers but the question has "
                            f"{len(spec.values)} values")
    if oracle.sets != (spec.type == "multi-choice"):
        raise ManifestError(f"{where}: design {oracle.name} "
                            + ("randomizes a set: the question must be multi-choice" if
                               oracle.sets else "sends one answer: it needs max_ticks for a "
                               "multi-choice question"))
    given = raw.get("oracle")
    if isinstance(given, Mapping):
        for key in ("p", "q"):
            value = given.get(key)
            if isinstance(value, int | float) and abs(value - getattr(oracle, key)) > \
                    MATRIX_TOLERANCE:
                raise ManifestError(f"{where}: the manifest's oracle {key} {value!r} does not "
                                    f"match its design ({getattr(oracle, key)!r})")
    spec.design_spec = dict(raw["design"])
    spec.manifest = dict(raw)
    spec.oracle = oracle
    if isinstance(raw.get("memoize"), Mapping):
        spec.memo = _memo(oracle, raw, where)
        spec.oracle = spec.memo.one_wave()
    spec.privacy = spec.oracle.privacy()


def _privacy_of(raw: Mapping[str, Any], design: Design, values: Sequence[str]) -> Privacy:
    """The guarantee rrsite.core computes for the design.

    At the manifest's epsilon if it states one (delta then follows), else the smallest pure
    epsilon (infinite when a report reveals the truth, with the delta floor).
    """
    epsilon = raw.get("epsilon")
    if isinstance(epsilon, int | float) and not isinstance(epsilon, bool) \
            and math.isfinite(epsilon):
        pure = privacy_of(design, labels=values)
        if math.isfinite(pure.epsilon) and pure.epsilon <= epsilon + 1e-9:
            return pure
        return privacy_of(design, float(epsilon), labels=values)
    return privacy_of(design, labels=values)


def _number(raw: Mapping[str, Any], key: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{key} must be a number, got {value!r}")
    return float(value)


def version_from_manifest(manifest: Mapping[str, Any], source: str) -> VersionSpec:
    """Check a manifest dict (docs/contracts.md) and turn it into a VersionSpec."""
    if not isinstance(manifest, Mapping):
        raise ManifestError(f"{source}: a manifest must be a JSON object")
    for key in ("id", "version", "questions"):
        if key not in manifest:
            raise ManifestError(f"{source}: the manifest has no {key!r}")
    if manifest.get("format", 1) != 1:
        raise ManifestError(f"{source}: manifest format {manifest.get('format')!r} is not 1")
    survey, version = manifest["id"], manifest["version"]
    if not isinstance(survey, str) or not isinstance(version, str) or not version:
        raise ManifestError(f"{source}: id and version must be strings")
    questions: list[QuestionSpec] = []
    raw_questions = manifest["questions"]
    if not isinstance(raw_questions, list):
        raise ManifestError(f"{source}: questions must be a list")
    seen: set[str] = set()
    for number, raw in enumerate(raw_questions, start=1):
        where = f"{source}: question {number}"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
            raise ManifestError(f"{where}: needs an id")
        qid = raw["id"]
        where = f"{source}: question {qid!r}"
        if qid in seen:
            raise ManifestError(f"{where}: the id is used twice")
        seen.add(qid)
        qtype = raw.get("type")
        if qtype not in KNOWN_TYPES:
            known = ", ".join(KNOWN_TYPES)
            raise ManifestError(f"{where}: unknown type {qtype!r} (known: {known})")
        values = raw.get("values")
        if values is None and qtype == "yes-no":
            values = ["no", "yes"]
        if qtype in ("yes-no", "choice", "multi-choice"):
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ManifestError(f"{where}: values must be a list of strings")
            if len(set(values)) != len(values):
                raise ManifestError(f"{where}: values repeat: {values}")
        sensitive = bool(raw.get("sensitive", False))
        oracle_named = isinstance(raw.get("design"), Mapping) and \
            raw["design"].get("name") in FREQUENCY_DESIGNS
        if sensitive and qtype not in (*CHOICE_TYPES, "number") and not (
                qtype == "multi-choice" and oracle_named):
            raise ManifestError(f"{where}: only yes-no, choice, number and (with a frequency "
                                "oracle) multi-choice questions can be sensitive")
        try:
            spec = QuestionSpec(
                id=qid, text=str(raw.get("text", qid)), type=qtype, sensitive=sensitive,
                required=bool(raw.get("required", False)), values=tuple(values or ()),
                minimum=_number(raw, "min"), maximum=_number(raw, "max"),
                integer=bool(raw.get("integer", False)),
                max_length=int(raw.get("max_length") or 500), manifest=dict(raw),
            )
        except (TypeError, ValueError) as error:
            raise ManifestError(f"{where}: {error}") from error
        if isinstance(raw.get("unit"), str):
            spec.unit = raw["unit"]
        if isinstance(raw.get("short"), str) and raw["short"]:
            spec.short = raw["short"]
        spec.labels = _option_labels(raw.get("options"))
        _fielding(spec, raw)
        if sensitive and qtype == "number":
            try:
                spec.number_design = number_design_from_spec(raw.get("design") or {})
            except (DesignError, TypeError) as error:
                raise ManifestError(f"{where}: no usable number design ({error})") from error
            spec.design_spec = spec.number_design.spec()
            spec.privacy = spec.number_design.privacy()
            spec.two_group = spec.number_design.name == "mixture-unknown"
            spec.manifest = dict(raw)
        elif sensitive and oracle_named:
            _oracle_of(spec, raw, where)
        elif sensitive:
            spec.design = _design_of(raw, spec.values, where)
            spec.design_spec = dict(raw["design"]) if isinstance(raw.get("design"), Mapping) \
                else spec.design.spec()
            spec.privacy = _privacy_of(raw, spec.design, spec.values)
            spec.reports, spec.two_group = _reports_and_groups(raw, spec.design, where)
            spec.manifest = dict(raw)
            if spec.uses_rrreg and not isinstance(raw.get("rrreg"), Mapping):
                block = spec.design.rrreg()
                if block is None:
                    raise ManifestError(f"{where}: no RRreg mapping ('rrreg')")
                spec.manifest["rrreg"] = block
            if isinstance(raw.get("memoize"), Mapping):  # a panel: one wave's chain design
                spec.memo = _memo(spec.design, raw, where)
                spec.design = spec.memo.one_wave()
                spec.privacy = privacy_of(spec.design, labels=spec.values)
        questions.append(spec)
    budget = manifest.get("privacy") if isinstance(manifest.get("privacy"), Mapping) else {}
    validation = manifest.get("validation")
    return VersionSpec(
        survey=survey, version=version, title=str(manifest.get("title", survey)), source=source,
        questions=questions, budget=dict(budget or {}),
        validation=dict(validation) if isinstance(validation, Mapping) else {},
    )


def _fielding(spec: QuestionSpec, raw: Mapping[str, Any]) -> None:
    """The keys of the variables a page adds (docs/reference/contracts.md) and the anchor."""
    role = raw.get("role")
    spec.role = role if isinstance(role, str) else None
    check = raw.get("check")
    if isinstance(check, Mapping) and isinstance(check.get("question"), str):
        spec.check = dict(check)
    direct = raw.get("direct")
    if isinstance(direct, Mapping) and isinstance(direct.get("question"), str):
        spec.direct_of = direct["question"]
    spec.anchor = raw.get("anchor") is True


def _option_labels(options: object) -> dict[str, str]:
    """``{value: label}`` of a manifest's ``options`` (``[{value, label}]``); ``{}`` otherwise."""
    if not isinstance(options, list):
        return {}
    return {str(o["value"]): str(o["label"]) for o in options
            if isinstance(o, Mapping) and isinstance(o.get("value"), str)
            and isinstance(o.get("label"), str) and o["label"]}


def load_manifest_file(path: str | Path) -> dict[str, Any]:
    """Read a survey.json file; errors name the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ManifestError(f"{path}: cannot read: {error.strerror or error}") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ManifestError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from error
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: a manifest must be a JSON object")
    return data


def manifest_from_survey_file(path: str | Path) -> dict[str, Any]:
    """The manifest of a survey Markdown file, through rrsite.survey (the survey parser)."""
    try:
        from ..survey import load_survey
    except ImportError as error:
        raise ManifestError(
            f"{path}: reading survey files needs rrsite.survey.load_survey, which this "
            "installation lacks; pass the built manifest with --manifest DIST/<id>/survey.json"
        ) from error
    manifest = load_survey(str(path)).manifest()
    return dict(manifest)


def build_catalog(
    surveys: Iterable[str | Path] = (),
    manifests: Iterable[str | Path | Mapping[str, Any]] = (),
) -> Catalog:
    """Every known version: the survey files' manifests first, then the given manifests.

    A manifest may be a path (survey.json) or an already-loaded dict. The same version given
    twice must be the same manifest; manifests of different surveys are refused (analyse one
    survey at a time; rows of other surveys are rejected as unknown-survey).
    """
    loaded: list[tuple[dict[str, Any], str]] = []
    for path in surveys:
        text = str(path)
        if text.endswith(".json"):
            loaded.append((load_manifest_file(path), text))
        else:
            loaded.append((manifest_from_survey_file(path), text))
    for item in manifests:
        if isinstance(item, Mapping):
            loaded.append((dict(item), f"manifest {item.get('id')}@{item.get('version')}"))
        else:
            loaded.append((load_manifest_file(item), str(item)))
    if not loaded:
        raise ManifestError("no designs: give the survey file (--survey FILE.md) or its built "
                            "manifests (--manifest survey.json)")
    versions: list[VersionSpec] = []
    raw_by_version: dict[str, dict[str, Any]] = {}
    for manifest, source in loaded:
        spec = version_from_manifest(manifest, source)
        if versions and spec.survey != versions[0].survey:
            raise ManifestError(
                f"{source}: survey {spec.survey!r} is not {versions[0].survey!r} "
                f"(from {versions[0].source}); analyse one survey at a time"
            )
        if spec.version in raw_by_version:
            if _meaning(raw_by_version[spec.version]) != _meaning(manifest):
                raise ManifestError(
                    f"{source}: version {spec.version} was given twice with different questions"
                )
            continue
        raw_by_version[spec.version] = manifest
        versions.append(spec)
    return Catalog(survey=versions[0].survey, title=versions[0].title, versions=versions)


def _meaning(manifest: Mapping[str, Any]) -> str:
    """The parts of a manifest that change what an answer means (for comparing duplicates)."""
    keep = ("id", "type", "sensitive", "values", "design", "matrix", "required", "min", "max")
    questions = [
        {key: q.get(key) for key in keep} for q in manifest.get("questions", [])
        # the page's language is not in the version (a survey that gets a second language keeps
        # it): a manifest with it and one without are the same version
        if isinstance(q, Mapping) and q.get("role") != "language"
    ]
    return json.dumps([manifest.get("id"), questions], sort_keys=True)


def exports_and_catalog(
    exports: str | Path | Iterable[str | Path],
    survey: str | Path | Iterable[str | Path] | None = None,
    manifests: Iterable[str | Path | Mapping[str, Any]] = (),
    confidence: float | None = None,
) -> tuple[list[str | Path], Catalog]:
    """The export files (at least one) and the catalog of the survey files and manifests.

    ``confidence``, when given, is checked on the way (between 0 and 1), before the surveys are
    read.
    """
    paths = [exports] if isinstance(exports, str | Path) else list(exports)
    if not paths:
        raise UsageError("give at least one export file")
    if confidence is not None and not 0 < confidence < 1:
        raise UsageError(f"--confidence must be between 0 and 1, not {confidence}")
    surveys = [] if survey is None else [survey] if isinstance(survey, str | Path) else list(survey)
    return paths, build_catalog(surveys, manifests)
