"""Benchmark `rrsite analyze` on a large simulated export against pandas in the same run.

    python benchmarks/analyze.py                       # 1 million rows
    python benchmarks/analyze.py --rows 1000000 --rows 10000000   # memory must not grow

For each size: simulate an export with `rrsite simulate` (a five-question survey: three
randomized, two asked directly), then time, each in its own child process,

- `rrsite analyze EXPORT --manifest survey.json --format json` (every row validated, duplicate
  tokens checked, estimates, intervals), and
- the baseline a researcher would write by hand: `pandas.read_csv(EXPORT)` and `value_counts()`
  of each randomized question (no validation at all).

Peak memory is the child's maximum resident set size and CPU its user + system time (both from
``os.wait4``'s rusage; CPU time is less disturbed by other jobs on a shared machine). The two
also have to agree on every count. Prints rows per second, peak memory and the ratios (wall
clock and CPU). Needs pandas (`pip install pandas`, in the `test` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rrsite.core import KRR, ForcedResponse, Warner, privacy_of

SENSITIVE = ("violated", "cheated", "drugs")

BASELINE = """
import sys
import pandas
frame = pandas.read_csv(sys.argv[1])
counts = {q: {str(k): int(v) for k, v in frame[q].value_counts().items()} for q in sys.argv[2:]}
import json
print(json.dumps(counts))
"""


def manifest() -> dict:
    def sensitive(qid: str, qtype: str, design, spec: dict, values: list[str]) -> dict:
        return {"id": qid, "text": qid, "type": qtype, "sensitive": True, "required": True,
                "values": values, "design": spec, "matrix": [list(r) for r in design.matrix],
                "epsilon": privacy_of(design).epsilon, "delta": 0.0}

    return {
        "format": 1, "id": "bench-survey", "title": "Benchmark survey", "language": "en",
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


def measured(command: list[str],
             stdout: int | None = subprocess.DEVNULL) -> tuple[float, float, float, bytes]:
    """Run a child; (wall seconds, CPU seconds (user + system), peak RSS in MB, stdout)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE if stdout is None else stdout,
                               stderr=subprocess.DEVNULL)
    output = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with exit code {process.returncode}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, action="append",
                        help="export size (repeatable; default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool (best is shown)")
    parser.add_argument("--dir", help="keep the exports here (default: a temporary folder)")
    parser.add_argument("--skip-baseline", action="store_true", help="rrsite only")
    args = parser.parse_args()
    sizes = args.rows or [1_000_000]
    rrsite = [sys.executable, "-m", "rrsite"]
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        work = Path(folder)
        survey = work / "survey.json"
        survey.write_text(json.dumps(manifest()))
        print(f"{'rows':>12} {'file MB':>8} | {'rrsite s':>8} {'cpu s':>6} {'rows/s':>10} "
              f"{'peak MB':>7} | {'pandas s':>8} {'cpu s':>6} {'rows/s':>10} {'peak MB':>7} | "
              f"{'speed-up':>8} {'cpu':>6}")
        for rows in sizes:
            export = work / f"export-{rows}.csv"
            made = time.perf_counter()
            subprocess.run([*rrsite, "simulate", str(survey), "--respondents", str(rows),
                            "--truth", "violated=0.2", "--truth", "cheated=0.1",
                            "--truth", "drugs=never:0.7,once:0.2", "--seed", "7",
                            "-o", str(export)], check=True, stderr=subprocess.DEVNULL)
            made = time.perf_counter() - made
            size = export.stat().st_size / 1e6
            best = (float("inf"), 0.0, 0.0)
            report = work / "report.json"
            for _ in range(args.repeat):
                seconds, cpu, peak, _ = measured([*rrsite, "analyze", str(export), "--manifest",
                                                  str(survey), "--format", "json", "-o",
                                                  str(report), "--no-progress"])
                best = min(best, (seconds, cpu, peak))
            result = json.loads(report.read_text())
            assert result["rows"]["accepted"] == rows, result["rows"]
            line = (f"{rows:>12,} {size:>8,.0f} | {best[0]:>8.2f} {best[1]:>6.2f} "
                    f"{rows / best[0]:>10,.0f} {best[2]:>7.0f} |")
            if args.skip_baseline:
                print(line, f"(simulated in {made:.1f} s)")
                continue
            base = (float("inf"), 0.0, 0.0)
            for _ in range(args.repeat):
                seconds, cpu, peak, output = measured(
                    [sys.executable, "-c", BASELINE, str(export), *SENSITIVE], stdout=None)
                base = min(base, (seconds, cpu, peak))
            counts = json.loads(output)
            for question in result["questions"]:
                assert counts[question["id"]] == {k: v for k, v in question["counts"].items()
                                                  if v}, question["id"]
            print(line, f"{base[0]:>8.2f} {base[1]:>6.2f} {rows / base[0]:>10,.0f} "
                  f"{base[2]:>7.0f} | {base[0] / best[0]:>7.2f}x {base[1] / best[1]:>5.2f}x")
            export.unlink()
    print("counts agree between rrsite and pandas for every randomized question")
    return 0


if __name__ == "__main__":
    sys.exit(main())
