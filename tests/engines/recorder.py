"""A recording reverse proxy in front of `rrsite serve`: sees every request of every engine.

Engines differ in what their drivers can observe (requests of a module worker, console errors,
CSP violations), so the cross-engine tests watch from the server side instead:

- every request (method, path, headers, body) is recorded before it is forwarded;
- the Content-Security-Policy header of every response gains ``report-uri /__csp``, so any
  violation in the page or its worker is POSTed back here and recorded;
- ``/__endpoint`` plays a survey's HTTPS endpoint (CORS, 201), reached as ``localhost`` (another
  origin than the pages' 127.0.0.1); a POST to a page's own path plays Netlify Forms (200);
- ``/__panel`` plays an online panel's completion URL (200), also as ``localhost``;
- with ``hold_submissions`` set, the collector's answer to a submission is held back that many
  seconds before it is passed on (``answered`` is when it was), so that a test can tell what the
  page did before and after the acknowledgement.
"""

from __future__ import annotations

import http.client
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate", "content-length"}


@dataclass
class Recorded:
    """One request as it reached the server."""

    method: str
    path: str
    host: str
    headers: dict[str, str]
    body: str
    #: when it arrived, and (a submission) when its answer was passed on (time.monotonic)
    at: float = 0.0
    answered: float = 0.0

    def text(self) -> str:
        """Path, headers and body, for looking for what must not be there."""
        return "\n".join([self.path, repr(self.headers), self.body])


@dataclass
class Recorder:
    """What the proxy saw."""

    requests: list[Recorded] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: the port of `rrsite serve` (set once it runs; the proxy's port is needed for the build)
    upstream_port: int = 0
    #: a file swapped on the host under the same name: (a pattern of paths, how its bytes change)
    swap: tuple[re.Pattern[str], Callable[[bytes], bytes]] | None = None
    #: seconds the collector's answer to a submission is held back (0: none)
    hold_submissions: float = 0.0

    def since(self, index: int) -> list[Recorded]:
        """The requests recorded after the first ``index``."""
        with self.lock:
            return list(self.requests[index:])

    def mark(self) -> int:
        """The number of requests so far."""
        with self.lock:
            return len(self.requests)


def start_proxy(recorder: Recorder) -> ThreadingHTTPServer:
    """Serve on a free port of 127.0.0.1, forwarding to 127.0.0.1:``recorder.upstream_port``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

        def _body(self) -> bytes:
            length = int(self.headers.get("content-length") or 0)
            return self.rfile.read(length) if length else b""

        def _reply(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _handle(self) -> None:
            body = self._body()
            text = body.decode("utf-8", "replace")
            if self.path.startswith("/__csp"):
                with recorder.lock:
                    recorder.violations.append(text)
                self._reply(204, {})
                return
            record = Recorded(self.command, self.path, self.headers.get("host", ""),
                              dict(self.headers.items()), text, at=time.monotonic())
            with recorder.lock:
                recorder.requests.append(record)
            if self.path.startswith("/__panel"):
                self._reply(200, {"Content-Type": "text/html"},  # with no favicon to ask for
                            b'<link rel="icon" href="data:,"><p>the panel</p>')
                return
            cors = {"Access-Control-Allow-Origin": "*",
                    "Access-Control-Allow-Headers": "content-type",
                    "Access-Control-Allow-Methods": "POST"}
            if self.path.startswith("/__endpoint"):
                if self.command == "OPTIONS":
                    self._reply(204, cors)
                else:
                    self._reply(201, {**cors, "Content-Type": "application/json"},
                                b'{"status": "stored"}')
                return
            if self.command == "POST" and not self.path.startswith("/api/"):
                self._reply(200, {"Content-Type": "text/html"}, b"<p>ok</p>")  # Netlify Forms
                return
            connection = http.client.HTTPConnection("127.0.0.1", recorder.upstream_port,
                                                    timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            swap = recorder.swap
            tamper = swap is not None and swap[0].search(self.path.split("?")[0]) is not None
            if tamper:
                headers = {k: v for k, v in headers.items() if k.lower() != "accept-encoding"}
            connection.request(self.command, self.path, body=body or None, headers=headers)
            response = connection.getresponse()
            data = response.read()
            if tamper and swap is not None and response.status == 200:
                data = swap[1](data)
            out: dict[str, str] = {}
            for key, value in response.getheaders():
                if key.lower() in HOP_BY_HOP:
                    continue
                if key.lower() == "content-security-policy":
                    value = f"{value}; report-uri /__csp"
                if tamper and key.lower() in ("cache-control", "etag"):
                    continue  # a swapped copy is not kept: the next page gets the real one
                out[key] = value
            if tamper:
                out["Cache-Control"] = "no-store"
            connection.close()
            if self.command == "POST" and self.path.startswith("/api/submissions"):
                time.sleep(recorder.hold_submissions)
                record.answered = time.monotonic()
            self._reply(response.status, out, data)

        do_GET = do_POST = do_HEAD = do_OPTIONS = do_PUT = do_DELETE = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
