// rrsite respondent page: storage and locks. The randomized report (never the truth) in
// localStorage, the salted "answered" marker that is all a forgotten report leaves, the device-wide
// lock around the draws, the respondent token, and the browser tab's own session (which report
// this tab may show, and whether a new respondent started here), which makes a shared device
// safe: another tab or a later visitor opens on the "already answered" screen, never on the
// earlier respondent's answers.

import { config, STORAGE_KEY } from "./shared.js";

export const storage = {
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

// ---- the tab's session: which report it may show, and a new respondent ------------------------

/** The arm of the split ballot drawn for this device's respondent (fielding.js keeps it). */
export const ARM_KEY = `rrsite:arm:${config.survey}:${config.version}`;
const MINE_KEY = `rrsite:mine:${config.survey}:${config.version}`;
const FRESH_KEY = `rrsite:fresh:${config.survey}:${config.version}`;

function sessionGet(key) {
  try {
    return window.sessionStorage.getItem(key);
  } catch {
    return null;
  }
}

function sessionSet(key, value) {
  try {
    if (value === null) window.sessionStorage.removeItem(key);
    else window.sessionStorage.setItem(key, value);
  } catch {
    // without sessionStorage a reload opens on the "already answered" screen
  }
}

/**
 * This browser tab's claim on the stored report: made when it randomized the report (or when the
 * respondent said "I answered: show my answers"), kept across reloads of this tab, gone with the
 * tab. It holds the report's randomized_at, nothing of the answers.
 */
export const session = {
  mine(record) {
    return Boolean(record) && sessionGet(MINE_KEY) === String(record.randomized_at);
  },
  claim(record) {
    sessionSet(MINE_KEY, String(record.randomized_at));
  },
  /** Drop a claim on a report that is not stored any more (forgotten in another tab). */
  release() {
    sessionSet(MINE_KEY, null);
  },
  /** Whether a new respondent started in this tab ("Someone else is answering"). */
  fresh() {
    return sessionGet(FRESH_KEY) === "1";
  },
  startFresh() {
    sessionSet(FRESH_KEY, "1");
  },
};

/**
 * Everything of a respondent this page keeps, removed: the stored report (its token, reports and
 * direct answers), the blind invitation's code and token, the arm drawn for them (fielding.js's
 * split ballot), and this tab's consent, draft and claims. The salted "answered" marker and the
 * kiosk's sealed queue of other respondents stay. Listeners of "rrsite:forget" drop what they
 * hold in memory (blind.js its token, panel.js the participant id and the completion code).
 */
export function clearRespondent() {
  const local = [STORAGE_KEY, `rrsite:blind:${config.survey}`, ARM_KEY];
  const tab = [MINE_KEY, FRESH_KEY, `rrsite:consent:${config.survey}`,
    `rrsite:draft:${config.survey}:${config.version}`];
  for (const key of local) {
    try {
      window.localStorage.removeItem(key);
    } catch {
      // storage blocked: nothing was kept
    }
  }
  for (const key of tab) sessionSet(key, null);
  storage.memory = null;
  document.dispatchEvent(new CustomEvent("rrsite:forget"));
}

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
export async function markerKey(create = false) {
  const salt = deviceSalt(create);
  if (!salt || !(crypto.subtle && crypto.subtle.digest)) return null;
  const data = new TextEncoder().encode(`${salt}\n${config.survey}\n${config.version}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return `rrsite:answered:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Whether this version was answered here and its answers forgotten. */
export async function answeredAndForgotten() {
  const key = await markerKey();
  try {
    return Boolean(key && window.localStorage.getItem(key));
  } catch {
    return false;
  }
}


export function newRespondentToken() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Run `task` holding the device-wide lock of this survey version (or directly without Web Locks). */
export async function withDeviceLock(task) {
  if (navigator.locks && typeof navigator.locks.request === "function") {
    return navigator.locks.request(STORAGE_KEY, task);
  }
  return task();
}
