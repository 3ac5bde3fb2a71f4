"""`rrsite simulate --frame`: a simulated export drawn from a sampling frame (strata, clusters).

The frame is a CSV with one row per person of the population. With ``--sample-clusters K``, K
primary units (clusters, or people without ``--cluster``) are drawn without replacement in each
stratum (everyone in a drawn cluster answers); each respondent then carries ``weight`` = M_h / k_h
and ``fpc`` = M_h (M_h the stratum's units in the frame, k_h those drawn). Without it, every frame
row answers, with the frame's own columns. The frame's columns are copied into the export after
the answers (except those named by ``--frame-truth``), so `rrsite analyze --weights weight
--strata COL --cluster COL --fpc fpc` can read them.

``--frame-truth QID=COL``: the probability (or 0/1) that the row's true answer to yes-no QID is
"yes", so prevalence can differ between strata and clusters.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import RRSiteError, UsageError
from ..exports.catalog import version_from_manifest
from .draws import GROUP_SUFFIX, sensitive_reports
from .export import cell, simulate_rows
from .numbers import NumberTruth

#: Columns a sampled export adds.
WEIGHT, FPC = "weight", "fpc"


def read_frame(path: str) -> tuple[list[str], list[dict[str, str]]]:
    """The frame's header and rows."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            header = list(reader.fieldnames or [])
    except OSError as error:
        raise RRSiteError(f"{path}: cannot read: {error.strerror or error}") from error
    if not rows:
        raise RRSiteError(f"{path}: the frame has no rows")
    return header, rows


def _column(path: str, header: list[str], name: str | None, option: str) -> None:
    if name is not None and name not in header:
        raise UsageError(f"{option} {name!r}: no such column in {path} (columns: "
                         f"{', '.join(header)})")


def draw_sample(
    rows: list[dict[str, str]], strata: str | None, cluster: str | None, per_stratum: int,
    rng: np.random.Generator,
) -> tuple[list[int], list[float], list[float]]:
    """Indices of the rows drawn, with their weights and fpc (PSUs of the stratum)."""
    units: dict[str, dict[str, list[int]]] = {}
    for i, row in enumerate(rows):
        stratum = row[strata] if strata else ""
        unit = row[cluster] if cluster else str(i)
        units.setdefault(stratum, {}).setdefault(unit, []).append(i)
    chosen: list[int] = []
    weights: list[float] = []
    fpc: list[float] = []
    for stratum in sorted(units):
        names = sorted(units[stratum])
        take = min(per_stratum, len(names))
        for pick in sorted(rng.choice(len(names), take, replace=False).tolist()):
            members = units[stratum][names[pick]]
            chosen += members
            weights += [len(names) / take] * len(members)
            fpc += [float(len(names))] * len(members)
    return chosen, weights, fpc


def write_frame_export(
    path: str | Path, manifest: Mapping[str, Any], frame: str, truths: Mapping[str, np.ndarray],
    *, strata: str | None = None, cluster: str | None = None,
    sample_clusters: int | None = None, frame_truth: Sequence[str] = (),
    seed: int | None = None, numbers: Mapping[str, NumberTruth] | None = None,
) -> int:
    """Write the export of a sample drawn from ``frame``; returns the number of rows."""
    path = Path(path)
    if path.suffix.lower() != ".csv":
        raise UsageError(f"-o {path}: --frame writes a CSV export (the design columns follow "
                         "the answers)")
    header, rows = read_frame(frame)
    _column(frame, header, strata, "--strata")
    _column(frame, header, cluster, "--cluster")
    version = version_from_manifest(manifest, "survey")
    truth_columns: dict[str, str] = {}
    for item in frame_truth:
        qid, sep, name = item.partition("=")
        question = version.question(qid)
        if not sep or question is None or question.type != "yes-no" or not question.sensitive:
            raise UsageError(f"--frame-truth {item!r}: write QID=COLUMN for a randomized yes-no "
                             "question")
        _column(frame, header, name, "--frame-truth")
        truth_columns[qid] = name
    rng = np.random.default_rng(seed)
    if sample_clusters is not None:
        if sample_clusters < 2:
            raise UsageError("--sample-clusters must be 2 or more (a stratum with one cluster "
                             "has no variance estimate)")
        if WEIGHT in header or FPC in header:
            raise UsageError(f"{frame}: the frame already has a {WEIGHT!r} or {FPC!r} column; a "
                             "sampled export adds its own")
        chosen, weights, fpc = draw_sample(rows, strata, cluster, sample_clusters, rng)
    else:
        chosen, weights, fpc = list(range(len(rows))), [], []
    count = len(chosen)
    columns = next(iter(simulate_rows(manifest, count, truths, seed=seed, chunk=max(count, 1),
                                      numbers=numbers)))[1]
    for qid, name in truth_columns.items():
        question = version.question(qid)
        assert question is not None
        try:
            p = np.array([float(rows[i][name]) for i in chosen])
        except ValueError as error:
            raise RRSiteError(f"{frame}: column {name!r} must hold probabilities: {error}"
                              ) from error
        if np.any((p < 0) | (p > 1)):
            raise RRSiteError(f"{frame}: column {name!r} must hold probabilities in [0, 1]")
        yes = question.values.index("yes")
        truth = np.where(rng.random(count) < p, yes, 1 - yes)
        answers, groups = sensitive_reports(rng, question, truth)
        skipped = columns[qid]
        columns[qid] = [None if old is None else new
                        for old, new in zip(skipped, answers, strict=True)]
        if groups is not None:
            columns[qid + GROUP_SUFFIX] = [None if old is None else g
                                           for old, g in zip(skipped, groups, strict=True)]
    answer_columns = [name for q in version.questions
                      for name in (q.id, q.id + GROUP_SUFFIX) if name in columns]
    copied = [name for name in header if name not in truth_columns.values()]
    clash = [name for name in copied if name in ("survey", "version", "respondent",
                                                 "submitted_at", *answer_columns)]
    if clash:
        raise UsageError(f"{frame}: column {clash[0]!r} has the name of an export column; "
                         "rename it in the frame")
    design_columns = [WEIGHT, FPC] if sample_clusters is not None else []
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["survey", "version", "respondent", "submitted_at", *answer_columns,
                         *copied, *design_columns])
        for k, i in enumerate(chosen):
            out = [columns[name][k] for name in ("survey", "version", "respondent",
                                                 "submitted_at")]
            out += [cell(columns[name][k]) for name in answer_columns]
            out += [rows[i][name] for name in copied]
            if design_columns:
                out += [repr(weights[k]), f"{fpc[k]:.0f}"]
            writer.writerow(out)
    return count
