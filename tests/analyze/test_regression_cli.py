"""`rrsite analyze --model`: crafted exports end to end (coding, pooling, outputs, failures)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm

from rrsite.analyze.regression import regress
from rrsite.cli import main
from rrsite.exports.catalog import build_catalog
from tests.surveytext import SMOKER, YEAR_THREE

SURVEY = """---
id: regtest
title: Regression test
privacy:
  budget: 1.1
submit:
  to: collector
---
## Used?

```question
id: used
type: yes-no
randomize: forced-response
truth: 1/2
yes: 1/4
no: 1/4
```

## Smoker?

""" + SMOKER + """
## Year

""" + YEAR_THREE + """
## Age

```question
id: age
type: number
min: 0
max: 120
```

## Sports

```question
id: sports
type: multi-choice
options: [run, swim]
```
"""


def _write(tmp: Path, rows: list[dict[str, str]]) -> tuple[Path, Path]:
    survey = tmp / "regtest.md"
    survey.write_text(SURVEY, encoding="utf-8")
    version = build_catalog([survey]).versions[0].version
    export = tmp / "export.csv"
    fields = ["survey", "version", "respondent", "submitted_at", "used", "smoker", "year", "age",
              "sports"]
    with export.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fields)
        writer.writeheader()
        for i, row in enumerate(rows):
            writer.writerow({"survey": "regtest", "version": version,
                             "respondent": f"r{i:021d}", "submitted_at": "2026-11-02T09:00Z",
                             **row})
    return survey, export


def _population(n: int, seed: int) -> tuple[list[dict[str, str]], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    year = rng.choice(["First", "Second", "Third"], n)
    age = rng.normal(30, 8, n).round(1)
    run, swim = rng.random(n) < 0.4, rng.random(n) < 0.3
    eta = -0.5 + 0.6 * (year == "Second") - 0.4 * (year == "Third") + 0.03 * (age - 30) + 0.5 * run
    truth = rng.random(n) < 1 / (1 + np.exp(-eta))
    coin = rng.random(n)
    used = np.where(coin < 0.5, truth, coin < 0.75)
    smoker = rng.random(n) < 1 / (1 + np.exp(-eta))
    rows = []
    for i in range(n):
        sports = [s for s, c in (("run", run[i]), ("swim", swim[i])) if c]
        rows.append({"used": "yes" if used[i] else "no", "smoker": "yes" if smoker[i] else "no",
                     "year": str(year[i]), "age": f"{age[i]}", "sports": json.dumps(sports)})
    return rows, {"year": year, "age": age, "run": run, "swim": swim, "used": used,
                  "smoker": smoker}


def test_direct_outcome_equals_statsmodels_with_independent_coding(tmp_path: Path) -> None:
    rows, data = _population(1500, 1)
    for i in range(0, 60, 3):                     # rows missing a covariate are left out
        rows[i]["age"] = ""
    survey, export = _write(tmp_path, rows)
    (model,) = regress([export], survey=survey,
                       models=['smoker ~ C(year, ref="Second") + age + sports'])
    keep = np.ones(1500, dtype=bool)
    keep[0:60:3] = False
    X = np.column_stack([
        np.ones(1500), data["year"] == "First", data["year"] == "Third", data["age"],
        data["run"], data["swim"],
    ]).astype(float)[keep]
    ref = sm.Logit(data["smoker"][keep].astype(float), X).fit(disp=0, tol=1e-14, maxiter=100)
    assert model.fit.names == ["(Intercept)", "year[First]", "year[Third]", "age",
                               "sports[run]", "sports[swim]"]
    np.testing.assert_allclose(model.fit.beta, ref.params, atol=1e-6, rtol=0)
    np.testing.assert_allclose(model.fit.se, ref.bse, atol=1e-6, rtol=0)
    assert model.fit.loglik == pytest.approx(ref.llf, abs=1e-6)
    assert model.fit.n == 1480
    assert model.matrix.missing["age"] == 20
    frame = model.to_pandas()
    assert frame.loc["age", "estimate"] == pytest.approx(ref.params[3], abs=1e-6)


def test_randomized_outcome_json_scale_and_interaction(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    rows, data = _population(3000, 2)
    survey, export = _write(tmp_path, rows)
    code = main(["analyze", str(export), "--survey", str(survey), "--format", "json",
                 "--model", "used ~ scale(age) + year*smoker"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)["models"][0]
    assert out["n"] == 3000
    assert [c["name"] for c in out["coefficients"]] == [
        "(Intercept)", "scale(age)", "year[Second]", "year[Third]", "smoker[yes]",
        "year[Second]:smoker[yes]", "year[Third]:smoker[yes]"]
    # Independent check of the likelihood at the reported estimate (forced response 3/4, 3/4).
    sd = float(np.std(data["age"], ddof=1))
    z = (data["age"] - data["age"].mean()) / sd
    s = data["smoker"].astype(float)
    X = np.column_stack([np.ones(3000), z, data["year"] == "Second", data["year"] == "Third", s,
                         (data["year"] == "Second") * s, (data["year"] == "Third") * s])
    beta = np.array([c["estimate"] for c in out["coefficients"]])
    lam = 0.25 + 0.5 / (1 + np.exp(-X.astype(float) @ beta))
    y = data["used"].astype(float)
    direct = float(np.sum(y * np.log(lam) + (1 - y) * np.log(1 - lam)))
    assert out["loglik"] == pytest.approx(direct, abs=1e-6)
    assert out["aic"] == pytest.approx(-2 * out["loglik"] + 14)
    assert out["designs"][0]["p00"] == 0.75 and out["designs"][0]["p11"] == 0.75
    for c in out["coefficients"]:
        assert c["odds_ratio"] == pytest.approx(math.exp(c["estimate"]))
        assert c["or_low"] == pytest.approx(math.exp(c["ci_low"]))
    assert {t["term"] for t in out["terms"]} == {"scale(age)", "year", "smoker", "year:smoker"}
    assert set(out["prevalence"]) == {"scale(age)", "year", "smoker"}


def test_html_has_forest_plot_and_prevalence(tmp_path: Path) -> None:
    rows, _ = _population(1000, 3)
    survey, export = _write(tmp_path, rows)
    report = tmp_path / "r.html"
    assert main(["analyze", str(export), "--survey", str(survey), "--format", "html", "-o",
                 str(report), "--model", "used ~ year"]) == 0
    text = report.read_text()
    assert "<svg" in text and "odds ratio 1 (log scale)" in text
    assert "Predicted prevalence by year" in text


def _fails(tmp_path: Path, rows: list[dict[str, str]], model: str,
           capsys: pytest.CaptureFixture[str]) -> str:
    survey, export = _write(tmp_path, rows)
    assert main(["analyze", str(export), "--survey", str(survey), "--model", model]) == 2
    return capsys.readouterr().err


def test_separation_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, _ = _population(600, 4)
    for row in rows:                           # every Third-year respondent reports "yes"
        if row["year"] == "Third":
            row["used"] = "yes"
    err = _fails(tmp_path, rows, "used ~ year", capsys)
    assert "separation: the coefficient of year[Third] grows without bound" in err


def test_empty_category_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, _ = _population(600, 5)
    rows = [r for r in rows if r["year"] != "Third"]
    err = _fails(tmp_path, rows, "used ~ year", capsys)
    assert "empty category: no respondent answered year[Third]" in err


def test_collinear_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, _ = _population(600, 6)
    for row in rows:
        row["smoker"] = "yes" if row["year"] == "Second" else "no"
    err = _fails(tmp_path, rows, "used ~ year + smoker", capsys)
    assert "singular" in err and "used ~ year + smoker" in err


def test_bad_formula_and_unknown_question(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    rows, _ = _population(100, 7)
    assert "no question 'height'" in _fails(tmp_path, rows, "used ~ height", capsys)
    assert "expected name, found the end" in _fails(tmp_path, rows, "used ~ year +", capsys)
    # a randomized predictor is fitted by analyze.predictors (tests/joint/test_predictors.py);
    # with a randomized outcome too it is refused
    assert "the outcome must be asked directly" in _fails(tmp_path, rows, "used ~ used", capsys)


def test_simulate_logit_is_recovered_by_analyze_model(tmp_path: Path) -> None:
    """`simulate --logit` then `analyze --model`: the known coefficients within 4 SEs."""
    survey = tmp_path / "regtest.md"
    survey.write_text(SURVEY, encoding="utf-8")
    export = tmp_path / "sim.csv"
    truth = {"(Intercept)": -0.6, "year[Second]": 0.8, "year[Third]": -0.5, "age": 0.02,
             "sports[run]": 0.6, "sports[swim]": 0.0}
    assert main(["simulate", str(survey), "--respondents", "40000", "--seed", "5", "-o",
                 str(export), "--logit",
                 "used ~ -0.6 + 0.8*year[Second] - 0.5*year[Third] + 0.02*age + 0.6*sports[run]"]
                ) == 0
    (model,) = regress([export], survey=survey, models=["used ~ year + age + sports"])
    for c in model.fit.coefficients:
        assert abs(c.estimate - truth[c.name]) < 4 * c.se, (c.name, c.estimate, c.se)
    assert model.fit.coefficients[1].se < 0.15         # the data carry real information


def test_simulate_logit_refuses_unknown_column(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    survey = tmp_path / "regtest.md"
    survey.write_text(SURVEY, encoding="utf-8")
    code = main(["simulate", str(survey), "--respondents", "10", "-o", str(tmp_path / "x.csv"),
                 "--logit", "used ~ -1 + 0.5*year[Fifth]"])
    assert code == 2
    assert "year has levels First, Second, Third" in capsys.readouterr().err


def test_rejected_rows_are_reported_and_strict_refuses(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    rows, _ = _population(300, 8)
    rows[5]["year"] = "Fifth"                    # not an option: rejected by analyze's checks
    survey, export = _write(tmp_path, rows)
    assert main(["analyze", str(export), "--survey", str(survey), "--format", "json",
                 "--model", "used ~ year"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["models"][0]["rows_rejected"] == 1
    assert json.loads(captured.out)["models"][0]["n"] == 299
    assert "1 rows rejected" in captured.err
    assert main(["analyze", str(export), "--survey", str(survey), "--strict",
                 "--model", "used ~ year"]) == 2
    assert "--strict: 1 rows rejected" in capsys.readouterr().err


def test_no_convergence_message(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    import rrsite.estimate.regression.logistic as regression

    monkeypatch.setattr(regression, "MAX_ITERATIONS", 1)
    rows, _ = _population(500, 10)
    err = _fails(tmp_path, rows, "used ~ year + age", capsys)
    assert "no convergence after 1 Newton iterations" in err


def test_bias_reduced_estimates_beside_ml(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """--bias-reduced: for a direct outcome Firth's logistic regression (checked against the
    Jeffreys-penalised likelihood maximised by scipy), ML unchanged; JSON, table, Markdown."""
    from scipy import optimize

    rows, data = _population(600, 9)
    survey, export = _write(tmp_path, rows)
    assert main(["analyze", str(export), "--survey", str(survey), "--format", "json",
                 "--model", "smoker ~ age", "--bias-reduced"]) == 0
    out = json.loads(capsys.readouterr().out)["models"][0]
    assert main(["analyze", str(export), "--survey", str(survey), "--format", "json",
                 "--model", "smoker ~ age"]) == 0
    plain = json.loads(capsys.readouterr().out)["models"][0]
    assert plain["bias_reduced"] is None
    assert [c["estimate"] for c in plain["coefficients"]] == [
        c["estimate"] for c in out["coefficients"]]
    X = np.column_stack([np.ones(600), data["age"]])
    y = data["smoker"].astype(float)

    def negative(beta: np.ndarray) -> float:
        p = 1 / (1 + np.exp(-(X @ beta)))
        return -float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))
                      + 0.5 * np.linalg.slogdet((X.T * (p * (1 - p))) @ X)[1])

    start = np.array([c["estimate"] for c in out["coefficients"]])
    firth = optimize.minimize(negative, start, method="Nelder-Mead",
                              options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).x
    reduced = [c["estimate"] for c in out["bias_reduced"]]
    np.testing.assert_allclose(reduced, firth, atol=1e-5)
    assert [c["name"] for c in out["bias_reduced"]] == ["(Intercept)", "age"]
    for key in ("se", "ci_low", "ci_high", "odds_ratio", "or_low", "or_high"):
        assert all(key in c for c in out["bias_reduced"])
    assert main(["analyze", str(export), "--survey", str(survey), "--model", "smoker ~ age",
                 "--bias-reduced"]) == 0
    assert "bias-reduced (Kosmidis & Firth 2009" in capsys.readouterr().out
    assert main(["analyze", str(export), "--survey", str(survey), "--format", "markdown",
                 "--model", "used ~ age", "--bias-reduced"]) == 0
    assert "Bias-reduced (Kosmidis & Firth 2009" in capsys.readouterr().out
