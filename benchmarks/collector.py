"""The collector under load: durable submissions per second and latency, beside a trivial request.

Run: python benchmarks/collector.py [--seconds 5] [--connections 32]

Starts `rrsite serve` (a subprocess, so it has a core of its own) on a free loopback port with a
fresh database, and drives it from this process with a small keep-alive HTTP/1.1 client on
asyncio (cheap enough per request that it is not the bottleneck). In the same run it measures:

1. the baseline: the same server answering a trivial request (`GET /api/nope`, a 404 JSON answer
   through the same Starlette app and middleware, no database);
2. submissions: `POST /api/submissions` with valid, distinct bodies; each answer is sent only after
   the SQLite COMMIT (WAL, synchronous=FULL) holding it returned. Closed loop (as fast as the
   connections go: the sustained rate) and open loop (requests due at a fixed offered rate, 300/s
   and 1000/s, latency counted from when each was due);
3. the store alone, without HTTP, three ways of writing from many threads: the single writer with
   group commit that the collector uses, the same writer committing every submission on its own,
   and a connection per request with busy_timeout.

5. invitation-only submissions (each request carries an unused code of --invitations issued):
   spending a code empties SQLite's write-ahead log after the commit, and rewrites PostgreSQL's
   table of unused codes under a lock, so that no trace orders the spent codes (docs: the threat
   model); the same closed loop on both stores.

4. PostgreSQL (unless --no-postgres): the same closed-loop submissions with one `rrsite serve
   --db postgresql://...` process, and with two processes on the same database, each driven by
   half the connections at the same time. The database is a throwaway PostgreSQL server
   (tests/collect/pgserver.py: initdb in a temporary folder, Unix socket), or --postgres URL.

Prints throughput, p50/p99 latency and the ratio submissions/trivial; checks afterwards that the
database holds exactly the acknowledged submissions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rrsite.collect.store import Store, canonical_json, minute_now  # noqa: E402

VERSION = "0123456789abcdef"
MANIFEST = {
    "format": 1, "id": "bench", "title": "Benchmark", "language": "en", "version": VERSION,
    "core_hash": "sha256:" + "0" * 64, "submit": {"to": "collector", "url": "/api/submissions"},
    "questions": [
        {"id": "violated", "text": "Violated?", "type": "yes-no", "sensitive": True,
         "required": True, "values": ["no", "yes"]},
        {"id": "year", "text": "Year?", "type": "choice", "required": True,
         "values": ["First", "Second", "Third or later"]},
        {"id": "tools", "text": "Tools?", "type": "multi-choice", "required": False,
         "values": ["pen", "laptop", "phone"]},
        {"id": "age", "text": "Age?", "type": "number", "required": False, "min": 16, "max": 99,
         "integer": True},
        {"id": "comment", "text": "Else?", "type": "text", "required": False},
    ],
}


def submission() -> dict:
    return {"survey": "bench", "version": VERSION, "respondent": secrets.token_urlsafe(16),
            "answers": {"violated": "yes", "year": "Second", "tools": ["pen", "phone"],
                        "age": 21, "comment": "nothing to add"}}


def post_request(body_of: dict | None = None) -> bytes:
    body = json.dumps(body_of or submission()).encode()
    return (b"POST /api/submissions HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body


def invited_requests(codes: list[str]) -> Callable[[], bytes]:
    """Requests for the invitation-only survey, each with the next unused code."""
    pending = iter(codes)

    def make() -> bytes:
        body = submission()
        body["survey"] = "invited"
        code = next(pending, None)
        if code is None:
            raise SystemExit("every invitation code was used: raise --invitations")
        body["invitation"] = code
        return post_request(body)

    return make


def issue(db: str, count: int) -> list[str]:
    """`count` invitation codes for the survey `invited`, recorded in the database."""
    from rrsite.collect.stores import open_store

    codes = [secrets.token_urlsafe(12) for _ in range(count)]
    store = open_store(db)
    store.add_invitations("invited", codes)
    store.close()
    return codes


TRIVIAL = b"GET /api/nope HTTP/1.1\r\nHost: bench\r\n\r\n"


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   request: bytes) -> int:
    """Send one request on a keep-alive connection, read its whole answer, return its status."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    assert match, head
    await reader.readexactly(int(match.group(1)))
    return int(head[9:12])


async def drive(port: int, make: Callable[[], bytes], connections: int, seconds: float
                ) -> tuple[list[float], dict[int, int]]:
    """Closed loop: each connection sends a request, waits for the answer, sends the next."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    stop_at = time.perf_counter() + seconds

    async def connection() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.perf_counter() < stop_at:
                request = make()
                started = time.perf_counter()
                status = await exchange(reader, writer, request)
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(connections)))
    return latencies, statuses


async def paced(port: int, make: Callable[[], bytes], rate: float, seconds: float,
                connections: int = 64) -> tuple[list[float], dict[int, int]]:
    """Open loop: request i is due at start + i/rate; latency counts from when it was due, so a
    slow answer that delays the next request is charged to it (no coordinated omission)."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    total = int(rate * seconds)
    start = time.perf_counter() + 0.05

    async def connection(first: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for index in range(first, total, connections):
                due = start + index / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                status = await exchange(reader, writer, make())
                latencies.append(time.perf_counter() - due)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(connection(k) for k in range(connections)))
    return latencies, statuses


def summary(name: str, latencies: list[float], seconds: float) -> dict:
    ordered = sorted(latencies)
    return {"name": name, "requests": len(ordered), "per_second": len(ordered) / seconds,
            "p50_ms": 1000 * ordered[len(ordered) // 2],
            "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
            "max_ms": 1000 * ordered[-1]}


def show(row: dict) -> None:
    print(f"  {row['name']:<44} {row['per_second']:>9,.0f}/s   p50 {row['p50_ms']:7.2f} ms   "
          f"p99 {row['p99_ms']:7.2f} ms   max {row['max_ms']:7.1f} ms   "
          f"({row['requests']:,})")


def start_server(work: Path, db: str | None = None) -> tuple[subprocess.Popen[str], int]:
    dist = work / "dist"
    if not dist.is_dir():
        for survey in ("bench", "invited"):
            (dist / survey).mkdir(parents=True)
            (dist / survey / "survey.json").write_text(json.dumps({**MANIFEST, "id": survey}))
            (dist / survey / "index.html").write_text("<!doctype html><title>bench</title>\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "rrsite", "serve", str(dist), "--port", "0",
         "--db", db or str(work / "bench.db")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        process.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return process, int(match.group(1))


def store_alone(work: Path, threads: int, seconds: float) -> list[dict]:
    """Writing from many threads without HTTP: group commit, commit each, connection each."""
    rows = []
    answers = submission()["answers"]

    def run(name: str, write: Callable[[], None]) -> None:
        latencies: list[float] = []
        lock = threading.Lock()
        stop_at = time.perf_counter() + seconds

        def worker() -> None:
            mine = []
            while time.perf_counter() < stop_at:
                started = time.perf_counter()
                write()
                mine.append(time.perf_counter() - started)
            with lock:
                latencies.extend(mine)

        pool = [threading.Thread(target=worker) for _ in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        rows.append(summary(name, latencies, seconds))

    for name, batch in (("single writer, group commit (used)", 512),
                        ("single writer, one commit per submission", 1)):
        store = Store(work / f"store-{batch}.db", max_batch=batch)
        store.start()
        run(name, lambda s=store: s.submit_sync("bench", VERSION, secrets.token_urlsafe(16),
                                                 answers))
        store.close()

    path = work / "per-request.db"
    Store(path).close()  # the same schema and pragmas
    local = threading.local()

    def per_request() -> None:
        connection = getattr(local, "connection", None)
        if connection is None:  # one connection per thread (opening one per request is slower)
            connection = sqlite3.connect(path, isolation_level=None, timeout=30)
            connection.execute("PRAGMA synchronous = FULL")
            connection.execute("PRAGMA busy_timeout = 30000")
            local.connection = connection
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(
            "INSERT INTO submissions (survey, version, respondent, submitted_at, answers) "
            "VALUES (?, ?, ?, ?, ?)",
            ("bench", VERSION, secrets.token_urlsafe(16), minute_now(), canonical_json(answers)))
        connection.execute("COMMIT")

    run("connection per thread + busy_timeout", per_request)
    return rows


async def together(ports: list[int], connections: int, seconds: float
                   ) -> list[tuple[list[float], dict[int, int]]]:
    """Closed loops on several servers at the same time, `connections` each."""
    return list(await asyncio.gather(*(drive(port, post_request, connections, seconds)
                                       for port in ports)))


def postgres_rows(work: Path, dsn: str, connections: int, seconds: float,
                  invitations: int) -> list[dict]:
    """Closed-loop submissions through one, then two `rrsite serve` processes on one database,
    then invitation-only submissions through one."""
    rows = []
    acknowledged = 0
    codes = issue(dsn, invitations)
    process, port = start_server(work, dsn)
    try:
        latencies, statuses = asyncio.run(drive(port, invited_requests(codes), connections,
                                                seconds))
    finally:
        process.terminate()
        process.wait(timeout=30)
    if set(statuses) != {201}:
        raise SystemExit(f"PostgreSQL, invitation-only: unexpected statuses {statuses}")
    acknowledged += statuses[201]
    row = summary(f"durable submission with a code ({invitations:,} issued), PostgreSQL",
                  latencies, seconds)
    rows.append(row)
    show(row)
    for count in (1, 2):
        servers = [start_server(work, dsn) for _ in range(count)]
        try:
            for _, port in servers:  # warm up each process's pool
                acknowledged += asyncio.run(drive(port, post_request, 2, 0.3))[1].get(201, 0)

            ports = [port for _, port in servers]
            results = asyncio.run(together(ports, connections // count, seconds))
        finally:
            for process, _ in servers:
                process.terminate()
                process.wait(timeout=30)
        latencies = [value for result in results for value in result[0]]
        statuses: dict[int, int] = {}
        for _, counted in results:
            for status, number in counted.items():
                statuses[status] = statuses.get(status, 0) + number
        if set(statuses) != {201}:
            raise SystemExit(f"PostgreSQL, {count} process(es): unexpected statuses {statuses}")
        acknowledged += statuses[201]
        row = summary(f"durable submission, PostgreSQL, {count} process{'es' if count > 1 else ''}",
                      latencies, seconds)
        rows.append(row)
        show(row)
    stored = int(subprocess.run(
        [sys.executable, "-c", "import asyncio, asyncpg, sys\n"
         "async def main():\n"
         "    c = await asyncpg.connect(sys.argv[1])\n"
         "    print(await c.fetchval('SELECT count(*) FROM submissions'))\n"
         "    await c.close()\n"
         "asyncio.run(main())", dsn], check=True, capture_output=True, text=True).stdout)
    print(f"  PostgreSQL: acknowledged {acknowledged:,} (warm-up included), in the database "
          f"{stored:,}")
    if stored != acknowledged:
        raise SystemExit("the database does not hold exactly the acknowledged submissions")
    return rows


def throwaway_postgres() -> object:
    """A PostgreSQL server in a temporary folder (tests/collect/pgserver.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "rrsite_bench_pgserver", ROOT / "tests" / "collect" / "pgserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PgServer().start()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per measurement (default 5)")
    parser.add_argument("--connections", type=int, default=32,
                        help="concurrent keep-alive connections (default 32)")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument("--postgres", metavar="URL",
                        help="an empty PostgreSQL database to use (default: a throwaway server)")
    parser.add_argument("--invitations", type=int, default=20000, metavar="N",
                        help="invitation codes issued for the invitation-only measurement "
                        "(default 20000; each request spends one)")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL part")
    args = parser.parse_args()

    print(f"rrsite collector benchmark: {os.cpu_count()} CPUs, SQLite {sqlite3.sqlite_version}, "
          f"{args.connections} connections, {args.seconds:g} s per measurement")
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="rrsite-bench-") as temporary:
        work = Path(temporary)
        sqlite_codes = issue(str(work / "bench.db"), args.invitations)
        process, port = start_server(work)
        try:
            asyncio.run(drive(port, lambda: TRIVIAL, 4, 0.5))  # warm up
            _, warm = asyncio.run(drive(port, post_request, 4, 0.5))
            print("HTTP, concurrent loopback client:")
            rows = []
            for name, make, connections in (
                    ("trivial request (baseline)", lambda: TRIVIAL, args.connections),
                    ("durable submission", post_request, args.connections),
                    ("trivial request, 1 connection", lambda: TRIVIAL, 1),
                    ("durable submission, 1 connection", post_request, 1)):
                latencies, statuses = asyncio.run(
                    drive(port, make, connections, args.seconds))
                expected = 404 if make is not post_request else 201
                if set(statuses) != {expected}:
                    raise SystemExit(f"{name}: unexpected statuses {statuses}")
                row = summary(name, latencies, args.seconds)
                rows.append(row)
                show(row)
            latencies, statuses = asyncio.run(drive(
                port, invited_requests(sqlite_codes), args.connections, args.seconds))
            if set(statuses) != {201}:
                raise SystemExit(f"invitation-only: unexpected statuses {statuses}")
            row = summary(f"durable submission with a code ({args.invitations:,} issued)",
                          latencies, args.seconds)
            invited_rows = [row]
            show(row)
            for rate in (300, 1000):
                latencies, statuses = asyncio.run(paced(port, post_request, rate, args.seconds))
                if set(statuses) != {201}:
                    raise SystemExit(f"paced {rate}/s: unexpected statuses {statuses}")
                row = summary(f"durable submission, {rate}/s offered", latencies, args.seconds)
                row["offered"] = rate
                rows.append(row)
                show(row)
            acknowledged = sum(row["requests"] for row in rows + invited_rows
                               if "submission" in row["name"])
            acknowledged += warm.get(201, 0)
        finally:
            process.terminate()
            process.wait(timeout=30)
        with sqlite3.connect(work / "bench.db") as connection:
            stored = connection.execute("SELECT count(*) FROM submissions").fetchone()[0]
            check = connection.execute("PRAGMA integrity_check").fetchone()[0]
        ratio = rows[1]["per_second"] / rows[0]["per_second"]
        print(f"  ratio submissions/trivial: {ratio:.2f}    acknowledged {acknowledged:,}, "
              f"in the database {stored:,}, integrity_check {check}")
        if stored != acknowledged:
            raise SystemExit("the database does not hold exactly the acknowledged submissions")
        target = rows[1]["per_second"] >= 300 and rows[4]["p99_ms"] < 100
        print(f"  target >= 300 durable submissions/s sustained, p99 < 100 ms at 300/s offered: "
              f"{'met' if target else 'NOT met'}")
        print(f"SQLite store alone ({args.connections} threads, no HTTP):")
        store_rows = store_alone(work, args.connections, args.seconds)
        for row in store_rows:
            show(row)
        results = {"http": rows + invited_rows, "ratio": ratio, "store": store_rows,
                   "target_met": target}
        if not args.no_postgres:
            print(f"PostgreSQL ({args.connections} connections in all, beside the baseline "
                  f"above):")
            server: Any = None
            if args.postgres:
                dsn = args.postgres
            else:
                server = throwaway_postgres()
                dsn = server.create_database()
            try:
                pg_rows = postgres_rows(work, dsn, args.connections, args.seconds,
                                        args.invitations)
            finally:
                if server is not None:
                    server.remove()
            for row in pg_rows:
                print(f"  ratio {row['name']}/trivial: "
                      f"{row['per_second'] / rows[0]['per_second']:.2f}")
            results["postgresql"] = pg_rows
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
