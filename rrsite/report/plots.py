"""The report's plots as inline SVG (no external assets, no script), and the figures of models.

Forest plots of estimates with their intervals (and the raw report rate beside each), reported
vs de-biased rates, the estimated distribution of a randomized number and its cumulative band,
and a model's odds ratios. Every text is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..estimate.deconvolution import Deconvolution
from .rows import fmt, interval_text, significant

ROW_HEIGHT = 24
LABEL_WIDTH = 220
PLOT_WIDTH = 420
MARGIN = 12
COLOURS = {"estimate": "#1f5fa8", "interval": "#1f5fa8", "reported": "#c0392b",
           "grid": "#d8d8d8", "text": "#222"}



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

    parts = _axes(width, height, title, "100%", base, top, left)
    for share in (0.25, 0.5, 0.75):  # guides, so that a wide band can still be read off
        parts.append(f'<line x1="{left}" y1="{y_of(share):.1f}" x2="{width - MARGIN}" '
                     f'y2="{y_of(share):.1f}" stroke="{COLOURS["grid"]}" stroke-dasharray="3"/>'
                     f'<text x="{left - 4}" y="{y_of(share) + 4:.1f}" text-anchor="end" '
                     f'font-size="10">{share:.0%}</text>')
    upper = " ".join(f"{x_of(x):.1f},{y_of(v):.1f}" for x, v in zip(xs, found.cumulative_high,
                                                                   strict=True))
    lower = " ".join(f"{x_of(x):.1f},{y_of(v):.1f}" for x, v in
                     zip(xs[::-1], found.cumulative_low[::-1], strict=True))
    parts.append(f'<polygon points="{upper} {lower}" fill="{COLOURS["reported"]}" '
                 'fill-opacity="0.12" stroke="none"/>')
    for edge in (upper, lower):  # the band's edges drawn, so its shape shows however wide
        parts.append(f'<polyline points="{edge}" fill="none" stroke="{COLOURS["reported"]}" '
                     'stroke-width="1.2"/>')
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
                 f"{html.escape(unit or 'true number')}: share of respondents at most this"
                 "</text></svg>")
    return "".join(parts)


def odds_ratio_svg(coefficients: Sequence[Any]) -> str:
    """Odds ratios with intervals on a log axis (the coefficients without the intercept)."""
    if not coefficients:
        return ""
    lows = [math.log(max(c.or_low, 1e-6)) for c in coefficients]
    highs = [math.log(min(c.or_high, 1e6)) for c in coefficients]
    lo, hi = min(min(lows), 0.0), max(max(highs), 0.0)
    span = (hi - lo) or 1.0
    left, width, row = 220, 420, 26

    def x(v: float) -> float:
        return left + (v - lo) / span * width

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 120}" '
             f'height="{row * len(coefficients) + 40}" role="img" aria-label="odds ratios">',
             f'<line x1="{x(0):.1f}" y1="0" x2="{x(0):.1f}" y2="{row * len(coefficients)}" '
             'stroke="#888" stroke-dasharray="4"/>']
    for i, (c, a, b) in enumerate(zip(coefficients, lows, highs, strict=True)):
        y = row * i + row / 2
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" '
                     f'font-size="12">{html.escape(c.name)}</text>')
        parts.append(f'<line x1="{x(a):.1f}" y1="{y:.1f}" x2="{x(b):.1f}" y2="{y:.1f}" '
                     f'stroke="{COLOURS["estimate"]}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(math.log(c.odds_ratio)):.1f}" cy="{y:.1f}" r="4" '
                     f'fill="{COLOURS["estimate"]}"/>')
        parts.append(f'<text x="{left + width + 8}" y="{y + 4:.1f}" font-size="11">'
                     f'{c.odds_ratio:.2f} [{c.or_low:.2f}, {c.or_high:.2f}]</text>')
    parts.append(f'<text x="{x(0):.1f}" y="{row * len(coefficients) + 20}" text-anchor="middle" '
                 'font-size="11">odds ratio 1 (log scale)</text></svg>')
    return "".join(parts)


def prevalence_table(label: str, levels: Sequence[dict[str, Any]]) -> str:
    """Predicted prevalence at each level of a factor, each with its interval drawn on 0..1."""
    width = 300
    body = [f"<h3>Predicted prevalence by {html.escape(label)}</h3><table><thead>"
            "<tr><th>level</th><th>prevalence</th><th>interval</th></tr></thead><tbody>"]
    for item in levels:
        bar = (f'<svg width="{width}" height="14"><line x1="{item["ci_low"] * width:.1f}"'
               f' y1="7" x2="{item["ci_high"] * width:.1f}" y2="7" stroke="{COLOURS["estimate"]}"'
               f' stroke-width="2"/><circle cx="{item["estimate"] * width:.1f}" cy="7" '
               f'r="4" fill="{COLOURS["estimate"]}"/></svg>')
        body.append(f"<tr><td>{html.escape(str(item['level']))}</td>"
                    f"<td class=num>{item['estimate']:.3f}</td><td>[{item['ci_low']:.3f}, "
                    f"{item['ci_high']:.3f}] {bar}</td></tr>")
    body.append("</tbody></table>")
    return "".join(body)
