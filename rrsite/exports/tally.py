"""Validation and counting of batches of rows, as they stream in.

Per row, in order (the first reason that applies is the one counted): a missing survey, version
or respondent field; an unknown survey; an unknown version; an invalid value (an answer the
row's version does not allow: a value, or a report of a design with its own reports such as
crosswise's "same"; an answer to a question the version does not have; a malformed respondent
token; a two-group question answered without its group 1 or 2 in ``<id>.group``, or a group
where the version has no two-group question or no answer); a duplicate respondent token (the
first row with a token is kept).

Accepted rows are only counted: per (version, question, [group,] reported value, subgroup), so
memory does
not grow with the number of rows, except for duplicate detection, which keeps 8 bytes per
accepted respondent: a 64-bit hash of the token (``TokenSet``, plus a fixed 16 MB filter). Two
different tokens share a hash with probability about 2^-64 per pair (about 3e-6 for some pair
among 10 million respondents); such a pair would be reported as a duplicate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .catalog import CHOICE_TYPES, GROUP_SUFFIX, Catalog, QuestionSpec
from .columns import NUMBER_WIDTH, Column, Vocab
from .oracles import decode_all, supports
from .readers import Batch
from .rejections import Rejections
from .subgroups import NO_ANSWER, Subgroups, parse_by

#: Runs of sorted hashes are merged while the older is less than twice the newer, up to this size
#: (so merging never copies more than 16 MB at once).
RUN_CAP = 1 << 21
#: The token filter has 2^FILTER_BITS bits (16 MB).
FILTER_BITS = 27

__all__ = ["NO_ANSWER", "Checked", "Counts", "FieldPlan", "Tally", "TokenSet"]
#: Row status codes, in the order the reasons are checked.
MISSING, SURVEY, VERSION, INVALID, DUPLICATE = 1, 2, 3, 4, 5
#: A row of another wave of the same series: left out, neither counted nor rejected.
SIBLING = 6


@dataclass
class Checked:
    """A batch after ``Tally.check``.

    Each row's status so far (0 = fine), and what counting needs.
    """

    batch: Batch
    status: np.ndarray
    describe: dict[int, Callable[[int], str]]
    hashes: np.ndarray | None
    version: np.ndarray
    local_codes: dict[str, np.ndarray]
    union_codes: dict[str, np.ndarray]
    #: Per two-group question id: each row's group (1 or 2; 0 when none or not valid).
    group_codes: dict[str, np.ndarray] = field(default_factory=dict)
    #: Per number question id: each row's number (NaN when empty or not a number).
    number_values: dict[str, np.ndarray] = field(default_factory=dict)
    #: Per frequency-oracle question id: which answers each row's report supports (n x k, per
    #: version with that design; rows of other versions all False) and which rows answered it.
    supports: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)


class TokenSet:
    """Set of 64-bit token hashes: sorted numpy runs behind a bitmap filter.

    The runs are merged like a log-structured tree. The filter is a Bloom filter of 2^FILTER_BITS
    bits with two probes (two slices of the hash's bits): a hash with either bit clear was never
    added, so only the few with both set (about 2% at 10 million tokens) are searched for in the
    runs. Memory: 16 MB for the filter and 8 bytes per token.
    """

    def __init__(self) -> None:
        self.runs: list[np.ndarray] = []
        self.filter = np.zeros(1 << (FILTER_BITS - 3), dtype=np.uint8)

    def __len__(self) -> int:
        return sum(len(run) for run in self.runs)

    @property
    def nbytes(self) -> int:
        """Memory held by the hashes (not counting the filter)."""
        return sum(run.nbytes for run in self.runs)

    @staticmethod
    def _probes(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The two filter positions of each hash: its top and its next FILTER_BITS bits."""
        mask = np.uint64((1 << FILTER_BITS) - 1)
        first = (hashes >> np.uint64(64 - FILTER_BITS)).astype(np.int64)
        second = ((hashes >> np.uint64(64 - 2 * FILTER_BITS)) & mask).astype(np.int64)
        return first, second

    def _test(self, positions: np.ndarray) -> np.ndarray:
        hit: np.ndarray = (self.filter[positions >> 3]
                           & (1 << (positions & 7)).astype(np.uint8)) != 0
        return hit

    def _set(self, positions: np.ndarray) -> None:
        """Set bits (positions sorted): OR together the bits that fall in one byte first."""
        byte = positions >> 3
        bit = (1 << (positions & 7)).astype(np.uint8)
        first = np.flatnonzero(np.diff(byte, prepend=-1))
        self.filter[byte[first]] |= np.bitwise_or.reduceat(bit, first)

    def add(self, hashes: np.ndarray) -> np.ndarray:
        """Add hashes in row order; returns which rows repeat an earlier hash (here or before)."""
        duplicate = np.zeros(len(hashes), dtype=bool)
        if len(hashes) == 0:
            return duplicate
        ordered = np.sort(hashes)
        repeats = ordered[1:] == ordered[:-1]
        if repeats.any():  # rare: the same token twice in one batch; keep its first row
            unique, first = np.unique(hashes, return_index=True)
            duplicate[:] = True
            duplicate[first] = False
        else:
            unique = ordered
        first_probe, second_probe = self._probes(unique)
        maybe = np.flatnonzero(self._test(first_probe) & self._test(second_probe))
        seen = np.zeros(len(unique), dtype=bool)
        if len(maybe):
            candidates = unique[maybe]
            found = np.zeros(len(candidates), dtype=bool)
            for run in self.runs:
                position = np.searchsorted(run, candidates)
                np.minimum(position, len(run) - 1, out=position)
                found |= run[position] == candidates
            seen[maybe[found]] = True
        if seen.any():
            duplicate |= np.isin(hashes, unique[seen])
        fresh = unique[~seen]
        if len(fresh):
            self._set(first_probe[~seen])  # sorted, as the hashes are
            self._set(np.sort(second_probe[~seen]))
            self.runs.append(fresh)
            while (len(self.runs) > 1 and len(self.runs[-2]) < 2 * len(self.runs[-1])
                   and len(self.runs[-2]) + len(self.runs[-1]) <= RUN_CAP):
                newer = self.runs.pop()
                older = self.runs.pop()
                merged = np.concatenate((older, newer))
                merged.sort(kind="stable")  # timsort: a linear merge of two sorted runs
                self.runs.append(merged)
        return duplicate


@dataclass
class FieldPlan:
    """How to check and count one question id across every known version."""

    qid: str
    union: Vocab | None
    lut: np.ndarray | None
    choice: list[int] = field(default_factory=list)
    number: list[tuple[int, QuestionSpec]] = field(default_factory=list)
    text: list[tuple[int, QuestionSpec]] = field(default_factory=list)
    multi: list[tuple[int, QuestionSpec]] = field(default_factory=list)
    absent: list[int] = field(default_factory=list)
    #: Versions that ask the question with a two-group design.
    grouped: list[int] = field(default_factory=list)
    #: Versions that ask it with a frequency oracle (rrsite.core.frequency).
    oracle: list[tuple[int, QuestionSpec]] = field(default_factory=list)


@dataclass
class Counts:
    """Reports of one question in one version.

    ``counts[report, subgroup]`` (the reports are the question's ``answers``: its values, or the
    design's own reports), unanswered per subgroup, and for a two-group design the same counts
    split by the design's group: ``by_group[group - 1, report, subgroup]``.
    """

    counts: np.ndarray
    missing: np.ndarray
    by_group: np.ndarray | None = None


def field_plan(catalog: Catalog, qid: str) -> FieldPlan:
    """How question ``qid`` is checked and counted in each version of the catalog."""
    versions = len(catalog.versions)
    found = dict(catalog.questions_named(qid))
    words: dict[str, None] = {}
    plan = FieldPlan(qid, None, None)
    for m in range(versions):
        question = found.get(m)
        if question is None:
            plan.absent.append(m)
        elif question.oracle is not None:
            plan.oracle.append((m, question))
        elif question.type in CHOICE_TYPES:
            plan.choice.append(m)
            words.update(dict.fromkeys(question.answers))
            if question.two_group:
                plan.grouped.append(m)
        elif question.type == "number":
            plan.number.append((m, question))
            if question.two_group:
                plan.grouped.append(m)
        elif question.type == "text":
            plan.text.append((m, question))
        else:
            plan.multi.append((m, question))
    if plan.choice:
        plan.union = Vocab(list(words))
        lut = np.full((versions, len(words) + 2), -1, dtype=np.int32)
        lut[:, 0] = -2  # union code -2 (empty) sits at column 0
        for m in plan.choice:
            question = found[m]
            for local, value in enumerate(question.answers):
                lut[m, plan.union.lookup[value] + 2] = local
        plan.lut = lut
    return plan


def duplicate_message(token: str) -> str:
    """Why a row whose respondent token an earlier row had is left out."""
    return f"respondent {token!r} was seen before; the first row is kept"


class Tally:
    """Checks batches of rows and counts the accepted ones."""

    def __init__(self, catalog: Catalog, by: str | Sequence[str] | None,
                 rejections: Rejections, siblings: tuple[str, ...] = ()) -> None:
        self.catalog = catalog
        #: Survey ids of the other waves of this survey's series: their rows are left out.
        self.siblings = Vocab(list(siblings)) if siblings else None
        self.rejections = rejections
        self.tokens = TokenSet()
        self.versions = len(catalog.versions)
        self.rows_accepted = np.zeros(self.versions, dtype=np.int64)
        self.survey_vocab = Vocab([catalog.survey])
        self.version_vocab = Vocab(catalog.version_ids)
        self.plans = {qid: field_plan(catalog, qid) for qid in catalog.question_ids()}
        # --by: the cells of the by-questions (rrsite.exports.subgroups); "all" without one
        questions = parse_by(by)
        unions = {q: self.plans[q].union for q in questions}
        self.subgroups = Subgroups.of(
            questions, {q: union.words for q, union in unions.items() if union is not None})
        self.by = self.subgroups.label
        self.groups = self.subgroups.names
        self.counts: dict[tuple[int, str], Counts] = {}
        #: Randomized number questions: per (version, id) the accepted rows' (reports,
        #: subgroups, design groups) batch by batch (rrsite.estimate.numbers needs every report).
        self.numbers: dict[tuple[int, str], list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        #: Frequency oracles: per (version, id) the accepted answered rows' supports (packed
        #: bits) and subgroups, batch by batch, and the accepted rows that did not answer.
        self.oracles: dict[tuple[int, str], list[tuple[np.ndarray, np.ndarray]]] = {}
        self.oracle_missing: dict[tuple[int, str], np.ndarray] = {}
        for qid, plan in self.plans.items():
            for m, number_question in plan.number:
                if number_question.numeric:
                    self.numbers[(m, qid)] = []
            for m, _ in plan.oracle:
                self.oracles[(m, qid)] = []
                self.oracle_missing[(m, qid)] = np.zeros(len(self.groups), dtype=np.int64)
        for qid, plan in self.plans.items():
            for m in plan.choice:
                question = catalog.versions[m].question(qid)
                assert question is not None
                shape = (len(question.answers), len(self.groups))
                self.counts[(m, qid)] = Counts(
                    np.zeros(shape, dtype=np.int64), np.zeros(len(self.groups), dtype=np.int64),
                    np.zeros((2, *shape), dtype=np.int64) if question.two_group else None,
                )

    # ------------------------------------------------------------------------------- checking

    def process(self, batch: Batch) -> None:
        """Check every row of a batch, count the rejected by reason and the accepted by answer."""
        self.commit(self.check(batch))

    def check(self, batch: Batch) -> Checked:
        """Everything about a batch that does not depend on earlier batches.

        Reads only the (immutable) plans, so batches can be checked in another thread while
        the next block is parsed; ``commit`` then runs in order.
        """
        n = len(batch)
        status = np.zeros(n, dtype=np.int8)
        describe: dict[int, Callable[[int], str]] = {}

        def mark(mask: np.ndarray, code: int, message: Callable[[int], str]) -> None:
            status[(status == 0) & mask] = code
            describe.setdefault(code, message)

        columns = batch.columns
        # survey
        if "survey" in columns:
            survey = columns["survey"].codes(self.survey_vocab)
            missing_fields: list[tuple[str, np.ndarray]] = [("survey", survey == -2)]
            unknown_survey = survey == -1
            if self.siblings is not None:  # another wave of the series: not this survey's row
                mark(columns["survey"].codes(self.siblings) >= 0, SIBLING, lambda i: "")
        else:
            missing_fields = []
            unknown_survey = np.zeros(n, dtype=bool)
        # version
        if "version" in columns:
            version = columns["version"].codes(self.version_vocab)
            missing_fields.append(("version", version == -2))
        else:
            constant = batch.constants["version"]
            version = np.full(n, self.catalog.version_ids.index(constant), dtype=np.int32)
        token_column = columns.get("respondent")
        hashes = None
        if token_column is not None:
            hashes, token_valid, token_empty = token_column.tokens()
            missing_fields.append(("respondent", token_empty))
        if missing_fields:
            any_missing = np.logical_or.reduce([mask for _, mask in missing_fields])

            def missing_message(i: int) -> str:
                name = next(name for name, mask in missing_fields if mask[i])
                return f"no {name}"

            mark(any_missing, MISSING, missing_message)
        if "survey" in columns:
            survey_column = columns["survey"]
            mark(unknown_survey, SURVEY,
                 lambda i: f"survey {survey_column.raw(i)!r} is not {self.catalog.survey!r}")
        unknown_version = version == -1
        if "version" in columns:
            version_column = columns["version"]
            mark(unknown_version, VERSION,
                 lambda i: f"version {version_column.raw(i)!r} of {self.catalog.survey!r} has no "
                           f"manifest (known: {', '.join(self.catalog.version_ids)})")
        safe_version = np.where(version >= 0, version, 0)
        # answers
        invalid: list[tuple[np.ndarray, Callable[[int], str]]] = []
        local_codes: dict[str, np.ndarray] = {}
        union_codes: dict[str, np.ndarray] = {}
        group_codes: dict[str, np.ndarray] = {}
        number_values: dict[str, np.ndarray] = {}
        oracle_supports: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        for qid, plan in self.plans.items():
            column = columns.get(qid)
            if column is not None and plan.oracle:
                found, wrong = self._check_oracle(plan, column, safe_version)
                oracle_supports[qid] = found
                if wrong.any():
                    invalid.append((wrong != "", _oracle_message(qid, wrong)))
            if column is not None:
                bad, local, union = self._check_field(plan, column, safe_version)
                if plan.number:
                    number_values[qid] = column.numbers()[0]
                if local is not None:
                    local_codes[qid] = local
                if union is not None:
                    union_codes[qid] = union
                if bad.any():
                    invalid.append((bad, self._describer(qid, column, safe_version)))
            group_column = columns.get(qid + GROUP_SUFFIX)
            if plan.grouped or group_column is not None:
                if qid in local_codes:
                    answered = local_codes[qid] >= 0
                elif qid in number_values:
                    answered = ~np.isnan(number_values[qid])
                else:
                    answered = np.zeros(n, dtype=bool)
                bad, codes = self._check_group(plan, group_column, answered, safe_version)
                group_codes[qid] = codes
                if bad.any():
                    invalid.append((bad, self._group_describer(qid, group_column, answered,
                                                               safe_version)))
        if token_column is not None:
            bad_token = ~token_valid & ~token_empty
            if bad_token.any():
                invalid.append((bad_token, lambda i: (
                    f"respondent token {token_column.raw(i)!r} is not 22 to 64 characters of "
                    "A-Z a-z 0-9 _ -")))
        if batch.unknown:
            unknown_rows = np.zeros(n, dtype=bool)
            unknown_rows[list(batch.unknown)] = True
            invalid.append((unknown_rows, lambda i: (
                f"answer to {batch.unknown[i]!r}, which no version of "
                f"{self.catalog.survey!r} asks")))
        if invalid:
            any_invalid = np.logical_or.reduce([mask for mask, _ in invalid])
            mark(any_invalid, INVALID,
                 lambda i: next(message(i) for mask, message in invalid if mask[i]))
        return Checked(batch, status, describe, hashes if token_column is not None else None,
                       safe_version, local_codes, union_codes, group_codes, number_values,
                       oracle_supports)

    def commit(self, checked: Checked) -> None:
        """Duplicates (against every earlier row), rejections and counts, in row order."""
        batch, status = checked.batch, checked.status
        if checked.hashes is not None:
            # duplicates among the rows that passed everything else
            token_column = batch.columns["respondent"]
            passed = np.flatnonzero(status == 0)
            repeated = self.tokens.add(checked.hashes[passed])
            status[passed[repeated]] = DUPLICATE
            checked.describe.setdefault(
                DUPLICATE, lambda i: duplicate_message(token_column.raw(i)))
        self._record(batch, status, checked.describe)
        self._count(status == 0, checked.version, checked.local_codes, checked.union_codes,
                    checked.group_codes)
        self._keep_numbers(status == 0, checked)
        self._keep_oracles(status == 0, checked)

    def _record(
        self, batch: Batch, status: np.ndarray, describe: dict[int, Callable[[int], str]]
    ) -> None:
        names = {1: "missing-field", 2: "unknown-survey", 3: "unknown-version",
                 4: "invalid-value", 5: "duplicate-respondent"}
        for code, reason in names.items():
            where = np.flatnonzero(status == code)
            if len(where):
                self.rejections.add_many(reason, batch.file, batch.rows[where],
                                         _at(describe[code], where))

    def _check_field(
        self, plan: FieldPlan, column: Column, version: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Check one field of every row against the row's version.

        Returns the rows whose value the version's question does not allow, the local value
        index per row (choice questions; -2 unanswered) and the union code per row.
        """
        n = len(column)
        bad = np.zeros(n, dtype=bool)
        local = union = None
        if plan.union is not None:
            assert plan.lut is not None
            union = column.codes(plan.union)
            local = plan.lut[version, union + 2]
            empty = union == -2
            if len(plan.choice) < self.versions:
                in_choice = np.isin(version, plan.choice)
                bad |= in_choice & (local == -1)
            else:
                bad |= local == -1
        else:
            empty = column.empty()
        if plan.absent:
            bad |= np.isin(version, plan.absent) & ~empty
        if plan.number:
            values, number_empty = column.numbers()
            for m, question in plan.number:
                rows = version == m
                wrong = np.isnan(values)
                if question.number_design is not None:  # a report: possible under the design?
                    design = question.number_design
                    where = np.flatnonzero(rows & ~number_empty & ~wrong)
                    if len(where):
                        unique, inverse = np.unique(values[where], return_inverse=True)
                        impossible = np.array([design.impossible(float(v)) is not None
                                               for v in unique])
                        wrong[where] = impossible[inverse]
                    bad |= rows & ~number_empty & wrong
                    continue
                if question.minimum is not None:
                    wrong |= values < question.minimum
                if question.maximum is not None:
                    wrong |= values > question.maximum
                if question.integer:
                    wrong |= values != np.floor(values)
                bad |= rows & ~number_empty & wrong
        if plan.text:
            chars, text_empty, is_text = column.char_lengths()
            for m, question in plan.text:
                rows = version == m
                bad |= rows & ~text_empty & (~is_text | (chars > question.max_length))
        if plan.multi:
            objects = column.objects()
            for m, question in plan.multi:
                allowed = set(question.values)
                for i in np.flatnonzero(version == m).tolist():
                    if not _multi_ok(objects[i], allowed):
                        bad[i] = True
        return bad, local, union

    def _check_oracle(
        self, plan: FieldPlan, column: Column, version: np.ndarray
    ) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """Each oracle version's reports: {version: (supports, answered)} and why rows are bad.

        The second item holds the reason per row ("" where fine), for the rejection message.
        """
        objects = column.objects()
        wrong = np.full(len(objects), "", dtype=object)
        found: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for m, question in plan.oracle:
            assert question.oracle is not None
            where = np.flatnonzero(version == m)
            reports, problems = decode_all(question.oracle, question.values,
                                           [objects[i] for i in where.tolist()])
            for i, problem in zip(where.tolist(), problems, strict=True):
                if problem is not None:
                    wrong[i] = problem
            table = np.zeros((len(objects), question.oracle.k), dtype=bool)
            table[where] = supports(question.oracle, reports)
            answered = np.zeros(len(objects), dtype=bool)
            answered[where] = [report is not None for report in reports]
            found[m] = (table, answered)
        return found, wrong

    def _check_group(
        self, plan: FieldPlan, column: Column | None, answered: np.ndarray, version: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Check the ``<id>.group`` field of every row against its version and its answer.

        A row answering a two-group question needs group 1 or 2; a group anywhere else (no
        answer, or a version without the two-group question) is wrong. Returns the bad rows and
        each row's group (1 or 2; 0 otherwise).
        """
        n = len(answered)
        if column is None:
            values, empty = np.full(n, np.nan), np.ones(n, dtype=bool)
        else:
            values, empty = column.numbers()
        codes = np.where((values == 1) | (values == 2), values, 0).astype(np.int8)
        needs = np.isin(version, plan.grouped) & answered
        bad = (needs & (codes == 0)) | (~needs & ~empty)
        return bad, np.where(needs, codes, 0).astype(np.int8)

    def _group_describer(
        self, qid: str, column: Column | None, answered: np.ndarray, version: np.ndarray
    ) -> Callable[[int], str]:
        catalog = self.catalog
        field_name = qid + GROUP_SUFFIX

        def message(i: int) -> str:
            spec = catalog.versions[int(version[i])]
            question = spec.question(qid)
            value = "" if column is None else column.raw(i)
            if question is None or not question.two_group:
                return (f"{field_name}: a group ({value!r}) but version {spec.version} has no "
                        f"two-group question {qid!r}")
            if not answered[i]:
                return f"{field_name}: a group ({value!r}) for a question not answered"
            if column is None or value == "":
                return (f"{field_name}: no group; the two-group design of {qid!r} needs the "
                        "group (1 or 2) drawn with the answer")
            return f"{field_name}: {value!r} is not 1 or 2"

        return message

    def _describer(self, qid: str, column: Column, version: np.ndarray) -> Callable[[int], str]:
        catalog = self.catalog
        parsed: list[np.ndarray] = []  # the column's numbers as the checks read them, once

        def number(i: int) -> float:
            if not parsed:
                parsed.append(column.numbers()[0])
            return float(parsed[0][i])

        def message(i: int) -> str:
            spec = catalog.versions[int(version[i])]
            question = spec.question(qid)
            value = column.raw(i)
            if question is None:
                return (f"{qid}: answered ({value!r}) but version {spec.version} has no such "
                        "question")
            if question.type in CHOICE_TYPES:
                return f"{qid}: {value!r} is not one of {', '.join(question.answers)}"
            if question.type == "number" and question.number_design is not None:
                report = number(i)
                if math.isnan(report):  # what the checks read: a JSON number of <= 32 characters
                    long = f" of at most {NUMBER_WIDTH} characters" if len(
                        value) > NUMBER_WIDTH else ""
                    return f"{qid}: {value!r} is not a number{long}"
                why = question.number_design.impossible(report)
                return (f"{qid}: impossible report under design {question.number_design.name}: "
                        f"{why}")
            if question.type == "number":
                low = "" if question.minimum is None else f" >= {question.minimum:g}"
                high = "" if question.maximum is None else f" <= {question.maximum:g}"
                kind = "a whole number" if question.integer else "a number"
                return f"{qid}: {value!r} is not {kind}{low}{high}"
            if question.type == "text":
                return f"{qid}: text longer than {question.max_length} characters (or not text)"
            return f"{qid}: {value!r} is not a JSON list of {', '.join(question.values)}"

        return message

    # ------------------------------------------------------------------------------- counting

    def _count(
        self, ok: np.ndarray, version: np.ndarray, local_codes: dict[str, np.ndarray],
        union_codes: dict[str, np.ndarray], group_codes: dict[str, np.ndarray],
    ) -> None:
        if not ok.any():
            return
        version = version[ok]
        self.rows_accepted += np.bincount(version, minlength=self.versions)
        groups = len(self.groups)
        group = self.subgroups.codes(union_codes, len(ok))[ok]
        single = self.versions == 1
        for qid, plan in self.plans.items():
            codes = local_codes.get(qid)
            codes_ok = codes[ok] if codes is not None else None
            design_groups = group_codes[qid][ok] if qid in group_codes else None
            for m in plan.choice:
                target = self.counts[(m, qid)]
                if single:
                    rows_group = group
                    local = codes_ok
                    rows_design_group = design_groups
                else:
                    rows = version == m
                    if not rows.any():
                        continue
                    rows_group = group[rows]
                    local = codes_ok[rows] if codes_ok is not None else None
                    rows_design_group = design_groups[rows] if design_groups is not None \
                        else None
                if local is None:
                    target.missing += np.bincount(rows_group, minlength=groups)
                    continue
                answered = local >= 0
                k = target.counts.shape[0]
                target.counts += np.bincount(
                    local[answered] * groups + rows_group[answered], minlength=k * groups
                ).reshape(k, groups)
                target.missing += np.bincount(rows_group[~answered], minlength=groups)
                if target.by_group is not None:
                    assert rows_design_group is not None  # every answered row has its group
                    which = rows_design_group[answered].astype(np.int64) - 1
                    target.by_group += np.bincount(
                        (which * k + local[answered]) * groups + rows_group[answered],
                        minlength=2 * k * groups,
                    ).reshape(2, k, groups)


    def _keep_numbers(self, ok: np.ndarray, checked: Checked) -> None:
        """Keep the accepted reports of randomized number questions, with their subgroups."""
        if not self.numbers or not ok.any():
            return
        subgroup = self.subgroups.codes(checked.union_codes, len(ok))
        for (m, qid), store in self.numbers.items():
            values = checked.number_values.get(qid)
            if values is None:
                continue
            rows = ok & (checked.version == m) & ~np.isnan(values)
            if not rows.any():
                continue
            design_group = checked.group_codes[qid][rows] if qid in checked.group_codes \
                else np.zeros(int(rows.sum()), dtype=np.int8)
            store.append((values[rows].astype(np.float64), subgroup[rows].astype(np.int64),
                          design_group.astype(np.int8)))

    def add_reports(self, m: int, qid: str, reports: np.ndarray, subgroups: np.ndarray,
                    groups: np.ndarray) -> None:
        """Keep accepted reports of randomized number question ``qid`` in version ``m``."""
        self.numbers[(m, qid)].append((np.asarray(reports, dtype=np.float64),
                                       np.asarray(subgroups, dtype=np.int64),
                                       np.asarray(groups, dtype=np.int8)))

    def _keep_oracles(self, ok: np.ndarray, checked: Checked) -> None:
        """Keep the accepted rows' supports of frequency-oracle questions, with subgroups."""
        if not self.oracles or not ok.any():
            return
        groups = len(self.groups)
        subgroup = self.subgroups.codes(checked.union_codes, len(ok))
        for (m, qid), store in self.oracles.items():
            rows = ok & (checked.version == m)
            found = checked.supports.get(qid, {}).get(m)
            answered = found[1] if found is not None else np.zeros(len(ok), dtype=bool)
            self.oracle_missing[(m, qid)] += np.bincount(subgroup[rows & ~answered],
                                                         minlength=groups)
            if found is None or not (rows & answered).any():
                continue
            keep = rows & answered
            store.append((np.packbits(found[0][keep], axis=1), subgroup[keep]))

    def oracle_supports(self, m: int, qid: str) -> tuple[np.ndarray, np.ndarray]:
        """(supports n x k boolean, subgroup index) of the accepted answered rows, in row order."""
        store = self.oracles.get((m, qid), [])
        question = self.catalog.versions[m].question(qid)
        k = question.oracle.k if question is not None and question.oracle is not None else 0
        if not store:
            return np.zeros((0, k), dtype=bool), np.zeros(0, dtype=np.int64)
        packed = np.concatenate([s[0] for s in store])
        table = np.unpackbits(packed, axis=1, count=k).astype(bool)
        return table, np.concatenate([s[1] for s in store])

    def number_reports(self, m: int, qid: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(reports, subgroup index, design group) of every accepted row, smallest report first.

        The order is the reports' (a stable sort): every reader and engine hands the estimator
        the same vectors, so their sums, and the estimates, agree to the last bit.
        """
        store = self.numbers.get((m, qid), [])
        if not store:
            return (np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8))
        reports = np.concatenate([s[0] for s in store])
        subgroups = np.concatenate([s[1] for s in store]).astype(np.int64)
        groups = np.concatenate([s[2] for s in store]).astype(np.int8)
        order = np.lexsort((groups, subgroups, reports))
        return reports[order], subgroups[order], groups[order]


def _at(message: Callable[[int], str], where: np.ndarray) -> Callable[[int], str]:
    """``message`` for the i-th of the rows ``where``."""
    return lambda i: message(int(where[i]))


def _oracle_message(qid: str, wrong: np.ndarray) -> Callable[[int], str]:
    """The rejection message of a row whose frequency-oracle report is impossible."""
    return lambda i: f"{qid}: impossible report under its design: {wrong[i]}"


def _multi_ok(value: object, allowed: set[str]) -> bool:
    """A multi-choice answer: a list (or its JSON text) of distinct allowed values; None is fine."""
    if value is None or value == "":
        return True
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    if not isinstance(value, list):
        return False
    return (all(isinstance(v, str) and v in allowed for v in value)
            and len(set(value)) == len(value))
