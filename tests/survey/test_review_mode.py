"""`review: full | result-only` in the front matter: read, defaulted, and refused with file:line."""

from __future__ import annotations

import json

from rrsite.survey import Survey


def replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_review_defaults_to_full(valid, load):
    survey: Survey = load(valid)
    assert survey.review == "full"
    assert "review" not in json.dumps(survey.manifest())  # page-only: manifests do not change


def test_review_result_only_is_read(valid, load):
    survey: Survey = load(replace(valid, "language: en", "language: en\nreview: result-only"))
    assert survey.review == "result-only"


def test_bad_review_is_refused_with_its_line(valid, refuse, helpers):
    text = replace(valid, "language: en", "language: en\nreview: results-only")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "review:")
    assert "must be one of full, result-only" in error.message
    assert "result-only" in error.message and "results-only" in error.message
