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

The probes of A.L9 and A.L11-A.L22 share one instance family and one exact evaluator, declared here once:

* :func:`row_probe_instances`: hypothesis draws of ``d``, ``Sigma``, the query's tilt (direction and ``q``), the
  context law (Gaussian, or a scale mixture of Gaussians with the same covariance: A1 crossed) and ``||B||_op`` on
  both sides of A3's 1/2;
* :class:`RowQuadrature`: exact expectations of the softmax row's score functionals at any ``n'`` (quadrature,
  no Monte Carlo), from which each lemma's conditional moments follow in closed form (:func:`row_geometry`: given the
  query, ``x_j = mu a_j / q + r_j`` with ``r_j`` Gaussian and independent of the score ``a_j``).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import torch
from hypothesis import strategies as st
from scipy.special import gammaln, roots_hermite

from numerics import DTYPE
from numerics.paper_a import moments as mo
from numerics.paper_a.model import factor_B, sym_sqrt
from theorems import strategies as S
from theorems.claim import FreeChoice
from theorems.fixture import fixture
from theorems.strata import fair_sampled_from

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



# ---------------------------------------------------------------------------
# The probes' instance family and exact row moments (A.L9, A.L11-A.L22)
# ---------------------------------------------------------------------------
#
# Given the query x_i, the score a_j = x_i^T K x_j ~ N(0, q) and x_j's component beyond it are independent Gaussians:
# x_j = mu a_j / q + r_j with mu = Sigma K^T x_i = Cov(x_j, a_j), r_j ~ N(0, P), P = Sigma - mu mu^T / q (Gaussian
# conditioning).  The softmax weights depend on the scores alone, so every conditional moment the lemmas bound is a
# closed-form combination (Gaussian moments of the r_j, Isserlis) of expectations of *score functionals*
# prod_k sum_j s_j^{p_k} g_k(a_j): one-dimensional objects of q and n' alone, which RowQuadrature computes exactly.
# A scale mixture of Gaussians (x_j = sqrt(v_j) Sigma^{1/2} z_j, E v = 1: the same covariance, heavier tails) keeps
# the decomposition given v_j (a_j ~ N(0, v_j q), r_j ~ N(0, v_j P)), so the same evaluator computes the moments
# outside A1's Gaussian data too.

#: Gauss-Hermite nodes per mixture component of the score law: 120 nodes and ROW_QUAD_GRID reproduce the same
#: quadrature at 400 nodes and 20001 points to 1e-12 relative for Gaussian scores at q <= 3, n' = 1-2^24 (1e-9 for the
#: probes' most spread mixture, v = 1.9 at q = 3); 80 nodes only to 2e-7
ROW_QUAD_NODES = 120
#: the trapezoid grid in u = log t of the Laplace-transform integral 1/S^P = int t^{P-1} e^{-tS} dt / Gamma(P): t from
#: e^-30 (n' up to ~1e11) to e^40 (the integrand decays at both ends)
ROW_QUAD_GRID = (-30.0, 40.0, 3001)


@functools.cache  # pure combinatorics of at most four factors (15 partitions), never mutated by its callers
def _set_partitions(items: tuple) -> list[list[tuple]]:
    """Every partition of ``items`` into blocks (Bell(4) = 15 for four factors)."""
    if not items:
        return [[]]
    first, out = items[0], []
    for part in _set_partitions(items[1:]):
        out.append([(first,)] + part)
        out.extend(part[:i] + [(first,) + part[i]] + part[i + 1:] for i in range(len(part)))
    return out


# the per-index functions g(a, v, q) a score functional may carry (named, so blocks are cached by name): the tilted
# centrings of the score (a/q - 1 has mean 0 under the tilted law N(q, q); a^2/q^2 - 1 - 1/q too) and the mixture scale
_SCORE_FUNCTIONS: dict[str, Callable] = {
    "1": lambda a, v, q: np.ones_like(a),
    "a/q-1": lambda a, v, q: a / q - 1,
    "a²/q²-1-1/q": lambda a, v, q: a**2 / q**2 - 1 - 1 / q,
    "v": lambda a, v, q: v,
    "v-1": lambda a, v, q: v - 1,
    "v²": lambda a, v, q: v**2,
    "a²v": lambda a, v, q: a**2 * v,
}


class RowQuadrature:
    r"""Exact expectations of the softmax row's score functionals at query scale ``q``.

    ``n'`` iid scores ``a_j`` with ``a_j | v_j ~ N(0, v_j q)``, ``v_j`` from ``law`` (``((prob, v), ...)``; Gaussian:
    ``((1, 1),)``), weights ``s = softmax(a)``.  For factors ``(p_k, g_k)``,

    ``E prod_k sum_j s_j^{p_k} g_k(a_j, v_j) = (1/Gamma(P)) int t^{P-1} sum_pi (n')_{|pi|} prod_{B in pi} psi_B(t)
    phi(t)^{n'-|pi|} dt``,

    ``P = sum_k p_k``, ``pi`` over the partitions of the factors into blocks of equal indices, ``(n')_k`` the falling
    factorial, ``psi_B(t) = E[w^{p_B} prod_{k in B} g_k e^{-tw}]``, ``phi(t) = E e^{-tw}`` (``w = e^a``; from
    ``1/S^P = int t^{P-1} e^{-tS} dt / Gamma(P)`` and the independence of the indices).  Gauss-Hermite in the score
    (``ROW_QUAD_NODES`` per component), trapezoid in ``log t`` (``ROW_QUAD_GRID``); the cost does not depend on ``n'``.
    The generalization of ``moments.scaled_ss_exact`` (one factor ``(2, 1)``) to products of sums.
    """

    def __init__(self, q: float, law: tuple = ((1.0, 1.0),)):
        z, wz = roots_hermite(ROW_QUAD_NODES)
        wz = wz / math.sqrt(math.pi)
        self.q = float(q)
        self.a = np.concatenate([math.sqrt(2 * v * q) * z for _, v in law])
        self.v = np.concatenate([np.full_like(z, v) for _, v in law])
        self.weight = np.concatenate([p * wz for p, _ in law])
        self.w = np.exp(self.a)
        lo, hi, points = ROW_QUAD_GRID
        self.u = np.linspace(lo, hi, points)
        self.t = np.exp(self.u)
        decay = -np.expm1(-np.outer(self.t, self.w))  # 1 - e^{-t w} on the (t, node) grid, accurate at small t w
        self.E = 1 - decay
        # log phi = log(1 - E[1 - e^{-tw}]) to full relative precision: phi^{n'} at n' ~ 1e7 would otherwise carry
        # the rounding of phi times n'
        with np.errstate(divide="ignore"):
            self.log_phi = np.log1p(-np.minimum(decay @ self.weight, 1.0))  # the weights sum to 1 up to rounding
        self._blocks: dict = {}
        self._powers: dict = {}

    def _weighted_power(self, ms: tuple, k: int) -> np.ndarray:
        """``(n')_k phi^{n'-k}`` for each ``n'`` in ``ms`` (rows), 0 where ``n' < k``."""
        key = (ms, k)
        if key not in self._powers:
            m = np.array(ms)[:, None]
            count = np.prod([m - i for i in range(k)], axis=0)  # (n')_k: 0 when n' < k
            power = np.exp(np.maximum(m - k, 1) * self.log_phi)  # phi^{n'-k} (its exponent 0 handled below)
            self._powers[key] = np.where(count > 0, count * np.where(m > k, power, 1.0), 0.0)
        return self._powers[key]

    def _blocks_for(self, keys) -> None:
        """``psi_B(t)`` for every block key ``(p, names)`` not yet computed, in one matrix product."""
        missing = [k for k in dict.fromkeys(keys) if k not in self._blocks]
        if not missing:
            return
        columns = []
        for p, names in missing:
            g = self.weight * self.w**p
            for name in names:
                g = g * _SCORE_FUNCTIONS[name](self.a, self.v, self.q)
            columns.append(g)
        for key, col in zip(missing, (self.E @ np.stack(columns, 1)).T):
            self._blocks[key] = col

    @staticmethod
    def _parts(factors: tuple) -> list[list[tuple]]:
        """The partitions of ``factors`` as lists of block keys ``(p_B, sorted names)``."""
        return [[(sum(factors[i][0] for i in block), tuple(sorted(factors[i][1] for i in block))) for block in part]
                for part in _set_partitions(tuple(range(len(factors))))]

    def moments(self, wanted: dict, ms) -> dict[str, np.ndarray]:
        """:meth:`moment` of each ``wanted[name]`` (factors), their blocks computed together."""
        self._blocks_for(key for factors in wanted.values() for part in self._parts(factors) for key in part)
        return {name: self.moment(factors, ms) for name, factors in wanted.items()}

    def moment(self, factors: tuple, ms) -> np.ndarray:
        """``E prod_k sum_j s_j^{p_k} g_k(a_j)`` for ``factors = ((p_k, name_k), ...)`` at each ``n'`` in ``ms``."""
        P = sum(p for p, _ in factors)
        ms = tuple(float(m) for m in ms)
        parts = self._parts(factors)
        self._blocks_for(key for part in parts for key in part)
        total = np.zeros((len(ms), self.t.shape[0]))
        for part in parts:
            term = self._weighted_power(ms, len(part))
            for key in part:
                term = term * self._blocks[key]
            total += term
        return np.trapezoid(self.t**P * total, self.u, axis=-1) / math.exp(gammaln(P))


@dataclass(frozen=True)
class RowGeometry:
    """What the lemmas' conditional moments depend on besides the scores: ``Sigma``, ``mu = Sigma K^T x_i``, ``q``,
    ``P = Sigma - mu mu^T / q`` (the covariance of ``x_j`` beyond its score) and the context law's mixture."""

    Sigma: np.ndarray  # (d, d)
    mu: np.ndarray  # (d,)
    q: float
    P: np.ndarray  # (d, d)
    law: tuple


def row_geometry(K: torch.Tensor, Sigma: torch.Tensor, xq: torch.Tensor, law: tuple = ((1.0, 1.0),)) -> RowGeometry:
    """:class:`RowGeometry` of one query ``xq`` (1, d)."""
    mu = (xq @ K @ Sigma)[0].numpy()
    q = float(mo.query_scale(K, Sigma, xq)[0])
    return RowGeometry(Sigma.numpy(), mu, q, Sigma.numpy() - np.outer(mu, mu) / q, law)


#: the probe's strata: (range of ||B||_op, range of the mixture spread kappa); the Gaussian strata on either side of
#: A3's ||B||_op < 1/2, the scale mixtures (v = 1 -+ kappa, each with probability 1/2: A1's Gaussian data crossed)
#: over the whole range
ROW_PROBE_STRATA = {
    "inside": ((0.05, 0.5), None),
    "A3 fails": ((0.5, 1.0), None),
    "scale mixture": ((0.05, 1.0), (0.05, 0.9)),
}
#: "inside" twice: about half the examples inside both assumptions, where a counterexample can be found
ROW_PROBE_DRAW = ("inside", "inside", "A3 fails", "scale mixture")
#: the query's tilt q = x_i^T K Sigma K^T x_i (log-uniform): from nearly untilted to e^{2q} = 400 (the lemmas hold at
#: every query; the shared instance's queries are at 0.25 and 0.6, A.L9's free choice reaches 1.2)
ROW_PROBE_Q = (0.01, 3.0)
#: covariances with eigenvalues in [0.2, 5]: a factor 5 either side of I, so that Sigma dropped from q or P matters
ROW_PROBE_SPECTRUM = (0.2, 5.0)


def row_probe_instances(context_sizes: tuple[int, int] | None = None):
    """A stratum (``ROW_PROBE_DRAW``), then ``d`` in 1-4, ``Sigma`` (``ROW_PROBE_SPECTRUM``), the direction ``w`` of
    the query's tilt in whitened coordinates (``e_1`` plus entries in [-0.9, 0.9], so never 0; shrinks to ``e_1``) and
    its size ``q`` (``ROW_PROBE_Q``), ``||B||_op`` and the mixture spread ``kappa`` (0: Gaussian contexts).  With
    ``context_sizes = (lo, hi)`` also ``n`` (log-uniform; A.L9 decides at the drawn ``n``; the conditional-moment
    lemmas decide the limit and draw none).

    Given the query, the contexts' law enters the lemmas through ``Sigma`` and ``mu = Sigma K^T x_i`` alone
    (``q = mu^T Sigma^{-1} mu``; :class:`RowGeometry`), and so does A.L9's score variance without ``Sigma``
    (``||K^T x_i||^2 = ||Sigma^{-1} mu||^2``): ``(Sigma, w, q)`` reach every instance of the statements, and ``K``
    only has to realize them at the drawn ``||B||_op`` (:func:`row_probe_setup`)."""
    return fair_sampled_from(ROW_PROBE_DRAW).flatmap(
        lambda stratum: st.integers(1, 4).flatmap(lambda d: _row_probe_stratum(stratum, d, context_sizes)))


@functools.cache  # a strategy cache, one strategy per (stratum, d): hypothesis draws faster from one it has seen
def _row_probe_stratum(stratum: str, d: int, context_sizes):
    (b0, b1), kappa = ROW_PROBE_STRATA[stratum]
    parts = {"stratum": st.just(stratum), "d": st.just(d), "Sigma": S.spd(d, *ROW_PROBE_SPECTRUM),
             "w": S.matrix(1, d, 0.9).map(lambda v: np.eye(d)[0] + v[0]), "q": S.log_uniform(*ROW_PROBE_Q),
             "B_op": st.floats(b0, b1), "kappa": st.just(0.0) if kappa is None else st.floats(*kappa)}
    if context_sizes is not None:
        lo, hi = context_sizes
        parts["n"] = st.floats(math.log2(lo), math.log2(hi)).map(lambda e: int(round(2**e)))
    return st.fixed_dictionaries(parts)


@dataclass(frozen=True)
class RowProbeInstance:
    Sigma: torch.Tensor  # (d, d)
    K: torch.Tensor  # (d, d)
    xq: torch.Tensor  # (1, d) the query x_i
    law: tuple  # the scale mixture ((prob, v), ...) of the contexts


def row_probe_setup(inst: dict) -> RowProbeInstance:
    """``K = ||B||_op Sigma^{-1}`` (``B = ||B||_op I``) and the query ``x_i = Sigma^{1/2} z``, ``z = sqrt(q) w /
    (||w|| ||B||_op)``, so that ``mu = Sigma K^T x_i = sqrt(q) Sigma^{1/2} w / ||w||`` and ``mu^T Sigma^{-1} mu = q``;
    and the contexts' law."""
    Sigma = S.tensor(inst["Sigma"], batch=False)
    w = S.tensor(inst["w"], batch=False)
    z = w * math.sqrt(inst["q"]) / (w.norm() * inst["B_op"])
    kappa = inst["kappa"]
    law = ((1.0, 1.0),) if kappa == 0 else ((0.5, 1 - kappa), (0.5, 1 + kappa))
    return RowProbeInstance(Sigma, inst["B_op"] * torch.linalg.inv(Sigma), (sym_sqrt(Sigma) @ z).unsqueeze(0), law)


def row_probe_assumptions(inst: dict) -> dict[str, bool]:
    """A1's Gaussian contexts (mixture spread 0) and A3's ``||B||_op < 1/2`` (the lemmas' averaged constants finite;
    at a fixed query the conditional statements need no bound on ``B``)."""
    return {"A1: x_j ~ N(0, Σ) (no scale mixture)": inst["kappa"] == 0, "A3: ‖B‖op < 1/2": inst["B_op"] < 0.5}


def row_probe_parameters(inst: dict) -> dict[str, float]:
    ev = np.linalg.eigvalsh(inst["Sigma"])
    out = {"mixture spread κ (A1: 0)": inst["kappa"], "‖B‖op (A3: < 1/2)": inst["B_op"], "q of the query": inst["q"],
           "d": float(inst["d"]), "cond(Σ)": float(ev[-1] / ev[0])}
    return out | ({"n": float(inst["n"])} if "n" in inst else {})


def row_probe_describe(inst: dict) -> dict:
    """The drawn instance with the ``K`` and query ``x_i`` it defines, as nested lists."""
    setup = row_probe_setup(inst)
    return S.readable(inst | {"K": setup.K, "x_i": setup.xq[0]})
