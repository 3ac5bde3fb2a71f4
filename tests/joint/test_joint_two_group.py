"""Joint tables with two-group questions: the table and each design's tau together.

Independent computations written here: each group's matrix from the designs' definitions
(unrelated-unknown: the sensitive question with probability p_g, else an innocuous one with
yes-rate q; SLD: non-carriers say "no" with probability p_g, carriers "yes" with probability t;
CDM: forced "yes" with probability p_g, else the truth, and a share gamma of cheaters say "no"
whatever the instruction), the likelihood as a sum over latent true answers, its maximum over
(table, taus) by scipy.optimize (SLSQP), its Hessian by finite differences, recovery from
multinomial draws of the exact report probabilities, and the CLI on `rrsite simulate` exports.
"""

from __future__ import annotations

import csv
import itertools
import json
import math

import numpy as np
import pytest
from scipy import optimize, stats

from rrsite.cli import main
from rrsite.estimate.joint_groups import GroupedPart, fit_joint_groups
from tests.analyze.stats import numerical_hessian
from tests.surveytext import CDM as CDM_BLOCK
from tests.surveytext import DRUGS_WARNER, question, survey_text
from tests.surveytext import SLD as SLD_BLOCK


def uqt(p, q):
    """P(yes | truth) = p * truth + (1 - p) * q; rows: truth no, yes; columns: no, yes."""
    return np.array([[1 - (1 - p) * q, (1 - p) * q], [(1 - p) * (1 - q), p + (1 - p) * q]])


def sld(p, t):
    return np.array([[p, 1 - p], [1 - t, t]])


def cdm(p, gamma):
    compliant = np.array([[1 - p, p], [0.0, 1.0]])
    return (1 - gamma) * compliant + gamma * np.array([[1.0, 0.0], [1.0, 0.0]])


def cdmsym(yes, no, gamma):
    compliant = np.array([[1 - yes, yes], [no, 1 - no]])
    return (1 - gamma) * compliant + gamma * np.array([[1.0, 0.0], [1.0, 0.0]])


def warner(p):
    return np.array([[p, 1 - p], [1 - p, p]])


def brute_loglik(pi, taus, tally, makers):
    """sum over (groups, reports) of count * log sum_t pi_t prod_q M_q(g_q, tau_q)[t_q, r_q]."""
    total = 0.0
    for (groups, reports), count in tally.items():
        mats = [make(g, taus) for make, g in zip(makers, groups, strict=True)]
        p = 0.0
        for index, truths in enumerate(itertools.product((0, 1), repeat=len(makers))):
            term = pi[index]
            for m, t, r in zip(mats, truths, reports, strict=True):
                term *= m[t, r]
            p += term
        total += count * math.log(p)
    return total


def scipy_max(tally, makers, k, fixed=None, starts=None):
    """max over the simplex (2^Q cells) and taus in [0, 1]^k of brute_loglik, by SLSQP."""
    cells = 2 ** len(makers)
    n = sum(tally.values())

    def negative(x):
        pi = np.maximum(x[:cells], 1e-15)
        return -brute_loglik(pi, x[cells:], tally, makers) / n

    constraints = [{"type": "eq", "fun": lambda x: np.sum(x[:cells]) - 1}]
    if fixed is not None:
        constraints.append({"type": "eq", "fun": lambda x: x[fixed[0]] - fixed[1]})
    best = None
    rng = np.random.default_rng(0)
    randoms = [np.concatenate((rng.dirichlet(np.ones(cells)), rng.uniform(0.1, 0.9, k)))
               for _ in range(6)]
    for start in starts or randoms:
        found = optimize.minimize(negative, start, method="SLSQP",
                                  bounds=[(0, 1)] * (cells + k), constraints=constraints,
                                  options={"ftol": 1e-16, "maxiter": 2000})
        if best is None or found.fun < best.fun:
            best = found
    return best.x[:cells], best.x[cells:], -best.fun * n


def to_parts(tally, base_slope):
    """GroupedParts from the tally; ``base_slope(q, g)``: (matrix at tau 0, slope, tau index)."""
    parts = {}
    q = len(base_slope)
    for (groups, reports), count in tally.items():
        cell = sum(r * 2 ** (q - 1 - i) for i, r in enumerate(reports))
        entry = parts.setdefault(groups, np.zeros(2 ** q))
        entry[cell] += count
    out = []
    for groups, counts in parts.items():
        made = [base_slope[i](g) for i, g in enumerate(groups)]
        out.append(GroupedPart(tuple(m[0] for m in made), tuple(m[1] for m in made),
                               tuple(m[2] for m in made), counts))
    return out


def affine(make, j):
    """(matrix at tau 0, slope, j) of a design affine in its tau (checked at tau 1/2)."""
    def build(g):
        at0, at1 = make(g, [0.0] * 3), make(g, [1.0] * 3)
        half = make(g, [0.5] * 3)
        assert np.allclose(half, (at0 + at1) / 2)
        return at0, at1 - at0, j
    return build


def draw(rng, pi, makers, taus, n):
    """Respondents drawn one at a time: groups at random, truths from pi, reports from M."""
    tally = {}
    combos = list(itertools.product((0, 1), repeat=len(makers)))
    for index in rng.choice(len(combos), size=n, p=pi):
        groups = tuple(int(g) for g in rng.integers(1, 3, size=len(makers)))
        reports = tuple(int(rng.random() < make(g, taus)[t, 1])
                        for make, g, t in zip(makers, groups, combos[index], strict=True))
        tally[(groups, reports)] = tally.get((groups, reports), 0) + 1
    return tally


P_UQT, P_SLD, P_CDM = (0.7, 0.2), (0.3, 0.75), (0.25, 0.65)
UQT = lambda g, taus: uqt(P_UQT[g - 1], taus[0])              # noqa: E731
WARNER = lambda g, taus: warner(0.8)                           # noqa: E731
SLD = lambda g, taus: sld(P_SLD[g - 1], taus[0])               # noqa: E731
CDM = lambda g, taus: cdm(P_CDM[g - 1], taus[1])               # noqa: E731


@pytest.fixture(scope="module")
def uqt_warner():
    rng = np.random.default_rng(11)
    tally = draw(rng, np.array([0.45, 0.15, 0.1, 0.3]), [UQT, WARNER], [0.35], 2500)
    # Warner is one-group: every respondent is "group 1" of it
    tally2 = {}
    for (groups, reports), c in tally.items():
        key = ((groups[0], 1), reports)
        tally2[key] = tally2.get(key, 0) + c
    parts = to_parts(tally2, [affine(UQT, 0), lambda g: (warner(0.8), None, None)])
    fit = fit_joint_groups(parts, [("no", "yes"), ("no", "yes")],
                           [("uqt", "piUQ", "innocuous rate")])
    return tally2, fit


def test_uqt_with_warner_is_the_generic_maximum(uqt_warner):
    tally, fit = uqt_warner
    makers = [UQT, WARNER]
    pi, taus, best = scipy_max(tally, makers, 1)
    assert np.allclose(fit.estimate, pi, atol=1e-5)
    assert fit.nuisance[0].estimate == pytest.approx(taus[0], abs=1e-5)
    mine = brute_loglik(fit.estimate, [fit.nuisance[0].estimate], tally, makers)
    assert mine == pytest.approx(fit.loglik, abs=1e-8)
    assert mine >= best - 1e-8
    # SE of tau: the inverse of minus the Hessian of the brute likelihood over (pi_0..pi_2, tau)
    x0 = np.concatenate((fit.estimate[:3], [fit.nuisance[0].estimate]))

    def ll(x):
        return brute_loglik(np.append(x[:3], 1 - x[:3].sum()), [x[3]], tally, makers)

    hess = numerical_hessian(ll, x0)
    se = math.sqrt(np.linalg.inv(-hess)[3, 3])
    assert fit.nuisance[0].se == pytest.approx(se, rel=2e-3)


def test_interval_ends_re_maximise_over_tau(uqt_warner):
    tally, fit = uqt_warner
    makers = [UQT, WARNER]
    critical = stats.chi2.ppf(0.95, 1)
    for cell, end in ((3, fit.ci_low[3]), (0, fit.ci_high[0])):
        starts = [np.concatenate((np.full(4, (1 - end) / 3), [0.35]))]
        starts[0][cell] = end
        _, _, profile = scipy_max(tally, makers, 1, (cell, end), starts)
        assert 2 * (fit.loglik - profile) == pytest.approx(critical, abs=2e-4)
    # with tau held at its estimate the interval would be narrower: the profile re-maximises
    t = fit.nuisance[0]
    assert t.ci_low < t.estimate < t.ci_high
    for end in (t.ci_low, t.ci_high):
        _, _, value = scipy_max_tau_fixed(tally, makers, end)
        assert 2 * (fit.loglik - value) == pytest.approx(critical, abs=2e-4)


def scipy_max_tau_fixed(tally, makers, tau):
    """max over the simplex of brute_loglik at a fixed tau."""
    n = sum(tally.values())

    def negative(x):
        return -brute_loglik(np.maximum(x, 1e-15), [tau], tally, makers) / n

    found = optimize.minimize(negative, np.full(4, 0.25), method="SLSQP", bounds=[(0, 1)] * 4,
                              constraints=[{"type": "eq", "fun": lambda x: np.sum(x) - 1}],
                              options={"ftol": 1e-16, "maxiter": 2000})
    return found.x, tau, -found.fun * n


@pytest.mark.slow
def test_two_taus_sld_and_cdm_are_the_generic_maximum():
    rng = np.random.default_rng(5)
    makers = [SLD, CDM]
    tally = draw(rng, np.array([0.4, 0.2, 0.15, 0.25]), makers, [0.8, 0.15], 3000)
    parts = to_parts(tally, [affine(SLD, 0), affine(CDM, 1)])
    fit = fit_joint_groups(parts, [("no", "yes"), ("no", "yes")],
                           [("sld", "t", "honesty"), ("cdm", "gamma", "cheaters")])
    pi, taus, best = scipy_max(tally, makers, 2)
    assert np.allclose(fit.estimate, pi, atol=1e-5)
    assert np.allclose([t.estimate for t in fit.nuisance], taus, atol=1e-5)
    mine = brute_loglik(fit.estimate, [t.estimate for t in fit.nuisance], tally, makers)
    assert mine == pytest.approx(fit.loglik, abs=1e-8)
    assert mine >= best - 1e-8


@pytest.mark.slow
@pytest.mark.parametrize("makers, taus, names", [
    ([UQT, lambda g, taus: cdmsym((0.2, 0.3)[g - 1], (0.1, 0.25)[g - 1], taus[1])],
     [0.3, 0.1], [("uqt", "piUQ", ""), ("cdmsym", "gamma", "")]),
    ([SLD, CDM], [0.85, 0.2], [("sld", "t", ""), ("cdm", "gamma", "")]),
])
def test_recovery_from_exact_report_probabilities(makers, taus, names):
    """2,000,000 respondents drawn from the model's report probabilities: the truth recovered."""
    rng = np.random.default_rng(3)
    table = np.array([0.5, 0.1, 0.15, 0.25])
    parts = []
    for groups in itertools.product((1, 2), repeat=2):
        mats = [make(g, taus) for make, g in zip(makers, groups, strict=True)]
        probs = table @ np.kron(mats[0], mats[1])
        counts = rng.multinomial(500_000, probs).astype(float)
        made = [affine(make, j)(g) for j, (make, g) in enumerate(zip(makers, groups,
                                                                     strict=True))]
        parts.append(GroupedPart(tuple(m[0] for m in made), tuple(m[1] for m in made),
                                 tuple(m[2] for m in made), counts))
    fit = fit_joint_groups(parts, [("no", "yes"), ("no", "yes")], names)
    half = (fit.ci_high - fit.ci_low) / 2
    assert np.all(np.abs(fit.estimate - table) < 2.5 * half)        # about 5 SEs
    assert np.all(half < 0.01)
    for t, truth in zip(fit.nuisance, taus, strict=True):
        assert abs(t.estimate - truth) < 5 * t.se and t.se < 0.01
        assert t.ci_low < truth < t.ci_high or abs(t.estimate - truth) < 4 * t.se


SURVEY = survey_text(
    "two-group-joint", DRUGS_WARNER,
    question("uqt", "yes-no", randomize="unrelated-unknown", p="[0.7, 0.3]",
             innocuous="Born in spring?", innocuous_rate=0.3),
    SLD_BLOCK, CDM_BLOCK, question("smoker", "yes-no"), title="Two groups")


@pytest.fixture(scope="module")
def export(tmp_path_factory, simulate_export):
    survey, out = simulate_export(
        tmp_path_factory.mktemp("twogroup"), SURVEY, "--respondents", "3000", "--truth",
        "drugs=0.3", "--truth", "uqt=0.25", "--truth", "sld=0.35", "--truth", "cdm=0.3",
        "--seed", "8")
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return survey, out, rows


DESIGNS = {
    "drugs": lambda g, tau: warner(0.8),
    "uqt": lambda g, tau: uqt((0.7, 0.3)[g - 1], tau),
    "sld": lambda g, tau: sld((0.3, 0.7)[g - 1], tau),
    "cdm": lambda g, tau: cdm((0.3, 0.7)[g - 1], tau),
}


@pytest.mark.slow
@pytest.mark.parametrize("pair, k, simulated", [
    (("drugs", "uqt"), 1, [0.3]),        # simulate's innocuous rate
    (("sld", "cdm"), 2, [1.0, 0.0]),     # simulated respondents are honest and never cheat
])
def test_cli_equals_the_generic_maximum_of_the_rows(export, capsys, pair, k, simulated):
    survey, out, rows = export
    grouped = [q for q in pair if q != "drugs"]
    makers = []
    for q in pair:
        j = grouped.index(q) if q in grouped else None
        makers.append(lambda g, taus, q=q, j=j: DESIGNS[q](g, None if j is None else taus[j]))
    tally = {}
    for r in rows:
        groups = tuple(int(r[f"{q}.group"]) if q != "drugs" else 1 for q in pair)
        key = (groups, tuple(int(r[q] == "yes") for q in pair))
        tally[key] = tally.get(key, 0) + 1
    assert main(["analyze", str(out), "--survey", str(survey), "--joint", ",".join(pair),
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["joint"]
    estimate = np.array([c["estimate"] for c in data["cells"]])
    taus = [t["estimate"] for t in data["nuisance"]]
    assert [t["question"] for t in data["nuisance"]] == grouped
    pi, tau_ref, best = scipy_max(tally, makers, k)
    assert np.allclose(estimate, pi, atol=1e-5)
    assert np.allclose(taus, tau_ref, atol=1e-5)
    assert brute_loglik(estimate, taus, tally, makers) == pytest.approx(data["loglik"], abs=1e-7)
    assert data["loglik"] >= best - 1e-8
    for t, truth in zip(data["nuisance"], simulated, strict=True):
        assert t["ci_low"] - 1e-9 <= truth <= t["ci_high"] + 1e-9
        assert set(t) >= {"name", "estimate", "se", "ci_low", "ci_high", "on_boundary"}
    assert data["n"] == len(rows)


@pytest.mark.slow
def test_cli_formats_name_the_nuisance(export, capsys):
    survey, out, _ = export
    assert main(["analyze", str(out), "--survey", str(survey), "--joint", "uqt,cdm"]) == 0
    text = capsys.readouterr().out
    assert "piUQ of uqt" in text and "gamma of cdm" in text and "cheating" in text


def test_one_group_only_is_refused(export, tmp_path, capsys):
    survey, out, rows = export
    only = tmp_path / "one.csv"
    with open(only, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(r for r in rows if r["uqt.group"] == "1")
    assert main(["analyze", str(only), "--survey", str(survey), "--joint", "drugs,uqt"]) == 2
    assert "'uqt': every respondent is in one group" in capsys.readouterr().err


def test_two_group_predictor_with_a_randomized_outcome_is_refused(export, capsys):
    survey, out, _ = export
    assert main(["analyze", str(out), "--survey", str(survey), "--model", "drugs ~ uqt"]) == 2
    assert "the outcome must be asked directly" in capsys.readouterr().err
