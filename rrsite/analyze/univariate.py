"""RRreg's designs in the analysis: tallied counts -> ``rrsite.estimate.univariate.fit``.

The designs of ``catalog.RRREG_DESIGNS`` (crosswise, triangular, kuk, mangat, unrelated-unknown,
cdm, cdm-sym, sld) are estimated with RRreg's models: each version's counts per (group, report)
become ``Part``s through ``parts_from_manifest`` (the manifest's ``rrreg`` block), the parts of
every version are one likelihood (``fit``), and the fit's prevalence becomes the ``Estimate`` the
reports render like any other. No estimation happens here: this module only moves counts in
and figures out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..estimate.estimators import KIND_BINARY, Estimate
from ..estimate.intervals import chebyshev_k
from ..estimate.models import Design, from_manifest
from ..estimate.univariate import (
    METHOD_EXACT,
    METHOD_PROFILE_BOUNDARY,
    Part,
    UniFit,
    fit,
    parts_from_manifest,
    rrreg_moments,
)
from ..exports.catalog import QuestionSpec

#: What each parameter of RRreg's models means (the keys of ``UniFit.estimates``).
PARAMETER_MEANING = {
    "pi": "prevalence of the sensitive attribute",
    "piUQ": "yes-rate of the innocuous question (unrelated-unknown)",
    "t": "share of carriers who answer honestly (SLD)",
    "beta": "share of honest non-carriers (CDM)",
    "gamma": "share of cheaters, who say no whatever the instruction (CDM)",
}
#: ``ci_method`` of an Estimate from a fit (keys of api.CI_METHOD_NAMES).
CI_METHODS = {METHOD_EXACT: "exact", METHOD_PROFILE_BOUNDARY: "profile-likelihood-boundary"}
CI_PROFILE = "profile-likelihood"


def model_of(question: QuestionSpec) -> Design | None:
    """The RRreg model of a sensitive question (None when its manifest has no mapping)."""
    block = question.manifest.get("rrreg")
    if not isinstance(block, dict):
        return None
    try:
        return from_manifest(block)
    except ValueError:
        return None


def pool_key(question: QuestionSpec) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """Versions whose models share parameters and latent states can be one likelihood."""
    design = model_of(question)
    return None if design is None else (design.parameters, design.states)


def design_key(question: QuestionSpec) -> str:
    """Versions with the same RRreg model and p add their counts (one design, one part)."""
    return json.dumps(question.manifest.get("rrreg"), sort_keys=True)


@dataclass
class Tallied:
    """One design's counts for one estimate.

    ``counts[group - 1, report]`` (one row for a one-group design), reports in the question's
    ``answers`` order.
    """

    question: QuestionSpec
    counts: np.ndarray


def parts_of(tallied: Tallied) -> list[Part]:
    """The Parts of one design (parts_from_manifest: one per group of the model)."""
    labels = tallied.question.answers
    by_group = {
        g + 1: {label: int(n) for label, n in zip(labels, row, strict=True)}
        for g, row in enumerate(tallied.counts)
    }
    return parts_from_manifest(tallied.question.manifest, by_group)


def fit_designs(designs: Sequence[Tallied], confidence: float) -> tuple[UniFit, list[Part]]:
    """One joint fit of every design's parts (their models must share their parameters)."""
    parts = [part for tallied in designs for part in parts_of(tallied)]
    return fit(parts, confidence), parts


def observed_rate(parts: Sequence[Part]) -> float:
    """The reported rate over every part.

    The share of RRreg's report 1 (yes, same, triangle); for Kuk the share of red cards among
    the cards drawn.
    """
    numerator = denominator = 0.0
    for part in parts:
        counts = np.asarray(part.counts, dtype=float)
        cards = len(counts) - 1
        numerator += float(counts @ np.arange(len(counts)))
        denominator += float(counts.sum()) * cards
    return numerator / denominator if denominator else math.nan


def estimate_of(
    result: UniFit, parts: Sequence[Part], counts: dict[str, int], values: tuple[str, ...],
    confidence: float,
) -> Estimate:
    """The prevalence of a fit as an Estimate (a binary one: the "yes" rate).

    ``estimate`` is the bounded maximum-likelihood estimate; ``unbiased`` RRreg's moment
    estimate where it has one (one design; ``clipped`` when it left [0, 1] and the estimate is
    the bounded MLE), else the MLE; ``se`` the fit's (RRreg's where it has
    one); the interval and its method the fit's; ``notes`` the fit's messages.
    """
    n = sum(part.n for part in parts)
    estimate = result.estimates.get("pi", math.nan)
    unbiased = estimate
    clipped = False
    if result.rrreg is not None:  # one design: RRreg's moment estimate, even outside [0, 1]
        unbiased = rrreg_moments(parts).get("pi", estimate)
        clipped = not 0.0 <= unbiased <= 1.0
    se_value = result.se.get("pi")
    se = float(se_value) if se_value is not None else math.nan
    low, high = result.intervals.get("pi", (math.nan, math.nan))
    if not result.identified or n == 0:
        low = high = math.nan
    fixed = math.sqrt(max(se * se - estimate * (1 - estimate) / n, 0.0)) \
        if n and math.isfinite(se) and math.isfinite(estimate) else math.nan
    method = CI_METHODS.get(result.method.get("pi", ""), CI_PROFILE)
    out = Estimate(
        kind=KIND_BINARY, values=values, labels=(values[-1],), n=n, counts=counts,
        confidence=confidence, ci_method=method, observed=np.array([observed_rate(parts)]),
        estimate=np.array([estimate]), unbiased=np.array([unbiased]), se=np.array([se]),
        se_fixed=np.array([fixed]), ci_low=np.array([low]), ci_high=np.array([high]),
        chebyshev=np.array([chebyshev_k(confidence) * se]), clipped=clipped,
        degenerate=np.array([bool(high <= 0.0 or low >= 1.0)]),
        pooled=len({part.design for part in parts}) > 1,
        notes=list(result.messages) if n else ["no answers"],
    )
    return out


def parameters(result: UniFit) -> dict[str, dict[str, Any]]:
    """Every estimated quantity of a fit: estimate, se, ci, ci_method, meaning (JSON-ready)."""

    def number(value: float | None) -> float | None:
        return float(value) if value is not None and math.isfinite(value) else None

    out: dict[str, dict[str, Any]] = {}
    for name, value in result.estimates.items():
        low, high = result.intervals.get(name, (math.nan, math.nan))
        finite = result.identified and math.isfinite(value)
        out[name] = {
            "estimate": number(value),
            "se": number(result.se.get(name)),
            "ci": [number(low), number(high)] if finite else [None, None],
            "ci_method": result.method.get(name),
            "meaning": PARAMETER_MEANING.get(name, name),
        }
    return out


def fit_dict(result: UniFit) -> dict[str, Any]:
    """The keys a question with an RRreg model adds to the JSON (docs/contracts.md)."""
    return {
        "model": result.model,
        "parameters": parameters(result),
        "rrreg": result.rrreg,
        "goodness_of_fit": result.gof,
        "on_boundary": result.on_boundary,
        "identified": result.identified,
        "messages": list(result.messages),
    }
