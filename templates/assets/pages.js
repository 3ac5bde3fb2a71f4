// Pages: a survey split with `+++` lines shows one page of questions at a time, with
// a progress bar, Back and Next. The submit button is shown on the last page only (a
// respondent is not offered to send before seeing every page); it checks every page and, if
// something is missing, shows the page of the first question that needs an answer. Direct
// answers are kept in this tab's sessionStorage so that a reload returns to the same page with
// the same answers; the answers to randomized questions are never stored (their inputs have no
// name and are not read here): they are randomized at the end, as on a one-page survey.

const config = JSON.parse(document.getElementById("rr-config").textContent);
const form = document.getElementById("rr-form");
const progress = document.getElementById("rr-page-progress");
const label = document.getElementById("rr-page-label");
const back = document.getElementById("rr-page-back");
const next = document.getElementById("rr-page-next");
const submitBox = document.getElementById("rr-submit-box");
const total = Number(progress.max);
const DRAFT_KEY = `rrsite:draft:${config.survey}:${config.version}`;
const direct = (config.questions || []).filter((q) => !q.sensitive);
let current = 1;

function show(page, { focus = false } = {}) {
  current = Math.min(Math.max(1, page), total);
  for (const element of form.querySelectorAll("[data-page]")) {
    element.classList.toggle("rr-off-page", Number(element.dataset.page) !== current);
  }
  back.disabled = current === 1;
  next.hidden = current === total;
  if (submitBox) submitBox.hidden = current !== total;
  progress.value = current;
  label.textContent = label.dataset.template.replace("{page}", current).replace("{pages}", total);
  if (focus) {
    const first = form.querySelector(`[data-page="${current}"]:not([hidden]) input, `
      + `[data-page="${current}"]:not([hidden]) textarea`);
    if (first) first.focus();
    form.scrollIntoView({ block: "start" });
  }
  saveDraft();
}

function pageOf(element) {
  const holder = element && element.closest("[data-page]");
  return holder ? Number(holder.dataset.page) : null;
}

// ---- the draft: direct answers and the page, for a reload -----------------------------------

function readDirect() {
  const answers = {};
  for (const q of direct) {
    const box = document.getElementById(`q-${q.id}`);
    if (!box) continue;
    if (q.type === "number" || q.type === "text") {
      const input = document.getElementById(`q-${q.id}-input`);
      if (input && input.value !== "") answers[q.id] = input.value;
    } else {
      const chosen = Array.from(box.querySelectorAll("input[name]"))
        .filter((input) => input.name === q.id && input.checked).map((input) => input.value);
      if (chosen.length) answers[q.id] = chosen;
    }
  }
  return answers;
}

function saveDraft() {
  const answers = readDirect();
  if (current === 1 && Object.keys(answers).length === 0) {
    clearDraft(); // nothing to keep
    return;
  }
  try {
    window.sessionStorage.setItem(DRAFT_KEY, JSON.stringify({ page: current, answers }));
  } catch {
    // storage refused: answers are kept across pages, not across a reload
  }
}

function clearDraft() {
  try {
    window.sessionStorage.removeItem(DRAFT_KEY);
  } catch {
    // nothing stored
  }
}

function restoreDraft() {
  let draft = null;
  try {
    draft = JSON.parse(window.sessionStorage.getItem(DRAFT_KEY) || "null");
  } catch {
    draft = null;
  }
  if (!draft || typeof draft !== "object" || !draft.answers) return 1;
  for (const q of direct) {
    const value = draft.answers[q.id];
    if (value === undefined) continue;
    if (q.type === "number" || q.type === "text") {
      const input = document.getElementById(`q-${q.id}-input`);
      if (input) input.value = String(value);
    } else if (Array.isArray(value)) {
      for (const input of document.querySelectorAll(`#q-${CSS.escape(q.id)} input[name]`)) {
        if (input.name === q.id) input.checked = value.includes(input.value);
      }
    }
  }
  document.dispatchEvent(new Event("rrsite:answers-restored"));
  return Number(draft.page) || 1;
}

// ---- wiring -----------------------------------------------------------------------------------

back.addEventListener("click", () => show(current - 1, { focus: true }));
next.addEventListener("click", () => show(current + 1, { focus: true }));
form.addEventListener("change", saveDraft);
// Enter in a field submits a form even with its submit button hidden: before the last page the
// form is not submitted (capture on the window runs before page.js's listener on the form).
window.addEventListener("submit", (event) => {
  if (event.target === form && current !== total) {
    event.preventDefault();
    event.stopImmediatePropagation();
  }
}, true);
form.addEventListener("input", saveDraft);
form.addEventListener("reset", () => { clearDraft(); setTimeout(() => show(1), 0); });
document.addEventListener("rrsite:reset", () => { clearDraft(); show(1); });

// An error list's link to a question on another page: go to that page first.
document.getElementById("rr-errors").addEventListener("click", (event) => {
  const link = event.target.closest("a[href^='#']");
  if (!link) return;
  const target = document.getElementById(decodeURIComponent(link.getAttribute("href").slice(1)));
  const page = pageOf(target);
  if (page && page !== current) show(page);
}, true);

// When the form's errors are shown, go to the page of the first question with an error.
new MutationObserver(() => {
  const errors = document.getElementById("rr-errors");
  if (errors.hidden) return;
  const first = form.querySelector(".rr-question .rr-field-error:not([hidden])");
  const page = pageOf(first);
  if (page && page !== current) show(page);
}).observe(document.getElementById("rr-errors"), { attributes: true, attributeFilter: ["hidden"] });

// Sent: nothing of this respondent's draft is kept.
new MutationObserver(() => {
  if (!document.getElementById("rr-done").hidden) clearDraft();
}).observe(document.getElementById("rr-done"), { attributes: true, attributeFilter: ["hidden"] });

show(restoreDraft());
