"""A shared device (a library or lab computer): a later visitor never sees an earlier respondent.

- The tab that answered shows its stored report on a reload, and never flashes an empty form
  first; any other tab (the next person) opens on "This survey was already answered on this
  device" with none of the answers, reports or token anywhere in the page, and can answer as
  someone else once the one-randomization rule is said ("Someone else is answering now").
  "I answered: show my answers" shows the stored report: an action only that person would take.
- "Forget" is on the start page too; after it, every storage the page uses (localStorage,
  sessionStorage, cookies, IndexedDB, Cache Storage) holds nothing of the respondent: not the
  invitation code, not the blind token, not the respondent token, not an answer or a report. All
  that stays is a salted marker that this version was answered (a SHA-256 under a random
  per-device salt), and the invitation code is gone from the address bar.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import pytest
from browserkit import (
    ROOT,
    STORAGE_OBJECT,
    Site,
    Watch,
    blind_collector,
    invitation_code,
    open_link,
    open_survey,
)
from playwright.sync_api import BrowserContext, Page
from respondent import DONE, confirm, fill, plan_answers, shown_body, submit, wait_review

pytestmark = pytest.mark.fresh_profile  # a shared device: what the next person finds

SURVEY = "honor-code"
MESSAGES = json.loads((ROOT / "templates" / "messages" / "en.json").read_text("utf-8"))

# Every state the page shows while it starts, with whether the form could be seen then.
WATCH_FORM = """
window.__rrSeen = [];
const look = () => {
  const form = document.getElementById("rr-form");
  if (!form) return;
  const style = getComputedStyle(form);
  window.__rrSeen.push([document.documentElement.dataset.rrState || "",
    !form.hidden && style.visibility !== "hidden" && style.display !== "none"]);
};
document.addEventListener("DOMContentLoaded", () => {
  look();
  new MutationObserver(look).observe(document.documentElement, { attributes: true, subtree: true,
    attributeFilter: ["data-rr-state", "hidden"] });
});
"""

# Everything the page keeps on the device.
STORAGE = STORAGE_OBJECT


def new_tab(context: BrowserContext, url: str) -> Page:
    """Another tab of the same browser: the next person at the device."""
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("html:not([data-rr-state=starting])", state="attached")
    return page


def page_text(page: Page) -> str:
    """Everything in the page's DOM but its two JSON blocks (configuration and messages)."""
    return page.evaluate("""() => Array.from(document.body.querySelectorAll('*'))
      .filter((e) => !e.closest('script')).map((e) => e.childNodes)
      .flatMap((nodes) => Array.from(nodes)).filter((n) => n.nodeType === 3)
      .map((n) => n.textContent).join(' ')""")


def assert_answered_screen(page: Page, *, record: bool) -> None:
    page.wait_for_selector("#rr-answered:not([hidden])")
    assert page.locator("#rr-answered-title").inner_text() == MESSAGES["answered_title"]
    assert page.locator("#rr-form").is_hidden() and page.locator("#rr-review").is_hidden()
    assert page.locator("#rr-show-mine").is_visible() == record
    assert page.locator("#rr-forget-start").is_visible() == record
    for part in ("#rr-answers", "#rr-chosen", "#rr-transcript", "#rr-body"):
        assert page.locator(part).inner_html() == "", part


def test_a_later_visitor_sees_no_answers_and_can_answer_as_someone_else(
        site: Site, context: BrowserContext, watch: Watch) -> None:
    manifest = site.manifest(SURVEY)
    context.add_init_script(WATCH_FORM)
    first = open_survey(context, site, SURVEY)
    fill(first, manifest, plan_answers(manifest, 0))
    submit(first)
    body = json.loads(wait_review(first))
    confirm(first)

    # The same tab, reloaded: its own report, never an empty form first.
    first.reload()
    first.wait_for_selector("#rr-review:not([hidden])")
    assert json.loads(shown_body(first)) == body
    assert [seen for seen in first.evaluate("() => window.__rrSeen") if seen[1]] == []

    # The next person, in another tab: the "already answered" screen, nothing of the first.
    second = new_tab(context, site.page_url(SURVEY))
    assert_answered_screen(second, record=True)
    assert second.locator("#rr-answered-text").inner_text() == MESSAGES["answered_sent"]
    assert [seen for seen in second.evaluate("() => window.__rrSeen") if seen[1]] == []
    assert body["respondent"] not in page_text(second)
    # no answer of the first person in the (hidden) form either: nothing checked or typed
    assert second.evaluate("""() => Array.from(document.querySelectorAll('#rr-form input'))
      .filter((i) => i.checked || (i.type === 'text' && i.value)).length""") == 0
    assert second.evaluate("() => document.documentElement.dataset.rrRuntime") == "not-needed"

    # "I answered: show my answers": the stored report, in this tab from now on.
    second.click("#rr-show-mine")
    second.wait_for_selector("#rr-review:not([hidden])")
    assert json.loads(shown_body(second)) == body
    second.close()

    # Another person: the rule first, then a fresh form; their own answer, their own token.
    third = new_tab(context, site.page_url(SURVEY))
    assert_answered_screen(third, record=True)
    third.click("#rr-someone-else")
    assert third.locator("#rr-someone").inner_text().count(MESSAGES["someone_rule"]) == 1
    assert third.locator("#rr-someone-unsent").is_hidden()  # the first answers were sent
    with third.expect_navigation():
        third.click("#rr-someone-start")
    third.wait_for_selector("#rr-form:not([hidden])")
    third.wait_for_selector("html[data-rr-runtime=ready]", state="attached", timeout=90_000)
    fill(third, manifest, plan_answers(manifest, 1))
    submit(third)
    other = json.loads(wait_review(third))
    confirm(third)
    posts = [json.loads(post.body or "{}") for post in watch.posts("/api/submissions")]
    assert [post["respondent"] for post in posts] == [body["respondent"], other["respondent"]]
    assert other["respondent"] != body["respondent"]

    # Forget from the thanks screen: nothing of either respondent stays; the next tab opens on
    # the answered-and-forgotten screen, which offers only "Someone else".
    third.click("#rr-forget")
    assert_answered_screen(third, record=False)
    assert third.locator("#rr-answered-text").inner_text() == MESSAGES["answered_forgotten"]
    kept = third.evaluate(STORAGE)
    assert_only_the_marker(kept, manifest, [body, other])
    fourth = new_tab(context, site.page_url(SURVEY))
    assert_answered_screen(fourth, record=False)
    watch.assert_clean()


def assert_only_the_marker(kept: dict, manifest: dict, bodies: list[dict],
                           secrets: tuple[str, ...] = ()) -> None:
    """Storage holds the salt and the salted marker of this version, and nothing else."""
    local = dict(kept["local"])
    salt = local.pop("rrsite:salt")
    assert list(local.values()) == ["1"], local
    (key,) = local
    expected = hashlib.sha256(f"{salt}\n{manifest['id']}\n{manifest['version']}".encode())
    assert key == f"rrsite:answered:{expected.hexdigest()}"
    assert kept["session"] == {} and kept["cookies"] == ""
    assert kept["indexedDB"] == [] and kept["caches"] == []
    everything = json.dumps(kept)
    for body in bodies:
        assert body["respondent"] not in everything
        assert json.dumps(body["answers"]) not in everything
    for secret in secrets:
        assert secret not in everything
    assert manifest["id"] not in everything


@pytest.fixture(scope="module")
def blind_link(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(url, link fragment): a collector of its own on the session's site, one blind code."""
    with blind_collector(site.dist, tmp_path_factory.mktemp("shared-blind"), SURVEY, 1) as (
            url, _, (fragment,)):
        yield url, fragment


def test_forget_on_the_start_page_leaves_no_code_token_answer_or_report(
        site: Site, blind_link: tuple[str, str], context: BrowserContext, watch: Watch) -> None:
    url, fragment = blind_link
    code = invitation_code(fragment)
    manifest = site.manifest(SURVEY)
    page, state = open_link(context, url, SURVEY, fragment)
    assert state in ("ready", "failed")
    fill(page, manifest, plan_answers(manifest, 0))
    submit(page)
    body = json.loads(wait_review(page))  # not sent: the answers wait on the device
    token = body["token"]
    before = page.evaluate(STORAGE)
    assert code in json.dumps(before) and token["sig"] in json.dumps(before)  # kept until now

    # The next person opens the same address: the answered screen; they forget it all.
    other = new_tab(context, f"{url}{SURVEY}/#{fragment}")
    assert_answered_screen(other, record=True)
    assert other.locator("#rr-answered-text").inner_text() == MESSAGES["answered_unsent"]
    other.click("#rr-forget-start")
    other.wait_for_selector("#rr-show-mine", state="hidden")
    assert other.evaluate("() => window.location.hash") == ""
    kept = other.evaluate(STORAGE)
    assert_only_the_marker(kept, manifest, [body], (code, token["msg"], token["sig"]))
    # the first tab too keeps nothing once reloaded (its tab's claim went with the report)
    page.reload()
    assert_answered_screen(page, record=False)
    assert_only_the_marker(page.evaluate(STORAGE), manifest, [body], (code, token["sig"]))
    assert watch.posts("/api/submissions") == []
    page.wait_for_selector(DONE, state="hidden")
    watch.assert_clean()
