"""Frequency-oracle questions end to end: supports, samplers, estimates, other libraries.

- The numpy supports of rrsite.exports.oracles equal core's pure-Python ``supports`` report by
  report; the numpy samplers of rrsite.simulate.oracles follow core's report laws (chi-square).
- The EM shares equal a direct maximisation of the same likelihood (scipy); the unbiased shares'
  spread over many simulated surveys equals the exact variance formula.
- Held-out comparison with libraries written by others, on the same reports: pure-ldp's unary
  encoding and Hadamard response servers give rrsite's unbiased estimates; multi-freq-ldpy's
  OUE/SUE, subset selection and local hashing estimators (its MI: clip at 0, renormalise) give
  rrsite's unbiased estimates put through the same step; its L-OSUE second-round chance is the
  p2 rrsite solves for a panel, and its longitudinal estimator rrsite's one-wave estimate.
- A simulated survey of 20,000 respondents with 100 answers at epsilon 1 (``auto``) recovers
  its shares within their intervals at the stated rate.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from multi_freq_ldpy.long_freq_est import L_OSUE
from multi_freq_ldpy.pure_frequency_oracles import LH, SS, UE
from pure_ldp.frequency_oracles.hadamard_response.internal.k2k_hadamard import (
    Hadamard_Rand_high_priv,
)
from pure_ldp.frequency_oracles.unary_encoding import UEServer
from scipy import optimize, stats

from rrsite.analyze import analyze
from rrsite.cli import main
from rrsite.core.frequency import (
    HadamardResponse,
    LocalHashing,
    Memoized,
    SubsetSelection,
    UnaryEncoding,
    WaveOracle,
)
from rrsite.estimate.frequency import Law, Part, em_shares, log_likelihood
from rrsite.exports.oracles import decode_all, supports
from rrsite.simulate.oracles import sample

# The held-out libraries call random.randint with floats (a DeprecationWarning per call, thousands a
# run): theirs, not rrsite's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:non-integer arguments to randrange:DeprecationWarning")

DESIGNS = [UnaryEncoding(12, 1.0), UnaryEncoding(7, 2.0, optimized=False),
           LocalHashing(30, 1.5), LocalHashing(9, 2.0, g=3), SubsetSelection(25, 1.0),
           HadamardResponse(40, 1.0), UnaryEncoding(6, 2.0, max_ticks=3)]


def truths(design: object, n: int, rng: np.random.Generator) -> np.ndarray:
    k = design.k  # type: ignore[attr-defined]
    if getattr(design, "sets", False):
        sets = np.zeros((n, k), dtype=bool)
        for row in sets:
            row[rng.choice(k, size=int(rng.integers(0, 4)), replace=False)] = True
        return sets
    return rng.integers(0, k, n)


@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: f"{d.name}-{d.k}")
def test_numpy_supports_equal_core_supports(design: object) -> None:
    rng = random.Random(11)
    reports = [design.randomize(frozenset({0, 2}) if design.sets else v % design.k, rng)[0]
               for v in range(300)]
    table = supports(design, reports)
    for row, report in zip(table, reports, strict=True):
        assert tuple(np.flatnonzero(row)) == tuple(sorted(design.supports(report)))
    values = [f"v{i}" for i in range(design.k)]
    decoded, problems = decode_all(design, values, [json.dumps(design.encode(r, values))
                                                    if isinstance(design.encode(r, values), list)
                                                    else design.encode(r, values)
                                                    for r in reports])
    assert problems == [None] * len(reports) and decoded == [
        tuple(sorted(r)) if isinstance(r, tuple) and not isinstance(design, LocalHashing) else r
        for r in reports]


@pytest.mark.parametrize("design", [UnaryEncoding(3, 1.0), LocalHashing(4, 1.5, g=3),
                                    SubsetSelection(5, 1.0, d=2), HadamardResponse(5, 1.0),
                                    UnaryEncoding(3, 2.0, max_ticks=2)],
                         ids=lambda d: f"{d.name}-{d.k}")
def test_numpy_samplers_follow_core_laws(design: object) -> None:
    rng = np.random.default_rng(5)
    draws = 60_000
    if design.sets:
        truth_set = frozenset({0, 2})
        truth = np.zeros((draws, design.k), dtype=bool)
        truth[:, [0, 2]] = True
    else:
        truth_set = 1
        truth = np.full(draws, 1)
    reports = sample(rng, design, truth)
    seen: dict[object, int] = {}
    for report in reports:
        seen[report] = seen.get(report, 0) + 1
    laws = {r: design.probability(r, truth_set) for r in seen}
    assert all(chance > 0 for chance in laws.values())
    # every report of positive chance, binned: observed against the law's expectations
    from tests.core.test_frequency import all_reports  # the enumeration of every report

    every = all_reports(design)
    observed = [seen.get(r, 0) for r in every]
    assert sum(observed) == draws
    expected = [draws * design.probability(r, truth_set) for r in every]
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_em_is_the_maximum_of_the_likelihood() -> None:
    """The EM shares meet the optimality conditions on the simplex (Karush-Kuhn-Tucker): the
    likelihood's gradient is N on every share above 0 and at most N on those at 0; and no
    point of a direct search (scipy, Nelder-Mead on a softmax) does better."""
    design = UnaryEncoding(5, 1.0)
    rng = np.random.default_rng(3)
    share = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    reports = sample(rng, design, rng.choice(5, size=3000, p=share))
    part = Part(supports(design, reports), Law.of(design))
    found = em_shares([part])
    rows = part.supports.astype(float)
    extra = part.law.ratio - 1
    gradient = ((1 + extra * rows) / (1 + extra * (rows @ found))[:, None]).sum(axis=0)
    positive = found > 1e-9
    assert np.allclose(gradient[positive], 3000, rtol=1e-6)
    assert np.all(gradient[~positive] <= 3000 * (1 + 1e-6))
    assert found.sum() == pytest.approx(1.0) and found.min() >= 0

    def negative(z: np.ndarray) -> float:
        x = np.exp(z - z.max())
        return -log_likelihood(x / x.sum(), [part])

    best = optimize.minimize(negative, np.log(share + 0.01), method="Nelder-Mead",
                             options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20_000})
    assert log_likelihood(found, [part]) >= -best.fun - 1e-9


@pytest.mark.parametrize("design", [SubsetSelection(20, 1.0), LocalHashing(20, 1.0),
                                    HadamardResponse(20, 1.0)], ids=lambda d: d.name)
def test_unbiased_spread_is_the_exact_variance(design: object) -> None:
    """400 surveys of 2,000: the mean is the share (4 se) and the variance the formula (15%)."""
    rng = np.random.default_rng(8)
    share = np.full(20, 0.02)
    share[0] = 0.62
    law = Law.of(design)
    found = []
    for _ in range(400):
        reports = sample(rng, design, rng.choice(20, size=2000, p=share))
        found.append(Part(supports(design, reports), law).unbiased())
    found_array = np.array(found)
    exact = law.variance(share, 2000)
    assert np.all(np.abs(found_array.mean(axis=0) - share) < 4 * np.sqrt(exact / 400))
    assert np.allclose(found_array.var(axis=0, ddof=1) / exact, 1.0, atol=0.2)


# ------------------------------------------------------------------------- other libraries


def test_pure_ldp_unary_encoding_server_gives_rrsite_unbiased() -> None:
    for optimized in (True, False):
        design = UnaryEncoding(8, 1.3, optimized=optimized)
        server = UEServer(1.3, 8, use_oue=optimized)
        rng = np.random.default_rng(2)
        reports = sample(rng, design, rng.integers(0, 8, 1500))
        table = supports(design, reports)
        for row in table:
            server.aggregate(row.astype(float))
        ours = Part(table, Law.of(design)).unbiased()
        theirs = np.array([server.estimate(v + 1, suppress_warnings=True) for v in range(8)])
        assert np.allclose(theirs / 1500, ours, atol=1e-12)


def test_pure_ldp_hadamard_decoder_gives_rrsite_unbiased() -> None:
    """pure-ldp's Hadamard response (Acharya et al.'s code) encodes; both decode the same."""
    random.seed(4)
    hr = Hadamard_Rand_high_priv(40, 1.0)
    truth = [random.randrange(40) for _ in range(3000)]
    reports = hr.encode_string(truth)
    design = HadamardResponse(40, 1.0)
    assert design.size == hr.outsz
    theirs = hr.decode_string(reports, iffast=1, normalization=-1)
    ours = Part(supports(design, reports), Law.of(design)).unbiased()
    assert np.allclose(theirs, ours, atol=1e-12)


def mi(unbiased: np.ndarray) -> np.ndarray:
    """multi-freq-ldpy's post-processing: clip at 0, renormalise."""
    clipped = unbiased.clip(0)
    return clipped / clipped.sum()


@pytest.mark.slow
def test_multi_freq_ldpy_ue_and_ss_estimators_on_the_same_reports() -> None:
    rng = np.random.default_rng(6)
    for optimal in (True, False):
        design = UnaryEncoding(10, 1.0, optimized=optimal)
        reports = sample(rng, design, rng.integers(0, 10, 2000))
        table = supports(design, reports)
        theirs = UE.UE_Aggregator_MI(table.astype(float), 1.0, optimal=optimal)
        assert np.allclose(theirs, mi(Part(table, Law.of(design)).unbiased()), atol=1e-12)
    epsilon, k = 1.0, 30
    d = int(max(1, np.rint(k / (math.exp(epsilon) + 1))))  # the library's subset size
    design = SubsetSelection(k, epsilon, d=d)
    np.random.seed(9)
    theirs_reports = [SS.SS_Client(int(v), k, epsilon) for v in rng.integers(0, k, 3000)]
    table = supports(design, [tuple(sorted(r.tolist())) for r in theirs_reports])
    theirs = SS.SS_Aggregator_MI(theirs_reports, k, epsilon)
    assert np.allclose(theirs, mi(Part(table, Law.of(design)).unbiased()), atol=1e-12)


def test_local_hashing_against_an_independent_implementation() -> None:
    """multi-freq-ldpy's local hashing cannot run here: its client and aggregator hash str(v) with
    xxhash, which since xxhash 3 takes bytes only ("Strings must be encoded before hashing").
    So rrsite's OLH reports are decoded here by a re-implementation written from Wang et al.
    (2017): the hash family from its definition (the core tests' independent_bucket), support
    counts by a plain loop, f_v = (c_v / N - 1/g) / (p - 1/g) with p = e^eps / (e^eps + g - 1).
    """
    from tests.core.test_frequency import independent_bucket

    epsilon, k = 1.5, 15
    design = LocalHashing(k, epsilon)
    g = design.g
    rng = np.random.default_rng(12)
    reports = sample(rng, design, rng.integers(0, k, 2500))
    counts = [sum(independent_bucket(seed, v, k, g) == sent for seed, sent in reports)
              for v in range(k)]
    p = math.exp(epsilon) / (math.exp(epsilon) + g - 1)
    paper = (np.array(counts) / 2500 - 1 / g) / (p - 1 / g)
    ours = Part(supports(design, reports), Law.of(design)).unbiased()
    assert np.allclose(paper, ours, atol=1e-12)
    with pytest.raises(TypeError, match="encoded"):  # the library's own client, as shipped
        LH.LH_Client(1, k, epsilon)


def test_multi_freq_ldpy_l_osue_is_rrsites_panel_of_oue() -> None:
    eps_perm, eps_1 = 2.0, 0.8
    memo = Memoized(UnaryEncoding(10, eps_perm), eps_1)
    theirs_p2 = (1 - math.exp(eps_1 + eps_perm)) / (
        math.exp(eps_1) - math.exp(eps_perm) - math.exp(eps_1 + eps_perm) + 1)
    assert memo.p2 == pytest.approx(theirs_p2, rel=1e-9)
    np.random.seed(2)
    rng = np.random.default_rng(2)
    reports = [L_OSUE.L_OSUE_Client(int(v), 10, eps_perm, eps_1)
               for v in rng.integers(0, 10, 2000)]
    table = np.array(reports, dtype=bool)
    theirs = L_OSUE.L_OSUE_Aggregator_MI(table.astype(float), eps_perm, eps_1)
    ours = Part(table, Law.of(WaveOracle(memo))).unbiased()
    assert np.allclose(theirs, mi(ours), atol=1e-12)


# ------------------------------------------------------------------------- end to end

SURVEY = """---
id: many
title: Many answers
privacy:
  budget: 1
---
## Which one?

```question
id: which
type: choice
options: [{options}]
epsilon: 1
```
"""


@pytest.mark.slow
def test_twenty_thousand_respondents_recover_every_share(tmp_path: Path) -> None:
    """Acceptance: k = 100 at epsilon 1 (auto); every share within its 95% interval at the rate
    stated: at least 90 of the 100 (a 95% rate gives fewer than 90 with chance 2%)."""
    values = [f"a{i}" for i in range(100)]
    survey = tmp_path / "many.md"
    survey.write_text(SURVEY.format(options=", ".join(values)), encoding="utf-8")
    weights = 0.8 ** np.arange(100)
    share = weights / weights.sum()  # skewed: a few common answers, many rare ones
    truth = ",".join(f"{v}:{float(s)!r}" for v, s in zip(values, share, strict=True))
    out = tmp_path / "out.csv"
    assert main(["simulate", str(survey), "--respondents", "20000", "--seed", "3",
                 "--truth", f"which={truth}", "-o", str(out)]) == 0
    result = analyze([out], survey=survey).question("which")
    assert result.designs[0].design["name"] == "subset"
    estimate = result.estimate
    inside = np.sum((estimate.ci_low <= share) & (share <= estimate.ci_high))
    assert inside >= 90, inside
    assert estimate.estimate.sum() == pytest.approx(1.0)
    assert np.max(np.abs(estimate.estimate - share)) < 0.05


def test_joint_model_and_counts_refuse_an_oracle(tmp_path: Path, capsys) -> None:
    values = [f"a{i}" for i in range(12)]
    survey = tmp_path / "many.md"
    survey.write_text(SURVEY.format(options=", ".join(values)).replace(
        "budget: 1", "budget: 3") + "\n## Also?\n\n```question\nid: also\ntype: yes-no\n"
        "randomize: forced-response\n```\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    assert main(["simulate", str(survey), "--respondents", "300", "--seed", "1", "-o",
                 str(out)]) == 0
    capsys.readouterr()
    assert main(["analyze", str(out), "--survey", str(survey), "--joint", "which,also"]) == 2
    assert "frequency oracle" in capsys.readouterr().err
    counts = tmp_path / "counts.csv"
    counts.write_text("question,version,report,count\nwhich,subset,a1,3\n", encoding="utf-8")
    assert main(["analyze", "--counts", str(counts), "--survey", str(survey)]) == 2
    assert "frequency oracle" in capsys.readouterr().err


def test_design_based_shares_of_an_oracle(tmp_path: Path) -> None:
    """With equal weights the design-based (Hajek) share is the unbiased share; the weights
    move it as they must (a weighted mean of the respondents' de-biased supports)."""
    import csv

    from rrsite.analyze.sample_design import SampleOptions

    values = [f"a{i}" for i in range(12)]
    survey = tmp_path / "many.md"
    survey.write_text(SURVEY.format(options=", ".join(values)), encoding="utf-8")
    out = tmp_path / "out.csv"
    assert main(["simulate", str(survey), "--respondents", "2000", "--seed", "5", "-o",
                 str(out)]) == 0
    rows = list(csv.reader(out.open(encoding="utf-8")))
    rows[0] += ["w", "one"]
    for i, row in enumerate(rows[1:]):
        row += [str(1 + i % 3), "1"]
    weighted = tmp_path / "weighted.csv"
    with weighted.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    flat = analyze([weighted], survey=survey, sample=SampleOptions(weights="one"))
    question = flat.question("which")
    based = question.design_based["values"]
    for i, label in enumerate(values):
        assert based[label]["estimate"] == pytest.approx(question.estimate.unbiased[i])
    tilted = analyze([weighted], survey=survey, sample=SampleOptions(weights="w"))
    design = tilted.question("which").designs[0]
    law = Law.of(SubsetSelection(12, 1.0, d=design.design["d"]))
    table = design.supports
    weights = np.array([1 + i % 3 for i in range(len(table))], dtype=float)
    expected = weights @ ((table - law.q) / (law.p - law.q)) / weights.sum()
    got = [tilted.question("which").design_based["values"][v]["estimate"] for v in values]
    assert np.allclose(got, expected)
