"""`rrsite invite --frame frame.csv`: invitation links that carry the invitee's design cell.

A sampling frame has one row per invitee, with the columns of the sample design (stratum,
cluster, weight or inclusion probability, finite-population correction) named by options. The
rows that share all of those values form one *design cell*. Each cell gets a random cell id
(8 characters of base64url from ``secrets``: no order, nothing derived from the frame), and each
invitee a link ``URL#invitation=CODE&cell=CELL``. Both stay in the fragment, which browsers never
send to a server. The page sends the cell id as the submission's ``cell`` field, never anything
else from the frame. The analysis joins the cell ids to the cells file this command writes (``cell,
<stratum>,<cluster>,weight[,fpc]``): ``rrsite analyze export.csv --design cells.csv --weights
weight ...``.

A cell shared by few invitees would single its respondents out. Whoever holds the codes file
(names and codes) and learns which codes were used can match a cell with one respondent to that
person's answers. So a cell with fewer than ``--min-cell`` invitees (default 10, never below 5) is
refused, with the cells listed: merge strata or clusters in the frame, or use coarser weights.
"""

from __future__ import annotations

import csv
import math
import secrets
from dataclasses import dataclass
from pathlib import Path

from ...errors import RRSiteError, UsageError

#: Random bytes per cell id: 48 bits, 8 characters of base64url.
CELL_BYTES = 6
MIN_CELL_DEFAULT = 10
MIN_CELL_FLOOR = 5


@dataclass
class FramePlan:
    """The invitees' rows, their cells and the cells file's rows."""

    header: list[str]
    rows: list[dict[str, str]]
    cell_of_row: list[str]
    cells: list[list[str]]
    cells_header: list[str]
    warnings: list[str]


def _positive(path: str, line: int, column: str, text: str, high: float | None) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0 or (high is not None and value > high):
        limit = "in (0, 1]" if high is not None else "a number > 0"
        raise RRSiteError(f"{path}:{line}: {column} {text!r} must be {limit}")
    return value


def plan_frame(
    path: str, *, strata: str | None, cluster: str | None, weight: str | None,
    inclusion: str | None, fpc: str | None, min_cell: int,
) -> FramePlan:
    """Read and check the frame; group its rows into design cells with random ids."""
    if min_cell < MIN_CELL_FLOOR:
        raise UsageError(f"--min-cell must be at least {MIN_CELL_FLOOR}, got {min_cell}")
    if (weight is None) == (inclusion is None):
        raise UsageError("--frame needs the weight column (--weight COL) or the inclusion "
                         "probability column (--inclusion COL), one of them")
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = list(reader.fieldnames or [])
            rows = list(reader)
    except OSError as error:
        raise RRSiteError(f"{path}: cannot read: {error.strerror or error}") from error
    if not rows:
        raise RRSiteError(f"{path}: the frame has no rows")
    for option, column in (("--strata", strata), ("--cluster", cluster), ("--weight", weight),
                           ("--inclusion", inclusion), ("--fpc", fpc)):
        if column is not None and column not in header:
            raise UsageError(f"{option} {column!r}: no such column in {path} (columns: "
                             f"{', '.join(header)})")
    if "code" in header or "link" in header:
        raise RRSiteError(f"{path}:1: the frame has a 'code' or 'link' column; the codes file "
                          "adds its own")
    keys: list[tuple[str, ...]] = []
    for line, row in enumerate(rows, start=2):
        parts = []
        for column in (strata, cluster):
            if column is not None:
                value = (row.get(column) or "").strip()
                if not value:
                    raise RRSiteError(f"{path}:{line}: no {column}")
                parts.append(value)
        if weight is not None:
            w = _positive(path, line, weight, (row.get(weight) or "").strip(), None)
        else:
            assert inclusion is not None
            w = 1.0 / _positive(path, line, inclusion, (row.get(inclusion) or "").strip(), 1.0)
        parts.append(repr(w))
        if fpc is not None:
            parts.append(repr(_positive(path, line, fpc, (row.get(fpc) or "").strip(), None)))
        keys.append(tuple(parts))
    sizes: dict[tuple[str, ...], int] = {}
    for key in keys:
        sizes[key] = sizes.get(key, 0) + 1
    small = sorted((n, key) for key, n in sizes.items() if n < min_cell)
    names = [c for c in (strata, cluster) if c is not None] + ["weight"] + (
        ["fpc"] if fpc is not None else [])
    if small:
        listed = "; ".join(", ".join(f"{k}={v}" for k, v in zip(names, key, strict=True))
                           + f": {n} invitee{'s' if n != 1 else ''}" for n, key in small[:5])
        more = f" (and {len(small) - 5} more)" if len(small) > 5 else ""
        raise RRSiteError(
            f"{path}: {len(small)} design cell{'s' if len(small) != 1 else ''} with fewer than "
            f"{min_cell} invitees would single respondents out ({listed}{more}); merge strata or "
            "clusters in the frame, give everyone in a cluster the same weight, or lower "
            f"--min-cell (not below {MIN_CELL_FLOOR})")
    ids: dict[tuple[str, ...], str] = {}
    used: set[str] = set()
    for key in sorted(sizes):
        while True:
            cell = secrets.token_urlsafe(CELL_BYTES)
            if cell not in used:
                used.add(cell)
                ids[key] = cell
                break
    cells = sorted([ids[key], *key] for key in sizes)  # sorted by the random id: no frame order
    warnings = []
    if strata is not None and cluster is not None:
        per_stratum: dict[str, set[str]] = {}
        for key in sizes:
            per_stratum.setdefault(key[0], set()).add(key[1])
        lonely = sorted(s for s, c in per_stratum.items() if len(c) == 1)
        if lonely:
            warnings.append(f"strata with a single cluster: {', '.join(lonely[:5])}; the "
                            "analysis will need --lonely-psu collapse")
    header_out = ["cell", *(c for c in (strata, cluster) if c is not None), "weight"] + (
        ["fpc"] if fpc is not None else [])
    return FramePlan(header, rows, [ids[key] for key in keys], cells, header_out, warnings)


def write_cells(path: Path, plan: FramePlan) -> None:
    """The cells file: the design of each cell id (a new file)."""
    try:
        with open(path, "x", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(plan.cells_header)
            writer.writerows(plan.cells)
    except FileExistsError:
        raise UsageError(f"--cells {path}: the file exists; choose a new name") from None
