"""Did randomized response work? The split ballot, comprehension checks and the crosswise anchor.

The manifests here are written as docs/reference/contracts.md says the page's side makes them
(``arm``, ``<id>_check``, ``<id>_direct`` and the manifest's ``validation``). Every figure of
the analysis is checked against the rows counted here with the csv module and the formulas
written out in the test (the forced-response design's p00 = p11 = 3/4; cWise's ``bc.est``
expressions as its R code has them); the intervals by simulation, with enough repetitions to see
a shortfall of 1% (the benchmark benchmarks/compliance.py prints the wider grid).
"""

from __future__ import annotations

import csv
import json
import math
import random
import secrets
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from rrsite.analyze import analyze
from rrsite.cli import main
from rrsite.estimate.compliance import crosswise as cw
from rrsite.estimate.compliance.split import difference
from rrsite.estimate.estimators import binary_estimate
from rrsite.survey import load_survey

ROOT = Path(__file__).resolve().parents[2]
NOTE = "The direct arm's answers are sent as given: no randomized response protects them."


def fielded_manifest() -> dict:
    """honor-code.md as the page's side declares a check and a direct arm (the contract)."""
    manifest = load_survey(str(ROOT / "surveys" / "honor-code.md")).manifest()
    questions = manifest["questions"]
    violated = questions[0]
    randomized_arm = {"question": "arm", "is": ["randomized"]}
    violated["show_if"] = randomized_arm
    arm = {"id": "arm", "text": "Arm", "type": "choice", "sensitive": False, "required": True,
           "values": ["randomized", "direct"],
           "options": [{"value": "randomized", "label": "Randomized"},
                       {"value": "direct", "label": "Direct"}],
           "role": "arm", "direct_share": 0.3}
    check = {"id": "violated_check", "text": "If the draw says Yes, what is sent?",
             "type": "choice", "sensitive": False, "required": True,
             "values": ["yes", "truth", "no"],
             "options": [{"value": "yes", "label": "“Yes”, whatever my answer"},
                         {"value": "truth", "label": "My true answer"},
                         {"value": "no", "label": "“No”"}],
             "role": "check", "check": {"question": "violated", "instruction": "yes",
                                        "correct": "yes"}, "show_if": randomized_arm}
    direct = {"id": "violated_direct", "text": violated["text"], "type": "yes-no",
              "sensitive": False, "required": True, "values": ["no", "yes"],
              "options": violated["options"], "role": "direct",
              "direct": {"question": "violated"},
              "show_if": {"question": "arm", "is": ["direct"]}}
    manifest["questions"] = [arm, check, violated, direct, *questions[1:]]
    manifest["validation"] = {"direct_share": 0.3, "questions": ["violated"], "arm": "arm",
                              "direct": {"violated": "violated_direct"}}
    manifest["privacy"]["direct_arm"] = {"share": 0.3, "questions": ["violated_direct"],
                                         "epsilon": None, "note": NOTE}
    return manifest


def forced(truth: int, rng: random.Random) -> str:
    """The fair two-coin forced response: the truth, or a forced yes/no, a quarter each."""
    draw = rng.random()
    value = truth if draw < 0.5 else 1 if draw < 0.75 else 0
    return "yes" if value else "no"


def fielded_rows(n: int, prevalence: float, lying: float, understood: float,
                 seed: int) -> list[dict[str, str]]:
    """Rows of the fielded study: 30% direct arm (a share ``lying`` of carriers deny), the
    others randomized, of whom ``understood`` pass the check and follow the device; the rest
    answer the check wrong and send "yes" or "no" at random."""
    rng = random.Random(seed)
    manifest = fielded_manifest()
    rows = []
    for _ in range(n):
        truth = int(rng.random() < prevalence)
        row = {"survey": manifest["id"], "version": manifest["version"],
               "respondent": secrets.token_urlsafe(16), "submitted_at": "",
               "arm": "", "violated_check": "", "violated": "", "violated_direct": "",
               "year": rng.choice(["First", "Second"]), "courses": ""}
        if rng.random() < 0.3:
            row["arm"] = "direct"
            row["violated_direct"] = "yes" if truth and rng.random() >= lying else "no"
        else:
            row["arm"] = "randomized"
            if rng.random() < understood:
                row["violated_check"] = "yes"
                row["violated"] = forced(truth, rng)
            else:
                row["violated_check"] = rng.choice(["truth", "no"])
                row["violated"] = rng.choice(["yes", "no"])
        rows.append(row)
    return rows


def write(path: Path, rows: list[dict[str, str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_the_split_ballot_compares_the_arms_as_their_rows_say(tmp_path: Path) -> None:
    rows = fielded_rows(4000, prevalence=0.25, lying=0.5, understood=1.0, seed=1)
    export = write(tmp_path / "export.csv", rows)
    data = analyze([export], manifests=[fielded_manifest()], progress=False).to_dict()
    split = data["compliance"]["split"][0]
    randomized = [r for r in rows if r["arm"] == "randomized"]
    direct = [r for r in rows if r["arm"] == "direct"]
    share = sum(r["violated"] == "yes" for r in randomized) / len(randomized)
    unbiased = (share - 0.25) / 0.5
    se = math.sqrt(share * (1 - share) / len(randomized)) / 0.5
    direct_yes = sum(r["violated_direct"] == "yes" for r in direct)
    answer = split["answers"][0]
    assert split["randomized_n"] == len(randomized) and split["direct_n"] == len(direct)
    assert answer["randomized"] == pytest.approx(unbiased, abs=1e-12)
    assert answer["direct"] == pytest.approx(direct_yes / len(direct), abs=1e-12)
    assert answer["difference"] == pytest.approx(unbiased - direct_yes / len(direct), abs=1e-12)
    assert answer["randomized_se"] == pytest.approx(se, abs=1e-12)
    # the bound by the formula: the exact bounds of both arms (the randomized arm's report rate
    # mapped through the design), combined by MOVER
    yes = sum(r["violated"] == "yes" for r in randomized)
    rate_low = stats.beta.ppf(0.05, yes, len(randomized) - yes + 1)
    low = (rate_low - 0.25) / 0.5
    upper = stats.beta.ppf(0.95, direct_yes + 1, len(direct) - direct_yes)
    lower = answer["difference"] - math.hypot(unbiased - low, upper - direct_yes / len(direct))
    assert answer["lower"] == pytest.approx(lower, abs=1e-9)
    assert answer["lower"] > 0 and answer["p_value"] < 0.001  # half the carriers lied
    assert split["privacy"] == NOTE
    # the main estimate is the randomized arm's: the direct arm's rows have no report
    assert data["questions"][0]["n"] == len(randomized)


def test_the_test_and_the_bound_agree_at_every_level() -> None:
    for d_rr, se, count, n, reports in [
            (0.12, 0.03, 20, 300, None), (0.05, 0.04, 3, 100, None),
            (0.02, 0.02, 15, 300, None), (-0.01, 0.03, 30, 300, None),
            (0.2, 0.04, 10, 200, (180, 500, 0.75, 0.75)),
            (0.1, 0.05, 9, 90, (260, 600, 0.25, 0.25))]:
        found = difference(d_rr, se, count, n, 0.95, reports)
        assert found is not None
        for level in (0.8, 0.9, 0.95, 0.99):
            at = difference(d_rr, se, count, n, level, reports)
            assert at is not None
            assert (at.lower > 0) == (found.p_value < 1 - level), (d_rr, level)


def split_coverage(prevalence: float, lying: float, n: int, p00: float, p11: float,
                   reps: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """Coverage of the one-sided bound and of the interval, and the share of rejections."""
    direct_n = int(round(0.3 * n))
    randomized_n = n - direct_n
    report_rate = (1 - p00) + prevalence * (p00 + p11 - 1)
    truth = prevalence * lying
    low = both = rejected = 0
    for _ in range(reps):
        yes = int(rng.binomial(randomized_n, report_rate))
        said = int(rng.binomial(direct_n, prevalence * (1 - lying)))
        estimate = binary_estimate(yes, randomized_n, p00, p11)
        found = difference(float(estimate.unbiased[0]), float(estimate.se[0]), said, direct_n,
                           0.95, (yes, randomized_n, p00, p11))
        assert found is not None
        low += found.lower <= truth
        both += found.ci[0] <= truth <= found.ci[1]
        rejected += found.p_value < 0.05
    return low / reps, both / reps, rejected / reps


@pytest.mark.slow
def test_the_split_ballot_covers_by_simulation() -> None:
    rng = np.random.default_rng(36)
    reps = 3000
    results = [split_coverage(prevalence, lying, n, p00, p11, reps, rng)
               for prevalence, lying, n, p00, p11 in [
                   (0.05, 0.0, 300, 0.75, 0.75), (0.15, 0.3, 1000, 0.75, 0.75),
                   (0.02, 0.0, 2000, 0.75, 0.75), (0.3, 0.5, 1000, 0.25, 0.25)]]
    for low, both, _ in results:
        assert low >= 0.94 and both >= 0.94, results
    pooled = np.mean([[low, both] for low, both, _ in results], axis=0)
    assert pooled[0] >= 0.947 and pooled[1] >= 0.947, pooled  # 12,000 samples: se 0.2%
    # no under-reporting: the one-sided test rejects at most 5% (+ 3 se)
    assert results[0][2] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    assert results[2][2] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def test_comprehension_checks_are_counted_and_estimated_among_those_who_understood(
        tmp_path: Path, capsys) -> None:
    rows = fielded_rows(5000, prevalence=0.2, lying=0.0, understood=0.7, seed=4)
    export = write(tmp_path / "export.csv", rows)
    manifest = tmp_path / "survey.json"
    manifest.write_text(json.dumps(fielded_manifest()), "utf-8")
    data = analyze([export], manifests=[manifest], progress=False).to_dict()
    check = data["compliance"]["checks"][0]
    randomized = [r for r in rows if r["arm"] == "randomized"]
    right = [r for r in randomized if r["violated_check"] == "yes"]
    assert check["question"] == "violated" and check["check"] == "violated_check"
    assert check["right"] == len(right)
    assert check["wrong"] == len(randomized) - len(right)
    assert check["missing"] == len(rows) - len(randomized)  # the direct arm is not asked
    share = sum(r["violated"] == "yes" for r in right) / len(right)
    assert check["understood"]["n"] == len(right)
    assert check["understood"]["unbiased"] == pytest.approx((share - 0.25) / 0.5, abs=1e-12)
    everyone = sum(r["violated"] == "yes" for r in randomized) / len(randomized)
    # nothing is excluded: the main estimate uses every answer, the check's included
    assert data["questions"][0]["unbiased"] == pytest.approx((everyone - 0.25) / 0.5, abs=1e-12)
    assert check["estimate"]["unbiased"] == data["questions"][0]["unbiased"]
    assert check["understood"]["ci"][0] <= 0.2 <= check["understood"]["ci"][1]
    assert not data["questions"][0]["ci"][0] <= 0.2 <= data["questions"][0]["ci"][1]
    assert main(["analyze", str(export), "--manifest", str(manifest)]) == 0
    text = capsys.readouterr().out
    assert "Did randomized response work?" in text
    assert f"violated: {len(right):,} of {len(randomized):,} answered the check right" in text
    assert "among those who understood" in text and "every answer stays" in text
    assert "Split ballot" in text and NOTE in text


def test_the_estimate_among_those_who_understood_covers_by_simulation() -> None:
    # 30% do not understand and answer at random: the estimate over everyone is biased toward
    # 1/2; the estimate among those who passed the check covers the prevalence
    rng = np.random.default_rng(7)
    reps, n, prevalence = 4000, 1500, 0.15
    understood_rate = 0.7
    covered = covered_all = 0
    for _ in range(reps):
        understood = int(rng.binomial(n, understood_rate))
        yes_understood = int(rng.binomial(understood, 0.25 + 0.5 * prevalence))
        yes_other = int(rng.binomial(n - understood, 0.5))
        among = binary_estimate(yes_understood, understood, 0.75, 0.75)
        everyone = binary_estimate(yes_understood + yes_other, n, 0.75, 0.75)
        covered += among.ci_low[0] <= prevalence <= among.ci_high[0]
        covered_all += everyone.ci_low[0] <= prevalence <= everyone.ci_high[0]
    assert covered / reps >= 0.945  # exact intervals: at least nominal (se 0.34%)
    assert covered_all / reps < 0.5


def test_the_anchor_correction_is_cwises_bc_est_on_a_worked_example() -> None:
    # 1,000 respondents: 520 "same" to the question (p = 0.25), 650 "same" to the anchor
    # (p' = 0.25); cWise bc.est, line by line (R/bc.est.R):
    #   lambda.hat = 0.52; pi.hat.naive = (lambda.hat + p - 1) / (2p - 1)
    #   gamma.hat = (mean(A) - 0.5) / (0.5 - p.prime)
    #   Bias.hat = (1/2)((lambda.hat - .5)/(p - .5)) - (1/(2 gamma.hat))((lambda.hat - .5)/(p - .5))
    #   pi.hat.bc = pi.hat.naive - Bias.hat
    lam, alpha, p, p_prime = 0.52, 0.65, 0.25, 0.25
    naive = (lam + p - 1) / (2 * p - 1)
    gamma = (alpha - 0.5) / (0.5 - p_prime)
    bias = 0.5 * ((lam - 0.5) / (p - 0.5)) - (1 / (2 * gamma)) * ((lam - 0.5) / (p - 0.5))
    assert naive == pytest.approx(0.46) and gamma == pytest.approx(0.6)
    assert naive - bias == pytest.approx(0.4333333333333333)
    # a joint table with those margins: 400 say "same" to both
    table = np.array([[480 - 250, 250], [520 - 400, 400]])
    assert table.sum() == 1000 and table[1].sum() == 520 and table[:, 1].sum() == 650
    found = cw.bias_corrected(table, p, p_prime, 0.95)
    assert found.naive == pytest.approx(naive, abs=1e-12)
    assert found.attentive == pytest.approx(gamma, abs=1e-12)
    assert found.unbiased == pytest.approx(naive - bias, abs=1e-12)
    # the delta method by brute force: numerical gradient over the four cells' multinomial
    cells = table.ravel() / 1000

    def bc(shares: np.ndarray) -> float:
        share = shares.reshape(2, 2)
        return cw.corrected(share[1].sum(), p, cw.attentive_share(share[:, 1].sum(), p_prime))

    gradient = np.array([(bc(cells + e) - bc(cells - e)) / 2e-7 for e in np.eye(4) * 1e-7])
    covariance = (np.diag(cells) - np.outer(cells, cells)) / (1000 - 1)
    assert found.se == pytest.approx(math.sqrt(gradient @ covariance @ gradient), rel=1e-6)


@pytest.mark.slow
def test_the_anchor_correction_covers_by_simulation() -> None:
    rng = np.random.default_rng(11)
    reps = 3000
    covered = []
    for prevalence, attentive, n in [(0.2, 0.8, 2000), (0.1, 0.9, 1000), (0.3, 0.7, 3000)]:
        hits = naive_hits = 0
        for _ in range(reps):
            careful = rng.random(n) < attentive
            truth = rng.random(n) < prevalence
            y = np.where(careful, truth == (rng.random(n) < 0.25), rng.random(n) < 0.5)
            a = np.where(careful, rng.random(n) >= 0.25, rng.random(n) < 0.5)
            table = np.zeros((2, 2))
            np.add.at(table, (y.astype(int), a.astype(int)), 1)
            found = cw.bias_corrected(table, 0.25, 0.25)
            hits += found.ci[0] <= prevalence <= found.ci[1]
            naive_hits += abs(found.naive - prevalence) <= 1.96 * math.sqrt(
                table[1].sum() / n * (1 - table[1].sum() / n) / (n - 1)) / 0.5
        covered.append(hits / reps)
        if attentive <= 0.8:  # a bias of over 3 standard errors: without the anchor it misses
            assert naive_hits / reps < 0.3
    assert min(covered) >= 0.94 and float(np.mean(covered)) >= 0.945, covered


def test_sensitivity_bounds_are_cmbounds_estimates() -> None:
    rows = cw.sensitivity(640, 1000, 0.25, 0.95)
    assert [r["inattentive"] for r in rows] == [round(0.05 * i, 2) for i in range(11)]
    assert rows[0]["unbiased"] == pytest.approx((0.64 + 0.25 - 1) / (0.5 - 1))
    for row in rows:
        gamma = 1 - row["inattentive"]
        # cmBound: pi.hat.naive - Bias.hat at each gamma
        naive = (0.64 + 0.25 - 1) / (0.5 - 1)
        bias = 0.5 * (0.14 / -0.25) - (1 / (2 * gamma)) * (0.14 / -0.25)
        assert row["unbiased"] == pytest.approx(naive - bias, abs=1e-12)
        assert row["se"] == pytest.approx(
            math.sqrt(0.64 * 0.36 / 999) / 0.5 / gamma, abs=1e-12)


def test_the_anchor_in_an_analysis_corrects_from_the_joint_reports(tmp_path: Path) -> None:
    survey = tmp_path / "campus.md"
    survey.write_text(
        "---\nid: campus\ntitle: Campus\nlanguage: en\nprivacy: {budget: 1.1}\n"
        "submit: {to: collector}\n---\n\n## I have cheated.\n\n```question\nid: cheated\n"
        "type: yes-no\nrandomize: crosswise\np: 1/4\ninnocuous: My father was born in "
        "January to March.\n```\n\n## I was born on 30 February.\n\n```question\nid: anchor\n"
        "type: yes-no\nrandomize: crosswise\nanchor: true\np: 1/4\ninnocuous: My mother was born "
        "in January to March.\n```\n", "utf-8")
    # the anchor is left out of the budget: one crosswise question spends ln 3 < 1.1
    assert load_survey(str(survey)).spent()[0] == pytest.approx(math.log(3))
    manifest = load_survey(str(survey)).manifest()
    rng = random.Random(3)
    rows = []
    for _ in range(3000):
        careful, truth = rng.random() < 0.8, rng.random() < 0.3
        same = (truth == (rng.random() < 0.25)) if careful else rng.random() < 0.5
        anchor_same = (rng.random() >= 0.25) if careful else rng.random() < 0.5
        rows.append({"survey": "campus", "version": manifest["version"],
                     "respondent": secrets.token_urlsafe(16), "submitted_at": "",
                     "cheated": "same" if same else "different",
                     "anchor": "same" if anchor_same else "different"})
    rows[0]["anchor"] = ""  # one respondent skipped the anchor: left out of the joint table
    export = write(tmp_path / "export.csv", rows)
    data = analyze([export], survey=survey, progress=False).to_dict()
    corrected = data["compliance"]["anchor"]["corrected"][0]
    table = np.zeros((2, 2))
    for r in rows[1:]:
        table[int(r["cheated"] == "same"), int(r["anchor"] == "same")] += 1
    expected = cw.bias_corrected(table, 0.25, 0.25)
    assert corrected["n"] == 2999
    assert corrected["unbiased"] == pytest.approx(expected.unbiased, abs=1e-12)
    assert corrected["se"] == pytest.approx(expected.se, abs=1e-12)
    assert corrected["ci"][0] <= 0.3 <= corrected["ci"][1]
    bounds = data["compliance"]["bounds"]
    assert [b["question"] for b in bounds] == ["cheated"]  # the anchor has none
    privacy = {q["id"]: q for q in data["privacy"]["questions"]}
    assert privacy["anchor"]["anchor"] and "left out" in privacy["anchor"]["statement"]
    assert data["privacy"]["per_respondent"]["epsilon"] == pytest.approx(math.log(3))


def test_a_simulated_anchor_is_false_for_everyone(tmp_path: Path) -> None:
    survey = tmp_path / "anchor.md"
    survey.write_text(
        "---\nid: a\ntitle: A\nlanguage: en\nprivacy: {budget: 1}\nsubmit: {to: collector}\n"
        "---\n\n## I was born on 30 February.\n\n```question\nid: anchor\ntype: yes-no\n"
        "randomize: crosswise\nanchor: true\np: 1/4\ninnocuous: My mother was born in January "
        "to March.\n```\n", "utf-8")
    export = tmp_path / "a.csv"
    assert main(["simulate", str(survey), "--respondents", "4000", "--seed", "2", "-o",
                 str(export)]) == 0
    with open(export, newline="", encoding="utf-8") as handle:
        same = sum(r["anchor"] == "same" for r in csv.DictReader(handle)) / 4000
    # every simulated respondent is attentive and the statement false: "same" = 1 - p' = 3/4
    assert same == pytest.approx(0.75, abs=3 * math.sqrt(0.75 * 0.25 / 4000))
