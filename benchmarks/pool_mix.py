"""What the spent-code pool reveals to the holder of a database copy, at 40 codes and at scale.

Run: python benchmarks/pool_mix.py [--mix 1024] [--seeds 3]

PostgreSQL keeps spent invitation codes (and traded codes, redeemed tokens) in a pool that every
spending batch rewrites whole; when a survey's pool reaches 2 * MIX entries, a uniformly random part
of them settles into an indexed table so that MIX stay (rrsite/collect/invitations/pgspend.py). Each
settled row carries the transaction id of the batch that settled it; each submission the id of the
batch that stored it. So the holder of a copy knows, for every settled code, that it was spent
before its settling batch, and for every submission when it was stored: nothing else orders them.

This simulates that policy for S spends, batches of B submissions each (B = 1: respondents one at
a time, the worst case; B = 32: a busy collector, where a batch's submissions share one id), and
plays the attacker who, for each submission, guesses a code uniformly among those settled by the
first settling batch at or after it (or, if none came yet, among the pool). Beside it, the
closed form for B = 1: each settling batch settles half of 2 * MIX entries, so a code is in the
first settling after its spend with probability 1/2, among MIX codes: a guess is right with
probability 1 / (2 * MIX); codes not settled yet are among the whole pool. A random pairing gets
about one right in all.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

MIX = 1024


def simulate(spends: int, mix: int, batch: int, seed: int) -> tuple[float, float]:
    """(expected right guesses of the attacker, how many settling batches) for one history.

    The expectation is exact given the history: a guess among n candidates that hold the code is
    right with probability 1/n.
    """
    rng = random.Random(seed)
    pool: list[int] = []  # spend indices of the codes in the pool
    settled_at: dict[int, int] = {}  # spend index -> settling batch
    settle_size: dict[int, int] = {}  # settling batch -> how many settled
    settles: list[int] = []
    spent = 0
    for number in range((spends + batch - 1) // batch):
        size = min(batch, spends - spent)
        pool += range(spent, spent + size)
        spent += size
        if len(pool) >= 2 * mix:
            rng.shuffle(pool)
            moving, pool = pool[:len(pool) - mix], pool[len(pool) - mix:]
            for index in moving:
                settled_at[index] = number
            settle_size[number] = len(moving)
            settles.append(number)
    expected = 0.0
    first = 0  # the first settling batch at or after each batch, by a moving pointer
    for index in range(spends):
        number = index // batch
        while first < len(settles) and settles[first] < number:
            first += 1
        if first < len(settles):  # guess among the first settling batch after the spend
            if settled_at.get(index) == settles[first]:
                expected += 1 / settle_size[settles[first]]
        elif index not in settled_at:  # no settling since: among the pool
            expected += 1 / len(pool)
    return expected, len(settles)


def closed_form(spends: int, mix: int) -> float:
    """Expected right guesses for one spend a batch (B = 1)."""
    if spends < 2 * mix:
        return 1.0  # the pool holds every code spent: a random guess among them each
    settled_cycles = (spends - 2 * mix) // mix + 1
    last_settle = 2 * mix + (settled_cycles - 1) * mix
    recent = spends - last_settle  # spent since the last settling: in the pool of mix + recent
    return last_settle / (2 * mix) + (recent / (mix + recent) if recent else 0.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mix", type=int, default=MIX, help="entries kept in the pool (1024)")
    parser.add_argument("--seeds", type=int, default=3, help="histories per row (default 3)")
    args = parser.parse_args()
    print(f"pool mix: MIX = {args.mix}; the attacker guesses, for each submission, a code among "
          "the first settling after it (or the pool)")
    print(f"  {'spends':>10} {'batch':>5} {'settlings':>9} {'right (sim.)':>13} "
          f"{'right (closed form)':>19} {'share right':>11} {'a random pairing':>16}")
    for spends in (40, 1_000, 100_000, 500_000, 1_000_000):
        for batch in (1, 32):
            started = time.perf_counter()
            runs = [simulate(spends, args.mix, batch, seed) for seed in range(args.seeds)]
            right = sum(r[0] for r in runs) / len(runs)
            form = f"{closed_form(spends, args.mix):,.1f}" if batch == 1 else "-"
            print(f"  {spends:>10,} {batch:>5} {runs[0][1]:>9,} {right:>13,.1f} {form:>19} "
                  f"{right / spends:>10.3%} {'1':>16}   ({time.perf_counter() - started:.1f} s)",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
