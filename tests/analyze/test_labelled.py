"""Data for papers: labelled Stata and SPSS files, the codebook, and the R script for RRreg.

The .dta and .sav files are read back by pandas and pyreadstat: every row's codes against the CSV
it was made from, the variable labels, the value labels, the randomized columns marked as reports
(their label, the SPSS note). The codebook lists every column of the export. The R script's text
names each question's RRreg model and p; where R with RRreg is installed (optional), it runs.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest

from rrsite.cli import main
from rrsite.exports.catalog import build_catalog
from rrsite.report import codebook

ROOT = Path(__file__).resolve().parents[2]
DOPING = ROOT / "surveys" / "doping.md"


def survey(tmp_path: Path) -> Path:
    """doping.md with a labelled choice question and a Kuk question (own reports, Kukrep)."""
    text = DOPING.read_text("utf-8").replace("id: doped\n", "id: doped\nshort: Doping\n", 1)
    text = text.replace("budget: 2.0 ", "budget: 4.0 ", 1)
    text += ("\n## Which sport?\n\n```question\nid: sport\ntype: choice\noptions:\n"
             "  - {value: run, label: Running}\n  - {value: bike, label: Cycling}\n```\n"
             "\n## Ever sold a substance?\n\n```question\nid: sold\ntype: yes-no\n"
             "randomize: kuk\nred_yes: 0.7\nred_no: 0.3\ncards: 3\n```\n")
    path = tmp_path / "doping.md"
    path.write_text(text, "utf-8")
    return path


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, Path]:
    path = survey(tmp_path)
    export = tmp_path / "answers.csv"
    assert main(["simulate", str(path), "--respondents", "400", "--truth", "doped=0.2",
                 "--truth", "competition=0.3", "--truth", "sold=0.1", "--seed", "6",
                 "-o", str(export)]) == 0
    return path, export


def rows_of(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_names_are_safe_for_stata_and_spss() -> None:
    taken: set[str] = set()
    assert codebook.safe_name("doped", taken) == "doped"
    assert codebook.safe_name("doped.group", taken) == "doped_group"
    assert codebook.safe_name("in", taken) == "v_in"  # a reserved word
    assert codebook.safe_name("2nd-try", taken) == "v2nd_try"
    long = "a" * 40
    assert codebook.safe_name(long, taken) == "a" * 32
    assert codebook.safe_name(long + "b", taken) == "a" * 30 + "_2"  # unique after the cut
    assert codebook.safe_name("DOPED", taken) == "DOPED_2"  # unique whatever the case


@pytest.mark.parametrize("suffix", [".dta", ".sav"])
def test_labelled_files_read_back_with_their_codes_and_labels(
        exported: tuple[Path, Path], tmp_path: Path, suffix: str) -> None:
    path, export = exported
    out = tmp_path / f"answers{suffix}"
    assert main(["export", "--from", str(export), "--manifest", str(path), "-o", str(out)]) == 0
    reader = pyreadstat.read_dta if suffix == ".dta" else pyreadstat.read_sav
    data, meta = reader(str(out))
    rows = rows_of(export)
    assert len(data) == len(rows)
    labels = meta.column_names_to_labels
    assert labels["doped"] == "[randomized report] Doping"
    assert labels["competition"].startswith("[randomized report] Have you ever used")
    assert labels["competition_group"].startswith("[design group]")
    assert labels["sport"] == "Which sport?"
    values = meta.variable_value_labels
    assert values["doped"] == {0: "different: exactly one of the two statements is true",
                               1: "same: both statements true, or both false"}
    assert values["competition"] == {0: "report: No", 1: "report: Yes"}
    assert values["sport"] == {0: "Running", 1: "Cycling"}
    assert values["sold"] == {0: "report: 0", 1: "report: 1", 2: "report: 2", 3: "report: 3"}
    # every row: the code is the value's position among the question's answers (RRreg's coding)
    answers = {"doped": ["different", "same"], "competition": ["no", "yes"],
               "sport": ["run", "bike"], "sold": ["0", "1", "2", "3"]}
    for i, row in enumerate(rows):
        for column, order in answers.items():
            got = data[column].iloc[i]
            if row[column]:
                assert got == order.index(row[column]), (i, column)
            else:
                assert math.isnan(got)
        assert data["competition_group"].iloc[i] == float(row["competition.group"])
        assert data["hours"].iloc[i] == float(row["hours"])
        assert data["respondent"].iloc[i] == row["respondent"]
    if suffix == ".sav":
        assert any("NOT" in line for line in meta.notes)  # the document says: reports
    else:
        assert "randomized columns are reports" in meta.file_label
    # pandas reads the same file with its value labels
    if suffix == ".dta":
        with pd.io.stata.StataReader(out) as stata:
            frame = stata.read(convert_categoricals=True)
            assert stata.variable_labels()["doped"] == "[randomized report] Doping"
        assert set(frame["sport"].dropna().unique()) <= {"Running", "Cycling"}
    else:
        frame = pd.read_spss(out, convert_categoricals=True)
        assert set(frame["competition"].dropna().unique()) <= {"report: No", "report: Yes"}


def test_bad_rows_of_a_converted_export_are_counted(
        exported: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    path, export = exported
    text = export.read_text("utf-8").splitlines()
    header = text[0].split(",")
    broken = text[1].split(",")
    broken[header.index("sport")] = "swimming"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([text[0], ",".join(broken), *text[2:]]) + "\n", "utf-8")
    out = tmp_path / "bad.sav"
    assert main(["export", "--from", str(bad), "--manifest", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 of 400 rows rejected" in err and "'swimming' is not one of" in err
    assert len(pyreadstat.read_sav(str(out))[0]) == 399


def test_the_codebook_lists_every_column_and_marks_the_randomized(
        exported: tuple[Path, Path], tmp_path: Path) -> None:
    path, export = exported
    files = {form: tmp_path / f"codebook.{form}" for form in ("md", "html", "json")}
    for file in files.values():
        assert main(["export", "--manifest", str(path), "--codebook", str(file)]) == 0
    book = json.loads(files["json"].read_text("utf-8"))
    with open(export, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert [v["column"] for v in book["variables"]] == header
    by_column = {v["column"]: v for v in book["variables"]}
    for column in ("doped", "competition", "sold"):
        entry = by_column[column]
        assert entry["randomized"] and entry["role"] == "randomized report (not the answer)"
        assert any("not the respondent's answer" in note for note in entry["notes"])
    assert not by_column["sport"]["randomized"] and not by_column["hours"]["randomized"]
    doped = by_column["doped"]["designs"][0]
    assert doped["design"] == {"name": "crosswise", "p": 0.25}
    assert doped["rrreg"] == {"model": "Crosswise", "p": 0.25}
    assert doped["epsilon"] == pytest.approx(math.log(3))
    competition = by_column["competition"]["designs"][0]
    assert competition["rrreg"] == {"model": "SLD", "p": [0.25, 0.75]}
    assert competition["epsilon"] is None and "not differentially private" in (
        competition["privacy"])
    assert by_column["sold"]["designs"][0]["rrreg"]["Kukrep"] == 3
    markdown = files["md"].read_text("utf-8")
    assert "## `doped` (randomized report)" in markdown
    assert "| 1 | `bike` | Cycling |" in markdown
    assert "RRreg Crosswise with p = 0.25" in markdown
    page = files["html"].read_text("utf-8")
    assert "<code>doped</code> <span class=\"warn\">(randomized report)</span>" in page
    assert "<script" not in page


def r_script(path: Path, tmp_path: Path, data: str) -> str:
    script = tmp_path / "fit.R"
    assert main(["export", "--manifest", str(path), "--r-script", str(script)]) == 0
    text = script.read_text("utf-8")
    return text.replace('else "answers.csv"', f'else "{data}"')


def test_the_r_script_refits_each_randomized_question_with_rrreg(
        exported: tuple[Path, Path], tmp_path: Path) -> None:
    path, export = exported
    version = build_catalog([path]).versions[0].version
    text = r_script(path, tmp_path, str(export))
    assert "library(RRreg)" in text
    assert 'haven::read_sav(path)' in text and 'haven::read_dta(path)' in text
    assert 'utils::read.csv(path, colClasses = "character"' in text
    assert ('y <- response(column(data, "doped", "doped"), c("different", "same"))' in text)
    assert f'keep <- !is.na(y) & version %in% c("{version}")' in text
    assert 'RRuni(response = y[keep], model = "Crosswise", p = 0.25)' in text
    assert ('group <- suppressWarnings(as.numeric(column(data, "competition.group", '
            '"competition_group")))') in text
    assert ('RRuni(response = y[keep], model = "SLD", p = c(0.25, 0.75), '
            'group = group[keep])') in text
    assert ('RRuni(response = y[keep], model = "Kuk", p = c(0.7, 0.3), Kukrep = 3)') in text
    assert text.count("RRuni(") == 3  # doped, competition, sold; not the direct questions
    assert "sport" not in text.split("data <- read_export(path)")[1]


def test_a_design_rrreg_knows_only_as_a_matrix_is_fitted_as_custom(tmp_path: Path) -> None:
    path = tmp_path / "matrix.md"
    path.write_text(
        "---\nid: m\ntitle: M\nlanguage: en\nprivacy: {budget: 10}\nsubmit: {to: collector}\n"
        "---\n\n## Which?\n\n```question\nid: which\ntype: choice\noptions: [a, b, c]\n"
        "randomize: matrix\nmatrix: [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]]\n"
        "```\n", "utf-8")
    text = r_script(path, tmp_path, "x.csv")
    # PW[report][state]: the transpose of the survey's matrix[truth][report]
    assert ('RRuni(response = y[keep], model = "custom", p = matrix(c(0.8, 0.2, 0.1, 0.1, 0.7, '
            '0.1, 0.1, 0.1, 0.8), nrow = 3, byrow = TRUE))') in text


#: A stand-in for RRreg (the CRAN package cannot be installed here): RRuni records each call.
STAND_IN = r"""
RRuni <- function(response, model, p, group = NULL, Kukrep = 1) {
  cat("RRUNI", model, paste(format(p, digits = 15), collapse = ","), length(response),
      paste(tabulate(response + 1, nbins = 4), collapse = ","),
      if (is.null(group)) "-" else paste(tabulate(group, nbins = 2), collapse = ","), Kukrep, "\n")
  structure(list(model = model), class = "rrstub")
}
summary.rrstub <- function(object, ...) object
print.rrstub <- function(x, ...) invisible(x)
"""


def stand_in_rrreg(folder: Path) -> Path:
    """A library folder holding an R package named RRreg whose RRuni prints its arguments."""
    package = folder / "RRreg"
    (package / "R").mkdir(parents=True)
    (package / "DESCRIPTION").write_text(
        "Package: RRreg\nVersion: 0.0.1\nTitle: Stand-in\nDescription: Records calls.\n"
        "License: MIT\nAuthor: rrsite tests\nMaintainer: rrsite <tests@example.org>\n", "utf-8")
    (package / "NAMESPACE").write_text(
        "export(RRuni)\nS3method(summary, rrstub)\nS3method(print, rrstub)\n", "utf-8")
    (package / "R" / "RRreg.R").write_text(STAND_IN, "utf-8")
    library = folder / "library"
    library.mkdir()
    subprocess.run(["R", "CMD", "INSTALL", f"--library={library}", str(package)],
                   capture_output=True, check=True, timeout=120)
    return library


@pytest.mark.slow
def test_the_r_script_runs_in_r_and_gives_rrreg_each_questions_reports(
        exported: tuple[Path, Path], tmp_path: Path) -> None:
    """Real R (Debian's r-base-core, installed by `make test`) runs the script against a
    stand-in RRreg: every RRuni call gets the design's model and p and exactly the reports,
    groups and versions of the export, counted here in Python."""
    path, export = exported
    script = tmp_path / "fit.R"
    script.write_text(r_script(path, tmp_path, str(export)), "utf-8")
    library = stand_in_rrreg(tmp_path / "stand-in")
    done = subprocess.run(["Rscript", str(script)], capture_output=True, text=True, check=False,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "R_LIBS": str(library)})
    assert done.returncode == 0, done.stderr
    calls = [line.split() for line in done.stdout.splitlines() if line.startswith("RRUNI")]
    rows = rows_of(export)

    def counts(column: str, reports: list[str]) -> tuple[int, str]:
        values = [r[column] for r in rows if r[column] != ""]
        tallied = [sum(v == report for v in values) for report in reports]
        return len(values), ",".join(str(c) for c in [*tallied, 0, 0, 0, 0][:4])

    doped = counts("doped", ["different", "same"])
    competition = counts("competition", ["no", "yes"])
    groups = [sum(r["competition.group"] == g for r in rows if r["competition"] != "")
              for g in ("1", "2")]
    sold = counts("sold", ["0", "1", "2", "3"])
    assert calls == [
        ["RRUNI", "Crosswise", "0.25", str(doped[0]), doped[1], "-", "1"],
        ["RRUNI", "SLD", "0.25,0.75", str(competition[0]), competition[1],
         f"{groups[0]},{groups[1]}", "1"],
        ["RRUNI", "Kuk", "0.7,0.3", str(sold[0]), sold[1], "-", "3"],
    ]
