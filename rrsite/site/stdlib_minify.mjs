// Shrinks the trimmed standard library zip with the Python it will run on (Pyodide's own, so the
// syntax of its version parses): every module loses its docstrings (as under `python -OO`, which
// the standard library supports) and comments and is written back with ast.unparse, then compiled
// once to prove it still parses. Entries keep their names, order and times; all are stored.
//
//   node stdlib_minify.mjs PYODIDE_DIR IN.zip OUT.zip
//
// Called by rrsite/site/stdlib.py (minify_stdlib) during `rrsite build`; the result is cached.
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, input, output] = process.argv.slice(2);
if (!output) {
  console.error("usage: node stdlib_minify.mjs PYODIDE_DIR IN.zip OUT.zip");
  process.exit(2);
}
const indexURL = resolve(pyodideDir) + "/";
const { loadPyodide } = await import(pathToFileURL(`${indexURL}pyodide.mjs`).href);
const pyodide = await loadPyodide({ indexURL, packages: [] });
pyodide.FS.writeFile("/tmp/in.zip", new Uint8Array(readFileSync(input)));
pyodide.runPython(`
import ast, zipfile

def _strip(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \\
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree

with zipfile.ZipFile("/tmp/in.zip") as source, \\
        zipfile.ZipFile("/tmp/out.zip", "w", compression=zipfile.ZIP_STORED) as target:
    for info in source.infolist():
        data = source.read(info)
        if info.filename.endswith(".py"):
            text = ast.unparse(_strip(ast.parse(data, info.filename))) + "\\n"
            compile(text, info.filename, "exec", dont_inherit=True)
            data = text.encode("utf-8")
        entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
        entry.external_attr = info.external_attr
        entry.create_system = info.create_system
        target.writestr(entry, data)
`);
writeFileSync(output, pyodide.FS.readFile("/tmp/out.zip"));
