// rrsite respondent page.
//
// Moves data between the form, the randomizer worker (Pyodide running rrsite/core) and the
// network; every decision about probabilities lives in rrsite/core. The true answer of a
// sensitive question is read from an input that has no name, handed to the worker, and dropped:
// it is never sent, stored or logged. What is stored (localStorage) and sent is the body of
// docs/contracts.md: the randomized report for sensitive questions, the direct answers otherwise.
//
// This module starts the page and runs the submit (randomize, store, review); the rest is split
// by concern: shared.js (configuration, messages, state), randomizer.js (the worker bridge),
// form.js (reading and checking answers), explain.js (designs and steps in words), storage.js
// (storage, forgetting, locks, the tab's session), send.js (requests) and review.js (review,
// transcript, sending, the "already answered" screen).
//
// A shared device: the stored report is shown only in the browser tab that randomized it (or
// after "I answered: show my answers"); any other visit opens on the "already answered" screen.

import {
  $, confirmButton, form, optionLabel, questionElement, questions, review, sensitiveQuestions,
  state, submitButton, isCombined, STORAGE_KEY, config, invitationCode, designCell, submitNote, t, warmFormats,
} from "./shared.js";
import { Randomizer } from "./randomizer.js";
import { blindKeyId, blindTokenFor, startBlindTrade } from "./blind.js";
import { describeStep, explainDesign } from "./explain.js";
import { clearErrors, clearQuestionError, readForm, resetForm, resetTruths, setUpRadioGroup, showErrors } from "./form.js";
import {
  answeredAndForgotten, clearRespondent, newRespondentToken, session, storage, withDeviceLock,
} from "./storage.js";
import {
  askSomeoneElse, backToAnswered, clearDraws, confirmAndSend, editDirectAnswers, forget, renderChosen,
  renderTranscript, saveEditedAnswers, showAnswered, showReview,
} from "./review.js";

/** A script, module or stylesheet of the page did not match its pinned hash (guard.js). */
const integrityFailed = () => document.documentElement.dataset.rrIntegrity === "failed";

let randomizer = null;
let busy = false;

// fielding hook: practice.js runs a practice round on the same randomizer and words
// its steps like the review does. Nothing it gets is stored or sent.
window.rrsitePractice = {
  async respond(item) {
    if (!randomizer) randomizer = new Randomizer();
    await randomizer.ready;
    const [result] = await randomizer.respond([item]);
    const counters = {};
    return { result, steps: result.steps.map((step) => describeStep(item.question, step, counters, result, item)) };
  },
  label: optionLabel,
};

// ---- submit: randomize, store, review --------------------------------------------------------

async function onSubmit(event) {
  event.preventDefault();
  if (busy || integrityFailed()) return;
  busy = true;
  submitButton.disabled = true;
  clearErrors();
  try {
    if (state.editing) {
      saveEditedAnswers();
      return;
    }
    if (showStoredIfAny()) return;
    const { errors, items } = readForm();
    if (errors.length) {
      showErrors(errors);
      return;
    }
    if (items.length) {
      if (!randomizer) randomizer = new Randomizer();
      if (randomizer.state !== "ready") {
        $("rr-submit-note").textContent = t("submit_waiting");
        try {
          await randomizer.ready;
        } catch {
          $("rr-submit-note").textContent = randomizer.failure;
          return;
        }
      }
    }
    // One report per survey version per device: another tab may have randomized while this one
    // waited, so the check and the save happen under one lock (Web Locks where the browser has
    // them), with storage read again under it. The coins are drawn while the lock is requested
    // (its grant is a round trip to the browser, as long as the draw on a slow phone): a draw is
    // kept only if no report was stored meanwhile, else it is dropped unseen (never shown, stored
    // or sent), as when the browser has no Web Locks.
    const draw = items.length && !blindKeyId ? startDraw(items) : null;
    await withDeviceLock(() => randomizeAndStore(draw));
  } finally {
    busy = false;
    submitButton.disabled = false;
  }
}


/**
 * If a report is stored, show it and return true: the review when this tab may show it, else
 * (another tab, another person) the "already answered" screen.
 */
function showStoredIfAny() {
  const stored = storage.load();
  if (!stored) return false;
  $("rr-submit-note").textContent = submitNote();
  resetTruths();
  if (session.mine(stored)) showReview(stored, { restored: true });
  else showAnswered({ record: stored });
  return true;
}


/** The coins for `items`, drawn now: {items, results} (or {items, error}). */
function startDraw(items) {
  $("rr-submit-note").textContent = t("randomizing");
  // [waves] a question asked in every wave takes the permanent reports this device kept (waves.js)
  const waves = window.rrsiteWaves;
  return randomizer.respond(items.map(({ question, truth, innocuous }) => ({
    question, truth, innocuous, permanent: waves ? waves.permanent(question) : undefined })))
    .then((results) => ({ items, results }), (error) => ({ items, error }));
}

/** Whether two lists of items hold the same answers (the form read again under the lock). */
const sameItems = (a, b) => a.length === b.length && a.every((item, i) => item.question.id === b[i].question.id
  && String(item.truth) === String(b[i].truth) && String(item.innocuous) === String(b[i].innocuous));

async function randomizeAndStore(draw) {
  if (showStoredIfAny()) return;
  if (!session.fresh() && await answeredAndForgotten()) {
    resetTruths();
    showAnswered({ forgotten: true });
    return;
  }
  const { errors, items, direct } = readForm(); // the respondent may have changed answers meanwhile
  if (errors.length) {
    showErrors(errors);
    return;
  }
  let token = null;
  if (blindKeyId) { // [blind invitations]
    $("rr-submit-note").textContent = t("blind_trading");
    try {
      token = await blindTokenFor(randomizer);
    } catch (error) {
      $("rr-submit-note").textContent = t("blind_failed", { reason: error.message });
      return;
    }
  }
  let results = [];
  if (items.length) {
    // the draw made while the lock was requested, if the answers are still the ones it drew for;
    // else (changed meanwhile, or a blind invitation's token first) a draw now
    let drawn = draw ? await draw : null;
    if (!drawn || !sameItems(drawn.items, items)) drawn = await startDraw(items);
    if (drawn.error) {
      $("rr-submit-note").textContent = t("randomize_failed", { reason: drawn.error.message });
      return;
    }
    results = drawn.results;
  }
  // Without Web Locks another tab may have saved while the coins were flipped: its report wins
  // and these results are dropped unseen.
  if (showStoredIfAny()) return;
  if (window.rrsiteWaves) window.rrsiteWaves.keep(results, newRespondentToken); // [waves]
  const answers = {};
  const groups = {}; // two-group designs: the group core drew in the worker (crypto.getRandomValues)
  for (const q of questions) {
    const result = results.find((r) => r.id === q.id);
    if (result) answers[q.id] = result.report;
    else if (Object.prototype.hasOwnProperty.call(direct, q.id)) answers[q.id] = direct[q.id];
    if (result && result.group) groups[q.id] = result.group;
    // the extended crosswise model: the group crosswise.js drew (which statement was shown)
    const shown = window.rrsiteCrosswise && window.rrsiteCrosswise.groups[q.id];
    if (shown && answers[q.id] !== undefined) groups[q.id] = shown;
  }
  const record = {
    format: 1,
    body: { survey: config.survey, version: config.version, answers,
      respondent: window.rrsiteWaves ? window.rrsiteWaves.respondent(newRespondentToken) : newRespondentToken(),
      ...(Object.keys(groups).length ? { groups } : {}),
      ...(token ? { token } : invitationCode ? { invitation: invitationCode } : {}), // [collector hooks: invitations]
      ...(designCell ? { cell: designCell } : {}), // [design cell]
      ...(window.rrsitePanel ? await window.rrsitePanel.fields() : {}) }, // [panels: panel.js]
    randomized_at: new Date().toISOString(),
    sent_at: null,
  };
  // Stored before it is shown, so a reload cannot draw again; this tab may show it.
  storage.save(record);
  session.claim(record);
  // The true answers are no longer needed: clear them from the page.
  resetTruths();
  $("rr-submit-note").textContent = submitNote();
  renderTranscript(results, items);
  renderChosen(items); // the true answers, shown on this device only (not stored, not sent)
  showReview(record, { restored: false });
}

function startOver() {
  // For kiosks and tests: only acts when no report is stored (the coins are never flipped twice).
  if (storage.load()) return;
  state.current = null;
  if (state.editing) {
    state.editing = null;
    for (const element of form.querySelectorAll("fieldset[disabled]")) element.disabled = false;
    writeExplanations();
  }
  resetForm();
  review.hidden = true;
  $("rr-done").hidden = true;
  clearDraws();
  showForm();
}

/** A stored report needs no coins: the runtime status is hidden and says nothing more. */
function runtimeNotNeeded() {
  const box = $("rr-runtime");
  const text = $("rr-runtime-text");
  if (text) {
    text.removeAttribute("aria-live");
    text.removeAttribute("role");
    text.textContent = "";
  }
  if (box) {
    box.dataset.state = "not-needed";
    box.hidden = true;
  }
  document.documentElement.dataset.rrRuntime = "not-needed";
}

// ---- start --------------------------------------------------------------------------------

/** The form, for a respondent who has not answered here (or a new one on a shared device). */
function showForm() {
  form.hidden = false;
  document.documentElement.dataset.rrState = "form";
}

/** "Someone else is answering": nothing of the earlier respondent stays; the page starts afresh. */
function startSomeoneElse() {
  clearRespondent();
  session.startFresh();
  window.location.reload();
}

/** "I answered: show my answers": this tab may show the stored report from now on. */
function showMine() {
  const record = storage.load();
  if (!record) return;
  session.claim(record);
  showReview(record, { restored: true });
}

function main() {
  // A file of the page did not match its pinned hash (guard.js has said so): nothing starts.
  if (integrityFailed()) {
    runtimeNotNeeded();
    return;
  }
  const stored = storage.load();
  const fresh = session.fresh();
  if (!session.mine(stored)) session.release();
  // The runtime first: it is the long pole, and the form does not need it until submit.
  if ((blindKeyId || sensitiveQuestions.some((q) => !isCombined(q))) && !stored) randomizer = new Randomizer();
  if (blindKeyId && !stored) startBlindTrade(randomizer); // when the survey opens, not when it is sent
  for (const group of form.querySelectorAll("[data-group]")) setUpRadioGroup(group);
  form.addEventListener("submit", onSubmit);
  confirmButton.addEventListener("click", confirmAndSend);
  $("rr-retry").addEventListener("click", confirmAndSend);
  $("rr-edit").addEventListener("click", editDirectAnswers);
  document.addEventListener("rrsite:reset", startOver);
  $("rr-forget").addEventListener("click", () => { forget(); });
  $("rr-forget-start").addEventListener("click", () => { forget(); });
  $("rr-someone-else").addEventListener("click", askSomeoneElse);
  $("rr-someone-back").addEventListener("click", backToAnswered);
  $("rr-someone-start").addEventListener("click", startSomeoneElse);
  $("rr-show-mine").addEventListener("click", showMine);
  submitButton.disabled = false;
  performance.mark("rr-interactive");
  if (stored) {
    runtimeNotNeeded();
    if (session.mine(stored)) showReview(stored, { restored: true });
    else showAnswered({ record: stored });
  } else if (fresh) {
    showForm();
  } else {
    // Answered here and forgotten: the "already answered" screen, not the form (which stays out
    // of sight until this is known: page.css, html[data-rr-state=starting]).
    answeredAndForgotten().then((answered) => {
      if (storage.load()) return;
      if (answered) {
        runtimeNotNeeded();
        if (randomizer && randomizer.worker) randomizer.worker.terminate();
        showAnswered({ forgotten: true });
      } else {
        showForm();
      }
    }, showForm);
  }
  for (const q of questions) {
    const element = questionElement(q);
    if (element) for (const type of ["input", "change"]) element.addEventListener(type, () => clearQuestionError(q));
  }
  // Another tab stored a report: this one leaves its form (which is never randomized) for the
  // "already answered" screen.
  window.addEventListener("storage", (event) => {
    if (event.key !== STORAGE_KEY || !event.newValue || busy) return;
    const record = storage.load();
    if (record && (!state.current || state.current.record.body.respondent !== record.body.respondent)) {
      resetTruths();
      if (session.mine(record)) showReview(record, { restored: true });
      else showAnswered({ record });
    }
  });
  // Storage that cannot be written is said before the respondent answers, not in the review.
  if (!storage.writable()) {
    const notice = $("rr-storage-notice");
    if (notice) {
      notice.textContent = t("storage_unavailable");
      notice.hidden = false;
    }
  }
  // The designs in words, once the form can already be used; then the review's formatters.
  setTimeout(writeExplanations, 0);
  if (window.requestIdleCallback) window.requestIdleCallback(warmFormats, { timeout: 2000 });
  else setTimeout(warmFormats, 0);
}

/** The designs in words, one explanation per sensitive question. */
function writeExplanations() {
  for (const q of sensitiveQuestions) {
    const explain = $(`q-${q.id}-explain`);
    // One explanation per question: the author's help text replaces the generated one.
    const generated = $(`q-${q.id}-help`) ? "" : explainDesign(q);
    const number = q.type === "number" && window.rrsiteNumbers; // numbers.js
    const kept = isCombined(q) ? "combined_private" : number ? window.rrsiteNumbers.privateKey(q) : "sensitive_private";
    if (explain) explain.textContent = `${generated} ${t(kept)}`.trim();
    if (number) window.rrsiteNumbers.describe(q, t); // its range and how well it hides the answer
  }
}

main();
