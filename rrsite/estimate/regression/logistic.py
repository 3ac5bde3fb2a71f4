"""Logistic regression of a randomized yes/no answer on directly asked covariates (MATH.md 8).

Each row i has a report y_i in {0, 1}, covariates x_i and its own 2x2 design (the design of the
survey version it answered): ``a_i = P(report yes | no) = 1 - p00`` and
``b_i = p00 + p11 - 1``. Then

    P(report yes | x_i) = lambda_i = a_i + b_i * logistic(x_i' beta)

and the log-likelihood is sum_i [y_i log lambda_i + (1 - y_i) log(1 - lambda_i)], one likelihood
over every row whatever its version (versions are pooled in the likelihood, never by adding
counts). It is maximised by Newton's method with step-halving, falling back to Fisher scoring
where the observed information is not positive definite (the likelihood is not concave in beta
unless the design is the identity). Standard errors are from the observed information (the
negative Hessian at the optimum), as RRreg's ``RRlog`` (which takes ``optim``'s Hessian).
With a_i = 0 and b_i = 1 this is the ordinary logit.

Pure functions over numpy arrays; the formula and covariate layer is in ``formula.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from ...errors import RRSiteError
from ..intervals import quantiles

#: A coefficient this large (|log odds ratio|, odds ratio e^25) means the data separate.
SEPARATION_BOUND = 25.0
MAX_ITERATIONS = 200
MAX_HALVINGS = 40
TOLERANCE = 1e-10


class RegressionError(RRSiteError):
    """Cannot fit: separation, an empty category, no identification or no convergence."""


@dataclass
class Coefficient:
    """One parameter of the linear predictor."""

    name: str
    estimate: float
    se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float

    @property
    def odds_ratio(self) -> float:
        """exp(estimate)."""
        return math.exp(self.estimate)

    @property
    def or_low(self) -> float:
        """exp(lower Wald limit)."""
        return math.exp(self.ci_low)

    @property
    def or_high(self) -> float:
        """exp(upper Wald limit)."""
        return math.exp(self.ci_high)

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of docs/contracts.md ("regression")."""
        return {
            "name": self.name, "estimate": self.estimate, "se": self.se, "z": self.z,
            "p_value": self.p_value, "ci_low": self.ci_low, "ci_high": self.ci_high,
            "odds_ratio": self.odds_ratio, "or_low": self.or_low, "or_high": self.or_high,
        }


@dataclass
class TermTest:
    """Likelihood-ratio test of dropping one term (all of its columns) from the model."""

    term: str
    df: int
    chi2: float
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of docs/contracts.md ("regression")."""
        return {"term": self.term, "df": self.df, "chi2": self.chi2, "p_value": self.p_value}


@dataclass
class Fit:
    """A maximum-likelihood fit of the randomized-response logit."""

    names: list[str]
    beta: np.ndarray
    covariance: np.ndarray
    loglik: float
    n: int
    iterations: int
    confidence: float = 0.95
    terms: list[TermTest] = field(default_factory=list)
    model_test: TermTest | None = None
    #: Kosmidis & Firth's bias-reduced estimates (``fit(..., bias_reduction=True)``), else None.
    bias_reduced: BiasReduced | None = None
    #: A two-group design's parameter estimated jointly (``fit_two_group``), else None.
    nuisance: Nuisance | None = None

    @property
    def se(self) -> np.ndarray:
        """Standard errors from the observed information."""
        return np.sqrt(np.diag(self.covariance))

    @property
    def aic(self) -> float:
        """-2 log-likelihood + 2 parameters (the nuisance parameter counted)."""
        return -2.0 * self.loglik + 2.0 * (len(self.beta) + (self.nuisance is not None))

    @property
    def coefficients(self) -> list[Coefficient]:
        """Estimates, SEs, Wald tests and intervals, one per column."""
        return make_coefficients(self.names, self.beta, self.se, self.confidence)


@dataclass
class BiasReduced:
    """Bias-reduced estimates: the root of Kosmidis & Firth's adjusted score.

    The maximum-likelihood estimator of a logistic model is biased away from zero by O(1/N) (at
    N = 2,000 with a randomized outcome, a few percent of a coefficient: benchmarks/regression.py).
    Kosmidis & Firth (2009, Biometrika 96(4), 793-804) remove that term by solving an adjusted
    score; for a binomial model with mean lambda = F(eta) (here F(eta) = a + b logistic(eta)):

        U*_t = sum_i (d_i / v_i) (y_i - lambda_i + h_i d'_i / (2 w_i)) x_it = 0,

    with d = F', d' = F'', v = lambda (1 - lambda), w = d^2 / v and h_i the diagonal of the hat
    matrix W^1/2 X (X'WX)^-1 X' W^1/2. With the identity design this is Firth's (1993) logistic
    regression. Standard errors are from the expected information at the estimate.
    """

    names: list[str]
    beta: np.ndarray
    covariance: np.ndarray
    iterations: int
    confidence: float = 0.95

    @property
    def se(self) -> np.ndarray:
        """Standard errors from the expected information at the estimate."""
        return np.sqrt(np.diag(self.covariance))

    @property
    def coefficients(self) -> list[Coefficient]:
        """Estimates, SEs, Wald tests and intervals, one per column."""
        return make_coefficients(self.names, self.beta, self.se, self.confidence)


def make_coefficients(names: Sequence[str], beta: np.ndarray, se: np.ndarray,
                      confidence: float) -> list[Coefficient]:
    """Each coefficient with its Wald z, p-value, interval and odds ratio."""
    z_crit = float(quantiles.norm_ppf(0.5 + confidence / 2))
    out = []
    for name, b, s in zip(names, beta, se, strict=True):
        z = float(b / s) if s > 0 else math.inf
        out.append(Coefficient(
            name, float(b), float(s), z, float(2 * quantiles.norm_sf(abs(z))),
            float(b - z_crit * s), float(b + z_crit * s),
        ))
    return out


def hessian_of_gradient(gradient: Callable[[np.ndarray], np.ndarray],
                        theta: np.ndarray) -> np.ndarray:
    """The Hessian of a function from central differences of its analytic gradient.

    The step is 1e-5 relative to each coordinate (at least 1e-5); the result is symmetrised.
    """
    k = len(theta)
    out = np.zeros((k, k))
    for j in range(k):
        h = 1e-5 * max(1.0, abs(float(theta[j])))
        up, down = theta.copy(), theta.copy()
        up[j] += h
        down[j] -= h
        out[:, j] = (gradient(up) - gradient(down)) / (2 * h)
    return (out + out.T) / 2


def logsumexp(values: np.ndarray, axis: int) -> np.ndarray:
    """log(sum(exp(values))) along ``axis``, without overflow; -inf where every term is -inf.

    scipy.special.logsumexp computes the same, about three times slower on 3,000 x 4 (1.1 against
    0.4 ms) and eight times on a short vector: its array-API dispatch. A mixture model's EM runs
    it on every step (``rrsite power --predictor``: a hundred steps per simulated survey).
    """
    top = np.max(values, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        total = np.log(np.sum(np.exp(values - top), axis=axis, keepdims=True)) + top
    return np.asarray(np.squeeze(total, axis=axis))


def _logistic(eta: np.ndarray) -> np.ndarray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * eta)))


def _clip(lam: np.ndarray) -> np.ndarray:
    return np.asarray(np.clip(lam, 1e-300, 1.0 - 1e-16))


def loglik(beta: np.ndarray, X: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray,
           weights: np.ndarray | None = None) -> float:
    """Sum of y log(lambda) + (1 - y) log(1 - lambda) with lambda = a + b logistic(X beta).

    ``weights``: each row's weight (the pseudo-log-likelihood of a weighted sample).
    """
    lam = _clip(a + b * _logistic(X @ beta))
    terms = np.where(y > 0, np.log(lam), np.log1p(-lam))
    return float(np.sum(terms if weights is None else weights * terms))


def row_scores(beta: np.ndarray, X: np.ndarray, y: np.ndarray, a: np.ndarray,
               b: np.ndarray) -> np.ndarray:
    """Each row's score d loglik_i / d beta (rows x columns)."""
    s = _logistic(X @ beta)
    lam = _clip(a + b * s)
    return np.asarray(X * ((y - lam) / (lam * (1.0 - lam)) * b * s * (1.0 - s))[:, None])


def _derivatives(
    beta: np.ndarray, X: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradient, observed information (-Hessian) and expected (Fisher) information."""
    s = _logistic(X @ beta)
    lam = _clip(a + b * s)
    d = b * s * (1.0 - s)                               # d lambda / d eta
    r = (y - lam) / (lam * (1.0 - lam))                 # d loglik / d lambda
    w = np.ones(len(y)) if weights is None else weights
    gradient = X.T @ (w * r * d)
    curvature = -(y / lam**2 + (1.0 - y) / (1.0 - lam) ** 2) * d**2 + r * d * (1.0 - 2.0 * s)
    observed = -(X.T * (w * curvature)) @ X
    expected = (X.T * (w * d**2 / (lam * (1.0 - lam)))) @ X
    return gradient, observed, expected


def _solve(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray | None:
    """matrix^-1 vector if matrix is positive definite, else None."""
    try:
        factor = np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return None
    return np.asarray(np.linalg.solve(factor.T, np.linalg.solve(factor, vector)))


def starting_values(X: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """Intercept at the logit of the intercept-only ML prevalence in [0.02, 0.98], slopes 0.

    With every slope 0 the log-likelihood sum y log(a + b pi) + (1 - y) log(1 - a - b pi) is
    concave in pi, so a bounded one-dimensional search finds it whatever the rows' designs
    (binary reports, or each row's own report of a design with several: y = 1). Assumes
    column 0 is the intercept when it is constant; otherwise starts at zero.
    """
    beta = np.zeros(X.shape[1])
    if X.shape[1] and np.allclose(X[:, 0], 1.0):
        w = np.ones(len(y)) if weights is None else weights

        def minus(pi: float) -> float:
            lam = _clip(a + b * pi)
            return -float(np.sum(w * np.where(y > 0, np.log(lam), np.log1p(-lam))))

        pi = float(minimize_scalar(minus, bounds=(0.02, 0.98), method="bounded",
                                   options={"xatol": 1e-3}).x)
        beta[0] = math.log(pi / (1.0 - pi))
    return beta


def maximise(
    X: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray,
    names: Sequence[str], start: np.ndarray | None = None, weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Newton with step-halving (Fisher scoring where -Hessian is not positive definite).

    Returns (beta, covariance, loglik, iterations); raises RegressionError with a clear message
    on separation, a singular information matrix or no convergence. ``weights``: maximise the
    weighted pseudo-log-likelihood (the covariance is then the inverse of its information, not
    a design-based one: see survey_design.design_logit).
    """
    beta = (starting_values(X, y, a, b, weights) if start is None
            else np.array(start, dtype=np.float64))
    current = loglik(beta, X, y, a, b, weights)
    for iteration in range(1, MAX_ITERATIONS + 1):
        gradient, observed, expected = _derivatives(beta, X, y, a, b, weights)
        step = _solve(observed, gradient)
        if step is None:
            step = _solve(expected, gradient)
        if step is None:
            raise RegressionError(
                "the information matrix is singular: the covariates are collinear or a column "
                "is constant in the rows used (" + ", ".join(names) + ")"
            )
        for _ in range(MAX_HALVINGS):
            candidate = beta + step
            value = loglik(candidate, X, y, a, b, weights)
            if value >= current - 1e-12 * max(1.0, abs(current)):
                break
            step = step / 2.0
        else:
            raise RegressionError(
                f"no convergence: the log-likelihood does not increase after {MAX_HALVINGS} "
                f"step halvings (iteration {iteration})"
            )
        beta, previous, current = candidate, current, value
        too_big = np.abs(beta) > SEPARATION_BOUND
        if too_big.any():
            which = ", ".join(n for n, big in zip(names, too_big, strict=True) if big)
            raise RegressionError(
                f"separation: the coefficient of {which} grows without bound (|log odds ratio| "
                f"> {SEPARATION_BOUND:g}): the estimated prevalence goes to 0 or 1 for some "
                "covariate pattern (it predicts the answer perfectly, or, with a randomized "
                "answer, its 'yes' reports are no more frequent than the design alone gives, "
                "or as frequent as a carrier's); merge sparse categories or drop the term"
            )
        if float(np.max(np.abs(step), initial=0.0)) < 1e-9 and abs(current - previous) < TOLERANCE:
            gradient, observed, _ = _derivatives(beta, X, y, a, b, weights)
            try:
                covariance = np.linalg.inv(observed)
            except np.linalg.LinAlgError as error:
                raise RegressionError("the observed information is singular at the optimum: "
                                      "the model is not identified by these data") from error
            if not np.all(np.isfinite(covariance)) or np.any(np.diag(covariance) <= 0):
                raise RegressionError(
                    "the observed information is not positive definite at the optimum (a "
                    "boundary or saddle point): the model is not identified by these data"
                )
            return beta, covariance, current, iteration
    raise RegressionError(f"no convergence after {MAX_ITERATIONS} Newton iterations")


def bias_reduce(
    X: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray, names: Sequence[str],
    start: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Solve Kosmidis & Firth's adjusted score (see BiasReduced) by quasi-Fisher scoring.

    Starts at ``start`` (the ML estimate); each step is (X'WX)^-1 U*, halved while it would
    leave the separation bound. Returns (beta, covariance, iterations).
    """
    beta = np.array(start, dtype=np.float64)
    for iteration in range(1, MAX_ITERATIONS + 1):
        s = _logistic(X @ beta)
        lam = _clip(a + b * s)
        d = b * s * (1.0 - s)                       # F'(eta)
        d2 = d * (1.0 - 2.0 * s)                    # F''(eta)
        v = lam * (1.0 - lam)
        info = (X.T * (d**2 / v)) @ X
        try:
            factor = np.linalg.cholesky(info)
        except np.linalg.LinAlgError as error:
            raise RegressionError("bias reduction: the expected information is singular ("
                                  + ", ".join(names) + ")") from error
        # h_i / w_i = x_i' (X'WX)^-1 x_i, so h_i d'_i / w_i needs no division by w_i (which is 0
        # on rows whose design carries no information).
        leverage_over_w = np.sum(np.linalg.solve(factor, X.T) ** 2, axis=0)
        adjusted = X.T @ ((d / v) * (y - lam + 0.5 * leverage_over_w * d2))
        step = np.linalg.solve(factor.T, np.linalg.solve(factor, adjusted))
        while np.any(np.abs(beta + step) > SEPARATION_BOUND) and np.max(np.abs(step)) > 1e-12:
            step = step / 2.0
        beta = beta + step
        if float(np.max(np.abs(step), initial=0.0)) < 1e-10:
            s = _logistic(X @ beta)
            lam = _clip(a + b * s)
            d = b * s * (1.0 - s)
            info = (X.T * (d**2 / (lam * (1.0 - lam)))) @ X
            return beta, np.linalg.inv(info), iteration
    raise RegressionError(f"bias reduction: no convergence after {MAX_ITERATIONS} iterations")


def check_design(a: np.ndarray, b: np.ndarray) -> None:
    """Some row's design must make the report depend on the truth (p00 + p11 != 1)."""
    if a.size and float(np.max(np.abs(b))) <= 1e-12:
        raise RegressionError(
            "the design cannot identify the model: p00 + p11 = 1 (the report does not depend on "
            "the true answer) in every row used"
        )
    # p00 + p11 < 1 (e.g. crosswise with p < 1/2, RRreg's report 1 = "same") is fine: the
    # likelihood is the same function of beta; only p00 + p11 = 1 carries no information.
    _check_probabilities(a, b)


def _check_probabilities(a: np.ndarray, b: np.ndarray) -> None:
    """P(report | no) = a and P(report | yes) = a + b must lie in [0, 1] in every row."""
    if np.any(a < -1e-12) or np.any(a > 1 + 1e-12) or np.any(a + b < -1e-12) \
            or np.any(a + b > 1 + 1e-12):
        raise RegressionError("a design's probabilities are outside [0, 1]")


def _check_rows(X: np.ndarray, y: np.ndarray, names: Sequence[str]) -> None:
    """Rows to fit, 0/1 reports, and X, y and names of matching shapes."""
    if len(y) == 0:
        raise RegressionError("no rows to fit (every row misses the outcome or a covariate)")
    if not np.all((y == 0) | (y == 1)):
        raise RegressionError("the outcome must be 0/1 reports")
    if X.shape[0] != len(y) or X.shape[1] != len(names):
        raise RegressionError("X, y and names do not agree in shape")


def fit(
    X: np.ndarray, y: np.ndarray, p00: np.ndarray | float, p11: np.ndarray | float,
    names: Sequence[str], terms: Sequence[tuple[str, Sequence[int]]] = (),
    confidence: float = 0.95, bias_reduction: bool = False,
) -> Fit:
    """Fit the randomized-response logit and the likelihood-ratio tests.

    ``bias_reduction`` also solves Kosmidis & Firth's adjusted score (``Fit.bias_reduced``);
    the maximum-likelihood results (which RRreg's RRlog gives) are unchanged.

    ``X`` is (rows x columns), column 0 the intercept; ``y`` the reports (0/1); ``p00``/``p11``
    each row's design (or one number for all); ``terms`` names the formula's terms with the
    columns each owns (each term is dropped in turn for its LR test; the whole-model test drops
    every column but the intercept).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    p00a = np.broadcast_to(np.asarray(p00, dtype=np.float64), (n,))
    p11a = np.broadcast_to(np.asarray(p11, dtype=np.float64), (n,))
    a = 1.0 - p00a
    b = p00a + p11a - 1.0
    _check_rows(X, y, names)
    check_design(a, b)
    beta, covariance, value, iterations = maximise(X, y, a, b, names)
    result = Fit(list(names), beta, covariance, value, n, iterations, confidence)
    if bias_reduction:
        reduced, reduced_cov, steps = bias_reduce(X, y, a, b, names, beta)
        result.bias_reduced = BiasReduced(list(names), reduced, reduced_cov, steps, confidence)
    for term, columns in terms:
        keep = [j for j in range(X.shape[1]) if j not in set(columns)]
        result.terms.append(_lr_test(term, X, y, a, b, names, keep, value, len(columns)))
    if X.shape[1] > 1:
        result.model_test = _lr_test("model", X, y, a, b, names, [0], value, X.shape[1] - 1)
    return result


def _lr_test(
    term: str, X: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray,
    names: Sequence[str], keep: list[int], full: float, df: int,
) -> TermTest:
    reduced = maximise(X[:, keep], y, a, b, [names[j] for j in keep])[2]
    return _test(term, full, reduced, df)


# ------------------------------------------------- two-group designs: a nuisance parameter

#: The parameter each two-group design estimates jointly with the coefficients.
NUISANCE_OF_MODEL = {"SLD": "t", "UQTunknown": "piUQ", "CDM": "gamma", "CDMsym": "gamma"}
NUISANCE_MEANING = {
    "t": "probability that a carrier answers truthfully (SLD's t)",
    "piUQ": "yes-rate of the innocuous question (unrelated-unknown; RRlog's pi)",
    "gamma": "share of cheaters, who say 'no' whatever the instruction (CDM's gamma)",
}
#: An observed information whose smallest eigenvalue is below this share of its largest is
#: singular: the data lie on a ridge of the likelihood (e.g. one group only).
IDENTIFIED_CONDITION = 1e-12
#: Starting values of the nuisance parameter; the fit keeps the best of them.
NUISANCE_STARTS = (0.8, 0.5, 0.2)


@dataclass
class Nuisance:
    """The two-group design's parameter: estimate, SE (observed information) and interval."""

    name: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    ci_method: str
    on_boundary: bool

    @property
    def meaning(self) -> str:
        """What the parameter is, in words."""
        return NUISANCE_MEANING.get(self.name, self.name)

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of docs/contracts.md ("analyze --model": ``nuisance``)."""
        return {"name": self.name, "estimate": self.estimate, "se": self.se,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "ci_method": self.ci_method,
                "on_boundary": self.on_boundary, "meaning": self.meaning}


@dataclass
class NuisanceFit:
    """A fit of beta and one design parameter tau in [0, 1] (SLD's t, piUQ, CDM's gamma).

    ``covariance`` is over (beta..., tau), from the observed information, as RRreg's RRlog
    (``solve(-hessian)`` of its likelihood in the same parameters). On the boundary of tau the
    same matrix (the Hessian of the likelihood's smooth extension) when it is positive definite,
    else beta's block with tau held fixed and tau's variance NaN.
    """

    names: list[str]
    beta: np.ndarray
    tau: float
    covariance: np.ndarray
    loglik: float
    n: int
    iterations: int
    on_boundary: bool

    @property
    def se(self) -> np.ndarray:
        """Standard errors of (beta..., tau)."""
        return np.sqrt(np.diag(self.covariance))


def two_group_rates(design: Any, group: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per row (a0, a1, b0, b1), from ``models.Design.pw`` (RRreg's getPW).

    P(report 1 | x) = a + b logistic(x'beta) with a = a0 + a1 tau and b = b0 + b1 tau.

    SLD and UQTunknown: P(report 1 | state) is affine in their second parameter (t, piUQ), so
    two evaluations give the coefficients exactly. CDM and CDMsym: tau is the cheaters' share
    gamma, constant over the covariates; the coefficients model the carriers among those who
    follow the instruction (cheaters say "no"): P(yes | x) = (1 - gamma) (P(yes | non-carrier)
    + (P(yes | carrier) - P(yes | non-carrier)) logistic(x'beta)). ``group``: 1 or 2 per row
    (0: asked directly, the identity).
    """
    group = np.asarray(group)
    out = np.zeros((4, len(group)))
    for g in (1, 2):
        if design.model in ("CDM", "CDMsym"):
            pw = np.asarray(design.pw(g), dtype=np.float64)   # carrier, non-carrier, cheater
            carrier, other = pw[1, 0], pw[1, 1]
            a0, a1, b0, b1 = other, -other, carrier - other, -(carrier - other)
        else:
            at0 = np.asarray(design.pw(g, [0.5, 0.0]), dtype=np.float64)
            at1 = np.asarray(design.pw(g, [0.5, 1.0]), dtype=np.float64)
            a0, a1 = at0[1, 0], at1[1, 0] - at0[1, 0]
            b0 = at0[1, 1] - at0[1, 0]
            b1 = (at1[1, 1] - at1[1, 0]) - b0
        rows = group == g
        out[:, rows] = np.array([[a0], [a1], [b0], [b1]])
    direct = group == 0
    out[:, direct] = np.array([[0.0], [0.0], [1.0], [0.0]])
    return out[0], out[1], out[2], out[3]


def _nuisance_terms(
    theta: np.ndarray, X: np.ndarray, y: np.ndarray, coef: tuple[np.ndarray, ...],
) -> tuple[float, np.ndarray, np.ndarray]:
    a0, a1, b0, b1 = coef
    beta, tau = theta[:-1], theta[-1]
    s = _logistic(X @ beta)
    a, b = a0 + a1 * tau, b0 + b1 * tau
    lam = _clip(a + b * s)
    value = float(np.sum(np.where(y > 0, np.log(lam), np.log1p(-lam))))
    d_eta = b * s * (1 - s)
    d_tau = a1 + b1 * s
    # A trial point far off (tau at a bound) can put lambda at its clip, where these overflow;
    # its log-likelihood is then so low that the step is halved and the point never kept.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = (y - lam) / (lam * (1 - lam))
        w = -(y / lam**2 + (1 - y) / (1 - lam) ** 2)
        Z = np.column_stack([X * d_eta[:, None], d_tau])          # d lambda / d theta
        gradient = Z.T @ r
        hessian = (Z.T * w) @ Z
    k = X.shape[1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        hessian[:k, :k] += (X.T * (r * d_eta * (1 - 2 * s))) @ X
    cross = X.T @ (r * b1 * s * (1 - s))
    hessian[:k, k] += cross
    hessian[k, :k] += cross
    return value, gradient, -hessian


def _nuisance_newton(
    theta: np.ndarray, X: np.ndarray, y: np.ndarray, coef: tuple[np.ndarray, ...],
    names: Sequence[str],
) -> tuple[np.ndarray, float, np.ndarray, int]:
    """Newton with step-halving from theta, tau kept in [0, 1].

    tau is held at a bound while the gradient points out of [0, 1]; beta alone then takes a
    Newton step.
    """
    current, gradient, information = _nuisance_terms(theta, X, y, coef)
    for iteration in range(1, MAX_ITERATIONS + 1):
        free = np.ones(len(theta), dtype=bool)
        if (theta[-1] <= 0.0 and gradient[-1] <= 0.0) or (theta[-1] >= 1.0 and gradient[-1] >= 0.0):
            free[-1] = False
        block = information[np.ix_(free, free)]
        solved = _solve(block, gradient[free])
        if solved is None:
            solved = gradient[free] / (np.abs(np.diag(block)) + 1e-8)
        step = np.zeros(len(theta))
        step[free] = solved
        for _ in range(MAX_HALVINGS):
            candidate = theta + step
            candidate[-1] = min(max(candidate[-1], 0.0), 1.0)
            value, g2, i2 = _nuisance_terms(candidate, X, y, coef)
            if value >= current - 1e-12 * max(1.0, abs(current)):
                break
            step = step / 2.0
        else:
            raise RegressionError(f"no convergence: the log-likelihood does not increase after "
                                  f"{MAX_HALVINGS} step halvings (iteration {iteration})")
        moved = float(np.max(np.abs(candidate - theta)))
        theta, previous, current, gradient, information = candidate, current, value, g2, i2
        if np.any(np.abs(theta[:-1]) > SEPARATION_BOUND):
            which = ", ".join(n for n, v in zip(names, theta[:-1], strict=True)
                              if abs(v) > SEPARATION_BOUND)
            raise RegressionError(f"separation: the coefficient of {which} grows without bound")
        if moved < 1e-9 and abs(current - previous) < TOLERANCE:
            return theta, current, information, iteration
    raise RegressionError(f"no convergence after {MAX_ITERATIONS} Newton iterations")


def fit_nuisance(
    X: np.ndarray, y: np.ndarray, coef: tuple[np.ndarray, ...], names: Sequence[str],
    tau_start: float | None = None, boundary: float = 1e-6,
) -> NuisanceFit:
    """Maximise over (beta, tau), tau kept in [0, 1].

    Newton with step-halving from several starting values of tau (``tau_start``, else
    NUISANCE_STARTS), keeping the best.

    ``coef`` is :func:`two_group_rates`' (a0, a1, b0, b1). Raises RegressionError as ``fit``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    a0, a1, b0, b1 = coef
    if not np.any(a1 != 0) and not np.any(b1 != 0):
        raise RegressionError("the design has no second parameter to estimate")
    starts = NUISANCE_STARTS if tau_start is None else (tau_start,)
    best: tuple[np.ndarray, float, np.ndarray, int] | None = None
    failure: RegressionError | None = None
    for tau0 in starts:
        tau0 = min(max(tau0, 0.05), 0.95)
        theta = np.append(starting_values(X, y, a0 + a1 * tau0, b0 + b1 * tau0), tau0)
        try:
            found = _nuisance_newton(theta, X, y, coef, names)
        except RegressionError as error:
            failure = failure or error
            continue
        if best is None or found[1] > best[1] + 1e-9:
            best = found
    if best is None:
        assert failure is not None
        raise failure
    theta, value, information, iterations = best
    tau = float(theta[-1])
    on_boundary = not boundary < tau < 1 - boundary
    k = X.shape[1]
    # on a bound of tau only beta's block must be regular (tau may then be held fixed)
    eigen = np.linalg.eigvalsh(information[:k, :k] if on_boundary else information)
    if not eigen[-1] > 0 or eigen[0] < eigen[-1] * IDENTIFIED_CONDITION:
        raise RegressionError("the observed information is singular at the optimum: the two "
                              "groups cannot identify the model (are both groups present, with "
                              "different p?)")
    try:
        covariance = np.linalg.inv(information)
        usable = bool(np.all(np.isfinite(covariance)) and np.all(np.diag(covariance) > 0))
    except np.linalg.LinAlgError:
        usable = False
    if not usable and on_boundary:
        try:
            inner = np.linalg.inv(information[:k, :k])
        except np.linalg.LinAlgError as error:
            raise RegressionError("the observed information is singular at the optimum: "
                                  "the model is not identified by these data") from error
        covariance = np.full((k + 1, k + 1), math.nan)
        covariance[:k, :k] = inner
        usable = bool(np.all(np.diag(inner) > 0))
    if not usable:
        raise RegressionError("the observed information is singular at the optimum: the two "
                              "groups cannot identify the model (do they use different p?)")
    return NuisanceFit(list(names), theta[:-1], tau, covariance, value, len(y), iterations,
                       on_boundary)


def _tau_interval(
    X: np.ndarray, y: np.ndarray, coef: tuple[np.ndarray, ...], names: Sequence[str],
    result: NuisanceFit, confidence: float,
) -> tuple[float, float]:
    """Profile-likelihood interval of tau: {tau : max_beta loglik(beta, tau) >= max - chi2/2}.

    The profile at a fixed tau is the one-group fit with a = a0 + a1 tau, b = b0 + b1 tau; where
    that fit fails, the likelihood at the joint fit's beta (a lower bound of the profile) is used.
    """
    a0, a1, b0, b1 = coef
    target = result.loglik - float(quantiles.chi2_ppf(confidence, 1)) / 2.0

    def excess(tau: float) -> float:
        a, b = a0 + a1 * tau, b0 + b1 * tau
        floor = loglik(result.beta, X, y, a, b)
        try:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                value = maximise(X, y, a, b, names, start=result.beta)[2]
        except RegressionError:
            value = floor
        return max(value, floor) - target

    def limit(edge: float) -> float:
        if abs(result.tau - edge) < 1e-9 or excess(edge) >= 0:
            return edge
        return float(brentq(excess, min(edge, result.tau), max(edge, result.tau), xtol=1e-7))

    return limit(0.0), limit(1.0)


def fit_two_group(
    X: np.ndarray, y: np.ndarray, coef: tuple[np.ndarray, ...], names: Sequence[str],
    nuisance: str, terms: Sequence[tuple[str, Sequence[int]]] = (), confidence: float = 0.95,
) -> Fit:
    """The randomized-response logit of a two-group design (RRlog's SLD, UQTunknown, CDM).

    ``coef`` per row from :func:`two_group_rates` (rows of one-group versions have a1 = b1 = 0);
    ``nuisance`` names tau (``NUISANCE_MEANING``). Returns a Fit whose ``covariance`` is beta's
    block of the joint inverse information and whose ``nuisance`` has tau's estimate, SE and
    profile-likelihood interval; the LR tests re-estimate tau in each reduced model.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    _check_rows(X, y, names)
    a0, a1, b0, b1 = (np.asarray(c, dtype=np.float64) for c in coef)
    coef = (a0, a1, b0, b1)
    for tau in (0.0, 1.0):      # affine in tau: inside [0, 1] at both ends, inside throughout
        _check_probabilities(a0 + a1 * tau, b0 + b1 * tau)
    joint = fit_nuisance(X, y, coef, names)
    k = X.shape[1]
    result = Fit(list(names), joint.beta, joint.covariance[:k, :k], joint.loglik, n,
                 joint.iterations, confidence)
    low, high = _tau_interval(X, y, coef, names, joint, confidence)
    result.nuisance = Nuisance(nuisance, joint.tau, float(joint.se[-1]), low, high,
                               "profile-likelihood", joint.on_boundary)
    for term, columns in terms:
        keep = [j for j in range(k) if j not in set(columns)]
        reduced = fit_nuisance(X[:, keep], y, coef, [names[j] for j in keep]).loglik
        result.terms.append(_test(term, joint.loglik, reduced, len(columns)))
    if k > 1:
        reduced = fit_nuisance(X[:, [0]], y, coef, [names[0]]).loglik
        result.model_test = _test("model", joint.loglik, reduced, k - 1)
    return result


def _test(term: str, full: float, reduced: float, df: int) -> TermTest:
    chi2 = max(0.0, 2.0 * (full - reduced))
    return TermTest(term, df, chi2, float(quantiles.chi2_sf(chi2, df)))
