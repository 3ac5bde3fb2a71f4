"""`analyze --model` with two-group outcomes: SLD, unrelated-unknown, CDM and CDM-sym.

The reports are written here from each design's own description (docs/designs.md, the papers),
with a carrier who lies (SLD t < 1), an unknown innocuous rate and cheaters (CDM gamma > 0), and
every fit is compared with an independent maximisation of the likelihood written out below (the
bounded quasi-Newton search RRreg's RRlog uses), its standard errors with the numerical Hessian.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit

from rrsite.analyze.regression import regress
from rrsite.cli import main
from rrsite.estimate.regression.logistic import RegressionError
from tests.surveytext import SLD_QUARTERS, YEAR_REQUIRED, question, survey_text

from .stats import numerical_hessian

SURVEY = survey_text(
    "reg-two-group", SLD_QUARTERS,
    question("uqt", "yes-no", randomize="unrelated-unknown", p="[0.75, 0.3]",
             innocuous="Were you born in spring?"),
    question("cdm", "yes-no", randomize="cdm", p="[0.25, 0.6]", accept_no_epsilon="true"),
    question("cdmsym", "yes-no", randomize="cdm-sym", **{'"yes"': "[0.15, 0.3]",
                                                          '"no"': "[0.2, 0.1]"}),
    YEAR_REQUIRED, question("hours", "number", min=0, max=60, required="true"),
    title="Regression on two-group designs", budget=10)
BETA = np.array([-0.6, 0.9, 0.03])          # intercept, year[Second], hours
T, Q, GAMMA = 0.8, 0.35, 0.15               # SLD's t, the innocuous rate, the cheaters' share
NUISANCE = {"sld": ("t", T), "uqt": ("piUQ", Q), "cdm": ("gamma", GAMMA),
            "cdmsym": ("gamma", GAMMA)}


def _p_yes(qid: str, share: np.ndarray, group: np.ndarray, tau: float) -> np.ndarray:
    """P(report "yes" | x, group) from the designs' descriptions, tau the nuisance."""
    g1 = group == 1
    if qid == "sld":        # a carrier says yes with t; a non-carrier says "no" with p_g
        p = np.where(g1, 0.25, 0.75)
        return share * tau + (1 - share) * (1 - p)
    if qid == "uqt":        # the sensitive question with p_g, else the innocuous one (rate q)
        p = np.where(g1, 0.75, 0.3)
        return p * share + (1 - p) * tau
    if qid == "cdm":        # cheaters (gamma) say no; the others: forced yes p_g, else the truth
        p = np.where(g1, 0.25, 0.6)
        return (1 - tau) * (p + (1 - p) * share)
    forced_yes, forced_no = np.where(g1, 0.15, 0.3), np.where(g1, 0.2, 0.1)   # cdm-sym
    return (1 - tau) * (forced_yes + (1 - forced_yes - forced_no) * share)


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, np.ndarray]]:
    """A simulated export (tokens, versions, groups, covariates) whose four outcomes are
    rewritten here from a logistic model with t = 0.8, q = 0.35 and 15% cheaters."""
    root = tmp_path_factory.mktemp("twogroup")
    survey = root / "s.md"
    survey.write_text(SURVEY, encoding="utf-8")
    simulated = root / "sim.csv"
    assert main(["simulate", str(survey), "--respondents", "12000", "--seed", "5",
                 "-o", str(simulated)]) == 0
    with open(simulated, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    rng = np.random.default_rng(55)
    x = np.column_stack([np.ones(len(rows)), [r["year"] == "Second" for r in rows],
                         [float(r["hours"]) for r in rows]])
    share = expit(x @ BETA)
    data: dict[str, np.ndarray] = {"X": x}
    for qid, (_, tau) in NUISANCE.items():
        group = np.array([int(r[qid + ".group"] or 0) for r in rows])
        yes = rng.random(len(rows)) < _p_yes(qid, share, group, tau)
        for r, g, answer in zip(rows, group, yes, strict=True):
            r[qid] = "" if g == 0 else ("yes" if answer else "no")
        data[qid] = np.column_stack([group, yes])
    out = root / "export.csv"
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return survey, out, data


def _independent_fit(qid: str, data: dict[str, np.ndarray]) -> tuple[np.ndarray, callable]:
    answered = data[qid][:, 0] > 0
    X, group, y = data["X"][answered], data[qid][answered, 0], data[qid][answered, 1]

    def loglik(theta: np.ndarray) -> float:
        lam = np.clip(_p_yes(qid, expit(X @ theta[:3]), group, theta[3]), 1e-300, 1 - 1e-16)
        return float(np.sum(y * np.log(lam) + (1 - y) * np.log1p(-lam)))

    best = None
    for tau0 in (0.2, 0.5, 0.8):
        found = optimize.minimize(lambda t: -loglik(t), np.array([0.0, 0.0, 0.0, tau0]),
                                  method="L-BFGS-B", bounds=[(None, None)] * 3 + [(0, 1)],
                                  options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10000})
        if best is None or found.fun < best.fun:
            best = found
    return best.x, loglik


def _numerical_se(loglik: callable, theta: np.ndarray) -> np.ndarray:
    return np.sqrt(np.diag(np.linalg.inv(-numerical_hessian(loglik, theta))))


@pytest.mark.slow
@pytest.mark.parametrize("qid", ["sld", "uqt", "cdm", "cdmsym"])
def test_two_group_model_is_the_independent_mle_and_recovers_the_truth(
    export: tuple[Path, Path, dict[str, np.ndarray]], qid: str
) -> None:
    survey, out, data = export
    (model,) = regress([out], survey=survey, models=[f"{qid} ~ year + hours"])
    fit = model.fit
    assert fit.nuisance is not None
    name, truth = NUISANCE[qid]
    assert fit.nuisance.name == name
    theta = np.append(fit.beta, fit.nuisance.estimate)
    reference, loglik = _independent_fit(qid, data)
    np.testing.assert_allclose(theta, reference, atol=2e-4)
    assert fit.loglik == pytest.approx(loglik(theta), abs=1e-8)
    assert fit.loglik >= loglik(reference) - 1e-8          # at least as high as the reference
    se = np.append(fit.se, fit.nuisance.se)
    np.testing.assert_allclose(se, _numerical_se(loglik, theta), rtol=2e-3)
    for estimate, s, true in zip(theta, se, np.append(BETA, truth), strict=True):
        assert abs(estimate - true) < 4 * s, (qid, estimate, true, s)
    assert fit.nuisance.ci_low < fit.nuisance.estimate < fit.nuisance.ci_high
    # the profile interval's ends: the profile log-likelihood is max - chi2(1, .95)/2 there
    for end in (fit.nuisance.ci_low, fit.nuisance.ci_high):
        profile = optimize.minimize(lambda b, end=end: -loglik(np.append(b, end)), fit.beta,
                                    method="BFGS", options={"gtol": 1e-8}).fun
        assert -profile == pytest.approx(fit.loglik - 3.841459 / 2, abs=2e-3)
    assert fit.aic == pytest.approx(-2 * fit.loglik + 2 * 4)
    assert model.fit.model_test is not None and model.fit.model_test.df == 2


def test_lr_test_reestimates_the_nuisance(
    export: tuple[Path, Path, dict[str, np.ndarray]]
) -> None:
    """The test of `hours` compares with the best fit without it, t re-estimated."""
    survey, out, data = export
    (model,) = regress([out], survey=survey, models=["sld ~ year + hours"])
    answered = data["sld"][:, 0] > 0
    X, group, y = data["X"][answered][:, :2], data["sld"][answered, 0], data["sld"][answered, 1]

    def minus(theta: np.ndarray) -> float:
        lam = _p_yes("sld", expit(X @ theta[:2]), group, theta[2])
        return -float(np.sum(y * np.log(lam) + (1 - y) * np.log1p(-lam)))

    reduced = optimize.minimize(minus, np.array([0.0, 0.0, 0.7]), method="L-BFGS-B",
                                bounds=[(None, None)] * 2 + [(1e-9, 1)],
                                options={"ftol": 1e-15, "gtol": 1e-10}).fun
    (hours,) = [t for t in model.fit.terms if t.term == "hours"]
    assert hours.chi2 == pytest.approx(2 * (model.fit.loglik + reduced), abs=1e-4)


def test_cli_json_reports_the_nuisance(
    export: tuple[Path, Path, dict[str, np.ndarray]], capsys: pytest.CaptureFixture[str]
) -> None:
    survey, out, _ = export
    assert main(["analyze", str(out), "--survey", str(survey), "--model", "sld ~ year",
                 "--format", "json"]) == 0
    (model,) = json.loads(capsys.readouterr().out)["models"]
    nuisance = model["nuisance"]
    assert set(nuisance) == {"name", "estimate", "se", "ci_low", "ci_high", "ci_method",
                             "on_boundary", "meaning"}
    assert nuisance["name"] == "t" and nuisance["ci_method"] == "profile-likelihood"
    (design,) = model["designs"]
    assert design["model"] == "SLD" and design["p"] == [0.25, 0.75]
    assert design["nuisance"] == "t" and design["counted"] == "yes"
    assert model["aic"] == pytest.approx(-2 * model["loglik"] + 2 * 3)
    assert main(["analyze", str(out), "--survey", str(survey), "--model", "sld ~ year"]) == 0
    text = capsys.readouterr().out
    assert "t (probability that a carrier answers truthfully" in text
    assert "RRreg SLD, p = [0.25, 0.75], t estimated" in text


def test_one_group_only_cannot_identify_the_model(
    export: tuple[Path, Path, dict[str, np.ndarray]], tmp_path: Path
) -> None:
    survey, out, _ = export
    with open(out, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = [r for r in reader if r["sld.group"] == "1"]
        fields = reader.fieldnames
    assert fields is not None and len(rows) > 1000
    only = tmp_path / "group1.csv"
    with open(only, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(RegressionError, match="cannot identify the model"):
        regress([only], survey=survey, models=["sld ~ year"])


def test_bias_reduction_is_refused_for_two_group_designs(
    export: tuple[Path, Path, dict[str, np.ndarray]], capsys: pytest.CaptureFixture[str]
) -> None:
    survey, out, _ = export
    assert main(["analyze", str(out), "--survey", str(survey), "--model", "cdm ~ year",
                 "--bias-reduced"]) == 2
    assert "--bias-reduced covers one-group designs" in capsys.readouterr().err


def test_simulate_logit_draws_two_group_reports(tmp_path: Path) -> None:
    """`simulate --logit` on an SLD outcome: the groups' report rates are the model's."""
    survey = tmp_path / "s.md"
    survey.write_text(SURVEY, encoding="utf-8")
    out = tmp_path / "sim.csv"
    assert main(["simulate", str(survey), "--respondents", "40000", "--seed", "9", "-o", str(out),
                 "--logit", "sld ~ -0.6 + 0.9*year[Second] + 0.03*hours"]) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["sld"]]
    x = np.column_stack([np.ones(len(rows)), [r["year"] == "Second" for r in rows],
                         [float(r["hours"]) for r in rows]])
    group = np.array([int(r["sld.group"]) for r in rows])
    yes = np.array([r["sld"] == "yes" for r in rows])
    expected = _p_yes("sld", expit(x @ BETA), group, 1.0)     # simulated respondents comply
    for g in (1, 2):
        inside = group == g
        n, mean = int(inside.sum()), float(expected[inside].mean())
        assert abs(yes[inside].mean() - mean) < 4 * np.sqrt(mean * (1 - mean) / n), g


def _pooled_surveys(tmp_path: Path, second: str) -> tuple[list[Path], Path]:
    """Two versions of one survey: `q` under SLD in the first, under `second` in the other."""
    head = "---\nid: pooled\ntitle: Pooled\nlanguage: en\nprivacy:\n  budget: 10\n---\n## Q\n\n"
    year = ("\n## Y\n\n```question\nid: year\ntype: choice\noptions: [First, Second]\n"
            "required: true\n```\n")
    designs = {
        "sld": "randomize: sld\np: [0.25, 0.75]\naccept_no_epsilon: true\n",
        "warner": "randomize: warner\np: 0.8\nmirrored: I have not.\n",
        "uqt": "randomize: unrelated-unknown\np: [0.75, 0.3]\ninnocuous: Born in spring?\n",
    }
    surveys, exports = [], []
    for i, name in enumerate(("sld", second)):
        survey = tmp_path / f"s{i}.md"
        survey.write_text(f"{head}```question\nid: q\ntype: yes-no\n{designs[name]}```\n{year}",
                          encoding="utf-8")
        out = tmp_path / f"e{i}.csv"
        assert main(["simulate", str(survey), "--respondents", "6000", "--seed", str(i + 1),
                     "-o", str(out), "--logit", "q ~ -0.5 + 1.0*year[Second]"]) == 0
        surveys.append(survey)
        exports.append(out)
    with open(exports[0], newline="", encoding="utf-8") as handle:
        fields = list(csv.DictReader(handle).fieldnames or [])
    combined = tmp_path / "both.csv"
    with open(combined, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, restval="")
        writer.writeheader()
        for export in exports:
            with open(export, newline="", encoding="utf-8") as source:
                writer.writerows(csv.DictReader(source))
    return surveys, combined


def test_an_sld_version_pools_with_a_warner_version_in_one_likelihood(tmp_path: Path) -> None:
    surveys, combined = _pooled_surveys(tmp_path, "warner")
    (model,) = regress([combined], survey=surveys, models=["q ~ year"])
    with open(combined, newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["q"]]
    versions = sorted({r["version"] for r in rows})
    assert len(versions) == 2 and len(model.designs) == 2
    sld_version = next(d["version"] for d in model.designs if d.get("model") == "SLD")
    x = np.array([r["year"] == "Second" for r in rows], dtype=float)
    y = np.array([r["q"] == "yes" for r in rows], dtype=float)
    is_sld = np.array([r["version"] == sld_version for r in rows])
    p_no = np.array([{"1": 0.25, "2": 0.75}.get(r.get("q.group", ""), 0.0) for r in rows])

    def loglik(theta: np.ndarray) -> float:
        s = expit(theta[0] + theta[1] * x)
        lam = np.where(is_sld, theta[2] * s + (1 - s) * (1 - p_no),     # SLD (t = theta[2])
                       0.8 * s + 0.2 * (1 - s))                         # Warner p = 0.8
        lam = np.clip(lam, 1e-300, 1 - 1e-16)
        return float(np.sum(y * np.log(lam) + (1 - y) * np.log1p(-lam)))

    best = optimize.minimize(lambda t: -loglik(t), np.array([0.0, 0.0, 0.5]), method="L-BFGS-B",
                             bounds=[(None, None)] * 2 + [(0, 1)],
                             options={"ftol": 1e-15, "gtol": 1e-10})
    theta = np.append(model.fit.beta, model.fit.nuisance.estimate)
    np.testing.assert_allclose(theta, best.x, atol=2e-4)
    assert model.fit.loglik == pytest.approx(loglik(theta), abs=1e-8)
    assert model.fit.loglik >= -best.fun - 1e-8


def test_versions_with_different_second_parameters_are_refused(tmp_path: Path) -> None:
    surveys, combined = _pooled_surveys(tmp_path, "uqt")
    with pytest.raises(RegressionError, match=r"different second parameters \(piUQ, t\)"):
        regress([combined], survey=surveys, models=["q ~ year"])
