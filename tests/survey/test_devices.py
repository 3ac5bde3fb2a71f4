"""The build warns when an author's text names a device the page does not draw with."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from rrsite.core import design_from_spec
from rrsite.site.builder import plan_build
from rrsite.survey.devices import devices_of, mismatch, named_devices

FIXTURES = Path(__file__).resolve().parents[1] / "site" / "fixtures"


def expected_device(weights: list[Fraction]) -> str:
    """The device rule, restated: a coin for halves, a fair die for a common denominator up to
    120, else a spinner (rrsite.core.designs.draw)."""
    denominator = math.lcm(*(weight.denominator for weight in weights))
    if denominator == 2:
        return "coin"
    return "die" if denominator <= 120 else "spinner"


@pytest.mark.parametrize("p", ["3/4", "2/3", "7/10", "5/8"])
def test_warner_devices_follow_the_weights(p):
    design = design_from_spec({"name": "warner", "p": float(Fraction(p))})
    weights = [Fraction(p), 1 - Fraction(p)]
    assert devices_of(design) == {expected_device(weights)}


def test_spinner_for_weights_no_die_gives():
    design = design_from_spec({"name": "warner", "p": 0.7123})
    assert devices_of(design) == {"spinner"}


def test_fair_two_coin_design_uses_coins_only():
    design = design_from_spec({"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25})
    assert devices_of(design) == {"coin"}


def test_crosswise_draws_nothing():
    design = design_from_spec({"name": "crosswise", "p": 0.25})
    assert devices_of(design) == set()


def test_named_devices_in_both_languages():
    assert named_devices("<p>Your device spins a <em>spinner</em>.</p>") == {"spinner"}
    assert named_devices("<p>Tu dispositivo lanza dos monedas y un dado.</p>") == {"coin", "die"}
    assert named_devices("<p>Nothing random is named; a diet, a diesel, coinage.</p>") == set()
    # the languages rrsite ships since
    assert named_devices("<p>Votre appareil lance deux pièces.</p>") == {"coin"}
    assert named_devices("<p>Ihr Gerät wirft einen Würfel.</p>") == {"die"}
    assert named_devices("<p>O seu dispositivo gira uma roleta.</p>") == {"spinner"}
    assert named_devices("<p>Il tuo dispositivo lancia due monete e due dadi.</p>") == {"coin",
                                                                                         "die"}


def test_mismatch_message_names_both_devices():
    design = design_from_spec({"name": "warner", "p": 0.75})
    message = mismatch("<p>a spinner decides</p>", design)
    assert message is not None and "spinner" in message and "a die" in message
    assert mismatch("<p>a four-sided die decides</p>", design) is None


def survey_text(help_text: str) -> str:
    return f"""---
id: devices
title: Devices
privacy:
  budget: 3
---
## Have you ever cheated?

{help_text}

```question
id: cheated
type: yes-no
randomize: warner
p: 3/4
```
"""


def test_build_warns_with_file_and_line(tmp_path):
    source = tmp_path / "devices.md"
    source.write_text(survey_text("Your device spins a spinner to pick the question."))
    plan = plan_build([source], FIXTURES / "templates", FIXTURES / "pyodide")
    found = [w for w in plan.warnings if "spinner" in w.message]
    assert len(found) == 1
    warning = found[0]
    assert Path(warning.file).name == "devices.md"
    lines = source.read_text().splitlines()
    assert lines[warning.line - 1].startswith(("```question", "id: cheated", "## Have"))


def test_build_is_quiet_when_the_text_agrees(tmp_path):
    source = tmp_path / "devices.md"
    source.write_text(survey_text("Your device rolls a four-sided die to pick the question."))
    plan = plan_build([source], FIXTURES / "templates", FIXTURES / "pyodide")
    assert not [w for w in plan.warnings if "device" in w.message and "draws" in w.message]
