"""One file per page script: a module's imports of other assets inlined at build time.

A page pins every script it loads with an ``integrity`` attribute, but a module's static imports
carry none: they could be pinned only by ``<link rel="modulepreload" integrity>``, which WebKit
refuses (the preload fails, and with it the module importing it), or by an inline import map,
which a code-transparency scheme's Content-Security-Policy forbids. So the build inlines them:
every asset module that imports other asset modules becomes one script holding them all, each
imported module evaluated once, in import order, in a function of its own (its top-level names
stay its own), its exports handed to its importers as constants; the bundled module keeps its
own exports.

This is not a general bundler; it accepts the forms the page's modules use, and refuses any
other with its file and line: ``import { a, b as c } from "./x.js";`` at the top of a module,
and ``export`` before ``const``, ``function``, ``async function`` or ``class``. Exports are
constants, so bindings that change (``export let``), default and namespace imports, re-exports
and ``import()`` of an asset are refused; so is a cycle of imports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

#: Suffixes of the modules that are bundled.
MODULES = (".js", ".mjs")

_IMPORT = re.compile(r"""^import\s*\{([^}]*)\}\s*from\s*(["'])(\./[^"']+)\2\s*;?[ \t]*$""",
                     re.MULTILINE)
_ANY_IMPORT = re.compile(r"""^[ \t]*import\b(?![ \t]*\()""", re.MULTILINE)
_DYNAMIC_IMPORT = re.compile(r"""\bimport\s*\(\s*(["'`])\./""")
_EXPORT = re.compile(
    r"^export\s+(async\s+function\*?|function\*?|class|const)\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
_ANY_EXPORT = re.compile(r"^[ \t]*export\b", re.MULTILINE)
_NAME = re.compile(r"^[A-Za-z_$][\w$]*$")


class BundleError(Exception):
    """A module uses a form of import or export the bundler does not take (``file:line``)."""


@dataclass
class Module:
    """A module's imports (name -> [(exported, local)]), its exports, and its code without them."""

    name: str
    imports: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    exports: list[str] = field(default_factory=list)
    body: str = ""


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _resolve(importer: str, reference: str) -> str:
    parts: list[str] = []
    for part in (PurePosixPath(importer).parent / reference).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def parse_module(name: str, text: str, sources: Mapping[str, bytes]) -> Module:
    """Read a module's asset imports and its exports; BundleError names what it cannot take."""
    module = Module(name)
    covered: list[tuple[int, int]] = []
    for match in _IMPORT.finditer(text):
        target = _resolve(name, match.group(3))
        if target not in sources:
            raise BundleError(f"{name}:{_line(text, match.start())}: imports {match.group(3)}, "
                              "which is not a file of the assets folder")
        pairs = []
        for item in match.group(1).split(","):
            words = item.split()
            if not words:
                continue
            if len(words) == 1 and _NAME.match(words[0]):
                pairs.append((words[0], words[0]))
            elif len(words) == 3 and words[1] == "as" and _NAME.match(words[0]) \
                    and _NAME.match(words[2]):
                pairs.append((words[0], words[2]))
            else:
                raise BundleError(f"{name}:{_line(text, match.start())}: cannot read the import "
                                  f"of {item.strip()!r}")
        module.imports.setdefault(target, []).extend(pairs)
        covered.append(match.span())
    for match in _ANY_IMPORT.finditer(text):
        if not any(start <= match.end() - 1 < end for start, end in covered):
            raise BundleError(f"{name}:{_line(text, match.start())}: only "
                              "`import { a, b as c } from \"./x.js\";` can import an asset")
    dynamic = _DYNAMIC_IMPORT.search(text)
    if dynamic:
        raise BundleError(f"{name}:{_line(text, dynamic.start())}: import() of an asset would "
                          "load it without its integrity: import it statically")
    exported = {match.start(): match for match in _EXPORT.finditer(text)}
    for match in _ANY_EXPORT.finditer(text):
        start = match.start() + len(match.group(0)) - len("export")
        if start not in exported:
            raise BundleError(f"{name}:{_line(text, start)}: only `export` before const, "
                              "function, async function or class can be bundled (exports are "
                              "constants)")
    module.exports = [match.group(2) for match in exported.values()]
    body = text
    for start, end in sorted(covered, reverse=True):
        body = body[:start] + body[end:]
    module.body = _EXPORT.sub(lambda m: f"{m.group(1)} {m.group(2)}", body)
    return module


def _order(name: str, modules: Mapping[str, Module], seen: list[str],
           visiting: list[str]) -> None:
    """Depth first, each module after what it imports (the order ES modules evaluate in)."""
    if name in seen:
        return
    if name in visiting:
        cycle = " -> ".join([*visiting[visiting.index(name):], name])
        raise BundleError(f"{name}: the modules import each other in a cycle: {cycle}")
    visiting.append(name)
    for target in modules[name].imports:
        _order(target, modules, seen, visiting)
    visiting.pop()
    seen.append(name)


def _variable(name: str) -> str:
    return "__rr_" + re.sub(r"\W", "_", name)


def _bindings(module: Module, modules: Mapping[str, Module]) -> str:
    lines = []
    for target, pairs in module.imports.items():
        missing = [exported for exported, _ in pairs if exported not in modules[target].exports]
        if missing:
            raise BundleError(f"{module.name}: imports {', '.join(missing)} from {target}, "
                              "which does not export it")
        names = ", ".join(exported if exported == local else f"{exported}: {local}"
                          for exported, local in pairs)
        lines.append(f"const {{ {names} }} = {_variable(target)};\n")
    return "".join(lines)


def bundle(name: str, modules: Mapping[str, Module]) -> str:
    """The module ``name`` with every asset module it imports, at any depth, inlined."""
    order: list[str] = []
    _order(name, modules, order, [])
    parts = [f"// {name}, with the modules it imports inlined by rrsite build "
             f"({', '.join(order[:-1])}): one file, one integrity.\n"]
    for dependency in order[:-1]:
        module = modules[dependency]
        parts.append(f"const {_variable(dependency)} = (() => {{ // {dependency}\n"
                     f"{_bindings(module, modules)}{module.body.rstrip()}\n"
                     f"return {{ {', '.join(module.exports)} }};\n}})();\n")
    entry = modules[name]
    parts.append(f"// {name}\n{_bindings(entry, modules)}{entry.body}")
    if entry.exports:  # the entry stays a module with its own exports
        separator = "" if entry.body.endswith("\n") else "\n"
        parts.append(f"{separator}export {{ {', '.join(entry.exports)} }};\n")
    return "".join(parts)


def bundle_assets(sources: Mapping[str, bytes]) -> dict[str, bytes]:
    """The assets with every module that imports other asset modules bundled; the rest as given.

    Raises BundleError (``file:line``) for a module it cannot take.
    """
    modules: dict[str, Module] = {}
    for name, data in sources.items():
        if PurePosixPath(name).suffix in MODULES:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as error:
                raise BundleError(f"{name}: not UTF-8 ({error})") from None
            modules[name] = parse_module(name, text, sources)
    result = dict(sources)
    for name, module in modules.items():
        unknown = [target for target in module.imports if target not in modules]
        if unknown:
            raise BundleError(f"{name}: imports {', '.join(unknown)}, which is not a module")
        if module.imports:
            result[name] = bundle(name, modules).encode("utf-8")
    return result


# --------------------------------------------------------------------------------------------
# Pyodide's JavaScript inside the worker

#: How Pyodide's two modules end (pyodide.mjs is esbuild's output, pyodide.asm.mjs emscripten's).
_LOADER_END = re.compile(r"export\s*\{([^}]*)\}\s*;?\s*(//# sourceMappingURL=\S*\s*)?$")
_ASM_END = re.compile(r"export\s+default\s+([A-Za-z_$][\w$]*)\s*;?\s*$")


def _loader_exports(text: str) -> dict[str, str]:
    match = _LOADER_END.search(text)
    if not match:
        raise BundleError("pyodide.mjs: its last statement is not `export { ... }`")
    exports: dict[str, str] = {}
    for item in match.group(1).split(","):
        words = item.split()
        if len(words) == 3 and words[1] == "as":
            exports[words[2]] = words[0]
        elif len(words) == 1:
            exports[words[0]] = words[0]
    if "loadPyodide" not in exports:
        raise BundleError("pyodide.mjs: it does not export loadPyodide")
    return exports


def worker_with_runtime(worker: bytes, loader: bytes, asm: bytes) -> bytes:
    """The worker's script with Pyodide's ``pyodide.asm.mjs`` and ``pyodide.mjs`` before it.

    Each module runs in a function of its own; the worker finds them as the constant
    ``rrsitePyodide`` (``{loadPyodide, version, createPyodideModule}``). The worker then imports
    nothing: a module worker's imports cannot carry integrity, and WebKit applies the page's
    Integrity-Policy to them, so Pyodide's JavaScript is checked with the worker's own script.
    """
    try:
        loader_text, asm_text = loader.decode("utf-8"), asm.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BundleError(f"Pyodide's modules are not UTF-8 ({error})") from None
    exports = _loader_exports(loader_text)
    asm_match = _ASM_END.search(asm_text)
    if not asm_match:
        raise BundleError("pyodide.asm.mjs: its last statement is not `export default NAME;`")
    bindings = ", ".join(f"{name}: {local}" for name, local in sorted(exports.items()))
    return (
        "// The randomizer's worker, with Pyodide's pyodide.asm.mjs and pyodide.mjs inlined by "
        "rrsite build: one file, one integrity.\n"
        "const rrsitePyodide = (() => {\n"
        "const createPyodideModule = (() => {\n"
        f"{asm_text[:asm_match.start()].rstrip()}\n"
        f"return {asm_match.group(1)};\n}})();\n"
        "const loader = (() => {\n"
        f"{loader_text[:_LOADER_END.search(loader_text).start()].rstrip()}\n"  # type: ignore[union-attr]
        f"return {{ {bindings} }};\n}})();\n"
        "return { ...loader, createPyodideModule };\n})();\n"
    ).encode() + worker
