// rrsite respondent page: what every part of the page shares (issue 20 split page.js by concern).
//
// The page's configuration and messages (the two JSON blocks of page.html), the form's elements,
// the message function and the words of a question as the page shows them, and the state the
// parts of the page hand to each other. Nothing here reads or keeps an answer.

export const $ = (id) => document.getElementById(id);
export const config = JSON.parse($("rr-config").textContent);
export const messages = JSON.parse($("rr-messages").textContent);
export const lang = document.documentElement.lang || "en";
export const questions = config.questions || [];
export const sensitiveQuestions = questions.filter((q) => q.sensitive);
export const directQuestions = questions.filter((q) => !q.sensitive);
// Crosswise and triangular questions: the respondent combines two statements in their head and
// picks the report; no randomizer, the sensitive answer never enters the device.
const COMBINED_DESIGNS = new Set(["crosswise", "triangular"]);
export const isCombined = (q) => Boolean(q.sensitive && q.design && COMBINED_DESIGNS.has(q.design.name));
// Questions randomized on the device (coins, dice, spinners drawn by the worker).
export const coinQuestions = sensitiveQuestions.filter((q) => !isCombined(q));
export const hasCoins = coinQuestions.length > 0;
export const target = (config.submit && config.submit.to) || "collector";
export const STORAGE_KEY = `rrsite:${config.survey}:${config.version}`;
// [collector hook, issue 12] invitation code of a personal link (`rrsite invite`): read from the
// fragment (#invitation=CODE), which is never sent to a server; sent as the body's `invitation`.
export const invitationCode = new URLSearchParams(window.location.hash.slice(1)).get("invitation");
// [design cell, issue 22] a link of `rrsite invite --frame` also carries the invitee's design
// cell id (#invitation=CODE&cell=CELL): an id shared by every invitee with the same stratum,
// cluster and weight, sent as the body's `cell` so that the analysis can weight the answers.
const cellParam = new URLSearchParams(window.location.hash.slice(1)).get("cell");
export const designCell = cellParam && /^[A-Za-z0-9_-]{8,32}$/.test(cellParam) ? cellParam : null;

export const form = $("rr-form");
export const submitButton = $("rr-submit");
export const review = $("rr-review");
export const confirmButton = $("rr-confirm");
export const retryBox = $("rr-retry-box");
export const sendStatus = $("rr-send-status");
export const sendError = $("rr-send-error");

/** What the parts of the page hand to each other. */
export const state = {
  current: null, // {record, request} under review
  editing: null, // the stored record whose direct answers are being edited (before sending)
};

// ---- messages -------------------------------------------------------------------------------

export function t(key, vars = {}) {
  const template = Object.prototype.hasOwnProperty.call(messages, key) ? messages[key] : key;
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

// Intl formatters are slow to create: made on first use, not before the form is usable.
let percentFormat = null;
let dateFormat = null;
export function percent(p) {
  percentFormat ??= new Intl.NumberFormat(lang, { style: "percent", maximumFractionDigits: 1 });
  return percentFormat.format(p);
}
export function formatDate(iso) {
  dateFormat ??= new Intl.DateTimeFormat(lang, { dateStyle: "long", timeStyle: "short" });
  return dateFormat.format(new Date(iso));
}

/** The line under the submit button: "what the coins did" only where coins are drawn. */
export function submitNote() {
  return t(hasCoins ? "submit_note" : "submit_note_plain");
}

export function questionElement(q) {
  return $(`q-${q.id}`);
}

export function optionInputs(q, selector) {
  const element = questionElement(q);
  return element ? Array.from(element.querySelectorAll(selector)) : [];
}

/** The text of the option whose value is `value`, as the page shows it (Markdown rendered). */
export function optionLabel(q, value) {
  for (const input of optionInputs(q, "input[data-truth], input[data-report], input[name]")) {
    if (input.value === value && input.labels && input.labels[0]) {
      return input.labels[0].textContent.trim();
    }
  }
  const option = (q.options || []).find((o) => o.value === value);
  return option ? option.label : String(value);
}

/** The mirrored statement of a Warner question, as text (its Markdown rendered), or null. */
export function mirroredText(q) {
  const element = $(`q-${q.id}-mirrored`);
  return element ? element.textContent.trim() : q.mirrored || null;
}

export function questionText(q) {
  const element = questionElement(q);
  const text = element && element.querySelector("legend .rr-question-text");
  return text ? text.textContent.trim() : q.text || q.id;
}

