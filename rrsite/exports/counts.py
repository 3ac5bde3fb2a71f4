"""Report counts instead of rows (`rrsite analyze --counts FILE.csv`): read into a tally.

For published tables and for counts computed elsewhere (a database, a cluster: the query
``rrsite analyze --sql`` prints, rrsite.exports.sql.aggregate). The CSV has a header with the
columns

    question, version, group, report, subgroup, count[, rejected, file, row, values]

``question`` is a question's id (a randomized one, or a yes-no or choice question asked
directly); ``version`` a version id of the survey (as in the export), or the name of the
question's design when exactly one version uses it; ``group`` the two-group designs' group (1 or
2, required for a report; empty or 1 for one-group designs); ``report`` the reported value (a
design's own report for crosswise, triangular and kuk: same/different, circle/triangle, the
number of red cards; a randomized number's report: the number, each distinct report on its own
row with how many gave it), or empty: rows that did not answer; ``subgroup`` (optional column)
the answer to the ``--by`` question; with several ``--by`` questions (crossed subgroups), one
column per by-question, named by its id, holds its answer (a one-question ``--by`` may use such
a column too); ``count`` a non-negative integer. Rows with the same keys
add up. The estimates are those the rows would give: the counts fill the same tally the export
reader fills.

Optional rows the query of ``--sql`` writes too: ``question`` empty (and ``version``): how many
rows of that version were accepted; ``rejected`` a reason of rrsite.exports.rejections: how
many rows were rejected for it, or, with ``file``, ``row`` and ``values`` (a JSON object of the
row's fields; ``count`` empty), one of the rows shown for it, whose message rrsite's own checks
write (rrsite.exports.sql.shown).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .catalog import CHOICE_TYPES, Catalog
from .readers import ExportError, FileInfo
from .rejections import REASONS, Example, Rejections
from .subgroups import parse_by
from .tally import Tally

COLUMNS = ("question", "version", "group", "report", "subgroup", "count", "rejected", "file",
           "row", "values")
REQUIRED = ("question", "version", "report", "count")
#: How many bad rows are listed before the error stops.
SHOWN_ERRORS = 20


class Filling:
    """A tally being filled from count rows; ``add`` says what is wrong with a row, if anything."""

    def __init__(self, catalog: Catalog, by: str | Sequence[str] | None) -> None:
        self.catalog = catalog
        self.by = by
        self.tally = Tally(catalog, by, Rejections())
        self.per_version: dict[int, dict[str, int]] = {}
        self.accepted: dict[int, int] = {}
        self.reports: dict[tuple[int, str], list[tuple[float, int, int, int]]] = {}
        self.examples: dict[str, list[Example]] = {}
        self.rejected: dict[str, int] = {}
        self.rows = 0

    def add(self, row: Mapping[str, str]) -> str | None:
        """Add one row of counts, or say what is wrong with it."""
        self.rows += 1
        reason = row.get("rejected", "")
        if reason:
            return self._rejected(reason, row)
        qid = row.get("question", "")
        if not qid:
            return self._accepted(row)
        return self._count(qid, row)

    def _count_of(self, row: Mapping[str, str]) -> int | str:
        text = row.get("count", "")
        if not text.isdigit():
            return f"count {text!r} is not a non-negative integer"
        return int(text)

    def _version_of(self, text: str) -> int | None:
        ids = self.catalog.version_ids
        return ids.index(text) if text in ids else None

    def _accepted(self, row: Mapping[str, str]) -> str | None:
        m = self._version_of(row.get("version", ""))
        if m is None:
            return (f"no question: a row of accepted rows needs a version of "
                    f"{self.catalog.survey!r}, got {row.get('version', '')!r}")
        return self._add(self.accepted, m, row)

    def _rejected(self, reason: str, row: Mapping[str, str]) -> str | None:
        if reason not in REASONS:
            return f"rejected {reason!r} is not a reason ({', '.join(REASONS)})"
        if row.get("row", ""):
            return self._example(reason, row)
        return self._add(self.rejected, reason, row)

    def _add(self, table: dict[Any, int], key: Any, row: Mapping[str, str]) -> str | None:
        """Add the row's count to ``table[key]``; the problem with its count, if any."""
        count = self._count_of(row)
        if isinstance(count, str):
            return count
        table[key] = table.get(key, 0) + count
        return None

    def _example(self, reason: str, row: Mapping[str, str]) -> str | None:
        from .sql.checks import REASON_OF
        from .sql.shown import Disagreement, Shown

        text = row.get("row", "")
        if not text.isdigit():
            return f"row {text!r} is not a row number"
        try:
            values = json.loads(row.get("values", "") or "{}")
        except ValueError as error:
            return f"values are not a JSON object: {error}"
        if not isinstance(values, dict):
            return "values are not a JSON object"
        status = {r: code for code, r in REASON_OF.items()}[reason]
        fields = {k: (None if v is None else v if isinstance(v, str) else json.dumps(v))
                  for k, v in values.items()}
        try:
            message = Shown(self.catalog, self.by).values(row.get("file", ""), int(text),
                                                          fields, status, {})
        except Disagreement as error:
            return f"the row shown is not rejected as {reason} by rrsite: {error}"
        self.examples.setdefault(reason, []).append(Example(row.get("file", ""), int(text),
                                                            message))
        return None

    def _count(self, qid: str, row: Mapping[str, str]) -> str | None:
        named = [(m, q) for m, q in self.catalog.questions_named(qid)
                 if q.sensitive or q.type in CHOICE_TYPES]
        if not named:
            return (f"question {qid!r} is not a randomized question, nor a yes-no or choice "
                    f"question, of survey {self.catalog.survey!r}")
        if any(q.oracle is not None for _, q in named):
            return (f"question {qid!r} uses a frequency oracle: its reports support several "
                    "answers each and cannot be counted by value; analyze the export's rows "
                    "instead of --counts")
        wanted = row.get("version", "")
        matches = [(m, q) for m, q in named if self.catalog.versions[m].version == wanted]
        if not matches:
            matches = [(m, q) for m, q in named if (q.design_spec or {}).get("name") == wanted]
            if len(matches) > 1:
                return (f"design {wanted!r} of {qid!r} is used by several versions; give the "
                        "version id instead")
        if not matches:
            return f"{qid!r} has no version or design {wanted!r}"
        m, question = matches[0]
        report = row.get("report", "")
        group = row.get("group", "")
        if question.two_group and report and group not in ("1", "2"):
            return (f"group {group!r}: {qid!r} in this version is a two-group design (group must "
                    "be 1 or 2)")
        if (not question.two_group or not report) and group not in ("", "1"):
            return (f"group {group!r}: {qid!r} in this version is a one-group design (group must "
                    "be empty or 1)")
        count = self._count_of(row)
        if isinstance(count, str):
            return count
        column = 0
        subgroups = self.tally.subgroups
        if subgroups.questions:
            by_column = any(q.lower() in row for q in subgroups.questions)
            if by_column or len(subgroups.questions) == 1:
                answers = ([row.get(q.lower(), "") for q in subgroups.questions] if by_column
                           else [row.get("subgroup", "")])
                try:
                    column = subgroups.index(answers)
                except ValueError as error:
                    return f"subgroup: {error}"
            else:  # the query of --sql names a crossed cell in ``subgroup``
                cell = row.get("subgroup", "")
                if cell not in subgroups.names:
                    return f"subgroup {cell!r} is not a cell of --by {subgroups.label}"
                column = subgroups.names.index(cell)
        elif row.get("subgroup", ""):
            return f"subgroup {row['subgroup']!r} given but no --by question to name it"
        if question.numeric:
            return self._number(m, qid, report, group, column, count)
        if question.type not in CHOICE_TYPES:
            return f"question {qid!r} is a {question.type} question: it has no counts"
        target = self.tally.counts[(m, question.id)]
        totals = self.per_version.setdefault(m, {})
        totals[qid] = totals.get(qid, 0) + count
        if not report:
            target.missing[column] += count
            return None
        if report not in question.answers:
            kind = "report" if question.reports else "value"
            return (f"report {report!r} is not a {kind} of {qid!r} "
                    f"({', '.join(question.answers)})")
        target.counts[question.answers.index(report), column] += count
        if target.by_group is not None:
            target.by_group[int(group) - 1, question.answers.index(report), column] += count
        return None

    def _number(self, m: int, qid: str, report: str, group: str, column: int,
                count: int) -> str | None:
        totals = self.per_version.setdefault(m, {})
        totals[qid] = totals.get(qid, 0) + count
        if not report:
            return None
        try:
            value = float(report)
        except ValueError:
            return f"report {report!r} of randomized number {qid!r} is not a number"
        question = self.catalog.versions[m].question(qid)
        assert question is not None and question.number_design is not None
        why = question.number_design.impossible(value) if math.isfinite(value) else "not finite"
        if why is not None:
            return f"report {report!r} of {qid!r} is impossible under its design: {why}"
        self.reports.setdefault((m, qid), []).append((value, column, int(group or 0), count))
        return None

    def finish(self, label: str) -> tuple[Tally, FileInfo]:
        """The tally filled, and the file's description."""
        tally = self.tally
        for m, totals in self.per_version.items():
            tally.rows_accepted[m] = max(totals.values())
        for m, count in self.accepted.items():
            tally.rows_accepted[m] = count
        for (m, qid), items in self.reports.items():
            counts = np.array([c for *_, c in items], dtype=np.int64)
            tally.add_reports(m, qid, np.repeat([v for v, *_ in items], counts),
                              np.repeat([g for _, g, _, _ in items], counts),
                              np.repeat([d for _, _, d, _ in items], counts))
        for reason, count in self.rejected.items():
            examples = sorted(self.examples.get(reason, []),
                              key=lambda e: (e.file, e.row))
            tally.rejections.set(reason, count, examples)
        info = FileInfo(label, "counts")
        info.rows = (int(tally.rows_accepted.sum()) + tally.rejections.total
                     if self.accepted or self.rejected else self.rows)
        return tally, info


def counts_from_rows(rows: Iterable[tuple[int, Mapping[str, str]]], catalog: Catalog,
                     by: str | Sequence[str] | None, label: str) -> tuple[Tally, FileInfo]:
    """A tally from (line, row) pairs of counts; every bad row is listed, nothing is counted."""
    filling = Filling(catalog, by)
    errors: list[str] = []
    for line, row in rows:
        problem = filling.add({k: (v or "").strip() for k, v in row.items() if k is not None})
        if problem:
            errors.append(f"{label}:{line}: {problem}")
    if errors:
        shown = "\n".join(errors[:SHOWN_ERRORS])
        more = f"\n... and {len(errors) - SHOWN_ERRORS} more" if len(errors) > SHOWN_ERRORS else ""
        raise ExportError(f"{len(errors)} bad row(s) in the counts file; nothing was "
                          f"estimated:\n{shown}{more}")
    return filling.finish(label)


def read_counts(path: str | Path, catalog: Catalog,
                by: str | Sequence[str] | None) -> tuple[Tally, FileInfo]:
    """A tally filled from a counts CSV, and the file's description; bad rows raise ExportError.

    Every bad row is reported with its line (the first few are listed); nothing is counted then.
    """
    by_columns = [q.lower() for q in parse_by(by)]  # the header is read in lower case
    try:
        handle = open(path, encoding="utf-8-sig", newline="")
    except OSError as error:
        raise ExportError(f"{path}: cannot read: {error.strerror or error}") from error
    with handle:
        reader = csv.DictReader(handle)
        header = [name.strip().lower() for name in reader.fieldnames or []]
        missing = [name for name in REQUIRED if name not in header]
        if missing:
            raise ExportError(
                f"{path}:1: a counts file needs the columns {', '.join(REQUIRED)} (and optionally "
                f"group, subgroup); missing {', '.join(missing)}"
            )
        known = [*COLUMNS, *by_columns]
        unknown = [name for name in header if name not in known]
        if unknown:
            raise ExportError(f"{path}:1: unknown column(s) {', '.join(unknown)}; the columns are "
                              f"{', '.join(known)}")
        if len(by_columns) > 1:
            absent = [q for q in by_columns if q not in header]
            if absent and "subgroup" not in header:
                raise ExportError(f"{path}:1: crossed subgroups (--by {','.join(by_columns)}) "
                                  "need one column per by-question holding its answer (or the "
                                  "cell's name in subgroup, as the query of --sql writes it); "
                                  f"missing {', '.join(absent)}")
        reader.fieldnames = header
        rows: Iterable[tuple[int, Any]] = enumerate(reader, start=2)
        return counts_from_rows(rows, catalog, by, str(path))
