// Counts crypto.getRandomValues calls while rrsite.core randomizes inside Pyodide in this page.
let calls = 0;
const real = crypto.getRandomValues.bind(crypto);
crypto.getRandomValues = (array) => { calls += 1; return real(array); };

const { loadPyodide } = await import("/pyodide/pyodide.mjs");
const pyodide = await loadPyodide({ indexURL: "/pyodide/" });
const files = await (await fetch("/core-files.json")).json();
pyodide.FS.mkdirTree("/core/rrsite/core");
pyodide.FS.writeFile("/core/rrsite/__init__.py", "");
for (const name of files) {  // relative paths: core's subpackages too
  const path = `/core/rrsite/core/${name}`;
  pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
  pyodide.FS.writeFile(path, await (await fetch(`/core/${name}`)).text());
}
const before = calls;
const result = pyodide.runPython(`
import sys, random
sys.path.insert(0, "/core")
from rrsite.core import ForcedResponse, secure_random
state = random.getstate()
reports = [ForcedResponse().randomize(1).report for _ in range(200)]
[type(secure_random()).__name__, sum(reports), random.getstate() == state, sys.platform]
`).toJs();
const afterRandomize = calls;
pyodide.runPython("import os; os.urandom(32)");
window.rrResult = {
  source: result[0], yes: result[1], mtUntouched: result[2], platform: result[3],
  randomizeCalls: afterRandomize - before, urandomCalls: calls - afterRandomize,
};
document.getElementById("status").textContent = "done";
