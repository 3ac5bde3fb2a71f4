// rrsite respondent page.
//
// Moves data between the form, the randomizer worker (Pyodide running rrsite/core) and the
// network; every decision about probabilities lives in rrsite/core. The true answer of a
// sensitive question is read from an input that has no name, handed to the worker, and dropped:
// it is never sent, stored or logged. What is stored (localStorage) and sent is the body of
// docs/contracts.md: the randomized report for sensitive questions, the direct answers otherwise.

const $ = (id) => document.getElementById(id);
const config = JSON.parse($("rr-config").textContent);
const messages = JSON.parse($("rr-messages").textContent);
const lang = document.documentElement.lang || "en";
const questions = config.questions || [];
const sensitiveQuestions = questions.filter((q) => q.sensitive);
// Crosswise and triangular questions: the respondent combines two statements in their head and
// picks the report; no randomizer, the sensitive answer never enters the device.
const COMBINED_DESIGNS = new Set(["crosswise", "triangular"]);
const isCombined = (q) => Boolean(q.sensitive && q.design && COMBINED_DESIGNS.has(q.design.name));
const target = (config.submit && config.submit.to) || "collector";
const STORAGE_KEY = `rrsite:${config.survey}:${config.version}`;
const STARTUP_TIMEOUT_S = 120;
const SEND_ATTEMPTS = 3;
// [collector hook, issue 12] invitation code of a personal link (`rrsite invite`): read from the
// fragment (#invitation=CODE), which is never sent to a server; sent as the body's `invitation`.
const invitationCode = new URLSearchParams(window.location.hash.slice(1)).get("invitation");

const form = $("rr-form");
const submitButton = $("rr-submit");
const review = $("rr-review");
const confirmButton = $("rr-confirm");
const retryBox = $("rr-retry-box");
const sendStatus = $("rr-send-status");
const sendError = $("rr-send-error");

// ---- messages -------------------------------------------------------------------------------

function t(key, vars = {}) {
  const template = Object.prototype.hasOwnProperty.call(messages, key) ? messages[key] : key;
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

// Intl formatters are slow to create: made on first use, not before the form is usable.
let percentFormat = null;
let dateFormat = null;
function percent(p) {
  percentFormat ??= new Intl.NumberFormat(lang, { style: "percent", maximumFractionDigits: 1 });
  return percentFormat.format(p);
}
function formatDate(iso) {
  dateFormat ??= new Intl.DateTimeFormat(lang, { dateStyle: "long", timeStyle: "short" });
  return dateFormat.format(new Date(iso));
}

function questionElement(q) {
  return $(`q-${q.id}`);
}

function optionInputs(q, selector) {
  const element = questionElement(q);
  return element ? Array.from(element.querySelectorAll(selector)) : [];
}

/** The text of the option whose value is `value`, as the page shows it (Markdown rendered). */
function optionLabel(q, value) {
  for (const input of optionInputs(q, "input[data-truth], input[data-report], input[name]")) {
    if (input.value === value && input.labels && input.labels[0]) {
      return input.labels[0].textContent.trim();
    }
  }
  const option = (q.options || []).find((o) => o.value === value);
  return option ? option.label : String(value);
}

/** The mirrored statement of a Warner question, as text (its Markdown rendered), or null. */
function mirroredText(q) {
  const element = $(`q-${q.id}-mirrored`);
  return element ? element.textContent.trim() : q.mirrored || null;
}

function questionText(q) {
  const element = questionElement(q);
  const text = element && element.querySelector("legend .rr-question-text");
  return text ? text.textContent.trim() : q.text || q.id;
}

// ---- the randomizer worker ----------------------------------------------------------------

class Randomizer {
  constructor() {
    this.state = "loading";
    this.pending = new Map();
    this.nextId = 1;
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {});
    this.showProgress("loading", 0);
    try {
      this.worker = new Worker(new URL(config.worker_url, document.baseURI), { type: "module" });
    } catch (error) {
      this.fail("error", error.message);
      return;
    }
    this.worker.addEventListener("message", (event) => this.onMessage(event.data || {}));
    this.worker.addEventListener("error", (event) => {
      event.preventDefault();
      this.fail("error", event.message || "the randomizer did not load");
    });
    this.timer = setTimeout(() => this.fail("timeout"), STARTUP_TIMEOUT_S * 1000);
    this.worker.postMessage({
      type: "init",
      pyodideUrl: new URL(config.pyodide_url, document.baseURI).href,
      coreUrl: new URL(config.core_url, document.baseURI).href,
      coreHash: config.core_hash,
      pyodideLock: config.pyodide_lock,
    });
  }

  showProgress(stage, value) {
    const text = $("rr-runtime-text");
    const bar = $("rr-runtime-progress");
    const box = $("rr-runtime");
    if (box) box.dataset.state = stage;
    if (bar) bar.value = value;
    if (text) text.textContent = t(`runtime_${stage}`);
    document.documentElement.dataset.rrRuntime = stage === "failed" ? "failed" : stage === "ready" ? "ready" : "loading";
  }

  onMessage(message) {
    if (message.type === "progress" && this.state === "loading") {
      this.showProgress(message.stage, message.stage === "downloading" ? 1 : 2);
    } else if (message.type === "ready" && this.state === "loading") {
      clearTimeout(this.timer);
      this.state = "ready";
      performance.mark("rr-ready");
      this.showProgress("ready", 3);
      this.resolveReady();
    } else if (message.type === "failed") {
      this.fail(message.reason, message.message);
    } else if (message.type === "result") {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.error) pending.reject(new Error(message.error));
      else pending.resolve(message.results);
    }
  }

  fail(reason, detail) {
    if (this.state !== "loading") return;
    clearTimeout(this.timer);
    this.state = "failed";
    const why =
      reason === "timeout" ? t("runtime_timeout", { seconds: STARTUP_TIMEOUT_S })
        : reason === "blocked" ? t("runtime_blocked")
          : t("runtime_error", { message: detail || reason });
    this.failure = t("runtime_failed", { reason: why });
    this.showProgress("failed", 0);
    const text = $("rr-runtime-text");
    if (text) {
      text.textContent = this.failure;
      text.setAttribute("role", "alert");
    }
    if (this.worker) this.worker.terminate();
    for (const pending of this.pending.values()) pending.reject(new Error(this.failure));
    this.pending.clear();
    this.rejectReady(new Error(this.failure));
  }

  respond(items) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type: "respond", id, items });
    });
  }
}

// ---- the form ----------------------------------------------------------------------------

/** Unnamed radios are not grouped by the browser: give them the behaviour of one radio group. */
function setUpRadioGroup(container) {
  const radios = Array.from(container.querySelectorAll("input[type=radio]"));
  const sync = () => {
    const checked = radios.find((r) => r.checked);
    radios.forEach((r, i) => { r.tabIndex = (checked ? r === checked : i === 0) ? 0 : -1; });
  };
  const select = (radio) => {
    radio.checked = true;
    radios.forEach((r) => { if (r !== radio) r.checked = false; });
    sync();
    radio.focus();
  };
  radios.forEach((radio, index) => {
    radio.addEventListener("change", () => { if (radio.checked) select(radio); });
    radio.addEventListener("keydown", (event) => {
      const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      select(radios[(index + step + radios.length) % radios.length]);
    });
  });
  sync();
  container._rrReset = () => { radios.forEach((r) => { r.checked = false; }); sync(); };
}

/** Words for the designs of RRreg (docs/designs.md); the group is drawn on the device. */
function explainNewDesign(q, design, yesLabel, noLabel) {
  const grouped = Array.isArray(design.p) || Array.isArray(design.yes);
  const group = grouped ? `${t("explain_group", { chance: percent(design.probability ?? 0.5) })} ` : "";
  const range = (pair) => pair.map(percent).join(t("explain_or"));
  switch (design.name) {
    case "mangat":
      return t("explain_mangat", { p: percent(design.p), q: percent(1 - design.p), yes_label: yesLabel, no_label: noLabel });
    case "sld":
      return group + t("explain_sld", { p: range(design.p), yes_label: yesLabel, no_label: noLabel });
    case "cdm":
      return group + t("explain_cdm", { p: range(design.p), yes_label: yesLabel });
    case "cdm-sym":
      return group + t("explain_cdm-sym", { yes: range(design.yes), no: range(design.no), yes_label: yesLabel, no_label: noLabel });
    case "unrelated-unknown":
      return group + t("explain_unrelated-unknown", { p: range(design.p) });
    case "kuk":
      return t("explain_kuk", { cards: design.cards, red_yes: percent(design.red_yes), red_no: percent(design.red_no), yes_label: yesLabel });
    default:
      return "";
  }
}

function explainDesign(q) {
  if (q.type === "number") return window.rrsiteNumbers ? window.rrsiteNumbers.explain(q, t) : ""; // issue 21
  const design = q.design || {};
  const matrix = q.matrix;
  const values = q.values || [];
  const yesLabel = optionLabel(q, "yes");
  const noLabel = optionLabel(q, "no");
  const binary = q.type === "yes-no" && matrix && matrix.length === 2;
  const p00 = binary ? matrix[0][0] : null;
  const p11 = binary ? matrix[1][1] : null;
  switch (design.name) {
    case "forced-yes":
      return t("explain_forced-yes", { truth: percent(design.truth ?? p00), yes_label: yesLabel, no_label: noLabel });
    case "warner": {
      const p = design.p ?? p00;
      const mirrored = mirroredText(q);
      return t(mirrored ? "explain_warner-mirrored" : "explain_warner", { p: percent(p), q: percent(1 - p), mirrored });
    }
    case "unrelated": {
      const hasInnocuous = Boolean(document.querySelector(`[data-innocuous-for="${q.id}"]`));
      return t(hasInnocuous ? "explain_unrelated" : "explain_unrelated-drawn", {
        p: percent(design.p), q: percent(1 - design.p), rate: percent(design.innocuous_rate), yes_label: yesLabel,
      });
    }
    case "crosswise":
    case "triangular":
      return t(`explain_${design.name}`, { rate: percent(design.p) });
    case "mangat":
    case "sld":
    case "cdm":
    case "cdm-sym":
    case "unrelated-unknown":
    case "kuk":
      return explainNewDesign(q, design, yesLabel, noLabel);
    case "k-rr":
      return t("explain_k-rr", { p: percent(matrix ? matrix[0][0] : design.p) });
    default:
      if (binary) {
        return t("explain_forced-response", {
          truth: percent(p00 + p11 - 1), yes: percent(1 - p00), no: percent(1 - p11), yes_label: yesLabel, no_label: noLabel,
        });
      }
      if (matrix) {
        const diagonal = values.map((_, i) => matrix[i][i]);
        if (Math.max(...diagonal) - Math.min(...diagonal) < 1e-9) return t("explain_matrix-same", { p: percent(diagonal[0]) });
        return t("explain_matrix", { min: percent(Math.min(...diagonal)), max: percent(Math.max(...diagonal)) });
      }
      return "";
  }
}

function clearErrors() {
  $("rr-errors").hidden = true;
  $("rr-errors-list").replaceChildren();
  for (const element of form.querySelectorAll(".rr-field-error")) {
    element.hidden = true;
    element.textContent = "";
  }
  for (const element of form.querySelectorAll("[aria-invalid]")) element.removeAttribute("aria-invalid");
}

/** Remove one question's error (its message, outline and summary line) once it is changed. */
function clearQuestionError(q) {
  const field = $(`q-${q.id}-error`);
  if (!field || field.hidden) return;
  field.hidden = true;
  field.textContent = "";
  for (const element of questionElement(q).querySelectorAll("[aria-invalid]")) element.removeAttribute("aria-invalid");
  const list = $("rr-errors-list");
  for (const item of Array.from(list.children)) if (item.dataset.question === q.id) item.remove();
  if (!list.children.length) $("rr-errors").hidden = true;
}

function showErrors(errors) {
  const list = $("rr-errors-list");
  for (const { q, message } of errors) {
    const field = $(`q-${q.id}-error`);
    field.textContent = message;
    field.hidden = false;
    const input = questionElement(q).querySelector("input, textarea");
    if (input) input.setAttribute("aria-invalid", "true");
    const item = document.createElement("li");
    item.dataset.question = q.id;
    const link = document.createElement("a");
    link.href = `#q-${q.id}`;
    link.textContent = `${questionText(q)}: ${message}`;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      const first = questionElement(q).querySelector("input:not([tabindex='-1']), textarea");
      if (first) first.focus();
    });
    item.append(link);
    list.append(item);
  }
  $("rr-errors-title").textContent = t("errors_title");
  $("rr-errors").hidden = false;
  $("rr-errors").focus();
}

/** Read and check the form: {errors, items (for the worker), direct (answers sent as given)}.
 * While editing a stored report (`editing`), the sensitive questions are fixed and skipped. */
function readForm() {
  const errors = [];
  const items = [];
  const direct = {};
  for (const q of questions) {
    // fielding hook (issue 11): a question hidden by its show_if (conditions.js) is neither checked nor sent.
    if (questionElement(q).hidden) continue;
    const error = (message) => errors.push({ q, message });
    if (q.sensitive && editing) continue;
    if (isCombined(q)) {
      const report = optionInputs(q, "input[data-report]").find((i) => i.checked);
      if (report) direct[q.id] = report.value;
      else if (q.required) error(t("error_required"));
      continue;
    }
    if (q.sensitive && q.type === "number" && window.rrsiteNumbers) { // issue 21: numbers.js
      const read = window.rrsiteNumbers.read(q, t);
      if (read.error) error(read.error);
      else if (read.item) items.push(read.item);
      continue;
    }
    if (q.sensitive) {
      const truth = optionInputs(q, "input[data-truth]").find((i) => i.checked);
      const innocuousBox = document.querySelector(`[data-innocuous-for="${q.id}"]`);
      const innocuous = innocuousBox ? Array.from(innocuousBox.querySelectorAll("input[data-innocuous]")).find((i) => i.checked) : null;
      if (!truth) error(t("error_required"));
      else if (innocuousBox && !innocuous) error(t("error_innocuous"));
      else items.push({ question: q, truth: truth.value, innocuous: innocuous ? innocuous.value : undefined });
      continue;
    }
    let value;
    if (q.type === "yes-no" || q.type === "choice") {
      const checked = optionInputs(q, `input[name]`).find((i) => i.checked);
      value = checked ? checked.value : undefined;
    } else if (q.type === "multi-choice") {
      const checked = optionInputs(q, "input[name]").filter((i) => i.checked).map((i) => i.value);
      value = checked.length ? checked : undefined;
    } else if (q.type === "number") {
      const input = $(`q-${q.id}-input`);
      const raw = input.value.trim();
      if (raw === "" && input.validity && input.validity.badInput) { error(t("error_number")); continue; }
      if (raw !== "") {
        const number = Number(raw);
        if (!Number.isFinite(number)) { error(t("error_number")); continue; }
        if (q.integer && !Number.isInteger(number)) { error(t("error_integer")); continue; }
        if (q.min !== undefined && q.min !== null && number < q.min) { error(t("error_min", { min: q.min })); continue; }
        if (q.max !== undefined && q.max !== null && number > q.max) { error(t("error_max", { max: q.max })); continue; }
        value = number;
      }
    } else if (q.type === "text") {
      const text = $(`q-${q.id}-input`).value.trim();
      const max = q.max_length || 500;
      if (text.length > max) { error(t("error_length", { max, length: text.length })); continue; }
      value = text === "" ? undefined : text;
    }
    if (value === undefined) {
      if (q.required) error(t("error_required"));
    } else {
      direct[q.id] = value;
    }
  }
  return { errors, items, direct };
}

function resetForm() {
  form.reset();
  for (const group of form.querySelectorAll("[data-group]")) if (group._rrReset) group._rrReset();
  clearErrors();
}

// ---- storage: the randomized report, never the truth --------------------------------------

const storage = {
  available: true,
  memory: null,
  load() {
    let record = this.memory;
    try {
      const raw = window.localStorage.getItem(STORAGE_KEY);
      record = raw ? JSON.parse(raw) : null;
    } catch {
      this.available = false;
    }
    const body = record && record.body;
    const valid = body && body.survey === config.survey && body.version === config.version
      && typeof body.respondent === "string" && body.answers && typeof body.answers === "object";
    return valid ? record : null;
  },
  /** Whether localStorage accepts a write (probed with a throw-away key). */
  writable() {
    try {
      const probe = `${STORAGE_KEY}:probe`;
      window.localStorage.setItem(probe, "1");
      window.localStorage.removeItem(probe);
      return true;
    } catch {
      this.available = false;
      return false;
    }
  },
  save(record) {
    this.memory = record;
    try {
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify(record));
    } catch {
      this.available = false;
    }
  },
};

// ---- forgetting: a salted marker that this version was answered, nothing else ----------------

const SALT_KEY = "rrsite:salt";

/** The device's random salt (made on the first forgetting), or null (none yet, or storage blocked). */
function deviceSalt(create) {
  try {
    let salt = window.localStorage.getItem(SALT_KEY);
    if (!salt && create) {
      salt = newRespondentToken();
      window.localStorage.setItem(SALT_KEY, salt);
    }
    return salt;
  } catch {
    return null;
  }
}

/** The storage key of the "answered" marker: a salted SHA-256 of survey and version. */
async function markerKey(create = false) {
  const salt = deviceSalt(create);
  if (!salt || !(crypto.subtle && crypto.subtle.digest)) return null;
  const data = new TextEncoder().encode(`${salt}\n${config.survey}\n${config.version}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return `rrsite:answered:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Whether this version was answered here and its answers forgotten. */
async function answeredAndForgotten() {
  const key = await markerKey();
  try {
    return Boolean(key && window.localStorage.getItem(key));
  } catch {
    return false;
  }
}

/** Drop the stored report and direct answers; keep only the salted marker. */
async function forget() {
  const key = await markerKey(true);
  try {
    if (key) window.localStorage.setItem(key, "1");
    window.localStorage.removeItem(STORAGE_KEY);
  } catch {
    // storage blocked: nothing was kept
  }
  storage.memory = null;
  showForgotten();
}

function showForgotten() {
  form.hidden = true;
  review.hidden = true;
  current = null;
  $("rr-transcript").replaceChildren();
  $("rr-done-title").textContent = t("forgotten_title");
  $("rr-done-text").textContent = t("forgotten");
  $("rr-forget-box").hidden = true;
  $("rr-done").hidden = false;
  $("rr-done-title").focus();
}

function newRespondentToken() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// ---- what is sent --------------------------------------------------------------------------

function netlifyFields(body) {
  const fields = new URLSearchParams();
  fields.append("form-name", form.getAttribute("name") || config.survey);
  fields.append("survey", body.survey);
  fields.append("version", body.version);
  fields.append("respondent", body.respondent);
  for (const [id, value] of Object.entries(body.answers)) {
    if (value === null || value === undefined) continue;
    fields.append(id, Array.isArray(value) ? JSON.stringify(value) : String(value));
  }
  // two-group designs: the group as "<id>.group", the collector's export column
  for (const [id, group] of Object.entries(body.groups || {})) fields.append(`${id}.group`, String(group));
  return fields;
}

/** The request (or file) for a body, byte for byte what the review shows. */
function outgoing(body) {
  if (target === "netlify") {
    const fields = netlifyFields(body);
    return {
      url: new URL(window.location.pathname, document.baseURI).href,
      type: "application/x-www-form-urlencoded",
      payload: fields.toString(),
      shown: Array.from(fields.entries()).map(([key, value]) => `${key}=${value}`).join("\n"),
    };
  }
  const json = JSON.stringify(body, null, 2);
  const url = target === "endpoint" ? config.submit.url : (config.submit && config.submit.url) || "/api/submissions";
  return { url: new URL(url, document.baseURI).href, type: "application/json", payload: json, shown: json };
}

function destinationText(request) {
  if (target === "netlify") return t("will_send_netlify");
  if (target === "download") return t("will_send_download");
  if (target === "endpoint") return t("will_send_endpoint", { url: request.url });
  return t("will_send_collector", { url: new URL(request.url).pathname });
}

class SendError extends Error {
  constructor(message, retryable, status = null) {
    super(message);
    this.retryable = retryable;
    this.status = status;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(request) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      let response;
      try {
        response = await fetch(request.url, {
          method: "POST",
          headers: { "Content-Type": request.type },
          body: request.payload,
          credentials: target === "endpoint" ? "omit" : "same-origin",
          cache: "no-store",
        });
      } catch {
        throw new SendError(t("send_failed_network"), true);
      }
      if (response.ok) {
        await response.text().catch(() => ""); // drain the body so the request completes
        return response;
      }
      const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
      throw new SendError(t("send_failed_status", { status: response.status }), retryable, response.status);
    } catch (error) {
      if (!error.retryable || attempt >= SEND_ATTEMPTS) throw error;
      sendStatus.textContent = t("retrying");
      await sleep(600 * attempt);
    }
  }
}

function downloadFile(record, request) {
  const filename = `${config.survey}-${record.body.respondent.slice(0, 8)}.json`;
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([request.payload], { type: "application/json" }));
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 60000);
  return filename;
}

// ---- review and send ----------------------------------------------------------------------

let current = null; // {record, request}
let editing = null; // the stored record whose direct answers are being edited (before sending)

const directQuestions = questions.filter((q) => !q.sensitive);

/** Put a direct answer back into its inputs. */
function setDirectAnswer(q, value) {
  if (q.type === "number" || q.type === "text") {
    $(`q-${q.id}-input`).value = value === undefined ? "" : String(value);
    return;
  }
  const values = Array.isArray(value) ? value.map(String) : value === undefined ? [] : [String(value)];
  for (const input of optionInputs(q, "input[name]")) input.checked = values.includes(input.value);
}

/** Back to the form to fix direct answers; the sensitive reports stay as randomized. */
function editDirectAnswers() {
  if (!current || current.record.sent_at) return;
  editing = current.record;
  for (const q of directQuestions) setDirectAnswer(q, editing.body.answers[q.id]);
  for (const q of sensitiveQuestions) {
    const element = questionElement(q);
    if (element) {
      element.disabled = true;
      element.dataset.fixed = "true";
    }
    const explain = $(`q-${q.id}-explain`);
    if (explain) explain.textContent = t("edit_fixed", { label: optionLabel(q, String(editing.body.answers[q.id])) });
  }
  const innocuous = document.querySelectorAll("[data-innocuous-for]");
  for (const box of innocuous) box.disabled = true;
  review.hidden = true;
  $("rr-transcript").replaceChildren();
  $("rr-transcript").hidden = true;
  form.hidden = false;
  $("rr-submit-note").textContent = t("edit_note");
  const first = directQuestions.length && questionElement(directQuestions[0]);
  if (first) first.scrollIntoView({ block: "start" });
  const input = first && first.querySelector("input, textarea");
  if (input) input.focus();
}

/** Save edited direct answers into the stored record (same token, same reports) and review it. */
function saveEditedAnswers() {
  const { errors, direct } = readForm();
  if (errors.length) {
    showErrors(errors);
    return;
  }
  const record = editing;
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
  editing = null;
  $("rr-submit-note").textContent = t("submit_note");
  showReview(record, { restored: false, edited: true });
}

function deviceIcon(step) {
  const icon = document.createElement("span");
  icon.className = `rr-device rr-${step.device}`;
  icon.setAttribute("aria-hidden", "true");
  if (step.device === "coin") {
    icon.classList.add(step.outcome === "heads" ? "rr-heads" : "rr-tails");
  } else if (step.device === "die") {
    icon.textContent = step.outcome;
  } else {
    icon.style.setProperty("--rr-turn", `${Number(step.outcome) || 0}turn`);
  }
  return icon;
}

/**
 * The rule that decided a step, so the respondent can check it: which faces of the die, or which
 * range of the random number, lead to the step's action (from the step's chances, in the order
 * rrsite/core draws them: the first action takes the lowest faces or numbers).
 */
function stepRule(step) {
  const chances = step.chances || [];
  const index = chances.findIndex(([name]) => name === step.action);
  if (index < 0) return "";
  const chance = percent(chances[index][1]);
  if (step.device === "coin") {
    return t("rule_coin", { side: t(step.outcome === "heads" ? "coin_heads" : "coin_tails"), chance });
  }
  if (step.device === "die") {
    const counts = chances.map(([, p]) => Math.round(p * step.faces));
    const from = counts.slice(0, index).reduce((a, b) => a + b, 0) + 1;
    const to = from + counts[index] - 1;
    return from === to
      ? t("rule_die_one", { face: from, faces: step.faces, chance })
      : t("rule_die", { from, to, faces: step.faces, chance });
  }
  const lo = chances.slice(0, index).reduce((a, [, p]) => a + p, 0);
  const hi = lo + chances[index][1];
  return t("rule_spinner", { lo: lo.toFixed(4), hi: Math.min(hi, 1).toFixed(4), chance });
}

function describeStep(q, step, counters, result, item) {
  counters[step.device] = (counters[step.device] || 0) + 1;
  const n = counters[step.device];
  const what = step.device === "coin" ? t("step_coin", { n, side: t(step.outcome === "heads" ? "coin_heads" : "coin_tails") })
    : step.device === "die" ? t("step_die", { n, faces: step.faces, face: step.outcome })
      : t("step_spinner", { n, value: step.outcome });
  const action = step.action;
  let meaning;
  if (action === "truth") meaning = t("action_truth");
  else if (action === "forced") meaning = t("action_forced");
  else if (action === "yes" || action === "no") meaning = t("action_forced_value", { label: optionLabel(q, action) });
  else if (action === "statement") meaning = t("action_statement");
  else if (action === "mirrored") meaning = mirroredText(q) ? t("action_mirrored_statement", { mirrored: mirroredText(q) }) : t("action_mirrored");
  else if (action === "sensitive") meaning = t("action_sensitive");
  else if (action === "innocuous") meaning = t(item.innocuous !== undefined ? "action_innocuous" : "action_innocuous_drawn");
  else if (action === "red" || action === "black") meaning = t(`action_card_${action}`);
  else if (action === "group-1" || action === "group-2") meaning = t("action_group", { group: action.slice(6) });
  else if (action === "other") meaning = t("action_other");
  else if (/^other-\d+$/.test(action)) meaning = t("action_other_pick", { label: optionLabel(q, result.report) });
  else if (/^report-\d+$/.test(action)) meaning = t("action_report", { label: optionLabel(q, q.values[Number(action.slice(7)) - 1]) });
  else meaning = action;
  const rule = stepRule(step);
  return `${what} → ${meaning}${rule ? ` ${rule}` : ""}`;
}

// fielding hook (issue 11): practice.js runs a practice round on the same randomizer and words
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

function renderTranscript(results, items) {
  const box = $("rr-transcript");
  box.replaceChildren();
  for (let result of results) {
    const q = sensitiveQuestions.find((candidate) => candidate.id === result.id);
    const item = items.find((candidate) => candidate.question.id === result.id);
    const section = document.createElement("section");
    section.className = "rr-transcript-question";
    section.dataset.question = q.id;
    const heading = document.createElement("h3");
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
    const numbers = q.type === "number" && window.rrsiteNumbers ? window.rrsiteNumbers.transcript(q, result, item, t, stepRule) : null;
    if (numbers && config.review !== "result-only") { // issue 21: the draw and the arithmetic
      for (const line of numbers.lines) {
        const li = document.createElement("li");
        if (line.step) li.append(deviceIcon(line.step));
        if (line.arithmetic) li.className = "rr-arithmetic";
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
  }
  box.hidden = results.length === 0;
  // Play the animation once (CSS skips it under prefers-reduced-motion).
  requestAnimationFrame(() => box.classList.add("rr-animate"));
}

/** An answer as the page's language shows it (option labels, not the values sent). */
function answerText(q, value) {
  if (Array.isArray(value)) return value.map((v) => optionLabel(q, v)).join(", ");
  if (q.type === "number" && window.rrsiteNumbers) return window.rrsiteNumbers.show(value, q); // issue 21
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
    list.append(term, value);
  }
}

function showReview(record, { restored, edited = false }) {
  const request = outgoing(record.body);
  current = { record, request };
  form.hidden = true;
  $("rr-done").hidden = true;
  $("rr-review-title").textContent = restored ? t("stored_title") : t("review_title");
  const intro = restored
    ? [t(target === "download" ? "stored_intro_download" : "stored_intro", { date: formatDate(record.randomized_at) }), record.sent_at ? t(target === "download" ? "stored_saved" : "stored_sent", { date: formatDate(record.sent_at) }) : ""]
    : [t("review_intro")];
  $("rr-review-intro").textContent = intro.filter(Boolean).join(" ");
  if (restored || edited) {
    $("rr-transcript").replaceChildren();
    $("rr-transcript").hidden = true;
  }
  if (edited) $("rr-review-intro").textContent = t("edit_saved");
  $("rr-edit").hidden = Boolean(record.sent_at) || directQuestions.length === 0;
  $("rr-destination").textContent = destinationText(request);
  renderAnswers(record.body);
  $("rr-body").textContent = request.shown;
  confirmButton.textContent = target === "download" ? t("confirm_download") : record.sent_at ? t("send_again") : t("confirm_send");
  confirmButton.disabled = false;
  confirmButton.hidden = false;
  retryBox.hidden = true;
  sendStatus.textContent = "";
  sendError.textContent = "";
  review.hidden = false;
  $("rr-review-title").focus();
}

async function confirmAndSend() {
  if (!current) return;
  const { record, request } = current;
  // fielding hook (issue 11): in kiosk mode kiosk.js queues and sends the report, clears this
  // respondent from the page and storage, and hands the device to the next respondent.
  if (window.rrsiteKiosk) { current = null; window.rrsiteKiosk.hand(record, request); return; }
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
    await post(request);
  } catch (error) {
    sendStatus.textContent = "";
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
}

function finish(text) {
  review.hidden = true;
  $("rr-transcript").replaceChildren(); // the coins' transcript is not kept once sent
  $("rr-done-text").textContent = text;
  $("rr-done").hidden = false;
  const outro = $("rr-outro");
  if (outro) {
    $("rr-done-title").textContent = t("done_title"); // the author's words carry the thanks
    $("rr-done").append(outro); // the author's closing words, once, inside the thanks screen
    outro.hidden = false;
  }
  $("rr-forget-box").hidden = false;
  $("rr-done-title").focus();
  current = null;
}

// ---- submit: randomize, store, review --------------------------------------------------------

let randomizer = null;
let busy = false;

async function onSubmit(event) {
  event.preventDefault();
  if (busy) return;
  busy = true;
  submitButton.disabled = true;
  clearErrors();
  try {
    if (editing) {
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
    // waited, so the check, the coins and the save happen under one lock (Web Locks where the
    // browser has them), with storage read again right before the coins and before saving.
    await withDeviceLock(() => randomizeAndStore());
  } finally {
    busy = false;
    submitButton.disabled = false;
  }
}

/** Run `task` holding the device-wide lock of this survey version (or directly without Web Locks). */
async function withDeviceLock(task) {
  if (navigator.locks && typeof navigator.locks.request === "function") {
    return navigator.locks.request(STORAGE_KEY, task);
  }
  return task();
}

/** If a report is stored (by this or another tab), show it and return true. */
function showStoredIfAny() {
  const stored = storage.load();
  if (!stored) return false;
  $("rr-submit-note").textContent = t("submit_note");
  resetTruths();
  showReview(stored, { restored: true });
  return true;
}

function resetTruths() {
  for (const group of form.querySelectorAll("[data-group]")) if (group._rrReset) group._rrReset();
  if (window.rrsiteNumbers) window.rrsiteNumbers.reset(); // issue 21: the true numbers
}

async function randomizeAndStore() {
  if (showStoredIfAny()) return;
  if (await answeredAndForgotten()) {
    resetTruths();
    showForgotten();
    return;
  }
  const { errors, items, direct } = readForm(); // the respondent may have changed answers meanwhile
  if (errors.length) {
    showErrors(errors);
    return;
  }
  let results = [];
  if (items.length) {
    $("rr-submit-note").textContent = t("randomizing");
    try {
      results = await randomizer.respond(items.map(({ question, truth, innocuous }) => ({ question, truth, innocuous })));
    } catch (error) {
      $("rr-submit-note").textContent = t("randomize_failed", { reason: error.message });
      return;
    }
  }
  // Without Web Locks another tab may have saved while the coins were flipped: its report wins
  // and these results are dropped unseen.
  if (showStoredIfAny()) return;
  const answers = {};
  const groups = {}; // two-group designs: the group core drew in the worker (crypto.getRandomValues)
  for (const q of questions) {
    const result = results.find((r) => r.id === q.id);
    if (result) answers[q.id] = result.report;
    else if (Object.prototype.hasOwnProperty.call(direct, q.id)) answers[q.id] = direct[q.id];
    if (result && result.group) groups[q.id] = result.group;
  }
  const record = {
    format: 1,
    body: { survey: config.survey, version: config.version, respondent: newRespondentToken(), answers,
      ...(Object.keys(groups).length ? { groups } : {}),
      ...(invitationCode ? { invitation: invitationCode } : {}) }, // [collector hook, issue 12]
    randomized_at: new Date().toISOString(),
    sent_at: null,
  };
  // Stored before it is shown, so a reload cannot flip the coins again.
  storage.save(record);
  // The true answers are no longer needed: clear them from the page.
  resetTruths();
  $("rr-submit-note").textContent = t("submit_note");
  renderTranscript(results, items);
  showReview(record, { restored: false });
}

function startOver() {
  // For kiosks and tests: only acts when no report is stored (the coins are never flipped twice).
  if (storage.load()) return;
  current = null;
  if (editing) {
    editing = null;
    for (const element of form.querySelectorAll("fieldset[disabled]")) element.disabled = false;
    writeExplanations();
  }
  resetForm();
  review.hidden = true;
  $("rr-done").hidden = true;
  $("rr-transcript").replaceChildren();
  form.hidden = false;
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

function main() {
  const stored = storage.load();
  // The runtime first: it is the long pole, and the form does not need it until submit.
  if (sensitiveQuestions.some((q) => !isCombined(q)) && !stored) randomizer = new Randomizer();
  for (const group of form.querySelectorAll("[data-group]")) setUpRadioGroup(group);
  form.addEventListener("submit", onSubmit);
  confirmButton.addEventListener("click", confirmAndSend);
  $("rr-retry").addEventListener("click", confirmAndSend);
  $("rr-edit").addEventListener("click", editDirectAnswers);
  document.addEventListener("rrsite:reset", startOver);
  $("rr-forget").addEventListener("click", () => { forget(); });
  if (!stored) {
    answeredAndForgotten().then((answered) => {
      if (answered && !storage.load()) {
        runtimeNotNeeded();
        if (randomizer && randomizer.worker) randomizer.worker.terminate();
        showForgotten();
      }
    });
  }
  submitButton.disabled = false;
  performance.mark("rr-interactive");
  if (stored) {
    runtimeNotNeeded();
    showReview(stored, { restored: true });
  }
  for (const q of questions) {
    const element = questionElement(q);
    if (element) for (const type of ["input", "change"]) element.addEventListener(type, () => clearQuestionError(q));
  }
  // Another tab stored a report: this one moves to it (its own form is never randomized).
  window.addEventListener("storage", (event) => {
    if (event.key !== STORAGE_KEY || !event.newValue || busy) return;
    const record = storage.load();
    if (record && (!current || current.record.body.respondent !== record.body.respondent)) {
      resetTruths();
      showReview(record, { restored: true });
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
  // The designs in words, once the form can already be used.
  setTimeout(writeExplanations, 0);
}

/** The designs in words, one explanation per sensitive question. */
function writeExplanations() {
  for (const q of sensitiveQuestions) {
    const explain = $(`q-${q.id}-explain`);
    // One explanation per question: the author's help text replaces the generated one.
    const generated = $(`q-${q.id}-help`) ? "" : explainDesign(q);
    if (explain) explain.textContent = `${generated} ${t(isCombined(q) ? "combined_private" : "sensitive_private")}`.trim();
  }
}

main();
