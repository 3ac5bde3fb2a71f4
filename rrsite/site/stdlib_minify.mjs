// Shrinks the trimmed standard library zip with the Python it will run on (Pyodide's own, so the
// syntax of its version parses): every module loses its docstrings (as under `python -OO`, which
// the standard library supports) and comments and is written back with ast.unparse, then compiled
// once to prove it still parses. Entries keep their names, order and times; all are stored.
//
// With a BUDGET (bytes, default 0), some modules are also shipped compiled, as `name.pyc`
// (unchecked hash-based bytecode of Pyodide's own Python, which zipimport loads without the
// source) instead of `name.py`: the zip holds source only, so every import at Pyodide's start
// compiles it, and in a freshly loaded interpreter that compiling is most of the start (measured:
// seconds in Chromium). Bytecode is about three times larger once compressed (zlib -9, module by
// module), so a BUDGET below the whole takes the modules that save the most source to compile per
// compressed byte added first, until the bytes added reach BUDGET (`rrsite build` gives one that
// covers every module: rrsite/site/stdlib.py, PRECOMPILE_BUDGET). Their
// location tables keep the line numbers but not the columns (tracebacks name the line, without
// the ^^^ marks): a third less compressed bytecode, so more modules within the budget.
//
//   node stdlib_minify.mjs PYODIDE_DIR IN.zip OUT.zip [BUDGET]
//
// Called by rrsite/site/stdlib.py (minify_stdlib) during `rrsite build`; the result is cached.
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, input, output, budget = "0"] = process.argv.slice(2);
if (!output) {
  console.error("usage: node stdlib_minify.mjs PYODIDE_DIR IN.zip OUT.zip [BUDGET]");
  process.exit(2);
}
const indexURL = resolve(pyodideDir) + "/";
const { loadPyodide } = await import(pathToFileURL(`${indexURL}pyodide.mjs`).href);
const pyodide = await loadPyodide({ indexURL, packages: [] });
pyodide.FS.writeFile("/tmp/in.zip", new Uint8Array(readFileSync(input)));
pyodide.globals.set("_budget", Number.parseInt(budget, 10) || 0);
pyodide.runPython(`
import ast, importlib.util, sys, zipfile, zlib
from importlib._bootstrap_external import _code_to_hash_pyc

# where Pyodide puts the shipped zip (the same for this version), so that tracebacks name the
# file as they would had the module been compiled from source there
_home = next(path for path in sys.path if path.endswith(".zip"))

def _varint(value):
    out = bytearray()
    while value >= 64:
        out.append(0x40 | (value & 63))
        value >>= 6
    out.append(value)
    return out

def _svarint(value):
    return _varint((-value << 1) | 1 if value < 0 else value << 1)

def _lines_only(code):
    # the location table re-encoded with "no column" entries (CPython's format: a byte
    # 1cccclll, code c = 13 and a signed line delta, or c = 15 without a line, for l+1 code units)
    consts = tuple(_lines_only(c) if hasattr(c, "co_code") else c for c in code.co_consts)
    table, previous = bytearray(), code.co_firstlineno
    for start, end, line in code.co_lines():
        units = (end - start) // 2
        while units > 0:
            size = min(units, 8)
            units -= size
            if line is None:
                table.append(0x80 | (15 << 3) | (size - 1))
            else:
                table.append(0x80 | (13 << 3) | (size - 1))
                table += _svarint(line - previous)
                previous = line
    lean = code.replace(co_consts=consts, co_linetable=bytes(table))
    return lean if list(lean.co_lines()) == list(code.co_lines()) else code.replace(co_consts=consts)

def _strip(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \\
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree

with zipfile.ZipFile("/tmp/in.zip") as source:
    entries = []  # (info, name, data)
    compiled = {}  # index -> (pyc bytes, source bytes saved per byte added)
    for info in source.infolist():
        data = source.read(info)
        if info.filename.endswith(".py"):
            text = ast.unparse(_strip(ast.parse(data, info.filename))) + "\\n"
            data = text.encode("utf-8")
            code = compile(data, f"{_home}/{info.filename}", "exec", dont_inherit=True)
            if _budget > 0:
                pyc = bytes(_code_to_hash_pyc(_lines_only(code), importlib.util.source_hash(data),
                                              False))
                added = len(zlib.compress(pyc, 9)) - len(zlib.compress(data, 9))
                compiled[len(entries)] = (pyc, added, len(data) / max(added, 1))
        entries.append((info, info.filename, data))
    spent = 0
    for index in sorted(compiled, key=lambda i: (-compiled[i][2], entries[i][1])):
        pyc, added, _ = compiled[index]
        if spent + added > _budget:
            continue
        spent += added
        info, name, _ = entries[index]
        entries[index] = (info, name + "c", pyc)

with zipfile.ZipFile("/tmp/out.zip", "w", compression=zipfile.ZIP_STORED) as target:
    for info, name, data in entries:
        entry = zipfile.ZipInfo(name, date_time=info.date_time)
        entry.external_attr = info.external_attr
        entry.create_system = info.create_system
        target.writestr(entry, data)
`);
writeFileSync(output, pyodide.FS.readFile("/tmp/out.zip"));
