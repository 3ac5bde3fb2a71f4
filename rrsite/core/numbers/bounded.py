"""Bounded-range local differential privacy for a number on ``[min, max]``, the value clipped.

``laplace`` (discrete Laplace noise on a fixed grid), ``duchi`` (Duchi, Jordan & Wainwright 2018:
one of two values with a chance linear in the truth) and ``piecewise`` (Wang et al. 2019: a
report near the truth with a high density, anywhere else with a low one, snapped to a grid of
2^21 cells). Each states the epsilon of the grid it actually samples.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from ..base import Step, secure_random
from ..errors import DesignError
from ..privacy import Privacy
from .base import NumberDesign, NumberOutcome, number_design
from .masks import bernoulli, choose, discrete_laplace, number_value

#: Cells of the report grid of the piecewise mechanism (over its whole support).
PIECEWISE_CELLS = 1 << 21


@number_design
class Bounded(NumberDesign):
    """Bounded-range LDP: needs min < max and epsilon > 0; the value is clipped to [min, max]."""

    epsilon: float = 1.0

    def __post_init__(self) -> None:
        self._init_bounded()

    def _init_bounded(self) -> None:
        self._init_range()
        if self.minimum is None or self.maximum is None:
            raise DesignError(f"design {self.name} needs min and max: the range its privacy "
                              "covers")
        epsilon = number_value("epsilon", self.epsilon)
        if not 0 < epsilon <= 50:
            raise DesignError(f"epsilon must be above 0 and at most 50, got {self.epsilon!r}")
        object.__setattr__(self, "epsilon", epsilon)

    @property
    def low(self) -> float:
        """Min."""
        assert self.minimum is not None
        return self.minimum

    @property
    def width(self) -> float:
        """Max - min."""
        assert self.minimum is not None and self.maximum is not None
        return self.maximum - self.minimum

    def params(self) -> dict[str, Any]:
        """Epsilon."""
        return {"epsilon": self.epsilon}

    def clip(self, y: float) -> float:
        """Y in [min, max]."""
        assert self.minimum is not None and self.maximum is not None
        return min(max(y, self.minimum), self.maximum)

    def unit(self, y: float) -> float:
        """Y mapped to [-1, 1]."""
        return 2.0 * (self.clip(y) - self.low) / self.width - 1.0


@dataclass(frozen=True)
class Laplace(Bounded):
    """The Laplace mechanism on a grid: report = round(y) + g K, K discrete Laplace.

    The grid step g is the largest power of ten at most (max - min) / 1000, and y is rounded to
    a grid point at random (up or down, unbiased). K has P(k) proportional to
    exp(-|k| epsilon / G), G = ceil((max - min) / g): two answers differ by at most G steps, so
    the design is epsilon-DP (with the exact epsilon of the float stored). Var(report | y) =
    g^2 (2 a / (1 - a)^2 + f (1 - f)), a = exp(-epsilon / G), f the fractional grid position of y
    (0 on the grid: whole numbers when g divides 1).
    """

    name: ClassVar[str] = "laplace"
    @property
    def step(self) -> float:
        """The grid step g."""
        return 10.0 ** math.floor(math.log10(self.width / 1000.0))

    @property
    def decimals(self) -> int:
        """Decimal places of the grid."""
        return max(0, -round(math.log10(self.step)))

    @property
    def steps_across(self) -> int:
        """G: grid steps across [min, max]."""
        return math.ceil(self.width / self.step - 1e-9)

    @property
    def scale(self) -> Fraction:
        """The discrete Laplace scale in grid steps, G / epsilon, exactly."""
        return Fraction(self.steps_across) / Fraction(self.epsilon)

    def _alpha(self) -> float:
        return math.exp(-self.epsilon / self.steps_across)

    def grid_point(self, k: int) -> float:
        """Min + k g, rounded to the grid's decimals (a function of k only)."""
        return self.low + round(k * self.step, self.decimals)

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """Round to the grid at random, add discrete Laplace steps."""
        y = self.check_truth(truth)
        rng = rng or secure_random()
        position = (self.clip(y) - self.low) / self.step
        base = math.floor(position)
        fraction = position - base
        if fraction > 1e-9 and bernoulli(Fraction(fraction), rng):
            base += 1
        noise = discrete_laplace(self.scale, rng)
        report = self.grid_point(base + noise)
        drawn = round(noise * self.step, self.decimals)
        used = self.grid_point(base)
        return NumberOutcome(report, drawn, "noise", (Step("draw", repr(drawn), "laplace"),),
                             used=used, rounded=used if used != y else None)

    def linear(self) -> tuple[float, float]:
        """(0, 1): unbiased for y in [min, max]."""
        return 0.0, 1.0

    def noise_variance(self) -> float:
        """Var of the added noise: g^2 2 a / (1 - a)^2."""
        alpha = self._alpha()
        return self.step ** 2 * 2.0 * alpha / (1.0 - alpha) ** 2

    def variance_coefficients(self) -> tuple[float, float, float]:
        """(noise variance, 0, 0): exact for answers on the grid (add the rounding otherwise)."""
        return self.noise_variance(), 0.0, 0.0

    def report_variance(self, y: float) -> float:
        """Noise variance plus the random rounding's g^2 f (1 - f)."""
        position = (self.clip(y) - self.low) / self.step
        fraction = position - math.floor(position)
        if fraction < 1e-9 or fraction > 1 - 1e-9:
            fraction = 0.0
        return self.noise_variance() + self.step ** 2 * fraction * (1 - fraction)

    def privacy(self) -> Privacy:
        """Ln of the largest ratio of a report's chances under two answers.

        min and max lie (G - 1 + f) steps apart, f in (0, 1] (f = 1 when the width is a whole
        number of steps): max is rounded up to G with chance f, else down to G - 1. Far above
        both, the ratio of the chances is f a^-G + (1 - f) a^-(G - 1), a = e^-(eps / G), the
        largest of any report and any pair of answers (the rounded positions' likelihood ratio
        grows with the report): epsilon + ln(1 - (1 - f)(1 - a)), which is epsilon (from the
        exact scale G / epsilon) when f = 1 and slightly less otherwise (0.99960 for epsilon 1
        on [0, 12.345]).
        """
        epsilon = float(Fraction(self.steps_across) / self.scale)
        top = self.width / self.step  # max's grid position, as randomize computes it
        short = min(max(self.steps_across - top, 0.0), 1.0)  # 1 - f
        if short <= 1e-9:  # randomize puts max on the grid
            return Privacy(epsilon, 0.0)
        return Privacy(epsilon + math.log1p(short * math.expm1(-epsilon / self.steps_across)),
                       0.0)

    def impossible(self, report: float) -> str | None:
        """Any grid point is possible."""
        why = super().impossible(report)
        if why is not None:
            return why
        k = (report - self.low) / self.step
        if abs(k - round(k)) > 1e-6:
            return f"{report:g} is not on the design's grid (steps of {self.step:g} from " \
                   f"{self.low:g})"
        return None


@dataclass(frozen=True)
class Duchi(Bounded):
    """Duchi, Jordan & Wainwright 2018 (one dimension): report one of two values.

    On [-1, 1]: +C with chance 1/2 + x (e^eps - 1) / (2 (e^eps + 1)), else -C,
    C = (e^eps + 1) / (e^eps - 1); E = x, Var = C^2 - x^2. Mapped back to [min, max] units.
    """

    name: ClassVar[str] = "duchi"
    @property
    def c(self) -> float:
        """C = (e^eps + 1) / (e^eps - 1)."""
        return (math.exp(self.epsilon) + 1) / math.expm1(self.epsilon)

    def chances(self, y: float) -> tuple[float, float]:
        """(P(high | y), P(low | y)), each computed on its own.

        They are (e^eps (1 + x) + 1 - x) / (2 (e^eps + 1)) and (e^eps (1 - x) + 1 + x) / (2
        (e^eps + 1)). At the ends of the range the smaller is 1 / (e^eps + 1), which
        1/2 - x (e^eps - 1) / (2 (e^eps + 1)) loses to rounding from epsilon 20 on (0 from 37).
        """
        e = math.exp(self.epsilon)
        x = self.unit(y)
        denominator = 2 * (e + 1)
        return (e * (1 + x) + (1 - x)) / denominator, (e * (1 - x) + (1 + x)) / denominator

    def chance_high(self, y: float) -> float:
        """P(report the high value | y) = 1/2 + x (e^eps - 1) / (2 (e^eps + 1))."""
        return self.chances(y)[0]

    def values(self) -> tuple[float, float]:
        """The two reports, in the question's units."""
        half = self.width / 2.0
        return self.low + half * (1 - self.c), self.low + half * (1 + self.c)

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """A spinner picks the high or the low report."""
        y = self.check_truth(truth)
        branch, step = choose(("high", "low"), self.chances(y), rng or secure_random())
        report = self.values()[1 - branch]
        return NumberOutcome(report, None, "duchi", (step,), used=self.clip(y))

    def linear(self) -> tuple[float, float]:
        """(0, 1)."""
        return 0.0, 1.0

    def variance_coefficients(self) -> tuple[float, float, float]:
        """(width/2)^2 (C^2 - x^2) with x = 2 (y - min) / width - 1, as a polynomial in y."""
        half = self.width / 2.0
        centre = self.low + half  # x = (y - centre) / half
        c2 = self.c ** 2
        # half^2 C^2 - (y - centre)^2
        return half * half * c2 - centre * centre, 2 * centre, -1.0

    def privacy(self) -> Privacy:
        """Ln of the largest ratio of the two reports' chances over the extreme answers."""
        assert self.minimum is not None and self.maximum is not None
        top_high, top_low = self.chances(self.maximum)
        bottom_high, bottom_low = self.chances(self.minimum)
        # each ratio is 1 + (difference of the chances) / (the smaller chance), and the difference
        # (x_max - x_min) (e^eps - 1) / (2 (e^eps + 1)) is computed without cancelling
        change = (self.unit(self.maximum) - self.unit(self.minimum)) * math.expm1(
            self.epsilon) / (2 * (math.exp(self.epsilon) + 1))
        return Privacy(math.log1p(change / min(bottom_high, top_low)), 0.0)

    def impossible(self, report: float) -> str | None:
        """One of the two values."""
        why = super().impossible(report)
        if why is not None:
            return why
        tolerance = 1e-9 * max(1.0, abs(report), self.width * self.c)
        if any(abs(report - value) <= tolerance for value in self.values()):
            return None
        low, high = self.values()
        return f"{report:g} is neither of duchi's two reports, {low:.10g} and {high:.10g}"


@dataclass(frozen=True)
class Piecewise(Bounded):
    """The piecewise mechanism (Wang et al. 2019), reports snapped to a fixed grid.

    On [-1, 1] with s = e^(eps/2), C = (s + 1) / (s - 1): with chance s / (s + 1) a uniform
    number in [l(x), r(x)] = [(C + 1) x / 2 - (C - 1) / 2, l(x) + C - 1], else uniform on the
    rest of [-C, C]. E = x, Var = x^2 / (s - 1) + (s + 3) / (3 (s - 1)^2). The density is
    e^eps times higher on [l, r] than outside. The report is snapped to the nearest of
    PIECEWISE_CELLS + 1 equally spaced points over [-C, C] (a function of the cell only); the
    snapping moves the mean and variance by at most the grid's 2C / 2^21.
    """

    name: ClassVar[str] = "piecewise"
    @property
    def s(self) -> float:
        """e^(eps / 2)."""
        return math.exp(self.epsilon / 2)

    @property
    def c(self) -> float:
        """C = (s + 1) / (s - 1)."""
        return (self.s + 1) / math.expm1(self.epsilon / 2)

    def densities(self) -> tuple[float, float]:
        """(density on [l, r], density elsewhere) on the [-C, C] scale, from the device's draw.

        The centre piece has length C - 1 and chance s / (s + 1); the tails length C + 1 and
        chance 1 / (s + 1).
        """
        s, grow = self.s, math.expm1(self.epsilon / 2)
        # C - 1 = 2 / (s - 1) and C + 1 = 2 s / (s - 1), without C - 1's cancellation
        return (s / (s + 1)) / (2 / grow), (1 / (s + 1)) / (2 * s / grow)

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """Pick the centre piece or the tails, then a uniform point in it, snapped to the grid."""
        y = self.check_truth(truth)
        rng = rng or secure_random()
        x = self.unit(y)
        c = self.c
        left = (c + 1) / 2 * x - (c - 1) / 2
        right = left + c - 1
        branch, step = choose(("centre", "tails"), (self.s / (self.s + 1), 1 / (self.s + 1)),
                              rng)
        if branch == 0:
            point = left + (right - left) * rng.random()
        else:
            outside = (left + c) + (c - right)
            u = outside * rng.random()
            point = -c + u if u < left + c else right + (u - (left + c))
        cell = round((point + c) / (2 * c) * PIECEWISE_CELLS)
        snapped = -c + 2 * c * cell / PIECEWISE_CELLS
        report = self.low + (snapped + 1) * self.width / 2
        return NumberOutcome(report, None, "piecewise", (step,), used=self.clip(y))

    def linear(self) -> tuple[float, float]:
        """(0, 1)."""
        return 0.0, 1.0

    def variance_coefficients(self) -> tuple[float, float, float]:
        """(width/2)^2 (x^2 / (s - 1) + (s + 3) / (3 (s - 1)^2)) as a polynomial in y."""
        half = self.width / 2
        centre = self.low + half
        a = 1 / (self.s - 1)
        b = (self.s + 3) / (3 * (self.s - 1) ** 2)
        # half^2 b + a (y - centre)^2
        return half * half * b + a * centre * centre, -2 * a * centre, a

    def privacy(self) -> Privacy:
        """Ln of the largest ratio of a grid point's chances under two answers.

        A grid cell's chance is the low density times its length plus (high - low) times its
        overlap with the centre piece; the piece can cover a cell or miss it, so the ratio is
        1 + (high / low - 1) min(1, (C - 1) / cell), largest for the half-length cells at the
        ends (C / 2^21). That is e^eps while the piece (C - 1 = 2 / (s - 1)) covers an end cell,
        up to epsilon 2 ln(2^22 - 1) = 30.50; above, the piece fits inside one cell and the
        grid's epsilon is ln(1 + 2^22 (s - 1)) (40.25 at epsilon 50).
        """
        piece = 2 / math.expm1(self.epsilon / 2)
        end_cell = self.c / PIECEWISE_CELLS
        # high / low - 1 = s^2 - 1 (densities), without the cancellation
        return Privacy(math.log1p(math.expm1(self.epsilon) * min(1.0, piece / end_cell)), 0.0)

    def support(self) -> tuple[float, float]:
        """[min + (1 - C) width / 2, min + (1 + C) width / 2]."""
        half = self.width / 2
        return self.low + half * (1 - self.c), self.low + half * (1 + self.c)

    def impossible(self, report: float) -> str | None:
        """Within the support."""
        why = super().impossible(report)
        if why is not None:
            return why
        low, high = self.support()
        slack = 1e-9 * max(1.0, abs(low), abs(high))
        if low - slack <= report <= high + slack:
            return None
        return f"{report:g} is outside piecewise's reports, [{low:.10g}, {high:.10g}]"
