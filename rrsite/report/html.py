"""A self-contained HTML report: tables and inline SVG plots, no external assets, no script.

Plots: estimates with their intervals (and the raw report rate beside each), reported vs
de-biased rates, and subgroup comparisons (``--by``). Every text is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..analyze.api import CI_METHOD_NAMES, VARIANCE_CONVENTION, Analysis
from ..estimate.deconvolution import Deconvolution
from .rows import (
    DESIGN_HEADERS,
    MODEL_HEADERS,
    NUMBER_HEADERS,
    column_meanings,
    design_notes,
    design_rows,
    design_summary,
    design_text,
    estimate_rows,
    fmt,
    footnotes,
    interval_text,
    marks_in,
    model_notes,
    model_rows,
    number_notes,
    number_rows,
    privacy_text,
    significant,
    uninformative,
)

ROW_HEIGHT = 24
LABEL_WIDTH = 220
PLOT_WIDTH = 420
MARGIN = 12
COLOURS = {"estimate": "#1f5fa8", "interval": "#1f5fa8", "reported": "#c0392b",
           "grid": "#d8d8d8", "text": "#222"}

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.92rem}
th,td{border-bottom:1px solid #e4e4e4;padding:.3rem .6rem;text-align:left;vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code{background:#f4f4f4;padding:0 .25rem;border-radius:3px}
dl.note dt{font-weight:600;margin-top:.3rem}dl.note dd{margin-left:1.2rem}
.note{color:#555;font-size:.9rem}.warn{color:#a33}
figure{margin:1rem 0}figcaption{font-size:.9rem;color:#444}
svg text{font-family:inherit;font-size:12px}
"""


@dataclass
class PlotRow:
    """One row of a forest plot."""

    label: str
    estimate: float
    low: float
    high: float
    reported: float | None = None
    heading: bool = False


def _x(value: float) -> float:
    return LABEL_WIDTH + MARGIN + min(max(value, 0.0), 1.0) * PLOT_WIDTH


def forest_svg(rows: Sequence[PlotRow], title: str) -> str:
    """Dots (estimates) with interval bars on a 0..1 axis; diamonds for reported rates."""
    height = (len(rows) + 2) * ROW_HEIGHT + MARGIN
    width = LABEL_WIDTH + PLOT_WIDTH + 2 * MARGIN + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
             f"<title>{html.escape(title)}</title>"]
    axis_y = (len(rows) + 1) * ROW_HEIGHT
    for tick in range(0, 11):
        x = _x(tick / 10)
        parts.append(f'<line x1="{x:.1f}" y1="{MARGIN}" x2="{x:.1f}" y2="{axis_y}" '
                     f'stroke="{COLOURS["grid"]}" stroke-width="1"/>')
        if tick % 2 == 0:
            parts.append(f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle">'
                         f"{tick / 10:.1f}</text>")
    for i, row in enumerate(rows):
        y = MARGIN + (i + 0.5) * ROW_HEIGHT + 4
        weight = ' font-weight="bold"' if row.heading else ""
        parts.append(f'<text x="{LABEL_WIDTH}" y="{y + 4:.1f}" text-anchor="end"{weight}>'
                     f"{html.escape(row.label)}</text>")
        if row.heading or not math.isfinite(row.estimate):
            continue
        x0, x1, xe = _x(row.low), _x(row.high), _x(row.estimate)
        parts.append(f'<line x1="{x0:.1f}" y1="{y:.1f}" x2="{x1:.1f}" y2="{y:.1f}" '
                     f'stroke="{COLOURS["interval"]}" stroke-width="2.5"/>')
        for xb in (x0, x1):
            parts.append(f'<line x1="{xb:.1f}" y1="{y - 5:.1f}" x2="{xb:.1f}" y2="{y + 5:.1f}" '
                         f'stroke="{COLOURS["interval"]}" stroke-width="2"/>')
        parts.append(f'<circle cx="{xe:.1f}" cy="{y:.1f}" r="5" fill="{COLOURS["estimate"]}">'
                     f"<title>estimate {fmt(row.estimate)} {interval_text(row.low, row.high)}"
                     "</title></circle>")
        if row.reported is not None and math.isfinite(row.reported):
            xr = _x(row.reported)
            parts.append(f'<path d="M{xr:.1f},{y - 6:.1f} L{xr + 6:.1f},{y:.1f} '
                         f'L{xr:.1f},{y + 6:.1f} L{xr - 6:.1f},{y:.1f} Z" fill="none" '
                         f'stroke="{COLOURS["reported"]}" stroke-width="1.8">'
                         f"<title>reported {fmt(row.reported)}</title></path>")
    parts.append("</svg>")
    return "".join(parts)


def bars_svg(pairs: Sequence[tuple[str, float, float]], title: str) -> str:
    """Grouped horizontal bars: reported rate (red) and de-biased estimate (blue) per answer."""
    bar = 9
    step = 2 * bar + 10
    height = len(pairs) * step + 2 * ROW_HEIGHT
    width = LABEL_WIDTH + PLOT_WIDTH + 2 * MARGIN + 60
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
             f"<title>{html.escape(title)}</title>"]
    axis_y = len(pairs) * step + MARGIN
    for tick in range(0, 11, 2):
        x = _x(tick / 10)
        parts.append(f'<line x1="{x:.1f}" y1="{MARGIN}" x2="{x:.1f}" y2="{axis_y}" '
                     f'stroke="{COLOURS["grid"]}"/>'
                     f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle">{tick / 10:.1f}'
                     "</text>")
    for i, (label, reported, estimate) in enumerate(pairs):
        y = MARGIN + i * step
        parts.append(f'<text x="{LABEL_WIDTH}" y="{y + bar + 4}" text-anchor="end">'
                     f"{html.escape(label)}</text>")
        for j, (value, colour, name) in enumerate(
                ((reported, COLOURS["reported"], "reported"),
                 (estimate, COLOURS["estimate"], "de-biased"))):
            if not math.isfinite(value):
                continue
            w = _x(value) - _x(0.0)
            parts.append(f'<rect x="{_x(0.0):.1f}" y="{y + j * bar}" width="{w:.1f}" '
                         f'height="{bar - 1}" fill="{colour}"><title>{name} {fmt(value)}'
                         "</title></rect>"
                         f'<text x="{_x(0.0) + w + 4:.1f}" y="{y + j * bar + bar - 1}" '
                         f'font-size="10">{fmt(value)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _legend() -> str:
    return ('<p class="note"><span style="color:#1f5fa8">● estimate with its interval</span>'
            ' &nbsp; <span style="color:#c0392b">◇ reported (randomized) rate</span></p>')


def _cells(cells: Sequence[str], numeric: set[int] | None = None, header: bool = False) -> str:
    tag = "th" if header else "td"
    numeric = numeric or set()
    return "<tr>" + "".join(
        f'<{tag}{" class=num" if i in numeric else ""}>{c}</{tag}>' for i, c in enumerate(cells)
    ) + "</tr>"


def _axes(width: int, height: int, title: str, top_label: str, base: float, top: float,
          left: float) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
            f"<title>{html.escape(title)}</title>",
            f'<line x1="{left}" y1="{base}" x2="{width - MARGIN}" y2="{base}" '
            f'stroke="{COLOURS["grid"]}"/>',
            f'<text x="{left - 4}" y="{top + 4}" text-anchor="end">{top_label}</text>',
            f'<text x="{left - 4}" y="{base}" text-anchor="end">0</text>']


def distribution_svg(found: Deconvolution, title: str, unit: str | None) -> str:
    """Bars of the estimated shares of the true numbers per cell.

    With whiskers where the design gives exact intervals (a mixture's).
    """
    assert found.probabilities is not None
    width, height = LABEL_WIDTH + PLOT_WIDTH + 2 * MARGIN, 220
    base, top, left = height - 40, 16, MARGIN + 40
    k = len(found.probabilities)
    highs = found.ci_high if found.ci_high is not None else found.probabilities
    top_value = max(max(highs, default=0.0), max(found.probabilities, default=0.0), 1e-12)
    slot = (width - MARGIN - left) / max(k, 1)

    def y_of(value: float) -> float:
        return base - (base - top) * value / top_value

    parts = _axes(width, height, title, f"{top_value:.2g}", base, top, left)
    labels = max(1, k // 8)
    for i, p in enumerate(found.probabilities):
        x = left + i * slot
        tip = f"{found.label(i)}: {p:.3f}"
        whisker = ""
        if found.ci_low is not None and found.ci_high is not None:
            lo, hi = found.ci_low[i], found.ci_high[i]
            tip += f" [{lo:.3f}, {hi:.3f}]"
            whisker = (f'<line x1="{x + slot / 2:.1f}" y1="{y_of(lo):.1f}" '
                       f'x2="{x + slot / 2:.1f}" y2="{y_of(hi):.1f}" '
                       f'stroke="{COLOURS["reported"]}"/>')
        parts.append(f'<rect x="{x + 1:.1f}" y="{y_of(p):.1f}" width="{max(slot - 2, 1):.1f}" '
                     f'height="{base - y_of(p):.1f}" fill="{COLOURS["estimate"]}">'
                     f"<title>{html.escape(tip)}</title></rect>{whisker}")
        if i % labels == 0:
            parts.append(f'<text x="{x + slot / 2:.1f}" y="{base + 14}" text-anchor="middle" '
                         f'font-size="10">{significant(found.centres[i], 3)}</text>')
    parts.append(f'<text x="{width / 2:.1f}" y="{height - 6}" text-anchor="middle">'
                 f"{html.escape(unit or 'true number')}</text></svg>")
    return "".join(parts)


def cumulative_svg(found: Deconvolution, title: str, unit: str | None) -> str:
    """The cumulative shares: the band as a shaded area, the estimate as a line."""
    width, height = LABEL_WIDTH + PLOT_WIDTH + 2 * MARGIN, 220
    base, top, left = height - 40, 16, MARGIN + 40
    xs = np.array(found.highs, dtype=np.float64)
    span = float(xs[-1] - found.lows[0]) or 1.0

    def x_of(value: float) -> float:
        return left + (width - MARGIN - left) * (value - found.lows[0]) / span

    def y_of(value: float) -> float:
        return base - (base - top) * value

    parts = _axes(width, height, title, "1", base, top, left)
    upper = " ".join(f"{x_of(x):.1f},{y_of(v):.1f}" for x, v in zip(xs, found.cumulative_high,
                                                                   strict=True))
    lower = " ".join(f"{x_of(x):.1f},{y_of(v):.1f}" for x, v in
                     zip(xs[::-1], found.cumulative_low[::-1], strict=True))
    parts.append(f'<polygon points="{upper} {lower}" fill="{COLOURS["reported"]}" '
                 'fill-opacity="0.25" stroke="none"/>')
    if found.cumulative is not None:
        line = " ".join(f"{x_of(x):.1f},{y_of(v):.1f}" for x, v in zip(xs, found.cumulative,
                                                                      strict=True))
        parts.append(f'<polyline points="{line}" fill="none" stroke="{COLOURS["estimate"]}" '
                     'stroke-width="2"/>')
    for i in range(len(xs)):
        tip = f"at most {xs[i]:,.6g}: "
        if found.cumulative is not None:
            tip += f"{found.cumulative[i]:.3f} "
        tip += f"[{found.cumulative_low[i]:.3f}, {found.cumulative_high[i]:.3f}]"
        middle = (found.cumulative_low[i] + found.cumulative_high[i]) / 2
        parts.append(f'<circle cx="{x_of(xs[i]):.1f}" cy="{y_of(middle):.1f}" r="5" '
                     f'fill-opacity="0"><title>{html.escape(tip)}</title></circle>')
    for value in np.linspace(found.lows[0], xs[-1], 5):
        parts.append(f'<text x="{x_of(value):.1f}" y="{base + 14}" text-anchor="middle" '
                     f'font-size="10">{significant(value, 3)}</text>')
    parts.append(f'<text x="{width / 2:.1f}" y="{height - 6}" text-anchor="middle">'
                 f"{html.escape(unit or 'true number')}: share at most this</text></svg>")
    return "".join(parts)


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
                + f"<figcaption>{qid}: the estimated share of true numbers in {cells}, "
                  f"bars (maximum likelihood, {found.n:,} reports){whiskers}.</figcaption>"
                  "</figure>")
        body.append("<figure>" + cumulative_svg(
            found, f"{result.id}: share of true numbers at most each value", result.unit)
            + f"<figcaption>{qid}: the share of true numbers at most each value"
            + (", blue line (maximum likelihood)" if found.cumulative is not None else "")
            + f"; red band: {level} simultaneous bounds, which hold at every value at once "
              "whatever the distribution (the reports' Dvoretzky-Kiefer-Wolfowitz band carried "
              "through the design's law of the report)." + notes + "</figcaption></figure>")
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
            if question.kind == "categorical":
                plot_rows.append(PlotRow(question.id, math.nan, math.nan, math.nan, heading=True))
            for r in estimate_rows(question, question.estimate):
                rows.append(_cells([f"<code>{e(question.id)}</code>", e(r[0]), f"{r[1]:,}",
                                    fmt(r[2]), fmt(r[3]) + e(r[9]), fmt(r[4]), fmt(r[5]),
                                    interval_text(r[6], r[7]), fmt(r[8]),
                                    e(question.estimate.ci_method)], {2, 3, 4, 5, 6, 8}))
                name = question.id if question.kind == "binary" else f"  {r[0]}"
                plot_rows.append(PlotRow(name, r[3], r[6], r[7], r[2]))
                bar_pairs.append((f"{question.id}: {r[0]}", r[2], r[3]))
        headers = ["question", "answer", "n", "reported", "estimate", "unbiased", "se",
                   f"{level} interval", "Chebyshev ±", "method"]
        body.append("<table>" + _cells(headers, {2, 3, 4, 5, 6, 8}, True)
                    + "".join(rows) + "</table>")
        notes = []
        for question in analysis.questions:
            notes.append(f"<li><code>{e(question.id)}</code>: {e(question.text)} — design "
                         f"{e(design_text(question))}"
                         + "".join(f"; {e(n)}" for n in question.estimate.notes)
                         + "".join(f"; {e(n)}" for n in uninformative(question)) + "</li>")
        marks = marks_in(r for q in analysis.questions for r in estimate_rows(q, q.estimate))
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
        body.append(f"<h2>Subgroups by <code>{e(analysis.by)}</code></h2>")
        for question in analysis.questions:
            group_rows: list[PlotRow] = []
            table = []
            for group, estimate in question.groups.items():
                if question.kind == "categorical":
                    group_rows.append(PlotRow(group, math.nan, math.nan, math.nan, heading=True))
                for r in estimate_rows(question, estimate):
                    label = group if question.kind == "binary" else f"  {r[0]}"
                    group_rows.append(PlotRow(label, r[3], r[6], r[7], r[2]))
                    table.append(_cells([e(group), e(r[0]), f"{r[1]:,}", fmt(r[2]),
                                         fmt(r[3]) + e(r[9]), interval_text(r[6], r[7])],
                                        {2, 3, 4}))
            body.append(f"<h3><code>{e(question.id)}</code> by {e(analysis.by)}</h3><table>"
                        + _cells([e(analysis.by), "answer", "n", "reported", "estimate",
                                  f"{level} interval"], {2, 3, 4}, True) + "".join(table)
                        + "</table>")
            group_marks = marks_in(r for estimate in question.groups.values()
                                   for r in estimate_rows(question, estimate))
            group_notes = [*footnotes(group_marks),
                           *uninformative(question, question.groups, analysis.by)]
            if group_notes:
                body.append("<ul class=note>" + "".join(f"<li>{e(n)}</li>" for n in group_notes)
                            + "</ul>")
            if group_rows:
                body.append("<figure>" + forest_svg(group_rows, f"{question.id} by {analysis.by}")
                            + _legend() + "</figure>")
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
                    + "".join(_cells([f"<code>{e(d.id)}</code>", e(", ".join(
                        f"{v}: {c:,}" for v, c in d.counts.items())
                        + (f", unanswered: {d.missing:,}" if d.missing else ""))])
                        for d in analysis.direct) + "</table>")
    body.extend(f'<p class="note">Note: {e(n)}</p>' for n in analysis.notes)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{e(analysis.title)} — rrsite analysis</title><style>{STYLE}</style>"
            "</head><body>" + "\n".join(body) + "</body></html>\n")
