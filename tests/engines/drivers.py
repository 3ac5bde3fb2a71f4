"""One small driver interface over three engines, for the cross-engine tests.

- Chromium: Debian's /usr/bin/chromium through Playwright (as tests/browser).
- Firefox: Debian's firefox-esr over WebDriver BiDi, by puppeteer-core in a long-lived Node
  process speaking JSON lines (firefox_driver.mjs); no geckodriver exists here.
- WebKit: WebKitGTK's MiniBrowser through /usr/bin/WebKitWebDriver with Selenium's WebKitGTK
  driver, full screen on an Xvfb screen of 390x844 (the window cannot be made narrower than its
  toolbar otherwise), so its viewport is a phone's.

Every driver evaluates JavaScript *expressions* given as strings (their value must be JSON), and
can click, reload, take a full-page screenshot, open a new tab of the same browser (its storage
kept, the earlier tab closed: the next person at a shared device) and start afresh (empty
storage).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from browserkit import ROOT, launch_chromium

HERE = Path(__file__).resolve().parent
FIREFOX = "/usr/bin/firefox-esr"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
PHONE = (390, 844)
DESKTOP = (1000, 900)

# Errors of the page, recorded where the engine's driver cannot report console errors (WebKit).
ERROR_HOOK = """(() => {
  if (window.__rrErrors) return true;
  window.__rrErrors = [];
  window.addEventListener("error", (e) => window.__rrErrors.push(`page error: ${e.message}`));
  window.addEventListener("unhandledrejection",
    (e) => window.__rrErrors.push(`unhandled rejection: ${e.reason}`));
  const error = console.error.bind(console);
  console.error = (...args) => {
    window.__rrErrors.push(`console: ${args.join(" ")}`);
    error(...args);
  };
  return true;
})()"""


class DriverError(AssertionError):
    """The engine refused a command (the message is the engine's)."""


class Driver:
    """The operations the tests use."""

    name = "engine"
    version = ""

    def goto(self, url: str) -> None:
        """Navigate and wait for the load event."""
        raise NotImplementedError

    def reload(self) -> None:
        """Reload the page and wait for the load event."""
        raise NotImplementedError

    def eval(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page (promises are awaited)."""
        raise NotImplementedError

    def click(self, selector: str) -> None:
        """Click the element ``selector`` matches."""
        raise NotImplementedError

    def screenshot(self, path: Path) -> None:
        """A PNG of the page (Firefox: the whole page; Chromium, WebKit: the viewport)."""
        raise NotImplementedError

    def new_context(self) -> None:
        """Start afresh: no storage, no cache, no open page."""
        raise NotImplementedError

    def new_tab(self) -> None:
        """Close the page and open a new tab of the same browser (its storage and cache kept)."""
        raise NotImplementedError

    def errors(self) -> list[str]:
        """Console errors and page errors seen since new_context."""
        raise NotImplementedError

    def viewport(self) -> tuple[int, int]:
        """(innerWidth, innerHeight) of the page."""
        width, height = self.eval("[window.innerWidth, window.innerHeight]")
        return int(width), int(height)

    def quit(self) -> None:
        """Close the browser."""
        raise NotImplementedError

    def wait(self, expression: str, timeout_s: float = 30.0, what: str = "") -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: timed out after {timeout_s} s waiting for "
                                     f"{what or expression}")
            time.sleep(0.1)


class ChromiumDriver(Driver):
    """Chromium through Playwright (the Playwright instance comes from pytest-playwright)."""

    name = "chromium"

    def __init__(self, playwright: Any, size: tuple[int, int]) -> None:
        self.browser = launch_chromium(playwright, tiered=True)
        self.version = self.browser.version
        self.size = size
        self.context: Any = None
        self.page: Any = None
        self._errors: list[str] = []

    def new_context(self) -> None:  # noqa: D102
        if self.context is not None:
            self.context.close()
        self.context = self.browser.new_context(
            viewport={"width": self.size[0], "height": self.size[1]})
        self._errors = []
        self._open_page()

    def _open_page(self) -> None:
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self._errors.append(f"console: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self._errors.append(f"page error: {e}"))

    def new_tab(self) -> None:  # noqa: D102
        old = self.page
        self._open_page()
        old.close()

    def goto(self, url: str) -> None:  # noqa: D102
        self.page.goto(url)

    def reload(self) -> None:  # noqa: D102
        self.page.reload()

    def eval(self, expression: str) -> Any:  # noqa: D102
        return self.page.evaluate(expression)

    def click(self, selector: str) -> None:  # noqa: D102
        self.page.click(selector)

    def screenshot(self, path: Path) -> None:  # noqa: D102
        # The viewport only: after a full-page capture (which resizes the viewport for a moment)
        # Playwright's next click on the page did nothing in Chromium 156.
        self.page.screenshot(path=str(path))

    def errors(self) -> list[str]:  # noqa: D102
        return list(self._errors)

    def quit(self) -> None:  # noqa: D102
        if self.context is not None:
            self.context.close()
        self.browser.close()


class FirefoxDriver(Driver):
    """firefox-esr through puppeteer-core over WebDriver BiDi (firefox_driver.mjs)."""

    name = "firefox"

    def __init__(self, size: tuple[int, int], timeout_s: float = 120.0) -> None:
        self.timeout_s = timeout_s
        self.process = subprocess.Popen(
            ["node", str(HERE / "firefox_driver.mjs")], cwd=ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.counter = 0
        first = self.replies.get(timeout=timeout_s)
        if not first or not first.get("ok"):
            raise DriverError(f"firefox did not start: {self._stderr()}")
        self.version = str(first["value"])
        self._send("viewport", width=size[0], height=size[1])

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)

    def _stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read()[-2000:]

    def _send(self, op: str, **args: Any) -> Any:
        self.counter += 1
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"id": self.counter, "op": op, **args}) + "\n")
        self.process.stdin.flush()
        try:
            reply = self.replies.get(timeout=self.timeout_s)
        except queue.Empty:
            raise DriverError(f"firefox: no reply to {op} in {self.timeout_s} s") from None
        if reply is None:
            raise DriverError(f"firefox driver exited: {self._stderr()}")
        assert reply["id"] == self.counter, reply
        if not reply["ok"]:
            raise DriverError(f"firefox: {op}: {reply['error']}")
        return reply["value"]

    def new_context(self) -> None:  # noqa: D102
        self._send("new_context")

    def new_tab(self) -> None:  # noqa: D102
        self._send("new_tab")

    def goto(self, url: str) -> None:  # noqa: D102
        self._send("goto", url=url)

    def reload(self) -> None:  # noqa: D102
        self._send("reload")

    def eval(self, expression: str) -> Any:  # noqa: D102
        return self._send("eval", expression=expression)

    def click(self, selector: str) -> None:  # noqa: D102
        self._send("click", selector=selector)

    def screenshot(self, path: Path) -> None:  # noqa: D102
        self._send("screenshot", path=str(path))

    def errors(self) -> list[str]:  # noqa: D102
        return list(self._send("errors"))

    def quit(self) -> None:  # noqa: D102
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.process.stdin.flush()
            self.process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait(timeout=10)


#: Seconds a WebKit session may take to come up before it is abandoned and started again. A
#: normal start takes 0.26-0.34 s on a quiet machine (95 starts, quit and start again in a loop);
#: one start in 15 of such a loop hung once, and the last two fresh-clone runs of the suite each
#: lost 30 s to a hung start with the earlier 30 (90 s with the 90 before that). Ten seconds is
#: thirty times a normal start and still bounds what a hang costs.
SESSION_START_S = 10


#: JavaScriptCore without its optimizing wasm tier (OMG): every page of these tests starts Pyodide
#: afresh (a new MiniBrowser keeps no compiled code), and OMG recompiled its hot functions in
#: background threads that took the processor from the other tests for seconds; the page runs on
#: the interpreter and the baseline tier (BBQ), which are the engine's own too. An answer-and-audit
#: test took 6.8-8.2 s with OMG and 4.1-4.4 s without (one at a time, four surveys).
WEBKIT_ENV = {"JSC_useOMGJIT": "0"}


class WebKitDriver(Driver):
    """WebKitGTK through WebKitWebDriver and Selenium, full screen on a 390x844 Xvfb display."""

    name = "webkit"

    def __init__(self, display: str) -> None:
        self.display = display
        self.driver: Any = None
        self._start()
        self.version = str(self.driver.capabilities.get("browserVersion", ""))

    def _start(self) -> None:
        import os

        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        options = Options()
        options.binary_location = MINIBROWSER
        options.add_argument("--automation")
        options.add_argument("--full-screen")
        os.environ["DISPLAY"] = self.display
        # A session that does not come up (seen once on a loaded machine: WebKitWebDriver alive,
        # no MiniBrowser, the new-session request unanswered for minutes) is abandoned after
        # SESSION_START_S and started again, at most twice: a hang must fail, not stall the run.
        for attempt in range(3):
            service = Service(executable_path=WEBKIT_DRIVER, env={
                **os.environ, "DISPLAY": self.display, **WEBKIT_ENV})
            started: list[Any] = []
            failed: list[BaseException] = []

            def start(service: Any = service, started: list[Any] = started,
                      failed: list[BaseException] = failed) -> None:
                try:
                    started.append(webdriver.WebKitGTK(options=options, service=service))
                except BaseException as error:  # reported below, in the test's thread
                    failed.append(error)

            thread = threading.Thread(target=start, daemon=True)
            thread.start()
            thread.join(SESSION_START_S)
            if started:
                self.driver = started[0]
                break
            if service.process is not None:
                service.process.kill()
            if failed and attempt == 2:
                raise failed[0]
        else:
            raise DriverError(f"webkit: no session after 3 tries of {SESSION_START_S} s")
        # Full screen on the 390x844 screen; the window takes that size once it is resized.
        self.driver.set_window_size(*PHONE)
        self.driver.set_page_load_timeout(60)
        self.driver.set_script_timeout(60)

    def new_context(self) -> None:  # noqa: D102
        # A new browser session: MiniBrowser's automation sessions keep no storage.
        if self.driver is not None:
            self.driver.quit()
        self._start()

    def new_tab(self) -> None:  # noqa: D102
        old = self.driver.current_window_handle
        self.driver.switch_to.new_window("tab")
        new = self.driver.current_window_handle
        self.driver.switch_to.window(old)
        self.driver.close()
        self.driver.switch_to.window(new)

    def goto(self, url: str) -> None:  # noqa: D102
        self.driver.get(url)
        self.eval(ERROR_HOOK)
        # MiniBrowser goes full screen (the Xvfb screen: 390x844) shortly after it opens.
        self.wait(f"window.innerWidth === {PHONE[0]}", 10, "the full-screen window")

    def reload(self) -> None:  # noqa: D102
        self.driver.refresh()
        self.eval(ERROR_HOOK)

    def eval(self, expression: str) -> Any:  # noqa: D102
        try:
            return self.driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                f"Promise.resolve({expression}).then((v) => done({{ok: v}}),"
                " (e) => done({error: String(e)}));")["ok"]
        except KeyError:
            raise DriverError(f"webkit: {expression[:80]} failed") from None

    def click(self, selector: str) -> None:  # noqa: D102
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.CSS_SELECTOR, selector).click()

    def screenshot(self, path: Path) -> None:  # noqa: D102
        self.driver.save_screenshot(str(path))

    def errors(self) -> list[str]:  # noqa: D102
        return list(self.eval("window.__rrErrors || []"))

    def quit(self) -> None:  # noqa: D102
        if self.driver is not None:
            self.driver.quit()
            self.driver = None
