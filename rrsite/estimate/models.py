"""RRreg's univariate randomized-response models, in RRreg's exact parameterisation.

Source: R package RRreg (Heck & Moshagen 2018, JSS 85(2)), functions ``getPW``
(R/RRlin_getPW.R), ``RRuni`` and ``RRuni.ll`` (R/RRuni*.R), read from the CRAN mirror
``cran/RRreg`` (version 0.7.5 there; these functions are unchanged in 0.7.6). MATH.md section 7.

Conventions (RRreg's, kept so results compare one to one):

- ``PW[i, j] = P(report i | latent state j)``: rows are reports, columns are states (the transpose
  of rrsite's ``matrix[truth][report]``). Every column sums to one.
- The reports of a binary model are ``"0"`` and ``"1"`` (RRreg's response coding: crosswise 1 =
  "same", triangular 1 = "triangle", otherwise 1 = "yes"); Kuk's are the red-card counts
  ``"0" .. "m"``; FR's are the categories ``"0" .. "k-1"``.
- The latent states are ``("0", "1")`` (1 = carrier of the sensitive attribute), FR's
  ``("0", .., "k-1")``, and CDM/CDMsym's ``("1", "0", "cheater")`` (honest carrier, honest
  non-carrier, cheater who says "no" whatever the instruction).
- The estimated parameters ``theta`` are RRreg's ``optim`` vector ``par``:

  =========== ======================= ====================================================
  model       theta                   state shares
  =========== ======================= ====================================================
  Warner ...  (pi,)                   (1 - pi, pi)
  FR (k)      (pi_1, .., pi_{k-1})    (1 - sum, pi_1, .., pi_{k-1})
  UQTunknown  (pi, piUQ)              (1 - pi, pi); piUQ enters PW (innocuous "yes" rate)
  SLD         (pi, t)                 (1 - pi, pi); t enters PW (carriers' honesty)
  CDM, sym    (pi, beta)              (pi, beta, gamma = 1 - pi - beta)
  =========== ======================= ====================================================

  Every entry of theta and every state share lies in [0, 1] (the bounds).
- Two-group models (UQTunknown, CDM, CDMsym, SLD) have groups 1 and 2, each with its own PW.

``p`` is RRreg's ``p`` for the model (a number or a list; see ``P_MEANING``) and ``kukrep`` Kuk's
number of cards drawn. Interface for the other estimators (the regression builds on it):

    design = Design("SLD", [0.2, 0.8])
    design.pw(group=1, theta=[0.3, 0.9])          # (reports x states)
    design.state_shares([0.3, 0.9])               # (states,)
    design.report_probabilities([0.3, 0.9], 1)     # PW @ shares, (reports,)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

import numpy as np

#: RRreg's model names, in the order of its documentation.
MODEL_NAMES = (
    "Warner", "UQTknown", "UQTunknown", "Mangat", "Kuk", "FR",
    "Crosswise", "Triangular", "CDM", "CDMsym", "SLD", "custom",
)
TWO_GROUP_MODELS = frozenset({"UQTunknown", "CDM", "CDMsym", "SLD"})

#: What RRreg's ``p`` means for each model (RRuni's documentation), and its length.
P_MEANING = {
    "Warner": "p: probability of getting the sensitive statement (else its negation)",
    "UQTknown": "[p1, q]: probability of the sensitive question, known 'yes' rate of the other",
    "UQTunknown": "[p_g1, p_g2]: probability of the sensitive question in group 1 and group 2",
    "Mangat": "p: probability that a non-carrier answers truthfully 'no'",
    "Kuk": "[p1, p0]: red-card share of the carriers' and the non-carriers' deck (Kukrep draws)",
    "FR": "[f_0, .., f_{k-1}]: probability of being told to answer 0, .., k-1 (sum < 1)",
    "Crosswise": "p: 'yes' rate of the innocuous statement (report 1 = 'same')",
    "Triangular": "p: 'yes' rate of the innocuous statement (report 1 = 'triangle')",
    "CDM": "[p_g1, p_g2]: probability of being told to say 'yes' in group 1 and group 2",
    "CDMsym": "[y_g1, n_g1, y_g2, n_g2]: probability of being told 'yes' / 'no', per group",
    "SLD": "[p_g1, p_g2]: probability that a non-carrier answers 'no', in group 1 and group 2",
    "custom": "a k x k matrix PW[report][state] whose columns sum to 1 (RRreg's 'custom')",
}
_P_LENGTH = {
    "Warner": 1, "UQTknown": 2, "UQTunknown": 2, "Mangat": 1, "Kuk": 2,
    "Crosswise": 1, "Triangular": 1, "CDM": 2, "CDMsym": 4, "SLD": 2,
}
#: Name of the second estimated parameter of the two-group models (RRreg's result fields).
NUISANCE = {"UQTunknown": "piUQ", "SLD": "t", "CDM": "beta", "CDMsym": "beta"}


def _as_custom(p: object) -> tuple[float, ...]:
    """A k x k matrix PW[report][state], flattened row-major."""
    matrix = np.asarray(p, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
        raise ValueError(f"custom needs a square k x k matrix (k >= 2), got shape {matrix.shape}")
    if np.any(matrix < 0) or np.any(matrix > 1):
        raise ValueError("custom: every entry of the matrix must be in [0, 1]")
    if not np.allclose(matrix.sum(axis=0), 1.0, atol=1e-9):
        raise ValueError(f"custom: every column must sum to 1, got {matrix.sum(axis=0).tolist()}")
    return tuple(float(v) for v in matrix.ravel())


def _as_p(model: str, p: object) -> tuple[float, ...]:
    if model == "custom":
        return _as_custom(p)
    if not isinstance(p, (int, float, Sequence)):
        raise ValueError(f"{model}: p must be a number or a list, got {p!r}")
    values = (float(p),) if isinstance(p, (int, float)) else tuple(float(v) for v in p)
    if model == "FR":
        if len(values) < 2:
            raise ValueError(f"FR needs p with one entry per category (>= 2), got {list(values)}")
        if sum(values) >= 1:
            raise ValueError(f"FR needs sum(p) < 1, got {sum(values)}")
    elif len(values) != _P_LENGTH[model]:
        raise ValueError(
            f"{model} needs p of length {_P_LENGTH[model]} ({P_MEANING[model]}), got {list(values)}"
        )
    for value in values:
        if not 0 <= value <= 1:
            raise ValueError(f"{model}: every entry of p must be in [0, 1], got {value}")
    return values


@dataclass(frozen=True)
class Design:
    """One RRreg model with its randomisation probabilities ``p`` (and ``kukrep`` for Kuk)."""

    model: str
    p: tuple[float, ...]
    kukrep: int = 1

    def __init__(
        self, model: str, p: float | Sequence[float] | Sequence[Sequence[float]] | np.ndarray,
        kukrep: int = 1,
    ) -> None:
        if model not in MODEL_NAMES:
            raise ValueError(f"unknown RRreg model {model!r}; one of {', '.join(MODEL_NAMES)}")
        if isinstance(kukrep, bool) or not isinstance(kukrep, int) or kukrep < 1:
            raise ValueError(f"Kukrep must be a positive integer, got {kukrep!r}")
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "p", _as_p(model, p))
        object.__setattr__(self, "kukrep", kukrep if model == "Kuk" else 1)

    # -- shape -------------------------------------------------------------------------------
    @property
    def categories(self) -> int:
        """Number of latent states of FR and custom (k)."""
        if self.model == "custom":
            return round(math.sqrt(len(self.p)))
        return len(self.p) if self.model == "FR" else 2

    @property
    def groups(self) -> tuple[int, ...]:
        """The group ids: (1, 2) for two-group models, else (1,)."""
        return (1, 2) if self.model in TWO_GROUP_MODELS else (1,)

    @property
    def states(self) -> tuple[str, ...]:
        """Latent states, in the order of PW's columns."""
        if self.model in ("FR", "custom"):
            return tuple(str(j) for j in range(self.categories))
        if self.model in ("CDM", "CDMsym"):
            return ("1", "0", "cheater")
        return ("0", "1")

    @property
    def reports(self) -> tuple[str, ...]:
        """Report values, in the order of PW's rows."""
        if self.model in ("FR", "custom"):
            return tuple(str(j) for j in range(self.categories))
        if self.model == "Kuk":
            return tuple(str(j) for j in range(self.kukrep + 1))
        return ("0", "1")

    @property
    def parameters(self) -> tuple[str, ...]:
        """Names of theta's entries (RRreg's ``par``)."""
        if self.model in ("FR", "custom"):
            return tuple(f"pi{j}" for j in range(1, self.categories))
        if self.model in NUISANCE:
            return ("pi", NUISANCE[self.model])
        return ("pi",)

    @property
    def prevalence_state(self) -> int:
        """Column of the sensitive state whose share is "the prevalence" (pi)."""
        return 0 if self.model in ("CDM", "CDMsym") else 1

    # -- probabilities -----------------------------------------------------------------------
    def state_shares(self, theta: Sequence[float] | np.ndarray) -> np.ndarray:
        """Shares of the latent states (PW's columns) for parameters theta."""
        values = np.asarray(theta, dtype=float)
        if values.shape != (len(self.parameters),):
            raise ValueError(f"{self.model}: theta needs {self.parameters}, got {values.tolist()}")
        if self.model in ("FR", "custom"):
            return np.concatenate(([1.0 - values.sum()], values))
        if self.model in ("CDM", "CDMsym"):
            return np.array([values[0], values[1], 1.0 - values[0] - values[1]])
        return np.array([1.0 - values[0], values[0]])

    def in_bounds(self, theta: Sequence[float] | np.ndarray, tolerance: float = 0.0) -> bool:
        """Whether theta and the state shares all lie in [0, 1]."""
        values = np.asarray(theta, dtype=float)
        shares = self.state_shares(values)
        return bool(
            np.all(values >= -tolerance) and np.all(values <= 1 + tolerance)
            and np.all(shares >= -tolerance)
        )

    def pw(self, group: int = 1, theta: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
        """RRreg's ``getPW``: PW[report, state] for ``group`` (1 or 2).

        theta is needed only where PW depends on an estimated parameter (UQTunknown's piUQ,
        SLD's t); its entry 1 is that parameter.
        """
        if group not in self.groups:
            raise ValueError(f"{self.model} has groups {self.groups}, got group {group!r}")
        p = self.p
        model = self.model
        second = 0.0
        if model in ("UQTunknown", "SLD"):
            if theta is None:
                raise ValueError(f"{model}: PW depends on {NUISANCE[model]}; pass theta")
            second = float(np.asarray(theta, dtype=float)[1])
        g = group - 1
        if model == "custom":
            k = self.categories
            return np.array(p, dtype=float).reshape(k, k)
        if model in ("Warner", "Crosswise"):
            columns = [[p[0], 1 - p[0]], [1 - p[0], p[0]]]
        elif model == "UQTknown":
            yes0 = (1 - p[0]) * p[1]
            columns = [[1 - yes0, yes0], [(1 - p[0]) * (1 - p[1]), p[0] + (1 - p[0]) * p[1]]]
        elif model == "UQTunknown":
            yes0 = (1 - p[g]) * second
            columns = [[1 - yes0, yes0], [(1 - p[g]) * (1 - second), p[g] + (1 - p[g]) * second]]
        elif model == "Mangat":
            columns = [[p[0], 1 - p[0]], [0.0, 1.0]]
        elif model == "Kuk":
            m = self.kukrep
            columns = [
                [comb(m, r) * p[1] ** r * (1 - p[1]) ** (m - r) for r in range(m + 1)],
                [comb(m, r) * p[0] ** r * (1 - p[0]) ** (m - r) for r in range(m + 1)],
            ]
        elif model == "FR":
            k = len(p)
            columns = [
                [(1 - sum(p) + p[i]) if i == j else p[i] for i in range(k)] for j in range(k)
            ]
        elif model == "Triangular":
            columns = [[1 - p[0], p[0]], [0.0, 1.0]]
        elif model == "CDM":
            columns = [[0.0, 1.0], [1 - p[g], p[g]], [1.0, 0.0]]
        elif model == "CDMsym":
            yes, no = p[2 * g], p[2 * g + 1]
            columns = [[no, 1 - no], [1 - yes, yes], [1.0, 0.0]]
        else:  # SLD
            columns = [[p[g], 1 - p[g]], [1 - second, second]]
        return np.array(columns, dtype=float).T

    def report_probabilities(
        self, theta: Sequence[float] | np.ndarray, group: int = 1
    ) -> np.ndarray:
        """P(report) in ``group``: PW(group, theta) @ state_shares(theta)."""
        return np.asarray(self.pw(group, theta) @ self.state_shares(theta), dtype=float)

    def describe(self) -> dict[str, object]:
        """A JSON-ready summary (model, p, Kukrep, states, reports, parameters, groups)."""
        out: dict[str, object] = {
            "model": self.model,
            "p": (self.pw().tolist() if self.model == "custom"
                  else list(self.p) if len(self.p) > 1 else self.p[0]),
            "states": list(self.states), "reports": list(self.reports),
            "parameters": list(self.parameters), "groups": list(self.groups),
        }
        if self.model == "Kuk":
            out["Kukrep"] = self.kukrep
        return out


def from_manifest(rrreg: dict[str, object]) -> Design:
    """The Design of a manifest question's ``"rrreg"`` block (docs/contracts.md)."""
    model = rrreg.get("model")
    if not isinstance(model, str):
        raise ValueError(f"rrreg block has no model name: {rrreg!r}")
    p = rrreg.get("p")
    if not isinstance(p, (int, float, list, tuple)) or isinstance(p, bool):
        raise ValueError(f"rrreg block has no usable p: {rrreg!r}")
    kukrep = rrreg.get("Kukrep", 1)
    if not isinstance(kukrep, int):
        raise ValueError(f"rrreg block: Kukrep must be an integer, got {kukrep!r}")
    return Design(model, p, kukrep)
