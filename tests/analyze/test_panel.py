"""A three-wave simulated panel through `rrsite simulate --wave` and `rrsite analyze`.

The ledger `analyze` prints for the respondents linked across all three waves must be the exact
composition: here recomputed by brute force, enumerating every triple of reports of each
question (tests/core/test_waves.py's joint laws), summed over the questions. The changes are
paired; unlinked respondents (devices that kept nothing) count one wave at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rrsite.cli import main
from rrsite.core import design_from_spec
from rrsite.core.frequency import Memoized, oracle_from_spec
from rrsite.estimate.frequency import paired_change
from tests.core.test_waves import brute_epsilon, matrix_joint, unary_joint
from tests.surveytext import TEAM_KRR, wave_front

WAVE = wave_front("climate", "Climate", 5, 0.7) + """\
## Which of these happened to you?

```question
id: happened
type: multi-choice
options: [Shouted at, Excluded, Threatened]
randomize: oue
epsilon: 1.5
max_ticks: 2
```

## Which team?

""" + TEAM_KRR + """
## Did you consider quitting?

```question
id: quit
type: yes-no
randomize: forced-response
```
"""


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], list[Path]]:
    root = tmp_path_factory.mktemp("panel")
    surveys = []
    for wave in (1, 2, 3):
        path = root / f"w{wave}.md"
        path.write_text(WAVE.format(wave=wave), encoding="utf-8")
        surveys.append(path)
    assert main(["simulate", str(surveys[0]), "--wave", str(surveys[1]), "--wave",
                 str(surveys[2]), "--respondents", "1500", "--seed", "4", "--keep", "0.8",
                 "--truth", "quit=0.3", "--wave-truth", "3:quit=0.9",
                 "-o", str(root / "out-{wave}.csv")]) == 0
    return root, surveys, [root / f"out-{w}.csv" for w in (1, 2, 3)]


def analyzed(panel: tuple[Path, list[Path], list[Path]], capsys: pytest.CaptureFixture[str]
             ) -> dict[str, Any]:
    """`rrsite analyze` of the three waves' exports, as JSON."""
    _, surveys, exports = panel
    capsys.readouterr()
    assert main(["analyze", *map(str, exports), *(x for s in surveys for x in ("--survey",
                                                                              str(s))),
                 "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_the_ledger_is_the_exact_composition(panel, capsys) -> None:
    result = analyzed(panel, capsys)
    assert result["series"] == "climate" and [w["wave"] for w in result["waves"]] == [1, 2, 3]
    ledger = result["ledger"]
    everywhere = [e for e in ledger if all(p["waves"] == [1, 2, 3]
                                           for p in e["questions"].values())]
    assert len(everywhere) == 1 and everywhere[0]["respondents"] >= 1000  # ~80% kept
    # brute force: each question's joint law of three reports sharing a permanent report
    happened = Memoized(oracle_from_spec({"name": "oue", "k": 3, "epsilon": 1.5,
                                          "max_ticks": 2}), 0.7)
    team = Memoized(design_from_spec({"name": "k-rr", "k": 3, "epsilon": 1.5}), 0.7)
    quit_ = Memoized(design_from_spec({"name": "forced-response"}), 0.7)
    brute = (brute_epsilon(unary_joint(happened, 3)) + brute_epsilon(matrix_joint(team, 3))
             + brute_epsilon(matrix_joint(quit_, 3)))
    assert everywhere[0]["epsilon"] == pytest.approx(brute, rel=1e-9)
    stated = result["waves"][2]["privacy"]["through_this_wave"]["epsilon"]
    assert stated == pytest.approx(brute, rel=1e-9)
    # devices that kept nothing: a new token each wave, so one wave each, at one wave's cost
    single = [e for e in ledger if all(len(p["waves"]) == 1 for p in e["questions"].values())]
    assert sum(e["respondents"] for e in single) >= 600  # ~20% of 1500, in each of 3 waves
    assert all(e["epsilon"] == pytest.approx(3 * 0.7, rel=1e-6) for e in single)


def test_changes_are_paired_and_follow_the_truth(panel, capsys) -> None:
    _, surveys, exports = panel
    result = analyzed(panel, capsys)
    quits = {(c["from_wave"], c["to_wave"]): c for c in result["changes"]
             if c["question"] == "quit"}
    assert set(quits) == {(1, 2), (2, 3)}
    assert all(c["method"].startswith("paired") for c in quits.values())
    # wave 3 redraws 20% of answers at a yes-rate of 0.9: expected change 0.2 (0.9 - 0.3) = 0.12
    low, high = quits[(2, 3)]["ci"]
    assert low < 0.12 < high and low > 0
    assert main(["analyze", *map(str, exports), *(x for s in surveys for x in ("--survey",
                                                                              str(s)))]) == 0
    text = capsys.readouterr().out
    assert "the ledger per respondent" in text and "change between waves" in text


def test_paired_change_uses_the_respondents_spread() -> None:
    """Identical rows before and after: change 0 with se 0; shifted rows: the mean shift."""
    rng = np.random.default_rng(1)
    before = rng.normal(size=(400, 3))
    same = paired_change(before, before, 0.95)
    assert all(c.estimate == 0 and c.se == 0 for c in same)
    after = before + np.array([0.1, 0.0, -0.2]) + rng.normal(scale=0.5, size=(400, 3))
    found = paired_change(before, after, 0.95)
    diff = after - before
    for c, column in zip(found, diff.T, strict=True):
        assert c.estimate == pytest.approx(column.mean())
        assert c.se == pytest.approx(column.std(ddof=1) / 20)
