"""Toy claims for the executor's tests: units that take a moment, are deterministic in the seed, and can be told to
crash their worker.  Importable by Dask worker processes (they inherit this directory on their path)."""
import os
import time

import torch

from theorems.claim import Check, Claim, Context, Control, Outcome


def slow_check(ctx: Context, seconds: float = 0.3, wrong: bool = False, die: bool = False,
               flaky: float = 0.0) -> Outcome:
    if die:  # the worker process dies mid-unit, every time it runs this unit
        os._exit(13)
    time.sleep(seconds)
    v = float(torch.rand((), generator=ctx.generator("toy", seconds)))
    # flaky: inconclusive at the seeds whose draw falls below it (a check whose verdict depends on the seed)
    status = "fail" if wrong else "inconclusive" if v < flaky else "pass"
    return Outcome(status, f"v = {v:.6f}", details={"v": v})


def toy(i: int, seconds: float = 0.4, die: bool = False) -> Claim:
    return Claim(id=f"T.{i}", title=f"toy {i}", statement="x = x", fidelity="exact", fidelity_note="toy",
                 checks=(Check("a", "numeric", "toy", slow_check, params={"seconds": seconds, "die": die}),
                         Check("b", "numeric", "toy", slow_check, params={"seconds": seconds / 2})),
                 controls=(Control("wrong a", "a", "toy", {"wrong": True}),
                           Control("wrong b", "b", "toy", {"wrong": True})))


CLAIMS = [toy(i, seconds=0.2) for i in range(1, 9)] + [toy(99, die=True)]
for _c in CLAIMS:
    object.__setattr__(_c, "module", __name__)
GOOD = CLAIMS[:-1]          # eight claims, 32 units of 0.1-0.2 s
CRASHING = CLAIMS[-1]       # its check "a" kills whatever worker runs it
