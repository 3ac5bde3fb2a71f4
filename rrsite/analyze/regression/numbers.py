"""`rrsite analyze --model "amount ~ a + b"` with a randomized number as the outcome.

Linear regression with the scrambling removed by moments: each row's report is de-biased with
its own version's design, ``r_i = (z_i - intercept) / slope`` (rrsite.estimate.numbers.debias),
so ``E[r_i | x_i] = x_i' beta`` whenever ``E[y_i | x_i] = x_i' beta``; ordinary least squares on
``r`` is unbiased for beta. The scrambling adds noise whose variance depends on the design (and,
for a mixture, on y), so the standard errors are the heteroskedasticity-consistent sandwich
(HC1: (X'X)^-1 X' diag(e^2) X (X'X)^-1 n / (n - k)), which includes the scrambling noise; the
intervals are Student's t with n - k degrees of freedom. Designs without a per-respondent
de-biased value (mixture-unknown) are refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import RRSiteError
from ...estimate.intervals import quantiles
from ...estimate.numbers import debias
from ...estimate.regression.formula import (
    Covariate,
    DesignMatrix,
    Formula,
    FormulaError,
    design_matrix,
)
from ...exports.catalog import Catalog
from ...exports.rejections import Rejections


class NumberRegressionError(RRSiteError):
    """The linear model cannot be fitted (no rows, collinear columns, an unusable design)."""


@dataclass
class LinearFit:
    """OLS on the de-biased reports with HC1 standard errors."""

    names: list[str]
    beta: np.ndarray
    covariance: np.ndarray
    n: int
    confidence: float

    @property
    def se(self) -> np.ndarray:
        """Standard errors (HC1)."""
        return np.sqrt(np.diag(self.covariance))

    def coefficients(self) -> list[dict[str, Any]]:
        """Per column: name, estimate, se, t, p_value, ci_low, ci_high."""
        df = max(self.n - len(self.beta), 1)
        q = float(quantiles.t_ppf(0.5 + self.confidence / 2, df))
        out = []
        for name, b, s in zip(self.names, self.beta.tolist(), self.se.tolist(), strict=True):
            t = b / s if s > 0 else math.nan
            p = float(2 * quantiles.t_sf(abs(t), df)) if math.isfinite(t) else math.nan
            out.append({"name": name, "estimate": b, "se": s, "t": t, "p_value": p,
                        "ci_low": b - q * s, "ci_high": b + q * s})
        return out


def check_columns(X: np.ndarray) -> tuple[int, int]:
    """(n, k) of a model matrix with more rows than columns and full column rank; else raises."""
    n, k = X.shape
    if n <= k:
        raise NumberRegressionError(f"{n} rows for {k} coefficients: too few to fit")
    if np.linalg.matrix_rank(X) < k:
        raise NumberRegressionError("the columns are collinear (a level never or always seen, "
                                    "or a covariate repeated): the model is not identified")
    return n, k


def fit_linear(X: np.ndarray, r: np.ndarray, names: Sequence[str],
               confidence: float = 0.95) -> LinearFit:
    """Least squares of ``r`` on ``X`` with the HC1 sandwich covariance."""
    n, k = check_columns(X)
    bread = np.linalg.inv(X.T @ X)
    beta = bread @ (X.T @ r)
    residual = r - X @ beta
    meat = (X * (residual ** 2)[:, None]).T @ X
    covariance = bread @ meat @ bread * n / (n - k)
    return LinearFit(list(names), beta, covariance, n, confidence)


@dataclass
class NumberModel:
    """One fitted linear model of a randomized number."""

    formula: Formula
    fit: LinearFit
    matrix: DesignMatrix
    outcome_missing: int
    designs: list[dict[str, Any]]
    privacy: str
    rows_accepted: int
    rejected: Rejections = field(default_factory=Rejections)
    method: str = ("least squares on the de-biased reports (scrambling removed by moments); "
                   "HC1 sandwich standard errors, which include the scrambling noise; "
                   "Student's t intervals")
    #: Randomized numbers among the predictors (rrsite.analyze.regression.number_predictors).
    randomized_predictors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of one model (docs/contracts.md, "analyze --model", kind linear)."""
        return {
            "formula": self.formula.text, "outcome": self.formula.outcome, "kind": "linear",
            "n": self.fit.n, "rows_accepted": self.rows_accepted,
            "left_out": {"outcome": self.outcome_missing, **self.matrix.missing},
            "confidence": self.fit.confidence,
            "coefficients": self.fit.coefficients(),
            "covariance": self.fit.covariance.tolist(),
            "method": self.method,
            "randomized_predictors": self.randomized_predictors,
            "levels": self.matrix.levels,
            "scaling": {name: {"mean": m, "sd": s} for name, (m, s) in
                        self.matrix.scaling.items()},
            "designs": self.designs, "privacy": self.privacy,
            "rows_rejected": self.rejected.total,
        }


def is_number_outcome(catalog: Catalog, qid: str) -> bool:
    """Whether some version asks ``qid`` as a randomized number."""
    return any(q.numeric for _, q in catalog.questions_named(qid))


def fit_number_model(catalog: Catalog, rows: Any, formula: Formula, confidence: float,
                     covariates: dict[str, Covariate]) -> NumberModel:
    """Code the covariates, de-bias each row's report with its version's design, fit OLS."""
    qid = formula.outcome
    if len(rows.version) == 0:
        raise NumberRegressionError(f"no row was accepted ({rows.rejections.total:,} "
                                    "rejected):\n" + rows.rejections.summary())
    designs: dict[int, Any] = {}
    for m in sorted(set(np.unique(rows.version).tolist())):
        question = catalog.versions[m].question(qid)
        if question is None:
            continue
        if question.number_design is None:
            raise FormulaError(f"the outcome {qid!r} is not randomized in version "
                               f"{catalog.versions[m].version!r}: fit one kind at a time")
        if question.number_design.name == "mixture-unknown":
            raise NumberRegressionError(f"{qid!r} uses mixture-unknown, whose innocuous mean is "
                                        "estimated jointly: --model needs a design with a "
                                        "per-respondent de-biased value (mixture, additive, "
                                        "multiplicative, laplace, duchi, piecewise)")
        designs[m] = question.number_design
    if not designs:
        raise FormulaError(f"no accepted row has the outcome {qid!r}")
    raw = rows.answers[qid]
    values = np.array([math.nan if v is None or v == "" else float(str(v)) for v in raw])
    missing = np.isnan(values)
    matrix = design_matrix(formula, covariates, missing)
    used = matrix.used
    version = rows.version[used]
    z = values[used]
    r = np.empty(len(z))
    for m, design in designs.items():
        rows_in = version == m
        r[rows_in] = debias(design, z[rows_in])
    result = fit_linear(matrix.X, r, matrix.names, confidence)
    described = [{"version": catalog.versions[m].version, **d.spec()} for m, d in designs.items()]
    privacy = "; ".join(f"version {catalog.versions[m].version}: {d.privacy().describe()}"
                        for m, d in designs.items())
    return NumberModel(formula, result, matrix, int(np.count_nonzero(missing)), described,
                       privacy, len(raw))
