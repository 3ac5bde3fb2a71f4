"""The layout of rrsite/: packages by concern, arrows one way, small modules.

Every import is counted, also those inside functions (a lazy import is still an arrow). The
allowed arrows between packages are the table of docs/engineering/layout.md, read from the page
itself, so the page and the code cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rrsite"
LAYOUT_PAGE = ROOT / "docs" / "engineering" / "layout.md"
MAX_MODULES = 15
MAX_LINES = 800
#: The core bundle every respondent downloads, brotli-compressed: raise it knowingly.
CORE_BUDGET = 48_000


def modules() -> dict[str, Path]:
    """Every module of rrsite, dotted without the ``rrsite.`` prefix (a package by its name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts) or "__init__"] = path
    return found


MODULES = modules()


def imports(module: str) -> Iterator[tuple[str, list[str], int]]:
    """(target module, names imported from it, line) for each rrsite import in ``module``."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if module == "__init__":
        package = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and (node.module == "rrsite" or node.module.startswith("rrsite.")):
                target = node.module.split(".")[1:]
            else:
                continue
            dotted = ".".join(target) or "__init__"
            names = [alias.name for alias in node.names]
            submodules = [n for n in names if f"{dotted}.{n}".removeprefix("__init__.") in MODULES]
            for name in submodules:
                yield f"{dotted}.{name}".removeprefix("__init__."), [], node.lineno
            rest = [n for n in names if n not in submodules]
            if rest:
                yield dotted, rest, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("rrsite."):
                    yield alias.name.removeprefix("rrsite."), [], node.lineno


def graph() -> dict[str, set[str]]:
    return {m: {target for target, _, _ in imports(m) if target in MODULES} for m in MODULES}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module, or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges[v]:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def package_of(module: str) -> str:
    return module.split(".")[0]


def allowed_arrows() -> dict[str, set[str]]:
    """The table of docs/engineering/layout.md: package -> the packages it may import."""
    text = LAYOUT_PAGE.read_text("utf-8")
    table: dict[str, set[str]] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"\|\s*`([a-z_]+)`\s*\|[^|]*\|\s*([^|]*)\|\s*", line)
        if match:
            targets = set(re.findall(r"`([a-z_]+)`", match.group(2)))
            table[match.group(1)] = targets
    return table


def test_the_helper_sees_lazy_relative_and_package_imports():
    assert "report.html" in {t for t, _, _ in imports("report.analysis")}  # inside render()
    assert "core.base" in {t for t, _, _ in imports("core.privacy")}
    assert "core.errors" in {t for t, _, _ in imports("core.designs")}
    assert "analyze.results" in {t for t, _, _ in imports("analyze.api")}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"a"}}) == [["a"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_of_any_length():
    assert circles(graph()) == []


def test_no_module_imports_another_modules_private_name():
    offences = [f"{MODULES[m].relative_to(ROOT)}:{line}: {name} from {target}"
                for m in MODULES for target, names, line in imports(m)
                for name in names if name.startswith("_") and not name.startswith("__")]
    assert offences == []


@pytest.mark.parametrize("folder", sorted({p.parent for p in PACKAGE.rglob("*.py")}),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_folder_holds_more_than_15_modules(folder: Path):
    assert len(list(folder.glob("*.py"))) <= MAX_MODULES


def test_no_module_is_over_800_lines():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text("utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_the_layout_page_lists_every_package_and_says_what_it_may_import():
    table = allowed_arrows()
    packages = {package_of(m) for m in MODULES if m != "__init__"}
    assert packages == set(table), "docs/engineering/layout.md's table and rrsite/ differ"
    for name, targets in table.items():
        assert targets <= set(table) | {"rrsite"}, (name, targets - set(table))


def test_every_arrow_is_allowed_by_the_layout_page():
    table = allowed_arrows()
    offences = []
    for m in MODULES:
        if m == "__init__":
            continue
        for target, _, line in imports(m):
            if target == "__init__":  # rrsite.__version__
                continue
            own, other = package_of(m), package_of(target)
            if own != other and other not in table[own]:
                offences.append(f"{MODULES[m].relative_to(ROOT)}:{line}: {own} -> {other}")
    assert offences == []


def test_the_arrows_of_the_layout_point_one_way():
    table = allowed_arrows()
    assert circles({p: targets & set(table) for p, targets in table.items()}) == []


def test_every_package_says_what_it_owns():
    for init in PACKAGE.rglob("__init__.py"):
        if init.parent == PACKAGE:
            continue
        docstring = ast.get_docstring(ast.parse(init.read_text("utf-8")))
        assert docstring and len(docstring) > 40, init.relative_to(ROOT)


def test_core_is_small_enough_to_download():
    import brotli

    from rrsite.survey.bundle import core_zip

    assert len(brotli.compress(core_zip(), quality=11)) <= CORE_BUDGET


def test_no_test_calls_asyncio_run_directly() -> None:
    """A test that drives a browser leaves Playwright's event loop running in its pytest-xdist
    worker, and a later ``asyncio.run`` in the same worker fails: tests run coroutines with
    ``rrsite.collect.pgstore.run_outside_loop`` (a thread of its own) instead."""
    tests = Path(__file__).resolve().parent
    found = [f"{path.relative_to(tests.parent)}:{number}"
             for path in sorted(tests.rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if "asyncio.run(" in line and "pool.submit(asyncio.run" not in line
             and path.name != "test_layout.py"]
    assert not found, "use run_outside_loop instead of asyncio.run in: " + ", ".join(found)
