"""Randomized predictors under two-group designs: tau estimated jointly in the mixture likelihood.

The model of ``predictors.py`` (RRlin's latent classes: the table of true answers pi, the outcome
given the class), where a two-group predictor's matrix in the row's group is affine in its second
parameter tau (``joint_groups.GroupedPart``): P(r_i | t) = (M_1(tau) kron ..)[t, r_i]. The
log-likelihood l(beta, sigma, pi, tau) is maximised over all of them together by profiling:

    l*(tau) = max_{beta, sigma, pi} l        (predictors.py's EM + Newton at the matrices at tau)

maximised over [0, 1]^K by L-BFGS-B with the envelope gradient dl/dtau_j = sum_i sum_t
w_it (dP(r_i | t) / dtau_j) / P(r_i | t) (w the posterior class weights at the inner maximum),
from the best point of a grid. RRreg's RRlin instead fixes tau at RRuni's estimate from the
predictor's reports alone and does not carry its uncertainty; here the standard errors come from
the observed information over (beta, log sigma, the shares' log-ratios, tau) (central
differences of the analytic gradient; one-sided in a tau on its bound), so they include tau's
uncertainty; the coefficients' and tau's intervals are Wald intervals from it (tau's clipped to
[0, 1]; a profile likelihood would refit the mixture at every point, minutes for two taus).
Likelihood-ratio tests re-maximise over tau in each reduced model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..intervals import quantiles
from ..joint_groups import BOUNDARY, GroupedPart, NuisanceEstimate, maximise_taus, simplex_grid
from .logistic import RegressionError, TermTest, logsumexp
from .predictors import (
    ClassShare,
    LatentClasses,
    LatentModel,
    Optimum,
    PredictorFit,
    class_design,
    fit_predictors,
    latent_classes,
    log_density,
    maximise_latent,
)

#: Step of the central differences of the full gradient.
STEP = 1e-5


@dataclass
class GroupedRows:
    """The rows' parts (one per version and groups) and each part's rows' report cells."""

    parts: list[GroupedPart]
    cells: list[np.ndarray]
    values: Sequence[Sequence[str]]
    references: Sequence[str]
    questions: Sequence[str]
    k: int

    def likelihood(self, tau: np.ndarray) -> np.ndarray:
        """(n, K): P(row's reports | class) at tau."""
        return np.vstack([p.at(tau).matrix[:, np.asarray(c, dtype=np.int64)].T
                          for p, c in zip(self.parts, self.cells, strict=True)])

    def derivative(self, tau: np.ndarray, j: int) -> np.ndarray:
        """(n, K): d P(row's reports | class) / d tau_j."""
        blocks = []
        for p, c in zip(self.parts, self.cells, strict=True):
            d = p.derivative(tau, j)
            index = np.asarray(c, dtype=np.int64)
            blocks.append(np.zeros((len(index), p.at(tau).matrix.shape[0])) if d is None
                          else d[:, index].T)
        return np.vstack(blocks)

    def classes(self, tau: np.ndarray) -> LatentClasses:
        """predictors.latent_classes at tau."""
        return latent_classes([p.at(tau) for p in self.parts], self.cells, self.values,
                              self.references, self.questions)


def _tau_gradient(rows: GroupedRows, model: LatentModel, theta: np.ndarray,
                  tau: np.ndarray) -> np.ndarray:
    """dl/dtau_j = sum_i sum_t pi_t f(y_i | t) (dP(r_i | t) / dtau_j) / P_i.

    P_i is the row's likelihood; written without dividing by P(r_i | t), which is 0 where a
    report is impossible in a class.
    """
    beta, sigma, pi = model.unpack(theta)
    eta = model.D @ beta + model.offset
    with np.errstate(divide="ignore"):
        log_f = np.log(pi)[None, :] + log_density(model.kind, model.y, eta, sigma)
        total = logsumexp(model.logL + log_f, axis=1)
    weight = np.exp(log_f - total[:, None])
    return np.array([float(np.sum(weight * rows.derivative(tau, j))) for j in range(rows.k)])


class _Profile:
    """l*(tau) for one design D (optionally with some taus held), warm-started."""

    def __init__(self, kind: str, y: np.ndarray, D: np.ndarray, rows: GroupedRows,
                 warm: tuple[np.ndarray, float, np.ndarray] | None = None) -> None:
        self.kind, self.y, self.D, self.rows = kind, y, D, rows
        self.cache: dict[tuple[float, ...], Optimum | None] = {}
        #: The previous maximum's (beta, sigma, pi): the next one's start.
        self.warm = warm

    def __call__(self, tau: np.ndarray) -> Optimum | None:
        """The maximum at tau, or None where the fit fails there (a tau the data reject)."""
        key = tuple(float(t) for t in tau)
        if key not in self.cache:
            classes = self.rows.classes(tau)
            found: Optimum | None = None
            for warm in ([self.warm, None] if self.warm is not None else [None]):
                try:
                    found = maximise_latent(self.kind, self.y, self.D, classes, None, warm)
                    break
                except (RegressionError, np.linalg.LinAlgError):
                    continue
            self.cache[key] = found
            if found is not None and math.isfinite(found.loglik):
                beta, sigma, pi = found.model.unpack(found.theta)
                self.warm = (beta, sigma, pi)
        return self.cache[key]

    def value(self, tau: np.ndarray) -> float:
        """l*(tau) (-inf where the fit fails)."""
        found = self(tau)
        return -math.inf if found is None else found.loglik

    def maximise(self, starts: Sequence[np.ndarray], free: np.ndarray | None = None,
                 held: np.ndarray | None = None) -> tuple[np.ndarray, Optimum]:
        """The best (tau, optimum) from the starts, refined by L-BFGS-B over the free taus."""

        def gradient(tau: np.ndarray) -> np.ndarray:
            found = self(tau)
            assert found is not None  # called only where the value is finite
            return _tau_gradient(self.rows, found.model, found.theta, tau)

        tau, value = maximise_taus(self.value, gradient, starts, free, held, float(len(self.y)),
                                   gtol=1e-10, maxiter=300)
        if not math.isfinite(value):
            raise RegressionError("the model cannot be fitted at any starting value of the "
                                  "two-group parameters")
        found = self(tau)
        assert found is not None
        return tau, found


def _full_gradient(kind: str, y: np.ndarray, D: np.ndarray, rows: GroupedRows, free: np.ndarray,
                   phi: np.ndarray, size: int) -> np.ndarray:
    theta, tau = phi[:size], phi[size:]
    model = LatentModel(kind, y, D, rows.likelihood(tau), free)
    return np.concatenate([model.gradient(theta), _tau_gradient(rows, model, theta, tau)])


def _full_hessian(kind: str, y: np.ndarray, D: np.ndarray, rows: GroupedRows,
                  optimum: Optimum, tau: np.ndarray) -> np.ndarray:
    """Central differences of the gradient over (theta, tau); one-sided in a tau at a bound."""
    size = len(optimum.theta)
    phi = np.concatenate([optimum.theta, tau])
    out = np.zeros((len(phi), len(phi)))
    for j in range(len(phi)):
        h = STEP * max(1.0, abs(float(phi[j])))
        up, down = phi.copy(), phi.copy()
        up[j] += h
        down[j] -= h
        if j >= size:
            up[j], down[j] = min(up[j], 1.0), max(down[j], 0.0)
        out[:, j] = ((_full_gradient(kind, y, D, rows, optimum.model.free, up, size)
                      - _full_gradient(kind, y, D, rows, optimum.model.free, down, size))
                     / (up[j] - down[j]))
    return (out + out.T) / 2


def fit_predictors_groups(kind: str, y: np.ndarray, X: np.ndarray, x_names: Sequence[str],
                          x_terms: Sequence[tuple[str, list[int]]], rows: GroupedRows,
                          predictor_terms: Sequence[tuple[str, list[int]]],
                          nuisance: Sequence[tuple[str, str, str]],
                          confidence: float = 0.95) -> PredictorFit:
    """``predictors.fit_predictors`` with each two-group predictor's tau estimated jointly.

    ``rows`` holds the parts (rows ordered as y and X: part by part); ``nuisance`` per tau
    (question, name, meaning). The fit's ``nuisance`` lists each tau (``NuisanceEstimate``).
    """
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    k = rows.k
    for j, (question, _, _) in enumerate(nuisance):
        groups = {tuple(np.round(p.base[q], 12).ravel()) for p, c in zip(rows.parts, rows.cells,
                                                                         strict=True)
                  if len(c) for q, index in enumerate(p.nuisance) if index == j}
        if len(groups) < 2:
            raise RegressionError(f"{question!r}: every respondent is in one group; the two "
                                  "groups together estimate its second parameter")
    classes0 = rows.classes(np.full(k, 0.5))
    D = class_design(X, classes0.coding)
    profile = _Profile(kind, y, D, rows)
    tau, optimum = profile.maximise(simplex_grid(k))
    # the structure (names, shares, messages) of the fit at tau; then the joint information
    result = fit_predictors(kind, y, X, x_names, x_terms, rows.classes(tau), predictor_terms,
                            confidence, tests=False, profile=[])
    model, theta = optimum.model, optimum.theta
    beta, sigma, pi = model.unpack(theta)
    hessian = _full_hessian(kind, y, D, rows, optimum, tau)
    try:
        covariance = np.linalg.inv(-hessian)
        np.linalg.cholesky(-hessian)
    except np.linalg.LinAlgError as error:
        raise RegressionError("the observed information over the coefficients and the "
                              "two-group parameters is not positive definite at the maximum: "
                              "the model is not identified by these data") from error
    p = D.shape[2]
    size = model.size
    result.beta = beta.copy()
    result.covariance = covariance[:p, :p]
    result.loglik = optimum.loglik
    result.parameters = size + k
    result.iterations = optimum.iterations
    jac = np.zeros((len(pi), len(model.others)))
    for col, t in enumerate(model.others):
        jac[:, col] = -pi * pi[t]
        jac[t, col] += pi[t]
    offset = size - len(model.others)
    cov_a = covariance[offset:size, offset:size]
    share_se = np.sqrt(np.maximum(np.diag(jac @ cov_a @ jac.T), 0.0))
    result.shares = [ClassShare(label, float(s), float(e))
                     for label, s, e in zip(classes0.labels, pi, share_se, strict=True)]
    if kind == "linear":
        result.sigma = sigma
        result.sigma_se = float(sigma * math.sqrt(max(float(covariance[p, p]), 0.0)))
    gradient = _full_gradient(kind, y, D, rows, model.free, np.concatenate([theta, tau]), size)
    inside = np.concatenate([np.ones(size, dtype=bool), (tau > BOUNDARY) & (tau < 1 - BOUNDARY)])
    result.gradient_norm = float(np.max(np.abs(gradient[inside]))) / n
    result.messages = [m for m in result.messages if not m.startswith("no convergence")]
    if result.gradient_norm > 1e-6:
        result.messages.append(f"no convergence: the gradient's largest component is "
                               f"{result.gradient_norm:.2g} per respondent")
    z = float(quantiles.norm_ppf(0.5 + confidence / 2))
    estimates = []
    for j, (question, name, meaning) in enumerate(nuisance):
        variance = float(covariance[size + j, size + j])
        se = math.sqrt(variance) if variance > 0 else math.nan
        low, high = ((max(0.0, tau[j] - z * se), min(1.0, tau[j] + z * se))
                     if math.isfinite(se) else (math.nan, math.nan))
        estimates.append(NuisanceEstimate(question, name, meaning, float(tau[j]), se,
                                          float(low), float(high),
                                          not BOUNDARY < tau[j] < 1 - BOUNDARY,
                                          "Wald (observed information), clipped to [0, 1]"))
    result.nuisance = estimates
    result.messages.append(
        "two-group predictors: " + ", ".join(f"{e.name} of {e.question}" for e in estimates)
        + " estimated jointly with the coefficients (RRreg's RRlin fixes it at RRuni's estimate "
        "first); the SEs include its uncertainty; coefficient intervals: Wald")
    C = classes0.coding.shape[1]
    all_terms = [(label, [1 + j for j in cols]) for label, cols in predictor_terms]
    all_terms += [(label, [c + C for c in cols]) for label, cols in x_terms]
    best = (beta, sigma, pi)
    for label, cols in all_terms:
        result.terms.append(_lr_test(kind, y, D, rows, cols, label, optimum.loglik, tau, best))
    if p > 1:
        result.model_test = _lr_test(kind, y, D, rows, list(range(1, p)), "model",
                                     optimum.loglik, tau, best)
    return result


def _lr_test(kind: str, y: np.ndarray, D: np.ndarray, rows: GroupedRows, drop: Sequence[int],
             label: str, loglik_full: float, tau: np.ndarray,
             best: tuple[np.ndarray, float, np.ndarray]) -> TermTest:
    """The reduced model re-maximised over tau (L-BFGS-B from the full model's tau)."""
    keep = [j for j in range(D.shape[2]) if j not in set(drop)]
    warm = (best[0][keep], best[1], best[2])
    _, reduced = _Profile(kind, y, D[:, :, keep], rows, warm).maximise([tau])
    chi2 = max(0.0, 2.0 * (loglik_full - reduced.loglik))
    return TermTest(label, len(drop), chi2, float(quantiles.chi2_sf(chi2, len(drop))))


def loglik(kind: str, y: np.ndarray, X: np.ndarray, rows: GroupedRows, beta: np.ndarray,
           pi: np.ndarray, tau: Sequence[float], sigma: float = 1.0) -> float:
    """The log-likelihood at (beta, sigma, pi, tau)."""
    tau_arr = np.asarray(tau, dtype=np.float64)
    classes = rows.classes(tau_arr)
    pi = np.asarray(pi, dtype=np.float64)
    model = LatentModel(kind, np.asarray(y, dtype=np.float64), class_design(X, classes.coding),
                   classes.likelihood, pi > 0)
    return model.loglik(model.pack(np.asarray(beta, dtype=np.float64), sigma, pi))


def describe(fit: PredictorFit) -> list[dict[str, Any]]:
    """The fit's taus as JSON (``NuisanceEstimate.to_dict``)."""
    return [t.to_dict() for t in getattr(fit, "nuisance", [])]
