"""Reading exports in blocks: rrsite CSV, JSONL and Parquet, Netlify Forms CSV, any mapped CSV.

Files are read in blocks of whole records (``BLOCK_SIZE`` bytes), so memory does not grow with
the number of rows. A CSV block without any quote character is split with numpy alone (byte
offsets of newlines and commas); a block with quotes goes through Python's csv module. A block is
cut only after a newline outside quotes, so a quoted field spanning lines is never split.

Each block becomes a ``Batch``: the line numbers of its well-formed rows and their columns.
Malformed rows (wrong number of columns, a line that is not a JSON object, a record without its
fields) are handed to the ``Rejections`` here; everything else is judged by the tally.

The separator is sniffed from the header and the first lines (:func:`sniff_delimiter`): a comma,
a semicolon (what Excel writes where the decimal mark is a comma, e.g. in German) or a tab, the
one that splits the header into the most columns and every sampled line into as many.

Cells `rrsite export` neutralised against spreadsheet formulas (a leading apostrophe before
``= + - @``, tab or carriage return, rrsite/spreadsheet.py) are read back to their original text:
a block holding a field that starts with an apostrophe goes through the csv module, which restores
them (an apostrophe after a line break inside a cell is inside a quoted field, so its block goes
through the csv module too).
"""

from __future__ import annotations

import csv
import difflib
import gzip
import io
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import numpy as np

from ..errors import RRSiteError
from ..spreadsheet import restore
from .catalog import GROUP_SUFFIX, Catalog
from .columns import Block, ByteColumn, Column, ListColumn
from .rejections import Rejections

BLOCK_SIZE = 4 << 20
JSONL_BATCH = 20_000
#: The fields every record has besides its answers (docs/contracts.md).
META_FIELDS = ("survey", "version", "respondent", "submitted_at")
#: Column names (normalised: lower case, spaces and hyphens as underscores) read as a field.
META_ALIASES = {
    "survey": "survey", "survey_id": "survey",
    "version": "version", "survey_version": "version",
    "respondent": "respondent", "respondent_token": "respondent", "token": "respondent",
    "submitted_at": "submitted_at", "created_at": "submitted_at",
}
#: Columns a Netlify Forms CSV export adds; their presence identifies such an export.
NETLIFY_COLUMNS = {"form_name", "form_id", "created_at", "user_agent", "ip", "referrer",
                   "site_url", "bot_field", "number"}
#: Ways a form field name may wrap a question id (``answers[violated]``, ``q_violated``, ...).
ANSWER_PREFIXES = ("answers.", "answers[", "answer.", "answer[", "answer_", "answer-", "answers_",
                   "q_", "q-", "q.")
#: --map FIELD that drops a column.
IGNORE = "-"
#: The separators a CSV may use, in order of preference when several fit equally well.
DELIMITERS = (",", ";", "\t")
#: Bytes read after the header to sniff the separator from (and then parsed as usual).
SNIFF_BYTES = 64 << 10
#: The first bytes of a Parquet file.
PARQUET_MAGIC = b"PAR1"
#: Rows of a Parquet file per batch.
PARQUET_BATCH = 50_000


class ExportError(RRSiteError):
    """An export file cannot be read at all (as opposed to a bad row, which is rejected)."""


@dataclass
class Batch:
    """Well-formed rows of one block: their line numbers and their columns.

    ``columns`` holds "survey", "version", "respondent" and question ids; a field the file does
    not have is absent (``constants`` may give it one value for every row). ``unknown`` lists,
    for JSONL, rows whose answers name a question no version has, with that name.
    """

    file: str
    rows: np.ndarray
    columns: dict[str, Column]
    constants: dict[str, str] = field(default_factory=dict)
    unknown: dict[int, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)


@dataclass
class FileInfo:
    """What was read from one file."""

    path: str
    format: str
    rows: int = 0
    bytes: int = 0
    notes: list[str] = field(default_factory=list)


def normalise(name: str) -> str:
    """Column names compared loosely: case, surrounding spaces, spaces and hyphens."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def parse_mapping(items: Sequence[str], catalog: Catalog) -> dict[str, str]:
    """Check ``--map COLUMN=FIELD`` options.

    FIELD is survey, version, respondent, submitted_at, a question id, a two-group question's
    ``<id>.group``, or ``-`` to ignore the column.
    """
    known = [*META_FIELDS, *catalog.question_ids(), *group_fields(catalog)]
    mapping: dict[str, str] = {}
    for item in items:
        column, sep, target = item.rpartition("=")
        if not sep or not column or not target:
            raise RRSiteError(f"--map {item!r}: write COLUMN=FIELD, e.g. --map 'Q1=violated'")
        if target != IGNORE and target not in known:
            close = difflib.get_close_matches(target, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise RRSiteError(
                f"--map {item!r}: {target!r} is not a field ({', '.join(META_FIELDS)}, a question "
                f"id of survey {catalog.survey!r}, or - to ignore){hint}"
            )
        if column in mapping:
            raise RRSiteError(f"--map: column {column!r} is mapped twice")
        mapping[column] = target
    return mapping


def group_fields(catalog: Catalog) -> list[str]:
    """The ``<id>.group`` fields of the survey's two-group questions (docs/contracts.md)."""
    return [qid + GROUP_SUFFIX for qid in catalog.grouped_ids()]


@dataclass
class Layout:
    """How a CSV file's columns map to fields."""

    index: dict[str, int]
    constants: dict[str, str]
    format: str
    notes: list[str]
    width: int
    #: (b"survey,version,", version) per known version when the file starts with those columns
    prefixes: list[tuple[bytes, str]] = field(default_factory=list)
    #: The separator between fields (sniffed: comma, semicolon or tab).
    delimiter: str = ","


#: Prefix of the fields that hold a sample-design column (``read_export(extra=...)``).
EXTRA_PREFIX = "extra:"


def sniff_delimiter(header: str, sample: str) -> str:
    """The separator of a CSV: comma, semicolon or tab, sniffed from its first lines.

    The one of DELIMITERS that splits ``header`` into the most fields while every complete line
    of ``sample`` (the text after the header) has as many. A separator that splits the header
    into one field only is never chosen; when none fits every line, the one giving the header
    the most fields is taken (its bad rows are then rejected with their column counts); a
    one-column file reads as comma-separated.
    """
    lines = sample[: sample.rfind("\n") + 1] if "\n" in sample else ""
    best, best_key = ",", (False, 1)
    for delimiter in DELIMITERS:
        try:
            width = len(next(csv.reader([header], delimiter=delimiter)))
            rows = [row for row in csv.reader(io.StringIO(lines, newline=""),
                                              delimiter=delimiter) if row]
        except csv.Error:
            continue
        if width <= 1:
            continue
        key = (all(len(row) == width for row in rows), width)
        if key > best_key:
            best, best_key = delimiter, key
    return best


def delimiter_name(delimiter: str) -> str:
    """A separator in words for messages: ``','``, ``';'`` or ``a tab``."""
    return "a tab" if delimiter == "\t" else repr(delimiter)


def csv_layout(
    header: list[str], catalog: Catalog, mapping: Mapping[str, str], path: str,
    extra: Sequence[str] = (), delimiter: str = ",",
) -> Layout:
    """Match a CSV header to fields: --map first, then known names, then question-id patterns.

    ``extra``: more column names (a sample design's weight, stratum, cluster ...) kept verbatim
    as fields ``extra:<name>`` when the header has them. ``delimiter``: the file's separator
    (named in the error when no column matches).
    """
    questions = catalog.question_ids()
    fields = [*questions, *group_fields(catalog)]
    by_lower = {name.lower(): name for name in fields}
    index: dict[str, int] = {}
    notes: list[str] = []
    ignored: list[str] = []
    normalised = [normalise(name) for name in header]
    netlify = bool(NETLIFY_COLUMNS & set(normalised))
    for position, name in enumerate(header):
        target = mapping.get(name)
        if target is None:
            target = _guess_field(name, normalised[position], fields, by_lower)
        if target is None or target == IGNORE:
            if target is None and name.strip():
                ignored.append(name)
            continue
        if target in index:
            raise ExportError(
                f"{path}:1: columns {header[index[target]]!r} and {name!r} both hold {target!r}; "
                f"choose one with --map '{name}=-'"
            )
        index[target] = position
    if header[:4] == list(META_FIELDS):
        form = "rrsite CSV"
    elif netlify:
        form = "Netlify Forms CSV"
    else:
        form = "CSV"
    constants: dict[str, str] = {}
    if "survey" not in index:
        constants["survey"] = catalog.survey
        notes.append(f"no survey column: every row is taken as survey {catalog.survey!r}")
    if "version" not in index:
        if len(catalog.versions) != 1:
            raise ExportError(
                f"{path}: no version column, and {len(catalog.versions)} versions of "
                f"{catalog.survey!r} are known; map the column holding the version with "
                "--map COLUMN=version, or give only the manifest of the version collected"
            )
        constants["version"] = catalog.versions[0].version
        notes.append(f"no version column: every row is taken as version "
                     f"{catalog.versions[0].version}")
    if "respondent" not in index:
        notes.append("no respondent column: duplicate respondents cannot be detected")
    if not any(qid in index for qid in questions):
        raise ExportError(
            f"{path}:1: no column matches a question of survey {catalog.survey!r} (read with "
            f"{delimiter_name(delimiter)} as the separator, {len(header)} "
            f"column{'s' if len(header) != 1 else ''}: {', '.join(header) or 'none'}; "
            f"questions: {', '.join(questions)}){_separator_hint(header, questions, delimiter)}"
            "; map them with --map COLUMN=QUESTION"
        )
    for name in extra:
        if name in header:
            index[EXTRA_PREFIX + name] = header.index(name)
            if name in ignored:
                ignored.remove(name)
    if ignored:
        notes.append("columns ignored: " + ", ".join(ignored))
    if delimiter != ",":
        notes.append(f"fields separated by {delimiter_name(delimiter)}")
    prefixes = []
    if index.get("survey") == 0 and index.get("version") == 1 and _prefix_usable(catalog):
        prefixes = [(f"{catalog.survey}{delimiter}{v}{delimiter}".encode(), v)
                    for v in catalog.version_ids]
    return Layout(index=index, constants=constants, format=form, notes=notes, width=len(header),
                  prefixes=prefixes, delimiter=delimiter)


def _separator_hint(header: list[str], questions: list[str], delimiter: str) -> str:
    """A hint when another separator would split the header into question columns."""
    text = delimiter.join(header)
    for other in DELIMITERS:
        if other == delimiter or other not in text:
            continue
        columns = [name.strip() for name in next(csv.reader([text], delimiter=other))]
        if any(qid in columns for qid in questions):
            return (f"; the header holds question columns when split at "
                    f"{delimiter_name(other)}: is the file separated by "
                    f"{delimiter_name(other)} while its first lines are not? (the separator is "
                    "sniffed from the header and the first lines)")
    return ""


def _prefix_usable(catalog: Catalog) -> bool:
    """Whether blocks can be checked for a common "survey,version," prefix.

    That needs a few versions at most, written without characters CSV would quote.
    """
    texts = [catalog.survey, *catalog.version_ids]
    return len(catalog.versions) <= 4 and not any(c in t for t in texts for c in ',;\t"\r\n')


def _guess_field(
    name: str, norm: str, questions: list[str], by_lower: dict[str, str]
) -> str | None:
    if name in questions:
        return name
    if norm in META_ALIASES:
        return META_ALIASES[norm]
    stripped = name.strip()
    for prefix in ANSWER_PREFIXES:
        if stripped.lower().startswith(prefix):
            inner = stripped[len(prefix):].rstrip("]")
            if inner in questions:
                return inner
            if inner.lower() in by_lower:
                return by_lower[inner.lower()]
    return by_lower.get(stripped.lower())


def layout_survey(prefix: bytes) -> str:
    """The survey id of a "survey,version," prefix."""
    return prefix.decode("utf-8").split(",", 1)[0]


def open_binary(path: str | Path) -> IO[bytes]:
    """Open a file for reading bytes; ``.gz`` files are decompressed on the fly."""
    try:
        if str(path).endswith(".gz"):
            return cast(IO[bytes], gzip.open(path, "rb"))
        return open(path, "rb")  # noqa: SIM115 - closed by the caller's with-block
    except OSError as error:
        raise ExportError(f"{path}: cannot read: {error.strerror or error}") from error


def detect_format(path: str | Path) -> str:
    """"jsonl", "csv" or "parquet", from the extension, else from the file's first bytes."""
    name = str(path).lower().removesuffix(".gz")
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if name.endswith((".csv", ".tsv")):
        return "csv"
    with open_binary(path) as handle:
        head = handle.read(4096)
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return "jsonl" if head.startswith(b"{") else "csv"


def read_export(
    path: str | Path, catalog: Catalog, mapping: Mapping[str, str], rejections: Rejections,
    info: FileInfo, block_size: int = BLOCK_SIZE,
    progress: Callable[[int], None] | None = None, extra: Sequence[str] = (),
) -> Iterator[Batch]:
    """Batches of well-formed rows of one export file (malformed rows go to ``rejections``).

    ``extra``: column names kept as fields ``extra:<name>`` (CSV: a header column; JSONL: a key
    of the record's ``"design"`` object, else of the record itself).
    """
    kind = detect_format(path)
    if kind == "jsonl":
        info.format = "rrsite JSONL"
        yield from _read_jsonl(path, catalog, rejections, info, progress, extra)
    elif kind == "parquet":
        yield from _read_parquet(path, catalog, mapping, info, progress, extra)
    else:
        yield from _read_csv(path, catalog, mapping, rejections, info, block_size, progress,
                             extra)


# --------------------------------------------------------------------------------------- CSV


def _record_cut(buffer: bytes) -> int:
    """Length of the longest prefix of whole records: up to the last newline outside quotes."""
    if b'"' not in buffer:
        return buffer.rfind(b"\n") + 1
    array = np.frombuffer(buffer, dtype=np.uint8)
    quotes = np.flatnonzero(array == 34)
    newlines = np.flatnonzero(array == 10)
    outside = newlines[np.searchsorted(quotes, newlines) % 2 == 0]
    return int(outside[-1]) + 1 if len(outside) else 0


def _read_csv(
    path: str | Path, catalog: Catalog, mapping: Mapping[str, str], rejections: Rejections,
    info: FileInfo, block_size: int, progress: Callable[[int], None] | None,
    extra: Sequence[str] = (),
) -> Iterator[Batch]:
    label = str(path)
    with open_binary(path) as handle:
        first = handle.readline()
        if not first.strip():
            raise ExportError(f"{label}:1: empty file (a CSV export starts with a header line)")
        header_text = first.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
        sample = handle.read(SNIFF_BYTES)  # parsed below like any other data
        delimiter = sniff_delimiter(header_text.rstrip("\r\n"),
                                    sample[:_record_cut(sample)].decode("utf-8", errors="replace"))
        header = next(csv.reader([header_text], delimiter=delimiter))
        layout = csv_layout(header, catalog, mapping, label, extra, delimiter)
        info.format = layout.format
        info.notes.extend(layout.notes)
        consumed = len(first)
        line = 1
        leftover = b""
        pending: bytes | None = sample
        while True:
            if pending is not None:
                data, pending = pending, None
                if len(data) < block_size and len(data) == SNIFF_BYTES:
                    data += handle.read(block_size - len(data))
            else:
                data = handle.read(block_size)
            buffer = leftover + data if leftover else data
            if not data:
                if not buffer:
                    break
                if not buffer.endswith(b"\n"):
                    buffer += b"\n"
                cut = len(buffer)
            else:
                cut = _record_cut(buffer)
                if cut == 0:
                    leftover = buffer
                    continue
            block, leftover = buffer[:cut], buffer[cut:]
            batch, lines = _parse_block(block, line, layout, label, rejections, info)
            line += lines
            consumed += len(data)
            if progress is not None:
                progress(len(data))
            if batch is not None and len(batch):
                yield batch
            if not data:
                break
        info.bytes = consumed


def _parse_block(
    block: bytes, line: int, layout: Layout, label: str, rejections: Rejections, info: FileInfo
) -> tuple[Batch | None, int]:
    """Rows of a block of whole lines and the number of lines in it.

    ``line`` is the line number before the block's first line.
    """
    separator = layout.delimiter.encode()
    if (b'"' in block or b"\0" in block
            or (b"\r" in block and block.count(b"\r") != block.count(b"\r\n"))
            or separator + b"'" in block or b"\n'" in block or block.startswith(b"'")):
        batch = _parse_block_csv_module(block, line, layout, label, rejections, info)
        return batch, block.count(b"\n")
    return _parse_block_numpy(block, line, layout, label, rejections, info)


def _parse_block_numpy(
    block: bytes, line: int, layout: Layout, label: str, rejections: Rejections, info: FileInfo
) -> tuple[Batch | None, int]:
    """Split a quote-free block with numpy: newline and comma offsets, per-line comma counts."""
    data = Block(block)
    array = data.array[: len(block)]
    width = layout.width
    separators = np.flatnonzero((array == ord(layout.delimiter)) | (array == 10))
    is_newline = array[separators] == 10
    lines = int(np.count_nonzero(is_newline))
    if lines * width == len(separators) and is_newline[width - 1::width].all():
        # the usual case: every line has exactly the header's number of fields; field p of
        # every line ends at separators[p::width] and starts after separators[p-1::width]
        line_ends = separators[width - 1::width]
        line_starts = np.empty_like(line_ends)
        line_starts[0] = 0
        line_starts[1:] = line_ends[:-1] + 1
        last_ends = line_ends
        if b"\r" in block:
            last_starts = line_starts if width == 1 else separators[width - 2::width] + 1
            last_ends = line_ends - ((line_ends > last_starts) & (array[line_ends - 1] == 13))
        info.rows += lines
        constants = dict(layout.constants)
        for prefix, version in layout.prefixes:
            # every line starts with "survey,version,": both fields are known for every row
            if block.startswith(prefix) and block.count(b"\n" + prefix) == lines - 1:
                constants.update(survey=layout_survey(prefix), version=version)
                break
        columns: dict[str, Column] = {}
        for name, position in layout.index.items():
            if name in ("submitted_at", *constants):
                continue
            field_starts = line_starts if position == 0 else \
                separators[position - 1::width] + 1
            field_ends = last_ends if position == width - 1 else \
                np.ascontiguousarray(separators[position::width])
            columns[name] = ByteColumn(data, field_starts, field_ends, field_ends - field_starts)
        numbers = line + 1 + np.arange(lines)
        return Batch(label, numbers, columns, constants), lines
    newlines = separators[is_newline]
    starts = np.empty_like(newlines)
    starts[0] = 0
    starts[1:] = newlines[:-1] + 1
    ends = newlines.copy()
    if b"\r" in block:
        carriage = (ends > starts) & (array[np.maximum(ends - 1, 0)] == 13)
        ends -= carriage
    commas = separators[~is_newline]
    before_end = np.searchsorted(commas, newlines)
    before_start = np.searchsorted(commas, starts)
    per_line = before_end - before_start
    blank = ends == starts
    good = (per_line == layout.width - 1) & ~blank
    if layout.width == 1:
        good = ~blank
    bad = ~good & ~blank
    line_numbers = line + 1 + np.arange(len(newlines))
    if bad.any():
        bad_rows = line_numbers[bad]
        bad_counts = per_line[bad] + 1
        rejections.add_many(
            "malformed-row", label, bad_rows,
            lambda i: f"{bad_counts[i]} columns where the header has {layout.width}",
        )
    info.rows += int(np.count_nonzero(good)) + int(np.count_nonzero(bad))
    if not good.any():
        return None, len(newlines)
    first_comma = before_start[good]
    line_starts, line_ends = starts[good], ends[good]
    columns = {}
    for name, position in layout.index.items():
        if name == "submitted_at":
            continue
        field_start = line_starts if position == 0 else commas[first_comma + position - 1] + 1
        field_end = line_ends if position == layout.width - 1 else commas[first_comma + position]
        columns[name] = ByteColumn(data, field_start, field_end)
    return Batch(label, line_numbers[good], columns, dict(layout.constants)), len(newlines)


def _parse_block_csv_module(
    block: bytes, line: int, layout: Layout, label: str, rejections: Rejections, info: FileInfo
) -> Batch | None:
    """A block with quotes, lone carriage returns or neutralised formula cells: the csv module.

    Every cell goes through `restore`, so a neutralised cell reads as the text that was sent.
    """
    text = block.decode("utf-8", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=layout.delimiter)
    rows: list[list[str]] = []
    numbers: list[int] = []
    previous = 0
    try:
        for record in reader:
            start = line + previous + 1
            previous = reader.line_num
            if not record or record == [""] and layout.width > 1:
                continue
            info.rows += 1
            if len(record) != layout.width:
                rejections.add(
                    "malformed-row", label, start,
                    f"{len(record)} columns where the header has {layout.width}",
                )
                continue
            rows.append([restore(cell) if "'" in cell else cell for cell in record])
            numbers.append(start)
    except csv.Error as error:
        info.rows += 1
        rejections.add("malformed-row", label, line + previous + 1, f"unreadable CSV: {error}")
    if not rows:
        return None
    columns: dict[str, Column] = {}
    for name, position in layout.index.items():
        if name != "submitted_at":
            columns[name] = ListColumn([row[position] for row in rows])
    return Batch(label, np.array(numbers, dtype=np.int64), columns, dict(layout.constants))


# ----------------------------------------------------------------------------------- Parquet


def parquet_columns(path: str | Path) -> list[str]:
    """The column names of a Parquet file (its "header")."""
    import duckdb

    try:
        with duckdb.connect() as connection:
            described = connection.execute("DESCRIBE SELECT * FROM read_parquet(?)",
                                            [str(path)]).fetchall()
    except duckdb.Error as error:
        raise ExportError(f"{path}: not a readable Parquet file: {error}") from error
    return [str(row[0]) for row in described]


def _read_parquet(
    path: str | Path, catalog: Catalog, mapping: Mapping[str, str], info: FileInfo,
    progress: Callable[[int], None] | None, extra: Sequence[str] = (),
) -> Iterator[Batch]:
    """A Parquet export: its columns matched like a CSV header, every value read as text.

    Row N is the file's N-th record. Cells are taken as written (Parquet is not opened by
    spreadsheets, so `rrsite export` writes no formula guard into it).
    """
    import duckdb

    label = str(path)
    header = parquet_columns(path)
    layout = csv_layout(header, catalog, mapping, label, extra)
    info.format = "Parquet"
    info.notes.extend(layout.notes)
    wanted = [(name, position) for name, position in layout.index.items()
              if name != "submitted_at"]
    select = ", ".join(f'CAST("{header[p].replace(chr(34), chr(34) * 2)}" AS VARCHAR)'
                       for _, p in wanted) or "NULL"
    with duckdb.connect() as connection:
        connection.execute("SET enable_progress_bar = false")
        result = connection.execute(f"SELECT {select} FROM read_parquet(?)", [label])
        row = 0
        while True:
            chunk = result.fetchmany(PARQUET_BATCH)
            if not chunk:
                break
            columns: dict[str, Column] = {
                name: ListColumn([r[i] for r in chunk]) for i, (name, _) in enumerate(wanted)}
            numbers = np.arange(row + 1, row + 1 + len(chunk), dtype=np.int64)
            row += len(chunk)
            info.rows += len(chunk)
            yield Batch(label, numbers, columns, dict(layout.constants))
    info.bytes = file_size(path)
    if progress is not None:
        progress(info.bytes)


# ------------------------------------------------------------------------------------- JSONL


def _read_jsonl(
    path: str | Path, catalog: Catalog, rejections: Rejections, info: FileInfo,
    progress: Callable[[int], None] | None, extra: Sequence[str] = (),
) -> Iterator[Batch]:
    label = str(path)
    questions = catalog.question_ids()
    known = set(questions)
    grouped = catalog.grouped_ids()
    records: list[dict[str, Any]] = []
    numbers: list[int] = []
    unknown: dict[int, str] = {}
    pending = 0
    with open_binary(path) as handle:
        for number, raw in enumerate(handle, start=1):
            info.bytes += len(raw)
            pending += len(raw)
            text = raw.strip()
            if not text:
                continue
            info.rows += 1
            record = jsonl_record(text, label, number, rejections)
            if record is None:
                continue
            stray = jsonl_stray(record, known, grouped)
            if stray is not None:
                unknown[len(records)] = stray
            records.append(record)
            numbers.append(number)
            if len(records) >= JSONL_BATCH:
                if progress is not None:
                    progress(pending)
                    pending = 0
                yield jsonl_batch(label, records, numbers, unknown, questions, grouped, extra)
                records, numbers, unknown = [], [], {}
    if progress is not None and pending:
        progress(pending)
    if records:
        yield jsonl_batch(label, records, numbers, unknown, questions, grouped, extra)


def jsonl_stray(record: dict[str, Any], known: set[str], grouped: Sequence[str]) -> str | None:
    """The first answer (or ``<id>.group``) of a record that no version of the survey asks."""
    strays = [key for key in record["answers"] if key not in known]
    strays += [key + GROUP_SUFFIX for key in record["groups"] if key not in grouped]
    return strays[0] if strays else None


def jsonl_record(
    text: bytes, label: str, number: int, rejections: Rejections
) -> dict[str, Any] | None:
    """One JSONL line as a record, or None with the line's rejection counted."""
    try:
        record = json.loads(text)
    except ValueError as error:
        rejections.add("malformed-json", label, number, f"not valid JSON: {error}")
        return None
    if not isinstance(record, dict):
        rejections.add("malformed-json", label, number,
                       f"a line must be a JSON object, got {type(record).__name__}")
        return None
    missing = [key for key in ("survey", "version", "respondent", "answers") if key not in record]
    if missing:
        rejections.add("missing-field", label, number, f"no {missing[0]!r}")
        return None
    if not isinstance(record["answers"], dict):
        rejections.add("malformed-json", label, number, "answers must be a JSON object")
        return None
    groups = record.setdefault("groups", {})
    if not isinstance(groups, dict):
        rejections.add("malformed-json", label, number, "groups must be a JSON object")
        return None
    return record


def jsonl_batch(
    label: str, records: list[dict[str, Any]], numbers: list[int], unknown: dict[int, str],
    questions: list[str], grouped: Sequence[str] = (), extra: Sequence[str] = (),
) -> Batch:
    """Records read from JSONL as a batch of rows (values as JSON gave them)."""
    columns: dict[str, Column] = {
        "survey": ListColumn([r["survey"] for r in records], from_json=True),
        "version": ListColumn([r["version"] for r in records], from_json=True),
        "respondent": ListColumn([r["respondent"] for r in records], from_json=True),
    }
    answers = [r["answers"] for r in records]
    for qid in questions:
        columns[qid] = ListColumn([a.get(qid) for a in answers], from_json=True)
    for qid in grouped:
        columns[qid + GROUP_SUFFIX] = ListColumn([r["groups"].get(qid) for r in records],
                                                 from_json=True)
    for name in extra:
        columns[EXTRA_PREFIX + name] = ListColumn([_extra_value(r, name) for r in records],
                                                  from_json=True)
    return Batch(label, np.array(numbers, dtype=np.int64), columns, {}, dict(unknown))


def _extra_value(record: dict[str, Any], name: str) -> Any:
    design = record.get("design")
    if isinstance(design, dict) and name in design:
        return design[name]
    if name in record:
        return record.get(name)
    return record["answers"].get(name)


def file_size(path: str | Path) -> int:
    """Bytes on disk (for the progress bar); 0 if unknown."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
