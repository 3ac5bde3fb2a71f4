// rrsite respondent page: what every part of the page shares (split page.js by concern).
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
// picks the report; no randomizer, the sensitive answer never enters the device (the extended
// crosswise model's group, which statement is shown, is drawn by crosswise.js).
const COMBINED_DESIGNS = new Set(["crosswise", "triangular", "extended-crosswise"]);
export const isCombined = (q) => Boolean(q.sensitive && q.design && COMBINED_DESIGNS.has(q.design.name));
// Questions randomized on the device (coins, dice, spinners drawn by the worker).
export const coinQuestions = sensitiveQuestions.filter((q) => !isCombined(q));
export const hasCoins = coinQuestions.length > 0;
export const target = (config.submit && config.submit.to) || "collector";
export const STORAGE_KEY = `rrsite:${config.survey}:${config.version}`;
// [collector hook] invitation code of a personal link (`rrsite invite`): read from the
// fragment (#invitation=CODE), which is never sent to a server; sent as the body's `invitation`.
export const invitationCode = new URLSearchParams(window.location.hash.slice(1)).get("invitation");
// [design cell] a link of `rrsite invite --frame` also carries the invitee's design
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

/**
 * A message of the page's catalog with its placeholders filled: ``{name}``, and ICU's plural
 * form ``{count, plural, one {# card} other {# cards}}`` (the branch for Intl.PluralRules'
 * category of the number in the page's language, ``=2`` for an exact number, ``other`` else;
 * ``#`` is the number written in the page's language).
 */
export function t(key, vars = {}) {
  const template = Object.prototype.hasOwnProperty.call(messages, key) ? messages[key] : key;
  return fill(template, vars);
}

function fill(template, vars) {
  let out = "";
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf("{", i);
    if (open < 0) break;
    out += template.slice(i, open);
    const end = matchingBrace(template, open);
    const inner = end < 0 ? null : template.slice(open + 1, end);
    const plural = inner && /^(\w+)\s*,\s*plural\s*,/.exec(inner);
    if (plural) {
      out += pluralForm(inner.slice(plural[0].length), vars[plural[1]], vars);
    } else if (inner !== null && /^\w+$/.test(inner) && inner in vars) {
      out += String(vars[inner]);
    } else {
      out += template.slice(open, end < 0 ? template.length : end + 1);
    }
    i = end < 0 ? template.length : end + 1;
  }
  return out + template.slice(i);
}

function matchingBrace(text, open) {
  let depth = 0;
  for (let j = open; j < text.length; j++) {
    if (text[j] === "{") depth += 1;
    else if (text[j] === "}" && --depth === 0) return j;
  }
  return -1;
}

let pluralRules = null;
function pluralForm(branches, value, vars) {
  const forms = {};
  const pattern = /\s*(=\d+|zero|one|two|few|many|other)\s*\{/g;
  let match;
  while ((match = pattern.exec(branches))) {
    const open = match.index + match[0].length - 1;
    const end = matchingBrace(branches, open);
    if (end < 0) break;
    forms[match[1]] = branches.slice(open + 1, end);
    pattern.lastIndex = end + 1;
  }
  const number = Number(value);
  pluralRules ??= new Intl.PluralRules(lang);
  const chosen = forms[`=${number}`] ?? forms[pluralRules.select(number)] ?? forms.other ?? "";
  return fill(chosen.replace(/#/g, formatNumber(number)), vars);
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

/**
 * Make the formatters the review uses while the respondent is still answering: the first
 * Intl object of a language loads its locale data (tens of milliseconds on a slow phone), which
 * would otherwise fall between "Randomize and review" and the review.
 */
export function warmFormats() {
  numberSeparators();
  percent(0.5);
  formatDate(new Date(0).toISOString());
  pluralRules ??= new Intl.PluralRules(lang);
  formatNumber(1234.5);
}

// ---- numbers as the page's language writes them ------------------------------------------------

let separators = null;
/** The page language's decimal and thousands separators ("," and "." in German). */
function numberSeparators() {
  if (!separators) {
    const parts = new Intl.NumberFormat(lang).formatToParts(12345.6);
    const part = (type, fallback) => (parts.find((p) => p.type === type) || { value: fallback }).value;
    separators = { decimal: part("decimal", "."), group: part("group", ",") };
  }
  return separators;
}

const SPACES = "\\s\u00a0\u202f\u2009\u2007'\u2019"; // spaces (and apostrophes) only ever group digits
const GROUPED = (mark) => new RegExp(`^\\d{1,3}([${mark}]\\d{3})+$`);

/**
 * A number as a person typed it, read the way the page's language writes numbers: {value}, {}
 * when empty, {error: "number"}, or {error: "ambiguous", readings: [a, b]}. "1.200,50" (de),
 * "1 200,5" (fr) and "1,200.50" (en) are understood; a lone separator that cannot group
 * thousands is a decimal point ("1200.5" on a German page, "1200,5" on an English one); a lone
 * separator before three digits that is neither of the page's own ("1.200" on a French page)
 * could be 1200 or 1.2, and is refused with both readings rather than guessed.
 */
export function readNumber(text) {
  let raw = String(text).trim();
  if (raw === "") return {};
  let sign = "";
  if (/^[-+\u2212]/.test(raw)) {
    sign = raw[0] === "+" ? "" : "-";
    raw = raw.slice(1).trim();
  }
  if (!new RegExp(`^[0-9.,${SPACES}]+$`).test(raw) || !/[0-9]/.test(raw)) return { error: "number" };
  const { decimal, group } = numberSeparators();
  const marks = raw.replace(new RegExp(`[0-9${SPACES}]`, "g"), "");
  let point = null; // the decimal separator typed, if any
  if (marks.includes(".") && marks.includes(",")) {
    point = marks[marks.length - 1];
    if (marks.indexOf(point) !== marks.length - 1) return { error: "number" };
  } else if (marks.length === 1) {
    const after = raw.slice(raw.indexOf(marks) + 1);
    if (marks === decimal || !/^\d{3}$/.test(after)) point = marks;
    else if (marks !== group) {
      const whole = readNumber(`${sign}${raw.replace(marks, "")}`).value;
      const part = Number(`${sign}${raw.replace(marks, ".").replace(new RegExp(`[${SPACES}]`, "g"), "")}`);
      return { error: "ambiguous", readings: [whole, part] };
    }
  }
  const [whole, fraction = ""] = point === null ? [raw] : [raw.slice(0, raw.lastIndexOf(point)), raw.slice(raw.lastIndexOf(point) + 1)];
  if (!/^\d*$/.test(fraction)) return { error: "number" };
  const bare = whole.replace(new RegExp(`[${SPACES}.,]`, "g"), "");
  if (bare !== whole && !GROUPED(`${SPACES}.,`).test(whole.replace(new RegExp(`[${SPACES}]+`, "g"), " "))) {
    return { error: "number" }; // thousands separators must group threes: "12.34.5" is no number
  }
  if (bare === "" && fraction === "") return { error: "number" };
  return { value: Number(`${sign}${bare || "0"}.${fraction || "0"}`) };
}

/** Decimal places of a number's shortest form (1e-7 has 7). */
function places(number) {
  const [mantissa, exponent = "0"] = String(number).toLowerCase().split("e");
  const digits = (mantissa.split(".")[1] || "").length;
  return Math.max(0, digits - Number(exponent));
}

/**
 * A number in the page's language with every digit it has (a report is shown exactly as it is
 * sent: 1,413.25 in English, 1.413,25 in German, 1 413,25 in French).
 */
export function formatNumber(number, { grouping = true } = {}) {
  return new Intl.NumberFormat(lang, { maximumFractionDigits: Math.min(20, places(number)), useGrouping: grouping })
    .format(number);
}

/** A number with exactly `digits` decimals in the page's language (a spinner's 0,7168 in German). */
export function fixed(number, digits) {
  return new Intl.NumberFormat(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(number);
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
    if (input.closest(".rr-check") && !questionElement(q).matches(".rr-check")) continue; // its check's
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

