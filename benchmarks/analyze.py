"""Benchmark `rrsite analyze` on each path beside DuckDB and polars counting the same file.

    python benchmarks/analyze.py                                  # 1,000 and 1,000,000 rows
    python benchmarks/analyze.py --rows 1000000 --rows 10000000   # memory must not grow
    python benchmarks/analyze.py --rows 10000000 --dir /tmp/bench --repeat 3 --postgres

For each size: a five-question export simulated with `rrsite simulate` (three randomized
questions, two asked directly; kept in --dir and reused), the same rows as Parquet (written by
DuckDB), and with --postgres the same rows in a collector's PostgreSQL database (a throwaway
server, tests/collect/pgserver.py, or --postgres-url). Then, each in its own child process and
in the same run:

- rrsite: `rrsite analyze` of the CSV with each engine (duckdb, numpy), of the Parquet file,
  and `rrsite analyze --db` of the database: every row checked against its version, duplicate
  tokens, estimates, intervals, the JSON report;
- the anchors, what a researcher would write by hand to count the same rows with no checks:
  DuckDB's and polars' one scan of the file (each randomized question's answers counted, and
  the duplicate tokens as rows minus distinct tokens), and PostgreSQL's own GROUP BY.

Figures: wall-clock seconds (best of --repeat), CPU seconds (user + system of the child, less
disturbed by other jobs on a shared machine), peak resident memory (the child's maximum RSS),
and the ratio to the anchor counting the same source (DuckDB's for the files, PostgreSQL's for
the database). Every tool must report the same counts, or the benchmark stops.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rrsite.core import KRR, ForcedResponse, Warner, privacy_of

ROOT = Path(__file__).resolve().parents[1]
SENSITIVE = ("violated", "cheated", "drugs")
SURVEY_ID = "bench-survey"

DUCKDB = """
import json, os, sys
import duckdb
path, kind = sys.argv[1], sys.argv[2]
source = f"read_csv('{path}', all_varchar=true)" if kind == "csv" else f"read_parquet('{path}')"
duckdb.execute("SET enable_progress_bar = false")
duckdb.execute(f"SET threads = {os.cpu_count()}")  # as rrsite sets it
row = duckdb.sql(f"SELECT count(*) - count(DISTINCT respondent), histogram(violated), "
                 f"histogram(cheated), histogram(drugs) FROM {source}").fetchall()[0]
print(json.dumps({"duplicates": row[0], "violated": row[1], "cheated": row[2], "drugs": row[3]}))
"""

POLARS = """
import json, sys
import polars as pl
path, kind = sys.argv[1], sys.argv[2]
frame = pl.scan_csv(path, infer_schema=False) if kind == "csv" else pl.scan_parquet(path)
out = frame.select(
    (pl.len() - pl.col("respondent").n_unique()).alias("duplicates"),
    *[pl.col(q).value_counts().implode().alias(q) for q in ("violated", "cheated", "drugs")],
).collect()
result = {"duplicates": int(out["duplicates"][0])}
for q in ("violated", "cheated", "drugs"):
    result[q] = {str(v[q]): int(v["count"]) for v in out[q][0]}
print(json.dumps(result))
"""

POSTGRES = """
import asyncio, json, sys
import asyncpg

async def main(dsn, survey):
    connection = await asyncpg.connect(dsn)
    rows = await connection.fetch(
        "SELECT a ->> 'violated', a ->> 'cheated', a ->> 'drugs', count(*) FROM "
        "(SELECT CAST(answers AS jsonb) AS a FROM submissions WHERE survey = $1) AS s "
        "GROUP BY GROUPING SETS ((1), (2), (3))", survey)
    await connection.close()
    result = {"duplicates": 0, "violated": {}, "cheated": {}, "drugs": {}}
    for v, c, d, n in rows:
        for name, value in (("violated", v), ("cheated", c), ("drugs", d)):
            if value is not None:
                result[name][value] = n
    print(json.dumps(result))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def manifest() -> dict:
    def sensitive(qid: str, qtype: str, design, spec: dict, values: list[str]) -> dict:
        return {"id": qid, "text": qid, "type": qtype, "sensitive": True, "required": True,
                "values": values, "design": spec, "matrix": [list(r) for r in design.matrix],
                "epsilon": privacy_of(design).epsilon, "delta": 0.0}

    return {
        "format": 1, "id": SURVEY_ID, "title": "Benchmark survey", "language": "en",
        "version": "0123456789abcdef", "core_hash": "sha256:bench",
        "submit": {"to": "collector", "url": "/api/submissions"},
        "questions": [
            sensitive("violated", "yes-no", ForcedResponse(),
                      {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25},
                      ["no", "yes"]),
            sensitive("cheated", "yes-no", Warner(p=0.75), {"name": "warner", "p": 0.75},
                      ["no", "yes"]),
            sensitive("drugs", "choice", KRR(3, p=0.6), {"name": "k-rr", "k": 3, "p": 0.6},
                      ["never", "once", "often"]),
            {"id": "year", "text": "year", "type": "choice", "sensitive": False, "required": True,
             "values": ["First", "Second", "Third or later"]},
            {"id": "age", "text": "age", "type": "number", "sensitive": False, "required": False,
             "min": 16, "max": 99, "integer": True},
        ],
    }


def measured(command: list[str], capture: bool = False) -> tuple[float, float, float, bytes]:
    """Run a child; (wall seconds, CPU seconds (user + system), peak RSS in MB, stdout)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    output = process.stdout.read() if process.stdout else b""
    errors = process.stderr.read() if process.stderr else b""
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{errors.decode(errors='replace')}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output


def best(command: list[str], repeat: int, capture: bool = False) -> tuple[float, float, float,
                                                                          bytes]:
    """The fastest of ``repeat`` runs (wall), with its CPU time; the largest peak memory."""
    runs = [measured(command, capture) for _ in range(repeat)]
    fastest = min(runs, key=lambda r: r[0])
    return fastest[0], min(r[1] for r in runs), max(r[2] for r in runs), fastest[3]


def exports(work: Path, rows: int, survey: Path) -> tuple[Path, Path]:
    """The simulated CSV and the same rows as Parquet (made once, kept in ``work``)."""
    export = work / f"export-{rows}.csv"
    if not export.exists():
        partial = export.with_suffix(".partial.csv")
        subprocess.run([sys.executable, "-m", "rrsite", "simulate", str(survey),
                        "--respondents", str(rows), "--truth", "violated=0.2",
                        "--truth", "cheated=0.1", "--truth", "drugs=never:0.7,once:0.2",
                        "--seed", "7", "-o", str(partial)], check=True,
                       stderr=subprocess.DEVNULL)
        partial.rename(export)
    parquet = work / f"export-{rows}.parquet"
    if not parquet.exists():
        import duckdb

        with duckdb.connect() as connection:
            connection.execute(f"COPY (SELECT * FROM read_csv('{export}', all_varchar=true)) "
                               f"TO '{parquet}' (FORMAT parquet, COMPRESSION zstd)")
    return export, parquet


def load_postgres(dsn: str, export: Path, work: Path) -> None:
    """The export's rows as a collector's stored submissions (answers as the page sends them)."""
    import asyncpg
    import duckdb

    from rrsite.collect.pgstore import SCHEMA

    load = work / f"{export.stem}.pg.csv"
    with duckdb.connect() as connection:
        connection.execute(
            f"COPY (SELECT survey, version, respondent, submitted_at, CAST(json_object("
            f"'violated', violated, 'cheated', cheated, 'drugs', drugs, 'year', year, 'age', "
            f"TRY_CAST(age AS INTEGER)) AS VARCHAR) FROM read_csv('{export}', all_varchar=true))"
            f" TO '{load}' (HEADER false)")

    async def fill() -> None:
        connection = await asyncpg.connect(dsn)
        await connection.execute("DROP TABLE IF EXISTS submissions, manifests, rrsite_schema, "
                                 "invitation_codes, unused_codes")
        await connection.execute(SCHEMA)
        await connection.execute(
            "INSERT INTO manifests (survey, version, manifest, first_seen) VALUES ($1, $2, $3, "
            "'2026-11-01')", SURVEY_ID, manifest()["version"], json.dumps(manifest()))
        await connection.copy_to_table(
            "submissions", source=str(load), format="csv",
            columns=["survey", "version", "respondent", "submitted_at", "answers"])
        await connection.execute("ANALYZE submissions")
        await connection.close()

    asyncio.run(fill())
    load.unlink()


def throwaway_postgres() -> object:
    """A PostgreSQL server in a temporary folder (tests/collect/pgserver.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "rrsite_bench_pgserver", ROOT / "tests" / "collect" / "pgserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PgServer().start()


def counts_of(report: Path) -> dict:
    result = json.loads(report.read_text())
    counts = {q["id"]: {k: v for k, v in q["counts"].items() if v} for q in result["questions"]}
    rejected = result.get("rejected", {}).get("duplicate-respondent", {}).get("count", 0)
    return {"duplicates": rejected, **counts}


class Run:
    """The tools measured on one export, each checked to count what the first counted."""

    def __init__(self, report: Path, repeat: int) -> None:
        self.report = report
        self.repeat = repeat
        self.lines: list[tuple[str, str, tuple[float, float, float, bytes]]] = []
        self.reference: dict | None = None

    def _check(self, name: str, source: str, counted: dict) -> None:
        if self.reference is None:
            self.reference = counted
        if counted != self.reference:
            raise SystemExit(f"{name} on {source} counted {counted}, not {self.reference}")

    def rrsite(self, name: str, source: str, arguments: list[str]) -> None:
        figures = best([sys.executable, "-m", "rrsite", "analyze", *arguments, "--format",
                        "json", "-o", str(self.report), "--no-progress"], self.repeat)
        self._check(name, source, counts_of(self.report))
        self.lines.append((name, source, figures))

    def anchor(self, name: str, source: str, command: list[str]) -> None:
        figures = best(command, self.repeat, capture=True)
        self._check(name, source, json.loads(figures[3]))
        self.lines.append((name, source, figures))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, action="append",
                        help="export size (repeatable; default 1,000 and 1,000,000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool (best is shown)")
    parser.add_argument("--dir", help="keep the exports here, and reuse them")
    parser.add_argument("--postgres", action="store_true",
                        help="also count in PostgreSQL (a throwaway server)")
    parser.add_argument("--postgres-url", metavar="URL", help="... or in this database")
    args = parser.parse_args()
    sizes = args.rows or [1_000, 1_000_000]
    server = None
    dsn = args.postgres_url
    if args.postgres and dsn is None:
        server = throwaway_postgres()
        dsn = server.create_database()  # type: ignore[attr-defined]
    keep = args.dir is not None
    work = Path(args.dir) if keep else Path(tempfile.mkdtemp(prefix="rrsite-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    survey = work / "survey.json"
    survey.write_text(json.dumps(manifest()))
    print(f"threads: {os.cpu_count()} for DuckDB in rrsite and in the DuckDB anchor (SET threads), "
          "polars' default pool")
    print(f"{'rows':>11} {'tool':<24} {'source':<8} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} "
          f"{'x anchor wall':>13} {'x anchor cpu':>12}")
    try:
        for rows in sizes:
            export, parquet = exports(work, rows, survey)
            run = Run(work / "report.json", args.repeat)
            manifest_options = ["--manifest", str(survey)]
            run.rrsite("rrsite --engine duckdb", "csv",
                       [str(export), *manifest_options, "--engine", "duckdb"])
            run.rrsite("rrsite --engine numpy", "csv",
                       [str(export), *manifest_options, "--engine", "numpy"])
            run.rrsite("rrsite (auto)", "csv", [str(export), *manifest_options])
            run.rrsite("rrsite", "parquet", [str(parquet), *manifest_options])
            run.anchor("duckdb", "csv", [sys.executable, "-c", DUCKDB, str(export), "csv"])
            run.anchor("duckdb", "parquet",
                       [sys.executable, "-c", DUCKDB, str(parquet), "parquet"])
            run.anchor("polars", "csv", [sys.executable, "-c", POLARS, str(export), "csv"])
            run.anchor("polars", "parquet",
                       [sys.executable, "-c", POLARS, str(parquet), "parquet"])
            if dsn is not None:
                load_postgres(dsn, export, work)
                run.rrsite("rrsite --db", "postgres", ["--db", dsn, "--survey", SURVEY_ID])
                run.anchor("postgres", "postgres",
                           [sys.executable, "-c", POSTGRES, dsn, SURVEY_ID])
            lines = run.lines
            anchors = {source: figures for name, source, figures in lines
                       if name in ("duckdb", "postgres")}
            for name, source, (wall, cpu, peak, _) in lines:
                base = anchors[source]
                print(f"{rows:>11,} {name:<24} {source:<8} {wall:>7.2f} {cpu:>7.2f} {peak:>8.0f} "
                      f"{wall / base[0]:>12.2f}x {cpu / base[1]:>11.2f}x", flush=True)
            if not keep:
                export.unlink()
                parquet.unlink()
    finally:
        if server is not None:
            server.remove()  # type: ignore[attr-defined]
    print("every tool counted the same answers and duplicate tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
