"""Small statistics helpers for the core tests, standard library only (they also run in Pyodide)."""

from __future__ import annotations

import math


def regularized_gamma_q(a: float, x: float) -> float:
    """Upper regularized incomplete gamma Q(a, x) by series or continued fraction (NR)."""
    if x <= 0:
        return 1.0
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return 1.0 - total * math.exp(-x + a * math.log(x) - math.lgamma(a))
    b = x + 1 - a
    c = 1 / 1e-300
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi_square_p_value(observed: list[int], expected_probabilities: list[float]) -> float:
    """Pearson's chi-square goodness-of-fit p-value (cells with probability 0 must be empty)."""
    total = sum(observed)
    statistic = 0.0
    cells = 0
    for count, probability in zip(observed, expected_probabilities, strict=True):
        if probability == 0:
            assert count == 0, f"{count} draws landed in a cell of probability 0"
            continue
        expected = total * probability
        statistic += (count - expected) ** 2 / expected
        cells += 1
    if cells < 2:
        return 1.0
    return regularized_gamma_q((cells - 1) / 2, statistic / 2)
