"""Every example survey answered in Chromium, Firefox and WebKit, audited from the server side.

For each engine (tests/engines/drivers.py) and each survey of surveys/, in a fresh profile at a
phone's 390x844 viewport: the randomizer starts; no sensitive input has a name and the form's
data holds no sensitive answer; after submitting, a reload shows the same report (no second
randomization) and confirming sends it once, to the survey's target only, with exactly the
contract's fields, the direct answers as typed and a report from the question's values; a true
answer the coins replaced (a number also as JavaScript and Python write it) appears in no request
the server saw (page and worker), in nothing the page keeps on the device (localStorage,
sessionStorage, cookies, IndexedDB, Cache Storage) and in no console message; localStorage holds
the sent body; no console or page error, no CSP violation (reported to the proxy through
``report-uri``). Every number design is among the surveys answered (tests/browser/surveys/
number-designs.md), and so are frequency oracles and a sensitive multi-choice question (surveys/
substances.md: its true ticks, as the JSON list the worker gets, must appear in no request, in
nothing kept and in no console message) and one wave of a panel with its permanent reports kept
(surveys/climate-panel.md); the body sent for either, as its export row, is analysed with the
page's manifest (accepted, counted in each such question). Screenshots of the form, the review
and the thanks go to ``screenshots/<engine>/`` and on each of them the document is no wider than
the viewport.

The report returned by rrsite/core inside the worker and the coins' transcript are checked in
Chromium by tests/browser (Playwright can read inside the worker); the statistical end-to-end test
stays there too. Also in each engine: page.js, the worker and the core bundle swapped on the host
under the same name (with code that would send if it ran) are refused by their pinned hashes, the
page says so, and nothing is stored or sent; and on a shared device the next person (a new tab)
sees none of the first respondent's answers, answers as someone else, and "Forget" leaves nothing
of either in any storage the page uses.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from browserkit import STORAGE_DUMP as STORAGE_DUMP_FUNCTION
from browserkit import STORAGE_OBJECT
from conftest import SCREENSHOTS, EngineSite
from drivers import PHONE, Driver
from respondent import (
    NUMBER_DESIGNS,
    Plan,
    expected_direct,
    netlify_value,
    parse_body,
    plan_answers,
    written_in,
)

from rrsite.analyze import analyze
from rrsite.core import number_design_from_spec
from rrsite.core.frequency import FREQUENCY_DESIGNS, oracle_from_spec

SURVEYS = Path(__file__).resolve().parents[2] / "surveys"
SURVEY_FILES = [*sorted(path.name for path in SURVEYS.glob("*.md")),
                "number-designs.md"]  # tests/browser/surveys, every number design
READY_TIMEOUT_S = 120
STORED_KEYS = {"format", "body", "randomized_at", "sent_at"}
RUNTIME_SETTLED = ("['ready', 'failed'].includes(document.documentElement.dataset.rrRuntime)"
                   " && document.documentElement.dataset.rrRuntime")

NAMED_TRUTH_INPUTS = """Array.from(document.querySelectorAll(
  "input[data-truth], input[data-innocuous], input[data-innocuous-number]")).filter(
  (i) => i.hasAttribute("name")).length"""
FORM_DATA = """Array.from(document.forms).flatMap((form) =>
  Array.from(new FormData(form).entries()).map(([key, value]) => [key, String(value)]))"""
VISIBLE = "(() => {{ const e = document.querySelector({0}); return !!e && !e.hidden; }})()"
# Every console message the page writes from now on, kept for the audit (a true answer must not
# be logged). Installed after load, before the respondent answers.
RECORD_CONSOLE = """(() => {
  window.__rrConsole = [];
  for (const level of ["log", "info", "warn", "error", "debug", "trace", "dir", "table"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
      const text = (a) => { try { return typeof a === "string" ? a : JSON.stringify(a); }
        catch { return String(a); } };
      window.__rrConsole.push(args.map(text).join(" "));
      return original(...args);
    };
  }
  return true;
})()"""
# What the page keeps on the device (browserkit.STORAGE_DUMP), as an expression.
STORAGE_DUMP = f"({STORAGE_DUMP_FUNCTION})()"
WIDTHS = """[document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]"""
FILL = """((plan) => {
  const one = (selector) => {
    const element = document.querySelector(selector);
    if (!element) throw new Error(`no element ${selector}`);
    return element;
  };
  const value = (v) => JSON.stringify(String(v));
  const agree = document.querySelector("#rr-consent-agree");  // consent first
  if (agree && !agree.closest("[hidden]")) agree.click();
  for (const [qid, report] of Object.entries(plan.reports)) {  // crosswise, triangular
    one(`#q-${qid} input[data-report][value=${value(report)}]`).click();
  }
  const type_in = (selector, text) => {  // a number input, typed as a person would
    const input = one(selector);
    input.focus();
    input.value = String(text);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  for (const [qid, truth] of Object.entries(plan.truths)) {
    if (plan.types[qid] === "number") type_in(`#q-${qid}-input`, truth);
    else if (plan.types[qid] === "multi-choice") {  // the true ticks, a JSON list
      for (const tick of JSON.parse(truth)) {
        one(`#q-${qid} input[data-truth][value=${value(tick)}]`).click();
      }
    } else one(`#q-${qid} input[data-truth][value=${value(truth)}]`).click();
  }
  const keep = document.querySelector("#rr-waves-keep");  // a panel: keep the permanent reports
  if (keep && !keep.checked) keep.click();
  for (const [qid, innocuous] of Object.entries(plan.innocuous)) {
    if (plan.types[qid] === "number") type_in(`#q-${qid}-innocuous-input`, innocuous);
    else one(`#q-${qid}-innocuous input[data-innocuous][value=${value(innocuous)}]`).click();
  }
  for (const [qid, answer] of Object.entries(plan.direct)) {
    const type = plan.types[qid];
    if (type === "yes-no" || type === "choice") {
      one(`#q-${qid} input[name=${value(qid)}][value=${value(answer)}]`).click();
    } else if (type === "multi-choice") {
      for (const item of answer) {
        one(`#q-${qid} input[name=${value(qid)}][value=${value(item)}]`).click();
      }
    } else {
      const input = one(`#q-${qid}-input`);
      input.focus();
      input.value = String(answer);
      input.dispatchEvent(new Event("input", { bubbles: true }));
      input.dispatchEvent(new Event("change", { bubbles: true }));
    }
  }
  // A survey in pages: Next until the last page, where the submit button is.
  const progress = document.querySelector("#rr-page-progress");
  for (let i = 0; progress && i < 50 && Number(progress.value) < Number(progress.max); i++) {
    one("#rr-page-next").click();
  }
  return true;
})(%s)"""


def truth_forms(q: dict[str, Any], typed: str) -> set[str]:
    """A true answer as typed; a number also as JavaScript and Python write it."""
    if q["type"] != "number":
        return {typed}
    value = float(typed)
    forms = {typed, repr(value), json.dumps(value), f"{value:g}"}
    return forms | ({str(int(value))} if value.is_integer() else set())


def visible(selector: str) -> str:
    return VISIBLE.format(json.dumps(selector))


def fill(driver: Driver, manifest: dict[str, Any], plan: Plan) -> None:
    types = {q["id"]: q["type"] for q in manifest["questions"]}
    data = {"truths": plan.truths, "innocuous": plan.innocuous, "reports": plan.reports,
            "direct": plan.direct, "types": types}
    assert driver.eval(FILL % json.dumps(data, ensure_ascii=False)) is True


def shoot(driver: Driver, survey: str, stage: str) -> None:
    """A screenshot, and the check that nothing is wider than the viewport."""
    folder = SCREENSHOTS / driver.name
    folder.mkdir(parents=True, exist_ok=True)
    driver.screenshot(folder / f"{survey}-{stage}.png")
    document, body, viewport = driver.eval(WIDTHS)
    assert viewport == PHONE[0], f"{driver.name}: viewport {viewport}, not {PHONE[0]}"
    assert document <= viewport and body <= viewport, (
        f"{driver.name} {survey} {stage}: document {document} px / body {body} px wide in a "
        f"{viewport} px viewport")


@pytest.mark.parametrize("file", SURVEY_FILES)
def test_answer_and_audit(file: str, engine: Driver, engine_site: EngineSite,
                          tmp_path: Path) -> None:
    site, recorder = engine_site, engine_site.recorder
    sid = site.ids[file]
    manifest = site.manifest(sid)
    target = manifest["submit"]["to"]
    sensitive = [q for q in manifest["questions"] if q["sensitive"]]
    page_url = site.page_url(sid)
    violations_before = len(recorder.violations)
    engine.new_context()
    start = recorder.mark()
    engine.goto(page_url)
    engine.wait("!!document.querySelector('#rr-submit:not([disabled])')", 30, "the form")
    if sensitive:
        state = engine.wait(RUNTIME_SETTLED, READY_TIMEOUT_S, "the randomizer")
        assert state == "ready", engine.eval("document.querySelector('#rr-runtime-text').innerText")
    assert engine.eval(NAMED_TRUTH_INPUTS) == 0, "a sensitive input has a name"

    plan = plan_answers(manifest, 0)
    assert engine.eval(RECORD_CONSOLE) is True
    fill(engine, manifest, plan)
    for key, value in engine.eval(FORM_DATA):
        if key in plan.truths:
            assert value == "", f"form field {key} holds {value!r}"
    shoot(engine, sid, "form")

    engine.click("#rr-submit")
    try:
        engine.wait(visible("#rr-review"), 60, "the review")
    except AssertionError as error:
        notes = engine.eval("Array.from(document.querySelectorAll("
                            "'#rr-submit-note, [role=alert], .rr-error')).map((e) => e.innerText)")
        raise AssertionError(f"{error}; the page says: {notes}") from None
    shown = engine.eval("document.querySelector('#rr-body').textContent")
    logged = "\n".join(engine.eval("window.__rrConsole"))
    shoot(engine, sid, "review")

    # A reload before confirming offers the same report: the coins are not flipped again.
    engine.reload()
    engine.wait(visible("#rr-review"), 60, "the review after a reload")
    assert engine.eval("document.querySelector('#rr-body').textContent") == shown
    mark = recorder.mark()
    engine.click("#rr-confirm")
    engine.wait(visible("#rr-done"), 60, "the thanks")
    shoot(engine, sid, "thanks")

    sent = [r for r in recorder.since(mark) if r.method not in ("GET", "HEAD", "OPTIONS")]
    if target == "download":
        assert sent == []
        body = json.loads(shown)
    else:
        assert len(sent) == 1, [(r.method, r.path) for r in sent]
        post = sent[0]
        expected_path = {"collector": "/api/submissions", "endpoint": "/__endpoint",
                         "netlify": urlsplit(page_url).path}[target]
        assert post.path.startswith(expected_path)
        if target == "endpoint":
            assert post.host.startswith("localhost:")
        if target != "netlify":
            assert post.body == shown, "the page sent something other than what it showed"
        body = parse_body(target, post.body)

    grouped = {q["id"] for q in sensitive if "groups" in q}  # two-group designs
    grouped_body = grouped and target != "netlify"  # Netlify: `<id>.group` form fields
    assert set(body) == {"survey", "version", "respondent", "answers"} | (
        {"groups"} if grouped_body else set())
    if grouped_body:
        assert set(body["groups"]) == grouped and set(body["groups"].values()) <= {1, 2}
    assert body["survey"] == manifest["id"] and body["version"] == manifest["version"]
    answers = body["answers"]
    for q in sensitive:
        if q["type"] == "number":  # a report the design can produce
            report = float(answers[q["id"]])  # Netlify's fields are text
            assert number_design_from_spec(q["design"]).impossible(report) is None, q["id"]
            continue
        if q["design"]["name"] in FREQUENCY_DESIGNS:  # a report the oracle can send
            oracle_from_spec(q["design"]).decode(answers[q["id"]], q["values"])
            continue
        assert answers[q["id"]] in q["values"] + q.get("reports", []), (q["id"], answers)
    direct = expected_direct(manifest, plan, target)
    assert {k: v for k, v in answers.items() if k not in plan.truths} == direct

    # A true answer the coins replaced is in no request path or body the server saw (page and
    # worker; the browsers' own headers hold words such as "none").
    seen = "\n".join(f"{r.path}\n{r.body}" for r in recorder.since(start))
    legit = json.dumps(body, ensure_ascii=False) + manifest["id"] + page_url
    # Nor in anything the page keeps on the device, nor in its console. A true number is
    # looked for as typed and as JavaScript and Python write it ("18500.37", "18500.4" ...).
    kept = engine.eval(STORAGE_DUMP)
    for q in sensitive:
        if q["id"] not in plan.truths:
            continue  # crosswise/triangular: no truth ever enters the page
        for truth in truth_forms(q, plan.truths[q["id"]]):
            if answers[q["id"]] == truth or written_in(truth, legit) or len(truth) < 4:
                continue  # the coins sent it as it is, or too short to look for by text
            assert not written_in(truth, seen), f"true answer of {q['id']} sent"
            assert not written_in(truth, kept), f"true answer of {q['id']} kept on the device"
            assert not written_in(truth, logged), f"true answer of {q['id']} in the console"
    for request in recorder.since(start):
        for truth in plan.truths.values():
            assert f"={truth}" not in urlsplit(request.path).query

    key = f"rrsite:{manifest['id']}:{manifest['version']}"
    record = json.loads(engine.eval(f"localStorage.getItem({json.dumps(key)})"))
    assert set(record) == STORED_KEYS
    stored = record["body"]["answers"]
    if target == "netlify":
        stored = {qid: netlify_value(value) for qid, value in stored.items()}
    assert stored == body["answers"] and record["body"]["respondent"] == body["respondent"]
    assert engine.errors() == []
    assert recorder.violations[violations_before:] == []
    analysed(manifest, body, target, tmp_path)


def analysed(manifest: dict[str, Any], body: dict[str, Any], target: str, folder: Path) -> None:
    """A body with a frequency oracle or a permanent report, as its export row, is analysed:
    accepted (every report one its design can send) and counted in each such question."""
    special = [q for q in manifest["questions"] if q["sensitive"] and (
        q["design"]["name"] in FREQUENCY_DESIGNS or "memoize" in q)]
    if not special or target != "collector":
        return
    export = folder / "sent.jsonl"
    export.write_text(json.dumps({**body, "submitted_at": "2026-11-22T13:05:00Z"}) + "\n",
                      encoding="utf-8")
    result = analyze([export], manifests=[manifest]).to_dict()
    assert result["rows"]["accepted"] == 1 and result["rows"]["rejected"] == 0, result["rows"]
    found = {q["id"]: q for q in result["questions"]}
    for q in special:
        assert found[q["id"]]["n"] == (1 if q["id"] in body["answers"] else 0), q["id"]


SWAPS = [
    # (what, the paths swapped, how the file changes): code added that would send if it ran
    ("page.js", r"^/_rr/page\.[0-9a-f]+\.js$",
     lambda body: body + b'\nfetch("/leak-page", {method: "POST", body: "truth"});\n'),
    ("worker", r"^/_rr/worker\.[0-9a-f]+\.js$",
     lambda body: body + b'\nfetch("/leak-worker", {method: "POST", body: "truth"});\n'),
    ("core", r"^/_rr/core\.[0-9a-f]+\.zip$",
     lambda body: body.replace(b"def respond_json(", b"def respond_jsoN(", 1)),
]
INTEGRITY = "document.documentElement.dataset.rrIntegrity === 'failed' && 'integrity'"
TRY_TO_SEND = """(() => {
  document.getElementById("rr-form").hidden = false;
  document.getElementById("rr-submit").disabled = false;
  document.getElementById("rr-form").requestSubmit();
  return true;
})()"""


def test_swapped_code_does_not_run_and_nothing_is_sent(engine: Driver,
                                                        engine_site: EngineSite) -> None:
    """page.js, the worker and the core, each swapped on the host under the same name (with
    code that would send if it ran): refused, said on the page, and nothing is stored or sent."""
    site, recorder = engine_site, engine_site.recorder
    sid = site.ids["honor-code.md"]
    manifest = site.manifest(sid)
    key = f"rrsite:{manifest['id']}:{manifest['version']}"
    for what, pattern, change in SWAPS:
        engine.new_context()  # nothing of the file kept from the swap before
        recorder.swap = (re.compile(pattern), change)
        try:
            start = recorder.mark()
            engine.goto(site.page_url(sid))
            state = engine.wait(f"({INTEGRITY}) || ({RUNTIME_SETTLED})", READY_TIMEOUT_S,
                                f"the page with a swapped {what}")
        finally:
            recorder.swap = None
        swapped = [r.path for r in recorder.since(start) if re.search(pattern, r.path)]
        assert swapped, f"{engine.name}: {what} was not requested"
        name = swapped[0].rsplit("/", 1)[-1]
        if what == "page.js":
            assert state == "integrity", (engine.name, state)
            assert engine.eval(visible("#rr-integrity"))
        else:
            assert state == "failed", (engine.name, what, state)
            text = engine.eval("document.querySelector('#rr-runtime-text').innerText")
            assert "could not start" in text and name in text, (engine.name, text)
        fill(engine, manifest, plan_answers(manifest, 0))
        assert engine.eval(TRY_TO_SEND) is True
        time.sleep(0.5)
        assert not engine.eval(visible("#rr-review"))
        sent = [r.path for r in recorder.since(start)
                if r.method not in ("GET", "HEAD") or "/leak" in r.path]
        assert sent == [], (engine.name, what, sent)
        assert engine.eval(f"localStorage.getItem({json.dumps(key)})") is None


STORAGE = f"({STORAGE_OBJECT})()"
PAGE_TEXT = """Array.from(document.body.querySelectorAll('*')).filter((e) => !e.closest('script'))
  .flatMap((e) => Array.from(e.childNodes)).filter((n) => n.nodeType === 3)
  .map((n) => n.textContent).join(' ')"""


def answer_and_send(engine: Driver, manifest: dict[str, Any], round_index: int) -> dict[str, Any]:
    """Answer the open page and send; the body it showed."""
    state = engine.wait(RUNTIME_SETTLED, READY_TIMEOUT_S, "the randomizer")
    assert state == "ready", engine.eval("document.querySelector('#rr-runtime-text').innerText")
    fill(engine, manifest, plan_answers(manifest, round_index))
    engine.click("#rr-submit")
    engine.wait(visible("#rr-review"), 60, "the review")
    body = json.loads(engine.eval("document.querySelector('#rr-body').textContent"))
    engine.click("#rr-confirm")
    engine.wait(visible("#rr-done"), 60, "the thanks")
    return body  # type: ignore[no-any-return]


def test_a_second_visitor_sees_nothing_and_forget_leaves_nothing(
        engine: Driver, engine_site: EngineSite) -> None:
    """A shared device: after one respondent sent, the next person (a new tab of the same
    browser) sees none of their answers, reports or token, answers as someone else; after
    "Forget" on the start page, every storage the page uses (localStorage, sessionStorage,
    cookies, IndexedDB, Cache Storage) and the address's fragment are free of both respondents'
    tokens and answers and of the invitation code."""
    site, recorder = engine_site, engine_site.recorder
    sid = site.ids["honor-code.md"]
    manifest = site.manifest(sid)
    engine.new_context()
    start = recorder.mark()
    engine.goto(site.page_url(sid))
    first = answer_and_send(engine, manifest, 0)

    engine.new_tab()
    engine.goto(site.page_url(sid))
    engine.wait(visible("#rr-answered"), 30, "the already-answered screen")
    assert not engine.eval(visible("#rr-form")) and not engine.eval(visible("#rr-review"))
    assert first["respondent"] not in engine.eval(PAGE_TEXT)
    assert engine.eval("document.querySelector('#rr-answers').children.length") == 0
    engine.click("#rr-someone-else")
    engine.wait(visible("#rr-someone"), 10, "the rule")
    engine.click("#rr-someone-start")
    engine.wait(f"{visible('#rr-form')} && document.documentElement.dataset.rrState === 'form'",
                30, "a fresh form")
    second = answer_and_send(engine, manifest, 1)
    posts = [json.loads(r.body) for r in recorder.since(start)
             if r.method == "POST" and r.path.startswith("/api/submissions")]
    assert [post["respondent"] for post in posts] == [first["respondent"], second["respondent"]]
    assert first["respondent"] != second["respondent"]

    # The next person opens an invitation link (its code in the fragment) and forgets from the
    # start page: the code leaves the address bar, and nothing of either respondent stays.
    code = "Xq7Vd2Lm9Rt4Wp8K"
    engine.new_tab()
    engine.goto(f"{site.page_url(sid)}#invitation={code}")
    engine.wait(visible("#rr-answered"), 30, "the already-answered screen")
    assert code in engine.eval("window.location.href")
    engine.click("#rr-forget-start")
    engine.wait(f"!({visible('#rr-show-mine')}) && {visible('#rr-answered')}", 10,
                "the screen after forgetting")
    assert engine.eval("window.location.hash") == ""
    assert code not in engine.eval("window.location.href")
    kept = engine.eval(STORAGE)
    assert code not in json.dumps(kept)
    local = dict(kept["local"])
    markers = {key for key in local if key.startswith("rrsite:answered:")}
    assert set(local) - {"rrsite:salt"} == markers
    assert len(local) == 2 and kept["session"] == {} and kept["cookies"] == ""
    assert kept["indexedDB"] == [] and kept["caches"] == []
    for body in (first, second):
        assert body["respondent"] not in json.dumps(kept)
    assert "answers" not in json.dumps(kept)  # no stored report, of anyone
    assert engine.errors() == []


def test_every_number_design_is_audited(engine_site: EngineSite) -> None:
    """The surveys answered above hold every number design (and so are audited in each engine)."""
    designs = {q["design"]["name"] for file in SURVEY_FILES
               for q in engine_site.manifest(engine_site.ids[file])["questions"]
               if q["sensitive"] and q["type"] == "number"}
    assert designs == set(NUMBER_DESIGNS)
