"""`rrsite check`'s warnings: what builds, yet a reviewer or an ethics board would question.

- a privacy budget spent (almost) by one question while other sensitive questions share the rest;
- a yes-no design much less efficient than the optimal design at the same epsilon (named);
- direct questions whose combination of answers could single people out at the expected number of
  respondents (and free-text answers, which can name anyone);
- a survey without consent text;
- text respondents read that speaks to the author instead: it names an rrsite command (`rrsite
  build`), a file or folder of the author's (`survey.md`, `dist`), or says what rrsite does with
  the answers ("rrsite can break the estimate down by this answer", the old starter's note);
- a closing text ("Thank you! Your answers have been recorded") left between questions, where
  respondents read it before they have answered;
- a budget that the questions' epsilons exceed as rrsite prints them: within it only by less than
  the printed digits show, or over it once each epsilon is rounded as the messages show it.

Each warning is a :class:`SurveyError` with the line it is about.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from ..core import optimal_design
from ..core.designs import BinaryDesign
from ..core.optimal import variance
from .errors import SurveyError
from .model import BUDGET_DIGITS, Question, Survey, shown_apart

#: A question spending more than this share of the budget, beside other sensitive ones, is flagged.
ONE_QUESTION_SHARE = 0.75
#: A design needing this many times the respondents of the optimal one is flagged.
EFFICIENCY_RATIO = 1.25
#: Fewer expected respondents than this per combination of direct answers can single people out.
MIN_PER_COMBINATION = 5.0
#: Respondents `rrsite check` assumes when not told.
DEFAULT_RESPONDENTS = 200

Warn = Callable[[int, str], None]

#: rrsite's commands, as an author types them.
_COMMAND = re.compile(r"\brrsite\s+(?:new|build|check|preview|serve|export|invite|analyze|plan|"
                      r"power|simulate)\b|\bnpm\s+\w+|\bpip\s+install\b")
#: A file or folder of the author's: a name with a survey, data or page suffix, or the output
#: folder `dist` (as a word, as `dist/`, or after `-o`).
_AUTHOR_FILE = re.compile(r"(?<![\w/.-])[\w./-]*\.(?:md|json|jsonl|csv|ya?ml|db|html)\b"
                          r"|(?<![\w-])dist\b/?")
#: A note about what rrsite does with the answers ("rrsite can break the estimate down").
_TOOL_NOTE = re.compile(r"\brrsite\s+(?:can|could|will|would|uses|breaks?|estimates?|"
                        r"analy[sz]es?|computes?|reports?)\b", re.IGNORECASE)
#: What a closing text says, in the languages rrsite ships: thanks for the answers, answers
#: recorded, the page may be closed.
_CLOSING = re.compile(
    r"answers? (?:have|has) been (?:recorded|saved|sent|received)|close this (?:page|window|tab)"
    r"|thank(?:s| you) for (?:your answers|completing|participating)"
    r"|gracias por (?:sus|tus) respuestas|cerrar esta p[áa]gina"
    r"|vielen dank f[üu]r ihre antworten|seite (?:jetzt )?schlie(?:ß|ss)en"
    r"|merci (?:pour|de) vos r[ée]ponses|fermer cette page"
    r"|obrigad[oa] pel[ao]s? (?:suas )?respostas|fechar esta p[áa]gina"
    r"|grazie per le (?:sue|tue) risposte|chiudere questa pagina", re.IGNORECASE)


def check_survey(survey: Survey, respondents: int = DEFAULT_RESPONDENTS) -> list[SurveyError]:
    """Every warning for one survey that loaded (errors are the loader's), in line order."""
    warnings: list[SurveyError] = []

    def warn(line: int, message: str) -> None:
        warnings.append(SurveyError(survey.file, line, message))

    if survey.consent is None:
        warn(1, "no consent text: add `consent:` to the front matter (Markdown). The page then "
                "shows it first and nothing can be answered before the respondent agrees")
    _author_words(survey, warn)
    _closing_between_questions(survey, warn)
    _budget(survey, warn)
    _budget_as_printed(survey, warn)
    for question in survey.sensitive_questions:
        _efficiency(question, warn)
    _combinations(survey, respondents, warn)
    return sorted(warnings, key=lambda warning: warning.line)


def author_words(text: str) -> list[str]:
    """The rrsite commands, author's file names and notes on rrsite ``text`` has, in order."""
    commands = [*_COMMAND.finditer(text), *_TOOL_NOTE.finditer(text)]
    found = [(match.start(), match.group(0)) for match in commands]
    for match in _AUTHOR_FILE.finditer(text):
        if not any(command.start() <= match.start() < command.end() for command in commands):
            found.append((match.start(), match.group(0)))
    return [word for _, word in sorted(found)]


def _author_words(survey: Survey, warn: Warn) -> None:
    """Lines respondents read that mention rrsite commands, the author's files or rrsite's work."""
    closing = ("Write to them instead (for example 'Thank you for your answers. You can close "
               "this page now.')")
    sources = [("introduction", "before the first question", survey.intro_source, closing),
               ("closing text", "on the thank-you screen", survey.outro_source, closing)]
    sources += [(f"text of question '{question.id}'", "with the question",
                 question.prose_source, "A note to yourself belongs in a comment ('# ...') "
                 "inside the question's block, which respondents never see")
                for question in survey.questions]
    for where, shown, source, instead in sources:
        for line, text in source:
            words = author_words(text)
            if words:
                quoted = ", ".join(f"'{word}'" for word in dict.fromkeys(words))
                warn(line, f"the {where} mentions {quoted}, words for you, the author: "
                     f"respondents read this text {shown}. {instead}")


def _closing_between_questions(survey: Survey, warn: Warn) -> None:
    """A closing text ("Thank you! Your answers have been recorded") shown with a question."""
    for question in survey.questions:
        for line, text in question.prose_source:
            found = _CLOSING.search(text)
            if found:
                warn(line, f"'{found.group(0)}' reads like the closing text, but respondents "
                     f"read it with question '{question.id}', before they have answered: the "
                     "closing text goes after the last question's block (the thank-you screen)")


def _budget_as_printed(survey: Survey, warn: Warn) -> None:
    """The budget exceeded at the digits rrsite prints, though within it exactly or at 6 digits.

    Two ways: the total is over the budget by less than its 6 printed digits show (accepted,
    as it prints equal); or the questions' epsilons rounded to the 4 digits the build's and
    analyze's messages show each add up to more than the budget.
    """
    spent = [(q.id, q.privacy.epsilon) for q in survey.sensitive_questions
             if q.privacy is not None and math.isfinite(q.privacy.epsilon)]
    if survey.budget is None or not spent:
        return
    total = math.fsum(epsilon for _, epsilon in spent)
    line = survey.lines.get("budget", 1)
    if total > survey.budget:
        warn(line, f"the sensitive questions spend epsilon {shown_apart(total, survey.budget)}, "
             f"over privacy.budget {survey.budget:g} by {total - survey.budget:.2g}: accepted "
             f"because it prints as {total:.{BUDGET_DIGITS}g}, but the budget is exceeded. "
             f"Raise the budget to {total:.{BUDGET_DIGITS + 2}g} or lower an epsilon")
        return
    printed = [float(f"{epsilon:.4g}") for _, epsilon in spent]
    if len(spent) > 1 and math.fsum(printed) > survey.budget:
        parts = " + ".join(f"{epsilon:g}" for epsilon in printed)
        warn(line, f"the questions' epsilons as rrsite prints them ({parts}) add up to "
             f"{math.fsum(printed):.6g}, more than privacy.budget {survey.budget:g}, though "
             f"their exact sum {total:.6g} is within it: a reader adding them up sees the budget "
             f"exceeded. Give the budget as {math.ceil(math.fsum(printed) * 1000) / 1000:g}, or "
             "the epsilons with fewer digits")


def _budget(survey: Survey, warn: Warn) -> None:
    finite = [q for q in survey.sensitive_questions
              if q.privacy is not None and math.isfinite(q.privacy.epsilon)]
    if survey.budget is None or len(finite) < 2:
        return
    for question in finite:
        assert question.privacy is not None
        share = question.privacy.epsilon / survey.budget
        if share > ONE_QUESTION_SHARE:
            others = [q.id for q in finite if q is not question]
            warn(question.line, f"'{question.id}' alone spends {share:.0%} of the budget "
                 f"(epsilon {question.privacy.epsilon:.4g} of {survey.budget:.4g}); the other "
                 f"sensitive questions ({', '.join(others)}) share the rest. Is that the "
                 "split you meant?")


def _efficiency(question: Question, warn: Warn) -> None:
    design, privacy = question.design, question.privacy
    if not isinstance(design, BinaryDesign) or privacy is None or question.chosen_for:
        return
    if not math.isfinite(privacy.epsilon):
        return
    prior = 0.5 if question.prior is None else question.prior
    best = optimal_design(privacy.epsilon, privacy.delta, prior)
    ratio = variance(design, prior) / variance(best.design, prior)
    if ratio > EFFICIENCY_RATIO:
        optimal = best.design
        warn(question.line, f"design {design.name} needs {ratio:.2f} times the respondents of "
             f"the optimal design at the same epsilon {privacy.epsilon:.4g} (prior {prior:g}): "
             f"{best.labels[0]}, p00 = {optimal.p00:.4g}, p11 = {optimal.p11:.4g}. Write "
             f"`epsilon: {privacy.epsilon:.6g}` instead of `randomize:` to use it")


def _answers(question: Question) -> float:
    """How many different answers a direct question can get (inf for free ones)."""
    if question.type in ("yes-no", "choice"):
        return float(len(question.values))
    if question.type == "multi-choice":
        return float(2 ** len(question.values))
    if question.type == "number" and question.integer and question.minimum is not None and (
        question.maximum is not None
    ):
        return float(math.floor(question.maximum) - math.ceil(question.minimum) + 1)
    return math.inf


def _combinations(survey: Survey, respondents: int, warn: Warn) -> None:
    # the arm is drawn at random and checks and direct versions are about the survey, not the
    # person: none of them can single anyone out (the page's language can, and is counted)
    direct = [q for q in survey.questions
              if not q.sensitive and q.role not in ("arm", "check", "direct")]
    counted = [q for q in direct if math.isfinite(_answers(q))]
    for question in direct:
        if question.type == "text":
            warn(question.line, f"'{question.id}' is free text: an answer can name or describe a "
                 "person, whatever the randomized answers hide. Read them before publishing")
        elif question not in counted:
            warn(question.line, f"'{question.id}' takes any number: exact values can single "
                 "people out. Give it min, max and `integer: true`, or ask in ranges")
    if len(counted) < 2 and not (counted and _answers(counted[0]) > respondents):
        return
    cells = math.prod(_answers(q) for q in counted)
    per_cell = respondents / cells
    if per_cell < MIN_PER_COMBINATION:
        sizes = " x ".join(f"{_answers(q):g}" for q in counted)
        warn(counted[-1].line, f"the direct questions {', '.join(q.id for q in counted)} have "
             f"{sizes} = {cells:g} combinations of answers: at the expected {respondents} "
             f"respondents that is {per_cell:.2g} per combination (fewer than "
             f"{MIN_PER_COMBINATION:g}), so a combination can single a person out, and their "
             "randomized reports with them. Ask in coarser groups, or drop a question")
