r"""Paper A's Algorithm 1 (structure-aware GD) and the SGD baseline, as ``numerics.optim`` chains.

Algorithm 1 (spec Section 3), per run:

1. ``Sigmahat = (1/N) sum x_i x_i^T``,  ``What = (sum y_i x_i^T)(sum x_i x_i^T)^{-1}``;
2. spectral init: ``What Sigmahat^{1/2} = Uh Lamh Vh^T``, ``theta_0`` = the Mfold point of ``(Uh, Lamh, Vh, Sigmahat)``, ``Q = I``;
3. ``theta <- theta - eta * precondition(g)``, ``g`` the oracle gradient of ``Lhat_n + lambda Rhat``.

    Algorithm 1 = chain(precondition(Sigmahat), scale(eta))   on objective  Lhat + lambda Rhat
    SGD         = scale(eta)                                  on objective  Lhat (lambda = 0), random init

With ``Sigmahat = Sigma`` the preconditioned step is exactly GD in factor coordinates
(``A <- A - eta G_A``, ``B <- B - eta G_B``), the geometry in which Theorem 1.3 holds.
"""
from __future__ import annotations

import torch

from numerics import DTYPE
from numerics.optim import Trajectory, Transform, chain, run, scale
from numerics.paper_a.geometry import (
    LAMBDA,
    dist_to_manifold,
    manifold_point,
    regularized_loss_grad,
    regularizer,
    to_factors,
)
from numerics.paper_a.model import optimal_loss, population_loss, sym_sqrt

# ---------------------------------------------------------------------------
# Instances (Appendix A: random Gaussian matrices; the paper's exact recipe is lost)
# ---------------------------------------------------------------------------


def random_instance(
    d: int, r: int, gen: torch.Generator, batch: int | None = None, m_op: float = 1.0, sigma_floor: float = 0.5
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""``(Sigma, W_star)`` built from iid N(0,1) matrices ``G`` (d, d), ``H`` (r, d):

    ``Sigma = sigma_floor I + G G^T / d`` (A1: eigenvalues >= ``sigma_floor``),
    ``W* = m_op H Sigma^{-1/2} / ||H||_op`` so that ``M* = W* Sigma^{1/2} = m_op H / ||H||_op``:
    ``sigma_1(M*) = m_op`` (the A3 knob: ``||B||_op = m_op^{1/2}`` on Mfold) and A2 holds a.s. when ``r >= d``.
    Shapes (d, d), (r, d), or with a leading ``batch``.
    """
    shape = () if batch is None else (batch,)
    G = torch.randn(*shape, d, d, generator=gen, dtype=DTYPE)
    H = torch.randn(*shape, r, d, generator=gen, dtype=DTYPE)
    Sigma = sigma_floor * torch.eye(d, dtype=DTYPE) + G @ G.mT / d
    Sigma = (Sigma + Sigma.mT) / 2
    M = m_op * H / torch.linalg.matrix_norm(H, ord=2)[..., None, None]
    return Sigma, M @ torch.linalg.inv(sym_sqrt(Sigma))


def random_init(batch: int, r: int, d: int, gen: torch.Generator, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """The baseline's init: every entry of ``V`` (B, r, d) and ``K`` (B, d, d) iid ``N(0, scale^2)``."""
    V = scale * torch.randn(batch, r, d, generator=gen, dtype=DTYPE)
    K = scale * torch.randn(batch, d, d, generator=gen, dtype=DTYPE)
    return V, K


# ---------------------------------------------------------------------------
# Steps 1-2: least squares and spectral initialization
# ---------------------------------------------------------------------------


def least_squares(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``What = (sum y x^T)(sum x x^T)^{-1}`` (B, r, d) and ``Sigmahat = (1/N) sum x x^T`` (B, d, d)."""
    XtX = x.mT @ x
    W_hat = torch.linalg.solve(XtX, x.mT @ y).mT  # XtX symmetric, so (XtX^{-1} X^T Y)^T = Y^T X XtX^{-1}
    return W_hat, XtX / x.shape[-2]


def spectral_init(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    r"""``theta_0`` of Algorithm 1 from the samples: :func:`spectral_init_from_estimates` of :func:`least_squares`."""
    return spectral_init_from_estimates(*least_squares(x, y))


def spectral_init_from_estimates(W_hat: torch.Tensor, S_hat: torch.Tensor):
    r"""Step 2 of Algorithm 1 from ``(What, Sigmahat)``: the point of Mfold of ``What Sigmahat^{1/2}``
    (:func:`spectral_point`)."""
    return spectral_point(W_hat @ sym_sqrt(S_hat), S_hat)


def spectral_point(M_hat: torch.Tensor, S_hat: torch.Tensor):
    r"""The point of Mfold built from an estimate ``M_hat`` of ``M* = W* Sigma^{1/2}`` and ``Sigmahat``: SVD
    ``M_hat = Uh Lamh Vh^T``, then ``V = Uh Lamh^{1/2} Sigmahat^{-1/2}``, ``K = Sigmahat^{-1/2} Vh Lamh^{1/2}
    Sigmahat^{-1/2}``."""
    Uh, Lh, VhT = torch.linalg.svd(M_hat, full_matrices=False)
    return manifold_point(Uh, Lh, VhT.mT, S_hat)


# ---------------------------------------------------------------------------
# Step 3: transforms
# ---------------------------------------------------------------------------


def spd_inverse(S: torch.Tensor) -> torch.Tensor:
    """``S^{-1}`` of a symmetric positive definite ``S`` (by Cholesky), symmetrized."""
    Si = torch.cholesky_inverse(torch.linalg.cholesky(S))
    return (Si + Si.mT) / 2


def precondition(Sigma_hat: torch.Tensor) -> Transform:
    r"""``(g_V, g_K) -> (g_V Sigmahat^{-1}, Sigmahat^{-1} g_K Sigmahat^{-1})``, i.e. ``Sigmatildehat^{-1} g Sigmahat^{-1}``.

    Why: with ``A = V S``, ``B = S K S`` (``S = Sigma^{1/2}``) the factor gradients are ``G_A = g_V S^{-1}``,
    ``G_B = S^{-1} g_K S^{-1}``, so ``V - eta g_V Sigma^{-1}`` maps to ``A - eta G_A`` and
    ``K - eta Sigma^{-1} g_K Sigma^{-1}`` to ``B - eta G_B``: plain GD in the Sigmatilde geometry.
    ``Sigma_hat`` is (d, d) or (B, d, d), fixed for the whole run (``I`` for a run of plain GD in a stack).
    """
    Si = spd_inverse(Sigma_hat)
    return Transform(lambda p: (), lambda g, s, p, info: ((g[0] @ Si, Si @ g[1] @ Si), s))


def algorithm1(Sigma_hat: torch.Tensor, eta: float) -> Transform:
    """Step 3 of Algorithm 1: ``theta <- theta - eta * precondition(g)``."""
    return chain(precondition(Sigma_hat), scale(eta))


def sgd(eta: float) -> Transform:
    """The baseline: ``theta <- theta - eta g`` (pair it with a ``lam = 0`` objective and :func:`random_init`)."""
    return scale(eta)


# ---------------------------------------------------------------------------
# Objectives (the oracle and minibatch ones live in numerics.paper_a.oracle)
# ---------------------------------------------------------------------------


def population_objective(Sigma, W_star, sigma: float, lam: float = LAMBDA, reg_Sigma: torch.Tensor | None = None):
    """Exact gradient of ``L_lambda = L + lambda R`` (``reg_Sigma`` overrides the covariance inside ``R``)."""
    R_cov = Sigma if reg_Sigma is None else reg_Sigma

    def objective(params):
        V, K = params
        L = population_loss(V, K, Sigma, W_star, sigma)
        R = regularizer(V, K, R_cov)
        return regularized_loss_grad(V, K, Sigma, W_star, lam, reg_Sigma), {"loss": L + lam * R, "L": L, "R": R}

    return objective


# ---------------------------------------------------------------------------
# Training with population metrics
# ---------------------------------------------------------------------------


def population_metrics(V, K, Sigma, W_star, sigma: float, lam: float = LAMBDA) -> dict[str, torch.Tensor]:
    """Per-run ``L``, excess ``L - L*``, ``R``, ``L_lambda``, ``dist`` to Mfold and ``||B||_op`` (the A3 scope)."""
    L = population_loss(V, K, Sigma, W_star, sigma)
    R = regularizer(V, K, Sigma)
    return {
        "L": L,
        "excess": L - optimal_loss(W_star, sigma),
        "R": R,
        "L_lambda": L + lam * R,
        "dist": dist_to_manifold(V, K, Sigma, W_star),
        "B_op": _op_norm_or_nan(to_factors(V, K, Sigma)[1]),
    }


def _op_norm_or_nan(M: torch.Tensor) -> torch.Tensor:
    """Spectral norm per run; NaN (not an SVD error) for runs that diverged."""
    ok = torch.isfinite(M).all(-1).all(-1)
    nrm = torch.linalg.matrix_norm(torch.where(ok[..., None, None], M, torch.zeros_like(M)), ord=2)
    return torch.where(ok, nrm, torch.full_like(nrm, float("nan")))


def train(
    params, objective, transform: Transform, n_steps: int, Sigma, W_star, sigma: float,
    lam: float = LAMBDA, record_at=None,
) -> Trajectory:
    """``optim.run`` recording :func:`population_metrics` plus the objective's own ``info['loss']`` (as
    ``objective``) at log-spaced steps (default) or ``record_at``.  Diverged runs record inf/NaN, never raise."""

    def record(p, info):
        m = population_metrics(*p, Sigma, W_star, sigma, lam)
        m["objective"] = info["loss"]
        return m

    return run(tuple(params), objective, transform, n_steps, record, record_at)

