// rrsite respondent page: storage and locks. The randomized report (never the truth) in
// localStorage, the salted "answered" marker that is all a forgotten report leaves, the device-wide
// lock around the coins, and the respondent token.

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
