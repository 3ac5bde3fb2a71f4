"""k answers (MATH.md section 5): k-RR against an independent implementation to 1e-12, a general
matrix against exact rational arithmetic, the simplex MLE (EM) against its optimality conditions
and a brute-force grid."""

import math
from fractions import Fraction

import numpy as np
import pytest

from rrsite.core import KRR, CategoricalMatrix
from rrsite.estimate.estimators import (
    binary_estimate,
    categorical_estimate,
    em_simplex,
    project_to_simplex,
)
from rrsite.estimate.intervals import mapped_interval


def krr_reference(counts, p, q):
    """MATH.md section 5, written out: f_v and both variance conventions."""
    total = sum(counts)
    out = []
    for c in counts:
        f = (c / total - q) / (p - q)
        fixed = q * (1 - q) / (total * (p - q) ** 2) + f * (1 - p - q) / (total * (p - q))
        random = fixed + f * (1 - f) / total
        out.append((f, fixed, random))
    return out


@pytest.mark.parametrize("k", [2, 3, 4, 7])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, math.log(3), 2.5])
@pytest.mark.parametrize("seed", range(3))
def test_krr_matches_independent_formulas(k, epsilon, seed):
    design = KRR(k, epsilon=epsilon)
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.ones(k))
    lam = truth @ np.asarray(design.matrix)
    counts = rng.multinomial(5000, lam)
    values = [f"v{i}" for i in range(k)]
    result = categorical_estimate(counts, design.matrix, values)
    reference = krr_reference(counts.tolist(), design.p, design.q)
    for v, (f, fixed, random) in enumerate(reference):
        assert result.unbiased[v] == pytest.approx(f, abs=1e-12)
        assert result.se[v] ** 2 == pytest.approx(random, abs=1e-12)
        if 0 <= min(r[0] for r in reference):
            assert result.se_fixed[v] ** 2 == pytest.approx(fixed, abs=1e-12)
    # k-RR columns are binomial: each value's interval is the binary exact one, mapped
    for v in range(k):
        low, high = mapped_interval(counts[v], counts.sum(), 1 - design.q, design.p, 0.95)
        assert (result.ci_low[v], result.ci_high[v]) == (pytest.approx(low, abs=1e-12),
                                                         pytest.approx(high, abs=1e-12))
    assert result.ci_method == "exact"


def test_k_equal_two_is_the_binary_formula():
    design = KRR(2, p=0.75)
    cat = categorical_estimate([620, 380], design.matrix, ["no", "yes"])
    binary = binary_estimate(380, 1000, 0.75, 0.75)
    assert cat.unbiased[1] == pytest.approx(binary.unbiased[0], abs=1e-14)
    assert cat.se[1] == pytest.approx(binary.se[0], abs=1e-14)
    assert (cat.ci_low[1], cat.ci_high[1]) == (pytest.approx(binary.ci_low[0]),
                                               pytest.approx(binary.ci_high[0]))


def exact_inverse(matrix):
    """Gauss-Jordan in fractions."""
    k = len(matrix)
    rows = [[Fraction(x).limit_denominator(10**9) for x in row]
            + [Fraction(int(i == j)) for j in range(k)] for i, row in enumerate(matrix)]
    for col in range(k):
        pivot = next(r for r in range(col, k) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        head = rows[col][col]
        rows[col] = [x / head for x in rows[col]]
        for r in range(k):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    return [row[k:] for row in rows]


def test_general_matrix_against_exact_arithmetic():
    matrix = [[0.7, 0.2, 0.1], [0.15, 0.7, 0.15], [0.1, 0.2, 0.7]]
    design = CategoricalMatrix(tuple(tuple(r) for r in matrix))
    counts = [310, 420, 270]
    result = categorical_estimate(counts, design.matrix, ["a", "b", "c"])
    inverse = exact_inverse(matrix)
    total = sum(counts)
    lam = [Fraction(c, total) for c in counts]
    pi = [sum(lam[i] * inverse[i][j] for i in range(3)) for j in range(3)]
    cov_lam = [[(lam[i] if i == j else 0) - lam[i] * lam[j] for j in range(3)] for i in range(3)]
    for v in range(3):
        assert result.unbiased[v] == pytest.approx(float(pi[v]), abs=1e-12)
        var = sum(inverse[i][v] * cov_lam[i][j] * inverse[j][v]
                  for i in range(3) for j in range(3)) / total
        assert result.se[v] ** 2 == pytest.approx(float(var), abs=1e-12)
    # columns are not k-RR-like: profile likelihood (Wald undercovers), and it says so
    assert result.ci_method == "profile-likelihood"
    assert any("profile-likelihood" in note for note in result.notes)
    for v in range(3):
        assert result.ci_low[v] < result.estimate[v] < result.ci_high[v]
    wald = categorical_estimate(counts, design.matrix, ["a", "b", "c"], method="wald")
    assert wald.ci_method == "wald"


def loglik(pi, counts, matrix):
    return float(np.sum(counts * np.log(pi @ matrix)))


def test_em_reaches_the_constrained_maximum():
    design = KRR(3, epsilon=1.0)
    matrix = np.asarray(design.matrix)
    counts = np.array([10.0, 50.0, 40.0])  # unbiased estimate of the first share is negative
    result = categorical_estimate(counts, matrix, ["a", "b", "c"])
    assert result.clipped and result.unbiased[0] < 0
    pi = result.estimate
    assert pi.sum() == pytest.approx(1.0) and np.all(pi >= 0)
    # optimality (KKT): the gradient is equal on the support and not larger off it
    gradient = matrix @ (counts / (pi @ matrix))
    support = pi > 0
    assert np.ptp(gradient[support]) < 1e-7 * gradient.max()
    assert np.all(gradient[~support] <= gradient[support].max() + 1e-7)
    # brute force: a fine grid over the simplex
    step = 1 / 600
    grid = np.array([(a, b, 1 - a - b) for a in np.arange(0, 1 + 1e-9, step)
                     for b in np.arange(0, 1 - a + 1e-9, step)])
    grid = np.clip(grid, 0, 1)
    values = np.sum(counts * np.log(np.maximum(grid @ matrix, 1e-300)), axis=1)
    best = grid[np.argmax(values)]
    assert np.max(np.abs(best - pi)) < 2 * step
    assert loglik(pi, counts, matrix) >= values.max() - 1e-9


def test_em_inside_the_simplex_is_the_unbiased_estimate():
    design = KRR(4, epsilon=2.0)
    counts = np.array([400, 300, 200, 100])
    result = categorical_estimate(counts, design.matrix, list("abcd"))
    assert not result.clipped
    assert np.allclose(result.estimate, result.unbiased, atol=1e-12)
    em = em_simplex([counts.astype(float)], [np.asarray(design.matrix)])
    assert np.allclose(em, result.unbiased, atol=1e-9)


def test_projection_onto_the_simplex():
    assert np.allclose(project_to_simplex(np.array([0.5, 0.3, 0.2])), [0.5, 0.3, 0.2])
    assert np.allclose(project_to_simplex(np.array([1.2, -0.1, -0.1])), [1, 0, 0])
    x = project_to_simplex(np.array([0.6, 0.6, -0.3]))
    assert np.allclose(x, [0.5, 0.5, 0.0])


def test_categorical_coverage_of_krr_by_simulation():
    # 20,000 surveys of 200 respondents, k-RR k = 3, epsilon = 1: each value's exact interval
    design = KRR(3, epsilon=1.0)
    truth = np.array([0.05, 0.25, 0.7])
    lam = truth @ np.asarray(design.matrix)
    counts = np.random.default_rng(5).multinomial(200, lam, size=20_000)
    for v in range(3):
        low, high = mapped_interval(np.arange(201), 200, 1 - design.q, design.p, 0.95)
        covered = (low[counts[:, v]] <= truth[v]) & (truth[v] <= high[counts[:, v]])
        assert covered.mean() >= 0.94, (v, covered.mean())
