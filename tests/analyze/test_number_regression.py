"""`--model "amount ~ a + b"` for a randomized number: OLS on the de-biased reports with HC1
standard errors, checked against statsmodels on the same values and by simulation."""

from __future__ import annotations

import csv
import json
import random
import secrets
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm

from rrsite.analyze.regression import regress
from rrsite.analyze.regression.numbers import fit_linear
from rrsite.cli import main
from rrsite.core import number_design_from_spec
from rrsite.survey import load_survey

SURVEY = Path(__file__).resolve().parents[2] / "surveys" / "hidden-numbers.md"


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> tuple[Path, list[dict]]:
    manifest = load_survey(SURVEY).manifest()
    questions = {q["id"]: q for q in manifest["questions"]}
    income = number_design_from_spec(questions["undeclared"]["design"])
    days = number_design_from_spec(questions["days"]["design"])
    rng = random.Random(4)
    path = tmp_path_factory.mktemp("regression") / "export.csv"
    rows = []
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["survey", "version", "respondent", "submitted_at", "region",
                         "undeclared", "days"])
        for i in range(3000):
            region = "South" if rng.random() < 0.4 else "North"
            d = min(30, max(0, round(rng.gauss(6 + 5 * (region == "South"), 4))))
            y = max(0.0, rng.gauss(3000 + 2000 * (region == "South"), 1500))
            row = {"region": region, "undeclared": round(income.randomize(y, rng).report, 2),
                   "days": int(days.randomize(d, rng).report)}
            if i % 50 == 0:
                row["days"] = ""  # unanswered: left out of that model
            rows.append(row)
            writer.writerow(["hidden-numbers", manifest["version"], secrets.token_urlsafe(16),
                             "2026-01-01T00:00:00Z", region, row["undeclared"], row["days"]])
    return path, rows


def test_matches_statsmodels_hc1(export) -> None:
    path, rows = export
    [days, income] = regress([path], survey=SURVEY,
                             models=["days ~ region", "undeclared ~ region"])
    kept = [r for r in rows if r["days"] != ""]
    south = np.array([r["region"] == "South" for r in kept], dtype=float)
    r_days = (np.array([float(r["days"]) for r in kept]) - 0.5 * 15) / 0.5  # mixture, p = 1/2
    reference = sm.OLS(r_days, sm.add_constant(south)).fit(cov_type="HC1")
    fitted = days.fit
    assert fitted.n == len(kept) and days.outcome_missing == len(rows) - len(kept)
    assert fitted.beta == pytest.approx(reference.params, rel=1e-9)
    assert fitted.se == pytest.approx(reference.bse, rel=1e-9)
    south_all = np.array([r["region"] == "South" for r in rows], dtype=float)
    z = np.array([float(r["undeclared"]) for r in rows])  # additive, scramble mean 0
    reference = sm.OLS(z, sm.add_constant(south_all)).fit(cov_type="HC1")
    assert income.fit.beta == pytest.approx(reference.params, rel=1e-9)
    assert income.fit.se == pytest.approx(reference.bse, rel=1e-9)
    assert income.to_dict()["kind"] == "linear"


def test_unbiased_with_honest_standard_errors_by_simulation() -> None:
    """Mixture-scrambled outcome, y = 2 + 3 x + e: over 2000 samples the mean estimate is the
    truth and the HC1 SE matches the estimates' spread (within 5%)."""
    design = number_design_from_spec({"name": "mixture", "p": 0.6,
                                      "mask": {"normal": {"mean": 10, "sd": 5}}})
    rng = np.random.default_rng(8)
    n, estimates, ses = 400, [], []
    for _ in range(2000):
        x = rng.normal(0, 1, n)
        y = 2 + 3 * x + rng.normal(0, 2, n)
        z = np.where(rng.random(n) < 0.6, y, rng.normal(10, 5, n))
        r = (z - 0.4 * 10) / 0.6
        X = np.column_stack([np.ones(n), x])
        result = fit_linear(X, r, ["(Intercept)", "x"])
        estimates.append(result.beta)
        ses.append(result.se)
    estimates, ses = np.array(estimates), np.array(ses)
    spread = estimates.std(axis=0, ddof=1)
    assert np.all(np.abs(estimates.mean(axis=0) - [2, 3]) < 4.5 * spread / np.sqrt(2000))
    assert ses.mean(axis=0) == pytest.approx(spread, rel=0.05)
    assert design.linear() == pytest.approx((4.0, 0.6))


def test_cli_json_and_refusals(export, capsys) -> None:
    path, _ = export
    assert main(["analyze", str(path), "--survey", str(SURVEY), "--model", "days ~ region",
                 "--format", "json"]) == 0
    model = json.loads(capsys.readouterr().out)["models"][0]
    assert model["kind"] == "linear" and [c["name"] for c in model["coefficients"]][0] == \
        "(Intercept)"
    assert main(["analyze", str(path), "--survey", str(SURVEY), "--model", "days ~ region",
                 "--format", "markdown"]) == 0
    assert "| term | estimate" in capsys.readouterr().out
