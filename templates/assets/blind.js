// Blind invitations (issue 24): RFC 9474 (RSABSSA-SHA384-PSS-Randomized) with rrsite/core/blind.py
// in the worker. Fetch the collector's public key (GET /api/blind-key; its id must be the link's
// `key`), blind a new token in the worker, trade the code for a blind signature (POST
// /api/blind-sign: the code is spent there), unblind and verify it in the worker. Kept in
// localStorage under `rrsite:blind:<survey>`: the trade in flight ({code, key, msg, blinded_msg,
// inv}: a reload resends the identical trade, which the collector answers again) and then the
// token ({code, token: {msg, sig}}). The submission then carries only the token, never the code.

import { config, invitationCode, t, target } from "./shared.js";

// `rrsite invite --blind` links add `&key=KEY_ID` to the fragment (never sent to a server).
const fragment = new URLSearchParams(window.location.hash.slice(1));
export const blindKeyId = invitationCode && /^[0-9a-f]{32}$/.test(fragment.get("key") || "") ? fragment.get("key") : null;

const BLIND_STORAGE_KEY = `rrsite:blind:${config.survey}`;
let blindToken = null; // Promise of {msg, sig}
// "Forget" and "Someone else is answering" (storage.js) remove the stored trade and token: drop
// the one in memory too.
document.addEventListener("rrsite:forget", () => { blindToken = null; });

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
  const keyBody = await blindFetch(blindApiUrl("blind-key"));
  if (keyBody.key_id !== blindKeyId) throw new Error(t("blind_wrong_key"));
  const key = JSON.stringify(keyBody);
  await randomizer.ready;
  const pending = stored && stored.key === key ? stored
    : { code: invitationCode, key, ...(await randomizer.call({ type: "blind", key, survey: config.survey })) };
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
  blindToken.catch(() => { document.documentElement.dataset.rrBlind = "failed"; });
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
