"""The optimal design for a budget (MATH.md section 4) against brute force and closed forms."""

import math
from fractions import Fraction

import pytest

from rrsite.core import (
    KRR,
    BinaryMatrix,
    DesignError,
    ForcedResponse,
    ForcedYes,
    Warner,
    candidate_designs,
    krr_variance,
    optimal_design,
    respondents_needed,
    smallest_delta,
    threshold,
    variance,
)

GRID = 200  # (p00, p11) on multiples of 1/200


def feasible(p00, p11, epsilon, delta):
    """The four (epsilon, delta) conditions of MATH.md section 3, written out again."""
    e = math.exp(epsilon)
    slack = 1e-12
    return (
        p00 <= e * (1 - p11) + delta + slack
        and p11 <= e * (1 - p00) + delta + slack
        and 1 - p11 <= e * p00 + delta + slack
        and 1 - p00 <= e * p11 + delta + slack
    )


def plain_variance(p00, p11, pi):
    lam = pi * p11 + (1 - pi) * (1 - p00)
    return lam * (1 - lam) / (p00 + p11 - 1) ** 2


FEASIBLE_CACHE = {}


def feasible_grid(epsilon, delta):
    key = (epsilon, delta)
    if key not in FEASIBLE_CACHE:
        FEASIBLE_CACHE[key] = [
            (a / GRID, b / GRID)
            for a in range(GRID + 1)
            for b in range(GRID + 1)
            if a + b > GRID and feasible(a / GRID, b / GRID, epsilon, delta)
        ]
    return FEASIBLE_CACHE[key]


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("delta", [0.0, 0.01, 0.05, 0.2])
def test_optimal_design_beats_every_grid_design(epsilon, delta):
    points = feasible_grid(epsilon, delta)
    assert points
    for prior in (0.01, 0.1, 0.3, 0.5, 0.8, 0.99):
        best = optimal_design(epsilon, delta, prior)
        for design in best.designs:
            assert feasible(design.p00, design.p11, epsilon, delta)
            assert smallest_delta(design.matrix, epsilon) <= delta + 1e-12
        grid_min, (a, b) = min((plain_variance(a, b, prior), (a, b)) for a, b in points)
        assert best.variance <= grid_min * (1 + 1e-9), (epsilon, delta, prior)
        # zoom in around the best grid point (three times, each grid ten times finer) looking for
        # a design that beats the optimum between the grid lines
        step, fine_min = 1 / GRID, grid_min
        for _ in range(3):
            step /= 10
            fine_min, (a, b) = min(
                (plain_variance(x, y, prior), (x, y))
                for x, y in (
                    (a + i * step, b + j * step) for i in range(-20, 21) for j in range(-20, 21)
                )
                if 0 <= x <= 1 and 0 <= y <= 1 and x + y > 1 and feasible(x, y, epsilon, delta)
            )
        assert best.variance <= fine_min * (1 + 1e-9), (epsilon, delta, prior)
        # the optimum is a real feasible design of exactly the variance claimed
        for design in best.designs:
            assert math.isclose(
                plain_variance(design.p00, design.p11, prior), best.variance, rel_tol=1e-9
            )


@pytest.mark.parametrize("epsilon", [0.2, 1.0, math.log(3), 4.0])
def test_pure_dp_optimum_is_symmetric_whatever_the_prior(epsilon):
    e = math.exp(epsilon)
    for prior in (0.0, 0.05, 0.5, 0.97):
        best = optimal_design(epsilon, 0.0, prior)
        assert best.labels == ("S",)
        assert math.isclose(best.design.p00, e / (1 + e), rel_tol=1e-14)
        assert math.isclose(best.design.p11, e / (1 + e), rel_tol=1e-14)


def test_ln3_budget_gives_the_fair_coins():
    best = optimal_design(math.log(3))
    assert math.isclose(best.design.p00, 0.75) and math.isclose(best.design.p11, 0.75)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 0.01), (1.0, 0.05), (2.0, 0.1), (1.0, 0.3)])
def test_vertex_variances_match_math_md(epsilon, delta):
    e = math.exp(epsilon)
    candidates = candidate_designs(epsilon, delta)
    p = (e + delta) / (1 + e)
    assert math.isclose(candidates["S"].p00, p) and math.isclose(candidates["S"].p11, p)
    assert (candidates["A"].p00, candidates["A"].p11) == (1.0, delta)
    assert (candidates["B"].p00, candidates["B"].p11) == (delta, 1.0)
    for pi in (0.0, 0.1, 0.5, 0.9, 1.0):
        assert math.isclose(
            variance(candidates["S"], pi),
            p * (1 - p) / (2 * p - 1) ** 2 + pi * (1 - pi),
            rel_tol=1e-12,
        )
        assert math.isclose(
            variance(candidates["A"], pi),
            pi * (1 - pi * delta) / delta,
            rel_tol=1e-12,
            abs_tol=1e-15,
        )
        assert math.isclose(
            variance(candidates["B"], pi),
            (1 - pi) * (1 - (1 - pi) * delta) / delta,
            rel_tol=1e-12,
            abs_tol=1e-15,
        )


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 0.05), (2.0, 0.01), (0.5, 0.02), (3.0, 0.2)])
def test_threshold_rule_when_g_below_half(epsilon, delta):
    g = threshold(epsilon, delta)
    e = math.exp(epsilon)
    assert math.isclose(g, delta * (e + delta) / (e - 1 + 2 * delta) ** 2)
    assert g < 0.5
    assert optimal_design(epsilon, delta, g * 0.5).labels == ("A",)
    assert optimal_design(epsilon, delta, (g + 1 - g) / 2).labels == ("S",)
    assert optimal_design(epsilon, delta, 1 - g * 0.5).labels == ("B",)
    # exactly at the threshold, two designs tie and both are reported
    assert set(optimal_design(epsilon, delta, g).labels) == {"A", "S"}
    assert set(optimal_design(epsilon, delta, 1 - g).labels) == {"S", "B"}


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 0.2), (0.05, 0.1), (0.3, 0.4)])
def test_threshold_rule_when_g_at_least_half(epsilon, delta):
    e = math.exp(epsilon)
    assert threshold(epsilon, delta) >= 0.5
    assert e <= 1 - delta + math.sqrt(delta * (2 - delta))
    assert optimal_design(epsilon, delta, 0.3).labels == ("A",)
    assert optimal_design(epsilon, delta, 0.7).labels == ("B",)
    tie = optimal_design(epsilon, delta, 0.5)
    assert set(tie.labels) == {"A", "B"}
    assert len(tie.designs) == 2


def test_g_half_condition_matches_closed_form():
    for epsilon in (0.01 * i for i in range(1, 200)):
        for delta in (0.01, 0.05, 0.1, 0.3, 0.6):
            e = math.exp(epsilon)
            bound = 1 - delta + math.sqrt(delta * (2 - delta))
            if abs(e - bound) < 1e-9:
                continue
            assert (threshold(epsilon, delta) >= 0.5) == (e <= bound)


def test_all_three_tie_where_g_is_one_half():
    delta = 0.1
    epsilon = math.log(1 - delta + math.sqrt(delta * (2 - delta)))
    assert math.isclose(threshold(epsilon, delta), 0.5)
    assert set(optimal_design(epsilon, delta, 0.5).labels) == {"A", "S", "B"}


def test_variance_near_design_b_keeps_its_digits():
    delta = 1e-3
    design = BinaryMatrix(delta, 1.0)
    pi = 1 - 1e-9
    exact_pi = Fraction(pi)
    lam = exact_pi * 1 + (1 - exact_pi) * (1 - Fraction(delta))
    exact = lam * (1 - lam) / (Fraction(delta) + 1 - 1) ** 2
    assert math.isclose(variance(design, pi), float(exact), rel_tol=1e-12)


def test_variance_scales_with_respondents():
    design = ForcedResponse()
    assert math.isclose(variance(design, 0.5), 1.0)  # lambda = 1/2 over (1/2)^2
    assert math.isclose(variance(design, 0.5, n=400), 1 / 400)
    with pytest.raises(DesignError, match="n must be"):
        variance(design, 0.5, n=0)


def test_respondents_needed_matches_the_formula():
    z = 1.959963984540054
    for design, prior, margin in (
        (ForcedResponse(), 0.5, 0.05),
        (Warner(p=0.9), 0.1, 0.02),
        (ForcedYes(), 0.3, 0.03),
    ):
        lam = prior * design.p11 + (1 - prior) * (1 - design.p00)
        want = math.ceil(z * z * lam * (1 - lam) / ((design.p00 + design.p11 - 1) ** 2 * margin**2))
        assert respondents_needed(design, margin, 0.95, prior) == want
    assert respondents_needed(ForcedResponse(), 0.05) == 1537


def test_krr_variance_reduces_to_binary_at_k_2():
    design = KRR(2, epsilon=1.0)
    symmetric = BinaryMatrix(design.p, design.p)
    for share in (0.0, 0.2, 0.5, 0.9):
        assert math.isclose(krr_variance(design, share), variance(symmetric, share), rel_tol=1e-12)


@pytest.mark.parametrize(
    ("args", "word"),
    [
        ((0.0, 0.0, 0.5), "epsilon"),
        ((-1.0, 0.0, 0.5), "epsilon"),
        ((1.0, 1.0, 0.5), "delta"),
        ((1.0, -0.1, 0.5), "delta"),
        ((1.0, 0.0, 1.5), "prior"),
        ((math.inf, 0.0, 0.5), "epsilon"),
    ],
)
def test_bad_budgets_are_refused(args, word):
    with pytest.raises(DesignError, match=word):
        optimal_design(*args)
