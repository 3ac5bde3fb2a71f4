"""`--cor` with two-group designs: RRcor's estimator with the nuisance re-estimated.

Independent computations written here: each group's P(yes | X) from the designs' definitions,
RRuni's closed-form moment estimates (UQTunknown, SLD, CDM), the two groups' likelihood maximised
by scipy.optimize where the moments leave (0, 1), recovery of a known correlation by simulation,
and the bootstrap SE against the spread of the estimate over repeated samples. RRcor itself (R's
RRreg 0.7.6) is compared in tests/reference/test_rrcor_two_group.py.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from scipy import optimize

from rrsite.cli import main
from rrsite.estimate.correlation import (
    CorVariable,
    GroupedDesign,
    _two_group_ml,
    rrcor_groups,
    two_group_moments,
)
from tests.joint.clitools import module_export, refused
from tests.surveytext import CDM, CHEAT_FORCED, SLD, survey_text

P_SLD, T = (0.3, 0.7), 0.8
P_UQT, Q = (0.7, 0.3), 0.35


def sld_rates():
    """P(yes | X) = (1 - p_g) + (t - (1 - p_g)) X: a0 = 1 - p_g, a1 = 0, b0 = p_g - 1, b1 = 1."""
    return {g: (1 - p, 0.0, p - 1, 1.0) for g, p in zip((1, 2), P_SLD, strict=True)}


def uqt_rates():
    """P(yes | X) = p_g X + (1 - p_g) q: a0 = 0, a1 = 1 - p_g, b0 = p_g, b1 = 0."""
    return {g: (0.0, 1 - p, p, 0.0) for g, p in zip((1, 2), P_UQT, strict=True)}


def cdm_rates(p=(0.25, 0.65)):
    """P(yes | X) = (1 - gamma) (p_g + (1 - p_g) X)."""
    return {g: (pg, -pg, 1 - pg, -(1 - pg)) for g, pg in zip((1, 2), p, strict=True)}


def test_moments_are_rruni_closed_forms():
    lam1, lam2 = 0.52, 0.41
    pi, t = two_group_moments(np.array(lam1), np.array(lam2), sld_rates())
    p1, p2 = P_SLD                                     # RRuni.SLD
    assert float(pi) == pytest.approx(((lam2 - lam1) + (p2 - p1)) / (p2 - p1), abs=1e-12)
    assert float(t) == pytest.approx((lam2 * (1 - p1) - lam1 * (1 - p2))
                                     / ((lam2 - lam1) + (p2 - p1)), abs=1e-12)
    pi, q = two_group_moments(np.array(lam1), np.array(lam2), uqt_rates())
    p1, p2 = P_UQT                                     # RRuni.UQTunknown
    assert float(pi) == pytest.approx((lam1 * (1 - p2) - lam2 * (1 - p1)) / (p1 - p2), abs=1e-12)
    assert float(q) == pytest.approx((p2 * lam1 - p1 * lam2) / (p2 - p1), abs=1e-12)
    p1, p2 = 0.25, 0.65                                # RRuni.CDM: honest yes, cheaters
    lam1, lam2 = 0.40, 0.62
    pi, gamma = two_group_moments(np.array(lam1), np.array(lam2), cdm_rates())
    honest = (p2 * lam1 - p1 * lam2) / (p2 - p1)
    cheaters = 1 + ((p2 - 1) * lam1 + (1 - p1) * lam2) / (p1 - p2)
    assert float(gamma) == pytest.approx(cheaters, abs=1e-12)
    assert float(pi) * (1 - float(gamma)) == pytest.approx(honest, abs=1e-12)


@pytest.mark.parametrize("rates, n, yes", [
    (sld_rates(), (400, 380), (240, 247)),             # pi's moment estimate above 1
    (uqt_rates(), (300, 320), (40, 120)),              # pi's below 0
])
def test_outside_moments_fall_back_to_the_likelihood_maximum(rates, n, yes):
    pi, tau = two_group_moments(np.array(yes[0] / n[0]), np.array(yes[1] / n[1]), rates)
    assert not (0 < pi < 1 and 0 < tau < 1)

    def negative(x):
        total = 0.0
        for g in (1, 2):
            a0, a1, b0, b1 = rates[g]
            lam = np.clip(a0 + a1 * x[1] + (b0 + b1 * x[1]) * x[0], 1e-12, 1 - 1e-12)
            total += yes[g - 1] * np.log(lam) + (n[g - 1] - yes[g - 1]) * np.log1p(-lam)
        return -total

    best = min((optimize.minimize(negative, start, method="L-BFGS-B", bounds=[(0, 1)] * 2,
                                  options={"ftol": 1e-15, "gtol": 1e-10})
                for start in ([0.2, 0.2], [0.5, 0.5], [0.8, 0.8], [0.2, 0.8], [0.8, 0.2])),
               key=lambda f: f.fun)
    found = _two_group_ml(rates, n, yes)
    assert -negative(found) >= -best.fun - 1e-9
    assert np.allclose(found, best.x, atol=1e-4)


def draw(rng, n, rho):
    """Correlated true answers (a Gaussian copula) randomized by Warner 0.8, SLD and UQT."""
    z = rng.multivariate_normal(np.zeros(3), [[1, rho, rho], [rho, 1, rho], [rho, rho, 1]], n)
    truth = (z > np.array([0.3, 0.2, -0.1])).astype(float)
    w = np.where(rng.random(n) < 0.8, truth[:, 0], 1 - truth[:, 0])
    gs, gu = rng.integers(1, 3, n), rng.integers(1, 3, n)
    p_no = np.array(P_SLD)[gs - 1]
    s = np.where(truth[:, 1] == 1, rng.random(n) < T, rng.random(n) > p_no).astype(float)
    asked = rng.random(n) < np.array(P_UQT)[gu - 1]
    u = np.where(asked, truth[:, 2], rng.random(n) < Q).astype(float)
    variables = [
        CorVariable("w", w, np.full(n, 0.2), np.full(n, 0.6), True),
        CorVariable("s", s, np.zeros(n), np.ones(n), True, GroupedDesign(gs, sld_rates(), "t")),
        CorVariable("u", u, np.zeros(n), np.ones(n), True, GroupedDesign(gu, uqt_rates(), "piUQ")),
    ]
    return variables, np.corrcoef(truth.T)


def test_recovers_the_true_answers_correlation():
    rng = np.random.default_rng(4)
    variables, truth = draw(rng, 200_000, 0.5)
    fit = rrcor_groups(variables, replicates=20)
    for i, k in ((0, 1), (0, 2), (1, 2)):
        assert abs(fit.r[i, k] - truth[i, k]) < 4 * fit.se[i, k] + 0.003
        assert fit.se[i, k] < 0.02
    assert fit.nuisance["s"]["estimate"] == pytest.approx(T, abs=0.02)
    assert fit.nuisance["u"]["estimate"] == pytest.approx(Q, abs=0.02)


@pytest.mark.slow
def test_bootstrap_se_is_the_spread_over_samples():
    """The mean bootstrap SE of r(s, u) against its SD over 150 samples of 1,500.

    50 bootstrap replicates a sample: one sample's bootstrap SE then varies by about 1/sqrt(2 x 50)
    = 10%, their mean over 150 samples by 0.8%, and the bias of an SD from 50 draws is 0.5%; the
    tolerance below is set by the 150 estimates' SD (5.8% of itself), so more replicates would
    not make the check sharper (150 replicates took three times as long)."""
    rng = np.random.default_rng(7)
    estimates, ses = [], []
    for _ in range(150):
        variables, _ = draw(rng, 1500, 0.4)
        fit = rrcor_groups(variables, replicates=50, seed=int(rng.integers(1 << 30)))
        estimates.append(fit.r[1, 2])
        ses.append(fit.se[1, 2])
    spread = np.std(estimates, ddof=1)
    # the SD of 150 draws is within about 12% of the truth (2 standard errors of an SD)
    assert np.mean(ses) == pytest.approx(spread, rel=0.2)


SURVEY = survey_text("cor-two-group", CHEAT_FORCED, SLD, CDM, title="Cor")


export = module_export("cor2", SURVEY, "--respondents", "2000", "--seed", "8",
                       "--truth", "sld=0.3", "--truth", "cdm=0.4")


def test_cli_json_has_each_nuisance(export, capsys):
    survey, out = export
    assert main(["analyze", str(out), "--survey", str(survey), "--cor", "cheat,sld,cdm",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["correlations"]
    assert set(data["nuisance"]) == {"sld", "cdm"}
    assert data["nuisance"]["sld"]["name"] == "t" and data["nuisance"]["cdm"]["name"] == "gamma"
    # simulated respondents are honest (t = 1) and never cheat (gamma = 0)
    assert data["nuisance"]["sld"]["ci_high"] == pytest.approx(1.0, abs=1e-9)
    assert data["nuisance"]["cdm"]["ci_low"] == pytest.approx(0.0, abs=1e-9)
    assert abs(data["prevalence"]["sld"] - 0.3) < 0.06
    assert abs(data["prevalence"]["cdm"] - 0.4) < 0.06
    r, se = np.array(data["r"]), np.array(data["se"])
    assert np.all(np.abs(r[np.triu_indices(3, 1)]) < 4 * se[np.triu_indices(3, 1)])


def test_one_group_only_exits_2(export, tmp_path, capsys):
    survey, out = export
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    only = tmp_path / "one.csv"
    with open(only, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(r for r in rows if r["sld.group"] != "2")
    refused(capsys, "sld: every respondent is in one group",
            "analyze", only, "--survey", survey, "--cor", "cheat,sld")
