"""Randomized number questions at the collector: reports checked against the design."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrsite.collect.manifests import SubmissionError, compile_manifest
from rrsite.survey import load_survey

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rules():
    manifest = load_survey(ROOT / "surveys" / "hidden-numbers.md").manifest()
    return compile_manifest(manifest)


def test_additive_report_outside_the_answer_range_is_stored(rules) -> None:
    stored = rules.check_answers({"region": "North", "undeclared": -1234.5, "days": 3})
    assert stored["undeclared"] == -1234.5 and stored["days"] == 3


@pytest.mark.parametrize(("answers", "words"), [
    ({"region": "North", "undeclared": 10.0, "days": 12.5}, "impossible report under design "
     "mixture"),
    ({"region": "North", "undeclared": 10.0, "days": 31}, "neither a possible answer"),
    ({"region": "North", "undeclared": "12", "days": 3}, "must be a number"),
])
def test_impossible_reports_are_refused(rules, answers, words) -> None:
    with pytest.raises(SubmissionError) as info:
        rules.check_answers(answers)
    assert words in str(info.value.error)


def test_multiplicative_report_of_the_wrong_sign_is_refused() -> None:
    from rrsite.core.numbers import Multiplicative

    design = Multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0.0, 0, 1000)
    manifest = {"id": "m", "version": "00112233aabbccdd", "questions": [
        {"id": "bribes", "type": "number", "sensitive": True, "required": True, "min": 0,
         "max": 1000, "design": design.spec()}]}
    rules = compile_manifest(manifest)
    assert rules.check_answers({"bribes": 1400.0})["bribes"] == 1400.0
    with pytest.raises(SubmissionError) as info:
        rules.check_answers({"bribes": -3.0})
    assert "negative" in str(info.value.error)
