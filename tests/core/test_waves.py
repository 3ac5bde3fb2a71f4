"""A panel's permanent reports (rrsite.core.frequency.waves): the ledger against brute force.

The joint law of w waves' reports that share one permanent report is enumerated report tuple by
report tuple (sum over the permanent report of its chance times each wave's re-randomization);
its epsilon, the largest log ratio of a tuple's chances under two truths, must equal the
ledger's. The samplers are checked against the one-wave law by chi-square.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from typing import Any

import pytest

from rrsite.core import KRR, CategoricalMatrix, DesignError, design_from_spec, respond
from rrsite.core.frequency import LocalHashing, Memoized, UnaryEncoding, bucket

from .stats import chi_square_p_value


def matrix_joint(memo: Memoized, waves: int) -> dict[int, list[float]]:
    rows = memo.design.matrix
    r = len(rows[0])
    q2 = (1 - memo.p2) / (r - 1)
    law = {}
    for v, row in enumerate(rows):
        law[v] = [math.fsum(row[b] * math.prod(memo.p2 if t == b else q2 for t in tup)
                            for b in range(r))
                  for tup in itertools.product(range(r), repeat=waves)]
    return law


def unary_joint(memo: Memoized, waves: int) -> dict[Any, list[float]]:
    design = memo.design
    p2 = memo.p2
    truths = ([frozenset(c) for size in range(design.max_ticks + 1)
               for c in itertools.combinations(range(design.k), size)] if design.sets
              else list(range(design.k)))
    vectors = list(itertools.product((0, 1), repeat=design.k))
    law = {}
    for t in truths:
        ticked = design.ticked(t)
        chances = []
        for tup in itertools.product(vectors, repeat=waves):
            chance = 1.0
            for box in range(design.k):
                one = design.p if box in ticked else design.q
                sent = [vec[box] for vec in tup]
                chance *= math.fsum(
                    (one if b else 1 - one) * math.prod(
                        (p2 if s == b else 1 - p2) for s in sent) for b in (0, 1))
            chances.append(chance)
        law[t] = chances
    return law


def hash_joint(memo: Memoized, waves: int) -> dict[int, list[float]]:
    design = memo.design
    g = design.g
    q2 = (1 - memo.p2) / (g - 1)
    law = {}
    for v in range(design.k):
        chances = []
        for seed in range(design.seeds):
            h = bucket(seed, v, design.k, g)
            for tup in itertools.product(range(g), repeat=waves):
                chances.append(math.fsum(
                    (design.bucket_p if b == h else design.bucket_q)
                    * math.prod(memo.p2 if y == b else q2 for y in tup) for b in range(g))
                    / design.seeds)
        law[v] = chances
    return law


def brute_epsilon(law: dict[Any, list[float]]) -> float:
    for chances in law.values():
        assert math.fsum(chances) == pytest.approx(1.0, abs=1e-12)
    return max(math.log(law[t][i] / law[u][i]) for t in law for u in law
               for i in range(len(law[t])) if law[u][i] > 0)


CASES = [
    ("k-rr", lambda: Memoized(KRR(3, epsilon=2.0), 0.8), matrix_joint),
    ("forced-response", lambda: Memoized(design_from_spec(
        {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25}), 0.6), matrix_joint),
    ("matrix", lambda: Memoized(CategoricalMatrix(((0.6, 0.3, 0.1), (0.2, 0.5, 0.3),
                                                   (0.1, 0.3, 0.6))), 0.7), matrix_joint),
    ("oue", lambda: Memoized(UnaryEncoding(3, 2.0), 1.0), unary_joint),
    ("sue-sets", lambda: Memoized(UnaryEncoding(3, 2.0, False, max_ticks=2), 1.2), unary_joint),
    ("olh", lambda: Memoized(LocalHashing(3, 2.0, g=3), 1.0), hash_joint),
]


@pytest.mark.parametrize(("name", "make", "joint"), CASES, ids=[c[0] for c in CASES])
def test_ledger_is_the_exact_composition(name: str, make: Any, joint: Any) -> None:
    memo = make()
    assert memo.epsilon(1) == pytest.approx(memo.wave_epsilon, rel=1e-9)
    ledger = memo.ledger(3)
    assert ledger == sorted(ledger) and ledger[-1] < memo.bound
    for waves in (1, 2, 3):
        if name in ("oue", "sue-sets") and waves == 3:
            continue  # 2^9 report vectors per wave tuple: waves 1 and 2 already enumerate it
        assert brute_epsilon(joint(memo, waves)) == pytest.approx(memo.epsilon(waves), rel=1e-9)
        assert memo.exact(waves)
    # many waves approach, never pass, the permanent report's epsilon
    assert memo.bound - 0.05 < memo.epsilon(60) <= memo.bound + 1e-12


@pytest.mark.slow
def test_one_wave_law_and_sampler() -> None:
    """The wave oracle's chances are the chain's; a fresh table + re-randomization samples them."""
    memo = Memoized(UnaryEncoding(3, 2.0), 1.0)
    wave = memo.one_wave()
    law = unary_joint(memo, 1)
    vectors = list(itertools.product((0, 1), repeat=3))
    for v in range(3):
        for i, vec in enumerate(vectors):
            report = tuple(j for j in range(3) if vec[j])
            assert wave.probability(report, v) == pytest.approx(law[v][i], rel=1e-12)
    rng = random.Random(99)
    draws = 40_000
    seen = Counter(memo.wave_report(memo.draw_table(rng), 1, rng)[0] for _ in range(draws))
    reports = [tuple(j for j in range(3) if vec[j]) for vec in vectors]
    observed = [seen.get(r, 0) for r in reports]
    assert sum(observed) == draws
    assert chi_square_p_value(observed, [wave.probability(r, 1) for r in reports]) > 1e-4
    # the same table, wave after wave: the permanent report shows through (correlation)
    table = memo.draw_table(rng)
    kept = Counter(memo.wave_report(table, 1, rng)[0] for _ in range(draws))
    assert kept != seen


def test_matrix_one_wave_is_the_chain() -> None:
    memo = Memoized(KRR(4, epsilon=2.0), 1.0)
    one = memo.one_wave()
    assert isinstance(one, KRR | CategoricalMatrix)
    from rrsite.core.base import smallest_epsilon

    assert smallest_epsilon(one.matrix) == pytest.approx(1.0, rel=1e-9)


def test_refusals() -> None:
    with pytest.raises(DesignError, match="below the question's epsilon"):
        Memoized(KRR(3, epsilon=1.0), 1.5)
    with pytest.raises(DesignError, match="not differentially private"):
        Memoized(design_from_spec({"name": "forced-yes", "truth": 0.5}), 0.5)
    memo = Memoized(KRR(3, epsilon=1.0), 0.5)
    with pytest.raises(DesignError, match="do not fit"):
        memo.check_table({"reports": [0, 1]})


def test_a_scheme_is_solved_once_per_design_and_wave_epsilon() -> None:
    from rrsite.core.frequency.respond import design_of, memo_of
    q = {"id": "q", "type": "yes-no", "values": ["no", "yes"],
         "design": {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25},
         "memoize": {"wave_epsilon": 0.4}}
    first = memo_of(q, design_of(q))
    assert first is not None and first is memo_of(dict(q), design_of(q))
    assert first.p2 == Memoized(design_from_spec(q["design"]), 0.4).p2  # a fresh solve
    other = memo_of({**q, "memoize": {"wave_epsilon": 0.3}}, design_of(q))
    assert other is not None and other.p2 < first.p2  # less per wave: kept less often
    with pytest.raises(TypeError, match="must be a number"):  # a bad one is never a cached one
        memo_of({**q, "memoize": {"wave_epsilon": [0.4]}}, design_of(q))


@pytest.mark.slow
def test_respond_keeps_and_reuses_the_permanent_reports() -> None:
    q = {"id": "q", "type": "yes-no", "values": ["no", "yes"],
         "design": {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25},
         "memoize": {"wave_epsilon": 0.5}}
    first = respond(q, "yes", rng=random.Random(3))
    assert first["drawn_now"] is True and set(first["permanent"]) == {"reports"}
    # the table drawn does not depend on the truth: the same source gives the same table
    assert respond(q, "no", rng=random.Random(3))["permanent"] == first["permanent"]
    memo = Memoized(design_from_spec(q["design"]), 0.5)
    table = {"reports": [0, 1]}  # permanent "no" for truth no, "yes" for truth yes
    rng = random.Random(5)
    draws = 20_000
    yes = sum(respond(q, "yes", rng=rng, permanent=table)["report"] == "yes"
              for _ in range(draws))
    sd = math.sqrt(memo.p2 * (1 - memo.p2) / draws)
    assert abs(yes / draws - memo.p2) < 4 * sd
    again = respond(q, "yes", rng=rng, permanent=table)
    assert again["permanent"] == table and again["drawn_now"] is False
    multi = {"id": "m", "type": "multi-choice", "values": ["a", "b", "c"],
             "design": {"name": "oue", "k": 3, "epsilon": 2.0, "max_ticks": 2},
             "memoize": {"wave_epsilon": 1.0}}
    out = respond(multi, json.dumps(["a"]), rng=rng)
    assert len(out["permanent"]["bits"]) == 3 and isinstance(out["report"], list)
