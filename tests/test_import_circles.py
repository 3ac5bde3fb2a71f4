"""No two modules import each other (issue 20, point 5): the pairs this branch took apart.

Every import is counted, also those inside functions (a lazy import is still a circle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rrsite"


def imported(module: str) -> set[str]:
    """The rrsite modules ``module`` (dotted, e.g. ``core.designs``) imports, anywhere in it."""
    path = PACKAGE.joinpath(*module.split(".")).with_suffix(".py")
    package = module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
            elif node.module and node.module.startswith("rrsite."):
                base, node_module = [], node.module.removeprefix("rrsite.")
                found.add(node_module)
                found.update(f"{node_module}.{alias.name}" for alias in node.names)
                continue
            else:
                continue
            target = [*base, *(node.module.split(".") if node.module else [])]
            found.add(".".join(target))
            found.update(".".join([*target, alias.name]) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name.removeprefix("rrsite.") for alias in node.names
                         if alias.name.startswith("rrsite."))
    return found


def test_the_helper_sees_lazy_and_relative_imports():
    # designs.py used to import privacy inside TwoGroupDesign.matrix; reports.py still imports
    # html_report inside render() (one way only)
    assert "analyze.html_report" in imported("analyze.reports")
    assert "core.designs" in imported("core.privacy")
    assert "core.errors" in imported("core.designs")


@pytest.mark.parametrize(("first", "second"), [
    ("core.designs", "core.privacy"),
    ("analyze.reports", "analyze.html_report"),
])
def test_no_two_file_circle(first, second):
    assert not (second in imported(first) and first in imported(second))
