// Runs rrsite/core's own test suite (tests/core, with real pytest) inside Pyodide 314 under Node,
// so the code the browser runs is the code that was tested. Then checks that the default random
// source reaches crypto.getRandomValues. Exit code: pytest's, or 1 if a check fails.
import { loadPyodide } from "pyodide";
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

const code = pyodide.runPython(`
import os, sys
os.chdir("/repo")
sys.path.insert(0, "/repo")
import pytest
int(pytest.main(["-q", "-p", "no:cacheprovider", "--import-mode=importlib", "tests/core"]))
`);

// The default random source inside Pyodide draws from crypto.getRandomValues, not a seeded MT.
let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures += 1;
};
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

console.log(`core tests inside Pyodide: pytest exit ${code}; ${4 - failures} passed, ${failures} failed`);
process.exit(code !== 0 ? code : failures ? 1 : 0);
