"""Helpers for survey tests: write a survey, expect refusals, find the line of a snippet."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from rrsite.errors import RRSiteError
from rrsite.survey import Survey, SurveyError, SurveyErrors, load_survey
from tests.surveytext import DID_HALF, YEAR_THREE, line_of

VALID = """\
---
id: test-survey
title: Test survey
language: en
privacy:
  budget: 3.0
submit:
  to: collector
---
Intro prose.

## Have you ever done it?

Help for the first question.

""" + DID_HALF + """
## Which year?

""" + YEAR_THREE + """
Outro prose.
"""


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    def write_survey(text: str, name: str = "survey.md") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write_survey


@pytest.fixture
def load(write: Callable[..., Path]) -> Callable[[str], Survey]:
    def load_text(text: str) -> Survey:
        return load_survey(write(text))

    return load_text


@pytest.fixture
def refuse(write: Callable[..., Path]) -> Callable[[str], list[SurveyError]]:
    """Load text that must fail; check that every message has the file:line: form."""

    def refused(text: str) -> list[SurveyError]:
        path = write(text)
        with pytest.raises(SurveyErrors) as info:
            load_survey(path)
        assert isinstance(info.value, RRSiteError)
        assert info.value.errors, "an empty SurveyErrors"
        for error in info.value.errors:
            assert error.file == str(path)
            assert re.match(rf"^{re.escape(str(path))}:\d+: \S", str(error)), str(error)
        return info.value.errors

    return refused


def only(errors: list[SurveyError]) -> SurveyError:
    assert len(errors) == 1, [str(e) for e in errors]
    return errors[0]


def has(errors: list[SurveyError], line: int, *fragments: str) -> SurveyError:
    """The error at ``line`` whose message contains every fragment."""
    for error in errors:
        if error.line == line and all(fragment in error.message for fragment in fragments):
            return error
    raise AssertionError(f"no error at line {line} with {fragments}; got: "
                         + "; ".join(f"{e.line}: {e.message}" for e in errors))


@pytest.fixture
def valid() -> str:
    return VALID


@pytest.fixture
def helpers() -> object:
    class Helpers:
        line_of = staticmethod(line_of)
        only = staticmethod(only)
        has = staticmethod(has)

    return Helpers()
