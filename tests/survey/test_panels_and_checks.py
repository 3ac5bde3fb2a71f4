"""`panel:`, `check:` and `validation:` in survey files: what the manifest declares (the contract
the analysis is built against, docs/contracts.md) and what the build refuses, with its line."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rrsite.survey import Survey, SurveyError, parse_survey
from tests.surveytext import line_of

BASE = """\
---
id: study
title: Study
privacy:
  budget: 4
{front}
---
## Are you a student?

```question
id: student
type: yes-no
{student}
```

## Have you used stimulants to study?

```question
id: stimulants
type: yes-no
randomize: forced-response
truth: 0.7
{stimulants}
```

## Have you ever cheated?

```question
id: cheated
type: yes-no
randomize: warner
p: 0.8
```
"""


def text(front: str = "", student: str = "", stimulants: str = "") -> str:
    return BASE.format(front=front, student=student, stimulants=stimulants)


def errors(source: str) -> list[str]:
    from rrsite.survey import SurveyErrors

    with pytest.raises(SurveyErrors) as caught:
        parse_survey(source, "s.md")
    return [f"{e.line}: {e.message}" for e in caught.value.errors]


PROLIFIC = """panel:
  provider: prolific
  complete: C1A2B3C4
  screen_out: SCRN0001
  record: true"""


# ---- panels -------------------------------------------------------------------------------------


def test_a_prolific_panel_in_the_manifest() -> None:
    survey = parse_survey(text(PROLIFIC, student="screen_out: [\"no\"]"))
    manifest = survey.manifest()
    assert manifest["panel"] == {
        "provider": "prolific", "id": "PROLIFIC_PID", "name": "Prolific",
        "complete": "C1A2B3C4",
        "redirect": "https://app.prolific.com/submissions/complete?cc={code}",
        "screen_out": "SCRN0001", "over_quota": None, "no_consent": None, "record": True}
    assert manifest["questions"][0]["screen_out"] == ["no"]
    # the panel changes no answer's meaning: the version is the survey's without it
    assert survey.version == parse_survey(text()).version


@pytest.mark.parametrize(("provider", "parameter", "redirect"), [
    ("mturk", "workerId", None), ("cloudresearch", "participantId", None)])
def test_mturk_and_cloudresearch_defaults(provider: str, parameter: str,
                                          redirect: str | None) -> None:
    panel = parse_survey(text(f"panel: {{provider: {provider}, complete: ABC123}}")).panel
    assert panel is not None
    assert (panel["id"], panel["redirect"], panel["record"]) == (parameter, redirect, False)


def test_a_url_panel_needs_its_id_parameter_and_a_redirect_with_code() -> None:
    source = text("panel: {provider: url, complete: ABC123}")
    assert errors(source) == [f"{line_of(source, 'provider: url')}: panel: provider url needs "
                              "`id:`, the query parameter of the study link that holds the "
                              "participant's id (e.g. id: rid)"]
    good = parse_survey(text("panel: {provider: url, id: rid, complete: ABC123, redirect: "
                             "'https://panel.example/end?status=complete&rid={id}&c={code}'}"))
    assert good.panel is not None and good.panel["id"] == "rid"
    bad = text("panel: {provider: url, id: rid, complete: ABC123, redirect: "
               "'https://panel.example/end?rid={id}'}")
    assert any("must contain {code}" in m for m in errors(bad))
    plain = text("panel: {provider: url, id: rid, complete: ABC123, redirect: "
                 "'http://panel.example/{code}'}")
    assert any("must be an https URL" in m for m in errors(plain))


@pytest.mark.parametrize(("front", "said"), [
    ("submit: {to: download}", "panel: needs `submit: {to: collector}` or `{to: endpoint}`"),
    ("mode: kiosk\nsubmit: {to: collector}", "panel: is for participants on their own devices"),
])
def test_a_panel_needs_an_acknowledgement_and_one_respondent_per_device(front: str,
                                                                        said: str) -> None:
    source = text(f"{front}\n{PROLIFIC}")
    assert any(said in m and m.startswith(f"{line_of(source, 'panel:')}:")
               for m in errors(source))


def test_screen_out_is_refused_where_it_would_leak_or_mean_nothing() -> None:
    source = text(PROLIFIC, stimulants="screen_out: [\"no\"]")
    assert errors(source) == [f"{line_of(source, 'screen_out: [')}: screen_out on 'stimulants', a "
                              "randomized question: leaving the survey on an answer would tell "
                              "its true answer; screen with a direct question"]
    source = text(student="screen_out: [\"no\"]")
    assert errors(source) == [f"{line_of(source, 'screen_out: [')}: screen_out applies to a "
                              "survey with `panel:` (it sends the participant back to the panel)"]
    source = text(PROLIFIC, student="screen_out: [maybe]")
    assert errors(source) == [f"{line_of(source, 'screen_out: [')}: screen_out: 'maybe' is not an "
                              "answer of 'student' (no, yes)"]
    source = text(PROLIFIC.replace("  screen_out: SCRN0001\n", ""), student="screen_out: [\"no\"]")
    assert any("screen_out needs the panel's screen-out code" in m for m in errors(source))


# ---- comprehension checks -----------------------------------------------------------------------


def test_a_check_is_a_direct_question_before_its_question() -> None:
    manifest = parse_survey(text(stimulants="check: true")).manifest()
    ids = [q["id"] for q in manifest["questions"]]
    assert ids == ["student", "stimulants_check", "stimulants", "cheated"]
    check = manifest["questions"][1]
    assert check == {
        "id": "stimulants_check",
        "text": "Before you answer: if the draw on your device says “Yes”, what is sent?",
        "type": "choice", "sensitive": False, "required": True,
        "values": ["yes", "truth", "no"],
        "options": [{"value": "yes", "label": "“Yes”, whatever my answer"},
                    {"value": "truth", "label": "My true answer"},
                    {"value": "no", "label": "“No”"}],
        "role": "check",
        "check": {"question": "stimulants", "instruction": "yes", "correct": "yes"}}
    # covered by the version: the check changes what the survey asks
    assert parse_survey(text(stimulants="check: true")).version != parse_survey(text()).version


def test_a_check_in_another_language_uses_its_words() -> None:
    source = text(stimulants="check: true").replace("title: Study", "title: Study\nlanguage: fr")
    check = parse_survey(source).question("stimulants_check")
    assert check.text == ("Avant de répondre : si le tirage sur votre appareil donne « Oui », "
                          "qu’est-ce qui est envoyé ?")
    assert [o.label for o in check.options] == ["« Oui », quelle que soit ma réponse",
                                                "Ma vraie réponse", "« Non »"]


def test_a_check_needs_a_design_that_can_force_an_answer() -> None:
    source = text().replace("p: 0.8", "p: 0.8\ncheck: true")
    assert errors(source) == [f"{line_of(source, 'check: true')}: check asks what is sent when "
                              "the device's draw says “Yes”, which forced-response, forced-yes, "
                              "cdm, cdm-sym draw; cheated uses warner"]
    source = text(student="check: true")
    assert errors(source) == [f"{line_of(source, 'check: true')}: check asks what is sent when "
                              "the device's draw says “Yes”, which forced-response, forced-yes, "
                              "cdm, cdm-sym draw; student is not randomized"]


# ---- validation: the direct arm -----------------------------------------------------------------


def test_the_direct_arm_in_the_manifest() -> None:
    survey = parse_survey(text("validation: {direct_share: 0.3, questions: [stimulants]}",
                               stimulants="check: true"))
    manifest = survey.manifest()
    questions = {q["id"]: q for q in manifest["questions"]}
    assert [q["id"] for q in manifest["questions"]] == [
        "arm", "student", "stimulants_check", "stimulants", "stimulants_direct", "cheated"]
    assert questions["arm"] == {
        "id": "arm", "text": "How the comparison questions were asked", "type": "choice",
        "sensitive": False, "required": True, "values": ["randomized", "direct"],
        "options": [{"value": "randomized", "label": "With the randomizer"},
                    {"value": "direct", "label": "Directly"}],
        "role": "arm", "direct_share": 0.3}
    randomized = {"question": "arm", "is": ["randomized"]}
    assert questions["stimulants"]["show_if"] == randomized
    assert questions["stimulants_check"]["show_if"] == randomized
    direct = questions["stimulants_direct"]
    assert direct == {
        "id": "stimulants_direct", "text": "Have you used stimulants to study?",
        "type": "yes-no", "sensitive": False, "required": True, "values": ["no", "yes"],
        "options": [{"value": "no", "label": "No"}, {"value": "yes", "label": "Yes"}],
        "show_if": {"question": "arm", "is": ["direct"]}, "role": "direct",
        "direct": {"question": "stimulants"}}
    assert "cheated" in questions and "show_if" not in questions["cheated"]
    assert manifest["validation"] == {"direct_share": 0.3, "questions": ["stimulants"],
                                      "arm": "arm", "direct": {"stimulants": "stimulants_direct"}}
    arm = manifest["privacy"]["direct_arm"]
    assert arm["share"] == 0.3 and arm["questions"] == ["stimulants_direct"]
    assert arm["epsilon"] is None and "no deniability" in arm["note"]
    assert "without the randomizer" in survey.question("stimulants_direct").help_html


def test_every_randomized_yes_no_and_choice_question_by_default() -> None:
    validation = parse_survey(text("validation: {direct_share: 0.5}")).validation
    assert validation is not None and validation["questions"] == ["stimulants", "cheated"]


def test_the_collector_accepts_each_arm_and_refuses_a_mix() -> None:
    """The show_if of the arm, as the collector enforces it (rrsite.collect.manifests)."""
    from rrsite.collect.manifests import SubmissionError, compile_manifest

    rules = compile_manifest(parse_survey(text("validation: {direct_share: 0.3}")).manifest())
    rules.check_answers({"arm": "randomized", "stimulants": "yes", "cheated": "no"})
    rules.check_answers({"arm": "direct", "stimulants_direct": "yes", "cheated_direct": "no"})
    with pytest.raises(SubmissionError) as caught:
        rules.check_answers({"arm": "direct", "stimulants": "yes", "stimulants_direct": "yes",
                             "cheated_direct": "no"})
    assert caught.value.field == "answers.stimulants"
    with pytest.raises(SubmissionError):
        rules.check_answers({"stimulants": "yes", "cheated": "no"})  # the arm is required


@pytest.mark.parametrize(("validation", "said"), [
    ("{direct_share: 0.3, questions: [student]}", "validation: 'student' is not a randomized "
     "yes-no or choice question"),
    ("{direct_share: 0.3, questions: [nope]}", "validation: no question has id 'nope'"),
    ("{direct_share: 1.5}", "direct_share must be"),
    ("{questions: [stimulants]}", "is missing 'direct_share'"),
])
def test_validation_refusals(validation: str, said: str) -> None:
    assert any(said in m for m in errors(text(f"validation: {validation}")))


def test_validation_ids_may_not_clash() -> None:
    source = text("validation: {direct_share: 0.3}").replace("id: student", "id: arm")
    assert errors(source) == [f"{line_of(source, 'id: arm')}: question id 'arm' is the one rrsite "
                              "gives the arm of the split (validation:): rename this question"]


def test_check_survey_counts_no_added_question_among_identifying_answers(
        load: Callable[[str], Survey]) -> None:
    from rrsite.survey.check import check_survey

    # 20 respondents: student's two answers alone single no one out, but with the arm (2), a
    # check (3) and two direct versions (2 x 2) counted they would (48 combinations)
    fielded = check_survey(parse_survey(text("validation: {direct_share: 0.3}",
                                             stimulants="check: true")), 20)
    assert all(isinstance(w, SurveyError) for w in fielded)
    assert [w for w in fielded if "combinations of answers" in w.message] == []
    languages = check_survey(parse_survey(text("language: en")), 20)
    assert [w for w in languages if "combinations of answers" in w.message] == []


def test_a_check_on_a_design_that_fails_adds_no_error_of_its_own() -> None:
    source = text(stimulants="check: true").replace(
        "randomize: forced-response\ntruth: 0.7", "randomize: cdm\np: [0.2, 0.3]")
    messages = errors(source)
    assert len(messages) == 1 and "design cdm is not differentially private" in messages[0]
    fixed = parse_survey(source.replace("check: true", "check: true\naccept_no_epsilon: true"))
    assert fixed.question("stimulants_check").role == "check"
