"""Design-based estimation from samples that are not simple random: weights, strata, clusters.

Two layers, kept apart so that any de-biased variable can use the second (number designs and
several-question analyses hand in their own ``Debiased``):

1. **Per-respondent de-biasing** (``debias_*``). Each respondent's report z_i becomes a variable
   r_i with E[r_i | y_i] = y_i (the randomization is undone on average, respondent by
   respondent) and an unbiased estimate v_i of its randomization variance Var(r_i | y_i). When
   y_i is an indicator (0 or 1), v_i = r_i (r_i - 1) is unbiased for any such r_i, because
   E[r^2 - r | y] = Var(r | y) + y^2 - y and y^2 = y (Chaudhuri 2011, *Randomized Response and
   Indirect Questioning Techniques in Surveys*, ch. 2; RRTCS's ``Qualitative.R`` uses the same).

   - a 2 x 2 design (p00, p11): r = (z - (1 - p00)) / (p00 + p11 - 1);
   - a k x k design matrix P[truth][report] (k-RR, general matrices, RRreg's FR and custom): with
     Q = P^-1, r_ij = Q[z_i, j] for each category j, since E[Q[z, j] | t] = (P Q)[t, j] = 1{t = j};
   - RRreg's one-group models (Warner, UQTknown, Mangat, Crosswise, Triangular): the row of
     PW^-1 of the sensitive state; Kuk with m cards: the moment estimator
     r = (x / m - p0) / (p1 - p0) of the red-card count x;
   - RRreg's two-group models (UQTunknown, SLD, CDM, CDMsym): the yes-rate of group g is affine
     in the prevalence and one more unknown (the innocuous rate, pi*t, the honest non-carriers),
     so the prevalence is c + alpha_1 lambda_1 + alpha_2 lambda_2, a linear function of the two
     groups' yes-rates: the nuisance parameter never needs to be estimated. With the groups'
     (weighted) shares a_g estimated from the sample, r_i = c + alpha_g z_i / a_g has the
     prevalence estimate as its weighted mean; its linearized variable (what the variance uses,
     accounting for the estimated a_g and lambda_g) is
     e_i = pi_hat + alpha_g (z_i - lambda_g_hat) / a_g_hat.

2. **The sample design** (``SampleDesign``, ``total``, ``mean``). Weights w_i = 1 / pi_i,
   strata h and primary sampling units (clusters) c:

   - Horvitz-Thompson total T = sum w_i r_i; known-N mean T / N; Hajek mean
     sum w_i r_i / sum w_i (R survey's ``svymean``).
   - Linearization (Taylor; Wolter 2007, *Introduction to Variance Estimation*, ch. 6; Särndal,
     Swensson & Wretman 1992, sect. 5.5 and 8.6; the formula of R survey's ``svyrecvar`` for one
     stage): with ultimate-cluster totals t_hc = sum_{i in c} w_i u_i of the linearized
     variable u (r for a total, (r - mean) / sum w for a Hajek mean),
     V = sum_h (1 - f_h) n_h / (n_h - 1) sum_c (t_hc - mean_c t_hc)^2.
   - With replacement (no fpc, f_h = 0), V already contains the randomization variance
     E sum w_i^2 v_i. With a finite-population correction (f_h > 0) the diagonal of the
     quadratic form is (1 - f_h) w_i^2, so the randomization part is shrunk and
     sum_i f_h w_i^2 v_i is added back (in a one-stage design w_i = 1 / f_h and the term is
     sum_i w_i v_i, the form of Chaudhuri 2011, thm. 2.1; RRTCS's ``Estimator.R`` adds the
     same sum v_i / pi_i).
   - Delete-one-cluster jackknife (JKn; Wolter 2007, ch. 4; survey's ``as.svrepdesign(type =
     "JKn")``): replicate (h, j) drops PSU j of stratum h and multiplies the other PSUs of
     stratum h by n_h / (n_h - 1); V = sum_h (1 - f_h) (n_h - 1) / n_h sum_j
     (theta_(hj) - theta)^2, centred at the full-sample estimate, plus the same randomization
     term when f_h > 0.
   - RRTCS's analytic default (``rrtcs-deville``, for comparison only): sum v_i / pi_i plus
     Deville's (1999) single-stage variance estimator for unequal-probability sampling
     (R sampling's ``varest``): with a_i = (1 - pi_i) / sum (1 - pi_j) and
     A = sum a_j r_j / pi_j, V = 1 / (1 - sum a_i^2) sum (1 - pi_i) (r_i / pi_i - A)^2. It ignores
     strata and clusters entirely.
   - RRTCS's jackknife (``rrtcs-jackknife``, its ``ResamplingVariance(option = 1, str, clu)``,
     for comparison only): per stratum, delete one cluster at a time, the other weights times
     n_h / (n_h - 1), (1 - mean pi_h) (n_h - 1) / n_h sum_j (T_(hj) - mean T_(h.))^2 summed over
     strata (over N^2 for a mean), mean pi_h the stratum's mean inclusion probability. For a
     total this is the linearization with f_h = mean pi_h, and it adds no randomization term:
     under that correction the randomization variance is shrunk as described above.
   - Design effect (Kish): V / V_srs with V_srs = s^2 / n, s^2 the weighted variance of r
     (n / (n - 1) sum w (r - mean)^2 / sum w), as survey's ``svymean(deff = TRUE)``; with an fpc
     the simple random sample is without replacement too, and like V it keeps its randomization
     part: V_srs = ((1 - f) s^2 + f vbar) / n with f = n / N_hat and vbar = sum w v / sum w.
     Effective sample size n / deff; degrees of freedom (number of PSUs) - (number of strata),
     for t intervals (survey's ``degf``).

A stratum with one PSU has no variance estimate: ``lonely="refuse"`` (the default) raises
``LonelyPSUError`` naming it; ``lonely="collapse"`` merges it into the next stratum in sorted
order (the previous one for the last), with no finite-population correction for the merged
stratum (conservative). A stratum whose PSUs were all taken (f_h = 1) contributes no sampling
variance and is never lonely.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .debias import (
    Debiased,
    debias_binary,
    debias_matrix,
    debias_rrreg,
    debias_two_group,
    prevalence_row,
    two_group_coefficients,
)
from .intervals import quantiles

__all__ = [  # the de-biased values (rrsite.estimate.debias) are re-exported with the design
    "LONELY_METHODS", "VARIANCE_METHODS", "Debiased", "DesignEstimate", "LonelyPSUError",
    "SampleDesign", "SampleDesignError", "debias_binary", "debias_matrix", "debias_rrreg",
    "debias_two_group", "design_logit", "deville_variance", "linearization_variance", "mean",
    "prevalence_row", "randomization_term", "score_covariance", "total", "two_group_coefficients",
    "weights_summary",
]

#: Variance estimators by name (``--variance``); the first is the default.
VARIANCE_METHODS = ("linearization", "jackknife", "rrtcs-deville", "rrtcs-jackknife")
LONELY_METHODS = ("refuse", "collapse")


class SampleDesignError(ValueError):
    """The design columns cannot be used (``row`` is the 0-based index of the first bad row)."""

    def __init__(self, message: str, row: int | None = None) -> None:
        super().__init__(message)
        self.row = row


class LonelyPSUError(SampleDesignError):
    """A stratum with a single primary sampling unit and ``lonely="refuse"``."""


# ----------------------------------------------------------------------------- the design


def _codes(labels: Sequence[Any] | np.ndarray | None, n: int) -> tuple[np.ndarray, list[str]]:
    if labels is None:
        return np.zeros(n, dtype=np.int64), ["(all)"]
    text = np.asarray([str(v) for v in labels], dtype=object)
    if len(text) != n:
        raise SampleDesignError(f"{len(text)} labels for {n} rows")
    names, codes = np.unique(text.astype(str), return_inverse=True)
    return codes.astype(np.int64), [str(v) for v in names]


@dataclass
class SampleDesign:
    """Weights, strata, PSUs and sampling fractions of the rows of a sample (see module doc)."""

    weights: np.ndarray
    strata: np.ndarray
    psu: np.ndarray
    fraction: np.ndarray
    strata_names: list[str]
    has_strata: bool
    has_clusters: bool
    has_fpc: bool
    collapsed: list[tuple[str, str]] = field(default_factory=list)
    #: After ``rake``: the calibration variables' indicator columns (rows x categories), the
    #: weights before raking, the variables' names and the iterations it took.
    calibration: np.ndarray | None = None
    weights_before: np.ndarray | None = None
    raked: list[str] = field(default_factory=list)
    rake_iterations: int = 0

    @classmethod
    def build(
        cls, weights: Sequence[float] | np.ndarray, strata: Sequence[Any] | None = None,
        clusters: Sequence[Any] | None = None,
        fpc: Sequence[float] | np.ndarray | None = None,
        lonely: str = "refuse",
    ) -> SampleDesign:
        """Check and index a design.

        ``fpc`` per row: the number of PSUs of the row's stratum in the population (> 1), or the
        sampling fraction of PSUs (in (0, 1]), as in R survey's ``svydesign(fpc = )``.
        Clusters are nested in strata: a cluster label is local to its stratum.
        """
        if lonely not in LONELY_METHODS:
            raise ValueError(f"lonely must be one of {LONELY_METHODS}, got {lonely!r}")
        w = np.asarray(weights, dtype=np.float64)
        n = len(w)
        if n == 0:
            raise SampleDesignError("no rows")
        bad = np.flatnonzero(~np.isfinite(w) | (w <= 0))
        if len(bad):
            raise SampleDesignError(f"weight {w[bad[0]]!r} is not a positive number", int(bad[0]))
        strata_codes, strata_names = _codes(strata, n)
        if clusters is None:
            psu_codes = np.arange(n, dtype=np.int64)
        else:
            pairs = [f"{s}\x00{c}" for s, c in zip(strata_codes.tolist(), clusters, strict=True)]
            psu_codes, _ = _codes(pairs, n)
        H = len(strata_names)
        fraction = np.zeros(H)
        has_fpc = fpc is not None
        if fpc is not None:
            f = np.asarray(fpc, dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(f) | (f <= 0))
            if len(bad):
                raise SampleDesignError(f"fpc {f[bad[0]]!r} is not a positive number",
                                        int(bad[0]))
            for h in range(H):
                rows = np.flatnonzero(strata_codes == h)
                values = np.unique(f[rows])
                if len(values) > 1:
                    other = rows[np.flatnonzero(f[rows] != f[rows[0]])[0]]
                    raise SampleDesignError(
                        f"fpc differs within stratum {strata_names[h]!r} ({f[rows[0]]:g} and "
                        f"{f[other]:g})", int(other))
                n_h = len(np.unique(psu_codes[rows]))
                value = float(values[0])
                if value <= 1:
                    fraction[h] = value
                elif value < n_h:
                    raise SampleDesignError(
                        f"fpc {value:g}: stratum {strata_names[h]!r} has {n_h} sampled PSUs, more "
                        "than the population's", int(rows[0]))
                else:
                    fraction[h] = n_h / value
        design = cls(w, strata_codes, psu_codes, fraction, strata_names, strata is not None,
                     clusters is not None, has_fpc)
        design._check_lonely(lonely)
        return design

    def _psus_per_stratum(self) -> np.ndarray:
        H = len(self.strata_names)
        counts = np.zeros(H, dtype=np.int64)
        first_psu = np.unique(self.psu, return_index=True)[1]
        np.add.at(counts, self.strata[first_psu], 1)
        return counts

    def _check_lonely(self, lonely: str) -> None:
        counts = self._psus_per_stratum()
        lonely_strata = [h for h in range(len(counts))
                         if counts[h] == 1 and self.fraction[h] < 1.0]
        if not lonely_strata:
            return
        if lonely == "refuse" or len(counts) == 1:
            h = lonely_strata[0]
            unit = "cluster" if self.has_clusters else "respondent"
            raise LonelyPSUError(
                f"stratum {self.strata_names[h]!r} has a single {unit}: its variance cannot be "
                "estimated (collapse it with a neighbouring stratum: --lonely-psu collapse, or "
                "merge the strata in the design file)",
                int(np.flatnonzero(self.strata == h)[0]))
        # collapse: each lonely stratum joins the next one (the previous one for the last)
        target = np.arange(len(counts))
        for h in lonely_strata:
            into = h + 1 if h + 1 < len(counts) else h - 1
            target[h] = into
            self.collapsed.append((self.strata_names[h], self.strata_names[into]))
        # follow chains (a lonely stratum merged into another lonely one)
        for _ in range(len(counts)):
            target = target[target]
        merged = target[self.strata]
        self.fraction = self.fraction.copy()
        for h, _into in enumerate(target):
            if target[h] != h:
                self.fraction[target[h]] = 0.0
        self.strata = merged
        if np.any(self._psus_per_stratum()[np.unique(merged)] == 1):
            raise LonelyPSUError("collapsing strata left a stratum with a single PSU")

    # -- summaries ---------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of rows."""
        return len(self.weights)

    @property
    def n_strata(self) -> int:
        """Number of strata (after collapsing)."""
        return len(np.unique(self.strata))

    @property
    def n_psu(self) -> int:
        """Number of primary sampling units (clusters, or rows without clusters)."""
        return len(np.unique(self.psu))

    @property
    def df(self) -> int:
        """Degrees of freedom: PSUs minus strata."""
        return self.n_psu - self.n_strata

    def row_fraction(self) -> np.ndarray:
        """f_h of each row's stratum."""
        return np.asarray(self.fraction[self.strata], dtype=np.float64)

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary of the design."""
        w = self.weights
        out: dict[str, Any] = {
            "rows": self.n, "strata": self.n_strata, "clusters": self.n_psu,
            "stratified": self.has_strata, "clustered": self.has_clusters,
            "fpc": self.has_fpc, "df": self.df,
            "weights": weights_summary(w),
        }
        if self.collapsed:
            out["collapsed_strata"] = [{"stratum": a, "into": b} for a, b in self.collapsed]
        if self.weights_before is not None:
            out["raking"] = {"variables": list(self.raked), "iterations": self.rake_iterations,
                             "weights_before": weights_summary(self.weights_before)}
        return out

    def rake(
        self, margins: Sequence[tuple[str, Sequence[Any], dict[str, float]]],
        max_iter: int = 1000, tol: float = 1e-10,
    ) -> SampleDesign:
        """Raked weights (iterative proportional fitting; Deming & Stephan 1940).

        ``margins``: per variable (name, each row's category, {category: population count}).
        One variable is post-stratification. The variance then uses the residuals of the
        linearized variable on the categories' indicators (Deville & Särndal 1992: raking is
        asymptotically the regression estimator; R survey's ``rake`` / ``calibrate``).
        """
        if not margins:
            return self
        w = self.weights.copy()
        codes = []
        targets = []
        columns = []
        totals = []
        for name, labels, counts in margins:
            values = [str(v) for v in labels]
            if len(values) != self.n:
                raise SampleDesignError(f"rake {name}: {len(values)} values for {self.n} rows")
            missing = [i for i, v in enumerate(values) if v not in counts]
            if missing:
                raise SampleDesignError(
                    f"rake {name}: {values[missing[0]]!r} has no population margin", missing[0])
            order = sorted(counts)
            index = {c: k for k, c in enumerate(order)}
            code = np.array([index[v] for v in values], dtype=np.int64)
            present = np.bincount(code, minlength=len(order))
            empty = [c for k, c in enumerate(order) if present[k] == 0 and counts[c] > 0]
            if empty:
                raise SampleDesignError(f"rake {name}: no respondent in category {empty[0]!r}, "
                                        "whose population margin is not 0")
            target = np.array([float(counts[c]) for c in order])
            if np.any(~np.isfinite(target)) or np.any(target < 0):
                raise SampleDesignError(f"rake {name}: margins must be counts >= 0")
            codes.append(code)
            targets.append(target)
            totals.append(float(target.sum()))
            columns.append(np.eye(len(order))[code])
        if max(totals) - min(totals) > 1e-6 * max(totals):
            raise SampleDesignError("the margins of the raking variables add up to different "
                                    f"population sizes: {', '.join(f'{t:g}' for t in totals)}")
        iterations = 0
        while True:
            iterations += 1
            if iterations > max_iter:
                raise SampleDesignError(f"raking did not converge in {max_iter} iterations")
            change = 0.0
            for code, target in zip(codes, targets, strict=True):
                current = np.bincount(code, weights=w, minlength=len(target))
                ratio = np.divide(target, current, out=np.zeros_like(target),
                                  where=current > 0)
                change = max(change, float(np.max(np.abs(ratio[current > 0] - 1.0))))
                w = w * ratio[code]
            if change < tol:
                break
        out = SampleDesign(w, self.strata, self.psu, self.fraction, self.strata_names,
                           self.has_strata, self.has_clusters, self.has_fpc, list(self.collapsed),
                           np.hstack(columns), self.weights.copy(),
                           [name for name, _, _ in margins], iterations)
        return out

    def subset_weights(self, domain: np.ndarray | None) -> np.ndarray:
        """Weights with rows outside ``domain`` set to zero."""
        if domain is None:
            return self.weights
        return np.where(np.asarray(domain, dtype=bool), self.weights, 0.0)


def weights_summary(weights: np.ndarray) -> dict[str, float]:
    """Range, mean, coefficient of variation and Kish's effective sample size of the weights."""
    w = np.asarray(weights, dtype=np.float64)
    mean = float(w.mean())
    return {
        "sum": float(w.sum()), "min": float(w.min()), "max": float(w.max()), "mean": mean,
        "cv": float(w.std() / mean) if mean > 0 else math.nan,
        "kish_n_eff": float(w.sum() ** 2 / np.sum(w ** 2)),
    }


# ----------------------------------------------------------------------------- variances


def linearization_variance(
    u: np.ndarray, design: SampleDesign, weights: np.ndarray | None = None,
) -> float:
    """sum_h (1 - f_h) n_h / (n_h - 1) sum_c (t_hc - mean t_h)^2, t_hc = sum_{i in c} w_i u_i."""
    w = design.weights if weights is None else weights
    totals = np.bincount(design.psu, weights=w * u)
    first = np.unique(design.psu, return_index=True)[1]
    stratum_of_psu = design.strata[first]
    variance = 0.0
    for h in np.unique(stratum_of_psu):
        t = totals[stratum_of_psu == h]
        n_h = len(t)
        if n_h < 2:
            continue  # a certainty stratum (f_h = 1): no sampling variance
        variance += (1.0 - design.fraction[h]) * n_h / (n_h - 1) * float(
            np.sum((t - t.mean()) ** 2))
    return variance


def randomization_term(v: np.ndarray, design: SampleDesign,
                       weights: np.ndarray | None = None) -> float:
    """sum_i f_h w_i^2 v_i: the randomization variance an fpc removed (0 without an fpc)."""
    if not design.has_fpc:
        return 0.0
    w = design.weights if weights is None else weights
    return float(np.sum(design.row_fraction() * w ** 2 * v))


def deville_variance(y: np.ndarray, pik: np.ndarray) -> float:
    """Deville's (1999) variance estimator of the HT total (R sampling's ``varest``)."""
    a = (1.0 - pik) / np.sum(1.0 - pik)
    expanded = y / pik
    centre = float(np.sum(a * expanded))
    return float(np.sum((1.0 - pik) * (expanded - centre) ** 2) / (1.0 - np.sum(a ** 2)))


# ----------------------------------------------------------------------------- estimates


@dataclass
class DesignEstimate:
    """One design-based estimate with its variance, interval and design effect."""

    kind: str
    estimate: float
    variance: float
    method: str
    df: float
    confidence: float
    ci_low: float
    ci_high: float
    srs_variance: float
    randomization_added: float
    n: int

    @property
    def se(self) -> float:
        """Standard error."""
        return math.sqrt(max(self.variance, 0.0))

    @property
    def srs_se(self) -> float:
        """Standard error a simple random sample of the same size would have."""
        return math.sqrt(max(self.srs_variance, 0.0))

    @property
    def deff(self) -> float:
        """Design effect: variance over the simple-random-sample variance."""
        return self.variance / self.srs_variance if self.srs_variance > 0 else math.nan

    @property
    def n_eff(self) -> float:
        """Effective sample size n / deff."""
        deff = self.deff
        return self.n / deff if deff > 0 and math.isfinite(deff) else math.nan

    def to_dict(self) -> dict[str, Any]:
        """JSON keys (docs/contracts.md, "design-based estimates")."""
        def finite(x: float) -> float | None:
            return x if math.isfinite(x) else None

        return {
            "kind": self.kind, "estimate": self.estimate, "se": self.se,
            "variance": self.variance, "variance_method": self.method,
            "df": finite(self.df), "ci": [self.ci_low, self.ci_high],
            "srs_se": self.srs_se, "deff": finite(self.deff), "n_eff": finite(self.n_eff),
            "randomization_added": self.randomization_added, "n": self.n,
        }


def _interval(estimate: float, variance: float, df: float,
              confidence: float) -> tuple[float, float]:
    se = math.sqrt(max(variance, 0.0))
    level = 1 - (1 - confidence) / 2
    quantile = float(quantiles.norm_ppf(level)) if not math.isfinite(df) else \
        float(quantiles.t_ppf(level, df)) if df > 0 else math.nan
    return estimate - quantile * se, estimate + quantile * se


def _srs_variance(r: np.ndarray, v: np.ndarray, w: np.ndarray, design: SampleDesign) -> float:
    """The variance of a mean from a simple random sample of the same size.

    s^2 / n of r (weighted); with an fpc, f = n / N_hat shrinks the sampling part only:
    (1 - f) s^2 / n + f vbar / n, vbar the weighted mean randomization variance (E s^2 is the
    population variance of y plus vbar).
    """
    inside = w > 0
    n = int(np.count_nonzero(inside))
    if n < 2:
        return math.nan
    total = float(w.sum())
    mean = float(np.sum(w * r)) / total
    s2 = n / (n - 1) * float(np.sum(w * (r - mean) ** 2)) / total
    if not design.has_fpc:
        return s2 / n
    f = min(1.0, n / total)
    vbar = float(np.sum(w * v)) / total
    return ((1.0 - f) * s2 + f * vbar) / n


def _replicate_weights(design: SampleDesign) -> list[tuple[float, np.ndarray]]:
    """JKn replicates: (factor (1 - f_h)(n_h - 1)/n_h, weights) per PSU in strata with n_h >= 2."""
    first = np.unique(design.psu, return_index=True)[1]
    stratum_of_psu = design.strata[first]
    out = []
    for h in np.unique(stratum_of_psu):
        psus = np.flatnonzero(stratum_of_psu == h)
        n_h = len(psus)
        if n_h < 2:
            continue
        factor = (1.0 - design.fraction[h]) * (n_h - 1) / n_h
        in_stratum = design.strata == h
        for j in psus:
            w = design.weights.copy()
            w[in_stratum] *= n_h / (n_h - 1)
            w[design.psu == j] = 0.0
            out.append((factor, w))
    return out


def total(
    data: Debiased, design: SampleDesign, *, method: str = "linearization",
    confidence: float = 0.95, domain: np.ndarray | None = None,
) -> DesignEstimate:
    """Horvitz-Thompson total sum w_i r_i (over ``domain`` when given)."""
    return _estimate("total", data, design, method, confidence, domain, None)


def mean(
    data: Debiased, design: SampleDesign, *, population: float | None = None,
    method: str = "linearization", confidence: float = 0.95, domain: np.ndarray | None = None,
) -> DesignEstimate:
    """Hajek mean sum w r / sum w, or with ``population`` N the known-N mean sum w r / N."""
    kind = "mean" if population is None else "mean-known-N"
    if population is not None and not population > 0:
        raise ValueError(f"the population size must be positive, got {population!r}")
    return _estimate(kind, data, design, method, confidence, domain, population)


def _point(kind: str, w: np.ndarray, u: np.ndarray, population: float | None,
           fallback: float = math.nan) -> float:
    """The estimator of kind ``kind`` with weights ``w`` applied to ``u``."""
    weighted = float(np.sum(w * u))
    if kind == "total":
        return weighted
    if kind == "mean-known-N":
        assert population is not None
        return weighted / population
    weight_sum = float(w.sum())
    return weighted / weight_sum if weight_sum > 0 else fallback


def _estimate(
    kind: str, data: Debiased, design: SampleDesign, method: str, confidence: float,
    domain: np.ndarray | None, population: float | None,
) -> DesignEstimate:
    if method not in VARIANCE_METHODS:
        raise ValueError(f"variance method must be one of {', '.join(VARIANCE_METHODS)}, "
                         f"got {method!r}")
    r = np.asarray(data.r, dtype=np.float64)
    u = np.asarray(data.u, dtype=np.float64)
    v = np.asarray(data.v, dtype=np.float64)
    if not (len(r) == len(u) == len(v) == design.n):
        raise ValueError(f"{len(r)} values for a design of {design.n} rows")
    w = design.subset_weights(domain)
    weight_sum = float(w.sum())
    if weight_sum <= 0:
        raise ValueError("no row in the domain")
    n = int(np.count_nonzero(w))
    point_total = float(np.sum(w * r))
    if kind == "total":
        scale, value, centre = 1.0, point_total, 0.0
    elif kind == "mean-known-N":
        assert population is not None
        scale, value, centre = 1.0 / population, point_total / population, 0.0
    else:
        value = point_total / weight_sum
        scale, centre = 1.0 / weight_sum, value
    # the linearized variable: scale * (u - centre) (centre 0 for totals), 0 outside the domain
    lin = np.where(w > 0, scale * (u - centre), 0.0)
    if design.calibration is not None:
        # raked weights: the residual of the regression on the calibration indicators
        X = design.calibration
        wx = X * design.weights[:, None]
        beta = np.linalg.lstsq(wx.T @ X, wx.T @ lin, rcond=None)[0]
        lin = lin - X @ beta
    added = randomization_term(v, design, w) * scale ** 2
    df: float = float(design.df)
    if method == "linearization":
        variance = linearization_variance(lin, design, design.weights) + added
    elif design.calibration is not None:
        raise ValueError(f"--variance {method} with raked weights is not supported: use "
                         "linearization")
    elif method == "jackknife":
        # replicates of the estimator of u (= r for one-group designs; the linearized variable
        # of a two-group design, whose group shares are then held at their full-sample values)
        full = _point(kind, w, u, population)
        variance = added
        for factor, weights in _replicate_weights(design):
            rw = weights if domain is None else np.where(domain, weights, 0.0)
            variance += factor * (_point(kind, rw, u, population, full) - full) ** 2
    elif method == "rrtcs-jackknife":
        divisor = 1.0 if kind == "total" else (
            population if population is not None else float(round(weight_sum))) ** 2
        mean_pi = np.zeros(len(design.fraction))
        for h in np.unique(design.strata):
            mean_pi[h] = float(np.mean(1.0 / design.weights[design.strata == h]))
        rrtcs = SampleDesign(design.weights, design.strata, design.psu, mean_pi,
                             design.strata_names, design.has_strata, design.has_clusters, True)
        variance = linearization_variance(np.where(w > 0, u, 0.0), rrtcs, design.weights) / divisor
        added = 0.0
        df = math.inf
    else:  # rrtcs-deville: single stage, strata and clusters ignored, normal quantile
        keep = w > 0
        pik = 1.0 / w[keep]
        divisor = 1.0 if kind == "total" else (
            population if population is not None else float(round(weight_sum))) ** 2
        added = float(np.sum(v[keep] / pik)) / divisor
        variance = added + deville_variance(u[keep], pik) / divisor
        df = math.inf
    srs = _srs_variance(r, v, w, design)
    if kind == "total":
        srs *= weight_sum ** 2
    elif kind == "mean-known-N":
        assert population is not None
        srs *= (weight_sum / population) ** 2
    low, high = _interval(value, variance, df, confidence)
    return DesignEstimate(kind, value, variance, method, df, confidence, low, high, srs, added, n)


# ----------------------------------------------------------------------------- regression


def score_covariance(scores: np.ndarray, design: SampleDesign) -> np.ndarray:
    """sum_h n_h / (n_h - 1) sum_c (s_hc - mean s_h)(s_hc - mean s_h)', s_hc = sum w_i score_i.

    The with-replacement (ultimate cluster) covariance of the weighted score total; rows outside
    the model carry a zero score (a domain of the design).
    """
    k = scores.shape[1]
    totals = np.zeros((int(design.psu.max()) + 1, k))
    np.add.at(totals, design.psu, design.weights[:, None] * scores)
    first = np.unique(design.psu, return_index=True)[1]
    stratum_of_psu = design.strata[first]
    psus = design.psu[first]
    out = np.zeros((k, k))
    for h in np.unique(stratum_of_psu):
        t = totals[psus[stratum_of_psu == h]]
        n_h = len(t)
        if n_h < 2:
            continue
        centred = t - t.mean(axis=0)
        out += n_h / (n_h - 1) * centred.T @ centred
    return out


def design_logit(
    X: np.ndarray, y: np.ndarray, p00: np.ndarray | float, p11: np.ndarray | float,
    names: Sequence[str], design: SampleDesign, used: np.ndarray, confidence: float = 0.95,
) -> Any:
    """The randomized-response logit under a sample design: weighted pseudo-likelihood.

    beta maximises sum_i w_i log L_i(beta) (Binder 1983; Skinner, Holt & Smith 1989, ch. 3;
    R survey's ``svyglm``) with regression.logistic's Newton iterations; its covariance is
    the sandwich A^-1 B A^-1, A the weighted observed information and B the with-replacement
    design covariance of the weighted score totals over strata and clusters
    (``score_covariance``; no finite-population correction: conservative). ``X``, ``y``,
    ``p00``, ``p11`` are the rows the model uses; ``used`` marks them among the design's rows.
    Returns a ``regression.Fit`` (without likelihood-ratio tests, which do not hold for a
    pseudo-likelihood).
    """
    from .regression.logistic import Fit, check_design, maximise, row_scores

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    used = np.asarray(used, dtype=bool)
    if int(used.sum()) != n:
        raise ValueError(f"{n} model rows but {int(used.sum())} rows marked used")
    p00a = np.broadcast_to(np.asarray(p00, dtype=np.float64), (n,))
    p11a = np.broadcast_to(np.asarray(p11, dtype=np.float64), (n,))
    a, b = 1.0 - p00a, p00a + p11a - 1.0
    check_design(a, b)
    w = design.weights[used]
    scale = float(w.mean())
    beta, information_inverse, value, iterations = maximise(X, y, a, b, names,
                                                            weights=w / scale)
    # information_inverse is the inverse of the information of sum (w / scale) log L_i
    bread = information_inverse / scale
    scores = np.zeros((design.n, X.shape[1]))
    scores[used] = row_scores(beta, X, y, a, b)
    meat = score_covariance(scores, design)
    covariance = bread @ meat @ bread
    return Fit(list(names), beta, covariance, value * scale, n, iterations, confidence)
