"""The tally of CSV, JSONL and Parquet exports, checked by DuckDB and counted in numpy.

Per file, DuckDB reads the rows (in parallel, columnar) and returns one narrow row of small
integers per row: its codes (rrsite.exports.sql.codes: what the checks need of it, packed into
32-bit integers, one for a survey of a few questions), a 64-bit hash of its respondent token, and
the reports of randomized number questions. numpy finds the distinct codes (``np.bincount``),
the tally's checks (rrsite.exports.sql.checks) run in DuckDB once per distinct codes, and each
row gets its status from its codes. numpy then does what needs the rows' order: a token seen
before (in this file or an earlier one) makes the row a duplicate, the first row is kept (the
hash is DuckDB's, so two tokens share it with probability about 2^-64 per pair, as in rrsite's
own reader); and it counts: accepted rows per distinct codes (``np.bincount``), added where the
checks put those codes. The memory this holds per row: 4 bytes per packed column of codes, 8 of
the hash, 1 of the status and 4 of the index of its codes (8 more per randomized number).

A survey with randomized number questions is read twice: first the distinct reports, which
rrsite.core's designs judge possible or not (one judge for every engine), then the rows, with
the impossible reports listed in the SQL.

The rows a report shows for each rejection reason (the first five, as rrsite's reader shows
them) are found in their file by ``lines`` and described by ``shown`` (rrsite's own checks).
Where DuckDB and rrsite's reader would read a file differently (DuckDB cannot parse it, rejects
a record for another reason than its number of columns, or gives a shown row another status),
``Disagreement`` is raised and the caller reads the files with rrsite's reader instead.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..catalog import GROUP_SUFFIX, Catalog
from ..readers import (
    EXTRA_PREFIX,
    ExportError,
    FileInfo,
    Layout,
    csv_layout,
    detect_format,
    file_size,
    open_binary,
    parquet_columns,
)
from ..rejections import Example, Rejections
from ..tally import Counts, Tally
from .checks import (
    DUPLICATE,
    INVALID,
    MALFORMED_JSON,
    MALFORMED_ROW,
    MISSING,
    OK,
    REASON_OF,
    SKIP,
    SURVEY,
    VERSION,
    Field,
    RowChecks,
    Source,
    text_field,
)
from .codes import Coding, distinct
from .dialects import DUCKDB
from .lines import Located, locate
from .shown import Disagreement, Shown

#: DuckDB's kinds of record rejection that are a wrong number of columns (rrsite's malformed-row).
COLUMN_COUNT_ERRORS = ("MISSING COLUMNS", "TOO MANY COLUMNS")
#: Longest CSV record DuckDB reads (a longer one is a disagreement: rrsite's reader reads it).
MAX_LINE = 1 << 24
#: What DuckDB would read as NULL: no cell is. An empty cell then reads as '', and a record with
#: empty cells past the header's columns (``a,b,c,``) is rejected as rrsite's reader rejects
#: it (with empty cells as NULL, DuckDB accepts it, dropping them).
NO_NULL = "'\x01rrsite: no null\x01'"
#: JSON types DuckDB gives numbers.
JSON_NUMBERS = ("BIGINT", "UBIGINT", "DOUBLE", "HUGEINT", "UHUGEINT", "INTEGER")


@dataclass
class Plan:
    """How one file is read: its source relation, fields, and what reports need of it."""

    path: str
    kind: str
    sql: str
    source: Source
    layout: Layout | None = None
    info: FileInfo = field(default_factory=lambda: FileInfo("", ""))
    #: Parquet: the column of each field (examples are read back by column name).
    names: dict[str, str] = field(default_factory=dict)
    #: CSV: per field, its cell as read and how the formula guard of a cell is undone.
    raw: dict[str, tuple[str, Callable[[str], str]]] = field(default_factory=dict)


@dataclass
class Read:
    """What DuckDB returned for one file.

    ``columns``: per row, ``rr_st`` (status), ``rr_h`` (the token's hash), ``rr_i`` (the index
    of the row's distinct codes) and ``rr_v<i>`` (reports of randomized numbers); ``table``: per
    distinct codes, what the checks said of them (``rr_m``, ``rr_g``, ``rr_k<i>``, ``rr_d<i>``).
    """

    plan: Plan
    columns: dict[str, np.ndarray]
    table: dict[str, np.ndarray]
    #: Records DuckDB rejected (its record numbers), sorted: malformed rows.
    rejected: list[int]
    tokens: bool
    #: Records DuckDB rejected that rrsite's reader skips as blank (a line holding only ``""``).
    blank: list[int] = field(default_factory=list)


# ------------------------------------------------------------------------------------ sources


def _literal(path: str) -> str:
    return DUCKDB.text(path)


def _restored(column: str) -> str:
    """A CSV cell with the formula guard `rrsite export` adds removed (rrsite/spreadsheet.py)."""
    lines = (f"regexp_replace({column}, '([\\r\\n])''(''*[=+\\-@\\t])', '\\1\\2', 'g')")
    start = ("(CASE WHEN regexp_matches(rr_x, '^''+[=+\\-@\\t\\r]') THEN substr(rr_x, 2) "
             "ELSE rr_x END)")
    return (f"(CASE WHEN contains({column}, '''') THEN "
            f"{start.replace('rr_x', f'({lines})')} ELSE {column} END)")


def _header(path: str) -> list[str]:
    with open_binary(path) as handle:
        first = handle.readline()
    if not first.strip():
        raise ExportError(f"{path}:1: empty file (a CSV export starts with a header line)")
    text = first.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    return next(csv.reader([text]))


def csv_plan(path: str, catalog: Catalog, mapping: Mapping[str, str], index: int,
             extra: Sequence[str] = ()) -> Plan:
    """A CSV export: the header matched by rrsite's rules, every cell read as text."""
    header = _header(path)
    layout = csv_layout(header, catalog, mapping, path, extra)
    columns = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(header)))
    relation = (f"read_csv({_literal(path)}, columns={{{columns}}}, header=true, "
                "auto_detect=false, delim=',', quote='\"', escape='\"', strict_mode=true, "
                f"null_padding=false, nullstr={NO_NULL}, store_rejects=true, "
                f"rejects_table='rr_rejects_{index}', "
                f"rejects_scan='rr_scans_{index}', max_line_size={MAX_LINE})")
    fields: dict[str, Field] = {}
    restored = []
    raw: dict[str, tuple[str, Callable[[str], str]]] = {}
    for name, position in layout.index.items():
        if name == "submitted_at" or name.startswith(EXTRA_PREFIX):
            continue
        if name == "respondent":
            # The guard never changes what a token check says: a token with an apostrophe is
            # malformed before and after, and undoing the guard leaves the others as they are.
            fields[name] = text_field(f"c{position}", DUCKDB)
        else:
            restored.append(f"{_restored(f'c{position}')} AS f{position}")
            fields[name] = text_field(f"f{position}", DUCKDB)
        raw[name] = (f"c{position}", _restored)
    columns_read = [*restored, *(f"c{position}" for position in sorted(
        {int(cell[1:]) for cell, _ in raw.values()}))]
    sql = f"SELECT {', '.join(columns_read) or '1 AS rr_none'} FROM {relation}"
    info = FileInfo(path, layout.format)
    info.notes.extend(layout.notes)
    return Plan(path, "csv", sql, Source(fields, dict(layout.constants)), layout, info, raw=raw)


def parquet_plan(path: str, catalog: Catalog, mapping: Mapping[str, str],
                 extra: Sequence[str] = ()) -> Plan:
    """A Parquet export: its columns matched as a CSV header, each value cast to text."""
    header = parquet_columns(path)
    layout = csv_layout(header, catalog, mapping, path, extra)
    fields: dict[str, Field] = {}
    selected = []
    names = {}
    for name, position in layout.index.items():
        if name == "submitted_at" or name.startswith(EXTRA_PREFIX):
            continue
        selected.append(f"CAST({DUCKDB.ident(header[position])} AS VARCHAR) AS f{position}")
        fields[name] = text_field(f"f{position}", DUCKDB)
        names[name] = header[position]
    sql = f"SELECT {', '.join(selected) or '1 AS rr_none'} FROM read_parquet({_literal(path)})"
    info = FileInfo(path, "Parquet")
    info.notes.extend(layout.notes)
    return Plan(path, "parquet", sql, Source(fields, dict(layout.constants)), layout, info,
                names)


def _json_field(value: str) -> Field:
    numbers = ", ".join(DUCKDB.text(n) for n in JSON_NUMBERS)
    kind = (f"(CASE WHEN json_type({value}) IN ({numbers}) THEN 'number' ELSE "
            f"lower(replace(json_type({value}), 'VARCHAR', 'STRING')) END)")
    return json_field(kind, f"json_extract_string({value}, '$')", DUCKDB)


def json_field(kind: str, text: str, dialect: Any) -> Field:
    """A field of a JSON object, from SQL for its kind and its text.

    ``kind`` is one of string, number, boolean, null, array, object (NULL when the key is
    absent); ``text`` the string, or the value's JSON text.
    """
    return Field(
        empty=f"({kind} IS NULL OR {kind} = 'null' OR ({kind} = 'string' AND {text} = ''))",
        string=f"(CASE WHEN {kind} = 'string' THEN {text} END)",
        number=f"(CASE WHEN {kind} = 'number' THEN {dialect.double(text)} END)",
        number_text=f"(CASE WHEN {kind} = 'number' THEN {text} END)",
        chars=f"(CASE WHEN {kind} = 'string' THEN {dialect.length(text)} END)",
        listing=f"(CASE WHEN {kind} IN ('string', 'array') THEN {text} END)",
    )


def _json_path(*keys: str) -> str:
    return "$" + "".join('."' + key.replace('"', '\\"') + '"' for key in keys)


def jsonl_plan(path: str, catalog: Catalog) -> Plan:
    """A JSONL export: one JSON object per line, read with DuckDB's JSON functions."""
    questions = catalog.question_ids()
    grouped = catalog.grouped_ids()
    paths = [_json_path(k) for k in ("survey", "version", "respondent")]
    paths += [_json_path("answers", q) for q in questions]
    paths += [_json_path("groups", q) for q in grouped]
    listed = ", ".join(DUCKDB.text(p) for p in paths)
    sql = (f"SELECT json AS rr_json, json_extract(json, [{listed}]) AS rr_j FROM "
           f"read_ndjson_objects({_literal(path)}, ignore_errors=true)")
    names = ["survey", "version", "respondent", *questions, *(q + GROUP_SUFFIX for q in grouped)]
    fields = {name: _json_field(f"rr_j[{i + 1}]") for i, name in enumerate(names)}
    known = f"CAST([{', '.join(DUCKDB.text(q) for q in questions)}] AS VARCHAR[])"
    grouped_list = f"CAST([{', '.join(DUCKDB.text(q) for q in grouped)}] AS VARCHAR[])"
    strays = (f"(NOT list_has_all({known}, json_keys(rr_json, '$.answers')) OR NOT "
              f"list_has_all({grouped_list}, COALESCE(json_keys(rr_json, '$.groups'), "
              "CAST([] AS VARCHAR[]))))")
    has = " AND ".join(f"json_exists(rr_json, '$.{k}')"
                       for k in ("survey", "version", "respondent", "answers"))
    before = [
        (MALFORMED_JSON, "(rr_json IS NULL OR json_type(rr_json) <> 'OBJECT')"),
        (MISSING, f"NOT ({has})"),
        (MALFORMED_JSON, "json_type(rr_json, '$.answers') <> 'OBJECT'"),
        (MALFORMED_JSON, "(json_exists(rr_json, '$.groups') AND "
                         "json_type(rr_json, '$.groups') <> 'OBJECT')"),
    ]
    info = FileInfo(path, "rrsite JSONL")
    return Plan(path, "jsonl", sql, Source(fields, {}, strays, before), None, info)


# ------------------------------------------------------------------------------------ reading


class Reader:
    """One DuckDB connection reading every export of one analysis."""

    def __init__(self, catalog: Catalog, by: str | Sequence[str] | None, mapping: Mapping[str, str],
                 threads: int | None = None, extra: Sequence[str] = ()) -> None:
        import duckdb

        self.extra = extra
        self.catalog = catalog
        self.by = by
        self.mapping = mapping
        self.connection = duckdb.connect()
        self.connection.execute(f"SET threads = {threads or os.cpu_count() or 1}")
        self.connection.execute("SET preserve_insertion_order = true")
        self.connection.execute("SET enable_progress_bar = false")  # stdout is the report's

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()

    def plan(self, path: str, index: int) -> Plan:
        """How to read one file."""
        kind = detect_format(path)
        if kind == "parquet":
            plan = parquet_plan(path, self.catalog, self.mapping, self.extra)
        elif kind == "jsonl":
            plan = jsonl_plan(path, self.catalog)
        else:
            plan = csv_plan(path, self.catalog, self.mapping, index, self.extra)
        plan.info.bytes = file_size(path)
        return plan

    def _impossible(self, plan: Plan) -> dict[tuple[int, str], list[float]]:
        """The reports of randomized number questions that their version's design cannot give."""
        checks = RowChecks(self.catalog, self.by, DUCKDB, plan.source)
        if not checks.numbers:
            return {}
        query = checks.select(plan.sql)
        wanted = [(i, qid, m) for i, (qid, versions) in enumerate(checks.numbers)
                  for m in versions]
        aggregates = ", ".join(f"list(DISTINCT rr_v{i}) FILTER (WHERE rr_m = {m})"
                               for i, _, m in wanted)
        row = self.connection.execute(f"SELECT {aggregates} FROM ({query})").fetchone()
        assert row is not None
        impossible: dict[tuple[int, str], list[float]] = {}
        for (_, qid, m), values in zip(wanted, row, strict=True):
            question = self.catalog.versions[m].question(qid)
            assert question is not None and question.number_design is not None
            design = question.number_design
            bad = sorted(v for v in values or () if v is not None
                         and design.impossible(float(v)) is not None)
            if bad:
                impossible[(m, qid)] = bad
        return impossible

    def read(self, plan: Plan) -> Read:
        """Every row of one file as a few narrow numpy columns, and its distinct codes checked."""
        import duckdb

        try:
            impossible = self._impossible(plan)
            coding = Coding(self.catalog, self.by, plan.source, impossible, plan.raw)
            query = coding.select(plan.sql, _per_row)
            arrays = {name: np.asarray(values) for name, values
                      in self.connection.execute(query).fetchnumpy().items()}
            rejected, blank = self._rejected(plan) if plan.kind == "csv" else ([], [])
            packed = coding.packed()
            code_columns = [arrays.pop(f"rr_c{j}") for j in range(len(packed))]
            inverse, some = distinct(code_columns)
            codes = np.zeros((len(some), len(coding.codes)), dtype=np.int64)
            k = 0
            for column, items in zip(code_columns, packed, strict=True):
                values = column[some].astype(np.int64)
                for code, scale in items:
                    codes[:, k] = (values // scale) % code.size
                    k += 1
            del code_columns
            table = self._checked(coding, codes)
        except duckdb.Error as error:
            raise Disagreement(f"{plan.path}: DuckDB cannot read it: "
                               f"{str(error).splitlines()[0]}") from error
        arrays["rr_st"] = table["rr_st"][inverse]
        arrays["rr_i"] = inverse.astype(np.int32 if len(some) < 1 << 31 else np.int64,
                                        copy=False)
        return Read(plan, arrays, table, rejected, "respondent" in plan.source.fields, blank)

    def _rejected(self, plan: Plan) -> tuple[list[int], list[int]]:
        """The records DuckDB rejected for their number of columns, and those rrsite skips."""
        index = plan.sql.split("rejects_table='rr_rejects_", 1)[1].split("'", 1)[0]
        errors = self.connection.execute(
            f"SELECT DISTINCT line, error_type, csv_line FROM rr_rejects_{index}").fetchall()
        other = sorted({str(kind) for _, kind, _ in errors} - set(COLUMN_COUNT_ERRORS))
        if other:
            raise Disagreement(f"{plan.path}: DuckDB rejected records ({', '.join(other)})")
        # rrsite's reader skips a record of one empty cell (a line `""`) as blank
        width = plan.layout.width if plan.layout is not None else 0
        blank = sorted({int(line) for line, _, text in errors
                        if width > 1 and str(text or "").strip("\r\n") == '""'})
        return sorted({int(line) for line, _, _ in errors} - set(blank)), blank

    def _checked(self, coding: Coding, codes: np.ndarray) -> dict[str, np.ndarray]:
        """What the checks say of each distinct codes, judged on one representative row each.

        Numbers' impossible reports were judged per row (their verdict is among the codes).
        """
        relation, source = coding.representatives(codes)
        checks = RowChecks(self.catalog, self.by, DUCKDB, source)
        select = ["rr_ix", "CAST(rr_st AS UTINYINT) AS rr_st", "CAST(rr_m AS UINTEGER) AS rr_m",
                  "CAST(rr_g AS UINTEGER) AS rr_g"]
        select += [f"CAST(rr_k{i} AS UINTEGER) AS rr_k{i}" for i in range(len(checks.counted))]
        select += [f"CAST(rr_d{i} AS UTINYINT) AS rr_d{i}" for i in range(len(checks.numbers))]
        found = self.connection.execute(
            f"SELECT {', '.join(select)} FROM ({checks.select(relation, keep=['rr_ix'])}) "
            "ORDER BY rr_ix").fetchnumpy()
        return {name: np.asarray(values) for name, values in found.items() if name != "rr_ix"}

    def example_rows(self, plan: Plan, ordinals: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Parquet rows by their number (1 = the first), as {field: text}."""
        wanted = ", ".join(str(o - 1) for o in ordinals)
        columns = [(name, column) for name, column in plan.names.items()]
        select = ", ".join(f"CAST({DUCKDB.ident(c)} AS VARCHAR)" for _, c in columns)
        rows = self.connection.execute(
            f"SELECT file_row_number, {select} FROM read_parquet({_literal(plan.path)}, "
            f"file_row_number=true) WHERE file_row_number IN ({wanted})").fetchall()
        return {int(r[0]) + 1: {name: r[i + 1] for i, (name, _) in enumerate(columns)}
                for r in rows}


# ----------------------------------------------------------------------------------- counting

def _per_row(rows: RowChecks) -> list[tuple[str, str]]:
    """What is kept of each row besides its codes: its token's hash, its numbers' reports."""
    token = rows.token()
    columns = [("rr_h", f"hash({token})" if token is not None else "CAST(0 AS UBIGINT)")]
    for i, (qid, versions) in enumerate(rows.numbers):
        number, _, _ = rows.report(qid, versions)
        columns.append((f"rr_v{i}", f"COALESCE({number}, CAST('NaN' AS DOUBLE))"))
    return columns


def tally_files(
    paths: Sequence[str | Path], catalog: Catalog, mapping: Mapping[str, str],
    by: str | Sequence[str] | None, rejections: Rejections, tally: Tally,
    threads: int | None = None, extra: Sequence[str] = (),
) -> list[FileInfo]:
    """Fill ``tally`` and ``rejections`` from every export, as rrsite's reader would.

    ``extra``: columns a sample design reads (kept out of the "columns ignored" note).
    """
    rejections.files.extend(str(path) for path in paths)
    reader = Reader(catalog, by, mapping, threads, extra)
    try:
        reads = [reader.read(reader.plan(str(path), i)) for i, path in enumerate(paths)]
        checks = RowChecks(catalog, by, DUCKDB, reads[0].plan.source) if reads else None
        status = _statuses(reads)
        if checks is not None:
            _count(reads, status, checks, tally)
        _reject(reads, status, catalog, by, rejections, reader)
    finally:
        reader.close()
    files = []
    for read, st in zip(reads, status, strict=True):
        read.plan.info.rows = int(np.count_nonzero(st != SKIP)) + len(read.rejected)
        files.append(read.plan.info)
    return files


def _statuses(reads: list[Read]) -> list[np.ndarray]:
    """Each file's row statuses, duplicates marked (the first row with a token is kept).

    The usual file has every row accepted and no token twice: its hashes are then sorted once,
    without the copies that marking a duplicate needs.
    """
    statuses = [r.columns["rr_st"] for r in reads]
    which: list[np.ndarray | None] = []  # per file: its accepted rows with a token (None: all)
    parts: list[np.ndarray] = []
    for read, st in zip(reads, statuses, strict=True):
        if not read.tokens:
            which.append(np.zeros(0, dtype=np.int64))
            continue
        ok = st == OK
        if ok.all():
            which.append(None)
            parts.append(read.columns["rr_h"])
        else:
            rows = np.flatnonzero(ok)
            which.append(rows)
            parts.append(read.columns["rr_h"][rows])
    hashes = (parts[0] if len(parts) == 1 else np.concatenate(parts)) if parts else np.zeros(
        0, dtype=np.uint64)
    ordered = np.sort(hashes)
    if not np.any(ordered[1:] == ordered[:-1]):
        return statuses
    del ordered
    _, first = np.unique(hashes, return_index=True)
    repeated = np.ones(len(hashes), dtype=bool)
    repeated[first] = False
    start = 0
    for st, w in zip(statuses, which, strict=True):
        rows = np.arange(len(st)) if w is None else w
        st[rows[repeated[start:start + len(rows)]]] = DUPLICATE
        start += len(rows)
    return statuses


def _count(reads: list[Read], statuses: list[np.ndarray], checks: RowChecks, tally: Tally) -> None:
    """Add every accepted row to the tally's counts and number reports.

    Accepted rows are counted per distinct codes (``np.bincount``), then each distinct codes'
    count is added where the checks put them (version, each question's slot).
    """
    groups = checks.groups
    for read, st in zip(reads, statuses, strict=True):
        accepted_rows = st == OK
        ok: np.ndarray | slice = slice(None) if accepted_rows.all() else accepted_rows  # no copies
        table = read.table
        size = len(table["rr_st"])
        accepted = np.bincount(read.columns["rr_i"][ok], minlength=size).astype(np.int64)
        tally.rows_accepted += np.bincount(table["rr_m"].astype(np.int64), weights=accepted,
                                           minlength=len(tally.rows_accepted)).astype(np.int64)
        for i, keys in enumerate(checks.counted):
            slots = np.bincount(table[f"rr_k{i}"].astype(np.int64), weights=accepted,
                                minlength=keys.size + 1).astype(np.int64)[1:]
            for m, (start, reports, designs) in keys.blocks.items():
                block = slots[start:start + (reports + 1) * designs * groups].reshape(
                    reports + 1, designs, groups)
                target: Counts = tally.counts[(m, keys.qid)]
                target.counts += block[:reports].sum(axis=1)
                target.missing += block[reports].sum(axis=0)
                if target.by_group is not None:
                    target.by_group += block[:reports].transpose(1, 0, 2)
        if not checks.numbers:
            continue
        index = read.columns["rr_i"][ok]
        version = table["rr_m"][index].astype(np.int64)
        subgroup = table["rr_g"][index].astype(np.int64)
        for i, (qid, versions) in enumerate(checks.numbers):
            values = read.columns[f"rr_v{i}"][ok]
            design = table[f"rr_d{i}"][index].astype(np.int8)
            for m in versions:
                rows = (version == m) & ~np.isnan(values)
                if rows.any():
                    tally.add_reports(m, qid, values[rows], subgroup[rows], design[rows])


def _reject(reads: list[Read], statuses: list[np.ndarray], catalog: Catalog,
            by: str | Sequence[str] | None, rejections: Rejections, reader: Reader) -> None:
    """Count the rejected rows per reason and describe the first few of each."""
    keep = rejections.keep
    counts: dict[int, int] = {}
    wanted: dict[int, list[tuple[int, int]]] = {}  # status -> [(file, row or record)]
    for f, (read, st) in enumerate(zip(reads, statuses, strict=True)):
        found = np.bincount(st, minlength=SKIP + 1)
        for code in range(1, SKIP):
            if code == MALFORMED_ROW:
                total, rows = len(read.rejected), read.rejected
            else:
                total = int(found[code])
                rows = (np.flatnonzero(st == code)[:keep] + 1).tolist() if total else []
            if not total:
                continue
            counts[code] = counts.get(code, 0) + total
            shown = wanted.setdefault(code, [])
            shown.extend((f, int(r)) for r in rows[:keep - len(shown)])
    if not counts:
        return
    shown_by = Shown(catalog, by)
    described: dict[tuple[int, int, int], Example] = {}
    for f, read in enumerate(reads):
        mine = [(code, r) for code, items in wanted.items() for g, r in items if g == f]
        if mine:
            described.update(_describe(f, read, mine, shown_by, reader))
    order = [MALFORMED_ROW, MALFORMED_JSON, MISSING, SURVEY, VERSION, INVALID, DUPLICATE]
    for code in order:
        if code in counts:
            reason = REASON_OF[code]
            examples = [described[(code, f, r)] for f, r in wanted[code]]
            rejections.set(reason, counts[code], examples)


def _describe(f: int, read: Read, rows: list[tuple[int, int]], shown: Shown,
              reader: Reader) -> dict[tuple[int, int, int], Example]:
    """The examples of one file: their lines and messages."""
    plan = read.plan
    label = plan.path
    out: dict[tuple[int, int, int], Example] = {}
    data = [r for code, r in rows if code != MALFORMED_ROW]
    records = [r for code, r in rows if code == MALFORMED_ROW]
    if plan.kind == "parquet":
        values = reader.example_rows(plan, data)
        assert plan.layout is not None
        for code, r in rows:
            message = shown.values(label, r, values[r], code, plan.layout.constants)
            out[(code, f, r)] = Example(label, r, message)
        return out
    found_rows, found_records = locate(plan.path, quoted=plan.kind == "csv",
                                       header=plan.kind == "csv",
                                       rejected=[*read.rejected, *read.blank],
                                       ordinals=data, records=records,
                                       blank_spaces=plan.kind == "jsonl")
    for code, r in rows:
        where: Located | None = (found_records if code == MALFORMED_ROW else found_rows).get(r)
        if where is None:
            raise Disagreement(f"{label}: row {r} the engine read was not found in the file")
        if plan.kind == "csv":
            assert plan.layout is not None
            message = shown.csv_row(label, where.line, where.text, plan.layout, code)
        else:
            message = shown.jsonl_line(label, where.line, where.text, code)
        out[(code, f, r)] = Example(label, where.line, message)
    return out
