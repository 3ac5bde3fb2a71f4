"""Reports of frequency oracles in an export: checked row by row, turned into supports.

A report supports some answers (rrsite.core.frequency): the boxes reported ticked, the answers
whose bucket under the report's hash function is the bucket sent, the subset, the answers whose
Hadamard row is +1 in the column sent. :func:`supports` computes, for many reports at once, the
n x k table of which answers each supports, with numpy; it agrees with core's pure-Python
``supports`` bit for bit (tests/analyze/test_frequency_analysis.py compares them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import DesignError
from ..core.frequency import (
    FrequencyOracle,
    HadamardResponse,
    LocalHashing,
    SubsetSelection,
    UnaryEncoding,
    WaveOracle,
)


def base_of(oracle: FrequencyOracle) -> FrequencyOracle:
    """The design whose reports these are (a panel's wave reports are its permanent design's)."""
    return oracle.base if isinstance(oracle, WaveOracle) else oracle


def decode_all(oracle: FrequencyOracle, values: Sequence[str],
               objects: Sequence[Any]) -> tuple[list[Any], list[str | None]]:
    """Each row's report (None when empty or bad) and why a bad one is impossible (None if fine).

    A list arrives as a JSON list or its JSON text (CSV).
    """
    reports: list[Any] = []
    problems: list[str | None] = []
    base = base_of(oracle)
    listed = isinstance(base, UnaryEncoding | SubsetSelection)
    for value in objects:
        if value is None or value == "":
            reports.append(None)
            problems.append(None)
            continue
        if listed and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                reports.append(None)
                problems.append(f"{value!r} is not a JSON list of option values")
                continue
        try:
            reports.append(base.decode(value, values))
            problems.append(None)
        except DesignError as error:
            reports.append(None)
            problems.append(str(error))
    return reports, problems


def parity(values: np.ndarray) -> np.ndarray:
    """The parity of each number's set bits (numbers below 2^32), by folding with xor."""
    folded = values.copy()
    for shift in (16, 8, 4, 2, 1):
        folded ^= folded >> shift
    parity: np.ndarray = folded & 1
    return parity


def supports(oracle: FrequencyOracle, reports: Sequence[Any]) -> np.ndarray:
    """The n x k boolean table: does report i support answer v (rows of None: all False)."""
    base = base_of(oracle)
    k = base.k
    table = np.zeros((len(reports), k), dtype=bool)
    present = [i for i, report in enumerate(reports) if report is not None]
    if not present:
        return table
    if isinstance(base, UnaryEncoding | SubsetSelection):
        rows = np.repeat(np.array(present), [len(reports[i]) for i in present])
        cols = np.fromiter((v for i in present for v in reports[i]), dtype=np.int64,
                           count=len(rows))
        table[rows, cols] = True
        return table
    index = np.array(present)
    if isinstance(base, HadamardResponse):
        columns = np.array([reports[i] for i in present], dtype=np.int64)
        rows_of = np.arange(1, k + 1, dtype=np.int64)
        table[index] = parity(columns[:, None] & rows_of[None, :]) == 0
        return table
    assert isinstance(base, LocalHashing)
    g = base.g
    d = 1
    while g ** d < k:
        d += 1
    seeds = np.array([reports[i][0] for i in present], dtype=np.int64)
    sent = np.array([reports[i][1] for i in present], dtype=np.int64)
    coefficients = np.stack([(seeds // g ** j) % g for j in range(d + 1)], axis=1)
    answers = np.arange(k, dtype=np.int64)
    digits = np.stack([(answers // g ** j) % g for j in range(d)], axis=1)
    buckets = (coefficients[:, :d] @ digits.T + coefficients[:, d:d + 1]) % g
    table[index] = buckets == sent[:, None]
    return table
