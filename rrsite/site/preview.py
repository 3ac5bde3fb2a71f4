"""The machinery of `rrsite preview`: rebuild on save, keep the last good site, tell the page.

``preview_build`` builds like `rrsite build` but every survey's submissions go to the local
collector and each page loads the reload script (``/_preview/reload.js``, never written by
`rrsite build`). A :class:`Watcher` polls the survey files and templates, rebuilds into a fresh
folder and swaps it in; a build with errors keeps the last good site, and :class:`PreviewState`
holds what the open page asks for (the build number, or the errors with their file:line). The
server around it is rrsite.commands.preview's.
"""

from __future__ import annotations

import secrets
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import RRSiteError
from ..survey import SurveyErrors
from ..survey.model import COLLECTOR_URL
from .assets import default_cache_dir, sri
from .builder import Plan, plan_build, survey_files, write_site
from .swap import swap_in

#: How often the sources are looked at, in seconds.
POLL_S = 0.1
#: Where the preview's own endpoints live (a survey id cannot start with "_").
PREVIEW_PREFIX = "/_preview"

#: The page side: ask for the build state twice a second; reload on a new build, show errors.
RELOAD_JS = """\
// rrsite preview only: reloads the page after a rebuild and shows build errors (file:line).
const built = Number(new URL(import.meta.url).searchParams.get("build"));
const box = document.createElement("div");
box.id = "rr-preview-errors";
box.setAttribute("role", "alert");
Object.assign(box.style, {position: "fixed", left: "0", right: "0", bottom: "0", zIndex: "1000",
  maxHeight: "50vh", overflow: "auto", background: "#fff4f4", color: "#600", padding: "1em",
  borderTop: "3px solid #c00", font: "14px/1.4 monospace", whiteSpace: "pre-wrap"});
function show(errors) {
  if (!errors.length) { box.remove(); return; }
  box.textContent = "rrsite preview: the last save does not build; "
    + "this is the last good build.\\n\\n" + errors.join("\\n");
  if (!box.isConnected) document.body.append(box);
}
async function poll() {
  try {
    const response = await fetch("/_preview/state", {cache: "no-store"});
    const state = await response.json();
    if (state.build !== built) { window.location.reload(); return; }
    show(state.errors);
  } catch {
    // the preview server is restarting or gone: try again
  }
  setTimeout(poll, 500);
}
poll();
"""


class PreviewState:
    """The number of the last good build and the errors of the last attempt, shared by threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.build = 0
        self.errors: list[str] = []

    def snapshot(self) -> dict[str, Any]:
        """``{"build": n, "errors": [...]}`` for /_preview/state."""
        with self.lock:
            return {"build": self.build, "errors": list(self.errors)}


def preview_build(sources: list[Path], dist: Path, templates: Path, pyodide: Path,
                  build_number: int) -> Plan:
    """Build like `rrsite build` (uncompressed) with the preview's changes, then swap it in.

    Every target is sent to the local collector and each page gets the reload script; ``dist`` is
    replaced only when all of it is written. The shipped standard library comes from the build's
    cache (rrsite/site/stdlib.py), so a rebuild after a save never starts Node.
    """
    plan = plan_build(sources, templates, pyodide, cache=default_cache_dir())
    for survey in plan.surveys:
        survey.submit = {"to": "collector", "url": COLLECTOR_URL}
    workspace = dist.with_name(f".{dist.name}.preview-{secrets.token_hex(4)}")
    workspace.mkdir()
    try:
        write_site(plan, workspace)
        # with its integrity: the pages' Integrity-Policy refuses a script without one
        tag = (f'<script type="module" src="{PREVIEW_PREFIX}/reload.js?build={build_number}" '
               f'integrity="{sri(RELOAD_JS.encode("utf-8"))}">')
        for page in workspace.glob("*/index.html"):
            html = page.read_text(encoding="utf-8")
            page.write_text(html.replace("</head>", f"{tag}</script>\n</head>", 1),
                            encoding="utf-8")
        swap_in(workspace, dist)
    except BaseException:
        shutil.rmtree(workspace, ignore_errors=True)
        raise
    return plan


def sources_signature(sources: list[Path], templates: Path) -> tuple[tuple[str, int, int], ...]:
    """What a save changes: path, mtime and size of every survey and template file.

    JSON files beside a survey count too: its own message catalog (``messages:``).
    """
    files: list[Path] = []
    try:
        surveys = survey_files(sources)
    except RRSiteError:
        surveys = []  # a folder emptied or a file removed: the build reports it
    files.extend(surveys)
    files.extend({catalog for survey in surveys for catalog in survey.parent.glob("*.json")})
    files.extend(path for path in templates.rglob("*") if path.is_file())
    signature = []
    for path in files:
        try:
            info = path.stat()
        except OSError:
            continue
        signature.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(sorted(signature))


def error_lines(error: RRSiteError) -> list[str]:
    """One ``file:line: message`` per problem."""
    if isinstance(error, SurveyErrors):
        return [str(problem) for problem in error.errors]
    return [str(error)]


class Watcher(threading.Thread):
    """Rebuilds when the sources change; keeps the last good build when a rebuild fails."""

    def __init__(self, sources: list[Path], dist: Path, templates: Path, pyodide: Path,
                 state: PreviewState) -> None:
        super().__init__(name="rrsite-preview-watch", daemon=True)
        self.sources, self.dist, self.templates, self.pyodide = sources, dist, templates, pyodide
        self.state = state
        self.stopping = threading.Event()
        self.last = sources_signature(sources, templates)

    def rebuild(self) -> bool:
        """Build once; True when it worked. Errors go to the terminal and to the state."""
        number = self.state.build + 1
        try:
            plan = preview_build(self.sources, self.dist, self.templates, self.pyodide, number)
        except RRSiteError as error:
            lines = error_lines(error)
            with self.state.lock:
                self.state.errors = lines
            print("rrsite preview: the last save does not build (serving the last good build):",
                  *lines, sep="\n", file=sys.stderr, flush=True)
            return False
        with self.state.lock:
            self.state.build = number
            self.state.errors = []
        for warning in plan.warnings:
            print(f"{warning.file}:{warning.line}: warning: {warning.message}", file=sys.stderr)
        print(f"rrsite preview: build {number}: {len(plan.surveys)} surveys", flush=True)
        return True

    def run(self) -> None:
        """Poll the sources until stopped; a change that keeps changing is waited out."""
        while not self.stopping.wait(POLL_S):
            signature = sources_signature(self.sources, self.templates)
            if signature == self.last:
                continue
            time.sleep(0.1)  # an editor may write a file in several steps
            settled = sources_signature(self.sources, self.templates)
            if settled != signature:
                continue
            self.last = settled
            self.rebuild()
