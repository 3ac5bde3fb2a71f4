"""`rrsite plan`: the optimal design for a privacy budget, or the figures of a named design.

Prints the design, its epsilon and delta, the variance for one respondent at the prior guess, how
many respondents reach a margin of error, and how that changes if the prior guess is wrong; then
the question block to paste into a survey file for that design (``question_block`` in JSON), and
what its words mean. The block builds under ``privacy: budget:`` equal to the ``--epsilon`` given:
the optimal design is written as ``epsilon:`` (the build chooses the same design from it), a named
design with the values given on the command line, digit for digit.
"""

from __future__ import annotations

import argparse
import math
import textwrap
from typing import Any

from ..core import (
    KRR,
    BinaryDesign,
    design_from_spec,
    krr_variance,
    optimal_design,
    privacy_of,
    respondents_needed,
    variance,
    z_value,
)
from ..errors import UsageError

#: --design parameters: command-line option -> design parameter.
DESIGN_OPTIONS = {
    "truth": "truth",
    "yes": "yes",
    "no": "no",
    "p": "p",
    "innocuous_rate": "innocuous_rate",
    "p00": "p00",
    "p11": "p11",
    "k": "k",
}
#: Designs planned by rrsite.estimate (RRreg's models): survey design name -> RRreg model.
RRREG_DESIGNS = {
    "crosswise": "Crosswise", "triangular": "Triangular", "kuk": "Kuk", "mangat": "Mangat",
    # the extended crosswise model: each group's |2p - 1| and lambda (1 - lambda) are the
    # crosswise model's (p and 1 - p), so its variance, privacy and sample size are crosswise's
    "extended-crosswise": "Crosswise",
    "unrelated-unknown": "UQTunknown", "cdm": "CDM", "cdm-sym": "CDMsym", "sld": "SLD",
    **{name.lower(): name for name in (
        "Warner", "UQTknown", "UQTunknown", "Mangat", "Kuk", "FR", "Crosswise", "Triangular",
        "CDM", "CDMsym", "SLD")},
}
#: True rates at which the cost of a wrong prior is shown.
SENSITIVITY_RATES = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)


class Written(float):
    """A number as the command line wrote it (``ln(3)``), which the pasted block repeats."""

    text: str

    def __new__(cls, value: float, text: str) -> Written:
        """The float ``value``, remembering ``text``."""
        number = super().__new__(cls, value)
        number.text = text.strip()
        return number


def number_text(text: str) -> float:
    """A command-line number as survey files write it: ``0.25`` or a fraction ``1/4``."""
    from ..survey.kinds import Invalid, parse_number

    try:
        return Written(parse_number(text), text)
    except Invalid as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def epsilon_text(text: str) -> float:
    """An epsilon as survey files write it: ``1.1``, ``1/2`` or ``ln(3)``."""
    from ..survey.kinds import Invalid, parse_number

    try:
        return Written(parse_number(text, allow_ln=True), text)
    except Invalid as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def margin_at(variance: float | None, respondents: int, confidence: float) -> float | None:
    """The margin of error N respondents give: z sqrt(variance / N) (None: no finite variance)."""
    if variance is None or not math.isfinite(variance):
        return None
    return z_value(confidence) * math.sqrt(variance / respondents)


def _given_respondents(args: argparse.Namespace) -> int | None:
    """--respondents N, checked (at least 1)."""
    given = getattr(args, "respondents", None)
    if given is not None and given < 1:
        raise UsageError(f"--respondents must be at least 1, got {given}")
    return None if given is None else int(given)


def _with_margins(result: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """With --respondents N: ``respondents_given`` and the margin N gives, overall and per row."""
    given = _given_respondents(args)
    if given is None:
        return result
    result["respondents_given"] = given
    if "variance" in result:
        result["margin_at_respondents"] = margin_at(result["variance"], given, args.confidence)
    for key, field in (("if_prior_wrong", "variance"), ("designs", "variance"),
                       ("designs", "variance_per_respondent")):
        for row in result.get(key, []):
            if field in row:
                row["margin_at_respondents"] = margin_at(row[field], given, args.confidence)
    return result


def _number(value: float | None) -> float | None:
    """JSON has no infinity: infinite or missing becomes null."""
    return None if value is None or math.isinf(value) else value


def _rrreg_p(args: argparse.Namespace) -> list[float]:
    if args.rrreg_p is None:
        raise UsageError("give the design's RRreg p with --rrreg-p (e.g. --rrreg-p 0.2,0.8)")
    try:
        return [float(value) for value in str(args.rrreg_p).split(",")]
    except ValueError as error:
        raise UsageError(f"--rrreg-p must be numbers separated by commas, got {args.rrreg_p!r}") \
            from error


def _check_common(args: argparse.Namespace) -> tuple[float, float]:
    prior = 0.5 if args.prior is None else args.prior
    if not 0.0 < prior < 1.0:
        raise UsageError(f"--prior must be between 0 and 1, got {prior!r}")
    if not 0.0 < args.margin < 1.0:
        raise UsageError(f"--margin must be between 0 and 1, got {args.margin!r}")
    if not 0.0 < args.confidence < 1.0:
        raise UsageError(f"--confidence must be between 0 and 1, got {args.confidence!r}")
    return prior, args.margin


def rrreg_plan(args: argparse.Namespace) -> dict[str, Any]:
    """`plan --design NAME` for RRreg's designs (rrsite.estimate.planning)."""
    from ..estimate.models import Design
    from ..estimate.planning import (
        delta_at,
        delta_whatever_epsilon,
        epsilon_of,
        prevalence_variance,
        respondents,
    )

    prior, margin = _check_common(args)
    model = RRREG_DESIGNS[args.design.lower()]
    try:
        design = Design(model, _rrreg_p(args), args.kukrep or 1)
    except ValueError as error:
        raise UsageError(f"--design {args.design}: {error}") from error
    epsilon = epsilon_of(design)
    if math.isinf(epsilon):
        delta = delta_whatever_epsilon(design) if args.epsilon is None else delta_at(
            design, args.epsilon)
    else:
        delta = 0.0 if args.epsilon is None else delta_at(design, args.epsilon)

    def var_at(rate: float) -> float:
        return prevalence_variance(design, rate, args.nuisance)

    result: dict[str, Any] = {
        "design": {"name": args.design, **design.describe()},
        "alternatives": [],
        "epsilon": _number(epsilon),
        "delta": delta,
        "prior": prior,
        "variance": var_at(prior),
        "margin": margin,
        "confidence": args.confidence,
        "respondents": respondents(var_at(prior), margin, args.confidence),
        "if_prior_wrong": [
            {"true_rate": rate, "variance": _number(var_at(rate)),
             "respondents": respondents(var_at(rate), margin, args.confidence)}
            for rate in SENSITIVITY_RATES
        ],
    }
    if math.isinf(epsilon):
        result["not_private"] = ["a report rules a true state out: no epsilon protects it"]
    if len(design.groups) == 2:
        result["groups"] = "respondents in total, drawn into the two groups with probability 1/2"
    return result


def compare_plan(args: argparse.Namespace) -> dict[str, Any]:
    """`plan --compare --epsilon E [--prior P]`: every family tuned to E."""
    from ..estimate.planning import compare, respondents

    if args.epsilon is None or not args.epsilon > 0:
        raise UsageError("--compare needs a positive --epsilon")
    prior, margin = _check_common(args)
    rows = compare(args.epsilon, prior, kukrep=args.kukrep or 3)
    return {
        "epsilon": args.epsilon,
        "prior": prior,
        "margin": margin,
        "confidence": args.confidence,
        "designs": [
            {
                "family": row.family,
                "design": None if row.design is None else row.design.describe(),
                "epsilon": None if row.epsilon is None else _number(row.epsilon),
                "variance": _number(row.variance),
                "respondents": respondents(row.variance, margin, args.confidence),
                "note": row.note,
            }
            for row in rows
        ],
    }


def compare_table(result: dict[str, Any]) -> str:
    """`plan --compare`'s text: every design family side by side."""
    lines = [
        f"every design family at epsilon = {result['epsilon']:g}, true rate guess "
        f"{result['prior']:g}, margin ±{result['margin']:g} at {result['confidence']:.0%}",
        f"{'family':<12}{'RRreg p':<28}{'variance':>10}{'respondents':>13}"
        + ("" if "respondents_given" not in result else
           f"{'margin at ' + format(result['respondents_given'], ','):>18}") + "   how tuned",
    ]
    for row in result["designs"]:
        design = row["design"]
        shown = "-" if design is None else ", ".join(
            f"{v:.4g}" for v in (design["p"] if isinstance(design["p"], list) else [design["p"]]))
        variance = "-" if row["variance"] is None else f"{row['variance']:.4g}"
        needed = "not private" if row["respondents"] is None else f"{row['respondents']:,}"
        margin = _margin_cell(row)[3:] if "respondents_given" in result else ""
        lines.append(f"{row['family']:<12}{shown:<28}{variance:>10}{needed:>13}"
                     + (f"{margin:>18}" if margin else "") + f"   {row['note']}")
    lines.append("variance: one respondent's asymptotic variance of the ML prevalence (/ N)")
    return "\n".join(lines)


def plan(args: argparse.Namespace) -> dict[str, Any]:
    """The plan as a JSON-ready dict; with --respondents N also the margin N respondents give."""
    _given_respondents(args)
    if getattr(args, "range", None) is not None:
        from .numbers import number_plan

        return _with_margins(number_plan(args), args)
    if getattr(args, "compare", False):
        if args.k is not None or getattr(args, "survey", None) is not None:
            from .frequency import frequency_plan

            return _with_margins(frequency_plan(args), args)
        return _with_margins(compare_plan(args), args)
    if args.design is not None and args.design.lower() in RRREG_DESIGNS and args.design not in (
            "warner",):
        return _with_margins(rrreg_plan(args), args)
    return _with_margins(_binary_plan(args), args)


def _binary_plan(args: argparse.Namespace) -> dict[str, Any]:
    """The optimal yes/no design for a budget, or a named yes/no or k-rr design."""
    given = {
        param: getattr(args, option)
        for option, param in DESIGN_OPTIONS.items()
        if getattr(args, option) is not None
    }
    if args.design is None:
        if given:
            raise UsageError(f"--{next(iter(given)).replace('_', '-')} needs --design")
        if args.epsilon is None:
            raise UsageError("give --epsilon (the budget) or --design NAME")
        prior = 0.5 if args.prior is None else args.prior
        best = optimal_design(args.epsilon, args.delta, prior)
        krr: KRR | None = None
        design: BinaryDesign = best.design
        epsilon, delta = best.epsilon, privacy_of(design, best.epsilon).delta
        result: dict[str, Any] = {
            "design": {"p00": design.p00, "p11": design.p11},
            "vertex": best.labels[0],
            "alternatives": [
                {"p00": d.p00, "p11": d.p11, "vertex": label}
                for d, label in zip(best.designs[1:], best.labels[1:], strict=True)
            ],
        }
    else:
        if args.design == "k-rr" and args.epsilon is not None and "p" not in given:
            given["epsilon"] = args.epsilon
        built = design_from_spec({"name": args.design, **given})
        krr = built if isinstance(built, KRR) else None
        guarantee = privacy_of(built, args.epsilon if "epsilon" not in given else None)
        epsilon, delta = guarantee.epsilon, guarantee.delta
        if isinstance(built, KRR):
            prior = 1.0 / built.k if args.prior is None else args.prior
            result = {
                "design": {"name": built.name, "k": built.k, "p": built.p, "q": built.q},
                "alternatives": [],
            }
        elif isinstance(built, BinaryDesign):
            prior = 0.5 if args.prior is None else args.prior
            design = built
            result = {
                "design": {
                    "name": built.name,
                    **built.params(),
                    "p00": built.p00,
                    "p11": built.p11,
                },
                "alternatives": [],
            }
        else:
            raise UsageError("plan covers yes/no designs and k-rr; give a 2 x 2 design")
        if guarantee.reasons:
            result["not_private"] = list(guarantee.reasons)

    def var_at(rate: float) -> float:
        """One respondent's variance at a true rate (one answer's share for k-rr)."""
        if krr is not None:
            return krr_variance(krr, rate)
        return variance(design, rate)

    z = z_value(args.confidence)
    margin: float = args.margin
    if not 0.0 < margin < 1.0:
        raise UsageError(f"--margin must be between 0 and 1, got {margin!r}")

    def needed(rate: float) -> int:
        return max(1, math.ceil(z * z * var_at(rate) / margin**2 - 1e-9))

    result.update(
        {
            "epsilon": _number(epsilon),
            "delta": delta,
            "prior": prior,
            "variance": var_at(prior),
            "margin": args.margin,
            "confidence": args.confidence,
            "respondents": needed(prior),
            "if_prior_wrong": [
                {"true_rate": rate, "variance": var_at(rate), "respondents": needed(rate)}
                for rate in SENSITIVITY_RATES
            ],
        }
    )
    if "k" not in result["design"]:
        assert (
            respondents_needed(design, args.margin, args.confidence, prior) == result["respondents"]
        )
    block = question_block(args, result)
    if block is not None:
        result["question_block"] = block
    return result


#: What the vertex letters of the optimal design mean (core/optimal.py).
VERTICES = {
    "S": "the symmetric design, p00 = p11: every true answer is kept with the same chance",
    "A": "p00 = 1: a true \"no\" is always reported \"no\"; a true \"yes\" is reported "
         "\"yes\" with chance p11 = delta",
    "B": "p11 = 1: a true \"yes\" is always reported \"yes\"; a true \"no\" is reported "
         "\"no\" with chance p00 = delta",
}


def _value(number: float) -> str:
    """A parameter as the survey file should say it.

    As written on the command line (``ln(3)``, ``1/4``), else the shortest text that reads back
    exactly.
    """
    if isinstance(number, Written):
        return number.text
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def question_block(args: argparse.Namespace, result: dict[str, Any]) -> str | None:
    """The ```question block for the planned design, or None (RRreg designs, --compare).

    The optimal design: ``epsilon:`` (and ``delta:``, ``prior:`` when given), from which the build
    chooses the same design. A named design: ``randomize:`` and its parameters exactly as given.
    """
    design = result.get("design", {})
    lines = ["```question", "id: your_question"]
    if args.design is None:
        if args.epsilon is None:
            return None
        lines += ["type: yes-no", f"epsilon: {_value(args.epsilon)}"]
        if args.delta:
            lines.append(f"delta: {_value(args.delta)}")
        if args.prior is not None and args.prior != 0.5:
            lines.append(f"prior: {_value(args.prior)}")
    elif "k" in design:
        lines += ["type: choice", "options:"]
        lines += [f"  - Answer {number}" for number in range(1, int(design["k"]) + 1)]
        lines.append("randomize: k-rr")
        if args.p is not None:
            lines.append(f"p: {_value(args.p)}")
        elif args.epsilon is not None:
            lines.append(f"epsilon: {_value(args.epsilon)}")
    else:
        lines += ["type: yes-no", f"randomize: {design.get('name', args.design)}"]
        for option, param in DESIGN_OPTIONS.items():
            value = getattr(args, option)
            if value is not None and param != "k":
                lines.append(f"{param}: {_value(value)}")
    return "\n".join([*lines, "```"])


def _explained(term: str, meaning: str) -> list[str]:
    """``  term          meaning``, wrapped at 96 columns under the meaning."""
    return textwrap.wrap(meaning, 96, initial_indent=f"  {term:<14}", subsequent_indent=" " * 16)


def _block_text(result: dict[str, Any]) -> list[str]:
    """The block to paste, the budget it needs, and the words of the table explained."""
    lines: list[str] = []
    block = result.get("question_block")
    if block:
        budget = result["epsilon"]
        lines += ["", "to ask it, paste into the survey file, under a '## ' heading with the "
                      "question's text:", ""]
        lines += [f"    {line}" for line in block.splitlines()]
        if budget is not None:
            lines += [""] + textwrap.wrap(
                f"it spends epsilon {budget:.6g}: the front matter's `privacy: budget:` must be "
                f"at least {budget:.6g} plus what the survey's other randomized questions spend",
                96)
    lines += ["", "what the words mean:"]
    if "k" in result["design"]:
        lines += _explained("k-rr", "k-ary randomized response: the true answer is reported with "
                            "chance p, each of the k - 1 others with chance q")
    else:
        lines += _explained("p00, p11", "the design: the chance that a true \"no\" is reported "
                            "\"no\" (p00), and that a true \"yes\" is reported \"yes\" (p11)")
    shown = [result.get("vertex"), *(alt.get("vertex") for alt in result["alternatives"])]
    for letter in dict.fromkeys(label for label in shown if label):
        lines += _explained(f"vertex {letter}", f"{VERTICES[letter]}. The best designs for a "
                            "budget lie at its corners S, A and B (A and B only when delta > 0)")
    lines += _explained("epsilon", "the privacy loss: a report is at most e^epsilon times "
                        "likelier under one true answer than under the other; delta: the chance "
                        "that this bound fails")
    lines += _explained("variance", "of the estimated rate, for one respondent; with N "
                        "respondents it is divided by N")
    lines += _explained("respondents", "how many it takes for the confidence interval to be "
                        "the estimate ± the margin")
    return lines


def table(result: dict[str, Any]) -> str:
    """`plan`'s text for one yes-no or k-RR design: privacy, variance, respondents, the block."""
    design = result["design"]
    if "k" in design:
        shown = (
            f"k-rr with k = {design['k']}: truth p = {design['p']:.6g}, "
            f"each other q = {design['q']:.6g}"
        )
    else:
        shown = f"p00 = {design['p00']:.6g}, p11 = {design['p11']:.6g}"
        if design.get("name"):
            shown = f"{design['name']}: {shown}"
        elif result.get("vertex"):
            shown += f"   (vertex {result['vertex']})"
    lines = [f"design        {shown}"]
    for alt in result["alternatives"]:
        lines.append(
            f"  tied with   p00 = {alt['p00']:.6g}, p11 = {alt['p11']:.6g}"
            f"   (vertex {alt['vertex']})"
        )
    lines += _privacy_lines(result, " whatever epsilon")
    lines.append(
        f"variance      {result['variance']:.6g} for one respondent at true rate "
        f"{result['prior']:g}"
    )
    lines.append(
        f"respondents   {result['respondents']:,} for a margin of ±{result['margin']:g} at "
        f"{result['confidence']:.0%} confidence"
    )
    lines += _margin_lines(result)
    lines.append("if the true rate is   variance   respondents" + _margin_head(result))
    for row in result["if_prior_wrong"]:
        lines.append(
            f"  {row['true_rate']:>8.2f}        {row['variance']:>9.4g}   {row['respondents']:>11,}"
            + _margin_cell(row)
        )
    lines.extend(_block_text(result))
    return "\n".join(lines)


def _margin_lines(result: dict[str, Any]) -> list[str]:
    """``margin  ±0.049 with 400 respondents at 95% confidence`` (with --respondents)."""
    if "respondents_given" not in result:
        return []
    margin = result.get("margin_at_respondents")
    shown = "none (no finite variance)" if margin is None else f"±{margin:.3g}"
    return [f"margin        {shown} with {result['respondents_given']:,} respondents at "
            f"{result['confidence']:.0%} confidence"]


def _margin_head(result: dict[str, Any]) -> str:
    return "" if "respondents_given" not in result else \
        f"   margin at {result['respondents_given']:,}"


def _margin_cell(row: dict[str, Any]) -> str:
    if "margin_at_respondents" not in row:
        return ""
    margin = row["margin_at_respondents"]
    return f"   {'-' if margin is None else f'±{margin:.3g}':>14}"


def _privacy_lines(result: dict[str, Any], after_delta: str = "") -> list[str]:
    """The privacy lines of a design's table: epsilon and delta, or why it is not private."""
    if result["epsilon"] is not None:
        return [f"privacy       epsilon = {result['epsilon']:.6g}, "
                f"delta = {result['delta']:.6g}"]
    return ["privacy       NOT differentially private for any epsilon",
            *(f"              {reason}" for reason in result.get("not_private", [])),
            f"              delta = {result['delta']:.6g}{after_delta}"]


def rrreg_table(result: dict[str, Any]) -> str:
    """`plan --design` of an RRreg design (two groups or a card deck): its figures as text."""
    design = result["design"]
    lines = [f"design        {design['name']} (RRreg {design['model']}, p = {design['p']}"
             + (f", Kukrep = {design['Kukrep']}" if "Kukrep" in design else "") + ")"]
    lines += _privacy_lines(result)
    variance = result["variance"]
    shown_prior = result["prior"]
    lines.append(f"variance      {variance:.6g} for one respondent at true rate {shown_prior:g}")
    needed = result["respondents"]
    lines.append(
        "respondents   " + ("not identified" if needed is None else f"{needed:,}")
        + f" for a margin of ±{result['margin']:g} at {result['confidence']:.0%} confidence"
        + (" (both groups together)" if "groups" in result else "")
    )
    lines += _margin_lines(result)
    lines.append("if the true rate is   variance   respondents" + _margin_head(result))
    for row in result["if_prior_wrong"]:
        lines.append(f"  {row['true_rate']:>8.2f}        {row['variance'] or math.inf:>9.4g}   "
                     f"{row['respondents'] or 0:>11,}" + _margin_cell(row))
    return "\n".join(lines)
