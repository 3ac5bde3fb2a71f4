"""Every refusal of a bad survey file: its message and its line number."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrsite.survey import SurveyErrors, load_survey, schema


def replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# ---- unknown keys, with "did you mean" ---------------------------------------------------------


def test_unknown_question_key_suggests_the_closest(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truht: 1/2")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "truht")
    assert "unknown key 'truht'" in error.message
    assert "did you mean 'truth'?" in error.message


def test_unknown_front_matter_key_suggests_the_closest(valid, refuse, helpers):
    text = replace(valid, "title: Test survey", "titel: Test survey\ntitle: Test survey")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "titel")
    assert "unknown key 'titel' in the front matter (did you mean 'title'?)" == error.message


def test_unknown_nested_key_and_option_key(valid, refuse, helpers):
    text = replace(valid, "budget: 3.0", "budgett: 3.0\n  budget: 3.0")
    text = replace(text, "options: [First, Second, Third]",
                   "options: [First, {value: b, lable: Second}]")
    errors = refuse(text)
    assert len(errors) == 2
    helpers.has(errors, helpers.line_of(text, "budgett"), "unknown key 'budgett'", "'budget'")
    helpers.has(errors, helpers.line_of(text, "lable"), "unknown key 'lable'", "'label'")


def test_unknown_key_far_from_everything_has_no_suggestion(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truth: 1/2\nzzzzzz: 1")
    error = helpers.only(refuse(text))
    assert error.message == "unknown key 'zzzzzz' in a question block"


def test_bad_choice_word_suggests_the_closest(valid, refuse, helpers):
    text = replace(valid, "randomize: forced-response", "randomize: forced-respons")
    text = replace(text, "type: choice", "type: chioce")
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, "forced-respons"), "got 'forced-respons'",
                "did you mean 'forced-response'?")
    helpers.has(errors, helpers.line_of(text, "chioce"), "did you mean 'choice'?")


def test_did_you_mean_prefers_meaning_and_prefixes_over_spelling(valid, refuse, helpers):
    # By spelling alone (difflib) these would be 'multi-choice' and 'unrelated-unknown'.
    text = replace(valid, "randomize: forced-response", "randomize: unrelated-question")
    text = replace(text, "type: choice", "type: single-choice")
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, "unrelated-question"),
                "got 'unrelated-question' (did you mean 'unrelated'?)")
    helpers.has(errors, helpers.line_of(text, "single-choice"),
                "got 'single-choice' (did you mean 'choice'?)")


@pytest.mark.parametrize(("word", "meant"), [
    ("checkboxes", "multi-choice"), ("boolean", "yes-no"), ("Yes_No", "yes-no"),
    ("forced-resp", "forced-response"), ("unrelated-unknwn", "unrelated-unknown"),
    ("multi_choices", "multi-choice"), ("chioce", "choice"), ("integer", "number"),
])
def test_closest_reads_synonyms_separators_prefixes_and_typos(word, meant):
    candidates = (*schema.QUESTION_TYPES, *schema.DESIGN_NAMES)
    assert schema.closest(word, candidates) == meant


def test_closest_offers_nothing_for_an_unrelated_word_or_an_absent_synonym():
    assert schema.closest("zzzzzz", schema.QUESTION_TYPES) is None
    assert schema.closest("checkbox", ("yes-no", "number")) is None  # multi-choice not offered


# ---- duplicates -------------------------------------------------------------------------------


def test_duplicate_question_id_names_the_first(valid, refuse, helpers):
    text = replace(valid, "id: year", "id: did")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "id: did", 2)
    assert error.message == (f"duplicate question id 'did' (first used on line "
                             f"{helpers.line_of(text, 'id: did')})")


def test_duplicate_yaml_key_and_duplicate_option(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truth: 1/2\ntruth: 0.6")
    text = replace(text, "[First, Second, Third]", "[First, Second, First]")
    errors = refuse(text)
    assert len(errors) == 2
    helpers.has(errors, helpers.line_of(text, "truth: 0.6"), "duplicate key 'truth'",
                f"first on line {helpers.line_of(text, 'truth: 1/2')}")
    helpers.has(errors, helpers.line_of(text, "[First, Second, First]"),
                "duplicate option value 'First'")


# ---- impossible probabilities: core's messages name the parameter and value -------------------


@pytest.mark.parametrize(
    ("design", "bad_line", "message"),
    [
        ("randomize: forced-response\ntruth: 1.5", "truth: 1.5",
         "truth must be a probability in [0, 1], got 1.5"),
        ("randomize: forced-response\ntruth: 0.5\nyes: 0.4\nno: 0.4", "truth: 0.5",
         "truth + yes + no must equal 1"),
        ("randomize: warner\np: 0.3", "p: 0.3", "p must be above 0.5"),
        ("randomize: warner\np: -0.2", "p: -0.2", "p must be a probability in [0, 1], got -0.2"),
        ("randomize: unrelated\np: 0.5\ninnocuous: Born in spring?\ninnocuous_rate: 2",
         "innocuous_rate: 2", "innocuous_rate must be a probability in [0, 1], got 2"),
        ("randomize: matrix\np00: 0.4\np11: 0.5", "p00: 0.4", "p00 + p11 must exceed 1"),
        ("randomize: matrix\nmatrix: [[0.7, 0.2], [0.3, 0.7]]", "matrix:",
         "matrix row 1 must sum to 1"),
        ("randomize: forced-yes\ntruth: 0\naccept_no_epsilon: true", "truth: 0",
         "truth must be above 0"),
    ],
)
def test_impossible_probabilities(valid, refuse, helpers, design, bad_line, message):
    text = replace(valid, "randomize: forced-response\ntruth: 1/2", design)
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, bad_line)
    assert message in error.message


def test_k_rr_probability_below_one_over_k(valid, refuse, helpers):
    text = replace(valid, "options: [First, Second, Third]",
                   "options: [First, Second, Third]\nrandomize: k-rr\np: 0.3")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "p: 0.3")
    assert "p must be above 1/k = 0.333333, got 0.3" in error.message


def test_prior_out_of_range(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truth: 1/2\nprior: 1.5")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "prior: 1.5")
    assert error.message == "prior must be a probability in [0, 1], got 1.5"


def test_not_a_number(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truth: half")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "truth: half")
    assert error.message == "truth must be a number such as 0.5 or 1/2, got 'half'"


# ---- the budget -------------------------------------------------------------------------------


def test_sensitive_questions_exceeding_the_budget(valid, refuse, helpers):
    text = replace(valid, "budget: 3.0", "budget: 2.0")
    text = replace(text, "options: [First, Second, Third]",
                   "options: [First, Second, Third]\nepsilon: 1")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "budget: 2.0")
    assert error.message.startswith("the sensitive questions together spend epsilon 2.09861 "
                                    "(did 1.09861 + year 1), more than privacy.budget 2")


def test_budget_is_required_with_sensitive_questions(valid, refuse, helpers):
    text = replace(valid, "privacy:\n  budget: 3.0\n", "")
    error = helpers.only(refuse(text))
    assert error.line == 1
    assert error.message.startswith("privacy.budget is missing")
    assert "1.09861" in error.message


def test_budget_exactly_spent_is_accepted(valid, load):
    survey = load(replace(valid, "budget: 3.0", "budget: ln(3)"))
    assert survey.spent()[0] == pytest.approx(survey.budget)


# ---- infinite epsilon -------------------------------------------------------------------------


def test_infinite_epsilon_needs_accept_no_epsilon(valid, refuse, helpers):
    text = replace(valid, "randomize: forced-response", "randomize: forced-yes")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "randomize: forced-yes")
    assert error.message.startswith("design forced-yes is not differentially private for any "
                                    "epsilon: a \"no\" report only ever comes from a true \"no\"")
    assert "accept_no_epsilon: true" in error.message


def test_infinite_matrix_design_needs_accept_no_epsilon(valid, refuse, helpers):
    text = replace(valid, "randomize: forced-response\ntruth: 1/2",
                   "randomize: matrix\np00: 1\np11: 0.4")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "randomize: matrix")
    assert 'a "yes" report only ever comes from a true "yes"' in error.message


def test_accept_no_epsilon_on_a_private_design_is_refused(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truth: 1/2\naccept_no_epsilon: true")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "accept_no_epsilon")
    assert error.message == ("accept_no_epsilon: true, but this design has epsilon 1.09861: "
                             "remove the line")


# ---- options ----------------------------------------------------------------------------------


def test_missing_options(valid, refuse, helpers):
    text = replace(valid, "options: [First, Second, Third]\n", "")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "```question", 2)
    assert error.message.startswith("a choice question needs options")


def test_one_option_is_not_a_choice(valid, refuse, helpers):
    text = replace(valid, "options: [First, Second, Third]", "options: [Only]")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "options: [Only]")
    assert error.message == "a choice question needs at least 2 options, got 1"


def test_options_on_a_yes_no_question(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truth: 1/2\noptions: [a, b]")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "options: [a, b]")
    assert error.message == "options applies to choice and multi-choice questions, not yes-no"


# ---- YAML and structure -----------------------------------------------------------------------


def test_bad_yaml_in_a_question_block(valid, refuse, helpers):
    text = replace(valid, "type: choice", "  type: choice")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "  type: choice")
    assert error.message.startswith("bad YAML in the question block: check the indentation of "
                                    f"line {error.line}")
    assert error.message.endswith("(YAML says: mapping values are not allowed here)")


def test_bad_yaml_in_the_front_matter(valid, refuse, helpers):
    text = replace(valid, "title: Test survey", "title: [unclosed")
    errors = refuse(text)
    assert errors[0].message.startswith("bad YAML in the front matter")
    assert errors[0].line in (helpers.line_of(text, "[unclosed"),
                              helpers.line_of(text, "[unclosed") + 1)


def test_missing_front_matter(valid, refuse):
    text = valid.split("---\n", 2)[2]
    errors = refuse(text)
    assert errors[0].line == 1
    assert errors[0].message.startswith("missing front matter: the file must start with a line "
                                        "'---'")


def test_front_matter_never_closed(refuse):
    error = refuse("---\nid: x\ntitle: y\n\n## Q?\n")[0]
    assert error.line == 1
    assert "never closed" in error.message


def test_empty_front_matter(valid, refuse):
    text = "---\n---\n" + valid.split("---\n", 2)[2]
    errors = refuse(text)
    assert errors[0].line == 1
    assert errors[0].message.startswith("the front matter is empty")


def test_front_matter_missing_id_and_title(valid, refuse):
    text = valid.replace("id: test-survey\ntitle: Test survey\n", "")
    errors = refuse(text)
    assert [e.message.split(":")[0] for e in errors] == [
        "the front matter is missing 'id'", "the front matter is missing 'title'"]
    assert all(e.line == 1 for e in errors)


def test_unknown_language(valid, refuse, helpers):
    text = replace(valid, "language: en", "language: esp")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "language: esp")
    assert error.message == (
        "language 'esp' is not one rrsite ships (en, es, fr, de, pt, it) (did you mean 'es'?); "
        "a survey in another language brings its own catalog: `messages: esp.json` beside the "
        "survey, a translation of rrsite's templates/messages/en.json")


def test_heading_without_block(valid, refuse, helpers):
    text = replace(valid, "Outro prose.", "## Where is my block?\n\nOutro prose.")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "## Where is my block?")
    assert error.message.startswith("the heading '## Where is my block?' has no ```question block")


def test_heading_followed_by_another_heading(valid, refuse, helpers):
    text = replace(valid, "## Which year?", "## A section title\n\n## Which year?")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "## A section title")


def test_block_without_heading(valid, refuse, helpers):
    text = replace(valid, "Outro prose.", "```question\nid: orphan\ntype: text\n```\n")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "```question", 3)
    assert error.message.startswith("a ```question block without a '## ' heading above it")


def test_block_never_closed(valid, refuse, helpers):
    text = valid.replace("options: [First, Second, Third]\n```", "options: [First, Second]\n")
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, "```question", 2), "never closed")


def test_empty_block_and_empty_heading(valid, refuse, helpers):
    text = replace(valid, "## Which year?", "##")
    text = replace(text, "id: year\ntype: choice\noptions: [First, Second, Third]\n", "")
    errors = refuse(text)
    assert len(errors) == 1
    helpers.has(errors, helpers.line_of(text, "```question", 2), "the question block is empty")
    text2 = replace(valid, "## Which year?", "##")
    error = helpers.only(refuse(text2))
    assert error.line == text2.splitlines().index("##") + 1
    assert error.message == "the question heading is empty: write the question after '## '"


def test_no_questions_at_all(refuse):
    error = refuse("---\nid: x\ntitle: X\n---\nJust prose.\n")[0]
    assert error.message.startswith("the survey has no questions")


def test_not_utf8(write, tmp_path):
    path = tmp_path / "latin1.md"
    path.write_bytes(b"---\nid: x\ntitle: caf\xe9\n---\n")
    with pytest.raises(SurveyErrors) as info:
        load_survey(path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:3: the file is not UTF-8 text (byte 0xe9 here); save it as UTF-8"]


def test_unreadable_file(tmp_path):
    missing = tmp_path / "missing.md"
    with pytest.raises(SurveyErrors) as info:
        load_survey(missing)
    assert str(info.value.errors[0]).startswith(f"{missing}:1: cannot read the file")


# ---- keys in the wrong place ------------------------------------------------------------------


def test_design_parameter_without_randomize(valid, refuse, helpers):
    text = replace(valid, "options: [First, Second, Third]",
                   "options: [First, Second, Third]\ntruth: 0.5")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "truth: 0.5")
    assert error.message.startswith("truth applies to randomized questions")


def test_parameter_of_another_design(valid, refuse, helpers):
    text = replace(valid, "randomize: forced-response\ntruth: 1/2", "randomize: warner\ntruth: 0.7")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "truth: 0.7")
    assert error.message == "truth is not a parameter of warner (warner takes p, mirrored)"


def test_epsilon_beside_a_named_design(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truth: 1/2\nepsilon: 1")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "epsilon: 1")
    assert "epsilon is for questions without `randomize`" in error.message


def test_design_parameter_with_only_epsilon(valid, refuse, helpers):
    text = replace(valid, "randomize: forced-response\ntruth: 1/2", "epsilon: 1\np: 0.7")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "p: 0.7")
    assert error.message.startswith("p is a parameter of warner and unrelated and k-rr")


def test_direct_types_cannot_be_randomized(valid, refuse, helpers):
    text = replace(valid, "type: choice\noptions: [First, Second, Third]",
                   "type: number\nepsilon: 1")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "epsilon: 1")
    # a number question is randomized with a number design, not with an epsilon alone
    assert error.message.startswith("a number question is randomized with `randomize:` and one "
                                    "of mixture, mixture-unknown, additive")


def test_binary_design_on_a_choice_question(valid, refuse, helpers):
    text = replace(valid, "options: [First, Second, Third]",
                   "options: [First, Second, Third]\nrandomize: warner")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "randomize: warner")
    assert error.message == ("design warner is for yes-no questions; a choice question can use "
                             "k-rr or matrix")


def test_matrix_of_the_wrong_size(valid, refuse, helpers):
    text = replace(valid, "options: [First, Second, Third]",
                   "options: [First, Second, Third]\nrandomize: matrix\n"
                   "matrix: [[0.8, 0.2], [0.2, 0.8]]")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "matrix: [[")
    assert error.message == ("matrix has 2 rows but the question has 3 answers "
                             "(First, Second, Third)")


def test_unrelated_needs_its_innocuous_question(valid, refuse, helpers):
    text = replace(valid, "randomize: forced-response\ntruth: 1/2", "randomize: unrelated\np: 0.6")
    errors = refuse(text)
    line = helpers.line_of(text, "randomize: unrelated")
    helpers.has(errors, line, "design unrelated needs innocuous_rate")
    helpers.has(errors, line, "design unrelated needs innocuous:")


def test_sensitive_true_needs_a_default_epsilon(valid, refuse, helpers):
    text = replace(valid, "randomize: forced-response\ntruth: 1/2", "sensitive: true")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "sensitive: true")
    assert "needs a default epsilon" in error.message


def test_sensitive_false_conflicts_with_randomize(valid, refuse, helpers):
    text = replace(valid, "truth: 1/2", "truth: 1/2\nsensitive: false")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "sensitive: false")
    assert error.message == "sensitive: false conflicts with randomize: remove one of them"


def test_min_above_max(valid, refuse, helpers):
    text = replace(valid, "type: choice\noptions: [First, Second, Third]",
                   "type: number\nmin: 10\nmax: 5")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "max: 5")
    assert error.message == "max (5) is below min (10)"


def test_priors_for_unknown_or_direct_questions(valid, refuse, helpers):
    text = replace(valid, "submit:", "priors: {dd: 0.2, year: 0.3}\nsubmit:")
    errors = refuse(text)
    line = helpers.line_of(text, "priors:")
    helpers.has(errors, line, "priors: no question has id 'dd' (did you mean 'did'?)")
    helpers.has(errors, line, "priors: 'year' is not a randomized yes-no question")


def test_prior_given_twice(valid, refuse, helpers):
    text = replace(valid, "submit:", "priors: {did: 0.2}\nsubmit:")
    text = replace(text, "truth: 1/2", "truth: 1/2\nprior: 0.3")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "prior: 0.3")
    assert "also given in the front matter's priors" in error.message


@pytest.mark.parametrize(
    ("submit", "fragment"),
    [
        ("{to: endpoint}", "submit to: endpoint needs url"),
        ("{to: endpoint, url: 'http://example.org/x'}", "url must use https"),
        ("{to: endpoint, url: '/api/x'}", "url must be an absolute https URL"),
        ("{to: endpoint, url: 'https://u:p@example.org/'}", "url must not contain a user name"),
        ("{to: collector, url: 'https://example.org/'}", "url applies to `to: endpoint`"),
    ],
)
def test_submit_problems(valid, refuse, helpers, submit, fragment):
    text = replace(valid, "submit:\n  to: collector", f"submit: {submit}")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "submit:")
    assert fragment in error.message


# ---- every error, not just the first ----------------------------------------------------------


def test_every_error_of_a_file_is_reported(refuse, helpers):
    text = """\
---
id: Bad_Id
title: Many problems
langauge: en
privacy: {budget: 1}
---
## First question?
```question
id: a
type: yes-no
randomize: warner
p: 0.2
```

## Second question?
```question
id: a
type: choice
```

## Third question?
```question
id: c
type: yes-no
randomize: forced-yes
```

## Fourth question?
```question
id: d
type: yes-no
epsilon: 2
```

## A heading with nothing under it
"""
    errors = refuse(text)
    expected = {
        (helpers.line_of(text, "id: Bad_Id"), "id must be lowercase"),
        (helpers.line_of(text, "langauge"), "did you mean 'language'?"),
        (helpers.line_of(text, "privacy:"), "more than privacy.budget 1"),
        (helpers.line_of(text, "p: 0.2"), "p must be above 0.5"),
        (helpers.line_of(text, "id: a", 2), "duplicate question id 'a'"),
        (helpers.line_of(text, "```question", 2), "needs options"),
        (helpers.line_of(text, "randomize: forced-yes"), "accept_no_epsilon"),
        (helpers.line_of(text, "## A heading with nothing"), "has no ```question block"),
    }
    for line, fragment in expected:
        helpers.has(errors, line, fragment)
    assert len(errors) == len(expected), [f"{e.line}: {e.message}" for e in errors]
    assert [e.line for e in errors] == sorted(e.line for e in errors)


def test_error_text_lists_every_message(valid, write):
    text = replace(valid, "truth: 1/2", "truth: 2")
    text = replace(text, "title: Test survey", "title: Test survey\ncolour: red")
    path: Path = write(text)
    with pytest.raises(SurveyErrors) as info:
        load_survey(path)
    lines = str(info.value).splitlines()
    assert lines[0] == "2 errors:"
    assert all(line.startswith(f"{path}:") for line in lines[1:])
    assert info.value.messages == lines[1:]


def test_matrix_design_without_its_matrix(valid, refuse, helpers):
    text = replace(valid, "options: [First, Second, Third]",
                   "options: [First, Second, Third]\nrandomize: matrix")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "randomize: matrix")
    assert error.message == ("design matrix needs matrix: 3 rows of 3 probabilities, one row per "
                             "answer")
    text = replace(valid, "randomize: forced-response\ntruth: 1/2", "randomize: matrix\np00: 0.9")
    error = helpers.only(refuse(text))
    assert error.line == helpers.line_of(text, "randomize: matrix")
    assert error.message == "design matrix needs p00 and p11 (or a k x k matrix)"
