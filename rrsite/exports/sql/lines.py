"""Where a row DuckDB read sits in its file: the line a report shows (file:line) and its text.

DuckDB numbers nothing of a CSV but the records it rejects, and those by record (a quoted field
spanning lines is one), not by line. rrsite shows rows by the file's line, as its own reader
does. So for the few rows a report shows, one pass over the file (numpy, a block at a time,
stopping after the last row wanted) splits it into records the way DuckDB does (at line breaks
outside quotes), skips the blank lines DuckDB skips and the records it rejected, and numbers the
rest: the n-th is DuckDB's n-th row. It returns each wanted record's first line and its bytes,
which rrsite's own checks then read again to say what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..readers import BLOCK_SIZE, open_binary

#: Bytes a JSONL line may hold and still be blank (what JSON calls white space).
_SPACES = np.zeros(256, dtype=bool)
_SPACES[[9, 10, 13, 32]] = True


@dataclass(frozen=True)
class Located:
    """One record: the line it starts on and its bytes (without the line break ending it)."""

    line: int
    text: bytes


def _record_ends(buffer: bytes, quoted: bool) -> np.ndarray:
    """Offsets of the line breaks that end records (outside quotes when ``quoted``)."""
    array = np.frombuffer(buffer, dtype=np.uint8)
    newlines = np.flatnonzero(array == 10)
    if not quoted or b'"' not in buffer:
        return newlines
    quotes = np.flatnonzero(array == 34)
    ends: np.ndarray = newlines[np.searchsorted(quotes, newlines) % 2 == 0]
    return ends


def locate(
    path: str | Path, *, quoted: bool, header: bool, rejected: Collection[int],
    ordinals: Collection[int], records: Collection[int] = (), block_size: int = BLOCK_SIZE,
    blank_spaces: bool = False,
) -> tuple[dict[int, Located], dict[int, Located]]:
    """The records wanted, by row (1 = the first row DuckDB returned) and by DuckDB's record.

    ``rejected``: every record DuckDB rejected (its numbering: 1 is the file's first record,
    blank lines count); ``ordinals``: rows wanted; ``records``: rejected records wanted.
    ``blank_spaces``: a line of spaces, tabs and carriage returns is blank too (JSONL).
    """
    wanted_rows = np.array(sorted(set(ordinals)), dtype=np.int64)
    wanted_records = np.array(sorted(set(records)), dtype=np.int64)
    skipped = np.array(sorted(set(rejected)), dtype=np.int64)
    found_rows: dict[int, Located] = {}
    found_records: dict[int, Located] = {}
    if not len(wanted_rows) and not len(wanted_records):
        return found_rows, found_records
    last_row = int(wanted_rows[-1]) if len(wanted_rows) else 0
    last_record = int(wanted_records[-1]) if len(wanted_records) else 0
    record_base = 0   # records before the buffer
    row_base = 0      # DuckDB rows before the buffer
    line_base = 0     # line breaks before the buffer
    leftover = b""
    with open_binary(path) as handle:
        while True:
            data = handle.read(block_size)
            buffer = leftover + data if leftover else data
            if not buffer:
                break
            ends = _record_ends(buffer, quoted)
            if not data:  # the last record may have no line break
                if not buffer.endswith(b"\n"):
                    ends = np.append(ends, len(buffer))
            if not len(ends):
                leftover = buffer
                continue
            starts = np.empty_like(ends)
            starts[0] = 0
            starts[1:] = ends[:-1] + 1
            array = np.frombuffer(buffer, dtype=np.uint8)
            length = ends - starts
            if blank_spaces:
                solid = np.zeros(len(array) + 1, dtype=np.int64)
                np.cumsum(~_SPACES[array], out=solid[1:])
                blank = solid[ends] == solid[starts]
            else:
                first = array[np.minimum(starts, len(array) - 1)]
                blank = (length == 0) | ((length == 1) & (first == 13))
            number = record_base + 1 + np.arange(len(ends))
            is_row = ~blank & ~np.isin(number, skipped)
            if header:
                is_row &= number > 1
            rows = row_base + np.cumsum(is_row)
            breaks = np.flatnonzero(array[: int(ends[-1]) + 1] == 10)
            # the line a record starts on: 1 + the line breaks before its first byte
            lines = line_base + 1 + np.searchsorted(breaks, starts)
            for i in np.flatnonzero(is_row & np.isin(rows, wanted_rows)).tolist():
                found_rows[int(rows[i])] = Located(int(lines[i]), _text(buffer, starts[i], ends[i]))
            for i in np.flatnonzero(np.isin(number, wanted_records)).tolist():
                found_records[int(number[i])] = Located(int(lines[i]),
                                                        _text(buffer, starts[i], ends[i]))
            record_base = int(number[-1])
            row_base = int(rows[-1])
            line_base += len(breaks)
            leftover = buffer[int(ends[-1]) + 1:]
            if row_base >= last_row and record_base >= last_record:
                break
            if not data:
                break
    return found_rows, found_records


def _text(buffer: bytes, start: int, end: int) -> bytes:
    text = buffer[int(start):int(end)]
    return text[:-1] if text.endswith(b"\r") else text
