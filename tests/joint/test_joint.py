"""Joint prevalence: the likelihood, its maximum, its intervals, the CLI.

Independent computations written here: the likelihood as a sum over each respondent's latent
true answers (no Kronecker product), its maximum by scipy.optimize (SLSQP on the simplex), the
profile-likelihood ends by a constrained scipy fit, coverage by simulation.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import shlex

import numpy as np
import pytest
from scipy import optimize, stats

from rrsite.analyze.joint import joint
from rrsite.cli import main
from rrsite.estimate.joint import JointPart, fit_joint, loglik, mle, profile_loglik
from tests.joint.clitools import module_export, refused
from tests.surveytext import CHEAT_FORCED, DRUGS_WARNER, FACULTY, NOTE, UQT, survey_text

WARNER = np.array([[0.75, 0.25], [0.25, 0.75]])
FORCED = np.array([[0.8, 0.2], [0.3, 0.7]])
ONE_SIDED = np.array([[0.5, 0.5], [0.0, 1.0]])
THREE = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])
KUK = np.array([[0.49, 0.42, 0.09], [0.09, 0.42, 0.49]])  # 2 truths, 3 reports (two cards)


def brute_loglik(pi, respondents):
    """sum_i log sum_t pi_t prod_q M_q[t_q, r_q], looping over every latent combination."""
    total = 0.0
    for matrices, reports in respondents:
        shapes = [m.shape[0] for m in matrices]
        p = 0.0
        for index, truths in enumerate(itertools.product(*[range(s) for s in shapes])):
            term = pi[index]
            for m, t, r in zip(matrices, truths, reports, strict=True):
                term *= m[t, r]
            p += term
        total += math.log(p)
    return total


def simulate(rng, pi, matrices, n):
    """Respondents (matrices, reports) drawn one by one from the latent table."""
    shapes = [m.shape[0] for m in matrices]
    combos = list(itertools.product(*[range(s) for s in shapes]))
    out = []
    for index in rng.choice(len(combos), size=n, p=pi):
        reports = tuple(int(rng.choice(m.shape[1], p=m[t]))
                        for m, t in zip(matrices, combos[index], strict=True))
        out.append((matrices, reports))
    return out


def to_parts(respondents):
    groups = {}
    for matrices, reports in respondents:
        key = tuple(id(m) for m in matrices)
        sizes = [m.shape[1] for m in matrices]
        cell = 0
        for r, s in zip(reports, sizes, strict=True):
            cell = cell * s + r
        entry = groups.setdefault(key, (matrices, np.zeros(math.prod(sizes))))
        entry[1][cell] += 1
    return [JointPart(tuple(m), c) for m, c in groups.values()]


def scipy_max(respondents, k, fixed=None):
    """max of brute_loglik over the simplex (optionally with pi[cell] = value) by SLSQP."""
    # the brute-force likelihood is slow; aggregate identical respondents first
    tally = {}
    for matrices, reports in respondents:
        key = (tuple(id(m) for m in matrices), reports)
        tally.setdefault(key, [matrices, reports, 0])[2] += 1
    weighted = list(tally.values())

    def negative(pi):
        pi = np.maximum(pi, 1e-15)
        return -sum(w * brute_loglik(pi, [(m, r)]) for m, r, w in weighted)

    constraints = [{"type": "eq", "fun": lambda p: p.sum() - 1.0}]
    if fixed is not None:
        constraints.append({"type": "eq", "fun": lambda p: p[fixed[0]] - fixed[1]})
    best = None
    for start in (np.full(k, 1.0 / k), np.linspace(1, 2, k) / np.linspace(1, 2, k).sum()):
        result = optimize.minimize(negative, start, method="SLSQP", bounds=[(0, 1)] * k,
                                   constraints=constraints,
                                   options={"ftol": 1e-15, "maxiter": 2000})
        if best is None or result.fun < best.fun:
            best = result
    return best.x, -best.fun


@pytest.mark.parametrize("designs", [
    [(WARNER, FORCED), (FORCED, WARNER)],          # two versions
    [(THREE, ONE_SIDED)],                          # 3 x 2 table, a one-sided design
    [(KUK, WARNER, FORCED)],                       # three questions, a non-square matrix
])
def test_likelihood_is_the_sum_over_latent_answers(designs):
    rng = np.random.default_rng(7)
    k = math.prod(m.shape[0] for m in designs[0])
    respondents = []
    for matrices in designs:
        respondents += simulate(rng, rng.dirichlet(np.ones(k)), matrices, 60)
    parts = to_parts(respondents)
    for _ in range(5):
        pi = rng.dirichlet(np.ones(k))
        assert loglik(pi, parts) == pytest.approx(brute_loglik(pi, respondents), rel=1e-12)


@pytest.mark.parametrize("pi, designs", [
    ([0.5, 0.1, 0.3, 0.1], [(WARNER, FORCED), (FORCED, WARNER)]),
    ([0.6, 0.0, 0.4, 0.0], [(WARNER, FORCED)]),                       # zero cells: a boundary
    ([0.3, 0.1, 0.2, 0.1, 0.25, 0.05], [(THREE, ONE_SIDED)]),
])
def test_maximum_matches_scipy_on_the_brute_force_likelihood(pi, designs):
    rng = np.random.default_rng(11)
    respondents = []
    for matrices in designs:
        respondents += simulate(rng, np.array(pi), matrices, 400)
    parts = to_parts(respondents)
    estimate, value = mle(parts)
    reference, reference_value = scipy_max(respondents, len(pi))
    assert value >= reference_value - 1e-7          # never a lower likelihood
    assert value == pytest.approx(brute_loglik(estimate, respondents), rel=1e-12)
    assert np.allclose(estimate, reference, atol=2e-4)
    assert estimate.sum() == pytest.approx(1.0, abs=1e-12) and np.all(estimate >= 0)


def test_profile_interval_ends_against_scipy():
    rng = np.random.default_rng(3)
    respondents = simulate(rng, np.array([0.5, 0.1, 0.3, 0.1]), (WARNER, FORCED), 500)
    parts = to_parts(respondents)
    fit = fit_joint(parts, [["no", "yes"], ["no", "yes"]], 0.95)
    critical = stats.chi2.ppf(0.95, 1)
    _, top = scipy_max(respondents, 4)
    for cell in range(4):
        for end in (fit.ci_low[cell], fit.ci_high[cell]):
            if end in (0.0, 1.0):
                continue
            _, constrained = scipy_max(respondents, 4, fixed=(cell, end))
            assert 2 * (top - constrained) == pytest.approx(critical, abs=2e-3)
            # and the package's own profile at the end agrees with scipy's
            assert profile_loglik(parts, cell, end) >= constrained - 1e-6
        assert fit.ci_low[cell] < fit.estimate[cell] < fit.ci_high[cell]


@pytest.mark.slow
def test_profile_coverage_by_simulation():
    """150 surveys of N = 500 (counts drawn from the model): every cell's interval covers.

    The large study (1,000 surveys at N = 500 and 2,000, two versions): benchmarks/
    coverage_joint.py --only joint.
    """
    rng = np.random.default_rng(2024)
    pi = np.array([0.55, 0.1, 0.25, 0.1])
    matrix = np.kron(WARNER, FORCED)
    reps, covered = 150, np.zeros(4)
    for _ in range(reps):
        truths = rng.multinomial(500, pi)
        counts = sum(rng.multinomial(truths[t], matrix[t]) for t in range(4))
        fit = fit_joint([JointPart((WARNER, FORCED), counts)], [["0", "1"], ["0", "1"]])
        covered += (fit.ci_low <= pi) & (pi <= fit.ci_high)
    # at 95% and 150 surveys the coverage's sd is 1.8%: 89% is three sds below
    assert np.all(covered / reps >= 0.89), covered / reps


def test_not_identified_is_refused():
    same = np.array([[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="not identified"):
        fit_joint([JointPart((WARNER, same), np.array([5.0, 5, 5, 5]))],
                  [["0", "1"], ["0", "1"]])


SURVEY = survey_text("joint-test", CHEAT_FORCED, DRUGS_WARNER, FACULTY, UQT, NOTE, title="Joint")


export = module_export("joint", SURVEY, "--respondents", "3000", "--truth", "cheat=0.3",
                       "--truth", "drugs=0.2", "--seed", "8")


def test_cli_table_equals_an_independent_fit_of_the_rows(export, capsys):
    survey, out = export
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    forced = np.array([[0.75, 0.25], [0.25, 0.75]])  # forced-response default: 1/2, 1/4, 1/4
    warner = np.array([[0.8, 0.2], [0.2, 0.8]])
    respondents = [((forced, warner), (int(r["cheat"] == "yes"), int(r["drugs"] == "yes")))
                   for r in rows if r["cheat"] and r["drugs"]]
    reference, _ = scipy_max(respondents, 4)
    assert main(["analyze", str(out), "--survey", str(survey), "--joint", "cheat,drugs",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)["joint"]
    estimate = np.array([c["estimate"] for c in data["cells"]])
    assert np.allclose(estimate, reference, atol=2e-4)
    assert [c["answers"] for c in data["cells"]] == [["no", "no"], ["no", "yes"],
                                                      ["yes", "no"], ["yes", "yes"]]
    assert data["n"] == len(respondents)
    # basic composition: forced response (ln 3) + Warner 0.8 (ln 4)
    assert data["privacy"][0]["epsilon"] == pytest.approx(math.log(3) + math.log(4), rel=1e-9)
    margins = data["margins"]
    assert margins["cheat"]["yes"] == pytest.approx(estimate[2] + estimate[3], abs=1e-12)
    assert abs(margins["cheat"]["yes"] - 0.3) < 0.08 and abs(margins["drugs"]["yes"] - 0.2) < 0.08


def test_direct_question_enters_with_the_identity(export):
    survey, out = export
    result = joint([out], survey=survey, questions="cheat,faculty")
    with open(out, newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["cheat"] and r["faculty"]]
    arts = sum(r["faculty"] == "arts" for r in rows) / len(rows)
    assert result.margins["faculty"]["arts"] == pytest.approx(arts, abs=1e-7)
    assert result.fit.n == len(rows)


@pytest.mark.parametrize("fmt, marker", [("table", "joint prevalence: cheat, drugs"),
                                         ("markdown", "| cheat=yes, drugs=yes |"),
                                         ("html", "<svg")])
def test_formats(export, capsys, fmt, marker):
    survey, out = export
    assert main(["analyze", str(out), "--survey", str(survey), "--joint", "cheat,drugs",
                 "--format", fmt]) == 0
    text = capsys.readouterr().out
    assert marker in text and "basic composition" in text


@pytest.mark.parametrize("command, message", [
    ("analyze {out} --survey {survey} --joint cheat,cheat", "cheat appears twice"),
    ("analyze {out} --survey {survey} --joint cheat,note", "'note' is a text question"),
    ("analyze {out} --survey {survey} --joint cheat,nothing", "no question 'nothing'"),
    ("analyze {out} --survey {survey} --joint cheat", "two or more question ids"),
    ("simulate {survey} -o {tmp}/x.csv --respondents 10 --joint cheat,drugs=0.5,0.5",
     "need 4 shares"),
    ("simulate {survey} -o {tmp}/x.csv --respondents 10 --joint cheat,drugs=0.5,0.1,0.1,0.1",
     "add up to 1"),
    ("simulate {survey} -o {tmp}/x.csv --respondents 10 --joint cheat,note=0.5,0.5",
     "not a yes-no or choice question"),
    ("simulate {survey} -o {tmp}/x.csv --respondents 10 --joint cheat,cheat=0.25,0.25,0.25,0.25",
     "two or more different"),
])
def test_bad_input_exits_2(export, tmp_path, capsys, command, message):
    survey, out = export
    refused(capsys, message, *shlex.split(command.format(out=out, survey=survey, tmp=tmp_path)))


def test_simulate_joint_draws_the_table(tmp_path):
    """Report combinations of `simulate --joint` against (table @ M1 kron M2), chi-square."""
    survey = tmp_path / "s.md"
    survey.write_text(SURVEY, encoding="utf-8")
    out = tmp_path / "j.csv"
    table = np.array([0.5, 0.1, 0.1, 0.3])
    assert main(["simulate", str(survey), "--respondents", "40000", "--seed", "12",
                 "--joint", "cheat,drugs=0.5,0.1,0.1,0.3", "-o", str(out)]) == 0
    counts = np.zeros(4)
    with open(out, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["cheat"] and row["drugs"]:
                counts[2 * (row["cheat"] == "yes") + (row["drugs"] == "yes")] += 1
    forced = np.array([[0.75, 0.25], [0.25, 0.75]])
    warner = np.array([[0.8, 0.2], [0.2, 0.8]])
    expected = table @ np.kron(forced, warner) * counts.sum()
    assert stats.chisquare(counts, expected).pvalue > 0.001
    fit = joint([out], survey=survey, questions="cheat,drugs").fit
    half = (fit.ci_high - fit.ci_low) / 2
    assert np.all(np.abs(fit.estimate - table) < 2.5 * half)   # about 5 standard errors
