"""CSV files separated by semicolons (German Excel) or tabs read like comma-separated ones.

The separator is sniffed from the header and the first lines; the estimates of the same rows
written with each separator are identical, in blocks read by numpy and by the csv module (quoted
cells holding the other separators, cells neutralised against spreadsheet formulas). When no
column matches, the error names the separator it read with, and hints at another that would.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rrsite.analyze import analyze
from rrsite.cli import main
from rrsite.exports.readers import ExportError, sniff_delimiter

ROOT = Path(__file__).resolve().parents[2]
SURVEY = ROOT / "surveys" / "honor-code.md"


def test_sniffing_picks_the_separator_every_line_agrees_with() -> None:
    assert sniff_delimiter("a,b,c", "1,2,3\n4,5,6\n") == ","
    assert sniff_delimiter("a;b;c", "1;2,5;3\n4;5;6\n") == ";"  # a decimal comma inside
    assert sniff_delimiter("a\tb\tc", "1\t2;x\t3\n") == "\t"
    assert sniff_delimiter("a;b;c", '"x,y";2;3\n"p;q";5;6\n') == ";"  # quoted separators
    assert sniff_delimiter("only", "1\n2\n") == ","  # one column: read as a comma file
    # a semicolon header whose lines disagree: still the header's split (rows then rejected)
    assert sniff_delimiter("a;b;c", "1,2,3\n") == ";"


def write(path: Path, rows: list[list[str]], delimiter: str) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, delimiter=delimiter).writerows(rows)
    return path


@pytest.mark.parametrize("block_size", [1 << 20, 600])
def test_the_same_rows_give_the_same_estimates_with_each_separator(
        tmp_path: Path, block_size: int) -> None:
    export = tmp_path / "export.csv"
    assert main(["simulate", str(SURVEY), "--respondents", "1500", "--truth", "violated=0.3",
                 "--seed", "11", "-o", str(export)]) == 0
    with open(export, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    # a few awkward rows: a bad year holding both separators (quoted), and a neutralised cell
    rows[5][5] = "First; or, maybe"
    rows[9][5] = "'=1+1"
    results = {}
    for name, delimiter in (("comma.csv", ","), ("semicolon.csv", ";"), ("tab.tsv", "\t")):
        path = write(tmp_path / name, rows, delimiter)
        analysis = analyze([path], survey=SURVEY, by="year", progress=False,
                           block_size=block_size)
        data = analysis.to_dict()
        results[delimiter] = (data["questions"], data["numbers"], data["rows"],
                              [(r["row"], r["message"]) for entry in data["rejected"].values()
                               for r in entry["examples"]])
        notes = analysis.files[0].notes
        if delimiter == ",":
            assert not any("separated" in note for note in notes)
        else:
            assert any(f"separated by {'a tab' if delimiter == chr(9) else repr(';')}" in note
                       for note in notes)
    assert results[";"] == results[","] == results["\t"]
    assert results[","][2] == {"read": 1500, "accepted": 1498, "rejected": 2}
    assert any("'First; or, maybe' is not one of" in message for _, message in results[","][3])
    assert any("'=1+1' is not one of" in message for _, message in results[","][3])


def test_no_matching_column_names_the_separator_read_with(tmp_path: Path) -> None:
    path = write(tmp_path / "odd.csv", [["Frage1", "Frage2"], ["ja", "nein"]], ";")
    with pytest.raises(ExportError) as caught:
        analyze([path], survey=SURVEY, progress=False)
    assert "read with ';' as the separator, 2 columns: Frage1, Frage2" in str(caught.value)
    assert "--map COLUMN=QUESTION" in str(caught.value)


def test_a_header_split_at_another_separator_gets_a_hint(tmp_path: Path) -> None:
    # every line splits into two fields at a comma, and at a semicolon too: the comma wins the
    # tie, and no column is a question; split at the semicolon, "year" would be one
    path = tmp_path / "mixed.csv"
    path.write_text("respondent,violated;year\ntok,yes;First\n", encoding="utf-8")
    with pytest.raises(ExportError) as caught:
        analyze([path], survey=SURVEY, progress=False)
    message = str(caught.value)
    assert "read with ',' as the separator" in message
    assert "the header holds question columns when split at ';'" in message
