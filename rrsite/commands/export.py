"""`rrsite export --db FILE [--survey ID] -o FILE.csv|.jsonl|.parquet`: stored submissions, offline.

Reads the collector's SQLite file directly (a running `rrsite serve` may keep writing: the export is
a consistent snapshot). There is deliberately no HTTP export endpoint: whoever can read the file can
export, nobody else.
"""

from __future__ import annotations

import argparse
import sys

from ..collect.export import FORMATS, export


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite export`."""
    parser.add_argument("--db", required=True,
                        help="the collector's SQLite file, or its PostgreSQL database "
                        "(postgresql://user@host/dbname)")
    parser.add_argument("--survey", metavar="ID", help="only this survey (default: all)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="FILE.csv, FILE.jsonl or FILE.parquet (`-` writes to standard "
                        "output; give --format)")
    parser.add_argument("--format", choices=FORMATS,
                        help="csv, jsonl or parquet (default: from the output file's "
                        "extension); Parquet is columnar and compressed, for large exports "
                        "read by rrsite analyze, DuckDB, polars or pandas")
    parser.add_argument("--keep-formulas", action="store_true",
                        help="write CSV text cells exactly as sent, even ones a spreadsheet would "
                        "run as a formula (by default a cell starting with = + - @, tab or "
                        "carriage return gets a leading apostrophe; rrsite analyze removes it)")


def run(args: argparse.Namespace) -> int:
    """Write the export and say how many submissions it holds."""
    count = export(args.db, args.output, survey=args.survey, fmt=args.format,
                   keep_formulas=args.keep_formulas)
    if args.output != "-":
        print(f"rrsite export: {count} submission{'s' if count != 1 else ''} -> {args.output}",
              file=sys.stderr)
    return 0
