"""Each row reduced to a few small codes, and the tally's checks run once per distinct codes.

A row's status, version, subgroup and the slots it counts in depend on few things: whether each
field is empty, which of the few values the checks compare it with it holds (the survey id, a
version id, a choice's answers, ``1`` or ``2`` in a ``<id>.group`` column), whether its token is
well formed, and, for the answers checked against a rule of their own (numbers, texts, lists),
the verdict of that rule. DuckDB computes those per row (``Coding.select``: a handful of CASEs,
the token's pattern and the rules of numbers and texts) and packs them into integers; numpy
finds the distinct packed codes (a few dozen in a clean export); the tally's checks
(rrsite.exports.sql.checks, the very same SQL) then run once per distinct codes, over one
representative row each (``Coding.representatives``): a value that stands for its code in
every comparison the checks make. What the checks say of the representative, they say of
every row with its codes.

Spared per row: the status's CASE and the slots' CASEs, and the formula guard of the cells
compared with known values (a CSV cell that equals a known value is that value, unless the
value is itself one the guard changes; a cell that does not is restored before it is coded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...spreadsheet import restore
from ..catalog import GROUP_SUFFIX, Catalog
from .checks import VALID_TOKEN, RowChecks, Source, text_field
from .dialects import DUCKDB

#: Codes of a packed column at most (distinct codes are found with np.bincount below this).
CODE_BINS = 1 << 22
#: A value that equals no survey id, version, answer or number: the code "anything else".
OTHER = "\x01rrsite: other\x01"


@dataclass(frozen=True)
class Code:
    """One coded property of a row: its SQL, how many values it takes, what stands for each."""

    name: str
    sql: str
    #: The representative value of each code (None: the field is absent, NULL).
    values: tuple[str | None, ...]
    #: The source field the representative is a value of ('' for a row-level verdict).
    field: str

    @property
    def size(self) -> int:
        """How many codes."""
        return len(self.values)


class Coding:
    """The codes of one catalog (and ``--by``) over one source, and the checks of their values.

    ``impossible``: reports of randomized numbers their design cannot give (judged per row).
    ``raw``: per CSV field, (its cell as read, a function giving SQL that undoes the formula
    guard of a cell).
    """

    def __init__(self, catalog: Catalog, by: str | Sequence[str] | None, source: Source,
                 impossible: Mapping[tuple[int, str], Sequence[float]] | None = None,
                 raw: Mapping[str, tuple[str, Callable[[str], str]]] | None = None) -> None:
        self.catalog = catalog
        self.source = source
        self.rows = RowChecks(catalog, by, DUCKDB, source, impossible)
        self.raw = dict(raw or {})
        fields = source.fields
        #: Questions whose answers are judged per row (numbers, texts, lists).
        self.judged = [q for q, plan in self.rows.plans.items() if q in fields
                       and (plan.number or plan.text or plan.multi)]
        self.codes: list[Code] = []
        self._build()

    def _build(self) -> None:
        """Every code's SQL (each call registers the properties it reads with ``rows``)."""
        self.codes = []
        fields = self.source.fields
        if "survey" in fields:
            self._values("survey", (self.catalog.survey,))
        if "version" in fields:
            versions = len(self.catalog.version_ids)
            code = self._values("version", tuple(self.catalog.version_ids))
            if "version" in self.raw:  # the version from its code: no formula guard undone
                self.rows.version_sql = (f"(CASE WHEN {code} BETWEEN 1 AND {versions} THEN "
                                         f"{code} - 1 END)")
        if "respondent" in fields:
            empty = self.rows.prop("respondent", "empty")
            self.codes.append(Code(
                "respondent", f"(CASE WHEN {empty} THEN 0 WHEN {self.rows.token_valid()} THEN 1 "
                "ELSE 2 END)", ("", VALID_TOKEN, "!"), "respondent"))
        for qid, plan in self.rows.plans.items():
            if qid in fields:
                if plan.union is not None:
                    self._values(qid, tuple(plan.union.words))
                elif plan.grouped:  # a number with a two-group design: answered or not
                    number = self.rows.prop(qid, "number")
                    self.codes.append(Code(qid, f"(CASE WHEN {number} IS NULL THEN 0 ELSE 1 END)",
                                           (OTHER, "0"), qid))
                elif qid not in self.judged:  # asked by no version: empty or not
                    self._values(qid, ())
            group = qid + GROUP_SUFFIX
            if group in fields:
                number = self.rows.prop(group, "number")
                empty = self.rows.prop(group, "empty")
                self.codes.append(Code(
                    group, f"(CASE WHEN {empty} THEN 0 WHEN {number} = 1 THEN 1 WHEN {number} = 2 "
                    "THEN 2 ELSE 3 END)", ("", "1", "2", OTHER), group))
        for i, (_, condition) in enumerate(self.source.before):
            self.codes.append(Code(f"rr_before{i}", f"(CASE WHEN {condition} THEN 1 ELSE 0 END)",
                                   ("0", "1"), ""))
        verdicts = [self.rows.invalid_answer(q) for q in self.judged]
        if self.source.strays:
            verdicts.append(f"({self.source.strays})")
        if verdicts:
            self.codes.append(Code("rr_judged", f"(CASE WHEN {' OR '.join(verdicts)} THEN 1 "
                                   "ELSE 0 END)", ("0", "1"), ""))

    def _values(self, name: str, values: tuple[str, ...]) -> str:
        """A field compared with known values: 0 empty, 1 + the value's index, or anything else."""
        other = len(values) + 1
        raw = self.raw.get(name)
        if raw is not None and all(_unguarded(v) for v in values):
            # A cell equal to a known value is that value (undoing the guard leaves it as it is);
            # only a cell with an apostrophe can read as another once restored (rare).
            cell, restore = raw
            empty = f"{cell} IS NULL OR {cell} = ''"
            if values:
                again = " ".join(f"WHEN {restore(cell)} = {DUCKDB.text(v)} THEN {i + 1}"
                                 for i, v in enumerate(values))
                whens = " ".join(f"WHEN {cell} = {DUCKDB.text(v)} THEN {i + 1}"
                                 for i, v in enumerate(values))
                quote = DUCKDB.text("'")
                sql = (f"(CASE WHEN {empty} THEN 0 {whens} WHEN contains({cell}, {quote}) THEN "
                       f"(CASE {again} ELSE {other} END) ELSE {other} END)")
            else:
                sql = f"(CASE WHEN {empty} THEN 0 ELSE 1 END)"
        else:
            empty = self.rows.prop(name, "empty")
            text = self.rows.prop(name, "string")
            whens = " ".join(f"WHEN {text} = {DUCKDB.text(v)} THEN {i + 1}"
                             for i, v in enumerate(values))
            sql = f"(CASE WHEN {empty} THEN 0 {whens} ELSE {other} END)"
        self.codes.append(Code(name, sql, ("", *values, OTHER), name))
        return sql

    # ----------------------------------------------------------------------------- packing

    def packed(self) -> list[list[tuple[Code, int]]]:
        """The codes in integer columns of at most ``CODE_BINS`` values: [(code, its scale)]."""
        columns: list[list[tuple[Code, int]]] = []
        current: list[tuple[Code, int]] = []
        scale = 1
        for code in self.codes:
            if current and scale * code.size > CODE_BINS:
                columns.append(current)
                current, scale = [], 1
            current.append((code, scale))
            scale *= code.size
        columns.append(current)
        return columns

    def select(self, relation: str,
               extra: Callable[[RowChecks], list[tuple[str, str]]] | None = None) -> str:
        """Per row: the packed codes ``rr_c<j>``, then the columns ``extra(rows)`` gives."""
        def outputs() -> list[tuple[str, str]]:
            self._build()
            columns = []
            for j, column in enumerate(self.packed()):
                terms = " + ".join(f"{code.sql} * {scale}" if scale > 1 else code.sql
                                   for code, scale in column)
                columns.append((f"rr_c{j}", f"CAST({terms or '0'} AS UINTEGER)"))
            return [*columns, *(extra(self.rows) if extra is not None else [])]

        return self.rows.layered(relation, outputs)

    # ----------------------------------------------------------------------------- checking

    def representatives(self, codes: np.ndarray) -> tuple[str, Source]:
        """A VALUES relation of one row per distinct codes, and the source its fields read.

        ``codes[n, i]`` is code ``i`` of the n-th distinct row; its column ``rr_ix`` is n.
        """
        names = [code.name for code in self.codes]
        rows = []
        for n in range(codes.shape[0]):
            cells = [str(n)]
            for i, code in enumerate(self.codes):
                value = code.values[int(codes[n, i])]
                cells.append("NULL" if value is None else DUCKDB.text(value))
            rows.append(f"({', '.join(cells)})")
        columns = ", ".join(["rr_ix", *(f"rr_r{i}" for i in range(len(names)))])
        relation = (f"SELECT * FROM (VALUES {', '.join(rows)}) AS rr_codes({columns})" if rows
                    else f"SELECT {', '.join(f'NULL AS {c}' for c in columns.split(', '))} "
                         "WHERE FALSE")
        fields = {}
        for i, code in enumerate(self.codes):
            if code.field:
                fields[code.field] = text_field(f"CAST(rr_r{i} AS VARCHAR)", DUCKDB)
        for name in self.source.fields:
            fields.setdefault(name, text_field("CAST(NULL AS VARCHAR)", DUCKDB))
        before = [(status, f"rr_r{names.index(f'rr_before{i}')} = '1'")
                  for i, (status, _) in enumerate(self.source.before)]
        judged = (f"rr_r{names.index('rr_judged')} = '1'" if "rr_judged" in names else None)
        source = Source(fields, dict(self.source.constants), judged, before,
                        frozenset(self.judged))
        return relation, source


def _unguarded(value: str) -> bool:
    """Whether the formula guard's undoing leaves the value as it is."""
    return restore(value) == value


def distinct(columns: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's index among the distinct rows of ``columns``, and a row holding each.

    Every column holds codes below ``CODE_BINS``; columns are combined two at a time.
    """
    if not columns or len(columns[0]) == 0:
        return np.zeros(len(columns[0]) if columns else 0, dtype=np.int64), np.zeros(
            0, dtype=np.int64)
    inverse, count = _dense(columns[0])
    for column in columns[1:]:
        other, size = _dense(column)
        inverse, count = _dense(inverse.astype(np.int64) * size + other)
    some = np.zeros(count, dtype=np.int64)
    some[inverse] = np.arange(len(inverse), dtype=np.int64)  # any row: they share their codes
    return inverse, some


def _dense(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Values renumbered 0..n-1 (in increasing order), and n.

    The numbers are 32-bit while they fit (they index the distinct codes: far fewer than rows),
    so that the per-row arrays stay narrow.
    """
    top = int(values.max()) + 1
    if top <= CODE_BINS:
        seen = np.bincount(values, minlength=top) > 0
        count = int(seen.sum())
        lookup = np.cumsum(seen) - 1
        if count < 1 << 31:
            lookup = lookup.astype(np.int32)
        return lookup[values], count
    unique, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(-1), len(unique)
