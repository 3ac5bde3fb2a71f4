"""The documentation's snippets: find them in docs/**/*.md and run or build them.

Conventions (docs/engineering/docs.md):

- a fenced block tagged ``sh`` is a shell command: it is run with bash (``set -euo pipefail``) from
  a scratch copy of the repository root, with the virtual environment's bin/ first on PATH, and
  must exit 0. The ``sh`` and ``python`` blocks of one page run in order in the same scratch copy,
  so a later block can use the files an earlier one wrote. A server that does not return (``rrsite
  serve``, ``rrsite preview``, ``make demo``) is tagged ``console`` instead (shown, not run);
- a fenced block tagged ``markdown`` whose first line is ``---`` is a complete survey file: it is
  built with ``rrsite build`` and must build;
- a fenced block tagged ``python`` is run with the virtual environment's Python (same scratch copy
  and order as the ``sh`` blocks) and must exit 0.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BIN = Path(sys.executable).parent

#: What a scratch copy leaves out: the environment, caches, build outputs and git's own files.
#: node_modules is linked, not copied (the build finds Pyodide through the editable install).
SKIP = {".git", ".venv", "node_modules", "site", "dist", "__pycache__", ".pytest_cache",
        ".mypy_cache", ".ruff_cache", ".hypothesis", "screenshots"}

#: Commands that serve until stopped: a block with one of them must be tagged ``console``.
BLOCKING = re.compile(r"^\s*(rrsite (serve|preview)\b|make (demo|docs-serve)\b|mkdocs serve\b)",
                      re.MULTILINE)

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language tag and its text."""

    file: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str

    @property
    def where(self) -> str:
        """``docs/page.md:line``."""
        shown = self.file.relative_to(ROOT) if self.file.is_relative_to(ROOT) else self.file
        return f"{shown}:{self.line}"

    @property
    def is_survey(self) -> bool:
        """A ``markdown`` block that is a complete survey file (starts with front matter)."""
        return self.lang == "markdown" and self.text.startswith("---\n")


class SnippetFailed(AssertionError):
    """A snippet that did not run or build, with its file:line and output."""


def blocks(path: Path) -> list[Block]:
    """Every top-level fenced block of a Markdown file, in order (inner fences stay text)."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        fence, indent = match.group("fence"), len(match.group("indent"))
        lang = match.group("info").strip().split(" ")[0].split("{")[0].strip().lower()
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines):
            closing = lines[index].strip()
            if closing.startswith(fence[0] * len(fence)) and set(closing) == {fence[0]}:
                break
            line = lines[index]
            body.append(line[indent:] if line[:indent].strip() == "" else line)
            index += 1
        found.append(Block(path, start + 1, lang, "\n".join(body) + "\n"))
        index += 1
    return found


def pages() -> list[Path]:
    """Every Markdown page of the docs."""
    return sorted(DOCS.rglob("*.md"))


def scratch_copy(target: Path) -> Path:
    """A copy of the repository root (without the environment and outputs) at ``target``."""
    shutil.copytree(ROOT, target, ignore=lambda _dir, names: [n for n in names if n in SKIP])
    if (ROOT / "node_modules").exists():
        (target / "node_modules").symlink_to(ROOT / "node_modules")
    return target


def environment() -> dict[str, str]:
    """The shell's environment: the venv's bin/ first on PATH (``rrsite``, ``python``)."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(BIN.parent)
    env.pop("PYTHONPATH", None)
    return env


def _run(block: Block, command: list[str], cwd: Path, timeout: float) -> None:
    try:
        done = subprocess.run(command, cwd=cwd, env=environment(), capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as error:
        raise SnippetFailed(f"{block.where}: {block.lang} block did not finish in {timeout:.0f} s "
                            f"(tag a server `console`):\n{block.text}") from error
    if done.returncode != 0:
        raise SnippetFailed(f"{block.where}: {block.lang} block failed with exit code "
                            f"{done.returncode}:\n{block.text}\n--- stdout\n{done.stdout[-3000:]}"
                            f"\n--- stderr\n{done.stderr[-3000:]}")


def run_block(block: Block, cwd: Path, timeout: float = 300) -> None:
    """Run one ``sh`` or ``python`` block in ``cwd``; raise SnippetFailed if it fails."""
    if block.lang == "sh":
        if BLOCKING.search(block.text):
            raise SnippetFailed(f"{block.where}: this sh block starts a server that does not "
                                "return: tag it `console` (shown, not run)")
        _run(block, ["bash", "-c", "set -euo pipefail\n" + block.text], cwd, timeout)
    elif block.lang == "python":
        script = cwd / f".snippet-{block.line}.py"
        script.write_text(block.text, encoding="utf-8")
        _run(block, [str(BIN / "python"), str(script)], cwd, timeout)
    else:
        raise ValueError(f"{block.where}: {block.lang} blocks are not run")


def run_page(path: Path, workdir: Path) -> int:
    """Run every ``sh`` and ``python`` block of a page, in order, in one scratch copy."""
    runnable = [block for block in blocks(path) if block.lang in ("sh", "python")]
    if not runnable:
        return 0
    cwd = scratch_copy(workdir / "root")
    for block in runnable:
        run_block(block, cwd)
    return len(runnable)


def build_survey(block: Block, workdir: Path) -> None:
    """Build a survey block with ``rrsite build``; raise SnippetFailed if it does not build."""
    folder = workdir / f"survey-{block.line}"
    folder.mkdir(parents=True)
    survey = folder / "snippet.md"
    survey.write_text(block.text, encoding="utf-8")
    done = subprocess.run([str(BIN / "rrsite"), "build", str(survey), "-o", str(folder / "dist"),
                           "--no-compress"], cwd=ROOT, env=environment(), capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        # the build names snippet.md:line; give the docs page's line too (front matter at +1)
        raise SnippetFailed(f"{block.where}: survey block does not build (its line 1 is line "
                            f"{block.line + 1} of the page):\n{done.stderr[-3000:]}")
