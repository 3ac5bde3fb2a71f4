"""Randomized designs for a number: the respondent's device scrambles how much or how often.

Every design takes the true number ``y`` and returns a report ``z`` with a transcript. Every
design except ``mixture-unknown`` has a report whose mean is linear in the truth,
``E[z | y] = intercept + slope * y``, and a report variance quadratic in it,
``Var(z | y) = v0 + v1 y + v2 y^2`` (exact; Laplace adds the grid rounding, see its doc), so that
``r = (z - intercept) / slope`` is an unbiased per-respondent copy of ``y``.

Designs (the names survey files use):

- ``mixture`` (Greenberg et al. 1971; RRreg ``mix.norm``/``mix.exp``; Eriksson 1973 with a
  list): with chance ``p`` the truth, else a draw from a known ``mask`` distribution.
- ``mixture-unknown`` (RRreg ``mix.unknown``): group g (drawn on the device) sends the truth with
  chance ``p[g]``, else the respondent's answer to an innocuous number question.
- ``additive`` (Pollock & Bek 1976): ``y + S``; ``multiplicative`` (Eichhorn & Hayre 1983): ``y S``,
  and with ``p`` < 1 the truth with chance ``p`` else ``y S`` (BarLev, Bobovich & Boukai 2004).
- ``laplace``, ``duchi`` (Duchi, Jordan & Wainwright 2018), ``piecewise`` (Wang et al. 2019):
  bounded-range local differential privacy on ``[min, max]`` with the value clipped.

A mask or scrambling distribution is ``{"normal": {"mean", "sd"}}``, ``{"exponential":
{"mean"}}``, ``{"uniform": {"min", "max"}}`` (whole numbers when the question takes whole numbers)
or ``{"values": [...], "probabilities": [...]}``.

Privacy is computed from the design (never asserted): a finite epsilon where one exists, else
``math.inf`` with the reason and the smallest delta no epsilon can lower.

Sampling: the random source is ``random.SystemRandom`` unless a test passes its own. The Laplace
noise is the discrete Laplace distribution on a fixed grid, drawn with integer arithmetic only
(Canonne, Kamath & Steinke 2020), so no float rounding can leak the input (Mironov 2012). The
piecewise report is snapped to a fixed grid of its support.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from .designs import TOLERANCE, Step, _die_faces, check_probability, draw, secure_random
from .errors import DesignError
from .privacy import Privacy

#: Designs a number question may use, and the keys each takes (besides min, max, integer).
NUMBER_DESIGNS: dict[str, tuple[str, ...]] = {
    "mixture": ("p", "mask"),
    "mixture-unknown": ("p", "probability"),
    "additive": ("scramble",),
    "multiplicative": ("scramble", "p"),
    "laplace": ("epsilon",),
    "duchi": ("epsilon",),
    "piecewise": ("epsilon",),
}
#: Designs that need a bounded range [min, max].
BOUNDED = ("laplace", "duchi", "piecewise")
#: Cells of the report grid of the piecewise mechanism (over its whole support).
PIECEWISE_CELLS = 1 << 21


def _number(name: str, value: object) -> float:
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
            values = tuple(_number(f"{name}: each value", v) for v in raw)
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
        got = [_number(f"{name}: {kind} {key}", params[key]) for key in needed]
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
    counts = _die_faces((first, second))
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


# --------------------------------------------------------------------------------------------
# Designs


@dataclass(frozen=True)
class NumberOutcome:
    """The report, the number drawn on the device (None when none was used) and the transcript.

    ``operation``: ``truth`` (sent as it is), ``mask`` (the draw sent instead), ``add``,
    ``multiply``, ``innocuous`` (the innocuous answer sent), ``noise`` (laplace: truth + noise),
    ``duchi`` or ``piecewise`` (the report replaces the truth).
    """

    report: float
    drawn: float | None
    operation: str
    steps: tuple[Step, ...] = field(default_factory=tuple)
    group: int = 0
    #: The value the mechanism used after clipping to [min, max] (LDP designs), else the truth.
    used: float | None = None
    #: The answer rounded to the report grid, when it was not on it (the page shows the step).
    rounded: float | None = None
    #: Multiplicative: the exact product, when it was rounded to the report grid.
    product: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the truth (``rounded`` and ``product`` are for the page only)."""
        result: dict[str, Any] = {
            "report": self.report,
            "drawn": self.drawn,
            "operation": self.operation,
            "steps": [step.to_dict() for step in self.steps],
        }
        if self.group:
            result["group"] = self.group
        if self.rounded is not None:
            result["rounded"] = self.rounded
        if self.product is not None:
            result["product"] = self.product
        return result


class NumberDesign:
    """Base of the number designs: range, randomizer, privacy and the report's moments."""

    name: ClassVar[str] = ""
    minimum: float | None
    maximum: float | None
    integer: bool

    def params(self) -> dict[str, Any]:
        """The design's own keys (without name, min, max, integer)."""
        raise NotImplementedError

    def spec(self) -> dict[str, Any]:
        """``{"name", **params, "min", "max", "integer"}``: rebuilds the design."""
        return {"name": self.name, **self.params(), "min": self.minimum, "max": self.maximum,
                "integer": self.integer}

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """The report for the true number."""
        raise NotImplementedError

    def privacy(self) -> Privacy:
        """Epsilon computed from the design, or ``math.inf`` with the reason and delta's floor."""
        raise NotImplementedError

    def linear(self) -> tuple[float, float]:
        """(intercept, slope) with E[report | y] = intercept + slope * y, y in [min, max]."""
        raise NotImplementedError

    def variance_coefficients(self) -> tuple[float, float, float]:
        """(v0, v1, v2) with Var(report | y) = v0 + v1 y + v2 y^2."""
        raise NotImplementedError

    def report_variance(self, y: float) -> float:
        """Var(report | y), exact."""
        v0, v1, v2 = self.variance_coefficients()
        return v0 + v1 * y + v2 * y * y

    def impossible(self, report: float) -> str | None:
        """Why ``report`` cannot come out of this design (None if it can)."""
        if not math.isfinite(report):
            return f"the report {report!r} is not a finite number"
        return None

    # ------------------------------------------------------------------ helpers
    def check_truth(self, truth: float) -> float:
        """The true number, refused when not a number or outside [min, max]."""
        if isinstance(truth, bool) or not isinstance(truth, int | float):
            raise DesignError(f"the answer must be a number, got {truth!r}")
        value = float(truth)
        if not math.isfinite(value):
            raise DesignError(f"the answer must be a finite number, got {truth!r}")
        if self.minimum is not None and value < self.minimum:
            raise DesignError(f"the answer {value:g} is below the smallest allowed, "
                              f"{self.minimum:g}")
        if self.maximum is not None and value > self.maximum:
            raise DesignError(f"the answer {value:g} is above the largest allowed, "
                              f"{self.maximum:g}")
        if self.integer and value != int(value):
            raise DesignError(f"the answer must be a whole number, got {value:g}")
        return value

    def _init_range(self) -> None:
        for key in ("minimum", "maximum"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, _number("min" if key == "minimum" else "max",
                                                      value))
        object.__setattr__(self, "integer", bool(self.integer))
        if self.minimum is not None and self.maximum is not None and (
                self.maximum <= self.minimum):
            raise DesignError(f"max ({self.maximum:g}) must be above min ({self.minimum:g})")
        if self.integer:
            for key in ("minimum", "maximum"):
                value = getattr(self, key)
                if value is not None and value != int(value):
                    raise DesignError(f"{'min' if key == 'minimum' else 'max'} must be a whole "
                                      f"number for a question that takes whole numbers, got "
                                      f"{value:g}")

    @property
    def report_step(self) -> float:
        """The grid of reports of mixture, additive and multiplicative.

        1 for whole numbers, else the largest power of ten at most (max - min) / 100,000 and at
        most 1 (0.01 without a range). Continuous draws are rounded to it at random (unbiased),
        so every report is a short decimal whose arithmetic the page can show exactly.
        """
        if self.integer:
            return 1.0
        if self.minimum is None or self.maximum is None:
            return 0.01
        return min(1.0, 10.0 ** math.floor(math.log10((self.maximum - self.minimum) / 1e5)))

    def on_grid(self, y: float, rng: random.Random) -> float:
        """The answer on the report grid: kept when on it, else rounded at random (unbiased).

        Never beyond [min, max].
        """
        rounded = snap(y, self.report_step, rng)
        if self.minimum is not None:
            rounded = max(rounded, self.minimum)
        return rounded if self.maximum is None else min(rounded, self.maximum)

    def debias(self, report: float) -> float:
        """R = (report - intercept) / slope, with E[r | y] = y."""
        intercept, slope = self.linear()
        return (report - intercept) / slope


def _p_truth(value: object) -> float:
    p = check_probability("p", value)
    if p <= TOLERANCE:
        raise DesignError(f"p must be above 0, or the report says nothing about the truth, got "
                          f"{value!r}")
    if p >= 1.0:
        raise DesignError("p must be below 1, or every report is the true number")
    return p


@dataclass(frozen=True)
class Mixture(NumberDesign):
    """Greenberg et al. 1971: the truth with chance ``p``, else a draw from ``mask``.

    Actions: a coin/die/spinner "truth"/"mask", then (if mask) the draw.
    E[z | y] = p y + (1 - p) m; Var(z | y) = p y^2 + (1 - p)(v + m^2) - (p y + (1 - p) m)^2.
    """

    name: ClassVar[str] = "mixture"
    p: float = 0.5
    mask: Any = None
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        self._init_range()
        object.__setattr__(self, "p", _p_truth(self.p))
        if self.mask is None:
            raise DesignError("design mixture needs mask: the distribution drawn instead of the "
                              "truth")
        if not isinstance(self.mask, Mask):
            object.__setattr__(self, "mask", Mask.from_spec(self.mask, "mask", self.integer))

    def params(self) -> dict[str, Any]:
        """p, mask."""
        return {"p": self.p, "mask": self.mask.spec()}

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """Coin: truth or mask; if mask, the draw is sent."""
        y = self.check_truth(truth)
        rng = rng or secure_random()
        sent = self.on_grid(y, rng)
        rounded = sent if sent != y else None
        branch, step = draw(("truth", "mask"), (self.p, 1.0 - self.p), rng)
        if branch == 0:
            return NumberOutcome(sent, None, "truth", (step,), used=sent, rounded=rounded)
        value, more = self.mask.sample(rng)
        if not self.mask.discrete:
            value = snap(value, self.report_step, rng)
            more = Step("draw", repr(value), more.action)
        return NumberOutcome(value, value, "mask", (step, more), used=sent, rounded=rounded)

    def linear(self) -> tuple[float, float]:
        """((1 - p) m, p)."""
        return (1.0 - self.p) * self.mask.mean, self.p

    def variance_coefficients(self) -> tuple[float, float, float]:
        """From Var = p y^2 + (1 - p)(v + m^2) - (p y + (1 - p) m)^2.

        v includes the rounding of a continuous mask draw to the report grid (exact); an answer
        off the grid (a question of any number) is rounded too, which adds at most
        p step^2 / 4, left out.
        """
        p, m = self.p, self.mask.mean
        v = self.mask.variance + self.mask.rounding_variance(self.report_step)
        return (1 - p) * v + p * (1 - p) * m * m, -2 * p * (1 - p) * m, p * (1 - p)

    def privacy(self) -> Privacy:
        """Finite only for whole numbers on a bounded grid the mask covers (MATH.md section 9).

        A report v has chance p [v = y] + (1 - p) g(v) under the answer y, so the largest ratio
        is (p + (1 - p) g) / ((1 - p) g) at the grid's least likely mask value g.
        """
        if not self.mask.discrete:
            return Privacy(math.inf, self.p, (
                f"the mask ({self.mask.describe()}) is continuous: the exact true number is "
                f"sent with chance {self.p:g} and a mask draw (rounded to the report grid) "
                "lands on any one answer only rarely, so a report equal to an answer all but "
                "singles that answer out",))
        if not self.integer or self.minimum is None or self.maximum is None:
            why = ("the question takes any number, not whole numbers" if not self.integer
                   else "the question has no bounded range [min, max]")
            return Privacy(math.inf, self.p, (
                f"{why}: a true number the mask ({self.mask.describe()}) never draws is "
                "revealed whenever it is sent",))
        missing, smallest = self.mask.whole_number_chances(int(self.minimum), int(self.maximum))
        if missing is not None:
            return Privacy(math.inf, self.p, (
                f"the mask never draws {missing:g}: a report of {missing:g} only comes from "
                "the true number itself",))
        return Privacy(math.log1p(self.p / ((1 - self.p) * smallest)), 0.0)

    def impossible(self, report: float) -> str | None:
        """A report must be a possible truth or a possible draw."""
        why = super().impossible(report)
        if why is not None:
            return why
        if _in_range(report, self) and (not self.integer or report == int(report)):
            return None
        slack = self.report_step  # a draw rounded to the report grid
        mask = self.mask
        if mask.discrete:
            if mask.draws(report):
                return None
            return f"{report:g} is neither a possible answer nor a value of the mask"
        if mask.lowest - slack <= report <= mask.highest + slack:
            return None
        return f"{report:g} is neither a possible answer nor a possible mask draw"


def _in_range(value: float, design: NumberDesign) -> bool:
    low = -math.inf if design.minimum is None else design.minimum
    high = math.inf if design.maximum is None else design.maximum
    return low <= value <= high


@dataclass(frozen=True)
class MixtureUnknown(NumberDesign):
    """RRreg ``mix.unknown``: group g sends the truth with chance p[g], else the innocuous answer.

    The innocuous answer's distribution is unknown (it is estimated with the mean), so nothing
    bounds what a report tells: no epsilon. The group is drawn on the device and sent.
    """

    name: ClassVar[str] = "mixture-unknown"
    p: tuple[float, float] = (0.3, 0.7)
    probability: float = 0.5
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        self._init_range()
        pair = self.p
        if (not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2):
            raise DesignError(f"p must be a list of two probabilities (group 1, group 2), got "
                              f"{pair!r}")
        first, second = (check_probability("p", value) for value in pair)
        if abs(first - second) <= TOLERANCE:
            raise DesignError("p must differ between the two groups, or the mean is not "
                              "identified")
        object.__setattr__(self, "p", (first, second))
        probability = check_probability("probability", self.probability)
        if not 0.0 < probability < 1.0:
            raise DesignError(f"probability (of group 1) must be strictly between 0 and 1, got "
                              f"{self.probability!r}")
        object.__setattr__(self, "probability", probability)

    def params(self) -> dict[str, Any]:
        """p, probability."""
        return {"p": list(self.p), "probability": self.probability}

    def randomize(
        self, truth: float, rng: random.Random | None = None, innocuous: float | None = None,
        group: int | None = None,
    ) -> NumberOutcome:
        """Group (unless given), then truth or the innocuous answer (which must be given)."""
        y = self.check_truth(truth)
        if innocuous is None:
            raise DesignError("design mixture-unknown needs the respondent's innocuous answer")
        other = _number("the innocuous answer", innocuous)
        rng = rng or secure_random()
        steps: tuple[Step, ...] = ()
        if group is None:
            index, step = draw(("group-1", "group-2"), (self.probability, 1 - self.probability),
                               rng)
            group, steps = index + 1, (step,)
        elif group not in (1, 2):
            raise DesignError(f"group must be 1 or 2, got {group!r}")
        p = self.p[group - 1]
        branch, step = draw(("truth", "innocuous"), (p, 1.0 - p), rng)
        if branch == 0:
            return NumberOutcome(y, None, "truth", steps + (step,), group, used=y)
        return NumberOutcome(other, None, "innocuous", steps + (step,), group, used=y)

    def linear(self) -> tuple[float, float]:
        """Not linear in y alone: the innocuous mean is unknown."""
        raise DesignError("mixture-unknown has no per-respondent de-biased value: its innocuous "
                          "mean is estimated from both groups")

    def variance_coefficients(self) -> tuple[float, float, float]:
        """Unknown (depends on the innocuous distribution)."""
        raise DesignError("mixture-unknown's report variance depends on the unknown innocuous "
                          "distribution")

    def privacy(self) -> Privacy:
        """No epsilon: the truth is sent as it is, against an unknown innocuous distribution.

        Delta's floor is the chance that the truth is sent, over both groups (the report is the
        group and the number): probability p1 + (1 - probability) p2. Another answer gives
        those reports only through an innocuous answer equal to this one, which only lowers it.
        """
        sent = self.probability * self.p[0] + (1 - self.probability) * self.p[1]
        return Privacy(math.inf, sent, (
            f"the true number is sent as it is with chance {sent:g} (group 1 drawn with chance "
            f"{self.probability:g}, then the truth with chance {self.p[0]:g}; group 2, "
            f"{self.p[1]:g}), and the innocuous answers' distribution is unknown, so nothing "
            "bounds what a report reveals",))


@dataclass(frozen=True)
class Additive(NumberDesign):
    """Pollock & Bek 1976: report y + S, S drawn from ``scramble``. E[z | y] = y + E[S]."""

    name: ClassVar[str] = "additive"
    scramble: Any = None
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        self._init_range()
        if self.scramble is None:
            raise DesignError("design additive needs scramble: the distribution of the number "
                              "added")
        if not isinstance(self.scramble, Mask):
            object.__setattr__(self, "scramble",
                               Mask.from_spec(self.scramble, "scramble", self.integer))

    def params(self) -> dict[str, Any]:
        """Scramble."""
        return {"scramble": self.scramble.spec()}

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """Draw S, send y + S."""
        y = self.check_truth(truth)
        rng = rng or secure_random()
        sent = self.on_grid(y, rng)
        value, step = self.scramble.sample(rng)
        if not self.scramble.discrete:
            value = snap(value, self.report_step, rng)
            step = Step("draw", repr(value), step.action)
        report = float(Fraction(repr(sent)) + Fraction(repr(value)))
        return NumberOutcome(report, value, "add", (step,), used=sent,
                             rounded=sent if sent != y else None)

    def linear(self) -> tuple[float, float]:
        """(E[S], 1)."""
        return self.scramble.mean, 1.0

    def variance_coefficients(self) -> tuple[float, float, float]:
        """(Var S, 0, 0), S as sent: a continuous draw rounded to the report grid (exact).

        An answer off the grid (a question of any number) is rounded too, which adds at most
        step^2 / 4, left out.
        """
        s = self.scramble
        return s.variance + s.rounding_variance(self.report_step), 0.0, 0.0

    def privacy(self) -> Privacy:
        """No pure epsilon: the reports' range moves with the truth (normal: tails)."""
        s = self.scramble
        if self.minimum is None or self.maximum is None:
            return Privacy(math.inf, 1.0, (
                "the question has no bounded range [min, max], so a large enough answer moves "
                "the reports beyond any other answer's",))
        width = self.maximum - self.minimum
        if s.kind == "normal":
            delta = gaussian_delta(width, s.b, 1.0)
            return Privacy(math.inf, delta, (
                f"normal scrambling gives no pure epsilon: the ratio of the report's densities "
                f"under two answers grows without bound in the tails; only (epsilon, delta) "
                f"guarantees hold (the Gaussian mechanism with sensitivity {width:g} and sd "
                f"{s.b:g}: at epsilon 1 the smallest delta is {delta:.3g})",))
        if s.kind == "exponential":
            return Privacy(math.inf, 1.0 - math.exp(-width / s.a), (
                "exponential scrambling never subtracts: a report below an answer rules that "
                "answer out",))
        if s.kind == "uniform" and not s.integer:
            return Privacy(math.inf, min(1.0, width / (s.b - s.a)), (
                "the reports of two answers lie in shifted ranges: a report near either end "
                "rules some answers out",))
        delta = self._discrete_delta() if self.integer else 1.0
        return Privacy(math.inf, delta, (
            "with a list of added numbers the smallest report (the smallest answer plus the "
            "smallest draw) can only come from the smallest answer",))

    def _discrete_delta(self) -> float:
        """Delta's floor for whole-number answers.

        The largest chance, over two answers d apart (0 < |d| <= max - min), of the draws s
        whose report y + s the other answer cannot give (s - d is never drawn).
        """
        s = self.scramble
        assert self.minimum is not None and self.maximum is not None
        width = int(self.maximum - self.minimum)
        if s.kind == "uniform":  # whole numbers a..b: |d| of the b - a + 1 reports are out
            count = int(s.b) - int(s.a) + 1
            return min(width, count) / count
        drawn = [(v, q) for v, q in zip(s.values, s.probabilities, strict=True) if q > 0]
        shifts = {round(v - w) for v, _ in drawn for w, _ in drawn
                  if 0 < abs(round(v - w)) <= width
                  and abs(v - w - round(v - w)) <= 1e-9 * max(1.0, abs(v), abs(w))}
        if len(shifts) < 2 * width:  # some shift leaves no draw in common
            return 1.0
        return max(math.fsum(q for v, q in drawn if not s.draws(v - d)) for d in shifts)

    def impossible(self, report: float) -> str | None:
        """The report must lie in [min + lowest S, max + highest S]."""
        why = super().impossible(report)
        if why is not None:
            return why
        low = (-math.inf if self.minimum is None else self.minimum) + self.scramble.lowest
        high = (math.inf if self.maximum is None else self.maximum) + self.scramble.highest
        # a continuous draw is rounded to the report grid: it may pass its range by a step
        slack = 0.0 if self.scramble.discrete else self.report_step
        if not low - slack <= report <= high + slack:
            return f"{report:g} is outside [{low:g}, {high:g}], the range of answer + scramble"
        s = self.scramble
        if not (self.integer and s.discrete):
            return None
        # a whole-number answer plus a drawn number: some draw leaves a whole number in range
        if s.kind == "uniform":  # whole numbers a..b: every whole number in range is a sum
            if abs(report - round(report)) <= 1e-9 * max(1.0, abs(report)):
                return None
        else:
            for value, chance in zip(s.values, s.probabilities, strict=True):
                answer = report - value
                if (chance > 0 and _in_range(float(round(answer)), self)
                        and abs(answer - round(answer)) <= 1e-9 * max(1.0, abs(report),
                                                                      abs(value))):
                    return None
        return (f"{report:g} is not a whole-number answer in range plus a number the scramble "
                f"draws ({s.describe()})")


@dataclass(frozen=True)
class Multiplicative(NumberDesign):
    """Eichhorn & Hayre 1983: report y S, S > 0 from ``scramble``; BarLev et al. 2004 with p < 1.

    With ``p`` < 1 the device first sends the truth with chance p, else y S.
    E[z | y] = (p + (1 - p) E[S]) y; Var(z | y) = y^2 (p + (1 - p) E[S^2] - (p + (1 - p) E[S])^2).
    """

    name: ClassVar[str] = "multiplicative"
    scramble: Any = None
    p: float = 0.0
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        self._init_range()
        if self.scramble is None:
            raise DesignError("design multiplicative needs scramble: the distribution of the "
                              "positive factor")
        if not isinstance(self.scramble, Mask):
            object.__setattr__(self, "scramble",
                               Mask.from_spec(self.scramble, "scramble", False))
        s = self.scramble
        if s.kind not in ("uniform", "exponential") or s.lowest <= 0 and s.kind == "uniform":
            raise DesignError("scramble for multiplicative must be positive and continuous: "
                              "uniform with min above 0, or exponential")
        p = check_probability("p", self.p)
        if p >= 1.0:
            raise DesignError("p must be below 1, or every report is the true number")
        object.__setattr__(self, "p", p)

    def params(self) -> dict[str, Any]:
        """Scramble, p."""
        return {"scramble": self.scramble.spec(), "p": self.p}

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """(Truth with chance p, else) draw S and send y S."""
        y = self.check_truth(truth)
        rng = rng or secure_random()
        sent = self.on_grid(y, rng)
        rounded = sent if sent != y else None
        steps: tuple[Step, ...] = ()
        if self.p > 0:
            branch, step = draw(("truth", "multiply"), (self.p, 1.0 - self.p), rng)
            steps = (step,)
            if branch == 0:
                return NumberOutcome(sent, None, "truth", steps, used=sent, rounded=rounded)
        value, more = self.scramble.sample(rng)
        value = snap(value, self.factor_step, rng)
        product = float(Fraction(repr(sent)) * Fraction(repr(value)))
        report = snap(product, self.report_step, rng)
        return NumberOutcome(report, value, "multiply",
                             steps + (Step("draw", repr(value), more.action),), used=sent,
                             rounded=rounded, product=product if product != report else None)

    @property
    def factor_step(self) -> float:
        """The grid of the factor, fine enough to say nothing of the answer.

        Answer x factor then steps by at most a tenth of the report grid, so the report's grid
        position does not depend on the answer.
        """
        largest = max(abs(self.minimum or 0.0), abs(self.maximum or 0.0), 1.0)
        if self.maximum is None or self.minimum is None:
            largest = max(largest, 1e5)
        return 10.0 ** math.floor(math.log10(self.report_step / (10 * largest)))

    def linear(self) -> tuple[float, float]:
        """(0, p + (1 - p) E[S])."""
        return 0.0, self.p + (1 - self.p) * self.scramble.mean

    def variance_coefficients(self) -> tuple[float, float, float]:
        """(0, 0, p + (1 - p) E[S^2] - slope^2), S as sent (rounded to its fine grid: exact).

        The product's rounding to the report grid adds at most (1 - p) step^2 / 4 (about a
        sixth of step^2 where the products spread over many grid cells), left out, as is an
        answer's rounding onto the grid.
        """
        s = self.scramble
        second = s.variance + s.rounding_variance(self.factor_step) + s.mean ** 2
        slope = self.linear()[1]
        return 0.0, 0.0, self.p + (1 - self.p) * second - slope ** 2

    def privacy(self) -> Privacy:
        """No epsilon: 0 stays 0, and the reports' range scales with the answer.

        Delta is the chance, under the worse of two answers, of the reports the other cannot
        give: the truth sent as it is (chance p: a scrambled report equals an answer with chance
        0) plus, for a uniform factor on [a, b], the scrambled reports outside the other answer's
        range. With answers of sizes |y| from u to v (0 not among them) that is the larger of
        a (v - u) / (u (b - a)) and b (v - u) / (v (b - a)), at most 1; an exponential factor
        reaches every report of the answers' sign.
        """
        low = -math.inf if self.minimum is None else self.minimum
        high = math.inf if self.maximum is None else self.maximum
        if low <= 0 <= high:
            return Privacy(math.inf, 1.0, (
                "an answer of 0 is always reported as 0, and any other report rules 0 out",))
        near, far = sorted((abs(low), abs(high)))
        s = self.scramble
        truth = (f"the true number is sent as it is with chance {self.p:g}, and a scrambled "
                 "report almost never equals an answer exactly",) if self.p > 0 else ()
        if s.kind == "exponential":
            return Privacy(math.inf, self.p, truth + (
                "exponential scrambling gives no pure epsilon: the ratio of the report's "
                "densities under two answers grows without bound in the tail",))
        if math.isinf(far):
            scrambled = 1.0
            why = ("the answers have no bound away from 0 (min or max is missing), so two "
                   "answers' scaled ranges can lie apart")
        else:
            scrambled = min(1.0, max(s.a * (far - near) / (near * (s.b - s.a)),
                                     s.b * (far - near) / (far * (s.b - s.a))))
            why = ("the reports of two answers lie in scaled ranges: a report near either end "
                   "rules some answers out")
        return Privacy(math.inf, self.p + (1 - self.p) * scrambled, truth + (why,))

    def impossible(self, report: float) -> str | None:
        """The report has the sign of the answer range, within [min S_low, max S_high]."""
        why = super().impossible(report)
        if why is not None:
            return why
        lo = -math.inf if self.minimum is None else self.minimum
        hi = math.inf if self.maximum is None else self.maximum
        if self.p > 0 and lo <= report <= hi:
            return None
        slack = self.report_step  # the product rounded to the report grid
        s_lo, s_hi = self.scramble.lowest, self.scramble.highest
        corners = [a * b for a in (lo, hi) for b in (s_lo, s_hi)
                   if not (math.isinf(a) and b == 0) and not (a == 0 and math.isinf(b))]
        low, high = min(corners), max(corners)
        if lo >= 0 and report < 0:
            return f"{report:g} is negative, but answers and the factor are not"
        if low - slack <= report <= high + slack:
            return None
        return f"{report:g} is outside [{low:g}, {high:g}], the range of answer x scramble"


class _Bounded(NumberDesign):
    """Bounded-range LDP: needs min < max and epsilon > 0; the value is clipped to [min, max]."""

    epsilon: float

    def _init_bounded(self) -> None:
        self._init_range()
        if self.minimum is None or self.maximum is None:
            raise DesignError(f"design {self.name} needs min and max: the range its privacy "
                              "covers")
        epsilon = _number("epsilon", self.epsilon)
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
class Laplace(_Bounded):
    """The Laplace mechanism on a grid: report = round(y) + g K, K discrete Laplace.

    The grid step g is the largest power of ten at most (max - min) / 1000, and y is rounded to
    a grid point at random (up or down, unbiased). K has P(k) proportional to
    exp(-|k| epsilon / G), G = ceil((max - min) / g): two answers differ by at most G steps, so
    the design is epsilon-DP (with the exact epsilon of the float stored). Var(report | y) =
    g^2 (2 a / (1 - a)^2 + f (1 - f)), a = exp(-epsilon / G), f the fractional grid position of y
    (0 on the grid: whole numbers when g divides 1).
    """

    name: ClassVar[str] = "laplace"
    epsilon: float = 1.0
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        self._init_bounded()

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
class Duchi(_Bounded):
    """Duchi, Jordan & Wainwright 2018 (one dimension): report one of two values.

    On [-1, 1]: +C with chance 1/2 + x (e^eps - 1) / (2 (e^eps + 1)), else -C,
    C = (e^eps + 1) / (e^eps - 1); E = x, Var = C^2 - x^2. Mapped back to [min, max] units.
    """

    name: ClassVar[str] = "duchi"
    epsilon: float = 1.0
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        self._init_bounded()

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
class Piecewise(_Bounded):
    """The piecewise mechanism (Wang et al. 2019), reports snapped to a fixed grid.

    On [-1, 1] with s = e^(eps/2), C = (s + 1) / (s - 1): with chance s / (s + 1) a uniform
    number in [l(x), r(x)] = [(C + 1) x / 2 - (C - 1) / 2, l(x) + C - 1], else uniform on the
    rest of [-C, C]. E = x, Var = x^2 / (s - 1) + (s + 3) / (3 (s - 1)^2). The density is
    e^eps times higher on [l, r] than outside. The report is snapped to the nearest of
    PIECEWISE_CELLS + 1 equally spaced points over [-C, C] (a function of the cell only); the
    snapping moves the mean and variance by at most the grid's 2C / 2^21.
    """

    name: ClassVar[str] = "piecewise"
    epsilon: float = 1.0
    minimum: float | None = None
    maximum: float | None = None
    integer: bool = False

    def __post_init__(self) -> None:
        self._init_bounded()

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


_CLASSES: dict[str, type[NumberDesign]] = {
    "mixture": Mixture,
    "mixture-unknown": MixtureUnknown,
    "additive": Additive,
    "multiplicative": Multiplicative,
    "laplace": Laplace,
    "duchi": Duchi,
    "piecewise": Piecewise,
}


def number_design_from_spec(spec: Mapping[str, Any]) -> NumberDesign:
    """Build a number design from ``{"name", **params, "min", "max", "integer"}``."""
    if not isinstance(spec, Mapping):
        raise TypeError(f"a design spec must be a mapping, got {spec!r}")
    name = spec.get("name")
    if name not in NUMBER_DESIGNS:
        raise DesignError(f"unknown number design {name!r}; known: {', '.join(NUMBER_DESIGNS)}")
    params = {key: value for key, value in spec.items() if key != "name"}
    allowed = (*NUMBER_DESIGNS[name], "min", "max", "integer")
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise DesignError(f"design {name} takes {', '.join(NUMBER_DESIGNS[name])}; unknown "
                          f"parameter {unknown[0]!r}")
    arguments = {key: value for key, value in params.items() if key in NUMBER_DESIGNS[name]}
    arguments["minimum"] = params.get("min")
    arguments["maximum"] = params.get("max")
    arguments["integer"] = bool(params.get("integer", False))
    if name == "mixture-unknown" and isinstance(arguments.get("p"), list):
        arguments["p"] = tuple(arguments["p"])
    return _CLASSES[name](**arguments)


def parse_answer(text: str, design: NumberDesign) -> float:
    """The respondent's typed answer as a number ("1,200" and "1 200" are refused: one number)."""
    cleaned = text.strip()
    try:
        value = float(cleaned)
    except ValueError:
        raise DesignError(f"the answer must be a number, got {text!r}") from None
    return design.check_truth(value)


def respond_number(
    question: Mapping[str, Any], truth: str, innocuous: str | None = None,
    rng: random.Random | None = None,
) -> dict[str, Any]:
    """What the page calls for a number question: the report and the transcript, no truth."""
    design = number_design_from_spec(question["design"])
    y = parse_answer(truth, design)
    rng = rng or secure_random()
    if isinstance(design, MixtureUnknown):
        if innocuous is None:
            raise DesignError("design mixture-unknown needs the respondent's innocuous answer")
        try:
            other = float(innocuous.strip())
        except ValueError:
            raise DesignError(f"the innocuous answer must be a number, got {innocuous!r}") \
                from None
        outcome = design.randomize(y, rng, innocuous=other)
    else:
        outcome = design.randomize(y, rng)
    return outcome.to_dict()
