"""Simulated panels: the same respondents answer every wave of a series.

``rrsite simulate WAVE1.md --wave WAVE2.md --wave WAVE3.md --respondents N -o out-{wave}.csv``
writes one export per wave. Each respondent keeps their true answers from wave to wave, except
that a share ``--churn`` of them draws a new answer each wave (from ``--truth``, or from
``--wave-truth N:QID=...`` in wave N), so the expected share of answer v in wave w is
(1 - churn) f_{w-1} + churn s_w (:func:`expected_shares`). A share ``--keep`` of the devices keeps
the panel's state (the same respondent token and the same permanent reports every wave, drawn
once as the device draws them: rrsite.simulate.oracles.panel_tables); the others start afresh
in every wave (a new token, new permanent reports). Questions without a permanent report are
randomized afresh each wave; directly asked questions are drawn independently per wave.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from ..exports.catalog import QuestionSpec, VersionSpec, version_from_manifest
from .draws import draw, randomize
from .export import cell, parse_truths, simulate_rows
from .oracles import (
    draw_sets,
    encode,
    max_ticks_of,
    panel_reports,
    panel_tables,
    sample,
    set_shares,
)


@dataclass
class PanelQuestion:
    """One sensitive question followed through the waves."""

    id: str
    shares: list[np.ndarray]
    truth: np.ndarray | None = None
    tables: dict[str, np.ndarray] = field(default_factory=dict)


def expected_shares(shares: Sequence[np.ndarray], churn: float) -> list[np.ndarray]:
    """The expected true shares per wave: wave 1's, then (1 - churn) f_{w-1} + churn s_w."""
    out = [np.asarray(shares[0], dtype=np.float64)]
    for wave_shares in shares[1:]:
        out.append((1.0 - churn) * out[-1] + churn * np.asarray(wave_shares))
    return out


def _wave_truths(items: Sequence[str], versions: list[VersionSpec]) -> dict[int, list[str]]:
    """``N:QID=SPEC`` -> {wave index: [QID=SPEC, ...]}."""
    found: dict[int, list[str]] = {}
    for item in items:
        number, sep, rest = item.partition(":")
        if not sep or not number.isdigit() or not 1 <= int(number) <= len(versions):
            raise UsageError(f"--wave-truth {item!r}: write N:QID=SPEC with N a wave from 1 to "
                             f"{len(versions)}")
        found.setdefault(int(number) - 1, []).append(rest)
    return found


def _reports(rng: np.random.Generator, question: QuestionSpec, truth: np.ndarray,
             tables: dict[str, np.ndarray] | None) -> list[Any]:
    """One wave's reports of a sensitive question (the panel's re-randomization when kept)."""
    if tables is not None and question.memo is not None:
        raw = panel_reports(rng, question.memo, tables, truth)
        if question.oracle is not None:
            return encode(question.oracle, raw, question.values)
        return [question.answers[r] for r in raw]
    if question.oracle is not None:
        return encode(question.oracle, sample(rng, question.oracle, truth), question.values)
    index = randomize(rng, question.matrix, truth)
    return [question.answers[i] for i in index.tolist()]


def write_panel(
    paths: Sequence[Path], manifests: Sequence[dict[str, Any]], respondents: int,
    truths: Sequence[str], wave_truths: Sequence[str], churn: float, keep: float,
    seed: int | None,
) -> list[dict[str, Any]]:
    """Write one export per wave; per wave the expected true shares of each question."""
    versions = [version_from_manifest(m, f"wave {i + 1}") for i, m in enumerate(manifests)]
    if not 0.0 <= churn <= 1.0 or not 0.0 <= keep <= 1.0:
        raise UsageError("--churn and --keep must be shares in [0, 1]")
    per_wave = _wave_truths(wave_truths, versions)
    rng = np.random.default_rng(seed)
    first = parse_truths(truths, versions[0])
    questions: dict[str, PanelQuestion] = {}
    for w, version in enumerate(versions):
        given = parse_truths(per_wave.get(w, []), version)
        for q in version.questions:
            if not q.sensitive or q.numeric:
                continue
            default = first.get(q.id, np.full(len(q.values), 1.0 / len(q.values)))
            questions.setdefault(q.id, PanelQuestion(q.id, []))
            while len(questions[q.id].shares) < w:
                questions[q.id].shares.append(default)
            questions[q.id].shares.append(given.get(q.id, default))
    keeps = rng.random(respondents) < keep
    tokens = None
    out: list[dict[str, Any]] = []
    for w, (version, manifest, path) in enumerate(zip(versions, manifests, paths, strict=True)):
        _, columns = next(iter(simulate_rows(manifest, respondents, {}, int(rng.integers(2**31)),
                                             chunk=max(respondents, 1))))
        if tokens is None:
            tokens = list(columns["respondent"])
        columns["respondent"] = [t if k else fresh for t, k, fresh in
                                 zip(tokens, keeps.tolist(), columns["respondent"], strict=True)]
        expected: dict[str, Any] = {}
        for q in version.questions:
            if q.id not in questions:
                continue
            follow = questions[q.id]
            sets = q.oracle is not None and q.oracle.sets
            shares = follow.shares[w]
            if follow.truth is None:
                follow.truth = draw_sets(rng, shares, max_ticks_of(q.oracle), respondents) \
                    if sets and q.oracle is not None else draw(rng, shares, respondents)
            elif churn > 0:
                redraw = rng.random(respondents) < churn
                fresh = (draw_sets(rng, shares, max_ticks_of(q.oracle), int(redraw.sum()))
                         if sets and q.oracle is not None
                         else draw(rng, shares, int(redraw.sum())))
                follow.truth[redraw] = fresh
            if q.memo is not None:
                if not follow.tables:
                    follow.tables = panel_tables(rng, q.memo, respondents)
                else:  # the devices that keep nothing draw new permanent reports
                    fresh_tables = panel_tables(rng, q.memo, respondents)
                    for key, table in follow.tables.items():
                        table[~keeps] = fresh_tables[key][~keeps]
            columns[q.id] = _reports(rng, q, follow.truth, follow.tables or None)
            base = [set_shares(s, max_ticks_of(q.oracle)) if sets and q.oracle is not None
                    else s for s in follow.shares[:w + 1]]
            expected[q.id] = dict(zip(q.values, expected_shares(base, churn)[-1].tolist(),
                                      strict=True))
        _write(path, version, columns)
        out.append({"survey": version.survey, "path": str(path), "expected": expected})
    return out


def _write(path: Path, version: VersionSpec, columns: dict[str, list[Any]]) -> None:
    qids = [q.id for q in version.questions]
    names = [name for q in qids for name in ([q, q + ".group"] if q + ".group" in columns
                                             else [q])]
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["survey", "version", "respondent", "submitted_at", *names])
        cells = [columns[n] for n in ("survey", "version", "respondent", "submitted_at")]
        cells += [[cell(v) for v in columns[n]] for n in names]
        writer.writerows(zip(*cells, strict=True))
