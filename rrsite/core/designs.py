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


@functools.lru_cache(maxsize=256)
def _die_faces(weights: tuple[float, ...]) -> tuple[int, ...] | None:
    """Face counts per branch of the smallest fair die giving exactly these weights, or None."""
    for faces in range(2, MAX_DIE_FACES + 1):
        counts = tuple(round(w * faces) for w in weights)
        if sum(counts) == faces and all(
            abs(c - w * faces) < 1e-9 * faces for c, w in zip(counts, weights, strict=True)
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

    @property
    def matrix(self) -> Matrix:
        """``matrix[i][j] = P(report j | truth i)``."""
        raise NotImplementedError

    @property
    def k(self) -> int:
        """The number of possible answers."""
        return len(self.matrix)

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

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Actions: "truth"/"forced", then "yes"/"no"."""
        self._check_truth(truth)
        assert self.yes is not None and self.no is not None
        return _forced(truth, self.truth, self.yes, self.no, rng or secure_random())


@dataclass(frozen=True)
class ForcedYes(BinaryDesign):
    """One-sided forced "yes" (seed 004): heads, the truth; tails, say yes.

    ``truth`` is the probability of answering truthfully (1/2 for a fair coin). A "no" is never
    deniable: it can only come from a true "no", so no epsilon protects it (MATH.md section 3).
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

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Actions: "truth"/"forced", then always "yes"."""
        self._check_truth(truth)
        rng = rng or secure_random()
        if self.truth >= 1.0:
            return Outcome(truth, ())
        branch, step = draw(("truth", "yes"), (self.truth, 1.0 - self.truth), rng)
        return Outcome(truth if branch == 0 else 1, (step,))


@dataclass(frozen=True)
class Warner(BinaryDesign):
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

    @property
    def p00(self) -> float:
        """P."""
        return self.p

    @property
    def p11(self) -> float:
        """P."""
        return self.p

    def params(self) -> dict[str, Any]:
        """P."""
        return {"p": self.p}

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

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Draw the report from row ``truth``; actions are "report-1".."report-k"."""
        self._check_truth(truth)
        actions = tuple(f"report-{j + 1}" for j in range(self.k))
        report, step = draw(actions, self.rows[truth], rng or secure_random())
        return Outcome(report, (step,))


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


NAMED_DESIGNS: dict[str, tuple[str, ...]] = {
    "forced-response": ("truth", "yes", "no"),
    "forced-yes": ("truth",),
    "warner": ("p",),
    "unrelated": ("p", "innocuous_rate"),
    "matrix": ("p00", "p11", "matrix"),
    "k-rr": ("k", "epsilon", "p"),
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
