"""Randomized-response designs: small immutable objects, each with its design matrix.

For a yes/no question, index 0 is "no" and index 1 is "yes", and ``p00 = P(report no | truth
no)``, ``p11 = P(report yes | truth yes)``. For a question with k answers, ``matrix[i][j] =
P(report j | truth i)``. Every design can ``randomize`` a true answer with a random source and
return the report with a transcript of what the coins or dice did, so that the page can show it
in words.

The designs live by family (``binary``, ``categorical``, ``two_group``; what they share in
``base``); this module names them all and builds one from its spec (:func:`design_from_spec`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import Design, Outcome, Step, check_probability, draw, read_spec, secure_random
from .binary import (
    BinaryDesign,
    BinaryMatrix,
    Crosswise,
    ForcedResponse,
    ForcedYes,
    Mangat,
    Triangular,
    UnrelatedQuestion,
    Warner,
)
from .categorical import KRR, CategoricalMatrix, Kuk
from .errors import DesignError
from .two_group import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    ExtendedCrosswise,
    StochasticLieDetector,
    TwoGroupDesign,
    UnrelatedUnknown,
)

#: The designs built from their parameters as given (k-rr and matrix check theirs first).
CLASSES: dict[str, type[Design]] = {
    "forced-response": ForcedResponse, "forced-yes": ForcedYes, "warner": Warner,
    "unrelated": UnrelatedQuestion, "crosswise": Crosswise, "triangular": Triangular,
    "mangat": Mangat, "kuk": Kuk, "unrelated-unknown": UnrelatedUnknown, "cdm": CheatingDetection,
    "cdm-sym": CheatingDetectionSymmetric, "sld": StochasticLieDetector,
    "extended-crosswise": ExtendedCrosswise,
}

NAMED_DESIGNS: dict[str, tuple[str, ...]] = {
    "forced-response": ("truth", "yes", "no"),
    "forced-yes": ("truth",),
    "warner": ("p",),
    "unrelated": ("p", "innocuous_rate"),
    "matrix": ("p00", "p11", "matrix"),
    "k-rr": ("k", "epsilon", "p"),
    "crosswise": ("p",),
    "triangular": ("p",),
    "mangat": ("p",),
    "kuk": ("red_yes", "red_no", "cards"),
    "unrelated-unknown": ("p", "innocuous_rate", "probability"),
    "cdm": ("p", "probability"),
    "cdm-sym": ("yes", "no", "probability"),
    "sld": ("p", "probability"),
    "extended-crosswise": ("p", "probability"),
}
"""Every design name a survey file or ``rrsite plan --design`` may use, and its parameters."""



def design_from_spec(spec: Mapping[str, Any]) -> Design:
    """Build a design from ``{"name": ..., **params}`` (survey files, manifests, the CLI)."""
    name, params = read_spec(spec, NAMED_DESIGNS, "design")
    if name in CLASSES:
        return CLASSES[name](**params)
    if name == "k-rr":
        if "k" not in params:
            raise DesignError("design k-rr needs k, the number of answers")
        return KRR(**params)
    if "matrix" in params:
        if "p00" in params or "p11" in params:
            raise DesignError("design matrix takes either p00 and p11, or matrix, not both")
        rows = params["matrix"]
        if isinstance(rows, Sequence) and not isinstance(rows, str):
            rows = tuple(tuple(row) if isinstance(row, Sequence) else row for row in rows)
        return CategoricalMatrix(rows)
    if "p00" not in params or "p11" not in params:
        raise DesignError("design matrix needs p00 and p11 (or a k x k matrix)")
    return BinaryMatrix(params["p00"], params["p11"])


__all__ = [
    "KRR", "NAMED_DESIGNS", "BinaryDesign", "BinaryMatrix", "CategoricalMatrix",
    "CheatingDetection", "CheatingDetectionSymmetric", "Crosswise", "Design", "DesignError",
    "ExtendedCrosswise",
    "ForcedResponse", "ForcedYes", "Kuk", "Mangat", "Outcome", "Step", "StochasticLieDetector",
    "Triangular", "TwoGroupDesign", "UnrelatedQuestion", "UnrelatedUnknown", "Warner",
    "check_probability", "design_from_spec", "draw", "secure_random",
]
