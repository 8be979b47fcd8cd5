"""Where the units run: in this process, on a local Dask cluster, or on a remote Dask scheduler (docs/running.md).

A unit is one check or one control of one claim at one seed and budget (``runner.Unit``); what units share is a
fixture (``theorems.fixture``).  In one process, fixture values live in one :class:`theorems.fixture.Memo` per run,
each dropped after its last consumer.  On Dask, every fixture value is one task and every unit a task that takes the
values it uses: Dask computes each (fixture, parameters, run) once, places units near their inputs and frees a value
after its last consumer.  Either way the runner assembles the same records (seeds are derived by hashing).  A command
of several executions over the same runs (a sensitivity map's two phases) may pass a ``verify.value_store`` store:
the values it keeps are then read from disk instead of computed again.

Each finished unit is written atomically as it arrives (``results.unit_dir``), so the same command after an
interruption redoes only the missing ones; a unit whose worker dies is rerun elsewhere, and one that still fails is
reported, gets an ``inconclusive`` outcome that is not stored, and never hangs the command.

The tasks a Dask worker runs are ``verify.worker``'s; the progress shown while units run is ``verify.progress``'s.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Callable, Mapping

from theorems import fixture as fx
from theorems.claim import Claim, Context, Outcome
from verify import memory_tuning, registry, results, runner
from verify.progress import progress_bar
from verify.runner import Unit
from verify.value_store import StoredMemo, ValueStore
from verify.worker import fixture_task, stored_fixture_task, unit_task

# ---------------------------------------------------------------------------
# Units that could not be run
# ---------------------------------------------------------------------------

def _has_failed_units(record: dict) -> bool:
    """Whether a stored record holds a unit that could not be run: such a record is redone, never reused (its
    failed units were not stored, so a rerun computes just those)."""
    return any((e.get("details") or {}).get("unit_failed") for e in record["checks"] + record["controls"])


def _failed_entry(claim: Claim, unit: Unit, ctx: Context, error: BaseException) -> dict:
    """The outcome of a unit that could not be run (its worker died repeatedly, the scheduler went away, ...)."""
    why = f"unit failed to run: {type(error).__name__}: {error}"[:500]
    out = Outcome("inconclusive", why, details={"error": why, "raised": True, "unit_failed": True, "seed": ctx.seed})
    return runner.unit_entry(claim, unit, out, 0.0)


# ---------------------------------------------------------------------------
# Executors
# ---------------------------------------------------------------------------

#: what the local cluster's workers import before their first unit: once, in the fork server they are forked from
#: (:func:`start_worker_server`); spawned, each worker imported them itself (1.9 s of CPU and 0.25 GB private each
#: on a 2-core VM, against 0.04 s and 0.017 GB forked)
WORKER_IMPORTS = ("distributed", "numpy", "torch", "scipy.stats", "sympy", "hypothesis", "verify.worker")

#: Dask's sampling profiler and monitors wake a worker's event loop, which then takes the GIL from the running unit
#: (18 % of py-spy's samples); off, or slowed, for the local cluster, which has no dashboard to feed
QUIET_WORKERS = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "10s",
}


def start_worker_server() -> bool:
    """Start the fork server the local cluster's workers are forked from, importing :data:`WORKER_IMPORTS` in the
    background (idempotent; ``verify`` calls it early, so the imports overlap its own).  False where there is none
    (Windows): the workers are spawned.

    The server starts with SIGINT ignored, and so do the workers forked from it: Ctrl-C reaches every process of the
    terminal's process group, and a worker (or the server, importing) that took it would print a traceback of its own
    while the command is already stopping its cluster in order and saying in one line what was kept."""
    import multiprocessing
    import multiprocessing.forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    memory_tuning.worker_environment()  # the server's environment is its workers'
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(WORKER_IMPORTS))
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set a handler
        multiprocessing.forkserver.ensure_running()
        return True
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited through exec, kept by the server's Python
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)
    return True


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
        """Whether the units run on a local cluster this executor starts."""
        return self.scheduler is None and self.workers > 1

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not KeyboardInterrupt or threading.current_thread() is not threading.main_thread():
            self._stack.close()
            return
        # interrupted: a second Ctrl-C while the cluster stops would leave its workers behind; take no more
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self._stack.close()
        finally:
            signal.signal(signal.SIGINT, previous)

    def _start(self) -> None:
        """Start the local cluster, or connect to the scheduler, on the first units to run."""
        if self.client is not None:
            return
        import dask
        from distributed import Client, LocalCluster

        try:
            if self.scheduler:
                timeout = os.environ.get("VERIFY_SCHEDULER_TIMEOUT", "20s")
                self.client = self._stack.enter_context(Client(self.scheduler, timeout=timeout))
                if not self.client.scheduler_info()["workers"]:  # tasks would queue silently: say why nothing runs
                    print(f"verify: waiting for a Dask worker to join {self.scheduler}", file=sys.stderr, flush=True)
                    self.client.wait_for_workers(1)
                return
            memory_tuning.worker_environment()
            method = "forkserver" if start_worker_server() else "spawn"
            with dask.config.set({"distributed.worker.multiprocessing-method": method, **QUIET_WORKERS}):
                cluster = self._stack.enter_context(LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                    env=dict(os.environ),  # as now, not as the fork server's environment was when it started
                    scheduler_kwargs={"dashboard_address": ":0"},  # two commands side by side: no port clash
                    silence_logs=logging.CRITICAL, **memory_tuning.cluster_options()))
            self.client = self._stack.enter_context(Client(cluster))
        except (OSError, TimeoutError) as e:  # no scheduler at that address, or no process could start
            self._stack.close()
            raise ValueError(f"cannot reach the Dask scheduler at {self.scheduler}: {e}" if self.scheduler
                             else f"cannot start a local Dask cluster: {e}") from None

    def run(self, todo: list[tuple[Claim, Unit, Context]], on_done: Callable[[Claim, Unit, dict, bool], None],
            progress: Callable[[str], None] = lambda s: None, store: ValueStore | None = None) -> None:
        """Run every unit of ``todo`` (each with the run it belongs to) and call ``on_done(claim, unit, entry, ok)`` as
        each finishes (any order).  Units of different runs (seeds) may be mixed: fixture values are per run.  With a
        ``store`` (``verify.value_store``), the fixture values it keeps are read from it and written to it (in this
        process or on a local cluster; a remote scheduler's workers may not see its directory, so there it is
        unused)."""
        if not todo:
            return
        if not self.distributed:
            by_run: dict[Context, list[tuple[Claim, Unit]]] = {}
            for claim, u, ctx in todo:
                by_run.setdefault(ctx, []).append((claim, u))
            for ctx, units in by_run.items():
                memo = fx.Memo(ctx) if store is None else StoredMemo(ctx, store)
                memo.expect(r for claim, u in units for r in runner.unit_requests(claim, u).values())
                for claim, u in units:
                    progress(u.label)
                    on_done(claim, u, runner.run_unit(claim, u, ctx, memo), True)
                    memo.release(runner.unit_requests(claim, u).values())
            return
        self._start()
        self._collect(self._submit(todo, store if self.local_cluster else None), on_done, progress)

    def _submit(self, todo: list[tuple[Claim, Unit, Context]], store: ValueStore | None = None) -> dict:
        """One task per fixture value (per run key) and one per unit, taking its fixtures' futures as inputs.  The
        fixture futures are not kept here: Dask frees each value once its last consumer has run.  A value kept in
        ``store`` is a task that reads it, with no inputs (what it was computed from is not computed again)."""
        tag = os.urandom(4).hex()  # this call's keys: never a value of another run or command
        values: dict[tuple, object] = {}

        def future_of(r: fx.Request, ctx: Context):
            k = fx.run_key(r, ctx)
            if k not in values:
                digest = hashlib.sha256(repr(k).encode()).hexdigest()[:12]
                key = f"fixture|{r.fixture.short_name}|{digest}|{tag}"
                path = store.path(r, ctx) if store is not None else None
                if path is not None and path.exists():
                    values[k] = self.client.submit(stored_fixture_task, path, pure=False, retries=1, key=key)
                else:
                    deps = {name: future_of(d, ctx) for name, d in r.dependencies().items()}
                    values[k] = self.client.submit(fixture_task, r, fx.fixture_context(ctx), deps, path, pure=False,
                                                   retries=1, key=key)
            return values[k]

        futures = {}
        for claim, u, ctx in todo:
            inputs = {name: future_of(r, ctx) for name, r in runner.unit_requests(claim, u).items()}
            f = self.client.submit(unit_task, u, ctx, inputs, pure=False, retries=1,
                                   key=f"{u.claim}|{u.kind}|{u.name}|{ctx.budget}|s{ctx.seed}|{tag}")
            futures[f] = (claim, u, ctx)
        return futures

    def _collect(self, futures: dict, on_done, progress) -> None:
        """Hand each unit's entry to ``on_done`` as it completes (a unit that failed gets an inconclusive entry)."""
        from distributed import as_completed

        pending: dict[str, int] = {}
        for _, u, _ in futures.values():
            pending[u.claim] = pending.get(u.claim, 0) + 1
        for f in as_completed(list(futures)):
            claim, u, ctx = futures.pop(f)
            try:
                entry, ok = f.result(), True
            except Exception as e:  # noqa: BLE001 -- a unit that cannot run is reported, never hangs the command
                entry, ok = _failed_entry(claim, u, ctx, e), False
                print(f"verify: unit failed: {u.label} (seed {ctx.seed}, {ctx.budget}): {type(e).__name__}: {e}",
                      file=sys.stderr)
            f.release()
            on_done(claim, u, entry, ok)
            pending[u.claim] -= 1
            running = sorted(c for c, n in pending.items() if n)
            progress(", ".join(running[:3]) + (" …" if len(running) > 3 else ""))


def reusable_records(claims: list[Claim], ctx: Context | Mapping[str, Context], results_dir: Path,
                     kinds: set[str] | None = None) -> dict[str, dict]:
    """The stored records of ``claims`` that ``execute(..., reuse_records=True)`` uses as they are (same code, seed,
    budget and kinds, no unit that could not run), by claim id.  Reading them writes nothing, so a command whose
    every record is here needs no writable results directory."""
    run_of = runner.run_of(ctx)
    stored = {r["claim"]["id"]: r for r in results.read_records(results_dir)} if Path(results_dir).is_dir() else {}
    want_kinds = sorted(kinds) if kinds else "all"
    out = {}
    for c in claims:
        run, r = run_of(c), stored.get(c.id)
        if (r and r["seed"] == run.seed and r["budget"] == run.budget and r["kinds"] == want_kinds
                and r["code_hash"] == registry.code_hash(c) and not _has_failed_units(r)):
            out[c.id] = r
    return out


def execute(claims: list[Claim], ctx: Context | Mapping[str, Context], results_dir: Path,
            executor: Executor | None = None, *, reuse_records: bool = False, rerun: bool = False,
            kinds: set[str] | None = None, bar_label: str | None = None,
            write_records: bool = True) -> tuple[list[dict], dict]:
    """Run (or reuse) what ``claims`` need and return their records, in order, and what was done.

    ``ctx`` is the run (seed, budget, device) of every claim, or a run per claim id (a confirmation calibration runs
    each claim at seeds its own code derives; the units of all of them share the executor).  ``reuse_records``: a
    stored claim record with the same code, seed, budget and kinds is used as it is (``verify report``).  Units stored
    by an earlier (possibly interrupted) run of the same code, seed and budget are reused unless ``rerun``.  The second
    value counts ``{"ran": ..., "reused": ..., "failed": ...}`` units.
    """
    results_dir = Path(results_dir)
    executor = executor or Executor(workers=1)
    run_of = runner.run_of(ctx)
    reused = reusable_records(claims, ctx, results_dir, kinds) if reuse_records else {}
    records: dict[str, dict] = {}
    have: dict[str, dict[Unit, dict]] = {}
    planned: dict[str, int] = {}
    todo: list[tuple[Claim, Unit, Context]] = []
    counts = {"ran": 0, "reused": 0, "failed": 0}

    def finish(claim: Claim) -> None:
        rec = runner.assemble(claim, run_of(claim), have[claim.id], kinds)
        if write_records:
            results.write_record(results_dir, rec)
        records[claim.id] = rec

    for c in claims:
        run = run_of(c)
        if c.id in reused:
            records[c.id] = reused[c.id]
            continue
        have[c.id] = {}
        directory = results.unit_dir(results_dir, c, run)
        units = runner.plan(c, kinds)
        planned[c.id] = len(units)
        for u in units:
            entry = None if rerun else results.load_unit(results.unit_path(directory, u))
            if entry is None:
                todo.append((c, u, run))
            else:
                have[c.id][u] = entry
                counts["reused"] += 1
        if len(have[c.id]) == planned[c.id]:
            finish(c)

    def on_done(claim: Claim, u: Unit, entry: dict, ok: bool) -> None:
        if ok:
            results.save_unit(results.unit_path(results.unit_dir(results_dir, claim, run_of(claim)), u), entry)
            counts["ran"] += 1
        else:
            counts["failed"] += 1
        have[claim.id][u] = entry
        bar.update(1)
        if len(have[claim.id]) == planned[claim.id]:
            finish(claim)

    if bar_label is None:
        runs = {(run_of(c).budget, run_of(c).seed) for c in claims}
        bar_label = "units ({}, seed {})".format(*runs.pop()) if len(runs) == 1 else "units"
    bar = progress_bar(len(todo), bar_label)
    try:
        executor.run(todo, on_done, progress=lambda s: bar.set_postfix_str(s[:60]))
    except KeyboardInterrupt:  # the command's one line says what was kept; a last progress line would be a second
        bar.leave = False
        raise
    finally:
        bar.close()
    return [records[c.id] for c in claims], counts

