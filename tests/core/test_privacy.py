"""Epsilon and delta of every design against MATH.md section 3, computed independently."""

import itertools
import math

import pytest

from rrsite.core import (
    KRR,
    BinaryMatrix,
    CategoricalMatrix,
    ForcedResponse,
    ForcedYes,
    Privacy,
    UnrelatedQuestion,
    Warner,
    compose,
    privacy_of,
    smallest_delta,
    smallest_epsilon,
)


def four_conditions_delta(p00, p11, epsilon):
    """MATH.md: the largest of 0 and the four left-minus-right differences."""
    e = math.exp(epsilon)
    return max(
        0.0, p00 - e * (1 - p11), p11 - e * (1 - p00), (1 - p11) - e * p00, (1 - p00) - e * p11
    )


def four_ratios_epsilon(p00, p11):
    ratios = []
    for top, bottom in ((p00, 1 - p11), (p11, 1 - p00), (1 - p11, p00), (1 - p00, p11)):
        ratios.append(math.inf if bottom == 0 else top / bottom)
    return math.log(max(ratios))


def subsets_delta(matrix, epsilon):
    """Brute force over every set of reports S and every pair of truths."""
    e = math.exp(epsilon)
    k = len(matrix)
    worst = 0.0
    for size in range(k + 1):
        for subset in itertools.combinations(range(k), size):
            for i, j in itertools.permutations(range(k), 2):
                a = sum(matrix[i][s] for s in subset)
                b = sum(matrix[j][s] for s in subset)
                worst = max(worst, a - e * b)
    return worst


def test_fair_coins_are_ln3():
    assert math.isclose(privacy_of(ForcedResponse()).epsilon, math.log(3), rel_tol=1e-14)


@pytest.mark.parametrize("q", [0.05, 0.2, 0.5, 0.9])
def test_biased_coin_epsilon(q):
    assert math.isclose(
        privacy_of(ForcedResponse(truth=q)).epsilon, math.log((1 + q) / (1 - q)), rel_tol=1e-12
    )


@pytest.mark.parametrize("p", [0.55, 0.75, 0.95])
def test_warner_epsilon(p):
    assert math.isclose(privacy_of(Warner(p=p)).epsilon, math.log(p / (1 - p)), rel_tol=1e-12)


@pytest.mark.parametrize(("k", "epsilon"), [(3, 0.5), (4, 1.0), (7, 2.5)])
def test_krr_is_epsilon_dp(k, epsilon):
    assert math.isclose(privacy_of(KRR(k, epsilon=epsilon)).epsilon, epsilon, rel_tol=1e-12)


DESIGNS = [
    ForcedResponse(),
    ForcedResponse(truth=0.6, yes=0.3, no=0.1),
    Warner(p=0.8),
    UnrelatedQuestion(p=0.6, innocuous_rate=0.25),
    BinaryMatrix(0.9, 0.7),
    BinaryMatrix(1.0, 0.2),
    BinaryMatrix(0.3, 1.0),
    ForcedYes(),
]


@pytest.mark.parametrize("design", DESIGNS, ids=repr)
def test_binary_epsilon_matches_the_four_ratios(design):
    assert math.isclose(
        smallest_epsilon(design.matrix), four_ratios_epsilon(design.p00, design.p11), rel_tol=1e-12
    ) or (
        math.isinf(smallest_epsilon(design.matrix))
        and math.isinf(four_ratios_epsilon(design.p00, design.p11))
    )


@pytest.mark.parametrize("design", DESIGNS, ids=repr)
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.5, 1.0, 2.0, 5.0])
def test_binary_delta_matches_the_four_conditions(design, epsilon):
    assert math.isclose(
        smallest_delta(design.matrix, epsilon),
        four_conditions_delta(design.p00, design.p11, epsilon),
        abs_tol=1e-14,
    )


@pytest.mark.parametrize(
    "design",
    [
        KRR(3, epsilon=1.0),
        KRR(4, p=0.5),
        CategoricalMatrix(((0.7, 0.2, 0.1), (0.1, 0.8, 0.1), (0.2, 0.2, 0.6))),
        CategoricalMatrix(((0.5, 0.5, 0.0), (0.0, 0.5, 0.5), (0.5, 0.0, 0.5))),
    ],
    ids=repr,
)
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.0, 3.0])
def test_k_by_k_delta_matches_brute_force_over_sets(design, epsilon):
    assert math.isclose(
        smallest_delta(design.matrix, epsilon), subsets_delta(design.matrix, epsilon), abs_tol=1e-14
    )


def test_a_design_is_dp_exactly_at_its_smallest_epsilon():
    for design in DESIGNS[:-3]:
        epsilon = smallest_epsilon(design.matrix)
        assert smallest_delta(design.matrix, epsilon) <= 1e-12
        assert smallest_delta(design.matrix, epsilon * 0.99) > 0


def test_one_sided_forced_yes_has_no_epsilon_and_says_why():
    privacy = privacy_of(ForcedYes())
    assert math.isinf(privacy.epsilon)
    assert privacy.delta == 0.5
    assert not privacy.is_pure
    assert privacy.reasons and '"no" report only ever comes from a true "no"' in privacy.reasons[0]
    assert "not differentially private" in privacy.describe()
    # delta = 1/2 for every epsilon >= 0 (MATH.md section 3)
    for epsilon in (0.0, 0.5, 1.0, 10.0, 100.0):
        assert smallest_delta(ForcedYes().matrix, epsilon) == 0.5


def test_privacy_at_a_given_epsilon_reports_delta():
    design = BinaryMatrix(1.0, 0.2)  # vertex A of the (1, 0.2) region
    privacy = privacy_of(design, 1.0)
    assert privacy.epsilon == 1.0
    assert math.isclose(privacy.delta, 0.2, abs_tol=1e-15)


def test_basic_composition_sums():
    total = compose([privacy_of(ForcedResponse()), privacy_of(Warner(p=0.75)), (0.5, 0.01)])
    assert math.isclose(total.epsilon, 2 * math.log(3) + 0.5)
    assert total.delta == 0.01
    assert math.isinf(compose([privacy_of(ForcedYes()), Privacy(1.0, 0.0)]).epsilon)
    assert compose([]).epsilon == 0.0
