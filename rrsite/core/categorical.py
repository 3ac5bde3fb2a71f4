"""Designs with more than two answers or reports: a k x k matrix, k-ary RR, and Kuk's cards."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .base import TOLERANCE, Design, Matrix, Outcome, check_probability, draw, secure_random
from .errors import DesignError


@dataclass(frozen=True)
class CategoricalMatrix(Design):
    """A k x k design given row by row: ``rows[i][j] = P(report j | truth i)``."""

    name: ClassVar[str] = "matrix"
    rows: tuple[tuple[float, ...], ...] = ((0.75, 0.25), (0.25, 0.75))

    def __post_init__(self) -> None:
        rows = self.rows
        if not isinstance(rows, Sequence) or isinstance(rows, str):
            raise TypeError(f"matrix must be a list of rows, got {rows!r}")
        k = len(rows)
        if k < 2:
            raise DesignError(f"matrix must have at least 2 rows, got {k}")
        checked = []
        for i, row in enumerate(rows):
            if not isinstance(row, Sequence) or isinstance(row, str) or len(row) != k:
                raise DesignError(f"matrix row {i + 1} must have {k} entries, got {row!r}")
            values = tuple(
                check_probability(f"matrix[{i + 1}][{j + 1}]", v) for j, v in enumerate(row)
            )
            if abs(sum(values) - 1.0) > TOLERANCE:
                raise DesignError(f"matrix row {i + 1} must sum to 1, got {sum(values):g}")
            checked.append(values)
        object.__setattr__(self, "rows", tuple(checked))
        if rank_deficient(self.rows):
            raise DesignError("matrix must be invertible, or the true rates cannot be recovered")

    @property
    def matrix(self) -> Matrix:
        """The rows as given."""
        return self.rows

    def params(self) -> dict[str, Any]:
        """Matrix."""
        return {"matrix": [list(row) for row in self.rows]}

    def rrreg(self) -> dict[str, Any] | None:
        """RRreg ``FR`` when every report's column is constant off the diagonal, else None."""
        return fr_of(self.rows)

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Draw the report from row ``truth``; actions are "report-1".."report-k"."""
        self.check_truth(truth)
        actions = tuple(f"report-{j + 1}" for j in range(self.k))
        report, step = draw(actions, self.rows[truth], rng or secure_random())
        return Outcome(report, (step,))


def fr_of(rows: Matrix) -> dict[str, Any] | None:
    """RRreg's ``FR`` p (P(report j | truth i) = p[j] for i != j) if the matrix has that form."""
    k = len(rows)
    forced = []
    for j in range(k):
        column = [rows[i][j] for i in range(k) if i != j]
        if max(column) - min(column) > TOLERANCE:
            return None
        forced.append(column[0])
    return {"model": "FR", "p": forced}


def rank_deficient(rows: Matrix) -> bool:
    """Whether the matrix is (numerically) singular, by Gaussian elimination with pivoting."""
    work = [list(row) for row in rows]
    k = len(work)
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(work[r][col]))
        if abs(work[pivot][col]) < 1e-12:
            return True
        work[col], work[pivot] = work[pivot], work[col]
        for r in range(col + 1, k):
            factor = work[r][col] / work[col][col]
            for c in range(col, k):
                work[r][c] -= factor * work[col][c]
    return False


@dataclass(frozen=True)
class KRR(Design):
    """k-ary randomized response (generalised RR) for a question with k answers.

    The truth with probability p = e^epsilon / (e^epsilon + k - 1), each other answer with
    q = 1 / (e^epsilon + k - 1).

    Give either ``epsilon`` or ``p`` (the probability of the truth, above 1/k).
    Actions: "truth" / "other" at the first stage, then "other-1".."other-(k-1)" picks which.
    """

    name: ClassVar[str] = "k-rr"
    k_: int = field(default=2, metadata={"param": "k"})
    p: float = 0.75

    def __init__(self, k: int, epsilon: float | None = None, p: float | None = None) -> None:
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"k must be a whole number, got {k!r}")
        if k < 2:
            raise DesignError(f"k must be at least 2, got {k}")
        if (epsilon is None) == (p is None):
            raise DesignError("k-rr needs exactly one of epsilon and p")
        if epsilon is not None:
            if isinstance(epsilon, bool) or not isinstance(epsilon, int | float):
                raise TypeError(f"epsilon must be a number, got {epsilon!r}")
            if not epsilon > 0 or math.isinf(epsilon):
                raise DesignError(f"epsilon must be positive and finite, got {epsilon!r}")
            e = math.exp(epsilon)
            p = e / (e + k - 1)
        else:
            p = check_probability("p", p)
            if p <= 1.0 / k + TOLERANCE:
                raise DesignError(f"p must be above 1/k = {1 / k:g}, got {p!r}")
        object.__setattr__(self, "k_", k)
        object.__setattr__(self, "p", p)

    @property
    def k(self) -> int:
        """The number of answers."""
        return self.k_

    @property
    def q(self) -> float:
        """The probability of each particular other answer."""
        return (1.0 - self.p) / (self.k - 1)

    @property
    def matrix(self) -> Matrix:
        """P on the diagonal, q elsewhere."""
        return tuple(
            tuple(self.p if i == j else self.q for j in range(self.k)) for i in range(self.k)
        )

    def rrreg(self) -> dict[str, Any] | None:
        """RRreg ``FR`` with p = [q] * k."""
        return fr_of(self.matrix)

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Keep the truth with probability p, else pick one of the k - 1 others uniformly."""
        self.check_truth(truth)
        rng = rng or secure_random()
        branch, first = draw(("truth", "other"), (self.p, 1.0 - self.p), rng)
        if branch == 0:
            return Outcome(truth, (first,))
        others = [j for j in range(self.k) if j != truth]
        pick, second = draw(
            tuple(f"other-{n + 1}" for n in range(len(others))),
            [1.0 / len(others)] * len(others),
            rng,
        )
        return Outcome(others[pick], (first, second))

    def __repr__(self) -> str:
        return f"KRR(k={self.k}, p={self.p!r})"


def binomial(m: int, r: float) -> tuple[float, ...]:
    """P(X = x) for x = 0..m, X ~ Binomial(m, r)."""
    return tuple(math.comb(m, x) * r**x * (1.0 - r) ** (m - x) for x in range(m + 1))


@dataclass(frozen=True)
class Kuk(Design):
    """Kuk's card design (Kuk 1990, Biometrika 77(2), 436-438) with ``cards`` draws.

    Two decks: a respondent with the attribute draws ``cards`` cards (with replacement) from the
    deck with red proportion ``red_yes``, one without from the deck with ``red_no``; the report
    is the number of red cards, 0..cards. matrix[truth] = Binomial(cards, red of that deck).
    RRreg ``Kuk`` with p = [red_yes, red_no] and ``Kukrep`` = cards.
    Steps: one per card, action "red"/"black".
    """

    name: ClassVar[str] = "kuk"
    red_yes: float = 0.7
    red_no: float = 0.3
    cards: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "red_yes", check_probability("red_yes", self.red_yes))
        object.__setattr__(self, "red_no", check_probability("red_no", self.red_no))
        if isinstance(self.cards, bool) or not isinstance(self.cards, int):
            raise TypeError(f"cards must be a whole number, got {self.cards!r}")
        if not 1 <= self.cards <= 100:
            raise DesignError(f"cards must be 1 to 100, got {self.cards}")
        if abs(self.red_yes - self.red_no) <= TOLERANCE:
            raise DesignError(
                "red_yes must differ from red_no: the report would be independent of the truth"
            )

    def report_values(self) -> tuple[str, ...]:
        """The reports "0".."cards": the number of red cards."""
        return tuple(str(x) for x in range(self.cards + 1))

    @property
    def matrix(self) -> Matrix:
        """Rows: Binomial(cards, red_no) for "no", Binomial(cards, red_yes) for "yes"."""
        return (binomial(self.cards, self.red_no), binomial(self.cards, self.red_yes))

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Kuk`` with p = [red_yes, red_no] and Kukrep = cards."""
        return {"model": "Kuk", "p": [self.red_yes, self.red_no], "Kukrep": self.cards}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Draw the cards from the respondent's deck; the report is the count of red ones."""
        self.check_truth(truth)
        rng = rng or secure_random()
        red = self.red_yes if truth == 1 else self.red_no
        steps = []
        for _ in range(self.cards):
            steps.append(draw(("red", "black"), (red, 1.0 - red), rng)[1])
        return Outcome(sum(step.action == "red" for step in steps), tuple(steps))
