"""The same question in every wave of a panel: a permanent report, re-randomized lightly each wave.

RAPPOR's permanent randomized response (Erlingsson, Pihur & Korolova 2014; for k answers L-GRR,
for unary encoding L-OSUE, for local hashing LOLOHA: Arcolezi et al. 2022 and 2023): the first
time a question is asked, the device draws a *permanent* report with the question's design at
its epsilon (the bound for all waves together) and keeps it; every wave then sends an
*instantaneous* re-randomization of it, tuned so that one wave's report alone has the smaller
``wave_epsilon``. The device keeps a permanent report for every possible true answer (a table
drawn at once), so what it keeps says nothing about which answer is true, and a changed answer
uses its own permanent report.

- a design given by a matrix (yes-no designs, k-rr, a k x k matrix): the instantaneous step is
  k-ary randomized response over the reports, keeping the permanent report with chance p2;
- unary encoding (oue, sue; also a set): each box's permanent bit is kept with chance p2, else
  flipped;
- local hashing (olh): the hash function is drawn once; the bucket is re-randomized by g-ary
  randomized response.

The ledger: ``epsilon(w)`` is the exact epsilon of w reports that share one permanent report
(the joint law of the w reports, maximised over every pair of truths and every w-tuple of
reports, counted by how often each report occurs); it grows from ``wave_epsilon`` at w = 1
towards the permanent report's epsilon, which no number of waves exceeds.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

from ..base import Design, Matrix, Step, draw, secure_random, smallest_epsilon
from ..errors import DesignError
from ..privacy import Privacy
from .oracles import FrequencyOracle, LocalHashing, UnaryEncoding, check_epsilon

#: Beyond this many count profiles the ledger of a general matrix is bounded, not enumerated.
MAX_PROFILES = 200_000


def compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every way to write ``total`` as an ordered sum of ``parts`` counts >= 0."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


def partitions(total: int, most: int, largest: int | None = None) -> Iterator[tuple[int, ...]]:
    """Every way to write ``total`` as a sum of at most ``most`` positive counts, largest first."""
    largest = total if largest is None else largest
    if total == 0:
        yield ()
        return
    if most == 0:
        return
    for first in range(min(total, largest), 0, -1):
        for rest in partitions(total - first, most - 1, first):
            yield (first, *rest)


def symmetric(rows: Matrix) -> tuple[float, float] | None:
    """(p1, q1) when a square matrix is k-ary randomized response, else None."""
    k = len(rows)
    if any(len(row) != k for row in rows):
        return None
    p1, q1 = rows[0][0], rows[0][1]
    if all(abs(rows[i][j] - (p1 if i == j else q1)) < 1e-12 for i in range(k) for j in range(k)):
        return p1, q1
    return None


def grr_chain_epsilon(p1: float, q1: float, r: int, p2: float, waves: int) -> float:
    """Exact epsilon of ``waves`` reports of g-ary RR (p2) on a permanent g-ary RR report (p1).

    The joint chance of the reports under truth v is, up to a common factor,
    q1 S + (p1 - q1) c_v, with c_b = (p2/q2)^(times b was sent) and S = sum_b c_b: it depends on
    the counts only, so the partitions of ``waves`` into at most r parts are every case.
    """
    q2 = (1.0 - p2) / (r - 1)
    if q2 <= 0.0:
        return smallest_epsilon(tuple(tuple(p1 if i == j else q1 for j in range(r))
                                      for i in range(r)))
    best = 0.0
    for parts in partitions(waves, r):
        weights = [(p2 / q2) ** n for n in parts]
        unseen = r - len(parts)
        total = sum(weights) + unseen
        low = 1.0 if unseen else min(weights)
        top = q1 * total + (p1 - q1) * max(weights)
        bottom = q1 * total + (p1 - q1) * low
        best = max(best, math.inf if bottom <= 0 else math.log(top / bottom))
    return best


def matrix_chain_epsilon(rows: Matrix, p2: float, waves: int) -> tuple[float, bool]:
    """(epsilon, exact) of ``waves`` k-ary RR re-randomizations of a permanent matrix report.

    Enumerates the count profiles of the reports; more than MAX_PROFILES of them give the bound
    min(waves x one wave, permanent) instead (``exact`` False).
    """
    r = len(rows[0])
    pair = symmetric(rows)
    if pair is not None:
        return grr_chain_epsilon(pair[0], pair[1], r, p2, waves), True
    if math.comb(waves + r - 1, r - 1) > MAX_PROFILES:
        one = matrix_chain_epsilon(rows, p2, 1)[0]
        return min(waves * one, smallest_epsilon(rows)), False
    q2 = (1.0 - p2) / (r - 1)
    best = 0.0
    for counts in compositions(waves, r):
        chances = [sum(row[b] * p2 ** n * q2 ** (waves - n) for b, n in enumerate(counts))
                   for row in rows]
        high, low = max(chances), min(chances)
        if high > 0:
            best = max(best, math.inf if low <= 0 else math.log(high / low))
    return best, True


def bit_chain_epsilon(p1: float, q1: float, p2: float, waves: int) -> tuple[float, float]:
    """For one box: (ln max L1/L0, ln max L0/L1) over the count of waves it was sent ticked.

    L_t(c) = sum_b P(permanent bit b | true bit t) p2' ^ c (1 - p2') ^ (waves - c), with p2' the
    chance that a permanent bit b is sent ticked (p2 for b = 1, 1 - p2 for b = 0).
    """
    up = down = 0.0
    for c in range(waves + 1):
        if_one = p2 ** c * (1 - p2) ** (waves - c)  # the waves' bits, given a permanent 1
        if_zero = (1 - p2) ** c * p2 ** (waves - c)
        one = p1 * if_one + (1 - p1) * if_zero
        zero = q1 * if_one + (1 - q1) * if_zero
        up = max(up, math.log(one / zero))
        down = max(down, math.log(zero / one))
    return up, down


def _solve(function: Any, low: float, high: float, target: float) -> float:
    """The x in [low, high] where an increasing ``function`` reaches ``target`` (bisection)."""
    for _ in range(100):
        middle = 0.5 * (low + high)
        if function(middle) < target:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


class Memoized:
    """A question's design in a panel: its permanent report and each wave's re-randomization.

    ``design`` is the question's design (its epsilon bounds all waves); ``wave_epsilon`` one
    wave's. ``p2`` is the chance that the instantaneous step keeps the permanent report (a box's
    bit, a bucket, a report), solved so that one wave's report has exactly ``wave_epsilon``.
    """

    def __init__(self, design: Any, wave_epsilon: float) -> None:
        self.design: Any = design
        self.wave_epsilon = check_epsilon(wave_epsilon)
        if isinstance(design, UnaryEncoding):
            self.kind = "unary"
        elif isinstance(design, LocalHashing):
            self.kind = "hash"
        elif isinstance(design, Design):
            self.kind = "matrix"
        else:
            raise DesignError(f"design {getattr(design, 'name', design)!r} has no permanent "
                              "report: a panel asks it afresh in every wave")
        self.bound = self._permanent_epsilon()
        if not math.isfinite(self.bound):
            raise DesignError(f"design {design.name} is not differentially private: a permanent "
                              "report of it protects nothing")
        if not self.wave_epsilon < self.bound - 1e-9:
            raise DesignError(f"wave_epsilon must be below the question's epsilon "
                              f"{self.bound:.6g} (the bound for all waves), got {wave_epsilon!r}")
        low = 0.5 if self.kind == "unary" else 1.0 / self.reports
        self.p2 = _solve(lambda p2: self._epsilon(p2, 1), low + 1e-15, 1.0, self.wave_epsilon)

    @property
    def reports(self) -> int:
        """How many values the re-randomized report takes (reports, buckets; 2 for a bit)."""
        if self.kind == "matrix":
            return len(self.design.matrix[0])
        return self.design.g if self.kind == "hash" else 2

    def _permanent_epsilon(self) -> float:
        if self.kind == "matrix":
            return smallest_epsilon(self.design.matrix)
        return float(self.design.exact_epsilon())

    def _epsilon(self, p2: float, waves: int) -> float:
        design = self.design
        if self.kind == "matrix":
            return matrix_chain_epsilon(design.matrix, p2, waves)[0]
        if self.kind == "hash":
            return grr_chain_epsilon(design.bucket_p, design.bucket_q, design.g, p2, waves)
        up, down = bit_chain_epsilon(design.p, design.q, p2, waves)
        a, b = design.differing()
        return float(a * up + b * down)

    def epsilon(self, waves: int) -> float:
        """The exact epsilon of ``waves`` reports that share the permanent report."""
        if isinstance(waves, bool) or not isinstance(waves, int) or waves < 1:
            raise DesignError(f"waves must be a whole number of at least 1, got {waves!r}")
        return self._epsilon(self.p2, waves)

    def exact(self, waves: int) -> bool:
        """Whether :meth:`epsilon` is exact for this many waves (else it is a bound)."""
        return self.kind != "matrix" or matrix_chain_epsilon(self.design.matrix, self.p2,
                                                             waves)[1]

    def ledger(self, waves: int) -> list[float]:
        """epsilon(1), ..., epsilon(waves): what the panel has cost after each wave."""
        return [self.epsilon(w) for w in range(1, waves + 1)]

    def privacy(self, waves: int = 1) -> Privacy:
        """The guarantee of ``waves`` waves (pure)."""
        return Privacy(self.epsilon(waves), 0.0)

    # -------------------------------------------------------------- what one wave looks like

    def one_wave(self) -> Any:
        """The design of one wave's report given the truth (the analyzer estimates with it)."""
        if self.kind == "matrix":
            rows = self.design.matrix
            r = len(rows[0])
            q2 = (1.0 - self.p2) / (r - 1)
            chained = tuple(tuple(sum(row[b] * (self.p2 if b == j else q2) for b in range(r))
                                  for j in range(r)) for row in rows)
            from ..binary import BinaryMatrix
            from ..categorical import CategoricalMatrix

            if r == 2:
                return BinaryMatrix(chained[0][0], chained[1][1])
            return CategoricalMatrix(chained)
        return WaveOracle(self)

    def spec(self) -> dict[str, Any]:
        """The manifest's ``memoize`` block: wave_epsilon, p2, the bound."""
        return {"wave_epsilon": self.wave_epsilon, "p2": self.p2, "epsilon_all_waves": self.bound}

    # ------------------------------------------------------------------ on the device

    def draw_table(self, rng: random.Random | None = None) -> dict[str, Any]:
        """A permanent report for every possible truth (what the device keeps, truth-free).

        matrix: ``{"reports": [r_0, ..., r_{k-1}]}``; unary: ``{"bits": [[if ticked, if empty]
        per box]}``; hash: ``{"seed": s, "buckets": [y_0, ..., y_{k-1}]}``.
        """
        rng = rng or secure_random()
        design = self.design
        if self.kind == "matrix":
            return {"reports": [design.randomize(v, rng).report for v in range(design.k)]}
        if self.kind == "unary":
            bits = []
            for _ in range(design.k):
                pair = [draw(("tick", "blank"), (chance, 1 - chance), rng)[0] == 0
                        for chance in (design.p, design.q)]
                bits.append([int(pair[0]), int(pair[1])])
            return {"bits": bits}
        from .hashing import bucket

        seed = rng.randrange(design.seeds)
        buckets = [design.bucket_report(seed, bucket(seed, v, design.k, design.g), rng, [])[0][1]
                   for v in range(design.k)]
        return {"seed": seed, "buckets": buckets}

    def check_table(self, table: object) -> dict[str, Any]:
        """A kept table, checked against this design; DesignError when it does not fit."""
        design = self.design
        if not isinstance(table, dict):
            raise DesignError("the kept permanent reports are not a table")
        ok = False
        if self.kind == "matrix":
            reports = table.get("reports")
            ok = isinstance(reports, list) and len(reports) == design.k and all(
                isinstance(r, int) and 0 <= r < self.reports for r in reports)
        elif self.kind == "unary":
            bits = table.get("bits")
            ok = isinstance(bits, list) and len(bits) == design.k and all(
                isinstance(pair, list) and len(pair) == 2 and set(pair) <= {0, 1} for pair in bits)
        else:
            buckets, seed = table.get("buckets"), table.get("seed")
            ok = (isinstance(seed, int) and 0 <= seed < design.seeds and isinstance(buckets, list)
                  and len(buckets) == design.k
                  and all(isinstance(y, int) and 0 <= y < design.g for y in buckets))
        if not ok:
            raise DesignError("the kept permanent reports do not fit this question's design")
        return table

    def wave_report(self, table: dict[str, Any], truth: Any,
                    rng: random.Random | None = None) -> tuple[Any, list[Step]]:
        """The report of this wave: the permanent report of the truth, re-randomized."""
        rng = rng or secure_random()
        table = self.check_table(table)
        design = self.design
        keep = (self.p2, 1.0 - self.p2)
        if self.kind == "unary":
            ticked = design.ticked(truth)
            sent, steps = [], []
            for box, pair in enumerate(table["bits"]):
                permanent = pair[0] if box in ticked else pair[1]
                branch, step = draw(("keep", "flip"), keep, rng)
                steps.append(step)
                if (permanent == 1) == (branch == 0):
                    sent.append(box)
            return tuple(sent), steps
        if self.kind == "hash":
            truth = design.check_truth(truth)
            report, steps = design.bucket_report(table["seed"], table["buckets"][truth], rng, [],
                                                 self.p2)
            return report, steps
        design.check_truth(truth)
        permanent = table["reports"][truth]
        branch, first = draw(("keep", "other"), keep, rng)
        if branch == 0:
            return permanent, [first]
        others = [j for j in range(self.reports) if j != permanent]
        pick, second = draw(tuple(f"other-{n + 1}" for n in range(len(others))),
                            [1.0 / len(others)] * len(others), rng)
        return others[pick], [first, second]


class WaveOracle(FrequencyOracle):
    """One wave's report of a memoized unary encoding or local hashing, as an oracle.

    Unary: a box is sent ticked with p' = p p2 + (1 - p)(1 - p2) (ticked) or q' = q p2 + (1 - q)
    (1 - p2) (empty). Hashing: the truth's bucket is sent with p' = p_b p2 + (1 - p_b) q2, each
    other with q_b' = (1 - p') / (g - 1); the support chances are p' and 1/g.
    """

    def __init__(self, memo: Memoized) -> None:
        self.memo = memo
        self.base: Any = memo.design
        self.name = self.base.name
        self.k = self.base.k
        self.epsilon = memo.wave_epsilon
        self.sets = self.base.sets
        p2 = memo.p2
        # P(support | truth) and P(support | another truth) of one wave's report
        if memo.kind == "unary":
            self.p = float(self.base.p * p2 + (1 - self.base.p) * (1 - p2))
            self.q = float(self.base.q * p2 + (1 - self.base.q) * (1 - p2))
        else:
            g = int(self.base.g)
            q2 = (1 - p2) / (g - 1)
            self.p = float(self.base.bucket_p * p2 + (1 - self.base.bucket_p) * q2)
            self.q = 1.0 / g

    @property
    def ratio(self) -> float:
        """The likelihood ratio of one wave's report."""
        if self.memo.kind == "unary":
            return super().ratio
        return self.p / ((1 - self.p) / (int(self.base.g) - 1))

    def params(self) -> dict[str, Any]:
        """The permanent design's parameters."""
        return dict(self.base.params())

    def supports(self, report: Any) -> tuple[int, ...]:
        """As the permanent design's."""
        return tuple(self.base.supports(report))

    def encode(self, report: Any, values: Any) -> Any:
        """As the permanent design's."""
        return self.base.encode(report, values)

    def decode(self, answer: object, values: Any) -> Any:
        """As the permanent design's."""
        return self.base.decode(answer, values)

    def check_truth(self, truth: Any) -> Any:
        """As the permanent design's."""
        return self.base.check_truth(truth)

    def probability(self, report: Any, truth: Any) -> float:
        """One wave's report law (boxes independent; or the bucket's chance)."""
        if self.memo.kind == "unary":
            ticked, sent = self.base.ticked(truth), set(report)
            chance = 1.0
            for box in range(self.k):
                one = self.p if box in ticked else self.q
                chance *= one if box in sent else 1.0 - one
            return chance
        from .hashing import bucket

        seed, sent = report
        hit = bucket(seed, self.check_truth(truth), self.k, self.base.g) == sent
        return float((self.p if hit else (1 - self.p) / (self.base.g - 1)) / self.base.seeds)

    def exact_epsilon(self) -> float:
        """The one-wave epsilon of the chain (the ledger at one wave)."""
        return self.memo.epsilon(1)
