"""Maximum likelihood for RRreg's univariate models, from report counts per group.

The data are ``Part``s: the report counts of one survey version (a ``Design``) in one group.
Several versions of one question are pooled in one likelihood (never by adding counts):

    loglik(theta) = sum over parts, reports r of  count_r * log (PW_part(theta) @ shares(theta))_r

``fit`` returns

- the maximum-likelihood estimate over the bounded parameter space (``theta``; ``on_boundary``
  says when it sits on a bound), with standard errors from the observed information (the inverse of
  the negative Hessian of the log-likelihood at the estimate, ``se_observed``);
- for a single design, RRreg 0.7.x's own estimates and standard errors (``rrreg``): its moment
  estimators with variances over n - 1 (RRuni.<model>), replaced like RRreg by the bounded ML
  estimate when a moment estimate leaves (0, 1). ``se`` is RRreg's standard error when there is
  one, else the observed-information one;
- intervals for the prevalence and every nuisance parameter: for one-group designs with binary
  reports and a fixed matrix the exact Clopper-Pearson interval of the "1" rate mapped through the
  design's affine map (MATH.md section 4), otherwise the profile-likelihood interval
  {v : 2 (loglik_max - max_{target = v} loglik) <= chi2_1(confidence)}; for the prevalence of
  the two-group models the critical value is boundary-calibrated (``boundary_critical``: the
  likelihood ratio's large-sample quantile at the constrained fit with the parameter bounds kept,
  never below chi2_1; near pi = 0 the chi2_1 interval undercovers, e.g. SLD (0.3, 0.7) at
  N = 100 per group and pi = 0.02: 93.9% with t = 1, 94.9% calibrated, summed exactly);
  ``method`` names which;
- messages: non-identified designs (e.g. both groups with the same p), moment estimates outside the
  parameter space, and a likelihood-ratio goodness-of-fit test where the model is not saturated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize

from .intervals import quantiles
from .likelihood import (
    TINY,
    Part,
    feasible,
    loglik,
    maximise_on_segment,
    profile_max,
    slsqp,
    target_map,
)
from .models import Design
from .profile import boundary_calibrated, profile_interval

METHOD_EXACT = "exact (Clopper-Pearson, mapped)"
METHOD_PROFILE = "profile likelihood"
METHOD_PROFILE_BOUNDARY = "profile likelihood, boundary-calibrated critical value"

__all__ = ["METHOD_EXACT", "METHOD_PROFILE", "METHOD_PROFILE_BOUNDARY", "Part", "UniFit", "fit",
           "loglik", "mle", "observed_information", "parts_from_manifest", "rrreg_moments"]


@dataclass
class UniFit:
    """The estimates of one question (see the module docstring for every field)."""

    model: str
    parameters: tuple[str, ...]
    theta: np.ndarray
    estimates: dict[str, float]
    se_observed: dict[str, float | None]
    se: dict[str, float | None]
    intervals: dict[str, tuple[float, float]]
    method: dict[str, str]
    on_boundary: bool
    loglik: float
    n: dict[int, int]
    confidence: float
    identified: bool = True
    rrreg: dict[str, Any] | None = None
    gof: dict[str, float] | None = None
    messages: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (keys documented in docs/contracts.md)."""
        return {
            "model": self.model,
            "estimates": self.estimates,
            "se": self.se,
            "se_observed": self.se_observed,
            "intervals": {k: list(v) for k, v in self.intervals.items()},
            "interval_method": self.method,
            "confidence": self.confidence,
            "on_boundary": self.on_boundary,
            "identified": self.identified,
            "loglik": self.loglik,
            "n": {str(g): v for g, v in self.n.items()},
            "rrreg": self.rrreg,
            "goodness_of_fit": self.gof,
            "messages": self.messages,
        }


def mle(parts: Sequence[Part]) -> tuple[np.ndarray, float]:
    """The maximum-likelihood theta over the bounded parameter space, and its log-likelihood."""
    design = parts[0].design
    dim = len(design.parameters)
    candidates: list[tuple[np.ndarray, float]] = []
    saturated = sum(len(p.design.reports) - 1 for p in parts) == dim
    if saturated and len(parts) == len(design.groups) and len({p.design for p in parts}) == 1:
        moment = _moment_theta(parts)
        if moment is not None and feasible(design, moment):
            return moment, loglik(moment, parts)  # saturated: the moment estimate is the MLE
    if dim == 1:
        candidates.append(
            maximise_on_segment(lambda t: loglik(t, parts), np.zeros(1), np.ones(1), 0.0, 1.0)
        )
    elif dim == 2:
        # every edge of the polytope, then a free search from the best edge point
        for c, d0 in ((np.array([1.0, 0.0]), 0.0), (np.array([0.0, 1.0]), 0.0)):
            for value in (0.0, 1.0):
                candidates.append(profile_max(parts, c, d0, value))
        if design.model in ("CDM", "CDMsym"):
            candidates.append(profile_max(parts, np.array([-1.0, -1.0]), 1.0, 0.0))
        for start in ([0.3, 0.3], [0.1, 0.6], [0.6, 0.1], [0.5, 0.5]):
            start_theta = np.array(start)
            if not feasible(design, start_theta):
                continue
            result = optimize.minimize(
                lambda t: -loglik(t, parts) if feasible(design, t) else 1e300, start_theta,
                method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-13, "maxiter": 4000},
            )
            if feasible(design, result.x):
                candidates.append((np.asarray(result.x, dtype=float), -float(result.fun)))
    else:
        candidates.append(slsqp(parts))
    theta, _ = max(candidates, key=lambda item: item[1])
    theta = np.clip(theta, 0.0, 1.0)
    return theta, loglik(theta, parts)


# -- RRreg's own estimators ------------------------------------------------------------------
def _group_rates(parts: Sequence[Part]) -> dict[int, tuple[float, int, np.ndarray]]:
    """Per group: the mean report ("1" rate, or red-card rate for Kuk), n, and the counts."""
    out: dict[int, tuple[float, int, np.ndarray]] = {}
    for part in parts:
        counts = np.asarray(part.counts, dtype=float)
        n = part.n
        if part.design.model == "Kuk":
            red = float(counts @ np.arange(len(counts)))
            rate = red / (n * part.design.kukrep) if n else math.nan
        else:
            rate = float(counts[1] / n) if n else math.nan
        out[part.group] = (rate, n, counts)
    return out


def rrreg_moments(parts: Sequence[Part]) -> dict[str, float]:
    """RRreg's RRuni.<model>: moment estimates and standard errors (variances over n - 1).

    One design, one part per group. Keys: pi (or pi0 .. pi{k-1} for FR), its ``<name>SE``, and
    the model's nuisance (piUQ, t, beta, gamma) with its SE where RRreg gives one.
    """
    design = parts[0].design
    p = design.p
    model = design.model
    rates = _group_rates(parts)
    lam_, n_, counts = rates[1]
    lam, n = np.float64(lam_), np.float64(n_)  # numpy floats: 0/0 gives nan, not an exception
    out: dict[str, float] = {}
    with np.errstate(all="ignore"):
        if model in ("Warner", "Crosswise"):
            out["pi"] = (lam + p[0] - 1) / (2 * p[0] - 1)
            out["piSE"] = _sqrt(lam * (1 - lam) / ((n - 1) * (2 * p[0] - 1) ** 2))
        elif model == "Triangular":
            out["pi"] = 1 - (1 - lam) / (1 - p[0])
            out["piSE"] = _sqrt(lam * (1 - lam) / ((n - 1) * (1 - p[0]) ** 2))
        elif model == "UQTknown":
            out["pi"] = (lam - (1 - p[0]) * p[1]) / p[0]
            out["piSE"] = _sqrt(lam * (1 - lam) / ((n - 1) * p[0] ** 2))
        elif model == "Mangat":
            out["pi"] = (lam - 1 + p[0]) / p[0]
            out["piSE"] = _sqrt(lam * (1 - lam) / ((n - 1) * p[0] ** 2))
        elif model == "Kuk":
            m = design.kukrep
            pi = (lam - p[1]) / (p[0] - p[1])
            phi = pi * p[0] + (1 - pi) * p[1]
            out["pi"] = pi
            out["piSE"] = _sqrt(
                phi * (1 - phi) / ((m * n - 1) * (p[0] - p[1]) ** 2)
                + (1 - 1 / m) * pi * (1 - pi) / (n - 1)
            )
        elif model == "custom":
            # RRuni.custom (van den Hout & van der Heijden 2002)
            total = float(counts.sum())
            rate = counts / total
            inverse = np.linalg.inv(design.pw())
            shares = inverse @ rate
            covariance = inverse @ (np.diag(rate) - np.outer(rate, rate)) @ inverse.T / (
                total - 1)
            for i in range(len(shares)):
                out[f"pi{i}"] = shares[i]
                out[f"pi{i}SE"] = _sqrt(float(covariance[i, i]))
        elif model == "FR":
            p_true = 1 - sum(p)
            for i, count in enumerate(counts):
                share = count / n
                out[f"pi{i}"] = (share - p[i]) / p_true
                out[f"pi{i}SE"] = _sqrt(share * (1 - share) / (p_true**2 * (n - 1)))
        else:
            lam2, n2 = np.float64(rates[2][0]), np.float64(rates[2][1])
            v1 = lam * (1 - lam) / (n - 1)
            v2 = lam2 * (1 - lam2) / (n2 - 1)
            if model == "UQTunknown":
                out["pi"] = (lam * (1 - p[1]) - lam2 * (1 - p[0])) / (p[0] - p[1])
                out["piSE"] = _sqrt((v1 * (1 - p[1]) ** 2 + v2 * (1 - p[0]) ** 2)
                                        / (p[0] - p[1]) ** 2)
                out["piUQ"] = (p[1] * lam - p[0] * lam2) / (p[1] - p[0])
                out["piUQSE"] = _sqrt((p[1] ** 2 * v1 + p[0] ** 2 * v2) / (p[0] - p[1]) ** 2)
            elif model == "SLD":
                p1, p2 = p
                out["pi"] = ((lam2 - lam) + (p2 - p1)) / (p2 - p1)
                out["piSE"] = _sqrt(v1 / (p1 - p2) ** 2 + v2 / (p2 - p1) ** 2)
                out["t"] = (lam2 * (1 - p1) - lam * (1 - p2)) / ((lam2 - lam) + (p2 - p1))
                denominator = (p1 - p2 + lam - lam2) ** 2
                out["tSE"] = _sqrt(
                    v1 * ((p1 - p2) * (p2 + lam2 - 1) / denominator) ** 2
                    + v2 * ((p1 - p2) * (p1 + lam - 1) / denominator) ** 2
                )
            elif model == "CDM":
                p1, p2 = p
                out["pi"] = (p2 * lam - p1 * lam2) / (p2 - p1)
                out["piSE"] = _sqrt((p1**2 * v2 + p2**2 * v1) / (p1 - p2) ** 2)
                out["beta"] = (lam2 - lam) / (p2 - p1)
                out["betaSE"] = _sqrt((v2 + v1) / (p1 - p2) ** 2)
                out["gamma"] = 1 + ((p2 - 1) * lam + (1 - p1) * lam2) / (p1 - p2)
                out["gammaSE"] = _sqrt(((p2 - 1) ** 2 * v1 + (1 - p1) ** 2 * v2)
                                           / (p1 - p2) ** 2)
            else:  # CDMsym, p = (y1, n1, y2, n2)
                pi_denominator = p[2] * (1 - p[1]) - p[0] * (1 - p[3])
                out["pi"] = (p[2] * lam - p[0] * lam2) / pi_denominator
                gamma_denominator = p[0] * (1 - p[3]) - p[2] * (1 - p[1])
                out["gamma"] = ((p[0] - lam) * (1 - p[2] - p[3])
                                - (p[2] - lam2) * (1 - p[0] - p[1])) / gamma_denominator
                out["beta"] = 1 - out["pi"] - out["gamma"]
                out["piSE"] = _sqrt(p[2] ** 2 * v1 + p[0] ** 2 * v2) / abs(pi_denominator)
                out["gammaSE"] = _sqrt((1 - p[2] - p[3]) ** 2 * v1
                                           + (1 - p[0] - p[1]) ** 2 * v2) / abs(gamma_denominator)
    return {key: float(value) for key, value in out.items()}


def _sqrt(value: float) -> float:
    return float(np.sqrt(value)) if value >= 0 else math.nan


def _moment_theta(parts: Sequence[Part]) -> np.ndarray | None:
    """RRreg's moment estimate as a theta vector (None where undefined)."""
    try:
        moments = rrreg_moments(parts)
    except (ZeroDivisionError, ValueError):
        return None
    design = parts[0].design
    if design.model in ("FR", "custom"):
        theta = np.array([moments[f"pi{j}"] for j in range(1, design.categories)])
    else:
        theta = np.array([moments[name] for name in design.parameters])
    return theta if np.all(np.isfinite(theta)) else None


def _rrreg_outside(design: Design, moments: dict[str, float]) -> bool:
    """RRuni's test for switching to ML: a prevalence or the model's nuisance outside (0, 1)."""
    names = [k for k in moments if k.startswith("pi") and not k.endswith("SE") and k != "piUQ"]
    names += {"SLD": ["t"], "UQTunknown": ["piUQ"], "CDM": ["gamma"], "CDMsym": ["gamma"]}.get(
        design.model, []
    )
    return any(not 0 < moments[name] < 1 for name in names)


# -- information and intervals ---------------------------------------------------------------
def observed_information(theta: np.ndarray, parts: Sequence[Part]) -> np.ndarray:
    """Minus the Hessian of the log-likelihood at theta.

    The report probabilities are polynomials of degree <= 2 in theta, so their central differences
    are exact up to rounding; the Hessian is assembled from them analytically.
    """
    dim = len(theta)
    step = 1e-4
    information = np.zeros((dim, dim))
    for part in parts:
        counts = np.asarray(part.counts, dtype=float)
        def probs(t: np.ndarray, part: Part = part) -> np.ndarray:
            return part.design.report_probabilities(t, part.group)
        base = probs(theta)
        unit = np.eye(dim) * step
        jac = np.array([(probs(theta + unit[i]) - probs(theta - unit[i])) / (2 * step)
                        for i in range(dim)])  # (dim, reports)
        second = np.zeros((dim, dim, len(base)))
        for i in range(dim):
            for j in range(dim):
                second[i, j] = (probs(theta + unit[i] + unit[j]) - probs(theta + unit[i] - unit[j])
                                - probs(theta - unit[i] + unit[j])
                                + probs(theta - unit[i] - unit[j])) / (4 * step * step)
        seen = counts > 0
        weight = np.zeros_like(base)
        weight[seen] = counts[seen] / np.maximum(base[seen], TINY)
        information += np.einsum("r,ir,jr->ij", weight / np.maximum(base, TINY) * seen, jac, jac)
        information -= np.einsum("r,ijr->ij", weight, second)
    return information


def clopper_pearson(count: int, n: int, confidence: float) -> tuple[float, float]:
    """The exact interval for a binomial rate."""
    alpha = 1 - confidence
    low = 0.0 if count == 0 else float(quantiles.beta_ppf(alpha / 2, count, n - count + 1))
    high = 1.0 if count == n else float(quantiles.beta_ppf(1 - alpha / 2, count + 1, n - count))
    return low, high


def _exact_applies(parts: Sequence[Part]) -> bool:
    design = parts[0].design
    return (
        len(parts) == 1 and len(design.groups) == 1 and len(design.reports) == 2
        and len(design.parameters) == 1
    )


def _exact_interval(part: Part, confidence: float) -> tuple[float, float]:
    """Clopper-Pearson for the "1" rate, mapped through lambda = a + b pi and clipped."""
    design = part.design
    a = float(design.report_probabilities([0.0])[1])
    b = float(design.report_probabilities([1.0])[1]) - a
    low, high = clopper_pearson(part.counts[1], part.n, confidence)
    ends = sorted(((low - a) / b, (high - a) / b))
    return min(max(ends[0], 0.0), 1.0), min(max(ends[1], 0.0), 1.0)


def identifiable(parts: Sequence[Part], theta: np.ndarray) -> bool:
    """Whether the report probabilities determine theta locally (full-rank Jacobian)."""
    dim = len(theta)
    point = np.clip(theta, 0.05, 0.9) if dim == 1 else np.full(dim, 0.8 / (dim + 1))
    rows = []
    for part in parts:
        for i in range(dim):
            e = np.eye(dim)[i] * 1e-4
            rows.append(
                (part.design.report_probabilities(point + e, part.group)
                 - part.design.report_probabilities(point - e, part.group)) / 2e-4
            )
    jac = np.concatenate([r[None, :] for r in rows]).reshape(len(parts), dim, -1)
    stacked = np.concatenate([jac[k].T for k in range(len(parts))])
    singular = np.linalg.svd(stacked, compute_uv=False)
    return bool(singular.min() > 1e-8 * max(singular.max(), 1e-300))


def fit(parts: Sequence[Part], confidence: float = 0.95) -> UniFit:
    """Estimate one question's parameters from its parts (see the module docstring)."""
    if not parts:
        raise ValueError("no counts to estimate from")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    design = parts[0].design
    for part in parts:
        if part.design.parameters != design.parameters or part.design.states != design.states:
            raise ValueError(
                f"cannot pool {part.design.model} with {design.model}: different parameters"
            )
    n: dict[int, int] = {}
    for part in parts:
        n[part.group] = n.get(part.group, 0) + part.n
    messages: list[str] = []
    targets = target_map(design)
    empty_groups = [g for g in design.groups if n.get(g, 0) == 0]
    if empty_groups:
        messages.append(f"no answers in group(s) {empty_groups}: the model is not identified")
    theta_probe = np.full(len(design.parameters), 0.8 / (len(design.parameters) + 1))
    is_identified = not empty_groups and identifiable(parts, theta_probe)
    if not is_identified:
        if not empty_groups:
            messages.append(
                "the data cannot separate the parameters (e.g. both groups with the same p): "
                "the model is not identified; no estimates"
            )
        nan = dict.fromkeys(targets, math.nan)
        return UniFit(
            design.model, design.parameters, np.full(len(design.parameters), math.nan),
            nan, dict.fromkeys(targets), dict.fromkeys(targets),
            dict.fromkeys(targets, (0.0, 1.0)), dict.fromkeys(targets, "none"), False,
            math.nan, n, confidence, identified=False, messages=messages,
        )
    theta, ll_max = mle(parts)
    on_boundary = not design.in_bounds(theta, tolerance=-1e-9)
    estimates = {name: float(c @ theta + d0) for name, (c, d0) in targets.items()}
    # observed information on the free directions (drop directions pinned at a bound)
    se_observed: dict[str, float | None] = dict.fromkeys(targets)
    try:
        covariance = np.linalg.inv(observed_information(theta, parts))
        for name, (c, _) in targets.items():
            variance = float(c @ covariance @ c)
            se_observed[name] = math.sqrt(variance) if variance >= 0 else None
    except np.linalg.LinAlgError:
        messages.append("the observed information is singular at the estimate: no standard errors")
    intervals: dict[str, tuple[float, float]] = {}
    method: dict[str, str] = {}
    for name in targets:
        if _exact_applies(parts) and name in ("pi", "pi1"):
            intervals[name] = _exact_interval(parts[0], confidence)
            method[name] = METHOD_EXACT
        else:
            calibrated = boundary_calibrated(parts, name)
            intervals[name] = profile_interval(parts, name, theta, ll_max, confidence,
                                               calibrated)
            method[name] = METHOD_PROFILE_BOUNDARY if calibrated else METHOD_PROFILE
    for name, (low, high) in intervals.items():
        if high - low < 1e-12:
            messages.append(
                f"the interval of {name} collapsed to [{low:g}, {high:g}]: the reports are "
                "outside what the design can produce for any rate; check the design and the data"
            )
    if _exact_applies(parts) and design.model in ("FR", "custom"):
        low, high = intervals["pi1"]
        intervals["pi0"] = (1 - high, 1 - low)
        method["pi0"] = METHOD_EXACT
    rrreg: dict[str, Any] | None = None
    se = dict(se_observed)
    if len({p.design for p in parts}) == 1 and len(parts) == len(design.groups):
        moments = rrreg_moments(parts)
        if _rrreg_outside(design, moments):
            messages.append(
                "the moment estimate lies outside the parameter space: the estimate is the "
                "maximum-likelihood one on its boundary (RRreg switches to ML here too)"
            )
            rrreg = {"estimator": "ML (bounded)", **estimates,
                     **{f"{k}SE": v for k, v in se_observed.items()}}
        else:
            rrreg = {"estimator": "moment", **moments}
            is_saturated = sum(len(p.design.reports) - 1 for p in parts) == len(design.parameters)
            if is_saturated:  # the moment estimate is the MLE: RRreg's SE goes with it
                se = {name: moments.get(f"{name}SE", se_observed[name]) for name in targets}
            else:
                messages.append(
                    "RRreg's moment estimate (in 'rrreg') is not the maximum-likelihood "
                    "estimate here; the standard errors are those of the MLE"
                )
    if on_boundary:
        messages.append("the estimate is on the boundary of the parameter space")
    saturated_df = sum(len(p.design.reports) - 1 for p in parts if p.n > 0)
    df = saturated_df - len(design.parameters)
    gof = None
    if df > 0:
        saturated = 0.0
        for part in parts:
            counts = np.asarray(part.counts, dtype=float)
            seen = counts > 0
            saturated += float(np.sum(counts[seen] * np.log(counts[seen] / part.n)))
        g2 = max(2 * (saturated - ll_max), 0.0)
        p_value = float(quantiles.chi2_sf(g2, df))
        gof = {"G2": g2, "df": float(df), "p_value": p_value}
        if p_value < 0.05:
            messages.append(
                f"the model fits the counts poorly (G2 = {g2:.2f}, df = {df}, p = {p_value:.3g}): "
                "check the design parameters and the respondents' compliance"
            )
    return UniFit(
        design.model, design.parameters, theta, estimates, se_observed, se, intervals, method,
        on_boundary, ll_max, n, confidence, rrreg=rrreg, gof=gof, messages=messages,
    )


def parts_from_manifest(
    question: dict[str, Any], counts: dict[int, dict[str, int]]
) -> list[Part]:
    """Parts of one manifest question (docs/contracts.md) from counts {group: {report: n}}.

    The question's ``"rrreg"`` block gives the model; its report labels are ``"reports"`` when
    present (crosswise, triangular, kuk), else ``"values"``, in RRreg's report order (0, 1, ...).
    One-group designs use group 1. A block with ``group_p`` (the extended crosswise model: RRreg's
    crosswise with p in group 1 and 1 - p in group 2) gives one part per group, each its own
    crosswise design, sharing the prevalence: the likelihood of Heck, Hoffmann & Moshagen
    (2018), whose goodness-of-fit test (1 df) compares the two groups.
    """
    from .models import from_manifest

    block = question.get("rrreg")
    if not isinstance(block, dict):
        raise ValueError(f"question {question.get('id')!r} has no RRreg mapping ('rrreg')")
    design = from_manifest(block)
    group_p = block.get("group_p")
    if group_p is not None:
        if not isinstance(group_p, list) or len(group_p) != 2:
            raise ValueError(f"question {question.get('id')!r}: group_p must be a list of two "
                             f"probabilities, got {group_p!r}")
        split = [({1: counts.get(g, {})}, Design(design.model, float(p)))
                 for g, p in zip((1, 2), group_p, strict=True)]
        return [part for given, one in split
                for part in _parts(question, one, given)]
    return _parts(question, design, counts)


def _parts(question: dict[str, Any], design: Design,
           counts: dict[int, dict[str, int]]) -> list[Part]:
    """The parts of one design: one per group of its model, counts by the manifest's labels."""
    labels = question.get("reports") or question.get("values")
    if not isinstance(labels, list) or len(labels) != len(design.reports):
        raise ValueError(
            f"question {question.get('id')!r}: {design.model} has {len(design.reports)} reports, "
            f"the manifest lists {labels!r}"
        )
    parts = []
    for group in design.groups:
        given = counts.get(group, {})
        unknown = set(given) - {str(label) for label in labels}
        if unknown:
            raise ValueError(f"question {question.get('id')!r}: unknown report(s) "
                             f"{sorted(unknown)}; the reports are {labels}")
        parts.append(Part(design, group, tuple(int(given.get(str(label), 0))
                                               for label in labels)))
    return parts
