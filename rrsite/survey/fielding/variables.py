"""Languages, panels and validation: their keys checked, and the questions the build adds.

The page answers two of the added questions itself and asks the others:

- ``language`` (with ``languages:``): the page's language, a direct choice question the page
  answers (left out of the version: every language, one version);
- ``arm`` (with ``validation:``): the arm the device drew, ``randomized`` or ``direct``;
- ``<id>_check`` (a question's ``check: true``): "if the draw says Yes, what is sent?", asked in
  the question's box before its answer;
- ``<id>_direct`` (each question under validation): the question asked directly, shown in the
  direct arm only (``show_if`` on ``arm``), while the randomized question is shown in the other.

They are ordinary direct questions of the manifest (docs/contracts.md), so the collector checks
them, the export writes them and the tally counts them like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import schema
from ..errors import Problems
from ..model import Option, Question
from ..questions import make_option
from ..render import plain_text, render_block, render_inline
from .blocks import ID_PARAMETERS, PANEL_NAMES, REDIRECTS

#: Designs whose device can send "yes" whatever the answer: the check asks about that draw.
CHECKED_DESIGNS = ("forced-response", "forced-yes", "cdm", "cdm-sym")
#: The values of a check, in the order the page shows them; the right answer first.
CHECK_VALUES = ("yes", "truth", "no")
#: Submission targets that acknowledge a submission (a panel waits for the acknowledgement).
ACKNOWLEDGING = ("collector", "endpoint")
LANGUAGE_ID, ARM_ID = "language", "arm"
CHECK_SUFFIX, DIRECT_SUFFIX = "_check", "_direct"


@dataclass
class Fielding:
    """What the front matter's fielding keys make of a survey's questions."""

    questions: list[Question]
    languages: list[str] = field(default_factory=list)
    panel: dict[str, Any] | None = None
    validation: dict[str, Any] | None = None


def apply(front: schema.Fields, questions: list[Question], answer_words: dict[str, str],
          words: dict[str, str], paged: bool, problems: Problems) -> Fielding:
    """Check the keys and return the questions with those the build adds, in page order.

    ``answer_words``: the language's yes-no words; ``words``: the added questions' texts
    (rrsite.survey.fielding.words).
    """
    taken = {question.id: question.line for question in questions}
    result = Fielding(questions=list(questions))
    languages = front.get("languages")
    if front.given("languages"):
        result.languages = _languages(front, languages, problems)
    result.panel = _panel(front, questions, problems)
    validation = front.get("validation")
    validated: list[Question] = []
    if validation is not None and validation.given("direct_share"):
        validated = _validated(validation, questions, problems)
    added: list[Question] = []
    if result.languages:
        added.append(language_question(result.languages, {}, words, front.line_of("languages")))
    if validated:
        assert validation is not None
        share = float(validation.get("direct_share"))
        added.append(_arm_question(share, words, validation.line))
        result.validation = {
            "direct_share": share, "questions": [q.id for q in validated], "arm": ARM_ID,
            "direct": {q.id: q.id + DIRECT_SUFFIX for q in validated}}
    ordered: list[Question] = []
    for question in questions:
        if question.id in {q.id for q in validated}:
            question.show_if = {"question": ARM_ID, "is": ["randomized"]}
        check = _check(question, answer_words, words, problems)
        if check is not None:
            ordered.append(check)
        ordered.append(question)
        if question.id in {q.id for q in validated}:
            ordered.append(_direct_question(question, words))
    if paged:
        for question in added:
            question.page = 1
    result.questions = added + ordered
    for question in result.questions:
        if question.role is not None and question.id in taken:
            problems.error(taken[question.id], f"question id '{question.id}' is the one rrsite "
                           f"gives the {_what(question)}: rename this question")
    return result


def _what(question: Question) -> str:
    """What an added question is, for a message."""
    return {"language": "page's language (languages:)", "arm": "arm of the split (validation:)",
            "check": "comprehension check of 'check: true'",
            "direct": "direct version of a question under validation"}[question.role or ""]


# --------------------------------------------------------------------------------------------
# languages


def _languages(front: schema.Fields, languages: list[str], problems: Problems) -> list[str]:
    line = front.line_of("languages")
    if len(languages) < 2:
        problems.error(line, f"languages: lists one language ({languages[0]}); a survey in one "
                             "language needs only `language:`")
        return []
    if front.given("language") and front.get("language") != languages[0]:
        problems.error(front.line_of("language"), f"language: {front.get('language')} is not the "
                       f"first of languages: {', '.join(languages)} (the survey file's own "
                       "language comes first)")
    return list(languages)


def language_question(languages: list[str], names: dict[str, str], words: dict[str, str],
                      line: int) -> Question:
    """The variable ``language``: one option per language, labelled with its own name."""
    options = [make_option(code, names.get(code, code), line) for code in languages]
    text_html = render_inline(words["language_variable"])
    return Question(id=LANGUAGE_ID, type="choice", text=plain_text(text_html),
                    text_html=text_html, line=line, required=False, options=options,
                    role="language")


# --------------------------------------------------------------------------------------------
# panels


def _panel(front: schema.Fields, questions: list[Question],
           problems: Problems) -> dict[str, Any] | None:
    """The manifest's ``panel``, and each question's ``screen_out`` checked."""
    panel = front.get("panel")
    screening = [q for q in questions if q.fields is not None and q.fields.given("screen_out")]
    if panel is None or not panel.given("provider") or not panel.given("complete"):
        for question in screening:
            problems.error(question.fields.line_of("screen_out"), "screen_out applies to a "
                           "survey with `panel:` (it sends the participant back to the panel)")
        return None
    provider = panel.get("provider")
    parameter = panel.get("id") or ID_PARAMETERS.get(provider)
    if parameter is None:
        problems.error(panel.line_of("provider"), "panel: provider url needs `id:`, the query "
                       "parameter of the study link that holds the participant's id (e.g. id: "
                       "rid)")
    submit = front.get("submit")
    target = submit.get("to") if submit is not None else "collector"
    if target not in ACKNOWLEDGING:
        problems.error(front.line_of("panel"), f"panel: needs `submit: {{to: collector}}` or "
                       f"`{{to: endpoint}}`: the page sends a participant back to the panel only "
                       f"once their answers were acknowledged, which `to: {target}` never does")
    if front.get("mode") == "kiosk":
        problems.error(front.line_of("panel"), "panel: is for participants on their own devices; "
                       "`mode: kiosk` serves many respondents on one device")
    for question in screening:
        _screen_out(question, panel, problems)
    if panel.given("screen_out") and not screening:
        problems.warn(panel.line_of("screen_out"), "panel: screen_out is given, but no question "
                      "has `screen_out:` answers, so no one is screened out")
    return {"provider": provider, "id": parameter, "name": panel.get("name") or
            PANEL_NAMES.get(provider), "complete": panel.get("complete"),
            "redirect": panel.get("redirect") or REDIRECTS.get(provider),
            "screen_out": panel.get("screen_out"), "over_quota": panel.get("over_quota"),
            "no_consent": panel.get("no_consent"), "record": bool(panel.get("record"))}


def _screen_out(question: Question, panel: schema.Fields, problems: Problems) -> None:
    line = question.fields.line_of("screen_out")
    values = question.fields.get("screen_out")
    if question.sensitive:
        problems.error(line, f"screen_out on '{question.id}', a randomized question: leaving the "
                       "survey on an answer would tell its true answer; screen with a direct "
                       "question")
    elif question.type not in ("yes-no", "choice", "multi-choice"):
        problems.error(line, f"screen_out applies to yes-no, choice and multi-choice questions, "
                       f"not {question.type}")
    elif not panel.given("screen_out"):
        problems.error(line, "screen_out needs the panel's screen-out code: `screen_out: CODE` "
                       "under `panel:`")
    else:
        for value in values:
            if value not in question.values:
                problems.error(line, f"screen_out: '{value}' is not an answer of "
                               f"'{question.id}' ({', '.join(question.values)})"
                               f"{schema.suggest(value, question.values)}")
        question.screen_out = list(values)


# --------------------------------------------------------------------------------------------
# comprehension checks


def _check(question: Question, answer_words: dict[str, str], words: dict[str, str],
           problems: Problems) -> Question | None:
    """The check of a question with ``check: true`` (its show_if as the question's)."""
    if question.fields is None or not question.fields.get("check"):
        return None
    line = question.fields.line_of("check")
    design = question.design.name if question.design is not None else None
    if design is None and any(question.fields.given(key)
                              for key in ("randomize", "epsilon", "sensitive")):
        return None  # meant to be randomized: its design's own error says what is wrong
    if design not in CHECKED_DESIGNS or question.type != "yes-no":
        problems.error(line, "check asks what is sent when the device's draw says "
                       f"“{answer_words['yes']}”, which {', '.join(CHECKED_DESIGNS)} draw; "
                       + (f"{question.id} uses {design}" if design else
                          f"{question.id} is not randomized"))
        return None
    yes, no = answer_words["yes"], answer_words["no"]
    labels = {"yes": words["check_yes"].replace("{yes}", yes),
              "truth": words["check_truth"],
              "no": words["check_no"].replace("{no}", no)}
    text_html = render_inline(words["check_question"].replace("{yes}", yes))
    return Question(
        id=question.id + CHECK_SUFFIX, type="choice", text=plain_text(text_html),
        text_html=text_html, line=line, required=True, page=question.page,
        options=[make_option(value, labels[value], line) for value in CHECK_VALUES],
        show_if=None if question.show_if is None else dict(question.show_if), role="check",
        role_info={"check": {"question": question.id, "instruction": "yes", "correct": "yes"}})


# --------------------------------------------------------------------------------------------
# validation: the direct arm


def _validated(validation: schema.Fields, questions: list[Question],
               problems: Problems) -> list[Question]:
    """The questions under validation (each randomized, yes-no or choice, unconditioned)."""
    by_id = {question.id: question for question in questions}
    line = validation.line_of("questions")
    if validation.given("questions"):
        chosen = []
        for qid in validation.get("questions"):
            question = by_id.get(qid)
            if question is None:
                problems.error(line, f"validation: no question has id '{qid}'"
                               f"{schema.suggest(qid, by_id)}")
            elif not question.sensitive or question.type not in schema.RANDOMIZABLE_TYPES:
                problems.error(line, f"validation: '{qid}' is not a randomized yes-no or choice "
                               "question: the direct arm compares a randomized question with "
                               "the same question asked directly")
            elif question.oracle is not None:
                problems.error(line, f"validation: '{qid}' uses a frequency oracle "
                               f"({question.oracle.name}); the direct arm is compared with a "
                               "design of a matrix or a number design")
            elif question.show_if is not None:
                problems.error(line, f"validation: '{qid}' has show_if; the arm decides whether "
                               "a question under validation is shown, so it cannot have a "
                               "condition of its own")
            else:
                chosen.append(question)
        return chosen
    chosen = [q for q in questions if q.sensitive and q.type in schema.RANDOMIZABLE_TYPES
              and q.show_if is None and q.oracle is None]
    if not chosen:
        problems.error(validation.line, "validation: the survey has no randomized yes-no or "
                       "choice question without show_if to compare with direct questioning")
    return chosen


def _arm_question(share: float, words: dict[str, str], line: int) -> Question:
    text_html = render_inline(words["arm_variable"])
    options = [make_option("randomized", words["arm_randomized"], line),
               make_option("direct", words["arm_direct"], line)]
    return Question(id=ARM_ID, type="choice", text=plain_text(text_html), text_html=text_html,
                    line=line, required=True, options=options, role="arm",
                    role_info={"direct_share": share})


def _direct_question(question: Question, words: dict[str, str]) -> Question:
    """The question asked directly, in the direct arm: its text and answers, no design."""
    options = [Option(o.value, o.label, o.label_html, o.label_text, o.line)
               for o in question.options]
    return Question(
        id=question.id + DIRECT_SUFFIX, type=question.type, text=question.text,
        text_html=question.text_html, line=question.line, required=question.required,
        options=options, help_html=render_block(words["direct_help"]), page=question.page,
        show_if={"question": ARM_ID, "is": ["direct"]}, role="direct",
        role_info={"direct": {"question": question.id}})
