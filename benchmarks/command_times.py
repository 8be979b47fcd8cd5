"""How long the everyday commands take, against the times a newcomer measured before the CLI was made lazy.

    python benchmarks/command_times.py [--runs 5] [--claim B.L1] [--json OUT]

Each command runs as a whole process (``verify`` of this checkout's environment), ``--runs`` times after one
warm-up, in a results directory of its own that the warm-up fills, so "a cached one-claim run" and ``show`` read
stored records.  Printed per command: the median and the range of the wall times, the goal the tool is held to, and
the time before (a fresh clone of an earlier version, on a loaded 2-core machine, in the newcomer review; not
re-measured here, so the ratio is indicative only).  A benchmark, not a test: the machine's load moves these numbers,
so nothing here fails a build.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERIFY = str(Path(sys.executable).with_name("verify"))

#: (name, arguments after ``verify``, goal in seconds, seconds measured before the commands were made lazy)
COMMANDS = (
    ("--help", ["--help"], 1.0, 4.7),
    ("list", ["list"], 1.0, 10.0),
    ("mistyped claim id", ["run", "-k", "Z.NOPE"], 1.0, 17.0),
    ("cached one-claim run", ["run", "-k", "{claim}", "--seed", "0", "--results", "{results}"], 3.0, 15.7),
    ("show", ["show", "{claim}", "--seed", "0", "--results", "{results}"], 3.0, None),
)


def time_command(args: list[str], runs: int) -> tuple[list[float], int]:
    times, code = [], 0
    for i in range(runs + 1):
        t0 = time.perf_counter()
        code = subprocess.run([VERIFY, *args], cwd=ROOT, capture_output=True).returncode
        dt = time.perf_counter() - t0
        if i:  # the first run warms the caches (and fills the results directory)
            times.append(dt)
    return times, code


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--claim", default="B.L1", help="a claim whose checks take about a second")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args(argv)
    results = Path(tempfile.mkdtemp(prefix="command-times-"))
    rows = []
    try:
        for name, args, goal, before in COMMANDS:
            args = [x.format(claim=a.claim, results=results) for x in args]
            times, code = time_command(args, a.runs)
            med = statistics.median(times)
            rows.append({"command": name, "args": args, "median_s": med, "min_s": min(times), "max_s": max(times),
                         "goal_s": goal, "before_s": before, "exit": code})
            ratio = f"   {before / med:5.1f}x faster than before ({before:g} s)" if before else ""
            print(f"{name:22s} {med:6.2f} s  [{min(times):.2f}, {max(times):.2f}]  goal {goal:g} s "
                  f"{'met' if med <= goal else 'NOT met'}  (exit {code}){ratio}")
    finally:
        shutil.rmtree(results, ignore_errors=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
