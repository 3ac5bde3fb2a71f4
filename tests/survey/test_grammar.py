"""What survey files may say: numbers, YAML traps, Markdown, prose placement, defaults, schema."""

from __future__ import annotations

import math

import pytest

from rrsite.survey import schema
from rrsite.survey.schema import Invalid, parse_number


def replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("written", "value"),
    [("0.5", 0.5), ("1/2", 0.5), ("1 / 4", 0.25), (".25", 0.25), ("3", 3.0), ("1e-3", 0.001),
     ("181/365", 181 / 365), ("-2", -2.0)],
)
def test_numbers(written, value):
    assert parse_number(written) == value


def test_ln_only_where_allowed():
    assert parse_number("ln(3)", allow_ln=True) == math.log(3)
    assert parse_number("ln 3", allow_ln=True) == math.log(3)
    with pytest.raises(Invalid, match="or ln"):
        parse_number("log(3)", allow_ln=True)
    with pytest.raises(Invalid, match=r"must be a number such as 0.5 or 1/2, got 'ln\(3\)'"):
        parse_number("ln(3)")
    with pytest.raises(Invalid, match="ln needs a positive number"):
        parse_number("ln(0)", allow_ln=True)


@pytest.mark.parametrize("written", ["nan", "inf", "1e999", "1/0", "", "0x10", "true"])
def test_not_numbers(written):
    with pytest.raises(Invalid):
        parse_number(written)


def test_yaml_1_1_words_stay_words(load, valid):
    text = replace(valid, "[First, Second, Third]", "[Yes, No, On, Off, 1.0, null]")
    text = replace(text, "truth: 1/2", "truth: 1/2\nyes: 1/4\nno: 1/4")
    survey = load(text)
    assert survey.question("year").values == ["Yes", "No", "On", "Off", "1.0", "null"]
    assert survey.question("did").design.spec() == {"name": "forced-response", "truth": 0.5,
                                                    "yes": 0.25, "no": 0.25}


def test_markdown_in_headings_labels_and_prose(load, valid):
    text = replace(valid, "## Have you ever done it?", "## Have you *ever* done `it`?")
    text = replace(text, "[First, Second, Third]",
                   "[{value: a, label: '**Bold** answer'}, {value: b, label: '[a link](x.html)'}]")
    text = replace(text, "Intro prose.", "Intro with a list:\n\n- one\n- two")
    survey = load(text)
    did = survey.question("did")
    assert did.text_html == "Have you <em>ever</em> done <code>it</code>?"
    assert did.text == "Have you ever done it?"
    assert did.help_html == "<p>Help for the first question.</p>"
    year = survey.question("year")
    assert [o.label_html for o in year.options] == ["<strong>Bold</strong> answer",
                                                    '<a href="x.html">a link</a>']
    manifest = survey.manifest()
    assert manifest["questions"][1]["options"] == [{"value": "a", "label": "Bold answer"},
                                                   {"value": "b", "label": "a link"}]
    assert survey.intro_html == "<p>Intro with a list:</p>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>"
    assert survey.outro_html == "<p>Outro prose.</p>"


def test_prose_between_questions_is_kept_before_the_next(load, valid):
    text = replace(valid, "## Which year?", "Some words about the next part.\n\n## Which year?")
    survey = load(text)
    assert survey.question("did").before_html == ""
    assert survey.question("year").before_html == "<p>Some words about the next part.</p>"
    assert survey.question("year").help_html == ""
    assert "Some words" not in survey.intro_html + survey.outro_html


def test_headings_and_fences_inside_code_are_prose(load, valid):
    text = replace(valid, "Intro prose.",
                   "An example:\n\n````markdown\n## Not a question\n```question\nid: x\n```\n````")
    survey = load(text)
    assert [q.id for q in survey.questions] == ["did", "year"]
    assert "## Not a question" in survey.intro_html


def test_other_heading_levels_are_prose(load, valid):
    text = replace(valid, "Intro prose.", "# Title\n\n### Part one\n\nIntro prose.")
    survey = load(text)
    assert "<h1>Title</h1>" in survey.intro_html and "<h3>Part one</h3>" in survey.intro_html


def test_tilde_fences_and_closing_hashes(load, valid):
    text = replace(valid, "## Which year?", "## Which year? ##")
    text = text.replace("```question\nid: year\ntype: choice\noptions: [First, Second, Third]\n```",
                        "~~~question\nid: year\ntype: choice\noptions: [First, Second, Third]\n~~~")
    survey = load(text)
    assert survey.question("year").text == "Which year?"


def test_crlf_and_bom_keep_line_numbers(write, valid, helpers):
    from rrsite.survey import SurveyErrors, load_survey

    text = replace(valid, "truth: 1/2", "truth: 7")
    path = write("")
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    with pytest.raises(SurveyErrors) as info:
        load_survey(path)
    assert [e.line for e in info.value.errors] == [helpers.line_of(text, "truth: 7")]


def test_required_defaults(load, valid):
    survey = load(valid)
    assert survey.question("did").required is True
    assert survey.question("year").required is False
    text = replace(valid, "truth: 1/2", "truth: 1/2\nrequired: false")
    assert load(text).question("did").required is False


def test_direct_question_types(load, valid):
    text = replace(valid, "Outro prose.", """\
## Pick some

```question
id: some
type: multi-choice
options: [a, b, c]
```

## How many?

```question
id: many
type: number
min: -1.5
max: 10
```

## Say something

```question
id: words
type: text
```
""")
    survey = load(text)
    entries = {q["id"]: q for q in survey.manifest()["questions"]}
    assert entries["some"]["values"] == ["a", "b", "c"] and not entries["some"]["sensitive"]
    assert (entries["many"]["min"], entries["many"]["max"], entries["many"]["integer"]) == (
        -1.5, 10, False)
    assert entries["words"]["max_length"] == 500
    assert "values" not in entries["words"] and "values" not in entries["many"]


def test_k_rr_with_epsilon_and_sensitive_true_default(load, valid):
    text = replace(valid, "budget: 3.0", "budget: 3.0\n  epsilon: 0.5")
    text = replace(text, "randomize: forced-response\ntruth: 1/2", "sensitive: true")
    text = replace(text, "options: [First, Second, Third]",
                   "options: [First, Second, Third]\nrandomize: k-rr\nepsilon: ln(2)")
    survey = load(text)
    did, year = survey.question("did"), survey.question("year")
    assert did.privacy.epsilon == pytest.approx(0.5)
    assert did.design.p00 == pytest.approx(math.exp(0.5) / (1 + math.exp(0.5)))
    # k-RR, k = 3, epsilon = ln 2: p = 2 / (2 + 2) = 1/2, q = 1/4
    assert year.design.matrix[0] == pytest.approx((0.5, 0.25, 0.25))
    assert year.privacy.epsilon == pytest.approx(math.log(2))
    assert survey.manifest()["privacy"]["epsilon"] == 0.5


def test_endpoint_origin_and_loopback_http(load, valid):
    from rrsite.survey import endpoint_origin

    text = replace(valid, "submit:\n  to: collector",
                   "submit:\n  to: endpoint\n  url: http://127.0.0.1:8123/collect")
    survey = load(text)
    assert survey.submit == {"to": "endpoint", "url": "http://127.0.0.1:8123/collect"}
    assert endpoint_origin(survey.submit["url"]) == "http://127.0.0.1:8123"


def test_warnings_for_tied_optimal_designs(load, valid):
    # g(eps, delta) = 1/2 exactly when E = 1 - delta + sqrt(delta (2 - delta)); at prior 1/2,
    # S, A and B tie (MATH.md section 4).
    delta = 0.2
    epsilon = math.log(1 - delta + math.sqrt(delta * (2 - delta)))
    text = replace(valid, "randomize: forced-response\ntruth: 1/2",
                   f"epsilon: {epsilon!r}\ndelta: {delta}")
    survey = load(text)
    assert len(survey.warnings) == 1
    assert "several designs are optimal" in survey.warnings[0].message


# ---- the schema is the single source of the grammar -------------------------------------------


def test_every_key_is_documented_and_in_the_reference():
    reference = schema.reference_markdown()
    for block in schema.BLOCKS:
        assert len(set(block.names)) == len(block.names)
        for key in block.keys:
            assert key.doc.strip(), key.name
            assert f"| `{key.name}` |" in reference


def test_design_parameters_come_from_core():
    from rrsite.core import NAMED_DESIGNS

    declared = set(schema.QUESTION.names)
    for name, params in NAMED_DESIGNS.items():
        assert name in schema.DESIGN_NAMES
        assert set(params) - {"k"} <= declared, name


def test_reference_module_prints_the_tables(capsys):
    import runpy

    runpy.run_module("rrsite.survey", run_name="__main__")
    out = capsys.readouterr().out
    assert out.startswith("#### Front matter")
    assert "| `accept_no_epsilon` |" in out


def test_raw_html_is_shown_as_text(load, valid):
    text = replace(valid, "Intro prose.", '<form action="https://evil.example"><input name="x">')
    text = replace(text, "## Have you ever done it?", "## Is 1 < 2 & <b>bold</b>?")
    survey = load(text)
    assert "<form" not in survey.intro_html and "&lt;form" in survey.intro_html
    assert survey.question("did").text_html == "Is 1 &lt; 2 &amp; &lt;b&gt;bold&lt;/b&gt;?"
    assert survey.question("did").text == "Is 1 < 2 & <b>bold</b>?"
