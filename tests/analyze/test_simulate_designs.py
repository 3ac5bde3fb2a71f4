"""`rrsite simulate` through RRreg's designs: report values, groups, and their frequencies."""

import csv
import json

import pytest
from scipy import stats

from rrsite.cli import main
from tests.surveytext import MOTHER, question, survey_text

N = 200_000
SURVEY = survey_text(
    "designs-sim",
    question("cheated", "yes-no", randomize="sld", p="[0.3, 0.75]", probability=0.4,
             accept_no_epsilon="true"),
    question("tax", "yes-no", randomize="crosswise", p="1/4", innocuous=MOTHER),
    question("drugs", "yes-no", randomize="kuk", red_yes=0.6, red_no=0.2, cards=2),
    question("shop", "yes-no", randomize="cdm-sym", yes="[0.2, 0.3]", no="[0.1, 0.25]"),
    title="Simulated designs")
TRUTH = {"cheated": 0.3, "tax": 0.2, "drugs": 0.1, "shop": 0.4}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    root = tmp_path_factory.mktemp("sim")
    (root / "s.md").write_text(SURVEY, encoding="utf-8")
    truths = [arg for q, r in TRUTH.items() for arg in ("--truth", f"{q}={r}")]
    out = root / "out.csv"
    assert main(["simulate", str(root / "s.md"), "--respondents", str(N), *truths, "--seed", "4",
                 "-o", str(out)]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        return header, [dict(zip(header, row, strict=True)) for row in reader]


def check_rate(hits, n, expected):
    # two-sided exact binomial test (seeded: never flaky); over all 200,000 rows a 1% error in a
    # rate near 0.5 gives p < 1e-6
    assert stats.binomtest(hits, n, expected).pvalue > 1e-6, (hits, n, expected)


def test_columns_put_each_group_after_its_question(rows):
    header, _ = rows
    assert header[4:] == ["cheated", "cheated.group", "tax", "drugs", "shop", "shop.group"]


def test_groups_are_drawn_with_the_design_probability(rows):
    _, data = rows
    for qid, p1 in (("cheated", 0.4), ("shop", 0.5)):
        groups = [r[f"{qid}.group"] for r in data if r[qid]]
        assert set(groups) == {"1", "2"}
        check_rate(groups.count("1"), len(groups), p1)
        assert all(r[f"{qid}.group"] == "" for r in data if not r[qid])


def test_reports_follow_each_design(rows):
    _, data = rows
    # SLD, compliant: P(yes | g) = pi + (1 - pi)(1 - p_g)
    for group, p in (("1", 0.3), ("2", 0.75)):
        answers = [r["cheated"] for r in data if r["cheated.group"] == group]
        check_rate(answers.count("yes"), len(answers), 0.3 + 0.7 * (1 - p))
    # crosswise: P(same) = pi p + (1 - pi)(1 - p)
    tax = [r["tax"] for r in data if r["tax"]]
    assert set(tax) == {"same", "different"}
    check_rate(tax.count("same"), len(tax), 0.2 * 0.25 + 0.8 * 0.75)
    # kuk: P(x red) = pi Bin(x; 2, .6) + (1 - pi) Bin(x; 2, .2)
    drugs = [r["drugs"] for r in data if r["drugs"]]
    for x in range(3):
        expected = 0.1 * stats.binom.pmf(x, 2, 0.6) + 0.9 * stats.binom.pmf(x, 2, 0.2)
        check_rate(drugs.count(str(x)), len(drugs), expected)
    # CDMsym, compliant: P(yes | g) = pi (1 - n_g) + (1 - pi) y_g
    for group, y, n in (("1", 0.2, 0.1), ("2", 0.3, 0.25)):
        answers = [r["shop"] for r in data if r["shop.group"] == group]
        check_rate(answers.count("yes"), len(answers), 0.4 * (1 - n) + 0.6 * y)


def test_jsonl_has_groups(tmp_path):
    (tmp_path / "s.md").write_text(SURVEY, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["simulate", str(tmp_path / "s.md"), "--respondents", "50", "--seed", "1",
                 "-o", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 50
    for record in records:
        assert set(record.get("groups", {})) == {q for q in ("cheated", "shop")
                                                 if q in record["answers"]}
        assert all(g in (1, 2) for g in record.get("groups", {}).values())
        assert record["answers"].get("drugs") in (None, "0", "1", "2")
