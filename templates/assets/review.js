// rrsite respondent page: the review before sending, the transcript of the draws, sending, the
// thanks screen, the "already answered" screen of a shared device, forgetting, and editing the
// direct answers before sending.
//
// The review reads at a glance: what will be sent comes first, each randomized answer with one
// short sentence of what the device drew; what the respondent chose, every step of the draws and
// the exact data are folded away under two disclosures for those who want them.

import {
  $, coinQuestions, config, confirmButton, directQuestions, form, formatDate, isCombined, optionLabel,
  questionElement, questionText, questions, retryBox, review, sendError, sendStatus,
  sensitiveQuestions, state, submitNote, t, target,
} from "./shared.js";
import { deviceIcon, describeStep, explainDesign, glanceSentence, stepRule } from "./explain.js";
import { readForm, setDirectAnswer, showErrors } from "./form.js";
import { destinationText, downloadFile, outgoing, post } from "./send.js";
import { clearRespondent, markerKey, storage } from "./storage.js";

/** Back to the form to fix direct answers; the sensitive reports stay as randomized. */
export function editDirectAnswers() {
  if (!state.current || state.current.record.sent_at) return;
  state.editing = state.current.record;
  for (const q of directQuestions) setDirectAnswer(q, state.editing.body.answers[q.id]);
  for (const q of sensitiveQuestions) {
    const element = questionElement(q);
    if (element) {
      element.disabled = true;
      element.dataset.fixed = "true";
    }
    const explain = $(`q-${q.id}-explain`);
    const label = answerText(q, state.editing.body.answers[q.id]);
    if (explain) explain.textContent = t(isCombined(q) ? "edit_fixed_combined" : "edit_fixed", { label });
  }
  const innocuous = document.querySelectorAll("[data-innocuous-for]");
  for (const box of innocuous) box.disabled = true;
  review.hidden = true;
  clearDraws();
  form.hidden = false;
  $("rr-submit-note").textContent = t(drawnFor(state.editing.body) ? "edit_note" : "edit_note_plain");
  const first = directQuestions.length && questionElement(directQuestions[0]);
  if (first) first.scrollIntoView({ block: "start" });
  const input = first && first.querySelector("input, textarea");
  if (input) input.focus();
}

/** Save edited direct answers into the stored record (same token, same reports) and review it. */
export function saveEditedAnswers() {
  const { errors, direct } = readForm();
  if (errors.length) {
    showErrors(errors);
    return;
  }
  const record = state.editing;
  const answers = {};
  for (const q of questions) {
    if (q.sensitive) {
      if (Object.prototype.hasOwnProperty.call(record.body.answers, q.id)) answers[q.id] = record.body.answers[q.id];
    } else if (Object.prototype.hasOwnProperty.call(direct, q.id)) {
      answers[q.id] = direct[q.id];
    }
  }
  record.body.answers = answers;
  storage.save(record);
  state.editing = null;
  $("rr-submit-note").textContent = submitNote();
  showReview(record, { restored: false, edited: true });
}

export function renderTranscript(results, items) {
  const box = $("rr-transcript");
  box.replaceChildren();
  state.glance = {};
  if (results.length) {
    const title = document.createElement("h3");
    title.id = "rr-transcript-title";
    title.textContent = t(config.review === "result-only" ? "transcript_title_result_only" : "transcript_title");
    box.append(title);
  }
  for (let result of results) {
    const q = sensitiveQuestions.find((candidate) => candidate.id === result.id);
    const item = items.find((candidate) => candidate.question.id === result.id);
    const section = document.createElement("section");
    section.className = "rr-transcript-question";
    section.dataset.question = q.id;
    const heading = document.createElement("h4");
    heading.textContent = questionText(q);
    const list = document.createElement("ol");
    list.className = "rr-steps";
    const counters = {};
    if (config.review === "result-only") {
      // A shared screen: the report and the rule that produced it, not what the coins did.
      const rule = document.createElement("li");
      rule.className = "rr-rule";
      rule.textContent = explainDesign(q) || t("review_as_given");
      list.append(rule);
      result = { ...result, steps: [] };
      list.dataset.review = "result-only";
    }
    const numbers = q.type === "number" && window.rrsiteNumbers ? window.rrsiteNumbers.transcript(q, result, item, t, stepRule)
      : window.rrsiteOracles && window.rrsiteOracles.handles(q) ? window.rrsiteOracles.transcript(q, result, item, t) : null;
    if (numbers && config.review !== "result-only") { // the draw and the arithmetic
      for (const line of numbers.lines) {
        const li = document.createElement("li");
        if (line.step) li.append(deviceIcon(line.step));
        if (line.arithmetic) li.className = "rr-arithmetic";
        if (line.rounding) li.className = "rr-rounding";
        li.append(document.createTextNode(line.text));
        list.append(li);
      }
      result = { ...result, steps: [] };
    }
    for (const step of result.steps) {
      const li = document.createElement("li");
      li.append(deviceIcon(step), document.createTextNode(describeStep(q, step, counters, result, item)));
      list.append(li);
    }
    if (!result.steps.length && config.review !== "result-only" && !numbers) {
      const li = document.createElement("li");
      li.textContent = t("review_as_given");
      list.append(li);
    }
    const report = document.createElement("p");
    report.className = "rr-report";
    report.dataset.report = result.report;
    report.textContent = numbers ? t("review_sent_number", { label: numbers.report })
      : t("review_sent_value", { label: optionLabel(q, result.report) });
    section.append(heading, list, report);
    box.append(section);
    // One short sentence for "What will be sent" (not under review: result-only, whose screen
    // may be seen by others: it shows the rule, folded away, instead of the draw).
    if (config.review !== "result-only") {
      const original = results.find((r) => r.id === q.id);
      state.glance[q.id] = q.type === "number" && window.rrsiteNumbers
        ? window.rrsiteNumbers.glance(q, original, item, t) : glanceSentence(q, original, item);
    }
  }
  box.hidden = results.length === 0;
  $("rr-draws-box").hidden = results.length === 0;
  $("rr-draws-title").textContent = t(config.review === "result-only" ? "draws_title_result_only" : "draws_title");
  // Play the animation once (CSS skips it under prefers-reduced-motion).
  requestAnimationFrame(() => box.classList.add("rr-animate"));
}

/**
 * What the respondent chose for each randomized question (their true answers), apart from what
 * will be sent. Shown on this device only, from memory: never stored or sent, cleared when the
 * review is left, and not shown at all under `review: result-only` (a shared screen).
 */
export function renderChosen(items) {
  const box = $("rr-chosen-box");
  const list = $("rr-chosen");
  if (!box || !list) return;
  list.replaceChildren();
  const shown = config.review === "result-only" ? [] : items;
  for (const item of shown) {
    const q = item.question;
    const term = document.createElement("dt");
    term.textContent = questionText(q);
    const value = document.createElement("dd");
    value.dataset.chosenFor = q.id;
    const number = q.type === "number" && window.rrsiteNumbers; // in the page's language
    const oracle = window.rrsiteOracles && window.rrsiteOracles.isOracle(q); // the ticks of a multi-choice
    value.textContent = number ? window.rrsiteNumbers.show(item.truth, q)
      : oracle ? window.rrsiteOracles.chosen(q, item) : optionLabel(q, String(item.truth));
    list.append(term, value);
    if (item.innocuous !== undefined) {
      const innocuous = document.createElement("dd");
      innocuous.className = "rr-answer-kind";
      innocuous.textContent = t("chosen_innocuous", {
        label: number ? window.rrsiteNumbers.show(item.innocuous) : optionLabel(q, String(item.innocuous)),
      });
      list.append(innocuous);
    }
  }
  box.hidden = shown.length === 0;
}

/** Remove the respondent's choices from the page. */
export function clearChosen() {
  const list = $("rr-chosen");
  if (list) list.replaceChildren();
  const box = $("rr-chosen-box");
  if (box) box.hidden = true;
}

/** Remove what the review showed (the answers, the exact data) from the page. */
function clearReview() {
  $("rr-answers").replaceChildren();
  for (const id of ["rr-body", "rr-destination", "rr-review-intro"]) $(id).textContent = "";
}

/** Remove the draws (their steps, the glance sentences) and the choices from the page. */
export function clearDraws() {
  $("rr-transcript").replaceChildren();
  $("rr-transcript").hidden = true;
  const draws = $("rr-draws-box");
  if (draws) {
    draws.hidden = true;
    draws.open = false;
  }
  state.glance = {};
  clearChosen();
}

/** What an answer in the body is: a randomized report, a combined answer, or a direct answer. */
function answerKind(q) {
  if (!q.sensitive) return t("sent_kind_direct");
  return t(isCombined(q) ? "sent_kind_combined" : "sent_kind_randomized");
}

/** An answer as the page's language shows it (option labels, not the values sent). */
function answerText(q, value) {
  if (window.rrsiteOracles && window.rrsiteOracles.isOracle(q)) return window.rrsiteOracles.answer(q, value);
  if (Array.isArray(value)) return value.map((v) => optionLabel(q, v)).join(", ");
  if (q.type === "number" && window.rrsiteNumbers) { // a report to its design's step
    return q.sensitive ? window.rrsiteNumbers.sent(value, q) : window.rrsiteNumbers.show(value, q);
  }
  if (q.sensitive || q.type === "yes-no" || q.type === "choice") return optionLabel(q, String(value));
  return String(value);
}

/** The answers of the body, question by question, in the page's language. */
function renderAnswers(body) {
  const list = $("rr-answers");
  if (!list) return;
  list.replaceChildren();
  for (const q of questions) {
    if (!Object.prototype.hasOwnProperty.call(body.answers, q.id)) continue;
    const term = document.createElement("dt");
    term.textContent = questionText(q);
    const value = document.createElement("dd");
    value.dataset.answerFor = q.id;
    value.textContent = answerText(q, body.answers[q.id]);
    const kind = document.createElement("dd");
    const glance = state.glance && state.glance[q.id];
    if (glance) {
      kind.className = "rr-glance";
      kind.dataset.glanceFor = q.id;
      kind.textContent = glance;
    } else {
      kind.className = "rr-answer-kind";
      kind.dataset.kindFor = q.id;
      kind.textContent = answerKind(q);
    }
    list.append(term, value, kind);
  }
}

const has = (body, q) => Object.prototype.hasOwnProperty.call(body.answers, q.id);
/** Whether the device drew for an answer of this body (a question hidden by show_if was not). */
const drawnFor = (body) => coinQuestions.some((q) => has(body, q));

/** The first line of the review: coins are spoken of only where the device drew for an answer. */
function introKey(body, restored) {
  const drawn = drawnFor(body);
  if (restored) {
    if (target === "download") return drawn ? "stored_intro_download" : "stored_intro_plain_download";
    return drawn ? "stored_intro" : "stored_intro_plain";
  }
  if (drawn) return config.review === "result-only" ? "review_intro_result_only" : "review_intro";
  return sensitiveQuestions.some((q) => has(body, q)) ? "review_intro_combined" : "review_intro_direct";
}

export function showReview(record, { restored, edited = false }) {
  const request = outgoing(record.body);
  state.current = { record, request };
  form.hidden = true;
  hideSharedScreens();
  $("rr-done").hidden = true;
  $("rr-review-title").textContent = restored ? t("stored_title") : t("review_title");
  const intro = restored
    ? [t(introKey(record.body, true), { date: formatDate(record.randomized_at) }), record.sent_at ? t(target === "download" ? "stored_saved" : "stored_sent", { date: formatDate(record.sent_at) }) : ""]
    : [t(introKey(record.body, false))];
  $("rr-review-intro").textContent = intro.filter(Boolean).join(" ");
  if (restored || edited) {
    clearDraws(); // the true answers are no longer known (a stored report) or were shown already
  }
  if (edited) $("rr-review-intro").textContent = t(drawnFor(record.body) ? "edit_saved" : "edit_saved_plain");
  $("rr-edit").hidden = Boolean(record.sent_at) || directQuestions.length === 0;
  $("rr-destination").textContent = destinationText(request);
  renderAnswers(record.body);
  $("rr-body").textContent = request.shown;
  $("rr-body-box").open = false;
  confirmButton.textContent = target === "download" ? t("confirm_download") : record.sent_at ? t("send_again") : t("confirm_send");
  confirmButton.disabled = false;
  confirmButton.hidden = false;
  retryBox.hidden = true;
  sendStatus.textContent = "";
  sendError.textContent = "";
  review.hidden = false;
  document.documentElement.dataset.rrState = "review";
  $("rr-review-title").focus();
}

export async function confirmAndSend() {
  if (!state.current || document.documentElement.dataset.rrIntegrity === "failed") return;
  const { record, request } = state.current;
  // fielding hook: in kiosk mode kiosk.js queues and sends the report, clears this
  // respondent from the page and storage, and hands the device to the next respondent.
  if (window.rrsiteKiosk) { state.current = null; window.rrsiteKiosk.hand(record, request); return; }
  performance.mark("rr-confirm");
  confirmButton.disabled = true;
  retryBox.hidden = true;
  sendError.textContent = "";
  if (target === "download") {
    const filename = downloadFile(record, request);
    record.sent_at = new Date().toISOString();
    storage.save(record);
    finish(t("saved", { filename }));
    return;
  }
  sendStatus.textContent = t("sending");
  try {
    await post(request, { onRetry: () => { sendStatus.textContent = t("retrying"); } });
  } catch (error) {
    sendStatus.textContent = "";
    // [panels: panel.js] e.g. a full survey (429 on "survey") sends a panel participant back
    document.dispatchEvent(new CustomEvent("rrsite:send-failed", { detail: { status: error.status, field: error.field } }));
    if (error.retryable === false && error.status) {
      // A permanent refusal (e.g. 405 from a host without the form handler): trying again cannot
      // help, so say what is wrong; the report stays stored for when the survey is fixed.
      sendError.textContent = t("send_refused", { status: error.status });
      confirmButton.hidden = true;
      retryBox.hidden = true;
      sendError.tabIndex = -1;
      sendError.focus();
      return;
    }
    sendError.textContent = t("send_failed", { reason: error.message });
    confirmButton.hidden = true;
    retryBox.hidden = false;
    $("rr-retry").focus();
    return;
  }
  performance.mark("rr-sent");
  record.sent_at = new Date().toISOString();
  storage.save(record);
  finish(t("sent"));
  // [panels: panel.js] acknowledged by the collector: now, and only now, the completion code
  document.dispatchEvent(new CustomEvent("rrsite:sent", { detail: { record } }));
}

export function finish(text) {
  review.hidden = true;
  clearDraws(); // the transcript of the draws is not kept once sent, nor the respondent's choices
  clearReview(); // nor what was sent: the thanks screen shows none of it
  $("rr-done-text").textContent = text;
  $("rr-done").hidden = false;
  const outro = $("rr-outro");
  if (outro) {
    $("rr-done-title").textContent = t("done_title"); // the author's words carry the thanks
    $("rr-done").append(outro); // the author's closing words, once, inside the thanks screen
    outro.hidden = false;
  }
  $("rr-forget-box").hidden = false;
  document.documentElement.dataset.rrState = "done";
  $("rr-done-title").focus();
  state.current = null;
}

/**
 * Forget: nothing of the respondent stays on this device (clearRespondent: the stored report and
 * its token, the blind invitation's code and token, the tab's consent, draft and claims), and
 * the invitation code leaves the address bar. Only the salted marker that this version was
 * answered here stays, so that the draws are not made again by accident.
 */
export async function forget() {
  const key = await markerKey(true);
  try {
    if (key) window.localStorage.setItem(key, "1");
  } catch {
    // storage blocked: nothing was kept
  }
  clearRespondent();
  if (window.location.hash) window.history.replaceState(null, "", window.location.pathname + window.location.search);
  showAnswered({ forgotten: true });
}

function hideSharedScreens() {
  $("rr-answered").hidden = true;
  $("rr-someone").hidden = true;
}

/**
 * The first screen of a survey answered in this browser before, by whoever it was: it says so
 * and shows none of the answers, the reports or the token. "Someone else is answering now" starts
 * a new respondent; "I answered: show my answers" shows the stored report (an action only that
 * person would take); "Forget" removes it. After forgetting, only the first of these is left.
 */
export function showAnswered({ record = null, forgotten = false } = {}) {
  form.hidden = true;
  review.hidden = true;
  $("rr-done").hidden = true;
  $("rr-someone").hidden = true;
  state.current = null;
  clearDraws();
  clearReview();
  const consent = $("rr-consent");
  if (consent) consent.hidden = true;
  const sent = record && record.sent_at;
  const key = forgotten ? "answered_forgotten"
    : sent ? (target === "download" ? "answered_saved" : "answered_sent") : "answered_unsent";
  $("rr-answered-text").textContent = t(key);
  $("rr-show-mine").hidden = !record;
  $("rr-forget-start-box").hidden = !record;
  $("rr-answered").hidden = false;
  document.documentElement.dataset.rrState = "answered";
  $("rr-answered-title").focus();
}

/** "Someone else is answering now": the one-randomization rule first, then a new respondent. */
export function askSomeoneElse() {
  const record = storage.load();
  $("rr-answered").hidden = true;
  $("rr-someone-unsent").hidden = !(record && !record.sent_at);
  $("rr-someone").hidden = false;
  $("rr-someone-title").focus();
}

/** Back from the rule to the "already answered" screen. */
export function backToAnswered() {
  $("rr-someone").hidden = true;
  $("rr-answered").hidden = false;
  $("rr-answered-title").focus();
}
