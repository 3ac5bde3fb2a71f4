"""The collector's HTTP edge over raw sockets against a real `rrsite serve`: a request that does
not arrive in time gets 408, idle connections are closed, open connections are bounded so a flood
of slow connections cannot keep a real submission out, and framing that is ambiguous is refused."""

from __future__ import annotations

import json
import os
import resource
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from rrsite.collect.edge import BACKLOG, MAX_CONNECTIONS

TIMEOUT = 2.0  # --request-timeout in these tests
JSON = {"content-type": "application/json"}


def address(server) -> tuple[str, int]:
    parts = urlsplit(server.url)
    return parts.hostname, parts.port


def connect(server) -> socket.socket:
    sock = socket.create_connection(address(server), timeout=TIMEOUT + 8)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (socket.timeout if it never does)."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def submission_bytes(kit) -> bytes:
    return json.dumps(kit.body()).encode()


def head(path: str = "/api/submissions", **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: collector"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@pytest.fixture
def server(tmp_path, kit):
    dist = kit.write_dist(tmp_path / "dist")
    with kit.Server(dist, tmp_path / "c.db", "--request-timeout", str(TIMEOUT)) as running:
        yield running


def stored(server) -> int:
    return httpx.get(server.url + "/api/health", timeout=10,
                     headers=server.operator_headers).json()["submissions"]


@pytest.mark.parametrize("sent", ["headers", "body", "trickle"])
def test_slow_request_gets_408(server, kit, sent):
    """Unfinished headers, a body shorter than its Content-Length, and headers sent a byte at a
    time (the deadline is for the whole request, not reset by each byte): 408 after the timeout,
    then the connection is closed; nothing stored."""
    body = submission_bytes(kit)
    sock = connect(server)
    with sock:
        start = time.monotonic()
        if sent == "headers":
            sock.sendall(b"POST /api/submissions HTTP/1.1\r\nHost: collector\r\n")
        elif sent == "body":
            sock.sendall(head(content_type="application/json", content_length=str(len(body)))
                         + body[:-10])
        else:
            for byte in b"POST /api/submissions HTTP/1.1\r\nHost: colle":
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    break
                time.sleep(0.1)
        answer = read_until_closed(sock)
        elapsed = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    headers, _, text = answer.partition(b"\r\n\r\n")
    assert b"connection: close" in headers.lower()
    assert json.loads(text) == {"error": f"the request did not arrive within {TIMEOUT:g} s",
                                "field": None}
    assert TIMEOUT - 0.2 <= elapsed <= TIMEOUT + 3, elapsed
    assert stored(server) == 0


def test_idle_connection_closed_without_answer(server):
    sock = connect(server)
    with sock:
        start = time.monotonic()
        assert read_until_closed(sock) == b""
        elapsed = time.monotonic() - start
    assert TIMEOUT - 0.2 <= elapsed <= TIMEOUT + 3, elapsed


def test_deadline_rearmed_after_each_response(server, kit):
    """A keep-alive connection: the first request is answered; the second, unfinished, gets 408."""
    body = submission_bytes(kit)
    sock = connect(server)
    with sock:
        time.sleep(TIMEOUT * 0.6)  # the first request's time counts from the connection's start
        sock.sendall(head(content_type="application/json", content_length=str(len(body))) + body)
        first = b""
        while not first.endswith(b'{"status":"stored"}'):
            chunk = sock.recv(65536)
            assert chunk, first
            first += chunk
        assert first.startswith(b"HTTP/1.1 201 "), first
        start = time.monotonic()
        sock.sendall(b"GET /api/health HTTP/1.1\r\n")
        answer = read_until_closed(sock)
        elapsed = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert TIMEOUT - 0.2 <= elapsed <= TIMEOUT + 3, elapsed
    assert stored(server) == 1


def socket_count(pid: int) -> int:
    count = 0
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                count += 1
        except FileNotFoundError:
            pass
    return count


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_flood_of_slow_connections(store, tmp_path, kit, request):
    """More slow connections than the default --max-connections (1,100, as many as the default
    1,024-descriptor limit would not even hold): a real submission still gets 201 at once (long
    before any deadline passes), and the server holds no more sockets than its bound."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    flood = 1100
    db = request.getfixturevalue("pg_db") if store == "postgresql" else tmp_path / "c.db"
    dist = kit.write_dist(tmp_path / "dist")
    slow: list[socket.socket] = []
    server = kit.Server(dist, db, "--request-timeout", "60")
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
    try:  # the server inherits the common limit of 1,024 descriptors; this process needs more
        server.start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, flood + 400)), hard))
    try:
        for i in range(flood):
            sock = socket.create_connection(address(server), timeout=30)
            slow.append(sock)
            sock.sendall(b"POST /api/submissions HTTP/1.1\r\n" if i % 2 else b"")
        assert server.process is not None
        deadline = time.monotonic() + 20  # a loaded machine may take a while to accept all
        while True:  # + the listening socket, the database's
            held = socket_count(server.process.pid)
            if held <= MAX_CONNECTIONS + 12 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert held <= MAX_CONNECTIONS + 12, held
        start = time.monotonic()
        response = httpx.post(server.url + "/api/submissions", content=submission_bytes(kit),
                              headers=JSON, timeout=20)
        elapsed = time.monotonic() - start
        assert response.status_code == 201, response.text
        assert elapsed < 10, elapsed  # eviction, not the 60 s deadline, made room
        dropped = 0
        for sock in slow:
            sock.settimeout(0.001)
            try:
                answer = sock.recv(1024)  # nothing (closed) or 408 if headers began
                assert answer == b"" or answer.startswith(b"HTTP/1.1 408 "), answer
                dropped += 1
            except (TimeoutError, BlockingIOError):
                pass
            except ConnectionResetError:
                dropped += 1
        assert dropped >= flood - MAX_CONNECTIONS - BACKLOG, dropped
        assert stored(server) == 1
    finally:
        for sock in slow:
            sock.close()
        server.stop()


def test_flood_below_the_bound_by_option(tmp_path, kit):
    """`--max-connections 20`: 60 slow connections, the real submission still gets 201."""
    dist = kit.write_dist(tmp_path / "dist")
    slow: list[socket.socket] = []
    with kit.Server(dist, tmp_path / "c.db", "--max-connections", "20",
                    "--request-timeout", "60") as server:
        try:
            for _ in range(60):
                sock = socket.create_connection(address(server), timeout=30)
                sock.sendall(head(content_type="application/json", content_length="900") + b"{")
                slow.append(sock)
                time.sleep(0.03)  # each read by the server before the next connects
            assert server.process is not None
            deadline = time.monotonic() + 20
            while socket_count(server.process.pid) > 20 + 4 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert socket_count(server.process.pid) <= 20 + 4
            response = httpx.post(server.url + "/api/submissions", content=submission_bytes(kit),
                                  headers=JSON, timeout=20)
            assert response.status_code == 201, response.text
            answers = []
            for sock in slow[:40]:  # the oldest were dropped: 408, as their deadline would
                sock.settimeout(5)
                answers.append(read_until_closed(sock)[:13])
            assert answers.count(b"HTTP/1.1 408 ") == 40, answers
            for sock in slow[41:]:  # the newest wait for their deadline (one made room above)
                sock.settimeout(0.01)
                with pytest.raises(TimeoutError):
                    sock.recv(1)
        finally:
            for sock in slow:
                sock.close()


def test_transfer_encoding_with_content_length_refused(server, kit):
    """RFC 9112 section 6.1: both framings at once is refused with 400 and the connection
    closed; nothing stored. (httpx would never send it: a raw socket does.)"""
    body = submission_bytes(kit)
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    for content_length in (str(len(body)), str(len(chunked)), "0"):
        sock = connect(server)
        with sock:
            sock.sendall(head(content_type="application/json", transfer_encoding="chunked",
                              content_length=content_length) + chunked)
            answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 400 "), answer
        headers, _, text = answer.partition(b"\r\n\r\n")
        assert b"connection: close" in headers.lower()
        assert "Transfer-Encoding" in json.loads(text)["error"]
    assert stored(server) == 0
    sock = connect(server)  # the same body, chunked alone, is fine
    with sock:
        sock.sendall(head(content_type="application/json", transfer_encoding="chunked",
                          connection="close") + chunked)
        assert read_until_closed(sock).startswith(b"HTTP/1.1 201 ")
    assert stored(server) == 1


def test_client_not_reading_its_response_is_dropped_under_pressure(tmp_path, kit):
    """A download the client does not read holds a connection with a response in progress; when
    the bound is reached it is the one dropped (the socket aborted), not the real submission."""
    dist = kit.write_dist(tmp_path / "dist")
    size = 16 * 1024 * 1024
    (dist / "_rr" / "big.0123abcd.bin").write_bytes(os.urandom(size))
    with kit.Server(dist, tmp_path / "c.db", "--max-connections", "2",
                    "--request-timeout", "60") as server:
        stuck = []
        for _ in range(2):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(30)
            sock.connect(address(server))
            sock.sendall(b"GET /_rr/big.0123abcd.bin HTTP/1.1\r\nHost: collector\r\n\r\n")
            stuck.append(sock)
            time.sleep(1.0)  # the server fills the socket's buffers, then its writes pause
        response = httpx.post(server.url + "/api/submissions", content=submission_bytes(kit),
                              headers=JSON, timeout=20)
        assert response.status_code == 201, response.text
        received = []
        for sock in stuck:
            total = 0
            with sock:
                try:
                    while total < size + 10_000 and (chunk := sock.recv(1 << 20)):
                        total += len(chunk)
                except ConnectionResetError:
                    pass
            received.append(total)
        assert received[0] < size, received  # the oldest: aborted mid-response
        assert received[1] > size, received  # the other one was left alone and completed
