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

import random
from collections.abc import Mapping
from typing import Any

from ..base import read_spec, secure_random
from ..errors import DesignError
from .base import NumberDesign, NumberOutcome
from .bounded import PIECEWISE_CELLS, Bounded, Duchi, Laplace, Piecewise
from .masks import (
    Mask,
    bernoulli,
    bernoulli_exp,
    choose,
    decimals,
    discrete_laplace,
    discrete_laplace_pmf,
    gaussian_delta,
    snap,
)
from .scrambling import Additive, Mixture, MixtureUnknown, Multiplicative

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
    name, params = read_spec(spec, NUMBER_DESIGNS, "number design", ("min", "max", "integer"))
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


__all__ = [
    "BOUNDED", "NUMBER_DESIGNS", "PIECEWISE_CELLS", "Additive", "Bounded", "Duchi", "Laplace",
    "Mask", "Mixture", "MixtureUnknown", "Multiplicative", "NumberDesign", "NumberOutcome",
    "Piecewise", "bernoulli", "bernoulli_exp", "choose", "decimals", "discrete_laplace",
    "discrete_laplace_pmf", "gaussian_delta", "number_design_from_spec", "parse_answer",
    "respond_number", "snap",
]
