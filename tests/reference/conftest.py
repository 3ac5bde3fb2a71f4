"""An export laid out by ``rrsite simulate`` and filled with the responses R drew.

R's data (tests/reference/rrreg/*.csv) has one row per respondent; the export takes the survey's
columns (tokens, versions, times) from ``rrsite simulate`` and the answers from R.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from rrsite.cli import main


@pytest.fixture(scope="session")
def reference_export() -> Callable[..., tuple[Path, Path]]:
    """``run(folder, survey_text, data_csv, answers)``: (survey, export) in ``folder``.

    ``answers(r)`` gives the export's answer columns from one row ``r`` of R's data.
    """

    def run(root: Path, survey_text: str, data_csv: Path,
            answers: Callable[[Mapping[str, str]], dict[str, str]]) -> tuple[Path, Path]:
        survey = root / "survey.md"
        survey.write_text(survey_text, encoding="utf-8")
        with data_csv.open(encoding="utf-8") as handle:
            data = list(csv.DictReader(handle))
        template = root / "template.csv"
        assert main(["simulate", str(survey), "--respondents", str(len(data)), "--seed", "1",
                     "-o", str(template)]) == 0
        with template.open(encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        for row, r in zip(rows, data, strict=True):
            row.update(answers(r))
        out = root / "data.csv"
        with out.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return survey, out

    return run
