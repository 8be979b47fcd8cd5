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


def euclidean_norm(G: Theta) -> torch.Tensor:
    """Negative control for :func:`dual_norm`: ``sqrt(||G_V||^2 + ||G_K||^2)``, the Euclidean norm of a theta-gradient
    (it weighs the factor-coordinate gradient by ``Sigma``: ``G_V = G_A S``, ``G_K = S G_B S``)."""
    return (_frob2(G[0]) + _frob2(G[1])).sqrt()


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


def normal_projection(H: torch.Tensor, Zs: torch.Tensor, Lam: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    r"""Orthogonal projection of ``H`` (B, r + d, d) onto the normal space ``N = {H : Z*^T H symmetric}`` of Mfold at
    ``Z* = Z*_0 Q`` (``Z*^T Z* = Q^T (2 Lam) Q``).

    Removes the tangent part ``Z* Omega`` (``Omega`` skew), which solves the Sylvester equation
    ``G Omega + Omega G = Z*^T H - H^T Z*``, ``G = Z*^T Z*``: diagonal in ``Q``'s basis.
    """
    T = Zs.mT @ H
    rhs = Q @ (T - T.mT) @ Q.mT  # in the eigenbasis of G: G' = diag(2 Lam)
    two = 2 * Lam.expand(H.shape[0], -1)
    Om = Q.mT @ (rhs / (two.unsqueeze(-1) + two.unsqueeze(-2))) @ Q
    return H - Zs @ Om


def point_near_manifold(Sigma, W_star, radius, Q: torch.Tensor, Delta: torch.Tensor,
                        direction: str = "normal") -> tuple[Theta, Theta]:
    r"""The point ``Z*_0 Q + radius Delta' / ||Delta'||`` in factor coordinates, back in theta coordinates, and the
    point ``theta*`` of Mfold it was moved from (``Q`` (B, d, d) in O(d), ``Delta`` (B, r + d, d), ``radius`` a float
    or (B,)).

    * ``direction="normal"``: ``Delta' = `` :func:`normal_projection` of ``Delta``, so ``Z*^T Delta'`` is symmetric;
      then ``Z*^T Z = 2 Q^T Lam Q + Z*^T Delta'`` is symmetric, and while it is also PSD (always for
      ``radius <= sqrt(2) sigma_d(M*) / sigma_1(M*)^{1/2}``) ``P(theta) = theta*`` and ``dist(theta) = radius``.
    * ``direction="isotropic"``: ``Delta' = Delta``; ``dist(theta) <= radius``.

    A direction with no usable part (``Delta = 0``, or purely tangent for ``"normal"``: e.g. a shrunk probe instance)
    is replaced by the radial direction ``Z*`` itself, which is normal to Mfold.
    """
    U, Lam, Vs = target_svd(Sigma, W_star)
    r = U.shape[-2]
    As, Bs = manifold_factors(U, Lam, Vs, Q)
    Zs = torch.cat([As, Bs], -2)
    if direction == "normal":
        Delta = normal_projection(Delta, Zs, Lam, Q)
    elif direction != "isotropic":
        raise ValueError(f"direction must be 'normal' or 'isotropic', got {direction!r}")
    norm = torch.linalg.matrix_norm(Delta)
    usable = norm > 1e-12 * torch.linalg.matrix_norm(Zs)
    if not bool(usable.all()):
        Delta = torch.where(usable.reshape(-1, 1, 1), Delta, Zs)
        norm = torch.linalg.matrix_norm(Delta)
    radius = torch.as_tensor(radius, dtype=DTYPE)
    Delta = Delta * (radius / norm).reshape(-1, 1, 1)
    theta = from_factors(As + Delta[..., :r, :], Bs + Delta[..., r:, :], Sigma)
    return theta, from_factors(As, Bs, Sigma)


def perturb_from_manifold(
    Sigma, W_star, radius, batch: int, gen: torch.Generator, direction: str = "normal", Q: torch.Tensor | None = None
) -> tuple[Theta, Theta]:
    r"""Points at Sigmatilde-distance ``radius`` (float or (B,)) from a point ``theta*`` of Mfold
    (:func:`point_near_manifold`): ``theta*`` has rotation ``Q`` (Haar-random if omitted), the offset is a Gaussian
    direction in factor coordinates ``Delta = [D_A; D_B]``, projected onto the normal space (``"normal"``: then
    ``dist(theta) = radius``) or not (``"isotropic"``: ``dist(theta) <= radius``).  Returns ``(theta, theta_star)``.
    """
    U, Lam, Vs = target_svd(Sigma, W_star)
    r, d = U.shape[-2], U.shape[-1]
    Q = haar_orthogonal(batch, d, gen) if Q is None else Q
    Delta = torch.randn(batch, r + d, d, generator=gen, dtype=DTYPE)
    return point_near_manifold(Sigma, W_star, radius, Q, Delta, direction)


# ---------------------------------------------------------------------------
# Points near the manifold, including the worst ones for one-point conditions (A.T1.3, A.L2)
# ---------------------------------------------------------------------------

def factor_grad(Z: torch.Tensor, M: torch.Tensor, r: int, lam: float = LAMBDA) -> torch.Tensor:
    """``grad f`` in stacked factor coordinates ``Z = [A; B]``, ``f = ||A B^T - M*||^2 + lam ||A^T A - B^T B||^2``."""
    A, B = Z[..., :r, :], Z[..., r:, :]
    E = A @ B.mT - M
    Dm = A.mT @ A - B.mT @ B
    c = 4 * lam
    return torch.cat([2 * E @ B + c * (A @ Dm), 2 * E.mT @ A - c * (B @ Dm)], -2)


def factor_loss(Z: torch.Tensor, M: torch.Tensor, r: int, lam: float = LAMBDA) -> torch.Tensor:
    """``f = ||A B^T - M*||^2 + lam ||A^T A - B^T B||^2`` (``= L_lambda - L*``) in stacked factor coordinates."""
    A, B = Z[..., :r, :], Z[..., r:, :]
    return _frob2(A @ B.mT - M) + lam * _frob2(A.mT @ A - B.mT @ B)


ADVERSARIAL_TARGETS = ("alpha", "beta", "loss")


def adversarial_points(Sigma, W_star, radius: torch.Tensor, gen: torch.Generator, target: str, iters: int,
                       lam: float = LAMBDA) -> Theta:
    r"""Normal perturbations ``H`` of norm ``radius`` (B,) of Haar-random points of Mfold that minimize
    ``<grad f, H>/|H|^2`` (``target="alpha"``), or maximize ``|grad f|^2/|H|^2`` (``"beta"``) or ``f/|H|^2``
    (``"loss"``), by projected normalized gradient steps on the sphere; ``f`` has regularization weight ``lam``
    (default 1/4: the claims' ``L_lambda``)."""
    if target not in ADVERSARIAL_TARGETS:
        raise ValueError(f"unknown target {target!r}; choose from {ADVERSARIAL_TARGETS}")
    U, Lam, Vs = target_svd(Sigma, W_star)
    r, d = U.shape[-2], U.shape[-1]
    n = radius.shape[0]
    Q = haar_orthogonal(n, d, gen)
    Zs = torch.cat(manifold_factors(U, Lam, Vs, Q), -2)
    M = (U * Lam) @ Vs.mT
    rad = radius.reshape(-1, 1, 1)

    def unit(X):
        return X / torch.linalg.matrix_norm(X).reshape(-1, 1, 1)

    H = rad * unit(normal_projection(torch.randn(n, r + d, d, generator=gen, dtype=DTYPE), Zs, Lam, Q))
    sign = 1.0 if target == "alpha" else -1.0
    for it in range(iters):
        H = H.detach().requires_grad_(True)
        h2 = H.pow(2).sum((-1, -2))
        if target == "loss":
            obj = factor_loss(Zs + H, M, r, lam) / h2
        else:
            G = factor_grad(Zs + H, M, r, lam)
            obj = (G * H).sum((-1, -2)) / h2 if target == "alpha" else G.pow(2).sum((-1, -2)) / h2
        (g,) = torch.autograd.grad(sign * obj.sum(), H)
        step = 0.3 * (1 - it / iters) + 0.01
        with torch.no_grad():
            H = H - step * rad * unit(normal_projection(g, Zs, Lam, Q))
            H = rad * unit(normal_projection(H, Zs, Lam, Q))
    H = H.detach()
    return from_factors((Zs + H)[..., :r, :], (Zs + H)[..., r:, :], Sigma)


def sample_near_manifold(Sigma, W_star, n_each: int, gen: torch.Generator, target: str, adv_iters: int, rho: float,
                         lam: float = LAMBDA):
    """Points within ``rho`` of Mfold: ``n_each`` normal and ``n_each`` isotropic ones with radius uniform on
    ``[0.02, 1] rho``, plus adversarial ones (:func:`adversarial_points` for ``target``, regularization weight
    ``lam``) at radii ``(1/4, 1/2, 3/4, 1) rho``.  Returns ``(V, K, kinds)``."""
    out_V, out_K, kinds = [], [], []
    for direction in ("normal", "isotropic"):
        radius = rho * (0.02 + 0.98 * torch.rand(n_each, generator=gen, dtype=DTYPE))
        (V, K), _ = perturb_from_manifold(Sigma, W_star, radius, n_each, gen, direction)
        out_V.append(V), out_K.append(K)
        kinds += [direction] * n_each
    n_adv = 4 * max(1, n_each // 32)
    radius = rho * torch.tensor([0.25, 0.5, 0.75, 1.0], dtype=DTYPE).repeat(n_adv // 4)
    V, K = adversarial_points(Sigma, W_star, radius, gen, target, adv_iters, lam)
    out_V.append(V), out_K.append(K)
    kinds += ["adversarial"] * n_adv
    return torch.cat(out_V), torch.cat(out_K), kinds


def hessian_on_normal_space(Sigma, W_star, gen: torch.Generator, lam: float = LAMBDA):
    """Hessian of ``L_lambda`` (the theta-coordinate code, differentiated by autograd through :func:`from_factors`)
    in factor coordinates at a Haar-random point of Mfold: its eigenvalues on the normal space (ascending), ``Lam``,
    and its largest |action| on the tangent space."""
    U, Lam, Vs = target_svd(Sigma, W_star)
    r, d = U.shape
    Q = haar_orthogonal(1, d, gen)
    As, Bs = manifold_factors(U, Lam, Vs, Q)
    Zs = torch.cat([As, Bs], -2)[0]

    def F(z):
        Z = z.reshape(1, r + d, d)
        V, K = from_factors(Z[:, :r], Z[:, r:], Sigma)
        return regularized_loss(V, K, Sigma, W_star, 0.0, lam)[0]

    Hs = torch.autograd.functional.hessian(F, Zs.reshape(-1))
    tang = []
    for i in range(d):
        for j in range(i + 1, d):
            Om = torch.zeros(d, d, dtype=DTYPE)
            Om[i, j], Om[j, i] = 1.0, -1.0
            tang.append((Zs @ Om).reshape(-1))
    n = (r + d) * d
    Pt = torch.zeros(n, n, dtype=DTYPE)
    if tang:
        Qt, _ = torch.linalg.qr(torch.stack(tang, 1))
        Pt = Qt @ Qt.T
    e, v = torch.linalg.eigh(torch.eye(n, dtype=DTYPE) - Pt)
    N = v[:, e > 0.5]
    ev = torch.linalg.eigvalsh(N.T @ Hs @ N)
    tangent_action = float((Hs @ Pt).abs().max()) if tang else 0.0
    return ev, Lam, tangent_action


def instance_from_target(Sigma, M_star) -> tuple[torch.Tensor, torch.Tensor]:
    """``(Sigma, W*)`` with ``W* = M* Sigma^{-1/2}``, i.e. the instance whose target in factor coordinates is ``M*``."""
    return Sigma, M_star @ sym_inv_sqrt(Sigma)
