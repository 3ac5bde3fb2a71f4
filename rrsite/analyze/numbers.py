"""Randomized number questions in `rrsite analyze`: the mean (and total) of the true numbers.

Every version's reports of a question are grouped by design; each design is fitted on its own
(rrsite.estimate.numbers.fit_part) and the fits pooled (``combine``), overall and per subgroup.
"""

from __future__ import annotations

import json

import numpy as np

from ..estimate.numbers import NumberEstimate, NumberEstimateError, combine, fit_part
from ..exports.catalog import Catalog
from ..exports.tally import Tally
from .results import NumberPart, NumberResult, labels_of


def number_results(catalog: Catalog, tally: Tally, confidence: float, by: str | None,
                    population: float | None) -> list[NumberResult]:
    """Every randomized number question: its designs' reports pooled, overall and by subgroup."""
    results = []
    for qid in catalog.question_ids():
        entries = [(m, q) for m, q in catalog.questions_named(qid) if q.numeric]
        if not entries:
            continue
        parts: dict[str, NumberPart] = {}
        missing = 0
        for m, question in entries:
            reports, subgroups, groups = tally.number_reports(m, qid)
            missing += int(tally.rows_accepted[m]) - len(reports)
            key = json.dumps(question.design_spec, sort_keys=True)
            version = catalog.versions[m].version
            if key in parts:
                part = parts[key]
                part.reports = np.concatenate((part.reports, reports))
                part.subgroups = np.concatenate((part.subgroups, subgroups))
                part.groups = np.concatenate((part.groups, groups))
                part.versions.append(version)
            else:
                assert question.privacy is not None
                parts[key] = NumberPart(question.number_design, [version], reports, subgroups,
                                        groups, question.privacy)
        first = entries[0][1]
        result = NumberResult(qid, first.text, first.unit, list(parts.values()), None, missing,
                              max((p.privacy for p in parts.values()),
                                  key=lambda p: (p.epsilon, p.delta)), by)

        try:
            result.estimate = number_estimate(result.parts, None, confidence, population)
        except NumberEstimateError as error:
            result.messages.append(f"no estimate: {error}")
        else:
            caution = small_groups_caution(result.estimate)
            if caution:
                result.messages.append(caution)
        if by is not None:
            labels = labels_of(catalog)
            for g, name in enumerate(tally.groups):
                try:
                    result.groups[name] = number_estimate(result.parts, g, confidence,
                                                           population)
                    caution = small_groups_caution(result.groups[name])
                    if caution and not tally.subgroups.unanswered(name):
                        result.messages.append(
                            f"{labels.where(tally.subgroups, name)}: {caution}")
                except NumberEstimateError as error:
                    if not tally.subgroups.unanswered(name):
                        result.messages.append(f"{labels.where(tally.subgroups, name)}: no "
                                               f"estimate: {error}")
        results.append(result)
    return results


#: mixture-unknown over a heavy-tailed number: below this many reports in a group the interval
#: was measured to cover less than 95% (94.3-94.5% at 50 per group over log-normal incomes).
SMALL_GROUP = 250
#: mixture-unknown with fewer reports than this in a group: its innocuous answers' spread is
#: unknown, so no bound of the range can widen the interval (benchmarks/coverage_numbers.py:
#: 78% at 5 respondents, 88% at 10, over zero-inflated counts of days).
FEW_IN_A_GROUP = 15


def small_groups_caution(estimate: NumberEstimate) -> str | None:
    """A message when mixture-unknown's groups are small (and the reports heavy-tailed)."""
    sizes = [size for part in estimate.parts if part.groups for size in part.groups.values()]
    if not sizes:
        return None
    if min(sizes) < FEW_IN_A_GROUP:
        return (f"a mixture-unknown group of {min(sizes)}: with so few reports per group this "
                "interval can cover far less than 95% (measured: 78% at 5 respondents and 88% "
                "at 10 over counts of days); read it as a rough guide")
    if min(sizes) >= SMALL_GROUP or estimate.df >= 30:
        return None
    return (f"heavy-tailed reports (the interval's Satterthwaite df is {estimate.df:.1f}) and a "
            f"mixture-unknown group of {min(sizes)}: with fewer than {SMALL_GROUP} reports per "
            "group over a skewed number this interval can cover less than 95% (measured: 94.5% "
            "at 50 per group over log-normal incomes); more respondents, or a design with more "
            "noise, make it reliable")


def number_estimate(parts: list[NumberPart], subgroup: int | None, confidence: float,
                     population: float | None) -> NumberEstimate:
    """Each design's fit (of one subgroup's rows, or all), pooled."""
    fits = []
    for part in parts:
        rows = np.ones(len(part.reports), dtype=bool) if subgroup is None \
            else part.subgroups == subgroup
        fits.append(fit_part(part.design, part.reports[rows], part.groups[rows]))
    return combine(fits, confidence, population)
