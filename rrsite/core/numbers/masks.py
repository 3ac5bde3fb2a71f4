"""The distributions a number design draws on the device, and the exact samplers behind them.

A mask or scrambling distribution (:class:`Mask`) is ``{"normal": {"mean", "sd"}}``,
``{"exponential": {"mean"}}``, ``{"uniform": {"min", "max"}}`` (whole numbers when the question
takes whole numbers) or ``{"values": [...], "probabilities": [...]}``. The discrete Laplace noise
is drawn with integer arithmetic only (Canonne, Kamath & Steinke 2020), so no float rounding can
leak the input (Mironov 2012); reports go on a short decimal grid, rounded at random without bias,
so the page shows the arithmetic exactly as it was done.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..base import Step, check_probability, die_faces, draw
from ..errors import DesignError


def number_value(name: str, value: object) -> float:
    """``value`` as a finite float, or raise naming the parameter."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DesignError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise DesignError(f"{name} must be a finite number, got {value!r}")
    return number


# --------------------------------------------------------------------------------------------
# Distributions drawn on the device


@dataclass(frozen=True)
class Mask:
    """A known distribution the device draws from: normal, exponential, uniform or a list.

    ``integer``: a uniform draws whole numbers (the question takes whole numbers).
    """

    kind: str
    a: float = 0.0  # normal mean, exponential mean, uniform min
    b: float = 0.0  # normal sd, uniform max
    values: tuple[float, ...] = ()
    probabilities: tuple[float, ...] = ()
    integer: bool = False

    @classmethod
    def from_spec(cls, spec: object, name: str = "mask", integer: bool = False) -> Mask:
        """Read ``{"normal": {...}}`` and the other forms; errors name ``name`` and the problem."""
        forms = ("normal: {mean, sd}", "exponential: {mean}", "uniform: {min, max}",
                 "values: [...] with probabilities: [...]")
        if not isinstance(spec, Mapping) or not spec:
            raise DesignError(f"{name} must be one of {'; '.join(forms)}, got {spec!r}")
        keys = set(spec)
        if "values" in keys:
            if keys - {"values", "probabilities"}:
                raise DesignError(f"{name}: values takes probabilities only, got "
                                  f"{sorted(keys - {'values', 'probabilities'})[0]!r}")
            raw = spec["values"]
            if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw:
                raise DesignError(f"{name}: values must be a non-empty list of numbers")
            values = tuple(number_value(f"{name}: each value", v) for v in raw)
            if len(set(values)) != len(values):
                raise DesignError(f"{name}: values must differ from each other")
            probs_raw = spec.get("probabilities")
            if probs_raw is None:
                probs = tuple(1.0 / len(values) for _ in values)
            else:
                if (not isinstance(probs_raw, Sequence) or isinstance(probs_raw, str)
                        or len(probs_raw) != len(values)):
                    raise DesignError(f"{name}: probabilities must be a list of {len(values)} "
                                      "probabilities, one per value")
                probs = tuple(check_probability(f"{name}: each probability", q)
                              for q in probs_raw)
                if abs(sum(probs) - 1.0) > 1e-9:
                    raise DesignError(f"{name}: probabilities must add up to 1, got "
                                      f"{sum(probs):.10g}")
            return cls("values", values=values, probabilities=probs, integer=integer)
        if len(keys) != 1:
            raise DesignError(f"{name} must have exactly one of normal, exponential, uniform, "
                              f"values; got {sorted(keys)}")
        kind = next(iter(keys))
        params = spec[kind]
        needed = {"normal": ("mean", "sd"), "exponential": ("mean",),
                  "uniform": ("min", "max")}.get(kind)
        if needed is None:
            raise DesignError(f"{name}: unknown distribution {kind!r}; use one of "
                              f"{'; '.join(forms)}")
        if not isinstance(params, Mapping):
            raise DesignError(f"{name}: {kind} needs {{{', '.join(needed)}}}, got {params!r}")
        unknown = sorted(set(params) - set(needed))
        if unknown:
            raise DesignError(f"{name}: {kind} takes {', '.join(needed)}; unknown {unknown[0]!r}")
        for key in needed:
            if key not in params:
                raise DesignError(f"{name}: {kind} needs {key}")
        got = [number_value(f"{name}: {kind} {key}", params[key]) for key in needed]
        if kind == "normal":
            if got[1] <= 0:
                raise DesignError(f"{name}: normal sd must be above 0, got {got[1]:g}")
            return cls("normal", got[0], got[1])
        if kind == "exponential":
            if got[0] <= 0:
                raise DesignError(f"{name}: exponential mean must be above 0, got {got[0]:g}")
            return cls("exponential", got[0])
        low, high = got
        if high <= low:
            raise DesignError(f"{name}: uniform max ({high:g}) must be above min ({low:g})")
        if integer and (low != int(low) or high != int(high)):
            raise DesignError(f"{name}: uniform min and max must be whole numbers for a question "
                              f"that takes whole numbers, got {low:g} and {high:g}")
        return cls("uniform", low, high, integer=integer)

    def spec(self) -> dict[str, Any]:
        """The survey/manifest form."""
        if self.kind == "normal":
            return {"normal": {"mean": self.a, "sd": self.b}}
        if self.kind == "exponential":
            return {"exponential": {"mean": self.a}}
        if self.kind == "uniform":
            return {"uniform": {"min": self.a, "max": self.b}}
        return {"values": list(self.values), "probabilities": list(self.probabilities)}

    @property
    def discrete(self) -> bool:
        """Finitely many values (a list, or a uniform over whole numbers)."""
        return self.kind == "values" or (self.kind == "uniform" and self.integer)

    def pmf(self) -> dict[float, float]:
        """Value -> probability, for a discrete distribution."""
        if self.kind == "values":
            return dict(zip(self.values, self.probabilities, strict=True))
        if self.kind == "uniform" and self.integer:
            count = int(self.b) - int(self.a) + 1
            return {float(v): 1.0 / count for v in range(int(self.a), int(self.b) + 1)}
        raise DesignError(f"a {self.kind} distribution has no probability list")

    def draws(self, value: float) -> bool:
        """Whether ``value`` is a possible draw of a discrete distribution.

        To 1e-9 relative (for numbers read back from text), without listing a long uniform.
        """
        if self.kind == "uniform" and self.integer:
            return self.a <= value <= self.b and value == int(value)
        return any(q > 0 and abs(value - v) <= 1e-9 * max(1.0, abs(v))
                   for v, q in zip(self.values, self.probabilities, strict=True))

    def whole_number_chances(self, low: int, high: int) -> tuple[int | None, float]:
        """How a discrete distribution covers the whole numbers low..high.

        (The first one it never draws, or None; the smallest chance it gives one of them.)
        """
        if self.kind == "uniform" and self.integer:
            if self.a > low:
                return low, 0.0
            if self.b < high:
                return int(self.b) + 1, 0.0
            return None, 1.0 / (int(self.b) - int(self.a) + 1)
        chances: dict[int, float] = {}
        for v, q in zip(self.values, self.probabilities, strict=True):
            if q > 0 and v == int(v):
                chances[int(v)] = q
        for y in range(low, high + 1):  # stops at the first gap: at most len(values) + 1 steps
            if y not in chances:
                return y, 0.0
        return None, min(chances[y] for y in range(low, high + 1))

    @property
    def mean(self) -> float:
        """E[draw]."""
        if self.kind in ("normal", "exponential"):
            return self.a
        if self.kind == "uniform":
            return (self.a + self.b) / 2.0
        return math.fsum(v * q for v, q in zip(self.values, self.probabilities, strict=True))

    @property
    def variance(self) -> float:
        """Var(draw)."""
        if self.kind == "normal":
            return self.b ** 2
        if self.kind == "exponential":
            return self.a ** 2
        if self.kind == "uniform":
            width = self.b - self.a
            return (width * (width + 2.0)) / 12.0 if self.integer else width ** 2 / 12.0
        mean = self.mean
        return math.fsum(q * (v - mean) ** 2
                         for v, q in zip(self.values, self.probabilities, strict=True))

    @property
    def lowest(self) -> float:
        """The smallest possible draw (-inf for a normal)."""
        if self.kind == "normal":
            return -math.inf
        if self.kind == "exponential":
            return 0.0
        if self.kind == "uniform":
            return self.a
        return min(v for v, q in zip(self.values, self.probabilities, strict=True) if q > 0)

    @property
    def highest(self) -> float:
        """The largest possible draw (inf for a normal or exponential)."""
        if self.kind in ("normal", "exponential"):
            return math.inf
        if self.kind == "uniform":
            return self.b
        return max(v for v, q in zip(self.values, self.probabilities, strict=True) if q > 0)

    def rounding_variance(self, step: float) -> float:
        """What rounding a draw at random (unbiased) to a multiple of ``step`` adds to Var.

        step^2 E[f (1 - f)], f the draw's fractional position on the grid; 0 for a list or
        whole numbers (not rounded). Uniform: exact, from the integral of f (1 - f) over the
        whole and partial grid cells. Normal and exponential: the Fourier series
        f (1 - f) = 1/6 - sum_m cos(2 pi m f) / (pi m)^2 against the draw's characteristic
        function at 2 pi m / step (1/6 when the draw spreads over many cells).
        """
        if self.discrete:
            return 0.0
        if self.kind == "uniform":
            def integral(x: float) -> float:  # of f (1 - f) over (-inf, x], up to a constant
                cells = math.floor(x / step)
                f = x / step - cells
                return step * (cells / 6.0 + f * f / 2.0 - f ** 3 / 3.0)

            mean = (integral(self.b) - integral(self.a)) / (self.b - self.a)
            return step * step * mean
        total = 0.0
        for m in range(1, 200_001):
            t = 2.0 * math.pi * m / step
            if self.kind == "normal":
                real = math.cos(self.a * t) * math.exp(-0.5 * (self.b * t) ** 2)
            else:  # exponential
                real = 1.0 / (1.0 + (self.a * t) ** 2)
            term = real / (math.pi * m) ** 2
            total += term
            if abs(term) < 1e-17 and m > 8:
                break
        return step * step * (1.0 / 6.0 - total)

    def describe(self) -> str:
        """A short phrase for people."""
        if self.kind == "normal":
            return f"normal with mean {self.a:g} and sd {self.b:g}"
        if self.kind == "exponential":
            return f"exponential with mean {self.a:g}"
        if self.kind == "uniform":
            whole = "whole numbers " if self.integer else ""
            return f"uniform over {whole}{self.a:g} to {self.b:g}"
        return "one of " + ", ".join(f"{v:g}" for v in self.values)

    def sample(self, rng: random.Random) -> tuple[float, Step]:
        """One draw and its transcript step (device "draw", outcome the number)."""
        if self.kind == "normal":
            value = rng.gauss(self.a, self.b)
        elif self.kind == "exponential":
            value = rng.expovariate(1.0 / self.a)
        elif self.kind == "uniform" and self.integer:
            value = float(rng.randint(int(self.a), int(self.b)))
        elif self.kind == "uniform":
            value = self.a + (self.b - self.a) * rng.random()
        else:
            labels = tuple(f"{v:g}" for v in self.values)
            index, step = draw(labels, self.probabilities, rng)
            return self.values[index], step
        return value, Step("draw", repr(value), self.kind)


# --------------------------------------------------------------------------------------------
# Exact samplers with integer arithmetic (Canonne, Kamath & Steinke 2020, algorithms 1 and 2)


def choose(actions: tuple[str, str], chances: tuple[float, float],
           rng: random.Random) -> tuple[int, Step]:
    """Branch 0 or 1 with exactly ``chances``.

    The two chances are computed on their own, so the smaller keeps its digits even when it is
    e^-50, where 1 - the larger would round to 0.

    A fair coin or die where the chances are exactly its faces' (1/2 at the middle of duchi's
    range); otherwise a spinner read to the exact binary fraction of the smaller chance, so the
    rarer branch happens with exactly that float's probability. (:func:`draw`'s spinner has 53
    bits: it would give a chance of e^-50 as 2^-53, and never give the branch whose chance is
    left when the other's rounds to 1.)
    """
    first, second = chances
    counts = die_faces((first, second))
    if counts is not None and all(c / sum(counts) == w for c, w in zip(counts, chances,
                                                                      strict=True)):
        return draw(actions, chances, rng)
    rare = 0 if first <= second else 1
    q = Fraction(chances[rare])
    spin = rng.randrange(q.denominator)
    index = rare if spin < q.numerator else 1 - rare
    # shown as a spinner in [0, 1) that picks branch 0 below the first chance
    shown = spin if rare == 0 else q.denominator - 1 - spin
    return index, Step("spinner", f"{shown / q.denominator:.4f}", actions[index], 0,
                       ((actions[0], first), (actions[1], second)))


def bernoulli(q: Fraction, rng: random.Random) -> bool:
    """True with probability exactly ``q`` (a fraction in [0, 1])."""
    return rng.randrange(q.denominator) < q.numerator


def bernoulli_exp(gamma: Fraction, rng: random.Random) -> bool:
    """True with probability exactly exp(-gamma), gamma >= 0 rational."""
    while gamma > 1:
        if not bernoulli_exp(Fraction(1), rng):
            return False
        gamma -= 1
    k = 1
    while bernoulli(gamma / k, rng):
        k += 1
    return k % 2 == 1


def discrete_laplace(scale: Fraction, rng: random.Random) -> int:
    """An integer with P(x) proportional to exp(-|x| / scale), exactly (scale = t / s > 0)."""
    t, s = scale.numerator, scale.denominator
    while True:
        u = rng.randrange(t)
        if not bernoulli_exp(Fraction(u, t), rng):
            continue
        v = 0
        while bernoulli_exp(Fraction(1), rng):
            v += 1
        y = (u + t * v) // s
        negative = rng.randrange(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_laplace_pmf(k: int, scale: float) -> float:
    """P(x = k) of :func:`discrete_laplace`: (1 - a) / (1 + a) a^|k|, a = exp(-1 / scale)."""
    alpha = math.exp(-1.0 / scale)
    return (1.0 - alpha) / (1.0 + alpha) * alpha ** abs(k)


def gaussian_delta(sensitivity: float, sd: float, epsilon: float) -> float:
    """The smallest delta of the Gaussian mechanism at ``epsilon`` (Balle & Wang 2018, thm 8).

    delta = Phi(D / (2 sd) - epsilon sd / D) - e^epsilon Phi(-D / (2 sd) - epsilon sd / D).
    """
    def phi(x: float) -> float:
        return 0.5 * math.erfc(-x / math.sqrt(2.0))

    a = sensitivity / (2.0 * sd)
    b = epsilon * sd / sensitivity
    return max(0.0, phi(a - b) - math.exp(epsilon) * phi(-a - b))


# --------------------------------------------------------------------------------------------
# Short exact reports: the page shows the arithmetic as it was done


def decimals(value: float) -> int:
    """Decimal places of the shortest form of ``value`` (0 for a whole number)."""
    text = repr(float(value)).lower()
    mantissa, _, exponent = text.partition("e")
    places = len(mantissa.partition(".")[2].rstrip("0"))
    return max(0, places - int(exponent or 0))


def snap(value: float, step: float, rng: random.Random) -> float:
    """``value`` rounded at random to a multiple of ``step``, without bias.

    Up with the chance that keeps the mean; a multiple already is kept. The result is a function
    of the multiple only: a short decimal with no low bits left over from the value.
    """
    places = decimals(step)
    position = value / step
    nearest = round(position)
    if abs(position - nearest) < 1e-6:
        return round(nearest * step, places)
    base = math.floor(position)
    if rng.random() < position - base:
        base += 1
    return round(base * step, places)
