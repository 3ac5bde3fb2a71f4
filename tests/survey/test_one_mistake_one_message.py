"""Each mistake gets one message that names it: the range, fences, spellings, language names."""

from __future__ import annotations

from rrsite.survey import load_survey

HEAD = """\
---
id: named
title: Named
{language}privacy:
  budget: 3
---
"""


def survey(body: str, language: str = "") -> str:
    return HEAD.format(language=f"language: {language}\n" if language else "") + body


def test_min_above_max_is_one_message(refuse, helpers):
    text = survey("## How many?\n\n```question\nid: n\ntype: number\nmin: 30\nmax: 0\n"
                  "randomize: duchi\nepsilon: 1\n```\n")
    error = helpers.only(refuse(text))
    assert error.message == "max (0) is below min (30)"
    assert error.line == helpers.line_of(text, "max: 0")


def test_an_unclosed_question_fence_is_named_and_the_rest_still_checked(refuse, helpers):
    text = survey("## Did you?\n\n```question\nid: q\ntype: yes-no\nrandomize: forced-response\n\n"
                  "## Again?\n\n```question\nid: r\ntype: yes-no\nrandomize: coin\n```\n")
    errors = refuse(text)
    opened = helpers.has(errors, helpers.line_of(text, "```question"), "never closed")
    assert f"before the next question on line {helpers.line_of(text, '## Again?')}" \
        in opened.message
    assert not any("bad YAML" in error.message for error in errors)  # not a quoting error
    # the question after it is still read: its own mistake is reported too
    helpers.has(errors, helpers.line_of(text, "randomize: coin"), "randomize")
    assert len(errors) == 2


def test_a_block_without_the_word_question_is_named(refuse, helpers):
    text = survey("## Did you?\n\n```yaml\nid: q\ntype: yes-no\n```\n\n"
                  "## Again?\n\n```\nid: r\ntype: yes-no\n```\n")
    errors = refuse(text)
    assert len(errors) == 2
    helpers.has(errors, helpers.line_of(text, "```yaml"), "opens with '```yaml'",
                "opens with '```question'")
    helpers.has(errors, helpers.line_of(text, "```", 3), "opens with '```' alone")
    assert not any("has no ```question block" in error.message for error in errors)


def test_randomise_is_read_as_randomize(write, refuse, helpers):
    text = survey("## Did you?\n\n```question\nid: q\ntype: yes-no\nrandomise: warner\n"
                  "p: 0.75\n```\n")
    question = load_survey(write(text)).questions[0]
    assert question.sensitive and question.design is not None and question.design.name == "warner"
    both = text.replace("randomise: warner\n", "randomise: warner\nrandomize: warner\n")
    error = helpers.only(refuse(both))
    assert error.message == (f"duplicate key 'randomize' (first on line "
                             f"{helpers.line_of(both, 'randomise')})")


def test_a_language_name_gets_its_code(refuse, helpers):
    body = "## Did you?\n\n```question\nid: q\ntype: yes-no\n```\n"
    error = helpers.only(refuse(survey(body, "German")))
    assert error.message.endswith("got 'German': write 'de' for German")
    error = helpers.only(refuse(survey(body, "Español")))
    assert error.message.endswith("write 'es' for Español")
    error = helpers.only(refuse(survey(body, "DE")))
    assert error.message.endswith("got 'DE' (did you mean 'de'?)")
