"""`rrsite plan --compare --k K --epsilon E` (and --survey/--question): every choice design."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rrsite.cli import main
from rrsite.core import z_value


def plan(capsys: pytest.CaptureFixture[str], *options: str) -> dict:
    assert main(["plan", "--compare", *options, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_k100_epsilon1_auto_is_near_the_best_and_krr_ten_times_worse(capsys):
    """Acceptance: auto within 5% of the best of OUE/OLH/subset; k-RR beside it, about 10x."""
    result = plan(capsys, "--k", "100", "--epsilon", "1")
    rows = {row["design"]: row for row in result["designs"]}
    assert set(rows) == {"k-rr", "subset", "oue", "olh", "sue", "hadamard"}
    best = min(rows[n]["variance_near_zero"] for n in ("oue", "olh", "subset"))
    chosen = rows[result["auto"]]
    assert chosen["auto"] and chosen["variance_near_zero"] <= 1.05 * best
    ratio = rows["k-rr"]["variance_near_zero"] / chosen["variance_near_zero"]
    assert 8 < ratio < 12
    # k-RR near 0, from Wang et al. 2017's closed form (e^eps + k - 2) / (e^eps - 1)^2
    e = math.e
    assert rows["k-rr"]["variance_near_zero"] == pytest.approx((e + 98) / (e - 1) ** 2)
    z = z_value(0.95)
    for row in rows.values():
        rate = row["q"] + (row["p"] - row["q"]) * 0.01
        variance = rate * (1 - rate) / (row["p"] - row["q"]) ** 2
        assert row["variance"] == pytest.approx(variance)
        assert row["respondents"] == math.ceil(z * z * variance / 0.05 ** 2 - 1e-9)
    assert main(["plan", "--compare", "--k", "100", "--epsilon", "1"]) == 0
    text = capsys.readouterr().out
    assert "<- auto" in text and "k-rr" in text and "x k-RR" in text


def test_the_question_of_a_survey(tmp_path: Path, capsys):
    survey = tmp_path / "s.md"
    survey.write_text("---\nid: s\ntitle: S\nprivacy:\n  budget: 2\n---\n## Which?\n\n"
                      "```question\nid: did\ntype: multi-choice\noptions: [a, b, c, d, e, f]\n"
                      "epsilon: 2\nmax_ticks: 2\n```\n", encoding="utf-8")
    result = plan(capsys, "--survey", str(survey), "--question", "did")
    assert result["k"] == 6 and result["max_ticks"] == 2 and result["epsilon"] == 2
    assert {row["design"] for row in result["designs"]} == {"oue", "sue"}
    assert main(["plan", "--compare", "--survey", str(survey), "--question", "nope"]) == 2
    assert "no such question" in capsys.readouterr().err


def test_respondents_give_each_designs_margin(capsys):
    """--respondents N: every design's margin at N, z sqrt(variance / N) at the share planned."""
    result = plan(capsys, "--k", "100", "--epsilon", "1", "--respondents", "2000")
    assert result["respondents_given"] == 2000
    z = z_value(0.95)
    for row in result["designs"]:
        rate = row["q"] + (row["p"] - row["q"]) * 0.01
        variance = rate * (1 - rate) / (row["p"] - row["q"]) ** 2
        assert row["margin_at_respondents"] == pytest.approx(z * math.sqrt(variance / 2000))
    assert main(["plan", "--compare", "--k", "100", "--epsilon", "1", "--respondents",
                 "2000"]) == 0
    text = capsys.readouterr().out
    assert "margin at 2,000" in text
    krr = next(line for line in text.splitlines() if line.strip().startswith("k-rr"))
    margin = next(r for r in result["designs"] if r["design"] == "k-rr")["margin_at_respondents"]
    assert f"±{margin:.3g}" in krr and 0.25 < margin < 0.27
