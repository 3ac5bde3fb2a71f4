"""Rendering ``rrsite analyze --joint``: the table of true-answer combinations, in every format."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from ..analyze.joint import JointResult
from .plots import PlotRow, forest_svg
from .tables import Section, Table, render_sections


def _label(result: JointResult, answers: Sequence[str]) -> str:
    return ", ".join(f"{q}={a}" for q, a in zip(result.questions, answers, strict=True))


def _rows(result: JointResult) -> list[list[str]]:
    f = result.fit
    pct = f"{f.confidence:.0%}"
    rows = [["true answers", "estimate", f"{pct} low", f"{pct} high"]]
    for label, e, lo, hi in zip(f.labels, f.estimate, f.ci_low, f.ci_high, strict=True):
        rows.append([_label(result, label), f"{e:.4f}", f"{lo:.4f}", f"{hi:.4f}"])
    return rows


def _notes(result: JointResult) -> list[str]:
    f = result.fit
    left = ", ".join(f"{n:,} missing {q}" for q, n in result.left_out.items() if n) or "none"
    lines = [f"N = {f.n:,} of {result.rows_accepted:,} accepted rows (left out: {left})",
             f"maximum likelihood over the simplex (EM + Newton), log-likelihood = {f.loglik:.4f}"
             f", optimality gap {f.optimality_gap:.1e}; intervals: profile likelihood"]
    for t in f.nuisance:
        se = f"{t.se:.4f}" if math.isfinite(t.se) else "not given"
        bound = ", on its bound" if t.on_boundary else ""
        lines.append(f"{t.name} of {t.question} ({t.meaning}), estimated with the table: "
                     f"{t.estimate:.4f} (SE {se}, {f.confidence:.0%} profile interval "
                     f"{t.ci_low:.4f} to {t.ci_high:.4f}{bound})"
                     "; the cells' intervals re-maximise over it")
    for q, shares in result.margins.items():
        lines.append(f"margin of {q}: " + ", ".join(f"{v} {s:.4f}" for v, s in shares.items()))
    for p in result.privacy:
        lines.append(f"privacy of the combination (version {p['version']}, basic composition): "
                     f"{p['combination']} [{'; '.join(p['questions'])}]")
    lines.extend(f.messages)
    return lines


def joint_section(result: JointResult) -> Section:
    """The table, its notes and (HTML) a forest plot of the cells."""
    f = result.fit
    title = f"joint prevalence: {', '.join(result.questions)}"
    plot = forest_svg([PlotRow(_label(result, label), float(e), float(lo), float(hi))
                       for label, e, lo, hi in zip(f.labels, f.estimate, f.ci_low, f.ci_high,
                                                   strict=True)], title)
    figure = (f"<figure>{plot}<figcaption>each combination's share with its profile-likelihood "
              "interval</figcaption></figure>")
    return Section(title, "", [Table(_rows(result))], _notes(result), [figure])


def render(result: JointResult, fmt: str) -> str:
    """The table in one of analyze's formats."""
    if fmt == "json":
        return json.dumps({"joint": result.to_dict()}, indent=2) + "\n"
    return render_sections([joint_section(result)], fmt,
                           f"Joint prevalence: {', '.join(result.questions)}")
