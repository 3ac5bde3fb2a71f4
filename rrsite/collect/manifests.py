"""Survey manifests as the collector uses them: load `DIST/*/survey.json`, check a submission.

A manifest (docs/contracts.md) fixes, per survey version, which question ids exist and which values
each accepts. The collector compiles every manifest it has seen into a `SurveyRules` and checks each
submission body against the rules of the version the body names, so a submission made with an
older version of the page stays valid after a rebuild.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import DesignError, NumberDesign, number_design_from_spec
from ..core.frequency import FREQUENCY_DESIGNS, FrequencyOracle, oracle_from_spec
from ..errors import RRSiteError

#: The respondent token: 22 to 64 characters of base64url (the page draws 128 random bits).
RESPONDENT_RE = re.compile(r"[A-Za-z0-9_-]{22,64}")
#: A survey id as the builder accepts it (also a safe single path segment).
SURVEY_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
#: A manifest version: hex digits (the builder writes 16).
VERSION_RE = re.compile(r"[0-9a-f]{8,64}")
QUESTION_TYPES = ("yes-no", "choice", "multi-choice", "number", "text")
DEFAULT_TEXT_MAX_LENGTH = 500
SUBMISSION_FIELDS = ("survey", "version", "respondent", "answers", "groups",
                     "invitation", "token",  # token: blind invitations (blindapi.token_hash)
                     "cell",  # cell: the design cell of an `rrsite invite --frame` link
                     "completion")  # completion: a panel participant's digest (survey/fielding)
#: A design cell id as `rrsite invite --frame` writes it into the link.
CELL_RE = re.compile(r"[A-Za-z0-9_-]{8,32}")
#: Where a submission's design cell is stored among its answers (no question id starts with "@").
CELL_KEY = "@cell"
#: The stored answers keep a two-group question's group under ``<question id>`` + this suffix
#: (question ids have no dots), which the export splits off again (docs/contracts.md).
GROUP_SUFFIX = ".group"
#: An invitation code as `rrsite invite` writes it (docs/contracts.md).
INVITATION_RE = re.compile(r"[A-Za-z0-9_-]{16,64}")
#: A completion digest as the page of a panel survey makes it: SHA-256, lowercase hex.
COMPLETION_RE = re.compile(r"[0-9a-f]{64}")

Answer = str | int | float | list[str]


class ManifestError(RRSiteError):
    """A `survey.json` the collector cannot use (path and what is wrong)."""


class SubmissionError(ValueError):
    """A submission body that is refused; `status`, `error` and `field` make the JSON answer."""

    def __init__(self, error: str, field: str | None = None, status: int = 422) -> None:
        super().__init__(error)
        self.error = error
        self.field = field
        self.status = status

    def body(self) -> dict[str, Any]:
        """The JSON body of the error response: `{"error", "field"}`."""
        return {"error": self.error, "field": self.field}


@dataclass(frozen=True, slots=True)
class QuestionRule:
    """What one question of one survey version accepts."""

    id: str
    type: str
    required: bool
    values: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False
    max_length: int = DEFAULT_TEXT_MAX_LENGTH
    #: A two-group design (the manifest has ``groups``): the submission must say the group.
    grouped: bool = False
    #: ``(question id, values)`` of the manifest's ``show_if``: asked only when that answer is one.
    show_if: tuple[str, tuple[str, ...]] | None = None
    #: A randomized number question's design: its reports, not the true range, are checked.
    number_design: NumberDesign | None = None
    #: A frequency oracle (choice or multi-choice): its own reports are checked.
    oracle: FrequencyOracle | None = None

    def check(self, value: object) -> Answer:
        """The answer as it will be stored, or SubmissionError saying what is wrong with `value`."""
        field = f"answers.{self.id}"
        if self.oracle is not None:  # a list of option values, "seed:bucket" or a column
            try:
                self.oracle.decode(value, self.values)
            except DesignError as error:
                raise SubmissionError(_short(str(error), 200, quote=False), field) from None
            assert isinstance(value, str | list)
            return list(value) if isinstance(value, list) else value
        if self.type in ("yes-no", "choice"):
            if not isinstance(value, str):
                raise SubmissionError(f"must be a string, one of {list(self.values)}", field)
            if value not in self.values:
                raise SubmissionError(
                    f"{_short(value)} is not one of {list(self.values)}", field)
            return value
        if self.type == "multi-choice":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise SubmissionError("must be a list of strings", field)
            for item in value:
                if item not in self.values:
                    raise SubmissionError(
                        f"{_short(item)} is not one of {list(self.values)}", field)
            if len(set(value)) != len(value):
                raise SubmissionError("lists a value twice", field)
            return list(value)
        if self.type == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SubmissionError("must be a number", field)
            if isinstance(value, float) and not math.isfinite(value):
                raise SubmissionError("must be a finite number", field)
            if self.number_design is not None:  # a randomized report may leave [min, max]
                why = self.number_design.impossible(float(value))
                if why is not None:
                    raise SubmissionError(f"impossible report under design "
                                          f"{self.number_design.name}: {why}", field)
                if abs(value) > 2**53:
                    raise SubmissionError("is too large (beyond 2**53)", field)
                return value
            if self.integer and isinstance(value, float) and not value.is_integer():
                raise SubmissionError(f"must be a whole number, got {value!r}", field)
            if self.minimum is not None and value < self.minimum:
                raise SubmissionError(f"must be at least {self.minimum:g}, got {_short(value)}",
                                      field)
            if self.maximum is not None and value > self.maximum:
                raise SubmissionError(f"must be at most {self.maximum:g}, got {_short(value)}",
                                      field)
            if abs(value) > 2**53:
                raise SubmissionError("is too large (beyond 2**53)", field)
            if self.integer:
                value = int(value)
            return value
        # text
        if not isinstance(value, str):
            raise SubmissionError("must be a string", field)
        if len(value) > self.max_length:
            raise SubmissionError(
                f"is {len(value)} characters long, at most {self.max_length} allowed", field)
        if not _is_utf8(value):
            raise SubmissionError("is not valid Unicode text (lone surrogate)", field)
        return value


@dataclass(frozen=True, slots=True)
class SurveyRules:
    """Every rule of one survey version: the questions in manifest order."""

    survey: str
    version: str
    questions: tuple[QuestionRule, ...]
    #: The survey keeps a completion record (``panel.record``): submissions may carry one.
    record: bool = False

    def check_answers(self, answers: object) -> dict[str, Answer]:
        """The answers to store (unanswered ones left out), or SubmissionError."""
        if not isinstance(answers, dict):
            raise SubmissionError("must be an object mapping question ids to answers", "answers")
        known = {rule.id: rule for rule in self.questions}
        for qid in answers:
            if qid not in known:
                raise SubmissionError(
                    f"unknown question id {_short(qid)}{_did_you_mean(qid, known)}",
                    f"answers.{_short(qid, 80, quote=False)}")
        stored: dict[str, Answer] = {}
        for rule in self.questions:
            value = answers.get(rule.id)
            if rule.show_if is not None and not _shown(rule.show_if, stored):
                if value is not None:
                    raise SubmissionError(f"must be left out: the question is shown only when "
                                          f"{rule.show_if[0]} is one of {list(rule.show_if[1])}",
                                          f"answers.{rule.id}")
                continue
            if value is None or (rule.type == "text" and value == ""):
                if rule.required:
                    raise SubmissionError("an answer is required", f"answers.{rule.id}")
                continue
            stored[rule.id] = rule.check(value)
        return stored

    def check_groups(self, groups: object, answers: Mapping[str, Answer]) -> dict[str, int]:
        """The groups of the answered two-group questions, as stored (``<id>.group``: 1 or 2).

        ``groups`` is the submission's optional ``groups`` object; it must name exactly the
        answered two-group questions, each with the integer 1 or 2.
        """
        if groups is None:
            groups = {}
        if not isinstance(groups, dict):
            raise SubmissionError("must be an object mapping question ids to 1 or 2", "groups")
        known = {rule.id: rule for rule in self.questions}
        for qid, group in groups.items():
            rule = known.get(qid)
            field = f"groups.{_short(qid, 80, quote=False)}"
            if rule is None:
                raise SubmissionError(
                    f"unknown question id {_short(qid)}{_did_you_mean(qid, known)}", field)
            if not rule.grouped:
                raise SubmissionError("this question has no groups (its design has one group)",
                                      field)
            if qid not in answers:
                raise SubmissionError("a group for an unanswered question", field)
            if isinstance(group, bool) or group not in (1, 2) or not isinstance(group, int):
                raise SubmissionError(f"must be the integer 1 or 2, got {_short(group)}", field)
        stored: dict[str, int] = {}
        for rule in self.questions:
            if rule.grouped and rule.id in answers:
                if rule.id not in groups:
                    raise SubmissionError("the group of this two-group question is missing",
                                          f"groups.{rule.id}")
                stored[rule.id + GROUP_SUFFIX] = groups[rule.id]
        return stored


def _show_if(condition: object, at: str) -> tuple[str, tuple[str, ...]] | None:
    """The manifest's ``show_if`` (docs/contracts.md), checked."""
    if condition is None:
        return None
    if (not isinstance(condition, dict) or not isinstance(condition.get("question"), str)
            or not isinstance(condition.get("is"), list)
            or not all(isinstance(v, str) for v in condition["is"])):
        raise ManifestError(f"{at}: 'show_if' must be {{\"question\": id, \"is\": [values]}}")
    return condition["question"], tuple(condition["is"])


def _shown(condition: tuple[str, tuple[str, ...]], stored: dict[str, Answer]) -> bool:
    """Whether a show_if holds for the answers read so far (conditions only look back)."""
    answer = stored.get(condition[0])
    chosen = answer if isinstance(answer, list) else [answer]
    return any(value in condition[1] for value in chosen)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _short(value: object, limit: int = 40, quote: bool = True) -> str:
    """A bad value, quoted and cut, for an error message (never a whole huge string)."""
    text = value if isinstance(value, str) else json.dumps(value)
    if not _is_utf8(text):
        text = text.encode("utf-8", "backslashreplace").decode("ascii", "replace")
    if len(text) > limit:
        text = text[:limit] + "…"
    return repr(text) if quote else text


def _did_you_mean(name: str, known: Mapping[str, object]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1) if len(name) < 200 else []
    return f" (did you mean {close[0]!r}?)" if close else ""


def _number_or_none(raw: object, where: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ManifestError(f"{where} must be a number, got {raw!r}")
    return raw


def compile_manifest(manifest: object, where: str = "manifest") -> SurveyRules:
    """The rules of a manifest dict; ManifestError (with `where`) if it is not a usable manifest."""
    if not isinstance(manifest, dict):
        raise ManifestError(f"{where}: not a JSON object")
    survey, version = manifest.get("id"), manifest.get("version")
    if not isinstance(survey, str) or not SURVEY_ID_RE.fullmatch(survey):
        raise ManifestError(f"{where}: 'id' must be a survey id, got {survey!r}")
    if not isinstance(version, str) or not VERSION_RE.fullmatch(version):
        raise ManifestError(f"{where}: 'version' must be hex digits, got {version!r}")
    questions = manifest.get("questions")
    if not isinstance(questions, list) or not questions:
        raise ManifestError(f"{where}: 'questions' must be a non-empty list")
    rules: list[QuestionRule] = []
    seen: set[str] = set()
    for index, question in enumerate(questions):
        at = f"{where}: questions[{index}]"
        if not isinstance(question, dict):
            raise ManifestError(f"{at} is not an object")
        qid, qtype = question.get("id"), question.get("type")
        if not isinstance(qid, str) or not qid:
            raise ManifestError(f"{at}: 'id' must be a non-empty string")
        if qid in seen:
            raise ManifestError(f"{at}: question id {qid!r} appears twice")
        seen.add(qid)
        if qtype not in QUESTION_TYPES:
            raise ManifestError(
                f"{at}: 'type' must be one of {list(QUESTION_TYPES)}, got {qtype!r}")
        values = question.get("values", [])
        if qtype in ("yes-no", "choice", "multi-choice"):
            if (not isinstance(values, list) or not values
                    or not all(isinstance(v, str) for v in values)):
                raise ManifestError(f"{at}: 'values' must be a non-empty list of strings")
        reports = question.get("reports")
        if reports is not None:
            if (qtype != "yes-no" or not isinstance(reports, list) or not reports
                    or not all(isinstance(v, str) for v in reports)):
                raise ManifestError(f"{at}: 'reports' must be a non-empty list of strings on a "
                                    "yes-no question")
            values = reports  # the page sends a report, not a truth value
        grouped = question.get("groups") is not None
        if grouped and (not isinstance(question["groups"], list) or len(question["groups"]) != 2):
            raise ManifestError(f"{at}: 'groups' must be a list of two groups")
        max_length = question.get("max_length", DEFAULT_TEXT_MAX_LENGTH)
        if max_length is None:
            max_length = DEFAULT_TEXT_MAX_LENGTH
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 0:
            raise ManifestError(f"{at}: 'max_length' must be a whole number, got {max_length!r}")
        rules.append(QuestionRule(
            id=qid,
            type=qtype,
            required=bool(question.get("required", False)),
            values=tuple(values) if qtype in ("yes-no", "choice", "multi-choice") else (),
            minimum=_number_or_none(question.get("min"), f"{at}: 'min'"),
            maximum=_number_or_none(question.get("max"), f"{at}: 'max'"),
            integer=bool(question.get("integer", False)),
            max_length=max_length,
            grouped=grouped,
            show_if=_show_if(question.get("show_if"), at),
            number_design=_number_design(question, qtype, at),
            oracle=_oracle(question, qtype, at),
        ))
    panel = manifest.get("panel")
    record = isinstance(panel, dict) and panel.get("record") is True
    return SurveyRules(survey=survey, version=version, questions=tuple(rules), record=record)


def _number_design(question: dict[str, Any], qtype: object, at: str) -> NumberDesign | None:
    """The design of a randomized number question (None for any other question)."""
    if qtype != "number" or not question.get("sensitive") or question.get("design") is None:
        return None
    try:
        return number_design_from_spec(question["design"])
    except (DesignError, TypeError) as error:
        raise ManifestError(f"{at}: 'design' is not a number design: {error}") from error


def _oracle(question: dict[str, Any], qtype: object, at: str) -> FrequencyOracle | None:
    """The frequency oracle of a randomized choice or multi-choice question, else None."""
    design = question.get("design")
    if not question.get("sensitive") or not isinstance(design, dict) or \
            design.get("name") not in FREQUENCY_DESIGNS:
        return None
    try:
        return oracle_from_spec(design)
    except (DesignError, TypeError) as error:
        raise ManifestError(f"{at}: 'design' is not a frequency design: {error}") from error


def read_manifest(path: Path) -> tuple[dict[str, Any], SurveyRules]:
    """Read and compile one `survey.json`; ManifestError naming the file if it is unusable."""
    try:
        manifest = json.loads(path.read_bytes())
    except (OSError, ValueError) as error:
        raise ManifestError(f"{path}: cannot read the manifest: {error}") from error
    rules = compile_manifest(manifest, str(path))
    if path.parent.name != rules.survey:
        raise ManifestError(
            f"{path}: the manifest's id {rules.survey!r} differs from its folder name")
    return manifest, rules


def manifest_paths(dist: Path) -> Iterator[Path]:
    """Every `DIST/<id>/survey.json`, sorted by survey id."""
    for path in sorted(dist.glob("*/survey.json")):
        if path.is_file() and not path.parent.name.startswith((".", "_")):
            yield path


def _utf8_text(body: bytes) -> str:
    """The body as text if it is UTF-8 without a byte order mark, else SubmissionError (400).

    `json.loads` on bytes would guess UTF-16 or UTF-32 and skip a BOM; a submission is UTF-8 JSON
    (RFC 8259 section 8.1) whatever its Content-Type says, so anything else is refused, not guessed.
    """
    if body.startswith(b"\xef\xbb\xbf"):
        raise SubmissionError("the body starts with a byte order mark (BOM); send UTF-8 JSON "
                              "without one", None, 400)
    nul = body.find(b"\x00")
    if nul >= 0:  # JSON text never holds a NUL byte; UTF-16 and UTF-32 text does
        raise SubmissionError(f"the body is not UTF-8 JSON: a NUL byte at offset {nul} "
                              "(UTF-16 or UTF-32?); send UTF-8", None, 400)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SubmissionError(f"the body is not UTF-8: a byte that is not UTF-8 at offset "
                              f"{error.start}; send UTF-8 JSON", None, 400) from None


def parse_submission(body: bytes) -> dict[str, Any]:
    """The JSON object of a request body, or SubmissionError (400) saying what is malformed."""
    def no_constants(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise ValueError(f"key {_short(key)} appears twice")
                seen.add(key)
        return result

    text = _utf8_text(body)
    try:
        data = json.loads(text, parse_constant=no_constants, object_pairs_hook=unique_keys)
    except RecursionError:
        raise SubmissionError("the JSON body is nested too deeply", None, 400) from None
    except ValueError as error:  # JSONDecodeError, int too long, ...
        raise SubmissionError(f"the body is not valid JSON: {_short(str(error), 120, False)}",
                              None, 400) from None
    if not isinstance(data, dict):
        raise SubmissionError("the body must be a JSON object", None, 400)
    for key in data:
        if key not in SUBMISSION_FIELDS:
            raise SubmissionError(
                f"unknown field {_short(key)}; a submission has {list(SUBMISSION_FIELDS)}",
                _short(key, 80, quote=False), 400)
    for key in ("survey", "version", "respondent"):
        if key not in data:
            raise SubmissionError(f"'{key}' is missing", key, 400)
        if not isinstance(data[key], str):
            raise SubmissionError(f"'{key}' must be a string", key, 400)
    if "answers" not in data:
        raise SubmissionError("'answers' is missing", "answers", 400)
    if not RESPONDENT_RE.fullmatch(data["respondent"]):
        raise SubmissionError(
            "must be 22 to 64 characters of A-Z, a-z, 0-9, '_' and '-'", "respondent", 400)
    invitation = data.get("invitation")
    if invitation is not None and not (isinstance(invitation, str)
                                       and INVITATION_RE.fullmatch(invitation)):
        raise SubmissionError("an invitation code is 16 to 64 characters of A-Z, a-z, 0-9, '_' "
                              "and '-'", "invitation", 400)
    cell = data.get("cell")
    if cell is not None and not (isinstance(cell, str) and CELL_RE.fullmatch(cell)):
        raise SubmissionError("a design cell is 8 to 32 characters of A-Z, a-z, 0-9, '_' and '-'",
                              "cell", 400)
    completion = data.get("completion")
    if completion is not None and not (isinstance(completion, str)
                                       and COMPLETION_RE.fullmatch(completion)):
        raise SubmissionError("a completion is 64 lowercase hex digits (a SHA-256)", "completion",
                              400)
    return data
