"""Estimation for RRreg's models against closed forms, a brute-force grid and each other."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from rrsite.estimate.models import Design
from rrsite.estimate.profile import boundary_critical, profile_interval
from rrsite.estimate.univariate import (
    METHOD_EXACT,
    METHOD_PROFILE,
    METHOD_PROFILE_BOUNDARY,
    Part,
    fit,
    loglik,
)


def one(design: Design, counts: tuple[int, ...]) -> list[Part]:
    return [Part(design, 1, counts)]


def two(design: Design, g1: tuple[int, int], g2: tuple[int, int]) -> list[Part]:
    return [Part(design, 1, g1), Part(design, 2, g2)]


# -- closed forms (written here, independently of the code) ----------------------------------
def test_warner_and_crosswise_closed_form() -> None:
    for model, p in (("Warner", 0.7), ("Crosswise", 0.2)):
        result = fit(one(Design(model, p), (62, 38)))
        lam, n = 0.38, 100
        assert result.estimates["pi"] == pytest.approx((lam - (1 - p)) / (2 * p - 1), abs=1e-12)
        # RRreg's SE divides by n - 1; the observed information gives n
        assert result.se["pi"] == pytest.approx(
            math.sqrt(lam * (1 - lam) / (n - 1)) / abs(2 * p - 1), rel=1e-9)
        assert result.se_observed["pi"] == pytest.approx(
            math.sqrt(lam * (1 - lam) / n) / abs(2 * p - 1), rel=1e-6)
        assert result.method["pi"] == METHOD_EXACT


def test_one_sided_designs_closed_form() -> None:
    # Mangat p: P(yes) = pi + (1 - pi)(1 - p); Triangular p: P(triangle) = pi + (1 - pi) p
    result = fit(one(Design("Mangat", 0.8), (70, 30)))
    assert result.estimates["pi"] == pytest.approx((0.3 - 0.2) / 0.8)
    result = fit(one(Design("Triangular", 0.25), (60, 40)))
    assert result.estimates["pi"] == pytest.approx((0.4 - 0.25) / 0.75)
    assert result.se["pi"] == pytest.approx(math.sqrt(0.4 * 0.6 / 99) / 0.75)
    result = fit(one(Design("UQTknown", [0.6, 0.3]), (55, 45)))
    assert result.estimates["pi"] == pytest.approx((0.45 - 0.4 * 0.3) / 0.6)


def linear_two_group(design: Design, lam: tuple[float, float]) -> np.ndarray:
    """Solve lambda_g = a_g + b_g . x for the linear parameters x (numerically, from the PW)."""
    if design.model == "SLD":  # lambda_g = (1 - pi)(1 - p_g) + u, u = pi t
        p = design.p
        pi, u = np.linalg.solve([[-(1 - p[0]), 1], [-(1 - p[1]), 1]],
                                [lam[0] - (1 - p[0]), lam[1] - (1 - p[1])])
        return np.array([pi, u / pi])
    base = np.array([design.report_probabilities([0.0, 0.0], g)[1] for g in (1, 2)])
    b = np.array([[design.report_probabilities(e, g)[1] - base[g - 1] for e in ([1, 0], [0, 1])]
                  for g in (1, 2)])
    return np.linalg.solve(b, np.array(lam) - base)


@pytest.mark.parametrize(("model", "p", "g1", "g2"), [
    ("UQTunknown", [0.75, 0.25], (55, 45), (62, 38)),
    ("SLD", [0.3, 0.7], (27, 73), (55, 45)),
    ("CDM", [0.3, 0.7], (50, 50), (30, 70)),
    ("CDMsym", [0.3, 0.1, 0.6, 0.1], (55, 45), (40, 60)),
])
def test_two_group_estimates_and_delta_method_se(model: str, p: list[float],
                                                 g1: tuple[int, int], g2: tuple[int, int]) -> None:
    design = Design(model, p)
    result = fit(two(design, g1, g2))
    n1, n2 = sum(g1), sum(g2)
    lam = (g1[1] / n1, g2[1] / n2)
    solved = linear_two_group(design, lam)
    assert result.theta == pytest.approx(solved, abs=1e-10)
    # delta method with RRreg's variances lambda (1 - lambda) / (n - 1), derivative numerically
    step = 1e-6
    jac = np.array([
        (linear_two_group(design, (lam[0] + step, lam[1]))
         - linear_two_group(design, (lam[0] - step, lam[1]))) / (2 * step),
        (linear_two_group(design, (lam[0], lam[1] + step))
         - linear_two_group(design, (lam[0], lam[1] - step))) / (2 * step),
    ])
    variances = np.array([lam[0] * (1 - lam[0]) / (n1 - 1), lam[1] * (1 - lam[1]) / (n2 - 1)])
    se_pi = math.sqrt(float(np.sum(jac[:, 0] ** 2 * variances)))
    assert result.se["pi"] == pytest.approx(se_pi, rel=1e-6)
    if model == "CDMsym":
        gamma_jac = -(jac[:, 0] + jac[:, 1])
        assert result.se["gamma"] == pytest.approx(
            math.sqrt(float(np.sum(gamma_jac**2 * variances))), rel=1e-6)
    else:
        name = design.parameters[1]
        assert result.se[name] == pytest.approx(
            math.sqrt(float(np.sum(jac[:, 1] ** 2 * variances))), rel=1e-6)
    # observed information: the same with n instead of n - 1 (saturated model)
    variances_n = np.array([lam[0] * (1 - lam[0]) / n1, lam[1] * (1 - lam[1]) / n2])
    assert result.se_observed["pi"] == pytest.approx(
        math.sqrt(float(np.sum(jac[:, 0] ** 2 * variances_n))), rel=1e-5)
    assert result.method["pi"] == METHOD_PROFILE_BOUNDARY
    assert result.method[design.parameters[1]] == METHOD_PROFILE
    assert result.rrreg is not None and result.rrreg["estimator"] == "moment"


def test_fr_categories_closed_form() -> None:
    design = Design("FR", [0.1, 0.05, 0.15])
    result = fit(one(design, (50, 30, 20)))
    for j, count in enumerate((50, 30, 20)):
        share = count / 100
        assert result.estimates[f"pi{j}"] == pytest.approx((share - design.p[j]) / 0.7, abs=1e-12)
        assert result.se[f"pi{j}"] == pytest.approx(math.sqrt(share * (1 - share) / 99) / 0.7)


def test_kuk_rrreg_moment_se_and_mle() -> None:
    design = Design("Kuk", [0.7, 0.3], kukrep=3)
    counts = (30, 40, 20, 10)
    result = fit(one(design, counts))
    n, m = 100, 3
    lam = (40 + 40 + 30) / (n * m)
    pi = (lam - 0.3) / 0.4
    phi = pi * 0.7 + (1 - pi) * 0.3
    assert result.rrreg is not None
    assert result.rrreg["pi"] == pytest.approx(pi)
    assert result.rrreg["piSE"] == pytest.approx(
        math.sqrt(phi * (1 - phi) / ((m * n - 1) * 0.16) + (1 - 1 / m) * pi * (1 - pi) / (n - 1)))
    # the MLE of the binomial mixture is not the moment estimate: check it on a fine grid
    grid = np.linspace(0, 1, 200001)
    values = [loglik([g], one(design, counts)) for g in grid[::100]]
    coarse = grid[::100][int(np.argmax(values))]
    fine = np.linspace(max(coarse - 0.001, 0), min(coarse + 0.001, 1), 20001)
    best = fine[int(np.argmax([loglik([g], one(design, counts)) for g in fine]))]
    assert result.estimates["pi"] == pytest.approx(best, abs=2e-7)
    assert result.gof is not None and result.gof["df"] == 2
    assert result.se["pi"] == result.se_observed["pi"]  # the SE of the MLE, not RRreg's


# -- brute force ------------------------------------------------------------------------------
def bilinear_loglik(parts: list[Part], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Log-likelihood on a grid: each report probability is c0 + c1 a + c2 b + c3 a b."""
    total = np.zeros(np.broadcast(a, b).shape)
    for part in parts:
        design, group = part.design, part.group
        f00, f10, f01, f11 = (design.pw(group, t) @ design.state_shares(t)
                              for t in ([0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]))
        for r, count in enumerate(part.counts):
            prob = (f00[r] + (f10[r] - f00[r]) * a + (f01[r] - f00[r]) * b
                    + (f11[r] - f10[r] - f01[r] + f00[r]) * a * b)
            if count:
                total += count * np.log(np.maximum(prob, 1e-300))
    return total


def grid_max_2d(parts: list[Part], design: Design, size: int = 2001) -> tuple[float, np.ndarray]:
    a, b = np.meshgrid(np.linspace(0, 1, size), np.linspace(0, 1, size), indexing="ij")
    values = bilinear_loglik(parts, a, b)
    if design.model in ("CDM", "CDMsym"):
        values = np.where(a + b <= 1 + 1e-12, values, -np.inf)
    index = np.unravel_index(int(np.argmax(values)), values.shape)
    return float(values[index]), np.array([a[index], b[index]])


@pytest.mark.parametrize(("model", "p", "g1", "g2"), [
    ("SLD", [0.3, 0.7], (80, 20), (30, 70)),        # moment estimate outside: boundary
    ("CDM", [0.3, 0.7], (30, 70), (35, 65)),        # beta < 0 by moments
    ("UQTunknown", [0.75, 0.25], (20, 80), (90, 10)),
    ("CDMsym", [0.3, 0.1, 0.6, 0.1], (45, 55), (40, 60)),
])
def test_mle_beats_a_grid(model: str, p: list[float], g1: tuple[int, int],
                          g2: tuple[int, int]) -> None:
    design = Design(model, p)
    parts = two(design, g1, g2)
    result = fit(parts)
    best, best_theta = grid_max_2d(parts, design)
    assert result.loglik >= best - 1e-9
    assert result.theta == pytest.approx(best_theta, abs=1e-3)
    assert design.in_bounds(result.theta, 1e-12)


def test_pooled_versions_are_one_likelihood_not_added_counts() -> None:
    parts = [Part(Design("Warner", 0.7), 1, (60, 40)), Part(Design("Warner", 0.8), 1, (50, 50))]
    result = fit(parts)
    grid = np.linspace(0, 1, 100001)
    lam_a = 0.3 + 0.4 * grid  # P(yes) under p = 0.7
    lam_b = 0.2 + 0.6 * grid
    values = 40 * np.log(lam_a) + 60 * np.log(1 - lam_a) + 50 * np.log(lam_b) + 50 * np.log(
        1 - lam_b)
    assert result.estimates["pi"] == pytest.approx(grid[int(np.argmax(values))], abs=2e-5)
    # the profile interval's ends are where the likelihood-ratio statistic meets chi2_1(0.95)
    critical = stats.chi2.ppf(0.95, 1)
    inside = grid[2 * (values.max() - values) <= critical]
    low, high = result.intervals["pi"]
    assert low == pytest.approx(inside.min(), abs=2e-5)
    assert high == pytest.approx(inside.max(), abs=2e-5)
    assert result.rrreg is None  # RRreg has no pooled estimator


def test_profile_interval_of_nuisance_matches_grid() -> None:
    design = Design("SLD", [0.3, 0.7])
    parts = two(design, (52, 48), (30, 70))
    result = fit(parts)
    a, t = np.meshgrid(np.linspace(0, 1, 2001), np.linspace(0, 1, 2001), indexing="ij")
    # SLD written out: P(yes | group g) = (1 - pi)(1 - p_g) + pi t
    with np.errstate(divide="ignore"):
        values = sum(
            y * np.log((1 - a) * (1 - p) + a * t) + (n - y) * np.log(1 - (1 - a) * (1 - p) - a * t)
            for (y, n, p) in ((48, 100, 0.3), (70, 100, 0.7))
        )
    profile_t = values.max(axis=0)
    axis = t[0]
    critical = stats.chi2.ppf(0.95, 1)
    inside = axis[2 * (result.loglik - profile_t) <= critical]
    low, high = result.intervals["t"]
    assert low == pytest.approx(inside.min(), abs=1e-3)
    assert high == pytest.approx(inside.max(), abs=1e-3)


# -- messages and bad input -----------------------------------------------------------------
def test_same_p_in_both_groups_is_not_identified() -> None:
    result = fit(two(Design("SLD", [0.5, 0.5]), (60, 40), (70, 30)))
    assert not result.identified
    assert any("not identified" in message for message in result.messages)
    assert math.isnan(result.estimates["pi"])


def test_boundary_is_flagged() -> None:
    result = fit(one(Design("Warner", 0.7), (80, 20)))  # 20% yes < 30%: pi_unbiased < 0
    assert result.estimates["pi"] == 0.0
    assert result.on_boundary
    assert result.rrreg is not None and result.rrreg["estimator"] == "ML (bounded)"


def test_bad_counts_are_named() -> None:
    with pytest.raises(ValueError, match="one count per report"):
        Part(Design("Kuk", [0.7, 0.3], kukrep=2), 1, (1, 2))
    with pytest.raises(ValueError, match="cannot pool"):
        fit([Part(Design("Warner", 0.7), 1, (1, 2)), Part(Design("FR", [0.1, 0.1, 0.1]), 1,
                                                          (1, 2, 3))])


def test_custom_matrix_matches_rrreg_custom_and_a_grid() -> None:
    # rrsite's matrix[truth][report]; RRreg's PW is its transpose
    matrix = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]])
    design = Design("custom", matrix.T)
    counts = (12, 14, 24)
    result = fit(one(design, counts))
    rate = np.array(counts) / 50
    shares = rate @ np.linalg.inv(matrix)  # lambda = pi P  =>  pi = lambda P^-1
    assert [result.estimates[f"pi{j}"] for j in range(3)] == pytest.approx(shares, abs=1e-12)
    inverse = np.linalg.inv(matrix)
    covariance = inverse.T @ (np.diag(rate) - np.outer(rate, rate)) @ inverse / 49
    assert result.se["pi0"] == pytest.approx(math.sqrt(covariance[0, 0]))
    # profile interval of pi0 against a brute-force grid over the simplex
    a, b = np.meshgrid(np.linspace(0, 1, 1001), np.linspace(0, 1, 1001), indexing="ij")
    inside_simplex = a + b <= 1 + 1e-12
    shares_grid = np.stack([1 - a - b, a, b], axis=-1)
    probs = shares_grid @ matrix
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.sum(np.array(counts) * np.log(np.maximum(probs, 1e-300)), axis=-1)
    values = np.where(inside_simplex, values, -np.inf)
    pi0 = 1 - a - b
    critical = stats.chi2.ppf(0.95, 1)
    accepted = pi0[(2 * (values.max() - values) <= critical) & inside_simplex]
    low, high = result.intervals["pi0"]
    assert low == pytest.approx(accepted.min(), abs=2e-3)
    assert high == pytest.approx(accepted.max(), abs=2e-3)


def test_parts_from_a_hand_written_manifest_question() -> None:
    from rrsite.estimate.univariate import parts_from_manifest

    question = {"id": "cheated", "values": ["no", "yes"], "reports": ["different", "same"],
                "design": {"name": "crosswise", "p": 0.25},
                "rrreg": {"model": "Crosswise", "p": 0.25}}
    parts = parts_from_manifest(question, {1: {"same": 30, "different": 70}})
    assert parts[0].counts == (70, 30)
    result = fit(parts)
    # P(same) = pi p + (1 - pi)(1 - p)  =>  pi = (0.3 - 0.75) / (0.25 - 0.75)
    assert result.estimates["pi"] == pytest.approx(0.9)
    sld = {"id": "x", "values": ["no", "yes"], "rrreg": {"model": "SLD", "p": [0.3, 0.7]},
           "groups": [{"id": 1, "probability": 0.5}, {"id": 2, "probability": 0.5}]}
    parts = parts_from_manifest(sld, {1: {"no": 27, "yes": 73}, 2: {"no": 55, "yes": 45}})
    assert [p.group for p in parts] == [1, 2]
    with pytest.raises(ValueError, match="unknown report"):
        parts_from_manifest(question, {1: {"maybe": 3}})


def test_boundary_critical_at_the_vertex_is_the_chi_bar_square_quantile() -> None:
    """SLD at pi0 = 0: the null is a point at the vertex of a cone; 2 x the log-LR is the mixture
    (angle / 2 pi) chi2_2 + 1/2 chi2_1 + rest chi2_0 (angle: the cone's, in the metric of the
    information). Equal groups and lambda = (0.7, 0.3) make that metric Euclidean."""
    design = Design("SLD", [0.3, 0.7])
    parts = [Part(design, 1, (100, 0)), Part(design, 2, (100, 0))]
    t_zero, t_one = np.array([-0.7, -0.3]), np.array([0.3, 0.7])  # edges leaving the vertex
    angle = math.acos(float(t_zero @ t_one) / float(np.linalg.norm(t_zero) ** 2))
    def tail(c: float) -> float:
        return angle / (2 * math.pi) * math.exp(-c / 2) + 0.5 * float(stats.chi2.sf(c, 1)) - 0.05
    expected = optimize.brentq(tail, 3.0, 6.0)
    for t in (0.0, 0.5, 1.0):  # t does not matter at pi = 0
        assert boundary_critical(parts, np.array([0.0, t]), 0.95) == pytest.approx(
            expected, abs=0.02)
    assert expected > 4.7  # far above chi2_1(0.95) = 3.84


def test_boundary_critical_is_chi2_away_from_the_bounds_and_never_below() -> None:
    chi2 = float(stats.chi2.ppf(0.95, 1))
    sld = Design("SLD", [0.3, 0.7])
    big = [Part(sld, 1, (2000, 0)), Part(sld, 2, (2000, 0))]
    assert boundary_critical(big, np.array([0.5, 0.5]), 0.95) == chi2
    for design, theta in ((sld, [0.02, 1.0]), (sld, [0.3, 0.0]), (Design("CDM", [0.3, 0.7]),
                          [0.0, 0.5]), (Design("UQTunknown", [0.75, 0.25]), [0.1, 0.0])):
        parts = [Part(design, 1, (100, 0)), Part(design, 2, (100, 0))]
        assert boundary_critical(parts, np.array(theta), 0.95) >= chi2
    # a nuisance on its bound (SLD's t = 1 near pi = 0) raises it
    small = [Part(sld, 1, (100, 0)), Part(sld, 2, (100, 0))]
    assert boundary_critical(small, np.array([0.02, 1.0]), 0.95) > chi2 + 0.2


def test_calibrated_interval_contains_the_chi2_profile_interval() -> None:
    design = Design("SLD", [0.3, 0.7])
    for g1, g2 in (((40, 60), (70, 30)), ((31, 69), (68, 32)), ((50, 50), (60, 40))):
        parts = [Part(design, 1, g1), Part(design, 2, g2)]
        result = fit(parts)
        low, high = result.intervals["pi"]
        plain = profile_interval(parts, "pi", result.theta, result.loglik, 0.95)
        assert low <= plain[0] + 1e-9 and high >= plain[1] - 1e-9
        assert result.method["pi"] == METHOD_PROFILE_BOUNDARY
