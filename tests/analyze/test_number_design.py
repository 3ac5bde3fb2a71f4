"""Design-based estimates of randomized number questions (`rrsite analyze --weights --strata
--cluster --fpc`).

The expected figures are computed here from the export's raw reports: each respondent's number is
de-biased by the design's own formula written out by hand (additive: z - 0; mixture with p = 1/2
and a uniform 0..30 mask: (z - 15 / 2) / (1 / 2)), its randomization variance too, and the Hajek
mean with R survey's stratified, clustered linearization variance is written out with numpy.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from rrsite.analyze import analyze
from rrsite.analyze.sample_design import SampleOptions
from rrsite.cli import main

from .helpers import read_table, with_design_cells, write_table

ROOT = Path(__file__).resolve().parents[2]
SURVEY = ROOT / "surveys" / "hidden-numbers.md"
N = 1500


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """hidden-numbers answers with a design cell per row: 3 strata, 6 clusters each."""
    root = tmp_path_factory.mktemp("numdesign")
    assert main(["simulate", str(SURVEY), "--respondents", str(N), "--seed", "11",
                 "-o", str(root / "plain.csv")]) == 0
    header, rows, stratum, cluster, weight = with_design_cells(
        root, seed=7, clusters=6, spread=(2, 8), psus="24")
    records = [dict(zip(header, r, strict=True)) for r in rows]
    days = np.array([float(r["days"]) for r in records])
    income = np.array([float(r["undeclared"]) for r in records])
    return root, {"days": days, "undeclared": income}, stratum, cluster, weight


def _linearized(r, v, w, stratum, cluster, fraction):
    """Hajek mean; sum_h (1 - f_h) n_h / (n_h - 1) sum_c (t_hc - mean t_h)^2 + sum f_h w^2 v."""
    W = w.sum()
    m = np.sum(w * r) / W
    u = w * (r - m) / W
    variance = 0.0
    for h in np.unique(stratum):
        t = np.array([u[(stratum == h) & (cluster == c)].sum()
                      for c in np.unique(cluster[stratum == h])])
        n_h = len(t)
        f = fraction[h]
        variance += (1 - f) * n_h / (n_h - 1) * np.sum((t - t.mean()) ** 2)
        inside = stratum == h
        variance += f * np.sum(w[inside] ** 2 * v[inside]) / W ** 2
    return m, variance


def _days_by_hand(z):
    """Mixture p = 1/2, mask uniform on 0..30 (mean 15, variance (31^2 - 1) / 12 = 80).

    E[z | y] = y / 2 + 15 / 2, so r = 2 z - 15; Var(r | y) = (y - 15)^2 + 160 and
    E[(r - 15)^2 | y] = 2 (y - 15)^2 + 160, so ((r - 15)^2 + 160) / 2 is unbiased for it.
    """
    r = 2 * z - 15
    return r, ((r - 15) ** 2 + 160) / 2


def test_mean_and_se_without_fpc_match_the_linearization(sample):
    root, reports, stratum, cluster, w = sample
    result = analyze([root / "design.csv"], survey=SURVEY, progress=False,
                     sample=SampleOptions(weights="w", strata="stratum", cluster="psu"))
    numbers = {n.id: n.design_based for n in result.numbers}
    no_fpc = np.zeros(3)
    for qid, (r, v) in {"days": _days_by_hand(reports["days"]),
                        "undeclared": (reports["undeclared"],
                                       np.full(N, 2000.0 ** 2))}.items():
        based = numbers[qid]
        assert based is not None and based["n"] == N
        figures = based["values"]["mean"]
        m, variance = _linearized(r, v, w, stratum, cluster, no_fpc)
        assert figures["estimate"] == pytest.approx(m, rel=1e-10)
        assert figures["variance"] == pytest.approx(variance, rel=1e-9)
        assert figures["randomization_added"] == 0
        assert figures["df"] == 18 - 3
        q = stats.t.ppf(0.975, 15)
        assert figures["ci"] == pytest.approx([m - q * variance ** 0.5, m + q * variance ** 0.5])
        # the HT total and the simple-random-sample comparison
        assert figures["total"]["estimate"] == pytest.approx(np.sum(w * r), rel=1e-10)
        s2 = N / (N - 1) * np.sum(w * (r - m) ** 2) / w.sum()
        assert figures["srs_se"] == pytest.approx((s2 / N) ** 0.5, rel=1e-9)
        assert figures["deff"] == pytest.approx(variance / (s2 / N), rel=1e-8)
        assert figures["n_eff"] == pytest.approx(N / figures["deff"], rel=1e-10)
    # the design-based mean of the days is not the simple-random-sample mean (weights differ)
    assert numbers["days"]["values"]["mean"]["estimate"] != pytest.approx(
        result.numbers[1].estimate.mean if result.numbers[1].id == "days"
        else result.numbers[0].estimate.mean, rel=1e-6)


def test_fpc_adds_the_randomization_term_back(sample):
    root, reports, stratum, cluster, w = sample
    result = analyze([root / "design.csv"], survey=SURVEY, progress=False, population=50000,
                     sample=SampleOptions(weights="w", strata="stratum", cluster="psu",
                                          fpc="psus", population=50000))
    based = next(n.design_based for n in result.numbers if n.id == "days")
    assert based is not None
    figures = based["values"]["mean"]
    r, v = _days_by_hand(reports["days"])
    fraction = np.array([len(np.unique(cluster[stratum == h])) / 24 for h in range(3)])
    assert np.all(fraction > 0.2)
    m, variance = _linearized(r, v, w, stratum, cluster, fraction)
    added = sum(fraction[h] * np.sum(w[stratum == h] ** 2 * v[stratum == h])
                for h in range(3)) / w.sum() ** 2
    assert added > 0.05 * variance  # the term matters at this sampling fraction
    assert figures["estimate"] == pytest.approx(m, rel=1e-10)
    assert figures["variance"] == pytest.approx(variance, rel=1e-9)
    assert figures["randomization_added"] == pytest.approx(added, rel=1e-9)
    # known-N mean: sum w r / N, linearized without centring
    known = figures["mean_known_n"]
    assert known["estimate"] == pytest.approx(np.sum(w * r) / 50000, rel=1e-10)


def test_jackknife_is_near_the_linearization(sample):
    root, *_ = sample
    out = {}
    for method in ("linearization", "jackknife"):
        result = analyze([root / "design.csv"], survey=SURVEY, progress=False,
                         sample=SampleOptions(weights="w", strata="stratum", cluster="psu",
                                              variance=method))
        out[method] = {n.id: n.design_based["values"]["mean"] for n in result.numbers
                       if n.design_based}
    for qid in ("days", "undeclared"):
        assert out["jackknife"][qid]["variance_method"] == "jackknife"
        assert out["jackknife"][qid]["estimate"] == out["linearization"][qid]["estimate"]
        # a Hajek mean's jackknife and linearization agree to O(1/n_h) relative
        assert out["jackknife"][qid]["se"] == pytest.approx(out["linearization"][qid]["se"],
                                                             rel=0.15)


DESIGNS = """---
id: number-designs-sample
title: Numbers under a design
language: en
privacy:
  budget: 10
---
## Drinks?

```question
id: drinks
type: number
min: 0
max: 40
randomize: duchi
epsilon: 1
```

## Hours?

```question
id: hours
type: number
min: 0
max: 100
randomize: mixture-unknown
p: [0.3, 0.8]
innocuous: How many hours did you sleep last night?
accept_no_epsilon: true
```
"""


def test_designs_without_per_respondent_debiasing_say_why(tmp_path, capsys):
    survey = tmp_path / "s.md"
    survey.write_text(DESIGNS, encoding="utf-8")
    assert main(["simulate", str(survey), "--respondents", "400", "--seed", "2",
                 "-o", str(tmp_path / "plain.csv")]) == 0
    header, rows = read_table(tmp_path / "plain.csv")
    write_table(tmp_path / "d.csv", [*header, "stratum", "psu", "w", "psus"],
           [[*r, f"h{i % 2}", f"c{i % 5}", "3", "10"] for i, r in enumerate(rows)])
    base = ["analyze", str(tmp_path / "d.csv"), "--survey", str(survey), "--weights", "w",
            "--strata", "stratum", "--cluster", "psu"]
    capsys.readouterr()
    assert main([*base, "--fpc", "psus", "--format", "json"]) == 0
    numbers = {n["id"]: n for n in json.loads(capsys.readouterr().out)["numbers"]}
    assert numbers["hours"]["design_based"]["values"] == {}
    assert "two groups" in numbers["hours"]["design_based"]["not_estimated"]
    assert numbers["drinks"]["design_based"]["values"] == {}
    assert "--fpc" in numbers["drinks"]["design_based"]["not_estimated"]
    # without an fpc Duchi's variance needs no per-respondent randomization variance
    assert main([*base, "--format", "json"]) == 0
    numbers = {n["id"]: n for n in json.loads(capsys.readouterr().out)["numbers"]}
    drinks = numbers["drinks"]["design_based"]["values"]["mean"]
    assert drinks["randomization_added"] == 0 and np.isfinite(drinks["se"])
    assert "not_estimated" in numbers["hours"]["design_based"]
    for form in ("table", "markdown", "html"):
        assert main([*base, "--fpc", "psus", "--format", form]) == 0
        text = capsys.readouterr().out
        assert "not estimated under the design" in text
        assert "no respondent" in text or "respondent's report alone" in text


def test_simulate_frame_end_to_end(tmp_path, capsys):
    """`rrsite simulate --frame` of hidden-numbers, then `rrsite analyze --weights --strata
    --cluster`: the days' design-based mean and SE recomputed from the export by hand."""
    frame = (ROOT / "docs" / "data" / "school-frame.csv").read_text(encoding="utf-8")
    # the survey asks `region`: the frame's stratum column needs another name
    (tmp_path / "frame.csv").write_text(frame.replace("region,", "area,", 1), encoding="utf-8")
    out = tmp_path / "sample.csv"
    assert main(["simulate", str(SURVEY), "--frame", str(tmp_path / "frame.csv"),
                 "--strata", "area", "--cluster", "school", "--sample-clusters", "4",
                 "--seed", "3", "-o", str(out)]) == 0
    header, rows = read_table(out)
    records = [dict(zip(header, r, strict=True)) for r in rows]
    base = ["analyze", str(out), "--survey", str(SURVEY), "--weights", "weight",
            "--strata", "area", "--cluster", "school"]
    capsys.readouterr()
    assert main([*base, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sample_design"]["clusters"] == 16
    days = next(n for n in report["numbers"] if n["id"] == "days")["design_based"]
    r, v = _days_by_hand(np.array([float(x["days"]) for x in records]))
    w = np.array([float(x["weight"]) for x in records])
    strata = np.unique([x["area"] for x in records], return_inverse=True)[1]
    clusters = np.unique([x["school"] for x in records], return_inverse=True)[1]
    m, variance = _linearized(r, v, w, strata, clusters, np.zeros(4))
    assert days["n"] == len(records)
    assert days["values"]["mean"]["estimate"] == pytest.approx(m, rel=1e-10)
    assert days["values"]["mean"]["se"] == pytest.approx(variance ** 0.5, rel=1e-9)
    assert days["values"]["mean"]["df"] == 16 - 4
    # the reports round the mean to two significant digits of its se
    places = 1 - math.floor(math.log10(variance ** 0.5))
    shown = f"{round(m, places):,.{max(places, 0)}f}"
    for form in ("table", "markdown", "html"):
        assert main([*base, "--format", form]) == 0
        text = capsys.readouterr().out
        assert "Design-based estimates" in text
        row = next(line for line in text.splitlines() if "days" in line and "mean" in line
                   and shown in line) if form != "html" else text
        assert shown in row
