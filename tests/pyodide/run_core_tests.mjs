// Runs rrsite/core's own test suite (tests/core, with real pytest) inside Pyodide 314 under Node,
// so the code the browser runs is the code that was tested. Then checks that the default random
// source reaches crypto.getRandomValues. Exit code: pytest's, or 1 if a check fails.
//
//   node tests/pyodide/run_core_tests.mjs              everything below, in one Node process
//   node tests/pyodide/run_core_tests.mjs --checks     the trimmed library and random source only
//   node tests/pyodide/run_core_tests.mjs --share 2/4  the second of four shares of tests/core only
//
// Share K of N runs tests K, K + N, K + 2N, ... of tests/core's collection order, so the N shares
// together run every test once. The simulations (marked slow) run on a tape (tests/core/tape.py):
// their first draws from a seeded source are recorded and the test stops, and the tapes' digests
// are printed for test_core_in_pyodide.py to compare with CPython's, which runs them in full.
// That file runs the checks and each share as a test of its own, in parallel under pytest-xdist.
//
// The site ships a standard library trimmed to rrsite/site/stdlib_keep.txt (and minified). So:
// - the keep list must equal a fresh trace (tests/pyodide/stdlib_trace.mjs);
// - a Pyodide started on exactly the zip `rrsite build` ships runs the worker's start steps,
//   imports everything core's source imports and answers every example question;
// - during the pytest run, every import made by rrsite.core's modules must resolve to a built-in
//   or frozen module or to a file of the trimmed library (pytest itself needs the full one).
import { loadPyodide } from "pyodide";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { exerciseCore, hostData, readKeep, traceStdlib } from "./stdlib_trace.mjs";
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import nodeCrypto from "node:crypto";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

// Count calls to the platform CSPRNG from here on (installed before Pyodide starts). Emscripten's
// random device calls crypto.getRandomValues in a browser and node:crypto.randomFillSync under
// Node (both looked up at call time); tests/browser checks the browser path in Chromium.
// Node 18 (Debian 12's) has no global `crypto` without a flag: there only randomFillSync exists.
let randomCalls = 0;
if (globalThis.crypto?.getRandomValues) {
  const realGetRandomValues = globalThis.crypto.getRandomValues.bind(globalThis.crypto);
  globalThis.crypto.getRandomValues = (array) => {
    randomCalls += 1;
    return realGetRandomValues(array);
  };
}
const realRandomFillSync = nodeCrypto.randomFillSync;
nodeCrypto.randomFillSync = (...args) => {
  randomCalls += 1;
  return realRandomFillSync(...args);
};

// pytest and its pure-Python dependencies come from the host's site-packages: the Python named by
// $PYTHON (the Makefile passes .venv/bin/python), else the repository's .venv, else python3.
const hostPython = process.env.PYTHON
  || (existsSync(join(repo, ".venv/bin/python")) ? join(repo, ".venv/bin/python") : "python3");
const hostSite = execFileSync(hostPython, ["-c",
  "import pytest, pluggy, iniconfig, packaging, pygments, os; " +
  "print(os.path.dirname(os.path.dirname(pytest.__file__)))"]).toString().trim();
const PURE_PACKAGES = ["pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py"];

function copyTree(pyodide, from, to) {
  const stat = statSync(from);
  if (stat.isDirectory()) {
    if (from.endsWith("__pycache__")) return;
    pyodide.FS.mkdirTree(to);
    for (const name of readdirSync(from)) copyTree(pyodide, join(from, name), `${to}/${name}`);
  } else if (!from.endsWith(".pyc")) {
    pyodide.FS.writeFile(to, new Uint8Array(readFileSync(from)));
  }
}

// ---- the options -----------------------------------------------------------------------------
const args = process.argv.slice(2);
const shareArg = args.includes("--share") ? args[args.indexOf("--share") + 1] ?? "" : null;
const shareMatch = shareArg === null ? null : /^(\d+)\/(\d+)$/.exec(shareArg);
if (shareArg !== null && (!shareMatch || +shareMatch[1] < 1 || +shareMatch[1] > +shareMatch[2])) {
  console.error(`--share takes K/N with 1 <= K <= N (got ${JSON.stringify(shareArg)})`);
  process.exit(2);
}
if (shareArg !== null && args.includes("--checks")) {
  console.error("--checks and --share exclude each other (neither: everything)");
  process.exit(2);
}
const runChecks = shareArg === null;          // --checks, or no option
const runSuite = !args.includes("--checks");  // --share K/N, or no option
const [share, shares] = shareMatch ? [+shareMatch[1], +shareMatch[2]] : [1, 1];

let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures += 1;
};
let checks = 0;

// ---- the trimmed standard library -----------------------------------------------------------
const keep = readKeep();

/** The keep list against a fresh trace, then a Pyodide on the shipped (trimmed) zip; returns the
 * tracing Pyodide (full library, core from the site's bundle) for the random-source checks. */
async function checkTrimmedLibrary() {
  const data = hostData();
  const { entries, pyodide } = await traceStdlib(data);
  const kept = new Set(keep);
  const traced = new Set(entries);
  const missing = entries.filter((entry) => !kept.has(entry));
  const unused = keep.filter((entry) => !traced.has(entry));
  check(missing.length === 0 && unused.length === 0,
    `keep list matches a fresh trace (${entries.length} files; missing: ${missing.join(" ") || "none"}; `
    + `unused: ${unused.join(" ") || "none"}; fix: node tests/pyodide/stdlib_trace.mjs --write)`);
  checks += 1;
  const work = mkdtempSync(join(tmpdir(), "rr-stdlib-"));
  const shipped = join(work, "python_stdlib.zip");
  try {
    execFileSync(hostPython, ["-m", "rrsite.site.stdlib", join(repo, "node_modules/pyodide"), shipped],
      { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
    const bytes = statSync(shipped).size;
    let answered = 0;
    let error = null;
    try {
      const trimmed = await loadPyodide({ packages: [], stdLibURL: shipped, stderr: () => {} });
      answered = exerciseCore(trimmed, data, 20);
    } catch (caught) {
      error = String(caught && caught.message ? caught.message : caught).trim().split("\n").slice(-2).join(" ").slice(0, 300);
    }
    check(error === null && answered > 0,
      `on the shipped library (${bytes} bytes): worker start, core's imports, ${answered} answers`
      + (error ? `: ${error}` : ""));
    checks += 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return pyodide;
}

// ---- tests/core under pytest (all of it, or one share) ------------------------------------
/** Pytest on tests/core (every test, or share K of N) in a full Pyodide; returns its exit code. */
async function runCoreTests() {
  const started = Date.now();
  const pyodide = await loadPyodide();
  const site = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  for (const name of PURE_PACKAGES) {
    const path = join(hostSite, name);
    if (existsSync(path)) copyTree(pyodide, path, `${site}/${name}`);
  }
  // The code under test: rrsite/__init__.py and rrsite/core, exactly as in the repository.
  pyodide.FS.mkdirTree("/repo/rrsite");
  pyodide.FS.writeFile("/repo/rrsite/__init__.py", readFileSync(join(repo, "rrsite/__init__.py")));
  copyTree(pyodide, join(repo, "rrsite/core"), "/repo/rrsite/core");
  copyTree(pyodide, join(repo, "tests/core"), "/repo/tests/core");
  pyodide.FS.writeFile("/repo/tests/__init__.py", "");
  console.log(`pyodide ${pyodide.version} loaded in ${Date.now() - started} ms`);

  const version = pyodide.runPython("import sys; sys.version.split()[0]");
  console.log(`python ${version} (${pyodide.runPython("import sys; sys.platform")})`);

  // Imports made by rrsite.core's modules (seen through builtins.__import__, which also sees names
  // already imported by pytest) must be satisfied by the trimmed library.
  pyodide.globals.set("_rr_keep", keep.join("\n"));
  pyodide.runPython(`
import builtins, importlib.util, sys
_zip = "/lib/python%d%d.zip/" % sys.version_info[:2]
_keep = set(_rr_keep.split("\\n"))
_outside = []
_real_import = builtins.__import__

def _in_trimmed(name):
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None) if module else importlib.util.find_spec(name)
    origin = getattr(spec, "origin", None) or ""
    if not origin.startswith(_zip) or type(spec.loader).__name__ == "FrozenImporter":
        return True
    return origin[len(_zip):] in _keep

def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    module = _real_import(name, globals, locals, fromlist, level)
    importer = (globals or {}).get("__name__", "")
    if level == 0 and importer.startswith("rrsite.core"):
        parts = name.split(".")
        wanted = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        wanted += [f"{name}.{item}" for item in fromlist or () if f"{name}.{item}" in sys.modules]
        _outside.extend(f"{importer} imports {n}" for n in wanted if not _in_trimmed(n))
    return module

builtins.__import__ = _guarded_import
  `);

  // A share deselects the other tests after collection: every test module is still imported,
  // so the import guard below sees all of core's imports in every share.
  pyodide.globals.set("_rr_share", share);
  pyodide.globals.set("_rr_shares", shares);
  const code = pyodide.runPython(`
import os, sys
os.chdir("/repo")
sys.path.insert(0, "/repo")
import pytest

class _Share:
  """Keep tests K, K + N, ... of the collection (K = _rr_share, N = _rr_shares, from 1)."""

  def pytest_collection_modifyitems(self, config, items):
      kept = [item for index, item in enumerate(items) if index % _rr_shares == _rr_share - 1]
      dropped = [item for item in items if item not in kept]
      if dropped:
          config.hook.pytest_deselected(items=dropped)
      items[:] = kept

int(pytest.main(["-q", "-p", "no:cacheprovider", "--import-mode=importlib", "-p", "tests.core.tape",
                 "-o", "markers=slow: a simulation, taped here (tests/core/tape.py)", "tests/core"],
              plugins=[_Share()]))
`);
  const outside = pyodide.runPython("builtins.__import__ = _real_import\n'; '.join(sorted(set(_outside)))");
  const guarded = pyodide.runPython("sum(1 for m in sys.modules if m.startswith('rrsite.core'))");
  check(outside === "" && guarded > 1,
    `core's imports during the tests are all in the trimmed library (${guarded} core modules)`
    + (outside ? `: ${outside}` : ""));
  checks += 1;
  console.log(`core tests inside Pyodide, share ${share}/${shares}: pytest exit ${code}`);
  return code;
}

// ---- the random source ---------------------------------------------------------------------
/** The default random source inside Pyodide draws from crypto.getRandomValues, not a seeded MT. */
function checkRandomSource(pyodide) {
  const before = randomCalls;
  const report = pyodide.runPython(`
import random
from rrsite.core import ForcedResponse, secure_random
state = random.getstate()
source = secure_random()
reports = [ForcedResponse().randomize(1).report for _ in range(50)]
assert random.getstate() == state
(type(source).__name__, sum(reports))
  `).toJs();
  check(pyodide.runPython("import sys; sys.platform") === "emscripten", "running inside Pyodide (emscripten)");
  check(report[0] === "SystemRandom", `default source is SystemRandom (got ${report[0]})`);
  check(randomCalls - before >= 50, `50 randomizations drew from the platform CSPRNG ${randomCalls - before} times`);
  const urandomBefore = randomCalls;
  pyodide.runPython("import os; os.urandom(16)");
  check(randomCalls === urandomBefore + 1, "one os.urandom call is one call of the platform CSPRNG");

  checks += 4;
}

const code = runSuite ? await runCoreTests() : 0;
if (runChecks) checkRandomSource(await checkTrimmedLibrary());
console.log(`core tests inside Pyodide: pytest exit ${code}; ${checks - failures} checks passed, ${failures} failed`);
process.exit(code !== 0 ? code : failures ? 1 : 0);
