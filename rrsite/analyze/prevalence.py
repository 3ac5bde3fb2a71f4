"""Yes-no and choice questions in `rrsite analyze`: de-biased shares from the tally's counts.

Per question, the versions are grouped by what one likelihood can hold: the same design in
several versions adds its counts; several designs are pooled (rrsite.estimate.estimators);
RRreg's models are fitted together where they share their parameters (rrsite.analyze.
univariate). Subgroups (``--by``) get the same estimate per answer of the ``--by`` question.
:func:`assemble` builds the ``Analysis`` of a filled tally.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..estimate.estimators import (
    KIND_BINARY,
    KIND_CATEGORICAL,
    BinaryPart,
    Estimate,
    binary_estimate,
    categorical_estimate,
    pooled_binary,
    pooled_categorical,
)
from ..estimate.univariate import UniFit
from ..exports.catalog import CHOICE_TYPES, Catalog, QuestionSpec
from ..exports.readers import FileInfo
from ..exports.rejections import Rejections
from ..exports.tally import Tally
from ..survey.model import over_budget
from . import univariate
from .frequency import oracle_results
from .results import (
    Analysis,
    DesignPart,
    DirectResult,
    QuestionResult,
    labels_of,
    privacy_dict,
)


def _canonical(values: Sequence[str], qtype: str) -> tuple[str, ...]:
    return ("no", "yes") if qtype == "yes-no" and set(values) == {"no", "yes"} else tuple(values)


def _design_key(matrix: np.ndarray) -> tuple[float, ...]:
    return tuple(np.round(matrix, 12).ravel().tolist())


def _estimate(
    kind: str, values: tuple[str, ...], parts: list[tuple[np.ndarray, np.ndarray]],
    confidence: float, interval: str,
) -> Estimate:
    """One estimate from (counts per value, matrix) per design: exact for one, pooled for more."""
    if kind == KIND_BINARY:
        binary = [BinaryPart(int(c[1]), int(c.sum()), float(m[0, 0]), float(m[1, 1]))
                  for c, m in parts]
        if len(binary) == 1:
            b = binary[0]
            return binary_estimate(b.n_yes, b.n, b.p00, b.p11, confidence, interval, values)
        return pooled_binary(binary, confidence, interval, values)
    if len(parts) == 1:
        return categorical_estimate(parts[0][0], parts[0][1], values, confidence, interval)
    return pooled_categorical([c for c, _ in parts], [m for _, m in parts], values, confidence,
                              interval)


def _question_results(
    catalog: Catalog, tally: Tally, confidence: float, interval: str, notes: list[str],
) -> list[QuestionResult]:
    by = tally.by
    results = []
    for qid in catalog.question_ids():
        entries = [(m, q) for m, q in catalog.questions_named(qid)
                   if q.sensitive and not q.numeric and q.oracle is None]
        if not entries:
            continue
        # versions whose value sets differ cannot be pooled: one result per value set
        by_values: dict[tuple[str, frozenset[str]], list[tuple[int, QuestionSpec]]] = {}
        for m, question in entries:
            by_values.setdefault((question.type, frozenset(question.values)), []).append(
                (m, question))
        for number, group in enumerate(by_values.values()):
            first = group[0][1]
            values = _canonical(first.values, first.type)
            label = qid if number == 0 else f"{qid} [{', '.join(values)}]"
            if number:
                notes.append(f"{qid}: versions with other answer values are reported as {label!r}")
            if not any(q.uses_rrreg for _, q in group):
                results.append(_one_question(catalog, tally, label, group, values, confidence,
                                             interval, by))
                continue
            for index, (model, pooled) in enumerate(_rrreg_pools(group).items()):
                name = label if index == 0 else f"{label} [{model}]"
                if index:
                    notes.append(
                        f"{qid}: versions under {model} cannot be pooled with the others (the "
                        f"models estimate different parameters); they are reported as {name!r}")
                if model == "classic":
                    results.append(_one_question(catalog, tally, name, pooled, values,
                                                 confidence, interval, by))
                else:
                    results.append(_rrreg_question(catalog, tally, name, pooled, values,
                                                   confidence, by))
    return results


def _rrreg_pools(
    group: list[tuple[int, QuestionSpec]],
) -> dict[str, list[tuple[int, QuestionSpec]]]:
    """Versions of a question with an RRreg design, split into what one likelihood can hold.

    Versions whose RRreg models share their parameters (e.g. crosswise and Warner: pi) are one
    pool, named by its first model; a version without an RRreg mapping stays "classic".
    """
    keys: dict[object, str] = {}
    pools: dict[str, list[tuple[int, QuestionSpec]]] = {}
    for m, question in group:
        key = univariate.pool_key(question)
        design = univariate.model_of(question)
        if key not in keys:
            keys[key] = "classic" if design is None else design.model
        pools.setdefault(keys[key], []).append((m, question))
    return pools


def _rrreg_question(
    catalog: Catalog, tally: Tally, label: str, group: list[tuple[int, QuestionSpec]],
    values: tuple[str, ...], confidence: float, by: str | None,
) -> QuestionResult:
    """A question estimated with RRreg's models: one joint fit of every version's parts."""
    parts: dict[str, DesignPart] = {}
    for m, question in group:
        tallied = tally.counts[(m, question.id)]
        key = univariate.design_key(question)
        version = catalog.versions[m].version
        if key in parts:  # the same design in several versions: counts add
            part = parts[key]
            part.counts = part.counts + tallied.counts
            part.missing = part.missing + tallied.missing
            if part.by_group is not None and tallied.by_group is not None:
                part.by_group = part.by_group + tallied.by_group
            part.versions.append(version)
        else:
            assert question.privacy is not None and question.design is not None
            parts[key] = DesignPart(
                design=question.design_spec or question.design.spec(), matrix=question.matrix,
                versions=[version], counts=tallied.counts.copy(), missing=tallied.missing.copy(),
                privacy=question.privacy, question=question,
                by_group=None if tallied.by_group is None else tallied.by_group.copy(),
            )
    designs = list(parts.values())
    reports = designs[0].question.answers if designs[0].question else values

    def estimate(column: int | None) -> tuple[UniFit, Estimate]:
        tallies = [d.tallied(column) for d in designs]
        result, fitted = univariate.fit_designs(tallies, confidence)
        counts: dict[str, int] = {}
        for d, t in zip(designs, tallies, strict=True):
            assert d.question is not None
            for label_, count in zip(d.question.answers, t.counts.sum(axis=0), strict=True):
                counts[label_] = counts.get(label_, 0) + int(count)
        if set(counts) == set(reports):
            counts = {r: counts[r] for r in reports}
        return result, univariate.estimate_of(result, fitted, counts, values, confidence)

    overall_fit, overall = estimate(None)
    privacy = max((p.privacy for p in designs), key=lambda p: (p.epsilon, p.delta))
    result = QuestionResult(
        id=label, text=group[0][1].text, kind=KIND_BINARY, values=values, estimate=overall,
        designs=designs, missing=int(sum(p.missing.sum() for p in designs)), privacy=privacy,
        by=by, fit=overall_fit,
    )
    if by is not None:
        for g, name in enumerate(tally.groups):
            group_fit, group_estimate = estimate(g)
            if tally.subgroups.unanswered(name) and group_estimate.n == 0:
                continue
            result.groups[name] = group_estimate
            result.group_fits[name] = group_fit
    return result


def _one_question(
    catalog: Catalog, tally: Tally, label: str, group: list[tuple[int, QuestionSpec]],
    values: tuple[str, ...], confidence: float, interval: str, by: str | None,
) -> QuestionResult:
    first = group[0][1]
    kind = KIND_BINARY if first.binary else KIND_CATEGORICAL
    parts: dict[tuple[float, ...], DesignPart] = {}
    for m, question in group:
        order = [question.values.index(v) for v in values]
        matrix = question.matrix[np.ix_(order, order)]
        tallied = tally.counts[(m, question.id)]
        counts = tallied.counts[order]
        key = _design_key(matrix)
        version = catalog.versions[m].version
        if key in parts:  # the same design in several versions: one likelihood, counts add
            part = parts[key]
            part.counts = part.counts + counts
            part.missing = part.missing + tallied.missing
            part.versions.append(version)
        else:
            assert question.privacy is not None and question.design is not None
            parts[key] = DesignPart(
                design=question.design_spec or question.design.spec(), matrix=matrix,
                versions=[version], counts=counts, missing=tallied.missing.copy(),
                privacy=question.privacy,
            )
    designs = list(parts.values())
    overall = _estimate(kind, values, [(p.counts.sum(axis=1), p.matrix) for p in designs],
                        confidence, interval)
    privacy = max((p.privacy for p in designs), key=lambda p: (p.epsilon, p.delta))
    result = QuestionResult(
        id=label, text=first.text, kind=kind, values=values, estimate=overall, designs=designs,
        missing=int(sum(p.missing.sum() for p in designs)), privacy=privacy, by=by,
    )
    if by is not None:
        for g, name in enumerate(tally.groups):
            estimate = _estimate(kind, values, [(p.counts[:, g], p.matrix) for p in designs],
                                 confidence, interval)
            if tally.subgroups.unanswered(name) and estimate.n == 0:
                continue
            result.groups[name] = estimate
    return result


def _direct_results(catalog: Catalog, tally: Tally) -> list[DirectResult]:
    results = []
    for qid in catalog.question_ids():
        entries = [(m, q) for m, q in catalog.questions_named(qid)
                   if not q.sensitive and q.type in CHOICE_TYPES]
        if not entries:
            continue
        counts: dict[str, int] = {}
        missing = 0
        for m, question in entries:
            tallied = tally.counts[(m, qid)]
            for value, count in zip(question.values, tallied.counts.sum(axis=1), strict=True):
                counts[value] = counts.get(value, 0) + int(count)
            missing += int(tallied.missing.sum())
        first = entries[0][1]
        results.append(DirectResult(qid, first.text, first.type, counts, missing))
    return results


def _privacy(catalog: Catalog, tally: Tally, questions: list[QuestionResult]) -> dict[str, Any]:
    """Per question (worst design), per version (basic composition) and per respondent."""
    by_version = []
    for m, version in enumerate(catalog.versions):
        total = version.privacy
        entry = {"version": version.version, "rows": int(tally.rows_accepted[m]),
                 **privacy_dict(total)}
        if version.budget:
            entry["budget"] = version.budget
            budget = version.budget.get("budget")
            if isinstance(budget, int | float) and over_budget(total.epsilon, budget):
                entry["over_budget"] = True
        by_version.append((m, total, entry))
    seen = [item for item in by_version if tally.rows_accepted[item[0]] > 0] or by_version
    worst = max(seen, key=lambda item: (item[1].epsilon, item[1].delta))
    per_respondent = {**privacy_dict(worst[1]), "version": worst[2]["version"]}
    return {
        "composition": "basic: a respondent's epsilons and deltas add up over the sensitive "
                       "questions of the version answered",
        "questions": [_anchor_said({"id": q.id, **privacy_dict(q.privacy)}, catalog)
                      for q in questions],
        "per_respondent": per_respondent,
        "by_version": [entry for _, _, entry in by_version],
    }


def _anchor_said(entry: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    """A crosswise anchor's privacy entry says why it is not in the per-respondent total."""
    if any(q.anchor for _, q in catalog.questions_named(entry["id"])):
        entry["anchor"] = True
        entry["statement"] += ("; the anchor question (its statement is false for everyone) is "
                               "left out of the per-respondent total")
    return entry


def assemble(
    catalog: Catalog, tally: Tally, files: list[FileInfo], rejections: Rejections,
    confidence: float, interval: str,
) -> Analysis:
    """The Analysis of a filled tally: every yes-no and choice question, the direct ones, privacy.

    The subgroups (``--by``, crossed when several) are the tally's. Randomized numbers are added
    by the caller (rrsite.analyze.numbers).
    """
    notes: list[str] = []
    questions = _question_results(catalog, tally, confidence, interval, notes)
    questions += oracle_results(catalog, tally, confidence, interval, notes)
    order = {qid: i for i, qid in enumerate(catalog.question_ids())}
    questions.sort(key=lambda q: order.get(q.id.split(" [")[0], len(order)))
    if not questions:
        notes.append(f"survey {catalog.survey!r} has no randomized question: nothing to de-bias")
    versions = [
        {"version": v.version, "rows": int(tally.rows_accepted[m]), "source": v.source,
         "seen": bool(tally.rows_accepted[m] > 0)}
        for m, v in enumerate(catalog.versions)
    ]
    accepted = int(tally.rows_accepted.sum())
    return Analysis(
        survey=catalog.survey, title=catalog.title, confidence=confidence, interval=interval,
        by=tally.by, files=files, versions=versions, rejected=rejections, questions=questions,
        direct=_direct_results(catalog, tally), privacy=_privacy(catalog, tally, questions),
        rows_read=sum(f.rows for f in files), rows_accepted=accepted, notes=notes,
        subgroups=tally.subgroups, labels=labels_of(catalog),
    )
