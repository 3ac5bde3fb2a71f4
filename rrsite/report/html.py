"""A self-contained HTML report: tables and inline SVG plots, no external assets, no script.

Plots: estimates with their intervals (and the raw report rate beside each), reported vs
de-biased rates, and subgroup comparisons (``--by``). Every text is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from ..analyze.results import CI_METHOD_NAMES, VARIANCE_CONVENTION, Analysis
from . import compliance
from .plots import PlotRow, bars_svg, cumulative_svg, distribution_svg, forest_svg
from .rows import (
    DESIGN_HEADERS,
    MODEL_HEADERS,
    NUMBER_HEADERS,
    answer_rows,
    answers_text,
    by_title,
    column_meanings,
    design_notes,
    design_rows,
    design_summary,
    design_text,
    fmt,
    footnotes,
    groups_of,
    interval_text,
    marks_in,
    model_notes,
    model_rows,
    named,
    number_notes,
    number_rows,
    privacy_text,
    too_wide,
)
from .tables import STYLE


def _legend() -> str:
    return ('<p class="note"><span style="color:#1f5fa8">● estimate with its interval</span>'
            ' &nbsp; <span style="color:#c0392b">◇ reported (randomized) rate</span></p>')


def _cells(cells: Sequence[str], numeric: set[int] | None = None, header: bool = False) -> str:
    tag = "th" if header else "td"
    numeric = numeric or set()
    return "<tr>" + "".join(
        f'<{tag}{" class=num" if i in numeric else ""}>{c}</{tag}>' for i, c in enumerate(cells)
    ) + "</tr>"


def _html_named(analysis: Analysis, qid: str) -> str:
    """A question in HTML: its short name and ``<code>id</code>``, or the id alone."""
    short = analysis.labels.names.get(qid.split(" [", 1)[0])
    code = f"<code>{html.escape(qid)}</code>"
    return f"{html.escape(short)} ({code})" if short else code


def _numbers_html(analysis: Analysis) -> list[str]:
    e = html.escape
    level = f"{analysis.confidence:.0%}"
    body = ["<h2>Means of randomized numbers</h2><table>"
            + _cells(NUMBER_HEADERS, {3, 4, 5, 7}, True)
            + "".join(_cells([f"<code>{e(r[0])}</code>" if r[0] else "", *(e(c) for c in r[1:])],
                             {3, 4, 5, 7}) for r in number_rows(analysis)) + "</table>",
            "<ul class=note>" + "".join(f"<li>{e(n)}</li>" for n in number_notes(analysis))
            + "</ul>"]
    for result in analysis.numbers:
        found = result.deconvolution(analysis.confidence)
        qid = f"<code>{e(result.id)}</code>"
        if isinstance(found, str):
            body.append(f"<p class=note>{qid}: the distribution of the true numbers is "
                        f"{e(found)}.</p>")
            continue
        whole = all(a == b for a, b in zip(found.lows, found.highs, strict=True))
        cells = "each whole number" if whole else (
            f"{len(found.lows)} cells ({e(found.label(0))}; {e(found.label(1))}; ...; "
            f"{e(found.label(len(found.lows) - 1))})")
        notes = "".join(f" {e(m[0].upper() + m[1:])}." for m in found.messages)
        if found.probabilities is not None:
            whiskers = (f"; red: {level} exact interval of each share (Clopper-Pearson for the "
                        "reports in the cell, mapped through the mixture; each holds its own "
                        "share)" if found.ci_low is not None else
                        "; this design blurs the numbers, so a single share has no honest "
                        "interval: the cumulative shares below carry one")
            body.append("<figure>" + distribution_svg(
                found, f"{result.id}: estimated distribution of the true numbers", result.unit)
                + f"<figcaption>{qid}: bars, the estimated share of respondents whose true "
                  f"number is in {cells} (the most likely distribution given the {found.n:,} "
                  f"reports){whiskers}.</figcaption></figure>")
        band = sum(b - a for a, b in zip(found.cumulative_low, found.cumulative_high,
                                         strict=True)) / len(found.lows)
        vague = (f" Here the band is wide (on average {band:.0%} of the scale): {found.n:,} "
                 "reports through this design say little about how the numbers are spread; "
                 "the mean above is known better than the shape." if band > 0.5 else "")
        body.append("<figure>" + cumulative_svg(
            found, f"{result.id}: share of true numbers at most each value", result.unit)
            + f"<figcaption>{qid}: the share of respondents whose true number is at most "
              "each value" + ("; blue line: the best estimate" if found.cumulative is not None
                             else "")
            + f". The shaded band holds the true curve, all of it at once, with {level} "
              "confidence, whatever the numbers' distribution." + vague + notes
            + "</figcaption></figure>")
    return body


def render_html(analysis: Analysis) -> str:
    """The whole report as one HTML document."""
    e = html.escape
    level = f"{analysis.confidence:.0%}"
    body = [f"<h1>{e(analysis.title)}</h1>",
            f"<p>Survey <code>{e(analysis.survey)}</code>: {analysis.rows_read:,} rows read, "
            f"{analysis.rows_accepted:,} accepted, {analysis.rejected.total:,} rejected.</p>"]
    body.append("<table>" + _cells(["file", "format", "rows", "notes"], {2}, True) + "".join(
        _cells([f"<code>{e(f.path)}</code>", e(f.format), f"{f.rows:,}",
                "<br>".join(e(n) for n in f.notes)], {2}) for f in analysis.files) + "</table>")
    body.append("<p>Versions: " + ", ".join(
        f"<code>{e(v['version'])}</code> ({v['rows']:,} rows)" for v in analysis.versions
        if v["seen"]) + "</p>")
    if analysis.rejected.total:
        body.append("<h2>Rejected rows</h2><table>"
                    + _cells(["reason", "rows", "first rows"], {1}, True) + "".join(
                        _cells([e(reason), f"{entry['count']:,}", "<br>".join(
                            f"<code>{e(x['file'])}:{x['row']}</code> {e(x['message'])}"
                            for x in entry["examples"])], {1})
                        for reason, entry in analysis.rejected.to_dict().items())
                    + "</table>")
    if analysis.numbers:
        body.extend(_numbers_html(analysis))
    plot_rows: list[PlotRow] = []
    bar_pairs: list[tuple[str, float, float]] = []
    if analysis.questions or not analysis.numbers:
        methods = sorted({q.estimate.ci_method for q in analysis.questions})
        body.append(f"<h2>Estimates</h2><p>{level} intervals: "
                    + e("; ".join(CI_METHOD_NAMES.get(m, m) for m in methods))
                    + f". Standard errors under {e(VARIANCE_CONVENTION)}.</p>")
        rows = []
        for question in analysis.questions:
            shown = named(analysis, question.id)
            if question.kind == "categorical":
                plot_rows.append(PlotRow(shown, math.nan, math.nan, math.nan, heading=True))
            for r in answer_rows(analysis, question, question.estimate):
                rows.append(_cells([_html_named(analysis, question.id), e(r[0]), f"{r[1]:,}",
                                    fmt(r[2]), fmt(r[3]) + e(r[9]), fmt(r[4]), fmt(r[5]),
                                    interval_text(r[6], r[7]), fmt(r[8]),
                                    e(question.estimate.ci_method)], {2, 3, 4, 5, 6, 8}))
                name = shown if question.kind == "binary" else f"  {r[0]}"
                plot_rows.append(PlotRow(name, r[3], r[6], r[7], r[2]))
                bar_pairs.append((f"{shown}: {r[0]}", r[2], r[3]))
        headers = ["question", "answer", "n", "reported", "estimate", "unbiased", "se",
                   f"{level} interval", "Chebyshev ±", "method"]
        body.append("<table>" + _cells(headers, {2, 3, 4, 5, 6, 8}, True)
                    + "".join(rows) + "</table>")
        notes = []
        for question in analysis.questions:
            notes.append(f"<li><code>{e(question.id)}</code>: {e(question.text)} — design "
                         f"{e(design_text(question))}"
                         + "".join(f"; {e(n)}" for n in question.estimate.notes)
                         + "".join(f"; {e(n)}" for n in too_wide(analysis, question)) + "</li>")
        marks = marks_in(r for q in analysis.questions
                         for r in answer_rows(analysis, q, q.estimate))
        notes += [f"<li>{e(note)}</li>" for note in footnotes(marks)]
        body.append("<ul class=note>" + "".join(notes) + "</ul>")
        body.append("<dl class=note>" + "".join(
            f"<dt>{e(column)}</dt><dd>{e(meaning)}</dd>"
            for column, meaning in column_meanings(level, methods, headers)) + "</dl>")
    if analysis.sample_design is not None:
        body.append("<h2>Design-based estimates</h2><p>" + e(design_summary(analysis))
                    + f"</p><p>Weighted (Hajek) means and Horvitz-Thompson totals, {level} t "
                      "intervals; SRS se is the standard error of a simple random sample of the "
                      "same size, deff = (se / SRS se)<sup>2</sup>, n eff = n / deff.</p><table>"
                    + _cells(DESIGN_HEADERS, set(range(2, 12)), True) + "".join(
                        _cells([f"<code>{e(r[0])}</code>" if r[0] else "",
                                *(e(c) for c in r[1:])], set(range(2, 12)))
                        for r in design_rows(analysis)) + "</table>")
        based_notes = [f"{qid}: {note}" for qid, note in design_notes(analysis)]
        if based_notes:
            body.append("<ul class=note>" + "".join(f"<li>{e(n)}</li>" for n in based_notes)
                        + "</ul>")
    models = [row for question in analysis.questions for row in model_rows(question)]
    if models:
        body.append(f"<h2>RRreg's models</h2><p>Every parameter of the model, with {level} "
                    "intervals.</p><table>" + _cells(MODEL_HEADERS, {3, 4}, True) + "".join(
                        _cells([f"<code>{e(r[0])}</code>" if r[0] else "",
                                *(e(c) for c in r[1:])], {3, 4}) for r in models)
                    + "</table>")
        gof = [note for question in analysis.questions for note in model_notes(question)]
        if gof:
            body.append("<ul class=note>" + "".join(f"<li>{e(n)}</li>" for n in gof) + "</ul>")
    if plot_rows:
        body.append("<figure>" + forest_svg(plot_rows, "Estimates with intervals") + _legend()
                    + f"<figcaption>Estimates with {level} intervals; the diamond is the rate of "
                      "randomized reports before de-biasing.</figcaption></figure>")
        body.append("<figure>" + bars_svg(bar_pairs, "Reported vs de-biased rates")
                    + "<figcaption>Reported (randomized) rate, red, against the de-biased "
                      "estimate, blue.</figcaption></figure>")
    if analysis.by is not None and analysis.questions:
        by = by_title(analysis)
        body.append(f"<h2>Subgroups by <code>{e(by)}</code></h2>")
        for question in analysis.questions:
            group_rows: list[PlotRow] = []
            table = []
            for group, estimate in groups_of(analysis, question):
                if question.kind == "categorical":
                    group_rows.append(PlotRow(group, math.nan, math.nan, math.nan,
                                              heading=True))
                for r in answer_rows(analysis, question, estimate):
                    label = group if question.kind == "binary" else f"  {r[0]}"
                    group_rows.append(PlotRow(label, r[3], r[6], r[7], r[2]))
                    table.append(_cells([e(group), e(r[0]), f"{r[1]:,}", fmt(r[2]),
                                         fmt(r[3]) + e(r[9]), interval_text(r[6], r[7])],
                                        {2, 3, 4}))
            body.append(f"<h3>{_html_named(analysis, question.id)} by {e(by)}</h3><table>"
                        + _cells([e(by), "answer", "n", "reported", "estimate",
                                  f"{level} interval"], {2, 3, 4}, True) + "".join(table)
                        + "</table>")
            group_marks = marks_in(r for _, estimate in groups_of(analysis, question)
                                   for r in answer_rows(analysis, question, estimate))
            group_notes = [*footnotes(group_marks),
                           *too_wide(analysis, question, grouped=True)]
            if group_notes:
                body.append("<ul class=note>" + "".join(f"<li>{e(n)}</li>" for n in group_notes)
                            + "</ul>")
            if group_rows:
                body.append("<figure>" + forest_svg(
                    group_rows, f"{named(analysis, question.id)} by {by}") + _legend()
                    + "</figure>")
    body.extend(compliance.html_parts(analysis))
    body.append("<h2>Privacy</h2><p>" + e(analysis.privacy["composition"]) + ".</p><table>"
                + _cells(["question", "guarantee"], None, True) + "".join(
                    _cells([f"<code>{e(x['id'])}</code>",
                            e(privacy_text(x["epsilon"], x["delta"], x["epsilon_infinite"]))
                            + ("" if not x["epsilon_infinite"]
                               else f'<br><span class="warn">{e(x["statement"])}</span>')])
                    for x in analysis.privacy["questions"]) + "</table>")
    total = analysis.privacy["per_respondent"]
    body.append("<p>Per respondent: <strong>" + e(privacy_text(
        total["epsilon"], total["delta"], total["epsilon_infinite"])) + "</strong>.</p>")
    if analysis.direct:
        body.append("<h2>Asked directly</h2><table>" + _cells(["question", "answers"], None, True)
                    + "".join(_cells([_html_named(analysis, d.id), e(
                        answers_text(analysis, d.id, d.counts)
                        + (f", unanswered: {d.missing:,}" if d.missing else ""))])
                        for d in analysis.direct) + "</table>")
    body.extend(f'<p class="note">Note: {e(n)}</p>' for n in analysis.notes)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{e(analysis.title)} — rrsite analysis</title><style>{STYLE}</style>"
            "</head><body>" + "\n".join(body) + "</body></html>\n")
