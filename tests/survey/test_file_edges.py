"""A survey file is its author's input, and read as untrusted: what it cannot make rrsite do.

- read a file outside its own folder (``messages: ../outside/x.json``) and echo what it holds;
- put a ``javascript:`` (or ``data:``, ``vbscript:``) link on the page, however written;
- make the YAML reader expand aliases into billions of values ("billion laughs"), recurse until
  Python gives up (5,000 nested lists), or read a block of any size;
- carry NUL, ESC or a right-to-left override into the page's title, text or manifest.

Each is refused with its file:line, or removed with a warning at its line.
"""

from __future__ import annotations

import json

import pytest

from rrsite.survey import SurveyErrors, load_survey
from rrsite.survey.render import render_block, render_inline
from tests.surveytext import CAMPUS_FRONT, faculty


def replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def with_messages(valid: str, name: str) -> str:
    return replace(valid, "language: en", f"language: en\nmessages: {name}")


@pytest.mark.parametrize("name", ["../outside/x.json", "sub/x.json", "/etc/x.json",
                                  ".hidden.json", "link.json"])
def test_messages_is_a_file_in_the_surveys_own_folder(tmp_path, valid, write, helpers, name):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.json").write_text(json.dumps({"secret_key_of_another_file": "x"}))
    folder = tmp_path / "survey"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "x.json").write_text("{}")
    (folder / ".hidden.json").write_text("{}")
    (folder / "link.json").symlink_to(outside / "x.json")
    text = with_messages(valid, name)
    path = folder / "survey.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SurveyErrors) as info:
        load_survey(path)
    error = helpers.has(info.value.errors, helpers.line_of(text, "messages:"), "beside the survey")
    assert "secret_key_of_another_file" not in str(info.value), error


@pytest.mark.parametrize("link", [
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", "jav&#97;script:alert(1)",
    "&#x6A;avascript:alert(1)", "data:text/html,<script>alert(1)</script>", "vbscript:msgbox",
])
def test_links_keep_only_safe_addresses(valid, load, helpers, link):
    text = replace(valid, "Intro prose.", f"Intro [read this]({link}) prose.")
    text = replace(text, "Help for the first question.", f"See [here][r].\n\n[r]: {link}")
    text = replace(text, "## Which year?", f"## Which [year]({link})?")
    survey = load(text)
    pages = [survey.intro_html, *(q.help_html for q in survey.questions),
             *(q.text_html for q in survey.questions)]
    for page in pages:
        assert "script" not in page.lower() and "data:" not in page, page
    assert "<a>read this</a>" in survey.intro_html
    lines = {warning.line for warning in survey.warnings if "is left out" in warning.message}
    assert {helpers.line_of(text, "Intro ["), helpers.line_of(text, "[r]:"),
            helpers.line_of(text, "## Which [")} <= lines


def test_safe_links_are_kept():
    assert render_inline("[a](https://x.org/p) [m](mailto:a@b.c) [r](page.html) [f](#top)") == (
        '<a href="https://x.org/p">a</a> <a href="mailto:a@b.c">m</a> '
        '<a href="page.html">r</a> <a href="#top">f</a>')
    assert 'src="pic.png"' in render_block("![a picture](pic.png)")
    assert "src=" not in render_block("![x](data:image/png;base64,AAAA)")


def test_yaml_aliases_are_refused_with_their_line(valid, refuse, helpers):
    laughs = "\n".join(["a: &a [lol, lol, lol]"] + [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]"
        for i in range(5)])
    text = replace(valid, "truth: 1/2", f"truth: 1/2\n{laughs}")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "a: &a")
    assert "anchor or alias" in error.message
    title = replace(valid, "title: Test survey", "title: &t Test survey\nname: *t")
    assert "anchor or alias" in helpers.only(refuse(title)).message


@pytest.mark.parametrize("depth", [100, 5000])
def test_yaml_nested_too_deep_is_refused_with_its_line(valid, refuse, helpers, depth):
    nested = "[" * depth + "x" + "]" * depth
    text = replace(valid, "truth: 1/2", f"truth: 1/2\ndeep: {nested}")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "deep:")
    assert "more than 32 deep" in error.message
    block = "\n".join(f"{'  ' * i}k{i}:" for i in range(min(depth, 100))) + " x"
    text = replace(valid, "truth: 1/2", f"truth: 1/2\nnest:\n{block}")
    assert "deep" in helpers.only(refuse(text)).message


def test_a_huge_yaml_block_is_refused(valid, refuse, helpers):
    options = ", ".join(f"option number {i}" for i in range(30_000))
    text = replace(valid, "options: [First, Second, Third]", f"options: [{options}]")
    error = helpers.only(refuse(text))
    assert "bytes of YAML: at most 262,144" in error.message
    assert error.line == helpers.line_of(text, "id: year")


def test_control_characters_are_refused_where_they_are(valid, refuse, helpers):
    text = replace(valid, "title: Test survey", "title: Test\x00 survey")
    text = replace(text, "Outro prose.", "Outro \x1b[31mprose.")
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, "title:"), "U+0000", "control character")
    helpers.has(errors, helpers.line_of(text, "Outro"), "U+001B", "control character")
    escaped = replace(valid, "title: Test survey", 'title: "Test\\e survey"')
    helpers.has(refuse(escaped), helpers.line_of(escaped, "title:"), "U+001B")


def test_bidirectional_overrides_are_removed_with_a_warning(valid, load, helpers):
    text = replace(valid, "title: Test survey", "title: Test \u202esurvey")
    text = replace(text, "## Which year?", "## Which \u2067year\u2069?")
    text = replace(text, "options: [First, Second, Third]",
                   'options: [First, "Sec\\u202eond", Third]')
    survey = load(text)
    assert survey.title == "Test survey"
    year = survey.questions[1]
    assert year.text == "Which year?" and [o.label for o in year.options][1] == "Second"
    warned = {w.line for w in survey.warnings if "bidirectional" in w.message}
    assert {helpers.line_of(text, "title:"), helpers.line_of(text, "## Which"),
            helpers.line_of(text, "options:")} <= warned
    right_to_left = replace(valid, "Intro prose.", "Intro \u200fprose.")  # a mark is kept
    assert "\u200f" in load(right_to_left).intro_html


def test_a_catalog_with_control_characters_is_refused(tmp_path, valid, helpers):
    folder = tmp_path / "survey"
    folder.mkdir()
    (folder / "xx.json").write_text('{\n  "answer_yes": "Yes\\u202e",\n  "answer_no": "No"\n}\n')
    path = folder / "survey.md"
    path.write_text(with_messages(valid, "xx.json"), encoding="utf-8")
    with pytest.raises(SurveyErrors) as info:
        load_survey(path)
    assert any(e.file.endswith("xx.json") and e.line == 2 and "U+202E" in e.message
               for e in info.value.errors), [str(e) for e in info.value.errors]


CAMPUS = CAMPUS_FRONT + """\
---
## Which faculty are you in?

""" + faculty()
GERMAN = """\
---
title: Campusleben
---
## An welcher Fakultät studieren Sie? Siehe [hier](javascript:alert(1))

""" + faculty("Naturwissenschaften", "Geisteswissenschaften")


def test_a_translation_is_read_as_the_survey_is(tmp_path, helpers):
    """A translation file's text gets the same checks: controls refused, bidirectional
    characters removed, unsafe links left out, each at the translation's own line."""
    (tmp_path / "campus.md").write_text(CAMPUS, encoding="utf-8")
    german = GERMAN.replace("title: Campusleben", "title: Campus\u202eleben")
    (tmp_path / "campus.de.md").write_text(german, encoding="utf-8")
    survey = load_survey(tmp_path / "campus.md")
    translated = survey.translations["de"]
    assert translated.title == "Campusleben"
    assert "javascript" not in translated.questions[0].text_html
    where = str(tmp_path / "campus.de.md")
    warned = {(w.file, w.line, w.message.split(" ")[0]) for w in survey.warnings}
    assert {(where, helpers.line_of(german, "title:"), "removed"),
            (where, helpers.line_of(german, "javascript"), "the")} <= warned, warned
    (tmp_path / "campus.de.md").write_text(german.replace("Campus\u202eleben", "Campus\x1bleben"),
                                           encoding="utf-8")
    with pytest.raises(SurveyErrors) as info:
        load_survey(tmp_path / "campus.md")
    assert any(e.file == where and "U+001B" in e.message for e in info.value.errors)
