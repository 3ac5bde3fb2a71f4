"""Frequency-oracle questions in `rrsite analyze`: shares from the reports' supports.

The tally keeps which answers each accepted report supports (rrsite.exports.oracles); the
versions of a question that share a design are one part, several designs are pooled
(rrsite.estimate.frequency). Subgroups (``--by``) get the same estimate per answer of the ``--by``
question. The result is a :class:`~rrsite.analyze.results.QuestionResult`, rendered like every
other question; its designs are :class:`OraclePart`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..estimate.frequency import Law, Part, estimate
from ..exports.catalog import Catalog, QuestionSpec
from ..exports.tally import Tally
from .results import DesignPart, QuestionResult, privacy_dict


@dataclass
class OraclePart(DesignPart):
    """One frequency-oracle design of a question (one or more versions share it).

    ``counts[answer, subgroup]`` are the reports supporting each answer; ``supports`` and
    ``subgroups`` every answered row's supports and subgroup.
    """

    law: Law | None = None
    supports: np.ndarray | None = None
    subgroups: np.ndarray | None = None

    def to_dict(self, values: Any) -> dict[str, Any]:
        """The design, its support chances, privacy, versions and the supports it received."""
        assert self.law is not None
        out = dict(self.design)
        out.update({
            "p": self.law.p, "q": self.law.q, "ratio": self.law.ratio,
            "versions": list(self.versions), "n": int(self.counts.sum(axis=1).max(initial=0)
                                                      if self.supports is None
                                                      else len(self.supports)),
            "supports": {v: int(c) for v, c in zip(values, self.counts.sum(axis=1),
                                                    strict=True)},
            **{key: value for key, value in privacy_dict(self.privacy).items()
               if key in ("epsilon", "delta")},
        })
        return out

    def part(self, group: int | None = None) -> Part:
        """The estimation part: every row, or the rows of one subgroup."""
        assert self.supports is not None and self.subgroups is not None and self.law is not None
        rows = self.supports if group is None else self.supports[self.subgroups == group]
        return Part(rows, self.law)


def _key(question: QuestionSpec) -> str:
    spec = dict(question.design_spec or {})
    if question.memo is not None:
        spec["memoize"] = question.memo.wave_epsilon
    return json.dumps(spec, sort_keys=True)


def oracle_results(catalog: Catalog, tally: Tally, confidence: float, interval: str,
                   notes: list[str]) -> list[QuestionResult]:
    """A result per frequency-oracle question (versions with other answer values apart).

    The subgroups (``--by``, crossed when several) are the tally's.
    """
    by = tally.by
    results = []
    for qid in catalog.question_ids():
        entries = [(m, q) for m, q in catalog.questions_named(qid) if q.oracle is not None]
        if not entries:
            continue
        by_values: dict[tuple[str, ...], list[tuple[int, QuestionSpec]]] = {}
        for m, question in entries:
            by_values.setdefault(question.values, []).append((m, question))
        for number, (values, group) in enumerate(by_values.items()):
            label = qid if number == 0 else f"{qid} [{', '.join(values)}]"
            if number:
                notes.append(f"{qid}: versions with other answer values are reported as {label!r}")
            results.append(_one(catalog, tally, label, group, values, confidence, interval, by))
    return results


def _one(catalog: Catalog, tally: Tally, label: str, group: list[tuple[int, QuestionSpec]],
         values: tuple[str, ...], confidence: float, interval: str,
         by: str | None) -> QuestionResult:
    parts: dict[str, OraclePart] = {}
    groups = len(tally.groups)
    for m, question in group:
        assert question.oracle is not None and question.privacy is not None
        table, subgroups = tally.oracle_supports(m, question.id)
        missing = tally.oracle_missing[(m, question.id)]
        key = _key(question)
        version = catalog.versions[m].version
        counts = np.zeros((len(values), groups))
        for g in range(groups):
            counts[:, g] = table[subgroups == g].sum(axis=0)
        if key in parts:
            part = parts[key]
            assert part.supports is not None and part.subgroups is not None
            part.supports = np.concatenate([part.supports, table])
            part.subgroups = np.concatenate([part.subgroups, subgroups])
            part.counts = part.counts + counts
            part.missing = part.missing + missing
            part.versions.append(version)
        else:
            parts[key] = OraclePart(
                design=dict(question.design_spec or {}), matrix=np.zeros((0, 0)),
                versions=[version], counts=counts, missing=missing.copy(),
                privacy=question.privacy, law=Law.of(question.oracle), supports=table,
                subgroups=subgroups)
    designs = list(parts.values())
    overall = estimate([p.part() for p in designs], values, confidence, interval)
    privacy = max((p.privacy for p in designs), key=lambda p: (p.epsilon, p.delta))
    result = QuestionResult(
        id=label, text=group[0][1].text, kind=overall.kind, values=values, estimate=overall,
        designs=list[DesignPart](designs), missing=int(sum(p.missing.sum() for p in designs)),
        privacy=privacy, by=by,
    )
    if by is not None:
        for g, name in enumerate(tally.groups):
            found = estimate([p.part(g) for p in designs], values, confidence, interval)
            if tally.subgroups.unanswered(name) and found.n == 0:
                continue
            result.groups[name] = found
    return result

