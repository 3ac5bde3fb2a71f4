// One wave of a panel (a survey with `series:`): the permanent reports the device keeps.
//
// rrsite/core draws, the first time, a permanent randomized report for every possible answer of
// each question (so what is kept says nothing of the true answer) and in every wave sends a
// light re-randomization of the one for the true answer (rrsite.core.frequency.waves). This file
// keeps those permanent reports, and the panel's respondent token, in localStorage under
// `rrsite:series:<series id>`, only when the respondent ticks "keep" (and removes them when they
// untick it or choose "Forget"); it states the privacy of one wave and of all waves together.
// page.js calls its hooks (window.rrsiteWaves). Loaded before page.js. (Online panels, `panel:`, are panel.js.)

const box = document.getElementById("rr-waves");
const config = JSON.parse(document.getElementById("rr-config").textContent);
const messages = JSON.parse(document.getElementById("rr-messages").textContent);
const lang = document.documentElement.lang || "en";
const series = box ? box.dataset.series : null;
const KEY = `rrsite:series:${series}`;

function t(key, vars = {}) {
  const template = Object.prototype.hasOwnProperty.call(messages, key) ? messages[key] : key;
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

const number = (x) => new Intl.NumberFormat(lang, { maximumFractionDigits: 2 }).format(x);

function load() {
  try {
    const kept = JSON.parse(window.localStorage.getItem(KEY) || "null");
    return kept && typeof kept.token === "string" && kept.questions ? kept : null;
  } catch {
    return null;
  }
}

function save(kept) {
  try {
    window.localStorage.setItem(KEY, JSON.stringify(kept));
    return true;
  } catch {
    return false;
  }
}

function drop() {
  try {
    window.localStorage.removeItem(KEY);
  } catch {
    // storage blocked: nothing was kept
  }
}

/** The design a kept table belongs to (a changed design draws new permanent reports). */
const designKey = (q) => JSON.stringify([q.design, q.memoize && q.memoize.wave_epsilon, q.values]);

function keepChecked() {
  const input = document.getElementById("rr-waves-keep");
  return Boolean(input && input.checked);
}

/** The permanent reports kept for this question, or undefined (drawn anew by the worker). */
function permanent(q) {
  if (!q.memoize || !keepChecked()) return undefined;
  const kept = load();
  const entry = kept && kept.questions[q.id];
  return entry && entry.design === designKey(q) ? entry.table : undefined;
}

let token = null;

/** After the draws: keep the permanent reports (if allowed), and this wave's respondent token. */
function keep(results, newToken) {
  if (!keepChecked()) {
    drop(); // unticked: nothing of the series stays on this device
    token = newToken();
    return;
  }
  const kept = load() || { format: 1, token: newToken(), questions: {} };
  for (const result of results) {
    const q = (config.questions || []).find((candidate) => candidate.id === result.id);
    if (q && q.memoize && result.permanent) kept.questions[q.id] = { design: designKey(q), table: result.permanent };
  }
  token = save(kept) ? kept.token : newToken();
}

/** The respondent token of this wave's body: the panel's when the device keeps it. */
function respondent(newToken) {
  return token || newToken();
}

function describe() {
  if (!box) return;
  const data = box.dataset;
  const text = document.getElementById("rr-waves-text");
  if (text) {
    text.textContent = t("waves_text", {
      wave: data.wave, one: number(Number(data.one)), through: number(Number(data.through)),
      all: number(Number(data.all)), without: number(Number(data.without)),
    });
  }
  const kept = load();
  const input = document.getElementById("rr-waves-keep");
  if (input && kept) input.checked = true;
  const status = document.getElementById("rr-waves-status");
  if (status) status.textContent = kept ? t("waves_status_kept") : "";
  for (const note of document.querySelectorAll("[data-waves-for]")) {
    const q = (config.questions || []).find((candidate) => candidate.id === note.dataset.wavesFor);
    if (q && q.memoize) {
      note.textContent = t("waves_question", {
        one: number(q.memoize.wave_epsilon), all: number(q.memoize.epsilon_all_waves),
        through: number(q.memoize.ledger ? q.memoize.ledger[q.memoize.ledger.length - 1] : q.memoize.wave_epsilon),
      });
    }
  }
}

// "Forget my answers on this device" removes the permanent reports of the series too.
document.addEventListener("click", (event) => {
  if (event.target && event.target.id === "rr-forget") drop();
});

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", describe);
else describe();

// "Forget my answers" and "Someone else is answering" (storage.js's clearRespondent): the
// permanent reports and the series' token are this respondent's, so they go too.
document.addEventListener("rrsite:forget", drop);

window.rrsiteWaves = { permanent, keep, respondent, forget: drop };
