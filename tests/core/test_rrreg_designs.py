"""The designs of RRreg (MATH.md section 7): matrices, privacy, RRreg p, randomizer frequencies."""

import math
import random

import pytest

from rrsite.core import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    Crosswise,
    DesignError,
    Kuk,
    Mangat,
    StochasticLieDetector,
    Triangular,
    UnrelatedUnknown,
    design_from_spec,
    privacy_of,
)

from .stats import chi_square_p_value

DRAWS = 60_000


def rrreg_pw(model, p, group=1, par2=None, kukrep=1):
    """RRreg 0.7.6's getPW, written from its R source: PW[i][j] = P(response i | true state j).

    R's ``matrix(c(...), nrow = 2)`` fills column by column; the lists below are those columns.
    Only the models whose device a compliant respondent uses (cheaters excluded).
    """
    g = group
    if model == "Crosswise":
        columns = [[p, 1 - p], [1 - p, p]]
    elif model == "Triangular":
        columns = [[1 - p, p], [0, 1]]
    elif model == "Mangat":
        columns = [[p, 1 - p], [0, 1]]
    elif model == "Kuk":
        columns = [
            [
                math.comb(kukrep, x) * p[1] ** x * (1 - p[1]) ** (kukrep - x)
                for x in range(kukrep + 1)
            ],
            [
                math.comb(kukrep, x) * p[0] ** x * (1 - p[0]) ** (kukrep - x)
                for x in range(kukrep + 1)
            ],
        ]
    elif model == "UQTunknown":
        columns = [
            [1 - (1 - p[g - 1]) * par2, (1 - p[g - 1]) * par2],
            [(1 - p[g - 1]) * (1 - par2), p[g - 1] + (1 - p[g - 1]) * par2],
        ]
    elif model == "CDM":  # states (yes, no, cheater) in RRreg; here (no, yes) compliant
        columns = [[1 - p[g - 1], p[g - 1]], [0, 1]]
    elif model == "CDMsym":
        columns = [[1 - p[2 * g - 2], p[2 * g - 2]], [p[2 * g - 1], 1 - p[2 * g - 1]]]
    elif model == "SLD":  # compliant carrier: t = 1
        columns = [[p[g - 1], 1 - p[g - 1]], [1 - par2, par2]]
    else:  # pragma: no cover
        raise AssertionError(model)
    return columns  # columns[j][i]: truth j -> response i, i.e. rrsite's matrix[truth][report]


def close(a, b):
    assert len(a) == len(b)
    for row_a, row_b in zip(a, b, strict=True):
        assert row_a == pytest.approx(row_b, abs=1e-12)


ONE_GROUP = [
    (Crosswise(0.25), [[0.25, 0.75], [0.75, 0.25]], math.log(3), 0.0),
    (Crosswise(0.8), [[0.8, 0.2], [0.2, 0.8]], math.log(4), 0.0),
    (Triangular(0.3), [[0.7, 0.3], [0.0, 1.0]], math.inf, 0.7),
    (Mangat(0.6), [[0.6, 0.4], [0.0, 1.0]], math.inf, 0.6),
    (Kuk(0.7, 0.3, 1), [[0.7, 0.3], [0.3, 0.7]], math.log(7 / 3), 0.0),
    (Kuk(0.6, 0.2, 2), [[0.64, 0.32, 0.04], [0.16, 0.48, 0.36]], 2 * math.log(3), 0.0),
]


@pytest.mark.parametrize(("design", "matrix", "epsilon", "delta"), ONE_GROUP, ids=repr)
def test_one_group_matrix_and_privacy(design, matrix, epsilon, delta):
    close(design.matrix, matrix)
    privacy = privacy_of(design)
    assert privacy.epsilon == pytest.approx(epsilon)
    assert privacy.delta == pytest.approx(delta)
    rr = design.rrreg()
    close(design.matrix, rrreg_pw(rr["model"], rr["p"], kukrep=rr.get("Kukrep", 1)))


def test_kuk_epsilon_is_the_extreme_card_count():
    # log-likelihood ratio is linear in the red count: extremes at 0 or m red cards
    for red_yes, red_no, m in [(0.8, 0.4, 3), (0.55, 0.45, 5), (0.1, 0.3, 4)]:
        expected = m * max(
            abs(math.log(red_yes / red_no)), abs(math.log((1 - red_yes) / (1 - red_no)))
        )
        assert privacy_of(Kuk(red_yes, red_no, m)).epsilon == pytest.approx(expected)


def test_reports_name_the_columns():
    assert Crosswise(0.2).report_values() == ("different", "same")
    assert Triangular(0.2).report_values() == ("circle", "triangle")
    assert Kuk(0.7, 0.2, 3).report_values() == ("0", "1", "2", "3")
    assert Mangat(0.5).report_values() is None
    assert "circle" in privacy_of(Triangular(0.3)).reasons[0]


def uqt_eps(p, q):
    return max(
        math.log((1 - (1 - p) * q) / ((1 - p) * (1 - q))),
        math.log((p + (1 - p) * q) / ((1 - p) * q)),
    )


TWO_GROUP = [
    (
        UnrelatedUnknown((0.7, 0.4), innocuous_rate=0.3),
        max(uqt_eps(0.7, 0.3), uqt_eps(0.4, 0.3)),
        0.0,
    ),
    (CheatingDetection((0.3, 0.6)), math.inf, 0.7),
    (
        CheatingDetectionSymmetric((0.2, 0.3), (0.1, 0.25)),
        max(math.log(0.8 / 0.1), math.log(0.9 / 0.2), math.log(0.7 / 0.25), math.log(0.75 / 0.3)),
        0.0,
    ),
    (StochasticLieDetector((0.3, 0.75)), math.inf, 0.75),
]


@pytest.mark.parametrize(("design", "epsilon", "delta"), TWO_GROUP, ids=repr)
def test_two_group_matrices_privacy_and_rrreg(design, epsilon, delta):
    rr = design.rrreg()
    groups = design.groups()
    assert [g["id"] for g in groups] == [1, 2]
    assert [g["probability"] for g in groups] == [0.5, 0.5]
    for g in groups:
        par2 = getattr(design, "innocuous_rate", 1.0)  # SLD: a compliant carrier has t = 1
        close(g["matrix"], rrreg_pw(rr["model"], rr["p"], group=g["id"], par2=par2))
    privacy = privacy_of(design)
    assert privacy.epsilon == pytest.approx(epsilon)
    assert privacy.delta == pytest.approx(delta)


def test_rrreg_p_orders():
    assert CheatingDetectionSymmetric((0.2, 0.3), (0.1, 0.25)).rrreg() == {
        "model": "CDMsym",
        "p": [0.2, 0.1, 0.3, 0.25],
    }
    assert Kuk(0.7, 0.2, 3).rrreg() == {"model": "Kuk", "p": [0.7, 0.2], "Kukrep": 3}
    assert design_from_spec(
        {"name": "forced-response", "truth": 0.6, "yes": 0.3, "no": 0.1}
    ).rrreg() == {"model": "FR", "p": [0.1, 0.3]}
    assert design_from_spec({"name": "unrelated", "p": 0.6, "innocuous_rate": 0.2}).rrreg() == {
        "model": "UQTknown",
        "p": [0.6, 0.2],
    }


ALL = [d for d, *_ in ONE_GROUP] + [d for d, *_ in TWO_GROUP]


@pytest.mark.parametrize("design", ALL, ids=repr)
def test_spec_round_trip(design):
    assert design_from_spec(design.spec()) == design


@pytest.mark.slow
@pytest.mark.parametrize("design", [d for d, *_ in ONE_GROUP], ids=repr)
def test_one_group_randomize_follows_the_matrix(design):
    rng = random.Random(91)
    for truth in (0, 1):
        counts = [0] * len(design.matrix[0])
        for _ in range(DRAWS // 2):
            counts[design.randomize(truth, rng).report] += 1
        assert chi_square_p_value(counts, list(design.matrix[truth])) > 1e-6, (truth, counts)


@pytest.mark.slow
@pytest.mark.parametrize("design", [d for d, *_ in TWO_GROUP], ids=repr)
def test_two_group_randomize_follows_each_group_matrix(design):
    rng = random.Random(92)
    for truth in (0, 1):
        counts = {1: [0, 0], 2: [0, 0]}
        for _ in range(DRAWS // 2):
            outcome = design.randomize(truth, rng)
            counts[outcome.group][outcome.report] += 1
        groups = design.groups()
        n1, n2 = sum(counts[1]), sum(counts[2])
        # the group draw: a 1% shift of P(group 1) would be 3 standard deviations away
        assert chi_square_p_value([n1, n2], [0.5, 0.5]) > 1e-6
        for g in groups:
            assert chi_square_p_value(counts[g["id"]], g["matrix"][truth]) > 1e-6, (truth, counts)


@pytest.mark.slow
def test_a_wrong_group_matrix_is_detected():
    rng = random.Random(5)
    design = StochasticLieDetector((0.3, 0.75))
    counts = [0, 0]
    for _ in range(DRAWS // 2):
        counts[design.randomize(0, rng, group=1).report] += 1
    assert chi_square_p_value(counts, [0.31, 0.69]) < 1e-3


def test_kuk_transcript_counts_the_red_cards():
    outcome = Kuk(0.7, 0.2, 5).randomize(1, random.Random(3))
    assert len(outcome.steps) == 5
    assert outcome.report == sum(step.action == "red" for step in outcome.steps)


@pytest.mark.slow
def test_group_probability_is_settable():
    design = CheatingDetection((0.3, 0.6), probability=0.25)
    rng = random.Random(8)
    ones = sum(design.randomize(0, rng).group == 1 for _ in range(DRAWS))
    assert chi_square_p_value([ones, DRAWS - ones], [0.25, 0.75]) > 1e-6


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"name": "crosswise", "p": 0.5}, "0.5"),
        ({"name": "sld", "p": [0.4, 0.4]}, "identified"),
        ({"name": "cdm", "p": [0.4]}, "two probabilities"),
        ({"name": "kuk", "red_yes": 0.3, "red_no": 0.3, "cards": 2}, "differ"),
        ({"name": "kuk", "red_yes": 0.3, "red_no": 0.5, "cards": 0}, "cards"),
        ({"name": "sld", "p": [0.2, 0.7], "probability": 1}, "probability"),
        ({"name": "cdm-sym", "yes": [0.6, 0.2], "no": [0.5, 0.1]}, "below 1"),
    ],
)
def test_bad_parameters_are_refused(spec, words):
    with pytest.raises(DesignError, match=words):
        design_from_spec(spec)


def test_respond_gives_reports_and_groups():
    from rrsite.core import respond

    rng = random.Random(11)
    kuk = {"id": "k", "values": ["no", "yes"], "design": Kuk(0.7, 0.2, 3).spec()}
    out = respond(kuk, "yes", rng=rng)
    assert out["report"] in ("0", "1", "2", "3") and "group" not in out
    assert int(out["report"]) == sum(step["action"] == "red" for step in out["steps"])
    sld = {"id": "s", "values": ["no", "yes"], "design": StochasticLieDetector((0.3, 0.7)).spec()}
    seen = {respond(sld, "yes", rng=rng)["group"] for _ in range(50)}
    assert seen == {1, 2}
    assert all(respond(sld, "yes", rng=rng)["report"] == "yes" for _ in range(50))
    uqt = {"id": "u", "values": ["no", "yes"], "design": UnrelatedUnknown((0.7, 0.4)).spec()}
    for _ in range(50):
        out = respond(uqt, "no", innocuous="yes", rng=rng)
        first = out["steps"][1]["action"]
        assert out["report"] == ("no" if first == "sensitive" else "yes")
