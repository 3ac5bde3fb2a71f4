"""The writing loop: `rrsite check` and `rrsite preview`'s rebuild after a save, beside build.

Run: python benchmarks/writing_loop.py [--runs 5] [--survey surveys/honor-code.md]

Times, on a copy of the survey, with the cache warm (the first build fills it, untimed):
- `rrsite build SURVEY -o DIST` and `rrsite check SURVEY`, as commands (wall clock, Python's
  start included);
- a running `rrsite preview`: from writing an edited survey to the state endpoint reporting the new
  build (the watcher's polling, up to 0.25 s + 0.1 s, included), and the rebuild alone, in process;
- `rrsite check` with an empty cache, which is what every check cost before the standard library
  was cached (Node and Pyodide start to minify it).
Rounds are interleaved so that a busy machine slows every command alike; the table shows medians,
ranges and each median's ratio to build's median in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RRSITE = [sys.executable, "-m", "rrsite"]


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def edit(survey: Path, original: str, number: int) -> None:
    """A survey edit as an author makes one: the title changes."""
    survey.write_text(original.replace("title:", f"title: Draft {number} of", 1), "utf-8")


class Preview:
    """A running `rrsite preview` and its build counter."""

    def __init__(self, survey: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen([*RRSITE, "preview", str(survey), "--port", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env=env, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:
            found = re.search(r"listening on (http://\S+/)", line)
            if found:
                self.base = found.group(1)
                break
        else:
            raise SystemExit("rrsite preview did not start")

    def build_number(self) -> int:
        with urllib.request.urlopen(self.base + "_preview/state", timeout=10) as response:
            return int(json.load(response)["build"])

    def save_to_rebuilt(self, save: Callable[[], None]) -> float:
        # wait until no rebuild is pending (a previous save seen mid-write builds twice), so the
        # build counted is the one this save caused
        before, quiet_since = self.build_number(), time.perf_counter()
        while time.perf_counter() - quiet_since < 0.6:
            time.sleep(0.05)
            now = self.build_number()
            if now != before:
                before, quiet_since = now, time.perf_counter()
        start = time.perf_counter()
        save()
        while self.build_number() == before:
            if time.perf_counter() - start > 120:
                raise SystemExit("rrsite preview did not rebuild within 120 s")
            time.sleep(0.005)
        return time.perf_counter() - start

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def rebuild_in_process(survey: Path, dist: Path, number: int) -> float:
    from rrsite.commands.preview import preview_build
    from rrsite.site.builder import default_pyodide, default_templates

    start = time.perf_counter()
    preview_build([survey], dist, default_templates(), default_pyodide(), number)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--survey", type=Path, default=ROOT / "surveys" / "honor-code.md")
    parser.add_argument("--cold-runs", type=int, default=2,
                        help="checks with an empty cache, the cost before (default 2)")
    args = parser.parse_args()

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    times: dict[str, list[float]] = {"build": [], "check": [], "preview": [], "rebuild": [],
                                     "cold": []}
    with tempfile.TemporaryDirectory(prefix="rrsite-writing-loop-") as folder:
        work = Path(folder)
        survey = work / args.survey.name
        original = args.survey.read_text("utf-8")
        survey.write_text(original, "utf-8")
        dist = work / "dist"
        subprocess.run([*RRSITE, "build", str(survey), "-o", str(dist)], check=True,
                       capture_output=True, env=env)  # fills the cache (untimed)
        subprocess.run([*RRSITE, "check", str(survey)], check=True, capture_output=True, env=env)
        preview = Preview(survey, env)
        try:
            number = 0
            for _ in range(args.runs):
                number += 1
                edit(survey, original, number)
                times["build"].append(timed([*RRSITE, "build", str(survey), "-o", str(dist)],
                                            env))
                number += 1
                edit(survey, original, number)
                times["check"].append(timed([*RRSITE, "check", str(survey)], env))
                number += 1
                times["preview"].append(
                    preview.save_to_rebuilt(lambda n=number: edit(survey, original, n)))
                number += 1
                edit(survey, original, number)
                times["rebuild"].append(rebuild_in_process(survey, work / "inproc", number))
        finally:
            preview.stop()
        for run in range(args.cold_runs):
            empty = work / f"empty-cache-{run}"
            cold_env = {**env, "RRSITE_CACHE_DIR": str(empty)}
            times["cold"].append(timed([*RRSITE, "check", str(survey)], cold_env))
            shutil.rmtree(empty, ignore_errors=True)

    rows = [
        ("build", "rrsite build SURVEY -o DIST"),
        ("check", "rrsite check SURVEY"),
        ("preview", "rrsite preview: save -> rebuilt"),
        ("rebuild", "preview rebuild alone (in process)"),
        ("cold", "rrsite check, empty cache (before)"),
    ]
    build = statistics.median(times["build"])
    print(f"writing loop: {args.survey.name}, {args.runs} interleaved rounds (warm cache), "
          f"{args.cold_runs} cold checks; Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(f"{'':<38}{'median':>9}{'min':>9}{'max':>9}{'/ build':>10}")
    for key, label in rows:
        values = times[key]
        if not values:
            continue
        median = statistics.median(values)
        print(f"{label:<38}{median:>8.3f}s{min(values):>8.3f}s{max(values):>8.3f}s"
              f"{median / build:>9.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
