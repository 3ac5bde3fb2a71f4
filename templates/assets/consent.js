// Consent: the survey's `consent:` text comes first; the form is rendered inert (shown
// dimmed, so the respondent sees what will be asked, but nothing in it can be focused, clicked or
// typed in) until "I agree". Declining hides the form, sends nothing, says so and stops the
// randomizer's runtime (randomizer.js: its worker is terminated, its downloads aborted). Agreement lasts for this tab's session (a reload does not ask again).

const config = JSON.parse(document.getElementById("rr-config").textContent);
const section = document.getElementById("rr-consent");
const form = document.getElementById("rr-form");
const KEY = `rrsite:consent:${config.survey}`;

function remember(value) {
  try {
    if (value) window.sessionStorage.setItem(KEY, value);
    else window.sessionStorage.removeItem(KEY);
  } catch {
    // storage refused: consent is asked again after a reload
  }
}

function agreed() {
  try {
    return window.sessionStorage.getItem(KEY) === "agreed";
  } catch {
    return false;
  }
}

export function agree({ focus = true } = {}) {
  remember("agreed");
  section.hidden = true;
  form.inert = false; // whether the form is shown at all is page.js's (it may be answered already)
  document.dispatchEvent(new CustomEvent("rrsite:consent-agreed"));
  if (focus) {
    const first = form.querySelector("input, textarea, button");
    if (first) first.focus();
  }
}

export function decline() {
  remember(null);
  // The randomizer's runtime, started while the consent was read, stops: nothing more is fetched.
  document.dispatchEvent(new CustomEvent("rrsite:consent-declined"));
  form.hidden = true;
  form.inert = true;
  document.getElementById("rr-consent-actions").hidden = true;
  const declined = document.getElementById("rr-consent-declined");
  declined.hidden = false;
  document.documentElement.dataset.rrConsent = "declined";
}

/** Ask again (kiosk mode, a new respondent): hide the form and show the consent text. */
export function askAgain() {
  remember(null);
  form.hidden = false;
  form.inert = true;
  section.hidden = false;
  document.getElementById("rr-consent-actions").hidden = false;
  document.getElementById("rr-consent-declined").hidden = true;
}

if (section && form) {
  document.getElementById("rr-consent-agree").addEventListener("click", () => agree());
  document.getElementById("rr-consent-decline").addEventListener("click", decline);
  if (agreed()) agree({ focus: false });
  // A new respondent (kiosk mode) is asked again.
  document.addEventListener("rrsite:reset", askAgain);
}
