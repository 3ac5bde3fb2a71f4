"""Designs of a yes/no question with two reports.

Forced response, Warner, the unrelated question, a given 2 x 2 matrix, and RRreg's crosswise,
triangular and Mangat designs.

For a yes/no question index 0 is "no" and index 1 is "yes"; ``p00 = P(report no | truth no)``,
``p11 = P(report yes | truth yes)``. Each design names its paper and its RRreg model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .base import TOLERANCE, Design, Matrix, Outcome, Step, check_probability, draw, secure_random
from .errors import DesignError


class BinaryDesign(Design):
    """A design for a yes/no question, fully described by ``p00`` and ``p11``.

    Every useful binary design (p00 + p11 > 1) is a forced-response design with
    ``truth = p00 + p11 - 1``, ``yes = 1 - p00``, ``no = 1 - p11``; that is how the general ones
    randomize.
    """

    def chances(self) -> tuple[float, float]:
        """(p00, p11), each design's own."""
        raise NotImplementedError

    #: The two actions of a design's one draw (``kept``), at chances p00 and 1 - p00.
    actions: ClassVar[tuple[str, str]]

    @property
    def p00(self) -> float:
        """P(report no | truth no)."""
        return self.chances()[0]

    def kept(self, truth: int, rng: random.Random | None) -> tuple[bool, Step]:
        """Whether the one draw, at chance p00, came out first, and its step (truth checked)."""
        self.check_truth(truth)
        branch, step = draw(self.actions, (self.p00, 1.0 - self.p00), rng or secure_random())
        return branch == 0, step

    @property
    def p11(self) -> float:
        """P(report yes | truth yes)."""
        return self.chances()[1]

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
        self.check_truth(truth)
        t = self.p00 + self.p11 - 1.0
        return forced(truth, t, 1.0 - self.p00, 1.0 - self.p11, rng or secure_random())


def forced(truth: int, t: float, yes: float, no: float, rng: random.Random) -> Outcome:
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

    def chances(self) -> tuple[float, float]:
        """(truth + no, truth + yes)."""
        assert self.yes is not None and self.no is not None
        return self.truth + self.no, self.truth + self.yes

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``FR`` with p = [forced no, forced yes]."""
        return {"model": "FR", "p": [self.no, self.yes]}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Actions: "truth"/"forced", then "yes"/"no"."""
        self.check_truth(truth)
        assert self.yes is not None and self.no is not None
        return forced(truth, self.truth, self.yes, self.no, rng or secure_random())


class OneSided(BinaryDesign):
    """A one-sided 2 x 2 design: a true "yes" is reported "yes", a true "no" "no" with ``p00``.

    A "no" is never deniable. RRreg's ``Mangat`` with p = p00. ``chance`` names the field that
    holds p00, the design's one parameter, and says why it must be above 0.
    """

    chance: ClassVar[tuple[str, str]]

    def __post_init__(self) -> None:
        self.set_chance(*self.chance)

    def chances(self) -> tuple[float, float]:
        """(the design's chance, 1)."""
        return float(getattr(self, self.chance[0])), 1.0

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Mangat`` with p = P(no | truth no) = p00 (the same matrix)."""
        return {"model": "Mangat", "p": self.p00}

    def set_chance(self, name: str, why: str) -> None:
        """Check the design's chance ``name`` (a probability above 0) and store it as a float."""
        value = check_probability(name, getattr(self, name))
        if value <= TOLERANCE:
            raise DesignError(f"{name} must be above 0, {why}, got {value!r}")
        object.__setattr__(self, name, value)


@dataclass(frozen=True)
class ForcedYes(OneSided):
    """One-sided forced "yes" (seed 004): heads, the truth; tails, say yes.

    ``truth`` is the probability of answering truthfully (1/2 for a fair coin). A "no" is never
    deniable: it can only come from a true "no", so no epsilon protects it.
    p00 = truth, p11 = 1; the true "no" rate is the observed one divided by ``truth``.
    """

    name: ClassVar[str] = "forced-yes"
    chance: ClassVar[tuple[str, str]] = ("truth", "or the report says nothing")
    actions: ClassVar[tuple[str, str]] = ("truth", "yes")
    truth: float = 0.5

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Actions: "truth"/"forced", then always "yes"."""
        if self.truth >= 1.0:
            self.check_truth(truth)
            return Outcome(truth, ())
        kept, step = self.kept(truth, rng)
        return Outcome(truth if kept else 1, (step,))


class OneChance(BinaryDesign):
    """A 2x2 design that keeps the true answer's index with one chance ``p``: p00 = p11 = p.

    Warner's matrix, and the crosswise model's (report 0 "different", 1 "same"). RRreg's model
    of the same name, with the same p.
    """

    p: float

    def chances(self) -> tuple[float, float]:
        """(p, p): the index is kept with p (crosswise: P(different | no), P(same | yes))."""
        return self.p, self.p

    def rrreg(self) -> dict[str, Any]:
        """RRreg's ``Warner`` or ``Crosswise`` with the same p."""
        return {"model": self.name.capitalize(), "p": self.p}


@dataclass(frozen=True)
class Warner(OneChance):
    """Warner's mirrored question (1965; seed 002).

    With probability ``p`` the respondent is shown "I have A", else "I do not have A", and says
    truthfully whether the statement shown is true of them; the report is that yes/no.
    p00 = p11 = p. Actions: "statement" (shown "I have A") or "mirrored" (shown "I do not have A").
    """

    name: ClassVar[str] = "warner"
    actions: ClassVar[tuple[str, str]] = ("statement", "mirrored")
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

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Report whether the statement drawn is true of the respondent."""
        kept, step = self.kept(truth, rng)
        return Outcome(truth if kept else 1 - truth, (step,))


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

    def chances(self) -> tuple[float, float]:
        """(p + (1 - p)(1 - innocuous_rate), p + (1 - p) innocuous_rate)."""
        return (self.p + (1.0 - self.p) * (1.0 - self.innocuous_rate),
                self.p + (1.0 - self.p) * self.innocuous_rate)

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``UQTknown`` with p = [p, innocuous_rate]."""
        return {"model": "UQTknown", "p": [self.p, self.innocuous_rate]}

    def randomize(
        self, truth: int, rng: random.Random | None = None, innocuous: int | None = None
    ) -> Outcome:
        """Answer the sensitive question or the innocuous one (``innocuous``: its true answer)."""
        self.check_truth(truth)
        rng = rng or secure_random()
        branch, step = draw(("sensitive", "innocuous"), (self.p, 1.0 - self.p), rng)
        if branch == 0:
            return Outcome(truth, (step,))
        if innocuous is not None:
            self.check_truth(innocuous)
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

    def chances(self) -> tuple[float, float]:
        """As given."""
        return self.p00_, self.p11_

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``FR`` with p = [1 - p11, 1 - p00] (every useful 2 x 2 matrix is one)."""
        return {"model": "FR", "p": [1.0 - self.p11, 1.0 - self.p00]}

    def __repr__(self) -> str:
        return f"BinaryMatrix(p00={self.p00!r}, p11={self.p11!r})"


@dataclass(frozen=True)
class Crosswise(OneChance):
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
    actions: ClassVar[tuple[str, str]] = ("innocuous-true", "innocuous-false")
    reports: ClassVar[tuple[str, ...] | None] = ("different", "same")
    p: float = 0.25

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        if abs(self.p - 0.5) <= TOLERANCE:
            raise DesignError("p must not be 0.5: the report would be independent of the truth")

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Action "innocuous-true"/"innocuous-false"; report 1 ("same") when they agree."""
        kept, step = self.kept(truth, rng)
        return Outcome(1 if int(kept) == truth else 0, (step,))


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

    def chances(self) -> tuple[float, float]:
        """P(circle | no) = 1 - p, P(triangle | yes) = 1."""
        return 1.0 - self.p, 1.0

    def rrreg(self) -> dict[str, Any]:
        """RRreg ``Triangular`` with the same p."""
        return {"model": "Triangular", "p": self.p}

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Action "innocuous-true"/"innocuous-false"; the circle only when both are false."""
        self.check_truth(truth)
        branch, step = draw(
            ("innocuous-true", "innocuous-false"), (self.p, 1.0 - self.p), rng or secure_random()
        )
        return Outcome(0 if (truth == 0 and branch == 1) else 1, (step,))


@dataclass(frozen=True)
class Mangat(OneSided):
    """Mangat's design (Mangat 1994, JRSS B 56(1), 93-95). One-sided.

    A respondent with the attribute says "yes"; one without uses Warner's device: with
    probability ``p`` the statement "I have A" (answer "no"), else "I do not have A" (answer
    "yes"). The device is drawn for everyone, so the transcript looks alike. A "no" reveals the
    truth (needs ``accept_no_epsilon``). matrix = ((p, 1 - p), (0, 1)). RRreg ``Mangat``, same p.
    Actions: "statement" / "mirrored".
    """

    name: ClassVar[str] = "mangat"
    chance: ClassVar[tuple[str, str]] = ("p", "or everyone says yes")
    actions: ClassVar[tuple[str, str]] = ("statement", "mirrored")
    p: float = 0.5

    def randomize(self, truth: int, rng: random.Random | None = None) -> Outcome:
        """Draw the statement; "yes" for a carrier, else the answer to the statement drawn."""
        kept, step = self.kept(truth, rng)
        return Outcome(1 if truth == 1 or not kept else 0, (step,))
