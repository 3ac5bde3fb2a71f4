"""`--model "y ~ amount + x"` with a randomized number among the predictors.

A randomized number's de-biased report ``r = (z - intercept) / slope`` is the true number ``q``
plus noise with ``E[noise | q] = 0`` whose variance ``v(q)`` the design fixes (for a mixture or
multiplicative scrambling it depends on ``q``); each row's ``conditional_variance`` is an
unbiased estimate ``v_i`` of it (rrsite.estimate.numbers). As a predictor, ``r`` is ``q`` measured
with error: least squares on ``r`` is biased towards zero (attenuation). The noise is
independent of everything but its own question's true number, so

    E[x_i x_i'] = E[xi_i xi_i'] + E[D_i],   E[x_i y_i] = E[xi_i y_i]

where ``x_i`` is the row with ``r`` in place of ``q``, ``xi_i`` the row with the true numbers and
``D_i`` the diagonal of the ``v_i`` (zero for every other column). The method-of-moments estimate
(Fuller 1987, *Measurement Error Models*, section 2.2, with a per-row known error variance) is

    beta = (sum x_i x_i' - sum D_i)^-1 sum x_i y_i

and its covariance the sandwich of the estimating equation ``psi_i = x_i (y_i - x_i' beta) +
D_i beta`` (mean zero at the true beta): ``A^-1 (sum psi_i psi_i') A^-1 n / (n - k)`` with
``A = sum x_i x_i' - sum D_i``. The outcome may be a number asked directly or randomized (de-biased
the same way; its noise only adds to the residual). Intervals are Student's t with n - k df.

Refused with a reason: randomized numbers inside an interaction or ``scale()`` (the correction
is for a column that is the number itself), randomized yes-no predictors in the same model
(rrsite.analyze.regression.predictors fits those), mixture-unknown and duchi predictors (no per-row
variance estimate), and a yes-no outcome (the logistic model is not linear in the noise).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...estimate.numbers import conditional_variance, debias
from ...estimate.regression.formula import Covariate, Formula, FormulaError, design_matrix
from ...exports.catalog import Catalog
from .logistic import covariate_spec
from .numbers import LinearFit, NumberModel, NumberRegressionError, check_columns
from .predictors import randomized_in

METHOD = ("least squares with the scrambling removed by moments (the de-biased reports' "
          "noise variance subtracted from the randomized predictors' squares: "
          "errors-in-variables, Fuller 1987); sandwich standard errors of the estimating "
          "equation, which include the scrambling noise; Student's t intervals")


def number_predictors_in(catalog: Catalog, formula: Formula) -> list[str]:
    """The formula's right-hand-side questions asked as a randomized number in some version."""
    return [name for name in formula.questions
            if any(q.number_design is not None for _, q in catalog.questions_named(name))]


def fit_corrected(X: np.ndarray, y: np.ndarray, noise: np.ndarray, names: list[str],
                  confidence: float = 0.95) -> LinearFit:
    """Beta = (X'X - sum D_i)^-1 X'y with the estimating equation's sandwich covariance.

    ``noise`` (n x k): each row's unbiased estimate of its columns' noise variance (0 where a
    column is measured exactly).
    """
    n, k = check_columns(X)
    corrected = X.T @ X - np.diag(noise.sum(axis=0))
    eigenvalues = np.linalg.eigvalsh(corrected)
    if eigenvalues.min() <= 1e-9 * max(eigenvalues.max(), 1.0):
        raise NumberRegressionError(
            "the randomized predictors' scrambling noise outweighs their spread in these rows "
            "(the corrected moment matrix is not positive definite): the slopes cannot be "
            "estimated; more respondents or a design with less noise are needed")
    beta = np.linalg.solve(corrected, X.T @ y)
    psi = X * (y - X @ beta)[:, None] + noise * beta[None, :]
    inverse = np.linalg.inv(corrected)
    covariance = inverse @ (psi.T @ psi) @ inverse * n / (n - k)
    return LinearFit(names, beta, covariance, n, confidence)


def _designs(catalog: Catalog, rows: Any, qid: str, role: str) -> dict[int, Any]:
    """Each version's number design of ``qid`` (None where it is asked directly)."""
    out: dict[int, Any] = {}
    for m in sorted(set(np.unique(rows.version).tolist())):
        question = catalog.versions[m].question(qid)
        if question is None:
            continue
        design = question.number_design
        if design is not None and design.name in ("mixture-unknown", "duchi"):
            why = ("its innocuous mean is estimated from both groups" if design.name ==
                   "mixture-unknown" else "its two reports carry no per-respondent variance")
            raise NumberRegressionError(f"{qid!r} ({role}) uses {design.name}: {why}, so the "
                                        "scrambling cannot be removed row by row")
        out[m] = design
    return out


def _values(raw: list[object]) -> np.ndarray:
    return np.array([math.nan if v is None or v == "" else float(str(v)) for v in raw])


def fit_number_predictor_model(catalog: Catalog, rows: Any, formula: Formula,
                               confidence: float) -> NumberModel:
    """The corrected least squares of the module docstring."""
    numbers = number_predictors_in(catalog, formula)
    others = [q for q in randomized_in(catalog, formula) if q not in numbers]
    if others:
        raise FormulaError(f"{', '.join(others)} is randomized as yes-no or choice and "
                           f"{', '.join(numbers)} as a number: rrsite fits randomized "
                           "numbers and randomized yes-no predictors in separate models")
    for term in formula.terms:
        inside = [f.name for f in term.factors if f.name in numbers]
        if inside and (len(term.factors) > 1 or term.factors[0].scale or term.factors[0].ref):
            raise FormulaError(f"{inside[0]!r} is a randomized number: it may enter only as a "
                               f"main effect (not {term.label}), the column the noise "
                               "correction is for")
    qid = formula.outcome
    outcome_questions = [q for _, q in catalog.questions_named(qid)]
    if any(q.type != "number" for q in outcome_questions):
        raise FormulaError(f"the outcome {qid!r} is not a number: with a randomized number "
                           "predictor rrsite fits a linear model (a logistic model is not "
                           "linear in the scrambling noise, so moments cannot remove it)")
    if len(rows.version) == 0:
        raise NumberRegressionError(f"no row was accepted ({rows.rejections.total:,} "
                                    "rejected):\n" + rows.rejections.summary())
    covariates = {}
    for name in formula.questions:
        if name in numbers:
            covariates[name] = Covariate("number", (), rows.answers[name])
        else:
            spec = covariate_spec(catalog, name)
            covariates[name] = Covariate(spec.type, spec.values, rows.answers[name])
    designs = {qid: _designs(catalog, rows, qid, "the outcome"),
               **{name: _designs(catalog, rows, name, "a predictor") for name in numbers}}
    raw = rows.answers[qid]
    values = _values(raw)
    missing = np.isnan(values)
    matrix = design_matrix(formula, covariates, missing)
    used = matrix.used
    version = rows.version[used]
    y = values[used]
    for m, design in designs[qid].items():
        if design is not None:
            y[version == m] = debias(design, y[version == m])
    X = matrix.X.copy()
    noise = np.zeros_like(X)
    for name in numbers:
        j = matrix.names.index(name)
        for m, design in designs[name].items():
            if design is None:
                continue
            here = version == m
            X[here, j] = debias(design, X[here, j])
            noise[here, j] = conditional_variance(design, X[here, j])  # duchi refused above
    result = fit_corrected(X, y, noise, matrix.names, confidence)
    described = []
    privacy = []
    for name, by_version in designs.items():
        for m, design in by_version.items():
            if design is not None:
                described.append({"question": name, "version": catalog.versions[m].version,
                                  **design.spec()})
                privacy.append(f"{name}, version {catalog.versions[m].version}: "
                               f"{design.privacy().describe()}")
    return NumberModel(formula, result, matrix, int(np.count_nonzero(missing)), described,
                       "; ".join(privacy) or "not randomized", len(raw), method=METHOD,
                       randomized_predictors=list(numbers))
