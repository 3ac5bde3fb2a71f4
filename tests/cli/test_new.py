"""`rrsite new NAME --language CODE`: a starter whose words for respondents are in CODE.

Every text a respondent reads (introduction, questions, options, closing text) is in the
language asked for, checked against the English starter: none of its sentences is left, and the
survey loads with that language's answer words and builds without warnings about author words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rrsite.cli import main
from rrsite.commands.new import WORDS, title_of
from rrsite.survey import load_survey
from rrsite.survey.check import check_survey
from rrsite.survey.schema import LANGUAGES

ENGLISH = WORDS["en"]


def respondent_text(survey) -> str:  # type: ignore[no-untyped-def]
    """Everything the page shows the respondent that the survey file wrote."""
    parts = [survey.title, survey.intro_html, survey.outro_html]
    for question in survey.questions:
        parts += [question.text, question.help_html, *(o.label for o in question.options)]
    return "\n".join(parts)


@pytest.mark.parametrize("language", sorted(set(LANGUAGES) - {"en"}))
def test_the_starter_speaks_the_language_asked_for(language: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", f"campus-{language}", "--language", language]) == 0
    survey = load_survey(tmp_path / f"campus-{language}.md")
    assert survey.language == language and survey.title == "Campus"  # no "Campus de"
    shown = respondent_text(survey)
    for key, english in ENGLISH.items():
        for sentence in english.replace("\n", " ").split(". "):
            assert sentence.strip(".") not in shown, (language, key, sentence)
    words = WORDS[language]
    assert words["did_it"] == survey.questions[0].text
    assert [o.label_text for o in survey.questions[0].options] == \
        [LANGUAGES[language]["no"], LANGUAGES[language]["yes"]]
    assert [o.label_text for o in survey.questions[1].options] == \
        [words["never"], words["sometimes"], words["often"]]
    assert words["closing"] in survey.outro_html
    # no warning but the starter's missing consent: no English author note, no device words
    # misread (German's article "die" is no die)
    assert [w.message for w in check_survey(survey)
            if not w.message.startswith("no consent text")] == []


def test_every_shipped_language_has_every_starter_word() -> None:
    assert set(WORDS) == set(LANGUAGES)
    for language, words in WORDS.items():
        assert set(words) == set(ENGLISH), language


def test_a_regional_code_uses_its_language_and_another_language_gets_english_to_translate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "pesquisa", "--language", "pt-BR"]) == 0
    assert WORDS["pt"]["did_it"] in (tmp_path / "pesquisa.md").read_text("utf-8")
    assert main(["new", "utafiti-sw", "--language", "sw"]) == 0
    text = (tmp_path / "utafiti-sw.md").read_text("utf-8")
    assert ENGLISH["did_it"] in text and "messages: sw.json" in text
    assert load_survey(tmp_path / "utafiti-sw.md").title == "Utafiti"


def test_a_language_name_is_answered_with_its_code(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "umfrage", "--language", "German"]) == 2
    assert "write --language de for German" in capsys.readouterr().err
    assert not (tmp_path / "umfrage.md").exists()


@pytest.mark.parametrize(("stem", "language", "title"), [
    ("campus-de", "de", "Campus"), ("campus_de", "de", "Campus"), ("de", "de", "De"),
    ("my-survey", "en", "My survey"), ("encuesta-pt-BR", "pt-BR", "Encuesta"),
    ("enquete-pt", "pt-BR", "Enquete"), ("student-life", "fr", "Student life"),
])
def test_the_title_leaves_out_a_language_code_at_the_end(stem: str, language: str,
                                                         title: str) -> None:
    assert title_of(stem, language) == title
