"""`rrsite analyze` of a randomized number never reports an impossible mean or interval.

The case that was reported: days of use in the last 30 (duchi, epsilon 1), 28 respondents by
field of study. It printed a mean of -1.2 days with the interval "-10.8 to 12.6", the subgroup
of three "-17.4593 to -17.4593" (se 0), subgroups by their stored values ("sci"), one note per
answer and subgroup, and privacy as "1-differentially private". Here the reports are written
by hand (every high and low report placed), so each figure is checked against its definition.
"""

from __future__ import annotations

import csv
import json
import math
import secrets
from pathlib import Path

import pytest

from rrsite.cli import main
from rrsite.core import number_design_from_spec
from tests.surveytext import days_question, question, survey_text

SURVEY = survey_text(
    "days",
    question("major", "choice", options="\n  - {value: sci, label: Science}\n"
             "  - {value: arts, label: Arts}\n  - {value: law, label: Law}"),
    days_question(randomize="duchi", epsilon=1), title="Days", budget=3, language=None)
DESIGN = number_design_from_spec({"name": "duchi", "epsilon": 1, "min": 0, "max": 30,
                                  "integer": True})
LOW, HIGH = DESIGN.values()
#: (field, high reports, low reports): Science 3 low reports only; overall 7 high of 28, a
#: share below duchi's smallest possible (0.269 at 0 days), so the unbiased mean is negative.
GROUPS = [("sci", 0, 3), ("arts", 5, 15), ("law", 2, 3)]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    survey = tmp_path / "days.md"
    survey.write_text(SURVEY, "utf-8")
    from rrsite.survey import load_survey

    version = load_survey(survey).manifest()["version"]
    export = tmp_path / "export.csv"
    with open(export, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["survey", "version", "respondent", "submitted_at", "major", "days"])
        for field, high, low in GROUPS:
            for report in [HIGH] * high + [LOW] * low:
                writer.writerow(["days", version, secrets.token_urlsafe(16),
                                 "2026-01-01T00:00:00Z", field, repr(report)])
    return survey, export


def _report(capsys: pytest.CaptureFixture[str], files: tuple[Path, Path], *extra: str) -> str:
    assert main(["analyze", str(files[1]), "--survey", str(files[0]), "--by", "major",
                 *extra]) == 0
    return capsys.readouterr().out


def test_every_mean_and_interval_is_possible(capsys, files) -> None:
    data = json.loads(_report(capsys, files, "--format", "json"))
    number = data["numbers"][0]
    c = (math.e + 1) / (math.e - 1)
    estimates = {"all": number, **number["by"]["groups"]}
    for name, found in estimates.items():
        high = next(h for f, h, _ in GROUPS if f == name) if name != "all" else 7
        n = found["n"]
        unbiased = 15 * (1 + c * (2 * high / n - 1))  # de-biased share of high reports
        assert found["unbiased"] == pytest.approx(unbiased), name
        assert found["estimate"] == pytest.approx(min(max(unbiased, 0.0), 30.0)), name
        low, top = found["ci"]
        assert 0 <= low < top <= 30, (name, low, top)
        assert found["range"] == [0, 30] and found["se"] > 0
        assert found["clipped"] == (unbiased < 0), name
    assert number["unbiased"] < 0 and number["estimate"] == 0.0  # -1.2 days before
    science = estimates["sci"]
    assert science["unbiased"] == pytest.approx(15 * (1 - c))  # -17.46: three low reports
    assert science["ci"][1] > science["ci"][0] == 0.0  # not "-17.4593 to -17.4593"


def test_the_table_speaks_plainly_and_says_each_thing_once(capsys, files) -> None:
    text = _report(capsys, files)
    section = text.split("Means of randomized numbers")[1].split("Privacy")[0]
    table, notes = section.split("95% intervals:")
    groups = [line.split()[0] if not line.split()[0] == "days" else line.split()[1]
              for line in table.splitlines()[3:] if line.strip()]
    assert groups == ["all", "Science", "Arts", "Law"]  # the labels, not sci/arts/law
    assert "0.0*" in table  # the mean within the range, marked
    lines = [line.strip() for line in notes.splitlines() if line.strip()]
    assert len(lines) == len(set(lines))
    assert "* the unbiased mean fell outside the range [min, max]" in notes
    too_few = [line for line in lines if "too few" in line]
    assert len(too_few) == 1  # one sentence for every subgroup too small, not one each
    assert "major = Science: 3 answers" in too_few[0] and "major = Law: 5 answers" in too_few[0]
    assert "each interval holds both 7.5 and 22.5" in too_few[0]
    exact = [line for line in lines if "Clopper-Pearson" in line]
    assert len(exact) == 1  # one sentence for the estimate and every subgroup alike
    assert "all answers; major = Science; major = Arts; major = Law" in exact[0]
    privacy = text.split("Privacy")[1]
    assert "days: epsilon = 1: any report is at most 2.72 times as likely" in privacy
    assert "differentially private" not in privacy
    assert "major: Science 3, Arts 20, Law 5" in text


def test_html_and_markdown_show_the_same(capsys, files, tmp_path: Path) -> None:
    markdown = _report(capsys, files, "--format", "markdown")
    assert "|  |  | Science | 3 | 0* |" in markdown
    assert "too few answers for an informative interval in" in markdown
    assert "## Subgroups by" not in markdown  # no empty yes-no section for a numbers-only survey
    out = tmp_path / "report.html"
    _report(capsys, files, "--format", "html", "-o", str(out))
    html = out.read_text("utf-8")
    assert "<td>Science</td>" in html and "<td>sci</td>" not in html
    assert "Dvoretzky" not in html  # the plot's caption in plain words
    assert "the share of respondents whose true number is at most each value" in html
