"""What every randomized-response design shares: the design base, the random devices, the checks.

A design is a row-stochastic matrix ``matrix[i][j] = P(report j | truth i)`` with a randomizer
that returns the report with a transcript of the devices used (:class:`Step`): a fair coin or die
where the chances allow it exactly, else a "spinner" (one uniform number). Coins come from the
OS CSPRNG (``random.SystemRandom``: ``crypto.getRandomValues`` in a browser).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
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


#: Frequency-oracle designs a survey file may name, and the parameters each takes (the designs
#: are in rrsite.core.frequency; the names are here so that telling a frequency question apart
#: does not import them).
FREQUENCY_DESIGNS: dict[str, tuple[str, ...]] = {
    "oue": ("k", "epsilon", "max_ticks"),
    "sue": ("k", "epsilon", "max_ticks"),
    "olh": ("k", "epsilon", "g"),
    "subset": ("k", "epsilon", "d"),
    "hadamard": ("k", "epsilon"),
}


def secure_random() -> random.Random:
    """The default random source: the OS CSPRNG (crypto.getRandomValues in a browser)."""
    return random.SystemRandom()


def read_spec(spec: Mapping[str, Any], designs: Mapping[str, tuple[str, ...]], kind: str,
              extra: tuple[str, ...] = ()) -> tuple[str, dict[str, Any]]:
    """A spec's design name and parameters, refused where the name or a parameter is unknown.

    ``designs`` maps each name to the parameters it takes (``extra`` are taken by every one),
    ``kind`` says what the names are ("design", "frequency design", ...).
    """
    if not isinstance(spec, Mapping):
        raise TypeError(f"a design spec must be a mapping, got {spec!r}")
    name = spec.get("name")
    if not isinstance(name, str) or name not in designs:
        raise DesignError(f"unknown {kind} {name!r}; known: {', '.join(designs)}")
    params = {key: value for key, value in spec.items() if key != "name"}
    unknown = sorted(set(params) - {*designs[name], *extra})
    if unknown:
        raise DesignError(f"design {name} takes {', '.join(designs[name])}; unknown "
                          f"parameter {unknown[0]!r}")
    return name, params


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
        """A JSON-ready form for the page: the fields, ``chances`` as lists."""
        return {**asdict(self), "chances": [list(chance) for chance in self.chances]}


@dataclass(frozen=True)
class Outcome:
    """The reported answer (an index) and the transcript of the devices that produced it."""

    report: int
    steps: tuple[Step, ...] = field(default_factory=tuple)
    #: For two-group designs the group drawn on the device (1 or 2); 0 for one-group designs.
    group: int = 0


@functools.lru_cache(maxsize=256)
def die_faces(weights: tuple[float, ...]) -> tuple[int, ...] | None:
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
    counts = die_faces(tuple(float(w) for w in weights))
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
        """The parameters that rebuild this design with :func:`design_from_spec`.

        A dataclass design's fields, each under its ``param`` metadata where it has one.
        """
        return {f.metadata.get("param", f.name): getattr(self, f.name)
                for f in fields(self)}  # type: ignore[arg-type]

    def spec(self) -> dict[str, Any]:
        """``{"name": ..., **params}``: the form survey files and manifests use."""
        return {"name": self.name, **self.params()}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """The report for the true answer ``truth`` (an index), drawn with ``rng``."""
        raise NotImplementedError

    def check_truth(self, truth: int) -> None:
        """Raise unless ``truth`` is an answer index of this design."""
        if isinstance(truth, bool) or not isinstance(truth, int):
            raise TypeError(f"truth must be an answer index, got {truth!r}")
        if not 0 <= truth < self.k:
            raise DesignError(f"truth must be an answer index in 0..{self.k - 1}, got {truth}")
