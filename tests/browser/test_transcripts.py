"""Transcripts a respondent can check: each step says which outcomes decide what it did.

For every step rrsite/core returned (read inside the worker), the page's line must name the same
device and outcome, and state a rule (faces a to b of F, or numbers from lo up to hi) that
contains the outcome and whose size is the step's chance, so the respondent can verify it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from browserkit import Site, Watch, open_survey, survey_files
from playwright.sync_api import BrowserContext
from respondent import (
    answer_and_review,
    log_worker_results,
    plan_answers,
    transcript_steps,
    worker_results,
)

EXAMPLES = [f.name for f in survey_files() if f.parent.parent.name != "browser"]
NUMBER = r"(\d+(?:\.\d+)?)"


def chance_of(step: dict[str, Any]) -> float:
    return next(p for name, p in step["chances"] if name == step["action"])


def check_line(line: str, step: dict[str, Any]) -> None:
    if step["device"] == "draw":  # a number question's mask draw: the number shown
        assert re.search(r"\d", line.split(":", 1)[-1]), line
        return
    chance = chance_of(step)
    if step["device"] == "die":
        faces = step["faces"]
        assert re.search(rf"\b1 (to|al) {faces}: {step['outcome']}\b", line), line
        match = re.search(rf"caras? {NUMBER}(?: (?:to|a) {NUMBER})? (?:of|de) {faces}", line)
        match = match or re.search(rf"faces? {NUMBER}(?: to {NUMBER})? of {faces}", line)
        assert match, line
        low = int(match.group(1))
        high = int(match.group(2) or low)
        assert low <= int(step["outcome"]) <= high, line
        assert (high - low + 1) / faces == pytest.approx(chance, abs=1e-9), line
    elif step["device"] == "spinner":
        value = float(step["outcome"])
        line = line.replace(",", ".")  # the page writes 0,3036 in a language with a decimal comma
        assert step["outcome"] in line, line
        bounds = [float(x) for x in re.findall(r"\b[01]\.\d{4}\b", line) if x != step["outcome"]]
        assert len(bounds) >= 2, line
        low, high = bounds[-2], bounds[-1]
        assert low - 1e-4 <= value < high + 1e-4, line
        assert high - low == pytest.approx(chance, abs=2e-4), line
    else:
        assert step["device"] == "coin" and chance == pytest.approx(0.5)
        side = re.search(r": (\w+)", line)
        assert side and f"({side.group(1)} " in line, line  # the side shown decides, stated
        assert "50" in line, line
    assert "sided" not in line and "sides" not in line


#: The frequency oracles' design names (oracles.js words their draws).
ORACLES = {"oue", "sue", "olh", "subset", "hadamard"}


@pytest.mark.parametrize("source", EXAMPLES)
def test_every_step_states_its_rule(site: Site, context: BrowserContext, watch: Watch,
                                    source: str) -> None:
    survey = site.ids[source]
    manifest = site.manifest(survey)
    page = open_survey(context, site, survey)
    log_worker_results(page)
    checked = 0
    answer_and_review(page, manifest, plan_answers(manifest, 0))
    # a number's arithmetic line ("your answer 12 + drawn 3 = 15 is sent") is checked in
    # test_numbers.py; a draw it already shows has no line of its own,
    # nor has the rounding of an answer to the design's grid
    said = page.locator("#rr-transcript li.rr-arithmetic, #rr-transcript li.rr-rounding")
    lines = [line for line in transcript_steps(page) if line not in said.all_inner_texts()]
    questions = {q["id"]: q for q in manifest["questions"]}
    left = iter(lines)
    for result in worker_results(page)[0]["results"]:
        q = questions[result["id"]]
        design = (q.get("design") or {}).get("name")
        if q.get("memoize") or design in ORACLES:
            # oracles.js words a frequency oracle's draws: a panel question first says whether
            # its permanent report was drawn now, and unary encoding's box-by-box draws are
            # one line (how many draws, how many boxes came out ticked)
            boxes = q["type"] == "multi-choice" or design in ("oue", "sue")
            count = bool(q.get("memoize")) + (1 if boxes else len(result["steps"]))
            for _ in range(count):
                line = next(left)
                assert line.strip() and "{" not in line, line
            if boxes:
                assert f"{len(result['steps'])} draws" in line, line
            checked += 1
            continue
        for step in result["steps"]:
            if step["device"] == "draw" and result.get("operation") in ("add", "multiply", "noise"):
                continue
            check_line(next(left), step)
            checked += 1
    assert next(left, None) is None, "a line of the review for no draw"
    assert checked >= 1
    watch.assert_clean()
