"""A study as researchers field it, in Chromium (tests/browser/fielding/):

- a bilingual survey (en + de, one file and its translation) answered in both languages, in both
  arms of the split between direct and randomized questioning, with its comprehension check, and
  analysed as one survey with `rrsite analyze --by language`;
- a Prolific-style link: the page goes to the completion URL with the completion code only after
  the collector acknowledged the submission; the participant id appears in no request body, in
  no URL the page requests, in no header, in nothing the page keeps on the device, and nowhere in
  either store (SQLite, and PostgreSQL with its dump and data directory); screen-out, over-quota
  and a link without an id.

The site of these tests is their own (a module fixture), built from tests/browser/fielding/.
"""

from __future__ import annotations

import csv
import hashlib
import json
import runpy
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browserkit import ROOT, STORAGE_DUMP, Site, Watch, serve, serve_surveys, wait_ready
from playwright.sync_api import BrowserContext, Page, Route

HERE = Path(__file__).resolve().parent
FIELDING = HERE / "fielding"
PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
COMPLETION = "https://app.prolific.com/submissions/complete?cc="



@pytest.fixture(scope="module")
def fielded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The surveys of tests/browser/fielding/ built and served with SQLite."""
    with serve_surveys(sorted(FIELDING.glob("*.md")), tmp_path_factory.mktemp("fielded")) as site:
        yield site


def pump_until(page: Page, condition: Any, timeout_s: float, what: str) -> None:
    """Wait for a Python condition while Playwright runs the route handlers (a plain sleep would
    hold them back: the sync API dispatches events only inside its own calls)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(100)


def visible(page: Page, selector: str) -> bool:
    """Shown on the screen (not `hidden`, not `display: none`, nor inside one)."""
    return page.is_visible(selector)


# ---- one survey, two languages, two arms ----------------------------------------------------


def answer_campus(context: BrowserContext, site: Site, watch: Watch, path: str, arm: str,
                  faculty: str, check: str | None, truth: str) -> dict[str, Any]:
    """One respondent through the page at ``path``, in the arm ``arm``: the body it sent."""
    version = site.manifest("campus")["version"]
    key = f"rrsite:arm:campus:{version}"
    page = context.new_page()
    # a fresh device whose draw was `arm` (the draw itself is checked in test_the_arm_draw)
    page.add_init_script(f"try {{ localStorage.clear(); localStorage.setItem("
                         f"{json.dumps(key)}, {json.dumps(arm)}); }} catch (e) {{}}")
    before = len(watch.posts("/api/submissions"))
    page.goto(site.url + path)
    page.wait_for_selector("#rr-submit:not([disabled])", timeout=30_000)
    page.click("#rr-consent-agree")
    assert page.evaluate("document.documentElement.dataset.rrArm") == arm
    page.check(f"#q-faculty input[value={faculty}]")
    if arm == "randomized":
        assert visible(page, "#q-stimulants") and visible(page, "#q-stimulants_check")
        assert not visible(page, "#q-stimulants_direct") and not visible(page, "#rr-arm-notice")
        page.check(f"#q-stimulants_check input[value={check}]")
        page.click(f"#q-stimulants input[data-truth][value={truth}]")
    else:
        assert not visible(page, "#q-stimulants") and not visible(page, "#q-stimulants_check")
        assert visible(page, "#q-stimulants_direct") and visible(page, "#rr-arm-notice")
        help_text = page.inner_text("#q-stimulants_direct-help")
        assert "without the randomizer" in help_text or "ohne Auslosung" in help_text
        page.check(f"#q-stimulants_direct input[value={truth}]")
    page.click("#q-cheated input[data-truth][value=no]")
    assert not visible(page, "#q-language") and not visible(page, "#q-arm")
    wait_ready(page)
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)
    posts = watch.posts("/api/submissions")
    assert len(posts) == before + 1
    page.close()
    return json.loads(posts[-1].body or "{}")  # type: ignore[no-any-return]


def test_a_bilingual_survey_answered_in_both_languages_and_analysed_as_one(
        fielded: Site, context: BrowserContext, watch: Watch, tmp_path: Path) -> None:
    respondents = [  # (path, language, arm, faculty, check, truth of stimulants)
        ("campus/?src=mail", "en", "randomized", "science", "yes", "yes"),
        ("campus/", "en", "randomized", "arts", "truth", "no"),
        ("campus/", "en", "direct", "science", None, "yes"),
        ("campus/?lang=de&src=mail", "de", "randomized", "arts", "yes", "yes"),
        ("campus/de/", "de", "randomized", "science", "no", "no"),
        ("campus/de/", "de", "direct", "arts", None, "no"),
    ]
    version = fielded.manifest("campus")["version"]
    for path, language, arm, faculty, check, truth in respondents:
        body = answer_campus(context, fielded, watch, path, arm, faculty, check, truth)
        answers = body["answers"]
        assert body["version"] == version  # one version, whatever the language
        assert answers["language"] == language and answers["arm"] == arm
        assert answers["faculty"] == faculty and answers["cheated"] in ("no", "yes")
        if arm == "randomized":
            assert answers["stimulants_check"] == check and answers["stimulants"] in ("no", "yes")
            assert "stimulants_direct" not in answers
        else:
            assert answers["stimulants_direct"] == truth
            assert "stimulants" not in answers and "stimulants_check" not in answers
    # ?lang=de moved to the German page, keeping the other parameters
    german = [r for r in watch.requests if r.method == "GET" and "/campus/de/" in r.url]
    assert any(r.url.endswith("/campus/de/?src=mail") for r in german)

    export = tmp_path / "export.csv"
    subprocess.run([sys.executable, "-m", "rrsite", "export", "--db", str(fielded.db), "--survey",
                    "campus", "-o", str(export)], check=True, cwd=ROOT, capture_output=True)
    rows = list(csv.DictReader(export.open(encoding="utf-8")))
    assert list(rows[0])[:11] == ["survey", "version", "respondent", "submitted_at", "language",
                                  "arm", "faculty", "stimulants_check", "stimulants",
                                  "stimulants_direct", "cheated"]
    assert sorted(r["language"] for r in rows) == ["de"] * 3 + ["en"] * 3
    survey = fielded.dist.parent / "surveys" / "campus.md"
    result = subprocess.run([sys.executable, "-m", "rrsite", "analyze", str(export), "--survey",
                             str(survey), "--by", "language", "--format", "json"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    analysis = {q["id"]: q for q in json.loads(result.stdout)["questions"]}
    cheated = analysis["cheated"]["by"]
    assert cheated["question"] == "language"
    assert {code: group["n"] for code, group in cheated["groups"].items()} == {"en": 3, "de": 3}
    stimulants = analysis["stimulants"]["by"]["groups"]  # the randomized arm only
    assert {code: group["n"] for code, group in stimulants.items()} == {"en": 2, "de": 2}
    watch.assert_clean()


def test_the_language_menu_keeps_the_link_and_moves_the_page(
        fielded: Site, context: BrowserContext, watch: Watch) -> None:
    page = context.new_page()
    page.goto(fielded.url + "campus/?PROLIFIC_PID=abc&x=1#invitation=AbCdEfGhIjKlMnOp")
    page.wait_for_selector("#rr-submit:not([disabled])")
    link = page.get_attribute(".rr-languages a[data-language=de]", "href")
    assert link == fielded.url + "campus/de/?PROLIFIC_PID=abc&x=1#invitation=AbCdEfGhIjKlMnOp"
    page.click(".rr-languages a[data-language=de]")
    page.wait_for_selector("#rr-submit:not([disabled])")
    assert page.evaluate("document.documentElement.lang") == "de"
    assert page.inner_text("h1") == "Campusleben"
    back = page.get_attribute(".rr-languages a[data-language=en]", "href")
    assert back == fielded.url + "campus/?PROLIFIC_PID=abc&x=1#invitation=AbCdEfGhIjKlMnOp"
    page.goto(fielded.url + "campus/de/?lang=en&x=2")
    page.wait_for_selector("html[data-rr-language=en]", state="attached")
    assert page.url == fielded.url + "campus/?x=2"
    watch.assert_clean()


def test_the_arm_draw_is_kept_and_is_near_its_share(fielded: Site, context: BrowserContext,
                                                    watch: Watch) -> None:
    """The page's own draw: kept across a reload; over 4000 draws of the page's drawDirect,
    the share of the direct arm is 0.3 within 4 standard errors (0.029)."""
    page = context.new_page()
    page.goto(fielded.url + "campus/")
    page.wait_for_selector("#rr-submit:not([disabled])")
    arm = page.evaluate("document.documentElement.dataset.rrArm")
    assert arm in ("direct", "randomized")
    page.reload()
    page.wait_for_selector("#rr-submit:not([disabled])")
    assert page.evaluate("document.documentElement.dataset.rrArm") == arm
    script = next(src for src in page.evaluate(
        "Array.from(document.scripts).map((s) => s.src)") if "/fielding." in src)
    share = page.evaluate("""async (src) => {
      const { drawDirect } = await import(src);
      let direct = 0;
      for (let i = 0; i < 4000; i++) if (drawDirect(0.3)) direct += 1;
      return direct / 4000;
    }""", script)
    assert abs(share - 0.3) < 4 * (0.3 * 0.7 / 4000) ** 0.5
    watch.assert_clean()


# ---- a Prolific-style link --------------------------------------------------------------------


def prolific_page(context: BrowserContext, site_url: str, query: str, events: list[tuple[str, str]],
                  collector: Any = None) -> Page:
    """The Prolific survey opened with ``query``; ``events`` records the collector's answer and
    each visit to Prolific; ``collector`` may answer the submission instead of the collector."""

    def prolific(route: Route) -> None:
        events.append(("prolific", route.request.url))
        route.fulfill(status=200, content_type="text/html", body="<p>Prolific</p>")

    context.route("https://app.prolific.com/**", prolific)
    page = context.new_page()
    if collector is not None:
        page.route("**/api/submissions", collector)
    page.goto(f"{site_url}prolific-study/{query}")
    page.wait_for_selector("#rr-submit:not([disabled])", timeout=30_000)
    return page


def slow_collector(events: list[tuple[str, str]], delay: float = 1.5) -> Any:
    """The real collector's answer, held back ``delay`` s before the page gets it."""

    def answer(route: Route) -> None:
        response = route.fetch()
        status, headers, body = response.status, response.headers, response.body()
        events.append(("collector stored", str(status)))
        time.sleep(delay)
        events.append(("acknowledged", str(status)))
        route.fulfill(status=status, headers=headers, body=body)

    return answer


def answer_prolific(page: Page, enrolled: str = "yes", truth: str = "yes") -> None:
    page.check(f"#q-enrolled input[value={enrolled}]")
    page.click(f"#q-cheated input[data-truth][value={truth}]")
    wait_ready(page)
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")


def audit_participant_id(watch: Watch, context: BrowserContext, site_url: str) -> None:
    """The participant id in no request but the page's own navigation: no body, no other URL,
    no header; and in nothing the page keeps on the device (read from a page of the site's
    origin: the survey's page has gone to the panel)."""
    for request in watch.requests:
        if request.url.startswith(site_url + "prolific-study/?") and request.method == "GET":
            assert request.body is None
            assert PID not in json.dumps(request.headers)
            continue
        assert PID not in request.text(), (request.method, request.url)
    reader = context.new_page()
    reader.goto(site_url + "api/health")
    assert PID not in reader.evaluate(STORAGE_DUMP)
    assert PID not in json.dumps(context.cookies())
    reader.close()


def completion_hex() -> str:
    return hashlib.sha256(f"rrsite-completion\nprolific-study\n{PID}".encode()).hexdigest()


def test_a_prolific_link_returns_with_the_code_only_after_the_acknowledgement(
        fielded: Site, context: BrowserContext, watch: Watch) -> None:
    events: list[tuple[str, str]] = []
    page = prolific_page(context, fielded.url,
                         f"?PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1", events,
                         slow_collector(events))
    assert page.evaluate("document.documentElement.dataset.rrPanel") == "ready"
    answer_prolific(page)
    pump_until(page, lambda: any(kind == "prolific" for kind, _ in events), 30, "the way back")
    kinds = [kind for kind, _ in events]
    assert kinds == ["collector stored", "acknowledged", "prolific"], events
    assert events[-1][1] == COMPLETION + "C1A2B3C4"
    body = json.loads(watch.posts("/api/submissions")[0].body or "{}")
    assert set(body) == {"survey", "version", "respondent", "answers", "completion"}
    assert body["completion"] == completion_hex()
    audit_participant_id(watch, context, fielded.url)
    # the store: the digest in the completion record, the id nowhere (file, log, shared memory)
    stored = b"".join(path.read_bytes() for path in fielded.db.parent.glob(fielded.db.name + "*"))
    assert PID.encode() not in stored
    import sqlite3

    connection = sqlite3.connect(fielded.db)
    try:
        record = connection.execute("SELECT digests FROM completion_sets WHERE survey = "
                                    "'prolific-study'").fetchone()[0]
        answers = [row[0] for row in connection.execute(
            "SELECT answers FROM submissions WHERE survey = 'prolific-study'")]
    finally:
        connection.close()
    assert bytes.fromhex(completion_hex()) in record
    assert all(completion_hex() not in a and PID not in a for a in answers)


def test_no_acknowledgement_no_code(fielded: Site, context: BrowserContext,
                                    watch: Watch) -> None:
    events: list[tuple[str, str]] = []

    def down(route: Route) -> None:
        events.append(("collector down", "503"))
        route.fulfill(status=503, content_type="application/json", headers={"retry-after": "1"},
                      body=json.dumps({"error": "the database could not store it", "field": None}))

    page = prolific_page(context, fielded.url, f"?PROLIFIC_PID={PID}", events, down)
    answer_prolific(page)
    page.wait_for_selector("#rr-retry-box:not([hidden])", timeout=30_000)
    page.wait_for_timeout(2000)  # longer than the page's pause before it leaves
    assert [kind for kind, _ in events] == ["collector down"] * 3
    assert page.evaluate("document.documentElement.dataset.rrPanel") == "ready"
    assert "C1A2B3C4" not in page.inner_text("body")
    audit_participant_id(watch, context, fielded.url)


def test_screen_out_sends_nothing_and_returns_with_its_code(
        fielded: Site, context: BrowserContext, watch: Watch) -> None:
    events: list[tuple[str, str]] = []
    page = prolific_page(context, fielded.url, f"?PROLIFIC_PID={PID}", events)
    page.check("#q-enrolled input[value=no]")
    assert visible(page, "#q-enrolled-screen-out")
    page.click("#q-cheated input[data-truth][value=yes]")
    page.click("#rr-submit")
    pump_until(page, lambda: any(kind == "prolific" for kind, _ in events), 30, "the way back")
    assert events == [("prolific", COMPLETION + "SCRN0001")]
    assert watch.posts() == []
    audit_participant_id(watch, context, fielded.url)


def test_a_full_survey_returns_with_the_over_quota_code(
        fielded: Site, context: BrowserContext, watch: Watch) -> None:
    events: list[tuple[str, str]] = []

    def full(route: Route) -> None:
        events.append(("full", "429"))
        route.fulfill(status=429, content_type="application/json", headers={"retry-after": "1"},
                      body=json.dumps({"error": "the survey has reached its limit",
                                       "field": "survey"}))

    page = prolific_page(context, fielded.url, f"?PROLIFIC_PID={PID}", events, full)
    answer_prolific(page)
    pump_until(page, lambda: any(kind == "prolific" for kind, _ in events), 30, "the way back")
    assert events[-1] == ("prolific", COMPLETION + "FULL0001")
    audit_participant_id(watch, context, fielded.url)


def test_a_link_without_an_id_gives_no_code(fielded: Site, context: BrowserContext,
                                            watch: Watch) -> None:
    events: list[tuple[str, str]] = []
    page = prolific_page(context, fielded.url, "", events)
    assert page.evaluate("document.documentElement.dataset.rrPanel") == "missing"
    answer_prolific(page, truth="no")
    page.wait_for_selector("#rr-panel:not([hidden])", timeout=30_000)
    assert "without a Prolific participant id" in page.inner_text("#rr-panel")
    page.wait_for_timeout(2000)
    assert events == []
    body = json.loads(watch.posts("/api/submissions")[-1].body or "{}")
    assert "completion" not in body


# ---- the same in a PostgreSQL store -----------------------------------------------------------


@pytest.fixture(scope="module")
def pg_collector(fielded: Site) -> Iterator[tuple[str, Any, str]]:
    """(url, server, dsn): a collector on PostgreSQL serving the same built site."""
    pg_server = runpy.run_path(str(ROOT / "tests" / "collect" / "pgserver.py"))["PgServer"]
    server = pg_server(settings={"wal_level": "minimal", "max_wal_senders": "0",
                                 "wal_skip_threshold": "0"}).start()
    dsn = server.create_database()
    try:
        with serve(fielded.dist, dsn) as url:
            yield url, server, dsn
    finally:
        server.remove()


def test_the_participant_id_is_nowhere_in_a_postgres_store(
        pg_collector: tuple[str, Any, str], context: BrowserContext, watch: Watch) -> None:
    url, server, dsn = pg_collector
    events: list[tuple[str, str]] = []
    page = prolific_page(context, url, f"?PROLIFIC_PID={PID}&STUDY_ID=st1", events)
    answer_prolific(page)
    pump_until(page, lambda: any(kind == "prolific" for kind, _ in events), 60, "the way back")
    assert events[-1] == ("prolific", COMPLETION + "C1A2B3C4")
    audit_participant_id(watch, context, url)
    dbname = dsn.split("/")[3].split("?")[0]  # postgresql://rrsite@/<name>?host=...
    dump = subprocess.run(
        [str(server.bin / "pg_dump"), "-h", str(server.root), "-p", str(server.port), "-U",
         "rrsite", "--data-only", dbname], check=True, capture_output=True).stdout
    assert completion_hex().encode() in dump  # the record is there, as a digest
    assert PID.encode() not in dump
    server.stop()  # a clean stop: every file of the data directory as a backup holds it
    files = [path for path in server.data.rglob("*") if path.is_file()]
    assert not [str(path) for path in files if PID.encode() in path.read_bytes()]
    server.start()  # the fixture's collector and clean-up expect it running


# ---- accessible, and fits a phone ------------------------------------------------------------

RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }));
}"""


@pytest.mark.parametrize(("path", "arm"), [("campus/", "randomized"), ("campus/de/", "direct"),
                                           (f"prolific-study/?PROLIFIC_PID={PID}", None)])
def test_the_new_pieces_are_accessible_on_a_phone(fielded: Site, browser: Any, path: str,
                                                  arm: str | None) -> None:
    """axe-core finds no serious or critical violation in the language menu, the check, the
    direct arm's notice, the screen-out note; nothing is wider than a 360 px screen."""
    from browserkit import axe_source

    context = browser.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        if arm is not None:
            key = f"rrsite:arm:campus:{fielded.manifest('campus')['version']}"
            page.add_init_script(f"localStorage.setItem({json.dumps(key)}, {json.dumps(arm)})")
        page.goto(fielded.url + path)
        page.wait_for_selector("#rr-submit:not([disabled])", timeout=30_000)
        if arm is not None:
            page.click("#rr-consent-agree")
        else:
            page.check("#q-enrolled input[value=no]")  # the screen-out note
            assert page.is_visible("#q-enrolled-screen-out")
        page.evaluate(axe_source())
        assert page.evaluate(RUN_AXE) == []
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    finally:
        context.close()


@pytest.mark.fresh_profile
def test_forget_removes_the_kept_arm_and_nothing_keeps_it_again(
        fielded: Site, context: BrowserContext, watch: Watch) -> None:
    version = fielded.manifest("campus")["version"]
    key = f"rrsite:arm:campus:{version}"
    page = context.new_page()
    page.goto(fielded.url + "campus/")
    page.wait_for_selector("#rr-submit:not([disabled])", timeout=30_000)
    page.wait_for_function(f"() => localStorage.getItem({json.dumps(key)}) !== null")
    arm = page.evaluate("document.documentElement.dataset.rrArm")
    page.click("#rr-consent-agree")
    page.check("#q-faculty input[value=arts]")
    if arm == "randomized":
        page.check("#q-stimulants_check input[value=yes]")
        page.click("#q-stimulants input[data-truth][value=no]")
    else:
        page.check("#q-stimulants_direct input[value=no]")
    page.click("#q-cheated input[data-truth][value=no]")
    wait_ready(page)
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-done:not([hidden])", timeout=30_000)
    page.click("#rr-forget")
    page.wait_for_function(f"() => localStorage.getItem({json.dumps(key)}) === null")
    page.reload()
    page.wait_for_selector("#rr-answered:not([hidden])", timeout=30_000)  # "forgotten"
    page.wait_for_timeout(500)
    assert page.evaluate(f"localStorage.getItem({json.dumps(key)})") is None
    kept = page.evaluate("Object.keys(localStorage)")
    assert not [name for name in kept if "campus" in name], kept
    # Someone else answers on this device: a draw of their own, kept for them across a reload
    page.click("#rr-someone-else")
    with page.expect_navigation():
        page.click("#rr-someone-start")
    page.wait_for_selector("#rr-form:not([hidden])", timeout=30_000)
    page.wait_for_function(f"() => localStorage.getItem({json.dumps(key)}) !== null")
    drawn = page.evaluate("document.documentElement.dataset.rrArm")
    assert page.evaluate(f"localStorage.getItem({json.dumps(key)})") == drawn
    page.reload()
    page.wait_for_selector("#rr-form:not([hidden])", timeout=30_000)
    assert page.evaluate("document.documentElement.dataset.rrArm") == drawn
    watch.assert_clean()


@pytest.mark.fresh_profile
def test_the_next_person_on_a_panel_link_sees_nothing_and_forget_drops_the_id(
        fielded: Site, context: BrowserContext, watch: Watch) -> None:
    """A shared device: the first participant's answers wait unsent (the collector is down); the
    next one opens their own link and sees none of them; "Forget" on the start page leaves no
    answer, token or participant id on the device, in the address bar or on the screen."""
    events: list[tuple[str, str]] = []

    def down(route: Route) -> None:
        route.fulfill(status=503, content_type="application/json", headers={"retry-after": "1"},
                      body=json.dumps({"error": "the database could not store it", "field": None}))

    first = prolific_page(context, fielded.url, f"?PROLIFIC_PID={PID}", events, down)
    answer_prolific(first)
    first.wait_for_selector("#rr-retry-box:not([hidden])", timeout=30_000)
    stored = first.evaluate("Object.values(localStorage).join('\\n')")
    record = json.loads(next(line for line in stored.split("\n") if line.startswith("{")))
    respondent = record["body"]["respondent"]
    other_pid = "6a7b8c9d0e1f2a3b4c5d6e7f"
    second = context.new_page()
    second.goto(f"{fielded.url}prolific-study/?PROLIFIC_PID={other_pid}")
    second.wait_for_selector("#rr-answered:not([hidden])", timeout=30_000)
    assert respondent not in second.inner_text("body") and PID not in second.content()
    assert second.evaluate("""() => Array.from(document.querySelectorAll('#rr-form input'))
      .filter((i) => i.checked).length""") == 0
    second.click("#rr-forget-start")
    second.wait_for_selector("#rr-show-mine", state="hidden")
    assert other_pid not in second.url and "PROLIFIC_PID" not in second.url
    assert second.evaluate("document.documentElement.dataset.rrPanel") == "missing"
    kept = second.evaluate(STORAGE_DUMP)
    for secret in (PID, other_pid, respondent, json.dumps(record["body"]["answers"])):
        assert secret not in kept
    assert not [line for line in kept.split("\n") if "prolific-study" in line], kept
    # the first participant's tab, reloaded: the answered-and-forgotten screen, nothing sent
    first.reload()
    first.wait_for_selector("#rr-answered:not([hidden])", timeout=30_000)
    assert first.locator("#rr-show-mine").is_hidden()
    assert "C1A2B3C4" not in first.inner_text("body")
    assert [kind for kind, _ in events] == []  # nobody went back to the panel
