r"""Paper A's model: softmax attention for linear regression (spec paper-A.md, Section 1-2).

Shapes (leading dimension ``B`` indexes independent instances or runs):

* ``Sigma`` (d, d) or (B, d, d), positive definite;  ``W_star`` (r, d) or (B, r, d)
* ``V`` (B, r, d) value,  ``K`` (B, d, d) key-query product
* samples ``x`` (B, n, d), ``y`` (B, n, r)

The predictor for a query ``x`` with context ``{x_j}`` is
``yhat(x) = V sum_j s_j x_j``,  ``s_j = softmax_j(x^T K x_j)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, TypeVar

import torch

from numerics import DTYPE


T = TypeVar("T")


class NotPositiveDefiniteError(ValueError):
    """Raised when a covariance that must be positive definite is not."""


# ---------------------------------------------------------------------------
# Covariance helpers
# ---------------------------------------------------------------------------

def check_covariance(Sigma: torch.Tensor) -> torch.Tensor:
    """Return ``Sigma`` (float64) after checking it is symmetric positive definite (assumption A1)."""
    Sigma = torch.as_tensor(Sigma, dtype=DTYPE)
    if Sigma.shape[-1] != Sigma.shape[-2]:
        raise NotPositiveDefiniteError(f"covariance must be square, got shape {tuple(Sigma.shape)}")
    if not torch.allclose(Sigma, Sigma.mT, atol=1e-10 * (1 + Sigma.abs().max().item())):
        raise NotPositiveDefiniteError("covariance is not symmetric")
    lam_min = torch.linalg.eigvalsh(Sigma).min().item()
    if not lam_min > 0:
        raise NotPositiveDefiniteError(
            f"covariance is not positive definite (smallest eigenvalue {lam_min:.3g}); assumption A1 fails"
        )
    return Sigma


def sym_sqrt(M: torch.Tensor) -> torch.Tensor:
    """Symmetric square root of a symmetric PSD matrix (batched)."""
    lam, Q = torch.linalg.eigh(M)
    return (Q * lam.clamp_min(0).sqrt().unsqueeze(-2)) @ Q.mT


def sym_inv_sqrt(M: torch.Tensor) -> torch.Tensor:
    """Symmetric inverse square root of a symmetric positive-definite matrix (batched)."""
    lam, Q = torch.linalg.eigh(M)
    return (Q * lam.rsqrt().unsqueeze(-2)) @ Q.mT


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

def sample_regression(
    Sigma: torch.Tensor, W_star: torch.Tensor, sigma: float, n: int, batch: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Draw ``batch`` independent data sets of ``n`` pairs: ``x ~ N(0, Sigma)``, ``y = W* x + eps``.

    ``eps ~ N(0, sigma^2 I_r)``.  Returns ``x`` (B, n, d) and ``y`` (B, n, r).
    """
    return regression_draw(torch.linalg.cholesky(check_covariance(Sigma)), W_star, sigma, (batch, n), gen)


def regression_draw(C: torch.Tensor, W_star: torch.Tensor, sigma: float, shape: tuple[int, ...],
                    gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The one Gaussian regression draw: ``x = z C^T`` (``C`` a Cholesky factor of ``Sigma``),
    ``y = x W*^T + sigma eps``, ``z, eps`` standard normal of shapes ``shape + (d,)`` and ``shape + (r,)`` (``x`` drawn
    first, then ``eps``)."""
    x = torch.randn(*shape, C.shape[-1], generator=gen, dtype=DTYPE) @ C.mT
    eps = torch.randn(*shape, W_star.shape[-2], generator=gen, dtype=DTYPE)
    return x, x @ W_star.mT + sigma * eps


def chunked(total: int, per: int, draw: Callable[[int, int], T]) -> list[T]:
    """``draw(k, done)`` for consecutive chunks of ``k <= per`` items covering ``total`` (``done`` items before the
    chunk): a Monte Carlo loop in bounded memory.  Returns the chunks' results in order, each a copy made after the
    chunk's temporaries are freed (:func:`_moved_out`)."""
    out, done = [], 0
    while done < total:
        k = min(per, total - done)
        out.append(_moved_out(draw(k, done)))
        done += k
    return out


#: entries of a chunk's large temporaries (an (.., n, n) score array, Jacobians) made at a time: the chunk's random
#: draws stay one call (its stream does not move), and the work on them runs in row blocks of about 8 MB, which stay
#: in cache across the score product, the mask, the softmax and the weighted sums.  A whole chunk of 32-64 MB goes to
#: memory between those passes and is mapped afresh each time: the leave-one-out gap is 1.7-4x faster in blocks at
#: n = 16-256.  Every row's arithmetic is the same, so the numbers are bitwise those of whole chunks
#: (tests/numerics/test_paper_a_row_blocks.py).
BLOCK_ELEMS = 2**20


def row_blocks(rows: int, per_row: int) -> list[slice]:
    """Consecutive slices of ``range(rows)`` of about ``BLOCK_ELEMS / per_row`` rows each, never a block of one row
    unless ``rows`` is one.

    Why never one: a batch of one is contiguous whatever its strides, so ``torch.matmul`` folds it into one GEMM where
    a strided batch of several goes through the batched product, whose rounding differs (the Jacobians of
    ``moments.poincare_samples`` are such strided views); a whole chunk of several rows never takes that path."""
    step = max(2, BLOCK_ELEMS // per_row)
    starts = list(range(0, rows, step))
    if len(starts) > 1 and rows - starts[-1] == 1:
        starts.pop()
    return [slice(a, b) for a, b in zip(starts, starts[1:] + [rows])]


def _moved_out(result):
    """``result`` with every tensor in it (in nested tuples, lists and dicts) replaced by a copy.

    Why: a chunk's result is allocated while its temporaries (tens of MB each) are live, so glibc carves it out of
    the free space around them; kept to the end, each result then pins a gap the next chunk's temporaries no longer
    fit in, and the heap grew by one temporary per chunk: A.T1.1's n-law (132 chunks) reached 0.4-6.9 GB and 6-17 s
    depending only on the process's hash seed, with identical results.  A copy made after the temporaries are freed
    lands in a small free gap instead: 0.4-0.6 GB, 6.3-6.6 s at every hash seed tried."""
    if isinstance(result, torch.Tensor):
        return result.clone()
    if isinstance(result, tuple) and hasattr(result, "_fields"):  # a named tuple
        return type(result)(*(_moved_out(r) for r in result))
    if isinstance(result, (tuple, list)):
        return type(result)(_moved_out(r) for r in result)
    if isinstance(result, dict):
        return {k: _moved_out(v) for k, v in result.items()}
    return result


# ---------------------------------------------------------------------------
# Predictor and empirical loss
# ---------------------------------------------------------------------------

def context_weights(K: torch.Tensor, x: torch.Tensor, include_self: bool = False) -> torch.Tensor:
    r"""Softmax weights ``s_ij = softmax_{j} (x_i^T K x_j)`` of every sample over the others.

    Leave-one-out (the paper's ``E_{-i}``): ``j`` ranges over ``j != i``.
    ``include_self=True`` lets ``j = i`` in, the variant kept as a negative control.
    Returns (B, n, n).
    """
    scores = x @ K @ x.mT
    if not include_self:  # in place: the scores are this call's own, and a masked copy costs as much as the softmax
        scores.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
    return torch.softmax(scores, dim=-1)


def predictions(V: torch.Tensor, K: torch.Tensor, x: torch.Tensor, include_self: bool = False) -> torch.Tensor:
    """In-sample predictions ``yhat_i = V sum_j s_ij x_j`` (B, n, r)."""
    return context_weights(K, x, include_self) @ x @ V.mT


def empirical_loss(
    V: torch.Tensor, K: torch.Tensor, x: torch.Tensor, y: torch.Tensor, include_self: bool = False
) -> torch.Tensor:
    r"""Equation (1): ``Lhat_n = (1/n) sum_i || y_i - V sum_{j != i} s_ij x_j ||^2`` per instance (B,)."""
    return (y - predictions(V, K, x, include_self)).pow(2).sum(-1).mean(-1)


# ---------------------------------------------------------------------------
# Population loss: closed form (Theorem 1.1)
# ---------------------------------------------------------------------------

def attention_map(V: torch.Tensor, K: torch.Tensor, Sigma: torch.Tensor) -> torch.Tensor:
    r"""The linear map the population predictor applies: ``x -> V Sigma K^T x`` (Gaussian tilting)."""
    return V @ Sigma @ K.mT


def population_loss(
    V: torch.Tensor, K: torch.Tensor, Sigma: torch.Tensor, W_star: torch.Tensor, sigma: float
) -> torch.Tensor:
    r"""``L(theta) = || (V Sigma K^T - W*) Sigma^{1/2} ||_F^2 + r sigma^2`` per instance (B,)."""
    E = attention_map(V, K, Sigma) - W_star
    return (E @ Sigma * E).sum((-1, -2)) + W_star.shape[-2] * sigma**2


def optimal_loss(W_star: torch.Tensor, sigma: float) -> float:
    """``L* = r sigma^2``: the noise floor."""
    return W_star.shape[-2] * sigma**2


# ---------------------------------------------------------------------------
# Monte Carlo estimator of the population loss (definition (2))
# ---------------------------------------------------------------------------

def factor_B(K: torch.Tensor, Sigma: torch.Tensor) -> torch.Tensor:
    """``B = Sigma^{1/2} K Sigma^{1/2}``, the key-query factor coordinate."""
    S = sym_sqrt(Sigma)
    return S @ K @ S


def mc_scope(K: torch.Tensor, Sigma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Is the nested Monte Carlo estimator's error bar honest at this ``K``?  (per instance)

    Why (derivation, reconstructed from Lemma 7 of the spec):  with ``a = K^T x``
    the inner self-normalized ratio over ``m`` draws of ``x'`` has conditional
    variance ``e^{a^T Sigma a} (Sigma + Sigma a a^T Sigma) / m`` to leading order.
    The outer per-point loss then has variance involving ``E_x exp(c x^T K Sigma K^T x)``
    for ``c = 1`` (cross term) and ``c = 2`` (squared term).  By Lemma 7,
    ``E exp(c x^T M x) < inf`` iff ``c lambda_max(Sigma^{1/2} M Sigma^{1/2}) < 1/2``, and
    ``lambda_max(Sigma^{1/2} K Sigma K^T Sigma^{1/2}) = ||B||_op^2``.  Hence:

    * ``||B||_op^2 < 1/2``: the estimator is consistent with an O(1/m) bias;
    * ``||B||_op^2 < 1/4``: its per-point variance is finite, so the CLT interval is honest.

    Returns ``(in_scope, B_op)`` with ``in_scope = ||B||_op < 1/2``.
    """
    B_op = torch.linalg.matrix_norm(factor_B(K, Sigma), ord=2)
    return B_op < 0.5, B_op


@dataclass(frozen=True)
class MCEstimate:
    """A Monte Carlo estimate per instance with its standard error and scope."""

    mean: torch.Tensor  # (B,)
    se: torch.Tensor  # (B,)
    in_scope: torch.Tensor  # (B,) bool
    B_op: torch.Tensor  # (B,) the scope parameter ||B||_op
    n_outer: int
    n_inner: int

    def interval(self, z: float) -> tuple[torch.Tensor, torch.Tensor]:
        return self.mean - z * self.se, self.mean + z * self.se


def mc_population_loss(
    V: torch.Tensor,
    K: torch.Tensor,
    Sigma: torch.Tensor,
    W_star: torch.Tensor,
    sigma: float,
    n_outer: int,
    n_inner: int,
    gen: torch.Generator,
    chunk: int = 256,
    jackknife: bool = True,
) -> MCEstimate:
    r"""Nested Monte Carlo estimate of definition (2), a ratio of expectations inside an expectation.

    ``L = E_{x,eps} || W* x + eps - V g(x) ||^2``,  ``g(x) = E_{x'}[x' e^{x^T K x'}] / E_{x'}[e^{x^T K x'}]``.

    How the bias and the interval are kept honest:

    * **Noise integrated exactly**: ``E_eps||W*x + eps - v||^2 = ||W*x - v||^2 + r sigma^2``.
    * **Independent inner samples** per outer point, so the outer terms are iid and
      their sample standard error is an honest error bar for their mean.
    * **Jackknife bias correction** of the ratio: with ``m`` inner draws the plug-in
      ``ell(g_m)`` has bias ``c/m + O(m^-2)``; ``m ell(g_m) - (m-1) mean_j ell(g_m^{(-j)})``
      cancels the ``1/m`` term, leaving ``O(m^-2)`` (negligible against the SE for the
      sizes used; the leave-one-out ratios cost O(m) via ``(N - w_j x_j)/(D - w_j)``).
    * **Log-space weights**: softmax over the inner logits, so no overflow.
    * **Scope**: outside ``||B||_op < 1/2`` the variance is infinite (see :func:`mc_scope`);
      the estimate is still returned but flagged ``in_scope = False`` and must not be
      used to "match" anything.

    ``jackknife=False`` gives the plain plug-in estimator (biased at O(1/m)), kept for tests.
    """
    Sigma = check_covariance(Sigma)
    Bsz, d = K.shape[0], K.shape[-1]
    in_scope, B_op = mc_scope(K, Sigma)
    C = torch.linalg.cholesky(Sigma)
    m = n_inner
    noise = W_star.shape[-2] * sigma**2
    Wst = W_star.expand(Bsz, *W_star.shape[-2:]) if W_star.dim() == 2 else W_star

    def draw(k, _):
        x = torch.randn(Bsz, k, d, generator=gen, dtype=DTYPE) @ C.mT  # (B, k, d)
        xp = torch.randn(Bsz, k, m, d, generator=gen, dtype=DTYPE) @ C.mT.unsqueeze(-3)  # (B, k, m, d)
        a = x @ K  # rows a^T = x^T K, i.e. a = K^T x
        w = torch.softmax((xp @ a.unsqueeze(-1)).squeeze(-1), dim=-1)  # (B, k, m)
        g = (w.unsqueeze(-1) * xp).sum(-2)  # (B, k, d)
        g_loo = (g.unsqueeze(-2) - w.unsqueeze(-1) * xp) / (1 - w).clamp_min(1e-300).unsqueeze(-1)
        target = x @ Wst.mT  # (B, k, r)
        ell = (target - g @ V.mT).pow(2).sum(-1)  # (B, k)
        ell_loo = (target.unsqueeze(-2) - g_loo @ V.mT.unsqueeze(1)).pow(2).sum(-1).mean(-1)
        ell_jk = (m * ell - (m - 1) * ell_loo if jackknife else ell) + noise
        return ell_jk.sum(-1), ell_jk.pow(2).sum(-1)

    parts = chunked(n_outer, chunk, draw)
    zero = torch.zeros(Bsz, dtype=DTYPE)
    sums, sumsq = sum((p[0] for p in parts), zero), sum((p[1] for p in parts), zero)
    mean = sums / n_outer
    var = (sumsq - n_outer * mean.pow(2)) / (n_outer - 1)
    return MCEstimate(mean, (var.clamp_min(0) / n_outer).sqrt(), in_scope, B_op, n_outer, n_inner)


# ---------------------------------------------------------------------------
# The n-law: E Lhat_n - L = c(theta)/(n-1) + O(n^-2) (c derived in A.T1.1: theorems/paper_a/softmax_bias/)
# ---------------------------------------------------------------------------

def loo_gap_samples(V: torch.Tensor, K: torch.Tensor, Sigma: torch.Tensor, W_star: torch.Tensor, sigma: float, n: int,
                    n_datasets: int, gen: torch.Generator, include_self: bool = False,
                    max_elems: int = 2**23) -> torch.Tensor:
    r"""Unbiased draws of ``Lhat_n(theta) - L(theta)`` with a control variate, (n_datasets, B).

    Each draw is ``Lhat_n - (1/n) sum_i ||y_i - V Sigma K^T x_i||^2`` on one data set; the
    subtracted oracle loss has expectation exactly ``L(theta)`` (Theorem 1.1), and it is
    strongly correlated with ``Lhat_n``, so the difference has standard deviation O(1/n)
    instead of O(n^{-1/2}) and the O(1/n) gap is measurable with a few hundred data sets.
    """
    Bsz = V.shape[0]
    C = torch.linalg.cholesky(check_covariance(Sigma))
    P = attention_map(V, K, Sigma)

    # written in place chunk by chunk: nothing allocated in one chunk outlives it, so each chunk's temporaries fit
    # where the last one's were (the heap otherwise grew by ~70 MB per chunk, 0.4-6.9 GB, in some processes)
    gaps = torch.empty(n_datasets, Bsz, dtype=DTYPE)

    def draw(k, done):
        x_all, y_all = regression_draw(C, W_star, sigma, (k, Bsz, n), gen)
        for rows in row_blocks(k, n * n * Bsz):
            x, y = x_all[rows], y_all[rows]
            yhat = context_weights(K, x, include_self) @ x @ V.mT
            oracle = x @ P.mT
            gap = ((y - yhat).pow(2).sum(-1) - (y - oracle).pow(2).sum(-1)).mean(-1)
            gaps[done + rows.start:done + rows.stop] = gap

    chunked(n_datasets, max(1, max_elems // (n * n * Bsz)), draw)
    return gaps
