"""`rrsite analyze` on RRreg's designs: simulated exports with a known truth, checked against
closed forms computed here from the raw rows (never from the analyzer's output)."""

from __future__ import annotations

import base64
import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats

from rrsite.analyze import analyze
from rrsite.analyze.api import analyze_counts
from rrsite.cli import main
from rrsite.exports.catalog import manifest_from_survey_file
from rrsite.report.analysis import render
from tests.surveytext import KUK3, MOTHER, SLD_QUARTERS, question, survey_text

from .helpers import counts_refused

N = 40_000
HEAD = """\
---
id: rrreg-designs
title: RRreg's designs
language: en
privacy:
  budget: 20
---
"""
#: Designs the simulator covers with compliant respondents (no cheaters, t = 1).
SIMULATED = survey_text(
    "rrreg-designs",
    question("cross", "yes-no", randomize="crosswise", p="1/4", innocuous=MOTHER),
    question("tri", "yes-no", randomize="triangular", p=0.3, innocuous=MOTHER,
             accept_no_epsilon="true"),
    question("mang", "yes-no", randomize="mangat", p=0.6, accept_no_epsilon="true"),
    question("kuk1", "yes-no", randomize="kuk", red_yes=0.7, red_no=0.2), KUK3,
    question("uqt", "yes-no", randomize="unrelated-unknown", p="[0.3, 0.8]",
             innocuous="Were you born in spring?", innocuous_rate=0.4, probability=0.4),
    question("club", "choice", options="[red, blue]", required="true"),
    title="RRreg's designs")
TRUTH = {"cross": 0.2, "tri": 0.15, "mang": 0.3, "kuk1": 0.25, "kuk3": 0.35, "uqt": 0.3}
#: Designs with non-compliance parameters: rows written here with cheaters / dishonest carriers.
NONCOMPLIANT = survey_text(
    "rrreg-designs",
    question("cdm", "yes-no", randomize="cdm", p="[0.2, 0.6]", accept_no_epsilon="true"),
    question("sym", "yes-no", randomize="cdm-sym", yes="[0.2, 0.35]", no="[0.1, 0.3]"),
    SLD_QUARTERS, title="RRreg's designs")


def se_bound(result, qid, truth, k=4.0):
    question = result.question(qid)
    assert abs(question.estimate.estimate[0] - truth) < k * question.estimate.se[0], (
        qid, question.estimate.estimate[0], truth, question.estimate.se[0])


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def rate(rows, qid, report, group=None):
    chosen = [r[qid] for r in rows if r[qid] and (group is None or r[qid + ".group"] == group)]
    return sum(v == report for v in chosen) / len(chosen)


def simulate(root: Path, seed: int, *names: str, respondents: int = N) -> Path:
    """SIMULATED written to root/s.md and simulated (TRUTH's rates) into each file of ``names``
    with ``seed``: the survey file."""
    survey = root / "s.md"
    survey.write_text(SIMULATED, encoding="utf-8")
    truths = [arg for q, r in TRUTH.items() for arg in ("--truth", f"{q}={r}")]
    for name in names:
        assert main(["simulate", str(survey), "--respondents", str(respondents), *truths,
                     "--seed", str(seed), "-o", str(root / name)]) == 0
    return survey


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    root = tmp_path_factory.mktemp("rrreg")
    survey = simulate(root, 11, "out.csv", "out.jsonl")
    rows = read_rows(root / "out.csv")
    return survey, root, rows, analyze([root / "out.csv"], survey=survey, progress=False)


def test_every_row_accepted(simulated):
    _, _, rows, result = simulated
    assert result.rows_accepted == len(rows) == N
    assert result.rejected.total == 0


def test_crosswise_closed_form(simulated):
    _, _, rows, result = simulated
    lam, p = rate(rows, "cross", "same"), 0.25
    assert result.question("cross").estimate.estimate[0] == pytest.approx(
        (lam + p - 1) / (2 * p - 1), abs=1e-9)
    se_bound(result, "cross", TRUTH["cross"])
    assert result.question("cross").estimate.counts.keys() == {"different", "same"}


def test_triangular_closed_form(simulated):
    _, _, rows, result = simulated
    lam, p = rate(rows, "tri", "triangle"), 0.3
    assert result.question("tri").estimate.estimate[0] == pytest.approx(
        (lam - p) / (1 - p), abs=1e-9)
    se_bound(result, "tri", TRUTH["tri"])


def test_mangat_closed_form(simulated):
    _, _, rows, result = simulated
    lam, p = rate(rows, "mang", "yes"), 0.6  # P(yes) = pi + (1 - pi)(1 - p)
    assert result.question("mang").estimate.estimate[0] == pytest.approx(
        (lam - (1 - p)) / p, abs=1e-9)
    se_bound(result, "mang", TRUTH["mang"])


def test_kuk_one_card_closed_form(simulated):
    _, _, rows, result = simulated
    lam = rate(rows, "kuk1", "1")
    assert result.question("kuk1").estimate.estimate[0] == pytest.approx(
        (lam - 0.2) / (0.7 - 0.2), abs=1e-9)
    se_bound(result, "kuk1", TRUTH["kuk1"])


def test_kuk_three_cards_is_the_binomial_mixture_mle(simulated):
    _, _, rows, result = simulated
    counts = np.array([sum(r["kuk3"] == str(j) for r in rows) for j in range(4)])

    def minus_loglik(pi):
        red = np.array([stats.binom.pmf(range(4), 3, q) for q in (0.3, 0.7)])
        return -float(counts @ np.log((1 - pi) * red[0] + pi * red[1]))

    best = optimize.minimize_scalar(minus_loglik, bounds=(0, 1), method="bounded",
                                    options={"xatol": 1e-10})
    question = result.question("kuk3")
    assert question.estimate.estimate[0] == pytest.approx(best.x, abs=1e-6)
    se_bound(result, "kuk3", TRUTH["kuk3"])
    assert question.fit is not None and question.fit.gof is not None  # 3 reports, 1 parameter
    assert question.to_dict()["goodness_of_fit"]["df"] == 2


def test_unrelated_unknown_closed_form(simulated):
    _, _, rows, result = simulated
    lam1, lam2 = rate(rows, "uqt", "yes", "1"), rate(rows, "uqt", "yes", "2")
    p1, p2 = 0.3, 0.8  # lam_g = p_g pi + (1 - p_g) q
    pi = (lam1 * (1 - p2) - lam2 * (1 - p1)) / (p1 - p2)
    q = (p1 * lam2 - p2 * lam1) / (p1 - p2)
    question = result.question("uqt")
    assert question.estimate.estimate[0] == pytest.approx(pi, abs=1e-7)
    assert question.fit is not None
    assert question.fit.estimates["piUQ"] == pytest.approx(q, abs=1e-7)
    se_bound(result, "uqt", TRUTH["uqt"])
    parameters = question.to_dict()["parameters"]
    assert abs(parameters["piUQ"]["estimate"] - 0.4) < 4 * parameters["piUQ"]["se"]
    low, high = parameters["piUQ"]["ci"]
    assert low < parameters["piUQ"]["estimate"] < high


def test_jsonl_gives_the_same_estimates(simulated):
    survey, root, _, result = simulated
    other = analyze([root / "out.jsonl"], survey=survey, progress=False)
    assert other.rows_accepted == N
    for qid in TRUTH:
        assert other.question(qid).estimate.estimate[0] == pytest.approx(
            result.question(qid).estimate.estimate[0], abs=1e-12)


def test_json_keys(simulated):
    _, _, _, result = simulated
    out = json.loads(render(result, "json"))
    by_id = {q["id"]: q for q in out["questions"]}
    uqt = by_id["uqt"]
    for key in ("id", "kind", "n", "counts", "estimate", "unbiased", "se", "ci", "ci_method",
                "design", "epsilon", "delta"):
        assert key in uqt
    assert uqt["model"] == "UQTunknown"
    assert set(uqt["parameters"]) == {"pi", "piUQ"}
    assert set(uqt["parameters"]["pi"]) == {"estimate", "se", "ci", "ci_method", "meaning"}
    assert uqt["rrreg"]["estimator"] == "moment"
    assert set(uqt["group_counts"]) == {"1", "2"}
    assert sum(sum(g.values()) for g in uqt["group_counts"].values()) == N
    assert uqt["design"]["rrreg"] == {"model": "UQTunknown", "p": [0.3, 0.8]}
    assert uqt["design"]["groups"][0]["id"] == 1
    assert by_id["cross"]["reports"] == ["different", "same"]
    assert by_id["cross"]["design"]["counts"].keys() == {"different", "same"}
    assert "p00" not in by_id["cross"]["design"]
    assert by_id["kuk3"]["reports"] == ["0", "1", "2", "3"]


def test_table_markdown_html(simulated):
    _, _, _, result = simulated
    table = render(result, "table")
    assert "RRreg's models" in table and "piUQ" in table and "goodness of fit" in table
    markdown = render(result, "markdown")
    assert "### RRreg's models" in markdown and "| `uqt` | UQTunknown | pi |" in markdown
    page = render(result, "html")
    assert page.startswith("<!DOCTYPE html>") and "<h2>RRreg's models</h2>" in page
    assert "<svg" in page and "innocuous question" in page


def test_by_subgroup_closed_form(simulated):
    survey, root, rows, _ = simulated
    result = analyze([root / "out.csv"], survey=survey, by="club", progress=False)
    for club in ("red", "blue"):
        sub = [r for r in rows if r["club"] == club]
        lam = rate(sub, "cross", "same")
        assert result.question("cross").groups[club].estimate[0] == pytest.approx(
            (lam + 0.25 - 1) / (2 * 0.25 - 1), abs=1e-9)
        lam1, lam2 = rate(sub, "uqt", "yes", "1"), rate(sub, "uqt", "yes", "2")
        assert result.question("uqt").groups[club].estimate[0] == pytest.approx(
            (lam1 * 0.2 - lam2 * 0.7) / (0.3 - 0.8), abs=1e-7)
    groups = result.to_dict()["questions"][5]["by"]["groups"]
    assert set(groups["red"]["parameters"]) == {"pi", "piUQ"}


def test_counts_file_with_groups_matches_the_rows(simulated, tmp_path):
    survey, _, rows, result = simulated
    lines = ["question,version,group,report,count"]
    for qid in ("cross", "uqt"):
        tally: dict[tuple[str, str], int] = {}
        for r in rows:
            if r[qid]:
                key = (r.get(qid + ".group", ""), r[qid])
                tally[key] = tally.get(key, 0) + 1
        lines += [f"{qid},{rows[0]['version']},{g},{rep},{n}" for (g, rep), n in tally.items()]
    path = tmp_path / "counts.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counted = analyze_counts(path, survey=survey)
    for qid in ("cross", "uqt"):
        assert counted.question(qid).estimate.estimate[0] == pytest.approx(
            result.question(qid).estimate.estimate[0], abs=1e-12)
    assert counted.question("uqt").to_dict()["group_counts"] == \
        result.question("uqt").to_dict()["group_counts"]


def test_counts_file_rejects_bad_groups_and_reports(simulated, tmp_path):
    survey = simulated[0]
    path = tmp_path / "bad.csv"
    path.write_text("question,version,group,report,count\n"
                    "uqt,unrelated-unknown,,yes,10\n"
                    "uqt,unrelated-unknown,3,yes,10\n"
                    "cross,crosswise,,yes,10\n"
                    "cross,crosswise,2,same,10\n", encoding="utf-8")
    message = counts_refused(path, survey)
    assert f"{path}:2: group '': 'uqt' in this version is a two-group design" in message
    assert f"{path}:3: group '3'" in message
    assert f"{path}:4: report 'yes' is not a report of 'cross' (different, same)" in message
    assert f"{path}:5: group '2': 'cross' in this version is a one-group design" in message


# ------------------------------------------------------------------- rows with non-compliance


def tokens(rng, count):
    text = base64.urlsafe_b64encode(rng.bytes(18 * count)).decode("ascii")
    return [text[i:i + 22] for i in range(0, 24 * count, 24)]


@pytest.fixture(scope="module")
def noncompliant(tmp_path_factory):
    """An export written here: CDM with cheaters, CDM-sym with cheaters, SLD with t < 1."""
    root = tmp_path_factory.mktemp("cheat")
    survey = root / "s.md"
    survey.write_text(NONCOMPLIANT, encoding="utf-8")
    version = manifest_from_survey_file(survey)["version"]
    rng = np.random.default_rng(5)
    n = N
    group = {q: np.where(rng.random(n) < 0.5, 1, 2) for q in ("cdm", "sym", "sld")}
    u = rng.random((3, n))
    # CDM: honest carriers pi = 0.25, honest non-carriers beta = 0.6, cheaters gamma = 0.15
    state = np.where(u[0] < 0.25, 0, np.where(u[0] < 0.85, 1, 2))
    told_yes = rng.random(n) < np.where(group["cdm"] == 1, 0.2, 0.6)
    cdm = np.where(state == 0, "yes", np.where(state == 2, "no", np.where(told_yes, "yes", "no")))
    # CDM-sym: pi = 0.3, beta = 0.6, gamma = 0.1; told yes y_g, told no n_g, else the truth
    state = np.where(u[1] < 0.3, 0, np.where(u[1] < 0.9, 1, 2))
    g2 = group["sym"] == 2
    draw = rng.random(n)
    forced_yes = draw < np.where(g2, 0.35, 0.2)
    forced_no = ~forced_yes & (draw < np.where(g2, 0.65, 0.3))
    truthful = np.where(state == 0, "yes", "no")
    sym = np.where(state == 2, "no", np.where(forced_yes, "yes",
                                              np.where(forced_no, "no", truthful)))
    # SLD: pi = 0.35, carriers honest with t = 0.8; non-carriers say no with p_g
    carrier = u[2] < 0.35
    says_no = rng.random(n) < np.where(group["sld"] == 1, 0.25, 0.75)
    sld = np.where(carrier, np.where(rng.random(n) < 0.8, "yes", "no"),
                   np.where(says_no, "no", "yes"))
    path = root / "export.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["survey", "version", "respondent", "submitted_at", "cdm", "cdm.group",
                         "sym", "sym.group", "sld", "sld.group"])
        for i, token in enumerate(tokens(rng, n)):
            writer.writerow(["rrreg-designs", version, token, "2026-01-01T00:00Z",
                             cdm[i], group["cdm"][i], sym[i], group["sym"][i],
                             sld[i], group["sld"][i]])
    return survey, path, read_rows(path), analyze([path], survey=survey, progress=False)


def test_cdm_closed_form(noncompliant):
    _, _, rows, result = noncompliant
    lam1, lam2 = rate(rows, "cdm", "yes", "1"), rate(rows, "cdm", "yes", "2")
    beta = (lam1 - lam2) / (0.2 - 0.6)  # lam_g = pi + beta p_g
    pi = lam1 - beta * 0.2
    fit = result.question("cdm").fit
    assert fit is not None
    assert fit.estimates["pi"] == pytest.approx(pi, abs=1e-7)
    assert fit.estimates["beta"] == pytest.approx(beta, abs=1e-7)
    assert fit.estimates["gamma"] == pytest.approx(1 - pi - beta, abs=1e-7)
    se_bound(result, "cdm", 0.25)
    gamma = result.question("cdm").to_dict()["parameters"]["gamma"]
    assert abs(gamma["estimate"] - 0.15) < 4 * gamma["se"]


def test_cdm_sym_closed_form(noncompliant):
    _, _, rows, result = noncompliant
    lam = [rate(rows, "sym", "yes", g) for g in ("1", "2")]
    # lam_g = pi (1 - n_g) + beta y_g
    system = np.array([[1 - 0.1, 0.2], [1 - 0.3, 0.35]])
    pi, beta = np.linalg.solve(system, lam)
    fit = result.question("sym").fit
    assert fit is not None
    assert fit.estimates["pi"] == pytest.approx(pi, abs=1e-7)
    assert fit.estimates["beta"] == pytest.approx(beta, abs=1e-7)
    se_bound(result, "sym", 0.3)


def test_sld_closed_form(noncompliant):
    _, _, rows, result = noncompliant
    lam1, lam2 = rate(rows, "sld", "yes", "1"), rate(rows, "sld", "yes", "2")
    p1, p2 = 0.25, 0.75  # lam_g = pi t + (1 - pi)(1 - p_g)
    pi = 1 - (lam1 - lam2) / (p2 - p1)
    t = (lam1 - (1 - pi) * (1 - p1)) / pi
    fit = result.question("sld").fit
    assert fit is not None
    assert fit.estimates["pi"] == pytest.approx(pi, abs=1e-7)
    assert fit.estimates["t"] == pytest.approx(t, abs=1e-7)
    se_bound(result, "sld", 0.35)
    parameters = result.question("sld").to_dict()["parameters"]
    assert abs(parameters["t"]["estimate"] - 0.8) < 4 * parameters["t"]["se"]
    assert "t" in render(result, "table")


def test_bad_reports_and_groups_are_rejected_with_their_rows(noncompliant, tmp_path):
    survey, path, _, _ = noncompliant
    lines = path.read_text(encoding="utf-8").splitlines()
    header, good = lines[0], lines[1:6]
    fields = [line.split(",") for line in good]
    fields[0][4] = "maybe"  # row 2: not a report of cdm
    fields[1][5] = ""  # row 3: cdm answered without its group
    fields[2][7] = "3"  # row 4: group 3
    fields[3][8], fields[3][9] = "", "1"  # row 5: a group for an unanswered question
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([header, *(",".join(f) for f in fields)]) + "\n", encoding="utf-8")
    result = analyze([bad], survey=survey, progress=False)
    assert result.rows_accepted == 1
    rejected = result.rejected.to_dict()
    assert rejected["invalid-value"]["count"] == 4
    messages = {(e["row"], e["message"]) for e in rejected["invalid-value"]["examples"]}
    assert messages == {
        (2, "cdm: 'maybe' is not one of no, yes"),
        (3, "cdm.group: no group; the two-group design of 'cdm' needs the group (1 or 2) "
            "drawn with the answer"),
        (4, "sym.group: '3' is not 1 or 2"),
        (5, "sld.group: a group ('1') for a question not answered"),
    }
    assert all(e["file"] == str(bad) for e in rejected["invalid-value"]["examples"])
    assert result.question("cdm").estimate.n == 1


def test_a_missing_group_column_rejects_every_answered_row(noncompliant, tmp_path):
    survey, path, _, _ = noncompliant
    rows = read_rows(path)[:10]
    out = tmp_path / "nogroup.csv"
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["survey", "version", "respondent", "submitted_at", "sld"])
        for r in rows:
            writer.writerow([r["survey"], r["version"], r["respondent"], r["submitted_at"],
                             r["sld"]])
    result = analyze([out], survey=survey, progress=False)
    assert result.rows_accepted == 0
    assert result.rejected.to_dict()["invalid-value"]["count"] == 10


def test_crosswise_report_refused_outside_its_reports(simulated, tmp_path):
    survey, root, _, _ = simulated
    lines = (root / "out.csv").read_text(encoding="utf-8").splitlines()[:3]
    header = lines[0].split(",")
    row = lines[1].split(",")
    row[header.index("cross")] = "yes"
    bad = tmp_path / "x.csv"
    bad.write_text("\n".join([lines[0], ",".join(row), lines[2]]) + "\n", encoding="utf-8")
    result = analyze([bad], survey=survey, progress=False)
    (example,) = result.rejected.to_dict()["invalid-value"]["examples"]
    assert (example["row"], example["message"]) == (2, "cross: 'yes' is not one of different, "
                                                       "same")


# ------------------------------------------------------------------------ several versions


def two_versions(tmp_path, second_design: str):
    first = HEAD + """
## Q

```question
id: q
type: yes-no
randomize: crosswise
p: 0.25
innocuous: Born in spring?
```
"""
    survey_1 = tmp_path / "v1.md"
    survey_1.write_text(first, encoding="utf-8")
    survey_2 = tmp_path / "v2.md"
    crosswise = "randomize: crosswise\np: 0.25\ninnocuous: Born in spring?"
    survey_2.write_text(first.replace(crosswise, second_design), encoding="utf-8")
    return survey_1, survey_2


def simulated_versions(tmp_path: Path, second_design: str, respondents: int, seed: int
                       ) -> tuple[Path, Path, list[Path]]:
    """two_versions, each simulated (q's true rate 0.3) into a.csv and b.csv with seeds ``seed``
    and ``seed`` + 1: the two survey files and the two exports."""
    survey_1, survey_2 = two_versions(tmp_path, second_design)
    paths: list[Path] = []
    for name, survey in (("a.csv", survey_1), ("b.csv", survey_2)):
        assert main(["simulate", str(survey), "--respondents", str(respondents), "--truth",
                     "q=0.3", "--seed", str(len(paths) + seed), "-o", str(tmp_path / name)]) == 0
        paths.append(tmp_path / name)
    return survey_1, survey_2, paths


def test_versions_with_other_p_are_one_likelihood(tmp_path):
    survey_1, survey_2, paths = simulated_versions(
        tmp_path, "randomize: crosswise\np: 0.1\ninnocuous: Born in spring?", 6000, seed=1)
    result = analyze(paths, survey=[survey_1, survey_2], progress=False)
    same = [sum(r["q"] == "same" for r in read_rows(p)) for p in paths]

    def minus_loglik(pi):  # P(same) = pi p + (1 - pi)(1 - p), per version's p
        total = 0.0
        for k, p in zip(same, (0.25, 0.1), strict=True):
            lam = pi * p + (1 - pi) * (1 - p)
            total += k * math.log(lam) + (6000 - k) * math.log(1 - lam)
        return -total

    best = optimize.minimize_scalar(minus_loglik, bounds=(0, 1), method="bounded",
                                    options={"xatol": 1e-10})
    question = result.question("q")
    assert question.estimate.estimate[0] == pytest.approx(best.x, abs=1e-6)
    assert question.estimate.pooled and len(question.designs) == 2
    assert question.to_dict()["design"]["name"] == "pooled"
    assert result.rows_accepted == 12_000


def test_versions_that_cannot_be_pooled_are_reported_apart(tmp_path):
    survey_1, survey_2, paths = simulated_versions(
        tmp_path, "randomize: sld\np: [0.25, 0.75]\naccept_no_epsilon: true", 3000, seed=3)
    result = analyze(paths, survey=[survey_1, survey_2], progress=False)
    assert [q.id for q in result.questions] == ["q", "q [SLD]"]
    assert any("cannot be pooled" in note and "'q [SLD]'" in note for note in result.notes)
    assert result.question("q [SLD]").estimate.n == 3000
