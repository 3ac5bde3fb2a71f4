"""De-biasing estimators (MATH.md sections 1 and 5): from report counts to true rates.

Binary (a yes/no question with design p00, p11), from n "yes" reports out of N:

    lambda_hat = n / N
    pi_unbiased = (lambda_hat - (1 - p00)) / (p00 + p11 - 1)
    se = sqrt(lambda_hat (1 - lambda_hat) / N) / (p00 + p11 - 1)

The estimate is the maximum-likelihood estimate on [0, 1], i.e. pi_unbiased clipped (``clipped``
says when). Categorical (k answers, k x k design P): pi_unbiased = lambda_hat P^-1 with the
multinomial covariance P^-T (diag(lambda) - lambda lambda^T) / N P^-1, the estimate the constrained
MLE on the probability simplex by EM.

Variance convention: the standard errors are those of random sampling from a population (the
reports are multinomial with lambda = pi P). The fixed-population variance (the respondents'
true answers held fixed, only the coins random) is smaller by pi (1 - pi) / N and is reported as
``se_fixed``.

Several designs for one question (the survey was edited between versions) are never added into
one count: their joint likelihood is maximised (``pooled_binary``, ``pooled_categorical``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import z_value
from .intervals import chebyshev_k, mapped_interval, rate_interval

#: Off-diagonal entries of a column equal within this tolerance make that column "k-RR-like": the
#: report count of that value then depends on that value's true rate alone and is binomial.
COLUMN_TOLERANCE = 1e-12
#: EM stops when no component moves by more than this.
EM_TOLERANCE = 1e-13
EM_MAX_ITERATIONS = 200_000

KIND_BINARY = "binary"
KIND_CATEGORICAL = "categorical"


@dataclass
class Estimate:
    """What the reports say about one question (or one subgroup of it).

    ``labels`` are the answers estimated: ``("yes",)`` for a yes/no question (pi = the "yes"
    rate), every value for a categorical one. The arrays below are index-aligned with ``labels``.
    ``observed`` is the report rate lambda_hat; ``ci`` is clipped to [0, 1]; ``degenerate`` marks
    intervals that collapsed to [0, 0] or [1, 1]; ``chebyshev`` is k * se with
    k = 1 / sqrt(1 - confidence) (distribution-free, conservative).
    """

    kind: str
    values: tuple[str, ...]
    labels: tuple[str, ...]
    n: int
    counts: dict[str, int]
    confidence: float
    ci_method: str
    observed: np.ndarray
    estimate: np.ndarray
    unbiased: np.ndarray
    se: np.ndarray
    se_fixed: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    chebyshev: np.ndarray
    clipped: bool = False
    degenerate: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    pooled: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """No answers at all: every figure is undefined."""
        return self.n == 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures: numbers for a binary question, objects keyed by value otherwise."""

        def pick(array: np.ndarray) -> Any:
            numbers = [_number(x) for x in array]
            if self.kind == KIND_BINARY:
                return numbers[0]
            return dict(zip(self.labels, numbers, strict=True))

        def pair(low: float, high: float) -> list[float | None]:
            return [_number(low), _number(high)]

        ci: Any = [pair(lo, hi) for lo, hi in zip(self.ci_low, self.ci_high, strict=True)]
        cheb_ci: Any = [
            pair(max(0.0, u - m), min(1.0, u + m)) if math.isfinite(u) and math.isfinite(m)
            else [None, None]
            for u, m in zip(self.unbiased, self.chebyshev, strict=True)
        ]
        degenerate: Any = [bool(x) for x in self.degenerate]
        if self.kind == KIND_BINARY:
            ci, cheb_ci, degenerate = ci[0], cheb_ci[0], degenerate[0]
        else:
            ci = dict(zip(self.labels, ci, strict=True))
            cheb_ci = dict(zip(self.labels, cheb_ci, strict=True))
            degenerate = dict(zip(self.labels, degenerate, strict=True))
        return {
            "n": self.n,
            "counts": dict(self.counts),
            "observed": pick(self.observed),
            "estimate": pick(self.estimate),
            "unbiased": pick(self.unbiased),
            "se": pick(self.se),
            "se_fixed": pick(self.se_fixed),
            "ci": ci,
            "ci_method": self.ci_method,
            "confidence": self.confidence,
            "clipped": self.clipped,
            "degenerate": degenerate,
            "chebyshev": {"margin": pick(self.chebyshev), "ci": cheb_ci},
            "pooled": self.pooled,
            "notes": list(self.notes),
        }


def _number(value: float) -> float | None:
    """JSON has no NaN or infinity: undefined figures become null."""
    value = float(value)
    return value if math.isfinite(value) else None


def _empty(kind: str, values: Sequence[str], labels: Sequence[str], counts: dict[str, int],
           confidence: float, method: str) -> Estimate:
    nan = np.full(len(labels), np.nan)
    return Estimate(
        kind=kind, values=tuple(values), labels=tuple(labels), n=0, counts=counts,
        confidence=confidence, ci_method=method, observed=nan, estimate=nan.copy(),
        unbiased=nan.copy(), se=nan.copy(), se_fixed=nan.copy(), ci_low=nan.copy(),
        ci_high=nan.copy(), chebyshev=nan.copy(), degenerate=np.zeros(len(labels), dtype=bool),
        notes=["no answers"],
    )


def _degenerate(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The interval collapsed onto a boundary: [0, 0] or [1, 1]."""
    return (high <= 0.0) | (low >= 1.0)


# --------------------------------------------------------------------------- binary, one design


def binary_estimate(
    n_yes: int, n: int, p00: float, p11: float, confidence: float = 0.95, method: str = "exact",
    values: Sequence[str] = ("no", "yes"),
) -> Estimate:
    """The estimates of MATH.md section 1 for one design from n_yes "yes" reports out of n."""
    counts = {values[0]: int(n - n_yes), values[1]: int(n_yes)}
    if n == 0:
        return _empty(KIND_BINARY, values, (values[1],), counts, confidence, method)
    gain = p00 + p11 - 1.0
    rate = n_yes / n
    unbiased = (rate - (1.0 - p00)) / gain
    estimate = min(max(unbiased, 0.0), 1.0)
    se = math.sqrt(rate * (1.0 - rate) / n) / gain
    se_fixed = math.sqrt(max(se * se - estimate * (1.0 - estimate) / n, 0.0))
    low, high = mapped_interval(n_yes, n, p00, p11, confidence, method)
    result = Estimate(
        kind=KIND_BINARY, values=tuple(values), labels=(values[1],), n=int(n), counts=counts,
        confidence=confidence, ci_method=method, observed=np.array([rate]),
        estimate=np.array([estimate]), unbiased=np.array([unbiased]), se=np.array([se]),
        se_fixed=np.array([se_fixed]), ci_low=np.array([low]), ci_high=np.array([high]),
        chebyshev=np.array([chebyshev_k(confidence) * se]),
        clipped=not 0.0 <= unbiased <= 1.0,
    )
    result.degenerate = _degenerate(result.ci_low, result.ci_high)
    if result.clipped:
        result.notes.append(
            f"the unbiased estimate {unbiased:.4g} lies outside [0, 1]; the estimate is clipped"
        )
    if result.degenerate[0]:
        side = "0" if high <= 0.0 else "1"
        result.notes.append(f"the whole interval lies beyond {side}: it collapses to "
                            f"[{side}, {side}]")
    return result


# ----------------------------------------------------------------------- binary, pooled designs


@dataclass(frozen=True)
class BinaryPart:
    """Reports of one design: n_yes "yes" out of n, under p00, p11."""

    n_yes: int
    n: int
    p00: float
    p11: float


def _arrays(parts: Sequence[BinaryPart]) -> tuple[np.ndarray, ...]:
    used = [part for part in parts if part.n > 0]
    yes = np.array([part.n_yes for part in used], dtype=np.float64)
    total = np.array([part.n for part in used], dtype=np.float64)
    p00 = np.array([part.p00 for part in used])
    p11 = np.array([part.p11 for part in used])
    return yes, total - yes, p00, p11


def joint_loglik(pi: float, parts: Sequence[BinaryPart]) -> float:
    """The joint log-likelihood of several designs' reports at pi.

    sum_d [n_d log lambda_d(pi) + (N_d - n_d) log(1 - lambda_d(pi))], with 1 - lambda computed
    as pi (1 - p11) + (1 - pi) p00 (MATH.md section 4's numerical trap).
    """
    yes, no, p00, p11 = _arrays(parts)
    lam = pi * p11 + (1.0 - pi) * (1.0 - p00)
    mu = pi * (1.0 - p11) + (1.0 - pi) * p00
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(yes > 0, yes * np.log(lam), 0.0) + np.where(no > 0, no * np.log(mu), 0.0)
    return float(np.sum(terms))


def _score(pi: float, yes: np.ndarray, no: np.ndarray, p00: np.ndarray, p11: np.ndarray) -> float:
    """d/dpi of the joint log-likelihood; decreasing in pi (the likelihood is concave)."""
    lam = pi * p11 + (1.0 - pi) * (1.0 - p00)
    mu = pi * (1.0 - p11) + (1.0 - pi) * p00
    gain = p00 + p11 - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = gain * (np.where(yes > 0, yes / lam, 0.0) - np.where(no > 0, no / mu, 0.0))
    return float(np.sum(terms))


def _bisect(function: Any, low: float, high: float, iterations: int = 200) -> float:
    """Root of a function that is positive at ``low`` and negative at ``high`` (or vice versa)."""
    f_low = function(low)
    for _ in range(iterations):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        f_middle = function(middle)
        if (f_middle > 0) == (f_low > 0):
            low, f_low = middle, f_middle
        else:
            high = middle
    return 0.5 * (low + high)


def pooled_mle(parts: Sequence[BinaryPart]) -> float:
    """The maximiser on [0, 1] of the joint log-likelihood of several designs' reports."""
    yes, no, p00, p11 = _arrays(parts)
    if len(yes) == 0:
        return math.nan

    def score(pi: float) -> float:
        return _score(pi, yes, no, p00, p11)

    if score(0.0) <= 0.0:
        return 0.0
    if score(1.0) >= 0.0:
        return 1.0
    return _bisect(score, 0.0, 1.0)


def profile_interval(
    parts: Sequence[BinaryPart], confidence: float, mle: float | None = None
) -> tuple[float, float]:
    """Likelihood-ratio interval {pi in [0, 1]: 2 (l(pi_hat) - l(pi)) <= chi2_1(confidence)}.

    For one parameter this is the profile-likelihood interval; its coverage is asymptotic
    (Wilks), so it is used only where no exact interval exists: several designs pooled.
    """
    pi_hat = pooled_mle(parts) if mle is None else mle
    critical = z_value(confidence) ** 2 / 2.0
    top = joint_loglik(pi_hat, parts)

    def drop(pi: float) -> float:
        return top - joint_loglik(pi, parts) - critical

    low = 0.0 if pi_hat <= 0.0 or drop(0.0) <= 0.0 else _bisect(drop, 0.0, pi_hat)
    high = 1.0 if pi_hat >= 1.0 or drop(1.0) <= 0.0 else _bisect(drop, pi_hat, 1.0)
    return low, high


def _binary_variance_at(pi: float, part: BinaryPart) -> float:
    lam = pi * part.p11 + (1.0 - pi) * (1.0 - part.p00)
    mu = pi * (1.0 - part.p11) + (1.0 - pi) * part.p00
    return lam * mu / ((part.p00 + part.p11 - 1.0) ** 2 * part.n)


def pooled_binary(
    parts: Sequence[BinaryPart], confidence: float = 0.95, method: str = "exact",
    values: Sequence[str] = ("no", "yes"),
) -> Estimate:
    """One question answered under several designs: the joint MLE on [0, 1].

    ``estimate`` is the joint MLE; its interval the profile-likelihood interval ("wald" on
    request: unbiased +- z se). ``unbiased`` combines each design's unbiased estimate with fixed
    weights proportional to 1 / Var_d at pi = 1/2 (they depend only on the designs and the N_d,
    so the combination stays unbiased); ``se`` is its plug-in standard error.
    """
    used = [part for part in parts if part.n > 0]
    total = sum(part.n for part in used)
    n_yes = sum(part.n_yes for part in used)
    counts = {values[0]: int(total - n_yes), values[1]: int(n_yes)}
    interval_name = "wald" if method == "wald" else "profile-likelihood"
    if total == 0:
        result = _empty(KIND_BINARY, values, (values[1],), counts, confidence, interval_name)
        result.pooled = True
        return result
    singles = [binary_estimate(p.n_yes, p.n, p.p00, p.p11, confidence, method) for p in used]
    weights = np.array([1.0 / _binary_variance_at(0.5, part) for part in used])
    weights /= weights.sum()
    unbiased = float(sum(w * s.unbiased[0] for w, s in zip(weights, singles, strict=True)))
    se = math.sqrt(sum(w * w * s.se[0] ** 2 for w, s in zip(weights, singles, strict=True)))
    mle = pooled_mle(used)
    if method == "wald":
        z = z_value(confidence)
        low, high = max(unbiased - z * se, 0.0), min(unbiased + z * se, 1.0)
    else:
        low, high = profile_interval(used, confidence, mle)
    se_fixed = math.sqrt(max(se * se - mle * (1.0 - mle) / total, 0.0))
    result = Estimate(
        kind=KIND_BINARY, values=tuple(values), labels=(values[1],), n=int(total), counts=counts,
        confidence=confidence, ci_method=interval_name, observed=np.array([n_yes / total]),
        estimate=np.array([mle]), unbiased=np.array([unbiased]), se=np.array([se]),
        se_fixed=np.array([se_fixed]), ci_low=np.array([low]), ci_high=np.array([high]),
        chebyshev=np.array([chebyshev_k(confidence) * se]),
        clipped=not 0.0 <= unbiased <= 1.0, pooled=True,
    )
    result.degenerate = _degenerate(result.ci_low, result.ci_high)
    result.notes.append(
        f"{len(used)} designs pooled by joint maximum likelihood (counts never added across "
        "designs)"
    )
    return result


# ------------------------------------------------------------------------------- categorical


def project_to_simplex(vector: np.ndarray) -> np.ndarray:
    """Euclidean projection onto {x >= 0, sum x = 1} (sort-based algorithm)."""
    v = np.asarray(vector, dtype=np.float64)
    ordered = np.sort(v)[::-1]
    cumulative = np.cumsum(ordered) - 1.0
    index = np.arange(1, len(v) + 1)
    rho = np.nonzero(ordered - cumulative / index > 0)[0][-1]
    theta = cumulative[rho] / (rho + 1.0)
    projected: np.ndarray = np.maximum(v - theta, 0.0)
    return projected


def em_simplex(
    counts_by_design: Sequence[np.ndarray], matrices: Sequence[np.ndarray],
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Constrained MLE of pi on the simplex for reports under one or several designs, by EM.

    l(pi) = sum_d sum_i c_di log (pi P_d)_i; one step is
    pi_j <- pi_j / N * sum_d sum_i c_di P_d[j][i] / (pi P_d)_i (MATH.md section 5).
    """
    k = matrices[0].shape[0]
    total = float(sum(np.sum(c) for c in counts_by_design))
    pi = np.full(k, 1.0 / k) if start is None else np.asarray(start, dtype=np.float64).copy()
    pi = 0.5 * pi / pi.sum() + 0.5 / k  # strictly inside: EM never revives a zero component
    for _ in range(EM_MAX_ITERATIONS):
        update = np.zeros(k)
        for counts, matrix in zip(counts_by_design, matrices, strict=True):
            mix = pi @ matrix
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(counts > 0, counts / mix, 0.0)
            update += matrix @ ratio
        new = pi * update / total
        moved = float(np.max(np.abs(new - pi)))
        pi = new
        if moved < EM_TOLERANCE:
            break
    pi[pi < 1e-12] = 0.0
    result: np.ndarray = pi / pi.sum()
    return result


def krr_column(matrix: np.ndarray, column: int) -> tuple[float, float] | None:
    """(p_v, q_v) if every off-diagonal entry of the column is the same q_v, else None.

    Then lambda_v = q_v + (p_v - q_v) pi_v: the count of reports v is binomial and its exact
    interval maps to pi_v like a yes/no design with p00 = 1 - q_v, p11 = p_v.
    """
    entries = np.delete(matrix[:, column], column)
    if np.ptp(entries) > COLUMN_TOLERANCE:
        return None
    p, q = float(matrix[column, column]), float(entries[0])
    if abs(p - q) < 1e-9:
        return None
    return p, q


def _column_interval(
    count: float, total: float, p: float, q: float, confidence: float, method: str
) -> tuple[float, float]:
    """The lambda interval of one value's reports mapped through (lambda - q) / (p - q)."""
    low, high = rate_interval(count, total, confidence, method)
    ends = sorted(((low - q) / (p - q), (high - q) / (p - q)))
    return min(max(ends[0], 0.0), 1.0), min(max(ends[1], 0.0), 1.0)


def unbiased_covariance(counts: np.ndarray, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pi_unbiased = lambda_hat P^-1 and its plug-in covariance (random sampling)."""
    total = float(np.sum(counts))
    rate = counts / total
    inverse = np.linalg.inv(matrix)
    unbiased = rate @ inverse
    cov_rate = (np.diag(rate) - np.outer(rate, rate)) / total
    return unbiased, inverse.T @ cov_rate @ inverse


def categorical_estimate(
    counts: Sequence[int] | np.ndarray, matrix: Sequence[Sequence[float]] | np.ndarray,
    values: Sequence[str], confidence: float = 0.95, method: str = "exact",
) -> Estimate:
    """K answers under one k x k design: unbiased, constrained MLE by EM, intervals per value.

    Intervals: where a value's column is k-RR-like (every other truth reports it with the same
    probability, as in k-RR) its report count is binomial and the chosen method ("exact"
    Clopper-Pearson by default) is mapped to pi_v; otherwise (a general matrix) the interval is
    Wald from the multinomial covariance, and ``ci_method`` says "wald".
    """
    c = np.asarray(counts, dtype=np.float64)
    P = np.asarray(matrix, dtype=np.float64)
    total = float(c.sum())
    count_map = {value: int(x) for value, x in zip(values, c, strict=True)}
    columns = [krr_column(P, v) for v in range(len(values))]
    method_name = method if all(col is not None for col in columns) else "wald"
    if total == 0:
        return _empty(KIND_CATEGORICAL, values, values, count_map, confidence, method_name)
    unbiased, cov = unbiased_covariance(c, P)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    clipped = bool(np.any(unbiased < 0.0) or np.any(unbiased > 1.0))
    if clipped:
        estimate = em_simplex([c], [P], project_to_simplex(unbiased))
    else:
        estimate = np.clip(unbiased, 0.0, 1.0)
    se_fixed = np.sqrt(np.clip(se**2 - estimate * (1.0 - estimate) / total, 0.0, None))
    low, high = _intervals(c, total, columns, unbiased, se, confidence, method_name)
    if method_name == "wald" and method != "wald":
        # a general matrix: profile-likelihood intervals on the simplex (rrsite.estimate)
        low, high = _profile_intervals([c], [P], confidence)
        method_name = PROFILE
    result = Estimate(
        kind=KIND_CATEGORICAL, values=tuple(values), labels=tuple(values), n=int(total),
        counts=count_map, confidence=confidence, ci_method=method_name, observed=c / total,
        estimate=estimate, unbiased=unbiased, se=se, se_fixed=se_fixed, ci_low=low, ci_high=high,
        chebyshev=chebyshev_k(confidence) * se, clipped=clipped,
    )
    result.degenerate = _degenerate(low, high)
    if clipped:
        result.notes.append("the unbiased estimate leaves the simplex; the estimate is the "
                            "constrained maximum-likelihood estimate (EM)")
    if method_name == PROFILE:
        result.notes.append("a general design matrix: profile-likelihood intervals per value "
                            "(no exact interval exists; Wald intervals undercover here)")
    return result


#: ci_method of intervals from the profile likelihood on the simplex.
PROFILE = "profile-likelihood"


def _profile_intervals(
    counts: Sequence[np.ndarray], matrices: Sequence[np.ndarray], confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each value's profile-likelihood interval under k x k designs (pooled in one likelihood)."""
    from .models import Design
    from .univariate import Part, fit

    parts = [Part(Design("custom", m.T), 1, tuple(int(x) for x in c))
             for c, m in zip(counts, matrices, strict=True) if np.sum(c) > 0]
    result = fit(parts, confidence)
    k = len(counts[0])
    low = np.array([result.intervals[f"pi{v}"][0] for v in range(k)])
    high = np.array([result.intervals[f"pi{v}"][1] for v in range(k)])
    return low, high


def _intervals(
    c: np.ndarray, total: float, columns: list[tuple[float, float] | None], unbiased: np.ndarray,
    se: np.ndarray, confidence: float, method_name: str,
) -> tuple[np.ndarray, np.ndarray]:
    k = len(c)
    low, high = np.zeros(k), np.zeros(k)
    z = z_value(confidence)
    for v in range(k):
        column = columns[v]
        if method_name != "wald" and column is not None:
            low[v], high[v] = _column_interval(c[v], total, *column, confidence, method_name)
        elif column is not None:
            low[v], high[v] = _column_interval(c[v], total, *column, confidence, "wald")
        else:
            low[v] = min(max(unbiased[v] - z * se[v], 0.0), 1.0)
            high[v] = min(max(unbiased[v] + z * se[v], 0.0), 1.0)
    return low, high


def _categorical_variance_at_uniform(matrix: np.ndarray, n: float) -> np.ndarray:
    """Diagonal of Cov(pi_unbiased) at pi = uniform: fixed weights for pooling."""
    k = matrix.shape[0]
    rate = np.full(k, 1.0 / k) @ matrix
    inverse = np.linalg.inv(matrix)
    cov = inverse.T @ ((np.diag(rate) - np.outer(rate, rate)) / n) @ inverse
    return np.diag(cov)


def pooled_categorical(
    counts_by_design: Sequence[Sequence[int] | np.ndarray],
    matrices: Sequence[Sequence[Sequence[float]] | np.ndarray],
    values: Sequence[str], confidence: float = 0.95, method: str = "exact",
) -> Estimate:
    """K answers under several designs: joint MLE on the simplex by EM.

    Intervals per value: where every design's column for the value is k-RR-like, the profile-
    likelihood interval of that value's binomial report counts across designs; otherwise Wald
    from the fixed-weight combination of the designs' unbiased estimates (weights 1 / Var_d at
    the uniform distribution, so the combination stays unbiased).
    """
    parts = [(np.asarray(c, dtype=np.float64), np.asarray(m, dtype=np.float64))
             for c, m in zip(counts_by_design, matrices, strict=True) if np.sum(c) > 0]
    k = len(values)
    total_counts = np.sum([c for c, _ in parts], axis=0) if parts else np.zeros(k)
    total = float(np.sum(total_counts))
    count_map = {value: int(x) for value, x in zip(values, total_counts, strict=True)}
    krr_like = [
        [krr_column(m, v) for _, m in parts] for v in range(k)
    ]
    all_krr = all(col is not None for cols in krr_like for col in cols)
    method_name = ("wald" if method == "wald" or not all_krr else "profile-likelihood")
    if total == 0:
        result = _empty(KIND_CATEGORICAL, values, values, count_map, confidence, method_name)
        result.pooled = True
        return result
    unbiased_parts, var_parts, weight_parts = [], [], []
    for c, m in parts:
        u, cov = unbiased_covariance(c, m)
        unbiased_parts.append(u)
        var_parts.append(np.clip(np.diag(cov), 0.0, None))
        weight_parts.append(1.0 / _categorical_variance_at_uniform(m, float(np.sum(c))))
    weights = np.array(weight_parts)
    weights /= weights.sum(axis=0)
    unbiased = np.sum(weights * np.array(unbiased_parts), axis=0)
    se = np.sqrt(np.sum(weights**2 * np.array(var_parts), axis=0))
    start = project_to_simplex(unbiased)
    estimate = em_simplex([c for c, _ in parts], [m for _, m in parts], start)
    z = z_value(confidence)
    low, high = np.zeros(k), np.zeros(k)
    general = method_name == "wald" and method != "wald"
    if general:
        low, high = _profile_intervals([c for c, _ in parts], [m for _, m in parts], confidence)
        method_name = PROFILE
    for v in range(k if not general else 0):
        if method_name == "profile-likelihood":
            binary_parts = [
                BinaryPart(int(c[v]), int(np.sum(c)), 1.0 - col[1], col[0])
                for (c, _), col in zip(parts, krr_like[v], strict=True)
                if col is not None
            ]
            low[v], high[v] = profile_interval(binary_parts, confidence)
        else:
            low[v] = min(max(unbiased[v] - z * se[v], 0.0), 1.0)
            high[v] = min(max(unbiased[v] + z * se[v], 0.0), 1.0)
    se_fixed = np.sqrt(np.clip(se**2 - estimate * (1.0 - estimate) / total, 0.0, None))
    result = Estimate(
        kind=KIND_CATEGORICAL, values=tuple(values), labels=tuple(values), n=int(total),
        counts=count_map, confidence=confidence, ci_method=method_name,
        observed=total_counts / total, estimate=estimate, unbiased=unbiased, se=se,
        se_fixed=se_fixed, ci_low=low, ci_high=high, chebyshev=chebyshev_k(confidence) * se,
        clipped=bool(np.any(unbiased < 0.0) or np.any(unbiased > 1.0)), pooled=True,
    )
    result.degenerate = _degenerate(low, high)
    result.notes.append(
        f"{len(parts)} designs pooled by joint maximum likelihood (EM; counts never added across "
        "designs)"
    )
    return result
