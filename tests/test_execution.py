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
from verify import execution, memory_tuning, registry, results, runner
from verify.execution import Executor, execute

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "VERIFY_TORCH_THREADS": "1"}


def _units(results_dir: Path) -> list[Path]:
    return sorted((results_dir / "units").rglob("*-*.json"))


def test_a_claims_run_is_the_one_run_or_its_entry_in_any_mapping():
    """Execution, calibration and sensitivity read a claim's run through one helper, so a run per claim id passed as
    any mapping (not only a dict) is read as such in all three."""
    import types

    a, b = toy_claims.GOOD[:2]
    one = Context(seed=3, budget="quick")
    assert runner.run_of(one)(a) is one and runner.run_of(one)(b) is one
    per = types.MappingProxyType({a.id: Context(seed=1), b.id: Context(seed=2)})
    assert [runner.run_of(per)(c).seed for c in (a, b)] == [1, 2]


def test_two_workers_give_the_serial_records(tmp_path):
    claims = [registry.get(i) for i in ("A.L5", "B.L7")]
    ctx = Context(seed=0, budget="quick")
    serial, _ = execute(claims, ctx, tmp_path / "w1", Executor(workers=1))
    with Executor(workers=2) as ex:
        dist, counts = execute(claims, ctx, tmp_path / "w2", ex)
        # the default: no memory tuning in the workers (VERIFY_TUNE_MEMORY is opt-in) and Dask's own memory limit
        state = ex.client.run(lambda: (memory_tuning.keep_freed_memory.cache_info().currsize,
                                       os.environ.get("GLIBC_TUNABLES", "")))
        assert all(n == 0 and "arena_max" not in t for n, t in state.values()), state
        limits = ex.client.run(lambda dask_worker: dask_worker.memory_manager.memory_limit)
        assert all(v for v in limits.values()), limits
        # ... forked from one fork server that imported torch & co. once (start_worker_server), not spawned by this
        # process, each importing them itself
        if "forkserver" in multiprocessing.get_all_start_methods():
            parents = set(ex.client.run(os.getppid).values())
            assert len(parents) == 1 and os.getpid() not in parents, parents
    assert counts["ran"] == sum(len(c.checks) + len(c.controls) for c in claims)
    assert [results.replay_view(r) for r in dist] == [results.replay_view(r) for r in serial]


TUNED = """
import os, sys, toy_claims
from theorems.claim import Context
from verify import memory_tuning
from verify.execution import Executor, execute
if __name__ == "__main__":
    with Executor(workers=2) as ex:
        execute(toy_claims.GOOD[:1], Context(seed=1), sys.argv[1], ex)
        state = ex.client.run(lambda: (memory_tuning.keep_freed_memory.cache_info().currsize,
                                       os.environ.get("GLIBC_TUNABLES", "")))
        limits = ex.client.run(lambda dask_worker: dask_worker.memory_manager.memory_limit)
    print(all(n == 1 and "glibc.malloc.arena_max=1" in t for n, t in state.values()),
          all(v is None for v in limits.values()))
"""


@pytest.mark.slow  # a cluster's or the allocator's robustness: minutes of the default run's 6 (docs/testing.md)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_memory_tuning_is_one_opt_in_switch(tmp_path):
    """VERIFY_TUNE_MEMORY=1: each worker keeps freed memory, has one malloc arena and no Dask memory limit."""
    out = subprocess.run([sys.executable, "-c", TUNED, str(tmp_path)], env={**ENV, memory_tuning.ENV: "1"},
                         capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == ["True", "True"], out.stderr[-2000:]


@pytest.mark.slow  # a cluster's or the allocator's robustness: minutes of the default run's 6 (docs/testing.md)
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


def test_a_changed_claim_reuses_no_finished_unit_of_its_older_code(tmp_path, monkeypatch):
    """Finished units are kept per code hash (and libraries): after a change of the claim's code a run computes every
    unit again; at the same code it reuses them all."""
    claim, ctx = toy_claims.GOOD[0], Context(seed=5)
    _, counts = execute([claim], ctx, tmp_path, Executor(workers=1))
    assert counts["ran"] == 4
    _, again = execute([claim], ctx, tmp_path, Executor(workers=1))
    monkeypatch.setattr(registry, "code_hash", lambda c, root=None: "changed-code")
    _, changed = execute([claim], ctx, tmp_path, Executor(workers=1))
    assert results.unit_dir(tmp_path, claim, ctx).name.endswith(f"changed-code-{results._environment_key()}")
    assert again["reused"] == 4 and changed["reused"] == 0 and changed["ran"] == 4, (again, changed)


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



def test_a_record_with_a_unit_that_could_not_run_is_redone_not_reused(tmp_path):
    """A calibration reuses stored records; one whose units failed to run (a lost scheduler, say) must be redone,
    else the failure would stand for that seed forever."""
    claim = toy_claims.GOOD[0]
    recs, _ = execute([claim], Context(seed=4), tmp_path, Executor(workers=1))
    failed = json.loads(json.dumps(recs[0]))
    failed["checks"][0]["details"] = {"unit_failed": True, "raised": True}
    results.write_record(tmp_path, failed)
    again, counts = execute([claim], Context(seed=4), tmp_path, Executor(workers=1), reuse_records=True)
    assert not (again[0]["checks"][0]["details"] or {}).get("unit_failed") and counts["reused"] > 0
    kept, counts = execute([claim], Context(seed=4), tmp_path, Executor(workers=1), reuse_records=True)
    assert counts == {"ran": 0, "reused": 0, "failed": 0}  # a complete record is reused as it is


@pytest.mark.slow  # a cluster's or the allocator's robustness: minutes of the default run's 6 (docs/testing.md)
def test_a_worker_with_broken_torch_state_is_replaced_and_the_unit_rerun(tmp_path, capfd, monkeypatch):
    # the error torch.func raised at random in Dask workers (verify.worker_guards.BROKEN_TORCH_STATE): the unit's outcome
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


def test_the_torch_transform_state_is_read_inside_and_outside_transforms():
    import torch

    from verify.worker_guards import torch_transform_state

    assert torch_transform_state() == {"transform": None, "functorch_keys": []}
    inside = []
    torch.func.vmap(lambda x: inside.append(torch_transform_state()) or x)(torch.ones(2, 2))
    assert inside[0]["transform"] == "TransformType.Vmap" and inside[0]["functorch_keys"]


@pytest.mark.slow  # a cluster's or the allocator's robustness: minutes of the default run's 6 (docs/testing.md)
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
        assert rec["verdict"] == "verified" and len(_units(tmp_path / "res")) == runner.units(registry.get("A.L5"))
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
    from verify.memory_tuning import keep_freed_memory
    assert keep_freed_memory()
x = torch.ones(1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):  # a Monte Carlo batch's temporaries: 80 MB allocated, written and freed, again and again
    x = torch.ones(10_000_000, dtype=torch.float64).sum()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.slow  # a cluster's or the allocator's robustness: minutes of the default run's 6 (docs/testing.md)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_freed_memory_is_reused_not_faulted_in_again():
    """20 batches of 80 MB: glibc's default maps and unmaps each (20 x 19,500 page faults); with keep_freed_memory
    freed pages stay mapped and serve the later batches. How many batches still fault in depends on where small blocks
    land between the large ones (2-4 on one machine, 7 on another, each time the heap grows past such a hole), so the
    test asks for what the setting is for: most batches reuse memory, i.e. fewer than half of them fault in."""
    def faults(mode):
        out = subprocess.run([sys.executable, "-c", FAULTS, mode], env=ENV, capture_output=True, text=True, check=True)
        return int(out.stdout)
    page = os.sysconf("SC_PAGE_SIZE")
    one_batch = 80_000_000 // page
    assert faults("default") > 15 * one_batch  # the failure it fixes is there to see
    assert faults("keep") < 10 * one_batch


def test_a_run_logged_to_a_file_says_how_far_it_is_at_most_once_per_interval():
    """A background calibration's log gets progress lines (not tqdm's carriage returns): one per interval and one at
    the end, naming what is still running."""
    import io

    from verify.progress import LogProgress

    quiet, chatty = io.StringIO(), io.StringIO()
    for out, every in ((quiet, 3600.0), (chatty, 0.0)):
        bar = LogProgress(3, "settings (standard, seed 0)", every=every, file=out)
        for _ in range(3):
            bar.set_postfix_str("B.T2 interior-law")
            bar.update(1)
        bar.close()
    assert quiet.getvalue().splitlines() == ["settings (standard, seed 0): 3 of 3 units, 0:00 elapsed"]
    lines = chatty.getvalue().splitlines()
    assert len(lines) == 4 and lines[0] == "settings (standard, seed 0): 1 of 3 units, 0:00 elapsed, B.T2 interior-law"
