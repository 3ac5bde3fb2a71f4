"""Languages: shipped and own catalogs, `lang` and `dir`, `rrsite new --language`.

Built with rrsite's own templates (templates/, every shipped catalog) and the fixture runtime.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rrsite.cli import main
from rrsite.site.builder import build
from rrsite.survey import SurveyErrors, load_survey
from rrsite.survey.catalog import text_direction

from .conftest import PYODIDE, ROOT

TEMPLATES = ROOT / "templates"
ENGLISH = json.loads((TEMPLATES / "messages" / "en.json").read_text(encoding="utf-8"))

SURVEY = """\
---
id: {id}
title: Languages
language: {language}
{extra}privacy:
  budget: 2
---
## Have you ever copied in an exam?

```question
id: copied
type: yes-no
randomize: forced-response
truth: 1/2
```
"""


def write(folder: Path, name: str, language: str, extra: str = "") -> Path:
    path = folder / f"{name}.md"
    path.write_text(SURVEY.format(id=name, language=language, extra=extra), encoding="utf-8")
    return path


def write_catalog(path: Path, messages: dict[str, str]) -> Path:
    path.write_text(json.dumps(messages, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


def line_of(path: Path, needle: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if needle in line)


def html_tag(dist: Path, survey: str) -> str:
    """The page's <html> tag with its language and direction (the page's state left out)."""
    match = re.search(r"<html[^>]*>", (dist / survey / "index.html").read_text("utf-8"))
    assert match
    return match.group(0).replace(' data-rr-state="starting"', "")


def build_site(tmp_path: Path, *sources: Path):  # noqa: ANN201 - BuildResult
    return build(list(sources), tmp_path / "dist", TEMPLATES, PYODIDE, compress=False,
                 cache=tmp_path / "cache")


@pytest.mark.parametrize(("language", "no", "yes"), [
    ("en", "No", "Yes"), ("es", "No", "Sí"), ("fr", "Non", "Oui"), ("de", "Nein", "Ja"),
    ("pt", "Não", "Sim"), ("it", "No", "Sì"),
])
def test_every_shipped_language_builds_with_its_words(tmp_path: Path, language: str, no: str,
                                                       yes: str) -> None:
    source = write(tmp_path, f"s-{language}", language)
    assert [o.label for o in load_survey(source).questions[0].options or []] == [no, yes]
    build_site(tmp_path, source)
    assert html_tag(tmp_path / "dist", f"s-{language}") == f'<html lang="{language}" dir="ltr">'
    catalog = json.loads((TEMPLATES / "messages" / f"{language}.json").read_text("utf-8"))
    page = (tmp_path / "dist" / f"s-{language}" / "index.html").read_text("utf-8")
    assert f">{catalog['privacy_title']}</summary>" in page


def test_a_regional_code_uses_its_language(tmp_path: Path) -> None:
    source = write(tmp_path, "brazil", "pt-BR")
    build_site(tmp_path, source)
    assert html_tag(tmp_path / "dist", "brazil") == '<html lang="pt-BR" dir="ltr">'
    page = (tmp_path / "dist" / "brazil" / "index.html").read_text("utf-8")
    assert "Como as suas respostas são protegidas" in page


def test_an_own_catalog_is_used_and_sets_the_direction(tmp_path: Path) -> None:
    hebrew = {key: f"עברית {text}" for key, text in ENGLISH.items()}
    hebrew.update(answer_yes="כן", answer_no="לא")
    write_catalog(tmp_path / "he.json", hebrew)
    source = write(tmp_path, "hebrew", "he", "messages: he.json\n")
    survey = load_survey(source)
    assert [o.label for o in survey.questions[0].options or []] == ["לא", "כן"]
    result = build_site(tmp_path, source)
    assert html_tag(tmp_path / "dist", "hebrew") == '<html lang="he" dir="rtl">'
    page = (tmp_path / "dist" / "hebrew" / "index.html").read_text("utf-8")
    assert f">{hebrew['privacy_title']}</summary>" in page
    assert [w.message for w in result.warnings if "English" in w.message] == []


def test_missing_keys_are_reported_at_the_messages_line(tmp_path: Path, capsys) -> None:
    partial = dict(ENGLISH)
    for key in ("submit", "review_title", "chosen_title"):
        del partial[key]
    partial["page_next"] = "Siguiente {pages}"
    partial["sent_kind_direct"] = " "
    partial["made_up_key"] = "?"
    catalog = write_catalog(tmp_path / "xx.json", partial)
    source = write(tmp_path, "partial", "xx", "messages: xx.json\n")
    assert main(["build", str(source), "-o", str(tmp_path / "dist"), "--templates",
                 str(TEMPLATES), "--pyodide", str(PYODIDE), "--no-compress"]) == 2
    err = capsys.readouterr().err
    line = line_of(source, "messages: xx.json")
    assert (f"{source}:{line}: xx.json lacks 3 of the {len(ENGLISH)} messages of en.json: "
            "submit, review_title, chosen_title") in err
    page_next, empty = line_of(catalog, '"page_next"'), line_of(catalog, '"sent_kind_direct"')
    assert f"{catalog}:{page_next}: message 'page_next' has unknown {{pages}}" in err
    assert f"{catalog}:{empty}: message 'sent_kind_direct' is empty" in err


def test_unknown_keys_and_english_text_are_warnings(tmp_path: Path, capsys) -> None:
    catalog = write_catalog(tmp_path / "xx.json", {**ENGLISH, "made_up_key": "?"})
    source = write(tmp_path, "extra", "xx", "messages: xx.json\n")
    assert main(["check", str(source), "--templates", str(TEMPLATES), "--pyodide",
                 str(PYODIDE)]) == 0
    out = capsys.readouterr().out
    assert f"{catalog}:{line_of(catalog, 'made_up_key')}: warning: message 'made_up_key' is " \
        "not one the page uses" in out
    assert "messages are still en.json's English text" in out


def test_bad_catalog_files_are_refused_with_their_line(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{\n  "submit": "Go",\n  "review_title" "x"\n}\n',
                                       encoding="utf-8")
    source = write(tmp_path, "bad", "xx", "messages: bad.json\n")
    with pytest.raises(SurveyErrors) as failure:
        load_survey(source)
    (error,) = failure.value.errors
    assert (error.file, error.line) == (str(tmp_path / "bad.json"), 3)
    assert "bad JSON" in error.message

    missing = write(tmp_path, "missing", "xx", "messages: nowhere.json\n")
    with pytest.raises(SurveyErrors) as failure:
        load_survey(missing)
    (error,) = failure.value.errors
    assert error.line == line_of(missing, "messages: nowhere.json")
    assert "nowhere.json is not a file" in error.message


def test_a_language_without_a_catalog_is_refused_at_its_line(tmp_path: Path) -> None:
    source = write(tmp_path, "swahili", "sw")
    with pytest.raises(SurveyErrors) as failure:
        load_survey(source)
    (error,) = failure.value.errors
    assert error.line == line_of(source, "language: sw")
    assert "`messages: sw.json`" in error.message


@pytest.mark.parametrize(("language", "direction"), [
    ("ar", "rtl"), ("he", "rtl"), ("fa-IR", "rtl"), ("ur", "rtl"), ("yi", "rtl"),
    ("az-Arab", "rtl"), ("ku-Latn", "ltr"), ("en", "ltr"), ("pt-BR", "ltr"), ("ja", "ltr"),
])
def test_text_direction(language: str, direction: str) -> None:
    assert text_direction(language) == direction


def test_new_with_a_shipped_language(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "enquete", "--language", "fr"]) == 0
    survey = load_survey(tmp_path / "enquete.md")
    assert survey.language == "fr" and survey.messages is None
    assert [o.label for o in survey.questions[0].options or []] == ["Non", "Oui"]
    assert not (tmp_path / "fr.json").exists()
    assert main(["build", "enquete.md", "-o", "dist", "--templates", str(TEMPLATES),
                 "--pyodide", str(PYODIDE), "--no-compress"]) == 0
    assert html_tag(tmp_path / "dist", "enquete") == '<html lang="fr" dir="ltr">'


def test_new_with_another_language_writes_its_catalog(tmp_path: Path, monkeypatch,
                                                      capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "utafiti", "--language", "sw"]) == 0
    assert json.loads((tmp_path / "sw.json").read_text("utf-8")) == ENGLISH
    survey = load_survey(tmp_path / "utafiti.md")
    assert survey.language == "sw" and survey.messages is not None
    assert main(["build", "utafiti.md", "-o", "dist", "--templates", str(TEMPLATES),
                 "--pyodide", str(PYODIDE), "--no-compress"]) == 0
    assert "sw.json:1: warning:" in capsys.readouterr().err
    # The catalog is not overwritten, and a bad code is a usage error.
    assert main(["new", "again", "--language", "sw"]) == 2
    assert "sw.json already exists" in capsys.readouterr().err
    assert main(["new", "third", "--language", "Swahili"]) == 2
    assert "--language must be a language code" in capsys.readouterr().err
    assert not (tmp_path / "again.md").exists() and not (tmp_path / "third.md").exists()


def test_a_plural_form_counts_as_its_placeholder(tmp_path: Path) -> None:
    """A catalog may write a count with or without ICU's plural form: {cards} and
    {cards, plural, one {# card} other {# cards}} are the same placeholder to the check."""
    from rrsite.survey.catalog import Catalog, compare_catalog

    reference = {"cards": "Draw {cards, plural, one {# card} other {# cards}} from {deck}."}
    for text in ("Tirez {cards} carte(s) de {deck}.",
                 "Tirez {cards, plural, one {# carte} other {# cartes}} de {deck}."):
        assert compare_catalog(Catalog(tmp_path / "fr.json", {"cards": text}),
                               reference).errors == [], text
    wrong = compare_catalog(Catalog(tmp_path / "fr.json", {"cards": "Tirez {n} cartes."}),
                            reference)
    assert len(wrong.errors) == 1 and "lacks {cards}, {deck}" in wrong.errors[0].message
