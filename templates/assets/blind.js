// Blind invitations: RFC 9474 (RSABSSA-SHA384-PSS-Randomized) with rrsite/core/blind.py in the
// worker. Fetch this survey's public key (GET /api/blind-key?survey=ID), blind a new token in the
// worker, which also computes the key's id from the key itself (its n and e), and go on only if
// that id is the link's `key`: an operator who hands this respondent a key of their own (to
// recognise the token later) is refused here, with a message, and nothing is sent. Then trade
// the code for a blind signature (POST /api/blind-sign: the code is spent there), unblind and
// verify it in the worker. Kept in localStorage under `rrsite:blind:<survey>`: the trade in flight
// ({code, key, key_id, msg, blinded_msg, inv}: a reload resends the identical trade, which the
// collector answers again) and then the token ({code, token: {msg, sig}}). The submission then
// carries only the token, never the code. "Forget my answers" removes both (storage.js, clearRespondent).

import { $, config, invitationCode, t, target } from "./shared.js";

// `rrsite invite --blind` links add `&key=KEY_ID` to the fragment (never sent to a server).
const fragment = new URLSearchParams(window.location.hash.slice(1));
export const blindKeyId = invitationCode && /^[0-9a-f]{32}$/.test(fragment.get("key") || "") ? fragment.get("key") : null;

const BLIND_STORAGE_KEY = `rrsite:blind:${config.survey}`;
let blindToken = null; // Promise of {msg, sig}
// "Forget" and "Someone else is answering" (storage.js) remove the stored trade and token: drop
// the one in memory too.
document.addEventListener("rrsite:forget", () => { blindToken = null; });

/** The error of a key that is not the link's: said to the respondent at once, never retried. */
class WrongKeyError extends Error {}

function blindApiUrl(name) {
  const submit = config.submit && config.submit.url ? config.submit.url : "/api/submissions";
  return new URL(new URL(submit, document.baseURI).href.replace(/submissions$/, name));
}

function blindState() {
  try {
    const state = JSON.parse(localStorage.getItem(BLIND_STORAGE_KEY) || "null");
    return state && state.code === invitationCode ? state : null;
  } catch {
    return null;
  }
}

function saveBlindState(state) {
  try {
    localStorage.setItem(BLIND_STORAGE_KEY, JSON.stringify(state));
  } catch {
    // without storage a reload trades again and is refused (the code is spent): said then
  }
}

async function blindFetch(url, options) {
  let response;
  try {
    response = await fetch(url, { credentials: target === "endpoint" ? "omit" : "same-origin", cache: "no-store", ...options });
  } catch {
    throw new Error(t("send_failed_network"));
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error || t("send_failed_status", { status: response.status }));
  return body;
}

async function tradeInvitation(randomizer) {
  const stored = blindState();
  if (stored && stored.token) return stored.token;
  const keyUrl = blindApiUrl("blind-key");
  keyUrl.searchParams.set("survey", config.survey);
  const key = JSON.stringify(await blindFetch(keyUrl));
  await randomizer.ready;
  // The key's id as the worker computes it from n and e (rrsite.core.blind.PublicKey.key_id),
  // never the `key_id` the collector wrote beside them.
  const pending = stored && stored.key === key && stored.key_id ? stored
    : { code: invitationCode, key, ...(await randomizer.call({ type: "blind", key, survey: config.survey })) };
  if (pending.key_id !== blindKeyId) throw new WrongKeyError(t("blind_wrong_key"));
  saveBlindState(pending);
  const signed = await blindFetch(blindApiUrl("blind-sign"), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ survey: config.survey, invitation: invitationCode, blinded_msg: pending.blinded_msg }),
  });
  const token = await randomizer.call({ type: "finalize", key, msg: pending.msg, blindSig: signed.blind_sig, inv: pending.inv });
  saveBlindState({ code: invitationCode, token: { msg: token.msg, sig: token.sig } });
  document.documentElement.dataset.rrBlind = "ready";
  return { msg: token.msg, sig: token.sig };
}

/** Start the trade (once) on the page's randomizer; when the survey opens, not when it is sent. */
export function startBlindTrade(randomizer) {
  if (!blindKeyId || blindToken) return;
  document.documentElement.dataset.rrBlind = "trading";
  blindToken = tradeInvitation(randomizer);
  blindToken.catch((error) => {
    if (error instanceof WrongKeyError) {
      document.documentElement.dataset.rrBlind = "wrong-key";
      const note = $("rr-submit-note");
      if (note) note.textContent = t("blind_failed", { reason: error.message });
    } else {
      document.documentElement.dataset.rrBlind = "failed";
    }
  });
}

/** The token for the submission ({msg, sig}); a failed trade is forgotten so a later submit
 * tries again. */
export async function blindTokenFor(randomizer) {
  startBlindTrade(randomizer);
  try {
    return await blindToken;
  } catch (error) {
    blindToken = null;
    throw error;
  }
}

