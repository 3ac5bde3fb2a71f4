// Kiosk mode (issue 11, `mode: kiosk`): one device serves many respondents in turn.
//
// When a respondent confirms, page.js hands the randomized submission here (its kiosk hook) instead
// of sending it itself. It goes into a queue in localStorage (only what is sent: the randomized
// reports and the direct answers, never a true sensitive answer), the page's own stored record is
// deleted, and everything of this respondent is cleared from the page. The queue is sent in order
// now, and again whenever the connection returns (the `online` event, every few seconds, and on
// every load: it survives a reload). The collector counts a respondent token once, so a report
// sent twice (a reload in the middle of a send) is still counted once. "Next respondent" resets the
// form, the consent, the pages and the practice rounds for the next person.

const config = JSON.parse(document.getElementById("rr-config").textContent);
const RECORD_KEY = `rrsite:${config.survey}:${config.version}`;
const QUEUE_KEY = `rrsite:queue:${config.survey}`;
const REJECTED_KEY = `rrsite:rejected:${config.survey}`;
const RETRY_MS = 5000;
const $ = (id) => document.getElementById(id);
const status = $("rr-kiosk-status");
const next = $("rr-kiosk-next");

function read(key) {
  try {
    const list = JSON.parse(window.localStorage.getItem(key) || "[]");
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

function write(key, list) {
  try {
    if (list.length) window.localStorage.setItem(key, JSON.stringify(list));
    else window.localStorage.removeItem(key);
  } catch {
    // storage refused: the queue lives as long as the page
  }
}

function showStatus() {
  const waiting = read(QUEUE_KEY).length;
  const rejected = read(REJECTED_KEY).length;
  const lines = [];
  if (waiting) lines.push(status.dataset.queue.replace("{count}", waiting));
  if (rejected) lines.push(status.dataset.rejected.replace("{count}", rejected));
  status.textContent = lines.join(" · ");
  status.hidden = lines.length === 0;
  document.documentElement.dataset.rrQueue = String(waiting);
}

let draining = false;

/** Send the queue in order; stop at the first failure that a later try could fix. */
export async function drain() {
  if (draining) return;
  draining = true;
  try {
    for (;;) {
      const [entry] = read(QUEUE_KEY);
      if (!entry) break;
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
        break; // offline: the queue waits
      }
      if (response.status >= 500 || response.status === 408 || response.status === 429) break;
      if (!response.ok) {
        // Refused for good (it will never be accepted): kept apart, never dropped silently.
        write(REJECTED_KEY, [...read(REJECTED_KEY), { ...entry, status: response.status }]);
      }
      write(QUEUE_KEY, read(QUEUE_KEY).filter((queued) => queued.id !== entry.id));
    }
  } finally {
    draining = false;
    showStatus();
  }
}

/** Nothing of the last respondent stays in the page (the form is reset by page.js). */
function clearPage() {
  for (const id of ["rr-transcript", "rr-errors-list"]) $(id).replaceChildren();
  for (const id of ["rr-body", "rr-destination", "rr-review-intro", "rr-send-status", "rr-send-error"]) {
    $(id).textContent = "";
  }
}

window.rrsiteKiosk = {
  hand(record, request) {
    const entry = {
      id: record.body.respondent,
      url: request.url,
      type: request.type,
      payload: request.payload,
      credentials: config.submit && config.submit.to === "endpoint" ? "omit" : "same-origin",
    };
    write(QUEUE_KEY, [...read(QUEUE_KEY).filter((queued) => queued.id !== entry.id), entry]);
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
drain();
