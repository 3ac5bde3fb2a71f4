"""rrsite.core: randomized-response designs, privacy accounting and the randomizer.

Pure standard library: the same files run in CPython (builder, analyzer) and in the respondent's
browser under Pyodide. Imports nothing of rrsite outside this package.

The number designs (``rrsite.core.numbers``) are imported when one of their names is first
read from here, and ``respond`` imports them and the frequency oracles when first asked for
one: a page whose survey has neither never compiles them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .designs import (
    KRR,
    NAMED_DESIGNS,
    BinaryDesign,
    BinaryMatrix,
    CategoricalMatrix,
    CheatingDetection,
    CheatingDetectionSymmetric,
    Crosswise,
    Design,
    ExtendedCrosswise,
    ForcedResponse,
    ForcedYes,
    Kuk,
    Mangat,
    Outcome,
    Step,
    StochasticLieDetector,
    Triangular,
    TwoGroupDesign,
    UnrelatedQuestion,
    UnrelatedUnknown,
    Warner,
    design_from_spec,
    secure_random,
)
from .errors import DesignError, PrivacyWarning
from .optimal import (
    OptimalDesign,
    candidate_designs,
    krr_variance,
    optimal_design,
    report_rates,
    respondents_needed,
    threshold,
    variance,
    z_value,
)
from .privacy import Privacy, compose, privacy_of, smallest_delta, smallest_epsilon
from .respond import respond, respond_json

if TYPE_CHECKING:
    from .numbers import (
        NUMBER_DESIGNS,
        Mask,
        NumberDesign,
        NumberOutcome,
        number_design_from_spec,
        respond_number,
    )

#: Names read from rrsite.core.numbers when first asked for.
_NUMBERS = frozenset({"NUMBER_DESIGNS", "Mask", "NumberDesign", "NumberOutcome",
                      "number_design_from_spec", "respond_number"})


def __getattr__(name: str) -> Any:
    if name in _NUMBERS:
        value = getattr(importlib.import_module(".numbers", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "NUMBER_DESIGNS",
    "Mask",
    "NumberDesign",
    "NumberOutcome",
    "number_design_from_spec",
    "respond_number",
    "Crosswise",
    "Triangular",
    "Mangat",
    "Kuk",
    "TwoGroupDesign",
    "UnrelatedUnknown",
    "CheatingDetection",
    "CheatingDetectionSymmetric",
    "ExtendedCrosswise",
    "StochasticLieDetector",
    "KRR",
    "NAMED_DESIGNS",
    "BinaryDesign",
    "BinaryMatrix",
    "CategoricalMatrix",
    "Design",
    "DesignError",
    "ForcedResponse",
    "ForcedYes",
    "OptimalDesign",
    "Outcome",
    "Privacy",
    "PrivacyWarning",
    "Step",
    "UnrelatedQuestion",
    "Warner",
    "candidate_designs",
    "compose",
    "design_from_spec",
    "krr_variance",
    "optimal_design",
    "privacy_of",
    "report_rates",
    "respond",
    "respond_json",
    "respondents_needed",
    "secure_random",
    "smallest_delta",
    "smallest_epsilon",
    "threshold",
    "variance",
    "z_value",
]
