"""Frequency oracles (rrsite.core.frequency): report laws by brute force, samplers by chi-square.

For small k every report of every design is enumerated: the law sums to one under each truth,
the support chances p and q found by summation are the design's, every report's likelihood is
``ratio`` or 1 (up to a common factor) as it supports an answer or not, and the epsilon found by
comparing every report's chances under every pair of truths is the design's exact epsilon. The
samplers are checked against the law by chi-square with enough draws to see a 1% error in a
cell's chance. The hash family is pinned by vectors computed by hand and by an independent
re-implementation (vector arithmetic over Z_g) below.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from typing import Any

import pytest

from rrsite.core import DesignError, respond
from rrsite.core.frequency import (
    HadamardResponse,
    LocalHashing,
    SubsetSelection,
    UnaryEncoding,
    auto,
    bucket,
    compare,
    hadamard_plus,
    hadamard_size,
    oracle_from_spec,
    seed_count,
)
from rrsite.core.frequency.choose import krr_spread

from .stats import chi_square_p_value


def all_reports(design: Any) -> list[Any]:
    """Every report the design can send (small k only)."""
    if isinstance(design, UnaryEncoding):
        return [tuple(i for i in range(design.k) if bits >> i & 1)
                for bits in range(2 ** design.k)]
    if isinstance(design, LocalHashing):
        return [(s, y) for s in range(design.seeds) for y in range(design.g)]
    if isinstance(design, SubsetSelection):
        return [tuple(c) for c in itertools.combinations(range(design.k), design.d)]
    return list(range(design.size))


def truths_of(design: Any) -> list[Any]:
    if getattr(design, "sets", False):
        return [frozenset(c) for size in range(design.max_ticks + 1)
                for c in itertools.combinations(range(design.k), size)]
    return list(range(design.k))


DESIGNS = [
    UnaryEncoding(4, 1.0), UnaryEncoding(5, 2.5, optimized=False), LocalHashing(4, 1.0),
    LocalHashing(5, 2.0, g=3), SubsetSelection(5, 1.0), SubsetSelection(6, 0.5, d=2),
    HadamardResponse(5, 1.0), HadamardResponse(3, 3.0),
    UnaryEncoding(4, 2.0, max_ticks=2), UnaryEncoding(5, 1.5, optimized=False, max_ticks=2),
    UnaryEncoding(3, 1.0, max_ticks=3),
]


@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: f"{d.name}-{d.k}-{d.params()}")
def test_report_law_by_enumeration(design: Any) -> None:
    reports = all_reports(design)
    truths = truths_of(design)
    law = {t: [design.probability(r, t) for r in reports] for t in truths}
    for chances in law.values():
        assert math.fsum(chances) == pytest.approx(1.0, abs=1e-12)
    if not design.sets:
        # support chances, by summation
        for v in range(design.k):
            for t in truths:
                found = math.fsum(c for r, c in zip(reports, law[t], strict=True)
                                  if v in design.supports(r))
                assert found == pytest.approx(design.p if t == v else design.q, abs=1e-12)
        # every report: chance(truth v) / chance(truth u) is ratio^(supports v - supports u)
        for r_index, report in enumerate(reports):
            supported = set(design.supports(report))
            for v, u in itertools.permutations(range(design.k), 2):
                if law[u][r_index] == 0:
                    continue
                expected = design.ratio ** ((v in supported) - (u in supported))
                assert law[v][r_index] / law[u][r_index] == pytest.approx(expected, rel=1e-9)
    else:
        for box in range(design.k):
            for t in truths:
                found = math.fsum(c for r, c in zip(reports, law[t], strict=True) if box in r)
                assert found == pytest.approx(design.p if box in t else design.q, abs=1e-12)
    # epsilon: the largest log ratio of one report's chances under two truths
    brute = max(math.log(law[t][i] / law[u][i]) for t in truths for u in truths
                for i in range(len(reports)) if law[u][i] > 0)
    assert brute == pytest.approx(design.exact_epsilon(), rel=1e-9)
    assert design.privacy().epsilon == pytest.approx(design.epsilon, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("design", [UnaryEncoding(3, 1.0), LocalHashing(4, 1.5, g=3),
                                    SubsetSelection(4, 1.0, d=2), HadamardResponse(5, 1.0),
                                    UnaryEncoding(3, 2.0, max_ticks=2)],
                         ids=lambda d: f"{d.name}-{d.k}")
def test_sampler_matches_the_law_by_chi_square(design: Any) -> None:
    rng = random.Random(20260517)
    truth = frozenset({0, 2}) if design.sets else 1
    reports = all_reports(design)
    draws = 60_000
    seen = Counter(design.randomize(truth, rng)[0] for _ in range(draws))
    chances = [design.probability(r, truth) for r in reports]
    observed = [seen.get(r, 0) for r in reports]
    assert sum(observed) == draws  # no report outside the enumerated law
    assert chi_square_p_value(observed, chances) > 1e-4


@pytest.mark.slow
def test_sampler_with_many_answers_hits_the_support_chances() -> None:
    """k = 60: the share of reports supporting the truth and another answer, within 4 sd."""
    rng = random.Random(7)
    for design in (UnaryEncoding(60, 1.0), LocalHashing(60, 1.0), SubsetSelection(60, 1.0),
                   HadamardResponse(60, 1.0)):
        draws = 20_000
        hit = other = 0
        for _ in range(draws):
            support = set(design.supports(design.randomize(11, rng)[0]))
            hit += 11 in support
            other += 40 in support
        for count, chance in ((hit, design.p), (other, design.q)):
            sd = math.sqrt(chance * (1 - chance) / draws)
            assert abs(count / draws - chance) < 4 * sd, design.name


# ------------------------------------------------------------------------- the hash family


def independent_bucket(seed: int, answer: int, k: int, g: int) -> int:
    """The linear family written again: digit vectors over Z_g, a dot product plus b."""
    d = 1
    while g ** d < k:
        d += 1
    coefficients = [(seed // g ** i) % g for i in range(d + 1)]
    digits = [(answer // g ** i) % g for i in range(d)]
    return (sum(a * x for a, x in zip(coefficients[:d], digits, strict=True))
            + coefficients[d]) % g


#: (seed, answer, k, g) -> bucket, worked by hand: seed 5 in base 3 is 2, 1, 0, 0 (a0, a1, a2,
#: b); answer 7 is 1, 2, 0; 2*1 + 1*2 + 0*0 + 0 = 4 = 1 mod 3.
HAND_VECTORS = [((5, 7, 10, 3), 1), ((0, 9, 10, 3), 0), ((80, 9, 10, 3), (2 * 0 + 2 * 0 + 2 * 1
                                                                            + 2) % 3),
                ((1, 0, 2, 2), 0), ((3, 1, 2, 2), 0), ((2, 1, 2, 2), 1),
                ((123, 45, 100, 7), independent_bucket(123, 45, 100, 7))]


def test_hash_vectors_by_hand() -> None:
    for (seed, answer, k, g), expected in HAND_VECTORS:
        assert bucket(seed, answer, k, g) == expected


def test_hash_pinned_vectors() -> None:
    """A fixed table: a change of the family (which would split the browser from the analyzer)
    fails here. Values from the independent implementation above, pinned as literals."""
    pinned = {(17, 3, 30, 5): 1, (599, 29, 30, 5): 3, (1234, 99, 100, 11): 6,
              (2, 1, 4, 3): 2, (26, 3, 4, 3): 1, (1000, 700, 1000, 7): 1}
    for (seed, answer, k, g), value in pinned.items():
        assert independent_bucket(seed, answer, k, g) == value
        assert bucket(seed, answer, k, g) == value


@pytest.mark.parametrize(("k", "g"), [(10, 3), (30, 5), (7, 7), (4, 2)])
def test_hash_family_is_pairwise_exact(k: int, g: int) -> None:
    """Over every seed: each bucket equally likely, and two answers collide in exactly 1/g."""
    seeds = seed_count(k, g)
    for v in range(k):
        assert Counter(bucket(s, v, k, g) for s in range(seeds)) == {
            y: seeds // g for y in range(g)}
        for u in range(v):
            same = sum(bucket(s, v, k, g) == bucket(s, u, k, g) for s in range(seeds))
            assert same * g == seeds
            assert all(bucket(s, v, k, g) == independent_bucket(s, v, k, g)
                       for s in range(0, seeds, 7))


def test_hadamard_rows_split_columns_in_halves() -> None:
    k = 11
    size = hadamard_size(k)
    assert size == 16
    for v in range(k):
        plus = {j for j in range(size) if hadamard_plus(v, j)}
        assert len(plus) == size // 2
        for u in range(v):
            both = {j for j in range(size) if hadamard_plus(u, j)} & plus
            assert len(both) == size // 4


# ------------------------------------------------------------------------- checks and auto


def test_bad_parameters_are_named() -> None:
    with pytest.raises(DesignError, match="epsilon must be positive"):
        UnaryEncoding(5, -1.0)
    with pytest.raises(DesignError, match="g must be a prime"):
        LocalHashing(5, 1.0, g=4)
    with pytest.raises(DesignError, match="d must be 1 to 4"):
        SubsetSelection(5, 1.0, d=5)
    with pytest.raises(DesignError, match="max_ticks must be 1 to 5"):
        UnaryEncoding(5, 1.0, max_ticks=6)
    with pytest.raises(DesignError, match="unknown parameter 'g'"):
        oracle_from_spec({"name": "oue", "k": 5, "epsilon": 1, "g": 3})
    with pytest.raises(DesignError, match="at most 2 boxes"):
        UnaryEncoding(5, 1.0, max_ticks=2).check_truth({0, 1, 2})
    with pytest.raises(DesignError, match="the seed must be below"):
        LocalHashing(10, 1.0, g=3).decode("81:0", [str(i) for i in range(10)])
    with pytest.raises(DesignError, match="lists 3 options"):
        SubsetSelection(10, 1.0, d=3).decode(["1", "2"], [str(i) for i in range(10)])


def test_published_variances() -> None:
    """Wang et al. 2017 closed forms: OUE 4 e^eps / (e^eps - 1)^2; k-RR (e^eps + k - 2) / (...)^2;
    OLH at real g = e^eps + 1 equals OUE, and the prime g costs little."""
    e = math.e
    assert compare(10, 1.0)["oue"] == pytest.approx(4 * e / (e - 1) ** 2)
    assert krr_spread(100, 1.0) == pytest.approx((e + 98) / (e - 1) ** 2)
    assert compare(100, 1.0)["olh"] == pytest.approx((e + 2) ** 2 / (2 * (e - 1) ** 2))  # g=3
    assert compare(10, 1.0)["hadamard"] == pytest.approx(((e + 1) / (e - 1)) ** 2)


def test_auto_at_k100_epsilon1_is_within_5_percent_of_the_best() -> None:
    """Acceptance: auto's variance within 5% of the best of OUE, OLH, subset; k-RR about 10x."""
    choice = auto(100, 1.0)
    best = min(choice.variances[n] for n in ("oue", "olh", "subset"))
    assert choice.variances[choice.name] <= 1.05 * best
    assert 8.0 < choice.variances["k-rr"] / choice.variances[choice.name] < 12.0
    assert "smallest variance" in choice.reason and choice.name in choice.reason


def test_auto_keeps_krr_where_it_is_best() -> None:
    """k-RR wins (or ties subset selection with d = 1) while k < 3 e^eps + 2."""
    for k in (2, 3, 4, 5):
        assert auto(k, 1.0).name == "k-rr"
    assert auto(40, 1.0).name != "k-rr"
    assert auto(6, 1.0, max_ticks=2).name == "oue"


# ------------------------------------------------------------------------- respond


def test_respond_multi_choice_sends_a_list_of_values() -> None:
    q = {"id": "x", "type": "multi-choice", "values": ["a", "b", "c", "d"],
         "design": {"name": "oue", "k": 4, "epsilon": 2.0, "max_ticks": 2}}
    result = respond(q, json.dumps(["a", "c"]), rng=random.Random(1))
    assert set(result) == {"report", "steps"}
    assert isinstance(result["report"], list) and set(result["report"]) <= set(q["values"])
    assert len(result["steps"]) == 4
    with pytest.raises(DesignError, match="at most 2"):
        respond(q, json.dumps(["a", "b", "c"]))
    with pytest.raises(DesignError, match="not one of"):
        respond(q, json.dumps(["e"]))
