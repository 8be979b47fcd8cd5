r"""Monte Carlo engines for paper A's gradient-approximation results (Theorems 3-5, Lemmas 9-23).

Two kinds of samples, both with variance reduction by exact-mean control variates:

* **gradient bias** (:func:`gradient_bias_samples`): per fresh batch of ``n`` samples, the gradient of the
  leave-one-out empirical loss ``Lhat_n`` minus the gradient of the *oracle loss*
  ``(1/n) sum_i ||y_i - V Sigma K^T x_i||^2`` (whose expectation is exactly ``grad L``, Theorem 1.1), and the
  gradient of ``Rhat = R(theta; Sigmahat)`` minus its first-order Taylor expansion around ``Sigma`` (whose
  expectation is exactly ``grad R``, because ``E Sigmahat = Sigma``).  Both differences have mean equal to the
  bias being measured and standard deviation O(1/n) instead of O(n^{-1/2}), so an O(1/n) bias is resolved
  with a few hundred batches at every ``n``.
* **softmax rows** (:func:`softmax_row_stats`): for a fixed query ``x_i`` and ``n' = n - 1`` fresh context
  points, the softmax weights ``s_ij`` and the weighted sums the lemmas bound, with the mean-zero linear
  terms of the self-normalized ratio as control variates;
* **Gaussian Poincare** (:func:`poincare_samples`): both sides of ``Var f <= sum_j E ||grad_{x_j} f||_Sigma^2``
  for the row functions, the gradients by autograd.

The coefficients and limits these samples are compared with are derived by the claims and live beside their
derivations (``theorems/paper_a/softmax_bias/coefficients.py`` and the claim modules), not here.

Shapes: ``V`` (B, r, d), ``K`` (B, d, d) or (d, d), ``Sigma`` (d, d), ``W_star`` (B, r, d) or (r, d).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from numerics import DTYPE
from numerics.paper_a.geometry import loss_grad, regularizer_grad, sample_covariance
from numerics.paper_a.model import check_covariance, chunked, row_blocks, sym_inv_sqrt, sym_sqrt
from numerics.stats import weighted_fit


# ---------------------------------------------------------------------------
# Per-batch gradient of the empirical loss in closed form (Lemma 8)
# ---------------------------------------------------------------------------

def softmax_rows(K, x, include_self: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """The softmax weights ``s_ij`` of every query over its context (leave-one-out unless ``include_self``) and the
    log-normalisers ``log sum_j exp(x_i^T K x_j)``: ``(s (..., n, n), logZ (..., n))``."""
    scores = x @ K @ x.mT
    if not include_self:  # leave-one-out, as model.context_weights, without the mask copy
        scores.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
    logZ = torch.logsumexp(scores, dim=-1)
    # in place, as the mask: the scores are this call's own, and each n x n copy costs a pass over memory
    return scores.sub_(logZ.unsqueeze(-1)).exp_(), logZ


def empirical_loss_grad(V, K, x, y, include_self: bool = False, noise: torch.Tensor | None = None,
                        rows: tuple[torch.Tensor, torch.Tensor] | None = None):
    r"""``(Lhat_n, dLhat/dV, dLhat/dK)`` per data set, x (..., B, n, d), y (..., B, n, r).

    With ``xbar_i = sum_j s_ij x_j``, ``e_i = y_i - V xbar_i``, ``u_i = -2 V^T e_i`` and the softmax-weighted
    covariance ``C_i = sum_j s_ij x_j x_j^T - xbar_i xbar_i^T``, Lemma 8 (``ds_ij/dK = s_ij x_i (x_j - xbar_i)^T``)
    gives ``dl_i/dV = -2 e_i xbar_i^T`` and ``dl_i/dK = x_i u_i^T C_i``.  Cost O(n^2 d) per data set, no autograd.

    The gradient is affine in ``y``; with ``noise`` (same shape as ``y``) the function also returns the
    gradient's change when ``y`` is replaced by ``y + noise`` (the pair ``(dV, dK)``) as a fourth element.
    ``rows``: the weights already computed by :func:`softmax_rows` (same ``include_self``).
    """
    s = (rows or softmax_rows(K, x, include_self))[0]  # (..., B, n, n)
    xbar = s @ x
    n = x.shape[-2]

    def grads(e):
        u = -2 * e @ V  # rows u_i^T = -2 e_i^T V
        # C_i u_i = sum_j s_ij x_j (x_j . u_i) - xbar_i (xbar_i . u_i)
        Cu = (u @ x.mT).mul_(s) @ x - xbar * (xbar * u).sum(-1, keepdim=True)  # mul_: no second n x n copy
        return -2 * e.mT @ xbar / n, x.mT @ Cu / n

    e = y - xbar @ V.mT
    gV, gK = grads(e)
    loss = e.pow(2).sum((-1, -2)) / n
    if noise is None:
        return loss, gV, gK
    return loss, gV, gK, grads(noise)


def oracle_loss_grad(V, K, Sigma, x, y):
    r"""``(L_o, dL_o/dV, dL_o/dK)`` of the oracle loss ``L_o = (1/n) sum_i ||y_i - P x_i||^2``, ``P = V Sigma K^T``.

    ``E L_o(theta) = L(theta)`` for every ``theta``, hence ``E grad L_o = grad L`` (differentiate under E).
    Per sample: ``mu_i = Sigma K^T x_i``, ``dl/dV = -2 e_i mu_i^T``, ``dl/dK = x_i u_i^T Sigma``.
    """
    mu = x @ K @ Sigma  # rows mu_i^T = x_i^T K Sigma
    e = y - mu @ V.mT
    u = -2 * e @ V
    n = x.shape[-2]
    return e.pow(2).sum((-1, -2)) / n, -2 * e.mT @ mu / n, x.mT @ u @ Sigma / n


def softmax_linear_terms(V, K, Sigma, x, y, rows: tuple[torch.Tensor, torch.Tensor] | None = None):
    r"""The first-order (linear) term of ``grad Lhat_n - grad L_o`` in the softmax fluctuations: a control variate
    with mean exactly zero, ``(cv_V, cv_K, cv_loss)`` per data set (``cv_loss``: the same for ``Lhat_n - L_o``,
    ``-(2/n) sum_i e^o_i . V delta_i``), x (..., B, n, d), y (..., B, n, r).

    Per query ``x_i`` (``mu_i = Sigma K^T x_i``, ``q_i = mu_i^T Sigma^{-1} mu_i``, ``e^o_i = y_i - V mu_i``,
    ``u^o_i = -2 V^T e^o_i``, ``A = V^T V``) write ``xbar_i = mu_i + delta_i`` and
    ``sum_j s_ij x_j x_j^T = Sigma + mu_i mu_i^T + Delta_i``.  To first order in ``(delta_i, Delta_i)``, Lemma 8's
    per-sample gradients minus the oracle's are

    * V: ``-2 e^o_i delta_i^T + 2 V delta_i mu_i^T``
    * K: ``x_i [2 delta_i^T A Sigma + u^o_i^T (Delta_i - delta_i mu_i^T - mu_i delta_i^T)]``.

    Replacing ``delta_i, Delta_i`` by the linear terms of the self-normalized ratios,
    ``(1/n') sum_{j != i} (w_ij / E w)(x_j - mu_i)`` and ``(1/n') sum_{j != i} (w_ij / E w)(x_j x_j^T - Sigma -
    mu_i mu_i^T)`` (``w_ij / E w = exp(x_i^T K x_j - q_i / 2)``), gives terms whose conditional mean given ``x_i`` is
    exactly zero (Gaussian tilting: ``E[(w / E w) g(x_j)] = E_{N(mu_i, Sigma)} g``), with coefficients that depend on
    ``x_i`` alone.  Subtracting their average over the queries leaves the mean of ``grad Lhat_n - grad L_o`` unchanged
    and removes its O(n^{-1/2}) part: the softmax fluctuation shared by all queries of one batch (the context is the
    same), which the oracle loss cannot cancel and which makes ``(n - 1) (grad Lhat_n - grad L_o)`` grow like
    ``n^{1/2}`` in standard deviation (measured at the A.T3-T5 points: 0.4 at n = 8, 2.2 at n = 512 in the K-block;
    0.25-0.35 at every n with this term removed).

    With the leave-one-out weights ``s_ij = w_ij / Z_i`` (``rows``, from :func:`softmax_rows`), ``w_ij / E w =
    rho_i n' s_ij`` where ``rho_i = Z_i e^{-q_i/2} / n'``: the linear terms are ``rho_i`` times the softmax-weighted
    sums, so the cost is one more O(n^2 d) pass.
    """
    n = x.shape[-2]
    s, logZ = rows if rows is not None else softmax_rows(K, x)
    Mu = x @ K @ Sigma  # rows mu_i^T = x_i^T K Sigma
    q = (Mu * (x @ K)).sum(-1, keepdim=True)  # q_i = x_i^T K Sigma K^T x_i
    rho = torch.exp(logZ.unsqueeze(-1) - q / 2) / (n - 1)  # (1/n') sum_j w_ij / E w  (mean one)
    D = rho * (s @ x - Mu)  # rows: linear term of delta_i
    Eo = y - Mu @ V.mT
    Uo = -2 * Eo @ V
    cv_V = (-2 * Eo.mT @ D + 2 * V @ D.mT @ Mu) / n
    cv_loss = -2 * (Eo * (D @ V.mT)).sum((-1, -2)) / n  # the loss's linear term: -2 e^o_i . V delta_i
    uo_mu = (Uo * Mu).sum(-1, keepdim=True)
    uo_d = (Uo * D).sum(-1, keepdim=True)
    # u^o_i^T Delta_i^lin = rho_i [sum_j s_ij (u^o_i . x_j) x_j^T - u^o_i^T (Sigma + mu_i mu_i^T)]
    lin = (2 * D @ (V.mT @ V) @ Sigma + rho * ((Uo @ x.mT).mul_(s) @ x - Uo @ Sigma - uo_mu * Mu)
           - uo_d * Mu - uo_mu * D)
    return cv_V, x.mT @ lin / n, cv_loss


# ---------------------------------------------------------------------------
# Regularizer: the first-order term in Sigmahat - Sigma (a control variate with mean exactly zero)
# ---------------------------------------------------------------------------

def regularizer_grad_linear(V, K, Sigma, Delta):
    r"""``D(grad R)(Sigma)[Delta]``: the derivative of ``S -> grad R(theta; S)`` at ``Sigma`` along ``Delta``.

    ``Delta`` (..., B, d, d); forward-mode autodiff of the polynomial map (exact up to rounding).
    """
    S = Sigma.expand_as(Delta).clone()
    _, tangents = torch.func.jvp(lambda T: regularizer_grad(V, K, T), (S,), (Delta,))
    return tangents


# ---------------------------------------------------------------------------
# Gradient-bias samples
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class GradientBiasSamples:
    r"""Per-batch draws, leading dims (n_batches, B).

    ``dL``: ``grad Lhat_n - grad L_o`` minus the mean-zero linear softmax term (:func:`softmax_linear_terms`)
    (mean = ``E grad Lhat_n - grad L``), pair (V part, K part);
    ``dR``: ``grad Rhat - grad R(Sigma) - D(grad R)(Sigma)[Sigmahat - Sigma]`` (mean = ``E grad Rhat - grad R``);
    ``err_L``: ``grad Lhat_n - grad L`` itself, with noisy responses (``sigma_err``); no control variate, so its
    mean squared norm decays like 1/n (the oracle's single-batch error);
    ``dR_raw``: ``grad Rhat - grad R`` itself;
    ``loss_gap``: ``Lhat_n - L_o`` minus the linear softmax term (mean = ``E Lhat_n - L``).
    """

    dL: tuple[torch.Tensor, torch.Tensor]
    dR: tuple[torch.Tensor, torch.Tensor]
    err_L: tuple[torch.Tensor, torch.Tensor]
    dR_raw: tuple[torch.Tensor, torch.Tensor]
    loss_gap: torch.Tensor
    n: int


def gradient_bias_samples(
    V, K, Sigma, W_star, n: int, n_batches: int, gen: torch.Generator, sigma: float = 0.0,
    include_self: bool = False, max_elems: int = 2**22, sigma_err: float = 0.5, n_err: int = 300,
    linear_cv: bool = True,
) -> GradientBiasSamples:
    r"""Draw ``n_batches`` fresh batches of ``n`` and return the control-variated gradient differences.

    Why ``sigma = 0`` by default: the noise enters each per-sample gradient linearly, with mean zero given
    the covariates (it is independent of them), so ``E grad Lhat_n`` does not depend on ``sigma``; leaving
    it out only removes variance.  ``err_L`` alone uses responses with noise level ``sigma_err``, and only
    on the first chunks of batches (at least ``n_err`` batches): its mean squared norm needs few draws.
    ``linear_cv``: subtract the mean-zero linear softmax term from ``dL`` (:func:`softmax_linear_terms`; the
    include-self variant subtracts the same leave-one-out term, whose mean is zero all the same).
    """
    Sigma = check_covariance(Sigma)
    Bsz = V.shape[0]
    C = torch.linalg.cholesky(Sigma)
    d, r = Sigma.shape[-1], W_star.shape[-2]
    gL = loss_grad(V, K, Sigma, W_star)
    gR = regularizer_grad(V, K, Sigma)

    def draw(k, done):
        x = torch.randn(k, Bsz, n, d, generator=gen, dtype=DTYPE) @ C.mT
        y = x @ W_star.mT
        if sigma:
            y = y + sigma * torch.randn(k, Bsz, n, r, generator=gen, dtype=DTYPE)
        eps = sigma_err * torch.randn(k, Bsz, n, r, generator=gen, dtype=DTYPE) if done < n_err else None
        # the chunk's draws above, its O(n^2) work below in cache-sized row blocks (model.BLOCK_ELEMS)
        parts = [samples(x[b], y[b], None if eps is None else eps[b]) for b in row_blocks(k, Bsz * n * n)]
        return {key: torch.cat([p[key] for p in parts]) for key in parts[0]}

    def samples(x, y, eps):
        out = {}
        rows = softmax_rows(K, x, include_self)
        if eps is not None:
            lh, hV, hK, (nV, nK) = empirical_loss_grad(V, K, x, y, include_self, noise=eps, rows=rows)
            out["eV"], out["eK"] = hV + nV - gL[0], hK + nK - gL[1]
        else:
            lh, hV, hK = empirical_loss_grad(V, K, x, y, include_self, rows=rows)
        lo, oV, oK = oracle_loss_grad(V, K, Sigma, x, y)
        if linear_cv:
            cV, cK, cl = softmax_linear_terms(V, K, Sigma, x, y, None if include_self else rows)
            oV, oK, lo = oV + cV, oK + cK, lo + cl
        Sh = sample_covariance(x)
        rV, rK = regularizer_grad(V, K, Sh)
        lV, lK = regularizer_grad_linear(V, K, Sigma, Sh - Sigma)
        return out | {"dLV": hV - oV, "dLK": hK - oK, "gap": lh - lo, "rV": rV - gR[0], "rK": rK - gR[1],
                      "dRV": rV - gR[0] - lV, "dRK": rK - gR[1] - lK}

    parts = chunked(n_batches, max(1, max_elems // (Bsz * n * n)), draw)
    c = {k: torch.cat([p[k] for p in parts if k in p]) for k in parts[0]}
    return GradientBiasSamples((c["dLV"], c["dLK"]), (c["dRV"], c["dRK"]), (c["eV"], c["eK"]),
                               (c["rV"], c["rK"]), c["gap"], n)


def regularizer_bias_samples(V, K, Sigma, n: int, n_batches: int, gen: torch.Generator, max_elems: int = 2**22):
    r"""Per fresh batch of ``n`` covariates, ``(dR, dR_raw)`` as in :class:`GradientBiasSamples`, each a pair (V, K) of
    (n_batches, B, ...): the regularizer's part alone, without the O(n^2) softmax work (A.T5 draws many more batches
    than the loss part can afford)."""
    Sigma = check_covariance(Sigma)
    Bsz = V.shape[0]
    C = torch.linalg.cholesky(Sigma)
    gR = regularizer_grad(V, K, Sigma)

    def draw(k, _):
        Sh = sample_covariance(torch.randn(k, Bsz, n, Sigma.shape[-1], generator=gen, dtype=DTYPE) @ C.mT)
        rV, rK = regularizer_grad(V, K, Sh)
        lV, lK = regularizer_grad_linear(V, K, Sigma, Sh - Sigma)
        return rV - gR[0], rK - gR[1], rV - gR[0] - lV, rK - gR[1] - lK

    parts = chunked(n_batches, max(1, max_elems // (Bsz * n * Sigma.shape[-1])), draw)
    rV, rK, dV, dK = (torch.cat([p[i] for p in parts]) for i in range(4))
    return (dV, dK), (rV, rK)


def to_factor_coords(G_V, G_K, Sigma):
    r"""Flatten a gradient into factor coordinates ``(G_V S^{-1}, S^{-1} G_K S^{-1})`` (..., r d + d d).

    The Euclidean norm of the result is the dual norm ``||G||_*`` of the Sigmatilde geometry.
    """
    Si = sym_inv_sqrt(Sigma)
    return torch.cat([(G_V @ Si).flatten(-2), (Si @ G_K @ Si).flatten(-2)], -1)


def flat(G_V, G_K):
    """Flatten a gradient pair into one vector per run (Frobenius coordinates)."""
    return torch.cat([G_V.flatten(-2), G_K.flatten(-2)], -1)


@dataclass(frozen=True)
class SquaredNormEstimate:
    """Unbiased estimate of ``||E D||^2`` from iid draws ``D_k`` and its standard error (per run)."""

    value: torch.Tensor  # (B,)
    se: torch.Tensor  # (B,)
    naive: torch.Tensor  # ||mean||^2, biased upward by tr Cov / N


def squared_norm_of_mean(D: torch.Tensor) -> SquaredNormEstimate:
    r"""``||E D||^2`` from draws ``D`` (N, B, p) by the U-statistic ``(1/(N(N-1))) sum_{k != l} <D_k, D_l>``.

    ``||Dbar||^2`` has expectation ``||E D||^2 + tr Cov(D)/N``; the U-statistic removes the second term
    exactly: ``U = (N^2 ||Dbar||^2 - sum_k ||D_k||^2) / (N(N-1))``.  Its variance is
    ``(4/N) m^T C m + (2/(N(N-1))) tr(C^2)`` (``m = E D``, ``C = Cov D``), estimated by plug-in.
    """
    N = D.shape[0]
    m = D.mean(0)
    naive = m.pow(2).sum(-1)
    U = (N**2 * naive - D.pow(2).sum((0, -1))) / (N * (N - 1))
    Dc = D - m
    proj = (Dc * m).sum(-1)  # (N, B): <D_k - Dbar, m>
    mCm = proj.pow(2).sum(0) / (N - 1)  # m^T C m
    Cov = torch.einsum("kbi,kbj->bij", Dc, Dc) / (N - 1)
    trC2 = Cov.pow(2).sum((-1, -2))
    var = 4 * mCm.clamp_min(0) / N + 2 * trC2 / (N * (N - 1))
    return SquaredNormEstimate(U, var.sqrt(), naive)


# ---------------------------------------------------------------------------
# Softmax rows at a fixed query (Lemmas 9-23)
# ---------------------------------------------------------------------------

def query_scale(K, Sigma, xq):
    r"""``q = x^T K Sigma K^T x = ||Sigma^{1/2} K^T x||^2`` per query: ``a_j = x^T K x_j ~ N(0, q)``."""
    a = xq @ K
    return (a @ Sigma * a).sum(-1)


@dataclass(frozen=True)
class RowStats:
    r"""Per draw (N, Q) statistics of the softmax row of query ``x_q`` over ``n' = n - 1`` fresh context points.

    ``ss = sum_j s_j^2``; ``xbar = sum_j s_j x_j``; ``M2 = sum_j s_j x_j x_j^T``; ``*_lin`` are the
    first-order (linear) terms of the ratio estimator, ``(1/n') sum_j (w_j / E w)(g(x_j) - G)``
    with ``w_j = e^{a_j}``, which have mean exactly zero (Gaussian tilting), used as control variates.
    """

    ss: torch.Tensor
    xbar: torch.Tensor  # (N, Q, d)
    M2: torch.Tensor  # (N, Q, d, d)
    xbar_lin: torch.Tensor
    M2_lin: torch.Tensor
    mu: torch.Tensor  # (Q, d) tilted mean Sigma K^T x_q
    q: torch.Tensor  # (Q,)
    n: int


def softmax_row_stats(K, Sigma, xq, n: int, n_draws: int, gen: torch.Generator,
                      max_elems: int = 2**22) -> RowStats:
    r"""``n_draws`` independent contexts of ``n - 1`` points ``x_j ~ N(0, Sigma)`` for each query ``xq`` (Q, d)."""
    Sigma = check_covariance(Sigma)
    C = torch.linalg.cholesky(Sigma)
    Q, d = xq.shape
    m = n - 1
    mu = xq @ K @ Sigma
    q = query_scale(K, Sigma, xq)
    G2 = Sigma + mu.unsqueeze(-1) * mu.unsqueeze(-2)  # tilted second moment (Q, d, d)

    def draw(k, _):
        x = torch.randn(k, Q, m, d, generator=gen, dtype=DTYPE) @ C.mT
        # the chunk's draw above; its (k, Q, m, d, d) outer products in cache-sized row blocks (model.BLOCK_ELEMS)
        parts = [stats(x[b]) for b in row_blocks(k, Q * m * d * d)]
        return {key: torch.cat([p[key] for p in parts]) for key in parts[0]}

    def stats(x):
        a = (x @ (K.mT @ xq.unsqueeze(-1))).squeeze(-1)  # a_j = x_q^T K x_j, K (d, d)
        s = torch.softmax(a, -1)
        outer = x.unsqueeze(-1) * x.unsqueeze(-2)
        wr = torch.exp(a - (q / 2).unsqueeze(-1))  # w_j / E w
        return {"ss": s.pow(2).sum(-1), "xbar": (s.unsqueeze(-1) * x).sum(-2),
                "M2": (s[..., None, None] * outer).sum(-3),
                "xl": (wr.unsqueeze(-1) * (x - mu.unsqueeze(-2))).mean(-2),
                "Ml": (wr[..., None, None] * (outer - G2.unsqueeze(-3))).mean(-3)}

    parts = chunked(n_draws, max(1, max_elems // (Q * m * d * d)), draw)
    c = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
    return RowStats(c["ss"], c["xbar"], c["M2"], c["xl"], c["Ml"], mu, q, n)


def scaled_ss_exact(q: float, n_prime: int, nodes: int = 400, grid: int = 20001) -> float:
    r"""Exact ``n' E sum_j s_j^2`` for ``n'`` iid scores ``a_j ~ N(0, q)`` (``s = softmax(a)``), by quadrature.

    ``E sum_j s_j^2 = n' E[w_1^2 / S^2]`` with ``w = e^a``, ``S = sum_j w_j``, and ``1/S^2 = int_0^inf t e^{-tS} dt``,
    so ``E[w_1^2/S^2] = int_0^inf t psi(t) phi(t)^{n'-1} dt`` with ``phi(t) = E e^{-tw}``, ``psi(t) = E w^2 e^{-tw}``
    (Gauss-Hermite in ``a``; trapezoid in ``u = log t``, where the integrand decays at both ends).  It depends on
    ``q`` alone: the finite-``n`` curve whose limit is ``e^q`` (A.L9 (i)), used to measure the truncation error of a
    fit model in ``1/n'`` (``n' = 1`` gives 1 exactly).
    """
    from scipy.special import roots_hermite

    z, wz = roots_hermite(nodes)
    w = np.exp(math.sqrt(2 * q) * z)
    wts = wz / math.sqrt(math.pi)
    u = np.linspace(-25.0, 40.0, grid)
    t = np.exp(u)
    E = np.exp(-np.outer(t, w))
    phi, psi = E @ wts, (E * w**2) @ wts
    return float(n_prime**2 * np.trapezoid(t**2 * psi * phi ** (n_prime - 1), u))


# ---------------------------------------------------------------------------
# Gaussian exponential moments (Lemma 7)
# ---------------------------------------------------------------------------

def exp_quadratic_moment(M: torch.Tensor, Sigma: torch.Tensor) -> torch.Tensor:
    r"""``E exp(x^T M x)``, ``x ~ N(0, Sigma)``, ``M`` symmetric: ``det(I - 2 Sigma^{1/2} M Sigma^{1/2})^{-1/2}``,
    ``inf`` unless ``lambda_max(Sigma^{1/2} M Sigma^{1/2}) < 1/2`` (Lemma 7)."""
    R = sym_sqrt(Sigma)
    G = torch.eye(Sigma.shape[-1], dtype=DTYPE) - 2 * R @ M @ R
    lam = torch.linalg.eigvalsh(G)
    val = lam.prod(-1).rsqrt()
    return torch.where(lam.min(-1).values > 0, val, torch.full_like(val, math.inf))


# ---------------------------------------------------------------------------
# Gaussian Poincare: Var_{-i} f  vs  sum_j E ||grad_{x_j} f||_Sigma^2  (autograd)
# ---------------------------------------------------------------------------

POINCARE_FUNCTIONS = ("weights", "xbar", "outer", "M2")


def _row_functions(K, xq, X):
    """The softmax-weighted sums of one context X (n', d) at query xq (d,): weights, xbar, xbar xbar^T, M2."""
    s = torch.softmax(X @ (K.mT @ xq), -1)
    xbar = s @ X
    M2 = (X.mT * s) @ X
    return s, xbar, torch.outer(xbar, xbar).flatten(), M2.flatten()


@dataclass(frozen=True)
class PoincareSamples:
    r"""Per draw (M iid contexts at one query): ``dev_sq[f] = ||f(X_k) - fbar||^2 M/(M-1)``, whose mean is the
    unbiased sample estimate of ``Var_{-i} f`` (the trace of the covariance) and which, treated as iid, gives
    its delta-method standard error; ``grad_sq[(f, W)] = sum_j tr(J_j W J_j^T)`` for the weightings ``W`` in
    ``weightings`` ("Sigma": the Poincare weight; others are controls), and ``(f, "frozen")``: the same sum with the
    softmax weights held fixed in the Jacobian (a negative control: the chain rule through the weights dropped)."""

    dev_sq: dict[str, torch.Tensor]
    grad_sq: dict[tuple[str, str], torch.Tensor]
    n: int


def poincare_samples(K, Sigma, xq, n: int, n_draws: int, gen: torch.Generator,
                     weightings: dict[str, torch.Tensor] | None = None, chunk: int = 128) -> PoincareSamples:
    r"""Both sides of the Gaussian Poincare inequality for the four row functions at query ``xq`` (d,).

    ``Var f(X) <= E sum_j tr(J_j W J_j^T)`` with ``J_j = d f / d x_j`` (autograd, ``torch.func.jacrev``) and
    ``W = Sigma`` for ``x_j ~ N(0, Sigma)``.  ``weightings`` maps names to extra weight matrices (controls).

    With the weights frozen (``s`` treated as constants) the Jacobians are ``s_j I`` (xbar), ``s_j (h xbar^T +
    xbar h^T)`` (xbar xbar^T), ``s_j (h x_j^T + x_j h^T)`` (M2) and 0 (the weights), so the Sigma-weighted sums are
    ``t sum_j s_j^2``, ``sum_j s_j^2 (2 t ||xbar||^2 + 2 xbar^T Sigma xbar)``, ``sum_j s_j^2 (2 t ||x_j||^2 +
    2 x_j^T Sigma x_j)`` and 0 (``t = tr Sigma``), computed in closed form.
    """
    Sigma = check_covariance(Sigma)
    C = torch.linalg.cholesky(Sigma)
    d, m = Sigma.shape[-1], n - 1
    Ws = {"Sigma": Sigma} | (weightings or {})
    jac = torch.func.vmap(torch.func.jacrev(lambda X: _row_functions(K, xq, X)))

    def derivatives(X):
        """The row functions and their weighted Jacobian sums for the contexts X (k, m, d)."""
        fv = torch.func.vmap(lambda Y: _row_functions(K, xq, Y))(X)
        return fv, {(f, wname): ((J @ W) * J).sum((-1, -2, -3))  # J: (k, out, m, d)
                    for f, J in zip(POINCARE_FUNCTIONS, jac(X)) for wname, W in Ws.items()}

    def draw(k, _):
        X = torch.randn(k, m, d, generator=gen, dtype=DTYPE) @ C.mT
        # the chunk's draw above; its Jacobians, (m + d + 2 d^2) m d entries a context, in cache-sized row blocks
        # (model.BLOCK_ELEMS)
        blocks = [derivatives(X[b]) for b in row_blocks(k, (m + d + 2 * d * d) * m * d)]
        fv = [torch.cat([fv_b[i] for fv_b, _ in blocks]) for i in range(len(POINCARE_FUNCTIONS))]
        grad = {key: torch.cat([g_b[key] for _, g_b in blocks]) for key in blocks[0][1]}
        vals = {f: v.reshape(k, -1) for f, v in zip(POINCARE_FUNCTIONS, fv)}
        s2 = fv[0].pow(2)  # (k, m): the weights squared
        t = torch.diagonal(Sigma).sum()
        xbar = (fv[0].unsqueeze(-1) * X).sum(-2)
        quad = lambda y: 2 * t * y.pow(2).sum(-1) + 2 * ((y @ Sigma) * y).sum(-1)  # noqa: E731
        grad[("weights", "frozen")] = torch.zeros(k, dtype=DTYPE)
        grad[("xbar", "frozen")] = t * s2.sum(-1)
        grad[("outer", "frozen")] = s2.sum(-1) * quad(xbar)
        grad[("M2", "frozen")] = (s2 * quad(X)).sum(-1)
        return vals, grad

    parts = chunked(n_draws, chunk, draw)
    vals = {f: [p[0][f] for p in parts] for f in POINCARE_FUNCTIONS}
    grad = {key: [p[1][key] for p in parts] for key in parts[0][1]}
    dev = {}
    for f, v in vals.items():
        v = torch.cat(v)
        dev[f] = (v - v.mean(0)).pow(2).sum(-1) * (v.shape[0] / (v.shape[0] - 1))
    return PoincareSamples(dev, {key: torch.cat(v) for key, v in grad.items()}, n)


# ---------------------------------------------------------------------------
# Fits shared by the checks
# ---------------------------------------------------------------------------

def limit_fit(m, y, se, order: int = 1):
    r"""WLS fit ``y(m) = a + b_1/m + ... + b_order/m^order`` (``m`` = n - 1 or n): ``a`` is the limit of ``m * stat``.

    A quantity that is ``a/m + O(m^{-2})`` has ``m * stat = a + b/m + O(m^{-2})``: the fitted ``a`` and its
    interval test the leading constant without the O(1/m) correction biasing it.  ``order=2`` also absorbs
    an O(1/m^2) correction, for quantities whose subleading terms are large over the sampled range.
    """
    m = np.asarray(m, float)
    X = np.column_stack([m**-k for k in range(order + 1)])
    return weighted_fit(X, np.asarray(y, float), np.asarray(se, float))


def projected_series(samples_by_n, direction, scale):
    r"""Scaled projections ``scale_n <Dbar_n, e>`` and standard errors, ``e = direction / ||direction||``.

    ``samples_by_n``: list of (N, B, p) draws; ``direction`` (B, p); ``scale``: list of numbers.
    Returns ``(y, se)`` as arrays (len(ns), B).
    """
    e = direction / direction.norm(dim=-1, keepdim=True)
    ys, ses = [], []
    for D, s in zip(samples_by_n, scale):
        p = (D * e).sum(-1)  # (N, B)
        ys.append((s * p.mean(0)).numpy())
        ses.append((s * p.std(0) / math.sqrt(p.shape[0])).numpy())
    return np.array(ys), np.array(ses)
