"""`rrsite analyze --model "y ~ q + x"` where q is randomized: regression on unknown true answers.

from rrsite.analyze.regression import regress
models = regress(["export.csv"], survey="surveys/honor-code.md",
                 models=["courses ~ violated + year"])
models[0].fit.coefficients          # (Intercept), violated[yes], year[...]
models[0].to_dict()                 # the JSON of `--format json`

A model whose right-hand side names a randomized question is fitted here (rrsite.estimate.
predictors): a linear regression for a direct number outcome (RRreg's RRlin), a logistic
regression for a direct yes-no outcome (rr's rrreg.predictor). The randomized predictors are
yes-no or choice questions of one-group designs and yes-no questions of two-group designs, whose
second parameter is estimated jointly (estimate.regression.predictors_groups; the questions a joint
table takes: the latent classes are the joint table's combinations); they enter as main effects
(an indicator per non-reference true answer, ``C(q, ref="...")`` to choose the reference). Every
row keeps its own version's design matrices. A row missing the outcome, a covariate or a
randomized predictor is left out and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...estimate.joint import JointPart
from ...estimate.joint_groups import GroupedPart
from ...estimate.regression.formula import (
    Covariate,
    DesignMatrix,
    Formula,
    FormulaError,
    Term,
    design_matrix,
    number_or_nan,
)
from ...estimate.regression.logistic import NUISANCE_MEANING, RegressionError
from ...estimate.regression.predictors import PredictorFit, fit_predictors, latent_classes
from ...estimate.regression.predictors_groups import GroupedRows, fit_predictors_groups
from ...exports.catalog import Catalog
from ...exports.rejections import Rejections
from ...exports.rows import Rows
from ..joint import (
    check_question,
    combination_privacy,
    combinations,
    grouped_part,
    question_matrix,
    second_parameters,
    version_design,
)
from .logistic import COVARIATE_TYPES


def randomized_in(catalog: Catalog, formula: Formula) -> list[str]:
    """The formula's right-hand-side questions that are randomized in some version."""
    return [name for name in formula.questions
            if any(q.sensitive for _, q in catalog.questions_named(name))]


@dataclass
class PredictorModel:
    """One fitted regression on randomized predictors, with what it was fitted on."""

    formula: Formula
    fit: PredictorFit
    matrix: DesignMatrix
    randomized: list[str]
    left_out: dict[str, int]
    designs: list[dict[str, Any]]
    privacy: list[dict[str, Any]]
    rows_accepted: int
    rejected: Rejections = field(default_factory=Rejections)

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of docs/contracts.md ("analyze --model", randomized predictors)."""
        f = self.fit
        return {
            "formula": self.formula.text,
            "outcome": self.formula.outcome,
            "kind": f"{f.kind} (randomized predictors)",
            "randomized_predictors": self.randomized,
            "n": f.n,
            "rows_accepted": self.rows_accepted,
            "left_out": self.left_out,
            "confidence": f.confidence,
            "coefficients": f.coefficient_dicts(),
            "ci_method": f.ci_method,
            "terms": [t.to_dict() for t in f.terms],
            "model_test": f.model_test.to_dict() if f.model_test else None,
            "loglik": f.loglik,
            "aic": f.aic,
            "iterations": f.iterations,
            "gradient_max": f.gradient_norm,
            "covariance": f.covariance.tolist(),
            "sigma": f.sigma,
            "sigma_se": f.sigma_se,
            "classes": [s.to_dict() for s in f.shares],
            "levels": self.matrix.levels,
            "scaling": {k: {"mean": m, "sd": s} for k, (m, s) in self.matrix.scaling.items()},
            "designs": self.designs,
            "privacy": self.privacy,
            "messages": f.messages,
            "rows_rejected": self.rejected.total,
            "nuisance": [t.to_dict() for t in f.nuisance],
        }

    def to_pandas(self) -> Any:
        """One row per coefficient."""
        import pandas as pd

        return pd.DataFrame(self.fit.coefficient_dicts()).set_index("name")

def fit_predictor_model(catalog: Catalog, rows: Rows, formula: Formula, confidence: float,
                        bias_reduced: bool = False) -> PredictorModel:
    """Check the formula, build the latent classes and the direct columns, fit."""
    randomized = randomized_in(catalog, formula)
    where = f"formula {formula.text!r}"
    if bias_reduced:
        raise RegressionError(f"{where}: --bias-reduced is not available with randomized "
                              "predictors (maximum likelihood only)")
    if len(rows.version) == 0:
        raise RegressionError(f"no row was accepted ({rows.rejections.total:,} rejected):\n"
                              + rows.rejections.summary())
    # the outcome: asked directly, a number (linear) or yes-no (logistic)
    outcome_specs = catalog.questions_named(formula.outcome)
    if any(q.sensitive for _, q in outcome_specs):
        raise FormulaError(f"{where}: the outcome {formula.outcome!r} is randomized and so is "
                           f"{', '.join(randomized)}; with randomized predictors, the outcome must "
                           "be asked directly")
    types = {q.type for _, q in outcome_specs}
    if types == {"number"}:
        kind = "linear"
    elif types == {"yes-no"}:
        kind = "logistic"
    else:
        raise FormulaError(f"{where}: the outcome {formula.outcome!r} is {', '.join(sorted(types))}"
                           "; with randomized predictors it must be a number (linear regression) "
                           "or a yes-no question (logistic regression)")
    # randomized predictors: main effects only
    refs: dict[str, str | None] = {}
    direct_terms: list[Term] = []
    for term in formula.terms:
        names = [f.name for f in term.factors]
        if not set(names) & set(randomized):
            direct_terms.append(term)
            continue
        if len(term.factors) > 1:
            raise FormulaError(f"{where}: {term.label} is an interaction with a randomized "
                               "question; randomized predictors enter as main effects only")
        factor = term.factors[0]
        if factor.scale:
            raise FormulaError(f"{where}: scale({factor.name}): a randomized predictor is a "
                               "yes-no or choice question")
        refs[factor.name] = factor.ref
    found = {qid: dict(check_question(catalog, qid, "--model")) for qid in randomized}
    grouped = [qid for qid in randomized if any(q.two_group for q in found[qid].values())]
    tau_names = second_parameters(found, grouped, "--model")
    for name in {f.name for t in direct_terms for f in t.factors}:
        for _, spec in catalog.questions_named(name):
            if spec.type not in COVARIATE_TYPES:
                raise FormulaError(f"{where}: {name!r} is a {spec.type} question; covariates are "
                                   + ", ".join(COVARIATE_TYPES))
    values = [next(iter(found[qid].values())).values for qid in randomized]
    references = []
    for qid, vals in zip(randomized, values, strict=True):
        ref = refs[qid]
        if ref is None:
            ref = "no" if "no" in vals and len(vals) == 2 else vals[0]
        if ref not in vals:
            raise FormulaError(f"{where}: {qid} has no answer {ref!r} (answers: "
                               f"{', '.join(vals)})")
        references.append(ref)

    # rows used: outcome, every predictor (in a version that has it) and every covariate
    n = len(rows.version)
    outcome = rows.answers[formula.outcome]
    if kind == "linear":
        y_all = np.array([number_or_nan(v) for v in outcome], dtype=np.float64)
        outcome_missing = np.isnan(y_all)
    else:
        outcome_missing = np.array([v is None or v == "" for v in outcome], dtype=bool)
        y_all = np.array([1.0 if str(v) == "yes" else 0.0 for v in outcome])
    missing = outcome_missing.copy()
    left_out = {"outcome": int(np.count_nonzero(outcome_missing))}
    for qid in randomized:
        miss = np.array([v is None or v == "" for v in rows.answers[qid]], dtype=bool)
        miss |= np.array([m not in found[qid] for m in rows.version.tolist()], dtype=bool)
        left_out[qid] = int(np.count_nonzero(miss & ~missing))
        missing |= miss
    direct = Formula(formula.outcome, direct_terms, formula.text)
    covariates = {}
    for name in direct.questions:
        spec = catalog.questions_named(name)[0][1]
        covariates[name] = Covariate(spec.type, spec.values, rows.answers[name])
    matrix = design_matrix(direct, covariates, missing)
    left_out.update(matrix.missing)
    used = np.flatnonzero(matrix.used)
    if len(used) == 0:
        raise RegressionError(f"{where}: no accepted row has the outcome, every randomized "
                              "predictor and every covariate")
    # latent classes: one joint part per version (and groups of the two-group predictors),
    # rows reordered by part
    parts: list[JointPart] = []
    grouped_parts: list[GroupedPart] = []
    cells: list[np.ndarray] = []
    order: list[int] = []
    designs: list[dict[str, Any]] = []
    position_in_used = {int(i): k for k, i in enumerate(used.tolist())}
    tau_index = {qid: j for j, qid in enumerate(grouped)}
    for m in sorted(set(rows.version[used].tolist())):
        specs = [found[qid][m] for qid in randomized]
        in_m = used[rows.version[used] == m]
        cell, found_here = combinations(rows, randomized, specs, in_m, "--model")
        for combo, here, counts in found_here:
            if grouped:
                grouped_parts.append(grouped_part(randomized, specs, combo, tau_index, counts))
            else:
                parts.append(JointPart(tuple(question_matrix(q) for q in specs), counts))
            cells.append(cell[here])
            order.extend(position_in_used[int(i)] for i in in_m[here].tolist())
        designs.append(version_design(catalog, m, int(len(in_m)), randomized, specs))
    matrices = [p.matrix for p in parts] or [p.at(np.full(len(grouped), 0.5)).matrix
                                             for p in grouped_parts]
    full = np.hstack(matrices)
    if np.linalg.matrix_rank(full, tol=1e-10) < full.shape[0]:
        raise RegressionError(f"{where}: the designs of {', '.join(randomized)} cannot separate "
                              "their combinations of true answers: the model is not identified")
    index = np.asarray(order, dtype=np.int64)
    X = matrix.X[index]
    y = y_all[used][index]
    predictor_terms = []
    column = 0
    for qid, vals in zip(randomized, values, strict=True):
        width = len(vals) - 1
        predictor_terms.append((qid, list(range(column, column + width))))
        column += width
    try:
        if grouped:
            rows_g = GroupedRows(grouped_parts, cells, values, references, randomized,
                                 len(grouped))
            result = fit_predictors_groups(
                kind, y, X, matrix.names, matrix.term_columns, rows_g, predictor_terms,
                [(qid, tau_names[qid], NUISANCE_MEANING.get(tau_names[qid], tau_names[qid]))
                 for qid in grouped], confidence)
            if "gamma" in tau_names.values():
                result.messages.append(
                    "CDM: a true answer is the answer of every respondent, cheaters included, "
                    "assuming that cheating is independent of the true answers and of the other "
                    "questions' reports; gamma is the cheaters' share")
        else:
            classes = latent_classes(parts, cells, values, references, randomized)
            result = fit_predictors(kind, y, X, matrix.names, matrix.term_columns, classes,
                                    predictor_terms, confidence)
    except ValueError as error:
        raise RegressionError(f"{where}: {error}") from error
    privacy = combination_privacy(catalog, randomized, sorted(set(rows.version[used].tolist())))
    return PredictorModel(formula, result, matrix, randomized, left_out, designs, privacy, n)
