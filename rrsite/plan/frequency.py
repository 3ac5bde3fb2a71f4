"""`rrsite plan --compare --k K --epsilon E`: every design for a choice question, side by side.

For a question with k answers (or ``--survey FILE.md --question ID``: its number of options
and its epsilon), each design tuned to the epsilon (rrsite.core.frequency.choose): k-RR, subset
selection, OUE, OLH, SUE and Hadamard response. Per design: one respondent's variance of a share
near 0 (the figure ``randomize: auto`` ranks by), at the planning share (``--prior``, default
1/k), the respondents that give the margin at that share, and how many times k-RR's variance it
is. The design ``auto`` picks is marked, with its reason. With ``--max-ticks`` the question is a
"tick all that apply" set (OUE and SUE).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..core import z_value
from ..core.frequency import auto, compare
from ..core.frequency.choose import build, krr_spread
from ..errors import UsageError


def _from_survey(args: argparse.Namespace) -> tuple[int, float, int | None]:
    """k, epsilon and max_ticks of ``--question`` in ``--survey``."""
    from ..survey import load_survey

    survey = load_survey(args.survey)
    try:
        question = survey.question(args.question)
    except KeyError:
        known = ", ".join(q.id for q in survey.questions if q.type in ("choice", "multi-choice"))
        raise UsageError(f"--question {args.question!r}: no such question in {args.survey} "
                         f"(choice questions: {known})") from None
    if question.type not in ("choice", "multi-choice") or not question.sensitive:
        raise UsageError(f"--question {args.question!r} is not a randomized choice or "
                         "multi-choice question")
    spec = question.spec() or {}
    epsilon = args.epsilon if args.epsilon is not None else (
        spec.get("epsilon") or (question.privacy.epsilon if question.privacy else None))
    if epsilon is None:
        raise UsageError("give --epsilon")
    return len(question.options), float(epsilon), spec.get("max_ticks")


def frequency_plan(args: argparse.Namespace) -> dict[str, Any]:
    """The comparison as a JSON-ready dict (``rrsite plan --compare --k K --format json``)."""
    if getattr(args, "survey", None) is not None:
        if getattr(args, "question", None) is None:
            raise UsageError("--survey needs --question ID (a randomized choice question)")
        k, epsilon, max_ticks = _from_survey(args)
    else:
        if args.epsilon is None or not args.epsilon > 0:
            raise UsageError("--compare --k needs a positive --epsilon")
        k, epsilon, max_ticks = int(args.k), float(args.epsilon), getattr(args, "max_ticks", None)
    if k < 2:
        raise UsageError(f"--k must be at least 2, got {k}")
    share = 1.0 / k if args.prior is None else float(args.prior)
    if not 0.0 <= share < 1.0:
        raise UsageError(f"--prior must be a share in [0, 1), got {share!r}")
    if not 0.0 < args.margin < 1.0 or not 0.0 < args.confidence < 1.0:
        raise UsageError("--margin and --confidence must be between 0 and 1")
    z = z_value(args.confidence)
    choice = auto(k, epsilon, max_ticks)
    near_zero = compare(k, epsilon, max_ticks)
    baseline = near_zero.get("k-rr")
    rows = []
    for name, spread in near_zero.items():
        design = build(name, k, epsilon, max_ticks)
        p, q = design.p, design.q
        rate = q + (p - q) * share
        at_share = rate * (1 - rate) / (p - q) ** 2
        rows.append({
            "design": name, "spec": design.spec(), "p": p, "q": q,
            "variance_near_zero": spread, "variance": at_share,
            "respondents": max(1, math.ceil(z * z * at_share / args.margin ** 2 - 1e-9)),
            "times_krr": None if baseline is None else spread / baseline,
            "auto": name == choice.name,
        })
    return {"frequency": True, "k": k, "epsilon": epsilon, "max_ticks": max_ticks,
            "share": share, "margin": args.margin, "confidence": args.confidence,
            "designs": rows, "auto": choice.name, "reason": choice.reason,
            "krr_near_zero": krr_spread(k, epsilon) if max_ticks is None else None}


def frequency_table(result: dict[str, Any]) -> str:
    """The comparison as text."""
    what = (f"a set of at most {result['max_ticks']} ticks of {result['k']} boxes"
            if result["max_ticks"] else f"k = {result['k']} answers")
    lines = [f"every design for {what} at epsilon = {result['epsilon']:g}; margin "
             f"±{result['margin']:g} at {result['confidence']:.0%} for a share of "
             f"{result['share']:.3g}",
             f"  {'design':<10}{'var near 0':>11}{'var at share':>14}{'respondents':>13}"
             f"{'x k-RR':>9}"
             + ("" if "respondents_given" not in result else
                f"{'margin at ' + format(result['respondents_given'], ','):>18}")]
    for row in result["designs"]:
        ratio = "" if row["times_krr"] is None else f"{row['times_krr']:.3g}"
        mark = "  <- auto" if row["auto"] else ""
        margin = row.get("margin_at_respondents")
        given = "" if "respondents_given" not in result else (
            f"{'±' + format(margin, '.3g'):>18}" if margin is not None else f"{'-':>18}")
        lines.append(f"  {row['design']:<10}{row['variance_near_zero']:>11.4g}"
                     f"{row['variance']:>14.4g}{row['respondents']:>13,}{ratio:>9}{given}"
                     f"{mark}")
    lines += ["", f"auto: {result['reason']}",
              "variance: one respondent's variance of the unbiased share (divide by N); near 0: "
              "where the shares of many answers lie, the figure auto ranks by"]
    return "\n".join(lines)
