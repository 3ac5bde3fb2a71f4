"""`rrsite simulate` of a fielded survey: the split ballot's arm, the direct arm's answers and the
comprehension checks are simulated as the page sends them (each question only where its show_if
shows it), so the analysis of "did randomized response work?" can be tried on them."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from rrsite.analyze import analyze
from rrsite.cli import main

SURVEY = Path(__file__).resolve().parents[1] / "browser" / "fielding" / "campus.md"


def test_a_split_ballot_is_simulated_as_the_page_sends_it(tmp_path: Path) -> None:
    survey = tmp_path / "campus.md"
    survey.write_text(SURVEY.read_text("utf-8").replace("languages: [en, de]\n", ""), "utf-8")
    export = tmp_path / "out.csv"
    n = 6000
    assert main(["simulate", str(survey), "--respondents", str(n), "--truth", "stimulants=0.3",
                 "--seed", "4", "-o", str(export)]) == 0
    with open(export, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    direct = [r for r in rows if r["arm"] == "direct"]
    randomized = [r for r in rows if r["arm"] == "randomized"]
    assert len(direct) + len(randomized) == n
    # the arm is drawn with the manifest's direct_share (0.3): within 4 standard errors
    assert abs(len(direct) / n - 0.3) < 4 * math.sqrt(0.3 * 0.7 / n)
    # each arm answers only its own questions, as the page's show_if says
    assert all(r["stimulants"] == "" and r["stimulants_check"] == "" for r in direct)
    assert all(r["stimulants_direct"] == "" for r in randomized)
    assert all(r["stimulants_direct"] in ("yes", "no") for r in direct)
    # the direct arm reports the true rate; the checks are answered as instructed
    yes = sum(r["stimulants_direct"] == "yes" for r in direct) / len(direct)
    assert abs(yes - 0.3) < 4 * math.sqrt(0.3 * 0.7 / len(direct))
    answered = [r["stimulants_check"] for r in randomized if r["stimulants_check"]]
    assert answered and set(answered) == {"yes"}
    # the analysis reads both arms: the randomized estimate and the direct share agree
    result = analyze([export], survey=survey).to_dict()
    split = result["compliance"]["split"][0]
    assert split["direct_n"] == len(direct) and split["randomized_n"] == len(randomized)
    answer = split["answers"][0]
    assert abs(answer["direct"] - 0.3) < 0.05 and abs(answer["randomized"] - 0.3) < 0.05
    assert answer["ci"][0] < 0 < answer["ci"][1]  # both arms estimate the same true rate
    check = result["compliance"]["checks"][0]
    assert check["right"] == len(randomized) and check["missing"] == len(direct)
