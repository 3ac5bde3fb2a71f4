"""`rrsite analyze`'s reports explain their columns, mark footnotes and uninformative subgroups.

every column is explained under the estimates table (terminal, Markdown and HTML); a
footnote is shown only for a mark some row carries; a subgroup whose interval holds both 0.25 and
0.75 is said to be too small for an informative interval.
"""

import json
import re

import pytest

from rrsite.cli import main

from .helpers import manifest, row, write_csv, write_manifest

COLUMNS = ["answer", "n", "reported", "estimate", "unbiased", "se", "95% interval",
           "Chebyshev ±"]
STAR = "the unbiased estimate fell outside [0, 1]"
BANG = "the whole interval fell outside [0, 1]"


def export(tmp_path, rows):
    return write_csv(tmp_path / "export.csv", rows), write_manifest(tmp_path / "survey.json",
                                                                     manifest())


def report(capsys, files, *extra):
    assert main(["analyze", str(files[0]), "--manifest", str(files[1]), *extra]) == 0
    return capsys.readouterr().out


def balanced(i: int, year: str = "") -> dict[str, str]:
    """Reports that de-bias well inside [0, 1]: no mark anywhere."""
    return row(i, violated="yes" if i % 2 else "no",
               major=["arts", "science", "law"][i // 6 % 3],
               year=year or ["First", "Second", "Third or later"][i % 3])


def test_every_column_is_explained_in_every_format(capsys, tmp_path):
    files = export(tmp_path, [balanced(i) for i in range(300)])
    table = report(capsys, files)
    header = next(line for line in table.splitlines() if line.startswith("question  answer"))
    shown = [cell for cell in re.split(r"\s{2,}", header.strip()) if cell][1:]
    assert shown == COLUMNS
    legend = table[table.index("\nColumns:\n"):]
    for column in shown:
        assert re.search(rf"\n  {re.escape(column)}\s+\S", legend), column
    assert "unbiased ± this (4.47 standard errors)" in legend  # 1 / sqrt(1 - 0.95)
    markdown = report(capsys, files, "--format", "markdown")
    for column in COLUMNS:
        assert f"\n- **{column}**: " in markdown, column
    out = tmp_path / "report.html"
    report(capsys, files, "--format", "html", "-o", str(out))
    html = out.read_text("utf-8")
    for column in COLUMNS:
        assert f"<dt>{column}</dt><dd>" in html, column


def test_no_footnote_without_its_mark(capsys, tmp_path):
    files = export(tmp_path, [balanced(i) for i in range(300)])
    data = json.loads(report(capsys, files, "--format", "json", "--by", "year"))
    assert not data["questions"][0]["clipped"]  # really nothing to mark
    for form in ("table", "markdown"):
        text = report(capsys, files, "--format", form, "--by", "year")
        assert STAR not in text and BANG not in text, form
    out = tmp_path / "report.html"
    report(capsys, files, "--format", "html", "-o", str(out), "--by", "year")
    html = out.read_text("utf-8")
    assert STAR not in html and BANG not in html


def test_a_mark_used_only_in_a_subgroup_gets_its_footnote_there(capsys, tmp_path):
    # "First": 40% yes reports (fine); the others: 10% yes reports, below the 25% a truthful
    # "no" population gives under the fair design: their unbiased estimates are negative (*)
    # and their intervals collapse onto 0 (!). Overall: no mark.
    rows = []
    for i in range(600):
        year = ["First", "Second", "Third or later"][i % 3]
        share = 0.55 if year == "First" else 0.10
        rows.append(row(i, violated="yes" if (i // 3) % 100 < share * 100 else "no",
                        major=["arts", "science", "law"][i // 6 % 3], year=year))
    files = export(tmp_path, rows)
    text = report(capsys, files, "--by", "year")
    main_part, subgroups = text.split("Subgroups by year:")
    assert "*" not in main_part.split("Columns:")[0].splitlines()[-1]
    assert STAR not in main_part and BANG not in main_part
    violated = subgroups.split("\n  major")[0]
    assert re.search(r"Second\s+Yes.*\*!", violated)  # the answers' labels (helpers: title case)
    assert f"* {STAR}" in violated and f"! {BANG}" in violated


def test_a_subgroup_too_small_for_an_informative_interval_is_said_so(capsys, tmp_path):
    rows = [balanced(i, "First" if i % 2 else "Second") for i in range(400)]
    rows += [balanced(400 + i, "Third or later") for i in range(6)]
    files = export(tmp_path, rows)
    data = json.loads(report(capsys, files, "--format", "json", "--by", "year"))
    groups = data["questions"][0]["by"]["groups"]
    low, high = groups["Third or later"]["ci"]
    assert low <= 0.25 and high >= 0.75  # the criterion, on the figures the JSON gives
    for name in ("First", "Second"):
        assert not (groups[name]["ci"][0] <= 0.25 and groups[name]["ci"][1] >= 0.75)
    text = report(capsys, files, "--by", "year")
    notes = [line for line in text.splitlines() if "too few for an informative" in line]
    # the subgroup named by its label (the helpers' manifest labels values in title case)
    assert (f"note: violated (year = Third Or Later): 6 answers are too few for an informative "
            f"interval: [{low:.2f}, {high:.2f}] holds both 0.25 and 0.75") in notes[0]
    assert not any("year = First" in line or "year = Second" in line for line in notes
                   if line.split(":")[1].strip().startswith("violated"))
    markdown = report(capsys, files, "--format", "markdown", "--by", "year")
    assert "violated (year = Third Or Later): 6 answers are too few" in markdown
    out = tmp_path / "report.html"
    report(capsys, files, "--format", "html", "-o", str(out), "--by", "year")
    assert "violated (year = Third Or Later): 6 answers are too few" in out.read_text("utf-8")


@pytest.mark.parametrize("module", ["analysis", "html"])
def test_the_report_modules_do_not_import_each_other_at_load(module):
    import ast
    from pathlib import Path

    import rrsite.report as package

    source = (Path(package.__file__).parent / f"{module}.py").read_text("utf-8")
    other = {"analysis": "html", "html": "analysis"}[module]
    top = [node for node in ast.parse(source).body
           if isinstance(node, ast.ImportFrom) and node.module == other]
    assert top == []


def test_estimates_too_few_to_inform_share_one_note(capsys, tmp_path):
    """A choice question's answers in a small subgroup: one sentence, not one per answer.

    The k-RR question `major` has 3 answers; in the subgroup of 4 every answer's interval holds
    both 0.25 and 0.75 (checked on the JSON), which gave 3 identical notes (12 for 4 groups).
    """
    rows = [balanced(i, "First" if i % 2 else "Second") for i in range(400)]
    rows += [balanced(400 + i, "Third or later") for i in range(4)]
    files = export(tmp_path, rows)
    data = json.loads(report(capsys, files, "--format", "json", "--by", "year"))
    major = next(q for q in data["questions"] if q["id"] == "major")
    small = major["by"]["groups"]["Third or later"]["ci"]
    assert all(low <= 0.25 and high >= 0.75 for low, high in small.values())
    assert len(small) == 3
    text = report(capsys, files, "--by", "year")
    notes = [line for line in text.splitlines() if "too few" in line and "major" in line]
    assert len(notes) == 1, notes
    assert "too few answers for an informative interval in 3 estimates" in notes[0]
    for label in ("Arts", "Science", "Law"):  # each answer named once, by its label
        assert notes[0].count(f"answer {label}:") == 1, label
    assert len(text.splitlines()) == len(set(text.splitlines())) or all(
        text.splitlines().count(line) == 1 for line in text.splitlines() if "note:" in line)
