"""The execution layer (verify.execution): Dask workers give the serial records; resume; a killed worker or client
loses no finished work; a remote scheduler; a unit that cannot run is reported and never hangs the command."""
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


import toy_claims
from theorems.claim import Context
from verify import execution, registry, results, runner
from verify.execution import Executor, execute, fixture_groups, group_queue, keep_freed_memory

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "VERIFY_TORCH_THREADS": "1"}


def _units(results_dir: Path) -> list[Path]:
    return sorted((results_dir / "units").rglob("*-*.json"))


def test_two_workers_give_the_serial_records(tmp_path, monkeypatch):
    claims = [registry.get(i) for i in ("A.L5", "B.L7")]
    ctx = Context(seed=0, budget="quick")
    serial, _ = execute(claims, ctx, tmp_path / "w1", Executor(workers=1))
    stream = tmp_path / "stream.json"
    monkeypatch.setenv("VERIFY_TASK_STREAM", str(stream))  # the benchmark's timeline: every unit, on a worker
    with Executor(workers=2) as ex:
        dist, counts = execute(claims, ctx, tmp_path / "w2", ex)
        # each worker reuses freed memory (see keep_freed_memory) and has one malloc arena (its environment)
        # (keep_freed_memory runs once per process: its cache holds an entry once a unit has called it)
        state = ex.client.run(lambda: (keep_freed_memory.cache_info().currsize, os.environ.get("GLIBC_TUNABLES")))
        if sys.platform.startswith("linux"):
            assert all(n == 1 and "glibc.malloc.arena_max=1" in t for n, t in state.values()), state
        # ... so no Dask memory limit: a worker's RSS stays at its largest unit's peak, and one paused above 80 % of a
        # limit would never resume (a standard calibration hung so, session 14; see WORKER_MEMORY_LIMIT)
        limits = ex.client.run(lambda dask_worker: dask_worker.memory_manager.memory_limit)
        assert all(v is None for v in limits.values()), limits
        # ... and forked from one fork server that imported torch & co. once (start_worker_server), not spawned by
        # this process, each importing them itself
        if "forkserver" in multiprocessing.get_all_start_methods():
            parents = set(ex.client.run(os.getppid).values())
            assert len(parents) == 1 and os.getpid() not in parents, parents
    assert counts["ran"] == sum(len(c.checks) + len(c.controls) for c in claims)
    assert [results.replay_view(r) for r in dist] == [results.replay_view(r) for r in serial]
    rows = json.loads(stream.read_text())
    assert len(rows) == counts["ran"] and all(r["start"] <= r["stop"] and r["worker"] for r in rows)


def test_a_worker_killed_mid_unit_is_replaced_and_every_record_is_complete(tmp_path):
    ctx = Context(seed=1, budget="quick")
    with Executor(workers=2) as ex:
        ex._start()
        pids = list(ex.client.run(os.getpid).values())
        killer = threading.Timer(1.0, lambda: os.kill(pids[0], signal.SIGKILL))
        killer.start()
        recs, counts = execute(toy_claims.GOOD, ctx, tmp_path, ex)
        killer.join()
    assert counts["failed"] == 0 and counts["ran"] == 32
    assert all(r["verdict"] == "verified" for r in recs)
    for r in recs:  # every unit exactly once in its record
        assert [c["name"] for c in r["checks"]] == ["a", "b"] and len(r["controls"]) == 2
    serial, _ = execute(toy_claims.GOOD, ctx, tmp_path / "serial", Executor(workers=1))
    assert [results.replay_view(r) for r in recs] == [results.replay_view(r) for r in serial]


DRIVER = """
import sys, toy_claims
from theorems.claim import Context
from verify.execution import Executor, execute
with Executor(workers=int(sys.argv[2])) as ex:
    execute(toy_claims.GOOD, Context(seed=2), sys.argv[1], ex)
"""


def test_an_interrupted_run_resumes_without_recomputing_finished_units(tmp_path):
    out = tmp_path / "res"
    p = subprocess.Popen([sys.executable, "-c", DRIVER, str(out), "2"], env=ENV, start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while len(_units(out)) < 6 and time.time() < deadline and p.poll() is None:
        time.sleep(0.1)
    os.killpg(p.pid, signal.SIGKILL)  # the client and its local cluster, at once
    p.wait()
    done = {f: f.stat().st_mtime_ns for f in _units(out)}
    assert 6 <= len(done) < 32, "the run was not interrupted mid-way"
    recs, counts = execute(toy_claims.GOOD, Context(seed=2), out, Executor(workers=1))
    assert counts["reused"] == len(done) and counts["ran"] == 32 - len(done)
    assert all(f.stat().st_mtime_ns == t for f, t in done.items())  # finished units were not recomputed
    fresh, _ = execute(toy_claims.GOOD, Context(seed=2), tmp_path / "fresh", Executor(workers=1))
    assert [results.replay_view(r) for r in recs] == [results.replay_view(r) for r in fresh]


def test_a_unit_that_cannot_run_is_reported_and_does_not_hang(tmp_path, capsys):
    import dask
    import distributed  # noqa: F401 -- before config.set: see below

    # distributed must be imported (its config defaults loaded) before dask.config.set names a key under it: if the
    # "distributed" section did not exist yet, leaving the `with` deletes the whole section, and every later Dask call
    # in this process fails with KeyError('distributed') (it made the unreachable-scheduler test below flaky).
    # the unit kills every worker that runs it; after the allowed failures Dask gives up on it (and may take a unit
    # that was queued on the same dying worker with it: those are reported too, and a rerun retries them)
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), Executor(workers=2) as ex:
        recs, counts = execute([toy_claims.CRASHING], Context(seed=3), tmp_path, ex)
    assert counts["failed"] >= 1 and counts["ran"] + counts["failed"] == 4
    assert recs[0]["verdict"] == "inconclusive" and "failed to run" in recs[0]["reason"]
    assert "unit failed: T.99 a (seed 3, quick)" in capsys.readouterr().err
    stored = _units(tmp_path)
    assert len(stored) == counts["ran"] and not any("check-a-" in f.name for f in stored)  # a rerun retries it


def test_a_worker_with_broken_torch_state_is_replaced_and_the_unit_rerun(tmp_path, capfd, monkeypatch):
    # the error torch.func raised at random in Dask workers (verify.execution.BROKEN_TORCH_STATE): the unit's outcome
    # would describe the process, so the worker leaves and a fresh one reruns the unit; the record is the serial one
    marker = tmp_path / "raised-once"
    monkeypatch.setenv("TOY_BROKEN_ONCE_MARKER", str(marker))  # before the cluster starts: its workers inherit it
    # spawned workers, whose stderr is this test's (capfd): a fork server started by an earlier test would give its
    # workers the stderr it had then (in a `verify` command it is the command's own)
    monkeypatch.setattr(execution, "start_worker_server", lambda: False)
    claim = toy_claims.BROKEN_ONCE
    with Executor(workers=2) as ex:
        recs, counts = execute([claim], Context(seed=4), tmp_path / "w2", ex)
    assert marker.exists() and counts["failed"] == 0
    assert recs[0]["verdict"] == "verified", recs[0]["reason"]
    assert "restarts: T.98 a (seed 4, quick): NotImplementedError: Cannot access storage" in capfd.readouterr().err
    serial, _ = execute([claim], Context(seed=4), tmp_path / "w1", Executor(workers=1))  # the marker exists now
    assert results.replay_view(recs[0]) == results.replay_view(serial[0])


def test_a_restart_whose_workers_do_not_return_starts_a_new_cluster(tmp_path, monkeypatch):
    # between calibration seeds the workers are restarted; once (session 10) they did not come back in 120 s and the
    # calibration ended in a traceback: now the cluster is replaced and the next seed runs on the new one
    claims = toy_claims.GOOD[:2]
    with Executor(workers=2) as ex:
        execute(claims, Context(seed=1), tmp_path / "s1", ex)
        first = ex.client

        def no_return(*args, **kwargs):
            raise TimeoutError("Waited for 2 worker(s) to reconnect after restarting")
        monkeypatch.setattr(first, "restart", no_return)
        ex.fresh_workers()
        assert ex.client is None
        recs, counts = execute(claims, Context(seed=2), tmp_path / "s2", ex)
        assert ex.client is not None and ex.client is not first
    assert counts["failed"] == 0 and counts["ran"] == 8 and all(r["verdict"] == "verified" for r in recs)


def test_the_torch_transform_state_is_read_inside_and_outside_transforms():
    import torch

    from verify.execution import torch_transform_state

    assert torch_transform_state() == {"transform": None, "functorch_keys": []}
    inside = []
    torch.func.vmap(lambda x: inside.append(torch_transform_state()) or x)(torch.ones(2, 2))
    assert inside[0]["transform"] == "TransformType.Vmap" and inside[0]["functorch_keys"]


def test_remote_scheduler(tmp_path):
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                              env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        # the run starts before any worker has joined: it waits for one (and says so), then runs on it
        run = subprocess.Popen([sys.executable, "-m", "verify.cli", "run", "-k", "A.L5", "--scheduler", address,
                                "--results", str(tmp_path / "res")], env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        procs.append(run)
        said = next((line for line in run.stderr if "waiting for a Dask worker" in line), None)  # up to the message
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers",
                                       "1", "--nthreads", "1", "--no-dashboard"], env=ENV, cwd=ROOT,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _, err = run.communicate(timeout=300)
        assert said and run.returncode == 0, err[-2000:]
        rec = json.loads((tmp_path / "res" / "A.L5.json").read_text())
        assert rec["verdict"] == "verified" and len(_units(tmp_path / "res")) == 2
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def test_an_unreachable_scheduler_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from verify import cli

    monkeypatch.setenv("VERIFY_SCHEDULER_TIMEOUT", "2s")
    code = cli.main(["run", "-k", "A.L5", "--scheduler", "tcp://127.0.0.1:9", "--results", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("verify: error: cannot reach the Dask scheduler") and len(err.splitlines()) == 1


FAULTS = """
import resource, sys, torch
if sys.argv[1] == "keep":
    from verify.execution import keep_freed_memory
    assert keep_freed_memory()
x = torch.ones(1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):  # a Monte Carlo batch's temporaries: 80 MB allocated, written and freed, again and again
    x = torch.ones(10_000_000, dtype=torch.float64).sum()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_freed_memory_is_reused_not_faulted_in_again():
    """20 batches of 80 MB: glibc's default maps and unmaps each (20 x 19,500 page faults); with keep_freed_memory
    freed pages stay mapped and serve the later batches (measured: 2-4 batches fault in all, each time the heap grows
    past a hole a small block was put in; the rest reuse memory)."""
    def faults(mode):
        out = subprocess.run([sys.executable, "-c", FAULTS, mode], env=ENV, capture_output=True, text=True, check=True)
        return int(out.stdout)
    page = os.sysconf("SC_PAGE_SIZE")
    one_batch = 80_000_000 // page
    assert faults("default") > 15 * one_batch  # the failure it fixes is there to see
    assert faults("keep") < 6 * one_batch


def test_groups_are_queued_longest_first_with_their_units_together():
    claims = {i: registry.get(i) for i in ("A.L5", "A.L6", "B.L7")}
    todo = [(c, u) for c in claims.values() for u in runner.plan(c)]
    group = {"A.L5": "g1", "A.L6": "g1", "B.L7": "g2"}  # two claims sharing a set-up, and one alone
    seconds = {"A.L5": 1.0, "A.L6": 1.0, "B.L7": 10.0}
    queue = group_queue(todo, lambda u: seconds[u.claim], group)
    assert [{u.claim for _, u in units} for units in queue] == [{"B.L7"}, {"A.L5", "A.L6"}]
    assert [cu for units in queue for cu in units if cu[0].id != "B.L7"] == [cu for cu in todo if cu[0].id != "B.L7"]


def test_claims_sharing_a_set_up_are_one_group_transitively():
    """A.L1 (geometry_fixtures) and A.L5 (init_fixtures) share no module, but A.T2 imports both: one group, so the
    geometry set-up is not computed on two workers; B.S33 and B.A4 share their module; B.T4 is elsewhere."""
    group = fixture_groups(registry.get(i) for i in ("A.L1", "A.L5", "A.T2", "B.S33", "B.A4", "B.T4"))
    assert group["A.L1"] == group["A.L5"] == group["A.T2"] == "geometry_fixtures+init_fixtures"
    assert group["B.S33"] == group["B.A4"] != group["A.L1"]
    assert group["B.T4"] == "joint_fixtures"
    # without A.T2 nothing joins the two fixture modules
    assert len(set(fixture_groups(registry.get(i) for i in ("A.L1", "A.L5")).values())) == 2


def _retain_memory(nbytes: int, pause: bool) -> str:
    """A unit that allocates ``nbytes`` and frees it, as a worker running our units keeps it (keep_freed_memory)."""
    import numpy as np

    from verify.execution import never_pause
    keep_freed_memory()
    if not pause:
        never_pause()
    a = np.ones(nbytes // 8)
    del a
    return "done"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
@pytest.mark.parametrize("pause", [True, False], ids=["dask default: paused for good", "never_pause: runs"])
def test_a_worker_that_keeps_freed_memory_is_never_paused(pause):
    """A worker with a Dask memory limit (as a remote one may have) whose unit left 1.45 GB mapped, above the 80 %
    pause threshold of its 2 GB: by Dask's default it pauses and, RSS never falling, runs nothing more (the standard
    calibration that hung, session 14); with never_pause, as in run_unit_task, the next unit runs."""
    from distributed import Client, LocalCluster

    from verify.execution import _worker_environment
    _worker_environment()  # one malloc arena, as our workers have
    with LocalCluster(n_workers=1, threads_per_worker=1, memory_limit="2GB", dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": ":0"}) as cluster, Client(cluster) as client:
        assert client.submit(_retain_memory, int(1.45e9), pause, pure=False).result(timeout=60) == "done"
        time.sleep(1.5)  # the memory monitor looks every 100 ms
        status = list(client.run(lambda dask_worker: dask_worker.status.name).values())
        assert status == (["paused"] if pause else ["running"])
