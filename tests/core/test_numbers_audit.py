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
    Duchi,
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
