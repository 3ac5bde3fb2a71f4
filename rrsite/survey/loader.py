"""`load_survey`: read a survey file, check everything, and report every problem with its line.

A survey file is YAML front matter, then Markdown prose in which each question is a level-2
heading (the question's text) followed by a ```` ```question ```` fence of YAML. See schema.py for
every key; the rules that involve several keys (which design takes which parameter, the budget,
infinite epsilons) are here.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import schema, yaml_words
from .catalog import Catalog, primary_subtag, read_catalog
from .errors import Problems, SurveyError, SurveyErrors
from .fielding import translations, variables
from .fielding.words import WORDS, words_for
from .frequency import charged
from .model import (
    BUDGET_DIGITS,
    COLLECTOR_URL,
    Question,
    Survey,
    over_budget,
    shown_apart,
)
from .questions import Defaults, RawQuestion, build_question, check_conditions, make_option
from .render import render_block, render_prose, unsafe_links
from .source import Heading, PageBreak, Prose, clean_characters, read_text, split


def load_survey(path: str | os.PathLike[str]) -> Survey:
    """Parse and validate a survey file; raise :class:`SurveyErrors` with every problem found."""
    path = Path(path)
    file = str(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        message = f"cannot read the file: {error.strerror}"
        raise SurveyErrors([SurveyError(file, 1, message)]) from None
    problems = Problems(file)
    text = read_text(data, problems)
    if text is None:
        problems.raise_if_any()
        raise AssertionError("unreachable")  # pragma: no cover
    return parse_survey(text, file, path, problems)


def parse_survey(
    text: str, file: str = "<survey>", path: Path | None = None, problems: Problems | None = None
) -> Survey:
    """Parse survey text (``file`` names it in messages); raise :class:`SurveyErrors` if bad."""
    problems = problems or Problems(file)
    text = _untrusted(text, problems)
    source = split(text, problems)
    front = _front_matter(source.front_yaml, problems)
    layout = _layout(source.parts, problems)
    language = _language(front)
    catalog = _own_catalog(front, path or Path(file), problems)
    _check_language(front, language, problems)
    words = _answer_words(language, catalog)
    defaults = Defaults.from_front(front, problems)
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for raw in layout.questions:
        known = len(problems.errors)
        question = build_question(raw, words, defaults, problems, raw.before)
        if question is not None and layout.pages:
            question.page = raw.page
        if len(problems.errors) > known and question is not None:
            defaults.broken.add(question.id)
        if question is None:
            continue
        if question.id in seen:
            problems.error(question.line, f"duplicate question id '{question.id}' (first used on "
                                          f"line {seen[question.id]})")
            continue
        seen[question.id] = question.line
        questions.append(question)
    if not layout.questions and not problems:
        problems.error(source.last_line, "the survey has no questions: add a '## ' heading with "
                                         "the question's text, followed by a ```question block")
    check_conditions(questions, problems)
    survey = None
    own = list(questions)
    if front is not None:
        fielding = variables.apply(front, questions, words, words_for(language, catalog),
                                   bool(layout.pages), problems)
        survey = _survey(front, fielding.questions, layout, path, file, defaults, problems)
        if survey is not None:
            survey.languages = fielding.languages
            survey.panel, survey.validation = fielding.panel, fielding.validation
            survey.messages = catalog
            if survey.languages and not problems:
                _translations(survey, front, own, defaults, problems)
    problems.raise_if_any()
    assert survey is not None
    survey.warnings = list(problems.warnings)
    return survey


def _language(front: schema.Fields | None) -> str:
    """The survey file's language: ``language:``, else the first of ``languages:``, else en."""
    if front is None:
        return "en"
    if front.given("language"):
        return str(front.get("language"))
    listed = front.get("languages") or ["en"]
    return str(listed[0])


# --------------------------------------------------------------------------------------------
# Translations (survey/fielding/translations.py)


def _translations(survey: Survey, front: schema.Fields, own: list[Question], defaults: Defaults,
                  problems: Problems) -> None:
    """Load the translation file of each language but the first; name every language."""
    for language in survey.languages[1:]:
        path = translations.translation_path(survey.path, language)
        try:
            data = path.read_bytes()
        except OSError:
            problems.error(front.line_of("languages"), f"languages: {language} has no "
                           f"translation file {path}: copy {survey.path.name} to {path.name} and "
                           "translate its texts")
            continue
        found = Problems(str(path))
        translated = _translation(survey, front, own, language, defaults, data, found)
        problems.errors.extend(found.errors)
        problems.warnings.extend(found.warnings)
        if translated is not None:
            survey.translations[language] = translated
    names = {}
    for language in survey.languages:
        catalog = survey.messages if language == survey.languages[0] else (
            survey.translations[language].messages if language in survey.translations else None)
        shipped = WORDS.get(language) or WORDS.get(primary_subtag(language)) or {}
        names[language] = ((catalog.messages.get("language_name") if catalog else None)
                           or shipped.get("language_name") or language)
    for version in (survey, *survey.translations.values()):
        for question in version.questions:
            if question.role == "language":
                question.options = [make_option(code, names[code], question.line)
                                    for code in survey.languages]


def _translation(survey: Survey, front: schema.Fields, own: list[Question], language: str,
                 defaults: Defaults, data: bytes, problems: Problems) -> Survey | None:
    """The survey in ``language``, from its translation file; None if the file is refused."""
    text = read_text(data, problems)
    if text is None:
        return None
    text = _untrusted(text, problems)
    path = Path(problems.file)
    source = split(text, problems)
    tfront = _front_matter(source.front_yaml, problems, translations.TRANSLATION_FRONT)
    translations.compare_front(front, survey.file, tfront, language, problems)
    layout = _layout(source.parts, problems)
    catalog = _own_catalog(tfront, path, problems)
    words = _answer_words(language, catalog)
    read: list[Question | None] = []
    for raw in layout.questions:
        question = build_question(raw, words, defaults, problems, raw.before)
        if question is not None and layout.pages:
            question.page = raw.page
        read.append(question)
    headings = [raw.heading.line if raw.heading is not None else raw.block.line
                for raw in layout.questions]
    translations.compare_questions(own, survey.file, read, headings, problems)
    if problems:
        return None
    questions = [question for question in read if question is not None]
    check_conditions(questions, problems)
    fielding = variables.apply(front, questions, words, words_for(language, catalog),
                               bool(layout.pages), Problems(survey.file))  # the survey's own
    given = tfront.given if tfront is not None else (lambda name: False)
    consent = tfront.get("consent") if tfront is not None and given("consent") else survey.consent
    translated = dataclasses.replace(
        survey, path=path, file=str(path), language=language, questions=fielding.questions,
        title=tfront.get("title") if tfront is not None and given("title") else survey.title,
        intro_html=render_prose(layout.intro), outro_html=render_prose(layout.outro),
        consent=consent, consent_html=render_block(consent) if consent else "",
        pages=list(layout.pages), intro_source=_prose_source(layout.intro),
        outro_source=_prose_source(layout.outro), messages=catalog, translations={},
        warnings=[], lines=dict(tfront.lines) if tfront is not None else {})
    if translated.version != survey.version:  # the comparison above should make this impossible
        problems.error(1, f"this translation asks something other than {survey.file} (version "
                          f"{translated.version}, not {survey.version}): a translation changes "
                          "texts only")
        return None
    translations.untranslated(survey, translated, headings,
                              translations.page_break_lines(text), tfront, problems)
    return translated


def _untrusted(text: str, problems: Problems) -> str:
    """A survey's (or translation's) text without control and bidirectional characters.

    Each is an error or a warning (source.clean_characters); each link that will be left out of
    the page is a warning too.
    """
    text = clean_characters(text, 1, problems)
    for line, url in unsafe_links(text):
        problems.warn(line, f"the link to {url!r} is left out: links go only to http, https "
                            "and mailto addresses, or to pages beside the survey")
    return text


# --------------------------------------------------------------------------------------------
# Front matter and layout


def _own_catalog(front: schema.Fields | None, survey_path: Path,
                 problems: Problems) -> Catalog | None:
    """The survey's own message catalog (``messages:``, a file beside the survey), if it has one."""
    if front is None or not front.given("messages"):
        return None
    name = str(front.get("messages"))
    line = front.line_of("messages")
    path = survey_path.parent / name
    folder = survey_path.parent.resolve()
    if (Path(name).name != name or name.startswith(".") or not name.endswith(".json")
            or not path.resolve().is_relative_to(folder)):
        problems.error(line, f"messages: {name!r} must name a .json file beside the survey, "
                             "in its folder (e.g. messages: sw.json)")
        return None
    if not path.is_file():
        problems.error(line, f"messages: {name} is not a file (looked for {path}): copy "
                             "rrsite's templates/messages/en.json there and translate it")
        return None
    catalog, errors = read_catalog(path)
    problems.errors.extend(errors)
    return catalog


def _check_language(front: schema.Fields | None, language: str, problems: Problems) -> None:
    """A language rrsite does not ship needs the survey's own catalog (``messages:``)."""
    if front is None or not front.given("language") or "messages" in front.lines:
        return
    if language in schema.LANGUAGES or primary_subtag(language) in schema.LANGUAGES:
        return
    shipped = ", ".join(schema.LANGUAGES)
    problems.error(front.line_of("language"), f"language '{language}' is not one rrsite ships "
                   f"({shipped}){schema.suggest(language, schema.LANGUAGES)}; a survey in "
                   f"another language brings its own catalog: `messages: {language}.json` "
                   "beside the survey, a translation of rrsite's templates/messages/en.json")


def _answer_words(language: str, catalog: Catalog | None) -> dict[str, str]:
    """The words of a yes-no question's answers: the survey's catalog's, else rrsite's."""
    if catalog is not None and {"answer_yes", "answer_no"} <= set(catalog.messages):
        return {"no": catalog.messages["answer_no"], "yes": catalog.messages["answer_yes"]}
    shipped = schema.LANGUAGES.get(language) or schema.LANGUAGES.get(primary_subtag(language))
    return shipped or schema.LANGUAGES["en"]


def _front_matter(front_yaml: str | None, problems: Problems,
                  block: schema.Block = schema.FRONT_MATTER) -> schema.Fields | None:
    if front_yaml is None:
        return None
    known = len(problems.errors)
    node = yaml_words.compose(front_yaml, problems, "the front matter")
    if node is None:
        if len(problems.errors) == known and block is schema.FRONT_MATTER:
            problems.error(1, "the front matter is empty: give at least id and title")
        return None
    return schema.read_block(block, node, problems, 1)


@dataclass
class _Layout:
    intro: list[Prose]
    questions: list[RawQuestion]
    outro: list[Prose]
    #: Page titles ("" when untitled), one per page, when the file has page breaks (``+++``).
    pages: list[str] = field(default_factory=list)


def _layout(parts: list[Any], problems: Problems) -> _Layout:
    """Pair each heading with the block under it; what lies between is the question's help."""
    questions: list[RawQuestion] = []
    pending: Heading | None = None
    help_parts: list[Prose] = []
    loose: list[Prose] = []
    intro: list[Prose] | None = None
    pages: list[str] = [""]
    breaks: list[PageBreak] = []
    for part in parts:
        if isinstance(part, PageBreak):
            if pending is not None:
                _no_block(pending, problems, help_parts)
                pending, help_parts = None, []
            if not questions:
                pages[0] = part.title  # before the first question: the first page's title
            elif questions[-1].page == len(pages):
                pages.append(part.title)
                breaks.append(part)
            else:
                problems.error(part.line, "a page break right after another one (or an empty "
                                          "page): put at least one question between two '+++'")
            continue
        if isinstance(part, Prose):
            (help_parts if pending is not None else loose).append(part)
        elif isinstance(part, Heading):
            if pending is not None:
                _no_block(pending, problems, help_parts)
            pending, help_parts = part, []
        else:
            if pending is None:
                problems.error(part.line, "a ```question block without a '## ' heading above it "
                                          "(the heading is the question's text)")
                questions.append(RawQuestion(None, part))
                continue
            if intro is None:
                intro, loose = loose, []
            questions.append(RawQuestion(pending, part, help_parts, loose, len(pages)))
            pending, help_parts, loose = None, [], []
    if pending is not None:
        _no_block(pending, problems, help_parts)
    if questions and questions[-1].page < len(pages):
        problems.error(breaks[-1].line, "a page break with no question after it: remove the "
                                        "last '+++' or add a question")
    paged = len(pages) > 1 or bool(pages[0])
    return _Layout(intro or [], questions, loose if intro is not None else [],
                   pages if paged else [])


def _no_block(heading: Heading, problems: Problems, under: list[Prose]) -> None:
    """The heading has no ```question block; a code block under it that lacks the word is named."""
    for part in under:
        for offset, line in enumerate(part.lines):
            fence = re.match(r" {0,3}(`{3,}|~{3,})(.*)$", line)
            if fence:
                info = fence.group(2).strip()
                opened = f"'{fence.group(1)}{info}'" if info else f"'{fence.group(1)}' alone"
                problems.error(part.line + offset, f"the block under '## {heading.text}' opens "
                               f"with {opened}: a question's block opens with "
                               f"'{fence.group(1)}question'")
                return
    problems.error(heading.line, f"the heading '## {heading.text}' has no ```question block under "
                                 "it; every level-2 heading is a question (use # or ### for other "
                                 "headings)")


def _prose_source(parts: list[Prose]) -> list[tuple[int, str]]:
    """``(file line, text)`` of every line of ``parts``."""
    return [(part.line + offset, text) for part in parts for offset, text in enumerate(part.lines)]


# --------------------------------------------------------------------------------------------
# The survey as a whole


def _submit(front: schema.Fields, survey_id: str | None, problems: Problems) -> dict[str, str]:
    submit = front.get("submit")
    if submit is None:
        return {"to": "collector", "url": COLLECTOR_URL}
    target = submit.get("to")
    url = submit.get("url")
    if target != "endpoint":
        if submit.given("url"):
            problems.error(submit.line_of("url"),
                           f"url applies to `to: endpoint`, not `to: {target}`")
        if target == "collector":
            return {"to": "collector", "url": COLLECTOR_URL}
        if target == "netlify":
            return {"to": "netlify", "form": survey_id or ""}
        return {"to": str(target)}
    if url is None:
        if "url" not in submit.lines:
            problems.error(submit.line_of("to"), "submit to: endpoint needs url: the https address "
                                                 "that takes the JSON POST")
        return {"to": "endpoint", "url": ""}
    problem = endpoint_problem(url)
    if problem:
        problems.error(submit.line_of("url"), f"url {problem}")
    return {"to": "endpoint", "url": url}


def endpoint_problem(url: str) -> str | None:
    """Why an endpoint URL is unusable (None if it is fine): absolute https, or http on loopback."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"is not a valid URL ({error}): {url!r}"
    del port
    loopback = parts.hostname in ("localhost", "127.0.0.1", "::1")
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return f"must be an absolute https URL, got {url!r}"
    if parts.scheme == "http" and not loopback:
        return f"must use https (http only for localhost), got {url!r}"
    if parts.username or parts.password:
        return "must not contain a user name or password"
    if any(ch.isspace() for ch in url) or "'" in url or ";" in url or "," in url:
        return f"must not contain spaces, quotes, commas or semicolons, got {url!r}"
    return None


def endpoint_origin(url: str) -> str:
    """``scheme://host[:port]`` of an endpoint URL (for the CSP's connect-src)."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _survey(
    front: schema.Fields,
    questions: list[Question],
    layout: _Layout,
    path: Path | None,
    file: str,
    defaults: Defaults,
    problems: Problems,
) -> Survey | None:
    survey_id = front.get("id")
    submit = _submit(front, survey_id, problems)
    privacy = front.get("privacy")
    budget = privacy.get("budget") if privacy is not None else None
    ids = {question.id for question in questions}
    for qid, (_, line) in defaults.priors.items():
        if qid in defaults.broken:
            continue  # its own errors say what is wrong
        if qid not in ids:
            problems.error(line, f"priors: no question has id '{qid}'{schema.suggest(qid, ids)}")
        else:
            question = next(q for q in questions if q.id == qid)
            if question.type != "yes-no" or not question.sensitive:
                problems.error(line, f"priors: '{qid}' is not a randomized yes-no question; priors "
                                     "are for those")
    anchors = [q for q in questions if q.anchor]
    for extra in anchors[1:]:
        problems.error(extra.line, f"anchor: '{extra.id}' is a second anchor question (the first "
                       f"is '{anchors[0].id}' at line {anchors[0].line}); one anchor measures the "
                       "survey's inattentive respondents")
    # an anchor's statement is false for everyone: its reports tell no sensitive attribute
    sensitive = [q for q in questions if q.sensitive and not q.anchor]
    finite = [q for q in sensitive if q.privacy is not None and math.isfinite(q.privacy.epsilon)]
    # in a series: what the whole study costs (rrsite.survey.frequency.charged)
    shares = {q.id: charged(q, defaults.series) for q in finite}
    total = sum(shares.values())
    if sensitive and budget is None:
        where = privacy.line if privacy is not None else 1
        problems.error(where, "privacy.budget is missing: the per-respondent epsilon budget (these "
                              f"sensitive questions spend {total:.6g} together)")
    elif budget is not None and over_budget(total, budget):
        # Compared at the digits rrsite prints (model.BUDGET_DIGITS); the sum is shown with as
        # many digits as it takes to differ from the budget.
        assert privacy is not None
        shown = shown_apart(total, budget)
        digits = max(BUDGET_DIGITS, len(shown.replace(".", "").lstrip("0")))
        parts = " + ".join(f"{q.id} {shares[q.id]:.{digits}g}" for q in finite)
        waves = " over all waves of the series" if defaults.series is not None else ""
        problems.error(privacy.line_of("budget"), f"the sensitive questions together spend epsilon "
                       f"{shown}{waves} ({parts}), more than privacy.budget {budget:g}")
    if front.get("mode") == "kiosk" and submit.get("to") == "download":
        problems.error(front.line_of("mode"), "mode: kiosk needs a target that sends (collector, "
                       "endpoint or netlify): with `submit: {to: download}` each respondent's "
                       "file would stay on the shared device")
    if survey_id is None or front.get("title") is None:
        return None
    return Survey(
        path=path or Path(file),
        file=file,
        id=survey_id,
        title=front.get("title"),
        language=_language(front),
        questions=questions,
        submit=submit,
        epsilon=defaults.epsilon,
        delta=defaults.delta,
        budget=budget,
        intro_html=render_prose(layout.intro),
        outro_html=render_prose(layout.outro),
        review=front.get("review") or "full",
        lines={**front.lines, **({"budget": privacy.line_of("budget")}
                                 if privacy is not None and privacy.given("budget") else {})},
        consent=front.get("consent"),
        pages=list(layout.pages),
        shuffle=bool(front.get("shuffle")),
        mode=str(front.get("mode")),
        consent_html=render_block(front.get("consent")) if front.given("consent") else "",
        intro_source=_prose_source(layout.intro),
        outro_source=_prose_source(layout.outro),
        series=defaults.series,
    )
