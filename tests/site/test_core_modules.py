"""What a page's randomizer imports of rrsite/core: the page's ``core_modules`` is what
``respond`` imports for its survey's questions, found here by answering each question in a fresh
interpreter and reading ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rrsite.core.respond import modules_for
from rrsite.survey import load_survey

ROOT = Path(__file__).resolve().parents[2]
SURVEYS = sorted([*ROOT.glob("surveys/*.md"), *ROOT.glob("tests/browser/surveys/*.md")])

# Answers every randomized question of a manifest (stdin) in a fresh interpreter; prints the
# modules of rrsite.core loaded by import and by answering.
ANSWER_ALL = """
import json, sys
import rrsite.core
before = {m for m in sys.modules if m.startswith("rrsite")}
from rrsite.core import respond
for q in json.load(sys.stdin)["questions"]:
    if not q["sensitive"]:  # the page hands only these to the worker
        continue
    if q["type"] == "number":
        truth = str(q.get("min", 0))
    elif q["type"] == "multi-choice":
        truth = json.dumps(q["values"][:1])
    else:
        truth = q["values"][0]
    respond(q, truth, truth if "innocuous" in q else None)
after = {m for m in sys.modules if m.startswith("rrsite")}
print(json.dumps({"import": sorted(before), "answer": sorted(after - before)}))
"""


@pytest.mark.parametrize("path", SURVEYS, ids=[p.stem for p in SURVEYS])
def test_core_modules_are_what_answering_the_survey_imports(path: Path) -> None:
    manifest = load_survey(path).manifest()
    done = subprocess.run([sys.executable, "-c", ANSWER_ALL], input=json.dumps(manifest),
                          capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = json.loads(done.stdout)
    assert not any(m.startswith(("rrsite.core.numbers", "rrsite.core.frequency"))
                   for m in loaded["import"]), loaded["import"]
    named = modules_for(manifest["questions"])
    answered = loaded["answer"]
    # every module named is imported by answering, and answering imports nothing but the
    # packages of those named (rrsite.core.numbers.*, rrsite.core.frequency.*)
    assert set(named) <= set(answered), (named, answered)
    packages = {".".join(n.split(".")[:3]) for n in named}
    assert all(".".join(m.split(".")[:3]) in packages
               for m in answered), (named, answered)
