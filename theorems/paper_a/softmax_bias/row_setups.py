r"""Set-ups of paper A's softmax-row lemmas (A.L9-A.L23): the lemma instance and the Monte Carlo rows.

These are fixtures (``theorems.fixture``): a check names the one it reads in its ``uses`` and receives the value; the
runner computes each once per run and shares it between the lemmas and their controls.  Each draws from the run's
context by its own stream name (``LEMMA_DATA_ID`` and a stream), so its draws depend on the run alone.

* :func:`lemma_instance`: ``Sigma``, ``K`` and two fixed queries ``x_i``;
* :func:`row_data`: the softmax rows of both queries at each context size (A.L9, the conditional-moment lemmas
  A.L11-A.L22 and the variance side of the Poincaré lemmas A.L10-A.L23).

What the lemmas leave open and the instance fixes -- the strong query's tilt, the window of n, the dimension -- are
free choices of the technical lemmas A.L10-A.L23, declared here once (:func:`instance_choices`; A.L9 declares its own
readings of the query and the window, over other ranges).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import torch

from numerics import DTYPE
from numerics.paper_a import moments as mo
from numerics.paper_a.model import factor_B, sym_sqrt
from theorems.claim import FreeChoice
from theorems.fixture import fixture

#: the name of the softmax-row Monte Carlo stream
LEMMA_DATA_ID = "A.L9-L23"
#: d = 3: the smallest dimension where Σ, K and the tilt direction are generic
LEMMA_DIM = 3
#: ‖B‖op = 0.35: ‖B‖op² < 1/4, so the averaged constant E e^{2q} of Lemma 9 is finite (Lemma 7)
B_OP = 0.35
#: two queries: q = 0.25 (random direction, moderate tilt) and 0.6 (B's top direction, strong tilt per unit norm)
QUERY_Q = (0.25, 0.6)
#: context sizes: five doublings from n = 8
ROW_NS = [8, 16, 32, 64, 128, 256]
#: contexts per n and query (quick, standard): the bias exponents' intervals reach the rate rule's width
ROW_DRAWS = (20000, 60000)


@dataclass(frozen=True)
class LemmaInstance:
    Sigma: torch.Tensor  # (d, d)
    K: torch.Tensor  # (d, d)
    xq: torch.Tensor  # (Q, d) the fixed queries x_i
    q: torch.Tensor  # (Q,)


@fixture
def lemma_instance(ctx, dim: int = LEMMA_DIM, query_q: tuple = QUERY_Q) -> LemmaInstance:
    r"""``Sigma = 2 (A A^T / d + I)`` (eigenvalues >= 2, so that a dropped ``Sigma`` weight is visible), ``K`` iid
    N(0,1) rescaled to ``||B||_op = 0.35`` (``B = Sigma^{1/2} K Sigma^{1/2}``; Lemma 7's region needs
    ``||B||_op^2 < 1/4`` for the averaged constants); two queries with ``q = 0.25`` (random direction) and
    ``q = 0.6`` (the direction of ``B``'s top left singular vector, where the tilt is strongest per unit norm).
    ``dim`` and ``query_q`` are parameters so that a claim can vary the instance family (its free choices).
    """
    gen = ctx.generator(LEMMA_DATA_ID, "instance")
    d = dim
    A = torch.randn(d, d, generator=gen, dtype=DTYPE)
    Sigma = 2 * (A @ A.T / d + torch.eye(d, dtype=DTYPE))
    K = torch.randn(d, d, generator=gen, dtype=DTYPE)
    K = K * B_OP / torch.linalg.matrix_norm(factor_B(K, Sigma), ord=2)
    R = sym_sqrt(Sigma)
    Bm = R @ K @ R
    U = torch.linalg.svd(Bm)[0]
    dirs = torch.stack([torch.randn(d, generator=gen, dtype=DTYPE), U[:, 0]])
    z = dirs * (torch.tensor(query_q, dtype=DTYPE) / (dirs @ Bm).pow(2).sum(-1)).sqrt().unsqueeze(-1)  # q = ||B^T z||^2
    xq = z @ R  # x = Sigma^{1/2} z
    return LemmaInstance(Sigma, K, xq, mo.query_scale(K, Sigma, xq))


@dataclass(frozen=True)
class RowData:
    inst: LemmaInstance
    ns: list[int]
    rows: list[mo.RowStats]
    n_draws: int


@fixture(uses={"inst": lemma_instance})
def row_data(ctx, inst: LemmaInstance, ns: tuple = tuple(ROW_NS)) -> RowData:
    """The softmax rows of both queries at the context sizes ``ns`` (``ROW_NS``), ``ROW_DRAWS`` contexts each."""
    gen = ctx.generator(LEMMA_DATA_ID, "rows")
    N = ctx.pick(*ROW_DRAWS)
    rows = [mo.softmax_row_stats(inst.K, inst.Sigma, inst.xq, n, N, gen) for n in ns]
    return RowData(inst, list(ns), rows, N)


def doublings(n_max: int, n_min: int = ROW_NS[0]) -> tuple[int, ...]:
    """Context sizes doubling from ``n_min`` up to ``n_max`` (``ROW_NS`` for ``n_max = 256``)."""
    return tuple(n_min * 2**k for k in range(int(n_max // n_min).bit_length()) if n_min * 2**k <= n_max)


def context_sizes(doublings: int) -> tuple[int, ...]:
    """The rows' context sizes: ``doublings`` doublings from the smallest of ``ROW_NS``."""
    return tuple(ROW_NS[0] * 2**k for k in range(doublings + 1))


Overrides = Mapping[str, Mapping[str, Any]]  # check name -> the overrides it receives


def instance_choices(at_instance: Callable[..., Overrides], at_sizes: Callable[[tuple], Overrides]
                     ) -> tuple[FreeChoice, ...]:
    """What the lemmas leave open and the checks' instance fixes: the strong query's tilt, the window of n, the
    dimension (each lemma holds for every query, n and d).  ``Σ``'s scale is a gauge (Σ → cΣ, K → K/c leaves every
    weight unchanged and scales each side and constant alike) and ``‖B‖op`` is one at fixed q (the rows' law depends on
    q, μ and Σ alone), so neither is a choice.

    A claim passes how its checks receive them: ``at_instance(**params)``, each check's overrides at
    ``lemma_instance.bind(**params)``; ``at_sizes(ns)``, each check's overrides at the rows' context sizes ``ns``."""
    def sets(at: Callable[[Any], Overrides], checks) -> dict:
        return {c: (lambda v, c=c: at(v)[c]) for c in checks}

    on_instance, on_sizes = tuple(at_instance()), tuple(at_sizes(tuple(ROW_NS)))
    return (
        FreeChoice("q of query 2", QUERY_Q[1], "x_i ~ N(0, Σ) gives q = ‖Bᵀz‖², z ~ N(0, I): along B's top direction "
                   "at ‖B‖op = 0.35 that is 0.1225·χ²₁, whose 88th-99.8th percentiles are 0.3-1.2 (query 1 keeps "
                   "q = 0.25)", sets(lambda v: at_instance(query_q=(QUERY_Q[0], v)), on_instance),
                   low=0.3, high=1.2, scale="log"),
        FreeChoice("doublings of n", len(ROW_NS) - 1, "O(1/n) at every n and the lemmas fix none: n = 8..128 (the "
                   "fewest doublings that leave the four-term limit fit a residual degree of freedom) to 8..1024 "
                   "(four times our largest n)", sets(lambda k: at_sizes(context_sizes(k)), on_sizes),
                   low=4, high=7, integer=True),
        FreeChoice("d", LEMMA_DIM, "the lemmas hold in every d and fix none: 2 (the smallest non-scalar case) to 6 "
                   "(twice ours, past the d = 4 of our paper-A figures)",
                   sets(lambda v: at_instance(dim=v), on_instance), low=2, high=6, integer=True),
    )
