"""`rrsite simulate --truth QID=FAMILY:PARAMS`: the distribution of a number question's true values.

Without one, the simulator draws a number question's true values uniformly over its range. A
randomized number is rarely uniform: incomes are skewed, and most people use a drug on no day
at all. ``--truth`` names a distribution instead:

    --truth undeclared=lognormal:8,1.2             log-normal, mu 8 and sigma 1.2 of the log
    --truth days=poisson:8,zeros:0.7               70% zeros, else Poisson with mean 8
    --truth hours=normal:20,6 | exponential:300 | uniform:0,40

The values are clipped to the question's ``[min, max]`` and, for a question of whole numbers,
rounded to the nearest one; the simulator says how many were clipped and prints the mean of the
true values it drew, the figure ``rrsite analyze`` estimates. With ``--cor`` the same
distribution is the number's margin (its quantile function applied to the copula's uniforms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import UsageError

#: family -> (its parameters' names, what they mean)
FAMILIES: dict[str, tuple[tuple[str, ...], str]] = {
    "normal": (("mean", "sd"), "normal:MEAN,SD"),
    "lognormal": (("mu", "sigma"), "lognormal:MU,SIGMA (of the log)"),
    "exponential": (("mean",), "exponential:MEAN"),
    "uniform": (("min", "max"), "uniform:MIN,MAX"),
    "poisson": (("mean",), "poisson:MEAN"),
}
FORMS = "; ".join(form for _, form in FAMILIES.values())


@dataclass
class NumberTruth:
    """The true values of one number question: a family, optional extra zeros, the range."""

    qid: str
    family: str
    params: tuple[float, ...]
    zeros: float
    low: float
    high: float
    integer: bool
    #: Running totals over the answered true values: how many, their sum, how many clipped.
    count: int = 0
    total: float = 0.0
    clipped: int = 0
    #: The last values drawn (and which were clipped), until :meth:`record` counts them.
    last: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _frozen: Any = field(default=None, repr=False)

    @property
    def distribution(self) -> Any:
        """The scipy distribution (before the zeros and the clipping)."""
        if self._frozen is None:
            from scipy import stats  # only for --truth QID=family:...: a second to import

            a, *rest = self.params
            if self.family == "normal":
                self._frozen = stats.norm(a, rest[0])
            elif self.family == "lognormal":
                self._frozen = stats.lognorm(s=rest[0], scale=math.exp(a))
            elif self.family == "exponential":
                self._frozen = stats.expon(scale=a)
            elif self.family == "uniform":
                self._frozen = stats.uniform(a, rest[0] - a)
            else:
                self._frozen = stats.poisson(a)
        return self._frozen

    def quantile(self, uniform: np.ndarray) -> np.ndarray:
        """True values for uniforms in (0, 1); kept in :attr:`last` until recorded.

        Zero below ``zeros``, else the family's quantile of the rest; clipped to the range,
        whole numbers rounded to the nearest.
        """
        u = np.asarray(uniform, dtype=np.float64)
        rest = np.clip((u - self.zeros) / (1.0 - self.zeros), 0.0, 1.0)
        values = np.where(u < self.zeros, 0.0, self.distribution.ppf(rest))
        if self.integer:
            values = np.rint(values)
        inside: np.ndarray = np.clip(values, self.low, self.high)
        self.last = inside, inside != values
        return inside

    def draw(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` true values."""
        return self.quantile(rng.random(count))

    def record(self, answered: np.ndarray) -> None:
        """Count the last values drawn of the respondents who answered (a boolean mask)."""
        if self.last is None:
            return
        values, clipped = self.last
        self.count += int(answered.sum())
        self.total += float(values[answered].sum())
        self.clipped += int(np.count_nonzero(clipped & answered))
        self.last = None

    def describe(self) -> str:
        """The distribution in words: ``poisson(8) with 70% zeros, clipped to 0..30``."""
        text = f"{self.family}({', '.join(f'{v:g}' for v in self.params)})"
        if self.zeros:
            text += f" with {self.zeros:.0%} zeros"
        return f"{text}, clipped to {self.low:g}..{self.high:g}"


def parse_number_truth(item: str, qid: str, text: str, low: float, high: float,
                       integer: bool) -> NumberTruth:
    """``FAMILY:A[,B][,zeros:S]`` for the number question ``qid`` on ``[low, high]``."""
    where = f"--truth {item!r}"
    pieces = [piece.strip() for piece in text.split(",")]
    zeros = 0.0
    if pieces and pieces[-1].startswith("zeros:"):
        zeros = _float(where, pieces.pop()[len("zeros:"):], "the share of zeros")
        if not 0.0 <= zeros < 1.0:
            raise UsageError(f"{where}: the share of zeros must be in [0, 1), got {zeros:g}")
        if not low <= 0.0 <= high:
            raise UsageError(f"{where}: zeros are outside {qid}'s range {low:g}..{high:g}")
    family, sep, first = pieces[0].partition(":") if pieces else ("", "", "")
    if not sep or family not in FAMILIES:
        raise UsageError(f"{where}: {qid} is a number question: give its true values' "
                         f"distribution, one of {FORMS}, optionally followed by ,zeros:SHARE "
                         f"(e.g. {qid}=poisson:3,zeros:0.6)")
    names, form = FAMILIES[family]
    params = tuple(_float(where, value, name) for value, name in
                   zip([first, *pieces[1:]], names, strict=False))
    if len(pieces) != len(names):
        raise UsageError(f"{where}: {family} takes {len(names)} number"
                         f"{'s' if len(names) > 1 else ''}: {form}")
    if family in ("normal", "lognormal") and params[1] <= 0:
        raise UsageError(f"{where}: {names[1]} must be above 0, got {params[1]:g}")
    if family in ("exponential", "poisson") and params[0] <= 0:
        raise UsageError(f"{where}: the mean must be above 0, got {params[0]:g}")
    if family == "uniform" and params[1] <= params[0]:
        raise UsageError(f"{where}: uniform max ({params[1]:g}) must be above min "
                         f"({params[0]:g})")
    return NumberTruth(qid, family, params, zeros, low, high, integer)


def _float(where: str, text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{where}: {name} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise UsageError(f"{where}: {name} must be a finite number, got {text!r}")
    return value


def split_number_truths(items: list[str], version: Any) -> tuple[list[str], dict[str,
                                                                           NumberTruth]]:
    """The ``--truth`` items of number questions, parsed; the others are returned as they are."""
    others: list[str] = []
    numbers: dict[str, NumberTruth] = {}
    for item in items:
        qid, sep, text = item.partition("=")
        question = version.question(qid) if sep else None
        if question is None or question.type != "number":
            others.append(item)
            continue
        if qid in numbers:
            raise UsageError(f"--truth: {qid} is given twice")
        low = -math.inf if question.minimum is None else float(question.minimum)
        high = math.inf if question.maximum is None else float(question.maximum)
        numbers[qid] = parse_number_truth(item, qid, text, low, high, bool(question.integer))
    return others, numbers
