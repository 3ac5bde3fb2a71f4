"""Kiosk mode in Chromium: three respondents in a row on one page, offline for the
second, all three arriving exactly once, and nothing of one respondent left for the next."""

from __future__ import annotations

import base64
import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from browserkit import (
    OPERATOR_HEADERS,
    ROOT,
    Watch,
    build_site,
    operator_token_file,
    rrsite,
    serve,
    wait_ready,
    watch_context,
)
from playwright.sync_api import Browser, BrowserContext, Page
from respondent import agree_to_consent, go_to_page, shown_body

SURVEY = "clinic-visit"
SUBMISSIONS = "**/api/submissions"


@pytest.fixture(scope="module")
def kiosk_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """surveys/clinic-visit.md with `mode: kiosk`, built and served by `rrsite serve`."""
    root = tmp_path_factory.mktemp("kiosk")
    text = (ROOT / "surveys" / "clinic-visit.md").read_text(encoding="utf-8")
    source = root / "clinic-visit.md"
    source.write_text(text.replace("language: en\n", "language: en\nmode: kiosk\n", 1),
                      encoding="utf-8")
    build_site(source, root / "dist", "--no-compress")
    with serve(root / "dist", root / "kiosk.db", "--operator-token",
               operator_token_file(root)) as url:
        yield url, root


def storage(page: Page) -> str:
    return page.evaluate("""() => JSON.stringify([Object.entries(localStorage),
                                                   Object.entries(sessionStorage)])""")


def queue(page: Page) -> list[dict]:
    raw = page.evaluate(f"() => localStorage.getItem('rrsite:queue:{SURVEY}')")
    return json.loads(raw) if raw else []


def assert_sealed(entries: list[dict]) -> None:
    """Queued entries as stored: a random id, an IV and ciphertext, nothing else."""
    for entry in entries:
        assert set(entry) == {"id", "iv", "data"}
        assert re.fullmatch(r"[0-9a-f]{32}", entry["id"])
        assert len(base64.b64decode(entry["iv"])) == 12
        # padded to whole blocks of 1024 bytes, plus the 16-byte GCM tag
        assert len(base64.b64decode(entry["data"])) % 1024 == 16
    assert len({entry["iv"] for entry in entries}) == len(entries)


def start_answering(page: Page, visited: str, truth: str, visits: str = "once") -> None:
    """Consent, page 1 and page 2 of a respondent (the age on page 3 is still to come)."""
    agree_to_consent(page)
    go_to_page(page, 1)
    page.check(f"#q-visited input[value='{visited}']")
    if visited == "yes":
        page.check(f"#q-visits input[value='{visits}']")
    go_to_page(page, 2)
    page.check(f"#q-shared_medicine input[value='{truth}']")


def finish_answering(page: Page, age: str) -> dict:
    """Page 3 and confirming; the body the review showed (what the kiosk queues)."""
    go_to_page(page, 3)
    page.check(f"#q-age input[value='{age}']")
    page.click("#rr-submit")
    page.wait_for_selector("#rr-review:not([hidden])", timeout=60_000)
    body: dict = json.loads(shown_body(page))
    page.click("#rr-confirm")
    page.wait_for_selector("#rr-kiosk-next")
    assert page.locator("#rr-done").is_visible()
    return body


def answer(page: Page, visited: str, truth: str, age: str, visits: str = "once") -> dict:
    start_answering(page, visited, truth, visits)
    return finish_answering(page, age)


def blank_for_the_next(page: Page, previous_tokens: list[str]) -> None:
    """What respondent n+1 sees and what the device holds: nothing of respondent n."""
    page.click("#rr-kiosk-next")
    page.wait_for_selector("#rr-consent-agree")
    assert page.locator("#rr-form").evaluate("(form) => form.inert") is True
    assert page.locator("#rr-form input:checked").count() == 0
    assert page.locator("#rr-form textarea, #rr-form input[type=text]").evaluate_all(
        "(inputs) => inputs.every((input) => input.value === '')")
    html = page.content()
    stored = storage(page)
    for token in previous_tokens:
        assert token not in html, "a previous respondent's token is in the page"
    assert shown_body(page) == ""
    assert page.locator("#rr-transcript li").count() == 0
    # nor what the previous respondent chose, nor their reports
    assert page.locator("#rr-chosen dd, #rr-answers dd").count() == 0
    assert f"rrsite:{SURVEY}:" not in stored, "a stored report outlived its respondent"
    assert "rrsite:draft" not in stored and "rrsite:consent" not in stored
    agree_to_consent(page)
    assert page.locator("#rr-page-label").inner_text() == "Page 1 of 3"


def health(url: str) -> dict:
    request = urllib.request.Request(f"{url}api/health", headers=OPERATOR_HEADERS)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def test_three_respondents_one_offline_all_arrive_once(
        kiosk_site: tuple[str, Path], browser: Browser) -> None:
    url, root = kiosk_site
    assert health(url)["submissions"] == 0
    context, watch, page = open_kiosk(browser, url)

    # Respondent 1, online: sent at once.
    answer(page, "yes", "yes", "18-34")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '0'")
    first = [json.loads(r.body or "{}") for r in watch.posts("/api/submissions")]
    assert len(first) == 1
    tokens = [first[0]["respondent"]]
    assert queue(page) == []
    blank_for_the_next(page, tokens)

    # Respondent 2, offline: the report waits in the queue (sealed), holding only what is sent.
    context.set_offline(True)
    body = answer(page, "no", "no", "55 or older")
    assert set(body) == {"survey", "version", "respondent", "answers"}
    assert body["answers"]["visited"] == "no" and "visits" not in body["answers"]
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '1'")
    assert_sealed(queue(page))
    assert page.locator("#rr-kiosk-status").inner_text() == "Waiting for a connection to send: 1"
    tokens.append(body["respondent"])
    blank_for_the_next(page, tokens)

    # Respondent 3, back online, then a reload: the queue survives it and drains.
    context.set_offline(False)
    answer(page, "yes", "no", "35-54")
    page.reload()
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '0'",
                           timeout=30_000)
    assert queue(page) == []
    assert health(url)["submissions"] == 3
    sent = [json.loads(r.body or "{}") for r in watch.posts("/api/submissions")]
    assert body in sent  # respondent 2's body, exactly as the review showed it
    respondents = {s["respondent"] for s in sent}
    assert tokens[1] in respondents and len(respondents) == 3

    rows = exported(root)
    assert len(rows) == 3 and len({row["respondent"] for row in rows}) == 3
    assert sorted(row["answers"]["age"] for row in rows) == ["18-34", "35-54", "55 or older"]
    errors = [e for e in watch.errors if "ERR_INTERNET_DISCONNECTED" not in e]
    assert errors == []
    context.close()


# Every record of every IndexedDB database of the origin, as JSON (a CryptoKey as its type).
DUMP_INDEXEDDB = """async () => {
  const done = (request) => new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const dump = {};
  for (const { name } of await indexedDB.databases()) {
    const db = await done(indexedDB.open(name));
    for (const storeName of db.objectStoreNames) {
      const rows = [];
      await new Promise((resolve, reject) => {
        const cursor = db.transaction(storeName).objectStore(storeName).openCursor();
        cursor.onerror = () => reject(cursor.error);
        cursor.onsuccess = () => {
          const at = cursor.result;
          if (!at) return resolve();
          rows.push([at.key, at.value]);
          at.continue();
        };
      });
      dump[`${name}/${storeName}`] = rows;
    }
    db.close();
  }
  return JSON.stringify(dump, (key, value) => value instanceof CryptoKey
    ? { CryptoKey: value.type, algorithm: value.algorithm.name, extractable: value.extractable }
    : value);
}"""

# Whether the page can read the device key's bytes (it must not: the key is non-extractable).
EXPORT_KEY = """async () => {
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("rrsite-kiosk");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const key = await new Promise((resolve) => {
    const request = db.transaction("keys").objectStore("keys").get("queue");
    request.onsuccess = () => resolve(request.result);
  });
  db.close();
  try {
    await crypto.subtle.exportKey("raw", key);
    return "exported";
  } catch (error) {
    return error.name;
  }
}"""


def device_dump(page: Page) -> dict[str, str]:
    """What the device holds for this origin: localStorage, sessionStorage, IndexedDB."""
    return {
        "localStorage": page.evaluate("() => JSON.stringify(Object.entries(localStorage))"),
        "sessionStorage": page.evaluate("() => JSON.stringify(Object.entries(sessionStorage))"),
        "indexedDB": page.evaluate(DUMP_INDEXEDDB),
    }


def without_draft(session_storage: str) -> str:
    """sessionStorage without the page draft of the respondent now answering (pages.js)."""
    entries = json.loads(session_storage)
    return json.dumps([e for e in entries if not e[0].startswith(f"rrsite:draft:{SURVEY}:")])


def exported(root: Path) -> list[dict]:
    export = root / "export.jsonl"
    rrsite("export", "--db", root / "kiosk.db", "-o", export, timeout=120)
    return [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]


def distinct_posts(watch: Watch) -> list[dict]:
    """The bodies posted to the collector, each once, in the order first tried (a try made
    offline is a request too)."""
    bodies = [r.body for r in watch.posts("/api/submissions") if r.body]
    return [json.loads(body) for body in dict.fromkeys(bodies)]


def open_kiosk(browser: Browser, url: str, *, collector_down: bool = False,
               init_script: str | None = None) -> tuple[BrowserContext, Watch, Page]:
    """A fresh browser (its own context, recorded) with the kiosk page open and ready; with
    ``collector_down`` the collector is unreachable (the page itself still loads)."""
    context = browser.new_context()
    watch = watch_context(context)
    if collector_down:
        context.route(SUBMISSIONS, lambda route: route.abort("internetdisconnected"))
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    page.goto(f"{url}{SURVEY}/")
    page.wait_for_selector("#rr-submit:not([disabled])", state="attached")
    wait_ready(page)
    page.wait_for_selector("html[data-rr-kiosk-store]", state="attached")
    return context, watch, page


def test_an_offline_respondent_is_unreadable_while_the_next_answers(
        kiosk_site: tuple[str, Path], browser: Browser) -> None:
    url, root = kiosk_site
    before = health(url)["submissions"]
    context, watch, page = open_kiosk(browser, url)
    assert page.evaluate("() => document.documentElement.dataset.rrKioskStore") == "sealed"
    assert page.locator("#rr-kiosk-status").is_hidden()

    # Respondent 1, offline, with answers no one else gives here.
    context.set_offline(True)
    first = answer(page, "yes", "yes", "55 or older", visits="5 times or more")
    assert first["answers"]["age"] == "55 or older"
    assert first["answers"]["visits"] == "5 times or more"
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '1'")
    assert_sealed(queue(page))

    # Respondent 2 answers (still offline): what the device and the page hold, read with the
    # tools anyone at the tablet has (devtools' Application tab reads the same stores).
    page.click("#rr-kiosk-next")
    start_answering(page, "no", "no")
    dump = device_dump(page)
    everything = "\n".join(dump.values())
    secrets = [first["respondent"], "55 or older", "5 times or more"]
    for secret in secrets:
        assert secret not in everything, f"respondent 1's {secret!r} is readable on the device"
    assert first["respondent"] not in page.content()
    # The JSON of a submission is nowhere at rest (respondent 2's own page draft aside).
    at_rest = "\n".join([dump["localStorage"], without_draft(dump["sessionStorage"]),
                         dump["indexedDB"]])
    for word in ('"answers"', '"respondent"', "answers", "respondent", "shared_medicine",
                 "/api/submissions", "application/json"):
        assert word not in at_rest, f"{word!r} is readable on the device"
    # The key is there, as a non-extractable AES-GCM key that the page cannot read out.
    keys = json.loads(dump["indexedDB"])["rrsite-kiosk/keys"]
    assert keys == [["queue", {"CryptoKey": "secret", "algorithm": "AES-GCM",
                               "extractable": False}]]
    assert page.evaluate(EXPORT_KEY) == "InvalidAccessError"

    second = finish_answering(page, "18-34")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '2'")
    queued = queue(page)
    assert len(queued) == 2
    assert_sealed(queued)
    for secret in [*secrets, second["respondent"]]:
        assert secret not in json.dumps(queued)

    # Back online: both arrive, in order, exactly once.
    context.set_offline(False)
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '0'",
                           timeout=30_000)
    assert queue(page) == []
    assert health(url)["submissions"] == before + 2
    assert distinct_posts(watch) == [first, second]
    rows = {row["respondent"]: row for row in exported(root)}
    for body in (first, second):
        assert rows[body["respondent"]]["answers"] == body["answers"]
    errors = [e for e in watch.errors if "ERR_INTERNET_DISCONNECTED" not in e]
    assert errors == []
    assert watch.violations() == []  # WebCrypto and IndexedDB need nothing of the page's CSP
    context.close()


def test_a_sealed_queue_survives_a_reload_and_drains(
        kiosk_site: tuple[str, Path], browser: Browser) -> None:
    url, root = kiosk_site
    before = health(url)["submissions"]
    # The collector is unreachable (the page itself still loads): the report waits.
    context, watch, page = open_kiosk(browser, url, collector_down=True)
    body = answer(page, "yes", "no", "35-54", visits="2 to 4 times")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '1'")
    [entry] = queue(page)
    assert_sealed([entry])

    page.reload()
    page.wait_for_selector("html[data-rr-kiosk-store=sealed]", state="attached")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '1'")
    assert queue(page) == [entry]  # still there, still sealed, not sent
    assert page.locator("#rr-kiosk-status").inner_text() == "Waiting for a connection to send: 1"

    # The collector is back: the next retry opens the entry with the device key and sends it.
    context.unroute(SUBMISSIONS)
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '0'",
                           timeout=30_000)
    assert queue(page) == []
    assert health(url)["submissions"] == before + 1
    delivered = [json.loads(r.body or "{}") for r in watch.posts("/api/submissions")
                 if r.body and body["respondent"] in r.body]
    assert delivered[-1] == body
    rows = [row for row in exported(root) if row["respondent"] == body["respondent"]]
    assert len(rows) == 1 and rows[0]["answers"] == body["answers"]
    context.close()


def test_entries_whose_key_is_gone_are_kept_apart_and_counted(
        kiosk_site: tuple[str, Path], browser: Browser) -> None:
    """Someone deleted the site's IndexedDB but not its localStorage: the sealed entry cannot be
    opened any more; it is neither sent nor dropped silently."""
    url, _ = kiosk_site
    before = health(url)["submissions"]
    context, watch, page = open_kiosk(browser, url, collector_down=True)
    answer(page, "no", "yes", "18-34")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '1'")
    [entry] = queue(page)
    page.evaluate("""() => new Promise((resolve, reject) => {
      const request = indexedDB.deleteDatabase("rrsite-kiosk");
      request.onsuccess = resolve;
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error("blocked"));
    })""")
    # The page keeps retrying while it is open: it is left (its retries end with it) before the
    # refused tries are counted and the collector is reachable again, then opened anew.
    kiosk_url = page.url
    page.goto("about:blank")
    tried = len(watch.posts("/api/submissions"))  # the tries the route refused
    context.unroute(SUBMISSIONS)
    page.goto(kiosk_url)
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '0'",
                           timeout=30_000)
    assert page.locator("#rr-kiosk-status").inner_text() == (
        "No longer readable on this device (its key is gone), not sent: 1")
    unreadable = page.evaluate(f"() => localStorage.getItem('rrsite:unreadable:{SURVEY}')")
    assert json.loads(unreadable) == [entry]
    assert health(url)["submissions"] == before
    assert len(watch.posts("/api/submissions")) == tried  # nothing sent after the reload
    context.close()


# Init scripts that take sealing away before any page script runs.
NO_SUBTLE = "Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined });"
NO_INDEXEDDB = """IDBFactory.prototype.open = function () {
  throw new DOMException('IndexedDB is off in this test', 'InvalidStateError');
};"""


@pytest.mark.parametrize("removal", [NO_SUBTLE, NO_INDEXEDDB], ids=["no-webcrypto", "no-indexeddb"])
def test_without_sealing_the_queue_stays_in_memory_and_the_status_says_so(
        kiosk_site: tuple[str, Path], browser: Browser, removal: str) -> None:
    url, root = kiosk_site
    before = health(url)["submissions"]
    context, watch, page = open_kiosk(browser, url, init_script=removal)
    assert page.evaluate("() => document.documentElement.dataset.rrKioskStore") == "memory"
    # Said before anyone answers.
    warning = ("This browser cannot lock answers waiting on this device, so they are kept only "
               "while this page stays open: reloading or closing it loses those not yet sent.")
    assert page.locator("#rr-consent-agree").is_visible()
    assert page.locator("#rr-kiosk-status").is_visible()
    assert page.locator("#rr-kiosk-status").inner_text() == warning

    context.set_offline(True)
    body = answer(page, "yes", "yes", "55 or older", visits="5 times or more")
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '1'")
    assert page.locator("#rr-kiosk-status").inner_text() == (
        f"{warning} · Waiting for a connection to send: 1")
    page.click("#rr-kiosk-next")
    start_answering(page, "no", "no")
    stored = page.evaluate("() => JSON.stringify(Object.entries(localStorage))")
    assert f"rrsite:queue:{SURVEY}" not in stored
    for secret in (body["respondent"], "55 or older", "5 times or more", "answers", "respondent"):
        assert secret not in stored

    context.set_offline(False)
    page.wait_for_function("() => document.documentElement.dataset.rrQueue === '0'",
                           timeout=30_000)
    assert health(url)["submissions"] == before + 1
    assert distinct_posts(watch) == [body]
    assert page.locator("#rr-kiosk-status").inner_text() == warning
    context.close()
