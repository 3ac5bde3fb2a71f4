"""`rrsite analyze --model "y ~ a + b"`: the regressions, each kind in a module of this package.

from rrsite.analyze.regression import regress
models = regress(["export.csv"], survey="surveys/honor-code.md",
                 models=["violated ~ year + courses"])
models[0].fit.coefficients[1].odds_ratio
models[0].to_dict()      # the JSON of `rrsite analyze --model ... --format json`
models[0].to_pandas()    # one row per coefficient (needs pandas)

Rows are read and checked exactly as `rrsite analyze` does (rejected rows are counted the same
way; rrsite.exports.rows); each accepted row keeps its own version's design, so versions are
pooled in one likelihood. Which model a formula gets:

- a random intercept ``(1 | g)``: ``random_intercepts`` (``MixedModel``);
- a randomized yes-no or choice question on the right-hand side: ``predictors``
  (``PredictorModel``);
- a randomized number as the outcome: ``numbers``, and as a predictor ``number_predictors``
  (``NumberModel``);
- otherwise a randomized (or direct) yes-no outcome: ``logistic`` (``ModelResult``).

Rendering is rrsite.report.models.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import RRSiteError, UsageError
from ...estimate.regression.formula import Covariate, Formula, FormulaError, parse_formula
from ...exports.catalog import Catalog, exports_and_catalog
from ...exports.readers import parse_mapping
from ...exports.rows import Rows, read_rows
from ..sample_design import SampleOptions, build_design
from .logistic import covariate_spec, fit_model
from .number_predictors import fit_number_predictor_model, number_predictors_in
from .numbers import fit_number_model, is_number_outcome
from .predictors import fit_predictor_model, randomized_in
from .random_intercepts import fit_mixed_model


def fit_any(catalog: Catalog, rows: Rows, formula: Formula, confidence: float,
            bias_reduced: bool, design: Any = None) -> Any:
    """A yes-no outcome's model: random intercept, randomized predictors, or the logistic fit."""
    if design is not None and (formula.groups or randomized_in(catalog, formula)):
        raise UsageError("--model with a random intercept or a randomized predictor: a sample "
                         "design is not supported yet; fit it without --weights/--strata/--cluster")
    if formula.groups:
        return fit_mixed_model(catalog, rows, formula, confidence, bias_reduced)
    if randomized_in(catalog, formula):
        return fit_predictor_model(catalog, rows, formula, confidence, bias_reduced)
    return fit_model(catalog, rows, formula, confidence, bias_reduced, design)


def fit_number(catalog: Catalog, rows: Rows, formula: Formula, confidence: float) -> Any:
    """A model with a randomized number: as a predictor (moment correction) or as the outcome."""
    if formula.groups:
        raise FormulaError("a random intercept takes a yes-no outcome and direct "
                           "predictors; this model has a randomized number")
    if number_predictors_in(catalog, formula):
        return fit_number_predictor_model(catalog, rows, formula, confidence)
    covariates = {
        name: Covariate(spec.type, spec.values, rows.answers[name])
        for name in formula.questions
        for spec in [covariate_spec(catalog, name)]
    }
    return fit_number_model(catalog, rows, formula, confidence, covariates)


def regress(
    exports: str | Path | Iterable[str | Path],
    survey: str | Path | Iterable[str | Path] | None = None,
    manifests: Iterable[str | Path | Mapping[str, Any]] = (),
    models: Sequence[str] = (),
    confidence: float = 0.95,
    mapping: Sequence[str] | None = None,
    bias_reduced: bool = False,
    sample: SampleOptions | None = None,
) -> list[Any]:
    """Fit every model formula on the exports (see the module docstring).

    ``bias_reduced`` adds Kosmidis & Firth's bias-reduced estimates to each fit
    (``ModelResult.fit.bias_reduced``). ``sample``: the sample design's columns
    (rrsite.analyze.sample_design): weighted pseudo-likelihood fits with sandwich SEs.
    """
    paths, catalog = exports_and_catalog(exports, survey, manifests, confidence)
    formulas = [parse_formula(text) for text in models]
    needed: dict[str, None] = {}
    for formula in formulas:
        needed.setdefault(formula.outcome, None)
        for name in [*formula.questions, *formula.groups]:
            needed.setdefault(name, None)
    known = set(catalog.question_ids())
    for name in needed:
        if name not in known:
            raise FormulaError(f"no question {name!r} in {catalog.survey!r} "
                               f"(questions: {', '.join(catalog.question_ids())})")
    column_map = parse_mapping(list(mapping or ()), catalog)
    numeric = [is_number_outcome(catalog, f.outcome) or bool(number_predictors_in(catalog, f))
               for f in formulas]
    if any(numeric) and not all(numeric):
        raise UsageError("--model: fit randomized-number outcomes (linear) and yes-no outcomes "
                         "(logistic) in separate commands")
    rows = read_rows(paths, catalog, column_map, list(needed))
    design = None
    if sample is not None:
        design = build_design(paths, catalog, column_map, sample)[0]
        if design.n != len(rows.version):  # the same reader and checks: the same rows
            raise RRSiteError("the design's rows and the model's rows differ")
    results = []
    for formula in formulas:
        try:
            if any(numeric):
                if design is not None:
                    raise UsageError("--model with a number outcome: a sample design is not "
                                     "supported yet; fit it without --weights/--strata/--cluster")
                results.append(fit_number(catalog, rows, formula, confidence))
            else:
                results.append(fit_any(catalog, rows, formula, confidence, bias_reduced, design))
            results[-1].rejected = rows.rejections
        except RRSiteError as error:
            raise type(error)(f"model {formula.text!r}: {error}") from error
    return results
