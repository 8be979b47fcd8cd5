r"""Gaussian exponential moments (paper A, Lemma 7) and a tail-rate estimator for divergence detection.

For ``x, x' ~ N(0, Sigma)`` independent, ``S = Sigma^{1/2}``:

* quadratic: ``E exp(x^T M x) = det(I - 2 N)^{-1/2}``, ``N = S sym(M) S``, finite iff ``lambda_max(N) < 1/2``;
* bilinear:  ``E exp(s x^T K x') = det(I - s^2 B B^T)^{-1/2}``, ``B = S K S``, finite iff ``s ||B||_op < 1``.

Outside these regions the moments are ``+inf``.  The log-weight ``t = x^T M x`` (or ``s x^T K x'``) then has an
exponential upper tail ``P(t > u) ~ c u^{-1/2} e^{-kappa u}`` with ``kappa = 1 / (2 lambda_max(N))``
(``1 / (s ||B||_op)``), i.e. ``e^t`` has a Pareto tail of index ``kappa``: the moment is finite iff ``kappa > 1``.
:func:`tail_rate` estimates ``kappa`` from a sample without using ``M`` or ``K`` (only the shape of the tail).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from scipy.optimize import brentq
from scipy.special import gamma as gamma_fn
from scipy.special import gammaincc

from numerics import DTYPE
from numerics.paper_a.model import sym_sqrt


def sym(M: torch.Tensor) -> torch.Tensor:
    """Symmetric part ``(M + M^T) / 2``."""
    return (M + M.mT) / 2


def quadratic_exponent(M: torch.Tensor, Sigma: torch.Tensor) -> torch.Tensor:
    """Eigenvalues (ascending) of ``N = Sigma^{1/2} sym(M) Sigma^{1/2}`` (..., d)."""
    S = sym_sqrt(Sigma)
    return torch.linalg.eigvalsh(S @ sym(M) @ S)


def quadratic_moment(M: torch.Tensor, Sigma: torch.Tensor, exponent: float = -0.5,
                     symmetrize: bool = True) -> torch.Tensor:
    r"""Closed form ``E exp(x^T M x) = det(I - 2 N)^{-1/2}`` per instance; ``+inf`` where ``lambda_max(N) >= 1/2``.

    ``exponent`` and ``symmetrize=False`` (``det(I - 2 S M S)`` with the skew part kept) exist as negative
    controls only.
    """
    S = sym_sqrt(Sigma)
    N = S @ (sym(M) if symmetrize else M) @ S
    d = N.shape[-1]
    det = torch.linalg.det(torch.eye(d, dtype=DTYPE) - 2 * N)
    inside = quadratic_exponent(M, Sigma)[..., -1] < 0.5
    val = det.clamp_min(1e-300).pow(exponent)
    return torch.where(inside, val, torch.full_like(val, math.inf))


def bilinear_singular_values(K: torch.Tensor, Sigma: torch.Tensor) -> torch.Tensor:
    """Singular values (descending) of ``B = Sigma^{1/2} K Sigma^{1/2}``."""
    S = sym_sqrt(Sigma)
    return torch.linalg.svdvals(S @ K @ S)


def bilinear_moment(K: torch.Tensor, Sigma: torch.Tensor, s: torch.Tensor | float,
                    exponent: float = -0.5) -> torch.Tensor:
    r"""Closed form ``E exp(s x^T K x') = det(I - s^2 B B^T)^{-1/2}``; ``+inf`` where ``s ||B||_op >= 1``."""
    b = bilinear_singular_values(K, Sigma)
    s = torch.as_tensor(s, dtype=DTYPE)
    sb = s.reshape(s.shape + (1,) * (b.dim() - s.dim())) * b
    inside = sb[..., 0] < 1
    val = (1 - sb.pow(2)).clamp_min(1e-300).prod(-1).pow(exponent)
    return torch.where(inside, val, torch.full_like(val, math.inf))


# ---------------------------------------------------------------------------
# Samples of the log-weights
# ---------------------------------------------------------------------------

def quadratic_logweights(M: torch.Tensor, Sigma: torch.Tensor, n: int, gen: torch.Generator) -> torch.Tensor:
    """``t = x^T M x`` for ``n`` draws ``x ~ N(0, Sigma)`` per instance, (B, n); ``M`` (B, d, d)."""
    C = torch.linalg.cholesky(Sigma)
    x = torch.randn(M.shape[0], n, M.shape[-1], generator=gen, dtype=DTYPE) @ C.mT
    return ((x @ M) * x).sum(-1)


def bilinear_logweights(K: torch.Tensor, Sigma: torch.Tensor, s: torch.Tensor, n: int,
                        gen: torch.Generator) -> torch.Tensor:
    """``t = s x^T K x'`` for ``n`` independent pairs per instance, (B, n); ``s`` (B,)."""
    C = torch.linalg.cholesky(Sigma)
    x = torch.randn(K.shape[0], n, K.shape[-1], generator=gen, dtype=DTYPE) @ C.mT
    xp = torch.randn(K.shape[0], n, K.shape[-1], generator=gen, dtype=DTYPE) @ C.mT
    return s.reshape(-1, 1) * ((x @ K) * xp).sum(-1)


def mean_exp(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain Monte Carlo ``(mean, standard error)`` of ``e^t`` along the last dim."""
    w = t.exp()
    return w.mean(-1), w.std(-1) / math.sqrt(w.shape[-1])


# ---------------------------------------------------------------------------
# Tail rate
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TailRate:
    """Estimated exponential rate ``kappa`` of the upper tail of ``t`` (= Pareto index of ``e^t``)."""

    raw: torch.Tensor  # exponential-excess MLE (Hill estimator of e^t): biased upward by ~ 1/(2u)
    kappa: torch.Tensor  # MLE under the u^{-1/2} e^{-kappa u} tail model
    se: torch.Tensor
    threshold: torch.Tensor  # u, the (k+1)-th largest t
    k: int

    def interval(self, z: float) -> tuple[torch.Tensor, torch.Tensor]:
        return self.kappa - z * self.se, self.kappa + z * self.se


def _gamma_half_moments(kappa: float, u: float) -> tuple[float, float]:
    """Mean and variance of the excess ``e`` for the density ``∝ (u + e)^{-1/2} e^{-kappa e}`` on ``e > 0``.

    ``E (u + e)^j = Gamma(j + 1/2, kappa u) / (kappa^j Gamma(1/2, kappa u))`` (upper incomplete gamma)."""
    x = kappa * u
    g = [gammaincc(j + 0.5, x) * gamma_fn(j + 0.5) for j in range(3)]
    m1 = g[1] / (kappa * g[0])
    m2 = g[2] / (kappa**2 * g[0])
    return m1 - u, m2 - m1**2


def tail_rate(t: torch.Tensor, k: int) -> TailRate:
    r"""Estimate ``kappa`` in ``P(t > u) ~ c u^{-1/2} e^{-kappa u}`` from the ``k`` largest of ``t`` (last dim).

    Every Gaussian quadratic or bilinear form whose top eigen/singular value is simple has this tail (the
    ``u^{-1/2}`` is that of a one-dimensional chi-square, or of a product of two normals).  Given the threshold
    ``u = t_(k+1) > 0`` the excesses ``e_i = t_(i) - u`` have density ``∝ (u + e)^{-1/2} e^{-kappa e}``, an exponential
    family in ``kappa`` with statistic ``e``: the MLE solves ``E_kappa[e] = mean(e_i)``; its standard error is
    ``1 / sqrt(k Var_kappa(e))``.  ``raw = (k - 1) / sum e_i`` is the model-free Hill estimate (it ignores the
    prefactor and is biased upward by about ``1/(2u)``).  The model error left (other eigenvalues, which the tail
    sees as a slowly varying factor) is ``O(u^{-2})`` relative when the top one has a gap.
    """
    top = torch.topk(t, k + 1, dim=-1).values
    u = top[..., k]
    excess = top[..., :k] - u.unsqueeze(-1)
    mean_ex = excess.mean(-1)
    raw = (k - 1) / excess.sum(-1)
    flat_u, flat_m = u.reshape(-1).tolist(), mean_ex.reshape(-1).tolist()
    kap, se = [], []
    for uu, mm in zip(flat_u, flat_m):
        if not uu > 0:
            kap.append(math.nan), se.append(math.nan)
            continue
        f = lambda kk: _gamma_half_moments(kk, uu)[0] - mm  # noqa: E731  decreasing in kappa
        lo, hi = 1e-3 / mm, 10.0 / mm
        kk = brentq(f, lo, hi) if f(lo) > 0 > f(hi) else math.nan
        kap.append(kk)
        se.append(1 / math.sqrt(k * _gamma_half_moments(kk, uu)[1]) if math.isfinite(kk) else math.nan)
    shape = u.shape
    return TailRate(raw, torch.tensor(kap, dtype=DTYPE).reshape(shape), torch.tensor(se, dtype=DTYPE).reshape(shape),
                    u, k)
