"""Wall time of a tier with 1 worker against N workers, the records compared, where the time goes, and a projection.

    python benchmarks/parallel_runner.py [--budget quick] [--workers 2] [--seed 0] [--keep DIR]
    python benchmarks/parallel_runner.py --budget standard --project-only [--project 16 64] [--keep DIR]
    python benchmarks/parallel_runner.py --budget standard --from-stream DIR/task-stream.json [--project 16 64]
                                         [--what-if '|joint_run|=0.667' ...]

Runs the tier twice in fresh results directories, each in a child process (``--workers 1``: every unit in one
process; ``--workers N``: a local Dask cluster of N single-threaded workers), prints both wall times and their ratio
and each run's CPU time, checks that the records are identical after ``replay_view``, and reads the parallel run's
Dask task stream (taken here, around the run: the executor carries no instrumentation): start-up, each worker's busy
and idle time, the tail.

Projection.  The task stream holds every fixture task and every unit task with its compute time; with the fixture
dependencies of each unit (``runner.unit_requests``) they form the run's task graph.  ``--project W ...`` list-schedules
that graph on W identical workers (a task is ready when the fixtures it uses are done; ready tasks longest remaining
path first; data transfer and start-up not counted, so the projection is a lower bound) and names the critical path:
the chain of fixture and unit that no number of workers can shorten.  It reads each makespan against the target
(``RATIO`` x the longest task, no task over ``CAP`` s) and says what bounds it: the work (task time / W) or the
longest task.  Then where the work is: task time by kind
(fixture values, checks, controls, probes, probe controls), by claim, and the longest tasks.  ``--project-only`` runs
only the parallel run (the projection of a standard tier needs its task stream, not the serial comparison).
``--keep DIR`` keeps the task stream (``DIR/task-stream.json``); ``--from-stream`` projects a kept stream again
without running anything, and ``--what-if PATTERN=FACTOR`` projects it with the matching tasks sped up or slowed down
(a route measured on its own, read against the target before it is taken; printed as not measured).
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

#: the child process of one run: ``verify``'s executor, with the task stream taken around it on a cluster
CHILD = """
import json, sys
from theorems.claim import Context
from verify import memory_tuning, registry, results
from verify.execution import Executor, execute

if __name__ == "__main__":
    budget, seed, workers, out, stream = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    import torch
    torch.set_num_threads(1)
    memory_tuning.tune_process()
    ctx = Context(seed=seed, budget=budget)
    with Executor(workers=workers) as ex:
        if not ex.distributed:
            execute(list(registry.all_claims()), ctx, out, ex, rerun=True)
            sys.exit(0)
        from distributed import get_task_stream
        ex._start()
        with get_task_stream(client=ex.client) as ts:
            execute(list(registry.all_claims()), ctx, out, ex, rerun=True)
    rows = [{"key": t["key"], "worker": t["worker"], "start": s["start"], "stop": s["stop"]}
            for t in ts.data for s in t.get("startstops", ()) if s.get("action") == "compute"]
    results.atomic_write_text(__import__("pathlib").Path(stream), json.dumps(rows))
"""


def run(budget: str, workers: int, seed: int, out: Path, stream: Path) -> tuple[float, float, str]:
    """Wall time of one run in a child process, its start (epoch seconds) and the CPU time it and its workers took."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    adopt_orphans()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, start = time.perf_counter(), time.time()
    subprocess.run([sys.executable, "-c", CHILD, budget, str(seed), str(workers), str(out), str(stream)], cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL, env=env)
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
    """The CPU time of a finished run and every process it started and reaped: user time (the units' own work) and
    kernel time (page faults, process start-up), and the share of the cores used."""
    user, kernel = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return (f"CPU user {user:.1f} s + kernel {kernel:.1f} s = {user + kernel:.1f} s, "
            f"{100 * (user + kernel) / (wall * (os.cpu_count() or 1)):.0f} % of {os.cpu_count()} cores")


def where_the_time_went(stream: Path, start: float, wall: float, serial_total: float | None) -> list[str]:
    """From the parallel run's task stream: the time before the first task started (process and cluster start-up),
    each worker's busy time and how long it sat idle before the run ended, the time after the last task (records,
    shutdown), and the tasks' total time against the serial run's units (side-by-side slowdown)."""
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
    out = [(f"  where the {wall:.1f} s went: {first - start:.1f} s before the first task (start-up), "
            f"{last - first:.1f} s running tasks, {start + wall - last:.1f} s after the last (records, shut-down)")]
    if serial_total:
        out.append(f"  task time on the cluster {total:.0f} s against {serial_total:.0f} s serial "
                   f"({100 * (total / serial_total - 1):+.0f} % side by side)")
    for w in sorted(busy):
        out.append(f"    worker {w}: busy {busy[w]:.1f} s, idle {last - first - busy[w]:.1f} s "
                   f"(of which {last - ends[w]:.1f} s after its last task)")
    return out


def unit_times(results_dir: Path) -> list[tuple[float, str]]:
    out = []
    for f in (results_dir / "units").rglob("*.json"):
        e = json.loads(f.read_text())
        out.append((float(e["seconds"]), f"{f.parent.parent.name} {e['kind']} {e['name']}"))
    return sorted(out, reverse=True)


# ---------------------------------------------------------------------------
# The projection: list scheduling of the run's task graph
# ---------------------------------------------------------------------------

def task_graph(stream: Path, budget: str) -> tuple[dict[str, float], dict[str, set[str]]]:
    """(seconds per task, the tasks each task waits for) from a run's task stream: fixture tasks are keyed
    ``fixture|name|digest|tag``, unit tasks ``claim|kind|name|budget|seed|tag``; a unit waits for the fixtures
    ``runner.unit_requests`` names (matched by fixture name and the digest of its run key)."""
    import hashlib

    from theorems import fixture as fx
    from theorems.claim import Context
    from verify import registry, runner

    rows = json.loads(stream.read_text())
    seconds: dict[str, float] = {}
    for r in rows:
        name = "|".join(r["key"].split("|")[:-1]) if r["key"].startswith("fixture|") else \
            "|".join(r["key"].split("|")[:3])
        seconds[name] = seconds.get(name, 0.0) + r["stop"] - r["start"]
    seed = next((int(r["key"].split("|")[4][1:]) for r in rows if not r["key"].startswith("fixture|")), 0)
    ctx = Context(seed=seed, budget=budget)

    def node(r: fx.Request) -> str:
        return f"fixture|{r.fixture.short_name}|{hashlib.sha256(repr(fx.run_key(r, ctx)).encode()).hexdigest()[:12]}"

    waits: dict[str, set[str]] = {k: set() for k in seconds}
    for claim in registry.all_claims():
        for u in runner.plan(claim):
            key = f"{u.claim}|{u.kind}|{u.name}"
            if key not in seconds:
                continue
            for r in fx.closure(runner.unit_requests(claim, u).values()):
                waits.setdefault(node(r), set()).update(node(d) for d in r.dependencies().values())
            waits[key] = {node(r) for r in runner.unit_requests(claim, u).values()}
    return seconds, waits


def critical_path(seconds: dict[str, float], waits: dict[str, set[str]]) -> tuple[float, list[str]]:
    """The longest chain of tasks through the graph (seconds, the chain in order)."""
    memo: dict[str, tuple[float, list[str]]] = {}

    def longest(k: str) -> tuple[float, list[str]]:
        if k not in memo:
            before = max((longest(d) for d in waits.get(k, ())), default=(0.0, []), key=lambda x: x[0])
            memo[k] = (before[0] + seconds.get(k, 0.0), before[1] + [k])
        return memo[k]

    return max((longest(k) for k in seconds), key=lambda x: x[0])


def list_schedule(seconds: dict[str, float], waits: dict[str, set[str]], workers: int) -> float:
    """Makespan of the graph on ``workers`` identical workers: ready tasks go to idle workers, longest remaining path
    (the task and everything that waits on it) first."""
    users: dict[str, set[str]] = {k: set() for k in seconds}
    for k, ds in waits.items():
        for d in ds:
            users.setdefault(d, set()).add(k)
    tail: dict[str, float] = {}

    def rest(k: str) -> float:
        if k not in tail:
            tail[k] = seconds.get(k, 0.0) + max((rest(u) for u in users.get(k, ())), default=0.0)
        return tail[k]

    left = {k: len(waits.get(k, set()) & set(seconds)) for k in seconds}
    ready = [(-rest(k), k) for k, n in left.items() if n == 0]
    heapq.heapify(ready)
    running: list[tuple[float, str]] = []
    now, free = 0.0, workers
    while ready or running:
        while ready and free:
            _, k = heapq.heappop(ready)
            heapq.heappush(running, (now + seconds[k], k))
            free -= 1
        now, k = heapq.heappop(running)
        free += 1
        for u in users.get(k, ()):
            if u in left:
                left[u] -= 1
                if left[u] == 0:
                    heapq.heappush(ready, (-rest(u), u))
    return now


def kind_of(task: str) -> str:
    """A task's kind for the breakdown: ``fixture``, ``check``, ``control``, ``probe`` (a probe check) or
    ``probe control`` (a control whose target is a probe: its name starts ``probe``)."""
    parts = task.split("|")
    if parts[0] == "fixture":
        return "fixture"
    kind, name = parts[1], parts[2]
    if kind == "control":
        return "probe control" if name.startswith("probe") else "control"
    return "probe" if name == "probe" else "check"


def where_the_work_is(seconds: dict[str, float], most: int = 12) -> list[str]:
    """Task time by kind, by claim (its units; a fixture is the claims' shared work, listed by name) and the longest
    tasks: what a change to the tier's work would have to move."""
    total = sum(seconds.values()) or 1.0
    by_kind: dict[str, float] = {}
    by_owner: dict[str, float] = {}
    for k, s in seconds.items():
        kind = kind_of(k)
        by_kind[kind] = by_kind.get(kind, 0.0) + s
        owner = f"fixture {k.split('|')[1]}" if k.startswith("fixture|") else k.split("|")[0]
        by_owner[owner] = by_owner.get(owner, 0.0) + s
    out = ["  where the work is (task time): " + ", ".join(
        f"{kind} {s:.0f} s ({100 * s / total:.0f} %)" for kind, s in sorted(by_kind.items(), key=lambda kv: -kv[1]))]
    out.append("    by claim or fixture: " + "; ".join(
        f"{o} {s:.1f} s" for o, s in sorted(by_owner.items(), key=lambda kv: -kv[1])[:most]))
    out.append("    longest tasks: " + "; ".join(
        f"{k} {s:.1f} s" for k, s in sorted(seconds.items(), key=lambda kv: -kv[1])[:most]))
    return out


#: the target a cluster run is read against: on W workers within RATIO x the longest task, no task over CAP seconds
RATIO, CAP = 1.3, 60.0


def against_target(total: float, longest: float, makespans: dict[int, float], ratio: float = RATIO,
                   cap: float = CAP) -> list[str]:
    """The projection read against the target: each makespan as a multiple of the longest task, and what bounds it.
    On W workers no schedule beats ``total / W``, so within ``ratio`` x the longest task needs task time at most
    ``ratio * W * longest``: past that, shortening the critical path cannot help, only less work can."""
    out = [f"  against the target (within {ratio:g}x the longest task, no task over {cap:g} s): longest task "
           f"{longest:.1f} s ({'over' if longest > cap else 'within'} {cap:g} s)"]
    for w, m in makespans.items():
        allowed = ratio * w * longest
        bound = "the work" if total / w >= longest else "the longest task"
        out.append(f"    W = {w:3d}: {m / longest:.2f}x ({'met' if m <= ratio * longest else 'not met'}; bounded by "
                   f"{bound}: task time {total:.0f} s, at most {allowed:.0f} s for {ratio:g}x)")
    return out


def what_if(seconds: dict[str, float], factors: list[tuple[str, float]]) -> dict[str, float]:
    """``seconds`` with each task whose name contains a pattern of ``factors`` ((pattern, factor), the first that
    matches) taking ``factor`` times as long: a route's measured speed-up projected before the route is taken."""
    def factor(name: str) -> float:
        return next((f for pattern, f in factors if pattern in name), 1.0)

    return {k: t * factor(k) for k, t in seconds.items()}


def parse_what_if(text: str) -> tuple[str, float]:
    """``PATTERN=FACTOR`` (e.g. ``|joint_run|=0.667``) as (pattern, factor); argparse's type."""
    pattern, sep, value = text.rpartition("=")
    try:
        factor = float(value)
    except ValueError:
        factor = -1.0
    if not sep or not pattern or not factor >= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected PATTERN=FACTOR with a factor >= 0")
    return pattern, factor


def projection(stream: Path, budget: str, workers: list[int],
               factors: list[tuple[str, float]] | None = None) -> list[str]:
    seconds, waits = task_graph(stream, budget)
    if factors:
        seconds = what_if(seconds, factors)
    total = sum(seconds.values())
    length, path = critical_path(seconds, waits)
    n_fix = sum(k.startswith("fixture|") for k in seconds)
    out = [f"  projection ({len(seconds) - n_fix} units, {n_fix} fixture values, {total:.0f} s of task time; "
           "list scheduling, no start-up or transfer):"]
    if factors:
        out.insert(0, "  WHAT IF (not measured): " + ", ".join(f"tasks matching {p!r} take {f:g}x" for p, f in factors))
    makespans = {w: list_schedule(seconds, waits, w) for w in workers}
    out += [f"    W = {w:3d}: {m:8.1f} s" for w, m in makespans.items()]
    out.append(f"  critical path {length:.1f} s: " + " -> ".join(f"{k} ({seconds.get(k, 0.0):.1f} s)" for k in path))
    out += against_target(total, max(seconds.values(), default=0.0), makespans)
    return out + where_the_work_is(seconds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", default="quick")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, default=None, help="keep both results directories under this directory")
    ap.add_argument("--project", type=int, nargs="*", default=[2, 4, 16, 64],
                    help="worker counts to project the run's task graph onto")
    ap.add_argument("--project-only", action="store_true", help="only the parallel run and its projection")
    ap.add_argument("--from-stream", type=Path, default=None,
                    help="project a task stream kept by an earlier run (--keep DIR: DIR/task-stream.json), run nothing")
    ap.add_argument("--what-if", type=parse_what_if, action="append", default=[], metavar="PATTERN=FACTOR",
                    help="project with the tasks whose name contains PATTERN taking FACTOR times as long (repeatable; "
                         "with --from-stream): a route's measured speed-up read against the target before it is taken")
    args = ap.parse_args()
    if args.what_if and not args.from_stream:
        print("parallel_runner: --what-if reads a kept task stream: add --from-stream DIR/task-stream.json",
              file=sys.stderr)
        return 2
    if args.from_stream:
        if not args.from_stream.is_file():
            print(f"parallel_runner: no task stream at {args.from_stream}", file=sys.stderr)
            return 2
        print("\n".join(projection(args.from_stream, args.budget, args.project, args.what_if)))
        return 0

    from verify import results

    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory()) as tmp:
        one, many = Path(tmp) / "w1", Path(tmp) / f"w{args.workers}"
        stream = Path(tmp) / "task-stream.json"
        if not args.project_only:
            t1, _, cpu1 = run(args.budget, 1, args.seed, one, stream)
        tn, started, cpun = run(args.budget, args.workers, args.seed, many, stream)
        print(f"{args.budget} tier, seed {args.seed}:")
        if not args.project_only:
            view = lambda p: json.dumps(results.replay_view(json.loads(p.read_text())), sort_keys=True)  # noqa: E731
            same = all(view(f) == view(many / f.name) for f in one.glob("*.json"))  # as JSON: NaN equals NaN
            times = unit_times(one)
            secs = [t for t, _ in times]
            print(f"  {len(secs)} units, {sum(secs):.0f} s of unit time serially (fixtures inside their first consumer)")
            print(f"  wall time, 1 worker:  {t1:7.1f} s   {cpu1}")
        print(f"  wall time, {args.workers} workers: {tn:7.1f} s   {cpun}")
        if not args.project_only:
            print(f"  speed-up {t1 / tn:.2f}x (target >= 1.8 on 2 cores)   records identical after replay_view: {same}")
            print("  longest serial units: " + "; ".join(f"{name} {t:.1f} s" for t, name in times[:5]))
        print("\n".join(where_the_time_went(stream, started, tn, None if args.project_only else sum(secs))))
        print("\n".join(projection(stream, args.budget, args.project)))
    return 0 if args.project_only or same else 1


if __name__ == "__main__":
    sys.exit(main())
