"""The accepted rows of an export with every needed question's raw answer, for the model fits.

``rrsite analyze --model``, ``--joint`` and ``--cor`` read their rows here: the same reader and
checks as the tally of ``rrsite analyze`` (rejected rows are counted the same way), keeping each
accepted row's version (so each row is fitted under its own version's design) and, per two-group
question, its group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .catalog import Catalog
from .readers import EXTRA_PREFIX, Batch, ExportError, FileInfo, read_export
from .rejections import Rejections
from .tally import Tally


@dataclass
class Rows:
    """The accepted rows: version index and every needed question's raw answer."""

    version: np.ndarray
    answers: dict[str, list[object]]
    rejections: Rejections
    #: Per two-group question: each accepted row's group (1 or 2; 0 where it has none).
    groups: dict[str, np.ndarray] = field(default_factory=dict)



def read_rows(
    paths: Sequence[str | Path], catalog: Catalog, column_map: dict[str, str], needed: list[str],
) -> Rows:
    """Read and check every export; keep the accepted rows' versions, answers and groups."""
    rejections = Rejections()
    tally = Tally(catalog, None, rejections)
    versions: list[np.ndarray] = []
    answers: dict[str, list[object]] = {q: [] for q in needed}
    groups: dict[str, list[np.ndarray]] = {q: [] for q in needed}
    for path in paths:
        if not Path(path).is_file():
            raise ExportError(f"{path}: no such file")
        info = FileInfo(str(path), "")
        for batch in read_export(path, catalog, column_map, rejections, info):
            checked = tally.check(batch)
            tally.commit(checked)
            keep = checked.status == 0
            versions.append(checked.version[keep])
            for qid in needed:
                column = batch.columns.get(qid)
                values = column.objects() if column is not None else [None] * len(batch)
                answers[qid].extend(v for v, k in zip(values, keep.tolist(), strict=True) if k)
                codes = checked.group_codes.get(qid)
                groups[qid].append(np.zeros(int(keep.sum()), dtype=np.int8) if codes is None
                                   else np.asarray(codes)[keep].astype(np.int8))
    version = np.concatenate(versions) if versions else np.zeros(0, dtype=np.int32)
    group_codes = {q: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int8)
                   for q, parts in groups.items()}
    return Rows(version, answers, rejections,
                {q: codes for q, codes in group_codes.items() if np.any(codes)})


def read_records(
    paths: Sequence[str | Path], catalog: Catalog, column_map: dict[str, str],
) -> tuple[list[dict[str, Any]], Rejections, int]:
    """Every accepted row of the exports as an export record, the rejections, the rows read.

    A record has the shape of a JSONL export line: survey, version, respondent, submitted_at,
    ``answers`` {question id: value} and ``groups`` {question id: 1 or 2}. Rows are read and
    checked exactly as `rrsite analyze` does; rejected rows are counted, not kept.
    """
    rejections = Rejections()
    tally = Tally(catalog, None, rejections)
    questions = catalog.question_ids()
    records: list[dict[str, Any]] = []
    read = 0
    for path in paths:
        if not Path(path).is_file():
            raise ExportError(f"{path}: no such file")
        info = FileInfo(str(path), "")
        for batch in read_export(path, catalog, column_map, rejections, info,
                                 extra=["submitted_at"]):
            checked = tally.check(batch)
            tally.commit(checked)
            keep = np.flatnonzero(checked.status == 0).tolist()
            if not keep:
                continue

            def values(name: str, batch: Batch = batch) -> list[Any]:
                column = batch.columns.get(name)
                return column.objects() if column is not None else [None] * len(batch)

            tokens, times = values("respondent"), values(EXTRA_PREFIX + "submitted_at")
            answers = {qid: values(qid) for qid in questions if qid in batch.columns}
            for i in keep:
                version = catalog.versions[int(checked.version[i])].version
                groups = {qid: int(codes[i]) for qid, codes in checked.group_codes.items()
                          if codes[i] in (1, 2)}
                records.append({
                    "survey": catalog.survey, "version": version, "respondent": tokens[i],
                    "submitted_at": times[i],
                    "answers": {qid: column[i] for qid, column in answers.items()
                                if column[i] is not None},
                    "groups": groups})
        read += info.rows
    return records, rejections, read
