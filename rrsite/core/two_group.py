"""Two-group designs: the device differs between two groups the page draws at random.

The group is sent with the report, so a design's privacy is its least private group's. RRreg's
unrelated question with an unknown innocuous rate, the cheating detection models (CDM, CDMsym)
and the stochastic lie detector (SLD); the analysis estimates a second parameter with the
prevalence (the innocuous rate, the cheaters' share, the carriers' honesty).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .base import (
    TOLERANCE,
    Design,
    Matrix,
    Outcome,
    Step,
    check_probability,
    draw,
    secure_random,
    smallest_delta,
    smallest_epsilon,
)
from .binary import Mangat, UnrelatedQuestion, forced
from .errors import DesignError


def two_probabilities(name: str, value: object) -> tuple[float, float]:
    """A pair of probabilities given as a list of two numbers (one per group)."""
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
        raise DesignError(
            f"{name} must be a list of two probabilities (group 1, group 2), got {value!r}"
        )
    return (check_probability(f"{name}[1]", value[0]), check_probability(f"{name}[2]", value[1]))


class TwoGroupDesign(Design):
    """A design whose device differs between two groups the page assigns at random.

    ``probability`` is P(group 1) (default 1/2), drawn on the device from the secure source; the
    group is sent with the report. ``group_matrices()`` gives each group's device matrix for a
    compliant respondent; ``matrix`` is the least private group's (privacy is the worst group's,
    since the group is known). Subclasses implement ``group_matrices`` and ``_randomize_in``.
    """

    probability: float
    #: The chance per group that subclasses with one parameter per group give (not CDMsym).
    p: tuple[float, float]
    #: RRreg's name of the model (its ``p`` is :meth:`rrreg_p`).
    rrreg_model: ClassVar[str] = ""

    def params(self) -> dict[str, Any]:
        """The p of each group and the probability of group 1."""
        return {"p": self.rrreg_p(), "probability": self.probability}

    def rrreg(self) -> dict[str, Any]:
        """RRreg's model with its ``p``."""
        return {"model": self.rrreg_model, "p": self.rrreg_p()}

    def rrreg_p(self) -> list[float]:
        """RRreg's ``p``: the design's p per group."""
        return list(self.p)

    def set_pair(self, name: str) -> None:
        """Check ``name`` (two probabilities that differ between the groups) and store them."""
        pair = two_probabilities(name, getattr(self, name))
        distinct(name, pair)
        object.__setattr__(self, name, pair)

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
        return self.randomize_with(truth, rng, group)

    def randomize_with(
        self, truth: int, rng: random.Random | None, group: int | None, innocuous: int | None = None
    ) -> Outcome:
        """As :meth:`randomize`; ``innocuous`` is the respondent's own innocuous answer if any."""
        self.check_truth(truth)
        if innocuous is not None:
            self.check_truth(innocuous)
        rng = rng or secure_random()
        steps: tuple[Step, ...] = ()
        if group is None:
            group, step = self.draw_group(rng)
            steps = (step,)
        elif group not in (1, 2):
            raise DesignError(f"group must be 1 or 2, got {group!r}")
        report, more = self._randomize_in(group, truth, rng, innocuous)
        return Outcome(report, steps + more, group)

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random, innocuous: int | None
    ) -> tuple[int, tuple[Step, ...]]:
        raise NotImplementedError


def distinct(name: str, pair: tuple[float, float]) -> None:
    """Raise unless the two groups' values differ (else the model is not identified)."""
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
    rrreg_model: ClassVar[str] = "UQTunknown"
    p: tuple[float, float] = (0.7, 0.3)
    innocuous_rate: float = 0.5
    probability: float = 0.5

    def __post_init__(self) -> None:
        self.set_pair("p")
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

    def randomize(
        self,
        truth: int,
        rng: random.Random | None = None,
        group: int | None = None,
        innocuous: int | None = None,
    ) -> Outcome:
        """As the two-group base; ``innocuous`` is the respondent's own innocuous answer."""
        return self.randomize_with(truth, rng, group, innocuous)

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random, innocuous: int | None
    ) -> tuple[int, tuple[Step, ...]]:
        if self.p[group - 1] <= TOLERANCE:  # Moors' group: the innocuous question only
            if innocuous is not None:
                return innocuous, ()
            answer, second = draw(
                ("yes", "no"), (self.innocuous_rate, 1.0 - self.innocuous_rate), rng)
            return (1 if answer == 0 else 0), (second,)
        inner = UnrelatedQuestion(self.p[group - 1], self.innocuous_rate)
        outcome = inner.randomize(truth, rng, innocuous)
        return outcome.report, outcome.steps


@dataclass(frozen=True)
class OnePair(TwoGroupDesign):
    """A two-group design with one chance ``p`` per group, (0.3, 0.7) unless given.

    Subclasses check the pair further in ``check_p``.
    """

    p: tuple[float, float] = (0.3, 0.7)
    probability: float = 0.5

    def __post_init__(self) -> None:
        self.set_pair("p")
        self.check_p()
        self._check_groups()

    def check_p(self) -> None:
        """Raise where the design's pair of chances cannot work."""
        raise NotImplementedError


@dataclass(frozen=True)
class CheatingDetection(OnePair):
    """Cheating detection model (Clark & Desharnais 1998, Psychological Methods 3(2), 160-168).

    In group g the device forces a "yes" with probability ``p[g]``, else asks for the truth. The
    analysis estimates honest "yes" (pi), honest "no" (beta) and cheaters who say "no" whatever
    the instruction (gamma = 1 - pi - beta). A compliant "no" reveals the truth: one-sided
    (needs ``accept_no_epsilon``). Group matrix ((1 - p, p), (0, 1)). RRreg ``CDM``, p = [p1, p2].
    The symmetric variant is :class:`CheatingDetectionSymmetric`.
    Actions: "truth" / "yes" (forced).
    """

    name: ClassVar[str] = "cdm"
    rrreg_model: ClassVar[str] = "CDM"

    def check_p(self) -> None:
        """P below 1 in both groups."""
        if max(self.p) >= 1.0 - TOLERANCE:
            raise DesignError("p must be below 1 in both groups, or everyone is forced to say yes")

    def group_matrices(self) -> tuple[Matrix, Matrix]:
        """((1 - p_g, p_g), (0, 1)) per group."""
        return tuple(((1.0 - p, p), (0.0, 1.0)) for p in self.p)  # type: ignore[return-value]

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random, innocuous: int | None
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
    rrreg_model: ClassVar[str] = "CDMsym"
    yes: tuple[float, float] = (0.2, 0.4)
    no: tuple[float, float] = (0.2, 0.1)
    probability: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "yes", two_probabilities("yes", self.yes))
        object.__setattr__(self, "no", two_probabilities("no", self.no))
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

    def rrreg_p(self) -> list[float]:
        """RRreg's ``p`` = [yes1, no1, yes2, no2]."""
        return [self.yes[0], self.no[0], self.yes[1], self.no[1]]

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random, innocuous: int | None
    ) -> tuple[int, tuple[Step, ...]]:
        y, n = self.yes[group - 1], self.no[group - 1]
        outcome = forced(truth, 1.0 - y - n, y, n, rng)
        return outcome.report, outcome.steps


@dataclass(frozen=True)
class StochasticLieDetector(OnePair):
    """The stochastic lie detector (Moshagen, Musch & Erdfelder 2012, Behav. Res. Methods 44(1)).

    Mangat's device in two groups: a carrier says "yes"; a non-carrier answers the statement
    "I have A" (so "no") with probability ``p[g]``, else "I do not have A" ("yes"). The analysis
    estimates the prevalence and t, the probability that a carrier answers truthfully. A
    compliant "no" reveals the truth: one-sided (needs ``accept_no_epsilon``).
    Group matrix ((p, 1 - p), (0, 1)). RRreg ``SLD`` with p = [p1, p2] (t is RRreg's par2).
    Actions: "statement" / "mirrored".
    """

    name: ClassVar[str] = "sld"
    rrreg_model: ClassVar[str] = "SLD"

    def check_p(self) -> None:
        """P above 0 in both groups."""
        if min(self.p) <= TOLERANCE:
            raise DesignError("p must be above 0 in both groups")

    def group_matrices(self) -> tuple[Matrix, Matrix]:
        """((p_g, 1 - p_g), (0, 1)) per group."""
        return tuple(((p, 1.0 - p), (0.0, 1.0)) for p in self.p)  # type: ignore[return-value]

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random, innocuous: int | None
    ) -> tuple[int, tuple[Step, ...]]:
        outcome = Mangat(self.p[group - 1]).randomize(truth, rng)
        return outcome.report, outcome.steps


@dataclass(frozen=True)
class ExtendedCrosswise(TwoGroupDesign):
    """The extended crosswise model (Heck, Hoffmann & Moshagen 2018, Behav. Res. Methods 50(5)).

    The crosswise model in two groups the page draws at random: group 1 is shown the innocuous
    statement true for ``p`` of people (a birthday in January to March), group 2 its complement,
    true for 1 - p (April to December). The respondent says "same" (both statements true, or
    both false) or "different", in their head. One prevalence explains both groups' reports,
    which leaves one degree of freedom: the goodness-of-fit test of the two groups against each
    other detects respondents who do not follow the instructions (answering "different" or
    "same" whatever the statements, or at random). Group matrices ((p, 1 - p), (1 - p, p)) and
    ((1 - p, p), (p, 1 - p)) for truths (no, yes), reports (different, same). RRreg has no such
    model: its ``Crosswise`` with p in group 1 and 1 - p in group 2 (``group_p``), one
    prevalence for both. ``randomize`` (simulation only) draws the innocuous statement's truth.
    """

    name: ClassVar[str] = "extended-crosswise"
    reports: ClassVar[tuple[str, ...] | None] = ("different", "same")
    rrreg_model: ClassVar[str] = "Crosswise"
    p: float = 0.25  # type: ignore[assignment]  # one p: group 2's is 1 - p
    probability: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        if abs(self.p - 0.5) <= TOLERANCE:
            raise DesignError("p must not be 0.5: the report would be independent of the truth")
        self._check_groups()

    def group_p(self) -> tuple[float, float]:
        """The innocuous statement's yes-rate in group 1 (p) and group 2 (1 - p)."""
        return (self.p, 1.0 - self.p)

    def group_matrices(self) -> tuple[Matrix, Matrix]:
        """Crosswise's matrix with p in group 1 and 1 - p in group 2."""
        return tuple(  # type: ignore[return-value]
            ((q, 1.0 - q), (1.0 - q, q)) for q in self.group_p())

    def params(self) -> dict[str, Any]:
        """Group 1's innocuous yes-rate ``p``, and the probability of group 1."""
        return {"p": self.p, "probability": self.probability}

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Crosswise``, with p per group in ``group_p`` (one prevalence for both)."""
        return {"model": "Crosswise", "p": self.p, "group_p": list(self.group_p())}

    def _randomize_in(
        self, group: int, truth: int, rng: random.Random, innocuous: int | None
    ) -> tuple[int, tuple[Step, ...]]:
        rate = self.group_p()[group - 1]
        steps: tuple[Step, ...] = ()
        if innocuous is None:
            branch, step = draw(("innocuous-true", "innocuous-false"), (rate, 1.0 - rate), rng)
            innocuous, steps = (1 if branch == 0 else 0), (step,)
        return (1 if innocuous == truth else 0), steps
