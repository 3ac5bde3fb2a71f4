"""The cross-engine tests: one site, one collector behind a recording proxy, three engines.

The site is built from surveys/ (an endpoint survey's URL pointed at the proxy's ``/__endpoint``
on ``localhost``, another origin than the pages' 127.0.0.1) and served by `rrsite serve` behind
tests/engines/recorder.py. WebKit runs on an Xvfb display of 390x844 that the tests start.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "browser"))  # respondent.py

from browserkit import build_site, serve  # noqa: E402
from drivers import (  # noqa: E402
    DESKTOP,
    FIREFOX,
    MINIBROWSER,
    PHONE,
    ROOT,
    WEBKIT_DRIVER,
    ChromiumDriver,
    Driver,
    FirefoxDriver,
    WebKitDriver,
)
from recorder import Recorder, start_proxy  # noqa: E402

#: Where the screenshots of every survey's form, review and thanks go (ignored by git).
SCREENSHOTS = ROOT / "screenshots"
ENGINES = ["chromium", "firefox", "webkit"]


@dataclass
class EngineSite:
    """The built site, the proxy's address and what it recorded."""

    dist: Path
    url: str
    recorder: Recorder
    ids: dict[str, str]

    def manifest(self, survey_id: str) -> dict[str, Any]:
        """survey.json of a built survey."""
        import json

        return json.loads((self.dist / survey_id / "survey.json").read_text("utf-8"))  # type: ignore[no-any-return]

    def page_url(self, survey_id: str) -> str:
        """The page of a survey, through the proxy."""
        return f"{self.url}{survey_id}/"


@pytest.fixture(scope="session")
def engine_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineSite]:
    """Build surveys/ once, serve it with `rrsite serve` behind the recording proxy."""
    root = tmp_path_factory.mktemp("engine-site")
    recorder = Recorder()
    proxy = start_proxy(recorder)
    port = proxy.server_address[1]
    sources = root / "surveys"
    sources.mkdir()
    ids = {}
    # every number design, answered in every engine too
    extra = [ROOT / "tests" / "browser" / "surveys" / "number-designs.md"]
    for file in [*sorted((ROOT / "surveys").glob("*.md")), *extra]:
        text = file.read_text("utf-8")
        # as long as the original address, so that the review's layout meets a long URL too
        text = re.sub(r"url: https://(\S+)", rf"url: http://localhost:{port}/__endpoint/\1",
                      text)
        (sources / file.name).write_text(text, "utf-8")
        match = re.search(r"^id:\s*(\S+)", text, re.MULTILINE)
        assert match, file
        ids[file.name] = match.group(1)
    # an online panel's survey (tests/engines/test_panels.py): its way back is the proxy's
    panel = (ROOT / "tests" / "browser" / "fielding" / "prolific.md").read_text("utf-8")
    panel = panel.replace("  provider: prolific\n", "  provider: prolific\n  redirect: "
                          f"http://localhost:{port}/__panel/complete?cc={{code}}\n")
    (sources / "prolific.md").write_text(panel, "utf-8")
    ids["prolific.md"] = "prolific-study"
    dist = root / "dist"
    build_site(sources, dist)
    try:
        with serve(dist, root / "collector.db") as served:
            recorder.upstream_port = int(served.rsplit(":", 1)[1].strip("/"))
            yield EngineSite(dist, f"http://127.0.0.1:{port}/", recorder, ids)
    finally:
        proxy.shutdown()


@pytest.fixture(scope="session")
def xvfb_display() -> Iterator[str]:
    """An Xvfb display of 390x844 (a phone's viewport) for WebKitGTK, started by the tests."""
    if not shutil.which("Xvfb"):
        pytest.fail("Xvfb is missing: run `make setup-test` (scripts/setup.sh --browser)")
    read, write = os.pipe()
    process = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", f"{PHONE[0]}x{PHONE[1]}x24",
         "-nolisten", "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    assert number.isdigit(), "Xvfb did not report its display"
    try:
        yield f":{number}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _missing(engine: str) -> str | None:
    needs = {"chromium": ["/usr/bin/chromium"], "firefox": [FIREFOX],
             "webkit": [WEBKIT_DRIVER, MINIBROWSER]}[engine]
    absent = [path for path in needs if not Path(path).exists()]
    if engine == "firefox" and not (ROOT / "node_modules" / "puppeteer-core").is_dir():
        absent.append("node_modules/puppeteer-core")
    return ", ".join(absent) or None


@pytest.fixture(scope="session", params=ENGINES)
def engine(request: pytest.FixtureRequest, xvfb_display: str) -> Iterator[Driver]:
    """One browser per engine for the session, at a phone's 390x844 viewport."""
    missing = _missing(request.param)
    if missing:
        pytest.fail(f"{request.param}: {missing} missing: run `make setup-test`")
    driver: Driver
    if request.param == "chromium":
        driver = ChromiumDriver(request.getfixturevalue("playwright"), PHONE)
    elif request.param == "firefox":
        driver = FirefoxDriver(PHONE)
    else:
        driver = WebKitDriver(xvfb_display)
    try:
        yield driver
    finally:
        driver.quit()


__all__ = ["DESKTOP", "SCREENSHOTS", "EngineSite"]
