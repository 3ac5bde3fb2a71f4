"""The "Did randomized response work?" section of the reports (rrsite.analyze.compliance).

:func:`sentences` gives the section as headed groups of lines, which the terminal, Markdown and
HTML reports lay out each in their way: the split ballot's differences and test, the
comprehension checks beside the estimates, the anchor's correction, the sensitivity bounds and
the extended crosswise model's test.
"""

from __future__ import annotations

from typing import Any

from ..analyze.results import Analysis
from .rows import fmt, interval_text, named

TITLE = "Did randomized response work?"
#: The inattentive shares the reports show of the sensitivity bounds (the JSON has all).
SHOWN_SHARES = (0.0, 0.1, 0.2, 0.3, 0.5)


def _pct(value: Any) -> str:
    return "–" if value is None else f"{value:.0%}"


def _split(analysis: Analysis, entry: dict[str, Any]) -> list[str]:
    level = f"{analysis.confidence:.0%}"
    lines = []
    for answer in entry["answers"]:
        label = analysis.labels.value(entry["question"], answer["answer"])
        if "not_estimated" in answer:
            lines.append(f"{named(analysis, entry['question'])} ({label}): not estimated, "
                         f"{answer['not_estimated']}")
            continue
        verdict = ("more with randomized response" if answer["p_value"] < 1 - analysis.confidence
                   else "not shown to be more")
        lines.append(
            f"{named(analysis, entry['question'])} ({label}): randomized "
            f"{fmt(answer['randomized'])} ({entry['randomized_n']:,} answers) vs direct "
            f"{fmt(answer['direct'])} "
            f"({answer['direct_n']:,}): difference {fmt(answer['difference'])}, {level} interval "
            f"{interval_text(*answer['ci'])}, at least {fmt(answer['lower'])} ({level} one-sided); "
            f"one-sided p = {answer['p_value']:.3g}: {verdict}")
    lines.append(f"  privacy: {entry['privacy']}")
    return lines


def _check(analysis: Analysis, entry: dict[str, Any]) -> list[str]:
    total = entry["right"] + entry["wrong"]
    share = entry["right"] / total if total else None
    understood = entry.get("understood") or {}
    overall = entry.get("estimate") or {}
    return [
        f"{named(analysis, entry['question'])}: {entry['right']:,} of {total:,} answered the "
        f"check right ({_pct(share)})" + (f", {entry['missing']:,} did not answer it"
                                          if entry["missing"] else "")
        + f"; estimate {fmt(_first(overall.get('estimate')))} over everyone, "
        f"{fmt(_first(understood.get('estimate')))} "
        f"{interval_text(*_ci(understood))} among those who understood "
        f"(n {understood.get('n', 0):,}); every answer stays in the main estimate"]


def _first(value: Any) -> float:
    if isinstance(value, dict):  # a choice question's figures, by answer: the last answer's
        value = list(value.values())
    if isinstance(value, list):
        value = value[-1] if value else None
    return float("nan") if value is None else float(value)


def _ci(figures: dict[str, Any]) -> tuple[float, float]:
    ci = figures.get("ci") or [None, None]
    if isinstance(ci, dict):
        ci = list(ci.values())
    if ci and isinstance(ci[0], list):
        ci = ci[-1]
    return (_first(ci[0]), _first(ci[1]))


def _anchor(analysis: Analysis, anchor: dict[str, Any]) -> list[str]:
    level = f"{analysis.confidence:.0%}"
    lines = []
    for entry in anchor["corrected"]:
        lines.append(
            f"{named(analysis, entry['question'])}: attentive share {fmt(entry['attentive'], 2)} "
            f"(anchor {named(analysis, anchor['question'])}); naive {fmt(entry['naive'])}, "
            f"corrected {fmt(entry['estimate'])} {level} {interval_text(*_ci(entry))} "
            f"(n {entry['n']:,})")
        lines += [f"  {note}" for note in entry["notes"]]
    return lines


def _bounds(analysis: Analysis, entry: dict[str, Any]) -> list[str]:
    shown = [r for r in entry["rows"] if round(r["inattentive"], 2) in SHOWN_SHARES]
    return [f"{named(analysis, entry['question'])}: " + "; ".join(
        f"{r['inattentive']:.0%} inattentive: {fmt(r['estimate'])} {interval_text(*r['ci'])}"
        for r in shown)]


def _extended(analysis: Analysis, entry: dict[str, Any]) -> list[str]:
    gof = entry["goodness_of_fit"]
    groups = "; ".join(f"group {g} (p = {v['p']:g}, n {v['n']:,}): {fmt(_first(v['estimate']))}"
                       for g, v in entry["groups"].items())
    test = (f"G2 = {gof['G2']:.2f}, df = {gof['df']:g}, p = {gof['p_value']:.3g}"
            if gof else "no test")
    return [f"{named(analysis, entry['question'])}: {groups}; {test}: {entry['verdict']}"]


def sentences(analysis: Analysis) -> list[tuple[str, list[str]]]:
    """(heading, lines) per part of the section; empty when the survey asks for no check."""
    found = analysis.compliance
    if not found:
        return []
    out: list[tuple[str, list[str]]] = []
    if found["split"]:
        out.append(("Split ballot: randomized against direct answers (more is better)",
                    [line for entry in found["split"] for line in _split(analysis, entry)]))
    if found["checks"]:
        out.append(("Comprehension checks",
                    [line for entry in found["checks"] for line in _check(analysis, entry)]))
    if found["anchor"]:
        out.append(("Inattentive respondents: the anchor question's correction",
                    _anchor(analysis, found["anchor"])))
    if found["extended"]:
        out.append(("Extended crosswise: do the two groups agree?",
                    [line for entry in found["extended"] for line in _extended(analysis, entry)]))
    if found["bounds"]:
        out.append(("Crosswise sensitivity bounds (assumed shares of inattentive respondents)",
                    [line for entry in found["bounds"] for line in _bounds(analysis, entry)]))
    if found["notes"]:
        out.append(("", [f"Note: {note}" for note in found["notes"]]))
    return out


def table_lines(analysis: Analysis) -> list[str]:
    """The section in the terminal report."""
    parts = sentences(analysis)
    if not parts:
        return []
    out = ["", f"{TITLE}"]
    for heading, lines in parts:
        if heading:
            out.append(f"  {heading}:")
        out += [f"    {line}" if heading else f"  {line}" for line in lines]
    return out


def markdown_lines(analysis: Analysis) -> list[str]:
    """The section in the Markdown report."""
    parts = sentences(analysis)
    if not parts:
        return []
    out = ["", f"## {TITLE}"]
    for heading, lines in parts:
        out += ["", f"### {heading}", ""] if heading else [""]
        out += [f"- {line.strip()}" for line in lines]
    return out


def html_parts(analysis: Analysis) -> list[str]:
    """The section in the HTML report."""
    import html

    parts = sentences(analysis)
    if not parts:
        return []
    out = [f"<h2>{html.escape(TITLE)}</h2>"]
    for heading, lines in parts:
        if heading:
            out.append(f"<h3>{html.escape(heading)}</h3>")
        out.append("<ul class=note>" + "".join(f"<li>{html.escape(line.strip())}</li>"
                                               for line in lines) + "</ul>")
    return out
