"""`rrsite check`'s warnings, each against a figure computed here independently."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from rrsite.survey.check import check_survey

HEAD = """\
---
id: checked
title: Checked
privacy:
  budget: {budget}
{consent}---
"""

CONSENT = "consent: You agree.\n"


def survey_text(body: str, budget: str = "3", consent: bool = True) -> str:
    return HEAD.format(budget=budget, consent=CONSENT if consent else "") + body


def question(qid: str, yaml: str) -> str:
    return f"## Question {qid}?\n\n```question\nid: {qid}\n{yaml}\n```\n\n"


def messages(load, text: str, respondents: int = 200) -> list[str]:
    return [w.message for w in check_survey(load(text), respondents)]


def test_missing_consent_is_flagged_at_line_1(load):
    text = survey_text(question("a", "type: yes-no"), consent=False)
    warnings = check_survey(load(text))
    assert [(w.line, "no consent text" in w.message) for w in warnings] == [(1, True)]
    assert messages(load, survey_text(question("a", "type: yes-no"))) == []


def test_an_inefficient_design_names_the_optimal_one(load):
    # p00 = 0.9, p11 = 0.6: epsilon = max(ln(0.9/0.4), ln(0.6/0.1)) = ln 6. At prior 1/2:
    # lambda = 0.35, Var = 0.35 * 0.65 / 0.5^2 = 0.91. The optimal design at ln 6 (delta 0) is
    # symmetric, p = 6/7: lambda = 1/2, Var = 0.25 / (5/7)^2 = 0.49. Ratio 0.91 / 0.49.
    text = survey_text(question("a", "type: yes-no\nrandomize: matrix\np00: 0.9\np11: 0.6"))
    [warning] = check_survey(load(text))
    ratio = (0.35 * 0.65 / 0.25) / (0.25 / (5 / 7) ** 2)
    assert f"needs {ratio:.2f} times the respondents" in warning.message
    assert f"epsilon {math.log(6):.4g}" in warning.message
    assert "p00 = 0.8571, p11 = 0.8571" in warning.message
    assert warning.line == text.splitlines().index("id: a") + 1


def test_an_efficient_design_is_not_flagged(load):
    # The fair two-coin design is the optimal one at ln 3 (p = 3/4 = e^eps / (1 + e^eps)).
    text = survey_text(question("a", "type: yes-no\nrandomize: forced-response\ntruth: 1/2"))
    assert messages(load, text) == []


def test_one_question_spending_most_of_the_budget(load):
    # ln 3 + ln 1.2 of a budget of 1.3: the first spends 1.0986 / 1.3 = 85 % of it.
    body = (question("a", "type: yes-no\nepsilon: ln(3)")
            + question("b", "type: yes-no\nepsilon: ln(1.2)"))
    found = messages(load, survey_text(body, budget="1.3"))
    assert len(found) == 1
    assert f"'a' alone spends {math.log(3) / 1.3:.0%} of the budget" in found[0]
    assert "(b)" in found[0]
    assert messages(load, survey_text(body, budget="3")) == []  # 37 % of 3: fine


def test_combinations_of_direct_answers(load):
    body = (question("year", "type: choice\noptions: [a, b, c, d]")
            + question("courses", "type: number\nmin: 0\nmax: 12\ninteger: true")
            + question("sports", "type: multi-choice\noptions: [x, y]"))
    # 4 x 13 x 2^2 = 208 combinations; 1000 respondents: 4.8 each (< 5); 1100: 5.3 each.
    found = messages(load, survey_text(body), respondents=1000)
    assert len(found) == 1
    assert "4 x 13 x 4 = 208 combinations" in found[0]
    assert f"{1000 / 208:.2g} per combination" in found[0]
    assert messages(load, survey_text(body), respondents=1100) == []


def test_free_answers_are_flagged(load):
    body = question("note", "type: text") + question("age", "type: number")
    found = messages(load, survey_text(body))
    assert len(found) == 2
    assert "'note' is free text" in found[0] and "'age' takes any number" in found[1]


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rrsite", "check", *args],
                          capture_output=True, text=True, timeout=300)


def test_the_command_prints_errors_and_warnings_with_exit_codes(tmp_path: Path):
    good = tmp_path / "good.md"
    good.write_text(survey_text(question("a", "type: yes-no"), consent=False), encoding="utf-8")
    done = run_check(str(good))
    assert done.returncode == 0, done.stderr
    assert f"{good}:1: warning: no consent text" in done.stdout
    assert run_check(str(good), "--strict").returncode == 1
    bad = tmp_path / "bad.md"
    bad.write_text(survey_text(question("a", "type: yes-no\nshow_if: {question: zz, is: x}")),
                   encoding="utf-8")
    done = run_check(str(good), str(bad))
    assert done.returncode == 2
    line = bad.read_text().splitlines().index("show_if: {question: zz, is: x}") + 1
    assert f"{bad}:{line}: show_if: no question has id 'zz'" in done.stderr


# ---- words for the author in what respondents read --------------------------------


def test_intro_and_closing_text_naming_commands_or_files_are_flagged_with_their_line(load):
    body = ("Welcome to the study.\n"
            "Run `rrsite preview survey.md` to try it.\n"
            "\n"
            + question("a", "type: yes-no")
            + "Thank you! Build this survey with `rrsite build my-survey.md -o dist`.\n"
            "The results go to dist/ and answers.csv.\n"
            "The distance to the clinic does not matter.\n")
    text = survey_text(body)
    lines = text.splitlines()

    def line(start: str) -> int:
        return next(number for number, text in enumerate(lines, 1) if text.startswith(start))

    warnings = [w for w in check_survey(load(text)) if "the author" in w.message]
    flagged = {w.line: w.message for w in warnings}
    assert sorted(flagged) == [line("Run `rrsite"), line("Thank you!"), line("The results")]
    assert "the introduction mentions 'rrsite preview', 'survey.md'" in flagged[line("Run")]
    closing = flagged[line("Thank you!")]
    assert "the closing text mentions 'rrsite build', 'my-survey.md', 'dist'" in closing
    assert "thank-you screen" in closing
    assert "'dist/', 'answers.csv'" in flagged[line("The results")]


def test_words_for_respondents_are_not_flagged(load):
    body = ("We study the distance people travel; see our site for details.\n\n"
            + question("a", "type: yes-no")
            + "Thank you for your answers. The rrsite project made this page.\n")
    assert [w.message for w in check_survey(load(survey_text(body)))] == []


def test_the_starter_speaks_to_respondents_and_checks_clean_of_author_words(tmp_path):
    result = subprocess.run([sys.executable, "-m", "rrsite", "new", "my-survey"], cwd=tmp_path,
                            capture_output=True, text=True, check=True)
    assert "rrsite build my-survey.md" in result.stdout  # the author is told, in the terminal
    text = (tmp_path / "my-survey.md").read_text("utf-8")
    closing = text.rstrip("\n").splitlines()[-1]
    assert "rrsite" not in closing and ".md" not in closing and "dist" not in closing
    assert "Thank you" in closing
    check = subprocess.run([sys.executable, "-m", "rrsite", "check", "my-survey.md"],
                           cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert "the author" not in check.stdout


# ---- a closing text between questions, notes to the author, the budget as printed ----------


def test_a_closing_text_left_between_questions_is_flagged(load):
    body = (question("a", "type: yes-no")
            + "Thank you! Your answers have been recorded.\n\n"
            + question("b", "type: yes-no")
            + "Vielen Dank für Ihre Antworten. Sie können diese Seite jetzt schließen.\n\n"
            + question("c", "type: yes-no")
            + "Thank you for your answers. You can close this page now.\n")
    text = survey_text(body)
    lines = text.splitlines()
    warnings = [w for w in check_survey(load(text)) if "reads like the closing text" in w.message]
    assert [w.line for w in warnings] == [lines.index("Thank you! Your answers have been "
                                                       "recorded.") + 1,
                                          next(i for i, line in enumerate(lines, 1)
                                               if line.startswith("Vielen Dank"))]
    assert "question 'b'" in warnings[0].message  # respondents read it with the next question
    assert "question 'c'" in warnings[1].message  # the closing at the end is where it belongs


def test_the_old_starters_note_to_the_author_is_flagged(load):
    body = ("## How often?\n\nOptional, asked directly: rrsite can break the estimate down by "
            "this answer.\n\n```question\nid: often\ntype: choice\noptions: [Never, Often]\n"
            "```\n\nThe rrsite project made this page.\n")
    text = survey_text(body)
    flagged = [w for w in check_survey(load(text)) if "the author" in w.message]
    assert len(flagged) == 1 and flagged[0].line == 10
    assert "the text of question 'often' mentions 'rrsite can'" in flagged[0].message
    assert "comment ('# ...') inside the question's block" in flagged[0].message


FIVE = "".join(question(q, "type: yes-no\nrandomize: forced-response") for q in "abcde")


def test_a_budget_exceeded_once_each_epsilon_is_printed_is_flagged(load):
    # five questions at ln 3 = 1.0986123 spend 5.4930614; each prints as 1.099 (4 digits)
    assert f"{math.log(3):.4g}" == "1.099" and 5 * 1.099 > 5.494 > 5 * math.log(3)
    warnings = [w.message for w in check_survey(load(survey_text(FIVE, budget="5.494")))]
    printed = [m for m in warnings if "as rrsite prints them" in m]
    assert len(printed) == 1
    assert "(1.099 + 1.099 + 1.099 + 1.099 + 1.099) add up to 5.495" in printed[0]
    assert "their exact sum 5.49306 is within it" in printed[0]
    # a budget the printed epsilons fit: no warning
    assert not any("budget" in m for m in messages(load, survey_text(FIVE, budget="5.5")))


def test_a_budget_exceeded_by_less_than_its_printed_digits_is_flagged(load):
    # 5.4930614 > 5.49306, equal at the 6 digits the build compares: built, but exceeded
    assert 5 * math.log(3) > 5.49306 and f"{5 * math.log(3):.6g}" == "5.49306"
    warnings = [m for m in messages(load, survey_text(FIVE, budget="5.49306"))
                if "over privacy.budget" in m]
    assert len(warnings) == 1
    assert "spend epsilon 5.493061, over privacy.budget 5.49306 by 1.4e-06" in warnings[0]
