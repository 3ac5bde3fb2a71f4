"""`type: number` with `randomize:` (rrsite.core.numbers): manifest, privacy, budget, refusals."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rrsite.core import design_from_spec, privacy_of
from rrsite.survey import load_survey
from tests.surveytext import DID

ROOT = Path(__file__).resolve().parents[2]

HEAD = """\
---
id: numbers-test
title: Numbers
privacy:
  budget: 6
---
## Did you?

""" + DID + """
## How many days?

```question
id: days
type: number
min: 0
max: 30
integer: true
unit: days
{design}
```
"""


def _survey(design: str) -> str:
    return HEAD.replace("{design}", design.strip("\n"))


def test_example_survey_builds_with_exact_epsilon() -> None:
    survey = load_survey(ROOT / "surveys" / "hidden-numbers.md")
    manifest = survey.manifest()
    days = next(q for q in manifest["questions"] if q["id"] == "days")
    assert days["design"]["name"] == "mixture"
    assert days["unit"] == "days" and days["required"] is True
    # MATH.md section 9: ln(1 + 31 p / (1 - p)) with p = 1/2
    assert days["epsilon"] == pytest.approx(math.log(32))
    income = next(q for q in manifest["questions"] if q["id"] == "undeclared")
    assert income["epsilon"] is None and income["not_private"]
    assert manifest["privacy"]["not_private"] == ["undeclared"]
    assert manifest["privacy"]["spent"]["epsilon"] == pytest.approx(math.log(32))


def test_budget_composes_number_and_binary_questions(load, refuse, helpers) -> None:
    text = _survey("randomize: duchi\nepsilon: 2")
    survey = load(text)
    expected = 2.0 + privacy_of(design_from_spec({"name": "forced-response"})).epsilon
    assert survey.manifest()["privacy"]["spent"]["epsilon"] == pytest.approx(expected)
    over = text.replace("budget: 6", "budget: 3")
    error = helpers.only(refuse(over))
    assert error.line == helpers.line_of(over, "budget: 3")
    assert "days 2" in error.message and "did 1.09861" in error.message


@pytest.mark.parametrize("design", [
    "randomize: laplace\nepsilon: 1",
    "randomize: piecewise\nepsilon: 1.5",
    "randomize: mixture\np: 0.4\nmask: {values: [0, 5, 10, 15, 20, 25, 30, 1, 2, 3, 4, 6, 7, 8, 9,"
    " 11, 12, 13, 14, 16, 17, 18, 19, 21, 22, 23, 24, 26, 27, 28, 29]}",
])
def test_designs_with_an_epsilon_build(load, design: str) -> None:
    question = load(_survey(design)).manifest()["questions"][1]
    assert isinstance(question["epsilon"], float) and question["delta"] == 0.0


@pytest.mark.parametrize(("design", "needle", "fragments"), [
    ("randomize: mixture\np: 0.5", "randomize", ("needs mask",)),
    ("randomize: mixture\np: 0.5\nmask: {normal: {mean: 5, sd: 0}}", "mask:",
     ("sd must be above 0",)),
    ("randomize: mixture\np: 0.5\nmask: {normal: {mean: 5, sd: 2}}", "randomize",
     ("not differentially private", "continuous", "accept_no_epsilon")),
    ("randomize: mixture\np: 0.5\nmask: {uniform: {min: 0, max: 30}}\naccept_no_epsilon: true",
     "accept_no_epsilon", ("has epsilon",)),
    ("randomize: mixture\np: 0.5\nmask: {values: [0, 1, 2]}", "randomize",
     ("never draws 3",)),
    ("randomize: additive\nscramble: {uniform: {min: -5, max: 5}}\ntruth: 0.5", "truth",
     ("not a parameter of additive",)),
    ("randomize: laplace", "randomize", ("needs epsilon",)),
    ("randomize: forced-response", "randomize", ("forced-response is for yes-no",)),
    ("randomize: multiplicative\nscramble: {normal: {mean: 1, sd: 0.1}}\n"
     "accept_no_epsilon: true", "scramble:", ("positive",)),
    ("randomize: mixture\np: 1.5\nmask: {uniform: {min: 0, max: 30}}", "p: 1.5",
     ("probability",)),
])
def test_refusals_name_the_line(refuse, helpers, design: str, needle: str,
                                fragments: tuple[str, ...]) -> None:
    text = _survey(design)
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, needle, 2 if needle == "randomize" else 1),
                *fragments)


def test_number_design_on_a_yes_no_question_is_refused(refuse, helpers) -> None:
    text = HEAD.replace("randomize: forced-response", "randomize: duchi\nepsilon: 1").replace(
        "{design}", "")
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, "randomize: duchi"), "for number questions")


def test_laplace_needs_a_range(refuse, helpers) -> None:
    text = _survey("randomize: laplace\nepsilon: 1").replace("max: 30\n", "")
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, "randomize: laplace"), "needs max")


def test_mixture_unknown_manifest_has_groups_and_innocuous(load) -> None:
    text = _survey("randomize: mixture-unknown\np: [0.2, 0.8]\n"
                   "innocuous: How many days of the last 30 did you go for a walk?\n"
                   "accept_no_epsilon: true")
    question = load(text).manifest()["questions"][1]
    assert question["design"]["p"] == [0.2, 0.8]
    assert [g["id"] for g in question["groups"]] == [1, 2]
    assert question["innocuous"].startswith("How many days")
    assert question["epsilon"] is None
