"""Fixtures shared by every test folder.

Playwright's sync API allows one driver per thread at a time, so every test that drives Chromium
(tests/browser, tests/collect's end-to-end test, tests/pyodide) takes this session's `playwright`
instead of starting its own. `simulate_export` writes a survey and runs `rrsite simulate` on it.

With ``--dist loadfile`` (``make test``) pytest-xdist sends each file's tests to one worker. The
tests whose node ids start with one of SPREAD are each sent on their own instead, and before
every file: each runs in processes of its own, for seconds to minutes (ruff and mypy, a share
of core's tests inside Pyodide, a docs page's snippets, a docs survey's build), and needs no
fixture of its module, so the workers run them side by side at the start rather than one worker
running a whole file of them (xdist sends the files with fewest tests last: a file of one long
test ended the run alone).
"""

from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Playwright, sync_playwright

#: Node-id prefixes of the long tests that ``--dist loadfile`` sends one by one, first.
SPREAD = ("tests/test_lint.py::",
          "tests/pyodide/test_core_in_pyodide.py::",
          "tests/docs/test_docs.py::test_page_snippets_run[",
          "tests/docs/test_docs.py::test_survey_snippets_build[")


class _SpreadFirst(OrderedDict[str, Any]):
    """xdist's queue of work units, with the SPREAD tests moved to its front as they arrive."""

    def __setitem__(self, scope: str, tests: Any) -> None:
        super().__setitem__(scope, tests)
        if scope.startswith(SPREAD):
            self.move_to_end(scope, last=False)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, except that each SPREAD test is a unit of its own, sent first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SpreadFirstScheduling(LoadFileScheduling):
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            self.workqueue = _SpreadFirst()

        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(SPREAD) else super()._split_scope(nodeid)

    return SpreadFirstScheduling(config, log)


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    """The one Playwright driver of the test session."""
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def simulate_export() -> Callable[..., tuple[Path, Path]]:
    """``run(folder, survey_text, *options)``: the survey written to folder/s.md and
    ``rrsite simulate`` run on it with the options into folder/out.csv; (survey, export)."""
    from rrsite.cli import main

    def run(root: Path, survey_text: str, *options: str) -> tuple[Path, Path]:
        survey = root / "s.md"
        survey.write_text(survey_text, encoding="utf-8")
        out = root / "out.csv"
        assert main(["simulate", str(survey), *options, "-o", str(out)]) == 0
        return survey, out

    return run
