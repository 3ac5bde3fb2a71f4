"""Survey files with RRreg's designs: keys, manifests (rrreg, reports, groups), file:line errors."""

from __future__ import annotations

import math

import pytest

ORIGINAL = "randomize: forced-response\ntruth: 1/2"


def with_design(valid: str, design: str) -> str:
    assert ORIGINAL in valid
    return valid.replace(ORIGINAL, design, 1)


CASES = [
    (
        "randomize: crosswise\np: 1/4\ninnocuous: My mother was born in January to March.",
        {"model": "Crosswise", "p": 0.25},
        ["different", "same"],
        math.log(3),
    ),
    (
        "randomize: triangular\np: 0.3\ninnocuous: I was born in spring.\naccept_no_epsilon: true",
        {"model": "Triangular", "p": 0.3},
        ["circle", "triangle"],
        None,
    ),
    (
        "randomize: mangat\np: 0.6\naccept_no_epsilon: true",
        {"model": "Mangat", "p": 0.6},
        None,
        None,
    ),
    (
        "randomize: kuk\nred_yes: 0.6\nred_no: 0.2\ncards: 2",
        {"model": "Kuk", "p": [0.6, 0.2], "Kukrep": 2},
        ["0", "1", "2"],
        2 * math.log(3),
    ),
]


@pytest.mark.parametrize(("design", "rrreg", "reports", "epsilon"), CASES)
def test_one_group_manifest(load, valid, design, rrreg, reports, epsilon):
    entry = load(with_design(valid, design)).manifest()["questions"][0]
    assert entry["rrreg"] == rrreg
    assert entry.get("reports") == reports
    assert entry["values"] == ["no", "yes"]
    assert len(entry["matrix"]) == 2 and len(entry["matrix"][0]) == len(reports or "ab")
    if epsilon is None:
        assert entry["epsilon"] is None and entry["not_private"]
    else:
        assert entry["epsilon"] == pytest.approx(epsilon)


def test_two_group_manifest_has_groups_and_no_matrix(load, valid):
    text = with_design(
        valid, "randomize: sld\np: [0.3, 0.75]\nprobability: 0.4\naccept_no_epsilon: true"
    )
    entry = load(text).manifest()["questions"][0]
    assert "matrix" not in entry
    assert entry["rrreg"] == {"model": "SLD", "p": [0.3, 0.75]}
    assert entry["design"] == {"name": "sld", "p": [0.3, 0.75], "probability": 0.4}
    assert entry["groups"] == [
        {"id": 1, "probability": 0.4, "matrix": [[0.3, 0.7], [0.0, 1.0]]},
        {"id": 2, "probability": pytest.approx(0.6), "matrix": [[0.75, 0.25], [0.0, 1.0]]},
    ]
    assert entry["epsilon"] is None
    assert entry["delta"] == pytest.approx(0.75)  # the worst group's floor


def test_cdm_sym_and_unrelated_unknown(load, valid):
    text = with_design(valid, "randomize: cdm-sym\nyes: [0.2, 0.3]\nno: [0.1, 0.25]")
    entry = load(text).manifest()["questions"][0]
    assert entry["rrreg"] == {"model": "CDMsym", "p": [0.2, 0.1, 0.3, 0.25]}
    assert entry["epsilon"] == pytest.approx(math.log(0.8 / 0.1))
    assert entry["groups"][0]["probability"] == 0.5
    text = with_design(
        valid, "randomize: unrelated-unknown\np: [0.7, 0.4]\ninnocuous: Were you born in spring?"
    )
    entry = load(text).manifest()["questions"][0]
    assert entry["rrreg"] == {"model": "UQTunknown", "p": [0.7, 0.4]}
    assert entry["innocuous"] == "Were you born in spring?"


def test_existing_designs_gain_rrreg(load, valid):
    entry = load(valid).manifest()["questions"][0]
    assert entry["rrreg"] == {"model": "FR", "p": [0.25, 0.25]}


@pytest.mark.parametrize(
    ("design", "bad_line", "fragments"),
    [
        (
            "randomize: sld\np: [0.3, 0.75]",
            "randomize: sld",
            ("not differentially private", "accept_no_epsilon"),
        ),
        ("randomize: sld\np: [0.4, 0.4]\naccept_no_epsilon: true", "p: [0.4", ("identified",)),
        ("randomize: cdm\np: 0.3\naccept_no_epsilon: true", "p: 0.3", ("list of two",)),
        (
            "randomize: cdm\np: [0.1, 0.2, 0.3]\naccept_no_epsilon: true",
            "p: [0.1",
            ("list of two",),
        ),
        ("randomize: crosswise\np: 0.25", "randomize: crosswise", ("needs innocuous",)),
        ("randomize: crosswise\ninnocuous: x", "randomize: crosswise", ("needs p",)),
        ("randomize: kuk\nred_yes: 0.6\nred_no: 0.2\ncards: 0", "cards: 0", ("at least 1",)),
        ("randomize: kuk\nred_yes: 0.6", "randomize: kuk", ("needs red_no",)),
        (
            "randomize: mangat\np: 0.5\nred_yes: 0.3\naccept_no_epsilon: true",
            "red_yes",
            ("not a parameter of mangat",),
        ),
        (
            "randomize: sld\np: [0.3, 0.7]\nprobability: 1\naccept_no_epsilon: true",
            "probability: 1",
            ("strictly between",),
        ),
    ],
)
def test_refusals_name_the_line(valid, refuse, helpers, design, bad_line, fragments):
    text = with_design(valid, design)
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, bad_line), *fragments)


def test_new_designs_are_yes_no_only(valid, refuse, helpers):
    text = valid.replace(
        "options: [First, Second, Third]",
        "options: [First, Second, Third]\nrandomize: mangat\np: 0.5",
        1,
    )
    errors = refuse(text)
    helpers.has(errors, helpers.line_of(text, "randomize: mangat"), "for yes-no questions")
