"""Design-based estimation (rrsite.estimate.survey_design) against independent computations.

- de-biasing: E[r | state] and E[v | state] summed over every report with the design's own
  probabilities (models.Design.pw, rrsite.core matrices);
- the variance: R survey's formulas (svytotal; svymean as a ratio by the delta method) written
  out here with loops, the delete-one-cluster jackknife, and brute force: every sample of a small
  finite population and every combination of reports, weighted by their probabilities, gives the
  exact variance of the estimator, which the variance estimator must match in expectation.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from rrsite.estimate import survey_design as sd
from rrsite.estimate.models import Design

# ------------------------------------------------------------------------- de-biasing


@pytest.mark.parametrize("p00,p11", [(0.75, 0.75), (0.5, 1.0), (0.9, 0.6), (0.2, 0.95)])
def test_binary_r_is_unbiased_and_v_estimates_its_variance(p00: float, p11: float) -> None:
    for truth in (0, 1):
        p_yes = p11 if truth else 1 - p00
        probs = {1: p_yes, 0: 1 - p_yes}
        r = {z: float(sd.debias_binary([z], p00, p11).r[0]) for z in (0, 1)}
        v = {z: float(sd.debias_binary([z], p00, p11).v[0]) for z in (0, 1)}
        mean = sum(probs[z] * r[z] for z in (0, 1))
        var = sum(probs[z] * (r[z] - truth) ** 2 for z in (0, 1))
        assert mean == pytest.approx(truth, abs=1e-12)
        assert sum(probs[z] * v[z] for z in (0, 1)) == pytest.approx(var, abs=1e-12)


def test_binary_rejects_uninformative_design() -> None:
    with pytest.raises(ValueError, match="no information"):
        sd.debias_binary([0, 1], 0.5, 0.5)


def test_matrix_debiasing_kRR_every_category() -> None:
    k, eps = 4, 1.2  # k-RR written out (MATH.md section 5)
    p, q = math.exp(eps) / (math.exp(eps) + k - 1), 1 / (math.exp(eps) + k - 1)
    P = np.full((k, k), q) + np.eye(k) * (p - q)
    k = P.shape[0]
    per_category = sd.debias_matrix(np.arange(k), P)
    for j, data in enumerate(per_category):
        for t in range(k):
            mean = float(P[t] @ data.r)
            var = float(P[t] @ (data.r - (t == j)) ** 2)
            assert mean == pytest.approx(float(t == j), abs=1e-12)
            assert float(P[t] @ data.v) == pytest.approx(var, abs=1e-12)


ONE_GROUP = [
    Design("Warner", 0.7), Design("UQTknown", [0.6, 0.3]), Design("Mangat", 0.8),
    Design("Crosswise", 0.25), Design("Triangular", 0.3), Design("Kuk", [0.7, 0.3], 3),
    Design("Kuk", [0.2, 0.6], 1), Design("FR", [0.1, 0.15, 0.05]),
    Design("custom", [[0.8, 0.1], [0.2, 0.9]]),
]


@pytest.mark.parametrize("design", ONE_GROUP, ids=lambda d: f"{d.model}-{d.p}")
def test_rrreg_one_group_unbiased(design: Design) -> None:
    pw = design.pw()  # reports x states
    data = sd.debias_rrreg(design, np.arange(pw.shape[0]))
    target = design.prevalence_state
    for state in range(pw.shape[1]):
        column = pw[:, state]
        truth = float(state == target)
        assert float(column @ data.r) == pytest.approx(truth, abs=1e-12)
        var = float(column @ (data.r - truth) ** 2)
        assert float(column @ data.v) == pytest.approx(var, abs=1e-12)


TWO_GROUP = [
    (Design("UQTunknown", [0.8, 0.3]), [0.3, 0.6]),
    (Design("SLD", [0.7, 0.3]), [0.25, 0.8]),
    (Design("CDM", [0.2, 0.6]), [0.15, 0.6]),
    (Design("CDMsym", [0.2, 0.1, 0.5, 0.3]), [0.2, 0.5]),
]


@pytest.mark.parametrize("design,theta", TWO_GROUP, ids=lambda x: getattr(x, "model", ""))
def test_two_group_prevalence_is_linear_in_the_group_rates(
    design: Design, theta: list[float]
) -> None:
    const, a1, a2 = sd.two_group_coefficients(design)
    rng = np.random.default_rng(4)
    for _ in range(5):
        th = np.array(theta) * rng.uniform(0.5, 1.2, size=2)
        if not design.in_bounds(th):
            continue
        lam = [float(design.report_probabilities(th, g)[1]) for g in (1, 2)]
        pi = float(design.state_shares(th)[design.prevalence_state])
        assert const + a1 * lam[0] + a2 * lam[1] == pytest.approx(pi, abs=1e-12)


@pytest.mark.parametrize("design,theta", TWO_GROUP, ids=lambda x: getattr(x, "model", ""))
def test_two_group_weighted_estimate_matches_group_rates(
    design: Design, theta: list[float]
) -> None:
    rng = np.random.default_rng(8)
    n = 400
    groups = rng.integers(1, 3, n)
    reports = rng.integers(0, 2, n)
    w = rng.uniform(1, 5, n)
    data = sd.debias_two_group(design, reports, groups, w)
    design_ = sd.SampleDesign.build(w)
    est = sd.mean(data, design_)
    const, a1, a2 = sd.two_group_coefficients(design)
    rate = [np.sum(w[groups == g] * reports[groups == g]) / np.sum(w[groups == g])
            for g in (1, 2)]
    assert est.estimate == pytest.approx(const + a1 * rate[0] + a2 * rate[1], abs=1e-12)
    # the linearized variable has the same weighted mean
    assert np.sum(w * data.u) / np.sum(w) == pytest.approx(est.estimate, abs=1e-12)


# ------------------------------------------------------------- R survey's formulas, written out


def _clustered_sample(seed: int = 1) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    strata, clusters, w, r = [], [], [], []
    for h, n_clusters in enumerate((3, 4, 5)):
        for c in range(n_clusters):
            size = int(rng.integers(2, 7))
            strata += [f"s{h}"] * size
            clusters += [f"c{c}"] * size  # labels repeat across strata: nested
            w += list(rng.uniform(10, 40, size))
            r += list(rng.choice([-0.5, 1.5], size))
    return np.array(strata), np.array(clusters), np.array(w), np.array(r)


def _svytotal_variance(t: dict[tuple[str, str], float], fraction: dict[str, float]) -> float:
    """survey::svyrecvar, one stage: per stratum n_h/(n_h-1) (sum t^2 - (sum t)^2 / n_h)."""
    out = 0.0
    for h in sorted({s for s, _ in t}):
        values = [v for (s, _), v in t.items() if s == h]
        n_h = len(values)
        ss = sum(x * x for x in values) - sum(values) ** 2 / n_h
        out += (1 - fraction.get(h, 0.0)) * n_h / (n_h - 1) * ss
    return out


def _cluster_totals(strata: np.ndarray, clusters: np.ndarray,
                    values: np.ndarray) -> dict[tuple[str, str], float]:
    t: dict[tuple[str, str], float] = {}
    for s, c, x in zip(strata.tolist(), clusters.tolist(), values.tolist(), strict=True):
        t[(s, c)] = t.get((s, c), 0.0) + x
    return t


def test_total_matches_svytotal_with_replacement() -> None:
    strata, clusters, w, r = _clustered_sample()
    design = sd.SampleDesign.build(w, strata, clusters)
    data = sd.Debiased(r, r * (r - 1))
    est = sd.total(data, design)
    assert est.estimate == pytest.approx(float(np.sum(w * r)), rel=1e-12)
    expected = _svytotal_variance(_cluster_totals(strata, clusters, w * r), {})
    assert est.variance == pytest.approx(expected, rel=1e-10)
    assert est.randomization_added == 0.0
    assert est.df == 12 - 3


def test_hajek_mean_matches_svymean_ratio_delta_method() -> None:
    strata, clusters, w, r = _clustered_sample(2)
    design = sd.SampleDesign.build(w, strata, clusters)
    est = sd.mean(sd.Debiased(r, r * (r - 1)), design)
    Y, X = float(np.sum(w * r)), float(np.sum(w))
    R = Y / X
    ty = _cluster_totals(strata, clusters, w * r)
    tx = _cluster_totals(strata, clusters, w)
    # covariance of the two estimated totals, by the same one-stage formula, then the delta method
    vyy = _svytotal_variance(ty, {})
    vxx = _svytotal_variance(tx, {})
    both = {k: ty[k] + tx[k] for k in ty}
    vxy = (_svytotal_variance(both, {}) - vyy - vxx) / 2
    expected = (vyy - 2 * R * vxy + R * R * vxx) / X ** 2
    assert est.estimate == pytest.approx(R, rel=1e-12)
    assert est.variance == pytest.approx(expected, rel=1e-10)
    low, high = est.ci_low, est.ci_high
    from scipy import stats

    half = stats.t.ppf(0.975, 9) * math.sqrt(expected)
    assert (low, high) == pytest.approx((R - half, R + half), rel=1e-10)


def test_fpc_as_population_count_or_fraction_and_randomization_added() -> None:
    strata, clusters, w, r = _clustered_sample(3)
    population = {"s0": 12, "s1": 10, "s2": 25}
    sampled = {"s0": 3, "s1": 4, "s2": 5}
    counts = np.array([population[s] for s in strata])
    fractions = np.array([sampled[s] / population[s] for s in strata])
    v = r * (r - 1)
    data = sd.Debiased(r, v)
    a = sd.total(data, sd.SampleDesign.build(w, strata, clusters, counts))
    b = sd.total(data, sd.SampleDesign.build(w, strata, clusters, fractions))
    assert a.variance == pytest.approx(b.variance, rel=1e-12)
    f = {h: sampled[h] / population[h] for h in population}
    sampling = _svytotal_variance(_cluster_totals(strata, clusters, w * r), f)
    added = sum(f[s] * wi ** 2 * vi for s, wi, vi in zip(strata, w, v, strict=True))
    assert a.randomization_added == pytest.approx(added, rel=1e-12)
    assert a.variance == pytest.approx(sampling + added, rel=1e-10)


# ------------------------------------------------------------------------------ jackknife


def test_jackknife_equals_linearization_for_a_total() -> None:
    strata, clusters, w, r = _clustered_sample(4)
    for fpc in (None, np.full(len(w), 0.3)):
        design = sd.SampleDesign.build(w, strata, clusters, fpc)
        data = sd.Debiased(r, r * (r - 1))
        lin = sd.total(data, design)
        jk = sd.total(data, design, method="jackknife")
        assert jk.variance == pytest.approx(lin.variance, rel=1e-10)


def test_jackknife_close_to_linearization_for_a_hajek_mean() -> None:
    rng = np.random.default_rng(5)
    strata = np.repeat(np.arange(4), 300)
    clusters = np.tile(np.repeat(np.arange(30), 10), 4)
    w = rng.uniform(5, 15, 1200)
    r = rng.choice([-0.5, 1.5], 1200, p=[0.6, 0.4]) + np.repeat(rng.normal(0, 0.3, 120), 10)
    design = sd.SampleDesign.build(w, strata, clusters)
    data = sd.Debiased(r, np.zeros_like(r))
    lin = sd.mean(data, design)
    jk = sd.mean(data, design, method="jackknife")
    assert jk.variance == pytest.approx(lin.variance, rel=0.02)


# --------------------------------------------------------------------------- brute force


def _exact_check(population_y: list[int], samples: list[tuple[float, list[int], np.ndarray]],
                 make_design, p00: float, p11: float, estimator) -> tuple[float, float, float]:
    """Exact Var(estimate) and E[variance estimate] over samples x every report combination.

    ``samples``: (probability, unit indices, weights). Returns (true variance, expected
    estimate of it, expected estimate without the randomization term).
    """
    first = second = expected_v = expected_no_term = 0.0
    for prob, units, weights in samples:
        y = [population_y[i] for i in units]
        p_yes = [p11 if t else 1 - p00 for t in y]
        for reports in itertools.product((0, 1), repeat=len(units)):
            pr = prob * math.prod(p if z else 1 - p for z, p in zip(reports, p_yes, strict=True))
            data = sd.debias_binary(list(reports), p00, p11)
            est = estimator(data, make_design(units, weights))
            first += pr * est.estimate
            second += pr * est.estimate ** 2
            expected_v += pr * est.variance
            expected_no_term += pr * (est.variance - est.randomization_added)
    return second - first ** 2, expected_v, expected_no_term, first


def test_brute_force_stratified_srswor_total_exact() -> None:
    y = [1, 0, 0, 1, 1, 0, 1, 0, 0]
    strata_of = ["A"] * 5 + ["B"] * 4
    units_a, units_b = range(5), range(5, 9)
    samples = []
    combos = list(itertools.product(itertools.combinations(units_a, 2),
                                    itertools.combinations(units_b, 2)))
    for a, b in combos:
        units = list(a) + list(b)
        weights = np.array([5 / 2] * 2 + [4 / 2] * 2)
        samples.append((1 / len(combos), units, weights))

    def make_design(units, weights):
        strata = [strata_of[i] for i in units]
        return sd.SampleDesign.build(weights, strata, fpc=[5 if s == "A" else 4 for s in strata])

    var, e_v, e_no_term, mean = _exact_check(
        y, samples, make_design, 0.75, 0.75, lambda d, s: sd.total(d, s))
    assert mean == pytest.approx(sum(y), abs=1e-12)  # unbiased
    assert e_v == pytest.approx(var, rel=1e-12)  # exactly unbiased with the term added back
    assert e_no_term < 0.9 * var  # and clearly too small without it


def test_brute_force_cluster_srswor_with_known_n_mean_exact() -> None:
    # 5 clusters of sizes 1..3; sample 3 clusters without replacement, everyone in them
    sizes = [2, 1, 3, 2, 1]
    y = [1, 0, 1, 1, 0, 0, 1, 0, 1]
    members, start = [], 0
    for size in sizes:
        members.append(list(range(start, start + size)))
        start += size
    N = len(y)
    combos = list(itertools.combinations(range(5), 3))
    samples = []
    cluster_of = {i: c for c, m in enumerate(members) for i in m}
    for chosen in combos:
        units = [i for c in chosen for i in members[c]]
        samples.append((1 / len(combos), units, np.full(len(units), 5 / 3)))

    def make_design(units, weights):
        return sd.SampleDesign.build(weights, clusters=[cluster_of[i] for i in units],
                                     fpc=np.full(len(units), 5))

    var, e_v, e_no_term, mean = _exact_check(
        y, samples, make_design, 0.5, 1.0, lambda d, s: sd.mean(d, s, population=N))
    assert mean == pytest.approx(sum(y) / N, abs=1e-12)
    assert e_v == pytest.approx(var, rel=1e-12)
    assert e_no_term < var


def test_brute_force_with_replacement_already_contains_randomization() -> None:
    # PPS with replacement, 2 draws from 4 units: Hansen-Hurwitz; a unit drawn twice answers twice
    y = [1, 0, 1, 0]
    p = [0.1, 0.2, 0.3, 0.4]
    samples = []
    for draws in itertools.product(range(4), repeat=2):
        prob = p[draws[0]] * p[draws[1]]
        samples.append((prob, list(draws), np.array([1 / (2 * p[i]) for i in draws])))

    var, e_v, e_no_term, mean = _exact_check(
        y, samples, lambda units, weights: sd.SampleDesign.build(weights), 0.8, 0.7,
        lambda d, s: sd.total(d, s))
    assert mean == pytest.approx(sum(y), abs=1e-12)
    assert e_v == pytest.approx(var, rel=1e-12)
    assert e_no_term == e_v  # nothing is added without an fpc


# ------------------------------------------------------------------ RRTCS's variance, for show


def srswor(seed: int, n: int, N: int, p: float) -> tuple[Any, Any]:
    """n of N drawn without replacement, each report randomized with p00 = p11 = p: the
    de-biased reports (random bits as reports) and the sample design."""
    reports = np.random.default_rng(seed).integers(0, 2, n)
    return sd.debias_binary(reports, p, p), sd.SampleDesign.build(np.full(n, N / n),
                                                                  fpc=np.full(n, N))


def test_rrtcs_deville_equals_linearization_under_srswor() -> None:
    n, N = 60, 600
    r, design = srswor(6, n, N, 0.8)
    lin = sd.total(r, design)
    deville = sd.total(r, design, method="rrtcs-deville")
    assert deville.variance == pytest.approx(lin.variance, rel=1e-10)
    assert math.isinf(deville.df)
    # the known-N mean: the same over N^2
    mean = sd.mean(r, design, population=N, method="rrtcs-deville")
    assert mean.variance == pytest.approx(lin.variance / N ** 2, rel=1e-10)


def test_deville_formula_by_hand() -> None:
    y = np.array([1.0, 3.0, 2.0, 5.0])
    pik = np.array([0.2, 0.5, 0.4, 0.8])
    a = (1 - pik) / (1 - pik).sum()
    A = sum(a[i] * y[i] / pik[i] for i in range(4))
    expected = sum((1 - pik[i]) * (y[i] / pik[i] - A) ** 2 for i in range(4)) / (1 - (a ** 2).sum())
    assert sd.deville_variance(y, pik) == pytest.approx(expected, rel=1e-12)


def test_rrtcs_ignores_clusters() -> None:
    rng = np.random.default_rng(7)
    clusters = np.repeat(np.arange(20), 15)
    effect = np.repeat(rng.uniform(0, 1, 20), 15)
    truth = rng.uniform(size=300) < effect
    reports = np.where(rng.uniform(size=300) < 0.75, truth, rng.uniform(size=300) < 0.5)
    data = sd.debias_binary(reports.astype(int), 0.875, 0.875)
    design = sd.SampleDesign.build(np.full(300, 10.0), clusters=clusters)
    lin = sd.mean(data, design, population=3000)
    rrtcs = sd.mean(data, design, population=3000, method="rrtcs-deville")
    assert rrtcs.variance < 0.6 * lin.variance  # the intra-cluster correlation is lost
    assert lin.deff > 1.5


# --------------------------------------------------------------------------- bad designs


def test_bad_weights_and_fpc_name_the_row() -> None:
    with pytest.raises(sd.SampleDesignError) as error:
        sd.SampleDesign.build([1.0, 2.0, 0.0, 3.0])
    assert error.value.row == 2
    with pytest.raises(sd.SampleDesignError) as error:
        sd.SampleDesign.build([1.0, -2.0])
    assert error.value.row == 1
    with pytest.raises(sd.SampleDesignError, match="differs within stratum"):
        sd.SampleDesign.build([1.0] * 4, ["a", "a", "b", "b"], fpc=[10, 11, 10, 10])
    with pytest.raises(sd.SampleDesignError, match="more than the population"):
        sd.SampleDesign.build([1.0] * 4, ["a", "a", "a", "b"], fpc=[2, 2, 2, 1.0])


def test_lonely_psu_refused_or_collapsed() -> None:
    strata = ["a", "a", "b", "c", "c"]
    clusters = [1, 2, 1, 1, 2]
    with pytest.raises(sd.LonelyPSUError, match="stratum 'b' has a single cluster") as error:
        sd.SampleDesign.build([1.0] * 5, strata, clusters)
    assert error.value.row == 2
    design = sd.SampleDesign.build([1.0] * 5, strata, clusters, lonely="collapse")
    assert design.collapsed == [("b", "c")]
    assert design.n_strata == 2 and design.df == 5 - 2
    r = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    # collapsed b+c as one stratum with 3 PSUs: totals 1, 0, 1
    expected = _svytotal_variance({("a", "1"): 1.0, ("a", "2"): 0.0, ("bc", "b1"): 1.0,
                                   ("bc", "c1"): 0.0, ("bc", "c2"): 1.0}, {})
    assert sd.total(sd.Debiased(r, r * 0), design).variance == pytest.approx(expected)


def test_certainty_stratum_is_not_lonely_and_adds_no_sampling_variance() -> None:
    strata = ["take-all", "s", "s", "s"]
    design = sd.SampleDesign.build([1.0, 4.0, 4.0, 4.0], strata, fpc=[1.0, 12, 12, 12])
    r = np.array([1.5, 1.5, -0.5, 1.5])
    v = r * (r - 1)
    est = sd.total(sd.Debiased(r, v), design)
    sampling = (1 - 3 / 12) * 3 / 2 * float(np.sum((4 * r[1:] - np.mean(4 * r[1:])) ** 2))
    assert est.variance == pytest.approx(sampling + v[0] + sum(16 / 4 * v[1:]), rel=1e-12)


def test_domain_mean_uses_the_whole_design() -> None:
    strata, clusters, w, r = _clustered_sample(9)
    domain = np.arange(len(r)) % 3 != 0
    design = sd.SampleDesign.build(w, strata, clusters)
    est = sd.mean(sd.Debiased(r, r * 0), design, domain=domain)
    wd = np.where(domain, w, 0.0)
    m = np.sum(wd * r) / np.sum(wd)
    assert est.estimate == pytest.approx(m, rel=1e-12)
    u = np.where(domain, (r - m) / np.sum(wd), 0.0)
    expected = _svytotal_variance(_cluster_totals(strata, clusters, w * u), {})
    assert est.variance == pytest.approx(expected, rel=1e-10)


def test_srswor_has_design_effect_one_with_randomization_in_both() -> None:
    n, N = 80, 200
    data, design = srswor(12, n, N, 0.75)
    est = sd.mean(data, design)
    s2 = float(np.var(data.r, ddof=1))
    f = n / N
    expected = ((1 - f) * s2 + f * float(np.mean(data.v))) / n
    assert est.variance == pytest.approx(expected, rel=1e-12)
    assert est.deff == pytest.approx(1.0, rel=1e-12)
    assert est.n_eff == pytest.approx(n, rel=1e-12)


# ------------------------------------------------------------------------ raking


def _raking_sample(seed: int = 13):
    rng = np.random.default_rng(seed)
    n = 600
    strata = np.repeat(["a", "b", "c"], n // 3)
    clusters = np.tile(np.repeat(np.arange(20), 10), 3)
    w = rng.uniform(5, 20, n)
    sex = rng.choice(["f", "m"], n)
    age = rng.choice(["young", "mid", "old"], n, p=[0.5, 0.3, 0.2])
    reports = (rng.random(n) < np.where(age == "young", 0.5, 0.3)).astype(int)
    return strata, clusters, w, sex, age, sd.debias_binary(reports, 0.75, 0.75)


def test_post_stratification_matches_the_closed_form() -> None:
    strata, clusters, w, sex, age, data = _raking_sample()
    population = {"young": 3000.0, "mid": 4000.0, "old": 3000.0}
    design = sd.SampleDesign.build(w, strata, clusters).rake([("age", age, population)])
    # post-stratified weights: w * N_c / sum_c w
    for c, N_c in population.items():
        assert design.weights[age == c].sum() == pytest.approx(N_c, rel=1e-12)
        ratio = design.weights[age == c] / w[age == c]
        assert np.ptp(ratio) < 1e-9
    est = sd.total(data, design)
    r = data.r
    means = {c: np.sum(w[age == c] * r[age == c]) / np.sum(w[age == c]) for c in population}
    assert est.estimate == pytest.approx(sum(population[c] * means[c] for c in population),
                                         rel=1e-10)
    # svytotal on a post-stratified design: cluster totals of g w (r - post-stratum mean)
    resid = r - np.array([means[c] for c in age])
    expected = _svytotal_variance(
        _cluster_totals(strata, np.array([str(c) for c in clusters]), design.weights * resid), {})
    assert est.variance == pytest.approx(expected, rel=1e-8)
    assert design.describe()["raking"]["variables"] == ["age"]


def test_raking_two_margins_matches_regression_residuals() -> None:
    strata, clusters, w, sex, age, data = _raking_sample(14)
    ages = {"young": 5000.0, "mid": 3000.0, "old": 2000.0}
    sexes = {"f": 5200.0, "m": 4800.0}
    design = sd.SampleDesign.build(w, strata, clusters).rake(
        [("age", age, ages), ("sex", sex, sexes)])
    for labels, margins in ((age, ages), (sex, sexes)):
        for c, N_c in margins.items():
            assert design.weights[labels == c].sum() == pytest.approx(N_c, rel=1e-9)
    est = sd.mean(data, design)
    g = design.weights
    m = np.sum(g * data.r) / np.sum(g)
    # residuals of (r - m) / N on an intercept, age (2 dummies) and sex (1 dummy), weighted by g
    X = np.column_stack([np.ones(len(g)), age == "mid", age == "old", sex == "m"]).astype(float)
    y = (data.r - m) / np.sum(g)
    sw = np.sqrt(g)
    beta = np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)[0]
    e = y - X @ beta
    expected = _svytotal_variance(
        _cluster_totals(strata, np.array([str(c) for c in clusters]), g * e), {})
    assert est.variance == pytest.approx(expected, rel=1e-8)
    with pytest.raises(ValueError, match="not supported"):
        sd.mean(data, design, method="jackknife")


def test_raking_bad_margins() -> None:
    strata, clusters, w, sex, age, data = _raking_sample()
    design = sd.SampleDesign.build(w, strata, clusters)
    with pytest.raises(sd.SampleDesignError, match="'old' has no population margin"):
        design.rake([("age", age, {"young": 1.0, "mid": 1.0})])
    with pytest.raises(sd.SampleDesignError, match="no respondent in category 'other'"):
        design.rake([("age", age, {"young": 1.0, "mid": 1.0, "old": 1.0, "other": 2.0})])
    with pytest.raises(sd.SampleDesignError, match="different population sizes"):
        design.rake([("age", age, {"young": 1.0, "mid": 1.0, "old": 1.0}),
                     ("sex", sex, {"f": 1.0, "m": 1.0})])


# ------------------------------------------------------------------------- regression


def test_design_logit_matches_a_generic_optimiser_and_a_sandwich_written_out() -> None:
    from scipy import optimize

    rng = np.random.default_rng(21)
    n = 900
    strata = np.repeat(np.arange(3), n // 3)
    clusters = np.repeat(np.arange(45), n // 45)  # 15 per stratum, nested
    w = rng.uniform(1, 6, n) * (1 + strata)
    x = rng.normal(size=n) + np.repeat(rng.normal(size=45), n // 45)
    truth = rng.random(n) < 1 / (1 + np.exp(-(-0.8 + 0.9 * x)))
    p00, p11 = 0.8, 0.7
    y = np.where(truth, rng.random(n) < p11, rng.random(n) >= p00).astype(float)
    used = np.ones(n, dtype=bool)
    used[::17] = False  # rows the model leaves out (a missing covariate, say)
    X = np.column_stack([np.ones(n), x])[used]
    yy = y[used]
    design = sd.SampleDesign.build(w, strata, clusters)
    result = sd.design_logit(X, yy, p00, p11, ["(Intercept)", "x"], design, used)

    wu = w[used]

    def minus(beta: np.ndarray) -> float:
        lam = (1 - p00) + (p00 + p11 - 1) / (1 + np.exp(-(X @ beta)))
        return -float(np.sum(wu * (yy * np.log(lam) + (1 - yy) * np.log(1 - lam))))

    best = optimize.minimize(minus, np.zeros(2), method="BFGS", options={"gtol": 1e-9})
    assert result.beta == pytest.approx(best.x, abs=1e-5)

    # the sandwich by hand: numerical Hessian, per-row scores, ultimate-cluster meat
    def score(beta: np.ndarray) -> np.ndarray:
        eta = X @ beta
        s = 1 / (1 + np.exp(-eta))
        lam = (1 - p00) + (p00 + p11 - 1) * s
        return X * ((yy - lam) / (lam * (1 - lam)) * (p00 + p11 - 1) * s * (1 - s))[:, None]

    beta = result.beta
    h = 1e-6
    hessian = np.column_stack([
        (np.sum(wu[:, None] * score(beta + h * e), axis=0)
         - np.sum(wu[:, None] * score(beta - h * e), axis=0)) / (2 * h)
        for e in np.eye(2)])
    bread = np.linalg.inv(-hessian)
    u = wu[:, None] * score(beta)
    meat = np.zeros((2, 2))
    for stratum in range(3):
        totals = []
        for c in np.unique(clusters[strata == stratum]):
            in_c = (clusters == c)[used]
            totals.append(u[in_c].sum(axis=0))
        totals = np.array(totals)
        centred = totals - totals.mean(axis=0)
        meat += len(totals) / (len(totals) - 1) * centred.T @ centred
    expected = bread @ meat @ bread
    assert result.covariance == pytest.approx(expected, rel=1e-4)
    # the weights and clusters matter: the unweighted fit's information-based SEs differ
    from rrsite.estimate.regression.logistic import fit

    naive = fit(X, yy, p00, p11, ["(Intercept)", "x"])
    assert not np.allclose(result.se, naive.se, rtol=0.05)


@pytest.mark.parametrize("design,theta", TWO_GROUP, ids=lambda x: getattr(x, "model", ""))
def test_two_group_variance_is_the_moment_variance_under_srs(design: Design,
                                                             theta: list[float]) -> None:
    # unit weights, every row its own PSU: V = n / (n - 1) sum_g alpha_g^2 lambda_g (1 -
    # lambda_g) / n_g, the variance of const + alpha_1 lambda_1 + alpha_2 lambda_2 from the two
    # groups' binomial rates
    rng = np.random.default_rng(41)
    n = 1000
    groups = rng.integers(1, 3, n)
    th = np.array(theta)
    p_yes = np.array([float(design.report_probabilities(th, g)[1]) for g in (1, 2)])
    reports = (rng.random(n) < p_yes[groups - 1]).astype(int)
    est = sd.mean(sd.debias_two_group(design, reports, groups, np.ones(n)),
                  sd.SampleDesign.build(np.ones(n)))
    _, a1, a2 = sd.two_group_coefficients(design)
    expected = 0.0
    for g, alpha in ((1, a1), (2, a2)):
        lam = reports[groups == g].mean()
        expected += alpha ** 2 * lam * (1 - lam) / np.sum(groups == g)
    assert est.variance == pytest.approx(expected * n / (n - 1), rel=1e-10)
    assert abs(est.estimate - th[0]) < 4 * est.se
