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
3. submissions with an invitation code, each spending an unused one, with 1,000 and with
   1,000,000 codes issued (a database of their own each), measured on the same server and database
   as submissions without a code, alternating --rounds times (the medians compared; the 1,000,000
   codes are shared between the rounds, 1,000 new codes are issued before each round, and each
   round sends as many submissions without a code as with one, so that both are measured over as
   short a run). SQLite marks the code used in place,
   commits the batch without its own flushes, flushes the write-ahead log once, answers, and
   empties the log (rrsite/collect/store.py), PostgreSQL spends through its batch writer and pool
   (rrsite/collect/invitations/pgspend.py), so that no trace orders the spent codes (docs: the
   threat model). The target: with a code at least 0.8x without, at both sizes;
4. the store alone, without HTTP, three ways of writing from many threads: the single writer with
   group commit that the collector uses, the same writer committing every submission on its own,
   and a connection per request with busy_timeout;
5. PostgreSQL (unless --no-postgres): the same comparison, without and with a code (1,000 and
   1,000,000 issued), with one `rrsite serve --db postgresql://...` process and with two
   processes on the same database, each driven by half the connections at the same time. The
   database is a throwaway PostgreSQL server (tests/collect/pgserver.py: initdb in a temporary
   folder, Unix socket) run with the settings the threat model asks for invitation codes
   (`wal_level = minimal`, `max_wal_senders = 0`, `wal_skip_threshold = 0`), or the server of
   --postgres URL (databases are made beside its database for each measurement).

Prints throughput, p50/p99 latency, the ratios (with a code / without, and / trivial), and checks
afterwards that each database holds exactly the acknowledged submissions.
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


#: Codes issued in the two invitation-only measurements.
SIZES = (1_000, 1_000_000)
#: More submissions a second than the collector takes here (it takes a few thousand): a round of
#: `seconds` never spends more codes than `seconds` times this.
MOST_PER_SECOND = 20_000


def invited_requests(codes: list[str]) -> Callable[[], bytes | None]:
    """Requests for the invitation-only survey, each with the next unused code; None once every
    code was sent (the measurement then stops)."""
    pending = iter(codes)

    def make() -> bytes | None:
        code = next(pending, None)
        if code is None:
            return None
        body = submission()
        body["survey"] = "invited"
        body["invitation"] = code
        return post_request(body)

    return make


def issue(db: str, count: int) -> list[str]:
    """`count` invitation codes for the survey `invited`, recorded in the database (shuffled: the
    order they are sent in is not the order they are stored in)."""
    from rrsite.collect.stores import open_store

    codes = list({secrets.token_urlsafe(12) for _ in range(count)})
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


async def drive(port: int, make: Callable[[], bytes | None], connections: int, seconds: float
                ) -> tuple[list[float], dict[int, int]]:
    """Closed loop: each connection sends a request, waits for the answer, sends the next, until
    `seconds` passed or `make` has no more requests."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    stop_at = time.perf_counter() + seconds

    async def connection() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.perf_counter() < stop_at:
                request = make()
                if request is None:
                    break
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
    """Rate and latency figures of one measurement (`seconds`: how long it ran)."""
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


async def together(ports: list[int], make: Callable[[], bytes | None], connections: int,
                   seconds: float) -> list[tuple[list[float], dict[int, int]]]:
    """Closed loops on several servers at the same time, `connections` each."""
    return list(await asyncio.gather(*(drive(port, make, connections, seconds)
                                       for port in ports)))


def measure(name: str, ports: list[int], make: Callable[[], bytes | None], connections: int,
            seconds: float, expected: int = 201) -> dict:
    """One closed-loop measurement over `connections` in all (split between the servers)."""
    started = time.perf_counter()
    results = asyncio.run(together(ports, make, max(1, connections // len(ports)), seconds))
    elapsed = time.perf_counter() - started
    latencies = [value for result in results for value in result[0]]
    statuses: dict[int, int] = {}
    for _, counted in results:
        for status, number in counted.items():
            statuses[status] = statuses.get(status, 0) + number
    if set(statuses) != {expected}:
        raise SystemExit(f"{name}: unexpected statuses {statuses}")
    row = summary(name, latencies, elapsed)
    show(row)
    return row


def stored_in(db: str, survey: str | None = None) -> int:
    """Submissions in a database (SQLite file or PostgreSQL URL), of one survey or all."""
    where = f" WHERE survey = '{survey}'" if survey else ""
    if not db.startswith("postgresql://"):
        with sqlite3.connect(db) as connection:
            return int(connection.execute(f"SELECT count(*) FROM submissions{where}"
                                          ).fetchone()[0])
    return int(subprocess.run(
        [sys.executable, "-c", "import asyncio, asyncpg, sys\n"
         "async def main():\n"
         "    c = await asyncpg.connect(sys.argv[1])\n"
         "    print(await c.fetchval(sys.argv[2]))\n"
         "    await c.close()\n"
         "asyncio.run(main())", db, f"SELECT count(*) FROM submissions{where}"],
        check=True, capture_output=True, text=True).stdout)


def limited(make: Callable[[], bytes], count: int) -> Callable[[], bytes | None]:
    """`make`'s requests, `count` of them, then None (the measurement stops)."""
    left = [count]

    def next_request() -> bytes | None:
        if left[0] <= 0:
            return None
        left[0] -= 1
        return make()

    return next_request


def median_row(rows: list[dict]) -> dict:
    """The row of median rate among repeated measurements (its latencies with it)."""
    return sorted(rows, key=lambda row: row["per_second"])[len(rows) // 2]


def compared(work: Path, label: str, database: str, codes: list[str], size: int,
             processes: int, connections: int, seconds: float, rounds: int) -> list[dict]:
    """Without and with a code on the same servers and database, alternating `rounds` times;
    the median of each (each round spends its share of the codes)."""
    os.sync()  # the issuing's writes reach the disk now, not during a measurement
    servers = [start_server(work, database) for _ in range(processes)]
    ports = [port for _, port in servers]
    plural = "es" if processes > 1 else ""
    without, with_code = [], []
    try:
        for port in ports:  # warm up each process (the survey without codes)
            asyncio.run(drive(port, post_request, 2, 0.3))
        # Each round spends codes of its own: a share of the issue when a share outlasts a round
        # (the 1,000,000), else `size` codes issued afresh before the round (the 1,000: a share
        # of them would be spent in a fraction of a second).
        fresh = len(codes) // rounds < seconds * MOST_PER_SECOND
        share = size if fresh else len(codes) // rounds
        for turn in range(rounds):  # as many requests each way (fresh codes may end a round early)
            if fresh:
                spend = codes if turn == 0 else issue(database, size)
            else:
                spend = codes[turn * share:(turn + 1) * share]
            without.append(measure(f"without a code, {label}, {processes} process{plural}",
                                   ports, limited(post_request, share), connections, seconds))
            with_code.append(measure(
                f"with a code ({size:,} issued), {label}, {processes} process{plural}", ports,
                invited_requests(spend), connections, seconds))
    finally:
        for process, _ in servers:
            process.terminate()
            process.wait(timeout=30)
    stored = stored_in(database, "invited")
    spent = sum(row["requests"] for row in with_code)
    if stored != spent:
        raise SystemExit(f"{label}: acknowledged {spent:,} with a code, stored {stored:,}")
    rows = [median_row(without), median_row(with_code)]
    for row, issued in zip(rows, (0, size), strict=True):
        row.update(store=label, processes=processes, issued=issued, compared_to=size)
    return rows


def postgres_rows(work: Path, new_database: Callable[[], str], connections: int,
                  seconds: float, rounds: int) -> list[dict]:
    """Without and with a code (1,000 and 1,000,000 issued), through one, then two `rrsite serve`
    processes on one database (a new one for each: no measurement spends another's codes)."""
    rows = []
    for count in (1, 2):
        for size in SIZES:
            database = new_database()
            started = time.perf_counter()
            codes = issue(database, size)
            print(f"  (issued {size:,} codes in {time.perf_counter() - started:.0f} s)")
            rows += compared(work, "PostgreSQL", database, codes, size, count, connections,
                             seconds, rounds)
    return rows


def throwaway_postgres() -> object:
    """A PostgreSQL server in a temporary folder (tests/collect/pgserver.py), with the settings
    the threat model asks for invitation codes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "rrsite_bench_pgserver", ROOT / "tests" / "collect" / "pgserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PgServer(settings={"wal_level": "minimal", "max_wal_senders": "0",
                                     "wal_skip_threshold": "0"}).start()


def ratios(rows: list[dict], trivial: float) -> bool:
    """Print each store's with-code rate against the same store without a code; True if every
    one is at least 0.8."""
    met = True
    print("Ratios (with a code / without, medians on the same servers and database; / trivial):")
    for row in rows:
        if not row.get("issued"):
            continue
        base = next(other for other in rows if other["store"] == row["store"]
                    and other["processes"] == row["processes"] and not other["issued"]
                    and other["compared_to"] == row["issued"])
        ratio = row["per_second"] / base["per_second"]
        row["ratio_to_plain"] = ratio
        met = met and ratio >= 0.8
        print(f"  {row['store']}, {row['processes']} process{'es' if row['processes'] > 1 else ''}"
              f", {row['issued']:>9,} issued: {row['per_second']:7,.0f}/s vs "
              f"{base['per_second']:7,.0f}/s = {ratio:.2f}x    (/ trivial "
              f"{row['per_second'] / trivial:.2f}x)")
    print(f"  target with a code >= 0.8x without, at both sizes, on both stores: "
          f"{'met' if met else 'NOT met'}")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per measurement (default 5)")
    parser.add_argument("--connections", type=int, default=32,
                        help="concurrent keep-alive connections (default 32)")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    parser.add_argument("--postgres", metavar="URL",
                        help="an empty PostgreSQL database to use (default: a throwaway server)")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL part")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating measurements without and with a code (default 3)")
    args = parser.parse_args()

    print(f"rrsite collector benchmark: {os.cpu_count()} CPUs, SQLite {sqlite3.sqlite_version}, "
          f"{args.connections} connections, {args.seconds:g} s per measurement")
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="rrsite-bench-") as temporary:
        work = Path(temporary)
        started = time.perf_counter()
        databases = {size: str(work / f"codes-{size}.db") for size in SIZES}
        codes = {size: issue(databases[size], size) for size in SIZES}
        print(f"(issued {', '.join(f'{size:,}' for size in SIZES)} codes to SQLite in "
              f"{time.perf_counter() - started:.0f} s)")
        process, port = start_server(work)
        try:
            asyncio.run(drive(port, lambda: TRIVIAL, 4, 0.5))  # warm up
            asyncio.run(drive(port, post_request, 4, 0.5))
            print("HTTP, concurrent loopback client:")
            rows = []
            for name, make, connections in (
                    ("trivial request (baseline)", lambda: TRIVIAL, args.connections),
                    ("durable submission", post_request, args.connections),
                    ("trivial request, 1 connection", lambda: TRIVIAL, 1),
                    ("durable submission, 1 connection", post_request, 1)):
                expected = 404 if make is not post_request else 201
                rows.append(measure(name, [port], make, connections, args.seconds, expected))
            for rate in (300, 1000):
                latencies, statuses = asyncio.run(paced(port, post_request, rate, args.seconds))
                if set(statuses) != {201}:
                    raise SystemExit(f"paced {rate}/s: unexpected statuses {statuses}")
                row = summary(f"durable submission, {rate}/s offered", latencies, args.seconds)
                row["offered"] = rate
                rows.append(row)
                show(row)
        finally:
            process.terminate()
            process.wait(timeout=30)
        trivial = rows[0]["per_second"]
        acknowledged = sum(row["requests"] for row in rows if "submission" in row["name"])
        with sqlite3.connect(work / "bench.db") as connection:
            check = connection.execute("PRAGMA integrity_check").fetchone()[0]
        stored = stored_in(str(work / "bench.db"))
        print(f"  ratio submissions/trivial: {rows[1]['per_second'] / trivial:.2f}    "
              f"acknowledged {acknowledged:,} (+ warm-up), in the database {stored:,}, "
              f"integrity_check {check}")
        if stored < acknowledged:
            raise SystemExit("the database does not hold every acknowledged submission")
        target = rows[1]["per_second"] >= 300 and rows[4]["p99_ms"] < 100
        print(f"  target >= 300 durable submissions/s sustained, p99 < 100 ms at 300/s offered: "
              f"{'met' if target else 'NOT met'}")
        print(f"SQLite store alone ({args.connections} threads, no HTTP):")
        store_rows = store_alone(work, args.connections, args.seconds)
        for row in store_rows:
            show(row)
        results = {"http": rows, "store": store_rows, "target_met": target}
        print("SQLite, with and without a code on the same server and database:")
        sqlite_rows = []
        for size in SIZES:
            sqlite_rows += compared(work, "SQLite", databases[size], codes[size], size, 1,
                                    args.connections, args.seconds, args.rounds)
        results["sqlite_codes"] = sqlite_rows
        if not args.no_postgres:
            print(f"PostgreSQL ({args.connections} connections in all, beside the baseline "
                  f"above):")
            server: Any = None
            made = iter(range(1, 100))
            if args.postgres:
                base, _, query = args.postgres.partition("?")

                def new_database() -> str:
                    return make_database(args.postgres, f"{base}_{next(made)}", query)
            else:
                server = throwaway_postgres()
                new_database = server.create_database
            try:
                pg_rows = postgres_rows(work, new_database, args.connections, args.seconds,
                                        args.rounds)
            finally:
                if server is not None:
                    server.remove()
            results["postgresql"] = pg_rows
        results["targets_with_a_code_met"] = ratios(sqlite_rows + results.get("postgresql", []),
                                                   trivial)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


def make_database(url: str, name: str, query: str) -> str:
    """A new database beside `url`'s (for --postgres): its URL."""
    from urllib.parse import urlsplit

    dbname = urlsplit(name).path.lstrip("/")
    subprocess.run(
        [sys.executable, "-c", "import asyncio, asyncpg, sys\n"
         "async def main():\n"
         "    c = await asyncpg.connect(sys.argv[1])\n"
         "    await c.execute(f'CREATE DATABASE \"{sys.argv[2]}\"')\n"
         "    await c.close()\n"
         "asyncio.run(main())", url, dbname], check=True)
    return f"{name}?{query}" if query else name


if __name__ == "__main__":
    sys.exit(main())
