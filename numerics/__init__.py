"""Torch numerics for the suite: models, losses, data, algorithms, solvers.

Layering rule: nothing here imports from ``theorems`` or ``verify``.
Every tensor is float64 unless a function says otherwise, and independent
runs / instances are batched along a leading dimension.
"""
import contextlib

import torch

DTYPE = torch.float64


@contextlib.contextmanager
def deterministic(threads: int, device: str = "cpu"):
    """Torch at ``threads`` intra-op threads with deterministic algorithms only, restored on exit: a float32 run at a
    seed is then the same bits whatever the process's thread count (``VERIFY_TORCH_THREADS``, ``OMP_NUM_THREADS``).
    The CPU's vector width (AVX2, AVX-512) still picks other kernels, so another machine may differ in the last bits
    and, after hundreds of float32 steps, in the runs; the claims table's reproducibility tolerance is for that
    (docs/statistics.md#reproducibility).  On a GPU a nondeterministic kernel only warns: cuBLAS refuses to run under
    the strict setting unless CUBLAS_WORKSPACE_CONFIG was set before CUDA started."""
    before = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled())
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=str(device) != "cpu")
    try:
        yield
    finally:
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1], warn_only=before[2])


def trailing_mean(x: torch.Tensor, window: int) -> torch.Tensor:
    """Mean of ``x`` (S, R) over the trailing ``window`` rows at each row (the first rows: what there is), in float64:
    how the minibatch-training engines (vision, language) smooth a run's per-step record."""
    x = x.double()
    c = torch.cat([torch.zeros_like(x[:1]), x.cumsum(0)])
    t = torch.arange(1, len(x) + 1)
    lo = (t - window).clamp_min(0)
    return (c[t] - c[lo]) / (t - lo).to(c.dtype)[:, None]
