"""A simulated respondent: plans true answers, fills the form, reads what the worker returned.

The worker's replies are read inside the worker itself (a wrapper around its postMessage,
installed by the test through Playwright), so a test knows the true answers it typed, the report
rrsite/core returned for them, and what the page then sent, independently of the page's code.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qsl

from playwright.sync_api import Page, Worker

LOG_RESULTS = """() => {
  if (self.__rrLog) return;
  self.__rrLog = [];
  self.__rrViolations = [];
  self.addEventListener("securitypolicyviolation", (event) => {
    self.__rrViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
  });
  const post = self.postMessage.bind(self);
  self.postMessage = (message, ...rest) => {
    if (message && message.type === "result") self.__rrLog.push(structuredClone(message));
    return post(message, ...rest);
  };
}"""

RESET = """() => {
  localStorage.clear();
  document.dispatchEvent(new CustomEvent("rrsite:reset"));
}"""

FORM_DATA = """() => Array.from(document.forms).flatMap((form) =>
  Array.from(new FormData(form).entries()).map(([key, value]) => [key, String(value)]))"""

NAMED_TRUTH_INPUTS = """() => Array.from(document.querySelectorAll(
  "input[data-truth], input[data-innocuous], input[data-innocuous-number]")).filter(
  (i) => i.hasAttribute("name")).length"""


#: Designs answered without a randomizer: the respondent picks the report.
COMBINED = ("crosswise", "triangular", "extended-crosswise")
#: Frequency oracles (rrsite.core.frequency): choice and "tick all that apply" questions.
ORACLES = ("oue", "sue", "olh", "subset", "hadamard")
#: Designs of randomized number questions.
NUMBER_DESIGNS = ("mixture", "mixture-unknown", "additive", "multiplicative", "laplace", "duchi",
                  "piecewise")


def number_truth(q: dict[str, Any], round_index: int) -> str:
    """A true number inside the question's range, different each round, as typed."""
    low = q.get("min") if q.get("min") is not None else 0.0
    high = q.get("max") if q.get("max") is not None else low + 10_000
    share = (0.37 + 0.11 * round_index) % 1.0
    value = low + (high - low) * share
    if q.get("integer"):
        return str(int(round(value)))
    # cents that a report would not carry by chance, so a leak of the number is found by text
    return f"{value + 0.37 if value + 0.37 <= high else value:.2f}"


@dataclass
class Plan:
    """What one respondent answers: true answers of sensitive questions, and the rest."""

    truths: dict[str, str] = field(default_factory=dict)
    innocuous: dict[str, str] = field(default_factory=dict)
    #: Crosswise/triangular questions: the report the respondent picks (no truth enters the page).
    reports: dict[str, str] = field(default_factory=dict)
    direct: dict[str, Any] = field(default_factory=dict)


def least_forced(question: dict[str, Any]) -> str:
    """The value a design is least likely to report regardless of the truth.

    Answering it makes a report that differs from the truth come from the coins, so the test
    can see that the truth does not travel with it.
    """
    values = question["values"]
    matrix = question["matrix"] if "matrix" in question else question["groups"][0]["matrix"]
    if len(matrix[0]) != len(values):  # reports are not the truths (kuk): any truth will do
        return values[0]
    k = len(values)
    # chance that value j is reported when the truth is some other value, averaged
    forced = [sum(matrix[i][j] for i in range(k) if i != j) / (k - 1) for j in range(k)]
    return values[min(range(k), key=lambda j: forced[j])]


def plan_answers(manifest: dict[str, Any], round_index: int) -> Plan:
    """Answers for round ``round_index``: mostly the least-forced truth, sometimes another."""
    plan = Plan()
    for q in manifest["questions"]:
        values = q.get("values") or []
        if not shown(q, plan.direct):
            continue  # fielding: hidden by its show_if, so not answered
        if q["sensitive"] and q["design"]["name"] in COMBINED:
            plan.reports[q["id"]] = q["reports"][round_index % len(q["reports"])]
            continue
        if q["sensitive"] and q["type"] == "multi-choice":  # the JSON list the worker gets
            most = q["design"]["max_ticks"]
            ticks = [values[(round_index + j) % len(values)] for j in range(1 + round_index % most)]
            plan.truths[q["id"]] = json.dumps(ticks, ensure_ascii=False)
            continue
        if q["sensitive"] and q["design"]["name"] in ORACLES:
            plan.truths[q["id"]] = values[(3 + round_index) % len(values)]
            continue
        if q["sensitive"] and q["type"] == "number":
            plan.truths[q["id"]] = number_truth(q, round_index)
            if q.get("innocuous"):
                plan.innocuous[q["id"]] = str(3 + round_index)
            continue
        if q["sensitive"]:
            truth = least_forced(q)
            if round_index % 3 == 2:
                truth = values[(values.index(truth) + 1) % len(values)]
            plan.truths[q["id"]] = truth
            if q["design"]["name"] in ("unrelated", "unrelated-unknown") and q.get("innocuous"):
                plan.innocuous[q["id"]] = values[round_index % len(values)]
            continue
        if not q["required"] and round_index % 2 == 1:
            continue  # optional questions are sometimes left out
        if q["type"] in ("yes-no", "choice"):
            plan.direct[q["id"]] = values[round_index % len(values)]
        elif q["type"] == "multi-choice":
            plan.direct[q["id"]] = values[: 1 + round_index % len(values)]
        elif q["type"] == "number":
            low, high = q.get("min"), q.get("max")
            number: float = (low if low is not None else 0) + 1 + round_index
            if high is not None:
                number = min(number, high)
            if not q.get("integer") and (high is None or number + 0.5 <= high):
                number += 0.5
            plan.direct[q["id"]] = int(number) if float(number).is_integer() else number
        else:
            plan.direct[q["id"]] = f"round {round_index}: ünïcode ✓"
    return plan


def shown(q: dict[str, Any], direct: dict[str, Any]) -> bool:
    """Whether a question's show_if holds for the direct answers planned so far."""
    condition = q.get("show_if")
    if not condition:
        return True
    answer = direct.get(condition["question"])
    chosen = answer if isinstance(answer, list) else [answer]
    return any(value in condition["is"] for value in chosen)


def agree_to_consent(page: Page) -> None:
    """Press "I agree" when the survey asks for consent first."""
    agree = page.locator("#rr-consent-agree")
    if agree.count() and agree.is_visible():
        agree.click()


def go_to_page(page: Page, number: int | None) -> None:
    """On a survey split into pages, use Back/Next until page ``number`` (None: last)."""
    if not page.locator("#rr-pager").count():
        return
    progress = page.locator("#rr-page-progress")
    target = number or int(progress.get_attribute("max") or 1)
    for _ in range(50):
        now = int(page.evaluate("() => document.getElementById('rr-page-progress').value"))
        if now == target:
            return
        page.click("#rr-page-next" if now < target else "#rr-page-back")
    raise AssertionError(f"could not reach page {target}")


def ready_to_submit(page: Page) -> None:
    """Agree to consent and go to the last page, where the submit button is."""
    agree_to_consent(page)
    go_to_page(page, None)


def css_string(value: str) -> str:
    """A CSS string literal."""
    return json.dumps(value, ensure_ascii=False)


def fill(page: Page, manifest: dict[str, Any], plan: Plan) -> None:
    """Answer the form as a respondent would (clicks and typing)."""
    agree_to_consent(page)
    for q in manifest["questions"]:
        qid = q["id"]
        if qid in plan.truths or qid in plan.direct:
            go_to_page(page, q.get("page"))
        if qid in plan.truths and q["type"] == "number":
            page.locator(f"#q-{qid}-input").fill(plan.truths[qid])
            if qid in plan.innocuous:
                page.locator(f"#q-{qid}-innocuous-input").fill(plan.innocuous[qid])
        elif qid in plan.truths and q["type"] == "multi-choice":  # the true ticks
            for value in json.loads(plan.truths[qid]):
                page.locator(f"#q-{qid} input[data-truth][value={css_string(value)}]").check()
        elif qid in plan.truths:
            truth = css_string(plan.truths[qid])
            page.locator(f"#q-{qid} input[data-truth][value={truth}]").check()
            if qid in plan.innocuous:
                page.locator(f"#q-{qid}-innocuous input[data-innocuous]"
                             f"[value={css_string(plan.innocuous[qid])}]").check()
        elif qid in plan.reports:
            page.locator(f"#q-{qid} input[data-report][value={css_string(plan.reports[qid])}]"
                         ).check()
        elif qid in plan.direct:
            value = plan.direct[qid]
            if q["type"] in ("yes-no", "choice"):
                page.locator(f"#q-{qid} input[name={css_string(qid)}][value={css_string(value)}]"
                             ).check()
            elif q["type"] == "multi-choice":
                for item in value:
                    page.locator(f"#q-{qid} input[name={css_string(qid)}]"
                                 f"[value={css_string(item)}]").check()
            else:
                page.locator(f"#q-{qid}-input").fill(str(value))
    go_to_page(page, None)  # the submit button is on the last page


#: A number as a program writes it (a true number's forms in truth_forms of the tests).
NUMBER_FORM = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?")
#: An ISO 8601 time as the page stores it ("2026-11-28T12:31:11.021Z").
TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?")


def written_in(form: str, text: str) -> bool:
    """Whether a true answer written as ``form`` is in ``text``: a number only as a whole
    number, neither as a piece of a longer one or of a word (a file's hash) nor inside a time
    the page stored (the "11.0" of "2026-11-28T12:31:11.021Z" is not the true answer 11),
    anything else anywhere."""
    if NUMBER_FORM.fullmatch(form):
        pattern = rf"(?<![0-9A-Za-z.]){re.escape(form)}(?![0-9A-Za-z]|\.[0-9])"
        return re.search(pattern, TIMESTAMP.sub(" ", text)) is not None
    return form in text


def worker(page: Page) -> Worker:
    """The page's randomizer worker."""
    assert len(page.workers) == 1, [w.url for w in page.workers]
    return page.workers[0]


def log_worker_results(page: Page) -> None:
    """Start recording what the worker returns to the page."""
    worker(page).evaluate(LOG_RESULTS)


def worker_results(page: Page) -> list[dict[str, Any]]:
    """Every reply of the worker to a "respond" message so far."""
    return worker(page).evaluate("() => self.__rrLog")  # type: ignore[no-any-return]


def worker_violations(page: Page) -> list[str]:
    """CSP violations inside the worker since log_worker_results."""
    return worker(page).evaluate("() => self.__rrViolations")  # type: ignore[no-any-return]


def reset(page: Page) -> None:
    """Forget the stored report and start the form afresh (a new respondent)."""
    page.evaluate(RESET)
    page.wait_for_selector("#rr-form:not([hidden])")


def parse_body(target: str, body: str) -> dict[str, Any]:
    """The submission as a dict, from a JSON body or Netlify's urlencoded form fields."""
    if target != "netlify":
        return json.loads(body)  # type: ignore[no-any-return]
    fields = parse_qsl(body, keep_blank_values=True, strict_parsing=True)
    keys = [key for key, _ in fields]
    assert len(keys) == len(set(keys)), keys
    data = dict(fields)
    assert data.pop("form-name")
    return {"survey": data.pop("survey"), "version": data.pop("version"),
            "respondent": data.pop("respondent"), "answers": data}


def netlify_value(value: Any) -> str:
    """How a Netlify form field carries an answer: text; a list as its JSON text."""
    if isinstance(value, list):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def expected_direct(manifest: dict[str, Any], plan: Plan, target: str) -> dict[str, Any]:
    """Direct answers as the body must carry them."""
    out: dict[str, Any] = dict(plan.reports)
    for q in manifest["questions"]:
        if q["id"] in plan.direct:
            value = plan.direct[q["id"]]
            if target == "netlify":
                value = netlify_value(value)
            elif q["type"] == "text":
                value = value.strip()
            out[q["id"]] = value
    return out


def check_transcript(q: dict[str, Any], truth: str, innocuous: str | None,
                     result: dict[str, Any]) -> None:
    """The coins' transcript explains the report (so the report came from the coins and truth)."""
    report, steps = result["report"], result["steps"]
    name = q["design"]["name"]
    if q["type"] == "number":
        check_number_transcript(q, float(truth), innocuous, result)
        return
    if name in ORACLES or "memoize" in q:
        check_oracle_transcript(q, truth, result)
        return
    values = q["values"]
    if "groups" in q:  # two-group designs: the first step is the group's draw
        assert steps[0]["action"] == f"group-{result['group']}", (steps, result)
        steps = steps[1:]
    first = steps[0]["action"] if steps else "truth"
    if name in ("forced-response", "forced-yes") or (name == "matrix" and len(values) == 2):
        assert report == (truth if first == "truth" else steps[-1]["action"]), (steps, report)
    elif name == "warner":
        other = values[1 - values.index(truth)]
        assert report == (truth if first == "statement" else other), (steps, report)
    elif name == "unrelated":
        if first == "sensitive":
            assert report == truth
        else:
            assert report == (innocuous if innocuous is not None else steps[-1]["action"])
    elif name in ("mangat", "sld"):
        assert report == ("yes" if truth == "yes" or steps[0]["action"] == "mirrored" else "no")
    elif name == "cdm":
        assert report == (truth if steps[0]["action"] == "truth" else "yes"), (steps, report)
    elif name == "cdm-sym":
        assert report == (truth if first == "truth" else steps[-1]["action"]), (steps, report)
    elif name == "unrelated-unknown":
        if steps[0]["action"] == "sensitive":
            assert report == truth
        else:
            assert report == (innocuous if innocuous is not None else steps[-1]["action"])
    elif name == "kuk":
        assert report == str(sum(step["action"] == "red" for step in steps)), (steps, report)
        assert len(steps) == q["design"]["cards"]
    elif name == "k-rr":
        assert (report == truth) == (first == "truth"), (steps, report)
    else:
        assert steps[-1]["action"] == f"report-{values.index(report) + 1}"


def check_oracle_transcript(q: dict[str, Any], truth: str, result: dict[str, Any]) -> None:
    """A frequency oracle's or a panel's report follows from the truth and the draws."""
    from rrsite.core.frequency import bucket, hadamard_plus, hadamard_size

    values, design, report, steps = q["values"], q["design"], result["report"], result["steps"]
    name = design["name"]
    ticked = ({values.index(v) for v in json.loads(truth)} if q["type"] == "multi-choice"
              else {values.index(truth)})
    index = next(iter(ticked)) if len(ticked) == 1 else None
    if "memoize" in q:  # the permanent report kept (or drawn now), re-randomized
        table = result["permanent"]
        if name in ("oue", "sue"):
            assert len(steps) == len(values)
            sent = {values.index(v) for v in report}
            for box, (pair, step) in enumerate(zip(table["bits"], steps, strict=True)):
                permanent = pair[0] if box in ticked else pair[1]
                assert (box in sent) == ((permanent == 1) == (step["action"] == "keep")), box
            return
        assert index is not None
        permanent = values[table["reports"][index]]
        assert (report == permanent) == (steps[0]["action"] == "keep"), (steps, report)
        return
    if name in ("oue", "sue"):
        assert len(steps) == len(values)
        assert {values.index(v) for v in report} == {
            box for box, step in enumerate(steps) if step["action"] == "tick"}
    elif name == "olh":
        seed, sent = (int(x) for x in report.split(":"))
        assert steps[0]["action"] == f"hash-{seed}"
        hit = bucket(seed, index, len(values), design["g"]) == sent
        assert hit == (steps[1]["action"] == "truth"), (steps, report)
    elif name == "subset":
        assert (truth in report) == (steps[0]["action"] == "inside"), (steps, report)
        assert len(report) == design["d"]
    else:
        column = int(report)
        assert 0 <= column < hadamard_size(len(values))
        assert hadamard_plus(index, column) == (steps[0]["action"] == "inside"), (steps, report)


def check_number_transcript(q: dict[str, Any], truth: float, innocuous: str | None,
                            result: dict[str, Any]) -> None:
    """A number's report follows from the truth, the number drawn and the operation."""
    report, drawn, operation = result["report"], result.get("drawn"), result["operation"]
    design = q["design"]
    # an answer off the design's report grid is rounded first (rrsite/core, unbiased)
    sent = result.get("rounded", truth)
    assert abs(sent - truth) < 1, result
    if operation == "truth":
        assert report == sent, result
    elif operation == "mask":
        assert report == drawn, result
    elif operation == "add":  # exact in decimals: what the page shows
        assert Fraction(repr(report)) == Fraction(repr(sent)) + Fraction(repr(drawn)), result
    elif operation == "multiply":  # the product, exact, then rounded to the report grid
        product = Fraction(repr(sent)) * Fraction(repr(drawn))
        if "product" in result:
            assert Fraction(repr(result["product"])) == product, result
            assert abs(report - float(product)) <= 1, result
        else:
            assert Fraction(repr(report)) == product, result
    elif operation == "innocuous":
        assert innocuous is not None and report == float(innocuous), result
    elif operation == "noise":  # the truth rounded to the grid, then whole grid steps of noise
        step = 10.0 ** math.floor(math.log10((design["max"] - design["min"]) / 1000))
        assert abs(sent - truth) <= step * 1.000001, result
        assert Fraction(repr(report)) == Fraction(repr(sent)) + Fraction(repr(drawn)), result
    elif operation == "duchi":
        e = math.exp(design["epsilon"])
        c = (e + 1) / (e - 1)
        half = (design["max"] - design["min"]) / 2
        assert any(abs(report - (design["min"] + half * (1 + sign * c))) < 1e-6 * half * c
                   for sign in (-1, 1)), result
    else:
        assert operation == "piecewise", result
        s = math.exp(design["epsilon"] / 2)
        c = (s + 1) / (s - 1)
        half = (design["max"] - design["min"]) / 2
        assert design["min"] + half * (1 - c) - 1e-9 <= report <= design["min"] + half * (1 + c)
    assert operation in {"truth", "mask", "add", "multiply", "innocuous", "noise", "duchi",
                         "piecewise"}
    assert design["name"] in NUMBER_DESIGNS


# ---- DOM hooks of the page (documented in docs/page-hooks.md; shared by every engine's tests) ----

REVIEW = "#rr-review:not([hidden])"
FORM = "#rr-form:not([hidden])"
DONE = "#rr-done:not([hidden])"


def submit(page: Page) -> None:
    """Press the form's submit button ("Randomize and review")."""
    page.click("#rr-submit")


def wait_review(page: Page, timeout_ms: float = 60_000, open_details: bool = True) -> str:
    """Until the review is shown; the exact body it will send.

    ``open_details``: then open its two disclosures (what was chosen and drawn, the exact data),
    as a reader who wants them would, so that the tests can read them.
    """
    page.wait_for_selector(REVIEW, timeout=timeout_ms)
    if open_details:
        open_review_details(page)
    return shown_body(page)


def shown_body(page: Page) -> str:
    """The exact body the review shows (folded away: "The data, exactly as it will be sent")."""
    return page.locator("#rr-body").text_content() or ""


def open_review_details(page: Page) -> None:
    """Open the review's two disclosures (the choice and the draws; the data), as a reader."""
    for box in ("#rr-draws-box", "#rr-body-box"):
        details = page.locator(box)
        if details.is_visible() and details.get_attribute("open") is None:
            page.click(f"{box} > summary")


def confirm(page: Page) -> None:
    """Send (or download) the reviewed report and wait for the closing screen."""
    page.click("#rr-confirm")
    page.wait_for_selector(DONE)


def answer_and_review(page: Page, manifest: dict[str, Any], plan: Plan) -> str:
    """Fill the form with ``plan`` and randomize; the exact body the review shows (its
    disclosures opened)."""
    fill(page, manifest, plan)
    submit(page)
    return wait_review(page)


def answer_and_send(page: Page, manifest: dict[str, Any], plan: Plan) -> None:
    """Fill the form with ``plan``, randomize, and send the review as it opens (its disclosures
    left closed); until the closing screen."""
    fill(page, manifest, plan)
    submit(page)
    wait_review(page, open_details=False)
    confirm(page)


def submit_note(page: Page) -> str:
    """The status line under the submit button."""
    return page.locator("#rr-submit-note").inner_text()


def storage_notice(page: Page) -> str | None:
    """The notice shown before answering when the page cannot keep the report, or None."""
    notice = page.locator("#rr-storage-notice")
    return notice.inner_text() if notice.is_visible() else None


def explanation(page: Page, question_id: str) -> str:
    """The explanation shown under a sensitive question (generated or the author's)."""
    return page.locator(f"#q-{question_id}-explain").inner_text()


def author_help(page: Page, question_id: str) -> str | None:
    """The author's help text of a question, or None."""
    help_text = page.locator(f"#q-{question_id}-help")
    return help_text.inner_text() if help_text.count() else None


def field_error(page: Page, question_id: str) -> str | None:
    """The visible error message of a question, or None."""
    error = page.locator(f"#q-{question_id}-error")
    return error.inner_text() if error.is_visible() else None


def invalid_inputs(page: Page, question_id: str) -> int:
    """How many inputs of a question are marked aria-invalid."""
    return page.locator(f"#q-{question_id} [aria-invalid=true]").count()


def error_summary_visible(page: Page) -> bool:
    """Whether the error summary above the form is shown."""
    return page.locator("#rr-errors").is_visible()


def review_intro(page: Page) -> str:
    """The paragraph introducing the review (stored report: when randomized and sent)."""
    return page.locator("#rr-review-intro").inner_text()


def runtime_status(page: Page) -> dict[str, Any]:
    """The runtime line: html[data-rr-runtime], its text, whether it is shown and announced."""
    return page.evaluate("""() => {
      const text = document.getElementById('rr-runtime-text');
      const box = document.getElementById('rr-runtime');
      return {state: document.documentElement.dataset.rrRuntime, text: text.textContent,
              visible: Boolean(box.offsetParent), live: text.getAttribute('aria-live')};
    }""")  # type: ignore[no-any-return]


def send_error(page: Page) -> str:
    """The message shown when sending failed."""
    return page.locator("#rr-send-error").inner_text()


def retry_offered(page: Page) -> bool:
    """Whether the "Try again" button is shown."""
    return page.locator("#rr-retry-box").is_visible()


def shown_answer(page: Page, question_id: str) -> str | None:
    """The review's answer to a question in the page's language (#rr-answers dd), or None."""
    item = page.locator(f"#rr-answers dd[data-answer-for={css_string(question_id)}]")
    return item.inner_text() if item.count() else None


def option_label(page: Page, question_id: str, value: str) -> str:
    """The label the form shows for an option value of a question."""
    return page.evaluate("""([qid, value]) => {
      const input = Array.from(document.querySelectorAll(`#q-${qid} input`))
        .find((i) => i.value === value);
      return input.labels[0].textContent.trim();
    }""", [question_id, value])  # type: ignore[no-any-return]


def document_width(page: Page) -> int:
    """The document's scroll width (wider than the viewport = something overflows)."""
    return page.evaluate("() => document.documentElement.scrollWidth")  # type: ignore[no-any-return]


def privacy_toggle_height(page: Page) -> float:
    """The height of the "How your answers are protected" toggle."""
    return page.locator(".rr-privacy summary").bounding_box()["height"]  # type: ignore[index]


def forget_answers(page: Page) -> None:
    """Press "Forget my answers on this device" on the closing screen: the page then shows that
    the survey was answered here, and nothing of the answers."""
    page.click("#rr-forget")
    page.wait_for_selector("#rr-answered:not([hidden])")


def local_storage(page: Page) -> dict[str, str]:
    """Everything the page's origin keeps in localStorage."""
    return page.evaluate(  # type: ignore[no-any-return]
        "() => Object.fromEntries(Object.keys(localStorage).map((k) => [k, localStorage[k]]))")


def edit_direct_answers(page: Page) -> None:
    """From the review, go back to the form to fix direct answers (reports stay fixed)."""
    page.click("#rr-edit")
    page.wait_for_selector(FORM)


def question_disabled(page: Page, question_id: str) -> bool:
    """Whether a question's fieldset is disabled (a sensitive one while editing)."""
    return page.evaluate(  # type: ignore[no-any-return]
        "(id) => document.getElementById(`q-${id}`).disabled", question_id)


def transcript_steps(page: Page) -> list[str]:
    """The review's transcript lines (what each coin did, or the rule in result-only review)."""
    return page.locator("#rr-transcript li").all_inner_texts()
