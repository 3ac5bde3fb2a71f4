// rrsite randomizer worker (a module Web Worker).
//
// Loads Pyodide from the site's own copy, unpacks the bundled rrsite/core into site-packages and
// answers "respond" messages with rrsite.core.respond_json: a question and a true answer in, the
// report and the transcript of the coins out. Randomness comes from core's secure source
// (random.SystemRandom -> os.urandom -> crypto.getRandomValues). The worker never sends anything
// over the network and keeps nothing: the page decides what leaves the device.
//
// Messages in:  {type: "init", pyodideUrl, coreUrl}       (absolute URLs, from the page's config)
//               {type: "respond", id, items: [{question, truth, innocuous?}]}
// Messages out: {type: "progress", stage: "downloading" | "starting"}
//               {type: "ready", ms}  |  {type: "failed", reason, message}
//               {type: "result", id, results: [{id, report, steps}]}  |  {type: "result", id, error}

let respondJson = null;
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
for (const name of ["compile", "compileStreaming", "instantiate", "instantiateStreaming"]) {
  const original = WebAssembly[name];
  if (typeof original !== "function") continue;
  WebAssembly[name] = function (...args) {
    return original.apply(this, args).catch((error) => {
      fail(error instanceof WebAssembly.CompileError ? "blocked" : "error", error);
      throw error;
    });
  };
}

async function start({ pyodideUrl, coreUrl }) {
  const started = performance.now();
  self.postMessage({ type: "progress", stage: "downloading" });
  const coreBytes = fetch(coreUrl, { credentials: "same-origin" }).then((response) => {
    if (!response.ok) throw new Error(`${coreUrl}: HTTP ${response.status}`);
    return response.arrayBuffer();
  });
  coreBytes.catch(() => {}); // awaited below; avoid an unhandled-rejection report meanwhile
  const { loadPyodide } = await import(`${pyodideUrl}pyodide.mjs`);
  self.postMessage({ type: "progress", stage: "starting" });
  const pyodide = await loadPyodide({ indexURL: pyodideUrl, packages: [] });
  // `site` is imported at startup (cheap); sysconfig and importlib.invalidate_caches() each
  // cost ~30 ms, so only the site-packages finder's directory cache is refreshed.
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.unpackArchive(new Uint8Array(await coreBytes), "zip", { extractDir: sitePackages });
  pyodide.globals.set("_rr_site_packages", sitePackages);
  pyodide.runPython(
    "import sys\n"
    + "_finder = sys.path_importer_cache.get(_rr_site_packages)\n"
    + "if _finder is not None: _finder.invalidate_caches()\n"
    + "del _finder, _rr_site_packages",
  );
  const respond = pyodide.pyimport("rrsite.core").respond_json;
  if (typeof respond !== "function") throw new Error("rrsite.core.respond_json is missing");
  respondJson = respond;
  self.postMessage({ type: "ready", ms: performance.now() - started });
}

function respondAll(items) {
  return items.map(({ question, truth, innocuous }) => {
    const args = [JSON.stringify(question), truth];
    if (innocuous !== undefined && innocuous !== null) args.push(innocuous);
    const { report, steps, group } = JSON.parse(respondJson(...args));
    return group === undefined ? { id: question.id, report, steps } : { id: question.id, report, steps, group };
  });
}

self.addEventListener("message", (event) => {
  const message = event.data || {};
  if (message.type === "init") {
    start(message).catch((error) => fail("error", error && error.message ? error.message : error));
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
