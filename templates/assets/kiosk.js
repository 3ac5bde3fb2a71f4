// Kiosk mode (`mode: kiosk`): one device serves many respondents in turn.
//
// When a respondent confirms, page.js hands the randomized submission here (its kiosk hook) instead
// of sending it itself. It goes into a queue on the device (only what is sent: the randomized
// reports and the direct answers, never a true sensitive answer), the page's own stored record is
// deleted, and everything of this respondent is cleared from the page. The queue is sent in order
// now, and again whenever the connection returns (the `online` event, every few seconds, and on
// every load: it survives a reload). The collector counts a respondent token once, so a report
// sent twice (a reload in the middle of a send) is still counted once. "Next respondent" resets the
// form, the consent, the pages and the practice rounds for the next person.
//
// The queue is sealed at rest, so the next respondent (or anyone opening the device's storage)
// reads nothing of the earlier ones: each entry (url, headers, body, and its respondent token
// inside the body) is encrypted with AES-GCM, a fresh 96-bit IV per entry, under a non-extractable
// key made once per device and kept in IndexedDB (a CryptoKey is stored as an object; its bytes
// cannot be read out). localStorage holds only {id, iv, data}: a random id (not the token) and
// base64 ciphertext, padded to whole blocks of PAD_BYTES so its length does not tell answers
// apart. The plaintext exists only in this page's memory, while an entry is sealed or sent. The
// refused entries (4xx) are sealed the same way. Code running in this origin can still use the
// key (it is the page's own), and so can whoever holds the device while the page is open.
//
// Without WebCrypto or IndexedDB (some private modes), the queue is kept in memory only, never in
// plaintext storage: it does not survive a reload, and the status line says so before anyone
// answers.

const config = JSON.parse(document.getElementById("rr-config").textContent);
const RECORD_KEY = `rrsite:${config.survey}:${config.version}`;
const QUEUE_KEY = `rrsite:queue:${config.survey}`;
const REJECTED_KEY = `rrsite:rejected:${config.survey}`;
// Sealed entries this device cannot open any more (its key was deleted): kept, counted, not sent.
const UNREADABLE_KEY = `rrsite:unreadable:${config.survey}`;
const KEY_DB = "rrsite-kiosk";
const KEY_STORE = "keys";
const KEY_NAME = "queue";
const KEY_TIMEOUT_MS = 5000;
const PAD_BYTES = 1024;
const RETRY_MS = 5000;
const $ = (id) => document.getElementById(id);
const status = $("rr-kiosk-status");
const next = $("rr-kiosk-next");

// Lists that live in this page only: all of them without sealing, or one that storage refused.
const held = new Map();

function read(key) {
  if (held.has(key)) return held.get(key);
  try {
    const list = JSON.parse(window.localStorage.getItem(key) || "[]");
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

function write(key, list) {
  if (!held.has(key)) {
    try {
      if (list.length) window.localStorage.setItem(key, JSON.stringify(list));
      else window.localStorage.removeItem(key);
      return;
    } catch {
      // storage refused: this (sealed) list lives as long as the page
    }
  }
  held.set(key, list);
}

// ---- sealing --------------------------------------------------------------------------------

function toBase64(bytes) {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return window.btoa(text);
}

function fromBase64(text) {
  return Uint8Array.from(window.atob(text), (char) => char.charCodeAt(0));
}

/** A random id for a queued entry: orders and removes it, and says nothing of the respondent. */
function randomId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)),
    (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function idbResult(operation) {
  return new Promise((resolve, reject) => {
    operation.onsuccess = () => resolve(operation.result);
    operation.onerror = () => reject(operation.error);
  });
}

/** The device's AES-GCM key: read from IndexedDB, or made (non-extractable) and stored there. */
async function deviceKey() {
  const fresh = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false,
    ["encrypt", "decrypt"]);
  const opening = window.indexedDB.open(KEY_DB, 1);
  opening.onupgradeneeded = () => opening.result.createObjectStore(KEY_STORE);
  const db = await idbResult(opening);
  try {
    // One transaction reads and, only when there is none, stores the key: two tabs opened at once
    // end with the same key.
    return await new Promise((resolve, reject) => {
      const transaction = db.transaction(KEY_STORE, "readwrite");
      const store = transaction.objectStore(KEY_STORE);
      let key = fresh;
      const get = store.get(KEY_NAME);
      get.onsuccess = () => {
        const stored = get.result;
        if (stored && stored.type === "secret" && stored.algorithm && stored.algorithm.name === "AES-GCM") {
          key = stored;
        } else {
          store.put(fresh, KEY_NAME);
        }
      };
      transaction.oncomplete = () => resolve(key);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error || new Error("aborted"));
    });
  } finally {
    db.close();
  }
}

/** Entries sealed with AES-GCM under the device key. */
function sealedBox(key) {
  const encoder = new TextEncoder();
  const bound = (id) => encoder.encode(`rrsite-kiosk\n${config.survey}\n${id}`);
  return {
    kind: "sealed",
    async seal(entry, id = randomId()) {
      const text = encoder.encode(JSON.stringify(entry));
      // JSON ignores trailing spaces: every entry is a whole number of blocks long.
      const padded = new Uint8Array(Math.ceil((text.length + 1) / PAD_BYTES) * PAD_BYTES).fill(0x20);
      padded.set(text);
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const data = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: bound(id) },
        key, padded);
      return { id, iv: toBase64(iv), data: toBase64(new Uint8Array(data)) };
    },
    async open(record) {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: fromBase64(record.iv), additionalData: bound(record.id) },
        key, fromBase64(record.data));
      return JSON.parse(new TextDecoder().decode(plain));
    },
  };
}

/** Without sealing: entries in this page's memory only. */
const memoryBox = {
  kind: "memory",
  async seal(entry, id = randomId()) {
    return { id, entry };
  },
  async open(record) {
    return record.entry;
  },
};

/** An entry written in plaintext by an earlier kiosk.js. */
const isPlain = (record) => Boolean(record) && typeof record.payload === "string";

/** Seal the plaintext entries an earlier version left in storage (or, unsealed, move them to memory). */
async function migrate(box) {
  for (const key of [QUEUE_KEY, REJECTED_KEY]) {
    let stored;
    try {
      stored = JSON.parse(window.localStorage.getItem(key) || "[]");
    } catch {
      continue;
    }
    if (!Array.isArray(stored) || !stored.some(isPlain)) continue;
    const plain = stored.filter(isPlain);
    const sealed = await Promise.all(plain.map((entry) => box.seal(entry)));
    if (box.kind === "sealed") {
      write(key, stored.map((record) => (isPlain(record) ? sealed[plain.indexOf(record)] : record)));
    } else {
      held.set(key, [...read(key), ...sealed]);
      try {
        const rest = stored.filter((record) => !isPlain(record));
        if (rest.length) window.localStorage.setItem(key, JSON.stringify(rest));
        else window.localStorage.removeItem(key);
      } catch {
        // storage refused
      }
    }
  }
}

/** The sealed box when WebCrypto and IndexedDB work here (a round trip is tried), else memory. */
async function openBox() {
  try {
    if (!(window.crypto && crypto.subtle && window.indexedDB)) throw new Error("no WebCrypto or IndexedDB");
    let timer;
    const timeout = new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error("IndexedDB did not answer")), KEY_TIMEOUT_MS);
    });
    const key = await Promise.race([deviceKey(), timeout]).finally(() => clearTimeout(timer));
    const box = sealedBox(key);
    const probe = await box.open(await box.seal({ probe: true }));
    if (!probe || probe.probe !== true) throw new Error("sealing does not round-trip");
    return box;
  } catch {
    for (const key of [QUEUE_KEY, REJECTED_KEY, UNREADABLE_KEY]) held.set(key, []);
    return memoryBox;
  }
}

let box = null;
const boxReady = openBox().then(async (opened) => {
  await migrate(opened).catch(() => {});
  box = opened;
  document.documentElement.dataset.rrKioskStore = opened.kind;
  return opened;
});

// Handed entries not yet sealed (in memory for the moment sealing takes).
const pending = [];
let sealing = null;

/** Seal the handed entries and append them to the queue, in order. */
function flush(opened) {
  if (!sealing) {
    sealing = (async () => {
      while (pending.length) {
        const record = await opened.seal(pending[0]);
        write(QUEUE_KEY, [...read(QUEUE_KEY), record]);
        pending.shift();
      }
    })().catch(() => {
      // not sealed: the entries stay in memory and are tried again with the next drain
    }).finally(() => {
      sealing = null;
    });
  }
  return sealing;
}

function showStatus() {
  const waiting = pending.length + read(QUEUE_KEY).length;
  const rejected = read(REJECTED_KEY).length;
  const unreadable = read(UNREADABLE_KEY).length;
  const lines = [];
  if (box && box.kind === "memory") lines.push(status.dataset.unsealed);
  if (waiting) lines.push(status.dataset.queue.replace("{count}", waiting));
  if (rejected) lines.push(status.dataset.rejected.replace("{count}", rejected));
  if (unreadable) lines.push(status.dataset.unreadable.replace("{count}", unreadable));
  status.textContent = lines.join(" · ");
  status.hidden = lines.length === 0;
  document.documentElement.dataset.rrQueue = String(waiting);
}

let draining = false;
let again = false;

/** Send the queue in order; stop at the first failure that a later try could fix. */
export async function drain() {
  if (draining) {
    again = true; // handed while sending: look at the queue once more before stopping
    return;
  }
  draining = true;
  try {
    const opened = await boxReady;
    do {
      again = false;
      await flush(opened);
      for (;;) {
        const [record] = read(QUEUE_KEY);
        if (!record) break;
        let entry;
        try {
          entry = await opened.open(record);
        } catch {
          write(UNREADABLE_KEY, [...read(UNREADABLE_KEY), record]);
          write(QUEUE_KEY, read(QUEUE_KEY).filter((queued) => queued.id !== record.id));
          continue;
        }
        let response;
        try {
          response = await fetch(entry.url, {
            method: "POST",
            headers: { "Content-Type": entry.type },
            body: entry.payload,
            credentials: entry.credentials,
            cache: "no-store",
          });
          await response.text().catch(() => "");
        } catch {
          return; // offline: the queue waits
        }
        if (response.status >= 500 || response.status === 408 || response.status === 429) return;
        if (!response.ok) {
          // Refused for good (it will never be accepted): kept apart (sealed), never dropped silently.
          const refused = await opened.seal({ ...entry, status: response.status }, record.id);
          write(REJECTED_KEY, [...read(REJECTED_KEY), refused]);
        }
        write(QUEUE_KEY, read(QUEUE_KEY).filter((queued) => queued.id !== record.id));
        await flush(opened);
      }
    } while (again);
  } finally {
    draining = false;
    showStatus();
  }
}

/** Nothing of the last respondent stays in the page (the form is reset by page.js). */
function clearPage() {
  for (const id of ["rr-transcript", "rr-errors-list", "rr-chosen", "rr-answers"]) {
    const element = $(id);
    if (element) element.replaceChildren();
  }
  if ($("rr-chosen-box")) $("rr-chosen-box").hidden = true;
  for (const id of ["rr-body", "rr-destination", "rr-review-intro", "rr-send-status", "rr-send-error"]) {
    $(id).textContent = "";
  }
}

window.rrsiteKiosk = {
  hand(record, request) {
    pending.push({
      url: request.url,
      type: request.type,
      payload: request.payload,
      credentials: config.submit && config.submit.to === "endpoint" ? "omit" : "same-origin",
    });
    try {
      window.localStorage.removeItem(RECORD_KEY);
    } catch {
      // nothing stored
    }
    clearPage();
    $("rr-review").hidden = true;
    $("rr-done-text").textContent = next.dataset.thanks;
    $("rr-kiosk-actions").hidden = false;
    $("rr-done").hidden = false;
    next.focus();
    showStatus();
    boxReady.then(flush).then(showStatus);
    drain();
  },
};

next.addEventListener("click", () => {
  try {
    window.localStorage.removeItem(RECORD_KEY);
  } catch {
    // nothing stored
  }
  clearPage();
  $("rr-kiosk-actions").hidden = true;
  $("rr-done-text").textContent = "";
  document.dispatchEvent(new CustomEvent("rrsite:reset"));
  window.scrollTo(0, 0);
});

window.addEventListener("online", drain);
setInterval(drain, RETRY_MS);
showStatus();
boxReady.then(showStatus);
drain();
