"""Rendering an Analysis: terminal table, JSON, Markdown (HTML lives in html_report.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from ..estimate.estimators import Estimate
from . import rrreg_fit
from .api import CI_METHOD_NAMES, VARIANCE_CONVENTION, Analysis, NumberResult, QuestionResult

FORMATS = ("table", "json", "markdown", "html")


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
    """epsilon/delta for people; no epsilon stated plainly."""
    if infinite or epsilon is None:
        return f"no finite epsilon (delta {delta:.3g} whatever epsilon)"
    return f"epsilon {epsilon:.4g}, delta {delta:.3g}"


def estimate_rows(
    question: QuestionResult, estimate: Estimate
) -> list[tuple[str, int, float, float, float, float, float, float, float, str]]:
    """(label, n, observed, estimate, unbiased, se, low, high, chebyshev, flags) per answer."""
    return [
        (label, estimate.n, float(estimate.observed[i]), float(estimate.estimate[i]),
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


def _table(headers: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def _summary_lines(analysis: Analysis) -> list[str]:
    lines = [f"Survey {analysis.survey} — {analysis.title}",
             f"Read {analysis.rows_read:,} rows from {len(analysis.files)} "
             f"file{'s' if len(analysis.files) != 1 else ''}: {analysis.rows_accepted:,} accepted, "
             f"{analysis.rejected.total:,} rejected."]
    for info in analysis.files:
        lines.append(f"  {info.path}  ({info.format}, {info.rows:,} rows)")
        lines.extend(f"    note: {note}" for note in info.notes)
    seen = [v for v in analysis.versions if v["seen"]]
    lines.append("Versions: " + (", ".join(f"{v['version']} ({v['rows']:,} rows)" for v in seen)
                                 or "none seen"))
    return lines


def render_table(analysis: Analysis) -> str:
    """The terminal report."""
    out = _summary_lines(analysis)
    if analysis.rejected.total:
        out += ["", "Rejected rows (the first few of each reason):"]
        out += ["  " + line for line in analysis.rejected.summary().splitlines()]
    level = f"{analysis.confidence:.0%}"
    if analysis.numbers:
        out += ["", f"Means of randomized numbers ({level} intervals):"]
        out += ["  " + line for line in _table(NUMBER_HEADERS, number_rows(analysis),
                                               {3, 4, 5, 7})]
        out += ["  " + note for note in number_notes(analysis)]
    methods = sorted({q.estimate.ci_method for q in analysis.questions})
    if analysis.questions or not analysis.numbers:
        out += ["", f"Estimates with {level} intervals: "
                + "; ".join(CI_METHOD_NAMES.get(m, m) for m in methods)
                + f". Standard errors under {VARIANCE_CONVENTION}."]
        headers = ["question", "answer", "n", "reported", "estimate", "unbiased", "se",
                   f"{level} interval", "Chebyshev ±", ""]
        rows = []
        for question in analysis.questions:
            for i, r in enumerate(estimate_rows(question, question.estimate)):
                rows.append([question.id if i == 0 else "", r[0], f"{r[1]:,}", fmt(r[2]),
                             fmt(r[3]), fmt(r[4]), fmt(r[5]), interval_text(r[6], r[7]),
                             fmt(r[8]), r[9]])
        out += _table(headers, rows, {2, 3, 4, 5, 6, 8})
    out += _footnotes(analysis)
    for question in analysis.questions:
        out += [f"  {question.id}: {design_text(question)}; {question.estimate.ci_method}"
                + (f"; {question.missing:,} unanswered" if question.missing else "")]
        out += [f"    {note}" for note in question.estimate.notes]
    models = [row for question in analysis.questions for row in model_rows(question)]
    if models:
        out += ["", f"RRreg's models ({level} intervals):"]
        out += ["  " + line for line in _table(MODEL_HEADERS, models, {3, 4})]
        out += ["  " + note for q in analysis.questions for note in model_notes(q)]
    if analysis.by is not None and analysis.questions:
        out += ["", f"Subgroups by {analysis.by}:"]
        for question in analysis.questions:
            rows = []
            for group, estimate in question.groups.items():
                for i, r in enumerate(estimate_rows(question, estimate)):
                    rows.append([group if i == 0 else "", r[0], f"{r[1]:,}", fmt(r[2]), fmt(r[3]),
                                 interval_text(r[6], r[7]), r[9]])
            out += ["", f"  {question.id}"]
            out += ["  " + line for line in _table(
                [analysis.by, "answer", "n", "reported", "estimate", f"{level} interval", ""],
                rows, {2, 3, 4})]
    out += ["", "Privacy (" + analysis.privacy["composition"] + "):"]
    for entry in analysis.privacy["questions"]:
        out.append(f"  {entry['id']}: {entry['statement']}")
    total = analysis.privacy["per_respondent"]
    out.append(f"  per respondent (version {total['version']}): "
               + (f"NOT differentially private for any epsilon (delta {total['delta']:.3g} "
                  "whatever epsilon)" if total["epsilon_infinite"] else total["statement"]))
    if analysis.direct:
        out += ["", "Asked directly:"]
        for direct in analysis.direct:
            counts = ", ".join(f"{v} {c:,}" for v, c in direct.counts.items())
            out.append(f"  {direct.id}: {counts}"
                       + (f", unanswered {direct.missing:,}" if direct.missing else ""))
    out += [f"Note: {note}" for note in analysis.notes]
    return "\n".join(out) + "\n"


NUMBER_HEADERS = ["question", "unit", "subgroup", "n", "mean", "se", "interval", "total",
                  "total interval", "design"]


def number_design_text(result: NumberResult) -> str:
    """The number design(s) in a few words."""
    texts = []
    for part in result.parts:
        spec = part.design.spec()
        params = ", ".join(f"{k}={_short(v)}" for k, v in spec.items()
                           if k not in ("name", "min", "max", "integer"))
        texts.append(f"{spec['name']}({params})")
    return " + ".join(texts)


def number_rows(analysis: Analysis) -> list[list[str]]:
    """One row per randomized number question and subgroup (``--by``)."""
    rows = []
    for result in analysis.numbers:
        estimates = [("all", result.estimate), *result.groups.items()]
        for i, (group, estimate) in enumerate(estimates):
            if estimate is None:
                rows.append([result.id, result.unit or "", group, "–", "–", "–", "–", "–", "–",
                             number_design_text(result)])
                continue
            total = estimate.total
            rows.append([
                result.id if i == 0 else "", (result.unit or "") if i == 0 else "", group,
                f"{estimate.n:,}", f"{estimate.mean:.4g}", f"{estimate.se:.3g}",
                f"[{estimate.ci_low:.4g}, {estimate.ci_high:.4g}]",
                "–" if total is None else f"{total:.4g}",
                "–" if estimate.population is None else
                f"[{estimate.population * estimate.ci_low:.4g}, "
                f"{estimate.population * estimate.ci_high:.4g}]",
                number_design_text(result) if i == 0 else "",
            ])
    return rows


def number_notes(analysis: Analysis) -> list[str]:
    """The interval, SE convention and RRreg's figures, in sentences."""
    notes = [f"{analysis.confidence:.0%} intervals: Student's t; SE: sd of the de-biased reports "
             "(n - 1) / sqrt(n), as RRreg; se_noise (JSON) is the randomization's part alone."]
    for result in analysis.numbers:
        fits = result.estimate.parts if result.estimate is not None else []
        if len(fits) == 1 and fits[0].rrreg is not None:
            block = fits[0].rrreg
            extra = (f", piUQ {block['piUQ']:.6g} (SE {block['piUQSE']:.6g})"
                     if "piUQ" in block else "")
            notes.append(f"{result.id}: RRreg {block['model']} p={_short(block['p'])}: pi "
                         f"{block['pi']:.6g} (piSE {block['piSE']:.6g}){extra}")
        notes += [f"{result.id}: {message}" for message in result.messages]
    return notes


def _footnotes(analysis: Analysis) -> list[str]:
    notes = []
    if any(q.estimate.clipped for q in analysis.questions):
        notes.append("* the unbiased estimate fell outside [0, 1] (or the simplex); the estimate "
                     "is the maximum-likelihood one on [0, 1]")
    if any(q.estimate.degenerate.any() for q in analysis.questions):
        notes.append("! the whole interval fell outside [0, 1] and collapsed onto 0 or 1")
    return notes


def render_json(analysis: Analysis) -> str:
    """``--format json``."""
    return json.dumps(analysis.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(analysis: Analysis) -> str:
    """A Markdown report (tables in GitHub's pipe syntax)."""
    level = f"{analysis.confidence:.0%}"

    def table(headers: list[str], rows: list[list[str]]) -> list[str]:
        return (["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
                + ["| " + " | ".join(_md_escape(c) for c in r) + " |" for r in rows])

    out = [f"# {analysis.title}", "",
           f"Survey `{analysis.survey}`: {analysis.rows_read:,} rows read, "
           f"{analysis.rows_accepted:,} accepted, {analysis.rejected.total:,} rejected.", ""]
    out += table(["file", "format", "rows"],
                 [[f"`{f.path}`", f.format, f"{f.rows:,}"] for f in analysis.files])
    out += ["", "Versions: " + (", ".join(f"`{v['version']}` ({v['rows']:,} rows)"
                                          for v in analysis.versions if v["seen"])
                                or "none seen"), ""]
    if analysis.rejected.total:
        out += ["## Rejected rows", ""]
        out += table(["reason", "rows", "first rows"], [
            [reason, f"{entry['count']:,}", "<br>".join(
                f"`{e['file']}:{e['row']}` {e['message']}" for e in entry["examples"])]
            for reason, entry in analysis.rejected.to_dict().items()
        ])
        out.append("")
    if analysis.numbers:
        out += ["## Means of randomized numbers", ""]
        out += table(NUMBER_HEADERS, [[f"`{r[0]}`" if r[0] else "", *r[1:]]
                                      for r in number_rows(analysis)])
        out += [""] + [f"- {note}" for note in number_notes(analysis)] + [""]
    if analysis.questions or not analysis.numbers:
        out += ["## Estimates", "",
                f"{level} intervals; standard errors under {VARIANCE_CONVENTION}.", ""]
        rows = []
        for question in analysis.questions:
            for r in estimate_rows(question, question.estimate):
                rows.append([f"`{question.id}`", r[0], f"{r[1]:,}", fmt(r[2]), fmt(r[3]) + r[9],
                             fmt(r[4]), fmt(r[5]), interval_text(r[6], r[7]), fmt(r[8]),
                             question.estimate.ci_method])
        out += table(["question", "answer", "n", "reported", "estimate", "unbiased", "se",
                      f"{level} interval", "Chebyshev ±", "interval method"], rows)
        out += [""] + [f"- {note}" for note in _footnotes(analysis)]
        for question in analysis.questions:
            out.append(f"- `{question.id}`: {design_text(question)}"
                       + "".join(f"; {n}" for n in question.estimate.notes))
    models = [row for question in analysis.questions for row in model_rows(question)]
    if models:
        out += ["", "### RRreg's models", ""]
        out += table(MODEL_HEADERS, [[f"`{r[0]}`" if r[0] else "", *r[1:]] for r in models])
        out += [""] + [f"- {note}" for q in analysis.questions for note in model_notes(q)]
    if analysis.by is not None:
        out += ["", f"## Subgroups by `{analysis.by}`", ""]
        for question in analysis.questions:
            rows = [[group, r[0], f"{r[1]:,}", fmt(r[2]), fmt(r[3]) + r[9],
                     interval_text(r[6], r[7])]
                    for group, estimate in question.groups.items()
                    for r in estimate_rows(question, estimate)]
            out += [f"### `{question.id}`", ""]
            out += table([analysis.by, "answer", "n", "reported", "estimate",
                          f"{level} interval"], rows)
            out.append("")
    out += ["", "## Privacy", "", analysis.privacy["composition"] + ".", ""]
    out += table(["question", "guarantee"], [
        [f"`{e['id']}`", privacy_text(e["epsilon"], e["delta"], e["epsilon_infinite"])
         + ("" if not e["epsilon_infinite"] else f" — {e['statement']}")]
        for e in analysis.privacy["questions"]
    ])
    total = analysis.privacy["per_respondent"]
    out += ["", "Per respondent: " + privacy_text(total["epsilon"], total["delta"],
                                                  total["epsilon_infinite"]) + "."]
    if analysis.direct:
        out += ["", "## Asked directly", ""]
        out += table(["question", "answers"], [
            [f"`{d.id}`", ", ".join(f"{v}: {c:,}" for v, c in d.counts.items())
             + (f", unanswered: {d.missing:,}" if d.missing else "")] for d in analysis.direct
        ])
    out += [f"\nNote: {note}" for note in analysis.notes]
    return "\n".join(out) + "\n"


def render(analysis: Analysis, form: str) -> str:
    """The report in one of FORMATS."""
    renderers: dict[str, Callable[[Analysis], str]] = {
        "table": render_table, "json": render_json, "markdown": render_markdown,
    }
    if form == "html":
        from .html_report import render_html

        return render_html(analysis)
    return renderers[form](analysis)
