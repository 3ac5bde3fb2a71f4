// Traces which files of Pyodide's python_stdlib.zip the respondent's page imports, by running it:
// Pyodide starts (on its whole library as the site would ship it untrimmed), the worker's start
// steps run (templates/assets/worker.js),
// rrsite/core is unpacked from the very bundle the site ships, every module core's source imports
// (at any depth, found with ast) is imported, and every question of every example survey is
// answered with every answer. The stdlib modules then loaded from the zip are the trace.
//
//   node tests/pyodide/stdlib_trace.mjs           compare with rrsite/site/stdlib_keep.txt (exit 1 if different)
//   node tests/pyodide/stdlib_trace.mjs --write   rewrite rrsite/site/stdlib_keep.txt
//
// run_core_tests.mjs imports traceStdlib() and hostData() from here.
import { loadPyodide } from "pyodide";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { join, dirname, resolve } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const keepFile = join(repo, "rrsite/site/stdlib_keep.txt");
export const hostPython = process.env.PYTHON || join(repo, ".venv/bin/python");

/** From the host Python: the core bundle's bytes and every example survey's manifest questions. */
export function hostData() {
  const dir = mkdtempSync(join(tmpdir(), "rr-trace-"));
  try {
    execFileSync(hostPython, ["-c", `
import json, pathlib, sys
from rrsite.survey import load_survey
from rrsite.survey.bundle import core_zip
from rrsite.site.stdlib import traced_library
out = pathlib.Path(sys.argv[1])
out.joinpath("core.zip").write_bytes(core_zip())
full = pathlib.Path("node_modules/pyodide/python_stdlib.zip").read_bytes()
out.joinpath("stdlib.zip").write_bytes(traced_library(full))
folders = [pathlib.Path("surveys"), pathlib.Path("tests/browser/surveys")]
questions = [q for folder in folders for path in sorted(folder.glob("*.md"))
             for q in load_survey(path).manifest()["questions"] if q.get("sensitive")]
import ast
imports = set()
for path in sorted(pathlib.Path("rrsite/core").rglob("*.py")):
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            imports.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            imports.add(node.module)
imports.discard("__future__")
out.joinpath("questions.json").write_text(json.dumps({"questions": questions, "imports": sorted(imports)}))
`, dir], { cwd: repo, stdio: ["ignore", "inherit", "inherit"] });
    return {
      core: new Uint8Array(readFileSync(join(dir, "core.zip"))),
      stdlib: new Uint8Array(readFileSync(join(dir, "stdlib.zip"))),
      ...JSON.parse(readFileSync(join(dir, "questions.json"), "utf-8")),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The worker's start steps (worker.js, after loadPyodide: the core zip written, hashed with _sha2
 * and put on sys.path), core's imports, every question answered. */
export function exerciseCore(pyodide, { core, questions, imports }, rounds = 1) {
  pyodide.FS.writeFile("/lib/rrsite_core.zip", core);
  const digest = pyodide.runPython(
    "import _sha2\nwith open('/lib/rrsite_core.zip', 'rb') as _f: _rr_digest = _sha2.sha256(_f.read()).hexdigest()\n"
    + "del _f\n_rr_digest",
  );
  if (!digest.match(/^[0-9a-f]{64}$/)) throw new Error(`core digest ${digest}`);
  pyodide.runPython("import sys\nsys.path.insert(0, '/lib/rrsite_core.zip')\ndel _rr_digest");
  const respond = pyodide.pyimport("rrsite.core").respond_json;
  // Every module rrsite/core's source names in an import, at any depth (function bodies too).
  const importModule = pyodide.pyimport("importlib").import_module;
  for (const name of imports) importModule(name);
  let answered = 0;
  for (const question of questions) {
    if (question.type === "number") { // a number's designs (rrsite.core.numbers)
      const low = question.min ?? 0;
      const high = question.max ?? low + 100;
      for (const share of [0, 0.5, 1]) {
        const truth = String(question.integer ? Math.round(low + share * (high - low)) : low + share * (high - low));
        for (let i = 0; i < rounds; i += 1) {
          const out = JSON.parse(question.design?.name === "mixture-unknown"
            ? respond(JSON.stringify(question), truth, "3")
            : respond(JSON.stringify(question), truth));
          if (typeof out.report !== "number" || !Number.isFinite(out.report)) {
            throw new Error(`${question.id}: report ${out.report} is not a number`);
          }
          answered += 1;
        }
      }
      continue;
    }
    const oracle = ["oue", "sue", "olh", "subset", "hadamard"].includes(question.design?.name);
    if (oracle || question.memoize) { // frequency oracles and panels (rrsite.core.frequency)
      const truths = question.type === "multi-choice"
        ? [[], question.values.slice(0, question.design.max_ticks)].map((t) => JSON.stringify(t))
        : question.values;
      for (const truth of truths) {
        for (let i = 0; i < rounds; i += 1) {
          const first = JSON.parse(respond(JSON.stringify(question), truth));
          const again = question.memoize // a panel's next wave: the permanent reports kept
            ? JSON.parse(respond.callKwargs(JSON.stringify(question), truth,
              { permanent_json: JSON.stringify(first.permanent) }))
            : first;
          for (const out of [first, again]) {
            const sent = Array.isArray(out.report) ? out.report : [out.report];
            if (oracle ? sent.some((v) => typeof v !== "string") : !question.values.includes(out.report)) {
              throw new Error(`${question.id}: report ${JSON.stringify(out.report)} is not a report of its design`);
            }
          }
          answered += 1;
        }
      }
      continue;
    }
    for (const truth of question.values) {
      const innocuous = question.design?.name === "unrelated" ? question.values[0] : undefined;
      for (let i = 0; i < rounds; i += 1) {
        const out = JSON.parse(innocuous === undefined
          ? respond(JSON.stringify(question), truth)
          : respond(JSON.stringify(question), truth, innocuous));
        if (!question.values.includes(out.report) && !(question.reports || []).includes(out.report)) {
          throw new Error(`${question.id}: report ${out.report} is not one of its values`);
        }
        answered += 1;
      }
    }
  }
  return answered;
}

/** Zip entries of the standard library whose modules are imported now (frozen ones excluded). */
export function loadedEntries(pyodide) {
  return pyodide.runPython(`
import sys
_zip = "/lib/python%d%d.zip/" % sys.version_info[:2]
_entries = set()
for _module in list(sys.modules.values()):
    _spec = getattr(_module, "__spec__", None)
    _origin = getattr(_spec, "origin", None) or ""
    if _origin.startswith(_zip) and getattr(_spec, "loader", None) is not None \\
            and type(_spec.loader).__name__ != "FrozenImporter":
        _entries.add(_origin[len(_zip):])
"\\n".join(sorted(_entries))
`).split("\n").filter(Boolean);
}

/** Start Pyodide on its whole library as the site would ship it untrimmed (rrsite's stand-ins
 * swapped in, the optional modules out: REPLACED and OPTIONAL in rrsite/site/stdlib.py),
 * exercise core, and return the sorted list of zip entries used (and that Pyodide, for more
 * checks). */
export async function traceStdlib(data = hostData()) {
  const dir = mkdtempSync(join(tmpdir(), "rr-trace-stdlib-"));
  let pyodide;
  try {
    const stdlib = join(dir, "python_stdlib.zip");
    writeFileSync(stdlib, data.stdlib);
    pyodide = await loadPyodide({ packages: [], stdLibURL: stdlib });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const answered = exerciseCore(pyodide, data);
  return { entries: loadedEntries(pyodide), answered, version: pyodide.version, pyodide };
}

export function readKeep() {
  return readFileSync(keepFile, "utf-8").split("\n").map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { entries, version } = await traceStdlib();
  if (process.argv.includes("--write")) {
    writeFileSync(keepFile, [
      `# Pyodide ${version}: python_stdlib.zip entries imported by Pyodide's start, the worker's`,
      "# start steps and rrsite/core (OPTIONAL and REPLACED in rrsite/site/stdlib.py: left out,",
      "# shipped as rrsite's). Made by `node tests/pyodide/stdlib_trace.mjs --write`; do not",
      "# edit by hand (make test fails when a trace disagrees with this list).",
      ...entries, ""].join("\n"));
    console.log(`wrote ${entries.length} entries to ${keepFile}`);
  } else {
    const keep = new Set(readKeep());
    const traced = new Set(entries);
    const missing = entries.filter((entry) => !keep.has(entry));
    const extra = [...keep].filter((entry) => !traced.has(entry));
    for (const entry of missing) console.log(`missing from the keep list: ${entry}`);
    for (const entry of extra) console.log(`kept but not imported: ${entry}`);
    console.log(`${entries.length} traced, ${keep.size} kept`);
    process.exit(missing.length || extra.length ? 1 : 0);
  }
}
