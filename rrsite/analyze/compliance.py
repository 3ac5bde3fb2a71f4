"""Did randomized response work? The checks `rrsite analyze` adds when a survey asks for them.

- **Split ballot** (``validation:`` of the survey, the page's direct arm): per question under
  validation, the randomized arm's estimate against the share of "yes" (each answer of a choice
  question) among the direct arm's answers, their difference with its one-sided test of "more is
  better" and its intervals (rrsite.estimate.compliance.split). The direct arm's answers have no
  randomized-response protection: the section says so.
- **Comprehension checks** (``check: true``): per checked question, how many answered the check
  right, wrong or not at all, and the estimate among those who answered it right beside the
  estimate over everyone. Nothing is excluded: the main estimates use every answer.
- **Anchor question** (``anchor: true`` on a crosswise question): the share of attentive
  respondents and every other crosswise question's bias-corrected estimate (Atsusaka &
  Stevenson; cWise's ``bc.est``) from the respondents' joint reports.
- **Sensitivity bounds** (every crosswise question): the estimate for each assumed share of
  inattentive respondents (cWise's ``cmBound``).
- **Extended crosswise** (``randomize: extended-crosswise``): the goodness-of-fit test of the two
  groups against one prevalence (Heck, Hoffmann & Moshagen 2018), and each group's own estimate.

Checks and the anchor need each respondent's answers to two questions together: the exports are
read once more, into one tally per checked question or anchor, subgroups by it
(rrsite.exports.tally). The estimates treat the sample as simple random (no weights).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..estimate.compliance import crosswise as cw
from ..estimate.compliance.split import difference
from ..exports.catalog import Catalog, QuestionSpec
from ..exports.readers import BLOCK_SIZE, FileInfo, read_export
from ..exports.rejections import Rejections
from ..exports.tally import Tally
from .prevalence import assemble
from .results import Analysis, QuestionResult

#: The reports of the crosswise designs, in their order (0 = different, 1 = same).
CROSSWISE_REPORTS = ("different", "same")


@dataclass
class Compliance:
    """Every check of the survey, as JSON-ready entries (``to_dict``)."""

    split: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    anchor: dict[str, Any] | None = None
    bounds: list[dict[str, Any]] = field(default_factory=list)
    extended: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.split or self.checks or self.anchor or self.bounds or self.extended)

    def to_dict(self) -> dict[str, Any]:
        """The ``compliance`` key of `rrsite analyze --format json` (docs: contracts)."""
        return {"split": self.split, "checks": self.checks, "anchor": self.anchor,
                "bounds": self.bounds, "extended": self.extended, "notes": list(self.notes)}


def compliance(
    paths: Sequence[str | Path], catalog: Catalog, column_map: dict[str, str],
    analysis: Analysis, confidence: float, block_size: int = BLOCK_SIZE, rows: bool = True,
) -> Compliance:
    """The checks the survey asks for (the module docstring), from the analysis and the rows.

    ``rows=False`` (report counts, `--counts`): only what the counts give, the split ballot, the
    sensitivity bounds and the extended crosswise test; checks and the anchor need each
    respondent's answers together, and a note says they were not estimated.
    """
    out = Compliance()
    out.split = _split(catalog, analysis, confidence)
    checks = _checks_of(catalog)
    anchors = [qid for qid in catalog.question_ids()
               if any(q.anchor for _, q in catalog.questions_named(qid))]
    if not rows and (checks or anchors):
        out.notes.append("comprehension checks and the anchor question need each respondent's "
                         "answers together: not estimated from report counts")
        checks, anchors = {}, []
    tallies = _read_again(paths, catalog, column_map, [*checks, *anchors[:1]], block_size) \
        if checks or anchors else {}
    out.checks = [_check(catalog, analysis, tallies[cid], cid, target, correct, confidence)
                  for cid, (target, correct) in checks.items()]
    if anchors:
        out.anchor = _anchor(catalog, tallies[anchors[0]], anchors[0], confidence)
    out.bounds = _bounds(catalog, analysis, confidence)
    out.extended = _extended(analysis)
    if out.split or out.checks or out.anchor:
        out.notes.append("these checks treat the sample as simple random (no weights)")
    return out


# ---------------------------------------------------------------------------- reading again


def _read_again(paths: Sequence[str | Path], catalog: Catalog, column_map: dict[str, str],
                by: list[str], block_size: int) -> dict[str, Tally]:
    """One tally per question, subgroups by its answers, from one more read of the exports.

    The rows were checked (and their rejections counted) by the main pass already; the same
    rows are accepted here.
    """
    tallies = {qid: Tally(catalog, [qid], Rejections()) for qid in by}
    for path in paths:
        for batch in read_export(path, catalog, column_map, Rejections(), FileInfo(str(path), ""),
                                 block_size):
            for tally in tallies.values():
                tally.commit(tally.check(batch))
    return tallies


# ------------------------------------------------------------------------------ split ballot


def _split(catalog: Catalog, analysis: Analysis, confidence: float) -> list[dict[str, Any]]:
    """Each question under validation: randomized estimate, direct share, their difference."""
    pairs: dict[str, str] = {}
    share = None
    privacy_note = None
    for version in catalog.versions:
        direct = version.validation.get("direct")
        if isinstance(direct, dict):
            pairs.update({str(k): str(v) for k, v in direct.items()})
            share = version.validation.get("direct_share", share)
        arm = version.budget.get("direct_arm")
        if isinstance(arm, dict) and isinstance(arm.get("note"), str):
            privacy_note = arm["note"]
    direct_results = {d.id: d for d in analysis.direct}
    out = []
    for qid, direct_id in pairs.items():
        try:
            randomized = analysis.question(qid)
        except KeyError:
            continue
        asked = direct_results.get(direct_id)
        if asked is None:
            continue
        n = sum(asked.counts.values())
        estimate = randomized.estimate
        answers = []
        for i, label in enumerate(estimate.labels):
            count = asked.counts.get(label, 0)
            found = difference(float(estimate.unbiased[i]), float(estimate.se[i]), count, n,
                               confidence, _exact_reports(randomized))
            entry: dict[str, Any] = {"answer": label, "direct_count": count}
            if found is None:
                entry["not_estimated"] = "no answers in one of the arms"
            else:
                entry.update(found.to_dict())
            answers.append(entry)
        out.append({
            "question": qid, "direct_question": direct_id, "direct_share": share,
            "randomized_n": int(estimate.n), "direct_n": n, "direct_missing": asked.missing,
            "answers": answers,
            "privacy": privacy_note or (
                "the direct arm's answers are sent as given, without randomized response: "
                "for its respondents these questions have no epsilon"),
        })
    return out


def _exact_reports(result: QuestionResult) -> tuple[int, int, float, float] | None:
    """(reports "1", reports, p00, p11) of a yes-no question under one fixed 2 x 2 design."""
    if len(result.designs) != 1 or result.kind != "binary":
        return None
    part = result.designs[0]
    counts = part.counts.sum(axis=1)
    if part.by_group is not None or part.matrix.shape != (2, 2) or len(counts) != 2:
        return None
    return (int(counts[1]), int(counts.sum()), float(part.matrix[0, 0]),
            float(part.matrix[1, 1]))


# --------------------------------------------------------------------- comprehension checks


def _checks_of(catalog: Catalog) -> dict[str, tuple[str, str]]:
    """Each check question's id -> (the checked question, the right answer)."""
    out: dict[str, tuple[str, str]] = {}
    for qid in catalog.question_ids():
        for _, question in catalog.questions_named(qid):
            if question.check is not None and question.type in ("yes-no", "choice"):
                correct = question.check.get("correct")
                if isinstance(correct, str) and correct in question.values:
                    out.setdefault(qid, (str(question.check["question"]), correct))
    return out


def _figures(result: QuestionResult | None, name: str | None) -> dict[str, Any] | None:
    """The estimate of one subgroup (or the whole) of a question, as JSON."""
    if result is None:
        return None
    estimate = result.estimate if name is None else result.groups.get(name)
    return None if estimate is None else estimate.to_dict()


def _check(catalog: Catalog, analysis: Analysis, tally: Tally, check_id: str, target: str,
           correct: str, confidence: float) -> dict[str, Any]:
    """One comprehension check: how it was answered, the estimate among those who got it right."""
    direct = next((d for d in analysis.direct if d.id == check_id), None)
    counts = dict(direct.counts) if direct is not None else {}
    right = counts.get(correct, 0)
    wrong = sum(c for value, c in counts.items() if value != correct)
    by_check = assemble(catalog, tally, [], Rejections(), confidence, analysis.interval)
    result = next((q for q in by_check.questions if q.id == target), None)
    main = next((q for q in analysis.questions if q.id == target), None)
    return {
        "question": target, "check": check_id, "correct": correct, "answers": counts,
        "right": right, "wrong": wrong,
        "missing": direct.missing if direct is not None else 0,
        "estimate": _figures(main, None),
        "understood": _figures(result, correct),
        "not_understood": {value: _figures(result, value) for value in counts
                           if value != correct and counts[value]},
        "note": "every answer stays in the main estimate; 'understood' is the estimate among "
                "those who answered the check right",
    }


# ------------------------------------------------------------------------------ the anchor


def _crosswise_p(question: QuestionSpec) -> float | None:
    """The innocuous yes-rate of a plain crosswise question (None for any other design)."""
    spec = question.design_spec or {}
    return float(spec["p"]) if spec.get("name") == "crosswise" else None


def _anchor(catalog: Catalog, tally: Tally, anchor: str, confidence: float) -> dict[str, Any]:
    """The attentive share and every other crosswise question corrected with the anchor."""
    columns = [tally.groups.index(r) for r in CROSSWISE_REPORTS if r in tally.groups]
    corrected = []
    for qid in catalog.question_ids():
        if qid == anchor:
            continue
        tables: dict[tuple[float, float], np.ndarray] = {}
        for m, question in catalog.questions_named(qid):
            anchor_question = catalog.versions[m].question(anchor)
            p = _crosswise_p(question)
            if p is None or question.anchor or anchor_question is None:
                continue
            p_anchor = _crosswise_p(anchor_question)
            if p_anchor is None or len(columns) != 2:
                continue
            counts = tally.counts[(m, qid)].counts
            rows = [question.answers.index(r) for r in CROSSWISE_REPORTS]
            table = counts[np.ix_(rows, columns)]
            key = (p, p_anchor)
            tables[key] = tables.get(key, np.zeros((2, 2), dtype=np.int64)) + table
        for (p, p_anchor), table in tables.items():
            found = cw.bias_corrected(table, p, p_anchor, confidence)
            corrected.append({"question": qid, "p": p, "anchor_p": p_anchor,
                              **found.to_dict()})
    return {"question": anchor, "corrected": corrected,
            "method": "Atsusaka & Stevenson's bias-corrected crosswise estimator (cWise bc.est): "
                      "inattentive respondents answer at random; delta-method standard errors "
                      "over the joint reports"}


# ---------------------------------------------------------------- bounds and extended crosswise


def _bounds(catalog: Catalog, analysis: Analysis, confidence: float) -> list[dict[str, Any]]:
    """Sensitivity bounds (cWise's cmBound) of every crosswise question but the anchor."""
    anchors = {qid for qid in catalog.question_ids()
               if any(q.anchor for _, q in catalog.questions_named(qid))}
    out = []
    for result in analysis.questions:
        if result.id in anchors:
            continue
        for part in result.designs:
            if part.design.get("name") != "crosswise" or part.question is None:
                continue
            answers = part.question.answers
            same = int(part.counts[answers.index("same")].sum())
            n = int(part.counts.sum())
            p = float(part.design["p"])
            out.append({"question": result.id, "p": p, "versions": list(part.versions),
                        "n": n, "rows": cw.sensitivity(same, n, p, confidence)})
    return out


def _extended(analysis: Analysis) -> list[dict[str, Any]]:
    """Each extended crosswise question: its goodness of fit and each group's own estimate."""
    out = []
    for result in analysis.questions:
        for part in result.designs:
            if part.design.get("name") != "extended-crosswise" or part.by_group is None:
                continue
            assert part.question is not None
            p = float(part.design["p"])
            same = part.question.answers.index("same")
            groups = {}
            for g, rate in ((1, p), (2, 1 - p)):
                counts = part.by_group[g - 1].sum(axis=1)
                n = int(counts.sum())
                share = counts[same] / n if n else math.nan
                groups[str(g)] = {"n": n, "p": rate, "same": float(share),
                                  "estimate": cw.naive(float(share), rate) if n else None}
            gof = result.fit.gof if result.fit is not None else None
            entry: dict[str, Any] = {"question": result.id, "p": p, "versions":
                                     list(part.versions), "groups": groups,
                                     "goodness_of_fit": gof}
            if gof is None:
                entry["verdict"] = "no test: a group has no answers"
            elif gof["p_value"] < 0.05:
                entry["verdict"] = ("the two groups' reports disagree with one prevalence: a sign "
                                    "that some respondents did not follow the instructions "
                                    "(Heck, Hoffmann & Moshagen 2018)")
            else:
                entry["verdict"] = ("the two groups' reports agree with one prevalence: no sign "
                                    "of respondents ignoring the instructions")
            out.append(entry)
    return out


__all__ = ["Compliance", "compliance"]
