"""How the reports show randomized numbers: figures rounded to their standard error with
thousands separators, designs in words, and no empty yes-no sections in a numbers-only report."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from rrsite.analyze import analyze
from rrsite.cli import main
from rrsite.report.analysis import render
from rrsite.report.rows import amount, decimals_for, number_design_words, number_rows

SURVEYS = Path(__file__).resolve().parents[2] / "surveys"


@pytest.mark.parametrize(("value", "se", "shown"), [
    (50171.3, 652.0, "50,170"),          # two significant digits of the se: tens
    (14.403, 0.407, "14.40"),            # hundredths
    (2508475496.0, 3.26e7, "2,508,000,000"),
    (0.0123456, 0.00123, "0.0123"),
    (-0.0004, 0.01, "0.000"),            # no "-0.000"
    (-1234.5, 10.0, "-1,234"),           # round half to even: -1234.5 -> -1234
    (7.0, 0.0, "7"),                     # no se: the value as given
    (2.5, math.nan, "2.5"),
    (math.inf, 1.0, "–"),
])
def test_figures_are_rounded_to_their_standard_error(value: float, se: float, shown: str) -> None:
    assert amount(value, decimals_for(se)) == shown


def test_rounding_keeps_two_significant_digits_of_the_se() -> None:
    # independent: the se's leading two digits are its first two non-zero digits
    for se in (0.000317, 0.0099, 0.1, 0.99, 1.0, 9.99, 12.0, 652.0, 1.5e6):
        places = decimals_for(se)
        assert places is not None
        step = 10.0 ** -places
        assert 10 * step <= se * (1 + 1e-12) < 100 * step, (se, places)


@pytest.mark.parametrize(("spec", "words"), [
    ({"name": "mixture", "p": 0.5, "mask": {"uniform": {"min": 0.0, "max": 30.0}},
      "integer": True}, "mixture: the answer with chance 0.5, else uniform over whole numbers 0 "
                        "to 30"),
    ({"name": "mixture", "p": 0.7, "mask": {"normal": {"mean": 5000.0, "sd": 2500.5}}},
     "mixture: the answer with chance 0.7, else normal (mean 5,000, sd 2,500.5)"),
    ({"name": "mixture", "p": 0.25, "mask": {"values": [0.0, 5.0, 10.0],
                                             "probabilities": [0.5, 0.25, 0.25]}},
     "mixture: the answer with chance 0.25, else one of 0 (0.5), 5 (0.25), 10 (0.25)"),
    ({"name": "mixture-unknown", "p": [0.3, 0.8], "probability": 0.5},
     "mixture-unknown: the answer with chance 0.3 (group 1, chance 0.5) or 0.8 (group 2), else "
     "the innocuous answer"),
    ({"name": "additive", "scramble": {"values": [-5.0, 0.0, 5.0, 10.0],
                                       "probabilities": [0.25] * 4}},
     "additive: answer + one of -5, 0, 5, 10"),
    ({"name": "multiplicative", "scramble": {"exponential": {"mean": 1.0}}, "p": 0.0},
     "multiplicative: answer × exponential (mean 1)"),
    ({"name": "multiplicative", "scramble": {"uniform": {"min": 0.5, "max": 1.5}}, "p": 0.2},
     "multiplicative: the answer with chance 0.2, else answer × uniform over 0.5 to 1.5"),
    ({"name": "laplace", "epsilon": 1.0, "min": 0.0, "max": 100000.0},
     "laplace: epsilon 1 over 0 to 100,000"),
    ({"name": "piecewise", "epsilon": 2.5, "min": -1.0, "max": 1.0},
     "piecewise: epsilon 2.5 over -1 to 1"),
])
def test_designs_in_words(spec: dict, words: str) -> None:
    assert number_design_words(spec) == words


@pytest.fixture(scope="module")
def numbers_export(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("number-reports")
    export = folder / "numbers.csv"
    assert main(["simulate", str(SURVEYS / "hidden-numbers.md"), "--respondents", "800",
                 "--seed", "4", "-o", str(export)]) == 0
    return export


def test_table_rows_round_the_mean_interval_and_total(numbers_export: Path) -> None:
    analysis = analyze([numbers_export], survey=SURVEYS / "hidden-numbers.md",
                       population=50_000, progress=False)
    rows = {row[0]: row for row in number_rows(analysis) if row[0]}
    for result in analysis.numbers:
        estimate = result.estimate
        assert estimate is not None
        row = rows[result.id]
        places = decimals_for(estimate.se)
        assert places is not None
        # independent rounding of the same figures
        assert float(row[4].replace(",", "")) == pytest.approx(round(estimate.mean, places))
        low, high = (float(x.replace(",", "")) for x in row[6].split(" to "))
        assert low == pytest.approx(round(estimate.ci_low, places))
        assert high == pytest.approx(round(estimate.ci_high, places))
        total_places = decimals_for(50_000 * estimate.se)
        assert total_places is not None
        assert float(row[7].replace(",", "")) == pytest.approx(
            round(50_000 * estimate.mean, total_places))
        assert "e+" not in " ".join(row)


def test_numbers_only_report_has_no_empty_yes_no_sections(numbers_export: Path) -> None:
    analysis = analyze([numbers_export], survey=SURVEYS / "hidden-numbers.md", by="region",
                       progress=False)
    assert not analysis.questions and analysis.numbers
    html = render(analysis, "html")
    assert "<h2>Means of randomized numbers</h2>" in html
    assert "<h2>Estimates</h2>" not in html
    assert "Subgroups by" not in html
    assert "intervals: ." not in html
    for form in ("table", "markdown"):
        text = render(analysis, form)
        assert "Means of randomized numbers" in text
        assert not re.search(r"^#* ?Estimates", text, re.MULTILINE), form


def test_mixed_report_keeps_the_yes_no_estimates(tmp_path: Path) -> None:
    export = tmp_path / "honor.csv"
    assert main(["simulate", str(SURVEYS / "honor-code.md"), "--respondents", "300", "--seed",
                 "1", "-o", str(export)]) == 0
    html = render(analyze([export], survey=SURVEYS / "honor-code.md", progress=False), "html")
    assert "<h2>Estimates</h2>" in html and "<h2>Means of randomized numbers</h2>" not in html


def test_json_gives_each_number_its_distribution(numbers_export: Path, tmp_path: Path) -> None:
    analysis = analyze([numbers_export], survey=SURVEYS / "hidden-numbers.md", progress=False)
    report = json.loads(render(analysis, "json"))
    for entry in report["numbers"]:
        cells = entry["distribution"]["cells"]
        shares = [cell["share"] for cell in cells]
        assert sum(shares) == pytest.approx(1.0)
        for cell in cells:
            low, high = cell["cumulative_band"]
            assert 0.0 <= low <= high <= 1.0
        assert cells[-1]["cumulative_band"] == [1.0, 1.0]  # every true number is at most max
    days = next(e for e in report["numbers"] if e["id"] == "days")["distribution"]
    assert [c["low"] for c in days["cells"]] == list(range(31))
    assert all(c["ci"][0] <= c["share"] <= c["ci"][1] for c in days["cells"])  # a mixture
    undeclared = next(e for e in report["numbers"] if e["id"] == "undeclared")["distribution"]
    assert all(c["ci"] is None for c in undeclared["cells"])  # additive: no single-share ones
    # mixture-unknown: no distribution, and why
    survey = tmp_path / "unknown.md"
    survey.write_text("""---
id: unknown-numbers
title: Unknown
privacy:
  budget: 1
---
## How much?

```question
id: amount
type: number
min: 0
max: 100
randomize: mixture-unknown
p: [0.2, 0.8]
innocuous: How many minutes did you walk yesterday?
accept_no_epsilon: true
```
""", encoding="utf-8")
    export = tmp_path / "unknown.csv"
    assert main(["simulate", str(survey), "--respondents", "200", "--seed", "2", "-o",
                 str(export)]) == 0
    entry = json.loads(render(analyze([export], survey=survey, progress=False), "json"))
    said = entry["numbers"][0]["distribution"]
    assert "innocuous answers" in said["not_estimated"]
