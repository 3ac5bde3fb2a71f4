"""Pearson correlations between randomized and direct variables (RRreg's ``RRcor``).

MATH.md section 11. Fox & Tracy (1984, Social Science Research 13, 188-197): a randomized report
is the true value plus noise independent of everything else. Per row, with the design of the
row's own version, a yes/no report z (0/1; RRreg's report 1) has

    E[z | X] = a + b X,   a = P(report 1 | no), b = P(report 1 | yes) - P(report 1 | no)

so x_est = (z - a) / b is unbiased for the true X, and for two variables with independent
randomizations Cov(x_est_i, x_est_k) = Cov(X_i, X_k). A direct variable is its own x_est
(a = 0, b = 1). RRcor's estimate is the observed correlation of the x_est scaled up by the
noise's share of their variance:

    r_ik = cor(x_est_i, x_est_k) * sqrt((1 + q_i) (1 + q_k)),   1 + q = Var(x_est) / Var(X)

with Var(X) = pi (1 - pi) for a yes/no question (pi = mean x_est, RRreg's moment estimate) and the
sample variance (over n - 1) for a direct one, and Var(x_est) the design's: the mean over rows of
lambda_r (1 - lambda_r) / b_r^2, lambda_r = a_r + b_r pi (with one version this is RRreg's
``mask.var`` + ``x.var``; with several versions it is the mixture's variance). Correlations
outside [-1, 1] are set to -1 or 1, as RRcor does.

For a randomized number (rrsite.core.numbers designs) Var(X) is not pi (1 - pi) (RRreg's RRcor
uses pi (1 - pi) for its continuous mixture designs, which is wrong). Each row then carries, besides
its unbiased x_est, an unbiased estimate ``second`` of X^2, and Var(X) = mean(second) -
mean(x_est)^2; the correlation is Cov(x_est_i, x_est_k) / sqrt(Var(X_i) Var(X_k)). For a
continuous mixture (with probability p the true number X, else a draw M of a known masking
distribution) this is the moment variance (E[Z^2] - (1 - p) E[M^2]) / p - mu^2
(``mixture_moments``). For ``mixture-unknown`` (group g sends X with probability p_g, else an
innocuous number U of unknown distribution), x_est = c_g z / f_g and second = c_g z^2 / f_g with
f_g the group's share of the rows and c_1 = (1 - p_2) / (p_1 - p_2), c_2 = -(1 - p_1) / (p_1 - p_2):
the mean of x_est is RRreg's mix.unknown estimate, and the innocuous number's moments (and any
covariance of U with the other variables) cancel.

Standard errors and intervals: the nonparametric bootstrap over respondents (RRcor's
``bs.type = "se.n"``), every replicate recomputing the whole estimator (pi included); SE = the
replicates' standard deviation. The interval is Fieller's (1954) for the ratio r = C / S (C the
x_est covariance, S the product of the true values' sds): {rho : (C - rho S)^2 <= z^2
Var(C - rho S)}, with the variances and the covariance of C and S from the bootstrap replicates.
A correlation scaled up by an estimated variance (a noisy randomized number) is a ratio with a
noisy denominator, skewed and biased; the linear combination C - rho S is close to normal, and
Fieller's interval kept 95% where the percentile and BCa intervals fell to 93-94%
(benchmarks/coverage_number_analyses.py). With a mixture-unknown variable the bootstrap
resamples within each group (the groups are assigned by the design, and the estimator
conditions on their sizes, as RRreg's does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

BOOTSTRAP_REPLICATES = 1000
BOOTSTRAP_SEED = 20231
_CHUNK = 50


@dataclass
class CorVariable:
    """One variable, one value per row: ``z`` the report (0/1) or the direct value.

    ``a`` and ``b`` per row (E[z | X] = a + b X); ``binary`` says the true value is yes/no
    (variance pi (1 - pi)); a direct variable has a = 0, b = 1 and binary False unless it is a
    directly asked yes-no question (its sample variance is used either way).
    """

    name: str
    z: np.ndarray
    a: np.ndarray
    b: np.ndarray
    randomized: bool
    #: A two-group design (its a and b depend on the estimated tau; ``a``, ``b`` unused).
    grouped: GroupedDesign | None = None
    #: A randomized number: per row an unbiased estimate of X^2 (None for yes-no and direct).
    second: np.ndarray | None = None
    #: A mixture-unknown number: each row's group (1 or 2), for the stratified bootstrap.
    groups: np.ndarray | None = None

    @property
    def x_est(self) -> np.ndarray:
        """The per-row unbiased estimate of the true value."""
        return np.asarray((self.z - self.a) / self.b)


def mixture_moments(z: np.ndarray, p: float, mask_mean: float,
                    mask_second: float) -> tuple[float, float]:
    """Mean and variance of X when Z = X with probability p, else a mask M (known E M, E M^2).

    mu = (E Z - (1 - p) E M) / p and Var(X) = (E Z^2 - (1 - p) E M^2) / p - mu^2.
    """
    mean = (float(np.mean(z)) - (1 - p) * mask_mean) / p
    second = (float(np.mean(z**2)) - (1 - p) * mask_second) / p
    return mean, second - mean**2


def _moments(x: np.ndarray, w: np.ndarray,
             var: Sequence[CorVariable]) -> tuple[np.ndarray, np.ndarray]:
    """Per weight row (replicate): the x_est covariances and each variable's true-value sd.

    r = cov_ik / (s_i s_k) with s the true values' sd: the sample sd for a direct variable,
    sqrt(mean(second) - mean(x_est)^2) for a number, and RRcor's sd(x_est) / sqrt(1 + q) for a
    yes/no question. NaN where it is undefined.
    """
    n = w.sum(axis=1, keepdims=True)                      # (B, 1)
    mean = (w @ x) / n                                     # (B, m)
    second = np.einsum("bn,ni,nk->bik", w, x, x) / n[:, :, None]
    cov = second - mean[:, :, None] * mean[:, None, :]     # population form; ratios cancel
    sd = np.sqrt(np.maximum(np.einsum("bii->bi", cov), 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        for i, v in enumerate(var):
            if not v.randomized:
                continue
            if v.second is not None:  # a number: Var(X) = mean(second) - mean(x_est)^2
                variance = (w @ v.second) / n[:, 0] - mean[:, i] ** 2
                sd[:, i] = np.where(variance > 0, np.sqrt(np.abs(variance)), np.nan)
                continue
            pi = mean[:, i]
            lam = v.a[None, :] + v.b[None, :] * pi[:, None]
            noise = (w * (lam * (1 - lam) / v.b[None, :] ** 2)).sum(axis=1) / n[:, 0]
            sd[:, i] = sd[:, i] / np.sqrt(noise / (pi * (1 - pi)))   # RRcor's sqrt(1 + q)
    return cov, sd


def _ratios(cov: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Correlations cov_ik / (s_i s_k) per replicate, clipped to [-1, 1], 1 on the diagonal."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / (sd[:, :, None] * sd[:, None, :])
    r = np.clip(r, -1.0, 1.0)
    idx = np.arange(cov.shape[1])
    r[:, idx, idx] = 1.0
    return np.asarray(r)


def _weighted_pieces(x: np.ndarray, w: np.ndarray, var: Sequence[CorVariable]) -> np.ndarray:
    """Correlation matrices for weight rows w (replicates x rows): RRcor on each replicate."""
    return _ratios(*_moments(x, w, var))


def _fieller(cov: np.ndarray, sd: np.ndarray, boot_cov: np.ndarray, boot_sd: np.ndarray,
             confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Fieller's (1954) interval for each ratio r_ik = C / S, C = cov_ik, S = s_i s_k.

    {rho : (C - rho S)^2 <= z^2 Var(C - rho S)} with Var(C), Var(S), Cov(C, S) from the bootstrap
    replicates: a quadratic in rho. Where S is not clearly away from 0 (the quadratic opens
    downwards, or has no real root) the set is unbounded and the interval is [-1, 1]. Clipped
    to [-1, 1].
    """
    from scipy import special

    z = float(special.ndtri(0.5 + confidence / 2))
    m = cov.shape[0]
    low, high = np.full((m, m), np.nan), np.full((m, m), np.nan)
    for i in range(m):
        low[i, i] = high[i, i] = 1.0
        for k in range(i + 1, m):
            C, S = float(cov[i, k]), float(sd[i] * sd[k])
            c_b, s_b = boot_cov[:, i, k], boot_sd[:, i] * boot_sd[:, k]
            ok = np.isfinite(c_b) & np.isfinite(s_b)
            if not (math.isfinite(C) and math.isfinite(S) and S > 0) or ok.sum() < 3:
                continue
            vc, vs = float(np.var(c_b[ok], ddof=1)), float(np.var(s_b[ok], ddof=1))
            ccs = float(np.cov(c_b[ok], s_b[ok])[0, 1])
            qa, qb, qc = S * S - z * z * vs, -2 * (C * S - z * z * ccs), C * C - z * z * vc
            disc = qb * qb - 4 * qa * qc
            if qa <= 0 or disc < 0:
                lo, hi = -1.0, 1.0
            else:
                root = math.sqrt(disc)
                lo, hi = (-qb - root) / (2 * qa), (-qb + root) / (2 * qa)
            low[i, k] = low[k, i] = min(max(lo, -1.0), 1.0)
            high[i, k] = high[k, i] = min(max(hi, -1.0), 1.0)
    return low, high


@dataclass
class CorFit:
    """The correlation matrix, bootstrap SEs and intervals (``interval_method``)."""

    names: list[str]
    r: np.ndarray
    se: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n: int
    confidence: float
    replicates: int
    prevalence: dict[str, float]
    messages: list[str] = field(default_factory=list)
    #: Randomized numbers: the estimated mean of the true numbers.
    means: dict[str, float] = field(default_factory=dict)
    #: Two-group variables' second parameter: per variable name, its estimate and bootstrap
    #: SE and percentile interval (docs/reference/contracts.md, "analyze --cor").
    nuisance: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: How the intervals were made (Fieller's for rrcor; percentiles for rrcor_groups).
    interval_method: str = "Fieller, bootstrap covariance"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (docs/contracts.md, "analyze --cor")."""
        def clean(a: np.ndarray) -> list[list[float | None]]:
            return [[float(v) if math.isfinite(v) else None for v in row] for row in a]
        return {"variables": self.names, "r": clean(self.r), "se": clean(self.se),
                "ci_low": clean(self.ci_low), "ci_high": clean(self.ci_high), "n": self.n,
                "confidence": self.confidence, "se_method": "nonparametric bootstrap",
                "interval_method": self.interval_method, "replicates": self.replicates,
                "prevalence": self.prevalence, "means": self.means, "messages": self.messages,
                "nuisance": self.nuisance}


def rrcor(variables: Sequence[CorVariable], confidence: float = 0.95,
          replicates: int = BOOTSTRAP_REPLICATES, seed: int = BOOTSTRAP_SEED) -> CorFit:
    """RRcor's correlation matrix of complete rows, with bootstrap SEs (module docstring)."""
    if len(variables) < 2:
        raise ValueError("a correlation needs two or more variables")
    x = np.column_stack([v.x_est for v in variables])
    n = len(x)
    if n < 3:
        raise ValueError(f"only {n} complete rows: too few for a correlation")
    for v in variables:
        if np.any(np.abs(v.b) < 1e-12):
            raise ValueError(f"{v.name}: the design's reports do not depend on the true answer")
    cov, sd = _moments(x, np.ones((1, n)), variables)
    r = _ratios(cov, sd)[0]
    messages = []
    prevalence = {}
    means = {}
    for i, v in enumerate(variables):
        if v.second is not None:
            means[v.name] = float(np.mean(x[:, i]))
            if float(np.mean(v.second)) - means[v.name] ** 2 <= 0:
                messages.append(f"{v.name}: the estimated variance of the true numbers is not "
                                "positive: its correlations are undefined")
        elif v.randomized:
            pi = float(np.mean(x[:, i]))
            prevalence[v.name] = pi
            if not 0 < pi < 1:
                messages.append(f"{v.name}: the moment estimate of the prevalence is {pi:.4g}, "
                                "outside (0, 1): its correlations are undefined")
    rng = np.random.default_rng(seed)
    strata = _strata([v.groups for v in variables if v.groups is not None], n)
    covs, sds = [], []
    for start in range(0, replicates, _CHUNK):
        size = min(_CHUNK, replicates - start)
        w = np.zeros((size, n))
        for rows in strata:
            w[:, rows] = rng.multinomial(len(rows), np.full(len(rows), 1.0 / len(rows)),
                                         size=size)
        cov_b, sd_b = _moments(x, w, variables)
        covs.append(cov_b)
        sds.append(sd_b)
    boot_cov, boot_sd = np.concatenate(covs), np.concatenate(sds)
    with np.errstate(invalid="ignore"):
        se = np.nanstd(_ratios(boot_cov, boot_sd), axis=0, ddof=1)
    low, high = _fieller(cov[0], sd[0], boot_cov, boot_sd, confidence)
    return CorFit([v.name for v in variables], r, se, low, high, n, confidence, replicates,
                  prevalence, messages, means=means)


def _strata(groups: Sequence[np.ndarray], n: int) -> list[np.ndarray]:
    """Row indices of each combination of the two-group variables' groups (all rows if none)."""
    if not groups:
        return [np.arange(n)]
    _, label = np.unique(np.column_stack(groups), axis=0, return_inverse=True)
    label = np.asarray(label).reshape(-1)
    return [np.flatnonzero(label == k) for k in range(int(label.max()) + 1)]


def number_variable(name: str, design: Any, z: np.ndarray,
                    groups: np.ndarray | None = None) -> CorVariable:
    """A randomized number's variable: x_est, and an unbiased estimate of X^2 per row.

    ``design`` is an rrsite.core.numbers design; ``mixture-unknown`` needs each row's group.
    Raises ValueError for a design whose reports cannot give Var(X) (duchi: two reports).
    """
    from ..core.numbers import MixtureUnknown

    z = np.asarray(z, dtype=np.float64)
    n = len(z)
    if isinstance(design, MixtureUnknown):
        if groups is None:
            raise ValueError(f"{name}: mixture-unknown needs each row's group")
        g = np.asarray(groups)
        p1, p2 = design.p
        c = np.where(g == 1, (1 - p2) / (p1 - p2), -(1 - p1) / (p1 - p2))
        share = np.where(g == 1, np.mean(g == 1), np.mean(g == 2))
        if np.any(share <= 0) or np.any((g != 1) & (g != 2)):
            raise ValueError(f"{name}: mixture-unknown needs rows in both groups")
        factor = c / share
        return CorVariable(name, z * factor, np.zeros(n), np.ones(n), True,
                           second=z * z * factor, groups=g)
    from .numbers import NumberEstimateError, debias, square_estimate

    r = debias(design, z)
    try:
        second = square_estimate(design, r)
    except NumberEstimateError:
        raise ValueError(f"{name}: design {design.name} sends one of two values whatever the "
                         "number, so its reports carry no estimate of the numbers' "
                         "variance") from None
    return CorVariable(name, r, np.zeros(n), np.ones(n), True, second=second)


# -------------------------------------------------------------------------- two-group designs
#
# RRcor (RRreg 0.7.6) takes UQTunknown and SLD: it estimates the nuisance with RRuni (moment
# estimates, maximum likelihood when they fall outside (0, 1)), computes x_est with each group's
# rates, and averages the pair's correlation over the pair's subgroups (the combinations of the
# two variables' groups), each subgroup's observed correlation scaled up by
# sqrt((1 + q_i[g_i]) (1 + q_k[g_k])) and weighted by n_s / ((1 + q_i[g_i]) (1 + q_k[g_k])).
# Its weights read quotient.list[[j]] where the loop variable is k: j is left at the last
# variable, so the weights are wrong unless the pair's second variable is the last one. Here the
# weights use the pair's own variables; everything else is RRcor's. CDM and CDM-sym (not in
# RRcor) go the same way with tau = gamma, the cheaters' share (P(yes | X) = (1 - gamma)
# (P(yes | X, compliant)): X is a respondent's true answer, cheating assumed independent of it).


@dataclass
class GroupedDesign:
    """A two-group variable: each row's group (1 or 2), the groups' rates and tau's name.

    Per group g, P(report 1 | X) = a0 + a1 tau + (b0 + b1 tau) X (``regression.two_group_rates``);
    """

    group: np.ndarray
    rates: dict[int, tuple[float, float, float, float]]
    nuisance: str


def two_group_moments(lam1: np.ndarray, lam2: np.ndarray,
                      rates: dict[int, tuple[float, float, float, float]],
                      near: float | np.ndarray = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """(pi, tau) solving lam_g = a0_g + a1_g tau + (b0_g + b1_g tau) pi for g = 1, 2.

    RRuni's moment estimator for any design affine in tau (UQTunknown and SLD: one root; CDM's
    bilinear form: a quadratic, the root nearest ``near`` kept). Vectorised over replicates.
    """
    a01, a11, b01, b11 = rates[1]
    a02, a12, b02, b12 = rates[2]
    c1, c2 = np.asarray(lam1, dtype=float) - a01, np.asarray(lam2, dtype=float) - a02
    qa = -a11 * b12 + a12 * b11
    qb = c1 * b12 - a11 * b02 - c2 * b11 + a12 * b01
    qc = c1 * b02 - c2 * b01
    with np.errstate(divide="ignore", invalid="ignore"):
        if abs(qa) < 1e-14:
            tau = -qc / qb
        else:
            root = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
            first, second = (-qb + root) / (2 * qa), (-qb - root) / (2 * qa)
            tau = np.where(np.abs(first - near) <= np.abs(second - near), first, second)
        den1, den2 = b01 + b11 * tau, b02 + b12 * tau
        pi = np.where(np.abs(den1) >= np.abs(den2), (c1 - a11 * tau) / den1,
                      (c2 - a12 * tau) / den2)
    return np.asarray(pi, dtype=float), np.asarray(tau, dtype=float)


def _two_group_ml(rates: dict[int, tuple[float, float, float, float]], n: tuple[float, float],
                  yes: tuple[float, float]) -> tuple[float, float]:
    """(pi, tau) maximising the two groups' binomial likelihood over [0, 1]^2.

    Used where the moment solution (the unconstrained maximum: two groups, two parameters) is
    outside the square, so the maximum is on its edge: the best of the four edges, each a concave
    1-D problem (lambda is affine in pi for a fixed tau and in tau for a fixed pi).
    """
    from scipy.optimize import minimize_scalar

    def loglik(pi: float, tau: float) -> float:
        total = 0.0
        for g in (1, 2):
            a0, a1, b0, b1 = rates[g]
            lam = min(max(a0 + a1 * tau + (b0 + b1 * tau) * pi, 1e-300), 1 - 1e-16)
            total += yes[g - 1] * math.log(lam) + (n[g - 1] - yes[g - 1]) * math.log1p(-lam)
        return total

    best = (-math.inf, math.nan, math.nan)
    for edge in (0.0, 1.0):
        for free_pi in (True, False):
            def negative(x: float, edge: float = edge, free_pi: bool = free_pi) -> float:
                return -(loglik(x, edge) if free_pi else loglik(edge, x))

            found = minimize_scalar(negative, bounds=(0.0, 1.0), method="bounded",
                                    options={"xatol": 1e-10})
            value = -float(found.fun)
            for x in (0.0, 1.0):                       # the corners, exactly
                if -negative(x) > value:
                    value, found.x = -negative(x), x
            if value > best[0]:
                best = (value, float(found.x), edge) if free_pi else (value, edge,
                                                                        float(found.x))
    return best[1], best[2]


def _estimate_two_group(v: CorVariable, w: np.ndarray,
                        near: float | np.ndarray = 0.5) -> tuple[np.ndarray, np.ndarray, int]:
    """Per replicate (pi, tau): moments, ML where they leave (0, 1); and how many fell back."""
    assert v.grouped is not None
    counts, yes = [], []
    for g in (1, 2):
        rows = v.grouped.group == g
        counts.append(w[:, rows].sum(axis=1))
        yes.append(w[:, rows] @ v.z[rows])
    with np.errstate(divide="ignore", invalid="ignore"):
        pi, tau = two_group_moments(yes[0] / counts[0], yes[1] / counts[1], v.grouped.rates,
                                    near)
    outside = ~((pi > 0) & (pi < 1) & (tau > 0) & (tau < 1))
    for b in np.flatnonzero(outside).tolist():
        n_b = (float(counts[0][b]), float(counts[1][b]))
        if min(n_b) == 0:
            pi[b], tau[b] = math.nan, math.nan
            continue
        pi[b], tau[b] = _two_group_ml(v.grouped.rates, n_b, (float(yes[0][b]), float(yes[1][b])))
    return pi, tau, int(outside.sum())


def _grouped_pieces(variables: Sequence[CorVariable], w: np.ndarray,
                    near: dict[str, float] | None = None,
                    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], int]:
    """Correlation matrices (replicates x m x m), each variable's pi, each tau, ML fallbacks."""
    reps, n = w.shape
    m = len(variables)
    xs: list[np.ndarray] = []
    noise: list[np.ndarray | None] = []
    pis: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    taus: dict[str, np.ndarray] = {}
    fallbacks = 0
    for v in variables:
        if v.grouped is not None:
            pi, tau, fell = _estimate_two_group(v, w, (near or {}).get(v.name, 0.5))
            fallbacks += fell
            taus[v.name] = tau
            a, b = np.zeros((reps, n)), np.zeros((reps, n))
            for g, (a0, a1, b0, b1) in v.grouped.rates.items():
                rows = v.grouped.group == g
                a[:, rows] = (a0 + a1 * tau)[:, None]
                b[:, rows] = (b0 + b1 * tau)[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                x = (v.z[None, :] - a) / b
            labels.append(v.grouped.group)
        else:
            a, b = v.a[None, :], v.b[None, :]
            x = np.broadcast_to(v.x_est[None, :], (reps, n))
            with np.errstate(invalid="ignore", divide="ignore"):
                pi = (w * x).sum(axis=1) / w.sum(axis=1)
            labels.append(np.ones(n, dtype=np.int64))
        xs.append(x)
        pis.append(pi)
        if v.randomized:
            lam = a + b * pi[:, None]
            with np.errstate(invalid="ignore", divide="ignore"):
                noise.append(np.broadcast_to(lam * (1 - lam) / b**2, (reps, n)))
        else:
            noise.append(None)
    r = np.zeros((reps, m, m))
    for i in range(m):
        r[:, i, i] = 1.0
        for k in range(i + 1, m):
            num, den = np.zeros(reps), np.zeros(reps)
            pairs = np.column_stack((labels[i], labels[k]))
            for sub in np.unique(pairs, axis=0):
                rows = np.all(pairs == sub, axis=1)
                ws = w[:, rows]
                n_s = ws.sum(axis=1)
                xi, xk = xs[i][:, rows], xs[k][:, rows]
                with np.errstate(invalid="ignore", divide="ignore"):
                    mi, mk = (ws * xi).sum(axis=1) / n_s, (ws * xk).sum(axis=1) / n_s
                    cov = (ws * xi * xk).sum(axis=1) / n_s - mi * mk
                    vi = (ws * xi * xi).sum(axis=1) / n_s - mi**2
                    vk = (ws * xk * xk).sum(axis=1) / n_s - mk**2
                    observed = cov / np.sqrt(np.maximum(vi, 0) * np.maximum(vk, 0))
                    inflation = []
                    for j in (i, k):
                        spread = noise[j]
                        if spread is None:
                            inflation.append(np.ones(reps))
                        else:
                            share = (ws * spread[:, rows]).sum(axis=1) / n_s
                            inflation.append(share / (pis[j] * (1 - pis[j])))
                    weight = n_s / (inflation[0] * inflation[1])
                    num += weight * observed * np.sqrt(inflation[0] * inflation[1])
                    den += weight
            with np.errstate(invalid="ignore", divide="ignore"):
                r[:, i, k] = r[:, k, i] = np.clip(num / den, -1.0, 1.0)
    return r, np.column_stack(pis), taus, fallbacks


def rrcor_groups(variables: Sequence[CorVariable], confidence: float = 0.95,
                 replicates: int = BOOTSTRAP_REPLICATES, seed: int = BOOTSTRAP_SEED) -> CorFit:
    """``rrcor`` with two-group variables (see the block comment above).

    The bootstrap re-estimates each tau (and pi) in every replicate.
    """
    if len(variables) < 2:
        raise ValueError("a correlation needs two or more variables")
    n = len(variables[0].z)
    if n < 3:
        raise ValueError(f"only {n} complete rows: too few for a correlation")
    for v in variables:
        if v.grouped is None and np.any(np.abs(v.b) < 1e-12):
            raise ValueError(f"{v.name}: the design's reports do not depend on the true answer")
        if v.grouped is not None:
            present = set(np.unique(v.grouped.group).tolist())
            if present != {1, 2}:
                raise ValueError(f"{v.name}: every respondent is in one group; the two groups "
                                 "together estimate its second parameter")
    r, pis, taus, fell = _grouped_pieces(variables, np.ones((1, n)))
    r = r[0]
    messages: list[str] = []
    prevalence: dict[str, float] = {}
    for i, v in enumerate(variables):
        if v.randomized:
            prevalence[v.name] = float(pis[0, i])
            if not 0 < pis[0, i] < 1:
                messages.append(f"{v.name}: the estimate of the prevalence is {pis[0, i]:.4g}, "
                                "outside (0, 1): its correlations are undefined")
    if fell:
        messages.append("a two-group variable's moment estimates fall outside (0, 1): its pi "
                        "and tau are the maximum-likelihood estimates (as RRuni)")
    near = {name: float(t[0]) for name, t in taus.items()}
    rng = np.random.default_rng(seed)
    samples, tau_samples = [], {name: [] for name in taus}  # type: ignore[var-annotated]
    for start in range(0, replicates, _CHUNK):
        size = min(_CHUNK, replicates - start)
        w = rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)
        boot, _, boot_taus, _ = _grouped_pieces(variables, w, near)
        samples.append(boot)
        for name, t in boot_taus.items():
            tau_samples[name].append(t)
    boot = np.concatenate(samples)
    alpha = 1 - confidence
    with np.errstate(invalid="ignore"):
        se = np.nanstd(boot, axis=0, ddof=1)
        low = np.nanquantile(boot, alpha / 2, axis=0)
        high = np.nanquantile(boot, 1 - alpha / 2, axis=0)
    nuisance = {}
    for v in variables:
        if v.grouped is None:
            continue
        t = np.concatenate(tau_samples[v.name])
        with np.errstate(invalid="ignore"):
            nuisance[v.name] = {
                "name": v.grouped.nuisance, "estimate": near[v.name],
                "se": float(np.nanstd(t, ddof=1)),
                "ci_low": float(np.nanquantile(t, alpha / 2)),
                "ci_high": float(np.nanquantile(t, 1 - alpha / 2)),
                "se_method": "nonparametric bootstrap (re-estimated in every replicate)",
                "interval_method": "bootstrap percentile",
            }
    return CorFit([v.name for v in variables], r, se, low, high, n, confidence, replicates,
                  prevalence, messages, nuisance=nuisance, interval_method="bootstrap percentile")
