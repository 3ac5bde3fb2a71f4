"""A respondent at human speed: how long they wait after "Randomize and review".

Run: python benchmarks/page_human.py [--runs 3] [--links 10mbit,phone]
                                    [--surveys honor-code,workplace]

The simulated respondent (timings fixed here and printed with the figures):

- opens the page and, once the form is shown (the page's ``rr-interactive`` mark), reads the
  opening text for READ_S = 8 s; where the survey asks for consent, presses "I agree" then;
- answers each question it is shown in QUESTION_S = 4 s (the answer is given at the end of
  those 4 s);
- presses "Randomize and review" right after the last answer.

"wait" is the time from that press to the review being shown, measured in the page
(``performance.now()`` at the click and when ``#rr-review`` loses ``hidden``): 0 means the
randomizer was ready before the respondent was. The anchors, loaded in the same run on the same
link: "plain" (the form of benchmarks/page_load.py with randomized response in 30 lines of plain
JavaScript: the same respondent, so the wait of a page that needs no runtime), and "bare" (a
bare Pyodide start in a module worker with Pyodide's full standard library): its wait is the one
a respondent answering as many questions as the first survey would have had, press time =
interactive + READ_S + QUESTION_S x questions.

Each page is loaded cold (a fresh browser profile) and warm (again in that profile, a repeat
visit); the first survey's profile then opens the second survey ("other survey, same host"), to
show that a second survey on the same host starts with the runtime cached. Figures are medians
over the runs; the machine's load average is printed beside them.

"transfer" is the time the cold visit's bytes need on the link: bytes x 8 / rate plus
TRANSFER_RTTS round trips (the connection, TLS, the page, its modules and the worker, the
runtime's files: the longest chain of requests that depend on each other). "ready/transfer" is
the randomizer-ready time over it: 1.00x would be a start limited by the link alone.

Same machinery as benchmarks/page_load.py: `rrsite build` of the surveys from surveys/,
pre-compressed assets and `_headers`, served over HTTPS on 127.0.0.1, headless Chromium
(Debian's /usr/bin/chromium) with Chromium's own link and CPU emulation.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for folder in (str(HERE), str(ROOT)):
    if folder not in sys.path:
        sys.path.insert(0, folder)

import page_load  # noqa: E402
from page_load import Link, SiteServer, median, tear_down  # noqa: E402

#: Seconds the respondent reads the opening text (and the consent, where there is one).
READ_S = 8.0
#: Seconds the respondent takes to answer one question.
QUESTION_S = 4.0
#: Round trips of the longest chain of dependent requests (see the module docstring).
TRANSFER_RTTS = 5
TIMEOUT_S = 240

LINKS = {
    "local": Link("localhost"),
    "10mbit": Link("10 Mbit/s, 40 ms latency", throughput=10e6 / 8, latency_ms=40),
    "phone": Link("phone: 1.6 Mbit/s, 150 ms latency, CPU 4x slower", throughput=1.6e6 / 8,
                  latency_ms=150, cpu_slowdown=4.0),
}

WATCH_JS = """() => {
  window.__rrPressed = null;
  window.__rrShown = null;
  const review = document.getElementById("rr-review");
  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest("#rr-submit") && window.__rrPressed === null) {
      window.__rrPressed = performance.now();
    }
  }, true);
  const seen = () => {
    if (window.__rrShown === null && review && !review.hidden) window.__rrShown = performance.now();
  };
  if (review) new MutationObserver(seen).observe(review, { attributes: true });
  return true;
}"""
WAIT_JS = "() => [window.__rrPressed, window.__rrShown]"
MARK_JS = """(name) => {
  const mark = performance.getEntriesByName(name)[0];
  return mark ? mark.startTime : null;
}"""
CLEAR_JS = "() => { localStorage.clear(); sessionStorage.clear(); }"


def build_surveys(folder: Path, names: list[str]) -> tuple[Path, dict[str, dict[str, Any]]]:
    """The surveys of surveys/ named, built with page_load's anchor pages; their manifests."""
    dist, bench_id = page_load.build_site(folder)
    work = folder / "human"
    work.mkdir()
    subprocess.run([sys.executable, "-m", "rrsite", "build",
                    *(str(ROOT / "surveys" / f"{name}.md") for name in names),
                    str(folder / "surveys"), "-o", str(work / "dist")],
                   check=True, cwd=ROOT, capture_output=True, timeout=900)
    # One site: the anchor pages of page_load and the surveys, sharing one runtime folder.
    for name in names:
        shutil.copytree(work / "dist" / name, dist / name)
    assets = dist / "_rr"
    for path in (work / "dist" / "_rr").rglob("*"):
        target = assets / path.relative_to(work / "dist" / "_rr")
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif not target.exists():
            shutil.copy2(path, target)
    manifests = {name: json.loads((dist / name / "survey.json").read_text("utf-8"))
                 for name in names}
    del bench_id
    return dist, manifests


def wait_for_mark(page: Any, name: str, limit_s: float = TIMEOUT_S) -> float:
    """Poll the page until performance mark ``name`` exists; its startTime in ms."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        value = page.evaluate(MARK_JS, name)
        if value is not None:
            return float(value)
        time.sleep(0.05)
    raise TimeoutError(f"no {name} mark after {limit_s} s")


def answer(page: Any, manifest: dict[str, Any] | None) -> int:
    """Answer like a person: READ_S, consent, then one question each QUESTION_S; the count."""
    from tests.browser import respondent

    time.sleep(READ_S)
    if manifest is None:  # the plain page: its two questions
        for fieldset in ("q-violated", "q-year"):
            time.sleep(QUESTION_S)
            page.locator(f"#{fieldset} label").first.click()
        return 2
    respondent.agree_to_consent(page)
    plan = respondent.plan_answers(manifest, 0)
    asked = 0
    for q in manifest["questions"]:
        qid = q["id"]
        if not any(qid in part for part in (plan.truths, plan.direct, plan.reports)):
            continue
        one = respondent.Plan(
            truths={k: v for k, v in plan.truths.items() if k == qid},
            innocuous={k: v for k, v in plan.innocuous.items() if k == qid},
            reports={k: v for k, v in plan.reports.items() if k == qid},
            direct={k: v for k, v in plan.direct.items() if k == qid})
        time.sleep(QUESTION_S)
        respondent.fill(page, manifest, one)
        asked += 1
    return asked


def visit(context: Any, url: str, server: SiteServer, link: Link,
          manifest: dict[str, Any] | None, human: bool) -> dict[str, float | None]:
    """One visit: figures in ms and bytes (wait: press to review)."""
    page = context.new_page()
    link.apply(context, page)
    server.reset()
    page.goto(url, wait_until="commit")
    interactive = wait_for_mark(page, "rr-interactive")
    result: dict[str, float | None] = {"interactive": interactive, "wait": None}
    if human:
        page.evaluate(WATCH_JS)
        result["questions"] = answer(page, manifest)
        page.click("#rr-submit")
        page.wait_for_selector("#rr-review:not([hidden])", timeout=TIMEOUT_S * 1000)
        pressed, shown = page.evaluate(WAIT_JS)
        result["wait"] = None if pressed is None or shown is None else shown - pressed
        result["pressed"] = pressed
    result["ready"] = wait_for_mark(page, "rr-ready")
    page_load.settle(server)
    result["bytes"] = server.counters.total
    result["runtime_bytes"] = server.counters.runtime
    page.evaluate(CLEAR_JS)
    page.close()
    return result


def profile_loads(playwright: Any, base: str, server: SiteServer, spki: str, link: Link,
                  page_name: str, path: str, manifest: dict[str, Any] | None,
                  other: str | None) -> dict[str, dict[str, float | None]]:
    """A fresh profile: cold, warm, and (for the first survey) another survey of the host."""
    with page_load.fresh_profile(playwright, spki) as context:
        human = page_name != "bare"
        loads = {"cold": visit(context, base + path, server, link, manifest, human),
                 "warm": visit(context, base + path, server, link, manifest, human)}
        if other is not None:
            loads["other"] = visit(context, base + other, server, link, None, False)
        return loads


def transfer_ms(link: Link, size: float | None) -> float | None:
    """The cold visit's bytes at the link's rate plus TRANSFER_RTTS round trips, in ms."""
    if size is None or link.throughput is None:
        return None
    return size / link.throughput * 1000 + TRANSFER_RTTS * link.latency_ms


def fmt(value: float | None, unit: str = "ms") -> str:
    """A figure for the table."""
    if value is None:
        return "-"
    if unit == "MB":
        return f"{value / 1e6:.2f}"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:,.0f}"


def main(argv: list[str] | None = None) -> int:
    """Measure, then print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh profiles per page and link")
    parser.add_argument("--links", default="10mbit,phone", help="local, 10mbit, phone")
    parser.add_argument("--surveys", default="honor-code,workplace",
                        help="surveys/ files (without .md); the first is the three-question one")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    names = args.surveys.split(",")
    work = Path(tempfile.mkdtemp(prefix="rr-human-"))
    results: dict[str, dict[str, dict[str, list[dict[str, float | None]]]]] = {}
    loads_seen: list[float] = []
    server: SiteServer | None = None
    try:
        print("building the site ...", flush=True)
        dist, manifests = build_surveys(work, names)
        cert, key, spki = page_load.make_certificate(work)
        server = page_load.start_server(dist, cert, key)
        base = f"https://127.0.0.1:{server.server_address[1]}/"
        pages: list[tuple[str, str, dict[str, Any] | None, str | None]] = [
            (name, f"{name}/", manifests[name],
             f"{names[1]}/" if index == 0 and len(names) > 1 else None)
            for index, name in enumerate(names)]
        pages += [("plain", "_bench/plain/", None, None), ("bare", "_bench/bare/", None, None)]
        with sync_playwright() as playwright:
            for link_name in args.links.split(","):
                link = LINKS[link_name]
                for run in range(args.runs):
                    loads_seen.append(os.getloadavg()[0])
                    print(f"{link.name}: run {run + 1} of {args.runs} (load "
                          f"{loads_seen[-1]:.1f}) ...", flush=True)
                    for page_name, path, manifest, other in pages:
                        loads = profile_loads(playwright, base, server, spki, link, page_name,
                                              path, manifest, other)
                        per_page = results.setdefault(link_name, {}).setdefault(page_name, {})
                        for kind, figures in loads.items():
                            per_page.setdefault(kind, []).append(figures)
    finally:
        tear_down(server, work)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print_report(results, names, args.runs, loads_seen)
    return 0


def print_report(results: dict[str, dict[str, dict[str, list[dict[str, float | None]]]]],
                 names: list[str], runs: int, loads_seen: list[float]) -> None:
    """The Markdown table of medians and the lines against the targets."""
    print(f"\nRespondent: reads {READ_S:g} s after the form shows, then {QUESTION_S:g} s per "
          f"question, then presses \"Randomize and review\". Medians over {runs} fresh profiles; "
          f"1-minute load average during the run {min(loads_seen):.1f}-{max(loads_seen):.1f} on "
          f"{os.cpu_count()} cores. ms from navigation start; MB = 10^6 bytes sent by the "
          "server.\n")
    print("| link | page | questions | wait cold | wait warm | ready cold | ready warm | "
          "MB cold | transfer cold | ready/transfer | runtime MB warm | other survey: ready, "
          "runtime MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for link_name, pages in results.items():
        link = LINKS[link_name]
        first_questions = median([load.get("questions") for load in
                                  pages.get(names[0], {}).get("cold", [])]) or 3
        for page_name, kinds in pages.items():
            f = {f"{key}_{kind}": median([load.get(key) for load in loads])
                 for kind, loads in kinds.items() for key in
                 ("wait", "ready", "bytes", "runtime_bytes", "interactive", "questions")}
            if page_name == "bare":  # the wait a respondent would have had
                human = READ_S * 1000 + QUESTION_S * 1000 * first_questions
                for kind in ("cold", "warm"):
                    waits = [max(0.0, (load["ready"] or 0) - (load["interactive"] or 0) - human)
                             for load in kinds[kind]]
                    f[f"wait_{kind}"] = median(list(waits))
            transfer = transfer_ms(link, f["bytes_cold"])
            share = None if transfer is None or f["ready_cold"] is None else \
                f["ready_cold"] / transfer
            other = (f"{fmt(f.get('ready_other'))}, {fmt(f.get('runtime_bytes_other'), 'MB')}"
                     if "ready_other" in f else "-")
            questions = f["questions_cold"] if page_name != "bare" else first_questions
            print(f"| {link.name} | {page_name} | {fmt(questions)} | {fmt(f['wait_cold'])} | "
                  f"{fmt(f['wait_warm'])} | {fmt(f['ready_cold'])} | {fmt(f['ready_warm'])} | "
                  f"{fmt(f['bytes_cold'], 'MB')} | {fmt(transfer)} | {fmt(share, 'x')} | "
                  f"{fmt(f['runtime_bytes_warm'], 'MB')} | {other} |")
    print(f"\nTargets: wait 0 cold on both links for {names[0]}; cold visit <= 3.0 MB; "
          "ready/transfer <= 1.05x on the phone link.")


if __name__ == "__main__":
    sys.exit(main())
