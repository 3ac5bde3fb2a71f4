// rrsite randomizer worker (a module Web Worker).
//
// Loads Pyodide from the site's own copy, checks the bundled rrsite/core against the survey's
// core_hash, puts it on sys.path (imported from the zip) and
// answers "respond" messages with rrsite.core.respond_json: a question and a true answer in, the
// report and the transcript of the coins out. Randomness comes from core's secure source
// (random.SystemRandom -> os.urandom -> crypto.getRandomValues). The worker never sends anything
// over the network and keeps nothing: the page decides what leaves the device.
//
// Pinned code: this script holds Pyodide's JavaScript too (pyodide.asm.mjs and pyodide.mjs,
// inlined by rrsite build as the constant `rrsitePyodide`), so it imports nothing, and the page
// checks it against the SHA-384 it was built with before starting it. Every file the worker then
// fetches is checked the same way (`integrity` from the page, never read from the host): the core
// bundle, the wasm and the standard library, Pyodide's own fetches too (through the wrapper
// below). A file that does not match stops the start with reason "integrity". The wasm is
// checked while it streams: the browser compiles it as it arrives (a fetch with `integrity`
// would hand it over only once the whole body was read and checked), a copy is hashed with
// SHA-384 at its end, and nothing of it is instantiated, let alone run, before that hash is the
// pinned one.
//
// Messages in:  {type: "init", pyodideUrl, coreUrl, coreHash, integrity, pyodideLock?, coreModules?}
//               (absolute URLs, the manifest's core_hash, {core, runtime: {wasm and stdlib:
//               sha384}}, Pyodide's lock file without its packages, from the page's config; with
//               the lock given, loadPyodide does not fetch pyodide-lock.json; coreModules: the
//               modules of rrsite.core the survey's questions need, imported after "ready")
//               {type: "respond", id, items: [{question, truth, innocuous?, permanent?}]}
//               {type: "blind", id, key, survey} | {type: "finalize", id, key, msg, blindSig, inv}
//               (blind invitations: rrsite.core.blind, RFC 9474; `key` is /api/blind-key's body)
// Messages out: {type: "progress", stage: "downloading" | "starting"}
//               {type: "ready", ms}  |  {type: "failed", reason, message}  (reason: "blocked",
//               "integrity" when a file is not the one pinned or the core's hash is not
//               core_hash, "error")
//               {type: "result", id, results: [{id, report, steps}]}  |  {type: "result", id, error}
//               (a number's result adds drawn, operation, and rounded or product when core gave them;
//               a panel's question adds permanent, the table to keep, and drawn_now)
//               {type: "result", id, results: {key_id, msg, blinded_msg, inv} | {msg, sig}}

let respondJson = null;
let blindCore = null; // rrsite.core.blind, imported on the first blind invitation's message
let pyodideInstance = null;
let failed = false;

function fail(reason, message) {
  if (failed || respondJson) return;
  failed = true;
  self.postMessage({ type: "failed", reason, message: String(message) });
}

// Pyodide does not reject when the browser refuses to compile WebAssembly (a Content-Security-
// Policy without 'wasm-unsafe-eval'): it logs and waits forever. Report such refusals at once.
self.addEventListener("securitypolicyviolation", (event) => {
  fail("blocked", `${event.violatedDirective} blocked ${event.blockedURI || "code"}`);
});
const wasmApi = {};
for (const name of ["compile", "compileStreaming", "instantiate", "instantiateStreaming"]) {
  const original = WebAssembly[name];
  if (typeof original !== "function") continue;
  wasmApi[name] = original.bind(WebAssembly);
  WebAssembly[name] = function (...args) {
    const started = name === "instantiateStreaming" ? instantiateChecked(...args) : original.apply(this, args);
    return started.catch((error) => {
      fail(error instanceof WebAssembly.CompileError ? "blocked" : "error", error);
      throw error;
    });
  };
}

/**
 * instantiateStreaming of a checked stream: compile while the bytes arrive, then instantiate only
 * if the hash of the whole file is the pinned one (a mismatch is reported as "integrity", even
 * when the changed bytes do not compile).
 */
async function instantiateChecked(source, imports) {
  const response = await source;
  const check = streamedChecks.get(response);
  if (!check) return wasmApi.instantiateStreaming(response, imports);
  const compiled = wasmApi.compileStreaming ? wasmApi.compileStreaming(response)
    : response.arrayBuffer().then((bytes) => wasmApi.compile(bytes));
  compiled.catch(() => {}); // awaited after the check
  if (!(await check)) throw new Error(`${fileName(response.url || streamedUrl)}: not the pinned file`);
  const module = await compiled;
  return { module, instance: await wasmApi.instantiate(module, imports) };
}

// Where the core bundle is written in Pyodide's file system; Python imports it from there with
// zipimport (frozen into the interpreter), so neither zipfile nor shutil has to be shipped.
const CORE_PATH = "/lib/rrsite_core.zip";

// ---- pinned fetches: absolute URL -> "sha384-..." ------------------------------------------

const pins = new Map();
const plainFetch = self.fetch.bind(self);
let streamedUrl = null; // the wasm's absolute URL, once the pins are known

/** The file name of a URL, for messages. */
const fileName = (url) => String(url).split("?")[0].split("/").pop();

/**
 * Why a pinned fetch failed: the file answered but is not the pinned one ("integrity"), or it did
 * not answer, or it answers now with the pinned bytes (the first download broke off: "error",
 * which the page tries once more).
 */
async function failedFetch(url) {
  try {
    const response = await plainFetch(url, { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) return ["error", `${fileName(url)}: HTTP ${response.status}`];
    if ((await sri384(await response.arrayBuffer())) !== pins.get(url)) return ["integrity", fileName(url)];
    return ["error", `${fileName(url)}: the download broke off`];
  } catch {
    return ["error", `${fileName(url)}: no answer`];
  }
}

// ---- the wasm: compiled while it streams, instantiated only once its hash matched ------------

/** Streamed responses (what WebAssembly compiles) -> the promise of their check (true: matched). */
const streamedChecks = new WeakMap();

/** The SRI value ("sha384-<base64>") of bytes. */
async function sri384(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-384", bytes));
  let binary = "";
  for (const byte of digest) binary += String.fromCharCode(byte);
  return "sha384-" + btoa(binary);
}

/**
 * Fetch the wasm without `integrity`: the response itself goes to the compiler, which compiles it
 * as the bytes arrive (and the browser keeps the compiled code beside the cached file, which a
 * Response made here would not get), and a clone of it is hashed once complete. The check's
 * verdict is kept for the instantiation below, which waits for it.
 */
async function streamedFetch(resource, options, url, integrity) {
  const response = await plainFetch(resource, options);
  if (!response.ok || !response.body) {
    fail("error", `${fileName(url)}: HTTP ${response.status}`);
    return response;
  }
  // true: the pinned bytes; false: other bytes; null: the download broke off (tried once more)
  const check = response.clone().arrayBuffer().then(
    (bytes) => sri384(bytes).then((value) => value === integrity), () => null);
  check.then((matched) => matched || (matched === null
    ? fail("error", `${fileName(url)}: the download broke off`)
    : fail("integrity", fileName(url))));
  streamedChecks.set(response, check);
  return response;
}

// Every fetch of a pinned URL carries its integrity, Pyodide's own (the standard library)
// included: it calls the global fetch. The wasm is fetched by streamedFetch. A mismatch stops the
// start at once (Pyodide would only log a failed wasm download and wait).
self.fetch = (resource, options = {}) => {
  const url = resource instanceof Request ? resource.url : new URL(String(resource), self.location.href).href;
  const integrity = pins.get(url);
  if (!integrity) return plainFetch(resource, options);
  const plain = { ...options };
  delete plain.integrity; // the pinned value replaces any other
  const fetched = url === streamedUrl
    ? streamedFetch(resource, plain, url, integrity)
    : plainFetch(resource, { ...plain, integrity });
  return fetched.catch(async (error) => {
    const [reason, message] = await failedFetch(url);
    fail(reason, message);
    throw error;
  });
};

async function start({ pyodideUrl, coreUrl, coreHash, integrity, pyodideLock, coreModules }) {
  const started = performance.now();
  for (const [name, value] of Object.entries((integrity && integrity.runtime) || {})) {
    pins.set(new URL(name, pyodideUrl).href, value);
  }
  if (integrity && integrity.core) pins.set(new URL(coreUrl).href, integrity.core);
  streamedUrl = new URL("pyodide.asm.wasm", pyodideUrl).href;
  const missing = ["pyodide.asm.wasm", "python_stdlib.zip"]
    .filter((name) => !pins.has(new URL(name, pyodideUrl).href));
  if (!pins.has(new URL(coreUrl).href)) missing.push(fileName(coreUrl));
  if (missing.length) {
    fail("error", `no pinned hash for ${missing.join(", ")}`);
    return;
  }
  self.postMessage({ type: "progress", stage: "downloading" });
  const coreBytes = self.fetch(coreUrl, { credentials: "same-origin" }).then((response) => {
    if (!response.ok) throw new Error(`${coreUrl}: HTTP ${response.status}`);
    return response.arrayBuffer();
  });
  coreBytes.catch(() => {}); // awaited below; avoid an unhandled-rejection report meanwhile
  self.postMessage({ type: "progress", stage: "starting" });
  const options = {
    indexURL: pyodideUrl,
    packages: [],
    // Pyodide's module is inside this script (loadPyodide would import pyodide.asm.mjs).
    createPyodideModule: rrsitePyodide.createPyodideModule,
  };
  if (pyodideLock && typeof pyodideLock === "object") options.lockFileContents = pyodideLock;
  const pyodide = await rrsitePyodide.loadPyodide(options);
  pyodide.FS.writeFile(CORE_PATH, new Uint8Array(await coreBytes));
  // The code that randomizes must be the code the survey names (the manifest's core_hash):
  // checked here, before anything is imported from it. _sha2 is built into the interpreter.
  pyodide.globals.set("_rr_core", CORE_PATH);
  const digest = "sha256:" + pyodide.runPython(
    "import _sha2\nwith open(_rr_core, 'rb') as _f: _rr_digest = _sha2.sha256(_f.read()).hexdigest()\n"
    + "del _f, _rr_core\n_rr_digest",
  );
  if (!coreHash || digest !== coreHash) {
    fail("integrity", `${fileName(coreUrl)} (${digest}, not the ${coreHash || "(missing)"} this survey names)`);
    return;
  }
  pyodide.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(CORE_PATH)})\ndel _rr_digest`);
  const respond = pyodide.pyimport("rrsite.core").respond_json;
  if (typeof respond !== "function") throw new Error("rrsite.core.respond_json is missing");
  respondJson = respond;
  pyodideInstance = pyodide;
  self.postMessage({ type: "ready", ms: performance.now() - started });
  // What the survey's questions need beyond yes-no and choice designs (numbers, frequency
  // oracles), imported now, while the respondent reads, instead of at the first answer.
  for (const name of Array.isArray(coreModules) ? coreModules : []) {
    if (/^rrsite\.core(\.[a-z_]+)+$/.test(name)) pyodide.pyimport(name).destroy();
  }
  // What Python loaded of rrsite, for whoever profiles the start (a performance mark).
  const loaded = pyodide.runPython("import sys\nsorted(m for m in sys.modules if m.startswith('rrsite'))");
  performance.mark("rr-core-loaded", { detail: loaded.toJs() });
  loaded.destroy();
}

function respondAll(items) {
  return items.map(({ question, truth, innocuous, permanent }) => {
    const args = [JSON.stringify(question), truth];
    if (innocuous !== undefined && innocuous !== null) args.push(innocuous);
    // a panel's question: the permanent reports the device kept (waves.js), or a new table
    const kept = permanent !== undefined && permanent !== null ? { permanent_json: JSON.stringify(permanent) } : null;
    const { report, steps, group, drawn, operation, rounded, product, permanent: table, drawn_now: drawnNow } = JSON.parse(
      kept ? respondJson.callKwargs(...args, kept) : respondJson(...args));
    const result = group === undefined ? { id: question.id, report, steps } : { id: question.id, report, steps, group };
    // a number's report comes with the number drawn and the operation, for the review
    // (and the answer rounded to the design's grid, or the product before its rounding, if any)
    if (operation !== undefined) Object.assign(result, { drawn, operation });
    if (rounded !== undefined) result.rounded = rounded;
    if (product !== undefined) result.product = product;
    if (table !== undefined) Object.assign(result, { permanent: table, drawn_now: drawnNow });
    return result;
  });
}

self.addEventListener("message", (event) => {
  const message = event.data || {};
  if (message.type === "init") {
    start(message).catch((error) => fail("error", error && error.message ? error.message : error));
  } else if (message.type === "blind" || message.type === "finalize") {
    try {
      if (!respondJson) throw new Error("not ready");
      blindCore ??= pyodideInstance.pyimport("rrsite.core.blind");
      const out = message.type === "blind"
        ? blindCore.blind_json(message.key, message.survey)
        : blindCore.finalize_json(message.key, message.msg, message.blindSig, message.inv);
      self.postMessage({ type: "result", id: message.id, results: JSON.parse(out) });
    } catch (error) {
      self.postMessage({ type: "result", id: message.id, error: String(error && error.message ? error.message : error) });
    }
  } else if (message.type === "respond") {
    if (!respondJson) {
      self.postMessage({ type: "result", id: message.id, error: "not ready" });
      return;
    }
    try {
      self.postMessage({ type: "result", id: message.id, results: respondAll(message.items) });
    } catch (error) {
      self.postMessage({ type: "result", id: message.id, error: String(error && error.message ? error.message : error) });
    }
  }
});
