"""What the randomizer's start loads of rrsite/core: what its survey asks for, no more.

``import rrsite.core`` leaves the number designs, the frequency oracles and the optimal designs
out; the page's config
names the modules its survey's questions need (``core_modules``), which the worker imports once
it is ready, while the respondent reads. The worker records what Python loaded of rrsite in a
performance mark (``rr-core-loaded``), read here from inside the worker. (That a number and
a panel's question are then randomized is what tests/browser/test_numbers.py and test_waves.py
check.)
"""

from __future__ import annotations

import time

from browserkit import Site, open_survey
from playwright.sync_api import BrowserContext
from respondent import worker

LOADED = "() => performance.getEntriesByName('rr-core-loaded').map((entry) => entry.detail)"
NUMBERS = "rrsite.core.numbers"
FREQUENCY = "rrsite.core.frequency"


def loaded(context: BrowserContext, site: Site, survey: str) -> set[str]:
    """The modules of rrsite in the worker's Python once it has imported what it needs."""
    page = open_survey(context, site, survey)
    deadline = time.monotonic() + 30
    while not (entries := worker(page).evaluate(LOADED)):
        assert time.monotonic() < deadline, "the worker never marked what it loaded"
        time.sleep(0.05)
    page.close()
    (modules,) = entries
    return set(modules)


def test_a_survey_loads_only_the_designs_it_asks_for(site: Site, context: BrowserContext) -> None:
    yes_no = loaded(context, site, "honor-code")
    assert "rrsite.core.designs" in yes_no and "rrsite.core.respond" in yes_no
    assert NUMBERS not in yes_no and FREQUENCY not in yes_no, sorted(yes_no)
    numbers = loaded(context, site, "hidden-numbers")
    assert NUMBERS in numbers and FREQUENCY not in numbers, sorted(numbers)
    panel = loaded(context, site, "climate-2026-w1")
    assert f"{FREQUENCY}.respond" in panel and NUMBERS not in panel, sorted(panel)
    # the optimal designs are the build's and the analyzer's
    assert "rrsite.core.optimal" not in yes_no | numbers | panel

