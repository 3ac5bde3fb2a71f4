"""Randomized answers as predictors: a direct outcome regressed on unknown true answers.

MATH.md section 11 (RRreg's ``RRlin``, Fox & Tracy 1986; rr's ``rrreg.predictor``, Blair, Imai &
Zhou 2015). Respondent i reported r_i to the randomized questions q_1..q_Q under its own version's
design matrices; its true answers t = (t_1, .., t_Q) are a latent class with mixing weights pi_t,
the joint table of the true-answer combinations (the table of ``joint.py``, the same Kronecker
products of the same matrices: P(r_i | t) = (M_1 kron .. kron M_Q)[t, r_i]). Given its class and
its direct covariates x_i the outcome follows

    linear:   y_i | t, x_i ~ N(beta'd(t, x_i), sigma^2)
    logistic: P(y_i = 1 | t, x_i) = expit(beta'd(t, x_i))

with d(t, x) = (1, z(t), x): z(t) the indicators of the non-reference true answers. The
log-likelihood is

    sum_i log sum_t P(r_i | t) pi_t f(y_i | t, x_i)

over (beta, sigma, pi). It is maximised by EM (closed-form weighted least squares and the table's
mean posterior for the linear model; one weighted Newton step per iteration for the logistic one)
from the joint table of the reports alone (``joint.mle``) and beta from the regression on the
reports, then by Newton's method on (beta, log sigma, log-ratios of pi) with the analytic gradient
and its central-difference Jacobian as Hessian, step-halving, until the gradient vanishes. Standard
errors are from the observed information (the inverse of that Hessian); likelihood-ratio tests by
refitting without each term. A combination of true answers whose share goes to 0 is held at 0
(the boundary; said in the fit's messages).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, special

from ..intervals import quantiles
from ..joint import JointPart, mle
from .logistic import (
    RegressionError,
    TermTest,
    logsumexp,
    make_coefficients,
)

KINDS = ("linear", "logistic")
EM_ITERATIONS = 2000
EM_TOLERANCE = 1e-10
NEWTON_ITERATIONS = 100
#: The largest gradient component (scaled by N) accepted at the maximum.
GRADIENT_TOLERANCE = 1e-6
#: A combination's share below this after EM is tried at 0 (kept there if optimal).
SMALL_SHARE = 1e-3
#: |coefficient| beyond this on the logit scale: separation.
SEPARATION_BOUND = 25.0


@dataclass
class LatentClasses:
    """Per row, P(its reports | each combination of true answers), and the combinations' coding.

    ``likelihood`` is (n, K); ``coding`` (K, C) holds each class's indicator columns (named
    ``names``); ``labels`` each class's true answers; ``start`` the joint table of the reports
    alone (the maximum-likelihood table of ``joint.py``), the EM's starting weights.
    """

    likelihood: np.ndarray
    coding: np.ndarray
    names: list[str]
    labels: list[tuple[str, ...]]
    start: np.ndarray


def latent_classes(parts: Sequence[JointPart], cells: Sequence[np.ndarray],
                   values: Sequence[Sequence[str]], references: Sequence[str],
                   questions: Sequence[str]) -> LatentClasses:
    """Each row's class likelihoods from its part's Kronecker matrix and its report cell.

    ``cells[k]`` holds the report-combination index of each row of part k (rows in the order of
    the parts, then of ``cells[k]``); ``values[q]`` question q's true answers, ``references[q]``
    its reference answer (no indicator column).
    """
    blocks = [part.matrix[:, np.asarray(cell, dtype=np.int64)].T
              for part, cell in zip(parts, cells, strict=True)]
    likelihood = np.vstack(blocks) if blocks else np.zeros((0, math.prod(map(len, values))))
    import itertools

    labels = [tuple(str(v) for v in combo) for combo in itertools.product(*values)]
    names: list[str] = []
    columns: list[np.ndarray] = []
    for q, (qid, vals, ref) in enumerate(zip(questions, values, references, strict=True)):
        for value in vals:
            if value == ref:
                continue
            names.append(f"{qid}[{value}]")
            columns.append(np.array([label[q] == value for label in labels], dtype=np.float64))
    coding = np.column_stack(columns) if columns else np.zeros((len(labels), 0))
    start, _ = mle(parts)
    return LatentClasses(likelihood, coding, names, labels, start)


def class_design(X: np.ndarray, coding: np.ndarray) -> np.ndarray:
    """D[i, t, :] = (1, z(t), x_i without its intercept column): shape (n, K, 1 + C + p - 1)."""
    n, k = X.shape[0], coding.shape[0]
    intercept = np.ones((n, k, 1))
    z = np.broadcast_to(coding[None, :, :], (n, k, coding.shape[1]))
    x = np.broadcast_to(X[:, None, 1:], (n, k, X.shape[1] - 1))
    return np.concatenate([intercept, z, x], axis=2)


def log_density(kind: str, y: np.ndarray, eta: np.ndarray, sigma: float) -> np.ndarray:
    """Log density of each outcome given its linear predictor: normal (linear) or Bernoulli."""
    if kind == "linear":
        return np.asarray(-0.5 * math.log(2 * math.pi) - math.log(sigma)
                          - 0.5 * ((y[:, None] - eta) / sigma) ** 2)
    return np.asarray(np.where(y[:, None] > 0, special.log_expit(eta), special.log_expit(-eta)))


class LatentModel:
    """The log-likelihood over theta = (beta, [log sigma], log(pi_t / pi_ref) for free t)."""

    def __init__(self, kind: str, y: np.ndarray, D: np.ndarray, L: np.ndarray,
                 free: np.ndarray, offset: np.ndarray | None = None) -> None:
        self.kind, self.y, self.D = kind, y, D
        #: A fixed part of the linear predictor (n, K): a coefficient held in a profile.
        self.offset = np.zeros(L.shape) if offset is None else offset
        with np.errstate(divide="ignore"):
            self.logL = np.log(L)
        self.free = free                      # bool per class: share > 0 (estimated)
        self.ref = int(np.flatnonzero(free)[0])
        self.others = np.flatnonzero(free & (np.arange(len(free)) != self.ref))
        self.p = D.shape[2]
        self.size = self.p + (kind == "linear") + len(self.others)

    def unpack(self, theta: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
        """(beta, sigma, class shares) of the free parameter vector."""
        beta = theta[:self.p]
        sigma = math.exp(float(theta[self.p])) if self.kind == "linear" else 1.0
        logits = np.full(len(self.free), -np.inf)
        logits[self.ref] = 0.0
        logits[self.others] = theta[self.size - len(self.others):]
        pi = np.exp(logits - logsumexp(logits, axis=0))
        return beta, sigma, pi

    def pack(self, beta: np.ndarray, sigma: float, pi: np.ndarray) -> np.ndarray:
        """The free parameter vector of (beta, sigma, class shares)."""
        parts = [beta]
        if self.kind == "linear":
            parts.append(np.array([math.log(sigma)]))
        parts.append(np.log(pi[self.others]) - math.log(pi[self.ref]))
        return np.concatenate(parts)

    def posterior(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, float]:
        """(loglik, posterior class weights w (n, K), eta (n, K), sigma)."""
        beta, sigma, pi = self.unpack(theta)
        eta = self.D @ beta + self.offset
        with np.errstate(divide="ignore"):
            joint = self.logL + np.log(pi)[None, :] + log_density(self.kind, self.y, eta, sigma)
        total = logsumexp(joint, axis=1)
        if not np.all(np.isfinite(total)):
            return -math.inf, np.zeros_like(joint), eta, sigma
        return float(total.sum()), np.exp(joint - total[:, None]), eta, sigma

    def loglik(self, theta: np.ndarray) -> float:
        """The log-likelihood at ``theta``."""
        return self.posterior(theta)[0]

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """Its gradient."""
        _, w, eta, sigma = self.posterior(theta)
        _, _, pi = self.unpack(theta)
        if self.kind == "linear":
            resid = self.y[:, None] - eta
            g_beta = np.einsum("ik,ikp->p", w * resid / sigma**2, self.D)
            g_sigma = [float(np.sum(w * (resid**2 / sigma**2 - 1.0)))]
        else:
            resid = self.y[:, None] - special.expit(eta)
            g_beta = np.einsum("ik,ikp->p", w * resid, self.D)
            g_sigma = []
        n = len(self.y)
        g_pi = w[:, self.others].sum(axis=0) - n * pi[self.others]
        return np.concatenate([g_beta, g_sigma, g_pi])

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """Its Hessian, analytic (Louis's identity for a finite mixture).

        With a_ik the log of respondent i's joint density in class k, s_ik its gradient, w_ik the
        posterior weights and g_i = sum_k w_ik s_ik, the Hessian of sum_i log sum_k exp(a_ik) is
        sum_i [sum_k w_ik (d2 a_ik + s_ik s_ik^T) - g_i g_i^T]. Per class, a_ik's second
        derivatives are the normal's or the Bernoulli's in (beta, log sigma), and those of
        log pi_k in the share logits, -(diag(pi) - pi pi^T) for every k.
        """
        _, w, eta, sigma = self.posterior(theta)
        _, _, pi = self.unpack(theta)
        n, k = w.shape
        D, p, others = self.D, self.p, self.others
        shares = pi[others]
        s_pi = np.broadcast_to((np.arange(k)[:, None] == others[None, :]) - shares[None, :],
                               (n, k, len(others)))
        if self.kind == "linear":
            resid = self.y[:, None] - eta
            scaled = resid / sigma**2
            scores = np.concatenate([scaled[:, :, None] * D,
                                     (resid * scaled - 1.0)[:, :, None], s_pi], axis=2)
            curvature = w / sigma**2
        else:
            mean = special.expit(eta)
            scores = np.concatenate([(self.y[:, None] - mean)[:, :, None] * D, s_pi], axis=2)
            curvature = w * mean * (1.0 - mean)
        per_row = np.einsum("ik,ikd->id", w, scores)
        out = np.einsum("ik,ikd,ike->de", w, scores, scores) - per_row.T @ per_row
        out[:p, :p] -= np.einsum("ik,ikp,ikq->pq", curvature, D, D)
        if self.kind == "linear":
            cross = -2.0 * np.einsum("ik,ikp->p", curvature * resid, D)
            out[:p, p] += cross
            out[p, :p] += cross
            out[p, p] -= 2.0 * float(np.sum(curvature * resid**2))
        tail = self.size - len(others)
        out[tail:, tail:] -= n * (np.diag(shares) - np.outer(shares, shares))
        return np.asarray((out + out.T) / 2)


def _em(model: LatentModel, theta: np.ndarray, iterations: int) -> tuple[np.ndarray, int]:
    previous = model.loglik(theta)
    n = len(model.y)
    D, y, offset = model.D, model.y, model.offset
    for iteration in range(1, iterations + 1):
        _, w, eta, sigma = model.posterior(theta)
        beta, _, _ = model.unpack(theta)
        pi = w.sum(axis=0) / n
        pi[~model.free] = 0.0
        pi = np.maximum(pi, 1e-300)
        if model.kind == "linear":
            weighted = D * w[:, :, None]
            gram = np.einsum("ikp,ikq->pq", weighted, D)
            beta = np.linalg.solve(gram, np.einsum("ikp,ik->p", weighted, y[:, None] - offset))
            resid = y[:, None] - D @ beta - offset
            sigma = math.sqrt(max(float(np.sum(w * resid**2)) / n, 1e-300))
        else:   # one Newton step of the weighted logistic regression (a generalised EM)
            p = special.expit(eta)
            gram = np.einsum("ikp,ikq->pq", D * (w * p * (1 - p))[:, :, None], D)
            score = np.einsum("ikp,ik->p", D, w * (y[:, None] - p))
            try:
                beta = beta + np.linalg.solve(gram, score)
            except np.linalg.LinAlgError as error:
                raise RegressionError("the information matrix is singular: the columns are "
                                      "collinear in the rows used") from error
        theta = model.pack(beta, sigma, pi)
        current = model.loglik(theta)
        if abs(current - previous) < EM_TOLERANCE * max(1.0, abs(current)):
            return theta, iteration
        previous = current
    return theta, iterations


def _newton(model: LatentModel, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    current = model.loglik(theta)
    for iteration in range(1, NEWTON_ITERATIONS + 1):
        gradient = model.gradient(theta)
        hessian = model.hessian(theta)
        try:
            step = np.linalg.solve(-hessian, gradient)
        except np.linalg.LinAlgError:
            step = gradient / len(model.y)
        if float(gradient @ step) <= 0:        # not an ascent direction: gradient step
            step = gradient / max(1.0, float(np.max(np.abs(np.diag(hessian)))))
        for _ in range(60):
            trial = theta + step
            value = model.loglik(trial)
            if value >= current - 1e-12 * abs(current):
                break
            step = step / 2
        else:
            break
        theta, current = trial, value
        if float(np.max(np.abs(step))) < 1e-10:
            return theta, model.hessian(theta), iteration
    return theta, model.hessian(theta), NEWTON_ITERATIONS


def _boundary_slopes(model: LatentModel, theta: np.ndarray) -> np.ndarray:
    """The slope d loglik / d eps of pi -> (1 - eps) pi + eps e_t, per class t (<= 0: no gain)."""
    beta, sigma, pi = model.unpack(theta)
    eta = model.D @ beta + model.offset
    with np.errstate(divide="ignore"):
        log_each = model.logL + log_density(model.kind, model.y, eta, sigma)
        total = logsumexp(log_each + np.log(pi)[None, :], axis=1)
    return np.asarray(np.exp(log_each - total[:, None]).sum(axis=0) - len(model.y))


@dataclass
class ClassShare:
    """One combination of true answers of the randomized predictors: its share pi_t."""

    answers: tuple[str, ...]
    estimate: float
    se: float

    def to_dict(self) -> dict[str, Any]:
        """JSON keys of docs/contracts.md ("analyze --model", randomized predictors)."""
        return {"answers": list(self.answers), "estimate": self.estimate, "se": self.se}


@dataclass
class PredictorFit:
    """A maximum-likelihood fit of a regression on randomized predictors."""

    kind: str
    names: list[str]
    beta: np.ndarray
    covariance: np.ndarray
    loglik: float
    n: int
    iterations: int
    gradient_norm: float
    confidence: float = 0.95
    sigma: float | None = None
    sigma_se: float | None = None
    shares: list[ClassShare] = field(default_factory=list)
    terms: list[TermTest] = field(default_factory=list)
    model_test: TermTest | None = None
    messages: list[str] = field(default_factory=list)
    parameters: int = 0
    #: Profile-likelihood interval ends per coefficient (nan where not computed: Wald used).
    profile_low: np.ndarray | None = None
    profile_high: np.ndarray | None = None
    #: Two-group predictors' second parameters, estimated jointly (predictors_groups.py).
    nuisance: list[Any] = field(default_factory=list)

    @property
    def ci_method(self) -> str:
        """How the coefficients' intervals are computed."""
        return "profile likelihood" if self.profile_low is not None else "Wald"

    @property
    def se(self) -> np.ndarray:
        """Standard errors from the observed information."""
        return np.sqrt(np.maximum(np.diag(self.covariance), 0.0))

    @property
    def aic(self) -> float:
        """-2 log-likelihood + 2 free parameters (coefficients, sigma, the table's shares)."""
        return -2.0 * self.loglik + 2.0 * self.parameters

    @property
    def coefficients(self) -> list[Any]:
        """Estimates, SEs, Wald tests, intervals (profile likelihood where computed)."""
        out = make_coefficients(self.names, self.beta, self.se, self.confidence)
        if self.profile_low is not None and self.profile_high is not None:
            for c, low, high in zip(out, self.profile_low, self.profile_high, strict=True):
                if not math.isnan(low):
                    c.ci_low, c.ci_high = float(low), float(high)
        return out

    def coefficient_dicts(self) -> list[dict[str, Any]]:
        """The coefficients' JSON (odds ratios only for the logistic model)."""
        out = []
        for c in self.coefficients:
            if self.kind == "logistic" and abs(c.estimate) < 700:
                out.append(c.to_dict())
            else:
                out.append({"name": c.name, "estimate": c.estimate, "se": c.se, "z": c.z,
                            "p_value": c.p_value, "ci_low": c.ci_low, "ci_high": c.ci_high})
        return out


@dataclass
class Optimum:
    """A maximum: the parameters, the Hessian there and the log-likelihood."""

    theta: np.ndarray
    hessian: np.ndarray
    loglik: float
    iterations: int
    model: LatentModel


def maximise_latent(kind: str, y: np.ndarray, D: np.ndarray, classes: LatentClasses,
                    offset: np.ndarray | None = None,
                    start: tuple[np.ndarray, float, np.ndarray] | None = None) -> Optimum:
    """The maximum likelihood over the coefficients and the classes' shares (EM, then Newton)."""
    L = classes.likelihood
    free = np.ones(L.shape[1], dtype=bool)
    start_pi = np.clip(classes.start, 1e-3, None)
    start_pi /= start_pi.sum()
    model = LatentModel(kind, y, D, L, free, offset)
    # start: beta by regressing y on the posterior mean of the class coding under start_pi
    post = L * start_pi[None, :]
    post /= post.sum(axis=1, keepdims=True)
    Xbar = np.einsum("ik,ikp->ip", post, D)
    if kind == "linear":
        target = y - np.sum(post * model.offset, axis=1)
        beta, *_ = np.linalg.lstsq(Xbar, target, rcond=None)
        sigma = float(np.std(target - Xbar @ beta)) or 1.0
    else:
        mean = float(np.clip(y.mean(), 0.01, 0.99))
        beta = np.zeros(D.shape[2])
        beta[0] = math.log(mean / (1 - mean))
        sigma = 1.0
    if start is not None:   # a neighbouring optimum (a profile's previous point)
        beta, sigma, start_pi = start[0], start[1], np.clip(start[2], 1e-6, None)
        start_pi = start_pi / start_pi.sum()
    theta = model.pack(beta, sigma, start_pi)
    theta, em_iterations = _em(model, theta, EM_ITERATIONS if start is None else 20)
    beta, sigma, pi = model.unpack(theta)
    if np.any(pi < SMALL_SHARE):
        # EM creeps towards a boundary: hold the small shares at 0, polish, and keep them there
        # if the likelihood falls when mass moves into them (the optimality condition)
        free = pi >= SMALL_SHARE
        held = LatentModel(kind, y, D, L, free, offset)
        trial, hessian, newton_iterations = _newton(
            held, held.pack(beta, sigma, np.where(free, pi, 0.0) / pi[free].sum()))
        if np.all(_boundary_slopes(held, trial)[~free] <= 1e-6 * len(y)):
            return Optimum(trial, hessian, held.loglik(trial),
                            em_iterations + newton_iterations, held)
    theta, hessian, newton_iterations = _newton(model, theta)
    beta = theta[:D.shape[2]]
    if kind == "logistic" and np.any(np.abs(beta) > SEPARATION_BOUND):
        raise RegressionError(f"separation: a coefficient exceeds {SEPARATION_BOUND:g} on the "
                              "logit scale (the outcome is predicted perfectly in some class); "
                              "merge sparse categories or drop the term")
    return Optimum(theta, hessian, model.loglik(theta), em_iterations + newton_iterations,
                    model)


def fit_predictors(kind: str, y: np.ndarray, X: np.ndarray, x_names: Sequence[str],
                   x_terms: Sequence[tuple[str, list[int]]], classes: LatentClasses,
                   predictor_terms: Sequence[tuple[str, list[int]]],
                   confidence: float = 0.95, tests: bool = True,
                   profile: Sequence[int] | None = None) -> PredictorFit:
    """Fit y on the randomized predictors' true answers and the direct columns X.

    X's column 0 is the intercept; ``x_terms`` are its terms (indices into X), as
    ``formula.DesignMatrix.term_columns``; ``predictor_terms`` the randomized terms (indices into
    ``classes.names``). Coefficients are named (Intercept), the classes' indicators, then X's
    other columns. ``profile``: the coefficients (indices) whose interval is the profile
    likelihood's (default every one; Wald for the others, and for all with ``profile=[]``).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    y = np.asarray(y, dtype=np.float64)
    if kind == "logistic" and not np.all((y == 0) | (y == 1)):
        raise ValueError("a logistic outcome must be 0 or 1")
    n = len(y)
    C = classes.coding.shape[1]
    D = class_design(X, classes.coding)
    names = ["(Intercept)", *classes.names, *x_names[1:]]
    if n <= D.shape[2] + 1:
        raise RegressionError(f"{n} rows cannot identify {D.shape[2]} coefficients")
    best = maximise_latent(kind, y, D, classes)
    model, theta = best.model, best.theta
    messages: list[str] = []
    gradient = model.gradient(theta)
    gradient_norm = float(np.max(np.abs(gradient))) / n
    if gradient_norm > GRADIENT_TOLERANCE:
        messages.append(f"no convergence: the gradient's largest component is {gradient_norm:.2g} "
                        f"per respondent after {best.iterations} iterations")
    info = -best.hessian
    try:
        covariance_all = np.linalg.inv(info)
        np.linalg.cholesky(info)
    except np.linalg.LinAlgError as error:
        raise RegressionError("the observed information is not positive definite at the "
                              "maximum: the model is not identified by these data (are the "
                              "randomized predictors' designs informative, and do the classes "
                              "differ?)") from error
    p = D.shape[2]
    beta, sigma, pi = model.unpack(theta)
    # shares' SEs by the delta method through the softmax
    jac = np.zeros((len(pi), len(model.others)))
    for col, t in enumerate(model.others):
        jac[:, col] = -pi * pi[t]
        jac[t, col] += pi[t]
    offset = model.size - len(model.others)
    cov_a = covariance_all[offset:, offset:]
    share_se = np.sqrt(np.maximum(np.diag(jac @ cov_a @ jac.T), 0.0))
    shares = [ClassShare(label, float(s), float(e))
              for label, s, e in zip(classes.labels, pi, share_se, strict=True)]
    for label, keep in zip(classes.labels, model.free, strict=True):
        if not keep:
            messages.append(f"the combination {', '.join(label)} has share 0 at the maximum "
                            "(a boundary: held at 0, its SE not defined)")
    sigma_value = sigma_se = None
    if kind == "linear":
        sigma_value = sigma
        sigma_se = float(sigma * math.sqrt(max(float(covariance_all[p, p]), 0.0)))
    result = PredictorFit(kind, names, beta.copy(), covariance_all[:p, :p], best.loglik, n,
                          best.iterations, gradient_norm, confidence, sigma_value, sigma_se,
                          shares, messages=messages, parameters=model.size)
    indices = range(p) if profile is None else profile
    if len(indices):
        critical = float(quantiles.chi2_ppf(confidence, 1))
        result.profile_low = np.full(p, math.nan)
        result.profile_high = np.full(p, math.nan)
        for j in indices:
            low, high = _profile_interval(kind, y, D, classes, j, float(beta[j]),
                                          float(result.se[j]), best.loglik, critical,
                                          (beta, sigma, pi))
            result.profile_low[j], result.profile_high[j] = low, high
    if tests:
        all_terms = [(label, [1 + j for j in cols]) for label, cols in predictor_terms]
        all_terms += [(label, [c + C for c in cols]) for label, cols in x_terms]
        for term_label, cols in all_terms:
            result.terms.append(_lr_test(kind, y, D, classes, cols, term_label, best.loglik))
        others = list(range(1, p))
        if others:
            result.model_test = _lr_test(kind, y, D, classes, others, "model", best.loglik)
    return result


def _lr_test(kind: str, y: np.ndarray, D: np.ndarray, classes: LatentClasses,
             drop: Sequence[int], label: str, loglik_full: float) -> TermTest:
    keep = [j for j in range(D.shape[2]) if j not in set(drop)]
    reduced = maximise_latent(kind, y, D[:, :, keep], classes)
    chi2 = max(0.0, 2.0 * (loglik_full - reduced.loglik))
    return TermTest(label, len(drop), chi2, float(quantiles.chi2_sf(chi2, len(drop))))


def loglik(kind: str, y: np.ndarray, X: np.ndarray, classes: LatentClasses, beta: np.ndarray,
           pi: np.ndarray, sigma: float = 1.0) -> float:
    """The log-likelihood at (beta, sigma, pi) (beta ordered as ``fit_predictors`` names it)."""
    pi = np.asarray(pi, dtype=np.float64)
    free = pi > 0
    model = LatentModel(kind, np.asarray(y, dtype=np.float64), class_design(X, classes.coding),
                   classes.likelihood, free)
    return model.loglik(model.pack(np.asarray(beta, dtype=np.float64), sigma, pi))


def _profile_interval(kind: str, y: np.ndarray, D: np.ndarray, classes: LatentClasses, j: int,
                      estimate: float, se: float, loglik_max: float, critical: float,
                      best: tuple[np.ndarray, float, np.ndarray]) -> tuple[float, float]:
    """{v : 2 (l_max - max_{beta_j = v} l) <= critical}, each end by Brent's method."""
    best_beta, best_sigma, best_pi = best
    keep = [k for k in range(D.shape[2]) if k != j]
    reduced = D[:, :, keep]
    start = (best_beta[keep], best_sigma, best_pi)

    def excess(value: float) -> float:
        try:
            held = maximise_latent(kind, y, reduced, classes, value * D[:, :, j], start)
        except RegressionError:
            return critical
        return 2 * (loglik_max - held.loglik) - critical

    step = max(se, 1e-8)
    ends = []
    for sign in (-1.0, 1.0):
        inner, outer = estimate, estimate + sign * 2.0 * step
        tries = 0
        while excess(outer) <= 0 and tries < 30:
            inner, outer = outer, outer + sign * 2.0 * step
            tries += 1
        if tries == 30:
            ends.append(sign * math.inf)
            continue
        ends.append(float(optimize.brentq(excess, inner, outer, xtol=1e-6 * step)))
    return ends[0], ends[1]
