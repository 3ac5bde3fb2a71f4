"""`rrsite analyze` refuses every number report its design cannot give, with file, row and why.

A simulated export of every number design (and a direct number) gets one bad row per case; each
must be rejected with its row and a reason naming what is wrong, counted in ``rejected``, and
left out of every estimate.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rrsite.analyze import analyze
from rrsite.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXTRA = """

## How many days (added)?

```question
id: days_added
type: number
min: 0
max: 30
integer: true
randomize: additive
scramble: {values: [-2, 0.5, 4]}
accept_no_epsilon: true
```

## How old are you?

```question
id: age
type: number
min: 18
max: 99
integer: true
```
"""
GOOD = 30
#: (question, report, what the reason says)
BAD = [
    ("bribes_product", "-5", "-5 is negative, but answers and the factor are not"),
    ("bribes_product", "40000", "40000 is outside [0, 30000]"),
    ("drinks_duchi", "20", "20 is neither of duchi's two reports"),
    ("drinks_piecewise", "1000", "1000 is outside piecewise's reports"),
    ("days_mixture", "31", "31 is neither a possible answer nor a value of the mask"),
    ("days_mixture", "2.5", "2.5 is neither a possible answer nor a value of the mask"),
    ("drinks_laplace", "12.345", "12.345 is not on the design's grid (steps of 0.01 from 0)"),
    ("days_added", "3.25", "3.25 is not a whole-number answer in range plus a number the "
                           "scramble draws"),
    ("days_added", "-3", "-3 is outside [-2, 34]"),
    ("income_additive", "ten", "'ten' is not a number"),
    ("income_additive", " 5", "' 5' is not a number"),            # before: "...: None"
    ("income_additive", "1_000", "'1_000' is not a number"),      # before: "...: None"
    ("drinks_laplace", "1e999", "'1e999' is not a number"),
    ("hours_unknown", "NaN", "'NaN' is not a number"),
    ("income_additive", "0." + "1" * 32, "is not a number of at most 32 characters"),
    ("age", "17", "'17' is not a whole number >= 18 <= 99"),
    ("age", "100", "'100' is not a whole number >= 18 <= 99"),
    ("age", "25.5", "'25.5' is not a whole number >= 18 <= 99"),
]


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    root = tmp_path_factory.mktemp("rejections")
    survey = root / "numbers.md"
    survey.write_text((ROOT / "tests" / "browser" / "surveys" / "number-designs.md").read_text(
        encoding="utf-8") + EXTRA, encoding="utf-8")
    assert main(["simulate", str(survey), "--respondents", str(GOOD), "--seed", "8",
                 "-o", str(root / "good.csv")]) == 0
    with open(root / "good.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return root, survey, rows[0], rows[1:]


def _with(header: list[str], row: list[str], question: str, report: str, i: int) -> list[str]:
    changed = list(row)
    changed[header.index("respondent")] = f"bad-row-number-{i:02d}-xxxxxxxx"
    changed[header.index(question)] = report
    return changed


def test_every_impossible_report_is_rejected_with_its_row_and_reason(export) -> None:
    root, survey, header, good = export
    every = root / "every.csv"
    with open(every, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(good)
        writer.writerows(_with(header, good[i % GOOD], q, z, i)
                         for i, (q, z, _) in enumerate(BAD))
    analysis = analyze([every], survey=survey, progress=False)
    assert analysis.rejected.counts == {"invalid-value": len(BAD)}
    assert analysis.to_dict()["rejected"]["invalid-value"]["count"] == len(BAD)
    for result in analysis.numbers:  # none of them counted in any estimate
        assert result.estimate is not None and result.estimate.n == GOOD, result.id
    # each bad row on its own: its line (the header is line 1) and its reason
    for i, (question, report, reason) in enumerate(BAD):
        single = root / f"single{i}.csv"
        with open(single, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerows([header, *good, _with(header, good[0], question, report, i)])
        examples = analyze([single], survey=survey, progress=False).rejected.examples
        [example] = examples["invalid-value"]
        assert (example.file, example.row) == (str(single), GOOD + 2)
        assert example.message.startswith(f"{question}: "), example.message
        assert reason in example.message, example.message
        assert "None" not in example.message


def test_a_number_sent_as_a_json_string_is_not_a_number(export) -> None:
    """JSONL: a report must be a JSON number; "12" is refused as such (before: "...: None")."""
    root, survey, _, _ = export
    assert main(["simulate", str(survey), "--respondents", "3", "--seed", "2",
                 "-o", str(root / "good.jsonl")]) == 0
    lines = (root / "good.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["answers"]["days_mixture"] = "12"
    lines[0] = json.dumps(record)
    (root / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    analysis = analyze([root / "bad.jsonl"], survey=survey, progress=False)
    [example] = analysis.rejected.examples["invalid-value"]
    assert example.row == 1
    assert example.message == "days_mixture: '12' is not a number"
