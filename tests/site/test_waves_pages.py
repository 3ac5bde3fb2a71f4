"""The pages of frequency oracles and of the waves of a series, beside an online panel.

A wave of a series loads waves.js and shows the ledger in `#rr-waves`; recruited through an
online panel (`panel:`) it also loads panel.js with its own `#rr-panel`: the two features have
their own modules, hooks and manifest keys. oracles.js is loaded only where a question needs it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rrsite.site.builder import build, default_templates
from tests.surveytext import DID, LEAVE

from .conftest import PYODIDE

WAVE = """---
id: morale-w{wave}
title: Morale, wave {wave}
series: morale
wave: {wave}
waves: 3
{panel}privacy:
  budget: 3
  wave_epsilon: 0.6
---
## Did you think of leaving?

""" + LEAVE + """
## Which of these happened to you?

```question
id: happened
type: multi-choice
options: [Shouted at, Left out, Threatened]
randomize: oue
epsilon: 1
max_ticks: 2
```
"""
PANEL = "panel:\n  provider: prolific\n  complete: C1A2B3C4\n"
PLAIN = """---
id: plain
title: Plain
privacy:
  budget: 2
---
## Did you?

""" + DID


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("waves")
    folder = root / "surveys"
    folder.mkdir()
    (folder / "w1.md").write_text(WAVE.format(wave=1, panel=PANEL), encoding="utf-8")
    (folder / "w2.md").write_text(WAVE.format(wave=2, panel=""), encoding="utf-8")
    (folder / "plain.md").write_text(PLAIN, encoding="utf-8")
    build([folder], root / "dist", default_templates(), PYODIDE, compress=False,
          cache=root / "cache")
    return root / "dist"


def scripts(page: str) -> list[str]:
    return re.findall(r'<script type="module" src="[^"]*?/(\w+)\.[0-9a-f]+\.js"', page)


def test_a_wave_on_an_online_panel_has_both_modules_and_sections(site: Path) -> None:
    page = (site / "morale-w1" / "index.html").read_text("utf-8")
    loaded = scripts(page)
    assert {"oracles", "waves", "panel", "page"} <= set(loaded)
    assert loaded.index("waves") < loaded.index("page") and loaded.index("panel") < \
        loaded.index("page")
    assert page.count('id="rr-waves"') == 1 and page.count('id="rr-panel"') == 1
    waves = re.search(r'<section class="rr-waves" id="rr-waves"[^>]*>', page)
    assert waves is not None
    ledger = dict(re.findall(r'data-(\w+)="([^"]*)"', waves.group(0)))
    manifest = json.loads((site / "morale-w1" / "survey.json").read_text("utf-8"))
    series = manifest["privacy"]["series"]
    assert ledger["series"] == "morale" and ledger["wave"] == "1"
    assert float(ledger["all"]) == pytest.approx(series["all_waves"]["epsilon"])
    assert float(ledger["one"]) == pytest.approx(series["one_wave"]["epsilon"])
    assert manifest["series"] == {"id": "morale", "wave": 1, "waves": 3}
    assert manifest["panel"]["complete"] == "C1A2B3C4"
    # the keep box has no name: it is never sent
    keep = re.search(r'<input[^>]*id="rr-waves-keep"[^>]*>', page)
    assert keep is not None and "name=" not in keep.group(0)


def test_a_wave_without_a_panel_loads_no_panel_module(site: Path) -> None:
    page = (site / "morale-w2" / "index.html").read_text("utf-8")
    assert "waves" in scripts(page) and "panel" not in scripts(page)
    assert 'id="rr-panel"' not in page and 'id="rr-waves"' in page
    assert page.count("data-waves-for=") == 2  # each question's own ledger


def test_a_survey_without_oracles_or_waves_loads_neither(site: Path) -> None:
    page = (site / "plain" / "index.html").read_text("utf-8")
    assert not {"oracles", "waves", "panel"} & set(scripts(page))
    assert 'id="rr-waves"' not in page
