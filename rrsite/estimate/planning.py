"""Planning for RRreg's designs: Fisher information, privacy, respondents needed, comparison.

- ``fisher_information(design, theta, weights)``: the expected information of one respondent,
  sum over groups g (drawn with probability w_g) and reports r of
  w_g (d lambda_gr / d theta)(d lambda_gr / d theta)^T / lambda_gr.
- ``prevalence_variance``: [I^-1]_{pi, pi}, the asymptotic variance of the ML prevalence for one
  respondent (divide by N). For one-group binary designs this is MATH.md section 1's
  lambda (1 - lambda) / (P(1 | 1) - P(1 | 0))^2.
- ``privacy(design)``: epsilon (delta = 0) of the device matrices a compliant respondent's device
  uses, the worst group (the group is sent). States: carrier / non-carrier (CDM's cheater is not a
  compliant state; SLD's device makes carriers answer truthfully, t = 1; UQTunknown at a planned
  innocuous rate). ``delta_at(design, epsilon)``: the smallest delta,
  max over states j, k of sum_r max(0, PW[r, j] - e^eps PW[r, k]).
- ``compare(epsilon, prior)``: every design family tuned to the same epsilon, with its variance
  and the respondents it needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .intervals import quantiles
from .models import Design

#: Planning values of the nuisance parameters: honest carriers (SLD t = 1), no cheaters
#: (CDM beta = 1 - pi), innocuous "yes" rate 1/2 (UQTunknown).
DEFAULT_INNOCUOUS_RATE = 0.5


def planning_theta(design: Design, prior: float, nuisance: float | None = None) -> np.ndarray:
    """Theta at the prior prevalence with the planning nuisance (see DEFAULT_* above)."""
    model = design.model
    if model == "FR":
        k = len(design.p)
        rest = (1 - prior) / (k - 1)
        return np.array([prior] + [rest] * (k - 2))
    if model == "SLD":
        return np.array([prior, 1.0 if nuisance is None else nuisance])
    if model == "UQTunknown":
        return np.array([prior, DEFAULT_INNOCUOUS_RATE if nuisance is None else nuisance])
    if model in ("CDM", "CDMsym"):
        gamma = 0.0 if nuisance is None else nuisance
        return np.array([prior, 1.0 - prior - gamma])
    return np.array([prior])


def fisher_information(
    design: Design, theta: np.ndarray, weights: tuple[float, float] = (0.5, 0.5)
) -> np.ndarray:
    """Expected information of one respondent (groups drawn with probabilities ``weights``)."""
    dim = len(theta)
    step = 1e-5
    information = np.zeros((dim, dim))
    group_weights = weights if len(design.groups) == 2 else (1.0,)
    for group, weight in zip(design.groups, group_weights, strict=True):
        probs = design.report_probabilities(theta, group)
        jac = np.array([
            (design.report_probabilities(theta + step * e, group)
             - design.report_probabilities(theta - step * e, group)) / (2 * step)
            for e in np.eye(dim)
        ])
        seen = probs > 1e-15
        information += weight * np.einsum("r,ir,jr->ij", 1 / probs[seen], jac[:, seen],
                                          jac[:, seen])
    return information


def prevalence_variance(
    design: Design, prior: float, nuisance: float | None = None,
    weights: tuple[float, float] = (0.5, 0.5),
) -> float:
    """Asymptotic variance of the ML prevalence for one respondent (inf when not identified)."""
    theta = planning_theta(design, prior, nuisance)
    information = fisher_information(design, theta, weights)
    if abs(np.linalg.det(information)) < 1e-14:
        return math.inf
    covariance = np.linalg.inv(information)
    # theta[0] is pi (for FR the share of category 1, "yes" at k = 2)
    return float(covariance[0, 0])


def respondents(variance: float, margin: float, confidence: float) -> int | None:
    """N = z^2 variance / margin^2, rounded up (None when the variance is infinite)."""
    if math.isinf(variance):
        return None
    z = float(quantiles.norm_ppf(0.5 + confidence / 2))
    return max(1, math.ceil(z * z * variance / margin**2 - 1e-9))


def device_matrices(design: Design, innocuous_rate: float = DEFAULT_INNOCUOUS_RATE
                    ) -> list[np.ndarray]:
    """A compliant respondent's device matrices PW[report, state], state 0 = non-carrier."""
    matrices = []
    for group in design.groups:
        if design.model == "SLD":
            pw = design.pw(group, [0.5, 1.0])
        elif design.model == "UQTunknown":
            pw = design.pw(group, [0.5, innocuous_rate])
        elif design.model in ("CDM", "CDMsym"):
            pw = design.pw(group)[:, [1, 0]]  # honest non-carrier, honest carrier
        else:
            pw = design.pw(group)
        matrices.append(pw)
    return matrices


def epsilon_of(design: Design, innocuous_rate: float = DEFAULT_INNOCUOUS_RATE) -> float:
    """The smallest epsilon with delta = 0 (inf when a report rules a state out)."""
    worst = 0.0
    for pw in device_matrices(design, innocuous_rate):
        for row in pw:
            high, low = float(row.max()), float(row.min())
            if high == 0:
                continue
            if low == 0:
                return math.inf
            worst = max(worst, math.log(high / low))
    return worst


def delta_at(design: Design, epsilon: float,
             innocuous_rate: float = DEFAULT_INNOCUOUS_RATE) -> float:
    """The smallest delta at ``epsilon``: max_{j,k} sum_r max(0, PW[r,j] - e^eps PW[r,k])."""
    factor = math.exp(epsilon)
    worst = 0.0
    for pw in device_matrices(design, innocuous_rate):
        states = pw.shape[1]
        for j in range(states):
            for k in range(states):
                worst = max(worst, float(np.maximum(pw[:, j] - factor * pw[:, k], 0).sum()))
    return worst


def delta_whatever_epsilon(design: Design,
                           innocuous_rate: float = DEFAULT_INNOCUOUS_RATE) -> float:
    """Delta as epsilon grows without bound: the mass of reports some state can never give."""
    worst = 0.0
    for pw in device_matrices(design, innocuous_rate):
        for j in range(pw.shape[1]):
            for k in range(pw.shape[1]):
                worst = max(worst, float(np.where(pw[:, k] == 0, pw[:, j], 0.0).sum()))
    return worst


@dataclass(frozen=True)
class Tuned:
    """One design family tuned to an epsilon."""

    family: str
    design: Design | None
    epsilon: float | None
    variance: float
    note: str


def _solve(function: object, low: float, high: float) -> float:
    return float(optimize.brentq(function, low, high, xtol=1e-14))


def tune(family: str, epsilon: float, innocuous_rate: float = DEFAULT_INNOCUOUS_RATE,
         kukrep: int = 3) -> tuple[Design | None, str]:
    """The family's design whose epsilon equals ``epsilon`` (None for one-sided families)."""
    e = math.exp(epsilon)
    if family == "Warner":
        return Design("Warner", e / (1 + e)), "p = e^eps / (1 + e^eps)"
    if family == "Crosswise":
        return Design("Crosswise", 1 / (1 + e)), "innocuous rate p = 1 / (1 + e^eps)"
    if family == "FR":
        f = 1 / (1 + e)
        return Design("FR", [f, f]), "forced 'no' = forced 'yes' = 1 / (1 + e^eps)"
    if family == "UQTknown":
        q = innocuous_rate
        p1 = _solve(lambda p: epsilon_of(Design("UQTknown", [p, q])) - epsilon, 1e-12, 1 - 1e-12)
        return Design("UQTknown", [p1, q]), f"innocuous rate {q:g}, P(sensitive) solved"
    if family == "Kuk":
        p1 = 1 / (1 + math.exp(-epsilon / kukrep))
        return Design("Kuk", [p1, 1 - p1], kukrep), (
            f"{kukrep} cards, decks p1 = 1 - p0 = 1 / (1 + e^(-eps / {kukrep}))")
    if family == "UQTunknown":
        q = innocuous_rate
        p1 = _solve(lambda p: epsilon_of(Design("UQTknown", [p, q])) - epsilon, 1e-12, 1 - 1e-12)
        # Moors (1971, JASA 66): the second sample best asks the innocuous question only
        return Design("UQTunknown", [p1, 0.0]), (
            f"group 1 p solved at innocuous rate {q:g}, group 2 innocuous only (Moors 1971)")
    return None, "one-sided: a report rules a state out, so no epsilon protects it"


FAMILIES = ("Warner", "Crosswise", "FR", "UQTknown", "Kuk", "UQTunknown",
            "Mangat", "Triangular", "SLD", "CDM")


def compare(epsilon: float, prior: float = 0.5, innocuous_rate: float = DEFAULT_INNOCUOUS_RATE,
            kukrep: int = 3) -> list[Tuned]:
    """Every family at ``epsilon``, least variance first (one-sided families last)."""
    if not epsilon > 0:
        raise ValueError(f"epsilon must be positive, got {epsilon}")
    if not 0 < prior < 1:
        raise ValueError(f"prior must be in (0, 1), got {prior}")
    rows = []
    for family in FAMILIES:
        design, note = tune(family, epsilon, innocuous_rate, kukrep)
        if design is None:
            rows.append(Tuned(family, None, None, math.inf, note))
            continue
        rows.append(Tuned(family, design, epsilon_of(design, innocuous_rate),
                          prevalence_variance(design, prior, innocuous_rate
                                              if family == "UQTunknown" else None), note))
    return sorted(rows, key=lambda row: row.variance)
