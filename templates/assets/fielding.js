// A study as researchers field it (rrsite/survey/fielding): several languages, the split between
// direct and randomized questioning, and the questions the page answers itself.
//
// - Languages: each language has its own page (DIST/<id>/ and DIST/<id>/<language>/), all with
//   the survey's one version. A link's ?lang=xx moves to that language's page at once; the menu's
//   links keep the query string (a panel's parameters) and the fragment (#invitation=...).
// - The variable `language`: a hidden radio group the page sets to its own language.
// - The arm (`validation:`): drawn once per respondent from crypto.getRandomValues, kept in
//   localStorage so that a reload does not draw again, and set in the hidden radio group `arm`.
//   conditions.js then shows the randomized questions (arm "randomized") or their direct
//   versions (arm "direct"), which say that their answer is sent as given.
// Nothing here reads an answer of the respondent. "Forget" and "Someone else is answering" remove
// the kept arm (storage.js, clearRespondent), and a device that answered this version and forgot
// it keeps none, unless a new respondent started in the tab.

import { ARM_KEY, answeredAndForgotten, session } from "./storage.js";

const config = JSON.parse(document.getElementById("rr-config").textContent);
const form = document.getElementById("rr-form");
const questions = config.questions || [];
const languageQuestion = questions.find((q) => q.role === "language");
const armQuestion = questions.find((q) => q.role === "arm");

// ---- languages ------------------------------------------------------------------------------

/** The page of `language`, with this page's query (less `lang`) and fragment. */
function pageOf(language) {
  const target = new URL(config.languages[language], window.location.href);
  const params = new URLSearchParams(window.location.search);
  params.delete("lang");
  target.search = params.toString();
  target.hash = window.location.hash;
  return target.href;
}

function carryParameters() {
  for (const link of document.querySelectorAll(".rr-languages a[data-language]")) {
    if (Object.prototype.hasOwnProperty.call(config.languages, link.dataset.language)) link.href = pageOf(link.dataset.language);
  }
}

if (config.languages) {
  const wanted = new URLSearchParams(window.location.search).get("lang");
  if (wanted && wanted !== config.language && Object.prototype.hasOwnProperty.call(config.languages, wanted)) {
    document.documentElement.dataset.rrLanguage = "moving";
    window.location.replace(pageOf(wanted));
  } else {
    document.documentElement.dataset.rrLanguage = config.language;
  }
  carryParameters();
  window.addEventListener("hashchange", carryParameters);
}

// ---- the arm ----------------------------------------------------------------------------------

/** True with chance `share`: 53 random bits from the secure source, against `share`. */
export function drawDirect(share) {
  const words = crypto.getRandomValues(new Uint32Array(2));
  const uniform = ((words[0] >>> 5) * 67108864 + (words[1] >>> 6)) / 9007199254740992;
  return uniform < share;
}

let arm = null;

function keptArm() {
  try {
    const kept = window.localStorage.getItem(ARM_KEY);
    return kept === "direct" || kept === "randomized" ? kept : null;
  } catch {
    return null;
  }
}

function keepArm() {
  try {
    window.localStorage.setItem(ARM_KEY, arm);
  } catch {
    // storage refused: the draw lasts as long as the page
  }
}

function drawArm() {
  arm = drawDirect(armQuestion.direct_share) ? "direct" : "randomized";
  // kept, unless this version was answered here and forgotten and no new respondent started in
  // this tab ("Someone else is answering"): then nothing of a respondent is kept
  answeredAndForgotten().then((forgotten) => { if (!forgotten || session.fresh()) keepArm(); });
}

function forgetArm() {
  try {
    window.localStorage.removeItem(ARM_KEY);
  } catch {
    // storage refused: nothing was kept
  }
}

// ---- the page's own answers -----------------------------------------------------------------

function setRadio(name, value) {
  for (const input of form.querySelectorAll("input[type=radio]")) {
    if (input.name === name) input.checked = input.value === value;
  }
}

function answerOwnQuestions() {
  if (languageQuestion && config.language) setRadio(languageQuestion.id, config.language);
  if (armQuestion) {
    setRadio(armQuestion.id, arm);
    const notice = document.getElementById("rr-arm-notice");
    if (notice) notice.hidden = arm !== "direct";
    document.documentElement.dataset.rrArm = arm;
  }
  form.dispatchEvent(new Event("change", { bubbles: true })); // conditions.js shows the arm's questions
}

if (form && (languageQuestion || armQuestion)) {
  if (armQuestion) {
    arm = keptArm();
    if (!arm) drawArm();
  }
  answerOwnQuestions();
  // form.reset() clears the radios after the event: set them again once it is done.
  form.addEventListener("reset", () => setTimeout(answerOwnQuestions, 0));
  if (armQuestion) document.addEventListener("rrsite:forget", forgetArm);
  // A new respondent (kiosk mode, tests): a new draw.
  document.addEventListener("rrsite:reset", () => {
    if (armQuestion) drawArm();
    setTimeout(answerOwnQuestions, 0);
  });
}
