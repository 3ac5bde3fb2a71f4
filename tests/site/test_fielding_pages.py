"""The pages of a study as researchers field it: one page per language (DIST/<id>/ and
DIST/<id>/<language>/) with the survey's one version, the language menu, the questions the page
answers itself hidden, a comprehension check inside its question's box, the direct arm's notice
and the panel's way back (page.html with rrsite's own templates)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rrsite.site.builder import build, default_templates
from rrsite.survey import SurveyErrors
from tests.surveytext import CAMPUS_FRONT, ENROLLED, question

from .conftest import PYODIDE

#: the stimulants question, with its comprehension check
STIMULANTS_CHECKED = question("stimulants", "yes-no", randomize="forced-response", truth=0.7,
                              check="true")

SURVEY = CAMPUS_FRONT + """\
validation:
  direct_share: 0.3
  questions: [stimulants]
panel:
  provider: prolific
  complete: C1A2B3C4
  screen_out: SCRN0001
  record: true
---
Thank you for taking part.

## Are you enrolled?

""" + ENROLLED + """
## Have you used stimulants to study?

""" + STIMULANTS_CHECKED

GERMAN = """\
---
title: Campusleben
---
Danke für Ihre Teilnahme.

## Sind Sie eingeschrieben?

""" + ENROLLED + """
## Haben Sie Aufputschmittel zum Lernen genommen?

""" + STIMULANTS_CHECKED


def sources(folder: Path, survey: str = SURVEY, german: str = GERMAN) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "campus.md").write_text(textwrap.dedent(survey), encoding="utf-8")
    (folder / "campus.de.md").write_text(textwrap.dedent(german), encoding="utf-8")
    return folder


def build_folder(tmp_path: Path, folder: Path) -> Any:
    return build([folder], tmp_path / "dist", default_templates(), PYODIDE, compress=False,
                 cache=tmp_path / "cache")


def config(page: Path) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="rr-config">(.*?)</script>',
                      page.read_text("utf-8"), re.S)
    assert match
    return json.loads(match.group(1))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fielding")
    result = build_folder(root, sources(root / "surveys"))
    assert [s.id for s in result.surveys] == ["campus"]  # campus.de.md is no survey of its own
    return root / "dist"


def test_one_page_per_language_with_one_version(site: Path) -> None:
    english, german = site / "campus" / "index.html", site / "campus" / "de" / "index.html"
    manifest = json.loads((site / "campus" / "survey.json").read_text("utf-8"))
    first, second = config(english), config(german)
    assert first["version"] == second["version"] == manifest["version"]
    assert (first["language"], first["languages"]) == ("en", {"en": "./", "de": "de/"})
    assert (second["language"], second["languages"]) == ("de", {"en": "../", "de": "./"})
    assert second["manifest_url"] == "../survey.json"
    assert second["core_url"].startswith("../../_rr/core.")
    assert '<html lang="de"' in german.read_text("utf-8")
    assert "<title>Campusleben</title>" in german.read_text("utf-8")
    assert not (site / "campus" / "de" / "survey.json").exists()
    for page in (english, german):  # every asset the page names is there
        for url in re.findall(r'(?:src|href)="(\.\./[^"]+)"', page.read_text("utf-8")):
            assert (page.parent / url).resolve().is_file(), (page, url)


def test_the_language_menu(site: Path) -> None:
    english = (site / "campus" / "index.html").read_text("utf-8")
    german = (site / "campus" / "de" / "index.html").read_text("utf-8")
    assert '<a href="de/" hreflang="de" lang="de" data-language="de">Deutsch</a>' in english
    assert '<span aria-current="page" lang="en">English</span>' in english
    assert '<a href="../" hreflang="en" lang="en" data-language="en">English</a>' in german
    assert 'aria-label="Sprache"' in german


def test_the_page_answers_its_own_questions_in_hidden_groups(site: Path) -> None:
    page = (site / "campus" / "index.html").read_text("utf-8")
    for qid in ("language", "arm"):
        fieldset = re.search(rf'<fieldset class="([^"]*)" id="q-{qid}"', page)
        assert fieldset and "rr-variable" in fieldset.group(1).split()
    assert 'name="arm" value="direct"' in page and 'name="language" value="de"' in page
    assert 'id="rr-arm-notice"' in page
    assert re.search(r"fielding\.[0-9a-f]+\.js", page)
    assert re.search(r"fielding\.[0-9a-f]+\.css", page)


def test_the_check_is_inside_its_question_before_the_answer(site: Path) -> None:
    page = (site / "campus" / "index.html").read_text("utf-8")
    box = page.index('id="q-stimulants"')
    check = page.index('id="q-stimulants_check"')
    answer = page.index('data-truth', box)
    assert box < check < answer
    assert page.count('id="q-stimulants_check"') == 1  # not also as a question of its own
    tag = page[page.rindex("<fieldset", 0, check):page.index(">", check)]
    assert " hidden" in tag  # shown by conditions.js in the randomized arm only
    german = (site / "campus" / "de" / "index.html").read_text("utf-8")
    assert "„Ja“, unabhängig von meiner Antwort" in german


def test_the_panel_pieces(site: Path) -> None:
    page = (site / "campus" / "index.html").read_text("utf-8")
    assert '<meta name="referrer" content="no-referrer">' in page
    assert 'id="rr-panel"' in page and re.search(r"panel\.[0-9a-f]+\.js", page)
    panel = config(site / "campus" / "index.html")["panel"]
    assert panel["complete"] == "C1A2B3C4" and panel["record"] is True
    assert "screen_out" in json.dumps(config(site / "campus" / "index.html")["questions"][2])


def test_the_manifest_written(site: Path) -> None:
    manifest = json.loads((site / "campus" / "survey.json").read_text("utf-8"))
    assert manifest["translations"]["de"]["title"] == "Campusleben"
    assert [q["id"] for q in manifest["questions"]] == [
        "language", "arm", "enrolled", "stimulants_check", "stimulants", "stimulants_direct"]


def test_a_translation_that_changes_an_option_value_fails_the_build(tmp_path: Path) -> None:
    german = GERMAN.replace('screen_out: ["no"]', 'screen_out: ["nein"]', 1)
    folder = sources(tmp_path / "surveys", german=german)
    with pytest.raises(SurveyErrors) as caught:
        build_folder(tmp_path, folder)
    line = next(n for n, text in enumerate(german.splitlines(), 1) if "nein" in text)
    assert f"{folder / 'campus.de.md'}:{line}: a translation cannot change screen_out of " \
           "'enrolled'" in str(caught.value)
    assert not (tmp_path / "dist").exists()


def test_a_translation_no_survey_lists_is_not_built_and_said(tmp_path: Path) -> None:
    folder = sources(tmp_path / "surveys", SURVEY.replace("languages: [en, de]\n", ""))
    result = build_folder(tmp_path, folder)
    assert [s.id for s in result.surveys] == ["campus"]
    assert any("campus.de.md is named as the de translation of campus.md, which does not list "
               "de in `languages:`: it is not built" in w.message for w in result.warnings)
    assert not (tmp_path / "dist" / "campus" / "de").exists()


def test_a_translation_into_an_unshipped_language_needs_its_catalog(tmp_path: Path) -> None:
    survey = SURVEY.replace("languages: [en, de]", "languages: [en, sw]")
    folder = tmp_path / "surveys"
    folder.mkdir()
    (folder / "campus.md").write_text(survey, encoding="utf-8")
    (folder / "campus.sw.md").write_text(GERMAN, encoding="utf-8")
    with pytest.raises(SurveyErrors) as caught:
        build_folder(tmp_path, folder)
    assert "language 'sw' has no message catalog" in str(caught.value)
    assert str(folder / "campus.sw.md") in str(caught.value)
