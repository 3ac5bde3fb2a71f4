"""What every number design shares: its outcome, its range and report grid, its linear report law.

Every design except ``mixture-unknown`` has a report whose mean is linear in the truth,
``E[z | y] = intercept + slope * y``, and a report variance quadratic in it,
``Var(z | y) = v0 + v1 y + v2 y^2``, so that ``r = (z - intercept) / slope`` is an unbiased
per-respondent copy of ``y``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, cast, dataclass_transform

from ..base import TOLERANCE, Step, check_probability
from ..errors import DesignError
from ..privacy import Privacy
from .masks import number_value, snap


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


#: The fields every number design ends with, as ``number_design`` adds them (name, type, default).
RANGE_FIELDS = (("minimum", "float | None", None), ("maximum", "float | None", None),
                ("integer", "bool", False))

_Design = TypeVar("_Design", bound=type)


@dataclass_transform(frozen_default=True)
def number_design(cls: _Design) -> _Design:
    """``cls`` as a frozen dataclass whose fields end with the range every design has.

    Its own fields come first, then ``minimum`` and ``maximum`` (None where unbounded) and
    ``integer``, so that ``Laplace(1.0, 0, 30)`` reads epsilon, min and max. Its
    ``__post_init__`` checks the range with ``_init_range`` before its own parameters.
    """
    annotations = dict(cls.__dict__.get("__annotations__", {}))
    for name, annotation, default in RANGE_FIELDS:
        annotations[name] = annotation
        setattr(cls, name, default)
    cls.__annotations__ = annotations
    return cast(_Design, dataclass(frozen=True)(cls))


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
                object.__setattr__(self, key, number_value("min" if key == "minimum" else "max",
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


def p_truth(value: object) -> float:
    """A chance of sending the truth: strictly between 0 and 1."""
    p = check_probability("p", value)
    if p <= TOLERANCE:
        raise DesignError(f"p must be above 0, or the report says nothing about the truth, got "
                          f"{value!r}")
    if p >= 1.0:
        raise DesignError("p must be below 1, or every report is the true number")
    return p
