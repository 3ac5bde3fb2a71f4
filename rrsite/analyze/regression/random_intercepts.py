"""`rrsite analyze --model "q ~ x + (1 | school)"`: a random intercept per cluster (RRmixed).

from rrsite.analyze.regression import regress
models = regress(["export.csv"], survey="surveys/honor-code.md",
                 models=["violated ~ courses + (1 | year)"])
models[0].fit.sd.estimate          # the random intercept's standard deviation
models[0].to_dict()                # the JSON of `--format json`

The outcome is a randomized (or direct) yes-no question of a one-group design, each row under its
own version's design (as `--model` without a random intercept); the cluster variable is a directly
asked question (its answers are the clusters). Estimation: estimate.regression.mixed (adaptive
Gauss-Hermite quadrature). A cluster with fewer than ``mixed.MIN_CLUSTER_SIZE`` respondents among
the rows used is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...estimate.regression.formula import (
    DesignMatrix,
    Formula,
    FormulaError,
    design_matrix,
)
from ...estimate.regression.logistic import RegressionError
from ...estimate.regression.mixed import MixedFit, fit_mixed
from ...exports.catalog import Catalog
from ...exports.rejections import Rejections
from ...exports.rows import Rows
from .logistic import model_inputs, outcome_privacy, positive_reports

CLUSTER_TYPES = ("yes-no", "choice", "number", "text")


@dataclass
class MixedModel:
    """One fitted random-intercept model, with what it was fitted on."""

    formula: Formula
    group: str
    fit: MixedFit
    matrix: DesignMatrix
    left_out: dict[str, int]
    designs: list[dict[str, Any]]
    privacy: str
    rows_accepted: int
    rejected: Rejections = field(default_factory=Rejections)

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of docs/contracts.md ("analyze --model", random intercept)."""
        f = self.fit
        return {
            "formula": self.formula.text,
            "outcome": self.formula.outcome,
            "kind": "logistic (random intercept)",
            "group": self.group,
            "n": f.n,
            "clusters": f.clusters,
            "smallest_cluster": f.smallest_cluster,
            "rows_accepted": self.rows_accepted,
            "left_out": self.left_out,
            "confidence": f.confidence,
            "coefficients": [c.to_dict() for c in f.coefficients],
            "random_intercept": f.sd.to_dict(),
            "loglik": f.loglik,
            "aic": f.aic,
            "quadrature": {"method": "adaptive Gauss-Hermite", "nodes": f.nodes,
                           "check": f.quadrature_check},
            "iterations": f.iterations,
            "gradient_max": f.gradient_max,
            "hessian_positive_definite": f.hessian_positive_definite,
            "converged": f.converged,
            "covariance": [[None if np.isnan(v) else float(v) for v in row]
                           for row in f.covariance],
            "levels": self.matrix.levels,
            "scaling": {k: {"mean": m, "sd": s} for k, (m, s) in self.matrix.scaling.items()},
            "designs": self.designs,
            "privacy": self.privacy,
            "messages": f.messages,
            "rows_rejected": self.rejected.total,
        }

def fit_mixed_model(catalog: Catalog, rows: Rows, formula: Formula, confidence: float,
                    bias_reduced: bool = False) -> MixedModel:
    """Check the formula and the cluster variable, build each row's design, fit."""
    where = f"formula {formula.text!r}"
    if len(formula.groups) != 1:
        raise FormulaError(f"{where}: one random intercept (1 | group) at most")
    group = formula.groups[0]
    if bias_reduced:
        raise RegressionError(f"{where}: --bias-reduced is not available with a random intercept")
    found = catalog.questions_named(group)
    if not found:
        raise FormulaError(f"{where}: no question {group!r} in {catalog.survey!r}")
    for _, spec in found:
        if spec.sensitive:
            raise FormulaError(f"{where}: the cluster variable {group!r} is randomized; its "
                               "reported answers are not the respondents' clusters. Clusters "
                               "must be a directly asked question")
        if spec.type not in CLUSTER_TYPES:
            raise FormulaError(f"{where}: the cluster variable {group!r} is a {spec.type} "
                               f"question; clusters are one answer of {', '.join(CLUSTER_TYPES)}")
    for name in formula.questions:
        if any(q.sensitive for _, q in catalog.questions_named(name)):
            raise FormulaError(f"{where}: {name!r} is randomized; a random-intercept model takes "
                               "directly asked covariates only")
    qid = formula.outcome
    covariates, by_version = model_inputs(catalog, rows, formula)
    if any(d.nuisance for d in by_version.values()):
        raise RegressionError(f"{where}: {qid!r} uses a two-group design whose second parameter "
                              "is estimated from the data; the random-intercept model takes "
                              "one-group designs")
    outcome = rows.answers[qid]
    outcome_missing = np.array([v is None or v == "" for v in outcome], dtype=bool)
    group_missing = np.array([v is None or v == "" for v in rows.answers[group]], dtype=bool)
    matrix = design_matrix(formula, covariates, outcome_missing | group_missing)
    left_out = {"outcome": int(np.count_nonzero(outcome_missing)),
                group: int(np.count_nonzero(group_missing & ~outcome_missing)), **matrix.missing}
    used = matrix.used
    version = rows.version[used]
    kept, y = positive_reports(outcome, used, version, by_version)
    a = np.zeros(len(y))
    b = np.zeros(len(y))
    for m, design in by_version.items():
        in_m = version == m
        if design.by_report is not None:
            for i in np.flatnonzero(in_m).tolist():
                a[i], b[i] = design.by_report[str(kept[i])]
            y[in_m] = 1.0
        else:
            rate = design.rates[0]
            a[in_m], b[in_m] = rate[0], rate[2]
    labels = [str(v) for v, k in zip(rows.answers[group], used, strict=True) if k]
    levels = sorted(set(labels))
    index = {level: j for j, level in enumerate(levels)}
    cluster = np.array([index[v] for v in labels], dtype=np.int64)
    result = fit_mixed(matrix.X, y, a, b, cluster, matrix.names, confidence)
    privacy = outcome_privacy(catalog, qid)
    return MixedModel(formula, group, result, matrix, left_out,
                      [d.description for d in by_version.values()], privacy, len(outcome))
