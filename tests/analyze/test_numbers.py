"""`rrsite analyze` with randomized number questions: means, totals, subgroups, pooled versions,
impossible reports rejected with their row, reports in every format, --counts refused."""

from __future__ import annotations

import csv
import json
import math
import random
import secrets
import statistics
from pathlib import Path

import numpy as np
import pytest

from rrsite.analyze import analyze
from rrsite.analyze.api import analyze_counts
from rrsite.cli import main
from rrsite.core import number_design_from_spec
from rrsite.exports.readers import ExportError
from rrsite.report.analysis import render
from rrsite.survey import load_survey

SURVEY = Path(__file__).resolve().parents[2] / "surveys" / "hidden-numbers.md"


def _export(path: Path, manifest: dict, n: int, seed: int, bad: bool = True) -> dict:
    """Rows randomized with rrsite.core; returns the true numbers and reports by question."""
    questions = {q["id"]: q for q in manifest["questions"]}
    income = number_design_from_spec(questions["undeclared"]["design"])
    days = number_design_from_spec(questions["days"]["design"])
    rng = random.Random(seed)
    kept: dict = {"undeclared": [], "days": [], "region": []}
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["survey", "version", "respondent", "submitted_at", "region",
                         "undeclared", "days"])
        for _ in range(n):
            region = rng.choice(["North", "South"])
            y = min(rng.lognormvariate(7, 1), 100000) if rng.random() < 0.4 else 0.0
            d = rng.randint(0, 30) if rng.random() < 0.3 else 0
            z_income = round(income.randomize(y, rng).report, 2)
            z_days = int(days.randomize(d, rng).report)
            kept["undeclared"].append(z_income)
            kept["days"].append(z_days)
            kept["region"].append(region)
            writer.writerow(["hidden-numbers", manifest["version"], secrets.token_urlsafe(16),
                             "2026-01-01T00:00:00Z", region, z_income, z_days])
        if bad:  # a mixture report that no coin can give, and a non-number
            for row in (["North", 10, 12.5], ["South", "ten", 3]):
                writer.writerow(["hidden-numbers", manifest["version"],
                                 secrets.token_urlsafe(16), "2026-01-01T00:00:00Z", *row])
    return kept


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("numbers")
    manifest = load_survey(SURVEY).manifest()
    export = folder / "export.csv"
    kept = _export(export, manifest, 1500, 1)
    return export, kept


def test_means_totals_and_rejections(data) -> None:
    export, kept = data
    analysis = analyze([export], survey=SURVEY, population=20_000, progress=False)
    assert analysis.rejected.total == 2
    rows = analysis.rejected.to_dict()["invalid-value"]["examples"]
    assert [r["row"] for r in rows] == [1502, 1503]
    assert "impossible report under design mixture: 12.5" in rows[0]["message"]
    assert "'ten' is not a number" in rows[1]["message"]
    by_id = {n.id: n.to_dict() for n in analysis.numbers}
    # independent: additive normal mean 0 -> the plain mean; mixture p = 1/2, mask mean 15
    income = kept["undeclared"]
    assert by_id["undeclared"]["estimate"] == pytest.approx(statistics.fmean(income), abs=1e-9)
    assert by_id["undeclared"]["se"] == pytest.approx(
        statistics.stdev(income) / math.sqrt(len(income)), rel=1e-9)
    days = kept["days"]
    assert by_id["days"]["estimate"] == pytest.approx((statistics.fmean(days) - 0.5 * 15) / 0.5)
    assert by_id["days"]["se"] == pytest.approx(
        statistics.stdev(days) / (math.sqrt(len(days)) * 0.5), rel=1e-9)
    assert by_id["days"]["total"]["estimate"] == pytest.approx(20_000 * by_id["days"]["estimate"])
    assert by_id["days"]["epsilon"] == pytest.approx(math.log(32))
    assert by_id["undeclared"]["epsilon"] is None
    ids = [q["id"] for q in analysis.to_dict()["privacy"]["questions"]]
    assert ids == ["undeclared", "days"]


def test_subgroups(data) -> None:
    export, kept = data
    analysis = analyze([export], survey=SURVEY, by="region", progress=False)
    result = next(n for n in analysis.numbers if n.id == "undeclared")
    for region in ("North", "South"):
        mine = [z for z, r in zip(kept["undeclared"], kept["region"], strict=True) if r == region]
        assert result.groups[region].n == len(mine)
        assert result.groups[region].mean == pytest.approx(statistics.fmean(mine), abs=1e-9)


def test_versions_with_different_designs_are_pooled(tmp_path: Path) -> None:
    text = SURVEY.read_text(encoding="utf-8")
    other = tmp_path / "hidden-numbers.md"
    other.write_text(text.replace("p: 1/2", "p: 3/4").replace("budget: 3.5", "budget: 5"),
                     encoding="utf-8")
    first, second = load_survey(SURVEY).manifest(), load_survey(other).manifest()
    assert first["version"] != second["version"]
    a = _export(tmp_path / "a.csv", first, 400, 2, bad=False)
    b = _export(tmp_path / "b.csv", second, 600, 3, bad=False)
    analysis = analyze([tmp_path / "a.csv", tmp_path / "b.csv"], survey=SURVEY,
                       manifests=[second], progress=False)
    days = next(n for n in analysis.numbers if n.id == "days")
    mean_a = (np.mean(a["days"]) - 0.5 * 15) / 0.5
    mean_b = (np.mean(b["days"]) - 0.25 * 15) / 0.75
    assert days.estimate is not None and days.estimate.n == 1000
    assert days.estimate.mean == pytest.approx((400 * mean_a + 600 * mean_b) / 1000)
    assert days.to_dict()["design"]["name"] == "pooled"


@pytest.mark.parametrize("form", ["table", "json", "markdown", "html"])
def test_every_format_shows_the_numbers(data, form: str) -> None:
    export, _ = data
    analysis = analyze([export], survey=SURVEY, progress=False)
    text = render(analysis, form)
    if form == "json":
        assert [n["id"] for n in json.loads(text)["numbers"]] == ["undeclared", "days"]
    else:
        assert "undeclared" in text and "days" in text
        assert "mean" in text.lower()
    if form == "html":
        assert "<svg" in text and "distribution of the true numbers" in text


def test_counts_of_a_numbers_reports_give_its_rows_estimate(data, tmp_path: Path) -> None:
    """--counts reads a randomized number's reports as one row per distinct report."""
    export, kept = data
    version = load_survey(SURVEY).manifest()["version"]
    with open(export, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    counts = tmp_path / "counts.csv"
    with open(counts, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "version", "group", "report", "subgroup", "count"])
        for qid in ("undeclared", "days"):
            reports = [float(r[qid]) for r in rows[:1500]]  # the 1,500 accepted rows
            for value in sorted(set(reports)):
                writer.writerow([qid, version, "", repr(value), "", reports.count(value)])
    from_counts = {n.id: n.to_dict() for n in analyze_counts(counts, survey=str(SURVEY)).numbers}
    from_rows = {n.id: n.to_dict() for n in analyze([export], survey=SURVEY).numbers}
    for qid in ("undeclared", "days"):
        assert from_counts[qid]["estimate"] == from_rows[qid]["estimate"]
        assert from_counts[qid]["se"] == from_rows[qid]["se"]
        assert from_counts[qid]["n"] == len(kept[qid])
    # an impossible report is a bad row, named with its line
    counts.write_text("question,version,group,report,subgroup,count\n"
                      f"days,{version},,12.5,,10\n", encoding="utf-8")
    with pytest.raises(ExportError) as caught:
        analyze_counts(counts, survey=str(SURVEY))
    assert f"{counts}:2: report '12.5' of 'days' is impossible under its design" in str(
        caught.value)
    assert main(["analyze", "--counts", str(counts), "--survey", str(SURVEY)]) == 2


def test_cli_population_flag(data, capsys) -> None:
    export, _ = data
    assert main(["analyze", str(export), "--survey", str(SURVEY), "--population", "1000",
                 "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["population"] == 1000
    assert all("total" in n for n in result["numbers"])
    assert main(["analyze", str(export), "--survey", str(SURVEY), "--population", "-5"]) == 2


def test_simulate_every_design_and_analyze_it(tmp_path: Path) -> None:
    """`rrsite simulate` reports every number design; the analysis finds the uniform truths'
    mean (the middle of each range) within 4.5 standard errors, and no row is rejected."""
    survey = SURVEY.parents[1] / "tests" / "browser" / "surveys" / "number-designs.md"
    export = tmp_path / "sim.csv"
    assert main(["simulate", str(survey), "--respondents", "6000", "--seed", "5",
                 "-o", str(export)]) == 0
    analysis = analyze([export], survey=survey, progress=False)
    assert analysis.rejected.total == 0
    manifest = load_survey(survey).manifest()
    ranges = {q["id"]: (q["min"], q["max"]) for q in manifest["questions"]}
    assert {n.id for n in analysis.numbers} == set(ranges)
    for result in analysis.numbers:
        low, high = ranges[result.id]
        assert result.estimate is not None and result.estimate.n == 6000
        assert abs(result.estimate.mean - (low + high) / 2) < 4.5 * result.estimate.se, result.id


@pytest.mark.parametrize(("epsilon", "best"), [(1.0, "duchi"), (2.0, "piecewise")])
def test_plan_compares_the_ldp_mechanisms(capsys, epsilon: float, best: str) -> None:
    """Worst-case noise variances from the papers' closed forms; the smallest one is named."""
    assert main(["plan", "--range", "0,30", "--integer", "--epsilon", str(epsilon),
                 "--margin", "1", "--sd", "5", "--compare", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = {row["design"]["name"]: row for row in result["designs"]}
    half = 15.0
    e, s = math.exp(epsilon), math.exp(epsilon / 2)
    worst = {"laplace": 2 * (30 / epsilon) ** 2,  # continuous Laplace; the grid adds < 0.1%
             "duchi": half ** 2 * ((e + 1) / (e - 1)) ** 2,
             "piecewise": half ** 2 * (1 / (s - 1) + (s + 3) / (3 * (s - 1) ** 2))}
    for name, value in worst.items():
        assert rows[name]["noise_variance_worst"] == pytest.approx(value, rel=1e-3)
        assert rows[name]["epsilon"] == pytest.approx(epsilon)
        z = 1.959963984540054
        assert rows[name]["respondents"] == math.ceil(z ** 2 * (25 + rows[name][
            "noise_variance_worst"]))
    assert rows["mixture"]["epsilon"] == pytest.approx(epsilon)
    assert result["smallest_variance"] == best
    assert main(["plan", "--range", "0,30", "--epsilon", "1", "--design", "mixture"]) == 2


def test_mixture_unknown_small_groups_over_heavy_tails_are_flagged() -> None:
    import numpy as np

    from rrsite.analyze.numbers import SMALL_GROUP, small_groups_caution
    from rrsite.core.numbers import MixtureUnknown
    from rrsite.estimate.numbers import combine, fit_part

    design = MixtureUnknown((0.3, 0.8), 0.5, 0, 100_000)
    rng = np.random.default_rng(12)

    def estimate(n: int, heavy: bool):
        groups = np.repeat([1, 2], n // 2)
        truth = rng.lognormal(8.0, 1.2, n) if heavy else rng.uniform(0, 10_000, n)
        keep = rng.random(n) < np.where(groups == 1, 0.3, 0.8)
        return combine([fit_part(design, np.where(keep, truth, rng.uniform(0, 1e4, n)),
                                 groups)])

    flagged = estimate(100, True)
    assert flagged.df < 30
    message = small_groups_caution(flagged)
    assert message is not None and "mixture-unknown group of 50" in message
    assert str(SMALL_GROUP) in message
    assert small_groups_caution(estimate(100, False)) is None  # light tails: df stays high
    assert small_groups_caution(estimate(2 * SMALL_GROUP, True)) is None
