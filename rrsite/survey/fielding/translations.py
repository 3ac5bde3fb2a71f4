"""Translation files: a copy of the survey file whose texts are translated, and nothing else.

``campus.de.md`` beside ``campus.md`` (``languages: [en, de]``) holds the German texts. A
translation may repeat every key of the survey file, but only its texts may differ: the title,
``consent``, the prose, page titles, headings, help texts, option labels, ``innocuous``,
``mirrored``, ``complement``, ``short`` and ``unit``. A different id, option value, design
parameter or any other key is an error at the translation's line, naming the survey file's
line it contradicts; a text still the survey file's is a warning (``rrsite check`` prints them).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import schema
from ..catalog import LANGUAGE_TAG
from ..errors import Problems
from ..kinds import Block, OptionSpec
from ..model import Question, Survey

#: The front matter of a translation: every key of the survey's, none required.
TRANSLATION_FRONT = Block(
    name="front matter", title="the translation's front matter",
    keys=tuple(dataclasses.replace(key, required=False) for key in schema.FRONT_MATTER.keys))
#: Front-matter keys a translation gives values of its own.
OWN_FRONT = ("title", "consent", "language", "messages")
#: Question keys that are texts (translated); options' labels are too.
TEXT_KEYS = ("innocuous", "mirrored", "unit", "complement", "short")
_PAGE_BREAK = re.compile(r"^ {0,3}\+\+\+(?:[ \t]+(.*?))?[ \t]*$")
_LETTER = re.compile(r"[^\W\d_]")


def translation_path(survey: Path, language: str) -> Path:
    """``campus.md`` in ``de`` -> ``campus.de.md`` beside it."""
    return survey.with_name(f"{survey.stem}.{language}{survey.suffix or '.md'}")


def translation_of(path: Path) -> tuple[Path, str] | None:
    """(the survey file, the language) when ``path`` is named as a translation of a file beside it.

    ``campus.de.md`` is a translation when ``campus.md`` exists; ``campus.md`` is not.
    """
    stem, _, language = path.stem.rpartition(".")
    if not stem or not re.fullmatch(LANGUAGE_TAG, language):
        return None
    survey = path.with_name(f"{stem}{path.suffix}")
    return (survey, language) if survey.is_file() else None


def plain(value: Any) -> Any:
    """A key's value as comparable data: nested blocks as dicts, options as their values."""
    if isinstance(value, schema.Fields):
        return {key: plain(item) for key, item in sorted(value.values.items())}
    if isinstance(value, OptionSpec):
        return value.value
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in sorted(value.items())}
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def compare_front(survey: schema.Fields, survey_file: str, translation: schema.Fields | None,
                  language: str, problems: Problems) -> None:
    """Every key of the translation's front matter but its texts is the survey file's."""
    if translation is None:
        return
    for name in translation.values:
        line = translation.line_of(name)
        if name == "language":
            if translation.get(name) != language:
                problems.error(line, f"language: {translation.get(name)} in the translation into "
                                     f"'{language}' (its file name says {language})")
            continue
        if name in OWN_FRONT:
            continue
        mine, theirs = plain(translation.get(name)), plain(survey.get(name))
        if mine != theirs or not survey.given(name):
            where = (f"{survey_file}:{survey.line_of(name)} says {_shown(theirs)}"
                     if survey.given(name) else f"{survey_file} does not have it")
            problems.error(line, f"a translation cannot change {name}: {where}. A translation "
                                 "changes only texts (title, consent, prose, headings, help, "
                                 "option labels); remove the line or copy the survey file's")


def compare_questions(survey: Sequence[Question], survey_file: str,
                      translation: Sequence[Question | None], headings: Sequence[int],
                      problems: Problems) -> None:
    """The translation's questions are the survey's, in order, with the same keys but texts.

    ``translation`` holds None where a question block could not be read (reported already);
    ``headings`` the line of each block's heading in the translation.
    """
    ids = [q.id for q in survey]
    for index, question in enumerate(translation):
        if question is None:
            continue
        if index >= len(survey):
            problems.error(headings[index], f"question '{question.id}' is not in {survey_file}: "
                           "a translation has the survey file's questions, no others")
            continue
        original = survey[index]
        if question.id != original.id:
            elsewhere = (f" (it is question {ids.index(question.id) + 1} there: keep the order)"
                         if question.id in ids else "")
            problems.error(question.fields.line_of("id") if question.fields else headings[index],
                           f"question id '{question.id}' is not the survey's '{original.id}' "
                           f"({survey_file}:{original.line}){elsewhere}: a translation keeps "
                           "every question id")
            continue
        _compare_keys(original, question, survey_file, problems)
        if question.page != original.page:
            problems.error(headings[index], f"question '{question.id}' is on page "
                           f"{question.page} here and on page {original.page} in {survey_file}: "
                           "a translation keeps the page breaks ('+++')")
    if len(translation) < len(survey):
        for original in survey[len(translation):]:
            problems.error(headings[-1] if headings else 1, f"question '{original.id}' of "
                           f"{survey_file}:{original.line} is missing: translate it too")


def _compare_keys(original: Question, question: Question, survey_file: str,
                  problems: Problems) -> None:
    mine, theirs = question.fields, original.fields
    if mine is None or theirs is None:
        return
    order = list(schema.QUESTION.names)
    for name in sorted(set(mine.values) | set(theirs.values), key=order.index):
        if name in TEXT_KEYS:
            continue
        line = mine.line_of(name)
        if name == "options" and mine.given(name) and theirs.given(name):
            _compare_options(mine.get(name), theirs.get(name), original, survey_file, line,
                             problems)
            continue
        if plain(mine.get(name)) == plain(theirs.get(name)) and mine.given(name) == \
                theirs.given(name):
            continue
        if not mine.given(name):
            problems.error(mine.line, f"question '{question.id}' lacks `{name}: "
                           f"{_yaml(theirs.get(name))}` ({survey_file}:{theirs.line_of(name)}): a "
                           "translation keeps every key but texts")
        elif not theirs.given(name):
            problems.error(line, f"a translation cannot add {name} to '{question.id}' "
                                 f"({survey_file} does not have it)")
        else:
            problems.error(line, f"a translation cannot change {name} of '{question.id}': "
                           f"{_shown(plain(mine.get(name)))} here, "
                           f"{_shown(plain(theirs.get(name)))} at "
                           f"{survey_file}:{theirs.line_of(name)}")


def _compare_options(mine: list[OptionSpec], theirs: list[OptionSpec], original: Question,
                     survey_file: str, line: int, problems: Problems) -> None:
    for index, option in enumerate(mine):
        if index >= len(theirs):
            problems.error(option.line, f"option '{option.value}' is not one of "
                           f"'{original.id}' ({survey_file}:{theirs[-1].line} has "
                           f"{len(theirs)}): a translation has the same options")
            continue
        want = theirs[index]
        if option.value != want.value:
            problems.error(option.line, f"option value '{option.value}' is not the survey's "
                           f"'{want.value}' ({survey_file}:{want.line}): a translation keeps the "
                           f"values and translates the labels: {{value: {want.value}, label: "
                           f"{option.label}}}")
    if len(mine) < len(theirs):
        problems.error(line, f"'{original.id}' lacks the option '{theirs[len(mine)].value}' "
                       f"({survey_file}:{theirs[len(mine)].line})")


def _yaml(value: Any) -> str:
    value = plain(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


# --------------------------------------------------------------------------------------------
# Texts still the survey file's


def _texty(text: str | None) -> bool:
    return bool(text and _LETTER.search(text))


def untranslated(survey: Survey, translation: Survey, headings: Sequence[int],
                 page_lines: Sequence[int], front: schema.Fields | None,
                 problems: Problems) -> None:
    """Warn, at the translation's lines, of each text that is still the survey file's."""
    source = survey.file

    def warn(line: int, what: str, text: str, where: int) -> None:
        shown = text if len(text) <= 50 else text[:50] + "…"
        problems.warn(line, f"untranslated: {what} is the survey file's “{shown}” "
                            f"({source}:{where})")

    if _texty(translation.title) and translation.title == survey.title:
        line = front.line_of("title") if front is not None else 1
        warn(line, "the title", survey.title, survey.lines.get("title", 1))
    if translation.consent and translation.consent == survey.consent:
        line = front.line_of("consent") if front is not None else 1
        warn(line, "the consent text", survey.consent, survey.lines.get("consent", 1))
    for what, mine, theirs in (("the introduction", translation.intro_source,
                                survey.intro_source),
                               ("the closing text", translation.outro_source,
                                survey.outro_source)):
        _prose(what, mine, theirs, warn)
    skipped = len(translation.pages) - len(page_lines)  # an untitled first page has no break
    for index, title in enumerate(translation.pages):
        if index < len(survey.pages) and _texty(title) and title == survey.pages[index]:
            at = index - skipped
            warn(page_lines[at] if 0 <= at < len(page_lines) else 1,
                 f"the title of page {index + 1}", title, 1)
    own = [q for q in translation.questions if q.role is None]
    originals = [q for q in survey.questions if q.role is None]
    for index, (question, original) in enumerate(zip(own, originals, strict=False)):
        heading = headings[index] if index < len(headings) else question.line
        _question_texts(question, original, heading, warn, problems, source)


def _prose(what: str, mine: Iterable[tuple[int, str]], theirs: Iterable[tuple[int, str]],
           warn: Any) -> None:
    originals = {text.strip(): line for line, text in theirs if _texty(text)}
    for line, text in mine:
        if _texty(text) and text.strip() in originals:
            warn(line, f"a line of {what}", text.strip(), originals[text.strip()])


def _question_texts(question: Question, original: Question, heading: int, warn: Any,
                    problems: Problems, source: str) -> None:
    if _texty(question.text) and question.text == original.text:
        warn(heading, f"the heading of '{question.id}'", question.text, original.line)
    if original.help_html and not question.help_html:
        problems.warn(heading, f"untranslated: '{question.id}' has no help text; "
                               f"{source} has one for it")
    elif _texty(question.help_html) and question.help_html == original.help_html:
        warn(heading, f"the help text of '{question.id}'", _first_words(question.help_html),
             original.line)
    for option, theirs in zip(question.options, original.options, strict=False):
        if question.type != "yes-no" and _texty(option.label_text) and \
                option.label_text == theirs.label_text:
            warn(option.line, f"the label of option '{option.value}'", option.label_text,
                 theirs.line)
    for key in TEXT_KEYS:
        mine = question.fields.get(key) if question.fields is not None else None
        theirs_text = original.fields.get(key) if original.fields is not None else None
        if _texty(mine) and mine == theirs_text:
            warn(question.fields.line_of(key), f"{key} of '{question.id}'", str(mine),
                 original.fields.line_of(key))


def _first_words(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).strip()


def page_break_lines(text: str) -> list[int]:
    """The line of each page break (``+++``) of a file, in order (for its warnings)."""
    return [number for number, line in enumerate(text.splitlines(), start=1)
            if _PAGE_BREAK.match(line)]
