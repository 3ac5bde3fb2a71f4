"""Consent and show_if in survey files: what they produce and what they refuse."""

from __future__ import annotations

from tests.surveytext import DID_HALF, SMOKER

CONDITIONAL = """\
---
id: conditional
title: Conditional survey
privacy:
  budget: 3.0
consent: |
  You may stop at any time.

  Nothing is sent **unless** you agree.
---
## Do you smoke?

""" + SMOKER + """
## How many a day?

```question
id: daily
type: number
show_if: {question: smoker, is: "yes"}
```

## Have you ever done it?

""" + DID_HALF + """
## Which brands?

```question
id: brands
type: multi-choice
options: [A, B, C]
show_if:
  question: smoker
  is: [yes, no]
```
"""


def replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_consent_and_show_if_reach_the_manifest(load):
    survey = load(CONDITIONAL)
    manifest = survey.manifest()
    assert manifest["consent"].startswith("You may stop at any time.")
    assert "<strong>unless</strong>" in survey.consent_html
    assert survey.consent_html.count("<p>") == 2
    by_id = {q["id"]: q for q in manifest["questions"]}
    assert by_id["daily"]["show_if"] == {"question": "smoker", "is": ["yes"]}
    # YAML 1.1 would read yes/no as booleans; the survey grammar keeps them as written.
    assert by_id["brands"]["show_if"] == {"question": "smoker", "is": ["yes", "no"]}
    assert "show_if" not in by_id["smoker"] and "show_if" not in by_id["did"]


def test_no_consent_leaves_the_manifest_as_before(load, valid):
    assert "consent" not in load(valid).manifest()


def test_show_if_changes_the_version_but_consent_does_not(load):
    base = load(CONDITIONAL).version
    no_consent = CONDITIONAL.split("consent: |")[0] + "---" + CONDITIONAL.split("agree.\n---", 1)[1]
    assert load(no_consent).version == base
    assert load(replace(CONDITIONAL, 'is: "yes"', 'is: "no"')).version != base


def test_condition_on_a_randomized_question_is_refused_with_its_line(refuse, helpers):
    text = replace(CONDITIONAL, "question: smoker\n  is: [yes, no]", "question: did\n  is: [yes]")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "show_if:", 2)
    assert "'did', a randomized question" in error.message
    assert "reveal its true answer" in error.message


def test_condition_on_a_later_or_unknown_question(refuse, helpers):
    text = replace(CONDITIONAL, "show_if: {question: smoker", "show_if: {question: brands")
    text = replace(text, "question: smoker\n  is", "question: smokr\n  is")
    errors = refuse(text)
    assert len(errors) == 2
    helpers.has(errors, helpers.line_of(text, "show_if:"), "'brands' is a later question")
    helpers.has(errors, helpers.line_of(text, "show_if:", 2), "no question has id 'smokr'",
                "did you mean 'smoker'?")


def test_condition_on_an_unknown_answer_or_a_number_question(refuse, helpers):
    text = replace(CONDITIONAL, 'is: "yes"}', "is: yse}")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "is: yse")
    assert "'yse' is not an answer of 'smoker' (no, yes) (did you mean 'yes'?)" in error.message
    text = replace(CONDITIONAL, "question: smoker\n  is: [yes, no]", "question: daily\n  is: [1]")
    error = helpers.only(refuse(text))
    assert "'daily' is a number question" in error.message


def test_show_if_needs_both_keys_and_knows_no_others(refuse, helpers):
    text = replace(CONDITIONAL, 'show_if: {question: smoker, is: "yes"}',
                   "show_if: {question: smoker, equals: 'yes'}")
    errors = refuse(text)
    line = helpers.line_of(text, "show_if:")
    helpers.has(errors, line, "unknown key 'equals' in show_if")
    helpers.has(errors, line, "show_if is missing 'is'")


PAGED = """\
---
id: paged
title: Paged
---
Intro.

+++ About you

## A?

```question
id: a
type: yes-no
```

+++

Prose on page two.

## B?

```question
id: b
type: yes-no
```

~~~
+++ inside a code sample: not a page break
~~~

## C?

```question
id: c
type: yes-no
```
"""


def test_page_breaks_give_pages_and_titles(load):
    survey = load(PAGED)
    manifest = survey.manifest()
    assert manifest["pages"] == [{"title": "About you"}, {"title": ""}]
    assert [q.get("page") for q in manifest["questions"]] == [1, 2, 2]
    assert survey.questions[1].before_html == "<p>Prose on page two.</p>"
    # Layout only: the version is that of the same questions without pages.
    flat = PAGED.replace("+++ About you\n", "").replace("+++\n", "")
    assert "pages" not in load(flat).manifest()
    assert load(flat).version == survey.version


def test_empty_pages_are_refused_with_their_line(refuse, helpers):
    text = PAGED.replace("+++\n\nProse", "+++\n\n+++ again\n\nProse")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "+++ again")
    assert "right after another one" in error.message
    text = PAGED + "\n+++ The end\n"
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "+++ The end")
    assert "no question after it" in error.message


def test_practice_is_for_randomized_yes_no_questions(load, refuse, helpers):
    text = replace(CONDITIONAL, "randomize: forced-response",
                   "practice: true\nrandomize: forced-response")
    by_id = {q["id"]: q for q in load(text).manifest()["questions"]}
    assert by_id["did"]["practice"] is True
    assert "practice" not in by_id["smoker"]
    assert load(text).version == load(CONDITIONAL).version  # a practice round changes no answer
    text = replace(CONDITIONAL, "id: smoker\ntype: yes-no",
                   "id: smoker\ntype: yes-no\npractice: true")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "practice: true")
    assert "practice applies to randomized yes-no questions" in error.message


def test_shuffle_reaches_the_manifest_and_not_the_version(load):
    shuffled = PAGED.replace("title: Paged\n", "title: Paged\nshuffle: true\n")
    assert load(shuffled).manifest()["shuffle"] is True
    assert "shuffle" not in load(PAGED).manifest()
    assert load(shuffled).version == load(PAGED).version


def test_kiosk_mode_reaches_the_manifest_and_needs_a_sending_target(load, refuse, helpers):
    kiosk = CONDITIONAL.replace("title: Conditional survey\n",
                                "title: Conditional survey\nmode: kiosk\n")
    assert load(kiosk).manifest()["mode"] == "kiosk"
    assert "mode" not in load(CONDITIONAL).manifest()
    text = kiosk.replace("mode: kiosk\n", "mode: kiosk\nsubmit:\n  to: download\n")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "mode: kiosk")
    assert "mode: kiosk needs a target that sends" in error.message
    error = helpers.only(refuse(CONDITIONAL.replace("title: Conditional survey\n",
                                                    "title: Conditional survey\nmode: kiosc\n")))
    assert "did you mean 'kiosk'?" in error.message
