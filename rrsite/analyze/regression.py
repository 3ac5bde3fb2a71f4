"""`rrsite analyze --model "y ~ a + b"`: logistic regressions of a randomized yes/no answer.

from rrsite.analyze.regression import regress
models = regress(["export.csv"], survey="surveys/honor-code.md",
                 models=["violated ~ year + courses"])
models[0].fit.coefficients[1].odds_ratio
models[0].to_dict()      # the JSON of `rrsite analyze --model ... --format json`
models[0].to_pandas()    # one row per coefficient (needs pandas)

Rows are read and checked exactly as `rrsite analyze` does (rejected rows are counted the same
way); each accepted row keeps its own version's design, so versions are pooled in one likelihood.
The estimation is rrsite.estimate.regression; the formula and coding rrsite.estimate.formula.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import RRSiteError, UsageError
from ..estimate.formula import (
    Covariate,
    DesignMatrix,
    Formula,
    FormulaError,
    design_matrix,
    parse_formula,
)
from ..estimate.regression import (
    NUISANCE_OF_MODEL,
    Fit,
    RegressionError,
    fit,
    fit_two_group,
    two_group_rates,
)
from ..estimate.survey_design import SampleDesign, design_logit
from ..exports.catalog import Catalog, QuestionSpec, build_catalog
from ..exports.readers import ExportError, FileInfo, parse_mapping, read_export
from ..exports.rejections import Rejections
from ..exports.tally import Tally
from .sample_design import SampleOptions, build_design
from .univariate import model_of

COVARIATE_TYPES = ("yes-no", "choice", "number", "multi-choice")


@dataclass
class Rows:
    """The accepted rows: version index and every needed question's raw answer."""

    version: np.ndarray
    answers: dict[str, list[object]]
    rows_read: int
    rejections: Rejections
    #: Per two-group question: each accepted row's group (1 or 2; 0 where it has none).
    groups: dict[str, np.ndarray] = field(default_factory=dict)


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


def _read_rows(
    paths: Sequence[str | Path], catalog: Catalog, column_map: dict[str, str], needed: list[str],
) -> Rows:
    rejections = Rejections()
    tally = Tally(catalog, None, rejections)
    versions: list[np.ndarray] = []
    answers: dict[str, list[object]] = {q: [] for q in needed}
    groups: dict[str, list[np.ndarray]] = {q: [] for q in needed}
    read = 0
    for path in paths:
        if not Path(path).is_file():
            raise ExportError(f"{path}: no such file")
        info = FileInfo(str(path), "")
        for batch in read_export(path, catalog, column_map, rejections, info):
            checked = tally.check(batch)
            tally.commit(checked)
            read += len(batch)
            keep = checked.status == 0
            versions.append(checked.version[keep])
            for qid in needed:
                column = batch.columns.get(qid)
                values = column.objects() if column is not None else [None] * len(batch)
                answers[qid].extend(v for v, k in zip(values, keep.tolist(), strict=True) if k)
                codes = checked.group_codes.get(qid)
                groups[qid].append(np.zeros(int(keep.sum()), dtype=np.int8) if codes is None
                                   else np.asarray(codes)[keep].astype(np.int8))
    version = np.concatenate(versions) if versions else np.zeros(0, dtype=np.int32)
    group_codes = {q: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int8)
                   for q, parts in groups.items()}
    return Rows(version, answers, read + rejections.total, rejections,
                {q: codes for q, codes in group_codes.items() if np.any(codes)})


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


def _outcome_design(catalog: Catalog, qid: str, m: int) -> OutcomeDesign:
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


def _covariate_spec(catalog: Catalog, qid: str) -> QuestionSpec:
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


def fit_model(catalog: Catalog, rows: Rows, formula: Formula, confidence: float,
              bias_reduced: bool = False, sample: SampleDesign | None = None) -> ModelResult:
    """Code the covariates, fit, and compute the predicted prevalence by each factor's levels.

    ``sample``: the design of the accepted rows (in order): a weighted fit with sandwich SEs.
    """
    qid = formula.outcome
    if len(rows.version) == 0:
        raise RegressionError(f"no row was accepted ({rows.rejections.total:,} rejected):\n"
                              + rows.rejections.summary())
    covariates = {
        name: Covariate(spec.type, spec.values, rows.answers[name])
        for name in formula.questions
        for spec in [_covariate_spec(catalog, name)]
    }
    by_version: dict[int, OutcomeDesign] = {}
    for m in sorted(set(np.unique(rows.version).tolist())):
        if catalog.versions[m].question(qid) is not None:
            by_version[m] = _outcome_design(catalog, qid, m)
    if not by_version:
        raise FormulaError(f"no accepted row has the outcome {qid!r}")
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
    kept = [v for v, k in zip(outcome, used, strict=True) if k]
    y = np.array([v == by_version[m].positive for v, m in zip(kept, version.tolist(),
                                                               strict=True)], dtype=float)
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
    privacy = "; ".join(
        f"version {v.version}: {q.privacy.describe()}"
        for v in catalog.versions
        for q in [v.question(qid)]
        if q is not None and q.privacy is not None
    ) or "not randomized (asked directly)"
    model = ModelResult(formula, result, matrix, int(np.count_nonzero(outcome_missing)),
                        designs, privacy, len(outcome))
    if sample is not None:
        model.sample_design = sample.describe()
    model.prevalence = predicted_prevalence(model)
    return model


def _number_model(catalog: Catalog, rows: Rows, formula: Formula, confidence: float) -> Any:
    """A randomized number's linear model (rrsite.analyze.number_regression)."""
    from .number_regression import fit_number_model

    covariates = {
        name: Covariate(spec.type, spec.values, rows.answers[name])
        for name in formula.questions
        for spec in [_covariate_spec(catalog, name)]
    }
    return fit_number_model(catalog, rows, formula, confidence, covariates)


def predicted_prevalence(model: ModelResult) -> dict[str, list[dict[str, Any]]]:
    """P(true yes) at each level of each main-effect factor, other columns at their means.

    Intervals: Wald on the logit scale (delta method with the full covariance), mapped back.
    """
    from scipy import stats

    f, matrix = model.fit, model.matrix
    z = float(stats.norm.ppf(0.5 + f.confidence / 2))
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
            rows.append({"level": level, "estimate": _expit(eta),
                         "ci_low": _expit(eta - z * se), "ci_high": _expit(eta + z * se)})
        out[label] = rows
    return out


def _expit(value: float) -> float:
    return 0.5 * (1.0 + math.tanh(0.5 * value))


def _fit_any(catalog: Catalog, rows: Rows, formula: Formula, confidence: float,
             bias_reduced: bool, design: Any = None) -> Any:
    """Dispatch: randomized predictors (predictor_report), else a randomized outcome."""
    from .predictors import fit_predictor_model, randomized_in

    if design is not None and (formula.groups or randomized_in(catalog, formula)):
        raise UsageError("--model with a random intercept or a randomized predictor: a sample "
                         "design is not supported yet; fit it without --weights/--strata/--cluster")
    if formula.groups:
        from .random_intercepts import fit_mixed_model

        return fit_mixed_model(catalog, rows, formula, confidence, bias_reduced)
    if randomized_in(catalog, formula):
        return fit_predictor_model(catalog, rows, formula, confidence, bias_reduced)
    return fit_model(catalog, rows, formula, confidence, bias_reduced, design)


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

    A model with a random intercept ``(1 | g)`` is a ``MixedModel`` (rrsite.analyze.
    mixed_report); one with a randomized question on the right-hand side a ``PredictorModel``
    (rrsite.analyze.predictors); otherwise a ``ModelResult``.

    ``bias_reduced`` adds Kosmidis & Firth's bias-reduced estimates to each fit
    (``ModelResult.fit.bias_reduced``). ``sample``: the sample design's columns
    (rrsite.analyze.sample_design): weighted pseudo-likelihood fits with sandwich SEs.
    """
    paths = [exports] if isinstance(exports, str | Path) else list(exports)
    if not paths:
        raise UsageError("give at least one export file")
    if not 0 < confidence < 1:
        raise UsageError(f"--confidence must be between 0 and 1, not {confidence}")
    surveys = [] if survey is None else [survey] if isinstance(survey, str | Path) else list(survey)
    catalog = build_catalog(surveys, manifests)
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
    from .number_predictors import fit_number_predictor_model, number_predictors_in
    from .number_regression import is_number_outcome

    numeric = [is_number_outcome(catalog, f.outcome) or bool(number_predictors_in(catalog, f))
               for f in formulas]
    if any(numeric) and not all(numeric):
        raise UsageError("--model: fit randomized-number outcomes (linear) and yes-no outcomes "
                         "(logistic) in separate commands")
    rows = _read_rows(paths, catalog, column_map, list(needed))
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
                if formula.groups:
                    raise FormulaError("a random intercept takes a yes-no outcome and direct "
                                       "predictors; this model has a randomized number")
                if number_predictors_in(catalog, formula):
                    results.append(fit_number_predictor_model(catalog, rows, formula,
                                                              confidence))
                else:
                    results.append(_number_model(catalog, rows, formula, confidence))
                results[-1].rejected = rows.rejections
                continue
            results.append(_fit_any(catalog, rows, formula, confidence, bias_reduced, design))
            results[-1].rejected = rows.rejections
        except RRSiteError as error:
            raise type(error)(f"model {formula.text!r}: {error}") from error
    return results


# ------------------------------------------------------------------------------------ output


def _num(value: float, digits: int = 3) -> str:
    if not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if value != 0 and abs(value) < 10 ** -digits:
        return f"{value:.1e}"
    return f"{value:.{digits}f}"


def _rows(model: ModelResult, bias_reduced: bool = False) -> list[list[str]]:
    pct = f"{model.fit.confidence:.0%}"
    header = ["term", "estimate", "se", "z", "p", f"{pct} low", f"{pct} high",
              "odds ratio", "OR low", "OR high"]
    coefficients = model.fit.coefficients
    if bias_reduced:
        assert model.fit.bias_reduced is not None
        coefficients = model.fit.bias_reduced.coefficients
    body = [[c.name, _num(c.estimate), _num(c.se), _num(c.z, 2), _num(c.p_value, 4),
             _num(c.ci_low), _num(c.ci_high), _num(c.odds_ratio), _num(c.or_low),
             _num(c.or_high)] for c in coefficients]
    return [header, *body]


BIAS_REDUCED_TITLE = ("bias-reduced (Kosmidis & Firth 2009; SEs from the expected information, "
                      "Wald intervals)")


def _summary_lines(model: ModelResult) -> list[str]:
    f = model.fit
    left = {"outcome": model.outcome_missing, **model.matrix.missing}
    left_text = ", ".join(f"{n:,} missing {k}" for k, n in left.items() if n) or "none"
    lines = [
        f"N = {f.n:,} of {model.rows_accepted:,} accepted rows (left out: {left_text})",
        f"log-likelihood = {f.loglik:.4f}, AIC = {f.aic:.4f}, {f.iterations} Newton iterations",
    ]
    if f.model_test:
        t = f.model_test
        lines.append(f"LR test of the model: chi2 = {t.chi2:.3f}, df = {t.df}, "
                     f"p = {_num(t.p_value, 4)}")
    for t in f.terms:
        lines.append(f"LR test of {t.term}: chi2 = {t.chi2:.3f}, df = {t.df}, "
                     f"p = {_num(t.p_value, 4)}")
    if f.nuisance:
        nu = f.nuisance
        pct = f"{f.confidence:.0%}"
        lines.append(f"{nu.name} ({nu.meaning}) = {nu.estimate:.4f}, se = {_num(nu.se, 4)}, "
                     f"{pct} interval [{nu.ci_low:.4f}, {nu.ci_high:.4f}] ({nu.ci_method})"
                     + (", on the boundary of [0, 1]" if nu.on_boundary else ""))
    if model.sample_design is not None:
        info = model.sample_design
        lines.append(
            f"sample design: weighted pseudo-likelihood, sandwich standard errors over "
            f"{info['strata']} strata and {info['clusters']:,} clusters (with replacement; "
            f"weights {info['weights']['min']:.4g} to {info['weights']['max']:.4g}); no "
            "likelihood-ratio tests under a pseudo-likelihood")
    lines.append(f"designs: {'; '.join(_design_text(d) for d in model.designs)}")
    lines.append(f"privacy: {model.privacy}")
    return lines


def _design_text(d: Mapping[str, Any]) -> str:
    if "reports" in d:
        return f"version {d['version']}: {d['design']} (reports {', '.join(d['reports'])})"
    if "p00" in d:
        return f"version {d['version']}: {d['design']} (p00 = {d['p00']:.4g}, p11 = {d['p11']:.4g})"
    p = ", ".join(f"{v:.4g}" for v in d["p"])
    return (f"version {d['version']}: {d['design']} (RRreg {d['model']}, p = [{p}], "
            f"{d['nuisance']} estimated)")


def render_table(models: Sequence[ModelResult]) -> str:
    """Plain-text tables, one per model."""
    out = []
    for model in models:
        rows = _rows(model)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        out.append(f"logistic regression: {model.formula.text}")
        for r in rows:
            out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(r, widths, strict=True))))
        if model.fit.bias_reduced is not None:
            out.append(BIAS_REDUCED_TITLE + ":")
            rows = _rows(model, bias_reduced=True)
            out.extend("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(r, widths, strict=True)))
                       for r in rows)
        out.extend(_summary_lines(model))
        out.append("")
    return "\n".join(out)


def render_markdown(models: Sequence[ModelResult]) -> str:
    """GitHub-flavoured Markdown tables, one per model."""
    out = []
    for model in models:
        rows = _rows(model)
        out.append(f"### Logistic regression: `{model.formula.text}`\n")
        out.append("| " + " | ".join(rows[0]) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * (len(rows[0]) - 1)) + "|")
        out.extend("| " + " | ".join(r) + " |" for r in rows[1:])
        out.append("")
        if model.fit.bias_reduced is not None:
            rows = _rows(model, bias_reduced=True)
            out.append(f"{BIAS_REDUCED_TITLE[0].upper()}{BIAS_REDUCED_TITLE[1:]}:\n")
            out.append("| " + " | ".join(rows[0]) + " |")
            out.append("|" + "|".join(["---"] + ["---:"] * (len(rows[0]) - 1)) + "|")
            out.extend("| " + " | ".join(r) + " |" for r in rows[1:])
            out.append("")
        out.extend(f"- {line}" for line in _summary_lines(model))
        out.append("")
    return "\n".join(out)


def render_json(models: Sequence[ModelResult]) -> str:
    """{"models": [...]} with the keys of docs/contracts.md."""
    return json.dumps({"models": [m.to_dict() for m in models]}, indent=2) + "\n"


def _forest_svg(model: ModelResult) -> str:
    """Odds ratios with intervals on a log axis (intercept left out)."""
    coefs = model.fit.coefficients[1:]
    if not coefs:
        return ""
    lows = [math.log(max(c.or_low, 1e-6)) for c in coefs]
    highs = [math.log(min(c.or_high, 1e6)) for c in coefs]
    lo, hi = min(min(lows), 0.0), max(max(highs), 0.0)
    span = (hi - lo) or 1.0
    left, width, row = 220, 420, 26

    def x(v: float) -> float:
        return left + (v - lo) / span * width

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 120}" '
             f'height="{row * len(coefs) + 40}" role="img" aria-label="odds ratios">',
             f'<line x1="{x(0):.1f}" y1="0" x2="{x(0):.1f}" y2="{row * len(coefs)}" '
             'stroke="#888" stroke-dasharray="4"/>']
    for i, (c, a, b) in enumerate(zip(coefs, lows, highs, strict=True)):
        y = row * i + row / 2
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" '
                     f'font-size="12">{html.escape(c.name)}</text>')
        parts.append(f'<line x1="{x(a):.1f}" y1="{y:.1f}" x2="{x(b):.1f}" y2="{y:.1f}" '
                     'stroke="#1f5fa8" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(math.log(c.odds_ratio)):.1f}" cy="{y:.1f}" r="4" '
                     'fill="#1f5fa8"/>')
        parts.append(f'<text x="{left + width + 8}" y="{y + 4:.1f}" font-size="11">'
                     f'{c.odds_ratio:.2f} [{c.or_low:.2f}, {c.or_high:.2f}]</text>')
    parts.append(f'<text x="{x(0):.1f}" y="{row * len(coefs) + 20}" text-anchor="middle" '
                 'font-size="11">odds ratio 1 (log scale)</text></svg>')
    return "".join(parts)


def render_html(models: Sequence[ModelResult]) -> str:
    """A self-contained page: the table, a forest plot and the predicted prevalence by level."""
    body = []
    for model in models:
        rows = _rows(model)
        body.append(f"<h2>Logistic regression: <code>{html.escape(model.formula.text)}</code></h2>")
        body.append("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in rows[0])
                    + "</tr></thead><tbody>")
        for r in rows[1:]:
            body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
        if model.fit.bias_reduced is not None:
            reduced = _rows(model, bias_reduced=True)
            body.append(f"</tbody></table><h3>{html.escape(BIAS_REDUCED_TITLE.capitalize())}"
                        "</h3><table><thead><tr>"
                        + "".join(f"<th>{html.escape(h)}</th>" for h in reduced[0])
                        + "</tr></thead><tbody>")
            for r in reduced[1:]:
                body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
        body.append("</tbody></table><ul>"
                    + "".join(f"<li>{html.escape(line)}</li>" for line in _summary_lines(model))
                    + "</ul>")
        body.append("<h3>Odds ratios</h3>" + _forest_svg(model))
        for label, levels in model.prevalence.items():
            body.append(f"<h3>Predicted prevalence by {html.escape(label)}</h3><table><thead>"
                        "<tr><th>level</th><th>prevalence</th><th>interval</th></tr></thead>"
                        "<tbody>")
            for item in levels:
                width = 300
                bar = (f'<svg width="{width}" height="14"><line x1="{item["ci_low"] * width:.1f}"'
                       f' y1="7" x2="{item["ci_high"] * width:.1f}" y2="7" stroke="#1f5fa8" '
                       f'stroke-width="2"/><circle cx="{item["estimate"] * width:.1f}" cy="7" '
                       'r="4" fill="#1f5fa8"/></svg>')
                body.append(f"<tr><td>{html.escape(str(item['level']))}</td>"
                            f"<td>{item['estimate']:.3f}</td><td>[{item['ci_low']:.3f}, "
                            f"{item['ci_high']:.3f}] {bar}</td></tr>")
            body.append("</tbody></table>")
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>rrsite regression"
            "</title><style>body{font-family:sans-serif;max-width:70em;margin:2em auto}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
            "text-align:right}</style></head><body>" + "\n".join(body) + "</body></html>\n")


RENDERERS = {"table": render_table, "json": render_json, "markdown": render_markdown,
             "html": render_html}


def render(models: Sequence[Any], fmt: str) -> str:
    """The models in one of analyze's formats (number outcomes and randomized predictors too)."""
    from .number_regression import NumberModel
    from .number_regression import render as render_numbers

    if models and isinstance(models[0], NumberModel):
        return render_numbers(models, fmt)
    if all(isinstance(m, ModelResult) for m in models):
        return RENDERERS[fmt](models)
    from .predictors import render_models

    return render_models(models, fmt)
