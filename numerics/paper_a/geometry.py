r"""Paper A's geometry: factor coordinates, the manifold of minima, Procrustes projection (spec Section 2).

Parameters ``theta = (V, K)`` with ``V`` (B, r, d), ``K`` (B, d, d); ``Sigma`` is (d, d) shared or
(B, d, d) per run; ``W_star`` (r, d) or (B, r, d), ``r >= d`` (assumption A2).

Factor coordinates (``S = Sigma^{1/2}``)::

    A = V S,   B = S K S,   L(theta) - L* = ||A B^T - M*||^2,   M* = W* S = U Lam Vs^T (compact SVD)

Everything metric is Frobenius in factor coordinates:

* ``<theta1, theta2>_Sigmatilde = tr(V1^T V2 Sigma) + tr(K1^T Sigma K2 Sigma) = <A1, A2> + <B1, B2>``;
* dual norm of a gradient ``G = (G_V, G_K)``: ``||G||_*^2 = tr(G_V^T G_V Sigma^-1) + tr(G_K^T Sigma^-1 G_K Sigma^-1)
  = ||G_V S^-1||^2 + ||S^-1 G_K S^-1||^2``, the Frobenius norm of the factor-coordinate gradient.

The regularizer ``R = ||A^T A - B^T B||^2 = tr((Sigma D)^2)`` with ``D = V^T V - K^T Sigma K`` is a polynomial
in ``Sigma``, so ``Rhat`` (``Sigma`` -> ``Sigmahat``) and its gradient need no matrix square root.
"""
from __future__ import annotations

import torch

from numerics import DTYPE
from numerics.paper_a.model import population_loss, sym_inv_sqrt, sym_sqrt

LAMBDA = 0.25
"""Default regularization weight in ``L_lambda = L + lambda R`` (our choice; any lambda > 0 has the same minimizers)."""

Theta = tuple[torch.Tensor, torch.Tensor]


def _eye(d: int) -> torch.Tensor:
    return torch.eye(d, dtype=DTYPE)


def _frob2(M: torch.Tensor) -> torch.Tensor:
    return M.pow(2).sum((-1, -2))


# ---------------------------------------------------------------------------
# Factor coordinates
# ---------------------------------------------------------------------------

def to_factors(V: torch.Tensor, K: torch.Tensor, Sigma: torch.Tensor) -> Theta:
    """``(A, B) = (V Sigma^{1/2}, Sigma^{1/2} K Sigma^{1/2})``."""
    S = sym_sqrt(Sigma)
    return V @ S, S @ K @ S


def from_factors(A: torch.Tensor, B: torch.Tensor, Sigma: torch.Tensor) -> Theta:
    """Inverse of :func:`to_factors`: ``V = A Sigma^{-1/2}``, ``K = Sigma^{-1/2} B Sigma^{-1/2}``."""
    Si = sym_inv_sqrt(Sigma)
    return A @ Si, Si @ B @ Si


def grad_to_factors(G_V: torch.Tensor, G_K: torch.Tensor, Sigma: torch.Tensor) -> Theta:
    """Chain rule back to factor coordinates: ``(G_A, G_B) = (G_V S^{-1}, S^{-1} G_K S^{-1})``.

    (``V = A S^{-1}`` gives ``G_A = G_V S^{-1}``; ``K = S^{-1} B S^{-1}`` gives ``G_B = S^{-1} G_K S^{-1}``.)
    """
    Si = sym_inv_sqrt(Sigma)
    return G_V @ Si, Si @ G_K @ Si


def target_svd(Sigma: torch.Tensor, W_star: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Compact SVD of ``M* = W* Sigma^{1/2} = U diag(Lam) Vs^T``: ``U`` (r, d), ``Lam`` (d,), ``Vs`` (d, d)."""
    r, d = W_star.shape[-2], W_star.shape[-1]
    if r < d:
        raise ValueError(f"assumption A2 needs r >= d, got r={r}, d={d}")
    U, Lam, VsT = torch.linalg.svd(W_star @ sym_sqrt(Sigma), full_matrices=False)
    return U, Lam, VsT.mT


# ---------------------------------------------------------------------------
# Losses and their closed-form gradients
# ---------------------------------------------------------------------------

def sample_covariance(x: torch.Tensor) -> torch.Tensor:
    """``Sigmahat = (1/n) sum_i x_i x_i^T`` (uncentred: the mean is known to be 0), x (..., n, d)."""
    return x.mT @ x / x.shape[-2]


def regularizer(V: torch.Tensor, K: torch.Tensor, Sigma: torch.Tensor) -> torch.Tensor:
    r"""``R = ||A^T A - B^T B||^2 = tr((Sigma D)^2)``, ``D = V^T V - K^T Sigma K``.  Pass ``Sigmahat`` for ``Rhat``."""
    SD = Sigma @ (V.mT @ V - K.mT @ Sigma @ K)
    return (SD * SD.mT).sum((-1, -2))


def identity_regularizer(V: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """Negative control: ``R`` with ``I`` in place of ``Sigma`` (``||V^T V - K^T K||^2``); not zero on Mfold."""
    return regularizer(V, K, _eye(V.shape[-1]))


def regularized_loss(V, K, Sigma, W_star, sigma: float, lam: float = LAMBDA) -> torch.Tensor:
    """``L_lambda = L + lambda R`` per run (B,)."""
    return population_loss(V, K, Sigma, W_star, sigma) + lam * regularizer(V, K, Sigma)


def loss_grad(V, K, Sigma, W_star) -> Theta:
    r"""Gradient of ``L = tr(F Sigma F^T) + L*``, ``F = V Sigma K^T - W*``:
    ``dL/dV = 2 F Sigma K Sigma``,  ``dL/dK = 2 Sigma F^T V Sigma``.
    (In factor coordinates: ``2 (A B^T - M*) B`` and ``2 (A B^T - M*)^T A``.)
    """
    F = V @ Sigma @ K.mT - W_star
    return 2 * F @ Sigma @ K @ Sigma, 2 * Sigma @ F.mT @ V @ Sigma


def regularizer_grad(V, K, Sigma) -> Theta:
    r"""Gradient of ``R = tr((Sigma D)^2)``: with ``E = Sigma D Sigma``, ``dR/dV = 4 V E``, ``dR/dK = -4 Sigma K E``.
    (In factor coordinates: ``4 A (A^T A - B^T B)`` and ``-4 B (A^T A - B^T B)``.)
    """
    E = Sigma @ (V.mT @ V - K.mT @ Sigma @ K) @ Sigma
    return 4 * V @ E, -4 * Sigma @ K @ E


def regularized_loss_grad(V, K, Sigma, W_star, lam: float = LAMBDA, reg_Sigma: torch.Tensor | None = None) -> Theta:
    """Gradient of ``L + lambda R``; ``reg_Sigma`` overrides the covariance inside ``R`` (e.g. ``I``: negative control)."""
    gV, gK = loss_grad(V, K, Sigma, W_star)
    rV, rK = regularizer_grad(V, K, Sigma if reg_Sigma is None else reg_Sigma)
    return gV + lam * rV, gK + lam * rK


# ---------------------------------------------------------------------------
# The Sigmatilde metric
# ---------------------------------------------------------------------------

def sigma_inner(theta1: Theta, theta2: Theta, Sigma: torch.Tensor) -> torch.Tensor:
    """``<theta1, theta2>_Sigmatilde = tr(V1^T V2 Sigma) + tr(K1^T Sigma K2 Sigma)`` per run."""
    (V1, K1), (V2, K2) = theta1, theta2
    return (V1 * (V2 @ Sigma)).sum((-1, -2)) + (K1 * (Sigma @ K2 @ Sigma)).sum((-1, -2))


def sigma_norm(theta: Theta, Sigma: torch.Tensor) -> torch.Tensor:
    """``||theta||_Sigmatilde`` = Frobenius norm of ``(A, B)``."""
    return sigma_inner(theta, theta, Sigma).clamp_min(0).sqrt()


def dual_norm(G: Theta, Sigma: torch.Tensor) -> torch.Tensor:
    """``||G||_* = sqrt(tr(G^T Sigmatilde^{-1} G Sigma^{-1}))`` = Frobenius norm of the factor-coordinate gradient."""
    G_V, G_K = G
    Si = torch.linalg.inv(Sigma)
    return ((G_V * (G_V @ Si)).sum((-1, -2)) + (G_K * (Si @ G_K @ Si)).sum((-1, -2))).clamp_min(0).sqrt()


def euclidean_pairing(G: Theta, delta: Theta) -> torch.Tensor:
    """``<G, delta>`` in theta coordinates (the pairing in one-point strong convexity (3))."""
    return sum((g * t).sum((-1, -2)) for g, t in zip(G, delta))


# ---------------------------------------------------------------------------
# The manifold of minima
# ---------------------------------------------------------------------------

def haar_orthogonal(batch: int, d: int, gen: torch.Generator) -> torch.Tensor:
    """``batch`` Haar-random matrices in O(d): QR of a Gaussian matrix with the signs of ``diag(R)`` fixed."""
    Q, R = torch.linalg.qr(torch.randn(batch, d, d, generator=gen, dtype=DTYPE))
    return Q * torch.sign(R.diagonal(dim1=-2, dim2=-1)).unsqueeze(-2)


def manifold_factors(U, Lam, Vs, Q: torch.Tensor | None = None) -> Theta:
    """``(A, B) = (U Lam^{1/2} Q, Vs Lam^{1/2} Q)``; ``Q = I`` when omitted."""
    s = Lam.sqrt().unsqueeze(-2)  # right-multiplying by diag(Lam^{1/2}) scales columns
    A, B = U * s, Vs * s
    if Q is not None:
        A, B = A @ Q, B @ Q
    return A, B


def manifold_point(U, Lam, Vs, Sigma, Q: torch.Tensor | None = None) -> Theta:
    """``V = U Lam^{1/2} Q Sigma^{-1/2}``, ``K = Sigma^{-1/2} Vs Lam^{1/2} Q Sigma^{-1/2}`` (a point of Mfold)."""
    return from_factors(*manifold_factors(U, Lam, Vs, Q), Sigma)


def minimizer(Sigma, W_star, Q: torch.Tensor | None = None) -> Theta:
    """The point of Mfold with rotation ``Q`` (B, d, d) (``Q = I`` if omitted)."""
    return manifold_point(*target_svd(Sigma, W_star), Sigma, Q)


PROJECTION_METHODS = ("polar", "qr", "identity", "normalized")


def procrustes_rotation(A, B, U, Lam, Vs, method: str = "polar") -> torch.Tensor:
    r"""The rotation ``Q*`` of the nearest point of Mfold to ``Z = [A; B]``.

    ``min_Q ||A - U Lam^{1/2} Q||^2 + ||B - Vs Lam^{1/2} Q||^2 = const - 2 tr(Q^T C)``,
    ``C = Lam^{1/2} (U^T A + Vs^T B)``, maximized over O(d) by the polar factor ``Q* = W Z^T`` of ``C = W S Z^T``.

    Negative controls (``method``): ``"qr"`` the orthogonal QR factor of ``C`` (on Mfold, not nearest),
    ``"identity"`` ``Q = I``, ``"normalized"`` ``Q = sqrt(d) C / ||C||_F`` (not orthogonal: off Mfold).
    Runs with non-finite input get a NaN rotation instead of an SVD error.
    """
    C = Lam.sqrt().unsqueeze(-1) * (U.mT @ A + Vs.mT @ B)
    d = C.shape[-1]
    ok = torch.isfinite(C).all(-1).all(-1)
    C = torch.where(ok[..., None, None], C, _eye(d))
    if method == "polar":
        W, _, Zt = torch.linalg.svd(C)
        Q = W @ Zt
    elif method == "qr":
        Q, R = torch.linalg.qr(C)
        Q = Q * torch.sign(R.diagonal(dim1=-2, dim2=-1)).unsqueeze(-2)
    elif method == "identity":
        Q = _eye(d).expand_as(C)
    elif method == "normalized":
        Q = C * (d**0.5 / torch.linalg.matrix_norm(C)[..., None, None])
    else:
        raise ValueError(f"unknown projection method {method!r}; choose from {PROJECTION_METHODS}")
    return torch.where(ok[..., None, None], Q, torch.full_like(Q, float("nan")))


def procrustes_projection(V, K, Sigma, W_star, method: str = "polar") -> Theta:
    """``P(theta)``: the Sigmatilde-nearest point of Mfold (Lemma 1), or a negative-control variant."""
    U, Lam, Vs = target_svd(Sigma, W_star)
    A, B = to_factors(V, K, Sigma)
    return manifold_point(U, Lam, Vs, Sigma, procrustes_rotation(A, B, U, Lam, Vs, method))


def dist_to_manifold(V, K, Sigma, W_star, method: str = "polar") -> torch.Tensor:
    """``dist(theta) = ||theta - P(theta)||_Sigmatilde``, computed as a difference in factor coordinates
    (not via ``||Z||^2 - 2||C||_nuc + 2 tr Lam``, which cancels catastrophically near Mfold)."""
    U, Lam, Vs = target_svd(Sigma, W_star)
    A, B = to_factors(V, K, Sigma)
    As, Bs = manifold_factors(U, Lam, Vs, procrustes_rotation(A, B, U, Lam, Vs, method))
    return (_frob2(A - As) + _frob2(B - Bs)).sqrt()


def perturb_from_manifold(
    Sigma, W_star, radius, batch: int, gen: torch.Generator, direction: str = "normal", Q: torch.Tensor | None = None
) -> tuple[Theta, Theta]:
    r"""Points at Sigmatilde-distance ``radius`` (float or (B,)) from a point ``theta*`` of Mfold.

    ``theta*`` has rotation ``Q`` (Haar-random if omitted); the offset is a Gaussian direction in factor
    coordinates ``Delta = [D_A; D_B]``, scaled to Frobenius norm ``radius``.

    * ``direction="normal"``: the tangent part ``Z* Omega`` (``Omega`` skew) is removed first, so that
      ``Z*^T Delta`` is symmetric.  Then ``Z*^T Z = 2 Q^T Lam Q + Z*^T Delta`` is symmetric, and while it is
      also PSD (always for ``radius <= sqrt(2) sigma_d(M*) / sigma_1(M*)^{1/2}``) ``P(theta) = theta*`` and
      ``dist(theta) = radius`` exactly.  The tangent part solves the Sylvester equation
      ``G Omega + Omega G = Z*^T Delta - Delta^T Z*``, ``G = Z*^T Z* = Q^T (2 Lam) Q``, diagonal in ``Q``'s basis.
    * ``direction="isotropic"``: no projection; ``dist(theta) <= radius``.

    Returns ``(theta, theta_star)``.
    """
    U, Lam, Vs = target_svd(Sigma, W_star)
    r, d = U.shape[-2], U.shape[-1]
    Q = haar_orthogonal(batch, d, gen) if Q is None else Q
    As, Bs = manifold_factors(U, Lam, Vs, Q)
    Zs = torch.cat([As, Bs], -2)
    Delta = torch.randn(batch, r + d, d, generator=gen, dtype=DTYPE)
    if direction == "normal":
        T = Zs.mT @ Delta
        rhs = Q @ (T - T.mT) @ Q.mT  # in the eigenbasis of G: G' = diag(2 Lam)
        two_lam = 2 * Lam.expand(batch, d)
        Omega = Q.mT @ (rhs / (two_lam.unsqueeze(-1) + two_lam.unsqueeze(-2))) @ Q
        Delta = Delta - Zs @ Omega
    elif direction != "isotropic":
        raise ValueError(f"direction must be 'normal' or 'isotropic', got {direction!r}")
    radius = torch.as_tensor(radius, dtype=DTYPE)
    Delta = Delta * (radius / torch.linalg.matrix_norm(Delta)).reshape(-1, 1, 1)
    theta = from_factors(As + Delta[..., :r, :], Bs + Delta[..., r:, :], Sigma)
    return theta, from_factors(As, Bs, Sigma)
