"""Crossed subgroups: `--by a --by b` (or `--by a,b`) estimates every cell of the two questions.

Each cell's estimate is checked against the rows of that cell alone, analysed without --by (an
independent path: the rows are filtered here with the csv module); the "too few for an
informative interval" rule applies per cell; --counts, randomized numbers, RRreg's designs and
the design-based estimates cross the same way.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from rrsite.analyze import analyze
from rrsite.analyze.api import analyze_counts
from rrsite.cli import main
from rrsite.errors import UsageError
from rrsite.exports.subgroups import NO_ANSWER, SEPARATOR, Subgroups, parse_by

ROOT = Path(__file__).resolve().parents[2]
YEARS = ["First", "Second", "Third", "Fourth or later"]
HOUSING = {"campus": "On campus", "off": "Off campus"}


def survey_file(tmp_path: Path) -> Path:
    """The honor-code survey with a second direct question (housing, labelled options)."""
    text = (ROOT / "surveys" / "honor-code.md").read_text("utf-8")
    text = text.replace("id: violated\n", "id: violated\nshort: Honor Code violation\n", 1)
    text = text.replace("## How many courses", "## Where do you live?\n\n```question\n"
                        "id: housing\ntype: choice\noptions:\n"
                        "  - {value: campus, label: On campus}\n"
                        "  - {value: off, label: Off campus}\n```\n\n## How many courses", 1)
    path = tmp_path / "survey.md"
    path.write_text(text, "utf-8")
    return path


def simulate(tmp_path: Path, survey: Path, respondents: int = 3000, seed: int = 5) -> Path:
    out = tmp_path / "export.csv"
    assert main(["simulate", str(survey), "--respondents", str(respondents), "--truth",
                 "violated=0.2", "--seed", str(seed), "-o", str(out)]) == 0
    return out


def rows_of(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_parse_by_takes_repeats_and_commas_and_refuses_a_question_twice() -> None:
    assert parse_by(None) == ()
    assert parse_by("year") == ("year",)
    assert parse_by(["year", "housing"]) == parse_by("year,housing") == ("year", "housing")
    assert parse_by(["year, housing", "sex"]) == ("year", "housing", "sex")
    with pytest.raises(ValueError, match="year is given twice"):
        parse_by(["year", "year"])


def test_cell_codes_are_the_mixed_radix_of_the_answers() -> None:
    cells = Subgroups.of(["a", "b"], {"a": ["x", "y"], "b": ["u", "v", "w"]})
    assert cells.names[:4] == [f"x{SEPARATOR}u", f"x{SEPARATOR}v", f"x{SEPARATOR}w",
                               f"x{SEPARATOR}{NO_ANSWER}"]
    assert len(cells.names) == 3 * 4
    codes = {"a": np.array([0, 1, -2, 1]), "b": np.array([2, -2, 0, 1])}
    got = cells.codes(codes, 4).tolist()
    assert [cells.names[i] for i in got] == [
        f"x{SEPARATOR}w", f"y{SEPARATOR}{NO_ANSWER}", f"{NO_ANSWER}{SEPARATOR}u",
        f"y{SEPARATOR}v"]
    for i, cell in enumerate(cells.cells):
        assert cells.index([a if a != NO_ANSWER else "" for a in cell]) == i
    assert cells.cell_of(f"y{SEPARATOR}v") == {"a": "y", "b": "v"}
    with pytest.raises(ValueError, match="not an answer of --by 'b'"):
        cells.index(["x", "z"])


def test_every_cell_is_estimated_from_its_own_rows(tmp_path: Path) -> None:
    survey = survey_file(tmp_path)
    export = simulate(tmp_path, survey)
    crossed = analyze([export], survey=survey, by=["year", "housing"], progress=False).to_dict()
    listed = analyze([export], survey=survey, by="year,housing", progress=False).to_dict()
    assert crossed["questions"] == listed["questions"]
    assert crossed["by"] == "year,housing" and crossed["by_questions"] == ["year", "housing"]
    violated = crossed["questions"][0]["by"]
    assert violated["questions"] == ["year", "housing"]
    groups = violated["groups"]
    # every combination of real answers is a cell, even an empty one
    for year, housing in itertools.product(YEARS, HOUSING):
        assert f"{year}{SEPARATOR}{housing}" in groups
    rows = rows_of(export)
    for name, figures in groups.items():
        year, housing = figures["cell"]["year"], figures["cell"]["housing"]
        mine = [r for r in rows
                if (r["year"] or NO_ANSWER) == year and (r["housing"] or NO_ANSWER) == housing]
        assert figures["n"] == sum(1 for r in mine if r["violated"]), name
        if not mine:
            continue
        part = tmp_path / "cell.csv"
        write_rows(part, mine)
        alone = analyze([part], survey=survey, progress=False).to_dict()["questions"][0]
        assert figures["estimate"] == pytest.approx(alone["estimate"], abs=1e-12), name
        assert figures["ci"] == pytest.approx(alone["ci"], abs=1e-12), name
        # and by hand: the fair forced-response design, p00 = p11 = 3/4
        share = sum(r["violated"] == "yes" for r in mine) / len(mine)
        assert figures["unbiased"] == pytest.approx((share - 0.25) / 0.5, abs=1e-12)


def test_the_too_few_rule_speaks_of_each_cell(tmp_path: Path, capsys) -> None:
    survey = survey_file(tmp_path)
    export = simulate(tmp_path, survey, respondents=1500, seed=9)
    data = analyze([export], survey=survey, by=["year", "housing"], progress=False).to_dict()
    groups = data["questions"][0]["by"]["groups"]
    wide = {name for name, g in groups.items()
            if g["n"] and g["ci"][0] <= 0.25 and g["ci"][1] >= 0.75}
    narrow = {name for name, g in groups.items() if g["n"] and name not in wide}
    assert wide and narrow  # both kinds, so the test can tell them apart
    assert main(["analyze", str(export), "--survey", str(survey), "--by", "year", "--by",
                 "housing"]) == 0
    text = capsys.readouterr().out
    # one sentence names every cell too uncertain to inform, and no other
    notes = [line for line in text.splitlines() if "too few answers for an informative" in line]
    assert len(notes) == 1 and f"in {len(wide)} estimates" in notes[0]
    for name in wide:
        cell = groups[name]["cell"]
        where = f"year = {cell['year']}, housing = {HOUSING.get(cell['housing'], cell['housing'])}"
        assert f"{where}: {groups[name]['n']:,} answers" in notes[0]
    for name in narrow:
        cell = groups[name]["cell"]
        where = f"year = {cell['year']}, housing = {HOUSING.get(cell['housing'], cell['housing'])}"
        assert f"{where}: " not in notes[0]
    # the table names the cells by their labels, the heading by both questions
    assert f"Subgroups by year{SEPARATOR}housing:" in text
    assert f"First{SEPARATOR}On campus" in text
    assert "Honor Code violation (violated)" in text


def test_the_same_question_twice_is_refused(tmp_path: Path, capsys) -> None:
    survey = survey_file(tmp_path)
    export = simulate(tmp_path, survey, respondents=50)
    with pytest.raises(UsageError, match="year is given twice"):
        analyze([export], survey=survey, by=["year", "year"], progress=False)
    assert main(["analyze", str(export), "--survey", str(survey), "--by", "year", "--by",
                 "violated"]) == 2
    assert "randomized" in capsys.readouterr().err


def test_counts_with_a_column_per_by_question_give_what_the_rows_give(tmp_path: Path) -> None:
    survey = survey_file(tmp_path)
    export = simulate(tmp_path, survey, respondents=800, seed=2)
    rows = rows_of(export)
    counts = tmp_path / "counts.csv"
    with open(counts, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "version", "report", "year", "housing", "count"])
        tallied: dict[tuple[str, str, str, str], int] = {}
        for r in rows:
            if r["violated"]:
                key = (r["version"], r["violated"], r["year"], r["housing"])
                tallied[key] = tallied.get(key, 0) + 1
        for (version, report, year, housing), n in sorted(tallied.items()):
            writer.writerow(["violated", version, report, year, housing, n])
    from_rows = analyze([export], survey=survey, by=["year", "housing"], progress=False)
    from_counts = analyze_counts(counts, survey=survey, by=["year", "housing"])
    assert (from_counts.to_dict()["questions"][0]["by"]
            == from_rows.to_dict()["questions"][0]["by"])


def test_rrreg_designs_and_numbers_cross_too(tmp_path: Path) -> None:
    text = (ROOT / "surveys" / "doping.md").read_text("utf-8")
    text += ("\n## Which club?\n\n```question\nid: club\ntype: choice\noptions: [a, b]\n```\n"
             "\n## Which level?\n\n```question\nid: level\ntype: yes-no\n```\n")
    survey = tmp_path / "doping.md"
    survey.write_text(text, "utf-8")
    export = tmp_path / "doping.csv"
    assert main(["simulate", str(survey), "--respondents", "1200", "--truth", "doped=0.2",
                 "--truth", "competition=0.3", "--seed", "3", "-o", str(export)]) == 0
    data = analyze([export], survey=survey, by=["club", "level"], progress=False).to_dict()
    rows = rows_of(export)
    for question in data["questions"]:
        for figures in question["by"]["groups"].values():
            cell = figures["cell"]
            mine = [r for r in rows if (r["club"] or NO_ANSWER) == cell["club"]
                    and (r["level"] or NO_ANSWER) == cell["level"] and r[question["id"]]]
            assert figures["n"] == len(mine)
            if question["id"] == "doped" and mine:  # crosswise, p = 1/4, by hand
                same = sum(r["doped"] == "same" for r in mine) / len(mine)
                assert figures["parameters"]["pi"]["estimate"] == pytest.approx(
                    min(max((same - 0.75) / (0.25 - 0.75), 0.0), 1.0), abs=1e-6)
    text = (ROOT / "surveys" / "hidden-numbers.md").read_text("utf-8")
    text += "\n## Level?\n\n```question\nid: level\ntype: yes-no\n```\n"
    survey = tmp_path / "numbers.md"
    survey.write_text(text, "utf-8")
    export = tmp_path / "numbers.csv"
    assert main(["simulate", str(survey), "--respondents", "900", "--seed", "3", "-o",
                 str(export)]) == 0
    data = analyze([export], survey=survey, by=["region", "level"], progress=False).to_dict()
    rows = rows_of(export)
    assert data["numbers"]
    for number in data["numbers"]:
        assert number["by"]["questions"] == ["region", "level"]
        for name, figures in number["by"]["groups"].items():
            assert figures.get("cell") == dict(zip(["region", "level"], name.split(SEPARATOR),
                                                   strict=True))
            mine = [r for r in rows if (r["region"] or NO_ANSWER) == figures["cell"]["region"]
                    and (r["level"] or NO_ANSWER) == figures["cell"]["level"]
                    and r[number["id"]]]
            assert figures["n"] == len(mine)


def test_design_based_domains_are_the_cells(tmp_path: Path) -> None:
    survey = survey_file(tmp_path)
    export = simulate(tmp_path, survey, respondents=600, seed=8)
    rows = rows_of(export)
    weighted = tmp_path / "weighted.csv"
    for i, r in enumerate(rows):
        r["w"] = str(1 + i % 3)
    write_rows(weighted, rows)
    out = tmp_path / "report.json"
    assert main(["analyze", str(weighted), "--survey", str(survey), "--weights", "w", "--by",
                 "year,housing", "--format", "json", "-o", str(out)]) == 0
    based = json.loads(out.read_text("utf-8"))["questions"][0]["design_based"]["by"]
    for name, entry in based.items():
        year, housing = name.split(SEPARATOR)
        assert entry["n"] == sum(1 for r in rows if (r["year"] or NO_ANSWER) == year
                                 and (r["housing"] or NO_ANSWER) == housing and r["violated"])
        share = np.average([r["violated"] == "yes" for r in rows
                            if (r["year"] or NO_ANSWER) == year
                            and (r["housing"] or NO_ANSWER) == housing and r["violated"]],
                           weights=[float(r["w"]) for r in rows
                                    if (r["year"] or NO_ANSWER) == year
                                    and (r["housing"] or NO_ANSWER) == housing
                                    and r["violated"]])
        assert entry["values"]["yes"]["estimate"] == pytest.approx((share - 0.25) / 0.5,
                                                                   abs=1e-9)


@pytest.mark.parametrize("form", ["markdown", "html"])
def test_every_report_shows_labels_and_short_names(tmp_path: Path, form: str) -> None:
    survey = survey_file(tmp_path)
    export = simulate(tmp_path, survey, respondents=600, seed=3)
    out = tmp_path / f"report.{form}"
    assert main(["analyze", str(export), "--survey", str(survey), "--by", "year,housing",
                 "--format", form, "-o", str(out)]) == 0
    text = out.read_text("utf-8")
    assert f"First{SEPARATOR}On campus" in text and f"First{SEPARATOR}campus" not in text
    assert "Honor Code violation (" in text
    assert "On campus: " in text and "Off campus: " in text  # the direct answers by label
    assert f"year{SEPARATOR}housing" in text
