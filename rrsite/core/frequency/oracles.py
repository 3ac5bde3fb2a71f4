"""Frequency oracles: designs for a choice among many answers, and for "tick all that apply".

Every oracle sends a report that *supports* some of the k answers (the boxes reported ticked,
the answers that hash to the bucket sent, the subset sent, the half of the answers a Hadamard
column favours). With ``p`` = P(the report supports v | the truth is v) and ``q`` = P(it
supports v | the truth is another answer), the share f_v of answer v has the unbiased estimate

    f_v = (c_v / N - q) / (p - q),    Var = lambda (1 - lambda) / (N (p - q)^2),

with c_v the reports supporting v and lambda = q + (p - q) f_v (random sampling; Wang et al.
2017, section 4). Every report's likelihood is one of two values, ``ratio`` times larger for the
answers it supports than for the others: the maximum-likelihood estimate on the simplex needs
only the supports and ``ratio`` (rrsite.estimate.frequency).

- ``oue``/``sue``: unary encoding (Wang, Blocki, Li & Jha 2017, "Locally differentially private
  protocols for frequency estimation", USENIX Security; SUE is basic RAPPOR, Erlingsson, Pihur &
  Korolova 2014). One box per answer; a ticked box is reported ticked with chance p, an empty one
  with chance q; OUE p = 1/2, q = 1/(e^eps + 1); SUE p = e^(eps/2)/(e^(eps/2) + 1) = 1 - q. With
  ``max_ticks`` the truth is a set ("tick all that apply", at most that many boxes).
- ``olh``: optimized local hashing (Wang et al. 2017): a hash function drawn at random maps the
  answer to one of g buckets (rrsite.core.frequency.hashing), sent by g-ary randomized response.
- ``subset``: subset selection (Ye & Barg 2018, IEEE Trans. Inf. Theory 64(8); Wang et al. 2016,
  "Mutual information optimally local private discrete distribution estimation"): a subset of d
  answers, e^eps times likelier to contain the truth.
- ``hadamard``: Hadamard response (Acharya, Sun & Zhang 2019, AISTATS): a column of the Hadamard
  matrix, e^eps times likelier in the truth's half; log2 K bits, decoded by one fast
  Walsh-Hadamard transform.

Epsilon is computed from each design's report law (the largest ratio of a report's chances
under two truths), never asserted; tests/core enumerates every report for small k.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from ..base import Step, draw, secure_random
from ..errors import DesignError
from ..privacy import Privacy
from .hashing import bucket, hadamard_plus, hadamard_size, is_prime, seed_count

Report = Any  # a tuple of answer indices, (seed, bucket) or a Hadamard column
Truth = Any  # an answer index, or a frozenset of them (multi-choice)


def check_epsilon(epsilon: object) -> float:
    """A positive finite epsilon, or TypeError/DesignError echoing it."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float):
        raise TypeError(f"epsilon must be a number, got {epsilon!r}")
    if not 0 < epsilon < math.inf:
        raise DesignError(f"epsilon must be positive and finite, got {epsilon!r}")
    return float(epsilon)


def check_k(k: object, least: int = 2) -> int:
    """The number of answers: a whole number of at least ``least``."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be a whole number, got {k!r}")
    if not least <= k <= 10_000:
        raise DesignError(f"k must be {least} to 10000, got {k}")
    return k


class FrequencyOracle:
    """What every frequency oracle offers; subclasses set the chances and the report law."""

    #: The word survey files and manifests use.
    name: str = ""
    k: int
    epsilon: float
    #: Multi-choice: the truth is a set of answers (unary encoding only).
    sets: bool = False
    #: P(the report supports v | the truth is v).
    p: float
    #: P(the report supports v | the truth is another answer, or v is not ticked).
    q: float

    @property
    def ratio(self) -> float:
        """A report's likelihood for an answer it supports over one it does not.

        p (1 - q) / (q (1 - p)) where each box is reported on its own (unary encoding).
        """
        return self.p * (1.0 - self.q) / (self.q * (1.0 - self.p))

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild the design (``oracle_from_spec``)."""
        return {"k": self.k, "epsilon": self.epsilon}

    def spec(self) -> dict[str, Any]:
        """``{"name": ..., **params}``, as survey files and manifests write it."""
        return {"name": self.name, **self.params()}

    def supports(self, report: Report) -> tuple[int, ...]:
        """The answers (indices) the report supports."""
        raise NotImplementedError

    def probability(self, report: Report, truth: Truth) -> float:
        """The report law: P(report | truth)."""
        raise NotImplementedError

    def randomize(self, truth: Truth,
                  rng: random.Random | None = None) -> tuple[Report, list[Step]]:
        """The report for the true answer, and the devices' steps."""
        raise NotImplementedError

    def encode(self, report: Report, values: Sequence[str]) -> Any:
        """The report as a submission carries it: a list of option values, or a string."""
        return [values[i] for i in sorted(report)]

    def decode(self, answer: object, values: Sequence[str]) -> Report:
        """The report a submitted answer stands for; DesignError saying why it is impossible."""
        if not isinstance(answer, list) or not all(isinstance(v, str) for v in answer):
            raise DesignError(f"a {self.name} report is a list of option values, got {answer!r}")
        if len(set(answer)) != len(answer):
            raise DesignError(f"the report lists an option twice: {answer!r}")
        index = {value: i for i, value in enumerate(values)}
        unknown = [v for v in answer if v not in index]
        if unknown:
            raise DesignError(f"{unknown[0]!r} is not one of the options")
        return tuple(sorted(index[v] for v in answer))

    def variance(self, share: float, n: int = 1) -> float:
        """Var of the unbiased share of one answer at true share ``share`` (random sampling)."""
        rate = self.q + (self.p - self.q) * share
        return rate * (1.0 - rate) / (n * (self.p - self.q) ** 2)

    def privacy(self) -> Privacy:
        """The epsilon of the report law (pure: delta = 0)."""
        return Privacy(self.exact_epsilon(), 0.0)

    def exact_epsilon(self) -> float:
        """Ln of the largest ratio of a report's chances under two truths."""
        raise NotImplementedError

    def check_truth(self, truth: Truth) -> Truth:
        """The truth as the design takes it: an index in 0..k-1."""
        if isinstance(truth, bool) or not isinstance(truth, int) or not 0 <= truth < self.k:
            raise DesignError(f"truth must be an answer index in 0..{self.k - 1}, got {truth!r}")
        return truth


def _ratio_epsilon(high: float, low: float) -> float:
    """ln(high / low) for two chances of one report, infinite when low is 0."""
    return math.inf if low <= 0.0 else math.log(high / low)


def _bisect(function: Any, low: float, high: float) -> float:
    """The root of an increasing function between low and high (80 halvings)."""
    for _ in range(80):
        middle = 0.5 * (low + high)
        if function(middle) < 0:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


class UnaryEncoding(FrequencyOracle):
    """OUE or SUE: one box per answer, each reported ticked with chance p (ticked) or q (empty).

    For a choice, the true answer's box is the one ticked. With ``max_ticks`` m the truth is a set
    of at most m boxes; two such sets differ in at most a = min(m, k) boxes ticked in one and
    b = min(m, k - a) ticked in the other, so the whole set's epsilon is
    a ln(p/q) + b ln((1-q)/(1-p)), and p, q are solved so that it is ``epsilon``.
    Steps: one per box, action "tick" or "blank".
    """

    def __init__(self, k: int, epsilon: float, optimized: bool = True,
                 max_ticks: int | None = None) -> None:
        self.k = check_k(k)
        self.epsilon = check_epsilon(epsilon)
        self.optimized = optimized
        self.name = "oue" if optimized else "sue"
        self.sets = max_ticks is not None
        if max_ticks is not None:
            if isinstance(max_ticks, bool) or not isinstance(max_ticks, int):
                raise TypeError(f"max_ticks must be a whole number, got {max_ticks!r}")
            if not 1 <= max_ticks <= self.k:
                raise DesignError(f"max_ticks must be 1 to {self.k}, got {max_ticks}")
        self.max_ticks = max_ticks
        #: P(a ticked box is reported ticked), P(an empty box is reported ticked).
        self.p, self.q = self._solve()

    def differing(self) -> tuple[int, int]:
        """(a, b): boxes ticked in one truth only, in the other only, at their largest."""
        if self.max_ticks is None:
            return 1, 1
        a = min(self.max_ticks, self.k)
        return a, min(self.max_ticks, self.k - a)

    def _solve(self) -> tuple[float, float]:
        a, b = self.differing()

        def total(p: float, q: float) -> float:
            return a * math.log(p / q) + b * math.log((1.0 - q) / (1.0 - p))

        if self.optimized:  # p = 1/2, q solved: total decreases as q grows
            return 0.5, _bisect(lambda q: self.epsilon - total(0.5, q), 1e-300, 0.5)
        return (1.0 - (q := _bisect(lambda q: self.epsilon - total(1.0 - q, q), 1e-300, 0.5)), q)

    def params(self) -> dict[str, Any]:
        """k, epsilon (and max_ticks for a set)."""
        params = super().params()
        if self.max_ticks is not None:
            params["max_ticks"] = self.max_ticks
        return params

    def check_truth(self, truth: Truth) -> Truth:
        """An index (choice) or a set of at most max_ticks indices (multi-choice)."""
        if not self.sets:
            return super().check_truth(truth)
        if not isinstance(truth, frozenset | set | tuple | list):
            raise DesignError(f"the truth of a multi-choice question is a set of boxes, got "
                              f"{truth!r}")
        boxes = frozenset(truth)
        if len(boxes) != len(list(truth)) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < self.k
                for i in boxes):
            raise DesignError(f"the ticked boxes must be distinct indices in 0..{self.k - 1}, got "
                              f"{truth!r}")
        assert self.max_ticks is not None
        if len(boxes) > self.max_ticks:
            raise DesignError(f"at most {self.max_ticks} boxes may be ticked, got {len(boxes)}")
        return boxes

    def ticked(self, truth: Truth) -> frozenset[int]:
        """The boxes the truth ticks."""
        truth = self.check_truth(truth)
        return truth if self.sets else frozenset((truth,))

    def supports(self, report: Report) -> tuple[int, ...]:
        """The boxes reported ticked."""
        return tuple(report)

    def probability(self, report: Report, truth: Truth) -> float:
        """Prod over boxes of p or 1 - p (ticked), q or 1 - q (empty)."""
        ticked, sent = self.ticked(truth), set(report)
        chance = 1.0
        for box in range(self.k):
            one = self.p if box in ticked else self.q
            chance *= one if box in sent else 1.0 - one
        return chance

    def randomize(self, truth: Truth,
                  rng: random.Random | None = None) -> tuple[Report, list[Step]]:
        """One draw per box: ticked with chance p (a ticked box) or q (an empty one)."""
        ticked = self.ticked(truth)
        rng = rng or secure_random()
        steps, sent = [], []
        for box in range(self.k):
            one = self.p if box in ticked else self.q
            branch, step = draw(("tick", "blank"), (one, 1.0 - one), rng)
            steps.append(step)
            if branch == 0:
                sent.append(box)
        return tuple(sent), steps

    def exact_epsilon(self) -> float:
        """Over the boxes on which two truths differ: the largest product of per-box ratios."""
        a, b = self.differing()
        # a box ticked in the first truth only is likeliest reported ticked (p/q, or
        # (1-p)/(1-q) when blank); a box ticked in the second only, the other way round
        into = max(self.p / self.q, (1.0 - self.p) / (1.0 - self.q))
        out = max(self.q / self.p, (1.0 - self.q) / (1.0 - self.p))
        return a * math.log(into) + b * math.log(out)


def best_prime_buckets(epsilon: float) -> int:
    """The prime g of least variance near e^eps + 1 (OLH's best g; the hash family needs primes)."""
    target = math.exp(epsilon) + 1.0
    below = max(2, int(target))
    while below > 2 and not is_prime(below):
        below -= 1
    above = max(2, math.ceil(target))
    while not is_prime(above):
        above += 1

    def spread(g: int) -> float:  # n Var near a share of 0 (Wang et al. 2017, eq. 9 family)
        e = math.exp(epsilon)
        return (e - 1.0 + g) ** 2 / ((g - 1.0) * (e - 1.0) ** 2)

    return min((below, above), key=lambda g: (spread(g), g))


class LocalHashing(FrequencyOracle):
    """OLH: a random hash function (its number, the seed, is sent) and g-ary RR of the bucket.

    The bucket of the truth is sent with chance p_b = e^eps / (e^eps + g - 1), each other bucket
    with q_b = 1 / (e^eps + g - 1); the report (seed, y) supports every answer hashed to y, so
    p = p_b and q = 1/g (the family's collision chance). Steps: the hash function (a die with
    as many faces as functions), then "truth"/"other" and which other bucket.
    """

    name = "olh"

    def __init__(self, k: int, epsilon: float, g: int | None = None) -> None:
        self.k = check_k(k)
        self.epsilon = check_epsilon(epsilon)
        if g is None:
            g = best_prime_buckets(self.epsilon)
        if isinstance(g, bool) or not isinstance(g, int):
            raise TypeError(f"g must be a whole number, got {g!r}")
        if not is_prime(g) or g > 10_007:
            raise DesignError(f"g must be a prime number of buckets (2, 3, 5, 7, ...), got {g}")
        self.g = g
        e = math.exp(self.epsilon)
        self.bucket_p, self.bucket_q = e / (e + g - 1), 1.0 / (e + g - 1)
        #: The chance that the truth's bucket is sent; 1/g, that another answer shares it.
        self.p, self.q = self.bucket_p, 1.0 / g

    @property
    def ratio(self) -> float:
        """p_b / q_b."""
        return self.bucket_p / self.bucket_q

    @property
    def seeds(self) -> int:
        """The number of hash functions (seeds)."""
        return seed_count(self.k, self.g)

    def params(self) -> dict[str, Any]:
        """k, epsilon, g."""
        return {**super().params(), "g": self.g}

    def supports(self, report: Report) -> tuple[int, ...]:
        """The answers whose bucket under the report's hash function is the one sent."""
        seed, sent = report
        return tuple(v for v in range(self.k) if bucket(seed, v, self.k, self.g) == sent)

    def probability(self, report: Report, truth: Truth) -> float:
        """P(seed) (p_b or q_b)."""
        seed, sent = report
        hit = bucket(seed, self.check_truth(truth), self.k, self.g) == sent
        return (self.bucket_p if hit else self.bucket_q) / self.seeds

    def randomize(self, truth: Truth,
                  rng: random.Random | None = None) -> tuple[Report, list[Step]]:
        """Draw the hash function, then g-ary randomized response on the bucket."""
        truth = self.check_truth(truth)
        rng = rng or secure_random()
        seed = rng.randrange(self.seeds)
        steps = [Step("die", str(seed + 1), f"hash-{seed}", self.seeds,
                      ((f"hash-{seed}", 1.0 / self.seeds),))]
        return self.bucket_report(seed, bucket(seed, truth, self.k, self.g), rng, steps)

    def bucket_report(self, seed: int, true_bucket: int, rng: random.Random, steps: list[Step],
                      keep: float | None = None) -> tuple[Report, list[Step]]:
        """g-ary randomized response on ``true_bucket`` under hash function ``seed``.

        ``keep``: the chance of sending ``true_bucket`` (a panel's re-randomization of its
        permanent bucket, action "keep"); the design's p_b (action "truth") by default.
        """
        first_action = "truth" if keep is None else "keep"
        chance = self.bucket_p if keep is None else keep
        branch, first = draw((first_action, "other"), (chance, 1.0 - chance), rng)
        steps.append(first)
        if branch == 0:
            return (seed, true_bucket), steps
        others = [y for y in range(self.g) if y != true_bucket]
        pick, second = draw(tuple(f"other-{n + 1}" for n in range(len(others))),
                            [1.0 / len(others)] * len(others), rng)
        steps.append(second)
        return (seed, others[pick]), steps

    def encode(self, report: Report, values: Sequence[str]) -> str:
        """``"seed:bucket"``."""
        return f"{report[0]}:{report[1]}"

    def decode(self, answer: object, values: Sequence[str]) -> Report:
        """``"seed:bucket"`` with the seed below g^(d+1) and the bucket below g."""
        text = answer if isinstance(answer, str) else ""
        seed, _, sent = text.partition(":")
        if not (seed.isdigit() and sent.isdigit() and len(seed) <= 30 and len(sent) <= 6):
            raise DesignError(f"an olh report is \"seed:bucket\" (two whole numbers), got "
                              f"{answer!r}")
        if int(seed) >= self.seeds or int(sent) >= self.g:
            raise DesignError(f"olh report {answer!r}: the seed must be below {self.seeds} and "
                              f"the bucket below {self.g}")
        return int(seed), int(sent)

    def exact_epsilon(self) -> float:
        """Given the hash function, a report's chance is p_b or q_b: ln(p_b / q_b)."""
        return _ratio_epsilon(self.bucket_p, self.bucket_q)


class SubsetSelection(FrequencyOracle):
    """A subset of d answers: P(S | v) is e^eps / Z if v is in S, 1 / Z otherwise.

    Z = C(k-1, d-1) e^eps + C(k-1, d). Drawn as: the truth is in the subset with chance
    p = d e^eps / (d e^eps + k - d) (step "inside"/"outside"), then the rest of the subset is
    picked uniformly from the other answers (a step "draw" naming them).
    q = (p (d - 1) + (1 - p) d) / (k - 1). ``d`` defaults to the size of least variance.
    """

    name = "subset"

    def __init__(self, k: int, epsilon: float, d: int | None = None) -> None:
        self.k = check_k(k, 3)
        self.epsilon = check_epsilon(epsilon)
        if d is None:
            d = min(range(1, self.k), key=lambda size: (self._spread(size), size))
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"d must be a whole number, got {d!r}")
        if not 1 <= d < self.k:
            raise DesignError(f"d must be 1 to {self.k - 1}, got {d}")
        self.d = d
        e = math.exp(self.epsilon)
        self.inside = d * e / (d * e + self.k - d)
        #: The chances that the subset holds the truth, and a given other answer.
        self.p, self.q = self.inside, self._chances(d)[1]

    def _chances(self, size: int) -> tuple[float, float]:
        e = math.exp(self.epsilon)
        inside = size * e / (size * e + self.k - size)
        return inside, (inside * (size - 1) + (1.0 - inside) * size) / (self.k - 1)

    def _spread(self, size: int) -> float:
        p, q = self._chances(size)
        return q * (1.0 - q) / (p - q) ** 2

    @property
    def ratio(self) -> float:
        """e^eps."""
        return math.exp(self.epsilon)

    def params(self) -> dict[str, Any]:
        """k, epsilon, d."""
        return {**super().params(), "d": self.d}

    def supports(self, report: Report) -> tuple[int, ...]:
        """The answers in the subset."""
        return tuple(report)

    def probability(self, report: Report, truth: Truth) -> float:
        """e^eps / Z or 1 / Z (0 for a set of another size)."""
        if len(set(report)) != self.d:
            return 0.0
        e = math.exp(self.epsilon)
        total = math.comb(self.k - 1, self.d - 1) * e + math.comb(self.k - 1, self.d)
        return (e if self.check_truth(truth) in report else 1.0) / total

    def randomize(self, truth: Truth,
                  rng: random.Random | None = None) -> tuple[Report, list[Step]]:
        """Inside or outside, then the others of the subset drawn uniformly."""
        truth = self.check_truth(truth)
        rng = rng or secure_random()
        branch, first = draw(("inside", "outside"), (self.inside, 1.0 - self.inside), rng)
        others = [v for v in range(self.k) if v != truth]
        picked = rng.sample(others, self.d - 1 if branch == 0 else self.d)
        second = Step("draw", ",".join(str(v) for v in sorted(picked)), "pick", len(others))
        chosen = picked + ([truth] if branch == 0 else [])
        return tuple(sorted(chosen)), [first, second]

    def decode(self, answer: object, values: Sequence[str]) -> Report:
        """A list of exactly d option values."""
        report = super().decode(answer, values)
        if len(report) != self.d:
            raise DesignError(f"a subset report lists {self.d} options, got {len(report)}")
        return report

    def exact_epsilon(self) -> float:
        """A subset's chance is e^eps / Z or 1 / Z (both occur when 1 <= d < k)."""
        e = math.exp(self.epsilon)
        total = math.comb(self.k - 1, self.d - 1) * e + math.comb(self.k - 1, self.d)
        return _ratio_epsilon(e / total, 1.0 / total)


class HadamardResponse(FrequencyOracle):
    """A column of the K x K Hadamard matrix, from the truth's +1 half with chance e^eps/(e^eps+1).

    P(j | v) = 2 e^eps / (K (e^eps + 1)) where row v + 1 is +1 in column j, else 2 / (K (e^eps +
    1)). A column supports the answers whose row is +1 there: p = e^eps / (e^eps + 1), q = 1/2
    (two different rows agree on half the columns). Steps: "inside"/"outside", then a draw of
    one of the K/2 columns of that half.
    """

    name = "hadamard"

    def __init__(self, k: int, epsilon: float) -> None:
        self.k = check_k(k)
        self.epsilon = check_epsilon(epsilon)
        self.size = hadamard_size(self.k)
        #: e^eps / (e^eps + 1) and 1/2.
        self.p, self.q = math.exp(self.epsilon) / (math.exp(self.epsilon) + 1.0), 0.5

    @property
    def ratio(self) -> float:
        """e^eps."""
        return math.exp(self.epsilon)

    def supports(self, report: Report) -> tuple[int, ...]:
        """The answers whose Hadamard row is +1 in the column sent."""
        return tuple(v for v in range(self.k) if hadamard_plus(v, report))

    def probability(self, report: Report, truth: Truth) -> float:
        """2 e^eps / (K (e^eps + 1)) in the truth's half, 2 / (K (e^eps + 1)) outside."""
        e = math.exp(self.epsilon)
        inside = hadamard_plus(self.check_truth(truth), report)
        return 2.0 * (e if inside else 1.0) / (self.size * (e + 1.0))

    def randomize(self, truth: Truth,
                  rng: random.Random | None = None) -> tuple[Report, list[Step]]:
        """Pick the half, then a column of it uniformly (a column, and its partner one bit away)."""
        truth = self.check_truth(truth)
        rng = rng or secure_random()
        branch, first = draw(("inside", "outside"), (self.p, 1.0 - self.p), rng)
        column = rng.randrange(self.size)
        row = truth + 1
        if hadamard_plus(truth, column) != (branch == 0):
            column ^= row & -row  # flips the parity: the uniform column of the other half
        second = Step("draw", str(column), f"column-{column}", self.size // 2)
        return column, [first, second]

    def encode(self, report: Report, values: Sequence[str]) -> str:
        """The column's number, as text."""
        return str(report)

    def decode(self, answer: object, values: Sequence[str]) -> Report:
        """A column number below K."""
        text = answer if isinstance(answer, str) else ""
        if not text.isdigit() or len(text) > 6 or int(text) >= self.size:
            raise DesignError(f"a hadamard report is a column number below {self.size}, got "
                              f"{answer!r}")
        return int(text)

    def exact_epsilon(self) -> float:
        """A column's chance in the truth's half over outside it."""
        e = math.exp(self.epsilon)
        return _ratio_epsilon(2.0 * e / (self.size * (e + 1.0)), 2.0 / (self.size * (e + 1.0)))
