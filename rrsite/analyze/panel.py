"""Several waves of a series (`rrsite analyze EXPORT... --survey W1.md --survey W2.md ...`).

Each wave is analysed on its own (rrsite.analyze.api, the other waves' rows left out). Then:

- the change of every share between consecutive waves: where respondents are linked by their
  token (a device that kept the panel's state sends the same token every wave), the mean of each
  respondent's de-biased change (rrsite.estimate.frequency.paired_change): its variance comes
  from the respondents themselves, so the correlation that the shared permanent report brings is
  in it; without links, the difference of the waves' unbiased shares with both variances;
- the ledger per respondent: for every linked respondent, what the waves they answered cost
  together, question by question the exact epsilon of that many reports sharing one permanent
  report (rrsite.core.frequency.Memoized.epsilon), or that many times the epsilon of a question
  asked afresh each wave; a respondent the data cannot link counts one wave.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UsageError
from ..estimate.frequency import Change, independent_change, paired_change
from ..exports.catalog import Catalog, QuestionSpec, build_catalog, manifest_from_survey_file
from ..exports.readers import FileInfo, read_export
from ..exports.rejections import Rejections
from ..exports.tally import Tally
from .api import analyze
from .results import Analysis


@dataclass
class Wave:
    """One wave: its number, survey file, survey id and analysis."""

    number: int
    path: str
    survey: str
    manifest: dict[str, Any]
    analysis: Analysis | None = None


@dataclass
class ShareChange:
    """One answer's change of share from one wave to the next."""

    question: str
    answer: str
    before: int
    after: int
    change: Change

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        c = self.change
        return {"question": self.question, "answer": self.answer, "from_wave": self.before,
                "to_wave": self.after, "estimate": c.estimate, "se": c.se,
                "ci": [c.ci_low, c.ci_high], "n": c.n, "method": c.method}


@dataclass
class PanelAnalysis:
    """What ``rrsite analyze`` finds across the waves of a series."""

    series: str
    waves: list[Wave]
    confidence: float
    changes: list[ShareChange] = field(default_factory=list)
    ledger: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``rrsite analyze --format json`` for a series."""
        return {
            "series": self.series, "confidence": self.confidence,
            "waves": [{"wave": w.number, "survey": w.survey, "file": w.path,
                       "privacy": w.manifest.get("privacy", {}).get("series"),
                       "analysis": w.analysis.to_dict() if w.analysis else None}
                      for w in self.waves],
            "changes": [c.to_dict() for c in self.changes],
            "ledger": self.ledger,
            "notes": list(self.notes),
        }


def waves_of(surveys: Sequence[str | Path]) -> list[Wave] | None:
    """The waves of one series, in wave order, when the survey files are that; else None."""
    if len(surveys) < 2:
        return None
    waves = []
    for path in surveys:
        manifest = manifest_from_survey_file(path) if not str(path).endswith(".json") else None
        if manifest is None:
            return None
        series = manifest.get("series")
        if not isinstance(series, dict):
            return None
        waves.append(Wave(int(series["wave"]), str(path), manifest["id"], manifest))
    if len({w.manifest["series"]["id"] for w in waves}) != 1:
        return None
    if len({w.survey for w in waves}) != len(waves):
        return None  # versions of one survey, not waves
    numbers = [w.number for w in waves]
    if len(set(numbers)) != len(numbers):
        raise UsageError(f"two survey files are the same wave of series "
                         f"{waves[0].manifest['series']['id']!r}: waves {sorted(numbers)}")
    return sorted(waves, key=lambda w: w.number)


Rows = dict[str, tuple[np.ndarray, np.ndarray]]


def _rows(paths: Sequence[str | Path], catalog: Catalog, siblings: tuple[str, ...],
          column_map: dict[str, str]) -> tuple[list[str], Rows]:
    """Every accepted row's token, and per sensitive question its de-biased rows (n x k).

    With each question's de-biased rows comes the mask of the rows that answered it.
    """
    tally = Tally(catalog, None, Rejections(), siblings)
    tokens: list[str] = []
    found: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    sensitive = {qid: [(m, q) for m, q in catalog.questions_named(qid) if q.sensitive
                       and not q.numeric] for qid in catalog.question_ids()}
    for path in paths:
        info = FileInfo(str(path), "")
        for batch in read_export(path, catalog, column_map, Rejections(), info):
            checked = tally.check(batch)
            tally.commit(checked)
            keep = checked.status == 0
            token = batch.columns.get("respondent")
            values = token.objects() if token is not None else [None] * len(batch)
            tokens.extend(str(v) for v, k in zip(values, keep.tolist(), strict=True) if k)
            for qid, entries in sensitive.items():
                if not entries:
                    continue
                k = len(entries[0][1].values)
                rows = np.zeros((len(batch), k))
                answered = np.zeros(len(batch), dtype=bool)
                for m, question in entries:
                    in_version = checked.version == m
                    if question.oracle is not None:
                        support = checked.supports.get(qid, {}).get(m)
                        if support is not None:
                            law_p, law_q = question.oracle.p, question.oracle.q
                            where = in_version & support[1]
                            rows[where] = (support[0][where] - law_q) / (law_p - law_q)
                            answered |= where
                    elif qid in checked.local_codes and question.design is not None:
                        codes = np.asarray(checked.local_codes[qid])
                        where = in_version & (codes >= 0)
                        inverse = np.linalg.inv(question.matrix)
                        rows[where] = inverse[codes[where]]
                        answered |= where
                found.setdefault(qid, []).append((rows[keep], answered[keep]))
    out = {qid: (np.concatenate([r for r, _ in parts]), np.concatenate([a for _, a in parts]))
           for qid, parts in found.items()}
    return tokens, out


def _labels(question: QuestionSpec) -> list[str]:
    """The answers whose share is reported (a yes-no question: only yes)."""
    return ["yes"] if question.type == "yes-no" else list(question.values)


def analyze_panel(exports: Iterable[str | Path], waves: list[Wave], *, confidence: float = 0.95,
                  interval: str = "exact", mapping: Sequence[str] | None = None,
                  progress: bool | None = None) -> PanelAnalysis:
    """Every wave's analysis, the changes between consecutive waves, the ledger per respondent."""
    paths = list(exports)
    surveys = tuple(w.survey for w in waves)
    result = PanelAnalysis(waves[0].manifest["series"]["id"], waves, confidence)
    per_wave: list[tuple[Catalog, list[str], dict[str, tuple[np.ndarray, np.ndarray]]]] = []
    for wave in waves:
        siblings = tuple(s for s in surveys if s != wave.survey)
        wave.analysis = analyze(paths, survey=wave.path, confidence=confidence,
                                interval=interval, mapping=mapping, progress=progress,
                                siblings=siblings)
        catalog = build_catalog([wave.path])
        tokens, rows = _rows(paths, catalog, siblings, {})
        per_wave.append((catalog, tokens, rows))
    for index in range(len(waves) - 1):
        result.changes += _changes(per_wave[index], per_wave[index + 1], waves[index],
                                   waves[index + 1], confidence, result)
    result.ledger = _ledger(waves, per_wave)
    result.notes.append("ledger: per linked respondent (one token across waves), the exact "
                        "epsilon of the reports they sent; a respondent whose device kept "
                        "nothing is not linked and counts one wave at a time")
    return result


def _changes(first: tuple[Catalog, list[str], dict[str, Any]],
             second: tuple[Catalog, list[str], dict[str, Any]], b: Wave, a: Wave,
             confidence: float, result: PanelAnalysis) -> list[ShareChange]:
    out = []
    catalog1, tokens1, rows1 = first
    catalog2, tokens2, rows2 = second
    for qid, (data2, answered2) in rows2.items():
        if qid not in rows1:
            continue
        q1 = catalog1.questions_named(qid)[-1][1]
        q2 = catalog2.questions_named(qid)[-1][1]
        if q1.values != q2.values:
            result.notes.append(f"{qid}: other answers in wave {a.number}; no change computed")
            continue
        data1, answered1 = rows1[qid]
        index1 = {t: i for i, t in enumerate(tokens1) if answered1[i]}
        pairs = [(index1[t], j) for j, t in enumerate(tokens2) if answered2[j] and t in index1]
        labels = _labels(q2)
        columns = [q2.values.index(label) for label in labels]
        if len(pairs) >= 2:
            i1, i2 = (np.array(x) for x in zip(*pairs, strict=True))
            found = paired_change(data1[i1][:, columns], data2[i2][:, columns], confidence)
        else:
            assert b.analysis is not None and a.analysis is not None
            e1, e2 = b.analysis.question(qid).estimate, a.analysis.question(qid).estimate
            found = independent_change(e1, e2, confidence)
        out += [ShareChange(qid, label, b.number, a.number, change)
                for label, change in zip(labels, found, strict=True)]
    return out


def _ledger(waves: list[Wave], per_wave: list[Any]) -> list[dict[str, Any]]:
    """Per pattern of waves answered, how many respondents and what the panel cost them."""
    answered: dict[str, dict[str, list[int]]] = {}
    specs: dict[str, QuestionSpec] = {}
    for wave, (catalog, tokens, rows) in zip(waves, per_wave, strict=True):
        for qid, (_, mask) in rows.items():
            specs[qid] = catalog.questions_named(qid)[-1][1]
            for token, did in zip(tokens, mask.tolist(), strict=True):
                if did:
                    answered.setdefault(token, {}).setdefault(qid, []).append(wave.number)
    patterns: dict[tuple[tuple[str, tuple[int, ...]], ...], int] = {}
    for questions in answered.values():
        key = tuple(sorted((q, tuple(w)) for q, w in questions.items()))
        patterns[key] = patterns.get(key, 0) + 1
    out = []
    for key, count in sorted(patterns.items(), key=lambda item: -item[1]):
        epsilon, parts = 0.0, {}
        for qid, numbers in key:
            question = specs[qid]
            if question.memo is not None:
                spent = question.memo.epsilon(len(numbers))
            else:
                assert question.privacy is not None
                spent = len(numbers) * question.privacy.epsilon
            parts[qid] = {"waves": list(numbers), "epsilon": spent,
                          "permanent": question.memo is not None}
            epsilon += spent
        out.append({"respondents": count, "epsilon": epsilon if math.isfinite(epsilon) else None,
                    "questions": parts})
    return out
