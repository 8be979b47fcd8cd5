"""Opt-in memory tuning for glibc machines whose kernel makes returning memory expensive (off by default).

``VERIFY_TUNE_MEMORY=1`` in the environment of ``verify`` switches on one set, documented in docs/running.md:

* ``mallopt(M_MMAP_MAX, 0)`` and ``mallopt(M_TRIM_THRESHOLD, -1)`` in every process that runs units: glibc serves
  large blocks from the heap and keeps freed memory mapped instead of unmapping it after each Monte Carlo batch;
* one malloc arena per local worker (``GLIBC_TUNABLES=glibc.malloc.arena_max=1``): a worker's units run in a thread,
  whose own arena would still hand large blocks to ``mmap``;
* no Dask memory limit on the local cluster's workers, and no pausing: a process that keeps its heap never sees its
  memory fall, so a paused worker would never resume.

Why it exists.  On a VM whose balloon driver reports freed pages to the host (the 2-core Firecracker VM the suite is
developed on), every page given back is faulted in again at a cost: A.T1.1's n-law check spent 10 s in the kernel
against 6.6 s of its own (6.3 M page faults); with the set, 6.7 s and 110 k faults.  Paper A's Monte Carlo engines
work in blocks of about 8 MB (``numerics.paper_a.model.BLOCK_ELEMS``), which glibc serves from its heap anyway,
so the set gains little there.  Bare metal and most cloud VMs do not pay that, and the set makes every worker's
memory stay at its largest unit's peak, so it is off unless asked for.  It changes where memory comes from, never a
result.  A remote scheduler's workers are never reconfigured by a unit.
"""
from __future__ import annotations

import ctypes
import functools
import os
import sys

#: the switch (any of 1 / true / yes)
ENV = "VERIFY_TUNE_MEMORY"
#: glibc's ``mallopt`` parameters (<malloc.h>)
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
#: -1 is read as a size_t: never trim the top of the heap
NEVER_TRIM = -1
WORKER_GLIBC_TUNABLES = "glibc.malloc.arena_max=1"


def enabled() -> bool:
    return os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes")


@functools.cache
def keep_freed_memory() -> bool:
    """This process's glibc malloc keeps freed memory for reuse (see the module docstring).  Once per process; True if
    set (False off glibc, where there is nothing to change)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl, ...)
        return False
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, NEVER_TRIM))


def tune_process() -> None:
    """Apply the set to this process when it is switched on."""
    if enabled():
        keep_freed_memory()


def worker_environment() -> None:
    """What the local cluster's workers inherit: torch single-threaded; with the set on, one malloc arena."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if enabled():
        tunables = os.environ.get("GLIBC_TUNABLES", "")
        if "glibc.malloc.arena_max" not in tunables:
            os.environ["GLIBC_TUNABLES"] = ":".join(t for t in (tunables, WORKER_GLIBC_TUNABLES) if t)


def cluster_options() -> dict:
    """Extra ``LocalCluster`` options: with the set on, no memory limit (no pausing, spilling or terminating)."""
    return {"memory_limit": 0} if enabled() else {}
