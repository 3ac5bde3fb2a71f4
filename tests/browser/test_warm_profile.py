"""The warm profile the browser tests share (browserkit.WarmProfile) keeps nothing of a test for
the next but the HTTP cache: a test that wrote every storage a page has, added an init script, a
route and a listener and went offline leaves a profile where the next test's page finds none of
it, is online, and gets the runtime's wasm from the cache (no byte transferred), a request the
tests still see."""

from __future__ import annotations

from browserkit import LEFT_BEHIND, Site, WarmProfile, open_survey

SURVEY = "honor-code"
WASM_TRANSFERRED = """() => performance.getEntriesByType('resource')
  .filter((entry) => entry.name.endsWith('pyodide.asm.wasm')).map((entry) => entry.transferSize)"""
LEAVE_EVERYTHING = """async () => {
  localStorage.setItem('rrsite:left', 'by the earlier test');
  sessionStorage.setItem('rrsite:left', 'by the earlier test');
  document.cookie = 'left=by-the-earlier-test; max-age=3600';
  await new Promise((resolve, reject) => {
    const request = indexedDB.open('left-by-the-earlier-test');
    request.onsuccess = () => { request.result.close(); resolve(); };
    request.onerror = () => reject(request.error);
  });
  await caches.open('left-by-the-earlier-test');
  return [localStorage.length, sessionStorage.length, document.cookie !== '',
          (await indexedDB.databases()).length, (await caches.keys()).length];
}"""


def test_a_test_leaves_nothing_but_the_cache(site: Site, warm_profile: WarmProfile) -> None:
    seen: list[str] = []
    with warm_profile.lend() as context:
        page = open_survey(context, site, SURVEY)  # the runtime in the cache (no route yet)
        assert page.evaluate(LEAVE_EVERYTHING) == [1, 1, True, 1, 1]
        context.add_init_script("window.__leftByTheEarlierTest = true;")
        context.route("**/left-by-the-earlier-test", lambda route: route.abort())
        context.on("request", lambda request: seen.append(request.url))
        # its runtime fully loaded before going offline: a download cut off by the switch can
        # leave the browser's cache entry of the wasm unusable, which is no trace of the test's
        other = open_survey(context, site, SURVEY)
        assert other.evaluate("() => window.__leftByTheEarlierTest") is True
        context.set_offline(True)
    requests_of_the_first = len(seen)

    with warm_profile.lend() as context:
        assert context.pages == []
        requested: list[str] = []
        context.on("request", lambda request: requested.append(request.url))
        page = open_survey(context, site, SURVEY)  # online again: the page and runtime load
        assert page.evaluate(LEFT_BEHIND) == [0, 0, "", 0, 0]
        assert page.evaluate("() => window.__leftByTheEarlierTest") is None
        assert page.workers[0].evaluate(WASM_TRANSFERRED) == [0]  # the cache was kept
        # and a response from the cache is still a request the tests see
        assert any(url.endswith("pyodide.asm.wasm") for url in requested)
        # the earlier route is gone: the collector answers (404), the request is not aborted
        assert page.evaluate("() => fetch('/left-by-the-earlier-test').then((r) => r.status)") \
            == 404
    assert len(seen) == requests_of_the_first  # the earlier listener heard nothing more
