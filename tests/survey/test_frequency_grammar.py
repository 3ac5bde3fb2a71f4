"""Survey files with frequency oracles, "tick all that apply" and series: manifest and refusals."""

from __future__ import annotations

import math

import pytest

from rrsite.collect.manifests import SubmissionError, compile_manifest
from rrsite.core.frequency import Memoized, auto, oracle_from_spec
from rrsite.survey import SurveyErrors, parse_survey

HEAD = """---
id: many
title: Many answers
privacy:
  budget: {budget}
{extra}---
"""

OPTIONS20 = "[" + ", ".join(f"Option {i}" for i in range(1, 21)) + "]"


def survey(blocks: str, budget: float = 10, extra: str = "") -> str:
    return HEAD.format(budget=budget, extra=extra) + blocks


def block(body: str, title: str = "A question?") -> str:
    return f"\n## {title}\n\n```question\n{body.strip()}\n```\n"


def refuse(text: str) -> list[tuple[int, str]]:
    with pytest.raises(SurveyErrors) as caught:
        parse_survey(text, "s.md")
    return [(error.line, error.message) for error in caught.value.errors]


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_choice_under_an_epsilon_gets_auto_and_says_why() -> None:
    text = survey(block(f"id: used\ntype: choice\noptions: {OPTIONS20}\nepsilon: 1"))
    entry = parse_survey(text).manifest()["questions"][0]
    choice = auto(20, 1.0)
    assert entry["design"] == choice.design.spec()
    assert entry["chosen_for"]["design"] == choice.name == "subset"
    assert entry["chosen_for"]["variances"]["k-rr"] > entry["chosen_for"]["variances"]["subset"]
    assert "smallest variance" in entry["chosen_for"]["reason"]
    assert entry["epsilon"] == pytest.approx(1.0)
    assert entry["oracle"] == {"p": choice.design.p, "q": choice.design.q,
                               "ratio": choice.design.ratio}
    assert "matrix" not in entry


def test_small_choices_keep_krr() -> None:
    text = survey(block("id: year\ntype: choice\noptions: [A, B, C]\nepsilon: 1"))
    entry = parse_survey(text).manifest()["questions"][0]
    assert entry["design"]["name"] == "k-rr" and "matrix" in entry
    assert entry["chosen_for"]["design"] == "k-rr"


@pytest.mark.parametrize("name,extra", [("oue", ""), ("sue", ""), ("olh", "g: 5"),
                                         ("subset", "d: 4"), ("hadamard", "")])
def test_named_oracles(name: str, extra: str) -> None:
    text = survey(block(f"id: used\ntype: choice\noptions: {OPTIONS20}\nrandomize: {name}\n"
                        f"epsilon: 2\n{extra}"))
    entry = parse_survey(text).manifest()["questions"][0]
    design = oracle_from_spec(entry["design"])
    assert design.name == name and design.k == 20
    assert entry["epsilon"] == pytest.approx(design.exact_epsilon())
    if extra:
        key, value = extra.split(": ")
        assert entry["design"][key] == int(value)


def test_multi_choice_is_randomized_as_a_set() -> None:
    text = survey(block("id: did\ntype: multi-choice\noptions: [A, B, C, D, E, F]\n"
                        "epsilon: 2\nmax_ticks: 2"))
    entry = parse_survey(text).manifest()["questions"][0]
    assert entry["sensitive"] and entry["type"] == "multi-choice"
    assert entry["design"]["max_ticks"] == 2 and entry["design"]["name"] in ("oue", "sue")
    assert entry["epsilon"] == pytest.approx(2.0)
    rules = compile_manifest(parse_survey(text).manifest())
    assert rules.check_answers({"did": ["A", "F"]}) == {"did": ["A", "F"]}
    with pytest.raises(SubmissionError, match="not one of the options"):
        rules.check_answers({"did": ["A", "Z"]})


@pytest.mark.parametrize("name,report,good", [
    ("olh", "3:1", True), ("olh", "3:9", False), ("olh", "x", False),
    ("hadamard", "7", True), ("hadamard", "64", False), ("subset", ["Option 1"], False),
    ("oue", ["Option 1", "Option 3"], True), ("oue", "Option 1", False)])
def test_the_collector_checks_each_oracles_reports(name: str, report: object, good: bool) -> None:
    text = survey(block(f"id: used\ntype: choice\noptions: {OPTIONS20}\nrandomize: {name}\n"
                        "epsilon: 1\n" + ("g: 5\n" if name == "olh" else "")
                        + ("d: 3\n" if name == "subset" else "")))
    rules = compile_manifest(parse_survey(text).manifest())
    if good:
        assert rules.check_answers({"used": report}) == {"used": report}
    else:
        with pytest.raises(SubmissionError) as caught:
            rules.check_answers({"used": report})
        assert caught.value.field == "answers.used"


REFUSALS = [
    ("id: u\ntype: choice\noptions: [A, B, C]\nrandomize: oue\nepsilon: 1\ng: 3", "g",
     "g is a parameter of olh, not oue"),
    ("id: u\ntype: multi-choice\noptions: [A, B, C]\nepsilon: 1", "epsilon",
     "needs max_ticks"),
    ("id: u\ntype: multi-choice\noptions: [A, B, C]\nepsilon: 1\nmax_ticks: 4", "max_ticks",
     "max_ticks is 4 but the question has 3 options"),
    ("id: u\ntype: multi-choice\noptions: [A, B, C]\nrandomize: olh\nepsilon: 1\nmax_ticks: 1",
     "randomize", "design olh sends one answer"),
    ("id: u\ntype: choice\noptions: [A, B, C]\nrandomize: olh\nepsilon: 1\ng: 4", "g",
     "g must be a prime"),
    ("id: u\ntype: choice\noptions: [A, B, C]\nrandomize: hadamard", "randomize",
     "needs epsilon"),
    ("id: u\ntype: choice\noptions: [A, B, C]\nepsilon: 1\nmax_ticks: 2", "max_ticks",
     "max_ticks applies to randomized multi-choice questions"),
    ("id: u\ntype: choice\noptions: [A, B]\nrandomize: subset\nepsilon: 1", "randomize",
     "at least 3 options"),
    ("id: u\ntype: choice\noptions: [A, B, C]\nepsilon: 1\nwave_epsilon: 0.5", "wave_epsilon",
     "wave_epsilon applies to a survey in a series"),
]


@pytest.mark.parametrize("body,key,message", REFUSALS, ids=[r[2][:30] for r in REFUSALS])
def test_refusals_name_the_line(body: str, key: str, message: str) -> None:
    text = survey(block(body))
    errors = refuse(text)
    assert any(message in text_ and line == line_of(text, f"{key}:") for line, text_ in errors), \
        errors


PANEL = """series: climate
wave: 3
"""


def test_a_wave_of_a_series_states_its_ledger() -> None:
    text = survey(block("id: did\ntype: multi-choice\noptions: [A, B, C, D]\nepsilon: 2\n"
                        "max_ticks: 2\nwave_epsilon: 1")
                  + block("id: yes\ntype: yes-no\nrandomize: forced-response\ntruth: 0.5",
                          "Yes?")
                  + block("id: born\ntype: choice\noptions: " + OPTIONS20 + "\nepsilon: 1.5",
                          "Where?"),
                  extra=PANEL)
    parsed = parse_survey(text)
    manifest = parsed.manifest()
    assert manifest["series"] == {"id": "climate", "wave": 3, "waves": None}
    did, yes, born = manifest["questions"]
    memo_did = Memoized(oracle_from_spec(did["design"]), 1.0)
    assert did["memoize"]["ledger"] == pytest.approx(memo_did.ledger(3))
    assert did["epsilon"] == pytest.approx(1.0)  # one wave
    assert did["memoize"]["epsilon_all_waves"] == pytest.approx(2.0)
    assert yes["memoize"]["wave_epsilon"] == pytest.approx(math.log(3) / 2)  # half by default
    assert born["design"]["name"] in ("k-rr", "oue", "olh")  # auto weighs the memoizable ones
    ledger = manifest["privacy"]["series"]
    ones = [q["memoize"]["ledger"] for q in (did, yes, born)]
    assert ledger["one_wave"]["epsilon"] == pytest.approx(sum(x[0] for x in ones))
    assert ledger["through_this_wave"]["epsilon"] == pytest.approx(sum(x[2] for x in ones))
    assert ledger["all_waves"]["epsilon"] == pytest.approx(
        sum(q["memoize"]["epsilon_all_waves"] for q in (did, yes, born)))
    assert ledger["without_kept_reports"]["epsilon"] == pytest.approx(
        3 * ledger["one_wave"]["epsilon"])
    assert manifest["privacy"]["spent"]["epsilon"] == pytest.approx(ledger["one_wave"]["epsilon"])


def test_series_refusals() -> None:
    text = survey(block("id: u\ntype: yes-no\nrandomize: forced-response"), extra="series: s\n")
    assert any("needs wave" in m for _, m in refuse(text))
    text = survey(block("id: u\ntype: yes-no\nrandomize: forced-response"), extra="wave: 2\n")
    assert any("add `series: <id>` too" in m for _, m in refuse(text))
    text = survey(block("id: u\ntype: yes-no\nrandomize: forced-response\nwave_epsilon: 2"),
                  extra=PANEL)
    errors = refuse(text)
    assert any("wave_epsilon must be below" in m and line == line_of(text, "wave_epsilon")
               for line, m in errors), errors
    text = survey(block("id: u\ntype: yes-no\nrandomize: crosswise\np: 0.2\ninnocuous: Born in "
                        "May?"), extra=PANEL)
    assert any("no permanent report" in m and "waves: N" in m for _, m in refuse(text))
    # with waves planned, crosswise is charged once per wave against the budget
    text = survey(block("id: u\ntype: yes-no\nrandomize: crosswise\np: 0.2\ninnocuous: Born in "
                        "May?"), budget=5, extra=PANEL + "waves: 4\n")
    assert any("over all waves of the series" in m for _, m in refuse(text))


def test_memoize_changes_the_version() -> None:
    plain = survey(block("id: u\ntype: yes-no\nrandomize: forced-response"))
    panel = survey(block("id: u\ntype: yes-no\nrandomize: forced-response"), extra=PANEL)
    assert parse_survey(plain).version != parse_survey(panel).version


def test_the_split_ballot_leaves_frequency_oracles_out() -> None:
    """validation: without questions takes the matrix designs only; naming an oracle is refused
    at the line of its questions:, with the design named."""
    blocks = (block(f"id: most\ntype: choice\noptions: {OPTIONS20}\nepsilon: 1") +
              block("id: did\ntype: yes-no\nrandomize: forced-response"))
    split = "validation:\n  direct_share: 0.3\n"
    parsed = parse_survey(survey(blocks, extra=split), "s.md")
    assert parsed.validation is not None and parsed.validation["questions"] == ["did"]
    named = survey(blocks, extra=split + "  questions: [most]\n")
    [(line, message)] = refuse(named)
    assert line == line_of(named, "questions: [most]")
    assert "'most' uses a frequency oracle (subset)" in message
