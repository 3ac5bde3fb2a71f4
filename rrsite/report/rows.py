"""What every report format shows of an Analysis: rows, marks, column meanings and notes.

The terminal and Markdown reports (reports.py) and the HTML report (html_report.py) both build on
this module, so neither imports the other for its pieces. Every column a report shows is explained
under its table (:func:`column_meanings`); a mark's footnote is shown only when a row carries that
mark (:func:`footnotes`); an interval that holds both 0.25 and 0.75 is said to be uninformative,
with its group and its n (:func:`uninformative`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..analyze import univariate as rrreg_fit
from ..analyze.results import (
    CI_METHOD_NAMES,
    VARIANCE_CONVENTION,
    Analysis,
    Labels,
    NumberResult,
    QuestionResult,
    epsilon_words,
)
from ..estimate.estimators import Estimate
from ..estimate.numbers import NumberEstimate
from ..exports.subgroups import SEPARATOR, Subgroups

#: An interval that holds both of these rates is not informative: it cannot tell an answer that a
#: quarter of respondents would give from one that three quarters would.
UNINFORMATIVE_RATES = (0.25, 0.75)
#: The marks of the estimate column and what each means.
MARKS = {
    "*": "the unbiased estimate fell outside [0, 1] (or the simplex); the estimate is the "
         "maximum-likelihood one on [0, 1]",
    "!": "the whole interval fell outside [0, 1] and collapsed onto 0 or 1",
}


def fmt(value: float, digits: int = 3) -> str:
    """A rate for people: fixed decimals; undefined as an en dash."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}f}"


def interval_text(low: float, high: float, digits: int = 3) -> str:
    """[low, high]."""
    return f"[{fmt(low, digits)}, {fmt(high, digits)}]"


def design_text(question: QuestionResult) -> str:
    """The design(s) in a few words."""
    texts = []
    for part in question.designs:
        params = ", ".join(f"{k}={_short(v)}" for k, v in part.design.items() if k != "name")
        texts.append(f"{part.design.get('name', '?')}({params})")
    return " + ".join(texts) if len(texts) > 1 else texts[0]


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ",".join(_short(v) for v in value) + "]"
    return str(value)


def flags(estimate: Estimate, index: int) -> str:
    """Markers: * clipped to [0, 1] or the simplex, ! interval collapsed onto 0 or 1."""
    marks = ""
    if estimate.clipped and (estimate.kind == "binary"
                             or not 0.0 <= estimate.unbiased[index] <= 1.0):
        marks += "*"
    if len(estimate.degenerate) and estimate.degenerate[index]:
        marks += "!"
    return marks


def privacy_text(epsilon: float | None, delta: float, infinite: bool) -> str:
    """epsilon/delta for people (``epsilon = ln 3 = 1.099``); no epsilon stated plainly."""
    if infinite or epsilon is None:
        return f"no finite epsilon (delta {delta:.3g} whatever epsilon)"
    return f"epsilon = {epsilon_words(epsilon)}" + (f", delta = {delta:.3g}" if delta else "")


def base_id(qid: str) -> str:
    """The question id of a result's id (``"q [a, b]"`` and ``"q [SLD]"`` name question q)."""
    return qid.split(" [", 1)[0]


def named(analysis: Analysis, qid: str) -> str:
    """A question as reports name it: ``short name (id)`` when it has a short name, else id."""
    short = analysis.labels.names.get(base_id(qid))
    return f"{short} ({qid})" if short else qid


def by_title(analysis: Analysis) -> str:
    """The --by questions as a heading: ``year`` or, crossed, ``year × sex``."""
    return SEPARATOR.join(analysis.by_questions) or str(analysis.by)


def group_name(analysis: Analysis, name: str) -> str:
    """A subgroup as reports show it: its answers' labels (``First × Women``)."""
    return analysis.labels.cell(analysis.subgroups, name)


def answers_text(analysis: Analysis, qid: str, counts: Mapping[str, int],
                 between: str = ": ") -> str:
    """``First: 10, Second: 5``: counts of a directly asked question, by label."""
    return ", ".join(f"{analysis.labels.value(qid, value)}{between}{count:,}"
                     for value, count in counts.items())


def estimate_rows(
    question: QuestionResult, estimate: Estimate, labels: Labels | None = None,
) -> list[tuple[str, int, float, float, float, float, float, float, float, str]]:
    """(label, n, observed, estimate, unbiased, se, low, high, chebyshev, flags) per answer.

    With ``labels`` the answer is its label as the respondent saw it (``Yes``, ``Often``).
    """
    def shown(label: str) -> str:
        return labels.value(base_id(question.id), label) if labels is not None else label

    return [
        (shown(label), estimate.n, float(estimate.observed[i]), float(estimate.estimate[i]),
         float(estimate.unbiased[i]), float(estimate.se[i]), float(estimate.ci_low[i]),
         float(estimate.ci_high[i]), float(estimate.chebyshev[i]), flags(estimate, i))
        for i, label in enumerate(estimate.labels)
    ]


MODEL_HEADERS = ["question", "model", "parameter", "estimate", "se", "interval", "method",
                 "meaning"]


def model_rows(question: QuestionResult) -> list[list[str]]:
    """RRreg's designs: one row per estimated parameter (pi and the model's extra ones)."""
    if question.fit is None:
        return []
    out = []
    for i, (name, entry) in enumerate(rrreg_fit.parameters(question.fit).items()):
        low, high = entry["ci"]
        out.append([question.id if i == 0 else "", question.fit.model if i == 0 else "", name,
                     _maybe(entry["estimate"]), _maybe(entry["se"]),
                     interval_text(_nan(low), _nan(high)), entry["ci_method"] or "–",
                     entry["meaning"]])
    return out


def model_notes(question: QuestionResult) -> list[str]:
    """The goodness-of-fit test of an RRreg model, when it has degrees of freedom left."""
    gof = question.fit.gof if question.fit is not None else None
    if not gof:
        return []
    return [f"{question.id}: goodness of fit G2 = {gof['G2']:.2f}, df = {gof['df']:g}, "
            f"p = {gof['p_value']:.3g}"]


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _maybe(value: float | None) -> str:
    return fmt(_nan(value))


def column_meanings(level: str, methods: Iterable[str],
                    columns: Iterable[str]) -> list[tuple[str, str]]:
    """``(column, meaning)`` for each column named in ``columns``, in that order."""
    named = "; ".join(CI_METHOD_NAMES.get(method, method) for method in sorted(set(methods)))
    k = 1 / math.sqrt(1 - float(level.rstrip("%")) / 100)
    meanings = {
        "answer": "the answer whose share is estimated (yes/no questions: the share of yes)",
        "n": "how many answers were counted",
        "reported": "the share of the randomized reports that said this answer, as sent",
        "estimate": "the true share, de-biased through the design: the maximum-likelihood "
                    "estimate, always within [0, 1]",
        "unbiased": "the moment estimate (the reported share mapped back through the design): "
                    "unbiased, so it can fall below 0 or above 1 by chance",
        "se": f"the standard error of the unbiased estimate ({VARIANCE_CONVENTION} variance)",
        f"{level} interval": f"the {level} confidence interval of the true share: {named}",
        "Chebyshev ±": f"a distribution-free margin: unbiased ± this ({k:.3g} standard errors) "
                       f"holds the true share with at least {level} probability by Chebyshev's "
                       "inequality, whatever the estimate's distribution (so it is wider "
                       "than the interval, which relies on the distribution)",
    }
    return [(column, meanings[column]) for column in columns if column in meanings]


def marks_in(rows: Iterable[Any]) -> set[str]:
    """The marks used by rows of :func:`estimate_rows` (their last field)."""
    return {mark for row in rows for mark in row[-1]}


def footnotes(marks: Iterable[str]) -> list[str]:
    """``"* ..."`` for each mark used, in the order of MARKS; none for marks not used."""
    used = set(marks)
    return [f"{mark} {meaning}" for mark, meaning in MARKS.items() if mark in used]


def uninformative(question: QuestionResult, groups: Mapping[str, Estimate] | None = None,
                  by: str | None = None, *, labels: Labels | None = None,
                  subgroups: Subgroups | None = None) -> list[str]:
    """A sentence for each estimate whose interval is too wide to inform (or has no answers).

    ``groups``: the subgroups of ``by`` (else the question's whole estimate): the rule applies to
    every subgroup, each cell of crossed ones too. ``labels`` and ``subgroups`` name the answers
    and the cells (``year = First, sex = Women``) by their labels. Estimates alike share one
    sentence (:func:`too_few`), however many answers and subgroups there are.
    """
    empty, open_ended, wide = [], [], []
    items = list(groups.items()) if groups is not None else [("", question.estimate)]
    for group, estimate in items:
        if groups is None:
            where = "all answers"
        elif labels is not None and subgroups is not None and subgroups.questions:
            where = labels.where(subgroups, group)
        else:
            where = f"{by} = {labels.value(by or '', group) if labels is not None else group}"
        for row in estimate_rows(question, estimate, labels):
            label, n, low, high = row[0], row[1], row[6], row[7]
            place = where if question.kind == "binary" else f"{where}, answer {label}"
            if n == 0:
                empty.append(place)
            elif not (math.isfinite(low) and math.isfinite(high)):
                open_ended.append((place, n))
            elif low <= UNINFORMATIVE_RATES[0] and high >= UNINFORMATIVE_RATES[1]:
                wide.append((place, n, f"[{low:.2f}, {high:.2f}]"))
    rare, common = UNINFORMATIVE_RATES
    return [*no_answers(question.id, empty), *no_interval(question.id, open_ended),
            *too_few(question.id, wide, f"{rare:g}", f"{common:g}",
                     "a rare answer from a common one")]


def answer_rows(analysis: Analysis, question: QuestionResult, estimate: Estimate
                ) -> list[tuple[str, int, float, float, float, float, float, float, float, str]]:
    """:func:`estimate_rows` with the question's option labels."""
    return estimate_rows(question, estimate, analysis.labels)


def groups_of(analysis: Analysis, question: QuestionResult) -> list[tuple[str, Estimate]]:
    """(label of the subgroup's answer, estimate) of each subgroup of ``--by``."""
    return [(group_name(analysis, group), estimate)
            for group, estimate in question.groups.items()]


def too_wide(analysis: Analysis, question: QuestionResult, grouped: bool = False) -> list[str]:
    """:func:`uninformative` for the whole estimate, or the subgroups, with labels."""
    return uninformative(question, question.groups if grouped else None, analysis.by,
                         labels=analysis.labels, subgroups=analysis.subgroups)


def direct_counts(analysis: Analysis, direct: Any) -> list[tuple[str, int]]:
    """(label, count) of each answer of a question asked directly."""
    return [(analysis.label(direct.id, value), count) for value, count in direct.counts.items()]


def no_answers(qid: str, places: list[str]) -> list[str]:
    """``q (where): no answers, no estimate``, one sentence for all the places."""
    if not places:
        return []
    if len(places) == 1:
        return [f"{qid} ({places[0]}): no answers, no estimate"]
    return [f"{qid}: no answers, no estimate ({'; '.join(places)})"]


def no_interval(qid: str, items: list[tuple[str, int]]) -> list[str]:
    """``q (where): n answers give no interval``, one sentence for all the places."""
    if not items:
        return []
    if len(items) == 1:
        return [f"{qid} ({items[0][0]}): {items[0][1]:,} answers give no interval"]
    return [f"{qid}: no interval ({'; '.join(f'{w}: {n:,} answers' for w, n in items)})"]


def too_few(qid: str, items: list[tuple[str, int, str]], rare: str, common: str,
            what: str) -> list[str]:
    """One sentence for all the (where, n, interval) too wide to inform.

    Each interval holds both ``rare`` and ``common``, so it cannot tell ``what``.
    """
    if not items:
        return []
    if len(items) == 1:
        where, n, shown = items[0]
        return [f"{qid} ({where}): {n:,} answers are too few for an informative interval: "
                f"{shown} holds both {rare} and {common}, so it cannot tell {what}"]
    listed = "; ".join(f"{where}: {n:,} answers, {shown}" for where, n, shown in items)
    return [f"{qid}: too few answers for an informative interval in {len(items)} estimates "
            f"({listed}): each interval holds both {rare} and {common}, so it cannot tell "
            f"{what}"]


DESIGN_HEADERS = ["question", "answer", "n", "estimate", "se", "interval", "df", "SRS se",
                  "deff", "n eff", "total", "total se"]


def design_summary(analysis: Analysis) -> str:
    """The sample design in one sentence (empty without one)."""
    info = analysis.sample_design
    if info is None:
        return ""
    parts = [f"{info['rows']:,} respondents"]
    weights = info["weights_column"] or f"1/{info['inclusion_column']}"
    parts.append(f"weights {weights}")
    if info["stratified"]:
        parts.append(f"{info['strata']} strata ({info['strata_column']})")
    parts.append(f"{info['clusters']:,} clusters ({info['cluster_column']})" if info["clustered"]
                 else "no clusters")
    parts.append(f"finite-population correction ({info['fpc_column']})" if info["fpc"]
                 else "sampling with replacement")
    if info["design_file"]:
        parts.append(f"design read from {info['design_file']}")
    method = {"linearization": "linearization (Taylor)", "jackknife":
              "delete-one-cluster jackknife", "rrtcs-deville":
              "RRTCS's Deville single-stage approximation (strata and clusters ignored)",
              "rrtcs-jackknife": "RRTCS's jackknife (no randomization term)"}
    w = info["weights"]
    df = ("normal intervals, as RRTCS" if info["variance_method"].startswith("rrtcs-")
          else f"{info['df']} degrees of freedom (clusters - strata)")
    raked = ""
    if "raking" in info:
        before = info["raking"]["weights_before"]
        raked = (f" Raked to the population margins of {', '.join(info['raking']['variables'])} "
                 f"({info['raking']['iterations']} iterations); before raking the weights ranged "
                 f"{before['min']:.4g} to {before['max']:.4g} (sum {before['sum']:.6g}, Kish "
                 f"effective n {before['kish_n_eff']:.1f}).")
    return (f"Design: {', '.join(parts)}; variance by {method[info['variance_method']]}; "
            f"{df}. Weights range "
            f"{w['min']:.4g} to {w['max']:.4g} (sum {w['sum']:.6g}, Kish effective n "
            f"{w['kish_n_eff']:.1f}).{raked}")


def design_entries(analysis: Analysis) -> list[tuple[str, dict[str, Any]]]:
    """(question id, ``design_based``) of every question with one, then every number question.

    A number question's estimated "answer" is its ``mean`` (of the true numbers).
    """
    out = [(q.id, q.design_based) for q in analysis.questions if q.design_based]
    out += [(n.id, n.design_based) for n in analysis.numbers if n.design_based]
    return out


def design_notes(analysis: Analysis) -> list[tuple[str, str]]:
    """(question id, note) of the design-based section: domains, and what was not estimated."""
    out = []
    for qid, based in design_entries(analysis):
        if "not_estimated" in based:
            out.append((qid, f"not estimated under the design: {based['not_estimated']}"))
        if "note" in based:
            out.append((qid, based["note"]))
    return out


def design_rows(analysis: Analysis) -> list[list[str]]:
    """One row per question and estimated answer of the design-based estimates."""
    numbers = {result.id for result in analysis.numbers}
    rows = []
    for qid, based in design_entries(analysis):
        for i, (label, f) in enumerate(based["values"].items()):
            df = f["df"]
            if qid in numbers:  # a mean in the number's units: rounded to its se
                places, total_places = decimals_for(f["se"]), decimals_for(f["total"]["se"])
                se_places = None if places is None else places + 1
                shown = [amount(f["estimate"], places), amount(f["se"], se_places),
                         amount_range(f["ci"][0], f["ci"][1], places)]
                srs_se = amount(f["srs_se"], se_places)
                total = [amount(f["total"]["estimate"], total_places),
                         amount(f["total"]["se"], None if total_places is None
                                else total_places + 1)]
            else:
                shown = [fmt(f["estimate"]), fmt(f["se"]), interval_text(*f["ci"])]
                srs_se = fmt(f["srs_se"])
                total = [fmt(f["total"]["estimate"], 1), fmt(f["total"]["se"], 1)]
            rows.append([
                qid if i == 0 else "", label, f"{based['n']:,}", *shown,
                "∞" if df is None else f"{df:g}", srs_se, fmt(f["deff"], 2),
                fmt(_nan(f["n_eff"]), 0), *total,
            ])
    return rows


def design_by_rows(analysis: Analysis) -> list[list[str]]:
    """Design-based subgroups (``--by``): question, group, answer, n, estimate, se, interval."""
    numbers = {result.id for result in analysis.numbers}
    rows = []
    for qid, based in design_entries(analysis):
        if "by" not in based:
            continue
        first = True
        for group, entry in based["by"].items():
            for i, (label, f) in enumerate(entry["values"].items()):
                if qid in numbers:
                    places = decimals_for(f["se"])
                    shown = [amount(f["estimate"], places),
                             amount(f["se"], None if places is None else places + 1),
                             amount_range(f["ci"][0], f["ci"][1], places)]
                else:
                    shown = [fmt(f["estimate"]), fmt(f["se"]), interval_text(*f["ci"])]
                rows.append([qid if first else "", group_name(analysis, group) if i == 0 else "",
                             label,
                             f"{entry['n']:,}", *shown, fmt(f["deff"], 2)])
                first = False
    return rows


NUMBER_HEADERS = ["question", "unit", "subgroup", "n", "mean", "se", "interval", "total",
                  "total interval", "design"]


def significant(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, thousands separated, never an exponent.

    5e9 to five digits is 5,000,000,000; trailing zeros of a fraction are dropped.
    """
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    places = digits - 1 - math.floor(math.log10(abs(value)))
    text = f"{round(value, places):,.{max(places, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def decimals_for(se: float | None) -> int | None:
    """Decimal places that show a figure to two significant digits of its standard error.

    Negative: rounded to tens, hundreds, ... An estimate of 50,171.3 with se 652 is shown as
    50,170; one of 14.403 with se 0.407 as 14.40. None when the se is zero or undefined.
    """
    if se is None or not (math.isfinite(se) and se > 0):
        return None
    return min(1 - math.floor(math.log10(se)), 12)


def amount(value: float | None, decimals: int | None) -> str:
    """A figure for people: thousands separated, rounded to ``decimals`` places.

    Negative ``decimals`` round to tens, hundreds, ...; None shows the value as given
    (:func:`plain`); undefined is an en dash.
    """
    if value is None or not math.isfinite(value):
        return "–"
    if decimals is None:
        return plain(value)
    rounded = round(value, decimals) + 0.0  # + 0.0: no "-0"
    text = f"{rounded:,.{max(decimals, 0)}f}"
    return text[1:] if text.startswith("-") and not any(c in "123456789" for c in text) else text


def plain(value: float) -> str:
    """A parameter as written: whole numbers thousands-separated, others to six digits.

    2000 -> 2,000; 0.5 -> 0.5.
    """
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def amount_range(low: float | None, high: float | None, decimals: int | None) -> str:
    """``low to high``: the numbers carry thousands commas, so no comma separates the ends."""
    return f"{amount(low, decimals)} to {amount(high, decimals)}"


def _mask_text(spec: Mapping[str, Any], integer: bool = False) -> str:
    """A mask or scrambling distribution in words, its numbers thousands-separated."""
    kind, params = next(iter(spec.items()))
    if kind == "normal":
        return f"normal (mean {plain(params['mean'])}, sd {plain(params['sd'])})"
    if kind == "exponential":
        return f"exponential (mean {plain(params['mean'])})"
    if kind == "uniform":
        whole = "whole numbers " if integer else ""
        return f"uniform over {whole}{plain(params['min'])} to {plain(params['max'])}"
    values = ", ".join(plain(v) for v in params)
    chances = spec.get("probabilities") or []
    if len(set(chances)) > 1:
        values = ", ".join(f"{plain(v)} ({q:.3g})" for v, q in zip(params, chances,
                                                                         strict=True))
    return f"one of {values}"


def number_design_words(spec: Mapping[str, Any]) -> str:
    """A number design's spec (``NumberDesign.spec()``) in a few words.

    For example ``mixture: the answer with chance 0.5, else uniform over whole numbers 0 to 30``.
    """
    name, integer = spec["name"], bool(spec.get("integer"))
    if name == "mixture":
        return (f"mixture: the answer with chance {spec['p']:.4g}, else "
                f"{_mask_text(spec['mask'], integer)}")
    if name == "mixture-unknown":
        p1, p2 = spec["p"]
        return (f"mixture-unknown: the answer with chance {p1:.4g} (group 1, chance "
                f"{spec['probability']:.4g}) or {p2:.4g} (group 2), else the innocuous answer")
    if name == "additive":
        return f"additive: answer + {_mask_text(spec['scramble'], integer)}"
    if name == "multiplicative":
        scaled = f"answer × {_mask_text(spec['scramble'])}"
        p = spec.get("p") or 0.0
        return f"multiplicative: {scaled}" if p == 0 else (
            f"multiplicative: the answer with chance {p:.4g}, else {scaled}")
    if "epsilon" in spec:
        return (f"{name}: epsilon {spec['epsilon']:.4g} over {plain(spec['min'])} to "
                f"{plain(spec['max'])}")
    return str(name)


def number_design_text(result: NumberResult) -> str:
    """The number design(s) in a few words; pooled versions joined with `` + ``."""
    return " + ".join(number_design_words(part.design.spec()) for part in result.parts)


#: The marks of a number's mean and what each means.
NUMBER_MARKS = {
    "*": "the unbiased mean fell outside the range [min, max]; the mean shown is the nearest end "
         "of the range (the JSON report has the unbiased one as `unbiased`)",
    "!": "the whole interval fell beyond an end of the range; shown is that end to the end +/- "
         "the interval's margin",
}


def number_flags(estimate: NumberEstimate) -> str:
    """``*`` the unbiased mean left the range, ``!`` the interval was moved onto the range."""
    return ("*" if estimate.clipped else "") + ("!" if estimate.moved else "")


def number_estimates(analysis: Analysis, result: NumberResult
                     ) -> list[tuple[str, NumberEstimate | None]]:
    """("all", overall) then (subgroup label, estimate) of each subgroup of ``--by``."""
    return [("all", result.estimate),
            *((group_name(analysis, group), estimate)
              for group, estimate in result.groups.items())]


def number_rows(analysis: Analysis) -> list[list[str]]:
    """One row per randomized number question and subgroup (``--by``).

    Figures are rounded to about two significant digits of their standard error and carry
    thousands separators (the JSON report has them in full); the mean is the one within the
    range, marked (:data:`NUMBER_MARKS`) where it differs from the unbiased one.
    """
    rows = []
    for result in analysis.numbers:
        for i, (group, estimate) in enumerate(number_estimates(analysis, result)):
            if estimate is None:
                rows.append([result.id, result.unit or "", group, "–", "–", "–", "–", "–", "–",
                             number_design_text(result)])
                continue
            places = decimals_for(estimate.se)
            population = estimate.population
            total_places = None if population is None else decimals_for(population * estimate.se)
            rows.append([
                result.id if i == 0 else "", (result.unit or "") if i == 0 else "", group,
                f"{estimate.n:,}", amount(estimate.estimate, places) + number_flags(estimate),
                amount(estimate.se, None if places is None else places + 1),
                amount_range(estimate.ci_low, estimate.ci_high, places),
                "–" if population is None else amount(estimate.total, total_places),
                "–" if population is None else amount_range(
                    population * estimate.ci_low, population * estimate.ci_high, total_places),
                number_design_text(result) if i == 0 else "",
            ])
    return rows


def number_uninformative(analysis: Analysis, result: NumberResult) -> list[str]:
    """The estimates too uncertain to inform: the rule of yes-no questions, for a range.

    An interval holding both the points a quarter and three quarters of the way up [min, max]
    cannot tell a low number from a high one.
    """
    estimate = result.estimate
    if estimate is None or estimate.minimum is None or estimate.maximum is None:
        return []
    low, high = estimate.minimum, estimate.maximum
    quarter, three = low + (high - low) / 4, low + 3 * (high - low) / 4
    wide = []
    for group, found in number_estimates(analysis, result):
        if found is None or not (math.isfinite(found.ci_low) and math.isfinite(found.ci_high)):
            continue
        if found.ci_low <= quarter and found.ci_high >= three:
            places = decimals_for(found.se)
            where = "all answers" if group == "all" else f"{result.by} = {group}"
            wide.append((where, found.n, amount_range(found.ci_low, found.ci_high, places)))
    return too_few(result.id, wide, plain(quarter), plain(three),
                   "a number in the lowest quarter of the range from one in the highest")


def number_notes(analysis: Analysis) -> list[str]:
    """The interval, SE convention, marks and what each estimate needed, in sentences.

    Every sentence once: estimates alike (the subgroups of one question) share one.
    """
    notes = [f"{analysis.confidence:.0%} intervals: Student's t with Satterthwaite's degrees of "
             "freedom, corrected for the estimate's skewness (Hall 1992), within the number's "
             "range; SE: sd of the de-biased reports (n - 1) / sqrt(n), as RRreg, never below "
             "the randomization's own noise; se_noise (JSON) is the randomization's part alone."]
    joined = [result.id for result in analysis.numbers
              if result.estimate is not None and result.estimate.log_scale]
    if joined:
        notes.append(f"{', '.join(joined)}: the interval also spans the t interval for "
                     "log(mean - min) (the hull of both), which reaches higher where the sample "
                     "may have missed the top of a skewed distribution.")
    marks = {mark for result in analysis.numbers
             for _, found in number_estimates(analysis, result) if found is not None
             for mark in number_flags(found)}
    notes += [f"{mark} {meaning}" for mark, meaning in NUMBER_MARKS.items() if mark in marks]
    for result in analysis.numbers:
        fits = result.estimate.parts if result.estimate is not None else []
        if len(fits) == 1 and fits[0].rrreg is not None:
            block = fits[0].rrreg
            extra = (f", piUQ {block['piUQ']:.6g} (SE {block['piUQSE']:.6g})"
                     if "piUQ" in block else "")
            notes.append(f"{result.id}: RRreg {block['model']} p={_short(block['p'])}: pi "
                         f"{block['pi']:.6g} (piSE {block['piSE']:.6g}){extra}")
        said: dict[str, list[str]] = {}  # sentence -> where: one line for estimates alike
        for group, found in number_estimates(analysis, result):
            if found is None:
                continue
            where = "all answers" if group == "all" else f"{result.by} = {group}"
            method = [] if found.method.startswith("t (") else [f"interval {found.method}"]
            for sentence in [*method, *found.notes]:
                said.setdefault(sentence, []).append(where)
        notes += [f"{result.id} ({'; '.join(places)}): {sentence}"
                  for sentence, places in said.items()]
        notes += [f"{result.id}: {message}" for message in result.messages]
        notes += number_uninformative(analysis, result)
    if any(result.design_based for result in analysis.numbers):
        notes.append("These treat the sample as simple random; the design-based means (weights, "
                     "strata, clusters) are the rows 'mean' of the design-based estimates.")
    return list(dict.fromkeys(notes))
