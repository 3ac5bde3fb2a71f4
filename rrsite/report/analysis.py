"""Rendering an Analysis: terminal table, JSON, Markdown (HTML lives in html_report.py).

The rows, marks and words these share with the HTML report are in report_rows.py.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable

from ..analyze.results import CI_METHOD_NAMES, VARIANCE_CONVENTION, Analysis
from . import compliance
from .rows import (
    DESIGN_HEADERS,
    MODEL_HEADERS,
    NUMBER_HEADERS,
    answer_rows,
    answers_text,
    by_title,
    column_meanings,
    design_by_rows,
    design_entries,
    design_notes,
    design_rows,
    design_summary,
    design_text,
    fmt,
    footnotes,
    group_name,
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

FORMATS = ("table", "json", "markdown", "html")


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
    methods = sorted({q.estimate.ci_method for q in analysis.questions})
    if analysis.numbers:
        out += ["", f"Means of randomized numbers ({level} intervals):"]
        out += ["  " + line for line in _table(NUMBER_HEADERS, number_rows(analysis),
                                               {3, 4, 5, 7})]
        out += ["  " + note for note in number_notes(analysis)]
    if analysis.questions or not analysis.numbers:
        out += ["", f"Estimates with {level} intervals: "
                + "; ".join(CI_METHOD_NAMES.get(m, m) for m in methods)
                + f". Standard errors under {VARIANCE_CONVENTION}."]
        headers = ["question", "answer", "n", "reported", "estimate", "unbiased", "se",
                   f"{level} interval", "Chebyshev ±", ""]
        rows = []
        marks: set[str] = set()
        for question in analysis.questions:
            shown = answer_rows(analysis, question, question.estimate)
            marks |= marks_in(shown)
            for i, r in enumerate(shown):
                rows.append([named(analysis, question.id) if i == 0 else "", r[0], f"{r[1]:,}",
                             fmt(r[2]),
                             fmt(r[3]), fmt(r[4]), fmt(r[5]), interval_text(r[6], r[7]),
                             fmt(r[8]), r[9]])
        out += _table(headers, rows, {2, 3, 4, 5, 6, 8})
        out += footnotes(marks)
        out += _legend(column_meanings(level, methods, headers))
    for question in analysis.questions:
        out += [f"  {question.id}: {design_text(question)}; {question.estimate.ci_method}"
                + (f"; {question.missing:,} unanswered" if question.missing else "")]
        out += [f"    {note}" for note in question.estimate.notes]
        out += [f"    note: {sentence}" for sentence in too_wide(analysis, question)]
    out += design_lines(analysis, level)
    out += compliance.table_lines(analysis)
    models = [row for question in analysis.questions for row in model_rows(question)]
    if models:
        out += ["", f"RRreg's models ({level} intervals):"]
        out += ["  " + line for line in _table(MODEL_HEADERS, models, {3, 4})]
        out += ["  " + note for q in analysis.questions for note in model_notes(q)]
    if analysis.by is not None and analysis.questions:
        out += ["", f"Subgroups by {by_title(analysis)}:"]
        for question in analysis.questions:
            rows = []
            marks = set()
            for group, estimate in groups_of(analysis, question):
                shown = answer_rows(analysis, question, estimate)
                marks |= marks_in(shown)
                for i, r in enumerate(shown):
                    rows.append([group_name(analysis, group) if i == 0 else "", r[0], f"{r[1]:,}",
                                 fmt(r[2]), fmt(r[3]), interval_text(r[6], r[7]), r[9]])
            out += ["", f"  {named(analysis, question.id)}"]
            out += ["  " + line for line in _table(
                [by_title(analysis), "answer", "n", "reported", "estimate", f"{level} interval",
                 ""], rows, {2, 3, 4})]
            out += ["  " + note for note in footnotes(marks)]
            out += [f"  note: {sentence}"
                    for sentence in too_wide(analysis, question, grouped=True)]
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
            counts = answers_text(analysis, direct.id, direct.counts, " ")
            out.append(f"  {named(analysis, direct.id)}: {counts}"
                       + (f", unanswered {direct.missing:,}" if direct.missing else ""))
    out += [f"Note: {note}" for note in analysis.notes]
    return "\n".join(out) + "\n"


def _legend(meanings: list[tuple[str, str]]) -> list[str]:
    """The columns explained, one a line, wrapped at 100 columns."""
    width = max((len(column) for column, _ in meanings), default=0) + 2
    lines = ["Columns:"]
    for column, meaning in meanings:
        lines += textwrap.wrap(meaning, 100, initial_indent=f"  {column:<{width}}",
                               subsequent_indent=" " * (width + 2))
    return lines


def design_lines(analysis: Analysis, level: str) -> list[str]:
    """The design-based section of the terminal report."""
    if analysis.sample_design is None:
        return []
    out = ["", f"Design-based estimates (weighted Hajek mean, Horvitz-Thompson total; {level} "
           "t intervals):", "  " + design_summary(analysis)]
    out += ["  " + line for line in _table(DESIGN_HEADERS, design_rows(analysis),
                                           {2, 3, 4, 6, 7, 8, 9, 10, 11})]
    out += [f"  {qid}: mean with known N = {fmt(f['mean_known_n']['estimate'])} "
            f"(se {fmt(f['mean_known_n']['se'])})"
            for qid, based in design_entries(analysis)
            for f in based["values"].values() if "mean_known_n" in f]
    out += [f"  {qid}: {note}" for qid, note in design_notes(analysis)]
    by_rows = design_by_rows(analysis)
    if by_rows:
        out += ["", f"  Design-based subgroups by {by_title(analysis)} (domains of the design):"]
        out += ["  " + line for line in _table(
            ["question", by_title(analysis), "answer", "n", "estimate", "se", "interval", "deff"],
            by_rows, {3, 4, 5, 7})]
    out.append("  SRS se: the standard error of a simple random sample of the same size; deff = "
               "(se / SRS se)^2; n eff = n / deff. Design-based estimates are the unbiased "
               "ones, not clipped to [0, 1].")
    return out


def render_json(analysis: Analysis) -> str:
    """``--format json``."""
    return json.dumps(analysis.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md_named(analysis: Analysis, qid: str) -> str:
    """A question in Markdown: ``Short name (`id`)`` or `` `id` ``."""
    short = analysis.labels.names.get(qid.split(" [", 1)[0])
    return f"{short} (`{qid}`)" if short else f"`{qid}`"


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
            for r in answer_rows(analysis, question, question.estimate):
                rows.append([_md_named(analysis, question.id), r[0], f"{r[1]:,}", fmt(r[2]),
                             fmt(r[3]) + r[9],
                             fmt(r[4]), fmt(r[5]), interval_text(r[6], r[7]), fmt(r[8]),
                             question.estimate.ci_method])
        headers = ["question", "answer", "n", "reported", "estimate", "unbiased", "se",
                   f"{level} interval", "Chebyshev ±", "interval method"]
        out += table(headers, rows)
        marks = marks_in(r for q in analysis.questions
                         for r in answer_rows(analysis, q, q.estimate))
        out += [""] + [f"- {note}" for note in footnotes(marks)]
        methods = [q.estimate.ci_method for q in analysis.questions]
        out += [""] + [f"- **{column}**: {meaning}"
                       for column, meaning in column_meanings(level, methods, headers)]
        out += [""]
        for question in analysis.questions:
            out.append(f"- `{question.id}`: {design_text(question)}"
                       + "".join(f"; {n}" for n in question.estimate.notes)
                       + "".join(f"; {n}" for n in too_wide(analysis, question)))
    if analysis.sample_design is not None:
        out += ["", "## Design-based estimates", "", design_summary(analysis), "",
                f"Weighted (Hajek) means and Horvitz-Thompson totals, {level} t intervals; SRS se "
                "is the standard error of a simple random sample of the same size, deff = "
                "(se / SRS se)^2, n eff = n / deff.", ""]
        out += table(DESIGN_HEADERS, [[f"`{r[0]}`" if r[0] else "", *r[1:]]
                                      for r in design_rows(analysis)])
        out += [""] + [f"- `{qid}`: {note}" for qid, note in design_notes(analysis)]
        by_rows = design_by_rows(analysis)
        if by_rows:
            out += ["", f"### Design-based subgroups by `{by_title(analysis)}`", ""]
            out += table(["question", by_title(analysis), "answer", "n", "estimate", "se",
                          "interval", "deff"],
                         [[f"`{r[0]}`" if r[0] else "", *r[1:]] for r in by_rows])
    out += compliance.markdown_lines(analysis)
    models = [row for question in analysis.questions for row in model_rows(question)]
    if models:
        out += ["", "### RRreg's models", ""]
        out += table(MODEL_HEADERS, [[f"`{r[0]}`" if r[0] else "", *r[1:]] for r in models])
        out += [""] + [f"- {note}" for q in analysis.questions for note in model_notes(q)]
    if analysis.by is not None and analysis.questions:
        out += ["", f"## Subgroups by `{by_title(analysis)}`", ""]
        for question in analysis.questions:
            rows = [[group_name(analysis, group), r[0], f"{r[1]:,}", fmt(r[2]), fmt(r[3]) + r[9],
                     interval_text(r[6], r[7])]
                    for group, estimate in groups_of(analysis, question)
                    for r in answer_rows(analysis, question, estimate)]
            out += [f"### {_md_named(analysis, question.id)}", ""]
            out += table([by_title(analysis), "answer", "n", "reported", "estimate",
                          f"{level} interval"], rows)
            group_marks = marks_in(r for _, estimate in groups_of(analysis, question)
                                   for r in answer_rows(analysis, question, estimate))
            notes = [*footnotes(group_marks),
                     *too_wide(analysis, question, grouped=True)]
            out += [""] + [f"- {note}" for note in notes] if notes else []
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
            [_md_named(analysis, d.id), answers_text(analysis, d.id, d.counts)
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
        from .html import render_html

        return render_html(analysis)
    return renderers[form](analysis)
