"""Simulated reports of frequency oracles, "tick all that apply", and panels of several waves.

The samplers draw what rrsite.core.frequency's designs draw, vectorised with numpy (the core's
are one respondent at a time, for the browser); tests/analyze/test_frequency_analysis.py checks
them against the core's report laws by chi-square. A multi-choice question's true sets tick each
box with its own rate, redrawn while more than ``max_ticks`` boxes are ticked; :func:`set_shares`
gives the exact shares that follow. A panel (:func:`panel_reports`) keeps each respondent's
permanent reports (a table over every possible truth, as the device does) and re-randomizes them
every wave.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.frequency import (
    FrequencyOracle,
    HadamardResponse,
    LocalHashing,
    Memoized,
    SubsetSelection,
    UnaryEncoding,
    WaveOracle,
)
from ..errors import UsageError
from ..exports.catalog import QuestionSpec
from ..exports.oracles import parity
from .draws import probability

#: A redraw of a set with too many ticks is tried this often before giving up.
REDRAWS = 1000


def hash_buckets(seeds: np.ndarray, answers: np.ndarray, k: int, g: int) -> np.ndarray:
    """h_seed(answer) of core's linear family, for arrays of seeds and answers."""
    d = 1
    while g ** d < k:
        d += 1
    total = seeds // g ** d % g  # b
    for j in range(d):
        total = total + (seeds // g ** j % g) * (answers // g ** j % g)
    out: np.ndarray = total % g
    return out


def sample(rng: np.random.Generator, oracle: FrequencyOracle, truth: np.ndarray) -> list[Any]:
    """Reports (in the submission's form) for true answers (indices) or true sets (n x k bool)."""
    design: Any = oracle.base if isinstance(oracle, WaveOracle) else oracle
    n = len(truth)
    if isinstance(design, UnaryEncoding):
        ticked = truth if design.sets else np.eye(design.k, dtype=bool)[truth]
        chance = np.where(ticked, oracle.p, oracle.q)
        bits = rng.random((n, design.k)) < chance
        return [tuple(np.flatnonzero(row).tolist()) for row in bits]
    if isinstance(design, LocalHashing):
        keep = oracle.p if isinstance(oracle, WaveOracle) else design.bucket_p
        seeds = rng.integers(0, design.seeds, n)
        buckets = hash_buckets(seeds, truth, design.k, design.g)
        other = (buckets + rng.integers(1, design.g, n)) % design.g
        sent = np.where(rng.random(n) < keep, buckets, other)
        return list(zip(seeds.tolist(), sent.tolist(), strict=True))
    if isinstance(design, SubsetSelection):
        inside = rng.random(n) < design.p
        keys = rng.random((n, design.k))
        keys[np.arange(n), truth] = np.where(inside, -1.0, 2.0)
        chosen = np.argsort(keys, axis=1)[:, :design.d]
        return [tuple(sorted(row)) for row in chosen.tolist()]
    assert isinstance(design, HadamardResponse)
    inside = rng.random(n) < design.p
    columns = rng.integers(0, design.size, n)
    rows = truth + 1
    plus = parity(columns & rows) == 0
    picked: list[Any] = np.where(plus == inside, columns, columns ^ (rows & -rows)).tolist()
    return picked


def max_ticks_of(oracle: FrequencyOracle) -> int:
    """The most boxes a multi-choice question's truth may tick."""
    design: Any = oracle.base if isinstance(oracle, WaveOracle) else oracle
    return int(design.max_ticks)


def encode(oracle: FrequencyOracle, reports: list[Any], values: tuple[str, ...]) -> list[Any]:
    """The reports as the submission carries them."""
    return [oracle.encode(report, values) for report in reports]


def parse_set_rates(text: str, question: QuestionSpec, item: str) -> np.ndarray:
    """``value:rate,value:rate``: each box's chance of being ticked (others 1/k)."""
    k = len(question.values)
    rates = np.full(k, 1.0 / k)
    for piece in text.split(","):
        value, sep, number = piece.rpartition(":")
        if not sep or value not in question.values:
            raise UsageError(f"--truth {item!r}: {value!r} is not an option of {question.id} "
                             f"({', '.join(question.values)})")
        rates[question.values.index(value)] = probability(item, number)
    return rates


def draw_sets(rng: np.random.Generator, rates: np.ndarray, max_ticks: int,
              count: int) -> np.ndarray:
    """True sets (count x k bool): each box ticked with its rate, redrawn while too many."""
    sets = rng.random((count, len(rates))) < rates
    for _ in range(REDRAWS):
        over = np.flatnonzero(sets.sum(axis=1) > max_ticks)
        if not len(over):
            return sets
        sets[over] = rng.random((len(over), len(rates))) < rates
    raise UsageError("the tick rates given make more than max_ticks boxes almost certain: "
                     "lower them")


def set_shares(rates: np.ndarray, max_ticks: int) -> np.ndarray:
    """The exact share of each box among sets drawn by :func:`draw_sets`.

    P(box j | at most m ticks) = r_j P(the others tick at most m - 1) / P(at most m), with the
    Poisson-binomial law of the others' ticks by dynamic programming.
    """
    def at_most(chances: np.ndarray, m: int) -> float:
        law = np.zeros(len(chances) + 1)
        law[0] = 1.0
        for chance in chances:
            law[1:] = law[1:] * (1 - chance) + law[:-1] * chance
            law[0] *= 1 - chance
        return float(law[:m + 1].sum())

    total = at_most(rates, max_ticks)
    out = np.array([rates[j] * at_most(np.delete(rates, j), max_ticks - 1) / total
                    for j in range(len(rates))])
    return out


def panel_tables(rng: np.random.Generator, memo: Memoized, count: int) -> dict[str, np.ndarray]:
    """Each respondent's permanent reports for every possible truth (what the device keeps)."""
    design: Any = memo.design
    if memo.kind == "matrix":
        matrix = np.asarray(design.matrix, dtype=np.float64)
        cumulative = np.cumsum(matrix, axis=1)
        cumulative[:, -1] = 1.0
        reports = np.stack([np.searchsorted(cumulative[v], rng.random(count), side="right")
                            for v in range(design.k)], axis=1)
        return {"reports": reports.clip(0, matrix.shape[1] - 1)}
    if memo.kind == "unary":
        return {"if_ticked": rng.random((count, design.k)) < design.p,
                "if_empty": rng.random((count, design.k)) < design.q}
    seeds = rng.integers(0, design.seeds, count)
    answers = np.arange(design.k)
    buckets = hash_buckets(seeds[:, None], answers[None, :], design.k, design.g)
    other = (buckets + rng.integers(1, design.g, buckets.shape)) % design.g
    kept = rng.random(buckets.shape) < design.bucket_p
    return {"seed": seeds, "buckets": np.where(kept, buckets, other)}


def panel_reports(rng: np.random.Generator, memo: Memoized, tables: dict[str, np.ndarray],
                  truth: np.ndarray) -> list[Any]:
    """One wave's reports: each respondent's permanent report of their truth, re-randomized."""
    n = len(truth)
    rows = np.arange(n)
    if memo.kind == "matrix":
        r = memo.reports
        permanent = tables["reports"][rows, truth]
        other = (permanent + rng.integers(1, r, n)) % r
        sent: list[Any] = np.where(rng.random(n) < memo.p2, permanent, other).tolist()
        return sent
    if memo.kind == "unary":
        design: Any = memo.design
        ticked = truth if design.sets else np.eye(design.k, dtype=bool)[truth]
        permanent = np.where(ticked, tables["if_ticked"], tables["if_empty"])
        flip = rng.random((n, design.k)) >= memo.p2
        return [tuple(np.flatnonzero(row).tolist()) for row in permanent ^ flip]
    g = memo.design.g
    permanent = tables["buckets"][rows, truth]
    other = (permanent + rng.integers(1, g, n)) % g
    buckets = np.where(rng.random(n) < memo.p2, permanent, other)
    return list(zip(tables["seed"].tolist(), buckets.tolist(), strict=True))
