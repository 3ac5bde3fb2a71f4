"""Export stored submissions to CSV, JSONL or Parquet (docs/contracts.md), offline.

CSV: `survey,version,respondent,submitted_at,<question ids…>`; the question columns are the ids of
the exported surveys' stored manifests (every version), in manifest order, the first-seen survey
first; an absent answer is an empty cell, a multi-choice list its JSON text, a number its JSON text.
JSONL: one `{"survey", "version", "respondent", "submitted_at", "answers"}` object per line.
Parquet: the CSV's columns and rows, every column text (null where the CSV cell is empty), cells
as stored (no formula guard: spreadsheets do not open Parquet); written by DuckDB.
A two-group question's group (stored as `<id>.group`) is the CSV column `<id>.group` right after
the question's, and the JSONL object's `"groups"` (only when the submission has groups).

CSV text cells that a spreadsheet would run as a formula get a leading apostrophe, at the start of
the cell and after every line break in it (rrsite/spreadsheet.py), unless `keep_formulas` is set;
numbers and JSON lists are never changed, and JSONL is written as stored.

CSV quoting follows RFC 4180: a field holding a comma, a double quote, a CR or an LF is quoted, so a
text answer with a bare CR reads back as one cell of one row. Rows end in LF, as they always have.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from ..errors import RRSiteError
from ..pgsnapshot import Snapshot
from ..spreadsheet import neutralise
from .manifests import CELL_KEY, GROUP_SUFFIX
from .store import connect
from .storebase import is_postgres, shown

BASE_COLUMNS = ("survey", "version", "respondent", "submitted_at")
FORMATS = ("csv", "jsonl", "parquet")


def format_for(path: str) -> str | None:
    """`csv`, `jsonl` or `parquet` from a file name's extension, else None."""
    suffix = os.path.splitext(path)[1].lower()
    return {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
            ".parquet": "parquet"}.get(suffix)


class Export:
    """The stored submissions of a database, optionally of one survey.

    In the order of (survey, respondent token): the tokens are random, so the order says nothing
    about when a submission arrived (docs: the threat model of invitation codes).
    """

    manifests: list[dict[str, Any]]

    def __init__(self, db: Path, survey: str | None = None) -> None:
        self.db = db
        self.survey = survey
        self.connection = connect(db, create=False)
        try:
            self.manifests = [json.loads(text) for (text,) in self.connection.execute(
                "SELECT manifest FROM manifests ORDER BY rowid")]
            surveys = [sid for (sid,) in self.connection.execute(
                "SELECT survey FROM manifests UNION SELECT survey FROM submissions")]
        except sqlite3.Error as error:
            self.connection.close()
            raise RRSiteError(f"{db}: cannot read the database: {error}") from error
        if survey is not None and survey not in surveys:
            self.connection.close()
            _no_survey(db, survey, surveys)

    def close(self) -> None:
        """Close the database."""
        self.connection.close()

    def question_ids(self) -> list[str]:
        """The question columns: manifest order; the first-seen survey (all its versions) first."""
        by_survey: dict[str, list[dict[str, Any]]] = {}
        for manifest in self.manifests:  # in the order first seen
            by_survey.setdefault(str(manifest.get("id")), []).append(manifest)
        ids: dict[str, None] = {}
        for survey, manifests in by_survey.items():
            if self.survey is not None and survey != self.survey:
                continue
            for manifest in manifests:
                for question in manifest.get("questions", []):
                    ids.setdefault(str(question["id"]), None)
                    if question.get("groups") is not None:
                        ids.setdefault(str(question["id"]) + GROUP_SUFFIX, None)
        return list(ids)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Each submission as a record: the base fields and `answers`."""
        query = "SELECT survey, version, respondent, submitted_at, answers FROM submissions"
        params: tuple[str, ...] = ()
        if self.survey is not None:
            query += " WHERE survey = ?"
            params = (self.survey,)
        for survey, version, respondent, submitted_at, answers in self.connection.execute(
                query + " ORDER BY survey, respondent", params):
            yield _record(survey, version, respondent, submitted_at, answers)

    def has_cells(self) -> bool:
        """Whether any exported submission came with a design cell."""
        query = "SELECT EXISTS (SELECT 1 FROM submissions WHERE instr(answers, ?) > 0"
        params: tuple[str, ...] = (json.dumps(CELL_KEY) + ":",)
        if self.survey is not None:
            query += " AND survey = ?"
            params += (self.survey,)
        return bool(self.connection.execute(query + ")", params).fetchone()[0])

    def write_csv(self, out: TextIO, *, keep_formulas: bool = False) -> int:
        """Write the CSV; the number of rows.

        Text cells that look like spreadsheet formulas get a leading apostrophe unless
        `keep_formulas` is set.
        """
        text: Callable[[str], str] = _same if keep_formulas else neutralise
        ids = self.question_ids()
        cells = ["cell"] if self.has_cells() else []  # `rrsite invite --frame` design cells
        writer = csv.writer(_RowsEndInLF(out), lineterminator="\r\n")
        writer.writerow([*BASE_COLUMNS, *ids, *cells])
        count = 0
        for record in self.rows():
            answers = dict(record["answers"])
            answers.update({qid + GROUP_SUFFIX: g for qid, g in record.get("groups", {}).items()})
            extra = [qid for qid in answers if qid not in ids]
            if extra:  # cannot happen with manifests recorded by the collector
                raise RRSiteError(f"{self.db}: answers to {extra} have no manifest column")
            writer.writerow([*(text(record[name]) for name in BASE_COLUMNS),
                             *(_cell(answers.get(qid), text) for qid in ids),
                             *(_cell(record.get(name), text) for name in cells)])
            count += 1
        return count

    def write_parquet(self, target: Path) -> int:
        """Write the Parquet file: the CSV's columns, every one text, cells as stored.

        No formula guard (Parquet is not opened by spreadsheets); an absent answer is null.
        The CSV is written to a temporary file beside ``target`` and converted by DuckDB.
        """
        import duckdb

        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".csv",
                                             dir=target.parent)
        try:
            with open(handle, "w", encoding="utf-8", newline="") as out:
                count = self.write_csv(out, keep_formulas=True)
            with open(temporary, encoding="utf-8", newline="") as written:
                header = next(csv.reader([written.readline()]))
            columns = ", ".join(f"{_quoted(name)}: 'VARCHAR'" for name in header)
            with duckdb.connect() as connection:
                connection.execute("SET enable_progress_bar = false")
                connection.execute(
                    f"COPY (SELECT * FROM read_csv(?, columns={{{columns}}}, header=true, "
                    "auto_detect=false, delim=',', quote='\"', escape='\"', "
                    "max_line_size=16777216)) TO ? (FORMAT parquet, COMPRESSION zstd)",
                    [temporary, str(target)])
        finally:
            os.unlink(temporary)
        return count

    def write_jsonl(self, out: TextIO) -> int:
        """Write the JSON lines; the number of records."""
        count = 0
        for record in self.rows():
            out.write(json.dumps(record, ensure_ascii=False, separators=(", ", ": ")) + "\n")
            count += 1
        return count


class _RowsEndInLF:
    """What the csv writer writes to; each row reaches `out` ending in LF, as before.

    The writer is given CRLF as its line terminator, so it quotes every field holding a CR or an
    LF (QUOTE_MINIMAL quotes the characters of the terminator; with LF alone a bare CR went out
    unquoted).
    """

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, row: str) -> int:
        """Write one row, its CRLF replaced by LF."""
        return self.out.write(row[:-2] + "\n")


def _no_survey(db: object, survey: str, surveys: list[str]) -> None:
    listed = ", ".join(sorted(surveys)) or "none"
    raise RRSiteError(f"{db}: no survey {survey!r} in this database (surveys: {listed})")


class PgExport(Export):
    """The same export from a PostgreSQL store.

    One read-only REPEATABLE READ snapshot, read in chunks of rows (keyset on the id), so memory
    does not grow with the number of submissions.
    """

    CHUNK = 10_000

    def __init__(self, dsn: str, survey: str | None = None) -> None:  # noqa: D107
        import asyncpg

        from .pgstore import UNAVAILABLE

        self.db = shown(dsn)  # type: ignore[assignment]
        self.survey = survey
        self._snapshot: Snapshot | None = None
        try:
            self._snapshot = Snapshot(dsn, "rrsite-export")
            self.manifests = [json.loads(row[0]) for row in self._fetch(
                "SELECT manifest FROM manifests ORDER BY seq")]
            surveys = [row[0] for row in self._fetch(
                "SELECT survey FROM manifests UNION SELECT survey FROM submissions")]
        except (*UNAVAILABLE, asyncpg.UndefinedTableError) as error:
            self.close()
            raise RRSiteError(f"{self.db}: cannot read the database: {error}") from error
        if survey is not None and survey not in surveys:
            self.close()
            _no_survey(self.db, survey, surveys)

    def _fetch(self, query: str, *args: Any) -> list[Any]:
        assert self._snapshot is not None
        return self._snapshot.fetch(query, *args)

    def close(self) -> None:
        """End the snapshot and close the connection."""
        if self._snapshot is not None:
            self._snapshot.close()
            self._snapshot = None

    def has_cells(self) -> bool:
        """Whether any exported submission came with a design cell."""
        where = " AND survey = $2" if self.survey is not None else ""
        args: tuple[str, ...] = (self.survey,) if self.survey is not None else ()
        return bool(self._fetch("SELECT EXISTS (SELECT 1 FROM submissions WHERE "
                                f"strpos(answers, $1) > 0{where})",
                                json.dumps(CELL_KEY) + ":", *args)[0][0])

    def rows(self) -> Iterator[dict[str, Any]]:
        """Each submission as a record, by (survey, respondent token), a chunk at a time."""
        last = ("", "")
        where = " AND survey = $3" if self.survey is not None else ""
        args: tuple[str, ...] = (self.survey,) if self.survey is not None else ()
        while True:
            chunk = self._fetch(
                "SELECT survey, version, respondent, submitted_at, answers FROM submissions "
                f"WHERE (survey, respondent) > ($1, $2){where} "
                f"ORDER BY survey, respondent LIMIT {self.CHUNK}", *last, *args)
            for row in chunk:
                yield _record(row[0], row[1], row[2], row[3], row[4])
            if len(chunk) < self.CHUNK:
                return
            last = (chunk[-1][0], chunk[-1][2])


def _quoted(name: str) -> str:
    """A column name as a SQL string literal."""
    return "'" + name.replace("'", "''") + "'"


def _record(survey: str, version: str, respondent: str, submitted_at: str,
            answers: str) -> dict[str, Any]:
    """A stored row as the export's record.

    A two-group question's stored `<id>.group` answer goes to `groups` (present only when the
    submission has groups); a design cell (stored as `@cell`) to `cell`.
    """
    stored = json.loads(answers)
    cell = stored.pop(CELL_KEY, None)
    record: dict[str, Any] = {
        "survey": survey, "version": version, "respondent": respondent,
        "submitted_at": submitted_at,
        "answers": {k: v for k, v in stored.items() if not k.endswith(GROUP_SUFFIX)}}
    groups = {k[: -len(GROUP_SUFFIX)]: v for k, v in stored.items() if k.endswith(GROUP_SUFFIX)}
    if groups:
        record["groups"] = groups
    if cell is not None:
        record["cell"] = cell
    return record


def _same(text: str) -> str:
    return text


def _cell(value: Any, text: Callable[[str], str]) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return text(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def export(db: Path | str, output: str, *, survey: str | None = None, fmt: str | None = None,
           keep_formulas: bool = False) -> int:
    """Write the export to `output` (a path, or `-` for standard output); the number of rows.

    CSV text cells that look like formulas are neutralised unless `keep_formulas` is set.

    The file is written beside its target and renamed into place, so a failure leaves any
    previous export untouched.
    """
    fmt = fmt or format_for(output)
    if fmt not in FORMATS:
        raise RRSiteError(f"-o {output}: name the file .csv or .jsonl, or .parquet (or give "
                          "--format)")
    source = PgExport(str(db), survey) if is_postgres(db) else Export(Path(db), survey)
    try:
        if output == "-":
            import sys

            if fmt == "parquet":
                with tempfile.TemporaryDirectory() as folder:
                    path = Path(folder) / "export.parquet"
                    count = source.write_parquet(path)
                    sys.stdout.flush()
                    sys.stdout.buffer.write(path.read_bytes())
                return count
            buffer = io.StringIO()
            count = (source.write_csv(buffer, keep_formulas=keep_formulas) if fmt == "csv"
                     else source.write_jsonl(buffer))
            sys.stdout.write(buffer.getvalue())
            return count
        target = Path(output)
        if not target.parent.is_dir():
            raise RRSiteError(f"-o {output}: the folder {target.parent} does not exist")
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            if fmt == "parquet":
                os.close(handle)
                os.unlink(temporary)  # DuckDB writes the file itself
                count = source.write_parquet(Path(temporary))
            else:
                with open(handle, "w", encoding="utf-8", newline="") as out:
                    count = (source.write_csv(out, keep_formulas=keep_formulas) if fmt == "csv"
                             else source.write_jsonl(out))
            mask = os.umask(0)  # mkstemp makes the file 0600: the mode the user's umask gives
            os.umask(mask)
            os.chmod(temporary, 0o666 & ~mask)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return count
    finally:
        source.close()
