"""The distribution of the true numbers behind randomized reports (rrsite.estimate.deconvolution).

Checked against independent computations: each design's law of the report (report_cdf) against
the device's own draws (rrsite.core, a seeded random source) by chi-square and
Kolmogorov-Smirnov tests; the mixture's matrix in closed form; the estimate against the moment
estimate and against a brute-force maximisation with scipy; the intervals against the binomial
likelihood-ratio interval they reduce to; coverage by simulation.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import optimize, stats

from rrsite.analyze.results import NumberResult
from rrsite.core.numbers import NumberDesign, number_design_from_spec
from rrsite.core.privacy import Privacy
from rrsite.estimate.deconvolution import (
    DeconvolutionError,
    _band_points,
    cells,
    deconvolve,
    design_matrix,
    report_bins,
    report_cdf,
)
from rrsite.estimate.numbers import simulate_reports

CONTINUOUS = [
    {"name": "mixture", "p": 0.6, "mask": {"normal": {"mean": 40, "sd": 25}}},
    {"name": "mixture", "p": 0.6, "mask": {"exponential": {"mean": 30}}},
    {"name": "mixture", "p": 0.6, "mask": {"uniform": {"min": 0, "max": 100}}},
    {"name": "additive", "scramble": {"normal": {"mean": 5, "sd": 10}}},
    {"name": "additive", "scramble": {"uniform": {"min": -20, "max": 20}}},
    {"name": "additive", "scramble": {"exponential": {"mean": 15}}},
    {"name": "multiplicative", "scramble": {"uniform": {"min": 0.5, "max": 1.5}}, "p": 0.3},
    {"name": "multiplicative", "scramble": {"exponential": {"mean": 1}}},
    {"name": "piecewise", "epsilon": 1.5},
]
DISCRETE = [
    {"name": "mixture", "p": 0.5, "mask": {"uniform": {"min": 0, "max": 30}}},
    {"name": "mixture", "p": 0.4, "mask": {"values": [0, 10, 30], "probabilities": [0.5, 0.3,
                                                                                     0.2]}},
    {"name": "additive", "scramble": {"values": [-5, 0, 5, 10]}},
    {"name": "laplace", "epsilon": 2},
    {"name": "duchi", "epsilon": 1},
    # continuous draws sent rounded to whole numbers
    {"name": "additive", "scramble": {"normal": {"mean": 0.3, "sd": 1.5}}},
    {"name": "mixture", "p": 0.5, "mask": {"normal": {"mean": 10, "sd": 4}}},
    {"name": "multiplicative", "scramble": {"uniform": {"min": 0.5, "max": 1.5}}, "p": 0.3},
    {"name": "multiplicative", "scramble": {"exponential": {"mean": 1}}},
]


def _draws(design, y: float, n: int, seed: int) -> np.ndarray:
    rng = random.Random(seed)
    return np.array([design.randomize(y, rng).report for _ in range(n)])


@pytest.mark.parametrize("spec", CONTINUOUS, ids=lambda s: f"{s['name']}-{list(s)[1]}")
@pytest.mark.parametrize("y", [0.0, 17.3, 100.0])
def test_report_law_matches_the_device_continuous(spec: dict, y: float) -> None:
    """Reports that equal the truth (a mixture's, a multiplicative 0 or p branch) are an atom
    of the law; the rest is continuous: its share and its shape are checked apart."""
    design = number_design_from_spec({**spec, "min": 0, "max": 100})
    draws = _draws(design, y, 4000, seed=int(y * 10) + len(spec))
    half = design.report_step / 2  # reports lie on the report grid (0.001 here)
    jump = float(report_cdf(design, np.array([y]), np.array([y]))[0]
                 - report_cdf(design, np.array([y - half]), np.array([y]))[0])
    # independent: the atom is p (a mixture's, or multiplicative's p branch), 1 for y S at 0,
    # plus a continuous draw's chance of landing on y's grid point (below 1e-4 here)
    expected = 1.0 if spec["name"] == "multiplicative" and y == 0 else spec.get("p", 0.0)
    assert jump == pytest.approx(expected, abs=1e-4)
    atoms = int(np.sum(draws == y))
    assert atoms / len(draws) == pytest.approx(jump, abs=4 * math.sqrt(
        jump * (1 - jump) / len(draws)) + 2 / len(draws))
    rest = draws[draws != y]
    if len(rest):
        law = stats.kstest(rest, lambda t: _without_atom(design, t, y, jump))
        assert law.pvalue > 1e-3


def _without_atom(design, t, y: float, jump: float) -> np.ndarray:
    """The report's law given it is not the atom at y (the rest, renormalised)."""
    cdf = report_cdf(design, np.asarray(t), np.full(np.shape(t), y))
    return np.asarray((cdf - jump * (np.asarray(t) >= y - 1e-9)) / (1 - jump))


def assert_report_law(design: NumberDesign, reports: np.ndarray, values: np.ndarray,
                      y: float) -> None:
    """Chi-square of the reports of true answer ``y`` against report_cdf, over bins ending at
    each value reported (few values) or at 40 quantiles of the reports; bins expecting fewer
    than 5 are pooled."""
    edges = values if len(values) <= 60 else np.unique(np.quantile(reports, np.linspace(
        0, 1, 41)[1:-1]))
    cdf = report_cdf(design, edges, np.full(len(edges), y))
    expected = np.diff(np.concatenate(([0.0], cdf, [1.0]))) * len(reports)
    observed = np.bincount(np.searchsorted(edges, reports, side="left"),
                           minlength=len(edges) + 1)
    keep = expected >= 5
    counts = np.append(observed[keep], observed[~keep].sum())
    wanted = np.append(expected[keep], expected[~keep].sum())
    if wanted[-1] < 1:  # nothing rare: no pooled bin
        assert counts[-1] == 0
        counts, wanted = counts[:-1], wanted[:-1]
    assert stats.chisquare(counts, wanted * counts.sum() / wanted.sum()).pvalue > 1e-3


@pytest.mark.parametrize("spec", DISCRETE, ids=lambda s: s["name"])
@pytest.mark.parametrize("y", [0, 7, 30])
def test_report_law_matches_the_device_discrete(spec: dict, y: int) -> None:
    """Chi-square over bins ending at each value drawn (few values) or at 40 quantiles of the
    draws (laplace's fine grid), the expected counts from report_cdf."""
    design = number_design_from_spec({**spec, "min": 0, "max": 30, "integer": True})
    draws = _draws(design, y, 6000, seed=y + 100 * len(spec))
    values = np.unique(draws)
    if len(values) == 1:  # y S at 0: always 0
        law = report_cdf(design, np.array([values[0] - 0.5, values[0]]), np.full(2, float(y)))
        assert np.allclose(law, [0.0, 1.0])
        return
    assert_report_law(design, draws, values, float(y))


def test_the_numpy_simulator_follows_the_same_laws() -> None:
    """simulate_reports (the benchmarks' and `rrsite simulate`'s sampler) against report_cdf."""
    rng = np.random.default_rng(3)
    for spec in CONTINUOUS[3:6] + CONTINUOUS[8:]:
        design = number_design_from_spec({**spec, "min": 0, "max": 100})
        reports, _ = simulate_reports(rng, design, np.full(20000, 42.0))
        assert stats.kstest(reports, lambda t, d=design: report_cdf(
            d, np.asarray(t), np.full(np.shape(t), 42.0))).pvalue > 1e-3


@pytest.mark.parametrize("spec", DISCRETE, ids=lambda s: f"{s['name']}-{list(s)[-1]}")
def test_the_numpy_simulator_follows_the_same_laws_on_whole_numbers(spec: dict) -> None:
    """simulate_reports on a question of whole numbers (reports rounded as the device rounds
    them) against report_cdf: chi-square over the values."""
    design = number_design_from_spec({**spec, "min": 0, "max": 30, "integer": True})
    rng = np.random.default_rng(13)
    reports, _ = simulate_reports(rng, design, np.full(20000, 7.0))
    values = np.unique(reports)
    assert_report_law(design, reports, values, 7.0)


def test_an_answer_off_the_grid_is_rounded_in_the_law() -> None:
    """A question of any number from 0 to 1,000 has a report grid of 0.01: an answer of
    17.3025 is sent as 17.30 or 17.31 (17.31 with chance 0.25), and the law says so."""
    design = number_design_from_spec({"name": "additive", "scramble": {"values": [0, 100]},
                                      "min": 0, "max": 1000})
    assert design.report_step == 0.01
    z = np.array([17.29, 17.3, 17.305, 17.31, 117.3, 117.31])
    law = report_cdf(design, z, np.full(len(z), 17.3025))
    # independent: P(sent = 17.30) = 0.75, P(sent = 17.31) = 0.25, then + 0 or + 100, half each
    assert np.allclose(law, [0.0, 0.375, 0.375, 0.5, 0.875, 1.0], atol=1e-9)
    draws = _draws(design, 17.3025, 4000, seed=3)
    assert set(draws) == {17.3, 17.31, 117.3, 117.31}
    assert np.mean(draws == 17.3) == pytest.approx(0.375, abs=0.03)
    assert np.mean(draws <= 17.31) == pytest.approx(0.5, abs=0.03)


def test_mixture_matrix_in_closed_form() -> None:
    design = number_design_from_spec({**DISCRETE[0], "min": 0, "max": 30, "integer": True})
    z = np.arange(31, dtype=float)
    lows, highs = cells(design, z)
    edges, counts = report_bins(z, design, lows, highs)
    matrix = design_matrix(design, lows, highs, edges)
    seen = matrix[:, counts > 0]  # the bins holding a report: one per whole number
    assert seen.shape == (31, 31)
    assert np.allclose(seen, 0.5 * np.eye(31) + 0.5 / 31, atol=1e-12)
    assert np.allclose(matrix.sum(axis=1), 1.0)


def _integer_mixture(p: float, top: int):
    return number_design_from_spec({"name": "mixture", "p": p,
                                    "mask": {"uniform": {"min": 0, "max": top}},
                                    "min": 0, "max": top, "integer": True})


def _survey(design, truth: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    y = rng.choice(len(truth), n, p=truth).astype(float)
    return simulate_reports(rng, design, y)[0]


def test_mixture_shares_are_the_moment_ones_with_clopper_pearson_intervals() -> None:
    """Integer mixture: P(report = k) = p pi_k + (1 - p) / (K + 1). Inside the simplex the
    maximum-likelihood shares are the moment ones; each interval is Clopper-Pearson's for the
    count of k (from scipy's beta quantiles here) mapped through that line."""
    design = _integer_mixture(0.6, 5)
    rng = np.random.default_rng(4)
    reports = _survey(design, np.array([0.3, 0.25, 0.2, 0.12, 0.08, 0.05]), 3000, rng)
    found = deconvolve([(design, reports)], confidence=0.9)
    counts = np.bincount(reports.astype(int), minlength=6)
    n = counts.sum()
    moment = (counts / n - 0.4 / 6) / 0.6
    assert np.all(moment > 0)
    assert found.probabilities is not None and found.ci_low is not None
    assert np.allclose(found.probabilities, moment, atol=1e-7)
    low = stats.beta.ppf(0.05, counts, n - counts + 1)
    high = stats.beta.ppf(0.95, counts + 1, n - counts)
    assert np.allclose(found.ci_low, np.clip((low - 0.4 / 6) / 0.6, 0, 1), atol=1e-9)
    assert np.allclose(found.ci_high, np.clip((high - 0.4 / 6) / 0.6, 0, 1), atol=1e-9)


def test_mixture_band_is_the_exact_inversion_of_the_dkw_band() -> None:
    """For a mixture F(z | y) = p [y <= z] + (1 - p) M(z), so the bounds of F(t) are
    (F_report(t) -/+ eps - (1 - p) M(t)) / p, made monotone: written out here."""
    design = _integer_mixture(0.5, 30)
    rng = np.random.default_rng(9)
    truth = np.full(31, 0.3 / 30)
    truth[0] = 0.7
    reports = _survey(design, truth, 2000, rng)
    found = deconvolve([(design, reports)])
    eps = math.sqrt(math.log(2 / 0.05) / (2 * 2000))
    t = np.arange(31)
    reported = np.array([np.mean(reports <= v) for v in t])
    mask = (t + 1) / 31
    low = np.maximum.accumulate(np.clip((reported - eps - 0.5 * mask) / 0.5, 0, 1))
    high = np.minimum.accumulate(np.clip((reported + eps - 0.5 * mask) / 0.5, 0, 1)[::-1])[::-1]
    low[-1] = high[-1] = 1.0
    assert np.allclose(found.cumulative_low, low, atol=1e-12)
    assert np.allclose(found.cumulative_high, np.maximum(high, low), atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("spec", [
    {"name": "additive", "scramble": {"values": [-5, 0, 5, 10]}},
    {"name": "laplace", "epsilon": 3},
    {"name": "piecewise", "epsilon": 4},
    {"name": "multiplicative", "scramble": {"uniform": {"min": 0.5, "max": 1.5}}, "p": 0.2},
], ids=lambda s: s["name"])
def test_band_is_no_narrower_than_the_tightest_bounds(spec: dict) -> None:
    """The tightest bounds of F(t) given the DKW band at the points rrsite checks, by linear
    programming over every distribution of the whole numbers 0..12 (scipy's HiGHS): rrsite's
    closed-form bounds hold them (a valid relaxation: never narrower)."""
    design = number_design_from_spec({**spec, "min": 0, "max": 12, "integer": True})
    rng = np.random.default_rng(10)
    truth = np.array([0.4, 0.05, 0.05, 0.1, 0.1, 0.1, 0.05, 0.05, 0.04, 0.03, 0.01, 0.01, 0.01])
    reports = _survey(design, truth / truth.sum(), 1000, rng)
    found = deconvolve([(design, reports)])
    eps = math.sqrt(math.log(2 / 0.05) / (2 * len(reports)))
    grid = np.arange(13, dtype=float)
    z = _band_points(reports, design, grid, grid)  # the same points as rrsite's band uses
    empirical = np.array([np.mean(reports <= v) for v in z])
    law = report_cdf(design, z[:, None], np.arange(13, dtype=float)[None, :])  # z x y
    a_ub = np.vstack((law, -law))
    b_ub = np.concatenate((empirical + eps, -(empirical - eps)))
    for t in range(12):
        c = (np.arange(13) <= t).astype(float)
        for sign, ours in ((1, found.cumulative_low[t]), (-1, found.cumulative_high[t])):
            best = optimize.linprog(sign * c, A_ub=a_ub, b_ub=b_ub, A_eq=np.ones((1, 13)),
                                    b_eq=[1.0], bounds=(0, None), method="highs")
            assert best.status == 0
            tightest = sign * best.fun
            assert (ours <= tightest + 1e-9) if sign == 1 else (ours >= tightest - 1e-9), (
                t, ours, tightest)


def test_maximum_matches_a_brute_force_maximisation() -> None:
    """Additive normal scrambling over a continuous range: the binned likelihood written out
    here (the same bins and matrix) maximised by scipy over a softmax parametrisation."""
    design = number_design_from_spec({"name": "additive",
                                      "scramble": {"normal": {"mean": 0, "sd": 2}},
                                      "min": 0, "max": 100})
    rng = np.random.default_rng(5)
    y = np.where(rng.random(4000) < 0.3, 0.0, np.minimum(rng.gamma(2.0, 15.0, 4000), 100))
    reports, _ = simulate_reports(rng, design, y)
    found = deconvolve([(design, reports)])
    assert found.probabilities is not None
    lows, highs = cells(design, reports)
    edges, counts = report_bins(reports, design, lows, highs)
    matrix = design_matrix(design, lows, highs, edges)

    def negative(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = np.exp(theta - theta.max())
        w /= w.sum()
        lam = np.maximum(w @ matrix, 1e-300)
        grad_w = -(matrix @ (counts / lam))
        return -float(counts @ np.log(lam)), w * (grad_w - w @ grad_w)

    ours = -negative(np.log(np.maximum(found.probabilities, 1e-300)))[0]
    best = optimize.minimize(negative, np.log(np.array(found.probabilities) + 1e-4), jac=True,
                             method="L-BFGS-B", options={"maxiter": 3000, "ftol": 1e-15,
                                                         "gtol": 1e-9})
    assert -best.fun <= ours + 1e-6  # nothing higher than rrsite's maximum
    assert ours == pytest.approx(-best.fun, abs=1e-3)


def test_coverage_by_simulation() -> None:
    """300 surveys of 600 respondents over 0..5. Mixture: each share's exact interval holds
    it at least about 95% of the time (every cell at least 92%: Clopper-Pearson is
    conservative). Additive scrambling: the band holds every cumulative share at once in at
    least 95% of the surveys (a binomial lower limit: 93%)."""
    truth = np.array([0.55, 0.2, 0.1, 0.08, 0.07, 0.0])
    cumulative = np.cumsum(truth)
    mixture = _integer_mixture(0.5, 5)
    additive = number_design_from_spec({"name": "additive", "scramble": {"values": [-1, 0, 2]},
                                        "min": 0, "max": 5, "integer": True})
    rng = np.random.default_rng(6)
    hits, together = np.zeros(6), 0
    for _ in range(300):
        found = deconvolve([(mixture, _survey(mixture, truth, 600, rng))])
        assert found.ci_low is not None and found.ci_high is not None
        hits += (np.array(found.ci_low) <= truth + 1e-12) & (truth <= np.array(found.ci_high)
                                                             + 1e-12)
        band = deconvolve([(additive, _survey(additive, truth, 600, rng))])
        together += bool(np.all((np.array(band.cumulative_low) <= cumulative + 1e-12)
                                & (cumulative <= np.array(band.cumulative_high) + 1e-12)))
    assert (hits / 300).min() >= 0.92, hits / 300
    assert together / 300 >= 0.93


def test_versions_are_pooled_in_one_likelihood() -> None:
    first, second = _integer_mixture(0.4, 5), _integer_mixture(0.8, 5)
    rng = np.random.default_rng(7)
    truth = np.array([0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    parts = [(design, _survey(design, truth, 1500, rng)) for design in (first, second)]
    pooled = deconvolve(parts)
    assert pooled.n == 3000 and pooled.ci_low is None  # the exact intervals are one design's
    assert np.all(np.array(pooled.cumulative_low) <= np.array(pooled.cumulative_high))
    # the pooled maximum, written out: sum over versions of count * log(p pi + (1 - p)/6)
    counts = [np.bincount(z.astype(int), minlength=6) for _, z in parts]

    def negative(theta: np.ndarray) -> float:
        w = np.exp(theta - theta.max())
        w /= w.sum()
        return -sum(float(c @ np.log(d.p * w + (1 - d.p) / 6))
                    for (d, _), c in zip(parts, counts, strict=True))

    best = optimize.minimize(negative, np.zeros(6), method="BFGS", options={"gtol": 1e-10})
    w = np.exp(best.x - best.x.max())
    assert pooled.probabilities is not None
    assert np.allclose(pooled.probabilities, w / w.sum(), atol=1e-5)


def test_designs_that_cannot_be_unmixed_say_why() -> None:
    duchi = number_design_from_spec({"name": "duchi", "epsilon": 1, "min": 0, "max": 30})
    reports, _ = simulate_reports(np.random.default_rng(8), duchi, np.full(500, 10.0))
    found = deconvolve([(duchi, reports)])
    assert found.probabilities is None and found.cumulative is None
    assert "cannot tell the cells apart" in found.messages[0]
    assert found.cumulative_low[-1] == 1.0
    mixture = _integer_mixture(0.5, 5)
    with pytest.raises(DeconvolutionError, match="a report that no true number"):
        deconvolve([(mixture, np.array([1.0, 2.0, 2.5]))])  # 2.5: neither answer nor mask
    with pytest.raises(DeconvolutionError, match="different ranges"):
        deconvolve([(mixture, np.array([1.0, 2.0])), (_integer_mixture(0.5, 6),
                                                      np.array([1.0, 3.0]))])
    unknown = number_design_from_spec({"name": "mixture-unknown", "p": [0.2, 0.8],
                                       "min": 0, "max": 10})
    result = NumberResult("q", "q?", None, [], None, 0, Privacy(math.inf, 1.0))
    result.parts = [type("Part", (), {"design": unknown, "reports": np.array([1.0, 2.0])})()]
    said = result.deconvolution()
    assert isinstance(said, str) and "innocuous answers" in said


def test_a_range_of_any_numbers_has_cells_for_its_ends() -> None:
    design = number_design_from_spec({"name": "additive",
                                      "scramble": {"normal": {"mean": 0, "sd": 2000}},
                                      "min": 0, "max": 100000})
    lows, highs = cells(design, np.array([1.0, 2.0]))
    assert (lows[0], highs[0]) == (0, 0) and (lows[-1], highs[-1]) == (100000, 100000)
    assert len(lows) == 32
    assert np.allclose(np.diff(lows[1:-1]), 100000 / 30)
    days = _integer_mixture(0.5, 30)
    lows, highs = cells(days, np.array([1.0]))
    assert np.array_equal(lows, np.arange(31)) and np.array_equal(lows, highs)
    wide = number_design_from_spec({**DISCRETE[0], "min": 0, "max": 300, "integer": True})
    lows, highs = cells(wide, np.array([1.0]))
    assert lows[0] == 0 and highs[-1] == 300 and np.all(highs[:-1] + 1 == lows[1:])


def test_continuous_mixture_cells_and_their_ends() -> None:
    """A continuous range under a mixture: exactly 0 and exactly max are their own cells, and
    the intervals hold the shares written out from the truth's law (one large survey)."""
    design = number_design_from_spec({"name": "mixture", "p": 0.7,
                                      "mask": {"normal": {"mean": 5000, "sd": 3000}},
                                      "min": 0, "max": 30000})
    rng = np.random.default_rng(12)
    n = 40000
    y = np.where(rng.random(n) < 0.3, 0.0, np.minimum(rng.exponential(6000, n), 30000))
    reports, _ = simulate_reports(rng, design, y)
    found = deconvolve([(design, reports)])
    lows, highs = np.array(found.lows), np.array(found.highs)
    expo = stats.expon(scale=6000)
    truth = 0.7 * (expo.cdf(highs) - expo.cdf(lows))
    truth[0], truth[-1] = 0.3, 0.7 * expo.sf(30000)
    assert found.ci_low is not None and found.ci_high is not None
    inside = (np.array(found.ci_low) <= truth + 1e-12) & (truth <= np.array(found.ci_high)
                                                          + 1e-12)
    assert inside.sum() >= len(truth) - 3  # pointwise 95%: a few may miss
    assert inside[0] and inside[-1]
