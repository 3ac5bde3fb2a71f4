// Online panels (rrsite/survey/fielding, `panel:`): Prolific, MTurk, CloudResearch or any panel
// that puts the participant's id in the study link's query string.
//
// The participant id is read from the query string into this module's memory and nowhere else:
// it is never sent to the collector, never put in localStorage or a cookie, never part of a URL
// the page requests. Only the way back to the panel (`redirect`, with `{id}` if the researcher
// asked for it) carries it, to the panel. With `record: true` the body carries instead the
// SHA-256 of "rrsite-completion\n<survey>\n<id>", made here, which the collector keeps apart
// from the answers (docs/contracts.md, "Online panels").
//
// The completion code is given only once the collector has acknowledged the submission
// (review.js's "rrsite:sent", after a 2xx answer). A full survey (429 on `survey`) sends the
// participant to `over_quota`, declining the consent to `no_consent`, a screening answer to
// `screen_out`: nothing is sent in those cases.

const $ = (id) => document.getElementById(id);
const config = JSON.parse($("rr-config").textContent);
const messages = JSON.parse($("rr-messages").textContent);
const panel = config.panel;
const html = document.documentElement;
const form = $("rr-form");
/** Time on the thanks screen before the browser goes back to the panel (ms). */
const REDIRECT_DELAY = 1500;

function t(key, vars = {}) {
  const template = Object.prototype.hasOwnProperty.call(messages, key) ? messages[key] : key;
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

const name = panel.name || t("panel_generic");
const given = new URLSearchParams(window.location.search).get(panel.id);
let participant = given && given.trim() && given.length <= 256 ? given.trim() : null;
html.dataset.rrPanel = participant ? "ready" : "missing";

// ---- the completion record: a digest made here, never the id -----------------------------

let digest = null;

async function sha256Hex(text) {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What page.js adds to the body: `completion` when the survey keeps a record. */
async function fields() {
  if (!panel.record || !participant || !(crypto.subtle && crypto.subtle.digest)) return {};
  digest ??= sha256Hex(`rrsite-completion\n${config.survey}\n${participant}`);
  return { completion: await digest };
}

window.rrsitePanel = { fields };

// ---- the way back -----------------------------------------------------------------------------

/** The panel's URL for a code, or null when the panel takes a code typed in (no redirect). */
function exitUrl(code) {
  if (!panel.redirect) return null;
  return panel.redirect.replaceAll("{code}", encodeURIComponent(code))
    .replaceAll("{id}", encodeURIComponent(participant || ""));
}

/** Show the way back in `#rr-panel` (inside `host`, if given) and, with a redirect, take it. */
function leave(kind, code, text, host = null) {
  const box = $("rr-panel");
  if (!box) return;
  if (host) host.append(box);
  $("rr-panel-text").textContent = text;
  const link = $("rr-panel-link");
  const shown = $("rr-panel-code");
  link.hidden = true;
  shown.hidden = true;
  box.hidden = false;
  if (!participant) {
    $("rr-panel-text").textContent = `${text} ${t("panel_no_id", { panel: name })}`;
    return;
  }
  const url = exitUrl(code);
  html.dataset.rrPanelExit = kind;
  if (!url) {
    shown.textContent = t("panel_copy_code", { panel: name, code });
    shown.hidden = false;
    html.dataset.rrPanel = "shown";
    return;
  }
  link.href = url;
  link.textContent = t("panel_return", { panel: name });
  link.hidden = false;
  shown.textContent = t("panel_code", { code });
  shown.hidden = false;
  html.dataset.rrPanel = "leaving";
  leaving = setTimeout(() => window.location.assign(url), REDIRECT_DELAY);
}

// "Forget my answers" (storage.js, "rrsite:forget"): the participant id leaves memory and the
// address bar, the completion code the screen, and a way back not yet taken is not taken.
let leaving = null;

document.addEventListener("rrsite:forget", () => {
  participant = null;
  digest = null;
  if (leaving !== null) clearTimeout(leaving);
  leaving = null;
  const box = $("rr-panel");
  if (box) {
    box.hidden = true;
    for (const id of ["rr-panel-text", "rr-panel-code", "rr-panel-link"]) {
      const element = $(id);
      if (element) element.textContent = "";
    }
    const link = $("rr-panel-link");
    if (link) link.removeAttribute("href");
  }
  const address = new URL(window.location.href);
  if (address.searchParams.has(panel.id)) {
    address.searchParams.delete(panel.id);
    window.history.replaceState(null, "", address.pathname + address.search + address.hash);
  }
  html.dataset.rrPanel = "missing";
  delete html.dataset.rrPanelExit;
});

// After the collector's acknowledgement, and only then: the completion code.
document.addEventListener("rrsite:sent", () => {
  leave("complete", panel.complete, t("panel_leaving", { panel: name }), $("rr-done"));
});

// A full survey: its answers were not stored.
document.addEventListener("rrsite:send-failed", (event) => {
  const { status, field } = event.detail || {};
  if (status === 429 && field === "survey" && panel.over_quota) {
    const review = $("rr-review");
    if (review) review.hidden = true;
    leave("over-quota", panel.over_quota, t("panel_over_quota", { panel: name }));
  }
});

// Declining the consent.
const decline = $("rr-consent-decline");
if (decline && panel.no_consent) {
  decline.addEventListener("click", () => {
    leave("no-consent", panel.no_consent, t("panel_no_consent", { panel: name }), $("rr-consent"));
  });
}

// ---- screening: an answer that ends the survey (direct questions only) ----------------------

const screening = (config.questions || []).filter((q) => Array.isArray(q.screen_out));

/** The first shown screening question answered with one of its screen-out answers. */
function screenedBy() {
  for (const q of screening) {
    const box = $(`q-${q.id}`);
    if (!box || box.hidden) continue;
    const chosen = Array.from(box.querySelectorAll("input[name]"))
      .filter((input) => input.name === q.id && input.checked).map((input) => input.value);
    if (chosen.some((value) => q.screen_out.includes(value))) return q;
  }
  return null;
}

function screenOut() {
  if (form) form.hidden = true;
  leave("screen-out", panel.screen_out, t("panel_screened_out", { panel: name }));
}

function showScreening() {
  for (const q of screening) {
    const note = $(`q-${q.id}-screen-out`);
    if (note) note.hidden = screenedBy() !== q;
  }
}

if (form && screening.length && panel.screen_out) {
  for (const q of screening) {
    const box = $(`q-${q.id}`);
    if (!box) continue;
    const note = document.createElement("div");
    note.className = "rr-screen-out";
    note.id = `q-${q.id}-screen-out`;
    note.hidden = true;
    const text = document.createElement("p");
    text.textContent = t("panel_screen_out_note", { panel: name });
    const button = document.createElement("button");
    button.type = "button";
    button.className = "rr-button";
    button.textContent = t("panel_screen_out_leave", { panel: name });
    button.addEventListener("click", screenOut);
    note.append(text, button);
    box.append(note);
  }
  form.addEventListener("change", showScreening);
  // Sending is refused with a screening answer: the survey ends there instead, nothing is sent.
  document.addEventListener("submit", (event) => {
    if (event.target !== form || !screenedBy()) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    screenOut();
  }, true);
}
