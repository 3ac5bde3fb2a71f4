"""`rrsite power`: its options, the checks of their values, and the two sample sizes printed.

The asymptotic and simulated sample sizes come from rrsite.plan.power (a randomized outcome) and
rrsite.plan.power_predictor (a randomized predictor, ``--predictor``).
"""

from __future__ import annotations

import argparse
import math
import sys

from ..errors import UsageError
from ..plan.designs import epsilon_text, number_text
from ..plan.power import Bar, Scenario, required_n


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite power`."""
    parser.add_argument("--odds-ratio", type=number_text, required=True, metavar="R",
                        help="the odds ratio to detect (exposed vs not)")
    parser.add_argument("--epsilon", type=epsilon_text, default=None, metavar="E",
                        help="privacy budget of the question: the optimal design at E (a "
                             "number, a fraction or ln(3), as in survey files)")
    parser.add_argument("--design", default=None, metavar="P00,P11",
                        help="a 2x2 design instead of --epsilon")
    parser.add_argument("--prevalence", type=number_text, default=0.2,
                        help="true prevalence among the unexposed (default 0.2)")
    parser.add_argument("--exposed", type=number_text, default=0.5,
                        help="share of respondents with the covariate (default 0.5)")
    parser.add_argument("--power", type=number_text, default=0.8, help="target power (default 0.8)")
    parser.add_argument("--alpha", type=number_text, default=0.05, help="test level (default 0.05)")
    parser.add_argument("--simulations", type=int, default=400,
                        help="simulated surveys per sample size (default 400)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--predictor", action="store_true",
                        help="the randomized yes-no answer is the PREDICTOR (a share --exposed "
                        "truly has it) of a directly asked yes-no outcome (prevalence "
                        "--prevalence without it, odds ratio R with it): analyze --model "
                        "\"y ~ q\" (rrsite.plan.power_predictor)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress bar on stderr (default: on a terminal)")


def run(args: argparse.Namespace) -> int:
    """Print the asymptotic and the simulated sample size."""
    from ..core.optimal import optimal_design
    from ..plan import power_predictor

    if args.odds_ratio <= 0 or args.odds_ratio == 1:
        raise UsageError("--odds-ratio must be positive and not 1")
    for name in ("prevalence", "exposed", "power", "alpha"):
        if not 0 < getattr(args, name) < 1:
            raise UsageError(f"--{name} must be between 0 and 1")
    if args.simulations < 10:
        raise UsageError("--simulations must be 10 or more")
    if args.design:
        try:
            p00, p11 = (float(v) for v in args.design.split(","))
        except ValueError as error:
            raise UsageError(f"--design {args.design!r}: write P00,P11") from error
        label = f"design p00 = {p00:.4g}, p11 = {p11:.4g}"
    elif args.epsilon is not None:
        prior = args.exposed if args.predictor else args.prevalence
        design = optimal_design(args.epsilon, prior=prior).designs[0]
        p00, p11 = design.p00, design.p11
        label = f"optimal design at epsilon {args.epsilon:g} (p00 = {p00:.4g}, p11 = {p11:.4g})"
    else:
        raise UsageError("give --epsilon E (the optimal design) or --design P00,P11")
    if not (0 <= p00 <= 1 and 0 <= p11 <= 1 and p00 + p11 > 1):
        raise UsageError("the design needs p00 + p11 > 1 (probabilities in [0, 1])")
    enabled = sys.stderr.isatty() if args.progress is None else bool(args.progress)
    bar = Bar(args.simulations * 8, enabled)
    if args.predictor:
        n0, n, achieved = power_predictor.required_n(
            power_predictor.PredictorScenario(p00, p11, args.prevalence, args.exposed,
                                              args.odds_ratio),
            args.power, args.alpha, args.simulations, args.seed, bar)
        label = "randomized predictor, " + label
    else:
        scenario = Scenario(p00, p11, args.prevalence, args.exposed, args.odds_ratio)
        n0, n, achieved = required_n(scenario, args.power, args.alpha, args.simulations,
                                     args.seed, bar)
    bar.close()
    mc = math.sqrt(achieved * (1 - achieved) / args.simulations)
    print(f"odds ratio {args.odds_ratio:g} (prevalence {args.prevalence:g} unexposed, "
          f"{args.exposed:g} exposed), {label}")
    print(f"Wald test at alpha {args.alpha:g}, power {args.power:g}:")
    print(f"  asymptotic (expected information): {n0:,} respondents")
    print(f"  by simulation ({args.simulations} surveys per size): {n:,} respondents "
          f"(simulated power {achieved:.3f} +/- {mc:.3f})")
    return 0
