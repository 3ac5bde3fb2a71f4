"""`rrsite plan`: its options, and the plan printed as a table or JSON.

The figures (the optimal design, its variance, respondents and margins, the question block to
paste) come from rrsite.plan.designs; the tables of numbers and choice questions from
rrsite.plan.numbers and rrsite.plan.frequency.
"""

from __future__ import annotations

import argparse
import json

from ..core import DesignError
from ..errors import UsageError
from ..plan.designs import compare_table, epsilon_text, number_text, plan, rrreg_table, table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite plan`."""
    parser.add_argument("--epsilon", type=epsilon_text,
                        help="privacy budget epsilon (> 0): a number, a fraction (1/2) or ln(3), "
                             "as in survey files")
    parser.add_argument("--delta", type=number_text, default=0.0,
                        help="delta (default 0: pure DP)")
    parser.add_argument(
        "--prior",
        type=number_text,
        default=None,
        help="guess of the true rate (default 0.5; for k-rr the share of one answer, default 1/k)",
    )
    parser.add_argument("--margin", type=number_text, default=0.05,
                        help="margin of error (default 0.05)")
    parser.add_argument("--respondents", type=int, default=None, metavar="N",
                        help="the margin N respondents give (instead of the respondents a "
                             "margin needs)")
    parser.add_argument(
        "--confidence", type=number_text, default=0.95, help="confidence level (default 0.95)"
    )
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument(
        "--design",
        metavar="NAME",
        help="figures for a named design instead of the optimal one: forced-response, forced-yes, "
        "warner, unrelated, matrix, k-rr (give its parameters with the options below)",
    )
    parser.add_argument(
        "--compare", action="store_true",
        help="every design family tuned to --epsilon, side by side (variance, respondents); "
        "with --k (or --survey and --question): every design for a choice question",
    )
    parser.add_argument("--survey", metavar="FILE.md",
                        help="with --compare: plan the choice question --question of this "
                        "survey (its number of options and its epsilon)")
    parser.add_argument("--question", metavar="ID", help="with --survey: the question")
    parser.add_argument("--max-ticks", type=int, default=None, dest="max_ticks",
                        help="with --compare --k: a multi-choice set of at most this many ticks")
    parser.add_argument(
        "--rrreg-p", metavar="P[,P...]",
        help="crosswise, extended-crosswise, triangular, kuk, mangat, unrelated-unknown, cdm, "
        "cdm-sym, sld (or any RRreg model name): RRreg's p, comma-separated, in the order of "
        "RRreg's getPW (the survey file's p of that design)",
    )
    parser.add_argument("--kukrep", type=int, default=None, help="kuk: cards drawn (default 1)")
    parser.add_argument(
        "--nuisance", type=float, default=None,
        help="planning value of the nuisance: sld t (default 1), unrelated-unknown innocuous rate "
        "(default 0.5), cdm cheater share gamma (default 0)",
    )
    numbers = parser.add_argument_group("a randomized number question")
    numbers.add_argument("--range", metavar="MIN,MAX",
                         help="plan a number in [MIN, MAX]: respondents for --margin on the "
                         "mean (in the number's units) with --design laplace, duchi, piecewise "
                         "or mixture at --epsilon; --compare: all of them")
    numbers.add_argument("--sd", type=float, default=None,
                         help="with --range: guess of the true numbers' sd (default half the "
                         "range)")
    numbers.add_argument("--integer", action="store_true",
                         help="with --range: whole numbers (adds the uniform-mask mixture)")
    group = parser.add_argument_group("design parameters (with --design)")
    group.add_argument("--truth", type=number_text,
                       help="forced-response / forced-yes: P(truth)")
    group.add_argument("--yes", type=number_text, help="forced-response: P(forced yes)")
    group.add_argument("--no", type=number_text, help="forced-response: P(forced no)")
    group.add_argument("--p", type=number_text,
                       help="warner / unrelated / k-rr: P(sensitive or truth)")
    group.add_argument("--innocuous-rate", type=number_text,
                       help="unrelated: yes-rate of the innocuous")
    group.add_argument("--p00", type=number_text, help="matrix: P(no | no)")
    group.add_argument("--p11", type=number_text, help="matrix: P(yes | yes)")
    group.add_argument("--k", type=int, help="k-rr: number of answers")


def run(args: argparse.Namespace) -> int:
    """Print the plan; bad arguments raise UsageError (exit code 2)."""
    try:
        result = plan(args)
    except (DesignError, TypeError) as error:
        raise UsageError(str(error)) from error
    if args.format == "json":
        print(json.dumps(result, indent=2))
    elif "range" in result:
        from ..plan.numbers import number_table

        print(number_table(result))
    elif "frequency" in result:
        from ..plan.frequency import frequency_table

        print(frequency_table(result))
    elif "designs" in result:
        print(compare_table(result))
    elif "states" in result["design"]:
        print(rrreg_table(result))
    else:
        print(table(result))
    return 0
