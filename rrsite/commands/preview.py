"""`rrsite preview SURVEYS`: build, serve with a throwaway collector, rebuild and reload on save.

It builds into a temporary folder, serves it with the collector on a throwaway database, rebuilds
when a survey file or template is saved and reloads the open page (like `mkdocs serve`).

Only the preview's pages carry the reload script (``/_preview/reload.js``, served by this command,
never written by `rrsite build`). A build with errors keeps the last good site: the errors are
printed in the terminal and shown on the open page, with their ``file:line``. Every survey's
submissions go to the local collector, whatever its ``submit.to`` says, so every survey can be
tried to the end.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from pathlib import Path

from ..site.builder import default_pyodide, default_templates
from ..site.preview import PREVIEW_PREFIX, RELOAD_JS, PreviewState, Watcher, preview_build
from .build import add_site_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite preview`."""
    parser.add_argument("surveys", nargs="+", type=Path, metavar="SURVEYS",
                        help="a survey .md file, or a folder of them")
    parser.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port (default 8000; 0 picks a free one)")
    add_site_options(parser, templates="page templates, watched too")


def run(args: argparse.Namespace) -> int:
    """Build, serve, watch; everything temporary is removed on exit."""
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from ..collect.server import create_app
    from ..collect.store import Store
    from .serve import LOG_CONFIG, listen

    templates = args.templates or default_templates()
    pyodide = args.pyodide or default_pyodide()
    sources = list(args.surveys)
    # Uvicorn re-raises SIGTERM once it has stopped; exit through Python so that the temporary
    # folder (the site and the throwaway database) is removed.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    state = PreviewState()
    with tempfile.TemporaryDirectory(prefix="rrsite-preview-") as folder:
        dist = Path(folder) / "dist"
        watcher = Watcher(sources, dist, templates, pyodide, state)
        plan = preview_build(sources, dist, templates, pyodide, 1)  # errors: exit 2, as build
        state.build = 1
        store = Store(Path(folder) / "preview.db")
        app = create_app(dist, store)

        async def reload_js(request: Request) -> Response:
            return Response(RELOAD_JS, media_type="text/javascript",
                            headers={"cache-control": "no-store"})

        async def preview_state(request: Request) -> Response:
            return JSONResponse(state.snapshot(), headers={"cache-control": "no-store"})

        app.router.routes[:0] = [Route(f"{PREVIEW_PREFIX}/reload.js", reload_js),
                                 Route(f"{PREVIEW_PREFIX}/state", preview_state)]
        sock = listen(args.host, args.port)
        host, port = sock.getsockname()[:2]
        base = f"http://{host}:{port}/"
        print(f"rrsite preview: listening on {base} (throwaway database; rebuilds on save; "
              "Ctrl-C stops)", flush=True)
        for survey in plan.surveys:
            print(f"rrsite preview:   {base}{survey.id}/", flush=True)
        watcher.start()
        config = uvicorn.Config(app, log_config=LOG_CONFIG, access_log=False, lifespan="on",
                                server_header=False, timeout_graceful_shutdown=2)
        server = uvicorn.Server(config)
        try:
            server.run(sockets=[sock])
        finally:
            watcher.stopping.set()
            watcher.join(timeout=5)
            sock.close()
            store.close()
    return 0
