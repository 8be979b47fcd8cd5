r"""Set-ups of paper A's gradient-approximation claims (A.T3, A.T4, A.T5): the instance and its Monte Carlo batches.

These are fixtures (``theorems.fixture``): a check names the one it reads in its ``uses`` and receives the value; the
runner computes each once per run and shares it between the three claims and their controls.  Each draws from the
run's context by its own stream name (``DATA_ID`` and a stream), so its draws depend on the run alone.

* :func:`gradient_instance`: ``Sigma, W*`` and two points ``theta`` near the manifold of minima;
* :func:`gradient_data`: control-variated gradient differences at each context size (A.T3, A.T4); bound with
  ``include_self=True`` it is the include-self softmax's batches (A.T4's control);
* :func:`regularizer_data`: the regularizer's part alone, many more batches (A.T5).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from numerics.paper_a import moments as mo
from numerics.paper_a.algorithms import random_instance
from numerics.paper_a.geometry import haar_orthogonal, perturb_from_manifold, target_svd
from theorems.claim import ScopeFilter
from theorems.fixture import Parts, fixture

#: the name of the gradient Monte Carlo stream (seeds are derived from it, so its draws do not depend on other checks)
DATA_ID = "A.T3-T5"
#: d = 3, r = 4 (r > d: A2 with room), the smallest dimensions where V, K and W* are generic matrices
DIM, RDIM = 3, 4
#: A3's scale σ₁(W*Σ^{1/2}) = 0.1: ‖B‖op² ≈ 0.1 near the manifold, so the tilted moments E e^{kq} of the first two
#: orders of the bias series (k ≤ 3) are finite (k ‖B‖op² < 1/2)
M_OP = 0.1
SCALE_SCOPE = ScopeFilter(
    "the instance's scale σ₁(M*) = 0.1",
    f"one instance (Σ, W*) with σ₁(W*Σ^(1/2)) = {M_OP:g}, so ‖B‖op² ≈ {M_OP:g} near the manifold",
    why="our derived leading term (the O(n⁻²) remainder) needs E e^(3q) finite, ‖B‖op² < 1/6; the paper's Õ(1/n) "
        "is stated for any instance satisfying A3 (at σ₁ = 0.25 the paper's envelope still held, our −2 did not: "
        "A.T3's findings)", unit="")
#: Σ̃-distance of the points from the manifold ("ρ-close"): small against the manifold's scale (σ₁ = 0.1 → ~0.45)
RADIUS = 0.05
#: two points: a Haar-random one and the one with symmetric positive definite B (self-scores largest)
N_POINTS = 2
#: context sizes: five doublings from n = 8, where the bias series' terms are large, to 256, where they are small
GRAD_NS = [8, 16, 32, 64, 128, 256]
#: batches per context size (quick, standard): the scaled K-projection has standard deviation ~0.35 per batch with the
#: linear control variate, so the K-block's fitted limit has a half-width ~0.1 of its value at quick
GRAD_BATCHES = (2000, 6000)
#: the include-self control draws a third of the batches: its coefficient is 2.5-4× the leave-one-out one
INCLUDE_SELF_SHARE = 3
#: A.T5's own regularizer-only batches (quick, standard): cheap (no softmax), so the squared bias's exponent reaches the
#: rate rule's width (its U-statistic has a relative error ~30% per n at 2000 batches)
REG_BATCHES = (20000, 60000)


def blocks(first: str = "V", second: str = "K") -> dict[str, slice]:
    """The two parameter blocks of a flattened gradient (``r d`` value entries, then ``d d`` key-query entries)."""
    return {first: slice(0, RDIM * DIM), second: slice(RDIM * DIM, RDIM * DIM + DIM * DIM)}


@dataclass(frozen=True)
class GradientInstance:
    Sigma: torch.Tensor  # (d, d)
    W: torch.Tensor  # (r, d)
    V: torch.Tensor  # (N_POINTS, r, d)
    K: torch.Tensor  # (N_POINTS, d, d)


@fixture
def gradient_instance(ctx) -> GradientInstance:
    """``Sigma, W*`` from ``random_instance(3, 4, m_op=0.1)``; two ``theta`` at distance 0.05 from the manifold.

    Point 1 perturbs a Haar-random point of the manifold; point 2 the point with rotation ``Q = Vs^T``, where
    ``B = Vs Lam^{1/2} Vs^T`` is symmetric positive definite: self-scores ``x_i^T K x_i`` are then largest,
    so that the leave-one-out choice (and its include-self control) matters most.
    """
    gen = ctx.generator(DATA_ID, "instance")
    Sigma, W = random_instance(DIM, RDIM, gen, m_op=M_OP)
    Vs = target_svd(Sigma, W)[2]
    Q = torch.stack([haar_orthogonal(1, DIM, gen)[0], Vs.mT])
    (V, K), _ = perturb_from_manifold(Sigma, W, RADIUS, N_POINTS, gen, Q=Q)
    return GradientInstance(Sigma, W, V, K)


@dataclass(frozen=True)
class GradientData:
    ns: list[int]
    samples: list[mo.GradientBiasSamples]
    Sigma: torch.Tensor
    W: torch.Tensor
    V: torch.Tensor
    K: torch.Tensor
    n_batches: int
    include_self: bool  # the softmax context of the batches: leave-one-out (the claim's) or with the query itself


@fixture(uses={"instance": gradient_instance})
def gradient_data(ctx, instance: GradientInstance, include_self: bool = False) -> GradientData:
    """Control-variated gradient differences at each context size (``GRAD_NS``), ``GRAD_BATCHES`` batches each.

    ``include_self``: the softmax over the whole context, the query included (A.T4's negative control); it draws a
    third of the batches (its effect is many standard errors wide).
    """
    gen = ctx.generator(DATA_ID, "batches")
    N = ctx.pick(*GRAD_BATCHES) // (INCLUDE_SELF_SHARE if include_self else 1)
    i = instance
    samples = [mo.gradient_bias_samples(i.V, i.K, i.Sigma, i.W, n, N, gen, include_self=include_self) for n in GRAD_NS]
    return GradientData(list(GRAD_NS), samples, i.Sigma, i.W, i.V, i.K, N, include_self)


@dataclass(frozen=True)
class RegularizerData:
    ns: list[int]
    dR: list[tuple[torch.Tensor, torch.Tensor]]  # per n: E = bias (linear term removed), pair (V, K)
    Sigma: torch.Tensor
    V: torch.Tensor
    K: torch.Tensor
    n_batches: int


@fixture(uses={"instance": gradient_instance})
def regularizer_data(ctx, instance: GradientInstance) -> RegularizerData:
    """A.T5's regularizer-only batches at the same instance and points, on their own stream, ``REG_BATCHES`` each:
    the control-variated differences only (the raw ones, drawn with them, are not kept: nothing reads them)."""
    gen = ctx.generator(DATA_ID, "regularizer batches")
    N = ctx.pick(*REG_BATCHES)
    i = instance
    dR = [mo.regularizer_bias_samples(i.V, i.K, i.Sigma, n, N, gen)[0] for n in GRAD_NS]
    return RegularizerData(list(GRAD_NS), dR, i.Sigma, i.V, i.K, N)


@dataclass
class PilotChunks:
    """A claim's pilot over the shared batches ``data``: its later chunks (``more[c]``, c = 1, 2, ..., drawn on first
    use and kept with the value, so the checks and controls that share it draw each chunk once).  Each claim draws
    its chunks on its own stream (A.T3's ``more_samples``, A.T4's and A.T5's ``more_batches``); the pilot's rule is
    ``theorems.pilot.sized_to_power``."""

    data: object
    more: Parts

    def pooled(self, shared: list, growth: int) -> list[list]:
        """Per n, the shared batches' entry (``shared``: the data's per-n list) and those of chunks 1..growth-1."""
        return [[s, *more] for s, *more in zip(shared, *(self.more[c] for c in range(1, growth)))]
