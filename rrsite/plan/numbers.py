"""`rrsite plan --range MIN,MAX`: planning a randomized number question.

For a number in [MIN, MAX] and a privacy budget ``--epsilon``: the respondents needed for a
margin on the mean (``--margin``, in the number's units), per design, and with ``--compare`` the
bounded local-DP mechanisms (laplace, duchi, piecewise; with ``--integer`` also the mixture with
a uniform mask over the whole numbers, tuned to the same epsilon) side by side, saying which has
the smallest variance.

Variance of one respondent's de-biased report: Var(y) + E Var(r | y) <= sd^2 + the design's
largest Var(r | y) over [MIN, MAX] (rrsite.estimate.numbers.worst_variance); ``--sd`` is the
guess of the true numbers' standard deviation (default: half the range, the largest possible).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..core.numbers import NumberDesign, number_design_from_spec
from ..errors import UsageError
from ..estimate.numbers import respondents_for_margin, worst_variance
from ..report.rows import significant

#: Designs `plan --range` can tune to an epsilon.
PLANNED = ("laplace", "duchi", "piecewise", "mixture")


def parse_range(text: str) -> tuple[float, float]:
    """``MIN,MAX`` -> (min, max), min < max."""
    try:
        low, high = (float(part) for part in str(text).split(","))
    except ValueError:
        raise UsageError(f"--range must be MIN,MAX (two numbers), got {text!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise UsageError(f"--range needs MIN < MAX, got {text!r}")
    return low, high


def tuned(name: str, epsilon: float, low: float, high: float, integer: bool) -> NumberDesign:
    """The design ``name`` at exactly ``epsilon`` on [low, high]."""
    spec: dict[str, Any] = {"name": name, "min": low, "max": high, "integer": integer}
    if name == "mixture":
        if not integer or low != int(low) or high != int(high):
            raise UsageError("plan for mixture needs --integer and a range of whole numbers: "
                             "only then has a mixture an epsilon (a uniform mask over them)")
        k = int(high - low) + 1
        # epsilon = ln(1 + p k / (1 - p))  <=>  p = (e^eps - 1) / (e^eps - 1 + k)
        grow = math.expm1(epsilon)
        spec.update(p=grow / (grow + k), mask={"uniform": {"min": low, "max": high}})
    else:
        spec["epsilon"] = epsilon
    return number_design_from_spec(spec)


def _row(design: NumberDesign, margin: float, sd: float, confidence: float) -> dict[str, Any]:
    privacy = design.privacy()
    worst = worst_variance(design)
    return {
        "design": design.spec(),
        "epsilon": privacy.epsilon if math.isfinite(privacy.epsilon) else None,
        "delta": privacy.delta,
        "noise_variance_worst": worst,
        "variance_per_respondent": sd * sd + worst,
        "respondents": respondents_for_margin(design, margin, sd, confidence),
    }


def number_plan(args: argparse.Namespace) -> dict[str, Any]:
    """The plan as a JSON-ready dict."""
    low, high = parse_range(args.range)
    if args.epsilon is None or not args.epsilon > 0:
        raise UsageError("plan --range needs --epsilon (> 0), the number question's budget")
    if not args.margin > 0:
        raise UsageError(f"--margin must be above 0 (in the number's units), got {args.margin!r}")
    if not 0.0 < args.confidence < 1.0:
        raise UsageError(f"--confidence must be between 0 and 1, got {args.confidence!r}")
    sd = (high - low) / 2 if args.sd is None else float(args.sd)
    if not sd >= 0:
        raise UsageError(f"--sd must be at least 0, got {args.sd!r}")
    integer = bool(args.integer)
    if args.compare:
        names = [n for n in PLANNED if n != "mixture" or integer]
    else:
        name = args.design or "piecewise"
        if name not in PLANNED:
            raise UsageError(f"plan --range: --design must be one of {', '.join(PLANNED)}, got "
                             f"{name!r} (other number designs have no epsilon to tune)")
        names = [name]
    rows = [_row(tuned(n, args.epsilon, low, high, integer), args.margin, sd, args.confidence)
            for n in names]
    best = min(rows, key=lambda row: row["noise_variance_worst"])
    return {"range": [low, high], "integer": integer, "epsilon": args.epsilon,
            "margin": args.margin, "confidence": args.confidence, "sd": sd,
            "designs": rows, "smallest_variance": best["design"]["name"]}


def number_table(result: dict[str, Any]) -> str:
    """The plan for people."""
    low, high = result["range"]
    lines = [f"a number in [{significant(low, 5)}, {significant(high, 5)}] at epsilon = "
             f"{result['epsilon']:g}; margin ±{significant(result['margin'], 5)} on the mean at "
             f"{result['confidence']:.0%}; sd of the true numbers {significant(result['sd'], 5)}",
             f"{'design':<12}{'parameters':<26}{'noise var (worst)':>19}{'respondents':>13}"
             + ("" if "respondents_given" not in result else
                f"{'margin at ' + format(result['respondents_given'], ','):>18}")]
    for row in result["designs"]:
        spec = row["design"]
        shown = (f"p = {spec['p']:.4g}, uniform mask" if spec["name"] == "mixture"
                 else f"epsilon = {spec['epsilon']:g}")
        worst = significant(row["noise_variance_worst"], 5)
        margin = row.get("margin_at_respondents")
        lines.append(f"{spec['name']:<12}{shown:<26}{worst:>19}"
                     f"{row['respondents']:>13,}"
                     + ("" if margin is None else f"{'±' + significant(margin, 3):>18}"))
    if len(result["designs"]) > 1:
        lines.append(f"smallest variance at this epsilon and range: {result['smallest_variance']}")
    lines.append("noise var: the largest variance the randomization adds to one respondent's "
                 "de-biased number over the range")
    return "\n".join(lines)
