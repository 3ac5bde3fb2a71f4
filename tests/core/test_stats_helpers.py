"""The test helpers are themselves checked against known values."""

import math

from .stats import chi_square_p_value, regularized_gamma_q


def test_gamma_q_matches_closed_forms():
    # Q(1, x) = e^-x; Q(1/2, x) = erfc(sqrt(x))
    for x in (0.1, 1.0, 3.0, 20.0):
        assert math.isclose(regularized_gamma_q(1.0, x), math.exp(-x), rel_tol=1e-12)
        assert math.isclose(regularized_gamma_q(0.5, x), math.erfc(math.sqrt(x)), rel_tol=1e-10)


def test_chi_square_known_critical_values():
    # chi-square critical values: df=1 at 3.841459 -> p = 0.05; df=3 at 7.814728 -> p = 0.05
    assert math.isclose(regularized_gamma_q(0.5, 3.841459 / 2), 0.05, rel_tol=1e-5)
    assert math.isclose(regularized_gamma_q(1.5, 7.814728 / 2), 0.05, rel_tol=1e-5)


def test_chi_square_flags_a_wrong_distribution():
    assert chi_square_p_value([5000, 5000], [0.5, 0.5]) == 1.0
    assert chi_square_p_value([5300, 4700], [0.5, 0.5]) < 1e-8
