"""rrsite.exports.tally's checks as SQL: each row's status, version, subgroup and report codes.

The rules are the tally's (rrsite/exports/tally.py), row by row: the first reason that applies
is the row's status (missing field, unknown survey, unknown version, invalid value; a JSONL
line may be refused before them as malformed or without a key). What an engine returns per row:

- ``rr_st``: the status (``OK``, ``MISSING`` ... ``INVALID``; ``MALFORMED_JSON``; ``SKIP`` for a
  blank JSONL line, which is no row at all);
- ``rr_m``: the version's index in the catalog (0 where unknown: such rows are rejected);
- ``rr_g``: the subgroup's index: the cell of the ``--by`` answers (rrsite.exports.subgroups;
  one question: its answer's position, the last "(no answer)");
- ``rr_k<i>``: per yes-no or choice question ``i`` (``RowChecks.counted``), where the row adds
  to the question's counts: 1 + a position in ``Keys.size`` slots of (version, report or
  unanswered, design group, subgroup); 0 where the row's version does not ask it;
- ``rr_v<i>`` and ``rr_d<i>``: per randomized number question, the report (NULL when none) and
  the two-group design's group (0 without);
- ``rr_tok``: the respondent token (NULL without a respondent column).

Duplicate tokens are not decided here: they need the order of the rows, which the driver has
(``rrsite.exports.sql.files`` in numpy, ``aggregate`` with a window for printed SQL).

A field reads through a ``Field``: SQL expressions for "no value", the value as text, as a
number, its length and the text a multi-choice list is checked in. Text sources (CSV, Parquet,
a table) and JSON sources (JSONL, the collector's stored answers) build them differently
(``text_field`` here; the JSON ones next to their sources); the checks are the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ...errors import UsageError
from ..catalog import GROUP_SUFFIX, Catalog, QuestionSpec
from ..columns import NUMBER_PATTERN, NUMBER_WIDTH, TOKEN_MAX, TOKEN_MIN
from ..subgroups import Subgroups, parse_by
from ..tally import FieldPlan, field_plan
from .dialects import Dialect

#: Row statuses: the tally's codes (1-4), then those only a reader gives.
OK, MISSING, SURVEY, VERSION, INVALID, DUPLICATE = 0, 1, 2, 3, 4, 5
MALFORMED_JSON, MALFORMED_ROW, SKIP = 6, 7, 8
#: The reason each status is counted under (rrsite.exports.rejections.REASONS).
REASON_OF = {MISSING: "missing-field", SURVEY: "unknown-survey", VERSION: "unknown-version",
             INVALID: "invalid-value", DUPLICATE: "duplicate-respondent",
             MALFORMED_JSON: "malformed-json", MALFORMED_ROW: "malformed-row"}
TOKEN_SQL = "[A-Za-z0-9_-]*"
#: A well-formed respondent token (TOKEN_MIN characters of the allowed alphabet).
VALID_TOKEN = "A" * TOKEN_MIN
#: A JSON array of strings without escapes (what rrsite's pages send for a multi-choice answer).
_SPACE = r"[ \t\n\r]*"


@dataclass(frozen=True)
class Field:
    """One field of a row, as SQL expressions over the source relation."""

    #: TRUE when the row has no value (absent, null or the empty string).
    empty: str
    #: The value when it is text (NULL for a JSON number, list, true ...).
    string: str
    #: The value as a finite double when it is a number (NULL otherwise).
    number: str
    #: The text of that number (reports are grouped by it; parsed again by Python's float()).
    number_text: str
    #: Characters of the text (NULL when not text).
    chars: str
    #: The JSON text a multi-choice answer is checked as (NULL when it cannot be one).
    listing: str


def token_valid(text: str, dialect: Dialect) -> str:
    """SQL TRUE when the token ``text`` has the allowed length and characters (NULL if NULL)."""
    return (f"{dialect.length(text)} BETWEEN {TOKEN_MIN} AND {TOKEN_MAX} AND "
            f"{dialect.full_match(text, TOKEN_SQL)}")  # the length first: it is cheaper


def text_field(expr: str, dialect: Dialect) -> Field:
    """A field read as text (CSV cells, Parquet and table columns): empty is NULL or ''."""
    is_number = (f"({dialect.length(expr)} <= {NUMBER_WIDTH} AND "
                 f"{dialect.full_match(expr, NUMBER_PATTERN.pattern)})")
    number = f"(CASE WHEN {is_number} THEN {dialect.double(expr)} END)"
    return Field(
        empty=f"({expr} IS NULL OR {expr} = '')", string=expr, number=number,
        number_text=f"(CASE WHEN {is_number} THEN {expr} END)", chars=dialect.length(expr),
        listing=expr,
    )


@dataclass
class Source:
    """A relation of rows and how each field reads in it."""

    #: Fields the rows have: survey, version, respondent, question ids, ``<id>.group``.
    fields: dict[str, Field]
    #: survey and version when the source has no column for them (one value for every row).
    constants: dict[str, str] = field(default_factory=dict)
    #: SQL TRUE when the row answers a question no version asks (JSON sources).
    strays: str | None = None
    #: (status, SQL condition) checked before the tally's, in order (a JSONL line's shape).
    before: list[tuple[int, str]] = field(default_factory=list)
    #: Questions whose answers were judged elsewhere (their verdict is in ``strays``).
    judged: frozenset[str] = frozenset()


@dataclass
class Keys:
    """Where a choice question's rows are counted: slots of (version, report, group, subgroup)."""

    qid: str
    #: Per version index of ``plan.choice``: (first slot, reports K (K = unanswered), groups D).
    blocks: dict[int, tuple[int, int, int]]
    size: int


def uncounted(catalog: Catalog) -> list[str]:
    """The questions the tally in SQL cannot count, each with its design (frequency oracles).

    A frequency oracle's report (a set of boxes, a hashed pair, a column of a Hadamard matrix)
    supports several answers at once: it is decoded into supports (rrsite.exports.oracles), not
    counted by value, so only rrsite's own reader analyses it.
    """
    found: dict[str, str] = {}
    for version in catalog.versions:
        for question in version.questions:
            if question.oracle is not None:
                found.setdefault(question.id, question.oracle.name)
    return [f"{qid!r} ({name})" for qid, name in found.items()]


def uncounted_reason(catalog: Catalog) -> str | None:
    """Why the tally in SQL refuses this survey (None: it counts every question)."""
    questions = uncounted(catalog)
    if not questions:
        return None
    return (f"question{'s' if len(questions) > 1 else ''} {', '.join(questions)} of survey "
            f"{catalog.survey!r} use{'' if len(questions) > 1 else 's'} a frequency oracle, whose "
            "reports support several answers each: the tally in SQL counts reports by value and "
            "does not decode them")


class RowChecks:
    """The SQL of every output column for one catalog (and ``--by``), over one source.

    A survey with a frequency oracle is refused (``UsageError``, ``uncounted_reason``).
    """

    def __init__(self, catalog: Catalog, by: str | Sequence[str] | None, dialect: Dialect,
                 source: Source,
                 impossible: Mapping[tuple[int, str], Sequence[float]] | None = None) -> None:
        reason = uncounted_reason(catalog)
        if reason is not None:
            raise UsageError(reason)
        self.catalog = catalog
        self.by = parse_by(by)
        self.d = dialect
        self.source = source
        self.impossible = impossible or {}
        self.plans: dict[str, FieldPlan] = {q: field_plan(catalog, q)
                                            for q in catalog.question_ids()}
        #: The cells of --by (one question or several crossed): the tally's, in its order.
        self.subgroups = Subgroups.of(
            self.by, {q: union.words for q in self.by
                      if (union := self.plans[q].union) is not None})
        self.groups = len(self.subgroups.names)
        #: The yes-no and choice questions counted, in catalog order, with their slots.
        self.counted: list[Keys] = []
        for qid, plan in self.plans.items():
            if plan.choice:
                self.counted.append(self._keys(qid, plan))
        #: The randomized number questions: (id, versions asking it with a design).
        self.numbers: list[tuple[str, list[int]]] = []
        for qid, plan in self.plans.items():
            designs = [m for m, q in plan.number if q.numeric]
            if designs:
                self.numbers.append((qid, designs))
        self._derived: dict[str, tuple[int, str]] = {}
        #: SQL of the row's version index, when the caller has a cheaper one than the field's.
        self.version_sql: str | None = None

    # ----------------------------------------------------------------------------- helpers

    def _keys(self, qid: str, plan: FieldPlan) -> Keys:
        blocks: dict[int, tuple[int, int, int]] = {}
        start = 0
        for m in plan.choice:
            question = self.catalog.versions[m].question(qid)
            assert question is not None
            reports = len(question.answers)
            designs = 2 if question.two_group else 1
            blocks[m] = (start, reports, designs)
            start += (reports + 1) * designs * self.groups
        return Keys(qid, blocks, start)

    def _column(self, name: str, expr: str, level: int) -> str:
        """A column computed once, in the layer ``level``, referenced by name above it.

        Layers: 1 the fields' properties; 2 the version and the subgroup; 3 what needs both.
        """
        self._derived.setdefault(name, (level, expr))
        return name

    def _field(self, name: str) -> Field | None:
        return self.source.fields.get(name)

    def _index(self, name: str) -> int:
        return list(self.source.fields).index(name)

    def _prop(self, name: str, prop: str) -> str:
        """A property of a field (empty, string, number ...) as a middle-layer column."""
        found = self.source.fields[name]
        return self._column(f"rr_f{self._index(name)}_{prop}", getattr(found, prop), 1)

    def _in(self, expr: str, values: Sequence[str]) -> str:
        return f"{expr} IN ({', '.join(self.d.text(v) for v in values)})"

    def _versions(self, indices: Sequence[int]) -> str:
        m = self._column("rr_xm", self._version_expr(), 2)
        if len(indices) == 1:
            return f"{m} = {indices[0]}"
        return f"{m} IN ({', '.join(str(i) for i in indices)})"

    def _version_expr(self) -> str:
        constant = self.source.constants.get("version")
        if constant is not None:
            return str(self.catalog.version_ids.index(constant))
        if "version" not in self.source.fields:
            return "0"
        if self.version_sql is not None:
            return self.version_sql
        text = self._prop("version", "string")
        cases = " ".join(f"WHEN {text} = {self.d.text(v)} THEN {i}"
                         for i, v in enumerate(self.catalog.version_ids))
        return f"(CASE {cases} END)"

    # ----------------------------------------------------------------------------- checks

    def _answer_ok(self, qid: str, versions: Sequence[int]) -> str:
        """The row's choice answer is one its version allows (NULL-safe: FALSE when not)."""
        text = self._prop(qid, "string")
        by_answers: dict[tuple[str, ...], list[int]] = {}
        for m in versions:
            question = self.catalog.versions[m].question(qid)
            assert question is not None
            by_answers.setdefault(question.answers, []).append(m)
        parts = [f"({self._versions(ms)} AND {self._in(text, answers)})"
                 for answers, ms in by_answers.items()]
        return f"COALESCE({' OR '.join(parts)}, FALSE)"

    def _number_ok(self, qid: str, m: int, question: QuestionSpec) -> str:
        number = self._prop(qid, "number")
        if question.number_design is not None:
            bad = self.impossible.get((m, qid), ())
            listed = ", ".join(self.d.double_literal(float(v)) for v in bad)
            return f"({number} IS NOT NULL{f' AND NOT {number} IN ({listed})' if bad else ''})"
        rules = [f"{number} IS NOT NULL"]
        if question.minimum is not None:
            rules.append(f"{number} >= {question.minimum!r}")
        if question.maximum is not None:
            rules.append(f"{number} <= {question.maximum!r}")
        if question.integer:
            rules.append(f"{number} = FLOOR({number})")
        return f"COALESCE({' AND '.join(rules)}, FALSE)"

    def _listing_ok(self, qid: str, question: QuestionSpec) -> str:
        """A JSON list of distinct allowed strings (the multi-choice rule of the tally)."""
        listing = self._prop(qid, "listing")
        item = "|".join(re.escape(json_string(v)) for v in question.values)
        s = _SPACE
        shape = rf"{s}\[{s}(?:(?:{item}){s}(?:,{s}(?:{item}){s})*)?\]{s}"
        rules = [self.d.full_match(listing, shape)]
        rules += [self.d.occurrences_at_most_one(listing, json_string(v))
                  for v in question.values]
        return f"COALESCE({' AND '.join(rules)}, FALSE)"

    def _field_invalid(self, qid: str, plan: FieldPlan) -> list[str]:
        """Conditions under which the row's answer to ``qid`` is not allowed by its version."""
        if self._field(qid) is None:
            return []
        empty = self._prop(qid, "empty")
        bad: list[str] = []
        if plan.choice:
            bad.append(f"({self._versions(plan.choice)} AND NOT {empty} AND NOT "
                       f"{self._answer_ok(qid, plan.choice)})")
        if plan.absent:
            bad.append(f"({self._versions(plan.absent)} AND NOT {empty})")
        for m, question in plan.number:
            bad.append(f"({self._versions([m])} AND NOT {empty} AND NOT "
                       f"{self._number_ok(qid, m, question)})")
        for m, question in plan.text:
            chars = self._prop(qid, "chars")
            bad.append(f"({self._versions([m])} AND NOT {empty} AND NOT "
                       f"COALESCE({chars} <= {question.max_length}, FALSE))")
        for m, question in plan.multi:
            bad.append(f"({self._versions([m])} AND NOT {empty} AND NOT "
                       f"{self._listing_ok(qid, question)})")
        return bad

    def _answered(self, qid: str, plan: FieldPlan) -> str:
        """The tally's "answered" of a two-group question: a valid choice, or a number."""
        if self._field(qid) is None:
            return "FALSE"
        if plan.choice:
            return self._answer_ok(qid, plan.choice)
        if plan.number:
            return f"({self._prop(qid, 'number')} IS NOT NULL)"
        return "FALSE"

    def _group_code(self, qid: str) -> str:
        """The group (1 or 2) the row's ``<id>.group`` holds; 0 for anything else."""
        name = qid + GROUP_SUFFIX
        if self._field(name) is None:
            return "0"
        number = self._prop(name, "number")
        return f"(CASE WHEN {number} = 1 THEN 1 WHEN {number} = 2 THEN 2 ELSE 0 END)"

    def _needs_group(self, qid: str, plan: FieldPlan) -> str:
        if not plan.grouped:
            return "FALSE"
        return self._column(f"rr_needs_{self._qindex(qid)}",
                            f"COALESCE({self._versions(plan.grouped)} AND "
                            f"{self._answered(qid, plan)}, FALSE)", 3)

    def _qindex(self, qid: str) -> int:
        return list(self.plans).index(qid)

    def _group_invalid(self, qid: str, plan: FieldPlan) -> list[str]:
        name = qid + GROUP_SUFFIX
        if not plan.grouped and self._field(name) is None:
            return []
        needs = self._needs_group(qid, plan)
        code = self._group_code(qid)
        group_empty = "TRUE" if self._field(name) is None else self._prop(name, "empty")
        return [f"(({needs} AND {code} = 0) OR (NOT {needs} AND NOT {group_empty}))"]

    def _design_group(self, qid: str, plan: FieldPlan) -> str:
        """The group counted for the row: its ``<id>.group`` where its version needs one."""
        if not plan.grouped:
            return "0"
        return f"(CASE WHEN {self._needs_group(qid, plan)} THEN {self._group_code(qid)} ELSE 0 END)"

    def status(self) -> str:
        """The row's status: the first reason that applies, or OK."""
        cases: list[tuple[int, str]] = list(self.source.before)
        missing = [self._prop(name, "empty") for name in ("survey", "version", "respondent")
                   if name in self.source.fields]
        if missing:
            cases.append((MISSING, " OR ".join(missing)))
        if "survey" in self.source.fields:
            text = self._prop("survey", "string")
            cases.append((SURVEY, f"NOT COALESCE({text} = {self.d.text(self.catalog.survey)}, "
                                  "FALSE)"))
        if "version" in self.source.fields:
            cases.append((VERSION, f"{self._column('rr_xm', self._version_expr(), 2)} IS NULL"))
        invalid: list[str] = []
        for qid, plan in self.plans.items():
            if qid not in self.source.judged:
                invalid += self._field_invalid(qid, plan)
            invalid += self._group_invalid(qid, plan)
        if "respondent" in self.source.fields:
            text = self._prop("respondent", "string")
            empty = self._prop("respondent", "empty")
            invalid.append(f"(NOT {empty} AND NOT COALESCE({token_valid(text, self.d)}, FALSE))")
        if self.source.strays:
            invalid.append(f"({self.source.strays})")
        if invalid:
            cases.append((INVALID, " OR ".join(invalid)))
        if not cases:
            return str(OK)
        whens = " ".join(f"WHEN {condition} THEN {code}" for code, condition in cases)
        return f"(CASE {whens} ELSE {OK} END)"

    def subgroup(self) -> str:
        """The row's cell of --by: the mixed-radix number of its answers' positions.

        Each by-question's answer is its position among the question's answers (the last,
        "(no answer)", when none), as rrsite.exports.subgroups.Subgroups.codes numbers them.
        """
        if not self.by:
            return "0"
        cell = ""
        for qid, level in zip(self.by, self.subgroups.levels, strict=True):
            last = len(level) - 1
            if self._field(qid) is None:
                position = str(last)
            else:
                text = self._prop(qid, "string")
                whens = " ".join(f"WHEN {text} = {self.d.text(w)} THEN {i}"
                                 for i, w in enumerate(level[:-1]))
                position = f"(CASE {whens} ELSE {last} END)" if whens else str(last)
            cell = position if not cell else f"({cell} * {len(level)} + {position})"
        return cell

    def key(self, keys: Keys) -> str:
        """1 + the slot the row counts in for one choice question, 0 where not asked."""
        plan = self.plans[keys.qid]
        g = self._column("rr_xg", self.subgroup(), 2)
        design = self._design_group(keys.qid, plan)
        whens = []
        for m, (start, reports, designs) in keys.blocks.items():
            question = self.catalog.versions[m].question(keys.qid)
            assert question is not None
            if self._field(keys.qid) is None:
                local = str(reports)
            else:
                text = self._prop(keys.qid, "string")
                local = ("(CASE " + " ".join(f"WHEN {text} = {self.d.text(a)} THEN {i}"
                                              for i, a in enumerate(question.answers))
                         + f" ELSE {reports} END)")
            which = f"(CASE WHEN {design} = 2 THEN 1 ELSE 0 END)" if designs == 2 else "0"
            slot = f"({start} + (({local}) * {designs} + {which}) * {self.groups} + {g})"
            whens.append(f"WHEN {self._versions([m])} THEN 1 + {slot}")
        return f"(CASE {' '.join(whens)} ELSE 0 END)"

    def report(self, qid: str, versions: list[int]) -> tuple[str, str, str]:
        """A randomized number question's (report as double, its text, design group)."""
        if self._field(qid) is None:
            return "NULL", "NULL", "0"
        number = self._prop(qid, "number")
        text = self._prop(qid, "number_text")
        where = self._versions(versions)
        return (f"(CASE WHEN {where} THEN {number} END)", f"(CASE WHEN {where} THEN {text} END)",
                self._design_group(qid, self.plans[qid]))

    def token(self) -> str | None:
        """The respondent token (NULL without one)."""
        if "respondent" not in self.source.fields:
            return None
        return self._prop("respondent", "string")

    # ----------------------------------------------------------------------------- queries

    def outputs(self, number_text: bool = False) -> list[tuple[str, str]]:
        """(name, SQL) of every output column (``number_text``: reports as text, not double)."""
        columns = [("rr_st", self.status()),
                   ("rr_m", f"COALESCE({self._column('rr_xm', self._version_expr(), 2)}, 0)"),
                   ("rr_g", self._column("rr_xg", self.subgroup(), 2))]
        for i, keys in enumerate(self.counted):
            columns.append((f"rr_k{i}", self.key(keys)))
        for i, (qid, versions) in enumerate(self.numbers):
            number, text, design = self.report(qid, versions)
            columns.append((f"rr_v{i}", text if number_text else number))
            columns.append((f"rr_d{i}", design))
        token = self.token()
        columns.append(("rr_tok", token if token is not None else "NULL"))
        return columns

    def select(self, source: str, keep: Sequence[str] = (), number_text: bool = False,
               types: Mapping[str, str] | None = None, keep_all: bool = False) -> str:
        """The query: outputs (and the source columns ``keep``, or all) of every row."""
        return self.layered(source, lambda: self.outputs(number_text), keep, types, keep_all)

    def prop(self, name: str, prop: str) -> str:
        """A property of a field (``empty``, ``string``, ``number`` ...), computed once a row."""
        return self._prop(name, prop)

    def invalid_answer(self, qid: str) -> str:
        """SQL TRUE when the row's answer to ``qid`` is not one its version allows."""
        bad = self._field_invalid(qid, self.plans[qid])
        return f"({' OR '.join(bad)})" if bad else "FALSE"

    def token_valid(self) -> str:
        """SQL TRUE when the row's respondent token has the allowed length and characters."""
        return f"COALESCE({token_valid(self._prop('respondent', 'string'), self.d)}, FALSE)"

    def layered(self, source: str, outputs: Callable[[], list[tuple[str, str]]],
                keep: Sequence[str] = (), types: Mapping[str, str] | None = None,
                keep_all: bool = False) -> str:
        """A query of the columns ``outputs()`` gives, the fields' properties computed below it.

        Properties a column reads (``prop``) are computed once a row, in the layers under it.
        """
        self._derived = {}
        outputs_list = outputs()
        types = types or {}
        fence = self.d.fence()
        relation = f"({source}{fence}) AS rr_src"
        for level in (1, 2, 3):
            layer = [f"{expr} AS {name}" for name, (at, expr) in self._derived.items()
                     if at == level]
            if layer:
                relation = (f"(SELECT {', '.join(layer)}, * FROM {relation}{fence}) "
                            f"AS rr_l{level}")
        passed = ["*"] if keep_all else [self.d.ident(k) for k in keep]
        top = [f"CAST({expr} AS {types[name]}) AS {name}" if name in types
               else f"{expr} AS {name}" for name, expr in outputs_list]
        return f"SELECT {', '.join([*top, *passed])} FROM {relation}"


def json_string(value: str) -> str:
    """A value as JSON writes it (the form a multi-choice list holds it in)."""
    import json

    return json.dumps(value, ensure_ascii=False)
