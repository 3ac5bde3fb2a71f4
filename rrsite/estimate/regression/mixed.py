"""A random intercept per cluster for a randomized yes-no outcome (RRreg's ``RRmixed``).

MATH.md section 11. Respondent i of cluster j has covariates x_i and reports y_i under its own
version's design; with u_j = s z_j, z_j ~ N(0, 1),

    P(true yes | x_i, z_j) = expit(x_i' beta + s z_j)
    P(report counted | x_i, z_j) = a_i + b_i expit(x_i' beta + s z_j)

(a_i = 1 - p00, b_i = p00 + p11 - 1 for a 2x2 design; a design with more reports gives each row
the probability of its own report, y_i = 1, as in ``regression.py``). The likelihood of cluster j,

    L_j(beta, s) = integral prod_{i in j} P(y_i | x_i, z) phi(z) dz,

is computed by adaptive Gauss-Hermite quadrature (Liu & Pierce 1994): centred at the mode z_j of
the integrand's logarithm h_j(z) and scaled by its curvature c_j = -h_j''(z_j),

    L_j ~ sqrt(2 / c_j) sum_k w_k exp(x_k^2) exp(h_j(z_j + sqrt(2 / c_j) x_k)) / sqrt(2 pi)

with ``NODES`` nodes x_k and weights w_k. Writing u_j = s z_j makes s = 0 an ordinary point (the
likelihood is even in s, and s = 0 is the fixed-effects logit of ``regression.py``); s is reported
as |s|. The maximum is found by BFGS with the gradient of the quadrature sum (nodes held), from the
fixed-effects fit, then checked: the largest gradient component and whether the negative
Hessian (central differences of the gradient) is positive definite are reported as they are,
never hidden. The interval of s is the profile likelihood {s >= 0 : 2 (l_max - max_beta l(beta,
s)) <= chi2_1(conf)} (its lower end 0 when s = 0 is inside: the boundary); the test of s = 0 uses
the boundary's 50:50 mixture of chi2_0 and chi2_1 (Self & Liang 1987).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, special

from ..intervals import quantiles
from .logistic import (
    RegressionError,
    hessian_of_gradient,
    logsumexp,
    make_coefficients,
    maximise,
)

#: Gauss-Hermite nodes of the adaptive quadrature. The bounded likelihood of a randomized answer
#: makes the integrand flat-topped when s is large, and the rule converges slowly there (at s = 2.5
#: with 40 respondents per cluster, 15 nodes are off by about 1e-2 in the log-likelihood, 51 by
#: about 2e-5): 51 nodes, and the fit reports the difference from a 103-node rule at its maximum.
NODES = 51
#: A difference above this between the NODES and 2 NODES + 1 rules at the maximum is reported.
QUADRATURE_TOLERANCE = 1e-3
#: A cluster with fewer respondents than this is refused (its intercept could single them out).
MIN_CLUSTER_SIZE = 10
#: Fewer clusters than this cannot estimate a variance.
MIN_CLUSTERS = 2
#: The largest gradient component (per respondent) accepted as converged.
GRADIENT_TOLERANCE = 1e-5
MODE_ITERATIONS = 50


def _eta_terms(eta: np.ndarray, y: np.ndarray, a: np.ndarray,
               b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log P(y | eta) and its first and second derivatives in eta (elementwise)."""
    q = special.expit(eta)
    lam = np.clip(a + b * q, 1e-300, 1 - 1e-16)
    g1 = b * q * (1 - q)
    g2 = g1 * (1 - 2 * q)
    log_p = np.where(y > 0, np.log(lam), np.log1p(-lam))
    r = np.where(y > 0, 1 / lam, -1 / (1 - lam))
    d1 = r * g1
    d2 = r * g2 - np.where(y > 0, 1 / lam**2, 1 / (1 - lam) ** 2) * g1**2
    return log_p, d1, d2


@dataclass
class ClusterData:
    """Rows with their covariates, report, design rates and cluster index (0..J-1)."""

    X: np.ndarray
    y: np.ndarray
    a: np.ndarray
    b: np.ndarray
    cluster: np.ndarray
    clusters: int

    def sums(self, values: np.ndarray) -> np.ndarray:
        """Sum a per-row array (n,) or (n, k) by cluster."""
        if values.ndim == 1:
            return np.bincount(self.cluster, values, minlength=self.clusters)
        return np.stack([np.bincount(self.cluster, values[:, k], minlength=self.clusters)
                         for k in range(values.shape[1])], axis=1)


def _modes(data: ClusterData, linear: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """Each cluster's mode of h_j(z) = sum log P(y_i | x_i'beta + s z) - z^2 / 2, curvature."""
    z = np.zeros(data.clusters)
    curvature = np.ones(data.clusters)
    if s == 0:
        return z, curvature
    for _ in range(MODE_ITERATIONS):
        _, d1, d2 = _eta_terms(linear + s * z[data.cluster], data.y, data.a, data.b)
        grad = s * data.sums(d1) - z
        hess = s * s * data.sums(d2) - 1
        curvature = np.maximum(-hess, 1e-2)
        step = grad / curvature
        step = np.clip(step, -1.0, 1.0)
        z = z + step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    _, _, d2 = _eta_terms(linear + s * z[data.cluster], data.y, data.a, data.b)
    curvature = np.maximum(1 - s * s * data.sums(d2), 1e-2)
    return z, curvature


def cluster_logliks(data: ClusterData, beta: np.ndarray, s: float, nodes: int = NODES,
                    adaptive: bool = True, with_gradient: bool = False
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """Log L_j per cluster (and, optionally, the gradient of their sum in (beta, s))."""
    x, w = np.polynomial.hermite.hermgauss(nodes)
    linear = data.X @ beta
    if adaptive:
        center, curvature = _modes(data, linear, s)
        scale = np.sqrt(2 / curvature)
    else:
        center, scale = np.zeros(data.clusters), np.full(data.clusters, math.sqrt(2))
    z = center[:, None] + scale[:, None] * x[None, :]                # (J, K)
    z_rows = z[data.cluster]                                          # (n, K)
    log_p, d1, _ = _eta_terms(linear[:, None] + s * z_rows, data.y[:, None],
                              data.a[:, None], data.b[:, None])
    h = data.sums(log_p) - z**2 / 2                                   # (J, K)
    terms = np.log(w)[None, :] + x[None, :] ** 2 + h
    total = logsumexp(terms, axis=1)
    logl = np.log(scale) - 0.5 * math.log(2 * math.pi) + total
    if not with_gradient:
        return logl, None
    weights = np.exp(terms - total[:, None])[data.cluster]            # (n, K)
    g_beta = data.X.T @ np.sum(weights * d1, axis=1)
    g_s = float(np.sum(weights * d1 * z_rows))
    return logl, np.concatenate([g_beta, [g_s]])


def loglik(data: ClusterData, beta: np.ndarray, s: float, nodes: int = NODES,
           adaptive: bool = True) -> float:
    """The log-likelihood (adaptive quadrature by default)."""
    return float(np.sum(cluster_logliks(data, np.asarray(beta, dtype=np.float64), s, nodes,
                                        adaptive)[0]))


def _objective(data: ClusterData, nodes: int, fixed_s: float | None = None) -> Any:
    p = data.X.shape[1]

    def f(theta: np.ndarray) -> tuple[float, np.ndarray]:
        beta = theta[:p]
        s = float(theta[p]) if fixed_s is None else fixed_s
        logl, gradient = cluster_logliks(data, beta, s, nodes, True, True)
        assert gradient is not None
        value = float(np.sum(logl))
        if not math.isfinite(value):
            return 1e300, np.zeros_like(theta)
        return -value, -(gradient if fixed_s is None else gradient[:p])
    return f


@dataclass
class VarianceComponent:
    """s, the standard deviation of the random intercept, with its profile-likelihood interval."""

    estimate: float
    ci_low: float
    ci_high: float
    lr_zero: float
    p_zero: float
    on_boundary: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON keys of docs/contracts.md ("analyze --model", random intercept)."""
        return {"sd": self.estimate, "variance": self.estimate**2, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "ci_method": "profile likelihood",
                "lr_test_zero": self.lr_zero, "p_value_zero": self.p_zero,
                "on_boundary": self.on_boundary}


@dataclass
class MixedFit:
    """A maximum-likelihood fit of the random-intercept randomized-response logit."""

    names: list[str]
    beta: np.ndarray
    covariance: np.ndarray
    sd: VarianceComponent
    loglik: float
    n: int
    clusters: int
    smallest_cluster: int
    nodes: int
    quadrature_check: float
    iterations: int
    gradient_max: float
    hessian_positive_definite: bool
    confidence: float = 0.95
    messages: list[str] = field(default_factory=list)

    @property
    def converged(self) -> bool:
        """The gradient vanished and the information is positive definite."""
        return self.gradient_max <= GRADIENT_TOLERANCE and self.hessian_positive_definite

    @property
    def se(self) -> np.ndarray:
        """Standard errors of beta from the observed information (nan if not available)."""
        return np.sqrt(np.maximum(np.diag(self.covariance), 0.0))

    @property
    def coefficients(self) -> list[Any]:
        """Estimates, SEs, Wald tests and intervals (regression.Coefficient), one per column."""
        return make_coefficients(self.names, self.beta, self.se, self.confidence)

    @property
    def aic(self) -> float:
        """-2 log-likelihood + 2 (coefficients + 1)."""
        return -2 * self.loglik + 2 * (len(self.beta) + 1)


def _hessian(f: Any, theta: np.ndarray) -> np.ndarray:
    """The Hessian of the log-likelihood; ``f`` returns (minus it, minus its gradient)."""
    return hessian_of_gradient(lambda t: -f(t)[1], theta)


def _fit_at(data: ClusterData, start: np.ndarray, nodes: int,
            fixed_s: float | None) -> tuple[np.ndarray, float, int]:
    f = _objective(data, nodes, fixed_s)
    result = optimize.minimize(f, start, jac=True, method="BFGS",
                               options={"gtol": 1e-8 * len(data.y), "maxiter": 1000})
    return np.asarray(result.x), -float(result.fun), int(result.nit)


def fit_mixed(X: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray, cluster: np.ndarray,
              names: Sequence[str], confidence: float = 0.95, nodes: int = NODES,
              min_cluster_size: int = MIN_CLUSTER_SIZE) -> MixedFit:
    """Fit the random-intercept model; ``cluster`` holds each row's cluster index 0..J-1."""
    cluster = np.asarray(cluster, dtype=np.int64)
    clusters = int(cluster.max()) + 1 if len(cluster) else 0
    sizes = np.bincount(cluster, minlength=clusters)
    if clusters < MIN_CLUSTERS:
        raise RegressionError(f"a random intercept needs at least {MIN_CLUSTERS} clusters; the "
                              f"rows used have {clusters}")
    if np.any(sizes < min_cluster_size):
        small = int(np.count_nonzero(sizes < min_cluster_size))
        raise RegressionError(
            f"{small} cluster(s) have fewer than {min_cluster_size} respondents (the smallest "
            f"has {int(sizes.min())}): a random intercept for so few people could single them "
            "out. Merge the small clusters, or leave the random intercept out")
    data = ClusterData(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64),
                       np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                       cluster, clusters)
    p = data.X.shape[1]
    beta0, _, ll_zero, _ = maximise(data.X, data.y, data.a, data.b, names)  # s = 0
    best: tuple[np.ndarray, float, int] | None = None
    for s_start in (0.5, 1.5):
        theta, value, iterations = _fit_at(data, np.concatenate([beta0, [s_start]]), nodes, None)
        if best is None or value > best[1]:
            best = (theta, value, iterations)
    assert best is not None
    theta, ll_max, iterations = best
    theta[p] = abs(theta[p])
    if ll_zero >= ll_max:   # the fixed-effects fit is the maximum: s = 0 on the boundary
        theta, ll_max = np.concatenate([beta0, [0.0]]), ll_zero
    f = _objective(data, nodes)
    gradient = -f(theta)[1]
    gradient_max = float(np.max(np.abs(gradient))) / len(data.y)
    s_hat = float(theta[p])
    on_boundary = s_hat < 1e-4
    messages: list[str] = []
    if on_boundary:
        # s = 0: the likelihood is flat to first order in s; the coefficients' information is
        # the fixed-effects one
        gradient_max = float(np.max(np.abs(gradient[:p]))) / len(data.y)
        info = -_hessian(_objective(data, nodes, 0.0), theta[:p])
        messages.append("the random intercept's sd is estimated at 0 (the boundary): the "
                        "clusters do not differ beyond chance")
    else:
        info = -_hessian(f, theta)
    try:
        np.linalg.cholesky(info)
        positive = True
        covariance_all = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        positive = False
        covariance_all = np.full(info.shape, np.nan)
    if gradient_max > GRADIENT_TOLERANCE:
        messages.append(f"NOT CONVERGED: the largest gradient component is {gradient_max:.2g} "
                        f"per respondent (tolerance {GRADIENT_TOLERANCE:g}); do not use these "
                        "estimates")
    if not positive:
        messages.append("NOT CONVERGED: the observed information is not positive definite at "
                        "the reported point (a saddle or a flat direction): no standard errors")
    check = abs(loglik(data, theta[:p], s_hat, 2 * nodes + 1) - ll_max)
    if check > QUADRATURE_TOLERANCE:
        messages.append(f"the quadrature may be inaccurate: {nodes} and {2 * nodes + 1} nodes "
                        f"differ by {check:.2g} in the log-likelihood at the maximum")
    critical = float(quantiles.chi2_ppf(confidence, 1))
    lr_zero = max(0.0, 2 * (ll_max - ll_zero))
    p_zero = 0.5 * float(quantiles.chi2_sf(lr_zero, 1)) if lr_zero > 0 else 1.0

    def excess(s: float) -> float:
        if s == 0:
            return 2 * (ll_max - ll_zero) - critical
        _, value, _ = _fit_at(data, theta[:p], nodes, s)
        return 2 * (ll_max - value) - critical

    low = 0.0 if excess(0.0) <= 0 else float(optimize.brentq(excess, 0.0, s_hat, xtol=1e-6))
    high_end = max(2 * s_hat, 0.5)
    while excess(high_end) <= 0:
        high_end *= 2
        if high_end > 50:
            break
    high = (float(optimize.brentq(excess, s_hat, high_end, xtol=1e-6)) if high_end <= 50
            else math.inf)
    sd = VarianceComponent(s_hat, low, high, lr_zero, p_zero, on_boundary)
    return MixedFit(list(names), theta[:p].copy(), covariance_all[:p, :p], sd, ll_max,
                    len(data.y), clusters, int(sizes.min()), nodes, check, iterations, gradient_max,
                    positive, confidence, messages)
