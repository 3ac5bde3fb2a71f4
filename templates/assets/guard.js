// Pinned code: every script, module and stylesheet of this page carries the SHA-384 it was built
// with (`integrity`), and the browser refuses a file that does not match: a page.js (or a module
// it imports, or the stylesheet) swapped on the host under the same name does not run. This
// module, the first of the page, says so: the form is taken away, the page marks
// html[data-rr-integrity=failed] (page.js then refuses to randomize or send), and the notice
// names the files that do not match (each pinned file is fetched again with its integrity to
// find them: a module refused while it was preloaded shows only as its importer's failure). It
// imports nothing, so that nothing it needs can be refused with it.

const root = document.documentElement;
const named = new Set();

// Checks still running (html[data-rr-integrity-checks]): each may take the form away again when
// it ends, so whoever looks at the page after a refusal waits for 0.
let checking = 0;
function tracked(promise) {
  root.dataset.rrIntegrityChecks = String(++checking);
  return promise.finally(() => { root.dataset.rrIntegrityChecks = String(--checking); });
}

function show() {
  const notice = document.getElementById("rr-integrity");
  if (notice) {
    const list = notice.querySelector("[data-file]");
    if (list) list.textContent = Array.from(named).join(", ");
    notice.hidden = false;
  }
  for (const id of ["rr-form", "rr-review", "rr-runtime", "rr-consent", "rr-answered", "rr-someone"]) {
    const part = document.getElementById(id);
    if (part) part.hidden = true;
  }
}

const fileOf = (element) => (element.src || element.href || "").split("/").pop();

/** The pinned files of the page that do not match their integrity now. */
async function mismatches() {
  const pinned = Array.from(document.querySelectorAll("script[src][integrity], link[href][integrity]"));
  const checks = pinned.map((element) => fetch(element.src || element.href, {
    integrity: element.integrity, credentials: "same-origin", cache: "no-store",
  }).then(() => null, () => fileOf(element)));
  return (await Promise.all(checks)).filter(Boolean);
}

function refused(element) {
  root.dataset.rrIntegrity = "failed";
  named.add(fileOf(element));
  show();
  tracked(mismatches().then((files) => {
    if (!files.length) return;
    named.clear();
    for (const file of files) named.add(file);
    show();
  }));
}

// Errors of elements do not bubble: listened to while they travel down to the element.
document.addEventListener("error", (event) => {
  const element = event.target;
  if ((element instanceof HTMLScriptElement || element instanceof HTMLLinkElement) && element.integrity) {
    refused(element);
  }
}, true);

// A stylesheet refused before this module ran fired its error unheard. One without a sheet yet
// may be refused or still loading (WebKit runs modules before a reloaded page's stylesheet is
// applied): its file is fetched with its integrity to tell.
for (const link of document.querySelectorAll("link[rel=stylesheet][integrity]")) {
  if (link.sheet) continue;
  tracked(fetch(link.href, { integrity: link.integrity, credentials: "same-origin" })
    .then(() => {}, () => refused(link)));
}
