"""The messages of the rejected rows a report shows, written by rrsite's own checks.

An engine says which rows were rejected and why (the status); what is wrong with a row in words
("major: 'medicine' is not one of arts, science, law") comes from reading the row once more with
rrsite.exports.tally, as a batch of one row. So every engine's report shows the same words, and
the row's status from that reading must be the engine's: a row read one way by the engine and
another by rrsite is a disagreement (``Disagreement``), never a silently different report.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import RRSiteError
from ...spreadsheet import restore
from ..catalog import Catalog
from ..columns import Column, ListColumn
from ..readers import Batch, Layout, jsonl_batch, jsonl_record, jsonl_stray
from ..rejections import Rejections
from ..tally import Tally, duplicate_message
from .checks import DUPLICATE, MALFORMED_JSON, MALFORMED_ROW, MISSING


class Disagreement(RRSiteError):
    """An engine and rrsite's own reader disagree about a row (rrsite then reads the files)."""


class Shown:
    """Writes the message of each rejected row shown, checking the engine's status."""

    def __init__(self, catalog: Catalog, by: str | Sequence[str] | None) -> None:
        self.catalog = catalog
        self.tally = Tally(catalog, by, Rejections())
        self.questions = catalog.question_ids()
        self.known = set(self.questions)
        self.grouped = catalog.grouped_ids()

    def _message(self, batch: Batch, status: int, token: str | None, where: str) -> str:
        checked = self.tally.check(batch)
        found = int(checked.status[0])
        if status == DUPLICATE and found == 0 and token is not None:
            return duplicate_message(token)
        if found != status:
            raise Disagreement(f"{where}: the engine gave status {status}, rrsite's reader "
                               f"{found}")
        return checked.describe[status](0)

    def values(self, label: str, line: int, values: Mapping[str, Any], status: int,
               constants: Mapping[str, str], from_json: bool = False) -> str:
        """A row given as {field: value} (a Parquet row, a table's row, a stored submission)."""
        columns: dict[str, Column] = {name: ListColumn([value], from_json=from_json)
                                      for name, value in values.items()}
        batch = Batch(label, np.array([line]), columns, dict(constants))
        token = values.get("respondent")
        return self._message(batch, status, token if isinstance(token, str) else None,
                             f"{label}:{line}")

    def csv_row(self, label: str, line: int, text: bytes, layout: Layout, status: int) -> str:
        """A CSV record: its cells as Python's csv module reads them, formula guards removed."""
        cells = _cells(text)
        if status == MALFORMED_ROW:
            if len(cells) == layout.width:
                raise Disagreement(f"{label}:{line}: rejected by the engine, but it has the "
                                   f"{layout.width} columns of the header")
            return f"{len(cells)} columns where the header has {layout.width}"
        if len(cells) != layout.width:
            raise Disagreement(f"{label}:{line}: {len(cells)} columns where the header has "
                               f"{layout.width}, but the engine read it")
        cells = [restore(cell) if "'" in cell else cell for cell in cells]
        values = {name: cells[position] for name, position in layout.index.items()
                  if name != "submitted_at"}
        return self.values(label, line, values, status, layout.constants)

    def jsonl_line(self, label: str, line: int, text: bytes, status: int) -> str:
        """A JSONL line, read as rrsite's JSONL reader reads it."""
        rejected = Rejections()
        record = jsonl_record(text.strip(), label, line, rejected)
        if record is None:
            reason = next(iter(rejected.counts))
            expected = {"malformed-json": MALFORMED_JSON, "missing-field": MISSING}[reason]
            if expected != status:
                raise Disagreement(f"{label}:{line}: the engine gave status {status}, rrsite's "
                                   f"reader {reason}")
            return rejected.examples[reason][0].message
        stray = jsonl_stray(record, self.known, self.grouped)
        batch = jsonl_batch(label, [record], [line], {0: stray} if stray else {},
                            self.questions, self.grouped)
        token = record.get("respondent")
        return self._message(batch, status, token if isinstance(token, str) else None,
                             f"{label}:{line}")

    def record(self, label: str, line: int, record: dict[str, Any], status: int) -> str:
        """A record as the JSONL export writes it (a stored submission)."""
        text = json.dumps(record, ensure_ascii=False).encode("utf-8")
        return self.jsonl_line(label, line, text, status)


def _cells(text: bytes) -> list[str]:
    """The cells of one CSV record."""
    decoded = text.decode("utf-8", errors="replace")
    try:
        rows = list(csv.reader(io.StringIO(decoded, newline="")))
    except csv.Error:
        return []
    return rows[0] if len(rows) == 1 else [cell for row in rows for cell in row]
