"""One survey in several languages: translation files beside the survey (rrsite.survey.fielding).

A translation changes texts only; anything else is an error at the translation's line naming the
survey file's line. The version is the same in every language, and the same as without
`languages:` (the variable `language` is left out of it).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rrsite.survey import SurveyErrors, load_survey, parse_survey
from tests.surveytext import STIMULANTS, faculty, line_of

SURVEY = """\
---
id: campus
title: Campus life
languages: [en, de]
consent: Taking part is voluntary.
privacy:
  budget: 4
---
Thank you for taking part.

## Which faculty are you in?

Pick the one you are enrolled in.

""" + faculty() + """
## Have you used stimulants to study?

""" + STIMULANTS

GERMAN = """\
---
title: Campusleben
consent: Die Teilnahme ist freiwillig.
---
Danke für Ihre Teilnahme.

## An welcher Fakultät studieren Sie?

Wählen Sie die, an der Sie eingeschrieben sind.

""" + faculty("Naturwissenschaften", "Geisteswissenschaften") + """
## Haben Sie Aufputschmittel zum Lernen genommen?

""" + STIMULANTS


def write(folder: Path, survey: str = SURVEY, german: str | None = GERMAN) -> Path:
    path = folder / "campus.md"
    path.write_text(textwrap.dedent(survey), encoding="utf-8")
    if german is not None:
        (folder / "campus.de.md").write_text(textwrap.dedent(german), encoding="utf-8")
    return path


def errors_of(path: Path) -> list[str]:
    with pytest.raises(SurveyErrors) as caught:
        load_survey(path)
    return caught.value.messages


def test_one_version_in_every_language_and_without_languages(tmp_path: Path) -> None:
    survey = load_survey(write(tmp_path))
    german = survey.translations["de"]
    assert survey.languages == ["en", "de"] and german.language == "de"
    assert german.version == survey.version
    without = parse_survey(SURVEY.replace("languages: [en, de]\n", ""))
    assert without.version == survey.version  # adding languages keeps the version
    assert german.title == "Campusleben" and german.consent == "Die Teilnahme ist freiwillig."
    assert german.question("faculty").options[0].label == "Naturwissenschaften"
    assert [o.label for o in german.question("stimulants").options] == ["Nein", "Ja"]
    assert survey.warnings == []


def test_the_manifest_declares_the_languages_and_the_language_variable(tmp_path: Path) -> None:
    survey = load_survey(write(tmp_path))
    manifest = survey.manifest()
    assert manifest["languages"] == ["en", "de"] and manifest["language"] == "en"
    first = manifest["questions"][0]
    assert first == {"id": "language", "text": "Language of the page", "type": "choice",
                     "sensitive": False, "required": False, "values": ["en", "de"],
                     "options": [{"value": "en", "label": "English"},
                                 {"value": "de", "label": "Deutsch"}],
                     "role": "language"}
    texts = manifest["translations"]["de"]
    assert texts["title"] == "Campusleben"
    assert texts["questions"]["faculty"] == {
        "text": "An welcher Fakultät studieren Sie?",
        "options": {"science": "Naturwissenschaften", "arts": "Geisteswissenschaften"}}
    assert texts["questions"]["language"]["text"] == "Sprache der Seite"
    german = survey.translations["de"].manifest()
    assert german["questions"][0]["options"] == first["options"]  # each language by its own name


def test_the_first_language_is_the_files_own(tmp_path: Path) -> None:
    text = SURVEY.replace("languages: [en, de]", "languages: [de, en]")
    path = tmp_path / "campus.md"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "campus.en.md").write_text(SURVEY.replace("languages: [en, de]\n", ""),
                                           encoding="utf-8")
    survey = load_survey(path)
    assert survey.language == "de"
    assert [o.label for o in survey.question("stimulants").options] == ["Nein", "Ja"]
    clash = text.replace("title: Campus life", "title: Campus life\nlanguage: en")
    path.write_text(clash, encoding="utf-8")
    messages = errors_of(path)
    assert messages == [f"{path}:{line_of(clash, 'language: en')}: language: en is not the first "
                        "of languages: de, en (the survey file's own language comes first)"]


def test_a_translation_that_changes_an_option_value_fails_at_its_line(tmp_path: Path) -> None:
    german = GERMAN.replace("{value: science, label: Naturwissenschaften}",
                            "{value: naturwissenschaften, label: Naturwissenschaften}")
    path = write(tmp_path, german=german)
    messages = errors_of(path)
    line = line_of(german, "naturwissenschaften")
    survey_line = line_of(SURVEY, "value: science")
    assert messages == [
        f"{tmp_path / 'campus.de.md'}:{line}: option value 'naturwissenschaften' is not the "
        f"survey's 'science' ({path}:{survey_line}): a translation keeps the values and "
        "translates the labels: {value: science, label: Naturwissenschaften}"]


def test_plain_options_translated_as_values_are_refused(tmp_path: Path) -> None:
    survey = SURVEY.replace("""options:
  - {value: science, label: Science}
  - {value: arts, label: Arts}""", "options: [Science, Arts]")
    german = GERMAN.replace("""options:
  - {value: science, label: Naturwissenschaften}
  - {value: arts, label: Geisteswissenschaften}""", "options: [Naturwissenschaften, Kunst]")
    messages = errors_of(write(tmp_path, survey, german))
    assert len(messages) == 2
    first = next(m for m in messages if "'Naturwissenschaften'" in m)
    assert "option value 'Naturwissenschaften' is not the survey's 'Science'" in first
    assert "{value: Science, label: Naturwissenschaften}" in first


def test_a_translation_that_changes_a_design_fails_at_its_line(tmp_path: Path) -> None:
    german = GERMAN.replace("truth: 0.7", "truth: 0.6")
    messages = errors_of(write(tmp_path, german=german))
    assert messages == [
        f"{tmp_path / 'campus.de.md'}:{line_of(german, 'truth: 0.6')}: a translation cannot "
        f"change truth of 'stimulants': 0.6 here, 0.7 at {tmp_path / 'campus.md'}:"
        f"{line_of(SURVEY, 'truth: 0.7')}"]
    german = GERMAN.replace("randomize: forced-response\ntruth: 0.7", "randomize: warner")
    messages = errors_of(write(tmp_path, german=german))
    assert any("cannot change randomize of 'stimulants': 'warner' here, 'forced-response'" in m
               for m in messages)
    assert any("'stimulants' lacks `truth: 0.7`" in m for m in messages)


def test_a_translation_that_changes_a_question_id_fails_at_its_line(tmp_path: Path) -> None:
    german = GERMAN.replace("id: stimulants", "id: aufputsch")
    messages = errors_of(write(tmp_path, german=german))
    assert messages == [
        f"{tmp_path / 'campus.de.md'}:{line_of(german, 'id: aufputsch')}: question id 'aufputsch' "
        f"is not the survey's 'stimulants' ({tmp_path / 'campus.md'}:"
        f"{line_of(SURVEY, 'id: stimulants')}): a translation keeps every question id"]


def test_questions_in_another_order_missing_or_added(tmp_path: Path) -> None:
    first, second = GERMAN.split("## Haben")
    head, faculty = first.split("## An welcher")
    swapped = head + "## Haben" + second.rstrip("\n") + "\n\n## An welcher" + faculty
    messages = errors_of(write(tmp_path, german=swapped))
    assert any("question id 'stimulants' is not the survey's 'faculty'" in m
               and "(it is question 2 there: keep the order)" in m for m in messages)
    missing = first
    messages = errors_of(write(tmp_path, german=missing))
    assert any("question 'stimulants' of" in m and "is missing: translate it too" in m
               for m in messages)
    extra = GERMAN + "\n## Noch eine?\n\n```question\nid: extra\ntype: yes-no\n```\n"
    messages = errors_of(write(tmp_path, german=extra))
    assert any("question 'extra' is not in" in m for m in messages)


def test_a_translation_cannot_change_the_front_matter_but_its_texts(tmp_path: Path) -> None:
    german = GERMAN.replace("title: Campusleben", "title: Campusleben\nid: campus\n"
                            "privacy: {budget: 9}\nlanguage: fr")
    messages = errors_of(write(tmp_path, german=german))
    where = tmp_path / "campus.de.md"
    assert f"{where}:{line_of(german, 'privacy:')}: a translation cannot change privacy: " \
           f"{tmp_path / 'campus.md'}:{line_of(SURVEY, 'privacy:')} says {{'budget': 4.0}}" in \
           "\n".join(messages)
    assert any(m.startswith(f"{where}:{line_of(german, 'language: fr')}: language: fr in the "
                            "translation into 'de'") for m in messages)
    assert not any(":3: " in m for m in messages)  # `id: campus` is the survey's: allowed


def test_a_missing_translation_file_is_an_error_at_languages(tmp_path: Path) -> None:
    path = write(tmp_path, german=None)
    assert errors_of(path) == [
        f"{path}:{line_of(SURVEY, 'languages:')}: languages: de has no translation file "
        f"{tmp_path / 'campus.de.md'}: copy campus.md to campus.de.md and translate its texts"]


def test_untranslated_texts_are_warned_with_their_lines(tmp_path: Path) -> None:
    german = (GERMAN.replace("title: Campusleben", "title: Campus life")
              .replace("## Haben Sie Aufputschmittel zum Lernen genommen?",
                       "## Have you used stimulants to study?")
              .replace("label: Geisteswissenschaften", "label: Arts")
              .replace("Wählen Sie die, an der Sie eingeschrieben sind.\n\n", ""))
    survey = load_survey(write(tmp_path, german=german))
    where = str(tmp_path / "campus.de.md")
    shown = [(w.line, w.message.split(" (")[0]) for w in survey.warnings if w.file == where]
    assert sorted(shown) == sorted([
        (line_of(german, "title:"), "untranslated: the title is the survey file's “Campus life”"),
        (line_of(german, "label: Arts"),
         "untranslated: the label of option 'arts' is the survey file's “Arts”"),
        (line_of(german, "## An welcher"),
         "untranslated: 'faculty' has no help text; " + str(tmp_path / "campus.md")
         + " has one for it"),
        (line_of(german, "## Have you used"), "untranslated: the heading of 'stimulants' is the "
                                              "survey file's “Have you used stimulants to study?”"),
    ])


def test_one_language_or_a_clash_with_a_question_named_language(tmp_path: Path) -> None:
    path = write(tmp_path, SURVEY.replace("languages: [en, de]", "languages: [en]"), None)
    assert any("languages: lists one language (en)" in m for m in errors_of(path))
    clash = SURVEY.replace("id: faculty", "id: language")
    path = write(tmp_path, clash, GERMAN.replace("id: faculty", "id: language"))
    assert errors_of(path) == [
        f"{path}:{line_of(clash, 'id: language')}: question id 'language' is the one rrsite "
        "gives the page's language (languages:): rename this question"]


def test_a_survey_without_languages_is_unchanged(tmp_path: Path) -> None:
    survey = parse_survey(SURVEY.replace("languages: [en, de]\n", ""))
    manifest = survey.manifest()
    assert "languages" not in manifest and "translations" not in manifest
    assert [q["id"] for q in manifest["questions"]] == ["faculty", "stimulants"]


def test_the_analysis_takes_a_manifest_from_before_the_second_language(tmp_path: Path) -> None:
    """The same version with and without the variable `language`: one version to the catalog."""
    from rrsite.exports.catalog import build_catalog

    survey = load_survey(write(tmp_path))
    older = parse_survey(SURVEY.replace("languages: [en, de]\n", "")).manifest()
    catalog = build_catalog([survey.path], [older])
    assert catalog.version_ids == [survey.version]
    assert "language" in catalog.question_ids()


def test_short_names_and_the_complement_statement_are_texts_to_translate(tmp_path: Path) -> None:
    crosswise = """
## Have you ever cheated in an exam?

```question
id: cheated
short: {short}
type: yes-no
randomize: extended-crosswise
p: 1/4
innocuous: {innocuous}
complement: {complement}
```
"""
    survey = SURVEY + crosswise.format(short="cheated", innocuous="My mother was born in Q1.",
                                       complement="My mother was born in Q2 to Q4.")
    german = GERMAN + crosswise.format(short="geschummelt",
                                       innocuous="Meine Mutter ist im ersten Quartal geboren.",
                                       complement="Meine Mutter ist im Q2 bis Q4 geboren.")
    loaded = load_survey(write(tmp_path, survey, german))
    translated = loaded.translations["de"].question("cheated")
    assert translated.short == "geschummelt"
    assert translated.complement == "Meine Mutter ist im Q2 bis Q4 geboren."
    # a translated design parameter is still an error
    wrong = german.replace("p: 1/4", "p: 1/3")
    assert any("campus.de.md:" in m for m in errors_of(write(tmp_path, survey, wrong)))
