"""``randomize: auto``: the design of least variance for a choice question at an epsilon and k.

Each candidate is tuned to the epsilon (k-RR, OUE, SUE, OLH with its best prime g, subset
selection with its best d, Hadamard response) and compared by one respondent's variance of a
share near 0, q (1 - q) / (p - q)^2 (Wang et al. 2017's Var*, the figure by which the literature
ranks frequency oracles: the shares of a question with many answers are mostly small). Ties keep
the simpler design, in the order of :data:`CANDIDATES`. For a set ("tick all that apply") the
candidates are OUE and SUE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..categorical import KRR
from .oracles import (
    FrequencyOracle,
    HadamardResponse,
    LocalHashing,
    SubsetSelection,
    UnaryEncoding,
    check_epsilon,
    check_k,
)

#: The designs ``auto`` weighs, simplest first (a tie keeps the earlier one).
CANDIDATES = ("k-rr", "subset", "oue", "olh", "sue", "hadamard")
#: Variances within this relative distance are a tie.
TIE = 1e-9


def krr_spread(k: int, epsilon: float) -> float:
    """k-RR's n Var near a share of 0: (e^eps + k - 2) / (e^eps - 1)^2 (Wang et al. 2017)."""
    design = KRR(k, epsilon=epsilon)
    return design.q * (1.0 - design.q) / (design.p - design.q) ** 2


def spread(design: FrequencyOracle) -> float:
    """One respondent's variance of a share near 0: q (1 - q) / (p - q)^2."""
    return design.q * (1.0 - design.q) / (design.p - design.q) ** 2


def build(name: str, k: int, epsilon: float, max_ticks: int | None = None) -> Any:
    """The design ``name`` tuned to epsilon (KRR for "k-rr", else a frequency oracle)."""
    makers: dict[str, Callable[[], Any]] = {
        "k-rr": lambda: KRR(k, epsilon=epsilon),
        "oue": lambda: UnaryEncoding(k, epsilon, True, max_ticks),
        "sue": lambda: UnaryEncoding(k, epsilon, False, max_ticks),
        "olh": lambda: LocalHashing(k, epsilon),
        "subset": lambda: SubsetSelection(k, epsilon),
        "hadamard": lambda: HadamardResponse(k, epsilon),
    }
    return makers[name]()


@dataclass(frozen=True)
class Choice:
    """The design ``auto`` chose, every candidate's variance, and why in one sentence."""

    name: str
    design: Any
    variances: dict[str, float]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The manifest's ``chosen_for`` additions: design, variances, reason."""
        return {"design": self.name, "variances": dict(self.variances), "reason": self.reason}


def compare(k: int, epsilon: float, max_ticks: int | None = None,
            among: tuple[str, ...] = CANDIDATES) -> dict[str, float]:
    """Every candidate's variance near 0 for one respondent (``among`` limits the candidates)."""
    k = check_k(k)
    epsilon = check_epsilon(epsilon)
    allowed: tuple[str, ...] = ("oue", "sue") if max_ticks is not None else CANDIDATES
    names = tuple(n for n in allowed if n in among)
    out: dict[str, float] = {}
    for name in names:
        if name == "subset" and k < 3:
            continue
        out[name] = (krr_spread(k, epsilon) if name == "k-rr"
                     else spread(build(name, k, epsilon, max_ticks)))
    return out


def auto(k: int, epsilon: float, max_ticks: int | None = None,
         among: tuple[str, ...] = CANDIDATES) -> Choice:
    """The candidate of least variance near 0 at (k, epsilon), with the reason in words.

    ``among``: the candidates allowed (a panel weighs only the designs with a permanent report).
    """
    variances = compare(k, epsilon, max_ticks, among)
    best = min(variances.values())
    name = next(n for n, v in variances.items() if v <= best * (1.0 + TIE))
    others = ", ".join(f"{n} {v:.3g}" for n, v in variances.items() if n != name)
    what = "a set of at most " + str(max_ticks) + " ticks" if max_ticks is not None else \
        f"k = {k} answers"
    reason = (f"{name} has the smallest variance of a share near 0 per respondent at epsilon "
              f"{epsilon:.4g} and {what}: {best:.3g} (others: {others})")
    return Choice(name, build(name, k, epsilon, max_ticks), variances, reason)
