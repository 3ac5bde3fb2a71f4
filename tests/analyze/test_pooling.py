"""Several designs for one question: the joint MLE against a brute-force grid, never pooled
counts; the profile-likelihood interval against the grid; its coverage by simulation."""

import numpy as np
import pytest

from rrsite.core import KRR, z_value
from rrsite.estimate.estimators import (
    BinaryPart,
    binary_estimate,
    joint_loglik,
    pooled_binary,
    pooled_categorical,
    pooled_mle,
    profile_interval,
)

GRID = np.linspace(0.0, 1.0, 1_000_001)


def grid_loglik(parts):
    total = np.zeros_like(GRID)
    with np.errstate(divide="ignore"):
        for part in parts:
            lam = GRID * part.p11 + (1 - GRID) * (1 - part.p00)
            mu = GRID * (1 - part.p11) + (1 - GRID) * part.p00
            if part.n_yes:
                total += part.n_yes * np.log(lam)
            if part.n - part.n_yes:
                total += (part.n - part.n_yes) * np.log(mu)
    return total


CASES = {
    "two forced-response versions": [BinaryPart(130, 400, 0.75, 0.75),
                                      BinaryPart(90, 300, 0.6 + 0.1, 0.6 + 0.3)],
    "warner + forced yes": [BinaryPart(40, 100, 0.8, 0.8), BinaryPart(70, 100, 0.5, 1.0)],
    "clipped at zero": [BinaryPart(10, 100, 0.75, 0.75), BinaryPart(20, 100, 0.8, 0.8)],
    "clipped at one": [BinaryPart(98, 100, 0.75, 0.75), BinaryPart(100, 100, 0.5, 1.0)],
    "design A + S": [BinaryPart(3, 200, 1.0, 0.2), BinaryPart(60, 200, 0.73, 0.73)],
    "three designs": [BinaryPart(5, 20, 0.75, 0.75), BinaryPart(12, 30, 0.8, 0.7),
                      BinaryPart(33, 50, 0.5, 1.0)],
}


@pytest.mark.parametrize("name", CASES)
def test_pooled_mle_against_grid(name):
    parts = CASES[name]
    values = grid_loglik(parts)
    best = GRID[np.argmax(values)]
    mle = pooled_mle(parts)
    assert abs(mle - best) <= 2e-6
    assert joint_loglik(mle, parts) >= values.max() - 1e-9
    # profile-likelihood interval: the grid points within chi2_1(0.95) / 2 of the maximum
    inside = GRID[values >= values.max() - z_value(0.95) ** 2 / 2]
    low, high = profile_interval(parts, 0.95)
    assert abs(low - inside.min()) <= 2e-6 and abs(high - inside.max()) <= 2e-6
    result = pooled_binary(parts)
    assert result.estimate[0] == mle and result.pooled
    assert result.ci_method == "profile-likelihood"


def test_counts_are_never_added_across_designs():
    parts = CASES["warner + forced yes"]
    added = binary_estimate(110, 200, 0.8, 0.8)  # what adding counts would (wrongly) give
    assert abs(pooled_binary(parts).estimate[0] - added.estimate[0]) > 0.05
    assert pooled_binary(parts).n == 200
    assert pooled_binary(parts).counts == {"no": 90, "yes": 110}


def test_one_design_pooled_is_the_clipped_unbiased_estimate():
    part = BinaryPart(37, 120, 0.75, 0.75)
    single = binary_estimate(37, 120, 0.75, 0.75)
    assert pooled_mle([part]) == pytest.approx(single.estimate[0], abs=1e-12)


def test_pooled_unbiased_combination_is_unbiased():
    # E[unbiased] = pi, exactly, whatever the weights: average over all outcomes of two designs
    pi = 0.3
    a, b = BinaryPart(0, 20, 0.75, 0.75), BinaryPart(0, 15, 0.5, 1.0)
    from scipy.stats import binom

    expected = 0.0
    lam_a = pi * a.p11 + (1 - pi) * (1 - a.p00)
    lam_b = pi * b.p11 + (1 - pi) * (1 - b.p00)
    for x in range(a.n + 1):
        for y in range(b.n + 1):
            weight = binom.pmf(x, a.n, lam_a) * binom.pmf(y, b.n, lam_b)
            result = pooled_binary([BinaryPart(x, a.n, a.p00, a.p11),
                                    BinaryPart(y, b.n, b.p00, b.p11)], method="wald")
            expected += weight * result.unbiased[0]
    assert expected == pytest.approx(pi, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("pi", [0.05, 0.3])
def test_profile_interval_coverage(pi):
    # asymptotic, so checked where it is used: two designs, 150 + 150 respondents, 4,000 surveys
    designs = [(0.75, 0.75), (0.5, 1.0)]
    rng = np.random.default_rng(11)
    draws = np.stack([rng.binomial(150, pi * p11 + (1 - pi) * (1 - p00), size=4000)
                      for p00, p11 in designs], axis=1)
    cache: dict[tuple[int, int], tuple[float, float]] = {}
    covered = 0
    for x, y in map(tuple, draws.tolist()):
        if (x, y) not in cache:
            cache[(x, y)] = profile_interval(
                [BinaryPart(x, 150, *designs[0]), BinaryPart(y, 150, *designs[1])], 0.95)
        low, high = cache[(x, y)]
        covered += low <= pi <= high
    assert covered / len(draws) >= 0.93


def test_pooled_categorical_against_grid():
    a, b = KRR(3, epsilon=1.0), KRR(3, epsilon=2.0)
    counts = [np.array([40, 80, 80]), np.array([10, 60, 130])]
    matrices = [np.asarray(a.matrix), np.asarray(b.matrix)]
    result = pooled_categorical(counts, matrices, ["x", "y", "z"])
    step = 1 / 500
    grid = np.array([(s, t, 1 - s - t) for s in np.arange(0, 1 + 1e-9, step)
                     for t in np.arange(0, 1 - s + 1e-9, step)]).clip(0, 1)
    values = sum(np.sum(c * np.log(np.maximum(grid @ m, 1e-300)), axis=1)
                 for c, m in zip(counts, matrices, strict=True))
    best = grid[np.argmax(values)]
    assert np.max(np.abs(best - result.estimate)) < 2 * step
    mle_value = sum(np.sum(c * np.log(result.estimate @ m))
                    for c, m in zip(counts, matrices, strict=True))
    assert mle_value >= values.max() - 1e-9
    assert result.pooled and result.ci_method == "profile-likelihood"
    assert np.all(result.ci_low <= result.estimate + 1e-9)
    assert np.all(result.estimate <= result.ci_high + 1e-9)
