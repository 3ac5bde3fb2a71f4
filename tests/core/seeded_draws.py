"""The first draws of every simulation marked slow in tests/core, from seeded sources.

The simulations (tens of thousands of draws each, checked against the designs' laws) run in
CPython only. Inside Pyodide the rest of tests/core runs, and these draws are made there too:
tests/pyodide compares them (a digest of their exact repr) with CPython's. A seeded source gives
the same numbers in both interpreters (the same Mersenne Twister), so equal first draws mean the
same code path on both, and a simulation's verdict in CPython holds for the code the browser runs.
Standard library only: this file also runs in Pyodide.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterator

from rrsite.core import respond
from rrsite.core.frequency import HadamardResponse, LocalHashing, SubsetSelection, UnaryEncoding
from rrsite.core.numbers import Multiplicative

from .test_numbers import number_designs
from .test_rrreg_designs import TWO_GROUP

#: Draws written out per case: enough to pass through every branch a simulation takes.
PER_CASE = 300

Case = tuple[str, Callable[[random.Random], object]]


def _numbers() -> Iterator[Case]:
    # test_numbers: test_report_mean_and_variance_by_simulation and the multiplicative delta
    for design in number_designs():
        low = 0.0 if design.minimum is None else design.minimum
        high = 100.0 if design.maximum is None else design.maximum
        middle = (low + high) / 2 if not design.integer else float(int((low + high) / 2))
        for y in (low, middle, high * 0.9 if not design.integer else float(int(high * 0.9))):
            def draw(rng: random.Random, design=design, y=y) -> object:
                report = design.randomize(y, rng).report
                return report, design.debias(report)
            yield f"{design.name} at {y!r}", draw
    delta = Multiplicative({"uniform": {"min": 0.5, "max": 1.5}}, 0.0, 10, 40)
    for y in (40, 10):
        yield f"multiplicative delta at {y}", lambda rng, y=y: delta.randomize(y, rng).report


def _two_groups() -> Iterator[Case]:
    # test_rrreg_designs: test_two_group_randomize_follows_each_group_matrix
    for design, *_ in TWO_GROUP:
        for truth in (0, 1):
            def draw(rng: random.Random, design=design, truth=truth) -> object:
                outcome = design.randomize(truth, rng)
                return outcome.group, outcome.report
            yield f"{design!r} truth {truth}", draw


def _many_answers() -> Iterator[Case]:
    # test_frequency: test_sampler_with_many_answers_hits_the_support_chances
    for design in (UnaryEncoding(60, 1.0), LocalHashing(60, 1.0), SubsetSelection(60, 1.0),
                   HadamardResponse(60, 1.0)):
        def draw(rng: random.Random, design=design) -> object:
            report = design.randomize(11, rng)[0]
            return report, sorted(design.supports(report))
        yield f"{design.name} k=60", draw


def _waves() -> Iterator[Case]:
    # test_waves: test_respond_keeps_and_reuses_the_permanent_reports
    q = {"id": "q", "type": "yes-no", "values": ["no", "yes"],
         "design": {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25},
         "memoize": {"wave_epsilon": 0.5}}
    table = {"reports": [0, 1]}
    yield "memoized yes-no", lambda rng: respond(q, "yes", rng=rng, permanent=table)["report"]
    multi = {"id": "m", "type": "multi-choice", "values": ["a", "b", "c"],
             "design": {"name": "oue", "k": 3, "epsilon": 2.0, "max_ticks": 2},
             "memoize": {"wave_epsilon": 1.0}}
    yield "memoized multi-choice", lambda rng: respond(multi, json.dumps(["a"]), rng=rng)


def cases() -> list[Case]:
    """Every case, in a fixed order."""
    return [*_numbers(), *_two_groups(), *_many_answers(), *_waves()]


def draws(share: int = 1, shares: int = 1) -> list[str]:
    """One line per case of share `share` of `shares` (cases share, share + shares, ...): its
    name, then the SHA-256 of the repr of its first PER_CASE draws from random.Random(case's
    index), then the start of that repr (to show where two interpreters part)."""
    lines = []
    for index, (name, draw) in enumerate(cases()):
        if index % shares == share - 1:
            rng = random.Random(index)
            written = repr([draw(rng) for _ in range(PER_CASE)])
            digest = hashlib.sha256(written.encode()).hexdigest()
            lines.append(f"{name}: {digest} {written[:160]}")
    return lines
