"""Wall time of a tier with 1 worker against N workers, the records compared, and where the time goes.

    python benchmarks/parallel_runner.py [--budget quick] [--workers 2] [--seed 0] [--save-estimates]

Runs ``verify run --rerun`` twice in fresh results directories (``--workers 1``: every unit in one process;
``--workers N``: a local Dask cluster of N single-threaded workers), prints both wall times and their ratio, checks
that the records are identical after ``replay_view``, and summarizes the per-unit times measured by the serial run:
their distribution, the longest units (a unit longer than total/N bounds the parallel run: split it), and the wall
time projected for W workers by scheduling the measured units longest-first (a lower bound: it leaves out the
cluster's start-up and the fixtures each worker computes for itself).  Both runs start from empty results
directories, as on a fresh clone: the parallel run places its units by the reference estimates
(``verify/unit_seconds.json``); ``--save-estimates`` replaces that file's entries for this budget by the serial run's
unit times.
"""
from __future__ import annotations

import argparse
import contextlib
import heapq
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run(budget: str, workers: int, seed: int, out: Path, stream: Path | None = None) -> tuple[float, float, str]:
    """Wall time of one ``verify run``, its start (epoch seconds) and the CPU time it took; ``stream``: where the
    cluster's task stream goes (``VERIFY_TASK_STREAM``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)} | ({"VERIFY_TASK_STREAM": str(stream)} if stream else {})
    adopt_orphans()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, start = time.perf_counter(), time.time()
    subprocess.run([sys.executable, "-m", "verify.cli", "run", "--budget", budget, "--seed", str(seed),
                    "--workers", str(workers), "--rerun", "--results", str(out)], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    reap_orphans()
    return wall, start, cpu_time(before, resource.getrusage(resource.RUSAGE_CHILDREN), wall)


#: prctl(2): orphaned descendants are re-parented to this process, not to init
PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> None:
    """Count the CPU time of every process a run starts: the local cluster's workers are forked from a fork server
    that outlives the command by a moment; as their sub-reaper this process reaps it (and with it their CPU time)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1)


def reap_orphans() -> None:
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait()


def cpu_time(before, after, wall: float) -> str:
    """The CPU time of a finished run and every process it started and reaped (a local cluster's workers): user time
    (the units' own work) and kernel time (on a VM that hands freed memory back to its host, mostly the first touch
    of fresh memory: each process pays for its own peak heap; README, issue 12), and the share of the cores used."""
    user, kernel = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return (f"CPU user {user:.1f} s + kernel {kernel:.1f} s = {user + kernel:.1f} s, "
            f"{100 * (user + kernel) / (wall * (os.cpu_count() or 1)):.0f} % of {os.cpu_count()} cores")


def where_the_time_went(stream: Path, start: float, wall: float, serial_total: float) -> list[str]:
    """From the parallel run's task stream: the time before the first unit started (process and cluster start-up),
    each worker's busy time and how long it sat idle before the run ended, the time after the last unit (records,
    shutdown), and the units' total time against the serial run's (side-by-side slowdown)."""
    rows = json.loads(stream.read_text())
    if not rows:
        return ["  (no task stream)"]
    first = min(r["start"] for r in rows)
    last = max(r["stop"] for r in rows)
    busy: dict[str, float] = {}
    ends: dict[str, float] = {}
    for r in rows:
        busy[r["worker"]] = busy.get(r["worker"], 0.0) + r["stop"] - r["start"]
        ends[r["worker"]] = max(ends.get(r["worker"], 0.0), r["stop"])
    total = sum(busy.values())
    out = [(f"  where the {wall:.1f} s went: {first - start:.1f} s before the first unit (start-up), "
            f"{last - first:.1f} s running units, {start + wall - last:.1f} s after the last (records, shut-down)"),
           (f"  unit time on the cluster {total:.0f} s against {serial_total:.0f} s serial "
            f"({100 * (total / serial_total - 1):+.0f} % side by side)")]
    for w in sorted(busy):
        out.append(f"    worker {w}: busy {busy[w]:.1f} s, idle {last - first - busy[w]:.1f} s "
                   f"(of which {last - ends[w]:.1f} s after its last unit)")
    return out


def unit_times(results_dir: Path) -> list[tuple[float, str]]:
    out = []
    for f in (results_dir / "units").rglob("*.json"):
        if f.name == "timings.json":
            continue
        e = json.loads(f.read_text())
        out.append((float(e["seconds"]), f"{f.parent.parent.name} {e['kind']} {e['name']}"))
    return sorted(out, reverse=True)


def save_estimates(results_dir: Path, budget: str) -> None:
    from verify import execution, results

    serial = json.loads((results_dir / "units" / "timings.json").read_text())
    keep = {k: v for k, v in execution.reference_estimates().items() if not k.startswith(f"{budget}|")}
    new = keep | {k: round(v, 3) for k, v in serial.items() if k.startswith(f"{budget}|")}
    results.atomic_write_text(execution.ESTIMATES, json.dumps(new, indent=0, sort_keys=True) + "\n")


def lpt_makespan(times: list[float], workers: int) -> float:
    """Longest-processing-time-first schedule of the units on ``workers`` identical workers."""
    loads = [0.0] * workers
    for t in sorted(times, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", default="quick")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, default=None, help="keep both results directories under this directory")
    ap.add_argument("--save-estimates", action="store_true",
                    help="write the serial run's unit times into verify/unit_seconds.json (this budget's entries)")
    args = ap.parse_args()

    from verify import results

    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory()) as tmp:
        one, many = Path(tmp) / "w1", Path(tmp) / f"w{args.workers}"
        stream = Path(tmp) / "task-stream.json"
        t1, _, cpu1 = run(args.budget, 1, args.seed, one)
        tn, started, cpun = run(args.budget, args.workers, args.seed, many, stream)
        view = lambda p: json.dumps(results.replay_view(json.loads(p.read_text())), sort_keys=True)  # noqa: E731
        same = all(view(f) == view(many / f.name) for f in one.glob("*.json"))  # as JSON: NaN equals NaN
        times = unit_times(one)
        timeline = where_the_time_went(stream, started, tn, sum(t for t, _ in times))
        if args.save_estimates:
            save_estimates(one, args.budget)
    secs = [t for t, _ in times]
    total = sum(secs)
    print(f"{args.budget} tier, seed {args.seed}: {len(secs)} units, {total:.0f} s of unit time")
    print(f"  wall time, 1 worker:  {t1:7.1f} s   {cpu1}")
    print(f"  wall time, {args.workers} workers: {tn:7.1f} s   {cpun}")
    print(f"  speed-up {t1 / tn:.2f}x (target >= 1.8 on 2 cores)   records identical after replay_view: {same}")
    print("\n".join(timeline))
    q = lambda p: secs[min(len(secs) - 1, int(p * len(secs)))]  # noqa: E731 -- secs is sorted descending
    print(f"  per-unit seconds: max {secs[0]:.1f}, p90 {q(0.1):.1f}, median {q(0.5):.2f}, min {secs[-1]:.3f}")
    print("  longest units: " + "; ".join(f"{name} {t:.1f} s" for t, name in times[:5]))
    bound = total / args.workers
    if secs[0] > 0.5 * bound:
        print(f"  !! the longest unit ({secs[0]:.0f} s) is more than half of total/{args.workers} = {bound:.0f} s: "
              "split it")
    print("  projected wall time on W workers (longest-first schedule of these units, start-up not included):")
    for w in (1, 2, 4, 8, 16, 32):
        print(f"    W = {w:2d}: {lpt_makespan(secs, w):7.1f} s")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
