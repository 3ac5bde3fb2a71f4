"""The collector's HTTP edge: a read deadline per request and a bound on open connections.

Uvicorn (h11 protocol) has no deadline for reading a request: its `timeout_keep_alive` runs only
between requests, after a response was sent, so a client that connects and sends nothing, sends
half its headers, or a body shorter than its Content-Length holds its connection (a file descriptor
and, while a body is awaited, an application task) for as long as it likes. Its
`limit_concurrency` counts such connections too and then answers 503 to every new request: either
way a flood of slow connections starves real submissions.

`EdgeProtocol` is uvicorn's h11 protocol (`uvicorn.protocols.http.h11_impl.H11Protocol`) with two
additions, configured by `configure` from `rrsite serve --request-timeout` and
`--max-connections`:

- A read deadline. From the moment a connection waits for a request (it was opened, or its
  previous response was sent) the whole request, headers and body, must arrive within
  `request_timeout` seconds. When the deadline passes and nothing of a request has arrived, the
  connection is closed without an answer (as an idle keep-alive connection is); when part of one
  has, the client gets 408 with a JSON body and the connection is closed. A request that arrived
  in full is not timed: the application (a database commit) takes what it takes.
- A bound on open connections. When a new connection makes more than `max_connections`, the
  connection that has waited longest on its client (a request not yet arrived in full, or a
  response the client is not reading) is dropped at once, as its deadline would drop it, so slow
  clients cannot keep a fast one out; if no connection is waiting on its client (all are being
  answered), the new connection is closed at once. The listening socket's backlog (`BACKLOG`) caps
  how many connections are accepted in one turn of the event loop, so the process holds at most
  about `max_connections + BACKLOG` client sockets at any moment and never keeps more than
  `max_connections` past that moment.

`RateLimit` keeps floods out without invitation codes (`rrsite serve --rate-limit`), and one code's
blind trades in check (invitations/blindapi.py). It is a token bucket per key (a client address, a
code's hash): `per_minute` requests may arrive at once, then one more every ``60 / per_minute``
seconds. Keys are never stored, logged or kept in the clear even in memory: each is replaced by a
keyed hash (HMAC-SHA-256 under a random key drawn when the process starts and never written
anywhere), so the table in memory cannot be matched against a list of addresses or codes, and
everything is gone when the process stops. Buckets that have refilled are dropped, so the table
holds only keys seen in the last minute or so. Behind a reverse proxy every request comes from the
proxy's address: limit there instead (nginx ``limit_req``), see README "Keeping fake submissions
out".
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import math
import secrets
import time
from collections.abc import Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Default seconds for a whole request (headers and body) to arrive.
REQUEST_TIMEOUT = 10.0
#: Default bound on open client connections (well under the usual 1,024 descriptors).
MAX_CONNECTIONS = 500
#: Backlog of the listening socket, also the most connections accepted in one loop turn.
BACKLOG = 256
#: Descriptors kept free beside the client sockets (database, files, the listening socket).
SPARE_DESCRIPTORS = 64


def timeout_response(seconds: float) -> bytes:
    """The 408 written when a request did not arrive in time (the connection is then closed)."""
    shown = f"{seconds:g}"
    body = json.dumps({"error": f"the request did not arrive within {shown} s", "field": None},
                      separators=(",", ":")).encode()
    head = ("HTTP/1.1 408 Request Timeout\r\n"
            "content-type: application/json\r\n"
            f"content-length: {len(body)}\r\n"
            "cache-control: no-store\r\n"
            "connection: close\r\n\r\n")
    return head.encode("ascii") + body


class EdgeProtocol(H11Protocol):
    """Uvicorn's h11 protocol with a read deadline per request and a bound on connections."""

    request_timeout: float = REQUEST_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    _timeout_response: bytes = timeout_response(REQUEST_TIMEOUT)

    @classmethod
    def configure(cls, *, request_timeout: float, max_connections: int) -> type[EdgeProtocol]:
        """A subclass with these limits (the class uvicorn is given as its `http` protocol)."""
        return type("EdgeProtocol", (cls,), {
            "request_timeout": request_timeout, "max_connections": max_connections,
            "_timeout_response": timeout_response(request_timeout)})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_since: float | None = None  # waiting for a request to arrive in full
        self._stalled_since: float | None = None  # writing paused: the client does not read

    # -- the hooks ----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Arm the deadline; make room if this connection is one too many."""
        super().connection_made(transport)
        self._watch()
        if len(self.connections) > self.max_connections:
            self._make_room()

    def data_received(self, data: bytes) -> None:
        """Parse as uvicorn does, then stop the deadline if the request is now complete."""
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        """A response was sent: the next request's deadline starts now."""
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the deadline, then as uvicorn does."""
        self._stop_deadline()
        self._stalled_since = None
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        """The client is not reading fast enough: note since when."""
        super().pause_writing()
        self._stalled_since = self.loop.time()

    def resume_writing(self) -> None:
        """The client reads again."""
        super().resume_writing()
        self._stalled_since = None

    # -- the deadline -------------------------------------------------------------------------

    def _watch(self) -> None:
        """Arm the deadline when the connection starts waiting for a request; stop it once done.

        h11 keeps the client's state IDLE or SEND_BODY until its request has arrived in full.
        """
        waiting = (not self.transport.is_closing()
                   and self.conn.their_state in (h11.IDLE, h11.SEND_BODY))
        if waiting and self._deadline is None:
            self._waiting_since = self.loop.time()
            self._deadline = self.loop.call_later(self.request_timeout, self._expired)
        elif not waiting:
            self._stop_deadline()

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._waiting_since = None

    def _expired(self) -> None:
        self._deadline = None
        self._drop()

    def waited(self) -> float | None:
        """Since when (loop time) the connection waits on its client; None if it does not."""
        times = [t for t in (self._waiting_since, self._stalled_since) if t is not None]
        return min(times) if times else None

    def _drop(self) -> None:
        """Close a connection that waits on its client.

        408 if part of a request arrived and nothing was answered yet; silently if nothing
        arrived; at once (the socket aborted) if a response the client does not read is stuck.
        """
        self._stop_deadline()
        self._stalled_since = None
        transport = self.transport
        if transport.is_closing():
            return
        idle = self.conn.their_state is h11.IDLE
        cycle = None if idle else self.cycle  # when IDLE, `cycle` is a finished request's
        started = not idle or bool(self.conn.trailing_data[0])
        answering = cycle is not None and cycle.response_started and not cycle.response_complete
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # the application's receive() sees a disconnect, its
            cycle.message_event.set()  # answer (if any) goes nowhere
        if answering:
            transport.abort()  # the client is not reading its response: free the socket now
            return
        if started and not (cycle is not None and cycle.response_started):
            transport.write(self._timeout_response)
        if transport.get_write_buffer_size():
            transport.abort()
        else:
            transport.close()

    def _make_room(self) -> None:
        """Over `max_connections`: drop the connection that has waited longest on its client.

        If none waits on its client, this new connection is closed instead.
        """
        oldest: EdgeProtocol | None = None
        oldest_time = 0.0
        for connection in self.connections:
            if connection is self or not isinstance(connection, EdgeProtocol):
                continue
            since = connection.waited()
            if since is not None and (oldest is None or since < oldest_time):
                oldest, oldest_time = connection, since
        if oldest is not None:
            oldest._drop()
        else:
            self._stop_deadline()
            self.transport.close()


# ---- rate limits ------------------------------------------------------------------------------

#: Above this many addresses in the table, refilled buckets are swept out.
SWEEP_AT = 10_000


class RateLimit:
    """Token buckets per (hashed) client address; `check(address)` -> seconds to wait or 0."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError(f"per_minute must be at least 1, got {per_minute}")
        self.capacity = float(per_minute)
        self.interval = 60.0 / per_minute  # seconds per token
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._buckets: dict[bytes, tuple[float, float]] = {}  # digest -> (tokens, time)

    def _digest(self, address: str) -> bytes:
        return hmac.new(self._key, address.encode("utf-8", "replace"), hashlib.sha256).digest()[:16]

    def check(self, address: str) -> int:
        """Take a token for this address: 0 if allowed, else whole seconds until one is free."""
        now = self._clock()
        if len(self._buckets) >= SWEEP_AT:
            self._sweep(now)
        digest = self._digest(address)
        tokens, then = self._buckets.get(digest, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) / self.interval)
        if tokens >= 1.0:
            self._buckets[digest] = (tokens - 1.0, now)
            return 0
        self._buckets[digest] = (tokens, now)
        return max(1, math.ceil((1.0 - tokens) * self.interval))

    def _sweep(self, now: float) -> None:
        full = [digest for digest, (tokens, then) in self._buckets.items()
                if tokens + (now - then) / self.interval >= self.capacity]
        for digest in full:
            del self._buckets[digest]

    def __len__(self) -> int:
        return len(self._buckets)
