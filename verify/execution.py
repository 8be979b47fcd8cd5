"""Where the units run: in this process, on a local Dask cluster, or on a remote Dask scheduler.

The unit of work is one check or one control of one claim at one seed and budget (``runner.Unit``).  An executor runs
the units a command needs and the runner assembles each claim's record from them with the same verdict rules, so a
record does not depend on where its units ran (seeds are derived by hashing: ``Context.generator``).

* ``workers=1`` (no scheduler): every unit in this process, one after another (for debugging).
* ``workers=N``: a ``distributed.LocalCluster`` of N single-threaded worker processes (torch at one thread each),
  started and shut down by the command.  Nothing to install or start by hand.
* ``scheduler=ADDRESS``: an existing Dask scheduler (``dask scheduler`` + ``dask worker ADDRESS`` on machines that
  share this checkout's environment, or dask-jobqueue on Slurm/PBS).

Resume, and no lost work.  Each finished unit is written atomically as it arrives, under
``<results>/units/<claim>/<budget>-seed<seed>-<code hash>-<environment>/``; the claim's record is written as soon as its
last unit is in.  Running the same command again after an interruption (Ctrl-C, SIGTERM, a killed client) redoes only
the missing units.  A worker process killed mid-unit is replaced and the unit re-run elsewhere (Dask reschedules it);
a unit that still fails is reported with its claim, unit and seed, gets an ``inconclusive`` outcome that is not
stored (a rerun tries it again), and never hangs the command.

Shared fixtures (``functools.cache`` in the fixture modules) are computed once per worker process and reused by
every unit that worker runs.  A fixture group's units go to one worker; the groups are handed to workers as they
become idle, longest first, by the times stored from earlier runs in the same results directory, else by the
reference machine's (``unit_seconds.json``).
"""
from __future__ import annotations

import collections
import contextlib
import ctypes
import functools
import hashlib
import importlib
import itertools
import json
import logging
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Callable

from theorems.claim import Claim, Context, Outcome
from verify import registry, results, runner
from verify.runner import Unit

UNITS = "units"
TIMINGS = "timings.json"


# ---------------------------------------------------------------------------
# The unit store
# ---------------------------------------------------------------------------

def _environment_key() -> str:
    """A short digest of what else a unit's outcome may depend on: library versions and the Python."""
    return hashlib.sha256(json.dumps(results.library_versions(), sort_keys=True).encode()).hexdigest()[:8]


def unit_dir(results_dir: Path, claim: Claim, ctx: Context) -> Path:
    examples = "" if ctx.max_examples is None else f"-examples{ctx.max_examples}"
    return (Path(results_dir) / UNITS / claim.id /
            f"{ctx.budget}-seed{ctx.seed}{examples}-{ctx.device}-{registry.code_hash(claim)}-{_environment_key()}")


def unit_path(directory: Path, unit: Unit) -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", unit.name).strip("-")[:40]
    digest = hashlib.sha256(unit.name.encode()).hexdigest()[:8]
    return directory / f"{unit.kind}-{slug}-{digest}.json"


def load_unit(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):  # absent, or cut short by a crash before the atomic rename: redo it
        return None


def save_unit(path: Path, entry: dict) -> None:
    results.atomic_write_text(path, json.dumps(entry, sort_keys=True, default=float))


def _timing_key(ctx: Context, u: Unit) -> str:
    return f"{ctx.budget}|{u.claim}|{u.kind}|{u.name}"


def _load_timings(results_dir: Path) -> dict:
    try:
        return json.loads((Path(results_dir) / UNITS / TIMINGS).read_text())
    except (OSError, json.JSONDecodeError):
        return {}


#: unit seconds measured on the reference machine (2-core VM; quick: one serial run at seed 0, standard: the median
#: over the standard calibration's seeds), keyed like ``timings.json``: the placement's estimates for a results
#: directory that has no timings of its own (a fresh clone).  ``benchmarks/parallel_runner.py --save-estimates``
#: refreshes the quick ones.
ESTIMATES = Path(__file__).with_name("unit_seconds.json")


@functools.cache
def reference_estimates() -> dict:
    try:
        return json.loads(ESTIMATES.read_text())
    except (OSError, json.JSONDecodeError):
        return {}


# ---------------------------------------------------------------------------
# What a worker runs
# ---------------------------------------------------------------------------

_CLAIMS: dict[tuple[str, str], Claim] = {}


def claim_from_module(module: str, claim_id: str) -> Claim:
    """The claim ``claim_id`` defined in ``module`` (a worker imports only that module, not the whole registry)."""
    key = (module, claim_id)
    if key not in _CLAIMS:
        mod = importlib.import_module(module)
        found = list(getattr(mod, "CLAIMS", ())) + ([mod.CLAIM] if hasattr(mod, "CLAIM") else [])
        claim = next(c for c in found if c.id == claim_id)
        object.__setattr__(claim, "module", module)
        _CLAIMS[key] = claim
    return _CLAIMS[key]


#: A worker's event loop runs in its main thread and takes the GIL from the unit running in the worker's task thread
#: each time it wakes.  Dask's sampling profiler wakes it every 10 ms and its monitors every 20-500 ms; sampled
#: (py-spy, session 12) the main thread held the GIL in 18 % of the samples.  Off, or slowed, for the local cluster
#: (passed to its workers by their nannies); measured on two fixture groups side by side, paper B's small-unit groups:
#: unit time 24.5 / 37.8 s with Dask's defaults, 21.0-21.6 / 29.4-31.2 s with these (16.4 / 22.0 s in one process).
QUIET_WORKERS = {
    "distributed.worker.profile.enabled": False,  # the per-task profiles only feed the dashboard, which is off
    "distributed.admin.tick.interval": "1s",  # event-loop health check (20 ms): it only logs a blocked loop
    "distributed.admin.system-monitor.interval": "10s",  # host CPU / memory / network for the dashboard (500 ms)
}

#: The local cluster's workers get no Dask memory limit (``memory_limit=0``): no pausing, spilling or terminating by
#: process memory.  A worker keeps the memory its units free (:func:`keep_freed_memory`), so its RSS stays at its
#: largest unit's peak; Dask pauses a worker above 80 % of its share of RAM and resumes it only when RSS falls, which
#: a worker that keeps its heap never does: a standard calibration (session 14, seed 103) sat idle with one worker
#: paused at 10.1 GB of its 12 GB share, waiting forever (reproduced with a 2 GB limit and one 1.45 GB unit).  The units
#: hold no data for Dask to spill; a worker that exhausts the machine's memory is killed by the kernel, and its unit is
#: rerun elsewhere or reported failed (Dask's allowed failures), never waited on.
WORKER_MEMORY_LIMIT = 0

#: glibc's ``mallopt`` parameters (<malloc.h>)
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
#: free memory at the top of the heap is never given back to the OS (-1: glibc reads the threshold as a size_t, so
#: SIZE_MAX).  It was 1 GiB (session 12): units whose temporaries exceed it (A.L4's oracle, 2.5 GB; A.T1.1's n-law,
#: 6 GB) had theirs returned at every free and faulted in again by the next unit: A.L4's second and third units took
#: 1.7 s each (0.5 M page faults) against 0.7-0.9 s (no faults) with nothing given back (session 13).  A process then
#: keeps its peak heap until it exits: a worker its largest unit's (calibrate restarts the workers at every seed)
NEVER_TRIM = -1
#: the local cluster's workers start with one malloc arena (set in the environment they inherit): their units run
#: in a worker thread, whose own arena would still hand blocks above 64 MiB to mmap (see :func:`keep_freed_memory`)
WORKER_GLIBC_TUNABLES = "glibc.malloc.arena_max=1"


@functools.cache
def keep_freed_memory() -> bool:
    """Make glibc's malloc in this process reuse freed memory instead of returning it to the OS.

    The Monte Carlo checks allocate and free tensors of tens of MB over and over.  glibc serves every block above its
    mmap threshold (at most 32 MiB) with a fresh ``mmap`` and unmaps it when freed, so each batch page-faults its
    memory in again: A.T1.1's n-law check spent 10 s in the kernel against 6.6 s of its own (26 s, 6.3 M page faults,
    session 12), and two such processes side by side contend for the kernel's page lists, which was the +19-22 % unit
    time of two busy Dask workers (README, issue 12).  With ``mmap`` off (``M_MMAP_MAX = 0``) every block comes from the
    heap, and freed memory stays mapped for the next one (:data:`NEVER_TRIM`): the same check takes 6.7 s and 110 k
    faults.  It only changes where memory comes from, never a result.  It also replaces the thresholds Dask's
    nanny gives its workers (``MALLOC_TRIM_THRESHOLD_=65536``).  Called once per process: by ``verify``, by each worker
    before its first unit, by the tests.  True if set (False off glibc, where there is nothing to change)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl, ...)
        return False
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, NEVER_TRIM))


#: what the local cluster's workers import before their first unit: once, in the fork server they are forked from
#: (:func:`start_worker_server`), not once per worker; the claim modules a worker needs it imports on its first unit
WORKER_IMPORTS = ("distributed", "numpy", "torch", "scipy.stats", "sympy", "hypothesis", "verify.execution")


def start_worker_server() -> bool:
    """Start the process the local cluster's workers are forked from (``multiprocessing``'s fork server, Dask's
    ``distributed.worker.multiprocessing-method``), importing :data:`WORKER_IMPORTS` in the background; idempotent.

    With Dask's default (``spawn``) every worker imports torch, scipy, sympy and hypothesis itself, 1.9 s of CPU each
    on the 2-core VM, and touches its own copy of them (0.25 GB private); forked from one server that imported them,
    workers start with them and share their pages (0.04 s, 0.017 GB private).  ``verify`` calls this as soon as it
    knows it will start a local cluster, so the server's imports run beside the claims' own imports in this process.
    False where there is no fork server (Windows): the workers are spawned."""
    import multiprocessing
    import multiprocessing.forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    _worker_environment()  # the server's environment is its workers'
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(WORKER_IMPORTS))
    multiprocessing.forkserver.ensure_running()
    return True


def _worker_environment() -> None:
    """What the local cluster's worker processes inherit: torch single-threaded, one malloc arena."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if "glibc.malloc.arena_max" not in tunables:
        os.environ["GLIBC_TUNABLES"] = ":".join(t for t in (tunables, WORKER_GLIBC_TUNABLES) if t)


#: errors that say this process's torch.func state is broken, not the unit's mathematics.  Seen only in Dask workers,
#: at random (every torch.func unit of one worker at once: A.L10/L14/L19/L23 and B.Fig5-7 at seed 200 of session 7's
#: sweep, B.Fig5-7 in a benchmark of session 8), never in one process; the same units pass on a fresh worker.  Not
#: diagnosed: the worker prints its torch state (:func:`torch_transform_state`) before it exits, for next time.
BROKEN_TORCH_STATE = ("Cannot access storage of BatchedTensorImpl",
                      "Cannot access data pointer of Tensor that doesn't have storage")
#: the exit code of a worker that found its torch state broken (the nanny restarts it; Dask reruns the unit)
BROKEN_TORCH_EXIT = 70


def torch_transform_state() -> dict:
    """This thread's torch.func state: the innermost transform (None outside every transform) and the dispatch keys
    its transforms add; both are empty between units."""
    import torch

    level = torch._C._functorch.peek_interpreter_stack()
    keys = str(torch._C._dispatch_tls_local_include_set())
    return {"transform": None if level is None else str(level.key()),
            "functorch_keys": [k for k in ("FuncTorchDynamicLayerFrontMode", "FuncTorchDynamicLayerBackMode",
                                           "FuncTorchBatched", "FuncTorchGradWrapper") if k in keys]}


def _leave_worker(unit: Unit, ctx: Context, why: str) -> None:
    """Exit this worker process: its nanny starts a fresh one and the scheduler reruns the unit there (a worker's
    death counts against ``distributed.scheduler.allowed-failures``, so a unit that breaks every worker is reported,
    never retried forever)."""
    print(f"verify: worker {os.getpid()} restarts: {unit.label} (seed {ctx.seed}, {ctx.budget}): {why}; torch state "
          f"{torch_transform_state()}", file=sys.stderr, flush=True)
    os._exit(BROKEN_TORCH_EXIT)


def never_pause() -> None:
    """Switch off this Dask worker's pausing by memory (a remote worker's too, whose limits are not ours to set): with
    freed memory kept (:func:`keep_freed_memory`) its RSS never falls, so a pause would never end (see
    :data:`WORKER_MEMORY_LIMIT`).  Its nanny's terminate threshold stays: a worker killed so has its unit rerun
    elsewhere or reported failed, which never hangs the command."""
    from distributed import get_worker

    with contextlib.suppress(ValueError):  # not in a worker (an in-process run): nothing to switch off
        get_worker().memory_manager.memory_pause_fraction = False


def run_unit_task(unit: Unit, ctx: Context) -> dict:
    """One unit on a worker: torch single-threaded (the checks are batched small-tensor work), freed memory reused
    (:func:`keep_freed_memory`).

    A worker whose torch.func state is broken (a transform left open before the unit, or one of
    :data:`BROKEN_TORCH_STATE` raised by it) is replaced by a fresh process that reruns the unit: the outcome would
    describe the process, not the claim, and a record must not depend on where its units ran."""
    import torch

    keep_freed_memory()
    never_pause()
    torch.set_num_threads(int(os.environ.get("VERIFY_TORCH_THREADS", "1")))
    # hypothesis compares Python's global `random` state before and after each draw of a strategy and warns when it
    # moved; in a Dask worker the worker's own threads (heartbeats, retry jitter) move it meanwhile, so the warning
    # fired on our probes' strategies, which do not use `random` (in-process runs keep the warning, so a strategy
    # that did would still show it)
    warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies")
    state = torch_transform_state()
    if state["transform"] is not None or state["functorch_keys"]:
        _leave_worker(unit, ctx, "a torch.func transform was left open before the unit")
    entry = runner.run_unit(claim_from_module(unit.module, unit.claim), unit, ctx)
    error = str((entry.get("details") or {}).get("error", ""))
    if any(m in error for m in BROKEN_TORCH_STATE):
        _leave_worker(unit, ctx, error)
    after = torch_transform_state()
    if after != state:  # this unit left a transform open: name it (the next unit here restarts the worker)
        print(f"verify: worker {os.getpid()}: {unit.label} (seed {ctx.seed}, {ctx.budget}) left torch state {after}",
              file=sys.stderr, flush=True)
    return entry


def _set_up_modules(claim: Claim, root: Path) -> set[str]:
    """The modules whose caches a claim's units fill: the ``*fixtures`` modules of its import closure and its own
    module (two claims defined in one module share its caches, e.g. B.S33 and B.A4)."""
    fixtures = {p.stem for p in registry.import_closure(claim.module, root) if p.stem.endswith("fixtures")}
    return fixtures | {claim.module}


def fixture_groups(claims) -> dict[str, str]:
    """Claim id -> its fixture group: claims sharing a set-up module are in one group, transitively (A.L1 and A.T2
    share ``geometry_fixtures``, A.T2 and A.L5 ``init_fixtures``: one group), so that each set-up is computed on one
    worker, once.  Measured (session 13, quick): with one group per *set* of fixture modules, the geometry set-up was
    computed on both workers, 8 s of a 181 s tier.  The key names the group's fixture modules (or its one claim)."""
    root = Path(importlib.import_module("theorems").__file__).parent.parent
    claims = list(claims)
    uses = {c.id: _set_up_modules(c, root) for c in claims}  # one import-closure walk per claim
    parent: dict[str, str] = {}

    def find(m: str) -> str:
        while parent.setdefault(m, m) != m:
            m = parent[m]
        return m

    for mods in uses.values():
        first, *rest = sorted(mods)
        for m in rest:
            parent[find(m)] = find(first)
    members: dict[str, set[str]] = collections.defaultdict(set)
    for cid, mods in uses.items():
        members[find(next(iter(mods)))].add(cid)
    key = {}
    for cids in members.values():
        fixtures = sorted({m for cid in cids for m in uses[cid] if m.endswith("fixtures")})  # stems, not claim modules
        key.update(dict.fromkeys(cids, "+".join(fixtures) or "+".join(sorted(cids))))
    return key


def group_queue(todo: list[tuple[Claim, Unit]], estimate: Callable[[Unit], float],
                group: dict[str, str]) -> list[list[tuple[Claim, Unit]]]:
    """The units by fixture group (``group``: claim id -> its fixture group), groups longest first by ``estimate``,
    each group's units in ``todo``'s order: the order in which idle workers are given groups."""
    groups: dict[str, list[tuple[Claim, Unit]]] = {}
    for claim, u in todo:
        groups.setdefault(group[claim.id], []).append((claim, u))
    return sorted(groups.values(), key=lambda units: -sum(estimate(u) for _, u in units))


def _failed_entry(claim: Claim, unit: Unit, ctx: Context, error: BaseException) -> dict:
    """The outcome of a unit that could not be run (its worker died repeatedly, the scheduler went away, ...)."""
    why = f"unit failed to run: {type(error).__name__}: {error}"[:500]
    out = Outcome("inconclusive", why, details={"error": why, "raised": True, "unit_failed": True, "seed": ctx.seed})
    return runner.unit_entry(claim, unit, out, 0.0)


# ---------------------------------------------------------------------------
# Executors
# ---------------------------------------------------------------------------

#: seconds a restart of the local cluster's workers (``Executor.fresh_workers``) may take before the cluster is
#: replaced: a worker starts (torch imported) in ~5 s on the 2-core VM
RESTART_TIMEOUT = 60


class Executor:
    """Runs units; a context manager that starts (and stops) the Dask cluster or connects to a scheduler."""

    def __init__(self, workers: int | None = None, scheduler: str | None = None):
        self.workers = workers or os.cpu_count() or 1
        self.scheduler = scheduler
        self.client = None
        self._stack = contextlib.ExitStack()

    @property
    def distributed(self) -> bool:
        return self.scheduler is not None or self.workers > 1

    @property
    def local_cluster(self) -> bool:
        """Whether the units run on a local cluster this executor starts (its workers forked from the fork server)."""
        return self.scheduler is None and self.workers > 1

    def __enter__(self) -> "Executor":
        return self

    def _start(self) -> None:
        """Start the local cluster, or connect to the scheduler: on the first units to run (nothing to run, no cluster)."""
        if self.client is not None:
            return
        import dask
        from distributed import Client, LocalCluster

        try:
            if self.scheduler:
                timeout = os.environ.get("VERIFY_SCHEDULER_TIMEOUT", "20s")
                self.client = self._stack.enter_context(Client(self.scheduler, timeout=timeout))
            else:
                _worker_environment()  # inherited by the worker processes this cluster starts
                # this process's local workers, restarted ones too (``fresh_workers``), are forked from the fork
                # server (already running if ``verify`` started it early), where there is one
                method = "forkserver" if start_worker_server() else "spawn"
                dask.config.set({"distributed.worker.multiprocessing-method": method})
                # no work stealing: the units are placed by fixture group (``run``), and a stolen unit recomputes its
                # group's shared set-up on the thief (measured: A.Fig2's control stolen from A.Fig1's worker took
                # 37 s instead of 0.01 s; quick tier 288 s with stealing, 215 s without, with the same placement).
                # Set for this scheduler only (it runs in this process and reads the key when it starts);
                # ``distributed`` is imported above, so leaving the ``with`` restores its config section.
                with dask.config.set({"distributed.scheduler.work-stealing": False, **QUIET_WORKERS}):
                    cluster = self._stack.enter_context(LocalCluster(
                        n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        memory_limit=WORKER_MEMORY_LIMIT,
                        # this process's environment now, as a spawned worker would inherit it: a forked one would
                        # otherwise have the fork server's, frozen when it started (start_worker_server)
                        env=dict(os.environ),
                        # no dashboard, but the scheduler's HTTP routes still listen: on a free port, not 8787, so two
                        # commands (or two test workers) side by side do not warn "Port 8787 is already in use"
                        scheduler_kwargs={"dashboard_address": ":0"},
                        # CRITICAL: a worker restarted between seeds (fresh_workers) logs its lost heartbeat as an
                        # ERROR with a traceback; a unit's own failure or a lost worker is reported by the runner
                        silence_logs=logging.CRITICAL))
                self.client = self._stack.enter_context(Client(cluster))
        except (OSError, TimeoutError) as e:  # no scheduler at that address, or no process could start
            self._stack.close()
            raise ValueError(f"cannot reach the Dask scheduler at {self.scheduler}: {e}" if self.scheduler
                             else f"cannot start a local Dask cluster: {e}") from None

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def fresh_workers(self) -> None:
        """Restart the local cluster's worker processes (between the seeds of a calibration).

        Shared set-ups are cached per run (seed, budget) in the worker processes, which is what lets a run's units
        share them; a worker kept across many seeds keeps every seed's: one reached 10 GB after 12 quick seeds, where
        Dask's memory manager paused it and the command waited forever (pausing is now off, :data:`WORKER_MEMORY_LIMIT`,
        so it would grow until the kernel killed it).  Fresh processes bound memory by one run.
        (Clearing the caches in place instead broke torch.func state in the gradient claims: hard errors.)  A remote
        scheduler's workers are not ours to restart; in-process runs keep their caches."""
        if self.client is None or self.scheduler is not None:
            return
        try:
            self.client.restart(timeout=RESTART_TIMEOUT)
        except (TimeoutError, OSError):
            # workers that do not come back (seen once, session 10: 2 of 2 missing after 120 s, which ended a
            # calibration with a traceback): stop this cluster; the next units start a new one (``_start``)
            self._stack.close()
            self._stack, self.client = contextlib.ExitStack(), None

    def run(self, todo: list[tuple[Claim, Unit]], ctx: Context, on_done: Callable[[Claim, Unit, dict, bool], None],
            progress: Callable[[str], None] = lambda s: None,
            estimate: Callable[[Unit], float] = lambda u: 1.0) -> None:
        """Run every unit of ``todo`` and call ``on_done(claim, unit, entry, ok)`` as each finishes (any order).

        On a cluster, the units of one fixture group (:func:`fixture_groups`) go to one worker, the groups handed to
        idle workers longest first by ``estimate`` (seconds, from earlier runs) (:meth:`_collect`); the placement is a
        preference, not a restriction (``allow_other_workers``): a dead worker's units run elsewhere (and on a remote
        scheduler with work stealing on, an idle worker may take queued units; the local cluster has it off)."""
        if not todo:
            return
        if not self.distributed:
            for claim, u in todo:
                progress(u.label)
                on_done(claim, u, runner.run_unit(claim, u, ctx), True)
            return
        self._start()
        claims = {claim.id: claim for claim, _ in todo}
        group = fixture_groups(claims.values())
        with self._task_stream():
            self._collect(group_queue(todo, estimate, group), ctx, on_done, progress)

    @contextlib.contextmanager
    def _task_stream(self):
        """With ``VERIFY_TASK_STREAM=FILE``, the units' compute intervals per worker as Dask's scheduler saw them
        (key, worker, start, stop; epoch seconds) go to FILE as JSON: ``benchmarks/parallel_runner.py`` reads them to
        say where a parallel run's wall time went (start-up, each worker's busy and idle time, the tail)."""
        path = os.environ.get("VERIFY_TASK_STREAM")
        if not path:
            yield
            return
        from distributed import get_task_stream

        with get_task_stream(client=self.client) as ts:
            yield
        rows = [{"key": t["key"], "worker": t["worker"], "start": s["start"], "stop": s["stop"]}
                for t in ts.data for s in t.get("startstops", ()) if s.get("action") == "compute"]
        results.atomic_write_text(Path(path), json.dumps(rows))

    def _collect(self, queue: list[list[tuple[Claim, Unit]]], ctx: Context, on_done, progress) -> None:
        """Give each idle worker the next group of ``queue`` and hand each unit's entry to ``on_done`` as it completes
        (a failed unit gets an inconclusive entry).

        List scheduling, longest group first: a worker gets its next group when it has finished its last, so the
        workers end together however far the stored times are off (placing every group up front by them left one
        worker idle 14-62 s of a 130-180 s quick tier, sessions 11-12).  A group goes to one worker, so its set-ups
        are computed once; ``allow_other_workers``: a dead worker's units run elsewhere, and the units of a group
        given to a worker that has since died count as finished when they have run wherever Dask put them."""
        from distributed import as_completed

        queue = collections.deque(queue)
        futures: dict = {}  # future -> (claim, unit, the worker it was given to)
        given: collections.Counter = collections.Counter()  # worker -> its units not yet finished
        pending = collections.Counter(u.claim for units in queue for _, u in units)  # claim -> units not finished
        done = as_completed()
        order = itertools.count()

        def dispatch() -> None:
            for w in sorted(self.client.scheduler_info()["workers"]):
                if queue and not given[w]:
                    for claim, u in queue.popleft():
                        # a worker runs its units in the order given, as the serial run does (the order decides which
                        # unit fills a shared cache; measured: A.L4's units took 8.3 s in Dask's default order, units
                        # submitted together last-in first-out, against 5.7 s in this one)
                        f = self.client.submit(run_unit_task, u, ctx, pure=False, retries=1, workers=[w],
                                               allow_other_workers=True, priority=-next(order),
                                               key=f"{u.claim}|{u.kind}|{u.name}|{ctx.budget}|s{ctx.seed}|"
                                                   f"{os.urandom(4).hex()}")
                        futures[f] = (claim, u, w)
                        given[w] += 1
                        done.add(f)

        while queue or futures:
            dispatch()
            if not futures:  # no worker at all just now: local ones restarting, or none has joined the scheduler yet
                if self.scheduler:
                    print(f"verify: waiting for a Dask worker to join {self.scheduler}", file=sys.stderr)
                try:
                    self.client.wait_for_workers(1, timeout=None if self.scheduler else RESTART_TIMEOUT)
                except TimeoutError:
                    raise ValueError(f"no Dask worker came back within {RESTART_TIMEOUT} s") from None
                continue
            for f in done:
                claim, u, w = futures.pop(f)
                given[w] -= 1
                pending[u.claim] -= 1
                try:
                    entry, ok = f.result(), True
                except Exception as e:  # noqa: BLE001 -- a unit that cannot run is reported, never hangs the command
                    entry, ok = _failed_entry(claim, u, ctx, e), False
                    print(f"verify: unit failed: {u.label} (seed {ctx.seed}, {ctx.budget}): {type(e).__name__}: {e}",
                          file=sys.stderr)
                on_done(claim, u, entry, ok)
                if queue and not given[w]:
                    dispatch()
                running = sorted(c for c in pending if pending[c])
                progress(", ".join(running[:3]) + (" …" if len(running) > 3 else ""))


def execute(claims: list[Claim], ctx: Context, results_dir: Path, executor: Executor | None = None, *,
            reuse_records: bool = False, rerun: bool = False, kinds: set[str] | None = None,
            bar_label: str | None = None, write_records: bool = True) -> tuple[list[dict], dict]:
    """Run (or reuse) what ``claims`` need and return their records, in order, and what was done.

    ``reuse_records``: a stored claim record with the same code, seed, budget and kinds is used as it is (``verify
    report``).  Units stored by an earlier (possibly interrupted) run of the same code, seed and budget are reused
    unless ``rerun``.  The second value counts ``{"ran": ..., "reused": ..., "failed": ...}`` units.
    """
    results_dir = Path(results_dir)
    executor = executor or Executor(workers=1)
    stored = {r["claim"]["id"]: r for r in results.read_records(results_dir)} if reuse_records else {}
    want_kinds = sorted(kinds) if kinds else "all"
    records: dict[str, dict] = {}
    have: dict[str, dict[Unit, dict]] = {}
    todo: list[tuple[Claim, Unit]] = []
    counts = {"ran": 0, "reused": 0, "failed": 0}

    def finish(claim: Claim) -> None:
        rec = runner.assemble(claim, ctx, have[claim.id], kinds)
        if write_records:
            results.write_record(results_dir, rec)
        records[claim.id] = rec

    for c in claims:
        r = stored.get(c.id)
        if (r and r["seed"] == ctx.seed and r["budget"] == ctx.budget and r["kinds"] == want_kinds
                and r["code_hash"] == registry.code_hash(c)):
            records[c.id] = r
            continue
        have[c.id] = {}
        directory = unit_dir(results_dir, c, ctx)
        for u in runner.plan(c, kinds):
            entry = None if rerun else load_unit(unit_path(directory, u))
            if entry is None:
                todo.append((c, u))
            else:
                have[c.id][u] = entry
                counts["reused"] += 1
        if len(have[c.id]) == len(runner.plan(c, kinds)):
            finish(c)

    timings = _load_timings(results_dir)
    reference = reference_estimates()

    def estimate(u: Unit, unknown: float = 1.0) -> float:  # this directory's own times, else the reference machine's
        key = _timing_key(ctx, u)
        return timings.get(key, reference.get(key, unknown))

    todo.sort(key=lambda cu: -estimate(cu[1], float("inf")))  # longest (or unknown) first

    def on_done(claim: Claim, u: Unit, entry: dict, ok: bool) -> None:
        if ok:
            save_unit(unit_path(unit_dir(results_dir, claim, ctx), u), entry)
            timings[_timing_key(ctx, u)] = entry.get("seconds", 0.0)
            counts["ran"] += 1
        else:
            counts["failed"] += 1
        have[claim.id][u] = entry
        bar.update(1)
        if len(have[claim.id]) == len(runner.plan(claim, kinds)):
            finish(claim)

    bar = progress_bar(len(todo), bar_label or f"units ({ctx.budget}, seed {ctx.seed})")
    try:
        executor.run(todo, ctx, on_done, progress=lambda s: bar.set_postfix_str(s[:60]), estimate=estimate)
    finally:
        bar.close()
        if counts["ran"]:
            results.atomic_write_text(results_dir / UNITS / TIMINGS, json.dumps(timings, indent=0, sort_keys=True))
    return [records[c.id] for c in claims], counts


def progress_bar(total: int, desc: str):
    """One tqdm bar over units (on a terminal), its postfix naming the claims still running."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="unit", file=sys.stderr, dynamic_ncols=True,
                disable=None if total else True)
