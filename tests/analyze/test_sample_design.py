"""`rrsite analyze --weights --strata --cluster --fpc`: design-based estimates of an export.

Estimates are checked against closed forms computed here from the raw rows (weighted report
rates mapped through each design, and R survey's svymean / svytotal linearization written out);
bad design values must name file:line and exit with code 2.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from rrsite.analyze import analyze
from rrsite.analyze.sample_design import SampleOptions
from rrsite.cli import main

from .helpers import with_design_cells, write_table
from .test_rrreg_designs import TRUTH, simulate

N = 3000


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """A simulated export with a design cell per row: 3 strata, 8 clusters each, unequal weights."""
    root = tmp_path_factory.mktemp("sample")
    survey = simulate(root, 5, "plain.csv", respondents=N)
    header, rows, stratum, cluster, weight = with_design_cells(
        root, seed=3, clusters=8, spread=(5, 15), psus="40")
    # the same cells in a separate file, joined by token; the export in a new order
    token = header.index("respondent")
    write_table(root / "cells.csv", ["respondent", "stratum", "psu", "w", "psus"],
           [[r[token], f"h{s}", f"c{c}", f"{w}", "40"]
            for r, s, c, w in zip(rows, stratum, cluster, weight, strict=True)][::-1])
    records = [dict(zip(header, r, strict=True)) for r in rows]
    return survey, root, records, stratum, cluster, weight


def _svymean(value, w, stratum, cluster, fraction=0.0):
    """Hajek mean and its linearization variance (R survey's svymean), written out."""
    m = np.sum(w * value) / np.sum(w)
    u = w * (value - m) / np.sum(w)
    variance = 0.0
    for h in np.unique(stratum):
        totals = [u[(stratum == h) & (cluster == c)].sum()
                  for c in np.unique(cluster[stratum == h])]
        n_h = len(totals)
        variance += (1 - fraction) * n_h / (n_h - 1) * np.sum((np.array(totals)
                                                                - np.mean(totals)) ** 2)
    return m, variance


def test_crosswise_and_kuk_match_weighted_closed_forms(sample):
    survey, root, records, stratum, cluster, w = sample
    result = analyze([root / "design.csv"], survey=survey, progress=False,
                     sample=SampleOptions(weights="w", strata="stratum", cluster="psu"))

    def closed_form(qid: str, report: str, low: float, high: float) -> dict:
        """The weighted mean and variance of r = (``report`` - low) / (high - low) over the
        rows that answered ``qid``, against the analyzer's design-based figures."""
        answered = np.array([r[qid] != "" for r in records])
        said = np.array([r[qid] == report for r in records], dtype=float)
        m, v = _svymean(((said - low) / (high - low))[answered], w[answered],
                        stratum[answered], cluster[answered])
        got = result.question(qid).design_based["values"]["yes"]
        assert got["estimate"] == pytest.approx(m, rel=1e-10)
        assert got["variance"] == pytest.approx(v, rel=1e-8)
        return got  # type: ignore[no-any-return]

    # crosswise, p = 1/4: P(same) = p pi + (1 - p)(1 - pi) -> r = (same - (1 - p)) / (p - (1 - p))
    assert closed_form("cross", "same", 0.75, 0.25)["df"] == 24 - 3
    # kuk with one card: red = 1 -> r = (red - p0) / (p1 - p0)
    closed_form("kuk1", "1", 0.2, 0.7)
    for qid, truth in TRUTH.items():
        figures = result.question(qid).design_based["values"]["yes"]
        assert abs(figures["estimate"] - truth) < 4 * figures["se"], qid


def test_two_group_design_uses_weighted_group_rates(sample):
    survey, root, records, stratum, cluster, w = sample
    result = analyze([root / "design.csv"], survey=survey, progress=False,
                     sample=SampleOptions(weights="w", strata="stratum", cluster="psu"))
    # unrelated-unknown, p = (0.3, 0.8): lambda_g = p_g pi + (1 - p_g) q
    rates = []
    for g in ("1", "2"):
        rows = np.array([r["uqt.group"] == g for r in records])
        yes = np.array([r["uqt"] == "yes" for r in records], dtype=float)
        rates.append(np.sum(w[rows] * yes[rows]) / np.sum(w[rows]))
    pi, _ = np.linalg.solve([[0.3, 0.7], [0.8, 0.2]], rates)
    got = result.question("uqt").design_based["values"]["yes"]
    assert got["estimate"] == pytest.approx(pi, rel=1e-10)


def test_unit_weights_reduce_to_the_simple_random_sample(sample):
    survey, root, records, *_ = sample
    rows = [[*r.values(), "1"] for r in records]
    write_table(root / "unit.csv", [*records[0].keys(), "one"], rows)
    result = analyze([root / "unit.csv"], survey=survey, progress=False,
                     sample=SampleOptions(weights="one"))
    question = result.question("mang")
    n = question.estimate.n
    figures = question.design_based["values"]["yes"]
    assert figures["estimate"] == pytest.approx(question.estimate.unbiased[0], rel=1e-10)
    # mangat p = 0.6: P(yes | carrier) = 1, P(yes | not) = 0.4, d = 0.6. With unit weights and
    # no strata, sum (r - mean)^2 = n lambda (1 - lambda) / d^2, so V = lambda (1 - lambda) /
    # (d^2 (n - 1)), the simple-random-sample variance up to n / (n - 1)
    yes = np.mean([r["mang"] == "yes" for r in records if r["mang"]])
    assert figures["variance"] == pytest.approx(yes * (1 - yes) / (0.36 * (n - 1)), rel=1e-10)
    assert figures["se"] == pytest.approx(question.estimate.se[0], rel=1e-3)
    assert figures["deff"] == pytest.approx(1.0, rel=1e-10)


def test_design_file_joined_by_token_gives_the_same(sample):
    survey, root, *_ = sample
    options = {"weights": "w", "strata": "stratum", "cluster": "psu", "fpc": "psus"}
    inline = analyze([root / "design.csv"], survey=survey, progress=False,
                     sample=SampleOptions(**options))
    joined = analyze([root / "plain.csv"], survey=survey, progress=False,
                     sample=SampleOptions(**options, design_file=str(root / "cells.csv")))
    for qid in TRUTH:
        a = inline.question(qid).design_based["values"]["yes"]
        b = joined.question(qid).design_based["values"]["yes"]
        assert a["estimate"] == pytest.approx(b["estimate"], rel=1e-12)
        assert a["variance"] == pytest.approx(b["variance"], rel=1e-12)
        assert a["randomization_added"] > 0


def test_cli_json_and_reports(sample, capsys):
    survey, root, *_ = sample
    args = ["analyze", str(root / "design.csv"), "--survey", str(survey), "--weights", "w",
            "--strata", "stratum", "--cluster", "psu", "--fpc", "psus", "--population", "90000"]
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    info = data["sample_design"]
    assert (info["strata"], info["clusters"], info["df"]) == (3, 24, 21)
    assert info["weights_column"] == "w" and info["fpc"] is True
    figures = data["questions"][0]["design_based"]["values"]["yes"]
    for key in ("estimate", "se", "ci", "df", "deff", "n_eff", "srs_se", "total",
                "mean_known_n", "randomization_added", "variance_method"):
        assert key in figures
    assert figures["mean_known_n"]["estimate"] == pytest.approx(
        figures["total"]["estimate"] / 90000, rel=1e-12)
    assert figures["n_eff"] == pytest.approx(figures["n"] / figures["deff"], rel=1e-12)
    for form, marker in (("table", "Design-based estimates"), ("markdown", "## Design-based"),
                         ("html", "<h2>Design-based estimates</h2>")):
        assert main([*args, "--format", form]) == 0
        out = capsys.readouterr().out
        assert marker in out and "3 strata (stratum)" in out and "24 clusters (psu)" in out


def test_jackknife_and_rrtcs_by_name(sample, capsys):
    survey, root, *_ = sample
    base = ["analyze", str(root / "design.csv"), "--survey", str(survey), "--weights", "w",
            "--strata", "stratum", "--cluster", "psu", "--format", "json"]
    out = {}
    for method in ("linearization", "jackknife", "rrtcs-deville"):
        assert main([*base, "--variance", method]) == 0
        data = json.loads(capsys.readouterr().out)
        out[method] = data["questions"][0]["design_based"]["values"]["yes"]
        assert data["sample_design"]["variance_method"] == method
    assert out["jackknife"]["variance"] == pytest.approx(out["linearization"]["variance"],
                                                         rel=0.05)
    assert out["rrtcs-deville"]["df"] is None  # normal quantile, as RRTCS


# ------------------------------------------------------------------------------ bad input


def _bad(tmp_path, sample, column_values, capsys, extra=()):
    survey, root, records, *_ = sample
    rows = [[*r.values(), *column_values(i)] for i, r in enumerate(records[:40])]
    write_table(tmp_path / "bad.csv", [*records[0].keys(), "w", "stratum", "psu", "pi"], rows)
    code = main(["analyze", str(tmp_path / "bad.csv"), "--survey", str(survey), *extra])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("value,message", [("", "no weight"), ("0", "must be > 0"),
                                           ("-2", "must be > 0"), ("abc", "is not a number")])
def test_bad_weight_names_file_and_line(tmp_path, sample, capsys, value, message):
    code, err = _bad(tmp_path, sample,
                     lambda i: [value if i in (6, 9) else "2", f"h{i % 2}", f"c{i % 4}", "0.5"],
                     capsys, ["--weights", "w", "--strata", "stratum", "--cluster", "psu"])
    assert code == 2
    assert "2 rows with a bad weight" in err
    assert "bad.csv:8: " in err and "bad.csv:11: " in err and message in err


@pytest.mark.parametrize("value", ["0", "1.5", "-0.1"])
def test_inclusion_probability_outside_0_1(tmp_path, sample, capsys, value):
    code, err = _bad(tmp_path, sample,
                     lambda i: ["1", "h", f"c{i % 4}", value if i == 3 else "0.5"], capsys,
                     ["--inclusion", "pi", "--cluster", "psu"])
    assert code == 2
    assert "bad.csv:5: inclusion probability" in err and "must be in (0, 1]" in err


def test_lonely_cluster_refused_then_collapsed(tmp_path, sample, capsys):
    def cells(i):  # stratum h1 has only cluster c0
        return ["1", "h0" if i < 30 else "h1", f"c{i % 3}" if i < 30 else "c0", "0.5"]

    options = ["--weights", "w", "--strata", "stratum", "--cluster", "psu"]
    code, err = _bad(tmp_path, sample, cells, capsys, options)
    assert code == 2
    assert "bad.csv:32: stratum 'h1' has a single cluster" in err
    code, err = _bad(tmp_path, sample, cells, capsys, [*options, "--lonely-psu", "collapse"])
    assert code == 0


def test_missing_design_column_and_unknown_token(sample, tmp_path, capsys):
    survey, root, records, *_ = sample
    code = main(["analyze", str(root / "plain.csv"), "--survey", str(survey), "--weights", "w"])
    assert code == 2
    assert "no column 'w'" in capsys.readouterr().err
    (tmp_path / "cells.csv").write_text("respondent,w\nnot-a-token-of-the-export-xx,2\n",
                                        encoding="utf-8")
    code = main(["analyze", str(root / "plain.csv"), "--survey", str(survey), "--weights", "w",
                 "--design", str(tmp_path / "cells.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{N:,} rows have no design cell" in err and "plain.csv:2: respondent" in err


def test_design_options_need_weights(sample, capsys):
    survey, root, *_ = sample
    assert main(["analyze", str(root / "design.csv"), "--survey", str(survey),
                 "--strata", "stratum"]) == 2
    assert "--weights" in capsys.readouterr().err


def test_no_design_options_no_design_keys(sample, capsys):
    survey, root, *_ = sample
    assert main(["analyze", str(root / "design.csv"), "--survey", str(survey),
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "sample_design" not in data and "design_based" not in data["questions"][0]
    assert not math.isnan(data["questions"][0]["estimate"])


# ------------------------------------------------------------------- simulate --frame


FRAME = "docs/data/school-frame.csv"


def from_frame(tmp_path: Path, clusters: int, seed: int) -> tuple[Path, Path, Path]:
    """`rrsite simulate` of honor-code.md from the school frame: ``clusters`` schools drawn per
    region. The repository's root, the survey, and the export written."""
    root = Path(__file__).resolve().parents[2]
    survey = root / "surveys" / "honor-code.md"
    out = tmp_path / "f.csv"
    assert main(["simulate", str(survey), "--frame", str(root / FRAME), "--strata", "region",
                 "--cluster", "school", "--sample-clusters", str(clusters), "--frame-truth",
                 "violated=p_violated", "--seed", str(seed), "-o", str(out)]) == 0
    return root, survey, out


def test_simulate_from_a_frame_draws_clusters_per_stratum(tmp_path, capsys):
    root, survey, out = from_frame(tmp_path, clusters=3, seed=4)
    with open(root / FRAME, newline="", encoding="utf-8") as handle:
        frame = list(csv.DictReader(handle))
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    schools = {r["school"] for r in rows}
    for region in {r["region"] for r in frame}:
        in_frame = {r["school"] for r in frame if r["region"] == region}
        drawn = {s for s in schools if s in in_frame}
        assert len(drawn) == 3  # three whole schools per region
        for school in drawn:
            size = sum(r["school"] == school for r in frame)
            members = [r for r in rows if r["school"] == school]
            assert len(members) == size
            assert {float(r["weight"]) for r in members} == {len(in_frame) / 3}
            assert {float(r["fpc"]) for r in members} == {len(in_frame)}
    assert "p_violated" not in rows[0]
    capsys.readouterr()
    assert main(["analyze", str(out), "--survey", str(survey), "--weights", "weight",
                 "--strata", "region", "--cluster", "school", "--fpc", "fpc",
                 "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)["sample_design"]
    assert (info["strata"], info["clusters"], info["df"]) == (4, 12, 8)
    assert info["weights"]["sum"] == pytest.approx(len(frame), rel=0.3)


def test_simulate_frame_bad_options(tmp_path, capsys):
    root = Path(__file__).resolve().parents[2]
    survey = str(root / "surveys" / "honor-code.md")
    frame = str(root / FRAME)
    out = str(tmp_path / "f.csv")
    assert main(["simulate", survey, "--frame", frame, "--cluster", "nope", "-o", out]) == 2
    assert "--cluster 'nope': no such column" in capsys.readouterr().err
    assert main(["simulate", survey, "--frame", frame, "--respondents", "5", "-o", out]) == 2
    assert main(["simulate", survey, "--strata", "region", "--respondents", "5",
                 "-o", out]) == 2
    assert "need --frame" in capsys.readouterr().err
    assert main(["simulate", survey, "--frame", frame, "--sample-clusters", "1", "-o", out]) == 2


# ------------------------------------------------------------------------------- raking


def test_rake_to_margins_of_a_direct_question(sample, tmp_path, capsys):
    survey, root, records, stratum, cluster, w = sample
    (tmp_path / "club.csv").write_text("club,count\nred,30000\nblue,60000\n", encoding="utf-8")
    base = ["analyze", str(root / "design.csv"), "--survey", str(survey), "--weights", "w",
            "--strata", "stratum", "--cluster", "psu", "--format", "json"]
    assert main([*base, "--rake", f"club={tmp_path / 'club.csv'}"]) == 0
    data = json.loads(capsys.readouterr().out)
    info = data["sample_design"]
    assert info["weights"]["sum"] == pytest.approx(90000, rel=1e-9)
    assert info["raking"]["variables"] == ["club"]
    assert info["raking"]["weights_before"]["sum"] == pytest.approx(float(np.sum(w)), rel=1e-9)
    # post-stratified estimate: sum_c N_c * (weighted mean of r within c) / N
    same = np.array([r["cross"] == "same" for r in records], dtype=float)
    answered = np.array([r["cross"] != "" for r in records])
    club = np.array([r["club"] for r in records])
    r = (same - 0.75) / (0.5 - 1)
    # within the answered rows the raked weights are w * N_c / (sum of w over club c, all rows)
    g = w * np.where(club == "red", 30000 / w[club == "red"].sum(),
                     60000 / w[club == "blue"].sum())
    expected = np.sum((g * r)[answered]) / np.sum(g[answered])
    got = next(q for q in data["questions"] if q["id"] == "cross")
    assert got["design_based"]["values"]["yes"]["estimate"] == pytest.approx(expected, rel=1e-9)
    # shares need --population; a value without a margin names its row
    (tmp_path / "share.csv").write_text("club,share\nred,0.4\nblue,0.6\n", encoding="utf-8")
    assert main([*base, "--rake", f"club={tmp_path / 'share.csv'}"]) == 2
    assert "--population" in capsys.readouterr().err
    (tmp_path / "red.csv").write_text("club,count\nred,30000\n", encoding="utf-8")
    assert main([*base, "--rake", f"club={tmp_path / 'red.csv'}"]) == 2
    err = capsys.readouterr().err
    assert "design.csv:" in err and "'blue' has no population margin" in err
    (tmp_path / "bad.csv").write_text("club,count\nred,30000\nblue,lots\n", encoding="utf-8")
    assert main([*base, "--rake", f"club={tmp_path / 'bad.csv'}"]) == 2
    assert "bad.csv:3: 'lots' is not a count" in capsys.readouterr().err


# ------------------------------------------------------------------------- --model


def test_model_with_weights_is_the_weighted_pseudo_likelihood(tmp_path, capsys):
    from scipy import optimize

    root, survey, out = from_frame(tmp_path, clusters=5, seed=8)
    capsys.readouterr()
    assert main(["analyze", str(out), "--survey", str(survey), "--weights", "weight",
                 "--strata", "region", "--cluster", "school", "--model", "violated ~ courses",
                 "--format", "json"]) == 0
    model = json.loads(capsys.readouterr().out)["models"][0]
    assert model["sample_design"]["clusters"] == 20
    assert model["covariance_method"].startswith("sandwich")
    assert model["terms"] == [] and model["model_test"] is None
    with open(out, newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["violated"] and r["courses"]]
    X = np.array([[1.0, float(r["courses"])] for r in rows])
    y = np.array([r["violated"] == "yes" for r in rows], dtype=float)
    w = np.array([float(r["weight"]) for r in rows])

    def minus(beta):
        lam = 0.25 + 0.5 / (1 + np.exp(-(X @ beta)))
        return -float(np.sum(w * (y * np.log(lam) + (1 - y) * np.log(1 - lam))))

    best = optimize.minimize(minus, np.zeros(2), method="Nelder-Mead",
                             options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 20000})
    got = [c["estimate"] for c in model["coefficients"]]
    assert got == pytest.approx(best.x.tolist(), abs=1e-4)
    assert main(["analyze", str(out), "--survey", str(survey), "--weights", "weight",
                 "--model", "violated ~ courses"]) == 0
    assert "sandwich standard errors" in capsys.readouterr().out


def test_by_gives_domain_estimates_over_the_whole_design(sample, capsys):
    survey, root, records, stratum, cluster, w = sample
    assert main(["analyze", str(root / "design.csv"), "--survey", str(survey), "--weights", "w",
                 "--strata", "stratum", "--cluster", "psu", "--by", "club",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cross = next(q for q in data["questions"] if q["id"] == "cross")
    by = cross["design_based"]["by"]
    assert list(by) == ["red", "blue"]  # the question's order
    same = np.array([r["cross"] == "same" for r in records], dtype=float)
    r = (same - 0.75) / (0.5 - 1)
    for name in ("red", "blue"):
        rows = np.array([rec["club"] == name and rec["cross"] != "" for rec in records])
        m, v = _svymean(r[rows], w[rows], stratum[rows], cluster[rows])
        got = by[name]["values"]["yes"]
        assert got["estimate"] == pytest.approx(m, rel=1e-10)
        assert by[name]["n"] == int(rows.sum())
        # a domain's variance uses every cluster of the design (zeros outside the domain),
        # not only the clusters of the domain's rows: the formula of svymean(subset(...))
        u = np.where(rows, w * (r - m) / np.sum(w[rows]), 0.0)
        expected = 0.0
        for h in np.unique(stratum):
            t = np.array([u[(stratum == h) & (cluster == c)].sum()
                          for c in np.unique(cluster[stratum == h])])
            expected += len(t) / (len(t) - 1) * np.sum((t - t.mean()) ** 2)
        assert got["variance"] == pytest.approx(expected, rel=1e-8)


def test_categorical_k_rr_question_every_category(tmp_path):
    from rrsite.core import design_from_spec

    from .helpers import HEADER, KRR3, manifest, row, write_csv, write_manifest

    rng = np.random.default_rng(31)
    majors = ["arts", "science", "law"]
    records = []
    for i in range(240):
        extra = {"w": f"{rng.uniform(1, 4):.4f}", "h": f"h{i % 2}", "c": f"c{i % 12}"}
        records.append(row(i, major=majors[int(rng.integers(0, 3))], **extra))
    path = write_csv(tmp_path / "e.csv", records, [*HEADER, "w", "h", "c"])
    result = analyze([path], manifests=[write_manifest(tmp_path / "m.json", manifest())],
                     progress=False, sample=SampleOptions(weights="w", strata="h", cluster="c"))
    values = result.question("major").design_based["values"]
    P = np.asarray(design_from_spec(KRR3).matrix, dtype=float)
    Q = np.linalg.inv(P)
    z = np.array([majors.index(r["major"]) for r in records])
    w = np.array([float(r["w"]) for r in records])
    for j, label in enumerate(majors):
        expected = np.sum(w * Q[z, j]) / np.sum(w)
        assert values[label]["estimate"] == pytest.approx(expected, rel=1e-10)
    assert sum(values[m]["estimate"] for m in majors) == pytest.approx(1.0, abs=1e-12)
