r"""Derived coefficients of paper A's bias laws, shared by the claims that test them (no claim is defined here).

Each sits beside a pointer to its derivation:

* the n-law coefficient ``c(theta)`` of A.T1.1 (derived in ``t1_1_population_loss.py``) and its gradient (A.T3,
  A.T4): :func:`loo_bias_coefficient`, :func:`loss_bias_gradient`;
* the regularizer's Isserlis coefficient ``c_R`` (derived in ``t5_gradient_regularizer.py``; A.T3, A.T5):
  :func:`regularizer_bias_coefficient`, with the pairing of ``E H (x) H`` as a value (:func:`isserlis`);
* the tilted limits of the softmax-weighted sums (derived in ``technical_lemmas.py``; A.L9-A.L23):
  :func:`tilted_limits`, and the same limits without their tilt factors (:func:`untilted_limits`, the negative
  control several of those claims share);
* the exact Gaussian expectation used by the sympy derivations (A.T1.1, A.T5, A.L11-A.L22):
  :func:`std_normal_expectation`.
"""
from __future__ import annotations

import math

import sympy as sp
import torch

from numerics import DTYPE
from numerics.paper_a import moments as mo
from numerics.paper_a.geometry import regularizer_grad
from numerics.paper_a.model import attention_map, sym_sqrt


def std_normal_expectation(poly: sp.Expr, zs: list[sp.Symbol]) -> sp.Expr:
    """Exact ``E[poly(z)]`` for independent standard normals ``zs`` (moments (k-1)!! for even k)."""
    P = sp.Poly(sp.expand(poly), *zs)
    moment = lambda k: 0 if k % 2 else sp.factorial2(k - 1)  # noqa: E731
    return sp.expand(sum(coef * sp.prod([moment(k) for k in mon]) for mon, coef in P.terms()))


def loo_bias_coefficient(V: torch.Tensor, K: torch.Tensor, Sigma: torch.Tensor, W_star: torch.Tensor) -> torch.Tensor:
    r"""Leading coefficient ``c`` in ``E Lhat_n(theta) - L(theta) = c/(n-1) + O(n^{-2})`` (leave-one-out), derived in
    ``t1_1_population_loss.py`` (delta method on the self-normalized ratio): with ``P = V Sigma K^T``,
    ``M = K Sigma K^T``, ``S = (Sigma^{-1} - 2M)^{-1}``, ``Z = det(I - 2 Sigma^{1/2} M Sigma^{1/2})^{-1/2}``,

    ``c = Z [ tr(V Sigma V^T) + tr(P S P^T) + 2 tr((W* - P) S P^T) ]``,

    finite iff ``||B||_op^2 < 1/2`` (Lemma 7).  Returns NaN outside that region.
    """
    P = attention_map(V, K, Sigma)
    M = K @ Sigma @ K.mT
    d = Sigma.shape[-1]
    R = sym_sqrt(Sigma)
    G = torch.eye(d, dtype=DTYPE) - 2 * R @ M @ R
    lam_min = torch.linalg.eigvalsh(G).min(-1).values
    S = torch.linalg.inv(torch.linalg.inv(Sigma) - 2 * M)
    Z = torch.linalg.det(G).clamp_min(1e-300).rsqrt()
    tr = lambda A: A.diagonal(dim1=-2, dim2=-1).sum(-1)  # noqa: E731
    c = Z * (tr(V @ Sigma @ V.mT) + tr(P @ S @ P.mT) + 2 * tr((W_star - P) @ S @ P.mT))
    return torch.where(lam_min > 0, c, torch.full_like(c, math.nan))


def loss_bias_gradient(V, K, Sigma, W):
    """``(c, grad_V c, grad_K c)``: the loss-bias coefficient and its gradient (autograd), the leading term of the
    expected empirical gradient's bias ``grad c / (n - 1)`` (A.T4's derivation)."""
    Vr, Kr = V.clone().requires_grad_(True), K.clone().requires_grad_(True)
    with torch.enable_grad():
        c = loo_bias_coefficient(Vr, Kr, Sigma, W)
        gV, gK = torch.autograd.grad(c.sum(), (Vr, Kr))
    return c.detach(), gV, gK


def isserlis(R: torch.Tensor, E: torch.Tensor) -> tuple[torch.Tensor, float]:
    r"""Isserlis' pairings of ``E H (x) H`` (``H = x x^T - Sigma``) as a weighted sum of squares over ``a, b``:
    ``E H_ab H_cd = Sigma_ac Sigma_bd + Sigma_ad Sigma_bc`` is ``(1/2) sum_{a,b} G_ab (x) G_ab`` with
    ``G_ab = S (E_ab + E_ba) S`` (``R = S = Sigma^{1/2}``, ``E`` the units ``E_ab``), so
    ``c_R = (1/4) sum_{a,b} D^2 f(Sigma)[G_ab, G_ab]``.  Returns ``(G, weight)``."""
    return R @ (E + E.mT) @ R, 0.25


def regularizer_bias_coefficient(V, K, Sigma, pairings=isserlis):
    r"""Leading coefficient ``c_R`` in ``E grad Rhat - grad R = c_R / n + O(n^{-2})``, per instance (pair V, K), derived
    in ``t5_gradient_regularizer.py``.

    ``f(S) = grad R(theta; S)`` is a polynomial of degree 4 in ``S``; ``Sigmahat = Sigma + Delta`` with
    ``Delta = (1/n) sum_k (x_k x_k^T - Sigma)``, so ``E Delta = 0``, ``E Delta (x) Delta = (1/n) E H (x) H``
    (``H = x x^T - Sigma``) and the third and fourth moments of ``Delta`` are O(n^{-2}).  Hence, exactly,
    ``c_R = (1/2) E D^2 f(Sigma)[H, H]``.  ``pairings(R, E)`` writes ``E H (x) H`` as ``(G_ab, weight)``
    (:func:`isserlis`; A.T5's control passes a wrong pairing), so ``c_R = weight * sum_{a,b} D^2 f(Sigma)[G_ab, G_ab]``.
    ``D^2 f[G, G] = p''(0)`` for the quartic ``p(t) = f(Sigma + t G)``, computed by the five-point stencil, which is
    exact for polynomials of degree <= 5.
    """
    d = Sigma.shape[-1]
    R = sym_sqrt(Sigma)
    E = torch.eye(d * d, dtype=DTYPE).reshape(d * d, d, d)  # E_ab, (d^2, d, d)
    G, w = pairings(R, E)
    G = G.unsqueeze(1)  # (d^2, 1, d, d): broadcast over instances
    stencil = {-2: -1.0, -1: 16.0, 0: -30.0, 1: 16.0, 2: -1.0}
    acc_V, acc_K = 0.0, 0.0
    for t, c in stencil.items():
        fV, fK = regularizer_grad(V, K, Sigma + t * G)
        acc_V = acc_V + c * fV.sum(0)
        acc_K = acc_K + c * fK.sum(0)
    return w * acc_V / 12, w * acc_K / 12


def tilted_limits(K, Sigma, xq) -> dict[str, torch.Tensor]:
    r"""Limits ``n' * (...)`` as ``n -> inf`` at query ``x_q`` (``mu = Sigma K^T x_q``, ``q = mu^T Sigma^{-1} mu``),
    derived in ``technical_lemmas.py`` (delta method for the self-normalized ratio, Gaussian tilting).

    For a ratio estimator ``sum_j w_j g(x_j) / sum_j w_j`` of ``G = E_{N(mu,Sigma)} g`` (``w_j = e^{a_j}``):
    MSE ``~ (e^q / n') E_{N(2 mu, Sigma)} ||g - G||^2`` and bias ``~ (e^q / n') (G - E_{N(2mu,Sigma)} g)``.
    Closed forms (``t = tr Sigma``, ``F = ||Sigma||_F^2``, ``m2 = ||mu||^2``, ``mSm = mu^T Sigma mu``):

    * ``ss``: ``n' E sum_j s_j^2 -> e^q``;  ``n'^2 E (sum_j s_j^2)^2 -> e^{2q}``
    * ``xbar_mse``: ``e^q (t + m2)``;  ``xbar_bias``: ``-e^q mu``
    * ``outer_mse`` (xbar xbar^T): ``e^q (4 m2^2 + 2 m2 t + 2 mSm)``;  ``outer_bias``: ``e^q (Sigma - mu mu^T)``
    * ``M2_mse``: ``e^q (9 m2^2 + 8 m2 t + 8 mSm + t^2 + F)``;  ``M2_bias``: ``-3 e^q mu mu^T``
    """
    mu = xq @ K @ Sigma
    q = mo.query_scale(K, Sigma, xq)
    eq = torch.exp(q)
    t = torch.diagonal(Sigma).sum()
    F = Sigma.pow(2).sum()
    m2 = mu.pow(2).sum(-1)
    mSm = (mu @ Sigma * mu).sum(-1)
    mm = mu.unsqueeze(-1) * mu.unsqueeze(-2)
    return {
        "ss": eq, "ss2": eq**2,
        "xbar_mse": eq * (t + m2), "xbar_bias": -eq.unsqueeze(-1) * mu,
        "outer_mse": eq * (4 * m2**2 + 2 * m2 * t + 2 * mSm),
        "outer_bias": eq[:, None, None] * (Sigma - mm),
        "M2_mse": eq * (9 * m2**2 + 8 * m2 * t + 8 * mSm + t**2 + F),
        "M2_bias": -3 * eq[:, None, None] * mm,
    }


def untilted_limits(K, Sigma, xq) -> dict[str, torch.Tensor]:
    r"""Wrong on purpose (the negative control of A.L9, A.L10-A.L23's limits and coefficients): :func:`tilted_limits`
    without their tilt factors (``e^{2q}`` for ``ss2``, ``e^q`` for the others), the values for uniform weights
    ``1/n'`` (``ss`` and ``ss2`` become 1)."""
    eq = torch.exp(mo.query_scale(K, Sigma, xq))
    return {k: v / (eq**2 if k == "ss2" else eq).reshape(-1, *[1] * (v.dim() - 1))
            for k, v in tilted_limits(K, Sigma, xq).items()}


#: the limits and coefficients the softmax-row checks tell apart (name -> limits function): the derivation's and the
#: one without the tilt factor e^q (the "tilt factor dropped" control's); a check decides against the nearest that
#: differs from its own target, inside half the distance (``decisions.alternative_margin``)
ALTERNATIVE_LIMITS = {"the constant without the tilt factor e^q": untilted_limits,
                      "the derived constant (with e^q)": tilted_limits}
