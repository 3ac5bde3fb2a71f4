"""Matching a panel's participant ids against a survey's completion record (`rrsite completions`).

The record holds, per survey, the SHA-256 of the text "rrsite-completion", survey and id, one a
line, of each participant whose answers the collector stored (docs/contracts.md, "Online
panels"): the researcher's list of ids, from the panel, says who they are.
"""

from __future__ import annotations

import csv
import hashlib
import sqlite3
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...errors import RRSiteError
from ..storebase import is_postgres, shown
from . import record


class CompletionsError(RRSiteError):
    """A list of ids that cannot be read (file and reason)."""


def completion_digest(survey: str, participant: str) -> bytes:
    """What the page sends for a participant (and the record keeps): 32 bytes of SHA-256."""
    return hashlib.sha256(f"rrsite-completion\n{survey}\n{participant}".encode()).digest()


@dataclass
class Matched:
    """The list of ids with, per row, whether the id completed; and what matched nothing."""

    header: list[str]
    rows: list[list[str]]
    completed: list[bool]
    column: str
    #: Digests in the record that match no id of the list (completions of ids not listed).
    unmatched: int


def read_ids(path: Path, column: str | None) -> tuple[list[str], list[list[str]], int]:
    """(header, rows, index of the id column) of a CSV list of participant ids."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            sample = handle.read(65536)
            handle.seek(0)
            try:
                dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(
                    sample, delimiters=",;\t")
            except csv.Error:
                dialect = csv.excel
            table = list(csv.reader(handle, dialect))
    except OSError as error:
        raise CompletionsError(f"{path}: cannot read: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise CompletionsError(f"{path}: not UTF-8 text (byte {error.start})") from error
    if not table or not table[0]:
        raise CompletionsError(f"{path}: empty: give a CSV with a header and one id per row")
    header = table[0]
    if column is not None:
        if column not in header:
            raise CompletionsError(f"{path}: no column {column!r} (columns: {', '.join(header)})")
        index = header.index(column)
    else:
        named = [i for i, name in enumerate(header) if "id" in name.lower()]
        if not named:
            raise CompletionsError(f"{path}: no column whose name contains 'id' (columns: "
                                   f"{', '.join(header)}); name it with --column")
        index = named[0]
    rows = [row for row in table[1:] if any(cell.strip() for cell in row)]
    for number, row in enumerate(table[1:], start=2):
        if any(cell.strip() for cell in row) and (index >= len(row) or not row[index].strip()):
            raise CompletionsError(f"{path}:{number}: no id in column {header[index]!r}")
    return header, rows, index


def match(survey: str, digests: Iterable[bytes], header: list[str], rows: list[list[str]],
          index: int) -> Matched:
    """Which listed ids completed, and how many recorded digests match no listed id."""
    recorded = set(digests)
    mine = [completion_digest(survey, row[index].strip()) for row in rows]
    return Matched(header, rows, [digest in recorded for digest in mine], header[index],
                   len(recorded - set(mine)))


def recorded(db: str, survey: str) -> list[bytes]:
    """The survey's completion record in the store a --db value names (read only)."""
    if is_postgres(db):
        import asyncpg

        from ..pgstore import run_outside_loop

        async def work() -> list[bytes]:
            connection = await asyncpg.connect(db, timeout=10)
            try:
                return await record.read_pg(connection, survey)
            finally:
                await connection.close()

        try:
            digests: list[bytes] = run_outside_loop(work())
            return digests
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            raise CompletionsError(f"{shown(db)}: cannot read the completion record: "
                                   f"{type(error).__name__}") from error
    path = Path(db)
    if not path.is_file():
        raise CompletionsError(f"{db}: no such database file")
    try:
        return record.read_sqlite(path, survey)
    except sqlite3.Error as error:
        raise CompletionsError(f"{db}: cannot read the completion record: {error}") from error


def write_matched(matched: Matched, output: Path | None) -> None:
    """The list of ids with a column ``completed`` (yes or no), as CSV (standard output: None)."""
    handle = open(output, "w", newline="", encoding="utf-8") if output else sys.stdout
    try:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([*matched.header, "completed"])
        for row, done in zip(matched.rows, matched.completed, strict=True):
            writer.writerow([*row, "yes" if done else "no"])
    finally:
        if output:
            handle.close()
