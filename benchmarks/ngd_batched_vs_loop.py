"""Paper B NGD: one batched run of B independent runs vs a Python loop over the B runs, same process.

Same work both ways: Example-1 data (n = 8, T = 4, d = 8), B initializations W0 ~ 0.01 N(0, I),
``steps`` NGD steps (eta = 1) with the log-domain objective, no recording.  Prints the time of each
(wall clock, and CPU time of this process, which is steadier on a shared machine), the throughput
ratio (run-steps per second, batched / loop) and the largest difference between the two sets of
final iterates (they must agree to rounding).

    python benchmarks/ngd_batched_vs_loop.py [--batch 256] [--steps 300] [--threads 2]

Threads: each mode runs at its own best setting on the machine's cores.  The per-run loop always
uses 1 torch thread: its tensors are tiny, so intra-op parallelism only adds overhead (a second
thread can make B = 1 steps several times slower, which would flatter the ratio).  The batched run
uses ``--threads`` (default 2, the cores CI has); the 1-thread batched ratio is printed too, so
neither number hides the other.
"""
from __future__ import annotations

import argparse
import time

import torch

from numerics import DTYPE, optim
from numerics.paper_b import algorithms, data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2, help="threads for the batched run")
    ap.add_argument("--repeats", type=int, default=5, help="batched timings to take the best of")
    args = ap.parse_args()

    ds = data.example1(n=8, T=4, d=8, seed=0)
    W0 = 0.01 * torch.randn(args.batch, 8, 8, generator=torch.Generator().manual_seed(0), dtype=DTYPE)
    objective = algorithms.objective(ds)
    ngd = algorithms.ngd(1.0)

    def run(W):
        return optim.run((W,), objective, ngd, args.steps, record_at=[]).final[0]

    def timed(f):
        """(result, wall seconds, CPU seconds of this process)."""
        w, c = time.perf_counter(), time.process_time()
        out = f()
        return out, time.perf_counter() - w, time.process_time() - c

    def batched_timing(threads):
        torch.set_num_threads(threads)
        run(W0[:2])  # warm-up
        b = [timed(lambda: run(W0)) for _ in range(args.repeats)]
        return b[0][0], min(x[1] for x in b), min(x[2] for x in b)

    W_batched, wall_b, cpu_b = batched_timing(args.threads)
    _, wall_b1, cpu_b1 = batched_timing(1)
    torch.set_num_threads(1)
    W_loop, wall_l, cpu_l = timed(lambda: torch.cat([run(W0[b:b + 1]) for b in range(args.batch)]))

    work = args.batch * args.steps
    diff = (W_batched - W_loop).abs().max().item() / W_loop.abs().max().item()
    print(f"NGD, Example 1 (n=8, T=4, d=8), B={args.batch} runs x {args.steps} steps")
    rows = ((f"batched ({args.threads} threads)", wall_b, cpu_b), ("batched (1 thread)", wall_b1, cpu_b1),
            ("loop (1 thread)", wall_l, cpu_l))
    for name, wall, cpu in rows:
        print(f"  {name:20s}: wall {wall:8.3f} s  cpu {cpu:8.3f} s  ({work / wall:10.0f} run-steps/s, "
              f"{1e6 * wall / work:8.2f} us per run-step)")
    print(f"  throughput ratio batched/loop: {wall_l / wall_b:.1f}x wall with {args.threads} threads, "
          f"{wall_l / wall_b1:.1f}x wall with 1 thread   (max relative difference of final W: {diff:.1e})")


if __name__ == "__main__":
    main()
