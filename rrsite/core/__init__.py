"""rrsite.core: randomized-response designs, privacy accounting and the randomizer.

Pure standard library: the same files run in CPython (builder, analyzer) and in the respondent's
browser under Pyodide. Imports nothing of rrsite outside this package.

The number designs (``rrsite.core.numbers``) and the optimal designs (``optimal``) are
imported when one of their names is first read from here, and
``respond`` imports the number designs and the frequency oracles when first asked for one: the
respondent's page compiles only what randomizing its survey's answers needs.
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

#: Names read from their module when first asked for: the respondent's page randomizes with
#: ``respond_json`` and never compiles the number designs (unless its survey asks for a number)
#: or the optimal designs, which the build and the analyzer use.
_LAZY = {
    **dict.fromkeys(("NUMBER_DESIGNS", "Mask", "NumberDesign", "NumberOutcome",
                     "number_design_from_spec", "respond_number"), ".numbers"),
    **dict.fromkeys(("OptimalDesign", "candidate_designs", "krr_variance", "optimal_design",
                     "report_rates", "respondents_needed", "threshold", "variance", "z_value"),
                    ".optimal"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
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
