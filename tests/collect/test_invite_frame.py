"""`rrsite invite --frame`: one code per frame row, links carrying only the design cell id,
small cells refused, and the analysis joining the cells file by cell id."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rrsite.cli import main
from rrsite.collect.store import code_hash

URL = "https://surveys.example.org/honor/"
ROOT = Path(__file__).resolve().parents[2]


def _frame(path: Path, sizes: dict[tuple[str, str], int], weight: dict[str, float]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["email", "region", "school", "w"])
        k = 0
        for (region, school), n in sizes.items():
            for _ in range(n):
                writer.writerow([f"person{k}@example.org", region, school, weight[region]])
                k += 1
    return path


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


SIZES = {("north", "n1"): 12, ("north", "n2"): 15, ("south", "s1"): 10, ("south", "s2"): 11}
WEIGHTS = {"north": 4.0, "south": 2.5}


def invite(tmp_path: Path, *extra: str) -> int:
    return main(["invite", "--survey", "honor", "--url", URL, "-o", str(tmp_path / "codes.csv"),
                 "--db", str(tmp_path / "c.db"), "--frame", str(tmp_path / "frame.csv"),
                 "--strata", "region", "--cluster", "school", "--weight", "w",
                 "--cells", str(tmp_path / "cells.csv"), *extra])


def test_links_carry_only_the_cell(tmp_path, capsys):
    _frame(tmp_path / "frame.csv", SIZES, WEIGHTS)
    assert invite(tmp_path) == 0
    assert "4 design cells" in capsys.readouterr().err
    rows = _read(tmp_path / "codes.csv")
    cells = {c["cell"]: c for c in _read(tmp_path / "cells.csv")}
    assert list(cells) == sorted(cells)  # in the order of the random ids, not of the frame
    assert len(rows) == sum(SIZES.values())
    assert len({r["code"] for r in rows}) == len(rows)
    for row in rows:
        fragment = row["link"].removeprefix(URL + "#")
        assert fragment == f"invitation={row['code']}&cell={fragment.split('&cell=')[1]}"
        cell = cells[fragment.split("&cell=")[1]]
        assert (cell["region"], cell["school"]) == (row["region"], row["school"])
        assert float(cell["weight"]) == WEIGHTS[row["region"]]
        assert row["email"] not in row["link"]
    # one cell per (region, school): the cell id says nothing finer than that
    assert len(cells) == 4
    assert all(8 <= len(c) <= 32 for c in cells)
    with sqlite3.connect(tmp_path / "c.db") as connection:
        stored = {r[0] for r in connection.execute("SELECT code_hash FROM invitations")}
    assert stored == {code_hash(r["code"]) for r in rows}


def test_small_cell_refused_and_nothing_written(tmp_path, capsys):
    _frame(tmp_path / "frame.csv", {**SIZES, ("south", "s3"): 3}, WEIGHTS)
    assert invite(tmp_path) == 2
    err = capsys.readouterr().err
    assert "1 design cell with fewer than 10 invitees" in err
    assert "region=south, school=s3, weight=2.5: 3 invitees" in err
    assert not (tmp_path / "codes.csv").exists() and not (tmp_path / "cells.csv").exists()
    assert invite(tmp_path, "--min-cell", "3") == 2
    assert "--min-cell must be at least 5" in capsys.readouterr().err


def test_unequal_weights_within_a_cluster_make_small_cells(tmp_path, capsys):
    _frame(tmp_path / "frame.csv", SIZES, WEIGHTS)
    rows = _read(tmp_path / "frame.csv")
    rows[0]["w"] = "4.5"  # one person with a weight of their own: a cell of one
    with open(tmp_path / "frame.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    assert invite(tmp_path) == 2
    assert "weight=4.5: 1 invitee" in capsys.readouterr().err


@pytest.mark.parametrize("value,message", [("0", "must be a number > 0"),
                                           ("x", "must be a number > 0")])
def test_bad_weight_names_the_line(tmp_path, capsys, value, message):
    _frame(tmp_path / "frame.csv", SIZES, WEIGHTS)
    text = (tmp_path / "frame.csv").read_text(encoding="utf-8").splitlines()
    parts = text[3].split(",")
    parts[-1] = value
    text[3] = ",".join(parts)
    (tmp_path / "frame.csv").write_text("\n".join(text) + "\n", encoding="utf-8")
    assert invite(tmp_path) == 2
    assert f"frame.csv:4: w {value!r} {message}" in capsys.readouterr().err


def test_frame_options_need_each_other(tmp_path, capsys):
    _frame(tmp_path / "frame.csv", SIZES, WEIGHTS)
    assert invite(tmp_path, "-n", "5") == 2
    assert main(["invite", "--survey", "honor", "--url", URL, "-n", "5", "-o",
                 str(tmp_path / "x.csv"), "--db", str(tmp_path / "c.db"), "--strata", "r"]) == 2
    assert "need --frame" in capsys.readouterr().err


def test_analysis_joins_the_cells_by_cell_id(tmp_path, capsys):
    """Submissions carry the cell id (as the collector will export it); analyze joins by it."""
    _frame(tmp_path / "frame.csv", SIZES, WEIGHTS)
    assert invite(tmp_path) == 0
    capsys.readouterr()
    survey = ROOT / "surveys" / "honor-code.md"
    assert main(["simulate", str(survey), "--respondents", "48", "--truth", "violated=0.3",
                 "--seed", "2", "-o", str(tmp_path / "export.csv")]) == 0
    invited = _read(tmp_path / "codes.csv")
    export = _read(tmp_path / "export.csv")
    rng = np.random.default_rng(1)
    chosen = rng.choice(len(invited), len(export), replace=False)
    for row, k in zip(export, chosen, strict=True):
        row["cell"] = invited[k]["link"].split("&cell=")[1]
    with open(tmp_path / "export.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(export[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(export)
    assert main(["analyze", str(tmp_path / "export.csv"), "--survey", str(survey),
                 "--design", str(tmp_path / "cells.csv"), "--weights", "weight", "--strata",
                 "region", "--cluster", "school", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    info = data["sample_design"]
    assert (info["strata"], info["clusters"]) == (2, 4)
    weights = [WEIGHTS[invited[k]["region"]] for k in chosen]
    assert info["weights"]["sum"] == pytest.approx(sum(weights))
