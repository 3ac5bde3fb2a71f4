"""Rendering the fitted models of ``rrsite analyze --model``: every kind in every format.

One :class:`~rrsite.report.tables.Section` per model (its coefficient table, the lines under it,
and in HTML its figures), written by rrsite.report.tables; JSON is each model's ``to_dict``.
The models are rrsite.analyze's result objects: ``ModelResult`` (a randomized or direct yes-no
outcome), ``MixedModel`` (a random intercept), ``PredictorModel`` (randomized predictors) and
``NumberModel`` (a randomized number as outcome or predictor).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..analyze.regression.logistic import ModelResult
from ..analyze.regression.numbers import NumberModel
from ..analyze.regression.predictors import PredictorModel
from ..analyze.regression.random_intercepts import MixedModel
from .plots import odds_ratio_svg, prevalence_table
from .tables import Section, Table, number, render_sections

BIAS_REDUCED_TITLE = ("bias-reduced (Kosmidis & Firth 2009; SEs from the expected information, "
                      "Wald intervals)")


def coefficient_rows(coefficients: Sequence[Any], confidence: float,
                     odds: bool = True) -> list[list[str]]:
    """Header and one row per coefficient: estimate, se, z, p, interval, and odds ratios."""
    pct = f"{confidence:.0%}"
    header = ["term", "estimate", "se", "z", "p", f"{pct} low", f"{pct} high"]
    if odds:
        header += ["odds ratio", "OR low", "OR high"]
    body = []
    for c in coefficients:
        row = [c.name, number(c.estimate), number(c.se), number(c.z, 2), number(c.p_value, 4),
               number(c.ci_low), number(c.ci_high)]
        if odds:
            row += [number(_exp(c.estimate)), number(_exp(c.ci_low)), number(_exp(c.ci_high))]
        body.append(row)
    return [header, *body]


def _exp(value: float) -> float:
    return math.exp(min(value, 700.0))


def design_text(d: Mapping[str, Any]) -> str:
    """One version's outcome design, as the lines under a model say it."""
    if "reports" in d:
        return f"version {d['version']}: {d['design']} (reports {', '.join(d['reports'])})"
    if "p00" in d:
        return f"version {d['version']}: {d['design']} (p00 = {d['p00']:.4g}, p11 = {d['p11']:.4g})"
    p = ", ".join(f"{v:.4g}" for v in d["p"])
    return (f"version {d['version']}: {d['design']} (RRreg {d['model']}, p = [{p}], "
            f"{d['nuisance']} estimated)")


def _left_out(left: Mapping[str, int]) -> str:
    return ", ".join(f"{n:,} missing {k}" for k, n in left.items() if n) or "none"


def _tests(fit: Any) -> list[str]:
    lines = []
    if fit.model_test:
        t = fit.model_test
        lines.append(f"LR test of the model: chi2 = {t.chi2:.3f}, df = {t.df}, "
                     f"p = {number(t.p_value, 4)}")
    lines += [f"LR test of {t.term}: chi2 = {t.chi2:.3f}, df = {t.df}, p = {number(t.p_value, 4)}"
              for t in fit.terms]
    return lines


def logistic_section(model: ModelResult) -> Section:
    """A randomized (or direct) yes-no outcome's logistic regression."""
    f = model.fit
    lines = [
        f"N = {f.n:,} of {model.rows_accepted:,} accepted rows (left out: "
        f"{_left_out({'outcome': model.outcome_missing, **model.matrix.missing})})",
        f"log-likelihood = {f.loglik:.4f}, AIC = {f.aic:.4f}, {f.iterations} Newton iterations",
        *_tests(f),
    ]
    if f.nuisance:
        nu = f.nuisance
        lines.append(f"{nu.name} ({nu.meaning}) = {nu.estimate:.4f}, se = {number(nu.se, 4)}, "
                     f"{f.confidence:.0%} interval [{nu.ci_low:.4f}, {nu.ci_high:.4f}] "
                     f"({nu.ci_method})"
                     + (", on the boundary of [0, 1]" if nu.on_boundary else ""))
    if model.sample_design is not None:
        info = model.sample_design
        lines.append(
            f"sample design: weighted pseudo-likelihood, sandwich standard errors over "
            f"{info['strata']} strata and {info['clusters']:,} clusters (with replacement; "
            f"weights {info['weights']['min']:.4g} to {info['weights']['max']:.4g}); no "
            "likelihood-ratio tests under a pseudo-likelihood")
    lines.append(f"designs: {'; '.join(design_text(d) for d in model.designs)}")
    lines.append(f"privacy: {model.privacy}")
    tables = [Table(coefficient_rows(f.coefficients, f.confidence))]
    if f.bias_reduced is not None:
        tables.append(Table(coefficient_rows(f.bias_reduced.coefficients, f.confidence),
                            BIAS_REDUCED_TITLE))
    figures = ["<h3>Odds ratios</h3>" + odds_ratio_svg(f.coefficients[1:])]
    figures += [prevalence_table(label, levels) for label, levels in model.prevalence.items()]
    return Section("logistic regression", model.formula.text, tables, lines, figures)


def mixed_section(model: MixedModel) -> Section:
    """A logistic regression with a random intercept per cluster."""
    f, sd = model.fit, model.fit.sd
    lines = [
        f"N = {f.n:,} of {model.rows_accepted:,} accepted rows in {f.clusters} clusters of "
        f"{model.group} (smallest {f.smallest_cluster}; left out: {_left_out(model.left_out)})",
        f"random intercept sd = {sd.estimate:.4f}, {f.confidence:.0%} profile-likelihood "
        f"interval [{sd.ci_low:.4f}, {sd.ci_high:.4f}]"
        + (" (on the boundary 0)" if sd.on_boundary else ""),
        f"LR test of sd = 0: chi2 = {sd.lr_zero:.3f}, p = {number(sd.p_zero, 4)} (50:50 mixture "
        "of chi2_0 and chi2_1)",
        f"log-likelihood = {f.loglik:.4f}, AIC = {f.aic:.4f}; adaptive Gauss-Hermite "
        f"quadrature, {f.nodes} nodes (differs by {f.quadrature_check:.1e} from "
        f"{2 * f.nodes + 1}); {f.iterations} BFGS iterations; largest gradient "
        f"component per respondent {f.gradient_max:.1e}; observed information "
        + ("positive definite" if f.hessian_positive_definite else "NOT positive definite"),
        *f.messages,
        f"designs: {'; '.join(design_text(d) for d in model.designs)}",
        f"privacy: {model.privacy}",
    ]
    rows = coefficient_rows(f.coefficients, f.confidence)
    return Section("logistic regression with a random intercept", model.formula.text,
                   [Table(rows)], lines)


def predictor_section(model: PredictorModel) -> Section:
    """A linear or logistic regression on randomized predictors (latent classes)."""
    f = model.fit
    lines = [f"N = {f.n:,} of {model.rows_accepted:,} accepted rows (left out: "
             f"{_left_out(model.left_out)})",
             f"intervals: {f.ci_method} (se from the observed information)",
             f"log-likelihood = {f.loglik:.4f}, AIC = {f.aic:.4f}, {f.iterations} iterations "
             f"(EM then Newton), largest gradient component per respondent "
             f"{f.gradient_norm:.1e}"]
    if f.sigma is not None:
        lines.append(f"residual sd sigma = {f.sigma:.4f} (se {number(f.sigma_se or 0.0, 4)})")
    lines += _tests(f)
    shares = "; ".join(f"{', '.join(s.answers)}: {s.estimate:.4f} (se {number(s.se, 4)})"
                       for s in f.shares)
    lines.append(f"true answers of {', '.join(model.randomized)} (latent classes): {shares}")
    for t in f.nuisance:
        se = number(t.se, 4) if math.isfinite(t.se) else "not given"
        bound = ", on its bound" if t.on_boundary else ""
        lines.append(f"{t.name} of {t.question} ({t.meaning}), estimated jointly: "
                     f"{t.estimate:.4f} (se {se}, {f.confidence:.0%} interval "
                     f"{t.ci_low:.4f} to {t.ci_high:.4f}{bound}; {t.ci_method})")
    lines += f.messages
    lines.append("privacy: " + "; ".join(f"version {p['version']}: {p['combination']}"
                                          for p in model.privacy))
    logistic = f.kind == "logistic"
    kind = "logistic" if logistic else "linear"
    rows = coefficient_rows(f.coefficients, f.confidence, odds=logistic)
    return Section(f"{kind} regression on randomized predictors", model.formula.text,
                   [Table(rows)], lines)


def number_section(model: NumberModel) -> Section:
    """A linear model of (or with) a randomized number, on the de-biased reports."""
    f = model.fit
    pct = f"{f.confidence:.0%}"
    rows = [["term", "estimate", "se", "t", "p", f"{pct} low", f"{pct} high"]]
    rows += [[c["name"], f"{c['estimate']:.5g}", f"{c['se']:.4g}", f"{c['t']:.3f}",
              f"{c['p_value']:.3g}", f"{c['ci_low']:.5g}", f"{c['ci_high']:.5g}"]
             for c in f.coefficients()]
    lines = [f"N = {f.n:,} of {model.rows_accepted:,} accepted rows (left out: "
             f"{_left_out({'outcome': model.outcome_missing, **model.matrix.missing})})",
             model.method, f"privacy: {model.privacy}"]
    return Section("linear regression", model.formula.text, [Table(rows)], lines)


def section(model: Any) -> Section:
    """The section of any fitted model."""
    if isinstance(model, ModelResult):
        return logistic_section(model)
    if isinstance(model, MixedModel):
        return mixed_section(model)
    if isinstance(model, PredictorModel):
        return predictor_section(model)
    if isinstance(model, NumberModel):
        return number_section(model)
    raise TypeError(f"not a fitted model: {type(model).__name__}")


def render_models(models: Sequence[Any], fmt: str) -> str:
    """The models in one of analyze's formats: table, json, markdown or html."""
    if fmt == "json":
        return json.dumps({"models": [m.to_dict() for m in models]}, indent=2) + "\n"
    return render_sections([section(m) for m in models], fmt, "rrsite regression")
