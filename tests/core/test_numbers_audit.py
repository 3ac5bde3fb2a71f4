"""An independent audit of the number designs' privacy figures and of their samplers' chances.

Each figure is recomputed here without the code under test: the chances a sampler really gives
are read off by bisecting an injected random source (every call returns the same quantile u, so
a branch's chance is the length of the u's that take it); epsilon is the largest log-ratio of a
report's chances over pairs of answers, enumerated over the reports; delta's floor is the chance
of the reports one answer gives and another cannot, enumerated with exact fractions. Standard
library only: this file also runs in Pyodide.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from rrsite.core.numbers import (
    Additive,
    Duchi,
    Laplace,
    Mask,
    Mixture,
    Multiplicative,
    Piecewise,
)

BELOW_ONE = Fraction(1) - Fraction(1, 2 ** 60)


class Quantile(random.Random):
    """A random source answering every call with the quantile ``u`` of the uniform it draws."""

    def __init__(self, u: Fraction) -> None:
        super().__init__(0)
        self.u = u

    def random(self) -> float:
        return min(float(self.u), 1.0 - 2.0 ** -53)

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # noqa: ARG002
        low, high = (0, start) if stop is None else (start, stop)
        return low + math.floor(self.u * (high - low))

    def randint(self, a: int, b: int) -> int:
        return self.randrange(a, b + 1)


def realized_chance(event, bits: int = 400) -> Fraction:
    """The length of the u in [0, 1) for which ``event(Quantile(u))`` holds.

    The event must hold on an interval starting at 0 or ending at 1 (one branch chosen by one
    uniform, as every design here draws it): its end is found by bisection to 2^-bits.
    """
    at_bottom, at_top = event(Quantile(Fraction(0))), event(Quantile(BELOW_ONE))
    if at_bottom == at_top:
        return Fraction(int(at_bottom))
    low, high = Fraction(0), Fraction(1)  # event(low) == at_bottom, event(high) == at_top
    for _ in range(bits):
        middle = (low + high) / 2
        if event(Quantile(middle)) == at_bottom:
            low = middle
        else:
            high = middle
    return high if at_bottom else 1 - high


def first_action(design, y: float, action: str):
    return lambda rng: design.randomize(y, rng).steps[0].action == action


# ---- duchi and piecewise: the chances the sampler gives, at every epsilon up to 50 ---------------


@pytest.mark.parametrize("epsilon", [1e-6, 0.7, 8.0, 20.0, 37.0, 50.0])
def test_duchi_sampler_gives_the_papers_chances_and_its_stated_epsilon(epsilon: float) -> None:
    """P(high | x) = 1/2 + x (e^eps - 1) / (2 (e^eps + 1)) (Duchi et al. 2018), with the chances
    the sampler really gives; epsilon is the log-ratio of the realized chances at min and max.

    Before: at epsilon 37 and above P(high | min) rounded to 0 (a report of high ruled min out,
    and privacy() divided by zero); from 21 a die took 1e-9 for 0.
    """
    low, high = 3.0, 11.0
    design = Duchi(epsilon, low, high)
    e = Fraction(math.exp(epsilon))
    realized = {}
    for y in (low, 6.5, high):
        x = 2 * (Fraction(y) - Fraction(low)) / (Fraction(high) - Fraction(low)) - 1
        expected = Fraction(1, 2) + x * (e - 1) / (2 * (e + 1))
        got = realized_chance(first_action(design, y, "high"))
        assert float(got) == pytest.approx(float(expected), rel=1e-12), (y, float(got))
        realized[y] = got
    ratio = max(realized[high] / realized[low], (1 - realized[low]) / (1 - realized[high]))
    realized_epsilon = math.log1p(float(ratio - 1))
    assert realized_epsilon == pytest.approx(epsilon, rel=1e-12)
    assert design.privacy().epsilon == pytest.approx(realized_epsilon, rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 8.0, 45.0])
def test_piecewise_sampler_takes_the_tails_with_the_papers_chance(epsilon: float) -> None:
    """Wang et al. 2019: the tails with chance 1 / (e^(eps/2) + 1), for any answer.

    Before: from epsilon 41.4 a die took the tails' 1e-9 for 0, so a report outside the centre
    piece never came, and the piece (which moves with the answer) gave the answer away.
    """
    design = Piecewise(epsilon, 0, 30)
    expected = 1 / (Fraction(math.exp(epsilon / 2)) + 1)
    for y in (0.0, 12.0, 30.0):
        got = realized_chance(first_action(design, y, "tails"))
        assert float(got) == pytest.approx(float(expected), rel=1e-12), (y, float(got))


def test_no_branch_of_positive_chance_is_rounded_away() -> None:
    """A truth chance of 1 - 1e-10 or a mask value of chance 1e-11 is drawn, not taken for 0."""
    nearly = Mixture(1 - 1e-10, {"uniform": {"min": 0, "max": 30}}, 0, 30, True)
    got = realized_chance(first_action(nearly, 7, "mask"))
    assert float(got) == pytest.approx(1e-10, rel=1e-5)  # the spinner's 53 bits: 1e-16 absolute
    rare = Mask.from_spec({"values": [0, 1], "probabilities": [1e-11, 1 - 1e-11]})
    got = realized_chance(lambda rng: rare.sample(rng)[0] == 0)
    assert float(got) == pytest.approx(1e-11, rel=1e-4)


# ---- laplace: epsilon on the grid it samples -------------------------------------------------


def _laplace_log_chances(low: float, high: float, epsilon: float, y: float,
                         reports: range) -> list[float]:
    """log P(grid position k | y), written from the design's description: y rounded to the grid
    of step g (the largest power of ten at most (max - min) / 1000) at random, up with chance
    its fractional position, plus a discrete Laplace number of steps, P(k) proportional to
    a^|k|, a = exp(-epsilon / G), G = ceil((max - min) / g)."""
    step = 10.0 ** math.floor(math.log10((high - low) / 1000))
    steps = math.ceil((high - low) / step - 1e-9)
    log_a = -epsilon / steps
    position = (y - low) / step
    base = math.floor(position)
    up = position - base if position - base > 1e-9 else 0.0
    log_c = math.log((1 - math.exp(log_a)) / (1 + math.exp(log_a)))
    out = []
    for k in reports:
        near = abs(k - base) * log_a
        far = abs(k - base - 1) * log_a
        out.append(log_c + near + math.log((1 - up) + up * math.exp(far - near)))
    return out


@pytest.mark.parametrize(("epsilon", "low", "high", "integer"), [
    (1.0, 0.0, 30.0, True),        # 3000 steps of 0.01: max on the grid
    (1.0, 0.0, 12.345, False),     # 1234.5 steps of 0.01: max between two grid points
    (2.0, 0.0, 12345.0, True),     # steps of 10, a width that is not a power of ten
    (0.3, -2.5, 3.7123, False),    # 6212.3 steps of 0.001, a negative minimum
])
def test_laplace_epsilon_is_the_largest_log_ratio_on_its_grid(
    epsilon: float, low: float, high: float, integer: bool
) -> None:
    """Brute force over every report position within two widths of the range, and answers
    across it (beyond, every ratio is the one at the edge).

    Before: epsilon was the parameter even where max falls between grid points, where the
    design is a little more private (0.99960 instead of 1 on [0, 12.345]).
    """
    design = Laplace(epsilon, low, high, integer)
    steps = design.steps_across
    reports = range(-2 * steps, 3 * steps)
    answers = [low, high, low + (high - low) * 0.37, low + (high - low) * 0.9]
    if integer:
        answers = [float(round(y)) for y in answers]
    rows = [_laplace_log_chances(low, high, epsilon, y, reports) for y in answers]
    worst = max(max(column) - min(column) for column in zip(*rows, strict=True))
    assert design.privacy().epsilon == pytest.approx(worst, rel=1e-9)
    on_grid = abs((high - low) / design.step - steps) < 1e-9
    assert (worst == pytest.approx(epsilon, rel=1e-9)) == on_grid


# ---- mixture: epsilon on whole-number grids of any size ----------------------------------------


def _mixture_epsilon(p: float, chances: dict[float, float], low: int, high: int) -> float:
    """Largest log-ratio over reports of P(report | y) = p [report = y] + (1 - p) g(report)."""
    worst = 0.0
    for report in set(chances) | {float(y) for y in range(low, high + 1)}:
        column = [p * (report == y) + (1 - p) * chances.get(report, 0.0)
                  for y in range(low, high + 1)]
        if min(column) == 0:
            return math.inf
        worst = max(worst, math.log(max(column) / min(column)))
    return worst


def test_mixture_epsilon_on_a_large_grid() -> None:
    """150,001 whole numbers (beyond the old enumeration limit of 100,001): a uniform mask over
    them gives epsilon ln(1 + p n / (1 - p)), not "no epsilon" for want of a bounded range."""
    design = Mixture(0.5, {"uniform": {"min": 0, "max": 150_000}}, 0, 150_000, True)
    n = len(range(0, 150_001))
    # every report v is a grid value: (p + (1 - p) / n) under y = v, (1 - p) / n under y != v
    assert design.privacy().epsilon == pytest.approx(math.log((0.5 + 0.5 / n) / (0.5 / n)),
                                                     rel=1e-12)
    gap = Mixture(0.5, {"uniform": {"min": 1, "max": 150_000}}, 0, 150_000, True)
    assert math.isinf(gap.privacy().epsilon) and gap.privacy().delta == 0.5
    assert "never draws 0" in gap.privacy().reasons[0]


@pytest.mark.parametrize("mask", [
    {"values": [0, 1, 2, 3, 4, 5], "probabilities": [0.3, 0.1, 0.1, 0.2, 0.2, 0.1]},
    {"values": [0.5, 0, 1, 2, 3, 4, 5, 7.25],
     "probabilities": [0.2, 0.05, 0.1, 0.1, 0.15, 0.1, 0.1, 0.2]},  # values off the grid too
    {"values": [0, 1, 2, 4, 5, 2.5]},                               # 3 never drawn
    {"values": [0, 1, 2, 3, 4, 5], "probabilities": [0.2, 0.2, 0.2, 0.0, 0.2, 0.2]},  # chance 0
    {"uniform": {"min": -3, "max": 8}},                             # wider than the grid
    {"uniform": {"min": 1, "max": 8}},                              # misses 0
])
def test_mixture_epsilon_by_enumeration(mask: dict) -> None:
    design = Mixture(0.35, mask, 0, 5, True)
    if "values" in mask:
        given = mask.get("probabilities", [1 / len(mask["values"])] * len(mask["values"]))
        chances = {float(v): q for v, q in zip(mask["values"], given, strict=True) if q > 0}
    else:
        a, b = mask["uniform"]["min"], mask["uniform"]["max"]
        chances = {float(v): 1 / (b - a + 1) for v in range(a, b + 1)}
    expected = _mixture_epsilon(0.35, chances, 0, 5)
    got = design.privacy()
    if math.isinf(expected):
        assert math.isinf(got.epsilon) and got.delta == 0.35
    else:
        assert got.epsilon == pytest.approx(expected, rel=1e-12) and got.delta == 0.0


# ---- delta where there is no epsilon ---------------------------------------------------------


def _interval_outside(a: float, b: float, c: float, d: float) -> float:
    """Length of [a, b] outside [c, d]."""
    return (b - a) - max(0.0, min(b, d) - max(a, c))


@pytest.mark.parametrize(("scramble", "p", "low", "high", "integer"), [
    ({"uniform": {"min": 0.5, "max": 1.5}}, 0.3, 10, 40, False),
    ({"uniform": {"min": 0.5, "max": 1.5}}, 0.3, 10, 12, False),
    ({"uniform": {"min": 0.2, "max": 3.0}}, 0.0, -40, -10, False),
    ({"uniform": {"min": 0.8, "max": 1.25}}, 0.25, -12, -10, True),
    ({"uniform": {"min": 0.8, "max": 1.25}}, 0.0, 100, 101, True),
    ({"exponential": {"mean": 2}}, 0.3, 1, 1000, False),
    ({"exponential": {"mean": 2}}, 0.0, -9, -1, False),
    ({"uniform": {"min": 0.5, "max": 1.5}}, 0.3, 0, 10, False),
    ({"uniform": {"min": 0.9, "max": 1.1}}, 0.0, 0.01, 0.0102, False),  # near 0, barely apart
])
def test_multiplicative_delta_floor_by_enumeration(
    scramble: dict, p: float, low: float, high: float, integer: bool
) -> None:
    """Delta no epsilon can lower: the largest chance, over two answers, of the reports the first
    gives and the second cannot: the truth sent as it is (chance p) and the scrambled reports
    outside the other's scaled range (chance 0 for an exponential factor).

    Before: p > 0 gave delta = p whatever the factor (0.3 instead of 1 for [10, 40]), and a range
    of negative answers gave a negative delta (-0.375).
    """
    design = Multiplicative(scramble, p, low, high, integer)
    answers = ([float(y) for y in range(int(low), int(high) + 1)] if integer
               else [low + (high - low) * i / 200 for i in range(201)])
    worst = 0.0
    for y in answers:
        for other in answers:
            if other == y:
                continue
            if y == 0:  # 0 is always reported as 0, which no other answer gives
                worst = 1.0
                continue
            if "uniform" in scramble:
                a, b = scramble["uniform"]["min"], scramble["uniform"]["max"]
                mine, theirs = sorted((y * a, y * b)), sorted((other * a, other * b))
                outside = _interval_outside(*mine, *theirs) / (mine[1] - mine[0])
            else:  # the reports of any answer of the same sign cover the same half-line
                outside = 0.0
            worst = max(worst, p + (1 - p) * outside)
    assert design.privacy().delta == pytest.approx(worst, rel=1e-9, abs=1e-12)
    assert 0.0 <= design.privacy().delta <= 1.0
    assert math.isinf(design.privacy().epsilon)


def _additive_delta(values: list[float], chances: list[float], low: int, high: int) -> float:
    """Enumerate whole-number answer pairs and their reports y + s, added as the device adds them
    (in floats: 1 + 0.1 and 0 + 1.1 are the same report)."""
    draws = [(float(v), q) for v, q in zip(values, chances, strict=True) if q > 0]
    worst = 0.0
    for y in range(low, high + 1):
        mine = {y + s: q for s, q in draws}
        for other in range(low, high + 1):
            if other != y:
                theirs = {other + s for s, _ in draws}
                worst = max(worst, math.fsum(q for z, q in mine.items() if z not in theirs))
    return worst


@pytest.mark.parametrize(("values", "chances", "low", "high"), [
    ([0.1, 1.1, 2.1, 3.1, 4.1, 5.1, 6.1, 7.1], [1 / 8] * 8, 0, 3),  # before: 0.875, not 0.375
    ([-2, 0.5, 4], [0.2, 0.5, 0.3], 0, 10),
    ([0, 1, 2, 3, 5, 8], [0.1, 0.3, 0.2, 0.1, 0.2, 0.1], 0, 2),
    ([0, 1, 2, 3], [0.5, 0.0, 0.25, 0.25], 0, 1),
])
def test_additive_list_delta_by_enumeration(values: list, chances: list, low: int,
                                            high: int) -> None:
    design = Additive({"values": values, "probabilities": chances}, low, high, True)
    assert design.privacy().delta == pytest.approx(_additive_delta(values, chances, low, high),
                                                   rel=1e-12)


def test_additive_whole_number_uniform_delta_on_a_large_grid() -> None:
    """100,002 whole numbers (the old limit was 100,001, above which delta was said to be 1):
    with a uniform scramble over -150,000..150,000 the answers d apart share all but d of the
    300,001 reports; counted report by report for a few d, the farthest pair included."""
    design = Additive({"uniform": {"min": -150_000, "max": 150_000}}, 0, 100_001, True)
    worst = 0
    for d in (1, 777, 100_001):
        worst = max(worst, sum(1 for s in range(-150_000, 150_001)
                               if not -150_000 <= s - d <= 150_000))
    assert design.privacy().delta == pytest.approx(worst / 300_001, rel=1e-12)


# ---- reports the design cannot give ---------------------------------------------------------


def test_additive_reports_off_the_lattice_are_impossible() -> None:
    """With whole-number answers and a list of added numbers, a report is y + s for some y in
    range and some s drawn; enumerated exactly, every other number is impossible."""
    values, chances = [-2, 0.5, 4, 7.25], [0.25, 0.25, 0.5, 0.0]
    design = Additive({"values": values, "probabilities": chances}, 0, 6, True)
    possible = {Fraction(y) + Fraction(v) for y in range(7)
                for v, q in zip(values, chances, strict=True) if q > 0}
    candidates = {z + Fraction(k, 4) for z in possible for k in range(-3, 4)}
    for z in sorted(candidates):
        assert (design.impossible(float(z)) is None) == (z in possible), z
    uniform = Additive({"uniform": {"min": -3, "max": 4}}, 0, 6, True)
    possible = {Fraction(y + s) for y in range(7) for s in range(-3, 5)}
    for z in sorted({z + Fraction(k, 4) for z in possible for k in range(-5, 6)}):
        assert (uniform.impossible(float(z)) is None) == (z in possible), z


def test_mixture_reports_of_a_value_never_drawn_are_impossible() -> None:
    """A value the mask lists with chance 0, outside the answers, is never reported."""
    design = Mixture(0.5, {"values": [0, 40, 50.5], "probabilities": [0.5, 0.0, 0.5]}, 0, 30,
                     True)
    possible = {float(y) for y in range(31)} | {0.0, 50.5}
    for z in sorted(possible | {40.0, 12.5, 31.0, -1.0, 50.0}):
        assert (design.impossible(z) is None) == (z in possible), z


def test_mixture_unknown_delta_is_the_chance_the_truth_is_sent() -> None:
    """Reports (group, number) enumerated for answers 0..3 under innocuous laws off the answers
    and on them: the largest chance, under one answer, of the reports another answer cannot give
    is, for the worst law, probability p1 + (1 - probability) p2 (before: max(p), 0.8 here)."""
    from rrsite.core.numbers import MixtureUnknown

    chance, p = 0.4, (0.3, 0.8)
    design = MixtureUnknown(p, chance, 0, 3, True)
    groups = ((1, chance, p[0]), (2, 1 - chance, p[1]))
    laws = [{0.5: 0.5, 7.25: 0.5}, {1.0: 0.2, 9.0: 0.8}, {0.0: 0.25, 1.0: 0.25, 2.0: 0.25,
                                                          3.0: 0.25}]
    worst = 0.0
    for law in laws:
        def row(y: int, law: dict = law) -> dict:
            out: dict = {}
            for g, share, truth in groups:
                out[(g, float(y))] = out.get((g, float(y)), 0.0) + share * truth
                for z, q in law.items():
                    out[(g, z)] = out.get((g, z), 0.0) + share * (1 - truth) * q
            return out
        for y in range(4):
            for other in range(4):
                if other != y:
                    theirs = row(other)
                    worst = max(worst, math.fsum(q for r, q in row(y).items()
                                                 if theirs.get(r, 0.0) == 0.0))
    assert worst == pytest.approx(chance * p[0] + (1 - chance) * p[1], rel=1e-12)
    assert design.privacy().delta == pytest.approx(worst, rel=1e-12)
    assert math.isinf(design.privacy().epsilon)
