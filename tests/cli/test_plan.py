"""`rrsite plan`: the JSON contract of DESIGN.md, figures from closed forms, bad arguments."""

import json
import math
import subprocess
import sys

import pytest

from rrsite.cli import main

Z95 = 1.959963984540054


def run_json(capsys, *args):
    assert main(["plan", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_pure_budget_json_contract(capsys):
    out = run_json(capsys, "--epsilon", str(math.log(3)))
    for key in ("design", "alternatives", "epsilon", "delta", "variance", "respondents"):
        assert key in out
    assert math.isclose(out["design"]["p00"], 0.75) and math.isclose(out["design"]["p11"], 0.75)
    assert out["alternatives"] == []
    assert math.isclose(out["epsilon"], math.log(3)) and out["delta"] == 0.0
    assert math.isclose(out["variance"], 1.0)  # lambda = 1/2: (1/4) / (1/2)^2
    assert out["respondents"] == math.ceil(Z95**2 * 1.0 / 0.05**2)


def test_approximate_budget_at_a_small_prior_picks_vertex_a(capsys):
    out = run_json(
        capsys, "--epsilon", "1", "--delta", "0.1", "--prior", "0.05", "--margin", "0.02"
    )
    assert out["design"] == {"p00": 1.0, "p11": 0.1}
    pi, delta = 0.05, 0.1
    variance = pi * (1 - pi * delta) / delta
    assert math.isclose(out["variance"], variance)
    assert out["respondents"] == math.ceil(Z95**2 * variance / 0.02**2)
    assert math.isclose(out["delta"], 0.1)


def test_ties_are_listed_as_alternatives(capsys):
    out = run_json(capsys, "--epsilon", "0.1", "--delta", "0.2", "--prior", "0.5")
    designs = [out["design"]] + [{"p00": a["p00"], "p11": a["p11"]} for a in out["alternatives"]]
    assert {(d["p00"], d["p11"]) for d in designs} == {(1.0, 0.2), (0.2, 1.0)}


def test_confidence_changes_the_sample_size(capsys):
    out = run_json(capsys, "--epsilon", "2", "--confidence", "0.99", "--margin", "0.03")
    z = 2.5758293035489
    e = math.exp(2)
    p = e / (1 + e)
    variance = p * (1 - p) / (2 * p - 1) ** 2 + 0.25
    assert out["respondents"] == math.ceil(z * z * variance / 0.03**2)


def test_named_design(capsys):
    out = run_json(
        capsys, "--design", "forced-response", "--truth", "0.5", "--yes", "0.25", "--no", "0.25"
    )
    assert math.isclose(out["epsilon"], math.log(3))
    assert out["design"]["p00"] == 0.75 and out["design"]["p11"] == 0.75
    warner = run_json(capsys, "--design", "warner", "--p", "0.8")
    assert math.isclose(warner["epsilon"], math.log(4))


def test_named_design_at_a_given_epsilon_reports_delta(capsys):
    out = run_json(capsys, "--design", "matrix", "--p00", "1", "--p11", "0.2", "--epsilon", "1")
    assert out["epsilon"] == 1.0 and math.isclose(out["delta"], 0.2)


def test_forced_yes_says_plainly_it_has_no_epsilon(capsys):
    out = run_json(capsys, "--design", "forced-yes")
    assert out["epsilon"] is None
    assert out["delta"] == 0.5
    assert "reveals" in out["not_private"][0]
    assert main(["plan", "--design", "forced-yes"]) == 0
    assert "NOT differentially private" in capsys.readouterr().out


def test_table_output(capsys):
    assert main(["plan", "--epsilon", "1"]) == 0
    text = capsys.readouterr().out
    assert "p00 = 0.731059" in text and "respondents" in text


def test_sensitivity_to_a_wrong_prior(capsys):
    out = run_json(capsys, "--epsilon", "1", "--delta", "0.05", "--prior", "0.02")
    rows = {row["true_rate"]: row for row in out["if_prior_wrong"]}
    # vertex A is chosen for the small prior: its variance grows fast if the rate is really 0.5
    assert math.isclose(rows[0.5]["variance"], 0.5 * (1 - 0.5 * 0.05) / 0.05)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--epsilon", "-1"], "epsilon must be positive"),
        (["--epsilon", "1", "--delta", "1.5"], "delta must be in [0, 1)"),
        (["--epsilon", "1", "--prior", "2"], "prior must be a probability"),
        (["--epsilon", "1", "--margin", "0"], "margin must be between 0 and 1"),
        (["--epsilon", "1", "--confidence", "1"], "confidence must be between 0 and 1"),
        ([], "give --epsilon"),
        (["--design", "warner", "--p", "0.4"], "p must be above 0.5"),
        (["--design", "coin"], "unknown design 'coin'"),
        (["--truth", "0.5"], "--truth needs --design"),
        (["--epsilon", "abc"], "must be a number such as 0.5 or 1/2 or ln(3), got 'abc'"),
        (["--epsilon", "ln(0)"], "ln needs a positive number"),
        (["--epsilon", "1", "--respondents", "0"], "--respondents must be at least 1"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(args, message):
    result = subprocess.run(
        [sys.executable, "-m", "rrsite", "plan", *args], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_epsilon_is_written_as_survey_files_write_it(capsys):
    """`--epsilon ln(3)` is ln 3, and the block to paste says `epsilon: ln(3)` as typed."""
    typed = run_json(capsys, "--epsilon", "ln(3)")
    number = run_json(capsys, "--epsilon", repr(math.log(3)))
    assert typed["epsilon"] == number["epsilon"] == math.log(3)
    assert typed["design"] == number["design"] and typed["respondents"] == number["respondents"]
    assert "epsilon: ln(3)\n" in typed["question_block"]
    assert run_json(capsys, "--epsilon", "1/2")["epsilon"] == 0.5
    assert main(["power", "--odds-ratio", "2", "--epsilon", "ln(3)", "--simulations", "20",
                 "--no-progress"]) == 0
    assert "epsilon 1.09861" in capsys.readouterr().out


def test_respondents_gives_the_margin_they_reach(capsys):
    """`--respondents N`: z sqrt(variance / N), for every kind of plan, beside the usual figures."""
    out = run_json(capsys, "--epsilon", "ln(3)", "--respondents", "400")
    assert out["respondents_given"] == 400
    assert out["margin_at_respondents"] == pytest.approx(Z95 * math.sqrt(1.0 / 400))  # var 1
    for row in out["if_prior_wrong"]:
        assert row["margin_at_respondents"] == pytest.approx(Z95 * math.sqrt(row["variance"] / 400))
    assert main(["plan", "--epsilon", "ln(3)", "--respondents", "400"]) == 0
    assert "margin        ±0.098 with 400 respondents at 95% confidence" in \
        capsys.readouterr().out
    # 1,537 respondents reach the margin of 0.05 that the plan says they need
    again = run_json(capsys, "--epsilon", "ln(3)", "--respondents", str(out["respondents"]))
    assert again["margin_at_respondents"] <= 0.05
    compared = run_json(capsys, "--compare", "--epsilon", "1", "--respondents", "900")
    for row in compared["designs"]:
        expected = None if row["variance"] is None else Z95 * math.sqrt(row["variance"] / 900)
        assert row["margin_at_respondents"] == pytest.approx(expected)
    crosswise = run_json(capsys, "--design", "crosswise", "--rrreg-p", "0.25", "--prior", "0.2",
                         "--respondents", "250")
    assert crosswise["margin_at_respondents"] == pytest.approx(
        Z95 * math.sqrt(crosswise["variance"] / 250), rel=1e-9)
    numbers = run_json(capsys, "--range", "0,30", "--integer", "--epsilon", "1", "--compare",
                       "--respondents", "400")
    for row in numbers["designs"]:
        assert row["margin_at_respondents"] == pytest.approx(
            Z95 * math.sqrt(row["variance_per_respondent"] / 400))
    assert main(["plan", "--range", "0,30", "--epsilon", "1", "--respondents", "400"]) == 0
    assert "margin at 400" in capsys.readouterr().out


# -- RRreg designs (rrsite.estimate.planning) -------------------------------------------------
def test_crosswise_plan_matches_warner_closed_form(capsys):
    out = run_json(capsys, "--design", "crosswise", "--rrreg-p", "0.25", "--prior", "0.2")
    lam = 0.2 * 0.25 + 0.8 * 0.75  # P("same"): crosswise p = 0.25 is Warner's matrix mirrored
    variance = lam * (1 - lam) / 0.5**2
    assert math.isclose(out["variance"], variance, rel_tol=1e-7)
    assert out["respondents"] == math.ceil(Z95**2 * variance / 0.05**2)
    assert math.isclose(out["epsilon"], math.log(3)) and out["delta"] == 0.0
    assert out["design"]["model"] == "Crosswise"


def test_one_sided_rrreg_design_says_not_private(capsys):
    out = run_json(capsys, "--design", "sld", "--rrreg-p", "0.3,0.7")
    assert out["epsilon"] is None and out["not_private"]
    assert math.isclose(out["delta"], 0.7)  # group 2: a "no" (prob 0.7) rules out a carrier
    assert out["groups"]


def test_compare_every_family_at_one_epsilon(capsys):
    out = run_json(capsys, "--compare", "--epsilon", "1", "--prior", "0.1")
    families = {row["family"]: row for row in out["designs"]}
    assert {"Warner", "Crosswise", "FR", "Kuk", "UQTunknown", "SLD", "CDM"} <= set(families)
    p = math.e / (1 + math.e)
    lam = 0.1 * p + 0.9 * (1 - p)
    assert math.isclose(families["Warner"]["variance"], lam * (1 - lam) / (2 * p - 1) ** 2,
                        rel_tol=1e-7)
    assert families["SLD"]["respondents"] is None and families["SLD"]["variance"] is None
    variances = [row["variance"] for row in out["designs"] if row["variance"] is not None]
    assert variances == sorted(variances)


def test_rrreg_design_bad_p_is_a_usage_error(capsys):
    assert main(["plan", "--design", "sld", "--rrreg-p", "0.3"]) == 2
    assert "SLD needs p of length 2" in capsys.readouterr().err
    assert main(["plan", "--compare"]) == 2


# ---- the block to paste ------------------------------------------------------------

PASTED = """\
---
id: pasted
title: Pasted from rrsite plan
consent: You agree.
privacy:
  budget: {budget}
submit:
  to: collector
---

## Have you ever done it?

{block}
"""


@pytest.mark.parametrize("args", [
    ["--epsilon", "1", "--margin", "0.05"],
    ["--epsilon", "1", "--delta", "0.1", "--prior", "0.05"],
    ["--epsilon", "0.5", "--prior", "0.2"],
    ["--epsilon", "2.3"],
    ["--epsilon", "ln(3)"],
    ["--epsilon", "ln(3)", "--respondents", "400"],
    ["--design", "warner", "--p", "0.731059"],
    ["--design", "forced-response", "--truth", "1/2", "--yes", "1/4", "--no", "1/4"],
    ["--design", "forced-response", "--truth", "0.5", "--yes", "0.25", "--no", "0.25"],
    ["--design", "matrix", "--p00", "0.8", "--p11", "0.7"],
    ["--design", "k-rr", "--k", "3", "--epsilon", "1.3"],
])
def test_the_printed_block_builds_under_the_printed_budget(capsys, tmp_path, args):
    from pathlib import Path

    from rrsite.survey import load_survey

    out = run_json(capsys, *args)
    block = out["question_block"]
    assert main(["plan", *args]) == 0
    table = capsys.readouterr().out
    assert "\n".join(f"    {line}" for line in block.splitlines()) in table  # the same block
    budget = f"{out['epsilon']:.6g}"  # as the table prints it
    assert f"it spends epsilon {budget}:" in table
    survey = tmp_path / "pasted.md"
    survey.write_text(PASTED.format(budget=budget, block=block), "utf-8")
    fixtures = Path(__file__).resolve().parents[1] / "site" / "fixtures"
    assert main(["build", str(survey), "-o", str(tmp_path / "dist"), "--no-compress",
                 "--templates", str(fixtures / "templates"),
                 "--pyodide", str(fixtures / "pyodide")]) == 0, capsys.readouterr().err
    question = load_survey(survey).questions[0]
    assert question.design is not None
    if "p00" in out["design"]:  # the design built is the design planned
        assert math.isclose(question.design.p00, out["design"]["p00"], rel_tol=1e-12)
        assert math.isclose(question.design.p11, out["design"]["p11"], rel_tol=1e-12)
    else:
        assert math.isclose(question.design.p, out["design"]["p"], rel_tol=1e-12)


def test_the_issue_example_builds_and_a_real_excess_still_fails(tmp_path):
    from rrsite.survey import SurveyErrors, load_survey

    block = "```question\nid: q\ntype: yes-no\nrandomize: warner\np: {p}\n```\n"
    survey = tmp_path / "s.md"
    # p = 0.731059 spends ln(0.731059 / 0.268941) = 1.0000021, which prints as 1
    spent = math.log(0.731059 / 0.268941)
    assert 1 < spent < 1.000003 and f"{spent:.6g}" == "1"
    survey.write_text(PASTED.format(budget="1", block=block.format(p="0.731059")), "utf-8")
    assert load_survey(survey).budget == 1
    # p = 0.7311 spends ln(0.7311 / 0.2689) = 1.00021: over, and said with the digits that show
    # it, in the total and in its parts
    survey.write_text(PASTED.format(budget="1", block=block.format(p="0.7311")), "utf-8")
    with pytest.raises(SurveyErrors) as caught:
        load_survey(survey)
    assert "spend epsilon 1.00021 (q 1.00021), more than privacy.budget 1" in str(caught.value)


def test_the_table_explains_its_words(capsys):
    assert main(["plan", "--epsilon", "1"]) == 0
    out = capsys.readouterr().out
    assert "(vertex S)" in out and "\n  vertex S      the symmetric design, p00 = p11" in out
    assert "vertex A" not in out
    assert "\n  p00, p11      the design: the chance that a true \"no\" is reported" in out
    assert "\n  variance      " in out and "\n  respondents   " in out
    assert main(["plan", "--epsilon", "1", "--delta", "0.1", "--prior", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "(vertex A)" in out and "\n  vertex A      p00 = 1" in out
    assert "\n  vertex S" not in out


def _interpreters() -> list[tuple[str, dict[str, str]]]:
    """The test's own Python, then every other Python of its minor version on this machine.

    Debian's /usr/bin/python3, whatever `python3` is first on PATH (pyenv's shim, say) and
    pyenv's own versions: each runs rrsite from this checkout with this venv's packages on
    PYTHONPATH (same minor version, so its compiled packages load).
    """
    import glob
    import os
    import shutil
    import sysconfig
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    paths = sysconfig.get_paths()
    shared = os.pathsep.join(dict.fromkeys([root, paths["purelib"], paths["platlib"]]))
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = ["/usr/bin/python3", *filter(None, [shutil.which("python3")]),
                  *sorted(glob.glob(f"{pyenv}/versions/*/bin/python3"))]
    found = [(sys.executable, dict(os.environ))]
    seen = {os.path.realpath(sys.executable)}
    for candidate in candidates:
        try:
            probe = subprocess.run([candidate, "-c", "import os, sys; print(os.path.realpath("
                                    "sys.executable)); print(sys.version_info[:2])"],
                                   capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = probe.stdout.splitlines()
        if probe.returncode or len(lines) != 2 or lines[0] in seen \
                or lines[1] != str(sys.version_info[:2]):
            continue
        seen.add(lines[0])
        env = {key: value for key, value in os.environ.items()
               if key not in ("PYTHONHOME", "VIRTUAL_ENV")}
        found.append((lines[0], {**env, "PYTHONPATH": shared}))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("args", [
    ["plan", "--epsilon", "1"],
    ["plan", "--compare", "--epsilon", "1"],
    ["plan", "--help"],
])
def test_a_closed_pipe_ends_quietly(args, unbuffered, tmp_path):
    """`rrsite plan ... | head` with the reader gone: 141 and no traceback, whatever Python runs.

    The pipe's reading end is closed before rrsite starts (no race with a fast child), with
    Python's output buffered and unbuffered (PYTHONUNBUFFERED), under every Python of this minor
    version on the machine (pyenv's 3.11.7 and Debian's 3.11.2 differ in argparse's handling of
    a failed write).
    """
    import os

    interpreters = _interpreters()
    for python, env in interpreters:
        env = {**env, "PYTHONUNBUFFERED": "1"} if unbuffered else \
            {key: value for key, value in env.items() if key != "PYTHONUNBUFFERED"}
        read, write = os.pipe()
        os.close(read)
        try:
            result = subprocess.run([python, "-m", "rrsite", *args], cwd=tmp_path, env=env,
                                    stdout=write, stderr=subprocess.PIPE, timeout=60)
        finally:
            os.close(write)
        assert result.returncode == 141, (python, result.stderr.decode())
        assert result.stderr == b"", python  # no traceback, no "Exception ignored" at exit
