"""rrsite.core: randomized-response designs, privacy accounting and the randomizer.

Pure standard library: the same files run in CPython (builder, analyzer) and in the respondent's
browser under Pyodide. Imports nothing of rrsite outside this package.
"""

from .designs import (
    KRR,
    NAMED_DESIGNS,
    BinaryDesign,
    BinaryMatrix,
    CategoricalMatrix,
    Design,
    ForcedResponse,
    ForcedYes,
    Outcome,
    Step,
    UnrelatedQuestion,
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

__all__ = [
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
