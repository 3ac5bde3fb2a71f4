"""rrsite.analyze: read exports, validate rows, de-bias counts into estimates and reports.

The Python API (numpy and scipy are loaded only when it is used, so `rrsite plan` stays light):

    from rrsite.analyze import analyze
    result = analyze(["export.csv"], survey="survey.md", by="year")
    result.questions, result.to_dict(), result.to_pandas()
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
