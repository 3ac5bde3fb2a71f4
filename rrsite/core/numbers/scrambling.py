"""Scrambling designs: the truth mixed with, added to or multiplied by a number drawn on the device.

- ``mixture`` (Greenberg et al. 1971; RRreg ``mix.norm``/``mix.exp``; Eriksson 1973 with a
  list): with chance ``p`` the truth, else a draw from a known ``mask`` distribution.
- ``mixture-unknown`` (RRreg ``mix.unknown``): group g (drawn on the device) sends the truth with
  chance ``p[g]``, else the respondent's answer to an innocuous number question.
- ``additive`` (Pollock & Bek 1976): ``y + S``; ``multiplicative`` (Eichhorn & Hayre 1983):
  ``y S``, and with ``p`` < 1 the truth with chance ``p`` else ``y S`` (BarLev, Bobovich &
  Boukai 2004).

Privacy is computed from the design (never asserted): a finite epsilon where one exists, else
``math.inf`` with the reason and the smallest delta no epsilon can lower.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, ClassVar

from ..base import TOLERANCE, Step, check_probability, draw, secure_random
from ..errors import DesignError
from ..privacy import Privacy
from .base import NumberDesign, NumberOutcome, number_design, p_truth
from .masks import Mask, gaussian_delta, number_value, snap


@number_design
class Mixture(NumberDesign):
    """Greenberg et al. 1971: the truth with chance ``p``, else a draw from ``mask``.

    Actions: a coin/die/spinner "truth"/"mask", then (if mask) the draw.
    E[z | y] = p y + (1 - p) m; Var(z | y) = p y^2 + (1 - p)(v + m^2) - (p y + (1 - p) m)^2.
    """

    name: ClassVar[str] = "mixture"
    p: float = 0.5
    mask: Any = None

    def __post_init__(self) -> None:
        self._init_range()
        object.__setattr__(self, "p", p_truth(self.p))
        if self.mask is None:
            raise DesignError("design mixture needs mask: the distribution drawn instead of the "
                              "truth")
        if not isinstance(self.mask, Mask):
            object.__setattr__(self, "mask", Mask.from_spec(self.mask, "mask", self.integer))

    def params(self) -> dict[str, Any]:
        """p, mask."""
        return {"p": self.p, "mask": self.mask.spec()}

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """Coin: truth or mask; if mask, the draw is sent."""
        y = self.check_truth(truth)
        rng = rng or secure_random()
        sent = self.on_grid(y, rng)
        rounded = sent if sent != y else None
        branch, step = draw(("truth", "mask"), (self.p, 1.0 - self.p), rng)
        if branch == 0:
            return NumberOutcome(sent, None, "truth", (step,), used=sent, rounded=rounded)
        value, more = self.mask.sample(rng)
        if not self.mask.discrete:
            value = snap(value, self.report_step, rng)
            more = Step("draw", repr(value), more.action)
        return NumberOutcome(value, value, "mask", (step, more), used=sent, rounded=rounded)

    def linear(self) -> tuple[float, float]:
        """((1 - p) m, p)."""
        return (1.0 - self.p) * self.mask.mean, self.p

    def variance_coefficients(self) -> tuple[float, float, float]:
        """From Var = p y^2 + (1 - p)(v + m^2) - (p y + (1 - p) m)^2.

        v includes the rounding of a continuous mask draw to the report grid (exact); an answer
        off the grid (a question of any number) is rounded too, which adds at most
        p step^2 / 4, left out.
        """
        p, m = self.p, self.mask.mean
        v = self.mask.variance + self.mask.rounding_variance(self.report_step)
        return (1 - p) * v + p * (1 - p) * m * m, -2 * p * (1 - p) * m, p * (1 - p)

    def privacy(self) -> Privacy:
        """Finite only for whole numbers on a bounded grid the mask covers (MATH.md section 9).

        A report v has chance p [v = y] + (1 - p) g(v) under the answer y, so the largest ratio
        is (p + (1 - p) g) / ((1 - p) g) at the grid's least likely mask value g.
        """
        if not self.mask.discrete:
            return Privacy(math.inf, self.p, (
                f"the mask ({self.mask.describe()}) is continuous: the exact true number is "
                f"sent with chance {self.p:g} and a mask draw (rounded to the report grid) "
                "lands on any one answer only rarely, so a report equal to an answer all but "
                "singles that answer out",))
        if not self.integer or self.minimum is None or self.maximum is None:
            why = ("the question takes any number, not whole numbers" if not self.integer
                   else "the question has no bounded range [min, max]")
            return Privacy(math.inf, self.p, (
                f"{why}: a true number the mask ({self.mask.describe()}) never draws is "
                "revealed whenever it is sent",))
        missing, smallest = self.mask.whole_number_chances(int(self.minimum), int(self.maximum))
        if missing is not None:
            return Privacy(math.inf, self.p, (
                f"the mask never draws {missing:g}: a report of {missing:g} only comes from "
                "the true number itself",))
        return Privacy(math.log1p(self.p / ((1 - self.p) * smallest)), 0.0)

    def impossible(self, report: float) -> str | None:
        """A report must be a possible truth or a possible draw."""
        why = super().impossible(report)
        if why is not None:
            return why
        if in_range(report, self) and (not self.integer or report == int(report)):
            return None
        slack = self.report_step  # a draw rounded to the report grid
        mask = self.mask
        if mask.discrete:
            if mask.draws(report):
                return None
            return f"{report:g} is neither a possible answer nor a value of the mask"
        if mask.lowest - slack <= report <= mask.highest + slack:
            return None
        return f"{report:g} is neither a possible answer nor a possible mask draw"


def in_range(value: float, design: NumberDesign) -> bool:
    """Whether ``value`` lies within the design's [min, max] (a missing bound is no bound)."""
    low = -math.inf if design.minimum is None else design.minimum
    high = math.inf if design.maximum is None else design.maximum
    return low <= value <= high


@number_design
class MixtureUnknown(NumberDesign):
    """RRreg ``mix.unknown``: group g sends the truth with chance p[g], else the innocuous answer.

    The innocuous answer's distribution is unknown (it is estimated with the mean), so nothing
    bounds what a report tells: no epsilon. The group is drawn on the device and sent.
    """

    name: ClassVar[str] = "mixture-unknown"
    p: tuple[float, float] = (0.3, 0.7)
    probability: float = 0.5

    def __post_init__(self) -> None:
        self._init_range()
        pair = self.p
        if (not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2):
            raise DesignError(f"p must be a list of two probabilities (group 1, group 2), got "
                              f"{pair!r}")
        first, second = (check_probability("p", value) for value in pair)
        if abs(first - second) <= TOLERANCE:
            raise DesignError("p must differ between the two groups, or the mean is not "
                              "identified")
        object.__setattr__(self, "p", (first, second))
        probability = check_probability("probability", self.probability)
        if not 0.0 < probability < 1.0:
            raise DesignError(f"probability (of group 1) must be strictly between 0 and 1, got "
                              f"{self.probability!r}")
        object.__setattr__(self, "probability", probability)

    def params(self) -> dict[str, Any]:
        """p, probability."""
        return {"p": list(self.p), "probability": self.probability}

    def randomize(
        self, truth: float, rng: random.Random | None = None, innocuous: float | None = None,
        group: int | None = None,
    ) -> NumberOutcome:
        """Group (unless given), then truth or the innocuous answer (which must be given)."""
        y = self.check_truth(truth)
        if innocuous is None:
            raise DesignError("design mixture-unknown needs the respondent's innocuous answer")
        other = number_value("the innocuous answer", innocuous)
        rng = rng or secure_random()
        steps: tuple[Step, ...] = ()
        if group is None:
            index, step = draw(("group-1", "group-2"), (self.probability, 1 - self.probability),
                               rng)
            group, steps = index + 1, (step,)
        elif group not in (1, 2):
            raise DesignError(f"group must be 1 or 2, got {group!r}")
        p = self.p[group - 1]
        branch, step = draw(("truth", "innocuous"), (p, 1.0 - p), rng)
        if branch == 0:
            return NumberOutcome(y, None, "truth", steps + (step,), group, used=y)
        return NumberOutcome(other, None, "innocuous", steps + (step,), group, used=y)

    def linear(self) -> tuple[float, float]:
        """Not linear in y alone: the innocuous mean is unknown."""
        raise DesignError("mixture-unknown has no per-respondent de-biased value: its innocuous "
                          "mean is estimated from both groups")

    def variance_coefficients(self) -> tuple[float, float, float]:
        """Unknown (depends on the innocuous distribution)."""
        raise DesignError("mixture-unknown's report variance depends on the unknown innocuous "
                          "distribution")

    def privacy(self) -> Privacy:
        """No epsilon: the truth is sent as it is, against an unknown innocuous distribution.

        Delta's floor is the chance that the truth is sent, over both groups (the report is the
        group and the number): probability p1 + (1 - probability) p2. Another answer gives
        those reports only through an innocuous answer equal to this one, which only lowers it.
        """
        sent = self.probability * self.p[0] + (1 - self.probability) * self.p[1]
        return Privacy(math.inf, sent, (
            f"the true number is sent as it is with chance {sent:g} (group 1 drawn with chance "
            f"{self.probability:g}, then the truth with chance {self.p[0]:g}; group 2, "
            f"{self.p[1]:g}), and the innocuous answers' distribution is unknown, so nothing "
            "bounds what a report reveals",))


def read_scramble(design: NumberDesign, meaning: str, integer: bool) -> None:
    """Check a scrambling design's ``scramble`` and store it as a :class:`Mask`."""
    scramble = getattr(design, "scramble", None)
    if scramble is None:
        raise DesignError(f"design {design.name} needs scramble: {meaning}")
    if not isinstance(scramble, Mask):
        object.__setattr__(design, "scramble", Mask.from_spec(scramble, "scramble", integer))


@number_design
class Additive(NumberDesign):
    """Pollock & Bek 1976: report y + S, S drawn from ``scramble``. E[z | y] = y + E[S]."""

    name: ClassVar[str] = "additive"
    scramble: Any = None

    def __post_init__(self) -> None:
        self._init_range()
        read_scramble(self, "the distribution of the number added", self.integer)

    def params(self) -> dict[str, Any]:
        """Scramble."""
        return {"scramble": self.scramble.spec()}

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """Draw S, send y + S."""
        y = self.check_truth(truth)
        rng = rng or secure_random()
        sent = self.on_grid(y, rng)
        value, step = self.scramble.sample(rng)
        if not self.scramble.discrete:
            value = snap(value, self.report_step, rng)
            step = Step("draw", repr(value), step.action)
        report = float(Fraction(repr(sent)) + Fraction(repr(value)))
        return NumberOutcome(report, value, "add", (step,), used=sent,
                             rounded=sent if sent != y else None)

    def linear(self) -> tuple[float, float]:
        """(E[S], 1)."""
        return self.scramble.mean, 1.0

    def variance_coefficients(self) -> tuple[float, float, float]:
        """(Var S, 0, 0), S as sent: a continuous draw rounded to the report grid (exact).

        An answer off the grid (a question of any number) is rounded too, which adds at most
        step^2 / 4, left out.
        """
        s = self.scramble
        return s.variance + s.rounding_variance(self.report_step), 0.0, 0.0

    def privacy(self) -> Privacy:
        """No pure epsilon: the reports' range moves with the truth (normal: tails)."""
        s = self.scramble
        if self.minimum is None or self.maximum is None:
            return Privacy(math.inf, 1.0, (
                "the question has no bounded range [min, max], so a large enough answer moves "
                "the reports beyond any other answer's",))
        width = self.maximum - self.minimum
        if s.kind == "normal":
            delta = gaussian_delta(width, s.b, 1.0)
            return Privacy(math.inf, delta, (
                f"normal scrambling gives no pure epsilon: the ratio of the report's densities "
                f"under two answers grows without bound in the tails; only (epsilon, delta) "
                f"guarantees hold (the Gaussian mechanism with sensitivity {width:g} and sd "
                f"{s.b:g}: at epsilon 1 the smallest delta is {delta:.3g})",))
        if s.kind == "exponential":
            return Privacy(math.inf, 1.0 - math.exp(-width / s.a), (
                "exponential scrambling never subtracts: a report below an answer rules that "
                "answer out",))
        if s.kind == "uniform" and not s.integer:
            return Privacy(math.inf, min(1.0, width / (s.b - s.a)), (
                "the reports of two answers lie in shifted ranges: a report near either end "
                "rules some answers out",))
        delta = self._discrete_delta() if self.integer else 1.0
        return Privacy(math.inf, delta, (
            "with a list of added numbers the smallest report (the smallest answer plus the "
            "smallest draw) can only come from the smallest answer",))

    def _discrete_delta(self) -> float:
        """Delta's floor for whole-number answers.

        The largest chance, over two answers d apart (0 < |d| <= max - min), of the draws s
        whose report y + s the other answer cannot give (s - d is never drawn).
        """
        s = self.scramble
        assert self.minimum is not None and self.maximum is not None
        width = int(self.maximum - self.minimum)
        if s.kind == "uniform":  # whole numbers a..b: |d| of the b - a + 1 reports are out
            count = int(s.b) - int(s.a) + 1
            return min(width, count) / count
        drawn = [(v, q) for v, q in zip(s.values, s.probabilities, strict=True) if q > 0]
        shifts = {round(v - w) for v, _ in drawn for w, _ in drawn
                  if 0 < abs(round(v - w)) <= width
                  and abs(v - w - round(v - w)) <= 1e-9 * max(1.0, abs(v), abs(w))}
        if len(shifts) < 2 * width:  # some shift leaves no draw in common
            return 1.0
        return max(math.fsum(q for v, q in drawn if not s.draws(v - d)) for d in shifts)

    def impossible(self, report: float) -> str | None:
        """The report must lie in [min + lowest S, max + highest S]."""
        why = super().impossible(report)
        if why is not None:
            return why
        low = (-math.inf if self.minimum is None else self.minimum) + self.scramble.lowest
        high = (math.inf if self.maximum is None else self.maximum) + self.scramble.highest
        # a continuous draw is rounded to the report grid: it may pass its range by a step
        slack = 0.0 if self.scramble.discrete else self.report_step
        if not low - slack <= report <= high + slack:
            return f"{report:g} is outside [{low:g}, {high:g}], the range of answer + scramble"
        s = self.scramble
        if not (self.integer and s.discrete):
            return None
        # a whole-number answer plus a drawn number: some draw leaves a whole number in range
        if s.kind == "uniform":  # whole numbers a..b: every whole number in range is a sum
            if abs(report - round(report)) <= 1e-9 * max(1.0, abs(report)):
                return None
        else:
            for value, chance in zip(s.values, s.probabilities, strict=True):
                answer = report - value
                if (chance > 0 and in_range(float(round(answer)), self)
                        and abs(answer - round(answer)) <= 1e-9 * max(1.0, abs(report),
                                                                      abs(value))):
                    return None
        return (f"{report:g} is not a whole-number answer in range plus a number the scramble "
                f"draws ({s.describe()})")


@number_design
class Multiplicative(NumberDesign):
    """Eichhorn & Hayre 1983: report y S, S > 0 from ``scramble``; BarLev et al. 2004 with p < 1.

    With ``p`` < 1 the device first sends the truth with chance p, else y S.
    E[z | y] = (p + (1 - p) E[S]) y; Var(z | y) = y^2 (p + (1 - p) E[S^2] - (p + (1 - p) E[S])^2).
    """

    name: ClassVar[str] = "multiplicative"
    scramble: Any = None
    p: float = 0.0

    def __post_init__(self) -> None:
        self._init_range()
        read_scramble(self, "the distribution of the positive factor", False)
        s = self.scramble
        if s.kind not in ("uniform", "exponential") or s.lowest <= 0 and s.kind == "uniform":
            raise DesignError("scramble for multiplicative must be positive and continuous: "
                              "uniform with min above 0, or exponential")
        p = check_probability("p", self.p)
        if p >= 1.0:
            raise DesignError("p must be below 1, or every report is the true number")
        object.__setattr__(self, "p", p)

    def params(self) -> dict[str, Any]:
        """Scramble, p."""
        return {"scramble": self.scramble.spec(), "p": self.p}

    def randomize(self, truth: float, rng: random.Random | None = None) -> NumberOutcome:
        """(Truth with chance p, else) draw S and send y S."""
        y = self.check_truth(truth)
        rng = rng or secure_random()
        sent = self.on_grid(y, rng)
        rounded = sent if sent != y else None
        steps: tuple[Step, ...] = ()
        if self.p > 0:
            branch, step = draw(("truth", "multiply"), (self.p, 1.0 - self.p), rng)
            steps = (step,)
            if branch == 0:
                return NumberOutcome(sent, None, "truth", steps, used=sent, rounded=rounded)
        value, more = self.scramble.sample(rng)
        value = snap(value, self.factor_step, rng)
        product = float(Fraction(repr(sent)) * Fraction(repr(value)))
        report = snap(product, self.report_step, rng)
        return NumberOutcome(report, value, "multiply",
                             steps + (Step("draw", repr(value), more.action),), used=sent,
                             rounded=rounded, product=product if product != report else None)

    @property
    def factor_step(self) -> float:
        """The grid of the factor, fine enough to say nothing of the answer.

        Answer x factor then steps by at most a tenth of the report grid, so the report's grid
        position does not depend on the answer.
        """
        largest = max(abs(self.minimum or 0.0), abs(self.maximum or 0.0), 1.0)
        if self.maximum is None or self.minimum is None:
            largest = max(largest, 1e5)
        return 10.0 ** math.floor(math.log10(self.report_step / (10 * largest)))

    def linear(self) -> tuple[float, float]:
        """(0, p + (1 - p) E[S])."""
        return 0.0, self.p + (1 - self.p) * self.scramble.mean

    def variance_coefficients(self) -> tuple[float, float, float]:
        """(0, 0, p + (1 - p) E[S^2] - slope^2), S as sent (rounded to its fine grid: exact).

        The product's rounding to the report grid adds at most (1 - p) step^2 / 4 (about a
        sixth of step^2 where the products spread over many grid cells), left out, as is an
        answer's rounding onto the grid.
        """
        s = self.scramble
        second = s.variance + s.rounding_variance(self.factor_step) + s.mean ** 2
        slope = self.linear()[1]
        return 0.0, 0.0, self.p + (1 - self.p) * second - slope ** 2

    def privacy(self) -> Privacy:
        """No epsilon: 0 stays 0, and the reports' range scales with the answer.

        Delta is the chance, under the worse of two answers, of the reports the other cannot
        give: the truth sent as it is (chance p: a scrambled report equals an answer with chance
        0) plus, for a uniform factor on [a, b], the scrambled reports outside the other answer's
        range. With answers of sizes |y| from u to v (0 not among them) that is the larger of
        a (v - u) / (u (b - a)) and b (v - u) / (v (b - a)), at most 1; an exponential factor
        reaches every report of the answers' sign.
        """
        low = -math.inf if self.minimum is None else self.minimum
        high = math.inf if self.maximum is None else self.maximum
        if low <= 0 <= high:
            return Privacy(math.inf, 1.0, (
                "an answer of 0 is always reported as 0, and any other report rules 0 out",))
        near, far = sorted((abs(low), abs(high)))
        s = self.scramble
        truth = (f"the true number is sent as it is with chance {self.p:g}, and a scrambled "
                 "report almost never equals an answer exactly",) if self.p > 0 else ()
        if s.kind == "exponential":
            return Privacy(math.inf, self.p, truth + (
                "exponential scrambling gives no pure epsilon: the ratio of the report's "
                "densities under two answers grows without bound in the tail",))
        if math.isinf(far):
            scrambled = 1.0
            why = ("the answers have no bound away from 0 (min or max is missing), so two "
                   "answers' scaled ranges can lie apart")
        else:
            scrambled = min(1.0, max(s.a * (far - near) / (near * (s.b - s.a)),
                                     s.b * (far - near) / (far * (s.b - s.a))))
            why = ("the reports of two answers lie in scaled ranges: a report near either end "
                   "rules some answers out")
        return Privacy(math.inf, self.p + (1 - self.p) * scrambled, truth + (why,))

    def impossible(self, report: float) -> str | None:
        """The report has the sign of the answer range, within [min S_low, max S_high]."""
        why = super().impossible(report)
        if why is not None:
            return why
        lo = -math.inf if self.minimum is None else self.minimum
        hi = math.inf if self.maximum is None else self.maximum
        if self.p > 0 and lo <= report <= hi:
            return None
        slack = self.report_step  # the product rounded to the report grid
        s_lo, s_hi = self.scramble.lowest, self.scramble.highest
        corners = [a * b for a in (lo, hi) for b in (s_lo, s_hi)
                   if not (math.isinf(a) and b == 0) and not (a == 0 and math.isinf(b))]
        low, high = min(corners), max(corners)
        if lo >= 0 and report < 0:
            return f"{report:g} is negative, but answers and the factor are not"
        if low - slack <= report <= high + slack:
            return None
        return f"{report:g} is outside [{low:g}, {high:g}], the range of answer x scramble"
