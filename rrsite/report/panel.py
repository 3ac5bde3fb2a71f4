"""A series of waves (rrsite.analyze.panel) rendered: shares per wave, changes, the ledger."""

from __future__ import annotations

import json

from ..analyze.panel import PanelAnalysis
from .tables import Section, Table, number, render_sections


def _shares(result: PanelAnalysis) -> Table:
    rows = [["question", "answer", *(f"wave {w.number}" for w in result.waves)]]
    seen: dict[tuple[str, str], list[str]] = {}
    for index, wave in enumerate(result.waves):
        assert wave.analysis is not None
        for question in wave.analysis.questions:
            e = question.estimate
            for i, label in enumerate(e.labels):
                cells = seen.setdefault((question.id, label), ["–"] * len(result.waves))
                cells[index] = (f"{number(float(e.estimate[i]))} "
                                f"[{number(float(e.ci_low[i]))}, {number(float(e.ci_high[i]))}]")
    for (qid, label), cells in seen.items():
        rows.append([qid, label, *cells])
    return Table(rows, "shares per wave (estimate [interval])")


def _changes(result: PanelAnalysis) -> Table:
    rows = [["question", "answer", "waves", "change", "se", "interval", "n", "how"]]
    for c in result.changes:
        ch = c.change
        rows.append([c.question, c.answer, f"{c.before} -> {c.after}", number(ch.estimate),
                     number(ch.se), f"[{number(ch.ci_low)}, {number(ch.ci_high)}]", f"{ch.n:,}",
                     "paired" if ch.method.startswith("paired") else "independent"])
    return Table(rows, f"change between waves ({result.confidence:.0%} intervals)")


def _ledger(result: PanelAnalysis) -> Table:
    rows = [["respondents", "epsilon", "per question (waves answered: epsilon)"]]
    for entry in result.ledger:
        parts = "; ".join(
            f"{qid} {','.join(map(str, p['waves']))}: {p['epsilon']:.4g}"
            + ("" if p["permanent"] else " (asked afresh)")
            for qid, p in entry["questions"].items())
        rows.append([f"{entry['respondents']:,}",
                     "none" if entry["epsilon"] is None else f"{entry['epsilon']:.6g}", parts])
    return Table(rows, "the ledger per respondent (exact composition over the waves answered)")


def panel_section(result: PanelAnalysis) -> Section:
    """Shares, changes and the ledger as one section."""
    notes = list(result.notes)
    for wave in result.waves:
        stated = wave.manifest.get("privacy", {}).get("series") or {}
        if stated:
            notes.append(f"wave {wave.number} ({wave.survey}) states: one wave epsilon "
                         f"{stated['one_wave']['epsilon']:.6g}, through this wave "
                         f"{stated['through_this_wave']['epsilon']:.6g}, all waves "
                         f"{stated['all_waves']['epsilon']:.6g}")
    return Section(f"series {result.series}", "", [_shares(result), _changes(result),
                                                  _ledger(result)], notes)


def render(result: PanelAnalysis, fmt: str) -> str:
    """The series in one of analyze's formats."""
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=2) + "\n"
    return render_sections([panel_section(result)], fmt, f"Series {result.series}")
