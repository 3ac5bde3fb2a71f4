"""Frequency oracles and panels: many answers, "tick all that apply", the same question each wave.

``oracles`` holds the designs (unary encoding, local hashing, subset selection, Hadamard
response), ``hashing`` local hashing's hash family and the Hadamard code, ``choose`` the
``randomize: auto`` choice, ``waves`` the permanent report of a panel and its ledger, and
``respond`` what the respondent's page calls. Pure standard library, like all of rrsite.core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import FREQUENCY_DESIGNS, read_spec
from ..errors import DesignError
from .choose import CANDIDATES, Choice, auto, compare
from .hashing import bucket, hadamard_plus, hadamard_size, is_prime, seed_count
from .oracles import (
    FrequencyOracle,
    HadamardResponse,
    LocalHashing,
    SubsetSelection,
    UnaryEncoding,
    best_prime_buckets,
)
from .waves import Memoized, WaveOracle


def oracle_from_spec(spec: Mapping[str, Any]) -> FrequencyOracle:
    """Build a frequency oracle from ``{"name": ..., "k": ..., "epsilon": ..., ...}``."""
    name, params = read_spec(spec, FREQUENCY_DESIGNS, "frequency design")
    for needed in ("k", "epsilon"):
        if needed not in params:
            raise DesignError(f"design {name} needs {needed}")
    if name in ("oue", "sue"):
        return UnaryEncoding(params["k"], params["epsilon"], name == "oue",
                             params.get("max_ticks"))
    if name == "olh":
        return LocalHashing(params["k"], params["epsilon"], params.get("g"))
    if name == "subset":
        return SubsetSelection(params["k"], params["epsilon"], params.get("d"))
    return HadamardResponse(params["k"], params["epsilon"])


__all__ = [
    "CANDIDATES", "FREQUENCY_DESIGNS", "Choice", "FrequencyOracle", "HadamardResponse",
    "LocalHashing", "Memoized", "SubsetSelection", "UnaryEncoding", "WaveOracle", "auto",
    "best_prime_buckets", "bucket", "compare", "hadamard_plus", "hadamard_size", "is_prime",
    "oracle_from_spec", "seed_count",
]
