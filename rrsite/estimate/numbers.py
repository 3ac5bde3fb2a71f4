"""Estimating the mean of randomized numbers (rrsite.core.numbers designs).

Per respondent, every design except ``mixture-unknown`` gives a de-biased value
``r_i = (z_i - intercept) / slope`` with ``E[r_i | y_i] = y_i`` (:func:`debias`) and an unbiased
estimate of ``Var(r_i | y_i)`` (:func:`conditional_variance`): design-based estimators (weights,
strata, clusters) can use ``r_i`` as if it were the true number, adding nothing else.

The mean is the average of the ``r_i``; its standard error under random sampling is
``sd(r) / sqrt(n)`` with ``sd`` dividing by n - 1, which for the mixture designs is exactly
RRreg's ``RRuni`` ``mix.norm``/``mix.exp`` moment estimate and SE (``sd(z) / (sqrt(n) p)``).
``mixture-unknown`` solves the two groups' means for (mu, innocuous mean) as RRreg's
``mix.unknown`` does, each group's variance dividing by n_g - 1. Several designs (versions) are
pooled by respondent counts: mean = sum n_d mean_d / n, Var = sum (n_d / n)^2 se_d^2.

The interval is Student's t made asymmetric by Hall's (1992) transformation for the estimate's
skewness, with Satterthwaite's degrees of freedom for the variance estimate: its variance is
estimated from the reports' fourth cumulant, Var(s^2) = k4 / n + 2 k2^2 / (n - 1), and the df are
2 V^2 / Var(V) (at most n - 1, or n - 2 for mixture-unknown). Heavy-tailed reports (skewed
incomes at 100 respondents) have a variance estimate far less precise than a normal sample's,
and so get fewer df and a wider interval.

A sample of a few dozen incomes often misses the top of the distribution, and then shows neither
the skewness nor the spread that Hall's correction and the df need. Where the estimate's variance
comes mostly from the true numbers themselves (the randomization's known noise at most half of
it, or mixture-unknown) and the number has a minimum, the interval is joined with the t interval
for log(mean - minimum) (:func:`log_interval`), which assumes the spread grows with the level as
incomes' does and so reaches higher; benchmarks/coverage_numbers.py measures the coverage over
skewed truths.

Within the range. The unbiased mean can fall outside [min, max] by chance (a few respondents
behind a noisy design); the ``estimate`` is the unbiased mean projected onto the range (the
nearest end), which is never further from the truth, and for duchi, whose likelihood depends on
the reports only through the share of high reports, the maximum-likelihood estimate. The
standard error is never below ``se_floor``: the randomization alone gives every respondent's
de-biased number at least the design's smallest variance over the range (:func:`noise_floor`),
which a small sample's sd can miss (three duchi reports, all equal, have sd 0). A duchi design
alone gets the exact interval of yes-no questions: Clopper-Pearson for the share of high
reports, mapped through its line. Every interval is then cut to [min, max]; one lying wholly
beyond an end becomes that end to the end +/- q se (it never has zero width), and with no spread
to estimate from at all (reports all alike and no randomization noise known) the interval is
the whole range, or up to the largest mean that makes n answers all at one end likely enough
(the rule of three's bound).

The distribution of the true numbers, with intervals: rrsite.estimate.deconvolution.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.numbers import (
    PIECEWISE_CELLS,
    Additive,
    Duchi,
    Laplace,
    Mixture,
    MixtureUnknown,
    Multiplicative,
    NumberDesign,
    Piecewise,
    decimals,
)
from ..errors import RRSiteError
from .intervals import clopper_pearson, quantiles


class NumberEstimateError(RRSiteError):
    """Too few reports, or a design the estimator cannot use."""


def debias(design: NumberDesign, reports: np.ndarray) -> np.ndarray:
    """``r = (z - intercept) / slope``: E[r | y] = y (not for mixture-unknown)."""
    intercept, slope = design.linear()
    debiased: np.ndarray = (np.asarray(reports, dtype=np.float64) - intercept) / slope
    return debiased


def _noise_coefficients(design: NumberDesign) -> tuple[float, float, float]:
    """(w0, w1, w2): Var(r | y) = w0 + w1 y + w2 y^2 in de-biased units; raises for duchi."""
    _, slope = design.linear()
    v0, v1, v2 = design.variance_coefficients()
    w0, w1, w2 = v0 / slope ** 2, v1 / slope ** 2, v2 / slope ** 2
    if 1.0 + w2 <= 1e-12:
        raise NumberEstimateError(f"design {design.name}: Var(r | y) has no unbiased "
                                  "per-respondent estimate (r^2 does not depend on y)")
    return w0, w1, w2


def square_estimate(design: NumberDesign, debiased: np.ndarray) -> np.ndarray:
    """An unbiased estimate of y_i^2 from r_i alone: E[r^2 | y] = (1 + w2) y^2 + w1 y + w0.

    (Laplace: too high by the grid rounding's step^2 f (1 - f) for answers off the grid, which
    the coefficients leave out, as :func:`conditional_variance` says.)
    """
    w0, w1, w2 = _noise_coefficients(design)
    r = np.asarray(debiased, dtype=np.float64)
    square: np.ndarray = (r * r - w1 * r - w0) / (1.0 + w2)
    return square


def conditional_variance(design: NumberDesign, debiased: np.ndarray) -> np.ndarray:
    """An unbiased estimate of Var(r_i | y_i) from r_i alone.

    Var(r | y) = w0 + w1 y + w2 y^2 (the design's coefficients over slope^2), so
    E[r^2 | y] = (1 + w2) y^2 + w1 y + w0 gives an unbiased y^2, hence an unbiased variance.
    (Laplace: the grid rounding's variance, at most step^2 / 4, is left out.) Duchi's report
    takes two values, so r^2 is the same whatever y: no per-respondent estimate exists (its
    variance lies between (width/2)^2 (C^2 - 1) and (width/2)^2 C^2); this raises for it.
    """
    w0, w1, w2 = _noise_coefficients(design)
    r = np.asarray(debiased, dtype=np.float64)
    estimate: np.ndarray = w0 + w1 * r + w2 * square_estimate(design, r)
    return estimate


def noise_floor(design: NumberDesign) -> float:
    """The smallest Var(r | y) over the answers y in [min, max]: 0 where none is known.

    Var(r | y) = (v0 + v1 y + v2 y^2) / slope^2 is smallest at its vertex or at an end of the
    range; a side without a bound where it keeps falling gives 0, as does mixture-unknown (its
    innocuous answers' law is unknown). Laplace's grid rounding only adds to it.
    """
    if isinstance(design, MixtureUnknown):
        return 0.0
    _, slope = design.linear()
    v0, v1, v2 = design.variance_coefficients()
    low = -math.inf if design.minimum is None else design.minimum
    high = math.inf if design.maximum is None else design.maximum
    falls_left = v2 < 0 or (v2 == 0 and v1 > 0)   # as y goes to -infinity
    falls_right = v2 < 0 or (v2 == 0 and v1 < 0)  # as y goes to +infinity
    if (falls_left and math.isinf(low)) or (falls_right and math.isinf(high)):
        return 0.0
    candidates = [y for y in (low, high) if math.isfinite(y)]
    if v2 > 0:
        candidates.append(min(max(-v1 / (2 * v2), low), high))
    if not candidates:  # constant, no bound
        return max(float(v0), 0.0) / slope ** 2
    smallest = min(v0 + v1 * y + v2 * y * y for y in candidates)
    return max(float(smallest), 0.0) / slope ** 2


def rrreg_of(design: NumberDesign) -> dict[str, Any] | None:
    """RRreg 0.7.6's model and ``p`` for this design, or None (RRreg has no such model)."""
    if isinstance(design, Mixture) and design.mask.kind == "normal":
        return {"model": "mix.norm", "p": [design.p, design.mask.a, design.mask.b]}
    if isinstance(design, Mixture) and design.mask.kind == "exponential":
        return {"model": "mix.exp", "p": [design.p, design.mask.a]}
    if isinstance(design, MixtureUnknown):
        return {"model": "mix.unknown", "p": list(design.p)}
    return None


@dataclass
class PartFit:
    """The estimate from one design's reports."""

    design: NumberDesign
    n: int
    mean: float
    se: float
    #: Degrees of freedom spent (1: the mean; 2: mixture-unknown's mean and innocuous mean).
    parameters: int = 1
    #: The SE from the randomization alone, given the respondents' true numbers (LDP: exact).
    se_noise: float | None = None
    #: RRreg's own names and values (``pi``, ``piSE``, and ``piUQ``, ``piUQSE``), or None.
    rrreg: dict[str, Any] | None = None
    #: Group sizes (mixture-unknown).
    groups: dict[str, int] = field(default_factory=dict)
    #: The third cumulant of the estimate (from k-statistics): its skewness drives the interval.
    kappa3: float = 0.0
    #: An estimate of Var(se^2) from the fourth cumulants (None: too few reports to tell).
    variance_of_variance: float | None = None
    #: The smallest variance the randomization gives one de-biased report (:func:`noise_floor`).
    floor_variance: float = 0.0
    #: duchi: how many reports were the high value (the exact interval's count); else None.
    high_reports: int | None = None


def fit_part(
    design: NumberDesign, reports: np.ndarray, groups: np.ndarray | None = None
) -> PartFit:
    """Mean and SE of the true numbers from one design's reports (RRreg's n - 1 convention)."""
    z = np.asarray(reports, dtype=np.float64)
    if isinstance(design, MixtureUnknown):
        if groups is None:
            raise NumberEstimateError("mixture-unknown needs each report's group (1 or 2)")
        g = np.asarray(groups)
        first, second = z[g == 1], z[g == 2]
        n1, n2 = len(first), len(second)
        if n1 < 2 or n2 < 2:
            raise NumberEstimateError(f"mixture-unknown needs at least 2 reports in each group, "
                                      f"got {n1} and {n2}")
        p1, p2 = design.p
        m1, m2 = float(first.mean()), float(second.mean())
        v1, v2 = float(first.var(ddof=1)) / n1, float(second.var(ddof=1)) / n2
        pi = ((1 - p2) * m1 - (1 - p1) * m2) / (p1 - p2)
        pi_uq = (p2 * m1 - p1 * m2) / (p2 - p1)
        se = math.sqrt((1 - p2) ** 2 * v1 + (1 - p1) ** 2 * v2) / abs(p1 - p2)
        se_uq = math.sqrt(p2 ** 2 * v1 + p1 ** 2 * v2) / abs(p2 - p1)
        c1, c2 = (1 - p2) / (p1 - p2), -(1 - p1) / (p1 - p2)
        kappa3 = c1 ** 3 * _k3(first) / n1 ** 2 + c2 ** 3 * _k3(second) / n2 ** 2
        vv = _variance_of_mean_variance(first, c1), _variance_of_mean_variance(second, c2)
        return PartFit(design, n1 + n2, pi, se, 2, None,
                       {"model": "mix.unknown", "p": list(design.p), "pi": pi, "piSE": se,
                        "piUQ": pi_uq, "piUQSE": se_uq},
                       {"1": n1, "2": n2}, kappa3,
                       None if None in vv else math.fsum(v for v in vv if v is not None))
    n = len(z)
    if n < 2:
        raise NumberEstimateError(f"design {design.name} needs at least 2 reports, got {n}")
    r = debias(design, z)
    mean = float(r.mean())
    se = float(r.std(ddof=1)) / math.sqrt(n)
    try:
        noise: float | None = float(math.sqrt(max(float(conditional_variance(design, r).sum()),
                                                   0.0))) / n
    except NumberEstimateError:
        noise = None
    block = rrreg_of(design)
    if block is not None:
        block = {**block, "pi": mean, "piSE": se}
    high = None
    if isinstance(design, Duchi):
        high = int(np.count_nonzero(z > sum(design.values()) / 2))
    return PartFit(design, n, mean, se, 1, noise, block, {}, _k3(r) / n ** 2,
                   _variance_of_mean_variance(r), noise_floor(design), high)


def _k3(values: np.ndarray) -> float:
    """The unbiased third cumulant (k-statistic k3) of a sample; 0 below 3 values."""
    n = len(values)
    if n < 3:
        return 0.0
    centred = values - values.mean()
    return float(n * np.sum(centred ** 3) / ((n - 1) * (n - 2)))


def _k4(values: np.ndarray) -> float:
    """The unbiased fourth cumulant (k-statistic k4) of a sample (at least 4 values)."""
    n = len(values)
    centred = values - values.mean()
    m2, m4 = float(np.mean(centred ** 2)), float(np.mean(centred ** 4))
    return n * n * ((n + 1) * m4 - 3 * (n - 1) * m2 * m2) / ((n - 1) * (n - 2) * (n - 3))


def _variance_of_mean_variance(values: np.ndarray, weight: float = 1.0) -> float | None:
    """Var of ``weight^2 s^2 / n`` (the mean's estimated variance), from k2 and k4.

    Var(s^2) = kappa4 / n + 2 kappa2^2 / (n - 1) exactly for any distribution; k4 and k2 estimate
    the cumulants. None below 4 values.
    """
    n = len(values)
    if n < 4:
        return None
    k2 = float(values.var(ddof=1))
    return (weight ** 2 / n) ** 2 * (_k4(values) / n + 2 * k2 * k2 / (n - 1))


def satterthwaite_df(variance: float, variance_of_variance: float | None, most: int) -> float:
    """Degrees of freedom 2 V^2 / Var(V), between 1 and ``most`` (the normal sample's df).

    A variance estimate no less precise than a normal sample's (light tails, or Var(V) not above
    0) keeps ``most``.
    """
    if variance_of_variance is None or variance_of_variance <= 0 or variance <= 0:
        return float(most)
    return min(float(most), max(1.0, 2 * variance * variance / variance_of_variance))


@dataclass
class NumberEstimate:
    """The mean of the true numbers (and the total with a population size), SE and interval.

    ``mean`` is the unbiased mean, ``estimate`` the same projected onto [min, max] (they differ
    only when the unbiased mean fell outside the range); the interval lies within the range.
    """

    n: int
    mean: float
    se: float
    ci_low: float
    ci_high: float
    confidence: float
    #: Satterthwaite's degrees of freedom of the t quantile (at most n - parameters).
    df: float
    parts: list[PartFit]
    se_noise: float | None = None
    population: float | None = None
    #: The estimate's skewness (third cumulant / se^3), which the interval corrects for.
    skewness: float = 0.0
    #: Whether the log-scale interval (:func:`log_interval`) was joined in.
    log_scale: bool = False
    #: The mean within [min, max]: the unbiased mean, or the end of the range nearest to it.
    estimate: float = math.nan
    #: The range the true numbers lie in (None: no bound on that side).
    minimum: float | None = None
    maximum: float | None = None
    #: The smallest SE the randomization alone gives n respondents (:func:`noise_floor`).
    se_floor: float = 0.0
    #: How the interval was made (``ci_method`` in JSON).
    method: str = ""
    #: What else was done to keep the estimate and interval possible, in sentences (JSON
    #: ``notes`` also says when the estimate was clipped or the interval moved).
    notes: list[str] = field(default_factory=list)
    #: Whether the whole interval lay beyond an end of the range and was moved onto it.
    moved: bool = False

    def __post_init__(self) -> None:
        if math.isnan(self.estimate):
            self.estimate = clip_to_range(self.mean, self.minimum, self.maximum)

    @property
    def clipped(self) -> bool:
        """Whether the unbiased mean fell outside [min, max] (the estimate is then an end)."""
        return self.estimate != self.mean and math.isfinite(self.mean)

    def all_notes(self) -> list[str]:
        """Every note: the clipped estimate and the moved interval first, then :attr:`notes`."""
        ends = f"[{self.minimum:g}, {self.maximum:g}]" if self.minimum is not None and \
            self.maximum is not None else "range"
        return ([f"the unbiased mean {self.mean:.4g} lies outside the range {ends}: the "
                 f"estimate is its nearest end, {self.estimate:g}"] if self.clipped else []) + \
            (["the whole interval lay beyond an end of the range: it is that end to the end "
              "+/- the interval's margin"] if self.moved else []) + list(self.notes)

    @property
    def total(self) -> float | None:
        """Population size x the estimate (within the range)."""
        return None if self.population is None else self.population * self.estimate

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures (docs/contracts.md, ``numbers``)."""
        out: dict[str, Any] = {
            "n": self.n, "estimate": _json(self.estimate), "unbiased": _json(self.mean),
            "se": _json(self.se), "ci": [_json(self.ci_low), _json(self.ci_high)],
            "ci_method": self.method or _t_method(self.df, self.log_scale),
            "df": self.df,
            "skewness": self.skewness, "confidence": self.confidence,
            "se_noise": _json(self.se_noise), "se_floor": _json(self.se_floor),
            "range": [self.minimum, self.maximum], "clipped": self.clipped,
            "moved": self.moved, "notes": self.all_notes(),
        }
        if self.population is not None:
            out["total"] = {
                "population": self.population, "estimate": _json(self.population * self.estimate),
                "unbiased": _json(self.population * self.mean),
                "se": _json(self.population * self.se),
                "ci": [_json(self.population * self.ci_low), _json(self.population * self.ci_high)],
            }
        return out


def _json(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _t_method(df: float, log_scale: bool, widened: bool = False) -> str:
    return (f"t ({df:.1f} df, Satterthwaite), skewness-corrected (Hall 1992)"
            + (", joined with the log-scale interval" if log_scale else "")
            + (", joined with the range's worst-case score interval (fewer than "
               f"{SMALL_SAMPLE} respondents)" if widened else ""))


#: Below this many respondents a sample of a skewed number rarely shows its spread (three incomes
#: seldom include a large one), so the interval of a bounded number also spans
#: :func:`range_score_interval`, which needs no estimate of the spread.
SMALL_SAMPLE = 30


def range_score_interval(parts: Sequence[PartFit], mean: float, df: float, confidence: float,
                         minimum: float, maximum: float) -> tuple[float, float] | None:
    """The means mu whose largest possible variance leaves the estimate within t standard errors.

    With true numbers in [min, max] and mean mu, Var(y) <= (mu - min)(max - mu) (Bhatia & Davis
    2000), so one de-biased report has Var(r) = (1 + w2) Var(y) + w0 + w1 mu + w2 mu^2 at most
    (1 + w2)(mu - min)(max - mu) + w0 + w1 mu + w2 mu^2, Var(r | y) = w0 + w1 y + w2 y^2. The
    means with n^2 (mean - mu)^2 <= t^2 sum_d n_d Var_d(mu) form an interval (a quadratic in mu,
    as Wilson's score interval for a rate), which needs no estimate of the spread: what a few
    respondents cannot show. None for mixture-unknown or when no mean qualifies.
    """
    if any(isinstance(part.design, MixtureUnknown) for part in parts):
        return None
    n = sum(part.n for part in parts)
    a1 = a0 = 0.0
    for part in parts:
        _, slope = part.design.linear()
        w0, w1, w2 = (v / slope ** 2 for v in part.design.variance_coefficients())
        a1 += part.n * ((1 + w2) * (minimum + maximum) + w1)
        a0 += part.n * (w0 - (1 + w2) * minimum * maximum)
    t2 = float(quantiles.t_ppf(0.5 + confidence / 2, df)) ** 2
    a, b, c = n * n + t2 * n, -2 * n * n * mean - t2 * a1, n * n * mean * mean - t2 * a0
    disc = b * b - 4 * a * c
    if disc < 0:
        return None
    root = math.sqrt(disc)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def clip_to_range(value: float, minimum: float | None, maximum: float | None) -> float:
    """``value`` moved to the nearest end of [minimum, maximum] when outside it."""
    if minimum is not None and value < minimum:
        return float(minimum)
    if maximum is not None and value > maximum:
        return float(maximum)
    return value


def _range_of(parts: Sequence[PartFit]) -> tuple[float | None, float | None]:
    """The range that holds every version's answers (None: a version has no bound there)."""
    lows = [part.design.minimum for part in parts]
    highs = [part.design.maximum for part in parts]
    return (None if None in lows else min(v for v in lows if v is not None),
            None if None in highs else max(v for v in highs if v is not None))


def combine(parts: Sequence[PartFit], confidence: float = 0.95,
            population: float | None = None) -> NumberEstimate:
    """Pool the designs' estimates by respondent counts; an interval within the range.

    The df are Satterthwaite's for the pooled variance sum (n_d / n)^2 se_d^2, at most
    n - parameters. The SE is at least the randomization's floor; the interval is duchi's exact
    one or the skewness-corrected t (joined with the log-scale one where the truths' spread
    drives the variance), then cut to [min, max] (:func:`within_range`).
    """
    if not parts:
        raise NumberEstimateError("no reports")
    n = sum(part.n for part in parts)
    mean = math.fsum(part.n * part.mean for part in parts) / n
    sampled = math.sqrt(math.fsum((part.n / n) ** 2 * part.se ** 2 for part in parts))
    floor = math.sqrt(math.fsum((part.n / n) ** 2 * part.floor_variance / part.n
                                for part in parts))
    se = max(sampled, floor)
    notes = []
    if sampled < floor:
        notes.append("the reports vary less than the randomization alone makes them vary, as a "
                     "small sample can: the standard error is the randomization's (se_floor)")
    noise: float | None = None
    if all(part.se_noise is not None for part in parts):
        noise = math.sqrt(math.fsum((part.n / n) ** 2 * (part.se_noise or 0.0) ** 2
                                    for part in parts))
    most = max(n - sum(part.parameters for part in parts), 1)
    vv: float | None = None
    if all(part.variance_of_variance is not None for part in parts):
        vv = math.fsum((part.n / n) ** 4 * (part.variance_of_variance or 0.0) for part in parts)
    df = satterthwaite_df(se * se, vv, most)
    kappa3 = math.fsum((part.n / n) ** 3 * part.kappa3 for part in parts)
    minimum, maximum = _range_of(parts)
    joined = False
    exact = duchi_interval(parts, confidence)
    if exact is not None:
        low, high = exact
        method = ("exact: Clopper-Pearson for the share of high reports, mapped through the "
                  "design (duchi)")
    elif se <= 0:
        low, high, method = _no_spread(parts, mean, minimum, maximum, confidence, notes)
    else:
        low, high = skew_corrected_interval(mean, se, kappa3, df, confidence)
        widened = False
        if minimum is not None and _level_driven(parts, se, noise):
            bounds = log_interval(mean, se, df, confidence, minimum, maximum)
            if bounds is not None:
                low, high, joined = min(low, bounds[0]), max(high, bounds[1]), True
        if n < SMALL_SAMPLE and minimum is not None and maximum is not None:
            score = range_score_interval(parts, mean, most, confidence, minimum, maximum)
            if score is not None:
                low, high, widened = min(low, score[0]), max(high, score[1]), True
        method = _t_method(df, joined, widened)
    q = float(quantiles.t_ppf(0.5 + confidence / 2, df))
    low, high, moved = within_range(low, high, clip_to_range(mean, minimum, maximum), q * se,
                                    minimum, maximum)
    estimate = NumberEstimate(n, mean, se, low, high, confidence, df, list(parts), noise,
                              population, kappa3 / se ** 3 if se > 0 else 0.0, joined,
                              minimum=minimum, maximum=maximum, se_floor=floor, method=method,
                              notes=notes, moved=moved)
    return estimate


def duchi_interval(parts: Sequence[PartFit], confidence: float) -> tuple[float, float] | None:
    """One duchi design's exact interval, or None for any other design or several.

    The share of high reports is p = 1/2 + x / (2 C) for the mean's position x on [-1, 1], so
    Clopper-Pearson's interval for the count of high reports, mapped through
    mean = min + (1 + C (2 p - 1)) width / 2, holds the mean with at least the confidence asked
    (Duchi, Jordan & Wainwright 2018; the same exact route as yes-no questions).
    """
    if len(parts) != 1 or not isinstance(parts[0].design, Duchi) \
            or parts[0].high_reports is None:
        return None
    design = parts[0].design
    rate_low, rate_high = clopper_pearson(parts[0].high_reports, parts[0].n, confidence)

    def mean_at(rate: float) -> float:
        return float(design.low + (1 + design.c * (2 * rate - 1)) * design.width / 2)

    return mean_at(float(rate_low)), mean_at(float(rate_high))


def _no_spread(parts: Sequence[PartFit], mean: float, minimum: float | None,
               maximum: float | None, confidence: float, notes: list[str]
               ) -> tuple[float, float, str]:
    """The interval when the reports show no spread and the design knows no noise floor.

    Every answer at an end of a bounded range: the means for which n answers all at that end
    have a chance of at least (1 - confidence) / 2 (P(all at min) <= (1 - s)^n for a mean s of
    the way up the range, as the rule of three's bound). Otherwise the whole range, or no
    interval without one.
    """
    n = sum(part.n for part in parts)
    method = "no spread in the reports: "
    if minimum is None or maximum is None:
        notes.append("every report gives the same number and the design adds no known noise: "
                     "no interval")
        return math.nan, math.nan, method + "none"
    reach = (maximum - minimum) * (1 - ((1 - confidence) / 2) ** (1 / n))
    if mean <= minimum:
        notes.append(f"every answer is the smallest, {minimum:g}: the interval reaches as high as "
                     f"a mean for which {n} answers all at the smallest are still likely")
        return minimum, minimum + reach, method + "bound for n answers all at one end"
    if mean >= maximum:
        notes.append(f"every answer is the largest, {maximum:g}: the interval reaches as low as "
                     f"a mean for which {n} answers all at the largest are still likely")
        return maximum - reach, maximum, method + "bound for n answers all at one end"
    notes.append("every report gives the same number and the design adds no known noise: the "
                 "interval is the whole range")
    return minimum, maximum, method + "the whole range"


def within_range(low: float, high: float, estimate: float, half: float,
                 minimum: float | None, maximum: float | None) -> tuple[float, float, bool]:
    """The interval cut to [minimum, maximum], never of zero width from lying beyond an end.

    An interval wholly beyond an end (a rare sample far outside the range) becomes the end to the
    end +/- ``half`` (the t margin around the estimate, which is that end), cut to the range;
    the third value says so.
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return low, high, False
    bottom = -math.inf if minimum is None else minimum
    top = math.inf if maximum is None else maximum
    if high < bottom or low > top:
        return max(estimate - half, bottom), min(estimate + half, top), True
    return max(low, bottom), min(high, top), False


def _level_driven(parts: Sequence[PartFit], se: float, noise: float | None) -> bool:
    """Whether the estimate's variance comes mostly from the true numbers' own spread.

    True for mixture-unknown (its innocuous answers are part of what is sampled) and where the
    randomization's known noise is at most half the variance; False where the noise is unknown
    (duchi) or the parts' designs have different minimums.
    """
    minimums = {part.design.minimum for part in parts}
    if len(minimums) != 1 or None in minimums:
        return False
    if all(isinstance(part.design, MixtureUnknown) for part in parts):
        return True
    return noise is not None and noise * noise <= se * se / 2


def log_interval(mean: float, se: float, df: float, confidence: float, minimum: float,
                 maximum: float | None) -> tuple[float, float] | None:
    """The t interval for log(mu - minimum) by the delta method, mapped back.

    ``minimum + d exp(-/+ q se / d)`` with d = mean - minimum: right when the estimate's spread is
    proportional to its distance from the minimum (a scale family, as incomes are), where it
    reaches higher than any interval symmetric in se. The upper end is at most ``maximum``. None
    when the estimate is not above the minimum.
    """
    d = mean - minimum
    if not (d > 0 and math.isfinite(d) and math.isfinite(se)):
        return None
    q = float(quantiles.t_ppf(0.5 + confidence / 2, df))
    spread = q * se / d
    high = minimum + d * math.exp(min(spread, 700.0))
    return minimum + d * math.exp(-spread), high if maximum is None else min(high, maximum)


def skew_corrected_interval(mean: float, se: float, kappa3: float, df: float,
                            confidence: float) -> tuple[float, float]:
    """Hall's (1992) transformation interval with Student's t quantiles.

    With the estimate's skewness g = kappa3 / se^3 (a = g / 3, b = g / 6), the studentized
    statistic T is replaced by the monotone cubic f(T) = T + a T^2 + a^2 T^3 / 3 + b, which
    removes the skewness to first order; inverting it, the interval is
    [mean - se f^-1(q_hi), mean - se f^-1(q_lo)], f^-1(x) = ((1 + 3 a (x - b))^(1/3) - 1) / a.
    g = 0 gives the symmetric t interval.
    """
    q = float(quantiles.t_ppf(0.5 + confidence / 2, df))
    if se <= 0 or not math.isfinite(se):
        return mean, mean
    g = kappa3 / se ** 3
    if abs(g) < 1e-12:
        return mean - q * se, mean + q * se
    a, b = g / 3, g / 6

    def inverse(x: float) -> float:
        return (math.copysign(abs(1 + 3 * a * (x - b)) ** (1 / 3), 1 + 3 * a * (x - b)) - 1) / a

    return mean - se * inverse(q), mean - se * inverse(-q)


def estimate_mean(design: NumberDesign, reports: np.ndarray, groups: np.ndarray | None = None,
                  confidence: float = 0.95, population: float | None = None) -> NumberEstimate:
    """One design's reports: :func:`fit_part` then :func:`combine`."""
    return combine([fit_part(design, reports, groups)], confidence, population)


# ------------------------------------------------------------------------------ planning


def worst_variance(design: NumberDesign) -> float:
    """The largest Var(r | y) over the answers y in [min, max] (randomization only).

    Var(z | y) = v0 + v1 y + v2 y^2 is largest at an end of the range or, when it bends down
    (duchi), at its vertex (for whole numbers, the whole number on either side). Laplace adds
    its random rounding's step^2 f (1 - f), step^2 / 4 where an answer lies half-way between two
    grid points (any number; whole numbers on a grid of step 10 and up).
    """
    low, high = design.minimum, design.maximum
    if low is None or high is None:
        raise NumberEstimateError(f"design {design.name}: planning needs min and max")
    _, slope = design.linear()
    v0, v1, v2 = design.variance_coefficients()
    answers = [low, high]
    if v2 < 0:
        vertex = min(max(-v1 / (2 * v2), low), high)
        answers += [math.floor(vertex), math.ceil(vertex)] if design.integer else [vertex]
    worst = max(v0 + v1 * y + v2 * y * y for y in answers if low <= y <= high)
    if isinstance(design, Laplace) and not (design.integer and design.step <= 1):
        worst += design.step ** 2 / 4  # whole numbers on a grid of step 1 or finer: none
    return float(worst) / slope ** 2


def respondents_for_margin(design: NumberDesign, margin: float, sd: float | None = None,
                           confidence: float = 0.95) -> int:
    """Respondents so that the interval's half-width is at most ``margin``.

    Var(r) = Var(y) + E Var(r | y) <= sd^2 + worst randomization variance; ``sd`` defaults to
    half the range (the largest sd of a number in [min, max]).
    """
    if margin <= 0:
        raise NumberEstimateError(f"margin must be above 0, got {margin!r}")
    if sd is None:
        assert design.minimum is not None and design.maximum is not None
        sd = (design.maximum - design.minimum) / 2
    z = float(quantiles.norm_ppf(0.5 + confidence / 2))
    return math.ceil((z / margin) ** 2 * (sd ** 2 + worst_variance(design)))


# ---------------------------------------------------------------------------- simulation


def _mask_draws(rng: np.random.Generator, mask: Any, count: int) -> np.ndarray:
    if mask.kind == "normal":
        return rng.normal(mask.a, mask.b, count)
    if mask.kind == "exponential":
        return rng.exponential(mask.a, count)
    if mask.kind == "uniform" and mask.integer:
        return rng.integers(int(mask.a), int(mask.b) + 1, count).astype(np.float64)
    if mask.kind == "uniform":
        return rng.uniform(mask.a, mask.b, count)
    return rng.choice(np.asarray(mask.values), count, p=np.asarray(mask.probabilities))


def _snap(rng: np.random.Generator, values: np.ndarray, step: float) -> np.ndarray:
    """rrsite.core.numbers.snap for many values: rounded at random to multiples of ``step``."""
    position = np.asarray(values, dtype=np.float64) / step
    nearest = np.round(position)
    base = np.floor(position)
    up = rng.random(len(position)) < position - base
    index = np.where(np.abs(position - nearest) < 1e-6, nearest, base + up)
    snapped: np.ndarray = np.round(index * step, decimals(step))
    return snapped


def _on_grid(rng: np.random.Generator, design: NumberDesign, y: np.ndarray) -> np.ndarray:
    """The answers as the device sends them: on the report grid (NumberDesign.on_grid)."""
    sent = _snap(rng, y, design.report_step)
    low = -np.inf if design.minimum is None else design.minimum
    high = np.inf if design.maximum is None else design.maximum
    clipped: np.ndarray = np.clip(sent, low, high)
    return clipped


def _drawn(rng: np.random.Generator, mask: Any, count: int, step: float) -> np.ndarray:
    """A mask's or scramble's draws as the device sends them (continuous ones on the grid)."""
    draws = _mask_draws(rng, mask, count)
    return draws if mask.discrete else _snap(rng, draws, step)


def simulate_reports(
    rng: np.random.Generator, design: NumberDesign, truth: np.ndarray,
    innocuous: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Reports of many respondents at once (numpy's generator: for simulations, not the page).

    The same laws as rrsite.core.numbers' randomizers, the reports of mixture, additive and
    multiplicative on the report grid as the device puts them; returns (reports, groups or
    None).
    """
    y = np.asarray(truth, dtype=np.float64)
    n = len(y)
    if isinstance(design, Mixture):
        keep = rng.random(n) < design.p
        sent = _on_grid(rng, design, y)
        return np.where(keep, sent, _drawn(rng, design.mask, n, design.report_step)), None
    if isinstance(design, MixtureUnknown):
        groups = np.where(rng.random(n) < design.probability, 1, 2)
        p = np.where(groups == 1, design.p[0], design.p[1])
        other = innocuous if innocuous is not None else rng.uniform(0, 1, n)
        return np.where(rng.random(n) < p, y, other), groups
    if isinstance(design, Additive):
        sent = _on_grid(rng, design, y)
        total = sent + _drawn(rng, design.scramble, n, design.report_step)
        # the device adds the two short decimals exactly: the float nearest that decimal
        places = max([decimals(design.report_step), *map(decimals, design.scramble.values)])
        return np.round(total, places), None
    if isinstance(design, Multiplicative):
        sent = _on_grid(rng, design, y)
        factor = _snap(rng, _mask_draws(rng, design.scramble, n), design.factor_step)
        product = _snap(rng, sent * factor, design.report_step)
        return np.where(rng.random(n) < design.p, sent, product), None
    if isinstance(design, Laplace):
        position = (np.clip(y, design.low, design.low + design.width) - design.low) / design.step
        base = np.floor(position)
        base = base + (rng.random(n) < position - base)
        alpha = math.exp(-design.epsilon / design.steps_across)
        noise = rng.geometric(1 - alpha, n) - rng.geometric(1 - alpha, n)
        return design.low + np.round((base + noise) * design.step, design.decimals), None
    if isinstance(design, Duchi):
        # each branch's chance on its own, as the device computes them (no cancellation)
        high = rng.random(n) < np.vectorize(design.chance_high)(y)
        low_value, high_value = design.values()
        return np.where(high, high_value, low_value), None
    if isinstance(design, Piecewise):
        s, c = design.s, design.c
        x = 2 * (np.clip(y, design.low, design.low + design.width) - design.low) / design.width - 1
        left = (c + 1) / 2 * x - (c - 1) / 2
        right = left + c - 1
        u = rng.random(n)
        inner = left + (right - left) * u
        outer_u = u * (c + 1)
        outer = np.where(outer_u < left + c, -c + outer_u, right + outer_u - (left + c))
        point = np.where(rng.random(n) < s / (s + 1), inner, outer)
        # snapped to the device's grid of PIECEWISE_CELLS cells over [-C, C]
        cell = np.round((point + c) / (2 * c) * PIECEWISE_CELLS)
        snapped = -c + 2 * c * cell / PIECEWISE_CELLS
        return design.low + (snapped + 1) * design.width / 2, None
    raise NumberEstimateError(f"no simulation for design {design.name}")
