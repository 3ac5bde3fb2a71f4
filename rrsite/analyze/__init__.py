"""rrsite.analyze: the analyses, each returning a result object and rendering nothing.

``api`` is the entry (``analyze()`` over exports, ``analyze_counts()`` over a counts CSV),
``results`` its result objects, ``prevalence`` and ``numbers`` the yes-no, choice and number
questions, ``univariate`` RRreg's designs, ``sample_design`` design-based estimates,
``compliance`` the checks of whether randomized response worked, ``joint`` and ``correlation``
several questions together, and ``regression/`` every ``--model``. Reading
exports is rrsite.exports, the likelihoods rrsite.estimate, rendering rrsite.report.

The Python API (numpy and scipy are loaded only when it is used, so `rrsite plan` stays light):

    from rrsite.analyze import analyze
    result = analyze(["export.csv"], survey="survey.md", by="year")
    result.questions, result.to_dict(), result.to_pandas()

``simulate_export`` is rrsite.simulate's, re-exported for notebooks written before it moved.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Analysis", "analyze", "simulate_export"]


def __getattr__(name: str) -> Any:
    if name in ("analyze", "Analysis"):
        from . import api

        return getattr(api, name)
    if name == "simulate_export":
        from ..simulate.export import write_export

        return write_export
    raise AttributeError(f"module 'rrsite.analyze' has no attribute {name!r}")
