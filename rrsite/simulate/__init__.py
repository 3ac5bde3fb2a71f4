"""rrsite.simulate: simulated exports through a survey's own designs.

``export`` writes a simulated export (respondents with known true answers, randomized by the
same matrices the page uses); ``draws`` holds what every simulated answer shares; ``numbers``,
``logit``, ``joint``, ``cor``, ``predictor`` and ``frame`` the ways of drawing true answers
(``--truth`` distributions, a logistic model, several questions together, a copula, a direct
outcome on randomized answers, a sampling frame).

    from rrsite.simulate import simulate_export
"""

from __future__ import annotations

from typing import Any

__all__ = ["simulate_export"]


def __getattr__(name: str) -> Any:
    if name == "simulate_export":
        from .export import write_export

        return write_export
    raise AttributeError(f"module 'rrsite.simulate' has no attribute {name!r}")
