"""Randomized-response designs: small immutable objects, each with its design matrix.

Names follow MATH.md. For a yes/no question, index 0 is "no" and index 1 is "yes", and
``p00 = P(report no | truth no)``, ``p11 = P(report yes | truth yes)``. For a question with k
answers, ``matrix[i][j] = P(report j | truth i)``.

Every design can ``randomize`` a true answer with a random source and return the report together
with a transcript of what the coins or dice did, so that the page can show it in words.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .errors import DesignError

Matrix = tuple[tuple[float, ...], ...]


#: Excess probability this small is floating-point rounding, not a privacy loss.
ROUNDING = 1e-12


def smallest_epsilon(matrix: Matrix) -> float:
    """Ln of the largest ratio P[i][j] / P[i'][j]; ``math.inf`` where a report rules out a truth."""
    epsilon = 0.0
    for column in zip(*matrix, strict=True):
        high, low = max(column), min(column)
        if high == 0.0:
            continue  # this report never happens
        if low == 0.0:
            return math.inf
        epsilon = max(epsilon, math.log(high / low))
    return epsilon


def smallest_delta(matrix: Matrix, epsilon: float) -> float:
    """The smallest delta for which the design is (epsilon, delta)-DP."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float):
        raise TypeError(f"epsilon must be a number, got {epsilon!r}")
    if not epsilon >= 0:
        raise DesignError(f"epsilon must be non-negative, got {epsilon!r}")
    factor = math.exp(epsilon) if epsilon != math.inf else math.inf
    delta = 0.0
    for row in matrix:
        for other in matrix:
            # e^epsilon * 0 counts as 0, also for epsilon = inf
            excess = sum(
                a if b == 0.0 else max(0.0, a - factor * b) for a, b in zip(row, other, strict=True)
            )
            delta = max(delta, excess)
    # a design built for exactly this epsilon misses it by rounding only: that is delta = 0
    return 0.0 if delta < ROUNDING else delta


#: Probabilities that agree within this tolerance are treated as equal (rows summing to 1, ...).
TOLERANCE = 1e-9
#: The largest die the transcript uses; other probabilities are drawn with a "spinner".
MAX_DIE_FACES = 120


def secure_random() -> random.Random:
    """The default random source: the OS CSPRNG (crypto.getRandomValues in a browser)."""
    return random.SystemRandom()


def check_probability(name: str, value: object) -> float:
    """Return ``value`` as a float in [0, 1], or raise naming the parameter and the value."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not 0.0 <= number <= 1.0 or math.isnan(number):
        raise DesignError(f"{name} must be a probability in [0, 1], got {value!r}")
    return number


@dataclass(frozen=True)
class Step:
    """One random device used while answering: a coin, a die or a spinner, and what it decided.

    ``outcome`` is "heads"/"tails" for a coin, the face (1..faces) for a die, and the drawn number
    in [0, 1) for a spinner. ``action`` says what the outcome meant (see each design's docstring).
    ``chances`` lists, per possible action, its probability at this step.
    """

    device: str
    outcome: str
    action: str
    faces: int = 0
    chances: tuple[tuple[str, float], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form for the page."""
        return {
            "device": self.device,
            "outcome": self.outcome,
            "action": self.action,
            "faces": self.faces,
            "chances": [[action, chance] for action, chance in self.chances],
        }


@dataclass(frozen=True)
class Outcome:
    """The reported answer (an index) and the transcript of the devices that produced it."""

    report: int
    steps: tuple[Step, ...] = field(default_factory=tuple)
    #: For two-group designs the group drawn on the device (1 or 2); 0 for one-group designs.
    group: int = 0


@functools.lru_cache(maxsize=256)
def _die_faces(weights: tuple[float, ...]) -> tuple[int, ...] | None:
    """Face counts per branch of the smallest fair die giving exactly these weights, or None.

    Weights within 1e-9 of a die's are taken as the die's (0.7 is 7/10), but a positive weight
    never gets no face: a branch of chance 1e-10 rounded to 0 would make its reports impossible
    for some answers (an infinite epsilon); such weights go to the spinner.
    """
    for faces in range(2, MAX_DIE_FACES + 1):
        counts = tuple(round(w * faces) for w in weights)
        if sum(counts) == faces and all(
            abs(c - w * faces) < 1e-9 * faces and (c == 0) == (w == 0)
            for c, w in zip(counts, weights, strict=True)
        ):
            return counts
    return None


def draw(actions: Sequence[str], weights: Sequence[float], rng: random.Random) -> tuple[int, Step]:
    """Pick a branch with the given probabilities, exactly where a fair coin or die can do it.

    Rational weights with a small common denominator d are drawn with a fair d-sided die
    (``rng.randrange``; d = 2 is a coin, face 1 heads). Other weights use a spinner: one uniform
    number in [0, 1) from ``rng.random()``, with 53 bits of resolution.
    """
    chances = tuple(zip(actions, (float(w) for w in weights), strict=True))
    counts = _die_faces(tuple(float(w) for w in weights))
    if counts is not None:
        faces = sum(counts)
        face = rng.randrange(faces) + 1
        index, upper = 0, counts[0]
        while face > upper:
            index += 1
            upper += counts[index]
        if faces == 2:
            outcome, device = ("heads" if face == 1 else "tails"), "coin"
        else:
            outcome, device = str(face), "die"
        return index, Step(device, outcome, actions[index], faces, chances)
    spin = rng.random()
    cumulative = 0.0
    index = len(weights) - 1
    for candidate, weight in enumerate(weights):
        cumulative += weight
        if spin < cumulative and weight > 0:
            index = candidate
            break
    while weights[index] == 0:  # rounding pushed the spin past the end: take the last real branch
        index -= 1
    return index, Step("spinner", f"{spin:.4f}", actions[index], 0, chances)


class Design:
    """Base of every design: a row-stochastic matrix, its size and a randomizer.

    Subclasses set ``name`` (the word used in survey files and manifests) and implement
    ``matrix``, ``params`` and ``randomize``.
    """

    name: ClassVar[str] = ""
    #: The report values when they are not the truth values (crosswise, triangular, kuk); the
    #: columns of ``matrix``. None: the reports are the truth values.
    reports: ClassVar[tuple[str, ...] | None] = None

    @property
    def matrix(self) -> Matrix:
        """``matrix[i][j] = P(report j | truth i)``."""
        raise NotImplementedError

    @property
    def k(self) -> int:
        """The number of possible answers."""
        return len(self.matrix)

    def report_values(self) -> tuple[str, ...] | None:
        """The report values (columns of ``matrix``) when they differ from the truth values."""
        return self.reports

    def rrreg(self) -> dict[str, Any] | None:
        """RRreg 0.7.6's model name and ``p`` for this design, or None."""
        return None

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild this design with :func:`design_from_spec`."""
        raise NotImplementedError

    def spec(self) -> dict[str, Any]:
        """``{"name": ..., **params}``: the form survey files and manifests use."""
        return {"name": self.name, **self.params()}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """The report for the true answer ``truth`` (an index), drawn with ``rng``."""
        raise NotImplementedError

    def _check_truth(self, truth: int) -> None:
        if isinstance(truth, bool) or not isinstance(truth, int):
            raise TypeError(f"truth must be an answer index, got {truth!r}")
        if not 0 <= truth < self.k:
            raise DesignError(f"truth must be an answer index in 0..{self.k - 1}, got {truth}")


class BinaryDesign(Design):
    """A design for a yes/no question, fully described by ``p00`` and ``p11``.

    Every useful binary design (p00 + p11 > 1) is a forced-response design with
    ``truth = p00 + p11 - 1``, ``yes = 1 - p00``, ``no = 1 - p11``; that is how the general ones
    randomize.
    """

    @property
    def p00(self) -> float:
        """P(report no | truth no)."""
        raise NotImplementedError

    @property
    def p11(self) -> float:
        """P(report yes | truth yes)."""
        raise NotImplementedError

    @property
    def matrix(self) -> Matrix:
        """``((p00, 1 - p00), (1 - p11, p11))``."""
        return ((self.p00, 1.0 - self.p00), (1.0 - self.p11, self.p11))

    def _check_useful(self) -> None:
        if self.p00 + self.p11 <= 1.0 + TOLERANCE:
            raise DesignError(
                f"p00 + p11 must exceed 1 for the report to carry information about the truth, "
                f"got p00 = {self.p00:g}, p11 = {self.p11:g} (sum {self.p00 + self.p11:g})"
            )

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Tell the truth with probability p00 + p11 - 1, else say yes or no (see class doc)."""
        self._check_truth(truth)
        t = self.p00 + self.p11 - 1.0
        return _forced(truth, t, 1.0 - self.p00, 1.0 - self.p11, rng or secure_random())


def _forced(truth: int, t: float, yes: float, no: float, rng: random.Random) -> Outcome:
    """Forced response in two stages: truth or forced; if forced, "yes" or "no".

    Actions: "truth" / "forced" at the first stage, "yes" / "no" at the second.
    """
    if t >= 1.0:
        return Outcome(truth, ())
    branch, first = draw(("truth", "forced"), (t, 1.0 - t), rng)
    if branch == 0:
        return Outcome(truth, (first,))
    forced_yes = yes / (yes + no)
    answer, second = draw(("yes", "no"), (forced_yes, 1.0 - forced_yes), rng)
    return Outcome(1 if answer == 0 else 0, (first, second))


@dataclass(frozen=True)
class ForcedResponse(BinaryDesign):
    """Forced response: with probability ``truth`` answer truthfully, else say yes or no.

    ``yes`` and ``no`` are the forced probabilities; ``truth + yes + no = 1``. Leaving out ``yes``
    and ``no`` splits the rest evenly: ``ForcedResponse()`` is the fair two-coin design of
    seeds 000/001/003 (first coin heads: the truth; tails: a second coin says yes or no), and
    ``ForcedResponse(truth=q)`` is seed 000's biased first coin, epsilon = ln((1+q)/(1-q)).
    p00 = truth + no, p11 = truth + yes.
    """

    name: ClassVar[str] = "forced-response"
    truth: float = 0.5
    yes: float | None = None
    no: float | None = None

    def __post_init__(self) -> None:
        truth = check_probability("truth", self.truth)
        if self.yes is None and self.no is None:
            yes = no = (1.0 - truth) / 2.0
        elif self.yes is None or self.no is None:
            given = "yes" if self.no is None else "no"
            other = check_probability(given, self.yes if self.no is None else self.no)
            rest = 1.0 - truth - other
            if rest < -TOLERANCE:
                raise DesignError(f"truth + {given} must not exceed 1, got {truth + other:g}")
            yes, no = (other, max(rest, 0.0)) if given == "yes" else (max(rest, 0.0), other)
        else:
            yes = check_probability("yes", self.yes)
            no = check_probability("no", self.no)
        if abs(truth + yes + no - 1.0) > TOLERANCE:
            raise DesignError(
                f"truth + yes + no must equal 1, got {truth:g} + {yes:g} + {no:g} = "
                f"{truth + yes + no:g}"
            )
        object.__setattr__(self, "truth", truth)
        object.__setattr__(self, "yes", yes)
        object.__setattr__(self, "no", no)
        if truth <= TOLERANCE:
            raise DesignError(f"truth must be above 0, or the report says nothing, got {truth!r}")

    @property
    def p00(self) -> float:
        """Truth + no."""
        assert self.no is not None
        return self.truth + self.no

    @property
    def p11(self) -> float:
        """Truth + yes."""
        assert self.yes is not None
        return self.truth + self.yes

    def params(self) -> dict[str, Any]:
        """truth, yes, no."""
        return {"truth": self.truth, "yes": self.yes, "no": self.no}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``FR`` with p = [forced no, forced yes]."""
        return {"model": "FR", "p": [self.no, self.yes]}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Actions: "truth"/"forced", then "yes"/"no"."""
        self._check_truth(truth)
        assert self.yes is not None and self.no is not None
        return _forced(truth, self.truth, self.yes, self.no, rng or secure_random())


@dataclass(frozen=True)
class ForcedYes(BinaryDesign):
    """One-sided forced "yes" (seed 004): heads, the truth; tails, say yes.

    ``truth`` is the probability of answering truthfully (1/2 for a fair coin). A "no" is never
    deniable: it can only come from a true "no", so no epsilon protects it.
    p00 = truth, p11 = 1; the true "no" rate is the observed one divided by ``truth``.
    """

    name: ClassVar[str] = "forced-yes"
    truth: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "truth", check_probability("truth", self.truth))
        if self.truth <= TOLERANCE:
            raise DesignError(
                f"truth must be above 0, or the report says nothing, got {self.truth!r}"
            )

    @property
    def p00(self) -> float:
        """Truth."""
        return self.truth

    @property
    def p11(self) -> float:
        """1."""
        return 1.0

    def params(self) -> dict[str, Any]:
        """Truth."""
        return {"truth": self.truth}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Mangat`` (p = P(no | truth no) = truth), the same matrix."""
        return {"model": "Mangat", "p": self.truth}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Actions: "truth"/"forced", then always "yes"."""
        self._check_truth(truth)
        rng = rng or secure_random()
        if self.truth >= 1.0:
            return Outcome(truth, ())
        branch, step = draw(("truth", "yes"), (self.truth, 1.0 - self.truth), rng)
        return Outcome(truth if branch == 0 else 1, (step,))


class _OneChance(BinaryDesign):
    """A 2x2 design that keeps the true answer's index with one chance ``p``: p00 = p11 = p.

    Warner's matrix, and the crosswise model's (report 0 "different", 1 "same").
    """

    p: float

    @property
    def p00(self) -> float:
        """P(report 0 | true 0) = p (crosswise: P(different | no))."""
        return self.p

    @property
    def p11(self) -> float:
        """P(report 1 | true 1) = p (crosswise: P(same | yes))."""
        return self.p

    def params(self) -> dict[str, Any]:
        """``{"p": p}``."""
        return {"p": self.p}


@dataclass(frozen=True)
class Warner(_OneChance):
    """Warner's mirrored question (1965; seed 002).

    With probability ``p`` the respondent is shown "I have A", else "I do not have A", and says
    truthfully whether the statement shown is true of them; the report is that yes/no.
    p00 = p11 = p. Actions: "statement" (shown "I have A") or "mirrored" (shown "I do not have A").
    """

    name: ClassVar[str] = "warner"
    p: float = 0.75

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        if self.p == 0.5:
            raise DesignError("p must not be 0.5: the report would be independent of the truth")
        if self.p < 0.5:
            raise DesignError(
                f"p must be above 0.5 (below is the same design with the statements swapped), "
                f"got {self.p!r}"
            )

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Warner`` with the same p."""
        return {"model": "Warner", "p": self.p}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Report whether the statement drawn is true of the respondent."""
        self._check_truth(truth)
        branch, step = draw(
            ("statement", "mirrored"), (self.p, 1.0 - self.p), rng or secure_random()
        )
        return Outcome(truth if branch == 0 else 1 - truth, (step,))


@dataclass(frozen=True)
class UnrelatedQuestion(BinaryDesign):
    """Unrelated question (Greenberg et al. 1969): the sensitive question or an innocuous one.

    With probability ``p`` the respondent answers the sensitive question, else an innocuous one
    whose yes-rate ``innocuous_rate`` is known.

    p00 = p + (1 - p)(1 - innocuous_rate), p11 = p + (1 - p) innocuous_rate.
    Actions: "sensitive" / "innocuous"; the innocuous answer is the respondent's own when given
    (``randomize(..., innocuous=...)``), else drawn at the known rate (action "yes"/"no").
    """

    name: ClassVar[str] = "unrelated"
    p: float = 0.5
    innocuous_rate: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        object.__setattr__(
            self, "innocuous_rate", check_probability("innocuous_rate", self.innocuous_rate)
        )
        if self.p <= TOLERANCE:
            raise DesignError(
                f"p must be above 0, or the sensitive question is never asked, got {self.p!r}"
            )

    @property
    def p00(self) -> float:
        """P + (1 - p)(1 - innocuous_rate)."""
        return self.p + (1.0 - self.p) * (1.0 - self.innocuous_rate)

    @property
    def p11(self) -> float:
        """P + (1 - p) innocuous_rate."""
        return self.p + (1.0 - self.p) * self.innocuous_rate

    def params(self) -> dict[str, Any]:
        """p, innocuous_rate."""
        return {"p": self.p, "innocuous_rate": self.innocuous_rate}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``UQTknown`` with p = [p, innocuous_rate]."""
        return {"model": "UQTknown", "p": [self.p, self.innocuous_rate]}

    def randomize(
        self, truth: int, rng: random.Random | None = None, innocuous: int | None = None
    ) -> Outcome:
        """Answer the sensitive question or the innocuous one (``innocuous``: its true answer)."""
        self._check_truth(truth)
        rng = rng or secure_random()
        branch, step = draw(("sensitive", "innocuous"), (self.p, 1.0 - self.p), rng)
        if branch == 0:
            return Outcome(truth, (step,))
        if innocuous is not None:
            self._check_truth(innocuous)
            return Outcome(innocuous, (step,))
        answer, second = draw(("yes", "no"), (self.innocuous_rate, 1.0 - self.innocuous_rate), rng)
        return Outcome(1 if answer == 0 else 0, (step, second))


@dataclass(frozen=True)
class BinaryMatrix(BinaryDesign):
    """A yes/no design given by its matrix entries p00 and p11 directly (e.g. an optimal design)."""

    name: ClassVar[str] = "matrix"
    p00_: float = field(default=0.75, metadata={"param": "p00"})
    p11_: float = field(default=0.75, metadata={"param": "p11"})

    def __init__(self, p00: float = 0.75, p11: float = 0.75) -> None:
        object.__setattr__(self, "p00_", check_probability("p00", p00))
        object.__setattr__(self, "p11_", check_probability("p11", p11))
        self._check_useful()

    @property
    def p00(self) -> float:
        """As given."""
        return self.p00_

    @property
    def p11(self) -> float:
        """As given."""
        return self.p11_

    def params(self) -> dict[str, Any]:
        """p00, p11."""
        return {"p00": self.p00, "p11": self.p11}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``FR`` with p = [1 - p11, 1 - p00] (every useful 2 x 2 matrix is one)."""
        return {"model": "FR", "p": [1.0 - self.p11, 1.0 - self.p00]}

    def __repr__(self) -> str:
        return f"BinaryMatrix(p00={self.p00!r}, p11={self.p11!r})"


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
        if _rank_deficient(self.rows):
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
        return _fr_of(self.rows)

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Draw the report from row ``truth``; actions are "report-1".."report-k"."""
        self._check_truth(truth)
        actions = tuple(f"report-{j + 1}" for j in range(self.k))
        report, step = draw(actions, self.rows[truth], rng or secure_random())
        return Outcome(report, (step,))


def _fr_of(rows: Matrix) -> dict[str, Any] | None:
    """RRreg's ``FR`` p (P(report j | truth i) = p[j] for i != j) if the matrix has that form."""
    k = len(rows)
    forced = []
    for j in range(k):
        column = [rows[i][j] for i in range(k) if i != j]
        if max(column) - min(column) > TOLERANCE:
            return None
        forced.append(column[0])
    return {"model": "FR", "p": forced}


def _rank_deficient(rows: Matrix) -> bool:
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

    def params(self) -> dict[str, Any]:
        """k, p."""
        return {"k": self.k, "p": self.p}

    def rrreg(self) -> dict[str, Any] | None:
        """RRreg ``FR`` with p = [q] * k."""
        return _fr_of(self.matrix)

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Keep the truth with probability p, else pick one of the k - 1 others uniformly."""
        self._check_truth(truth)
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


# ---------------------------------------------------------------------------------------------
# The designs of R's RRreg (MATH.md section 7, docs/designs.md). Each gives RRreg's model and p.


def _binomial(m: int, r: float) -> tuple[float, ...]:
    """P(X = x) for x = 0..m, X ~ Binomial(m, r)."""
    return tuple(math.comb(m, x) * r**x * (1.0 - r) ** (m - x) for x in range(m + 1))


def _two(name: str, value: object) -> tuple[float, float]:
    """A pair of probabilities given as a list of two numbers (one per group)."""
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
        raise DesignError(
            f"{name} must be a list of two probabilities (group 1, group 2), got {value!r}"
        )
    return (check_probability(f"{name}[1]", value[0]), check_probability(f"{name}[2]", value[1]))


@dataclass(frozen=True)
class Crosswise(_OneChance):
    """The crosswise model (Yu, Tian & Tang 2008, Metrika 67(3), 251-263).

    The page shows the sensitive statement and an innocuous one whose yes-rate ``p`` is known
    (e.g. "my mother's birthday is in January-March", p = 1/4); the respondent says whether both
    or neither are true ("same") or exactly one ("different"). The respondent combines the two in
    their head: no randomizer, and the sensitive answer never enters the device.

    Reports (columns): ``("different", "same")``. matrix = ((p, 1 - p), (1 - p, p)) for truths
    (no, yes). RRreg ``Crosswise`` with the same p (report 1 = "same").
    ``randomize`` (simulation only) draws the innocuous statement's truth at rate p.
    """

    name: ClassVar[str] = "crosswise"
    reports: ClassVar[tuple[str, ...] | None] = ("different", "same")
    p: float = 0.25

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        if abs(self.p - 0.5) <= TOLERANCE:
            raise DesignError("p must not be 0.5: the report would be independent of the truth")

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Crosswise`` with the same p."""
        return {"model": "Crosswise", "p": self.p}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Action "innocuous-true"/"innocuous-false"; report 1 ("same") when they agree."""
        self._check_truth(truth)
        branch, step = draw(
            ("innocuous-true", "innocuous-false"), (self.p, 1.0 - self.p), rng or secure_random()
        )
        innocuous = 1 if branch == 0 else 0
        return Outcome(1 if innocuous == truth else 0, (step,))


@dataclass(frozen=True)
class Triangular(BinaryDesign):
    """The triangular model (Yu, Tian & Tang 2008, Metrika 67(3), 251-263). One-sided.

    The page shows the sensitive statement and an innocuous one with known yes-rate ``p``; the
    respondent picks the circle if both are false, the triangle otherwise. A "circle" rules out
    the sensitive attribute: no epsilon protects it (the survey needs ``accept_no_epsilon``).

    Reports (columns): ``("circle", "triangle")``. matrix = ((1 - p, p), (0, 1)).
    RRreg ``Triangular`` with the same p (report 1 = triangle).
    """

    name: ClassVar[str] = "triangular"
    reports: ClassVar[tuple[str, ...] | None] = ("circle", "triangle")
    p: float = 0.25

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        if self.p >= 1.0 - TOLERANCE:
            raise DesignError("p must be below 1, or everyone picks the triangle")

    @property
    def p00(self) -> float:
        """P(circle | no) = 1 - p."""
        return 1.0 - self.p

    @property
    def p11(self) -> float:
        """P(triangle | yes) = 1."""
        return 1.0

    def params(self) -> dict[str, Any]:
        """P."""
        return {"p": self.p}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Triangular`` with the same p."""
        return {"model": "Triangular", "p": self.p}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Action "innocuous-true"/"innocuous-false"; the circle only when both are false."""
        self._check_truth(truth)
        branch, step = draw(
            ("innocuous-true", "innocuous-false"), (self.p, 1.0 - self.p), rng or secure_random()
        )
        return Outcome(0 if (truth == 0 and branch == 1) else 1, (step,))


@dataclass(frozen=True)
class Mangat(BinaryDesign):
    """Mangat's design (Mangat 1994, JRSS B 56(1), 93-95). One-sided.

    A respondent with the attribute says "yes"; one without uses Warner's device: with
    probability ``p`` the statement "I have A" (answer "no"), else "I do not have A" (answer
    "yes"). The device is drawn for everyone, so the transcript looks alike. A "no" reveals the
    truth (needs ``accept_no_epsilon``). matrix = ((p, 1 - p), (0, 1)). RRreg ``Mangat``, same p.
    Actions: "statement" / "mirrored".
    """

    name: ClassVar[str] = "mangat"
    p: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        if self.p <= TOLERANCE:
            raise DesignError(f"p must be above 0, or everyone says yes, got {self.p!r}")

    @property
    def p00(self) -> float:
        """P."""
        return self.p

    @property
    def p11(self) -> float:
        """1."""
        return 1.0

    def params(self) -> dict[str, Any]:
        """P."""
        return {"p": self.p}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Mangat`` with the same p."""
        return {"model": "Mangat", "p": self.p}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Draw the statement; "yes" for a carrier, else the answer to the statement drawn."""
        self._check_truth(truth)
        branch, step = draw(
            ("statement", "mirrored"), (self.p, 1.0 - self.p), rng or secure_random()
        )
        return Outcome(1 if truth == 1 or branch == 1 else 0, (step,))


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
        return (_binomial(self.cards, self.red_no), _binomial(self.cards, self.red_yes))

    def params(self) -> dict[str, Any]:
        """red_yes, red_no, cards."""
        return {"red_yes": self.red_yes, "red_no": self.red_no, "cards": self.cards}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Kuk`` with p = [red_yes, red_no] and Kukrep = cards."""
        return {"model": "Kuk", "p": [self.red_yes, self.red_no], "Kukrep": self.cards}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Draw the cards from the respondent's deck; the report is the count of red ones."""
        self._check_truth(truth)
        rng = rng or secure_random()
        red = self.red_yes if truth == 1 else self.red_no
        steps = []
        for _ in range(self.cards):
            steps.append(draw(("red", "black"), (red, 1.0 - red), rng)[1])
        return Outcome(sum(step.action == "red" for step in steps), tuple(steps))


class TwoGroupDesign(Design):
    """A design whose device differs between two groups the page assigns at random.

    ``probability`` is P(group 1) (default 1/2), drawn on the device from the secure source; the
    group is sent with the report. ``group_matrices()`` gives each group's device matrix for a
    compliant respondent; ``matrix`` is the least private group's (privacy is the worst group's,
    since the group is known). Subclasses implement ``group_matrices`` and ``_randomize_in``.
    """

    probability: float

    def group_matrices(self) -> tuple[Matrix, Matrix]:
        """Group 1's and group 2's device matrix, ``[truth][report]``."""
        raise NotImplementedError

    @property
    def matrix(self) -> Matrix:
        """The worst group's matrix (larger epsilon, then larger delta)."""
        def badness(m: Matrix) -> tuple[float, float]:
            return smallest_epsilon(m), smallest_delta(m, math.inf)

        first, second = self.group_matrices()
        return second if badness(second) > badness(first) else first

    def groups(self) -> list[dict[str, Any]]:
        """The manifest's ``groups``: id, probability and matrix per group."""
        return [
            {"id": g + 1, "probability": p, "matrix": [list(row) for row in m]}
            for g, (p, m) in enumerate(
                zip((self.probability, 1.0 - self.probability), self.group_matrices(), strict=True)
            )
        ]

    def _check_groups(self) -> None:
        probability = check_probability("probability", self.probability)
        if not TOLERANCE < probability < 1.0 - TOLERANCE:
            raise DesignError(
                f"probability (of group 1) must be strictly between 0 and 1, "
                f"got {self.probability!r}"
            )
        object.__setattr__(self, "probability", probability)

    def draw_group(self, rng: random.Random) -> tuple[int, Step]:
        """Group 1 or 2, with ``probability`` for group 1; actions "group-1"/"group-2"."""
        index, step = draw(("group-1", "group-2"), (self.probability, 1.0 - self.probability), rng)
        return index + 1, step

    def randomize(
        self, truth: int, rng: random.Random | None = None, group: int | None = None
    ) -> Outcome:
        """Draw the group (unless given), then answer with that group's device."""
        self._check_truth(truth)
        rng = rng or secure_random()
        steps: tuple[Step, ...] = ()
        if group is None:
            group, step = self.draw_group(rng)
            steps = (step,)
        elif group not in (1, 2):
            raise DesignError(f"group must be 1 or 2, got {group!r}")
        report, more = self._randomize_in(group, truth, rng)
        return Outcome(report, steps + more, group)

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random
    ) -> tuple[int, tuple[Step, ...]]:
        raise NotImplementedError


def _distinct(name: str, pair: tuple[float, float]) -> None:
    if abs(pair[0] - pair[1]) <= TOLERANCE:
        raise DesignError(
            f"{name} must differ between the two groups, or the model is not "
            f"identified, got {pair[0]:g} in both"
        )


@dataclass(frozen=True)
class UnrelatedUnknown(TwoGroupDesign):
    """Unrelated question with an unknown innocuous rate (Greenberg et al. 1969, JASA 64, 520-539).

    In group g the respondent answers the sensitive question with probability ``p[g]``, else the
    innocuous one, whose yes-rate q is unknown and estimated jointly (the groups' p must differ).
    ``innocuous_rate`` is only the rate assumed for privacy accounting (the manifest's matrices,
    epsilon); the analysis does not use it. Group matrix: ((1 - (1-p)q, (1-p)q),
    ((1-p)(1-q), p + (1-p)q)). RRreg ``UQTunknown`` with p = [p1, p2]. Moors' variant (Moors
    1971, JASA 66, 627-629): p = 0 in one group, which then answers only the innocuous question
    (its matrix does not depend on the truth, epsilon 0; the design's privacy is the other
    group's).
    """

    name: ClassVar[str] = "unrelated-unknown"
    p: tuple[float, float] = (0.7, 0.3)
    innocuous_rate: float = 0.5
    probability: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", _two("p", self.p))
        _distinct("p", self.p)
        # Moors (1971): p = 0 in one group (it answers only the innocuous question) is allowed;
        # the groups' p differ, so the other group's p is above 0.
        object.__setattr__(
            self, "innocuous_rate", check_probability("innocuous_rate", self.innocuous_rate)
        )
        self._check_groups()

    def group_matrices(self) -> tuple[Matrix, Matrix]:
        """UnrelatedQuestion(p_g, innocuous_rate)'s matrix per group."""
        q = self.innocuous_rate
        return tuple(  # type: ignore[return-value]
            ((1.0 - (1.0 - p) * q, (1.0 - p) * q), ((1.0 - p) * (1.0 - q), p + (1.0 - p) * q))
            for p in self.p
        )

    def params(self) -> dict[str, Any]:
        """p, innocuous_rate, probability."""
        return {
            "p": list(self.p),
            "innocuous_rate": self.innocuous_rate,
            "probability": self.probability,
        }

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``UQTunknown`` with p = [p1, p2]."""
        return {"model": "UQTunknown", "p": list(self.p)}

    def randomize(
        self,
        truth: int,
        rng: random.Random | None = None,
        group: int | None = None,
        innocuous: int | None = None,
    ) -> Outcome:
        """As the two-group base; ``innocuous`` is the respondent's own innocuous answer."""
        self._check_truth(truth)
        if innocuous is not None:
            self._check_truth(innocuous)
        rng = rng or secure_random()
        steps: tuple[Step, ...] = ()
        if group is None:
            group, step = self.draw_group(rng)
            steps = (step,)
        elif group not in (1, 2):
            raise DesignError(f"group must be 1 or 2, got {group!r}")
        if self.p[group - 1] <= TOLERANCE:  # Moors' group: the innocuous question only
            if innocuous is not None:
                return Outcome(innocuous, steps, group)
            answer, second = draw(
                ("yes", "no"), (self.innocuous_rate, 1.0 - self.innocuous_rate), rng)
            return Outcome(1 if answer == 0 else 0, (*steps, second), group)
        inner = UnrelatedQuestion(self.p[group - 1], self.innocuous_rate)
        outcome = inner.randomize(truth, rng, innocuous)
        return Outcome(outcome.report, steps + outcome.steps, group)


@dataclass(frozen=True)
class CheatingDetection(TwoGroupDesign):
    """Cheating detection model (Clark & Desharnais 1998, Psychological Methods 3(2), 160-168).

    In group g the device forces a "yes" with probability ``p[g]``, else asks for the truth. The
    analysis estimates honest "yes" (pi), honest "no" (beta) and cheaters who say "no" whatever
    the instruction (gamma = 1 - pi - beta). A compliant "no" reveals the truth: one-sided
    (needs ``accept_no_epsilon``). Group matrix ((1 - p, p), (0, 1)). RRreg ``CDM``, p = [p1, p2].
    The symmetric variant is :class:`CheatingDetectionSymmetric`.
    Actions: "truth" / "yes" (forced).
    """

    name: ClassVar[str] = "cdm"
    p: tuple[float, float] = (0.3, 0.7)
    probability: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", _two("p", self.p))
        _distinct("p", self.p)
        if max(self.p) >= 1.0 - TOLERANCE:
            raise DesignError("p must be below 1 in both groups, or everyone is forced to say yes")
        self._check_groups()

    def group_matrices(self) -> tuple[Matrix, Matrix]:
        """((1 - p_g, p_g), (0, 1)) per group."""
        return tuple(((1.0 - p, p), (0.0, 1.0)) for p in self.p)  # type: ignore[return-value]

    def params(self) -> dict[str, Any]:
        """p, probability."""
        return {"p": list(self.p), "probability": self.probability}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``CDM`` with p = [p1, p2]."""
        return {"model": "CDM", "p": list(self.p)}

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random
    ) -> tuple[int, tuple[Step, ...]]:
        p = self.p[group - 1]
        branch, step = draw(("truth", "yes"), (1.0 - p, p), rng)
        return (truth if branch == 0 else 1), (step,)


@dataclass(frozen=True)
class CheatingDetectionSymmetric(TwoGroupDesign):
    """Symmetric cheating detection (Clark & Desharnais 1998; RRreg ``CDMsym``).

    In group g the device forces "yes" with ``yes[g]``, "no" with ``no[g]``, else asks for the
    truth; cheaters say "no" whatever the instruction. Group matrix ((1 - y, y), (n, 1 - n)).
    RRreg ``CDMsym`` with p = [yes1, no1, yes2, no2].
    """

    name: ClassVar[str] = "cdm-sym"
    yes: tuple[float, float] = (0.2, 0.4)
    no: tuple[float, float] = (0.2, 0.1)
    probability: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "yes", _two("yes", self.yes))
        object.__setattr__(self, "no", _two("no", self.no))
        if (
            abs(self.yes[0] - self.yes[1]) <= TOLERANCE
            and abs(self.no[0] - self.no[1]) <= TOLERANCE
        ):
            raise DesignError(
                "yes and no must differ between the two groups, or the model is not identified"
            )
        for g in range(2):
            if self.yes[g] + self.no[g] >= 1.0 - TOLERANCE:
                raise DesignError(
                    f"yes + no must be below 1 in group {g + 1}, got {self.yes[g] + self.no[g]:g}"
                )
        self._check_groups()

    def group_matrices(self) -> tuple[Matrix, Matrix]:
        """((1 - y_g, y_g), (n_g, 1 - n_g)) per group."""
        return tuple(  # type: ignore[return-value]
            ((1.0 - y, y), (n, 1.0 - n)) for y, n in zip(self.yes, self.no, strict=True)
        )

    def params(self) -> dict[str, Any]:
        """yes, no, probability."""
        return {"yes": list(self.yes), "no": list(self.no), "probability": self.probability}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``CDMsym`` with p = [yes1, no1, yes2, no2]."""
        return {"model": "CDMsym", "p": [self.yes[0], self.no[0], self.yes[1], self.no[1]]}

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random
    ) -> tuple[int, tuple[Step, ...]]:
        y, n = self.yes[group - 1], self.no[group - 1]
        outcome = _forced(truth, 1.0 - y - n, y, n, rng)
        return outcome.report, outcome.steps


@dataclass(frozen=True)
class StochasticLieDetector(TwoGroupDesign):
    """The stochastic lie detector (Moshagen, Musch & Erdfelder 2012, Behav. Res. Methods 44(1)).

    Mangat's device in two groups: a carrier says "yes"; a non-carrier answers the statement
    "I have A" (so "no") with probability ``p[g]``, else "I do not have A" ("yes"). The analysis
    estimates the prevalence and t, the probability that a carrier answers truthfully. A
    compliant "no" reveals the truth: one-sided (needs ``accept_no_epsilon``).
    Group matrix ((p, 1 - p), (0, 1)). RRreg ``SLD`` with p = [p1, p2] (t is RRreg's par2).
    Actions: "statement" / "mirrored".
    """

    name: ClassVar[str] = "sld"
    p: tuple[float, float] = (0.3, 0.7)
    probability: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", _two("p", self.p))
        _distinct("p", self.p)
        if min(self.p) <= TOLERANCE:
            raise DesignError("p must be above 0 in both groups")
        self._check_groups()

    def group_matrices(self) -> tuple[Matrix, Matrix]:
        """((p_g, 1 - p_g), (0, 1)) per group."""
        return tuple(((p, 1.0 - p), (0.0, 1.0)) for p in self.p)  # type: ignore[return-value]

    def params(self) -> dict[str, Any]:
        """p, probability."""
        return {"p": list(self.p), "probability": self.probability}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``SLD`` with p = [p1, p2]."""
        return {"model": "SLD", "p": list(self.p)}

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random
    ) -> tuple[int, tuple[Step, ...]]:
        outcome = Mangat(self.p[group - 1]).randomize(truth, rng)
        return outcome.report, outcome.steps


NAMED_DESIGNS: dict[str, tuple[str, ...]] = {
    "forced-response": ("truth", "yes", "no"),
    "forced-yes": ("truth",),
    "warner": ("p",),
    "unrelated": ("p", "innocuous_rate"),
    "matrix": ("p00", "p11", "matrix"),
    "k-rr": ("k", "epsilon", "p"),
    "crosswise": ("p",),
    "triangular": ("p",),
    "mangat": ("p",),
    "kuk": ("red_yes", "red_no", "cards"),
    "unrelated-unknown": ("p", "innocuous_rate", "probability"),
    "cdm": ("p", "probability"),
    "cdm-sym": ("yes", "no", "probability"),
    "sld": ("p", "probability"),
}
"""Every design name a survey file or ``rrsite plan --design`` may use, and its parameters."""


def design_from_spec(spec: Mapping[str, Any]) -> Design:
    """Build a design from ``{"name": ..., **params}`` (survey files, manifests, the CLI)."""
    if not isinstance(spec, Mapping):
        raise TypeError(f"a design spec must be a mapping, got {spec!r}")
    name = spec.get("name")
    if name not in NAMED_DESIGNS:
        known = ", ".join(NAMED_DESIGNS)
        raise DesignError(f"unknown design {name!r}; known designs: {known}")
    params = {key: value for key, value in spec.items() if key != "name"}
    unknown = sorted(set(params) - set(NAMED_DESIGNS[name]))
    if unknown:
        allowed = ", ".join(NAMED_DESIGNS[name])
        raise DesignError(f"design {name} takes {allowed}; unknown parameter {unknown[0]!r}")
    if name == "forced-response":
        return ForcedResponse(**params)
    if name == "forced-yes":
        return ForcedYes(**params)
    if name == "warner":
        return Warner(**params)
    if name == "unrelated":
        return UnrelatedQuestion(**params)
    simple: dict[str, type[Design]] = {
        "crosswise": Crosswise,
        "triangular": Triangular,
        "mangat": Mangat,
        "kuk": Kuk,
        "unrelated-unknown": UnrelatedUnknown,
        "cdm": CheatingDetection,
        "cdm-sym": CheatingDetectionSymmetric,
        "sld": StochasticLieDetector,
    }
    if name in simple:
        return simple[name](**params)
    if name == "k-rr":
        if "k" not in params:
            raise DesignError("design k-rr needs k, the number of answers")
        return KRR(**params)
    if "matrix" in params:
        if "p00" in params or "p11" in params:
            raise DesignError("design matrix takes either p00 and p11, or matrix, not both")
        rows = params["matrix"]
        if isinstance(rows, Sequence) and not isinstance(rows, str):
            rows = tuple(tuple(row) if isinstance(row, Sequence) else row for row in rows)
        return CategoricalMatrix(rows)
    if "p00" not in params or "p11" not in params:
        raise DesignError("design matrix needs p00 and p11 (or a k x k matrix)")
    return BinaryMatrix(params["p00"], params["p11"])
