"""Every design's matrix against MATH.md section 2, and every invalid parameter refused by name."""

import math
from fractions import Fraction

import pytest

from rrsite.core import (
    KRR,
    BinaryMatrix,
    CategoricalMatrix,
    DesignError,
    ForcedResponse,
    ForcedYes,
    UnrelatedQuestion,
    Warner,
    design_from_spec,
)


def assert_matrix(design, expected):
    assert len(design.matrix) == len(expected)
    for row, want in zip(design.matrix, expected, strict=True):
        for got, value in zip(row, want, strict=True):
            assert math.isclose(got, value, abs_tol=1e-15), (design, design.matrix, expected)


@pytest.mark.parametrize(
    ("t", "f_yes", "f_no"),
    [(0.5, 0.25, 0.25), (0.6, 0.3, 0.1), (1 / 6, 5 / 12, 5 / 12), (0.9, 0.0, 0.1), (0.3, 0.7, 0.0)],
)
def test_forced_response_matrix(t, f_yes, f_no):
    design = ForcedResponse(truth=t, yes=f_yes, no=f_no)
    # p00 = t + f_no, p11 = t + f_yes
    assert_matrix(design, [[t + f_no, 1 - t - f_no], [1 - t - f_yes, t + f_yes]])


def test_fair_two_coin_design_is_three_quarters():
    design = ForcedResponse()
    assert design.p00 == design.p11 == 0.75
    # seeds 003/004: Pr(yes) = 1/4 + pi/2
    for pi in (0.0, 0.2, 1 / 3, 1.0):
        yes = pi * design.p11 + (1 - pi) * (1 - design.p00)
        assert math.isclose(yes, 0.25 + pi / 2)
    # seed 001: 1/3 cheaters -> 5/12 say yes
    assert math.isclose(
        Fraction(1, 3) * Fraction(3, 4) + Fraction(2, 3) * Fraction(1, 4), Fraction(5, 12)
    )


@pytest.mark.parametrize("q", [0.1, 0.5, 0.8])
def test_biased_first_coin(q):
    design = ForcedResponse(truth=q)  # truth with prob q, else a fair coin (seed 000)
    assert math.isclose(design.p00, (1 + q) / 2) and math.isclose(design.p11, (1 + q) / 2)


def test_forced_response_fills_in_the_missing_forced_probability():
    assert ForcedResponse(truth=0.5, yes=0.1).no == pytest.approx(0.4)
    assert ForcedResponse(truth=0.5, no=0.1).yes == pytest.approx(0.4)


def test_forced_yes_matrix():
    assert_matrix(ForcedYes(), [[0.5, 0.5], [0.0, 1.0]])
    assert_matrix(ForcedYes(truth=0.8), [[0.8, 0.2], [0.0, 1.0]])


@pytest.mark.parametrize("p", [0.6, 0.75, 0.9, 1.0])
def test_warner_matrix(p):
    assert_matrix(Warner(p=p), [[p, 1 - p], [1 - p, p]])


@pytest.mark.parametrize(("p", "rate"), [(0.5, 0.5), (0.7, 1 / 12), (0.3, 0.9)])
def test_unrelated_question_matrix(p, rate):
    p00 = p + (1 - p) * (1 - rate)
    p11 = p + (1 - p) * rate
    assert_matrix(UnrelatedQuestion(p=p, innocuous_rate=rate), [[p00, 1 - p00], [1 - p11, p11]])


def test_binary_matrix_and_k_by_k():
    assert_matrix(BinaryMatrix(0.9, 0.6), [[0.9, 0.1], [0.4, 0.6]])
    rows = ((0.7, 0.2, 0.1), (0.1, 0.8, 0.1), (0.2, 0.2, 0.6))
    assert_matrix(CategoricalMatrix(rows), rows)


@pytest.mark.parametrize(("k", "epsilon"), [(2, 1.0), (3, 0.5), (5, 2.0), (10, 1.0986)])
def test_krr_matrix(k, epsilon):
    e = math.exp(epsilon)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    design = KRR(k, epsilon=epsilon)
    assert_matrix(design, [[p if i == j else q for j in range(k)] for i in range(k)])
    assert all(math.isclose(sum(row), 1.0) for row in design.matrix)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: ForcedResponse(truth=1.2), ["truth", "1.2"]),
        (lambda: ForcedResponse(truth=-0.1), ["truth", "-0.1"]),
        (lambda: ForcedResponse(truth=0.5, yes=0.3, no=0.3), ["truth + yes + no", "1.1"]),
        (lambda: ForcedResponse(truth=0.0, yes=0.5, no=0.5), ["truth", "0.0"]),
        (lambda: ForcedYes(truth=2), ["truth", "2"]),
        (lambda: Warner(p=0.5), ["p", "0.5"]),
        (lambda: Warner(p=0.3), ["p", "0.3"]),
        (lambda: UnrelatedQuestion(p=0.5, innocuous_rate=1.5), ["innocuous_rate", "1.5"]),
        (lambda: BinaryMatrix(0.5, 0.5), ["p00 + p11", "0.5"]),
        (lambda: BinaryMatrix(0.2, 0.3), ["p00 + p11", "0.2"]),
        (lambda: BinaryMatrix(1.1, 0.3), ["p00", "1.1"]),
        (lambda: CategoricalMatrix(((0.5, 0.6), (0.5, 0.5))), ["row 1", "sum to 1"]),
        (lambda: CategoricalMatrix(((0.5, 0.5),)), ["at least 2"]),
        (lambda: CategoricalMatrix(((0.5, 0.5), (0.5, 0.5))), ["invertible"]),
        (lambda: KRR(1, epsilon=1.0), ["k", "1"]),
        (lambda: KRR(3, epsilon=-1.0), ["epsilon", "-1.0"]),
        (lambda: KRR(3, p=0.2), ["p", "0.2"]),
    ],
)
def test_invalid_parameters_name_the_parameter_and_value(make, words):
    with pytest.raises(DesignError) as caught:
        make()
    for word in words:
        assert word in str(caught.value)


@pytest.mark.parametrize(
    "make",
    [lambda: ForcedResponse(truth="0.5"), lambda: Warner(p=True), lambda: KRR("3", epsilon=1.0)],
)
def test_wrong_types_raise_type_error(make):
    with pytest.raises(TypeError):
        make()


@pytest.mark.parametrize(
    "design",
    [
        ForcedResponse(),
        ForcedResponse(truth=0.6, yes=0.3, no=0.1),
        ForcedYes(truth=0.5),
        Warner(p=0.8),
        UnrelatedQuestion(p=0.6, innocuous_rate=0.25),
        BinaryMatrix(0.9, 0.7),
        CategoricalMatrix(((0.6, 0.3, 0.1), (0.1, 0.6, 0.3), (0.3, 0.1, 0.6))),
        KRR(4, epsilon=1.0),
    ],
)
def test_spec_round_trip(design):
    rebuilt = design_from_spec(design.spec())
    assert rebuilt.matrix == design.matrix
    assert type(rebuilt) is type(design)


def test_design_from_spec_refuses_unknown_names_and_params():
    with pytest.raises(DesignError, match="unknown design 'coin'"):
        design_from_spec({"name": "coin"})
    with pytest.raises(DesignError, match="unknown parameter 'truht'"):
        design_from_spec({"name": "forced-response", "truht": 0.5})
    with pytest.raises(DesignError, match="needs k"):
        design_from_spec({"name": "k-rr", "epsilon": 1.0})
    with pytest.raises(DesignError, match="p00 and p11"):
        design_from_spec({"name": "matrix", "p00": 0.9})


def test_designs_are_immutable():
    design = ForcedResponse()
    with pytest.raises(AttributeError):
        design.truth = 0.9  # type: ignore[misc]
