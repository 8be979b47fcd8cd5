"""What a Dask worker runs: one fixture value or one unit, after setting its process up (``verify.execution`` submits
these tasks; in one process the runner is called directly and none of this applies).

The set-up, once per process: the opt-in memory tuning (``verify.memory_tuning``), torch single-threaded (the checks
are batched small-tensor work; ``VERIFY_TORCH_THREADS`` to change it), and Dask told how large fixture values are.
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from theorems import fixture as fx
from theorems.claim import Context
from verify import memory_tuning, registry, runner, value_store, worker_guards
from verify.runner import Unit


def _worker_setup() -> None:
    import torch

    memory_tuning.tune_process()
    torch.set_num_threads(int(os.environ.get("VERIFY_TORCH_THREADS", "1")))
    _register_sizes()


@functools.cache
def _register_sizes() -> None:
    """Tell Dask how large fixture values are: it knows numpy arrays and Python containers, but measures a torch
    tensor or a dataclass of tensors as a few dozen bytes, and would then ship a bank of runs between workers as if it
    were free (its placement weighs the bytes a task's inputs would have to move)."""
    import dataclasses

    import torch
    from dask.sizeof import sizeof

    @sizeof.register(torch.Tensor)
    def _tensor(t) -> int:
        return int(t.element_size() * t.nelement()) + 64

    @sizeof.register(object)
    def _object(o) -> int:
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return sys.getsizeof(o) + sum(sizeof(getattr(o, f.name)) for f in dataclasses.fields(o))
        return sys.getsizeof(o)


def fixture_task(request: fx.Request, ctx: Context, dependencies: dict, keep: Path | None = None):
    """One fixture value on a worker; an exception becomes the value (each consumer reports it as it would here).
    With ``keep``, the value is also written there (``verify.value_store``)."""
    _worker_setup()
    failed = [v for v in dependencies.values() if isinstance(v, fx.FixtureFailure)]
    if failed:
        return failed[0]
    try:
        value = request.compute(ctx, dependencies)
    except Exception as e:  # noqa: BLE001
        return fx.FixtureFailure(e)
    value_store.save(keep, value)
    return value


def stored_fixture_task(path: Path):
    """A fixture value read from the store.  A file that cannot be read is removed and the task fails: its consumers
    are reported as units that could not run (not stored), and the next run computes the value again."""
    _worker_setup()
    value = value_store.load(path)
    if value is value_store.MISSING:
        raise RuntimeError(f"a kept fixture value could not be read: {path}")
    return value


def unit_task(unit: Unit, ctx: Context, fixtures: dict) -> dict:
    """One unit on a worker, with its fixtures' values, torch single-threaded (the checks are batched small-tensor
    work), inside the torch.func guard (``verify.worker_guards``)."""
    _worker_setup()
    claim = registry.claim_from_module(unit.module, unit.claim)
    return worker_guards.guarded(f"{unit.label} (seed {ctx.seed}, {ctx.budget})",
                                 lambda: runner.run_unit(claim, unit, ctx, fixtures))
