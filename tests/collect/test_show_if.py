"""The collector and show_if: hidden questions are not required and must not be sent."""

from __future__ import annotations

import pytest

from rrsite.collect.manifests import ManifestError, SubmissionError, compile_manifest
from rrsite.survey import parse_survey

SURVEY = """\
---
id: cond
title: Conditions
---
## Do you smoke?

```question
id: smoker
type: yes-no
required: true
```

## How many a day?

```question
id: daily
type: number
required: true
show_if: {question: smoker, is: "yes"}
```

## Which brands?

```question
id: brands
type: multi-choice
options: [A, B]
```

## Why brand A?

```question
id: why
type: text
show_if: {question: brands, is: A}
```
"""


@pytest.fixture
def rules():  # type: ignore[no-untyped-def]
    return compile_manifest(parse_survey(SURVEY).manifest())


def test_a_shown_required_question_is_required(rules):
    with pytest.raises(SubmissionError) as info:
        rules.check_answers({"smoker": "yes"})
    assert info.value.args[0] == "an answer is required"
    assert rules.check_answers({"smoker": "yes", "daily": 3}) == {"smoker": "yes", "daily": 3}


def test_a_hidden_required_question_is_not_required_and_must_be_left_out(rules):
    assert rules.check_answers({"smoker": "no"}) == {"smoker": "no"}
    with pytest.raises(SubmissionError) as info:
        rules.check_answers({"smoker": "no", "daily": 3})
    assert "must be left out" in info.value.args[0]


def test_multi_choice_condition_holds_when_any_listed_value_is_chosen(rules):
    body = {"smoker": "no", "brands": ["B", "A"], "why": "taste"}
    assert rules.check_answers(body)["why"] == "taste"
    with pytest.raises(SubmissionError):
        rules.check_answers({"smoker": "no", "brands": ["B"], "why": "taste"})
    assert rules.check_answers({"smoker": "no"}) == {"smoker": "no"}


def test_a_malformed_show_if_in_a_manifest_is_refused():
    manifest = parse_survey(SURVEY).manifest()
    manifest["questions"][1]["show_if"] = {"question": "smoker", "is": "yes"}
    with pytest.raises(ManifestError, match="'show_if' must be"):
        compile_manifest(manifest)
