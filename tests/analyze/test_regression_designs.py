"""`analyze --model` with crosswise and triangular outcomes (reports other than yes/no)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import expit

from rrsite.analyze.regression import regress
from rrsite.cli import main
from rrsite.estimate.regression.logistic import RegressionError
from tests.surveytext import KUK3, YEAR_REQUIRED, question, survey_text

from .stats import numerical_hessian

SURVEY = survey_text(
    "reg-designs",
    question("cross", "yes-no", randomize="crosswise", p=0.2, innocuous="Born in spring?"),
    question("tri", "yes-no", randomize="triangular", p=0.3, innocuous="Born in spring?",
             accept_no_epsilon="true"),
    KUK3, YEAR_REQUIRED, title="Regression on RRreg's designs")
TRUTH = {"(Intercept)": -1.0, "year[Second]": 1.2}
#: P(report 1 | truth): (P(1 | no), P(1 | yes)) for crosswise "same" and triangular "triangle".
REPORT_1 = {"cross": ("same", 0.8, 0.2), "tri": ("triangle", 0.3, 1.0)}


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("regdesigns")
    survey = root / "s.md"
    survey.write_text(SURVEY, encoding="utf-8")
    out = root / "sim.csv"
    assert main(["simulate", str(survey), "--respondents", "30000", "--seed", "8", "-o", str(out),
                 "--logit", "cross ~ -1 + 1.2*year[Second]",
                 "--logit", "tri ~ -1 + 1.2*year[Second]",
                 "--logit", "kuk3 ~ -1 + 1.2*year[Second]"]) == 0
    return survey, out


@pytest.mark.parametrize("qid", ["cross", "tri"])
def test_model_equals_an_independent_mle_and_recovers_the_truth(
    export: tuple[Path, Path], qid: str
) -> None:
    survey, out = export
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    label, low, high = REPORT_1[qid]
    assert {r[qid] for r in rows} == set(REPORT_1[qid][:1]) | {
        "different" if qid == "cross" else "circle"}
    x = np.array([r["year"] == "Second" for r in rows], dtype=float)
    y = np.array([r[qid] == label for r in rows], dtype=float)

    def minus_loglik(beta: np.ndarray) -> float:
        share = expit(beta[0] + beta[1] * x)
        rate = low + (high - low) * share
        return -float(np.sum(y * np.log(rate) + (1 - y) * np.log(1 - rate)))

    best = optimize.minimize(minus_loglik, np.zeros(2), method="Nelder-Mead",
                             options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 5000})
    (model,) = regress([out], survey=survey, models=[f"{qid} ~ year"])
    estimates = [c.estimate for c in model.fit.coefficients]
    assert estimates == pytest.approx(best.x, abs=1e-4)
    for c in model.fit.coefficients:
        assert abs(c.estimate - TRUTH[c.name]) < 4 * c.se, (c.name, c.estimate, c.se)
    (design,) = model.designs
    assert (design["p00"], design["p11"], design["counted"]) == pytest.approx(
        (1 - low, high, label))


def test_kuk_with_several_cards_is_the_independent_mle(export: tuple[Path, Path]) -> None:
    """Kuk with 3 cards: each respondent's red count r has P(r | x) = s Bin(r; 3, 0.7) +
    (1 - s) Bin(r; 3, 0.3), s = logistic(x'beta): the person's state is drawn once."""
    survey, out = export
    with open(out, newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["kuk3"]]
    x = np.array([r["year"] == "Second" for r in rows], dtype=float)
    red = np.array([int(r["kuk3"]) for r in rows])
    assert set(red.tolist()) == {0, 1, 2, 3}
    if_yes, if_no = stats.binom.pmf(red, 3, 0.7), stats.binom.pmf(red, 3, 0.3)

    def loglik(beta: np.ndarray) -> float:
        share = expit(beta[0] + beta[1] * x)
        return float(np.sum(np.log(share * if_yes + (1 - share) * if_no)))

    best = optimize.minimize(lambda b: -loglik(b), np.zeros(2), method="Nelder-Mead",
                             options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 5000})
    (model,) = regress([out], survey=survey, models=["kuk3 ~ year"])
    estimates = np.array([c.estimate for c in model.fit.coefficients])
    np.testing.assert_allclose(estimates, best.x, atol=1e-4)
    assert model.fit.loglik == pytest.approx(loglik(estimates), abs=1e-8)
    hessian = numerical_hessian(loglik, estimates)
    np.testing.assert_allclose(model.fit.se, np.sqrt(np.diag(np.linalg.inv(-hessian))), rtol=1e-3)
    (design,) = model.designs
    assert design["reports"] == ["0", "1", "2", "3"]
    assert design["p_if_yes"] == pytest.approx(stats.binom.pmf([0, 1, 2, 3], 3, 0.7).tolist())
    with pytest.raises(RegressionError, match="maximum likelihood only"):
        regress([out], survey=survey, models=["kuk3 ~ year"], bias_reduced=True)
