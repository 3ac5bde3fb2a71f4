"""The distribution of the true numbers behind randomized reports, with honest uncertainty.

The true numbers' range is cut into cells: each whole number of a small integer range, else 30
equal cells, with a cell of its own for exactly min and for exactly max of a range of any
numbers (no income undeclared; everyone at the top). Everything rests on the design's own law
of the report given the truth (:func:`report_cdf`), checked against the device's draws.

- The shares of the cells: the maximum-likelihood distribution over the cells (the true
  numbers spread evenly within a cell), computed with rrsite.estimate.joint's machinery (the
  likelihood of a table of true answers, here one question whose design matrix is the binned
  report law). Where the design is a ``mixture`` (one version), a report is the true number
  itself or a mask draw whatever the truth, so P(report in cell j's bin) = p pi_j + (1 - p)
  M_j exactly, M_j the mask's chance of the bin: each share gets Clopper-Pearson's exact
  interval for the reports in its bin, mapped through that line (pointwise: each interval
  holds its share with at least the confidence asked). Other designs blur the numbers, and a
  cell's share has no interval that is both honest and useful; the cumulative shares below
  have one.
- The cumulative shares F(t) = P(true number <= t) at every cell's upper end, with a band that
  holds them all at once with the confidence asked, for every design, whatever the true numbers'
  distribution: the Dvoretzky-Kiefer-Wolfowitz band (Massart's constant) holds the reports'
  distribution function F_Z, and as the report's law falls with the truth (F(z | y)
  non-increasing in y for every design here), for every z

      F(z | min) F(t) + F(z | t+) (1 - F(t)) >= F_Z(z) >= F(z | t) F(t) + F(z | max) (1 - F(t)),

  which bounds F(t) below and above (the bounds of F-localization, Ignatiadis & Wager 2022,
  JASA 117, with the two-point relaxation); t+ is the next possible true number. For a mixture
  this is the exact linear inversion.

Coverage by simulation: benchmarks/coverage_deconvolution.py. mixture-unknown's innocuous
answers have an unknown law, so it has no estimate here; duchi's two reports bound the
cumulative shares only loosely and identify no shares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from ..core.numbers import (
    Additive,
    Duchi,
    Laplace,
    Mask,
    Mixture,
    Multiplicative,
    NumberDesign,
    Piecewise,
)
from .intervals import clopper_pearson
from .joint import JointPart, mle

#: An integer range with at most this many whole numbers gets a cell for each.
WHOLE_CELLS = 61
#: Cells of any other range.
CELLS = 30
#: Distinct reports up to this many are bins of their own; more are binned between quantiles.
DISTINCT_BINS = 200
REPORT_BINS = 80
#: Report quantiles at which the distribution-function band is used (all reports when fewer).
BAND_POINTS = 2000
#: Points per cell over which a report's law is averaged (Gauss-Legendre; whole numbers: each,
#: up to this many).
NODES = 16


class DeconvolutionError(ValueError):
    """The design's reports cannot estimate the distribution (with the reason)."""


@dataclass
class Deconvolution:
    """The estimated distribution of the true numbers over cells, with its uncertainty."""

    #: Each cell's lowest and highest true number (equal for a cell of one number).
    lows: list[float]
    highs: list[float]
    #: The maximum-likelihood share of each cell (None: the reports cannot tell cells apart).
    probabilities: list[float] | None
    #: Each share's exact interval (mixture designs only; None otherwise).
    ci_low: list[float] | None
    ci_high: list[float] | None
    #: The cumulative shares P(true number <= highs[j]) and their simultaneous band.
    cumulative: list[float] | None
    cumulative_low: list[float]
    cumulative_high: list[float]
    confidence: float
    n: int
    messages: list[str] = field(default_factory=list)

    @property
    def centres(self) -> list[float]:
        """Each cell's middle."""
        return [(a + b) / 2 for a, b in zip(self.lows, self.highs, strict=True)]

    def label(self, index: int) -> str:
        """A cell as people read it: ``7``, or ``3,333 to 6,667``."""
        low, high = self.lows[index], self.highs[index]
        if low == high:
            return f"{low:,g}"
        return f"{low:,.6g} to {high:,.6g}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        def at(values: list[float] | None, j: int) -> float | None:
            return None if values is None else values[j]

        return {
            "cells": [{"low": self.lows[j], "high": self.highs[j],
                       "share": at(self.probabilities, j),
                       "ci": None if self.ci_low is None else [at(self.ci_low, j),
                                                               at(self.ci_high, j)],
                       "cumulative": at(self.cumulative, j),
                       "cumulative_band": [self.cumulative_low[j], self.cumulative_high[j]]}
                      for j in range(len(self.lows))],
            "confidence": self.confidence, "n": self.n,
            "share_intervals": None if self.ci_low is None else
            "exact: Clopper-Pearson for the reports in the cell, mapped through the mixture",
            "cumulative_band": "simultaneous: Dvoretzky-Kiefer-Wolfowitz band of the reports, "
                               "bounded through the report law (F-localization)",
            "messages": self.messages,
        }


# ---------------------------------------------------------------------------- report laws


def mask_cdf(mask: Mask, x: np.ndarray) -> np.ndarray:
    """P(draw <= x) of a mask or scrambling distribution (atoms included at their value)."""
    x = np.asarray(x, dtype=np.float64)
    if mask.kind == "normal":
        return np.asarray(special.ndtr((x - mask.a) / mask.b), dtype=np.float64)
    if mask.kind == "exponential":
        return np.where(x > 0, -np.expm1(-np.maximum(x, 0.0) / mask.a), 0.0)
    if mask.kind == "uniform" and not mask.integer:
        return np.asarray(np.clip((x - mask.a) / (mask.b - mask.a), 0.0, 1.0), dtype=np.float64)
    out = np.zeros(np.shape(x))
    slack = 1e-12 * np.maximum(1.0, np.abs(x))  # a report minus an answer: a few ulps off
    for value, chance in mask.pmf().items():
        out = out + chance * (value <= x + slack)
    return out


def _mask_integral(mask: Mask, x: np.ndarray) -> np.ndarray:
    """The integral of a continuous mask's distribution function up to x (up to a constant)."""
    if mask.kind == "normal":
        w = (x - mask.a) / mask.b
        return np.asarray((x - mask.a) * special.ndtr(w)
                          + mask.b * np.exp(-0.5 * w * w) / math.sqrt(2 * math.pi),
                          dtype=np.float64)
    if mask.kind == "exponential":
        above = np.maximum(x, 0.0)
        return np.asarray(above + mask.a * np.expm1(-above / mask.a), dtype=np.float64)
    width = mask.b - mask.a
    inside = np.clip(x, mask.a, mask.b) - mask.a
    return np.asarray(inside * inside / (2 * width) + np.maximum(x - mask.b, 0.0),
                      dtype=np.float64)


def sent_cdf(mask: Mask, x: np.ndarray, step: float) -> np.ndarray:
    """P(draw as sent <= x).

    A continuous draw is rounded at random (unbiased) to a multiple of ``step``, so
    P(sent <= k step) is the mean of the draw's distribution function over
    [k step, (k + 1) step] (integrated in closed form).
    """
    if mask.discrete:
        return mask_cdf(mask, x)
    k = _grid_floor(np.asarray(x, dtype=np.float64) / step)
    upper = _mask_integral(mask, (k + 1) * step)
    return np.asarray(np.clip((upper - _mask_integral(mask, k * step)) / step, 0.0, 1.0),
                      dtype=np.float64)


def _answers_sent(design: NumberDesign, y: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray]:
    """The answer on the report grid: (lower grid point, upper, chance of the upper)."""
    step = design.report_step
    position = np.asarray(y, dtype=np.float64) / step
    base = _grid_floor(position)
    fraction = np.where(position - base > 1e-9, position - base, 0.0)
    low = -np.inf if design.minimum is None else design.minimum
    high = np.inf if design.maximum is None else design.maximum
    return np.clip(base * step, low, high), np.clip((base + 1) * step, low, high), fraction


def _grid_floor(position: np.ndarray) -> np.ndarray:
    """floor(position), a position a few ulps below a whole number counted as on it.

    The tolerance is relative (1e-12) so that a point put just below a grid point on purpose
    (1e-9 below, :func:`_band_points`) stays below it.
    """
    position = np.asarray(position, dtype=np.float64)
    return np.asarray(np.floor(position + 1e-12 * np.maximum(1.0, np.abs(position))),
                      dtype=np.float64)


def _at_most(y: np.ndarray, z: np.ndarray) -> np.ndarray:
    return np.asarray(y <= z + 1e-12 * np.maximum(1.0, np.abs(z)), dtype=np.float64)


def report_cdf(design: NumberDesign, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(report <= z | true number y), broadcasting ``z`` against ``y``.

    The reports as the device sends them: mixture, additive and multiplicative on the report
    grid (the answer and a continuous draw rounded at random, a product rounded). Exact for
    every design but two whose neglected part is far below a grid step: piecewise's snapping of
    the report to 2^21 cells and multiplicative's rounding of the factor to its fine grid
    (answer x factor moves by at most a tenth of the report grid).
    """
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if isinstance(design, Mixture | Additive | Multiplicative):
        lower, upper, up = _answers_sent(design, y)

        def over_answers(law: Any) -> np.ndarray:
            return np.asarray((1 - up) * law(lower) + up * law(upper), dtype=np.float64)

        step = design.report_step
        if isinstance(design, Mixture):
            return design.p * over_answers(lambda a: _at_most(a, z)) + (1 - design.p) * \
                sent_cdf(design.mask, z + 0 * y, step)
        if isinstance(design, Additive):
            return over_answers(lambda a: sent_cdf(design.scramble, z - a, step))
        return design.p * over_answers(lambda a: _at_most(a, z)) + (1 - design.p) * \
            over_answers(lambda a: _product_cdf(design, a, z))
    if isinstance(design, Laplace):
        return _laplace_cdf(design, z, y)
    if isinstance(design, Duchi):
        low, high = design.values()
        chance = np.vectorize(design.chance_high)(y)
        return np.asarray((1 - chance) * (z >= low) + chance * (z >= high), dtype=np.float64)
    if isinstance(design, Piecewise):
        return _piecewise_cdf(design, z, y)
    raise DeconvolutionError(f"design {design.name}: the law of its reports is not known")


def _product_cdf(design: Multiplicative, answer: np.ndarray, z: np.ndarray) -> np.ndarray:
    """P(answer x S rounded to the report grid <= z), S the scramble (its fine grid left out).

    As for a mask draw, P(rounded <= k step) is the mean over [k step, (k + 1) step] of
    P(answer x S <= x), whose integral is answer I_S(x / answer) for an answer above 0 and
    x - answer I_S(x / answer) below 0; an answer of 0 sends 0.
    """
    step = design.report_step
    a = np.broadcast_to(answer, np.broadcast(answer, z).shape)
    k = _grid_floor(np.broadcast_to(z, a.shape) / step)
    safe = np.where(a != 0, a, 1.0)

    def integral(x: np.ndarray) -> np.ndarray:
        scaled = safe * _mask_integral(design.scramble, x / safe)
        return np.asarray(np.where(a > 0, scaled, x - scaled), dtype=np.float64)

    rounded = (integral((k + 1) * step) - integral(k * step)) / step
    return np.asarray(np.where(a == 0, _at_most(np.zeros(a.shape), np.broadcast_to(z, a.shape)),
                               np.clip(rounded, 0.0, 1.0)), dtype=np.float64)


def _laplace_cdf(design: Laplace, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(report <= z | y) of the Laplace mechanism on its grid.

    The grid position m of y is rounded up with chance its fraction f; the report is on grid
    point m + K, K discrete Laplace with P(K <= k) = a^-k / (1 + a) for k < 0, else
    1 - a^(k + 1) / (1 + a).
    """
    a = math.exp(-design.epsilon / design.steps_across)
    position = (np.clip(y, design.low, design.low + design.width) - design.low) / design.step
    base = _grid_floor(position)
    fraction = np.where(position - base > 1e-9, position - base, 0.0)
    top = _grid_floor((z - design.low) / design.step)  # the last grid point at most z

    def k_cdf(k: np.ndarray) -> np.ndarray:
        return np.asarray(np.where(k < 0, np.power(a, -np.minimum(k, 0)) / (1 + a),
                                   1 - np.power(a, np.maximum(k, 0) + 1) / (1 + a)),
                          dtype=np.float64)

    return np.asarray((1 - fraction) * k_cdf(top - base) + fraction * k_cdf(top - base - 1),
                      dtype=np.float64)


def _piecewise_cdf(design: Piecewise, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    c = design.c
    x = 2 * (np.clip(y, design.low, design.low + design.width) - design.low) / design.width - 1
    u = np.clip(2 * (z - design.low) / design.width - 1, -c, c)
    left = (c + 1) / 2 * x - (c - 1) / 2
    high, low = design.densities()
    inside = np.clip(np.minimum(u, left + c - 1) - left, 0.0, None)
    return np.asarray(low * (u + c) + (high - low) * inside, dtype=np.float64)


# ------------------------------------------------------------------------- cells and bins


def cells(design: NumberDesign, reports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cells' lowest and highest true numbers.

    Over [min, max] (without them: the 1st to 99th percentile of the de-biased reports): each
    whole number when the question takes whole numbers and there are at most WHOLE_CELLS of
    them, else CELLS equal cells (of whole numbers for a whole-number question); a bounded range
    of any numbers also has a cell for exactly min and one for exactly max. A true number in
    two cells (an edge) counts in the first that holds it.
    """
    from .numbers import debias

    if design.minimum is None or design.maximum is None:
        r = debias(design, reports)
        low, high = float(np.percentile(r, 1)), float(np.percentile(r, 99))
        if design.minimum is not None:
            low = max(low, design.minimum)
        if design.maximum is not None:
            high = min(high, design.maximum)
        if design.integer:
            low, high = math.floor(low), math.ceil(high)
        if high <= low:
            high = low + 1
    else:
        low, high = design.minimum, design.maximum
    if design.integer:
        count = int(high - low) + 1
        if count <= WHOLE_CELLS:
            whole = np.arange(count, dtype=np.float64) + low
            return whole, whole.copy()
        width = math.ceil(count / CELLS)
        starts = np.arange(low, high + 1, width, dtype=np.float64)
        return starts, np.minimum(starts + width - 1, high)
    edges = np.linspace(low, high, CELLS + 1)
    if design.minimum is None or design.maximum is None:
        return edges[:-1], edges[1:]
    # the ends of a bounded range get cells of their own: "exactly min" (no income undeclared,
    # no day of use) and "exactly max" (the answer of everyone at or above it) are common
    return (np.concatenate(([low], edges[:-1], [high])),
            np.concatenate(([low], edges[1:], [high])))


def _nodes(low: float, high: float, integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """Points of a cell and their weights (summing to 1)."""
    if low == high:
        return np.array([low]), np.array([1.0])
    if integer:
        whole = np.arange(low, high + 1)
        if len(whole) > NODES:
            whole = np.unique(np.round(np.linspace(low, high, NODES)))
        return whole, np.full(len(whole), 1.0 / len(whole))
    points, weights = np.polynomial.legendre.leggauss(NODES)
    return low + (points + 1) * (high - low) / 2, weights / 2


def report_bins(reports: np.ndarray, design: NumberDesign, lows: np.ndarray,
                highs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper edges of the report bins (the last bin reaches +inf) and the counts in each.

    A mixture sends the true number itself or a mask draw, whatever the true number is: its
    bins are the cells themselves, so that P(report in a cell's bin | truth in cell j) does not
    depend on where in cell j the truth lies. Other designs: each distinct report when there
    are few (bin b holds the reports equal to the b-th distinct value, as (previous edge,
    value]), else quantiles of the reports; and the cells' edges carried to where the law of
    their reports bends (:func:`report_kinks`). A cell of one number gets a bin ending just
    below it.
    """
    truths = np.unique(np.concatenate((lows, highs)))
    below = lows[lows == highs] - _gap(lows, highs)
    if isinstance(design, Mixture):  # bin j: (the previous cell's top, cell j's top]
        edges = np.unique(np.concatenate((cell_tops(lows, highs), below,
                                          [lows[0] - _gap(lows, highs)])))
    else:
        values = np.unique(reports)
        if len(values) > DISTINCT_BINS:
            values = np.quantile(reports, np.linspace(0, 1, REPORT_BINS + 1)[1:-1])
        edges = np.unique(np.concatenate((values, below, report_kinks(design, truths))))
    index = np.searchsorted(edges, reports, side="left")  # edges[b - 1] < z <= edges[b]
    counts = np.bincount(index, minlength=len(edges) + 1).astype(np.float64)
    return edges, counts


def _gap(lows: np.ndarray, highs: np.ndarray) -> float:
    """How far below a cell of one number its report bin starts.

    Far below the cells' spacing, far above float error (and a lattice design's snapping).
    """
    return 1e-6 * max(float(np.max(highs) - np.min(lows)), 1e-3)


def cell_tops(lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """Where each cell's reports end for a mixture.

    Its highest number, but just below max for the cell before the cell of exactly max (which
    holds max itself).
    """
    tops = highs.astype(np.float64).copy()
    before_point = (lows[1:] == highs[1:]) & (lows[1:] == highs[:-1])
    tops[:-1] = np.where(before_point, highs[:-1] - _gap(lows, highs), tops[:-1])
    return tops


def report_kinks(design: NumberDesign, truths: np.ndarray) -> np.ndarray:
    """Reports at which the law of the report of these true numbers jumps or bends."""
    intercept, slope = design.linear()
    out = [intercept + slope * truths]
    if isinstance(design, Additive | Multiplicative):
        ends = [v for v in (design.scramble.lowest, design.scramble.highest) if math.isfinite(v)]
        if isinstance(design, Additive):
            out += [truths + end for end in ends]
        else:
            out += [truths * end for end in ends] + [truths]
    elif isinstance(design, Piecewise):
        c = design.c
        x = 2 * (np.clip(truths, design.low, design.low + design.width) - design.low) \
            / design.width - 1
        left = (c + 1) / 2 * x - (c - 1) / 2
        half = design.width / 2
        out += [design.low + (left + 1) * half, design.low + (left + c) * half,
                np.array(design.support())]
    return np.concatenate(out)


def design_matrix(design: NumberDesign, lows: np.ndarray, highs: np.ndarray,
                  edges: np.ndarray) -> np.ndarray:
    """A[j, b] = P(report in bin b | truth spread evenly over cell j)."""
    rows = []
    for low, high in zip(lows, highs, strict=True):
        points, weights = _nodes(float(low), float(high), design.integer)
        cdf = report_cdf(design, edges[None, :], points[:, None])       # nodes x edges
        cdf = np.hstack((np.zeros((len(points), 1)), cdf, np.ones((len(points), 1))))
        rows.append(weights @ np.clip(np.diff(cdf, axis=1), 0.0, None))
    matrix = np.array(rows)
    return np.asarray(matrix / matrix.sum(axis=1, keepdims=True), dtype=np.float64)


# ------------------------------------------------------------------------------ estimation


def deconvolve(parts: Sequence[tuple[NumberDesign, np.ndarray]], confidence: float = 0.95
               ) -> Deconvolution:
    """The shares of the true numbers in each cell and the cumulative shares, with intervals.

    ``parts``: (design, reports) of each version answered; the versions' designs must cover
    the same range. Raises DeconvolutionError when there is nothing to estimate from.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    used = [(design, _finite(reports)) for design, reports in parts]
    used = [(design, z) for design, z in used if len(z)]
    if sum(len(z) for _, z in used) < 2:
        raise DeconvolutionError("too few reports")
    ranges = {(d.minimum, d.maximum, d.integer) for d, _ in used}
    if len(ranges) > 1:
        raise DeconvolutionError("the versions' designs cover different ranges")
    first = max(used, key=lambda part: len(part[1]))
    lows, highs = cells(first[0], first[1])
    messages: list[str] = []
    shares = _maximum_likelihood(used, lows, highs)
    if shares is None:
        messages.append("the reports cannot tell the cells apart (the design blurs them too "
                        "much), so no share is estimated; the cumulative shares are bounded")
    exact = len(used) == 1 and isinstance(used[0][0], Mixture)
    low = high = None
    if exact:
        design, reports = used[0]
        assert isinstance(design, Mixture)
        low, high = _mixture_intervals(design, reports, lows, highs, confidence)
    below, above = _cumulative_band(used, lows, highs, confidence)
    cumulative = None if shares is None else np.cumsum(shares)
    if cumulative is not None:
        inside = np.clip(cumulative, below, above)
        moved = int(np.count_nonzero(np.abs(inside - cumulative) > 1e-9))
        if moved:
            messages.append(f"the maximum-likelihood cumulative share left the band at {moved} "
                            f"point{'s' if moved > 1 else ''} (the even spread within a cell "
                            "does not fit there); the band holds whatever the spread")
    return Deconvolution(
        lows.tolist(), highs.tolist(), None if shares is None else shares.tolist(),
        None if low is None else low.tolist(), None if high is None else high.tolist(),
        None if cumulative is None else cumulative.tolist(), below.tolist(), above.tolist(),
        confidence, sum(len(z) for _, z in used), messages)


def _finite(reports: np.ndarray) -> np.ndarray:
    z = np.asarray(reports, dtype=np.float64)
    return z[np.isfinite(z)]


def _maximum_likelihood(used: Sequence[tuple[NumberDesign, np.ndarray]], lows: np.ndarray,
                        highs: np.ndarray) -> np.ndarray | None:
    """The shares of the cells that maximise the binned likelihood of every version.

    None when the binned laws cannot tell the cells apart (many maxima).
    """
    joint_parts, full = [], []
    for design, z in used:
        edges, counts = report_bins(z, design, lows, highs)
        matrix = design_matrix(design, lows, highs, edges)
        if np.any((counts > 0) & (matrix.max(axis=0) <= 0)):
            raise DeconvolutionError(f"design {design.name}: a report that no true number in "
                                     "[min, max] can produce")
        joint_parts.append(JointPart((matrix,), counts))
        full.append(matrix)
    if np.linalg.matrix_rank(np.hstack(full), tol=1e-10) < len(lows):
        return None
    shares, _ = mle(joint_parts)
    return np.asarray(shares, dtype=np.float64)


def _mixture_intervals(design: Mixture, reports: np.ndarray, lows: np.ndarray,
                       highs: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson for the reports in each cell's bin, mapped through p pi + (1 - p) M.

    Cell j's bin ends at its highest number (:func:`report_bins`) and holds every true number
    of the cell, so the chance of a report in it is p pi_j + (1 - p) M_j, M_j the mask's chance
    of the bin, wherever in the cell the truths lie.
    """
    edges, counts = report_bins(reports, design, lows, highs)
    tops = cell_tops(lows, highs)
    index = np.searchsorted(edges, tops, side="left")
    below = np.where(index > 0, edges[np.maximum(index - 1, 0)], -np.inf)
    step = design.report_step
    mask = sent_cdf(design.mask, tops, step) - sent_cdf(design.mask, below, step)
    rate_low, rate_high = clopper_pearson(counts[index], len(reports), confidence)
    offset = (1 - design.p) * mask
    low = np.clip((np.asarray(rate_low) - offset) / design.p, 0.0, 1.0)
    high = np.clip((np.asarray(rate_high) - offset) / design.p, 0.0, 1.0)
    return low, high


def _cumulative_band(used: Sequence[tuple[NumberDesign, np.ndarray]], lows: np.ndarray,
                     highs: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of F(t) at every cell's highest number t that hold together (module doc).

    Each version's DKW band at level (1 - confidence) / versions (Bonferroni), the bounds of
    the versions intersected, then made monotone in t.
    """
    design0 = used[0][0]
    start = -math.inf if design0.minimum is None else design0.minimum
    end = math.inf if design0.maximum is None else design0.maximum
    tiny = 1e-9 * max(1.0, float(np.max(np.abs(highs))))
    # cell j's event is "true number <= t"; the smallest true number above it is "next". The
    # cell before a cell of exactly max ends just below max.
    thresholds, nexts = highs.astype(np.float64).copy(), np.full(len(highs), np.inf)
    if design0.integer:
        nexts[:-1] = lows[1:]
    else:
        nexts[:-1] = highs[:-1] + tiny
        before_point = (lows[1:] == highs[1:]) & (lows[1:] == highs[:-1])
        thresholds[:-1] = np.where(before_point, highs[:-1] - tiny, thresholds[:-1])
        nexts[:-1] = np.where(before_point, highs[:-1], nexts[:-1])
    alpha = (1 - confidence) / len(used)
    below, above = np.zeros(len(thresholds)), np.ones(len(thresholds))
    for design, z in used:
        width = math.sqrt(math.log(2 / alpha) / (2 * len(z)))
        points = _band_points(z, design, lows, highs)
        empirical = np.searchsorted(np.sort(z), points, side="right") / len(z)
        at_start = _limit_cdf(design, points, start, 1.0)
        at_end = _limit_cdf(design, points, end, 0.0)
        at_t = report_cdf(design, points[None, :], thresholds[:, None])
        at_next = np.where(np.isinf(nexts)[:, None], at_end[None, :],
                           report_cdf(design, points[None, :],
                                      np.where(np.isinf(nexts), 0.0, nexts)[:, None]))
        gap = at_start[None, :] - at_next
        low = np.divide(empirical - width - at_next, gap, where=gap > 1e-12,
                        out=np.full(gap.shape, -np.inf))
        gap = at_t - at_end[None, :]
        high = np.divide(empirical + width - at_end[None, :], gap, where=gap > 1e-12,
                         out=np.full(gap.shape, np.inf))
        below = np.maximum(below, np.max(low, axis=1))
        above = np.minimum(above, np.min(high, axis=1))
    below = np.maximum.accumulate(np.clip(below, 0.0, 1.0))
    above = np.minimum.accumulate(np.clip(above, 0.0, 1.0)[::-1])[::-1]
    above[-1] = 1.0 if math.isfinite(end) else above[-1]
    if math.isfinite(end):
        below[-1] = 1.0  # every true number is at most max
    return below, np.maximum(above, below)


def _limit_cdf(design: NumberDesign, points: np.ndarray, y: float, limit: float) -> np.ndarray:
    """F(z | y) at the points; at an infinite end of the range, its limit (1 below, 0 above)."""
    if not math.isfinite(y):
        return np.full(len(points), limit)
    return np.asarray(report_cdf(design, points, np.full(len(points), y)), dtype=np.float64)


def _band_points(reports: np.ndarray, design: NumberDesign, lows: np.ndarray,
                 highs: np.ndarray) -> np.ndarray:
    """Where the band is used: the reports (or quantiles of many) and where the laws bend."""
    truths = np.unique(np.concatenate((lows, highs)))
    values = np.unique(reports)
    if len(values) > BAND_POINTS:
        values = np.quantile(reports, np.linspace(0, 1, BAND_POINTS + 1))
    kinks = report_kinks(design, truths)
    kinks = kinks[(kinks >= values[0]) & (kinks <= values[-1])]
    return np.unique(np.concatenate((values, kinks, kinks - 1e-9 * np.maximum(1.0, np.abs(
        kinks)))))
