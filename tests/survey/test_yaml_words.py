"""YAML errors in plain words with the line to fix, and list items YAML joins."""

from __future__ import annotations

import pytest

BLOCK_START = """\
---
id: yaml-words
title: YAML words
language: en
submit:
  to: collector
---

## Which year?

```question
id: year
type: choice
"""


def block(body: str) -> str:
    return BLOCK_START + body + "```\n"


def numbered(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(("body", "needle", "words"), [
    # a key indented under the one above it: the line to fix is the indented one
    ("options: [a, b]\n  required: false\n", "  required",
     "check the indentation of line {n}: it is indented deeper than line {p} above it"),
    # a second ': ' in a value
    ("options: [a, b]\nlabel: Year: first\n", "label:",
     "line {n} has a second ': ' in its value: put the value in quotes"),
    # a tab
    ("options: [a, b]\n\trequired: false\n", "\trequired",
     "line {n} is indented with a tab: YAML indents with spaces only"),
    # '-item' without a space: YAML stops on the line after; the message names the line itself
    ("options:\n  - a\n  -b\n  - c\n", "  -b", "check line {n}: YAML expected 'key: value' or "
     "'- item' there (a list item needs a space after its '-'"),
    # a list item out of line with the others
    ("options:\n    - a\n  - b\n", "  - b", "check the indentation of line {n}: it lines up "
     "with none of the lines above it"),
    # text that starts with [
    ("options: [a, b\n", "options:", "line {n}: a value that starts with '[' or '{{' is read as "
     "a list or mapping; put the text in quotes"),
    # a quote closed too early
    ('options: [a, b]\nrequired: "no" thanks\n', "required:",
     "on line {n} the quoted value ends at its second \" and text follows it"),
])
def test_a_yaml_error_names_the_line_to_fix_in_plain_words(refuse, body, needle, words):
    text = block(body)
    [error] = refuse(text)
    n = numbered(text, needle)
    assert error.line == n
    expected = words.format(n=n, p=n - 1)
    assert error.message.startswith(f"bad YAML in the question block: {expected}"), error.message
    assert "(YAML says: " in error.message


def test_an_unclosed_quote_in_the_front_matter(refuse):
    text = BLOCK_START.replace("title: YAML words", 'title: "YAML words') + "options: [a]\n```\n"
    errors = refuse(text)
    assert errors[0].line == 3
    assert "line 3 opens a quote that is never closed" in errors[0].message


def test_a_list_item_indented_under_the_one_above_is_flagged_not_joined(refuse):
    text = block("options:\n  - Never\n  - Sometimes\n    - Often\n")
    [error] = refuse(text)
    assert error.line == numbered(text, "    - Often")
    sometimes = numbered(text, "  - Sometimes")
    assert error.message == (
        f"in the question block: check the indentation of line {error.line}: '- Often' is "
        f"indented deeper than line {sometimes} ('- Sometimes'), so YAML reads them as one value, "
        f"'Sometimes - Often'. Indent it like line {sometimes}")


def test_joined_items_are_flagged_in_the_front_matter_too(refuse):
    text = BLOCK_START.replace("language: en\n", "language: en\nconsent: You agree\n  - to this\n")
    errors = refuse(text + "options: [a, b]\n```\n")
    assert [(e.line, "'You agree - to this'" in e.message) for e in errors] == [(6, True)]


def test_the_same_list_correctly_indented_loads(load):
    survey = load(block("options:\n  - Never\n  - Sometimes\n  - Often\n"))
    assert survey.questions[0].values == ["Never", "Sometimes", "Often"]
    # a dash inside a value is not a list item
    survey = load(block("options:\n  - Never - or almost\n  - Often\n"))
    assert survey.questions[0].values == ["Never - or almost", "Often"]
