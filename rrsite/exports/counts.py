"""Report counts instead of rows (`rrsite analyze --counts FILE.csv`): read into a tally.

For published tables and for counts computed elsewhere (a database, a cluster). The CSV has a
header with the columns

    question, version, group, report, subgroup, count

``question`` is a randomized question's id; ``version`` a version id of the survey (as in the
export), or the name of the question's design when exactly one version uses it; ``group`` the
two-group designs' group (1 or 2, required; empty or 1 for one-group designs); ``report`` the
reported value (a design's own report for crosswise, triangular and kuk: same/different,
circle/triangle, the number of red cards);
``subgroup`` (optional column) the answer to the ``--by`` question; ``count`` a non-negative
integer. Rows with the same keys add up. The estimates are those the rows would give: the counts
fill the same tally the export reader fills.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from .catalog import Catalog
from .readers import ExportError, FileInfo
from .rejections import Rejections
from .tally import NO_ANSWER, Tally

COLUMNS = ("question", "version", "group", "report", "subgroup", "count")
REQUIRED = ("question", "version", "report", "count")
#: How many bad rows are listed before the error stops.
SHOWN_ERRORS = 20


def read_counts(path: str | Path, catalog: Catalog, by: str | None) -> tuple[Tally, FileInfo]:
    """A tally filled from a counts CSV, and the file's description; bad rows raise ExportError.

    Every bad row is reported with its line (the first few are listed); nothing is counted then.
    """
    tally = Tally(catalog, by, Rejections())
    errors: list[str] = []
    rows = 0
    per_version: dict[int, dict[str, int]] = {}
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
        unknown = [name for name in header if name not in COLUMNS]
        if unknown:
            raise ExportError(f"{path}:1: unknown column(s) {', '.join(unknown)}; the columns are "
                              f"{', '.join(COLUMNS)}")
        reader.fieldnames = header
        for line, raw in enumerate(reader, start=2):
            rows += 1
            row = {k: (v or "").strip() for k, v in raw.items() if k is not None}
            problem = _add(row, catalog, tally, by, per_version)
            if problem:
                errors.append(f"{path}:{line}: {problem}")
    if errors:
        shown = "\n".join(errors[:SHOWN_ERRORS])
        more = f"\n... and {len(errors) - SHOWN_ERRORS} more" if len(errors) > SHOWN_ERRORS else ""
        raise ExportError(f"{len(errors)} bad row(s) in the counts file; nothing was "
                          f"estimated:\n{shown}{more}")
    for m, totals in per_version.items():
        tally.rows_accepted[m] = max(totals.values())
    info = FileInfo(str(path), "counts")
    info.rows = rows
    return tally, info




def _add(row: dict[str, str], catalog: Any, tally: Tally, by: str | None,
         per_version: dict[int, dict[str, int]]) -> str | None:
    """Add one row's count to the tally, or say what is wrong with it."""
    qid = row.get("question", "")
    named = [(m, q) for m, q in catalog.questions_named(qid) if q.sensitive]
    if not named:
        return f"question {qid!r} is not a randomized question of survey {catalog.survey!r}"
    if any(q.oracle is not None for _, q in named):
        return (f"question {qid!r} uses a frequency oracle: its reports support several answers "
                "each and cannot be counted by value; analyze the export's rows instead of "
                "--counts")
    if any(q.numeric for _, q in named):
        return (f"question {qid!r} is a randomized number: its mean and standard error need every "
                "report (counts of reports do not give the spread of a number); analyze the "
                "export's rows instead of --counts")
    wanted = row.get("version", "")
    matches = [(m, q) for m, q in named if catalog.versions[m].version == wanted]
    if not matches:
        matches = [(m, q) for m, q in named
                   if (q.design_spec or {}).get("name") == wanted]
        if len(matches) > 1:
            return (f"design {wanted!r} of {qid!r} is used by several versions; give the version "
                    "id instead")
    if not matches:
        return f"{qid!r} has no version or design {wanted!r}"
    m, question = matches[0]
    group = row.get("group", "")
    if question.two_group and group not in ("1", "2"):
        return (f"group {group!r}: {qid!r} in this version is a two-group design (group must be "
                "1 or 2)")
    if not question.two_group and group not in ("", "1"):
        return (f"group {group!r}: {qid!r} in this version is a one-group design (group must be "
                "empty or 1)")
    report = row.get("report", "")
    if report not in question.answers:
        kind = "report" if question.reports else "value"
        return f"report {report!r} is not a {kind} of {qid!r} ({', '.join(question.answers)})"
    text = row.get("count", "")
    if not text.isdigit():
        return f"count {text!r} is not a non-negative integer"
    count = int(text)
    subgroup = row.get("subgroup", "")
    column = 0
    if by is not None:
        name = subgroup or NO_ANSWER
        if name not in tally.groups:
            return f"subgroup {subgroup!r} is not an answer of --by {by!r}"
        column = tally.groups.index(name)
    elif subgroup:
        return f"subgroup {subgroup!r} given but no --by question to name it"
    target = tally.counts[(m, question.id)]
    target.counts[question.answers.index(report), column] += count
    if target.by_group is not None:
        target.by_group[int(group) - 1, question.answers.index(report), column] += count
    totals = per_version.setdefault(m, {})
    totals[qid] = totals.get(qid, 0) + count
    return None
