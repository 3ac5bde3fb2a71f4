"""`rrsite serve DIST`: serve a built site and collect its submissions in SQLite.

One process, one port: the pages, their assets (pre-compressed, with the headers of DIST/_headers)
and the collector API (`POST /api/submissions`, `GET /api/health`). With `--api-only` only the API
is served, for pages hosted elsewhere; `--allow-origin` lets those pages post to it (CORS).
Connections: rrsite/collect/edge.py (`--request-timeout`, `--max-connections`), documented with
every status the collector answers in docs/reference/collector-http.md.
"""

from __future__ import annotations

import argparse
import re
import socket
import stat
import sys
from pathlib import Path
from typing import Any

from ..collect.edge import (
    BACKLOG,
    MAX_CONNECTIONS,
    REQUEST_TIMEOUT,
    SPARE_DESCRIPTORS,
    EdgeProtocol,
)
from ..errors import UsageError

#: Seconds an idle keep-alive connection stays open after a response (uvicorn's default).
KEEP_ALIVE = 5

#: Uvicorn's logging without the access log: no line ever carries a client address or a URL.
LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"default": {"format": "rrsite serve: %(levelname)s %(message)s"}},
    "handlers": {"default": {"class": "logging.StreamHandler", "formatter": "default",
                             "stream": "ext://sys.stderr"}},
    "loggers": {
        "uvicorn": {"handlers": ["default"], "level": "WARNING", "propagate": False},
        "uvicorn.error": {"level": "WARNING"},
        "uvicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
        "rrsite": {"handlers": ["default"], "level": "WARNING", "propagate": False},
    },
}
ORIGIN_RE = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?|https?://\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite serve`."""
    parser.add_argument("dist", metavar="DIST", type=Path,
                        help="the folder `rrsite build` wrote (its survey.json files are the "
                        "manifests submissions are checked against)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port to listen on (default 8000; 0 picks a free one)")
    parser.add_argument("--db", default="rrsite.db",
                        help="SQLite database file, created on first start (default rrsite.db), "
                        "or a PostgreSQL database shared by several processes: "
                        "postgresql://user:password@host/dbname (schema created on first start)")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="an origin whose pages may post submissions (CORS), e.g. "
                        "https://lab.github.io; repeat for several")
    parser.add_argument("--api-only", action="store_true",
                        help="serve only /api/ (the pages are hosted elsewhere)")
    parser.add_argument("--max-body", type=int, default=64 * 1024, metavar="BYTES",
                        help="largest accepted submission body (default 65536)")
    parser.add_argument("--rate-limit", type=int, metavar="N",
                        help="accept at most N submissions a minute from one client address "
                        "(a burst of N, then one every 60/N s; 429 + Retry-After beyond). Kept "
                        "in memory only, never stored or logged; default: no limit")
    parser.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT, metavar="SECONDS",
                        help="seconds a request (headers and body) has to arrive in full from the "
                        "moment its connection waits for it; then 408 and the connection is "
                        f"closed (default {REQUEST_TIMEOUT:g})")
    parser.add_argument("--max-connections", type=int, default=MAX_CONNECTIONS, metavar="N",
                        help="open client connections at most; a new one beyond drops the one "
                        "that has waited longest on its client (default "
                        f"{MAX_CONNECTIONS}; keep it under the open-file limit, ulimit -n)")
    parser.add_argument("--cap", action="append", default=[], metavar="ID=N",
                        help="accept at most N submissions for survey ID (new respondents get "
                        "429 beyond; resends are still answered); repeat for several surveys")
    parser.add_argument("--blind-key", type=Path, metavar="FILE",  # [blind hook]
                        help="the key file of blind invitations made by `rrsite invite --blind` "
                        "(one key per survey; default: rrsite-blind.pem if it exists; refused "
                        "inside DIST); serves /api/blind-key and /api/blind-sign")
    parser.add_argument("--operator-token", type=Path, metavar="FILE",
                        help="a file holding a secret of at least 16 characters (mode 0600, "
                        "outside DIST): GET /api/health with 'Authorization: Bearer SECRET' also "
                        "counts the submissions, which it tells nobody else")


def _check(args: argparse.Namespace) -> None:
    dist: Path = args.dist
    if not dist.is_dir():
        raise UsageError(f"{dist}: no such folder (build the site first: rrsite build SURVEYS -o "
                         f"{dist})")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {args.port}")
    if args.max_body < 1024:
        raise UsageError(f"--max-body must be at least 1024 bytes, got {args.max_body}")
    if args.db.startswith(("postgresql://", "postgres://")):
        pass  # not a file: nothing to serve by mistake
    elif Path(args.db).resolve().is_relative_to(dist.resolve()):
        raise UsageError(f"--db {args.db} is inside {dist}: the database would be served to "
                         "anyone; keep it outside the site folder")
    if args.rate_limit is not None and args.rate_limit < 1:
        raise UsageError(f"--rate-limit must be at least 1 submission a minute, got "
                         f"{args.rate_limit}")
    if not 0.1 <= args.request_timeout <= 3600:
        raise UsageError(f"--request-timeout must be between 0.1 and 3600 seconds, got "
                         f"{args.request_timeout:g}")
    if args.max_connections < 2:
        raise UsageError(f"--max-connections must be at least 2, got {args.max_connections}")
    limit = open_file_limit()
    if limit is not None and args.max_connections + BACKLOG + SPARE_DESCRIPTORS > limit:
        most = limit - BACKLOG - SPARE_DESCRIPTORS
        advice = (f"lower it to at most {most} or raise the limit" if most >= 2
                  else "raise the limit")
        raise UsageError(
            f"--max-connections {args.max_connections} needs about "
            f"{args.max_connections + BACKLOG + SPARE_DESCRIPTORS} open files and this process may "
            f"open {limit} (ulimit -n): {advice}")
    args.caps = parse_caps(args.cap)
    for origin in args.allow_origin:
        if origin != "*" and not ORIGIN_RE.fullmatch(origin):
            hint = " (no trailing slash or path)" if origin.rstrip("/") != origin else ""
            raise UsageError(f"--allow-origin {origin!r} is not an origin like "
                             f"https://example.org{hint}")


def outside_site(option: str, path: Path, dist: Path) -> None:
    """UsageError if `path` lies inside the site folder (it would be served)."""
    if path.resolve().is_relative_to(dist.resolve()):
        raise UsageError(f"{option} {path} is inside {dist}: it would be served to anyone; keep "
                         "it outside the site folder")


def read_operator_token(path: Path) -> str:
    """The secret in an --operator-token file; UsageError if unreadable, short or not private."""
    try:
        info = path.stat()
        secret = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--operator-token {path}: cannot read it ({error})") from error
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UsageError(f"--operator-token {path}: group or others may read it (mode "
                         f"{stat.S_IMODE(info.st_mode):o}); run: chmod 600 {path}")
    if len(secret) < 16 or any(ch.isspace() or not ch.isprintable() for ch in secret):
        raise UsageError(f"--operator-token {path}: the secret must be at least 16 printable "
                         "characters without spaces, e.g. from: python -c \"import secrets; "
                         "print(secrets.token_urlsafe(24))\"")
    return secret


def parse_caps(items: list[str]) -> dict[str, int]:
    """`--cap ID=N` options as {survey id: N}; UsageError with the bad option."""
    caps: dict[str, int] = {}
    for item in items:
        survey, sep, number = item.rpartition("=")
        if not sep or not survey or not number.isdigit() or int(number) < 1:
            raise UsageError(f"--cap {item!r}: write SURVEY_ID=N with N a positive whole "
                             "number, e.g. --cap honor-code=500")
        if survey in caps:
            raise UsageError(f"--cap: survey {survey!r} is given twice")
        caps[survey] = int(number)
    return caps


def open_file_limit() -> int | None:
    """The process's soft limit on open files, or None if unlimited or unknown."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket; UsageError if the address cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets
    # that say they are TCP; without it every response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as error:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error
    return sock


def run(args: argparse.Namespace) -> int:
    """Open the store, load the manifests, listen, serve until interrupted."""
    _check(args)
    import uvicorn

    from ..collect.invitations.blindkey import DEFAULT_PATH, read_ring
    from ..collect.server import create_app
    from ..collect.storebase import shown as shown_db
    from ..collect.stores import open_store

    blind_path = args.blind_key or (Path(DEFAULT_PATH) if Path(DEFAULT_PATH).exists() else None)
    private = []
    if blind_path is not None:  # [blind hook]
        outside_site("--blind-key", blind_path, args.dist)
        private.append(blind_path)
    operator_token = None
    if args.operator_token is not None:
        outside_site("--operator-token", args.operator_token, args.dist)
        operator_token = read_operator_token(args.operator_token)
        private.append(args.operator_token)
    if not args.db.startswith(("postgresql://", "postgres://")):
        private += [Path(args.db + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
    ring = read_ring(blind_path) if blind_path is not None else None
    store = open_store(args.db, caps=args.caps)
    try:
        app = create_app(args.dist, store, allow_origins=args.allow_origin,
                         api_only=args.api_only, max_body=args.max_body,
                         rate_limit=args.rate_limit, blind_key=ring,
                         operator_token=operator_token, private=private)
    except BaseException:
        store.close()
        raise
    sock = listen(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    collector = app.state.collector
    print(f"rrsite serve: listening on http://{shown}:{port}/ (database {shown_db(args.db)})",
          flush=True)
    if not args.api_only:
        for survey, _ in collector.surveys():
            print(f"rrsite serve:   http://{shown}:{port}/{survey}/", flush=True)
    for advice in store.advice():
        print(f"rrsite serve: warning: {advice}", file=sys.stderr, flush=True)
    keys = collector.blind
    if keys is not None:
        print(f"rrsite serve: blind invitations signed with the keys of {blind_path} "
              f"({len(keys.surveys)} blind survey{'s' if len(keys.surveys) != 1 else ''})",
              flush=True)
        for survey in keys.missing():
            print(f"rrsite serve: warning: {blind_path} does not hold the key of blind survey "
                  f"{survey!r}: its trades and tokens are answered 503", file=sys.stderr,
                  flush=True)
    if args.allow_origin:
        print(f"rrsite serve: accepting submissions from {', '.join(args.allow_origin)}",
              flush=True)
    protocol = EdgeProtocol.configure(request_timeout=args.request_timeout,
                                      max_connections=args.max_connections)
    config = uvicorn.Config(app, log_config=LOG_CONFIG, access_log=False, proxy_headers=False,
                            server_header=False, lifespan="on", timeout_graceful_shutdown=10,
                            http=protocol, backlog=BACKLOG, timeout_keep_alive=KEEP_ALIVE)
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        store.close()
    if not server.started:
        print("rrsite serve: the server did not start", file=sys.stderr)
        return 1
    return 0
