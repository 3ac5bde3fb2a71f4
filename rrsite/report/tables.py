"""Tables and pages every renderer shares: aligned text, Markdown, HTML, and the page around them.

A result that is shown as a table (a model's coefficients, a joint table, correlations) becomes a
:class:`Section`: a title, the table's rows (header first), the lines under it, and for HTML any
figures. :func:`render_sections` writes sections in one of analyze's formats (table, markdown,
html; JSON is each result's own ``to_dict``), so every kind of result looks the same.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

#: The report pages' style sheet (self-contained pages: no external assets, no script).
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


def number(value: float, digits: int = 3) -> str:
    """A coefficient-table figure: fixed decimals, scientific when tiny, inf/-inf/nan spelled."""
    if not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if value != 0 and abs(value) < 10 ** -digits:
        return f"{value:.1e}"
    return f"{value:.{digits}f}"


def aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as plain-text lines: the first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                      for i, (c, w) in enumerate(zip(r, widths, strict=True))) for r in rows]


def markdown_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows (header first) as a Markdown table: the first column left, the others right."""
    return ["| " + " | ".join(rows[0]) + " |",
            "|" + "|".join(["---"] + ["---:"] * (len(rows[0]) - 1)) + "|",
            *("| " + " | ".join(r) + " |" for r in rows[1:])]


def html_table(rows: Sequence[Sequence[str]]) -> str:
    """Rows (header first) as an HTML table; every column but the first is numeric."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in rows[0])
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i else ""}>{html.escape(c)}</td>'
                                    for i, c in enumerate(r)) + "</tr>" for r in rows[1:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_list(lines: Sequence[str]) -> str:
    """Lines as an HTML bullet list."""
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"


def html_page(title: str, body: str) -> str:
    """A self-contained HTML page around ``body``."""
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(title)}</title><style>{STYLE}</style></head><body>"
            f"{body}</body></html>\n")


@dataclass
class Table:
    """A table with an optional title line of its own (a second table under a section)."""

    rows: list[list[str]]
    title: str = ""


@dataclass
class Section:
    """One result as a title, its tables, the lines under them and (HTML only) figures."""

    title: str
    code: str
    tables: list[Table]
    notes: list[str]
    #: HTML fragments shown after the notes (plots, further tables).
    figures: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Plain text: ``title: code``, the aligned tables, the notes."""
        out = [f"{self.title}: {self.code}" if self.code else self.title]
        for table in self.tables:
            if table.title:
                out.append(table.title + ":")
            out.extend(aligned(table.rows))
        out.extend(self.notes)
        return "\n".join(out) + "\n"

    def markdown(self) -> str:
        """A level-3 heading, the tables, the notes as a list."""
        heading = self.title[:1].upper() + self.title[1:]
        out = [f"### {heading}: `{self.code}`\n" if self.code else f"### {heading}\n"]
        for table in self.tables:
            if table.title:
                out.append(table.title[:1].upper() + table.title[1:] + ":\n")
            out.extend(markdown_table(table.rows))
            out.append("")
        out.extend(f"- {line}" for line in self.notes)
        return "\n".join(out) + "\n"

    def html(self) -> str:
        """A level-2 heading, the tables, the notes, the figures."""
        heading = html.escape(self.title[:1].upper() + self.title[1:])
        out = [f"<h2>{heading}: <code>{html.escape(self.code)}</code></h2>" if self.code
               else f"<h2>{heading}</h2>"]
        for table in self.tables:
            if table.title:
                out.append(f"<h3>{html.escape(table.title[:1].upper() + table.title[1:])}</h3>")
            out.append(html_table(table.rows))
        out.append(html_list(self.notes))
        out.extend(self.figures)
        return "\n".join(out)


def render_sections(sections: Sequence[Section], fmt: str, title: str) -> str:
    """Sections as plain text, Markdown or one HTML page titled ``title``."""
    if fmt == "html":
        return html_page(title, "\n".join(s.html() for s in sections))
    if fmt == "markdown":
        return "\n".join(s.markdown() for s in sections)
    if fmt == "table":
        return "\n".join(s.text() for s in sections)
    raise ValueError(f"no format {fmt!r} for tables (table, markdown, html)")
