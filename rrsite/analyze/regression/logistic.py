"""`rrsite analyze --model "y ~ a + b"`: logistic regressions of a randomized yes/no answer.

from rrsite.analyze.regression import regress
models = regress(["export.csv"], survey="surveys/honor-code.md",
                 models=["violated ~ year + courses"])
models[0].fit.coefficients[1].odds_ratio
models[0].to_dict()      # the JSON of `rrsite analyze --model ... --format json`
models[0].to_pandas()    # one row per coefficient (needs pandas)

Each accepted row keeps its own version's design, so versions are pooled in one likelihood
(rrsite.analyze.regression reads the rows and chooses the kind of model). The estimation is
rrsite.estimate.regression.logistic; the formula and coding rrsite.estimate.regression.formula.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...estimate.intervals import quantiles
from ...estimate.regression.formula import (
    Covariate,
    DesignMatrix,
    Formula,
    FormulaError,
    design_matrix,
)
from ...estimate.regression.logistic import (
    NUISANCE_OF_MODEL,
    Fit,
    RegressionError,
    fit,
    fit_two_group,
    two_group_rates,
)
from ...estimate.survey_design import SampleDesign, design_logit
from ...exports.catalog import Catalog, QuestionSpec
from ...exports.rejections import Rejections
from ...exports.rows import Rows
from ..univariate import model_of

COVARIATE_TYPES = ("yes-no", "choice", "number", "multi-choice")


@dataclass
class ModelResult:
    """One fitted model, with what it was fitted on."""

    formula: Formula
    fit: Fit
    matrix: DesignMatrix
    outcome_missing: int
    designs: list[dict[str, Any]]
    privacy: str
    rows_accepted: int
    prevalence: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rejected: Rejections = field(default_factory=Rejections)
    #: With a sample design: its summary (the fit is then weighted, with sandwich SEs).
    sample_design: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of docs/contracts.md ("analyze --model")."""
        f = self.fit
        left_out = {"outcome": self.outcome_missing, **self.matrix.missing}
        return {
            "formula": self.formula.text,
            "outcome": self.formula.outcome,
            "n": f.n,
            "rows_accepted": self.rows_accepted,
            "left_out": left_out,
            "confidence": f.confidence,
            "coefficients": [c.to_dict() for c in f.coefficients],
            "terms": [t.to_dict() for t in f.terms],
            "model_test": f.model_test.to_dict() if f.model_test else None,
            "loglik": f.loglik,
            "aic": f.aic,
            "iterations": f.iterations,
            "covariance": f.covariance.tolist(),
            "levels": self.matrix.levels,
            "scaling": {k: {"mean": m, "sd": s} for k, (m, s) in self.matrix.scaling.items()},
            "prevalence": self.prevalence,
            "designs": self.designs,
            "privacy": self.privacy,
            "rows_rejected": self.rejected.total,
            "bias_reduced": ([c.to_dict() for c in f.bias_reduced.coefficients]
                             if f.bias_reduced else None),
            "nuisance": f.nuisance.to_dict() if f.nuisance else None,
            **({"sample_design": self.sample_design,
                "covariance_method": "sandwich: weighted pseudo-likelihood, with-replacement "
                                     "design covariance of the scores over strata and clusters"}
               if self.sample_design is not None else {}),
        }

    def to_pandas(self) -> Any:
        """One row per coefficient: estimate, se, z, p, interval, odds ratio and its interval."""
        import pandas as pd

        return pd.DataFrame([c.to_dict() for c in self.fit.coefficients]).set_index("name")


@dataclass
class OutcomeDesign:
    """How one version randomizes the outcome.

    Per group, P(report counted | x) = a + b s(x) with a = a0 + a1 tau and b = b0 + b1 tau
    (``regression.two_group_rates``); a one-group design has a1 = b1 = 0 and one entry,
    ``rates[0]``, for every row.
    """

    positive: str
    description: dict[str, Any]
    rates: dict[int, tuple[float, float, float, float]]
    nuisance: str | None = None
    #: A design with more than two reports (Kuk with several cards): per report r,
    #: (P(r | no), P(r | yes) - P(r | no)); each row's likelihood is that of its own report.
    by_report: dict[str, tuple[float, float]] | None = None


def outcome_design(catalog: Catalog, qid: str, m: int) -> OutcomeDesign:
    """The outcome's design in version m: its rates and the report counted as 1.

    Its design, or the identity for a question asked directly. A design with two reports of its
    own (crosswise: different/same, triangular: circle/triangle) counts its second report, RRreg's
    report 1, as the "1": p00 = P(report 0 | no), p11 = P(report 1 | yes) from its matrix.
    Two-group designs (SLD, unrelated-unknown, CDM, CDM-sym) count "yes" (RRreg's report 1),
    with their second parameter (t, the innocuous rate, the cheaters' share) estimated jointly.
    """
    version = catalog.versions[m]
    question = version.question(qid)
    where = f"version {version.version!r}"
    if question is None:
        raise FormulaError(f"{where} has no question {qid!r}")
    if question.type != "yes-no":
        raise FormulaError(f"the outcome {qid!r} must be a yes-no question ({where}: "
                           f"{question.type})")
    yes = question.values.index("yes") if "yes" in question.values else 1
    no = 1 - yes
    if not question.sensitive or question.design is None:
        return OutcomeDesign(question.values[yes],
                             {"version": version.version, "design": "direct",
                              "p00": 1.0, "p11": 1.0},
                             {0: (0.0, 0.0, 1.0, 0.0)})
    spec = question.design_spec or {}
    if question.two_group:
        design = model_of(question)
        if design is None or design.model not in NUISANCE_OF_MODEL:
            raise RegressionError(f"{qid!r} ({where}) uses a two-group design without an RRreg "
                                  "model --model can fit")
        a0, a1, b0, b1 = two_group_rates(design, np.array([1, 2]))
        return OutcomeDesign(
            question.values[yes],
            {"version": version.version, "design": spec.get("name", design.model),
             "model": design.model, "p": list(design.p),
             "nuisance": NUISANCE_OF_MODEL[design.model], "counted": question.values[yes]},
            {g: (float(a0[g - 1]), float(a1[g - 1]), float(b0[g - 1]), float(b1[g - 1]))
             for g in (1, 2)},
            NUISANCE_OF_MODEL[design.model],
        )
    matrix = question.matrix
    if question.reports and len(question.reports) != 2:
        if matrix.shape != (2, len(question.reports)):
            raise RegressionError(f"{qid!r} ({where}) is not a design of two states")
        if_no = [float(v) for v in matrix[no]]
        if_yes = [float(v) for v in matrix[yes]]
        return OutcomeDesign(
            question.values[yes],
            {"version": version.version, "design": spec.get("name", "matrix"),
             "reports": list(question.reports), "p_if_no": if_no, "p_if_yes": if_yes},
            {}, None,
            {str(r): (n, y - n) for r, n, y in zip(question.reports, if_no, if_yes, strict=True)},
        )
    if matrix.shape != (2, 2):
        raise RegressionError(f"{qid!r} ({where}) is not a 2x2 design")
    if question.reports:  # columns are the reports: 0 (different, circle) and 1 (same, triangle)
        p00, p11, positive = float(matrix[no, 0]), float(matrix[yes, 1]), question.reports[1]
    else:
        p00, p11, positive = float(matrix[no, no]), float(matrix[yes, yes]), question.values[yes]
    return OutcomeDesign(positive,
                         {"version": version.version, "design": spec.get("name", "matrix"),
                          "p00": p00, "p11": p11, "counted": positive},
                         {0: (1.0 - p00, 0.0, p00 + p11 - 1.0, 0.0)})


def covariate_spec(catalog: Catalog, qid: str) -> QuestionSpec:
    """The spec of a covariate: a question asked directly, of a type a formula can code."""
    found = catalog.questions_named(qid)
    if not found:
        raise FormulaError(f"no question {qid!r} in {catalog.survey!r} "
                           f"(questions: {', '.join(catalog.question_ids())})")
    question = found[0][1]
    if question.sensitive:
        raise FormulaError(f"{qid!r} is randomized; covariates must be asked directly")
    if question.type not in COVARIATE_TYPES:
        raise FormulaError(f"{qid!r} is a {question.type} question; covariates are "
                           + ", ".join(COVARIATE_TYPES))
    return question


def model_inputs(catalog: Catalog, rows: Rows,
                 formula: Formula) -> tuple[dict[str, Covariate], dict[int, OutcomeDesign]]:
    """The formula's covariates, coded, and the outcome's design in each version with rows.

    Raises RegressionError when no row was accepted, FormulaError when a covariate is not a
    directly asked question of a codable type or when no accepted row has the outcome.
    """
    qid = formula.outcome
    if len(rows.version) == 0:
        raise RegressionError(f"no row was accepted ({rows.rejections.total:,} rejected):\n"
                              + rows.rejections.summary())
    covariates = {
        name: Covariate(spec.type, spec.values, rows.answers[name])
        for name in formula.questions
        for spec in [covariate_spec(catalog, name)]
    }
    by_version: dict[int, OutcomeDesign] = {}
    for m in sorted(set(np.unique(rows.version).tolist())):
        if catalog.versions[m].question(qid) is not None:
            by_version[m] = outcome_design(catalog, qid, m)
    if not by_version:
        raise FormulaError(f"no accepted row has the outcome {qid!r}")
    return covariates, by_version


def positive_reports(outcome: list[Any], used: np.ndarray, version: np.ndarray,
                     by_version: dict[int, OutcomeDesign]) -> tuple[list[Any], np.ndarray]:
    """The used rows' outcome answers, and y: 1 where the answer is its version's "yes" report."""
    kept = [v for v, k in zip(outcome, used, strict=True) if k]
    y = np.array([v == by_version[m].positive for v, m in zip(kept, version.tolist(),
                                                               strict=True)], dtype=float)
    return kept, y


def outcome_privacy(catalog: Catalog, qid: str) -> str:
    """The outcome's privacy in each version that asks it, in words."""
    return "; ".join(
        f"version {v.version}: {q.privacy.describe()}"
        for v in catalog.versions
        for q in [v.question(qid)]
        if q is not None and q.privacy is not None
    ) or "not randomized (asked directly)"


def fit_model(catalog: Catalog, rows: Rows, formula: Formula, confidence: float,
              bias_reduced: bool = False, sample: SampleDesign | None = None) -> ModelResult:
    """Code the covariates, fit, and compute the predicted prevalence by each factor's levels.

    ``sample``: the design of the accepted rows (in order): a weighted fit with sandwich SEs.
    """
    qid = formula.outcome
    covariates, by_version = model_inputs(catalog, rows, formula)
    designs = [d.description for d in by_version.values()]
    kinds = sorted({d.nuisance for d in by_version.values() if d.nuisance})
    if len(kinds) > 1:
        raise RegressionError(f"the versions of {qid!r} use two-group designs with different "
                              f"second parameters ({', '.join(kinds)}); fit them apart")
    outcome = rows.answers[qid]
    outcome_missing = np.array([v is None or v == "" for v in outcome], dtype=bool)
    matrix = design_matrix(formula, covariates, outcome_missing)
    used = matrix.used
    version = rows.version[used]
    group = rows.groups.get(qid, np.zeros(len(rows.version), dtype=np.int8))[used]
    kept, y = positive_reports(outcome, used, version, by_version)
    coef = np.zeros((4, len(y)))
    for m, design in by_version.items():
        for g, rates in design.rates.items():
            rows_in = (version == m) if g == 0 else (version == m) & (group == g)
            coef[:, rows_in] = np.array(rates)[:, None]
        if design.by_report is not None:
            # P(row's own report | x) = A + B s(x): the binary likelihood with y = 1, a = A, b = B
            for i in np.flatnonzero(version == m).tolist():
                coef[0, i], coef[2, i] = design.by_report[str(kept[i])]
            y[version == m] = 1.0
    several_reports = any(d.by_report is not None for d in by_version.values())
    if several_reports and (bias_reduced or kinds):
        raise RegressionError(f"{qid!r}: a design with more than two reports (Kuk with several "
                              "cards) is fitted by maximum likelihood only, and not pooled with "
                              "a two-group design")
    if sample is not None:
        if kinds or bias_reduced:
            raise RegressionError("with a sample design, --model fits one-group designs by "
                                  "weighted pseudo-likelihood only (no two-group outcome, no "
                                  "--bias-reduced)")
        p00, p11 = 1.0 - coef[0], coef[0] + coef[2]
        result = design_logit(matrix.X, y, p00, p11, matrix.names, sample, used, confidence)
    elif kinds:
        if bias_reduced:
            raise RegressionError("--bias-reduced covers one-group designs; a two-group design's "
                                  f"fit ({kinds[0]} estimated jointly) is maximum likelihood only")
        result = fit_two_group(matrix.X, y, (coef[0], coef[1], coef[2], coef[3]), matrix.names,
                               kinds[0], matrix.term_columns, confidence)
    else:
        p00, p11 = 1.0 - coef[0], coef[0] + coef[2]
        result = fit(matrix.X, y, p00, p11, matrix.names, matrix.term_columns, confidence,
                     bias_reduction=bias_reduced)
    privacy = outcome_privacy(catalog, qid)
    model = ModelResult(formula, result, matrix, int(np.count_nonzero(outcome_missing)),
                        designs, privacy, len(outcome))
    if sample is not None:
        model.sample_design = sample.describe()
    model.prevalence = predicted_prevalence(model)
    return model


def predicted_prevalence(model: ModelResult) -> dict[str, list[dict[str, Any]]]:
    """P(true yes) at each level of each main-effect factor, other columns at their means.

    Intervals: Wald on the logit scale (delta method with the full covariance), mapped back.
    """
    f, matrix = model.fit, model.matrix
    z = float(quantiles.norm_ppf(0.5 + f.confidence / 2))
    means = matrix.X.mean(axis=0)
    out: dict[str, list[dict[str, Any]]] = {}
    for label, columns in matrix.term_columns:
        if ":" in label or not columns:
            continue
        if label in matrix.levels and matrix.levels[label]:
            settings = []
            names = [matrix.names[j] for j in columns]
            for level in matrix.levels[label]:
                x = means.copy()
                x[columns] = [1.0 if n.endswith(f"[{level}]") else 0.0 for n in names]
                settings.append((level, x))
        else:   # numeric: mean - sd, mean, mean + sd of the column as used
            j = columns[0]
            col = matrix.X[:, j]
            settings = []
            for tag, value in (("mean - 1 sd", col.mean() - col.std()), ("mean", col.mean()),
                               ("mean + 1 sd", col.mean() + col.std())):
                x = means.copy()
                x[j] = value
                settings.append((tag, x))
        rows = []
        for level, x in settings:
            eta = float(x @ f.beta)
            se = float(math.sqrt(max(0.0, x @ f.covariance @ x)))
            rows.append({"level": level, "estimate": expit(eta),
                         "ci_low": expit(eta - z * se), "ci_high": expit(eta + z * se)})
        out[label] = rows
    return out


def expit(value: float) -> float:
    """The logistic function, 1 / (1 + e^-value), without overflow."""
    return 0.5 * (1.0 + math.tanh(0.5 * value))
