"""Labelled Stata (.dta) and SPSS (.sav) files of an export, written through pyreadstat.

Every column of the codebook (rrsite.report.codebook) becomes a variable with its name and
variable label; a yes-no or choice column is numeric, each value coded by its position among the
question's answers (RRreg's response coding for a randomized question) with value labels; a
number is numeric; text, multi-choice lists (their JSON text) and the record fields are strings.
A randomized column's variable label starts with "[randomized report]" and its value labels with
"report:" (or the meaning of crosswise's and triangular's own reports); the SPSS file's document
note and the Stata file's label say that these columns hold reports, not answers.

pyreadstat (ReadStat; PyPI) writes both formats; it is the ``papers`` extra of rrsite
(``pip install rrsite[papers]``).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import RRSiteError
from ..exports.catalog import GROUP_SUFFIX
from .codebook import ROLE_GROUP, ROLE_META, Codebook, Variable

#: Output formats by extension.
EXTENSIONS = {".dta": "stata", ".sav": "spss"}
NOTE = ("Columns whose label starts with [randomized report] hold the report each respondent's "
        "device sent under the question's randomized-response design, NOT the respondent's "
        "answer; estimate from them with the design (see the codebook, or rrsite analyze / "
        "RRreg).")


def format_for(path: str) -> str | None:
    """``stata`` or ``spss`` from a file name's extension, else None."""
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def _cell(record: Mapping[str, Any], variable: Variable) -> Any:
    """The raw value of one variable in one export record (None when absent)."""
    if variable.role == ROLE_META:
        return record.get(variable.column)
    if variable.role == ROLE_GROUP:
        return (record.get("groups") or {}).get(variable.column[: -len(GROUP_SUFFIX)])
    return (record.get("answers") or {}).get(variable.column)


def _coded(value: Any, variable: Variable, codes: dict[str, int], where: str) -> float:
    """A value as its number: a code, a number, or NaN when absent."""
    if value is None or value == "":
        return math.nan
    if variable.type == "categorical":
        key = str(value)
        if key not in codes:
            raise RRSiteError(f"{where}: {variable.column}: {value!r} is not one of "
                              f"{', '.join(codes)}")
        return float(codes[key])
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RRSiteError(f"{where}: {variable.column}: {value!r} is not a number") from None
    return number


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def frame(book: Codebook, records: Iterable[Mapping[str, Any]]) -> Any:
    """A pandas DataFrame of the records, one column per codebook variable (named as in it)."""
    import pandas

    numeric = [v for v in book.variables if v.type in ("categorical", "number")]
    codes = {v.column: v.codes() for v in numeric}
    columns: dict[str, list[Any]] = {v.name: [] for v in book.variables}
    for index, record in enumerate(records, start=1):
        where = f"record {index} (respondent {record.get('respondent')!r})"
        for variable in book.variables:
            value = _cell(record, variable)
            if variable.type in ("categorical", "number"):
                columns[variable.name].append(_coded(value, variable, codes[variable.column],
                                                     where))
            else:
                columns[variable.name].append(_text(value))
    data = pandas.DataFrame(columns, columns=[v.name for v in book.variables])
    for variable in numeric:
        data[variable.name] = data[variable.name].astype("float64")
    return data


def write(book: Codebook, records: Iterable[Mapping[str, Any]], path: str) -> int:
    """Write the records as a labelled .dta or .sav file (atomically); the number of rows."""
    form = format_for(path)
    if form is None:
        raise RRSiteError(f"-o {path}: a labelled file is named .dta (Stata) or .sav (SPSS)")
    try:
        import pyreadstat
    except ImportError as error:
        raise RRSiteError(
            f"-o {path}: writing Stata and SPSS files needs pyreadstat, which is not installed: "
            "pip install 'rrsite[papers]' (or pip install pyreadstat)") from error
    data = frame(book, records)
    labels: dict[str, str | None] = {v.name: v.label for v in book.variables}
    value_labels = {v.name: {float(x.code): x.label for x in v.values}
                    for v in book.variables if v.type == "categorical" and v.values}
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise RRSiteError(f"-o {path}: the folder {directory} does not exist")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix,
                                         dir=directory)
    os.close(handle)
    title = f"{book.title} ({book.survey}): randomized columns are reports"
    try:
        if form == "stata":
            pyreadstat.write_dta(data, temporary, file_label=title[:80], column_labels=labels,
                                 variable_value_labels=value_labels)
        else:
            measure = {v.name: ("scale" if v.type == "number" else "nominal")
                       for v in book.variables}
            pyreadstat.write_sav(data, temporary, file_label=title[:64], column_labels=labels,
                                 note=textwrap.wrap(NOTE, 80),  # SPSS: lines of 80
                                 variable_value_labels=value_labels,
                                 variable_measure=measure)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return len(data)
