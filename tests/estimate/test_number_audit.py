"""An independent audit of the number designs' figures, with numpy and scipy.

- the report laws written from the papers (mixture: Greenberg et al. 1971; additive: Pollock &
  Bek 1976; multiplicative: Eichhorn & Hayre 1983, BarLev et al. 2004; Laplace on its grid;
  Duchi et al. 2018; Wang et al. 2019), integrated exactly (sums, scipy's quad): r is unbiased,
  Var(r | y) is the closed form, and ``square_estimate`` / ``conditional_variance`` are unbiased
  for y^2 and Var(r | y);
- the core's samplers (a seeded random source) against those laws: Kolmogorov-Smirnov and
  chi-square tests;
- piecewise's epsilon over every one of its 2^21 + 1 report grid points;
- planning: the largest Var(r | y) by a dense search of the closed forms, and which bounded
  mechanism ``plan --compare`` should name at each epsilon;
- mixture-unknown: its SE (RRreg's formula) against the spread of the estimate over surveys.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from rrsite.core.numbers import (
    PIECEWISE_CELLS,
    Additive,
    Duchi,
    Laplace,
    Mixture,
    MixtureUnknown,
    Multiplicative,
    Piecewise,
)
from rrsite.estimate.numbers import (
    conditional_variance,
    debias,
    fit_part,
    respondents_for_margin,
    square_estimate,
    worst_variance,
)

# ---- the report laws, from the papers ----------------------------------------------------------


def _quad(fn, a: float, b: float) -> float:
    return float(integrate.quad(lambda t: float(fn(t)), a, b, epsabs=1e-9, epsrel=1e-11,
                                limit=200)[0])


class Law:
    """E[fn(z) | y] for one design (fn takes numbers or numpy arrays), its closed-form
    Var(r | y), and the part of it from Laplace's random rounding."""

    def __init__(self, design, expect, variance, rounding=None) -> None:
        self.design, self.expect, self.variance = design, expect, variance
        self.rounding = rounding or (lambda y: 0.0)


def _mask_expect(spec: dict, fn) -> float:
    """E[fn(S)] for a mask written as in a survey (uniform: whole numbers when "integer")."""
    kind = next(k for k in spec if k != "integer")
    if kind == "normal":
        m, sd = spec[kind]["mean"], spec[kind]["sd"]
        # beyond 40 sd the mass is e^-800: nothing a double holds
        return _quad(lambda s: fn(s) * stats.norm.pdf(s, m, sd), m - 40 * sd, m + 40 * sd)
    if kind == "exponential":
        m = spec[kind]["mean"]
        return _quad(lambda s: fn(s) * math.exp(-s / m) / m, 0, 80 * m)  # e^-80 beyond
    if kind == "uniform":
        a, b = spec[kind]["min"], spec[kind]["max"]
        if spec.get("integer"):
            return math.fsum(float(fn(float(v))) for v in range(a, b + 1)) / (b - a + 1)
        return _quad(lambda s: fn(s) / (b - a), a, b)
    values = spec["values"]
    chances = spec.get("probabilities", [1 / len(values)] * len(values))
    return math.fsum(q * float(fn(float(v))) for v, q in zip(values, chances, strict=True))


def _mask_moments(spec: dict) -> tuple[float, float]:
    mean = _mask_expect(spec, lambda s: s)
    return mean, _mask_expect(spec, lambda s: (s - mean) ** 2)


def _grid(low, high, integer: bool) -> float:
    """The device's report grid: 1 for whole numbers, else the largest power of ten at most
    (max - min) / 100,000 and at most 1; 0.01 without a range."""
    if integer:
        return 1.0
    if low is None or high is None:
        return 0.01
    return min(1.0, 10.0 ** math.floor(math.log10((high - low) / 1e5)))


def _rounding(spec: dict, g: float) -> float:
    """What rounding a continuous draw at random (unbiased) to multiples of g adds to its
    second moment, g^2 E[f (1 - f)] with f its fractional grid position, from the law of f:
    uniform, by quadrature over the partial cells at its ends and 1/6 for each whole one;
    exponential, whose f has density c e^(-c u) / (1 - e^(-c)), c = g / mean, by quadrature;
    normal, 1/6 (with 5 sd or more per cell the rest is below e^-490) or its density wrapped
    onto one cell. A list, or whole numbers, is sent as drawn."""
    kind = next(k for k in spec if k != "integer")
    if kind == "values" or spec.get("integer"):
        return 0.0

    def part(u0: float, u1: float) -> float:
        return _quad(lambda u: u * (1 - u), u0, u1) if u1 > u0 else 0.0

    if kind == "uniform":
        a, b = spec[kind]["min"] / g, spec[kind]["max"] / g
        cell_a, cell_b = math.floor(a), math.floor(b)
        if cell_a == cell_b:
            total = part(a - cell_a, b - cell_b)
        else:
            total = part(a - cell_a, 1.0) + (cell_b - cell_a - 1) / 6 + part(0.0, b - cell_b)
        return g * g * total / (b - a)
    if kind == "exponential":
        c = g / spec[kind]["mean"]
        return g * g * _quad(lambda u: u * (1 - u) * c * math.exp(-c * u), 0, 1) / \
            -math.expm1(-c)
    m, sd = spec[kind]["mean"], spec[kind]["sd"]
    if sd / g >= 5:
        return g * g / 6
    ks = np.arange(math.floor((m - 40 * sd) / g), math.ceil((m + 40 * sd) / g) + 1)
    return g * g * _quad(lambda u: u * (1 - u) * g * float(np.sum(
        stats.norm.pdf(g * (ks + u), m, sd))), 0, 1)


def _quadratic(fn) -> float:
    """The coefficient of z^2 in a quadratic fn (every fn the tests take the mean of)."""
    return (float(fn(1.0)) + float(fn(-1.0)) - 2 * float(fn(0.0))) / 2


def _sent_expect(spec: dict, fn, g: float) -> float:
    """E[fn(draw as sent)] for a quadratic fn: rounding a continuous draw to the grid keeps its
    mean and adds _rounding to its second moment."""
    return _mask_expect(spec, fn) + _quadratic(fn) * _rounding(spec, g)


def mixture(p: float, mask: dict, low=None, high=None, integer=False) -> Law:
    """The device sends the answer (on the report grid here) or a mask draw, a continuous one
    rounded to the report grid."""
    spec = {k: v for k, v in mask.items() if k != "integer"}
    design = Mixture(p, spec, low, high, integer)
    g = _grid(low, high, integer)
    m, v = _mask_moments(mask)
    v += _rounding(mask, g)
    return Law(design, lambda fn, y: p * float(fn(y)) + (1 - p) * _sent_expect(mask, fn, g),
               lambda y: ((1 - p) * v + p * (1 - p) * (y - m) ** 2) / p ** 2)


def additive(scramble: dict, low=None, high=None, integer=False) -> Law:
    """Answer (on the report grid here) + the draw, a continuous one rounded to the grid."""
    spec = {k: v for k, v in scramble.items() if k != "integer"}
    design = Additive(spec, low, high, integer)
    g = _grid(low, high, integer)
    _, v = _mask_moments(scramble)
    v += _rounding(scramble, g)
    return Law(design, lambda fn, y: _sent_expect(scramble, lambda s: fn(y + s), g),
               lambda y: v)


def multiplicative(scramble: dict, p: float, low, high) -> Law:
    """The factor is rounded to a grid h, the power of ten at most a tenth of the report grid
    over the largest answer size; the product's own rounding to the report grid (at most
    g^2 / 4) is left out here, as the design's formula leaves it out."""
    design = Multiplicative(scramble, p, low, high)
    g = _grid(low, high, False)
    h = 10.0 ** math.floor(math.log10(g / (10 * max(abs(low), abs(high), 1.0))))
    m, v = _mask_moments(scramble)
    v += _rounding(scramble, h)
    slope, second = p + (1 - p) * m, p + (1 - p) * (v + m * m)
    return Law(design,
               lambda fn, y: p * float(fn(y)) + (1 - p) * _sent_expect(
                   scramble, lambda s: fn(y * s), h),
               lambda y: y * y * (second / slope ** 2 - 1))


def laplace(epsilon: float, low: float, high: float, integer: bool = False) -> Law:
    """Grid step g: the largest power of ten at most (max - min) / 1000; y rounded to it at
    random (up with chance f, its fractional position); P(k) = (1 - a) / (1 + a) a^|k|,
    a = exp(-epsilon / G), G = ceil((max - min) / g); report min + g (position + k)."""
    design = Laplace(epsilon, low, high, integer)
    g = 10.0 ** math.floor(math.log10((high - low) / 1000))
    big_g = math.ceil((high - low) / g - 1e-9)
    a = math.exp(-epsilon / big_g)
    reach = math.ceil(45 * big_g / epsilon)  # 45 scales: the rest has chance e^-45
    ks = np.arange(-reach, reach + 1)
    pmf = (1 - a) / (1 + a) * a ** np.abs(ks)

    def place(y: float) -> tuple[int, float]:
        position = (y - low) / g
        base = math.floor(position)
        f = position - base
        return base, (f if f > 1e-9 else 0.0)

    assert float(np.sum(pmf)) == pytest.approx(1.0, rel=1e-12)

    def expect(fn, y: float) -> float:
        base, f = place(y)
        values, shifted = fn(low + g * (base + ks)), fn(low + g * (base + 1 + ks))
        return float(np.sum(pmf * ((1 - f) * values + f * shifted)))

    noise = g * g * 2 * a / (1 - a) ** 2
    return Law(design, expect, lambda y: noise + g * g * place(y)[1] * (1 - place(y)[1]),
               rounding=lambda y: g * g * place(y)[1] * (1 - place(y)[1]))


def duchi(epsilon: float, low: float, high: float) -> Law:
    design = Duchi(epsilon, low, high)
    e = math.exp(epsilon)
    c = (e + 1) / (e - 1)
    half = (high - low) / 2

    def expect(fn, y: float) -> float:
        x = (y - low) / half - 1
        chance = 0.5 + x * (e - 1) / (2 * (e + 1))
        return (chance * float(fn(low + half * (1 + c)))
                + (1 - chance) * float(fn(low + half * (1 - c))))

    return Law(design, expect, lambda y: half * half * (c * c - ((y - low) / half - 1) ** 2))


def piecewise(epsilon: float, low: float, high: float) -> Law:
    """Density s (s - 1) / (2 (s + 1)) on [l, l + C - 1], that over e^eps elsewhere on [-C, C]
    (unit scale, s = e^(eps/2), l = (C + 1) x / 2 - (C - 1) / 2): Wang et al. 2019."""
    design = Piecewise(epsilon, low, high)
    s = math.exp(epsilon / 2)
    c = (s + 1) / (s - 1)
    inside = (math.exp(epsilon) - s) / (2 * s + 2)
    outside = inside / math.exp(epsilon)
    half = (high - low) / 2

    def expect(fn, y: float) -> float:
        x = (y - low) / half - 1
        left = (c + 1) / 2 * x - (c - 1) / 2
        right = left + c - 1

        def unit(t: float) -> float:
            return fn(low + (t + 1) * half)

        return (outside * _quad(unit, -c, left) + inside * _quad(unit, left, right)
                + outside * _quad(unit, right, c))

    return Law(design, expect, lambda y: half * half * (((y - low) / half - 1) ** 2 / (s - 1)
                                                        + (s + 3) / (3 * (s - 1) ** 2)))


LAWS = [
    mixture(0.7, {"normal": {"mean": 50, "sd": 20}}),
    mixture(0.6, {"exponential": {"mean": 30}}, 0, 200, True),
    mixture(0.3, {"uniform": {"min": -5, "max": 8}}, 0, 3),
    mixture(0.25, {"uniform": {"min": 0, "max": 30}, "integer": True}, 0, 30, True),
    mixture(0.4, {"values": [0.5, 1, 2.25, 7], "probabilities": [0.1, 0.2, 0.3, 0.4]}, 0, 5,
            True),
    additive({"normal": {"mean": 3, "sd": 25}}, 0, 100),
    additive({"exponential": {"mean": 7}}, 0, 100),
    additive({"uniform": {"min": -10, "max": 30}}, 0, 100),
    additive({"uniform": {"min": -3, "max": 9}, "integer": True}, 0, 10, True),
    additive({"values": [-2, 0.5, 4], "probabilities": [0.2, 0.5, 0.3]}, 0, 10, True),
    multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0.0, 0, 1000),
    multiplicative({"uniform": {"min": 0.2, "max": 3}}, 0.4, 0, 1000),
    multiplicative({"exponential": {"mean": 2}}, 0.3, 1, 1000),
    multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0.2, -50, -10),
    laplace(1.0, 0, 12.345),
    laplace(0.3, -2.5, 3.7123),
    laplace(2.0, 0, 12345, True),
    laplace(1.0, 0, 30, True),
    duchi(0.05, 0, 30),
    duchi(8.0, -1, 2),
    piecewise(0.05, 0, 30),
    piecewise(8.0, -1, 2),
]


def _answers(law: Law) -> list[float]:
    d = law.design
    low = 0.0 if d.minimum is None else d.minimum
    high = 100.0 if d.maximum is None else d.maximum
    ys = [low, low + 0.37 * (high - low), high]
    return [float(round(y)) for y in ys] if d.integer else ys


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.design.name)
def test_moments_and_unbiased_estimates_by_exact_integration(law: Law) -> None:
    """E[r | y] = y; E[r^2 | y] - y^2 is the paper's variance; the design's own Var(z | y);
    square_estimate and conditional_variance unbiased (Laplace: but for the random rounding of
    answers off its grid, as they state; Duchi: none exists, as stated)."""
    d = law.design
    _, slope = d.linear()
    for y in _answers(law):
        var_r = law.variance(y)
        scale = max(var_r, 1e-300)

        def r(z):
            return debias(d, np.asarray(z, dtype=np.float64))

        mean = law.expect(r, y)
        assert mean == pytest.approx(y, abs=1e-7 * math.sqrt(scale) + 1e-9 * abs(y)), y
        assert law.expect(lambda z, y=y: (r(z) - y) ** 2, y) == pytest.approx(var_r, rel=1e-7), y
        assert d.report_variance(y) == pytest.approx(var_r * slope ** 2, rel=1e-9), y
        if isinstance(d, Duchi):
            continue
        # Laplace: both leave out the random rounding's step^2 f (1 - f), as they state
        rounding = law.rounding(y) / slope ** 2
        square = law.expect(lambda z: square_estimate(d, r(z)), y)
        assert square == pytest.approx(y * y + rounding, abs=1e-7 * (scale + y * y)), y
        estimate = law.expect(lambda z: conditional_variance(d, r(z)), y)
        assert estimate == pytest.approx(var_r - rounding, rel=1e-7), y


# ---- the samplers against the laws -------------------------------------------------------------

DRAWS = 20_000


def _reports(design, y: float, seed: int, n: int = DRAWS) -> np.ndarray:
    rng = random.Random(seed)
    return np.array([design.randomize(y, rng).report for _ in range(n)])


@pytest.mark.parametrize(("scramble", "law"), [
    ({"normal": {"mean": 3, "sd": 25}}, stats.norm(3, 25)),
    ({"exponential": {"mean": 7}}, stats.expon(scale=7)),
    ({"uniform": {"min": -10, "max": 30}}, stats.uniform(-10, 40)),
])
def test_continuous_scrambles_are_drawn_from_their_laws(scramble: dict, law) -> None:
    """Kolmogorov-Smirnov: z - y from additive, and the mask draws of a mixture (every report
    that is not the truth), against the scramble's distribution."""
    added = _reports(Additive(scramble, 0, 100), 40.0, 1) - 40.0
    assert stats.kstest(added, law.cdf).pvalue > 1e-4
    design = Mixture(0.3, scramble, 0, 100)
    reports = _reports(design, 40.0, 2)
    drawn = reports[reports != 40.0]
    assert stats.binomtest(DRAWS - len(drawn), DRAWS, 0.3).pvalue > 1e-4
    assert stats.kstest(drawn, law.cdf).pvalue > 1e-4


@pytest.mark.parametrize(("scramble", "chances"), [
    ({"uniform": {"min": -3, "max": 9}}, {float(v): 1 / 13 for v in range(-3, 10)}),
    ({"values": [-2, 0.5, 4], "probabilities": [0.2, 0.5, 0.3]}, {-2.0: 0.2, 0.5: 0.5, 4.0: 0.3}),
])
def test_discrete_scrambles_are_drawn_from_their_laws(scramble: dict, chances: dict) -> None:
    added = _reports(Additive(scramble, 0, 10, True), 4.0, 3) - 4.0
    values = sorted(chances)
    observed = [int(np.sum(np.isclose(added, v, rtol=0, atol=1e-9))) for v in values]
    assert sum(observed) == DRAWS
    assert stats.chisquare(observed, [DRAWS * chances[v] for v in values]).pvalue > 1e-4


@pytest.mark.parametrize(("scramble", "p", "law"), [
    ({"uniform": {"min": 0.2, "max": 3}}, 0.4, stats.uniform(0.2, 2.8)),
    ({"exponential": {"mean": 2}}, 0.3, stats.expon(scale=2)),
])
def test_multiplicative_reports_truth_or_a_scaled_factor(scramble: dict, p: float, law) -> None:
    y = 7.0
    reports = _reports(Multiplicative(scramble, p, 1, 1000), y, 4)
    truth = reports == y
    assert stats.binomtest(int(truth.sum()), DRAWS, p).pvalue > 1e-4
    assert stats.kstest(reports[~truth] / y, law.cdf).pvalue > 1e-4


@pytest.mark.parametrize(("epsilon", "low", "high", "y"), [
    (1.0, 0.0, 12.345, 3.14159),    # off the grid: rounded at random, then noise
    (0.3, -2.5, 3.7123, 3.7123),    # max between grid points
])
def test_laplace_reports_follow_the_grid_law(epsilon: float, low: float, high: float,
                                             y: float) -> None:
    """Chi-square over blocks of grid positions against (1 - f) P(k - b) + f P(k - b - 1)."""
    design = Laplace(epsilon, low, high)
    g = 10.0 ** math.floor(math.log10((high - low) / 1000))
    big_g = math.ceil((high - low) / g - 1e-9)
    a = math.exp(-epsilon / big_g)
    position = (y - low) / g
    base, f = math.floor(position), position - math.floor(position)
    k = np.round((_reports(design, y, 5, 10_000) - low) / g).astype(int)
    edges = np.arange(base - 3 * big_g, base + 3 * big_g + 1, big_g // 4)
    ks = np.arange(base - 200 * big_g, base + 200 * big_g)
    law = (1 - a) / (1 + a) * ((1 - f) * a ** np.abs(ks - base) + f * a ** np.abs(ks - base - 1))
    cells = np.digitize(ks, edges)
    expected = np.bincount(cells, weights=law, minlength=len(edges) + 1)
    observed = np.bincount(np.digitize(k, edges), minlength=len(edges) + 1)
    assert stats.chisquare(observed, expected * len(k) / expected.sum()).pvalue > 1e-4


@pytest.mark.parametrize("epsilon", [0.05, 8.0])
def test_duchi_and_piecewise_reports_follow_their_laws(epsilon: float) -> None:
    low, high, y = 0.0, 30.0, 4.0
    e, x = math.exp(epsilon), 2 * y / 30 - 1
    duchi_reports = _reports(Duchi(epsilon, low, high), y, 6)
    c = (e + 1) / (e - 1)
    two = np.array([15 * (1 - c), 15 * (1 + c)])
    assert np.all(np.min(np.abs(duchi_reports[:, None] - two[None, :]), axis=1) <= 1e-9 * 15 * c)
    highs = int(np.sum(duchi_reports > 15))
    assert stats.binomtest(highs, DRAWS, 0.5 + x * (e - 1) / (2 * (e + 1))).pvalue > 1e-4
    s = math.sqrt(e)
    c = (s + 1) / (s - 1)
    left = (c + 1) / 2 * x - (c - 1) / 2
    inside = (e - s) / (2 * s + 2)

    def cdf(t: float) -> float:  # unit scale
        t = min(max(t, -c), c)
        piece = max(0.0, min(t, left + c - 1) - left)
        return (t + c - piece) * inside / e + piece * inside

    units = _reports(Piecewise(epsilon, low, high), y, 7) / 15 - 1
    assert stats.kstest(units, np.vectorize(cdf)).pvalue > 1e-4


# ---- piecewise: epsilon over its report grid ---------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 30.0, 31.0, 50.0])
def test_piecewise_epsilon_over_its_2_to_the_21_cells(epsilon: float) -> None:
    """Every grid point's chance under answers across the range: the density integrated over
    its cell, measured from -C (the cells the piece's ends fall in with exact fractions, so a
    piece of 3e-11 at epsilon 50 keeps its length).

    Before: above epsilon 30.5 the piece is narrower than an end cell, and the grid's epsilon is
    less than the density ratio's: 40.249 at epsilon 50, which was stated as 50.
    """
    grow = Fraction(math.expm1(epsilon / 2))  # s - 1, and from it everything exactly
    s = 1 + grow
    piece = 2 / grow                          # C - 1
    c = 1 + piece
    high, low = (s / (s + 1)) / piece, (1 / (s + 1)) / (c + 1)
    width = 2 * c / PIECEWISE_CELLS
    lengths = np.full(PIECEWISE_CELLS + 1, float(width))  # cell j: [(j - 1/2) w, (j + 1/2) w]
    lengths[0] = lengths[-1] = float(width / 2)           # within [0, 2C]
    logs = []
    for x in (Fraction(-1), Fraction(3, 5), Fraction(1)):
        left = (c + 1) * (x + 1) / 2
        first, last = math.floor(left / width + Fraction(1, 2)), math.floor(
            (left + piece) / width + Fraction(1, 2))
        chance = float(low) * lengths
        chance[first + 1:last] = float(high) * lengths[first + 1:last]
        for j in {first, last} | {j for j in (first - 1, last + 1) if 0 <= j <= PIECEWISE_CELLS}:
            a = max((j - Fraction(1, 2)) * width, Fraction(0))
            b = min((j + Fraction(1, 2)) * width, 2 * c)
            inside = max(Fraction(0), min(b, left + piece) - max(a, left))
            chance[j] = float(high * inside + low * (b - a - inside))
        assert math.fsum(chance) == pytest.approx(1.0, rel=1e-12)
        logs.append(np.log(chance))
    stacked = np.array(logs)
    worst = float(np.max(stacked.max(axis=0) - stacked.min(axis=0)))
    assert Piecewise(epsilon, 0, 30).privacy().epsilon == pytest.approx(worst, rel=1e-9)


# ---- planning -----------------------------------------------------------------------------------


@pytest.mark.parametrize("law", [law for law in LAWS if law.design.minimum is not None
                                 and law.design.maximum is not None], ids=lambda law:
                         law.design.name)
def test_worst_variance_is_the_largest_over_the_answers(law: Law) -> None:
    """A dense search over the answers (every whole number, or 200,001 points and the points
    half-way between Laplace's grid points) of the closed-form Var(r | y)."""
    d = law.design
    if d.integer:
        ys = np.arange(d.minimum, d.maximum + 1)
    else:
        ys = np.linspace(d.minimum, d.maximum, 200_001)
        if isinstance(d, Laplace):
            ys = np.concatenate([ys, d.minimum + d.step * (np.arange(d.steps_across) + 0.5)])
            ys = ys[ys <= d.maximum]
    dense = max(law.variance(float(y)) for y in ys)
    assert worst_variance(d) == pytest.approx(dense, rel=1e-9)
    z = stats.norm.ppf(0.975)
    assert respondents_for_margin(d, 0.5, sd=2.0) == math.ceil((z / 0.5) ** 2 * (4 + dense))


def test_duchi_on_whole_numbers_peaks_next_to_the_middle() -> None:
    """0..31: the middle, 15.5, is no answer; Var(r | y) is largest at 15 and 16."""
    design = Duchi(1.0, 0, 31, True)
    e = math.e
    c = (e + 1) / (e - 1)
    dense = max(15.5 ** 2 * (c * c - (y / 15.5 - 1) ** 2) for y in range(32))
    assert worst_variance(design) == pytest.approx(dense, rel=1e-12)


def _unit_worst(name: str, epsilon: float) -> float:
    """Largest Var(r | y) on [-1, 1]: Laplace 2 (2 / eps)^2 (the continuous mechanism: the grid
    changes it by under 0.1%), Duchi C^2 at x = 0, piecewise at x = +-1."""
    e, s = math.exp(epsilon), math.exp(epsilon / 2)
    return {"laplace": 2 * (2 / epsilon) ** 2, "duchi": ((e + 1) / (e - 1)) ** 2,
            "piecewise": 1 / (s - 1) + (s + 3) / (3 * (s - 1) ** 2)}[name]


def test_plan_compare_names_the_smallest_variance_at_every_epsilon(capsys) -> None:
    """Duchi below the crossover 1.28978 (the root of C^2 = piecewise's worst, Wang et al.),
    piecewise above; Laplace never; with --integer on 0..30 the mixture with a uniform mask
    (p = (e^eps - 1) / (e^eps - 1 + 31)) from 6.785 on."""
    import json

    from rrsite.cli import main

    crossover = optimize.brentq(lambda e: _unit_worst("duchi", e) - _unit_worst("piecewise", e),
                                0.5, 3, xtol=1e-13)
    assert crossover == pytest.approx(1.28978, abs=1e-5)

    def mixture_worst(epsilon: float) -> float:  # 31 whole numbers, mask mean 15, variance 80
        p = math.expm1(epsilon) / (math.expm1(epsilon) + 31)
        return (1 - p) * (80 + p * 15 ** 2) / p ** 2

    takeover = optimize.brentq(lambda e: mixture_worst(e) - 225 * _unit_worst("piecewise", e),
                               3, 12, xtol=1e-12)
    assert takeover == pytest.approx(6.7848, abs=1e-4)
    for epsilon in (0.1, 0.5, 1.0, 1.28, 1.3, 2.0, 5.0, 6.7, 6.9, 10.0, 20.0):
        assert main(["plan", "--range", "0,30", "--integer", "--epsilon", str(epsilon),
                     "--margin", "1", "--compare", "--format", "json"]) == 0
        result = json.loads(capsys.readouterr().out)
        worst = {name: 225 * _unit_worst(name, epsilon) for name in ("laplace", "duchi",
                                                                     "piecewise")}
        worst["mixture"] = mixture_worst(epsilon)
        expected = min(worst, key=worst.__getitem__)
        assert result["smallest_variance"] == expected, epsilon
        assert expected == ("duchi" if epsilon < crossover else "piecewise" if epsilon < takeover
                            else "mixture")
        for row in result["designs"]:
            # (the mixture's p is a float: near 1 it moves epsilon 20 by 1e-10)
            assert row["epsilon"] == pytest.approx(epsilon, rel=1e-11)


# ---- mixture-unknown: RRreg's SE against the spread over surveys -------------------------------


def test_mixture_unknown_estimate_and_se_by_simulation() -> None:
    """Groups of 120 and 80 (p 0.25 and 0.8), gamma truths, normal innocuous answers: over 4,000
    surveys the mean of pi is mu and the mean of piSE^2 the variance of pi (and piUQ likewise):
    RRreg's mix.unknown formulas, each group's variance over n_g - 1."""
    rng = np.random.default_rng(40)
    design = MixtureUnknown((0.25, 0.8))
    groups = np.repeat([1, 2], [120, 80])
    p = np.where(groups == 1, 0.25, 0.8)
    mu, innocuous_mean = 10.0, 30.0
    estimates, ses, uq, uq_ses = [], [], [], []
    for _ in range(4000):
        y = rng.gamma(2, 5, 200)
        z = np.where(rng.random(200) < p, y, rng.normal(innocuous_mean, 4, 200))
        part = fit_part(design, z, groups)
        assert part.rrreg is not None
        estimates.append(part.mean)
        ses.append(part.se ** 2)
        uq.append(part.rrreg["piUQ"])
        uq_ses.append(part.rrreg["piUQSE"] ** 2)
    for values, variances, truth in ((estimates, ses, mu), (uq, uq_ses, innocuous_mean)):
        spread = float(np.var(values, ddof=1))
        assert abs(np.mean(values) - truth) < 4.5 * math.sqrt(spread / 4000)
        assert np.mean(variances) == pytest.approx(spread, rel=0.06)
