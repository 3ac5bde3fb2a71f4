"""What timing still tells an operator who watches every request of blind invitations.

Run: python benchmarks/blind_timing.py [--runs 200]

With blind invitations the trade (which shows the code) and the submission (which shows only a
token) are two requests nothing in their content relates. An operator who logs the moment of each
still sees a trade at t and a submission at t + d, d the time the respondent took to answer.
Respondents open their link at random moments of a fielding window W (uniform) and take a random
time to answer: exponential, or log-normal (most answer in a few minutes, some much later), with
a mean of 2.5, 5 or 10 % of W. The operator pairs trades and submissions two ways:

- in order: the i-th trade with the i-th submission (first in, first out);
- the most likely pairing for the answering times (log-normal, known to the operator): the
  assignment maximising the sum of log densities (scipy's linear_sum_assignment).

Printed: the share of respondents paired right, the mean over --runs fieldings, beside what a
random pairing gets (1 / n of them). More respondents at once, and longer answering times against
the window, hide each one better; one respondent at a time hides nobody.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from scipy.optimize import linear_sum_assignment

SIGMA = 1.0  # log-normal spread of answering times


def fielding(n: int, mean: float, law: str, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray]:
    """Open and send times of n respondents (window 1), respondent i at index i."""
    opened = rng.random(n)
    if law == "exponential":
        took = rng.exponential(mean, n)
    else:
        took = rng.lognormal(math.log(mean) - SIGMA ** 2 / 2, SIGMA, n)
    return opened, opened + took


def in_order(opened: np.ndarray, sent: np.ndarray) -> float:
    """Share right pairing the i-th trade with the i-th submission."""
    trades, sends = np.argsort(opened), np.argsort(sent)
    return float(np.mean(trades == sends))


def most_likely(opened: np.ndarray, sent: np.ndarray, mean: float) -> float:
    """Share right of the pairing that maximises the log-normal likelihood of the delays."""
    delay = sent[None, :] - opened[:, None]
    mu = math.log(mean) - SIGMA ** 2 / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        logd = -np.log(delay) - (np.log(delay) - mu) ** 2 / (2 * SIGMA ** 2)
    cost = np.where(delay > 0, -logd, 1e9)
    rows, cols = linear_sum_assignment(cost)
    return float(np.mean(rows == cols))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="fieldings per row (default 200)")
    parser.add_argument("--seed", type=int, default=9474)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"timing attack on blind invitations, {args.runs} fieldings per row; share of "
          "respondents paired right (a random pairing: 1/n)")
    print(f"  {'respondents':>11} {'mean answer':>11} {'law':>12} {'in order':>9} "
          f"{'most likely':>11} {'random':>7}")
    for n in (40, 400, 4000):
        for mean in (0.025, 0.05, 0.10):
            for law in ("exponential", "log-normal"):
                runs = max(4, args.runs * 40 // n)
                order, likely = [], []
                for _ in range(runs):
                    opened, sent = fielding(n, mean, law, rng)
                    order.append(in_order(opened, sent))
                    if law == "log-normal" and n <= 400:
                        likely.append(most_likely(opened, sent, mean))
                shown = f"{np.mean(likely):>10.1%}" if likely else f"{'-':>10}"
                print(f"  {n:>11,} {mean:>10.1%} {law:>12} {np.mean(order):>8.1%} {shown} "
                      f"{1 / n:>7.2%}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
