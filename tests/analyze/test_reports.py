"""`rrsite analyze` end to end: the JSON key contract, every output format, --by, --map, Netlify
Forms exports, pooled versions, infinite epsilon, survey files."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from rrsite.cli import main
from rrsite.estimate.estimators import BinaryPart, pooled_mle

from .helpers import (
    SURVEY,
    VERSION,
    VERSION_2,
    manifest,
    question,
    row,
    token,
    write_csv,
    write_manifest,
)

REPO = Path(__file__).resolve().parents[2]
QUESTION_KEYS = {"id", "kind", "n", "counts", "estimate", "unbiased", "se", "ci", "ci_method",
                 "design", "epsilon", "delta"}


@pytest.fixture
def survey_json(tmp_path):
    return write_manifest(tmp_path / "survey.json", manifest())


@pytest.fixture
def export(tmp_path):
    rows = []
    for i in range(300):
        year = ["First", "Second", "Third or later"][i % 3]
        yes = (i % 7 < 3) if year == "First" else (i % 7 < 1)
        rows.append(row(i, violated="yes" if yes else "no",
                        major=["arts", "science", "law", "law"][i % 4], year=year))
    rows.append(row(5))  # one duplicate
    return write_csv(tmp_path / "export.csv", rows)


def run_json(capsys, *args):
    assert main(["analyze", *map(str, args), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_key_contract(capsys, export, survey_json):
    report = run_json(capsys, export, "--manifest", survey_json)
    assert {"survey", "versions", "rejected", "privacy", "questions"} <= set(report)
    assert report["survey"] == SURVEY
    assert report["versions"][0]["version"] == VERSION and report["versions"][0]["rows"] == 300
    assert report["rejected"]["duplicate-respondent"]["count"] == 1
    assert report["rejected"]["duplicate-respondent"]["examples"][0]["row"] == 302
    assert report["privacy"]["per_respondent"]["epsilon"] == pytest.approx(2 * np.log(3))
    binary, categorical = report["questions"]
    for entry in (binary, categorical):
        assert QUESTION_KEYS <= set(entry)
    assert binary["kind"] == "binary" and binary["id"] == "violated"
    assert isinstance(binary["estimate"], float) and isinstance(binary["se"], float)
    assert isinstance(binary["ci"], list) and len(binary["ci"]) == 2
    assert binary["ci_method"] == "exact"
    assert binary["counts"] == {"no": 300 - binary["counts"]["yes"],
                                "yes": binary["counts"]["yes"]}
    assert binary["design"]["name"] == "forced-response"
    assert binary["design"]["p00"] == 0.75 and binary["epsilon"] == pytest.approx(np.log(3))
    assert binary["delta"] == 0.0
    assert categorical["kind"] == "categorical"
    for key in ("estimate", "unbiased", "se", "ci"):
        assert set(categorical[key]) == {"arts", "science", "law"}, key
    assert all(len(v) == 2 for v in categorical["ci"].values())
    assert sum(categorical["estimate"].values()) == pytest.approx(1.0)
    n_yes, n = binary["counts"]["yes"], binary["n"]
    assert binary["unbiased"] == pytest.approx((n_yes / n - 0.25) / 0.5)


def test_by_question_matches_hand_counts(capsys, export, survey_json):
    report = run_json(capsys, export, "--manifest", survey_json, "--by", "year")
    violated = report["questions"][0]
    groups = violated["by"]["groups"]
    assert violated["by"]["question"] == "year"
    assert set(groups) == {"First", "Second", "Third or later"}
    assert sum(g["n"] for g in groups.values()) == violated["n"]
    for i, year in enumerate(["First", "Second", "Third or later"]):
        yes = sum(1 for j in range(300) if j % 3 == i
                  and ((j % 7 < 3) if year == "First" else (j % 7 < 1)))
        assert groups[year]["counts"]["yes"] == yes
        assert groups[year]["unbiased"] == pytest.approx((yes / 100 - 0.25) / 0.5)
    assert groups["First"]["estimate"] > groups["Second"]["estimate"]


def test_by_refuses_randomized_and_unknown_questions(capsys, export, survey_json):
    assert main(["analyze", str(export), "--manifest", str(survey_json), "--by", "violated"]) == 2
    assert "randomized" in capsys.readouterr().err
    assert main(["analyze", str(export), "--manifest", str(survey_json), "--by", "yeer"]) == 2
    assert "did you mean 'year'" in capsys.readouterr().err


def test_formats(capsys, tmp_path, export, survey_json):
    base = ["analyze", str(export), "--manifest", str(survey_json), "--by", "year"]
    assert main(base) == 0
    table = capsys.readouterr().out
    assert "violated" in table and "95% interval" in table and "Subgroups by year" in table
    assert "duplicate-respondent: 1 row" in table
    assert main([*base, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "| question | answer | n |" in markdown and "## Privacy" in markdown
    out = tmp_path / "report.html"
    assert main([*base, "--format", "html", "-o", str(out)]) == 0
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") >= 3
    assert "Reported vs de-biased" in html and "violated by year" in html
    # self-contained: no script, no stylesheet link, no external reference of any kind
    assert "<script" not in html and "<link" not in html
    assert not re.search(r"(src|href)\s*=", html)
    assert not re.findall(r"https?://(?!www\.w3\.org/2000/svg)", html)


def test_confidence_and_interval_options(capsys, export, survey_json):
    narrow = run_json(capsys, export, "--manifest", survey_json, "--confidence", "0.8")
    wide = run_json(capsys, export, "--manifest", survey_json, "--confidence", "0.99")
    width = [r["questions"][0]["ci"][1] - r["questions"][0]["ci"][0] for r in (narrow, wide)]
    assert width[0] < width[1]
    wald = run_json(capsys, export, "--manifest", survey_json, "--interval", "wald")
    assert wald["questions"][0]["ci_method"] == "wald"
    assert main(["analyze", str(export), "--manifest", str(survey_json),
                 "--confidence", "95"]) == 2
    assert "between 0 and 1" in capsys.readouterr().err


def test_column_mapping(capsys, tmp_path, survey_json):
    lines = ["When,Token,Q1,Q2,Year"]
    for i in range(50):
        lines.append(f"2026-11-22,{token(i)},{'yes' if i % 2 else 'no'},law,Second")
    plain = tmp_path / "sheet.csv"
    plain.write_text("\n".join(lines) + "\n")
    report = run_json(capsys, plain, "--manifest", survey_json, "--map", "Q1=violated",
                      "--map", "Q2=major", "--map", "Token=respondent", "--map", "When=-")
    assert report["questions"][0]["counts"] == {"no": 25, "yes": 25}
    assert report["questions"][1]["counts"]["law"] == 50
    assert report["files"][0]["format"] == "CSV"
    assert any("no survey column" in n for n in report["files"][0]["notes"])
    assert main(["analyze", str(plain), "--manifest", str(survey_json), "--map",
                 "Q1=violatd"]) == 2
    assert "did you mean 'violated'" in capsys.readouterr().err


def test_netlify_forms_export(capsys, tmp_path, survey_json):
    header = ("form_name,survey,version,respondent,answers[violated],answers[major],"
              "answers[year],created_at,ip,user_agent,referrer,id")
    lines = [header]
    for i in range(40):
        lines.append(f"{SURVEY},{SURVEY},{VERSION},{token(i)},{'yes' if i < 10 else 'no'},arts,"
                     f"First,2026-11-22T13:05:00.000Z,203.0.113.{i},Mozilla/5.0,"
                     f"https://example.org/{SURVEY}/,{i:024x}")
    export = tmp_path / "netlify.csv"
    export.write_text("\r\n".join(lines) + "\r\n")
    report = run_json(capsys, export, "--manifest", survey_json)
    assert report["files"][0]["format"] == "Netlify Forms CSV"
    assert report["questions"][0]["counts"] == {"no": 30, "yes": 10}
    assert report["rows"]["rejected"] == 0
    # the fields as the page posts them (plain question ids), column names as people write them
    lines = ["Survey,Version,Respondent,violated,major,year,Created At,IP,User Agent"]
    for i in range(12):
        lines.append(f"{SURVEY},{VERSION},{token(i)},{'yes' if i < 3 else 'no'},law,Second,"
                     f"2026-11-22 13:05,203.0.113.1,Mozilla")
    export = tmp_path / "netlify-plain.csv"
    export.write_text("\n".join(lines) + "\n")
    report = run_json(capsys, export, "--manifest", survey_json)
    assert report["files"][0]["format"] == "Netlify Forms CSV"
    assert report["questions"][0]["counts"] == {"no": 9, "yes": 3}
    assert "columns ignored: IP, User Agent" in report["files"][0]["notes"]


def test_versions_with_different_designs_are_pooled(capsys, tmp_path):
    v2_questions = [question("violated", "yes-no", design={"name": "forced-yes", "truth": 0.5})]
    first = write_manifest(tmp_path / "v1.json", manifest())
    second = write_manifest(tmp_path / "v2.json", manifest(VERSION_2, v2_questions))
    rows = [row(i, violated="yes" if i % 3 == 0 else "no") for i in range(90)]
    rows += [{"survey": SURVEY, "version": VERSION_2, "respondent": token(1000 + i),
              "submitted_at": "2026-11-23T10:00Z", "violated": "yes" if i % 2 else "no"}
             for i in range(60)]
    export = write_csv(tmp_path / "export.csv", rows)
    report = run_json(capsys, export, "--manifest", first, "--manifest", second)
    violated = report["questions"][0]
    assert violated["design"]["name"] == "pooled"
    assert [p["name"] for p in violated["design"]["parts"]] == ["forced-response", "forced-yes"]
    assert violated["ci_method"] == "profile-likelihood" and violated["pooled"]
    expected = pooled_mle([BinaryPart(30, 90, 0.75, 0.75), BinaryPart(30, 60, 0.5, 1.0)])
    assert violated["estimate"] == pytest.approx(expected)
    # the forced-yes version is not epsilon-DP: stated plainly, epsilon null
    assert violated["epsilon"] is None and violated["delta"] == 0.5
    versions = {v["version"]: v for v in report["privacy"]["by_version"]}
    assert versions[VERSION_2]["epsilon_infinite"] is True
    assert "not differentially private" in versions[VERSION_2]["statement"]
    assert report["privacy"]["per_respondent"]["epsilon"] is None
    # the same design in two versions adds up (one likelihood): not "pooled"
    third = write_manifest(tmp_path / "v3.json", manifest("cc" * 8))
    rows += [row(2000 + i, version="cc" * 8) for i in range(10)]
    export = write_csv(tmp_path / "export.csv", rows)
    report = run_json(capsys, export, "--manifest", first, "--manifest", second,
                      "--manifest", third)
    parts = report["questions"][0]["design"]["parts"]
    assert len(parts) == 2 and parts[0]["versions"] == [VERSION, "cc" * 8]
    assert parts[0]["n"] == 100


def test_infinite_epsilon_in_every_format(capsys, tmp_path):
    data = manifest(questions=[question("violated", "yes-no",
                                        design={"name": "forced-yes", "truth": 0.5})])
    path = write_manifest(tmp_path / "survey.json", data)
    export = write_csv(tmp_path / "export.csv",
                       [{"survey": SURVEY, "version": VERSION, "respondent": token(i),
                         "submitted_at": "", "violated": "yes"} for i in range(20)])
    assert main(["analyze", str(export), "--manifest", str(path)]) == 0
    table = capsys.readouterr().out
    assert "NOT differentially private for any epsilon" in table
    assert 'a "no" report only ever comes from a true "no"' in table
    assert main(["analyze", str(export), "--manifest", str(path), "--format", "markdown"]) == 0
    assert "no finite epsilon" in capsys.readouterr().out


def test_survey_file_through_the_survey_parser(capsys, tmp_path):
    survey = REPO / "surveys" / "honor-code.md"
    out = tmp_path / "sim.csv"
    assert main(["simulate", str(survey), "--respondents", "3000", "--truth", "violated=0.3",
                 "--seed", "4", "-o", str(out)]) == 0
    capsys.readouterr()
    report = run_json(capsys, out, "--survey", survey, "--by", "year")
    violated = report["questions"][0]
    assert report["survey"] == "honor-code" and violated["n"] == 3000
    assert violated["ci"][0] <= 0.3 <= violated["ci"][1]
    assert set(violated["by"]["groups"]) <= {"First", "Second", "Third", "Fourth or later",
                                             "(no answer)"}
