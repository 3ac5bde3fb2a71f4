"""`rrsite completions --db DB --survey ID --ids FILE.csv`: who of a panel's list completed.

A panel survey with `record: true` keeps, apart from the answers, the digests of the participant
ids whose answers were stored (rrsite.collect.completion). This command reads a list of ids (the
panel's export of participants) and writes it back with a column `completed`: the record says
who completed, never what they answered.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..collect.completion.ids import match, read_ids, recorded, write_matched


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite completions`."""
    parser.add_argument("--db", required=True,
                        help="the collector's SQLite file, or its PostgreSQL database "
                        "(postgresql://user@host/dbname)")
    parser.add_argument("--survey", required=True, metavar="ID", help="the survey's id")
    parser.add_argument("--ids", required=True, type=Path, metavar="FILE.csv",
                        help="the panel's list of participants: a CSV with a header, one id a row "
                        "(e.g. Prolific's export of a study's participants)")
    parser.add_argument("--column", metavar="NAME",
                        help="the column of the ids (default: the first whose name contains "
                        "'id', such as 'Participant id' or 'WorkerId')")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE.csv",
                        help="where to write the list with its `completed` column (default: "
                        "standard output)")


def run(args: argparse.Namespace) -> int:
    """Match the list against the record; say how many completed and how many match no id."""
    header, rows, index = read_ids(args.ids, args.column)
    matched = match(args.survey, recorded(args.db, args.survey), header, rows, index)
    write_matched(matched, args.output)
    done = sum(matched.completed)
    print(f"rrsite completions: {done} of {len(rows)} ids in {args.ids.name} completed "
          f"{args.survey!r} (column {matched.column!r}); {matched.unmatched} recorded "
          f"completion{'s' if matched.unmatched != 1 else ''} match no id of the list",
          file=sys.stderr)
    return 0
