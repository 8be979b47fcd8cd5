r"""Experiment engines for paper A's Lemmas 3-6, Theorem 2 and Figures 1-2.

* **Exact sampling of the least-squares statistics.**  Algorithm 1's steps 1-2 depend on the data only through
  ``X^T X`` and ``X^T Y``.  Their joint law is explicit: ``X^T X ~ Wishart_d(n, Sigma)`` (Bartlett decomposition
  ``X^T X = R R^T``, ``R = C A``, ``Sigma = C C^T``, ``A`` lower triangular with ``A_ii^2 ~ chi^2_{n-i}``,
  ``A_ij ~ N(0, 1)`` below the diagonal) and, given ``X``, ``X^T E = sigma R Z^T`` with ``Z`` (r, d) iid N(0, 1)
  (the columns ``X^T e_k`` are ``N(0, sigma^2 X^T X)``).  So ``What - W* = sigma Z R^{-1}`` and a draw costs
  O(d^3), whatever ``n``: the n-laws of Lemmas 3, 5, 6 are measured up to ``n = 10^8`` in milliseconds.
* **Conditioned instances** (:func:`conditioned_instance`): ``random_instance`` redrawn until
  ``sigma_d(M*) >= min_ratio sigma_1(M*)`` (and optionally a gap ``sigma_{d-1} >= min_gap sigma_d``), so
  relaxation times ``~ 1/(eta sigma_d)`` stay short.
* **Linearized Algorithm 1** (:func:`linear_rate`): the Hessian of ``L_lambda - L*`` in factor coordinates at a
  point of Mfold and the preconditioner written as an operator on factor-coordinate gradients; the slowest
  non-tangent mode of ``I - eta T H`` gives the asymptotic geometric rate of the excess loss.
* **Control-variate oracle** (:class:`ControlVariateOracle`): the gradient oracle ``E grad(Lhat_n + lambda Rhat)``
  of Section 3.1 estimated as ``grad L_lambda`` (closed form) plus the mean of per-batch differences whose
  mean is exactly the oracle's bias and whose standard deviation is O(1/n) (``numerics.paper_a.moments``);
  :class:`FreshBatchOracle` is its stochastic stand-in (one fresh batch per step).
* **Stacked minibatch runs** (:class:`StackedMinibatchObjective`, :func:`epoch_schedule`): Algorithm 1 and SGD
  (and variants) as one batch of runs sharing data and minibatches, with a per-run regularization weight; the
  per-run preconditioner is ``numerics.paper_a.algorithms.precondition`` with ``Sigmahat`` or ``I`` per run.
"""
from __future__ import annotations

import math

import torch

from numerics import DTYPE
from numerics.paper_a import algorithms as al
from numerics.paper_a import geometry as ge
from numerics.paper_a import moments as mo
from numerics.paper_a.model import check_covariance, row_blocks, sym_sqrt

# ---------------------------------------------------------------------------
# Instances
# ---------------------------------------------------------------------------


def conditioned_instance(d: int, r: int, gen: torch.Generator, batch: int, m_op: float, min_ratio: float,
                         sigma_floor: float = 0.5, min_gap: float = 1.0, max_rounds: int = 500,
                         tally: dict | None = None):
    r"""``batch`` draws of :func:`numerics.paper_a.algorithms.random_instance` kept only when
    ``sigma_d(M*) >= min_ratio sigma_1(M*)`` and ``sigma_{d-1}(M*) >= min_gap sigma_d(M*)`` (rejection sampling;
    ``min_ratio = 0``, ``min_gap = 1`` keep every draw).  ``tally``, when given, counts the draws examined
    (``"drawn"``), those the ratio rejected (``"min_ratio"``), those that passed it (``"ratio_kept"``) and those
    of these the gap rejected (``"min_gap"``)."""
    keep_S, keep_W = [], []
    for _ in range(max_rounds):
        S, W = al.random_instance(d, r, gen, batch=batch, m_op=m_op, sigma_floor=sigma_floor)
        sv = torch.linalg.svdvals(W @ sym_sqrt(S))
        ratio_ok, gap_ok = sv[:, -1] >= min_ratio * sv[:, 0], sv[:, -2] >= min_gap * sv[:, -1]
        ok = ratio_ok & gap_ok
        if tally is not None:
            for key, n in (("drawn", batch), ("min_ratio", int((~ratio_ok).sum())), ("ratio_kept", int(ratio_ok.sum())),
                           ("min_gap", int((ratio_ok & ~gap_ok).sum()))):
                tally[key] = tally.get(key, 0) + n
        keep_S.append(S[ok])
        keep_W.append(W[ok])
        if sum(len(s) for s in keep_S) >= batch:
            return torch.cat(keep_S)[:batch], torch.cat(keep_W)[:batch]
    raise RuntimeError(f"fewer than {batch} instances with sigma_d/sigma_1 >= {min_ratio}, "
                       f"sigma_(d-1)/sigma_d >= {min_gap} in {max_rounds} rounds")


# ---------------------------------------------------------------------------
# Least squares and spectral initialization from exactly sampled statistics
# ---------------------------------------------------------------------------


def sample_statistics(Sigma, W_star, sigma: float, n: int, batch: int, gen: torch.Generator):
    r"""``batch`` draws of ``(X^T X, X^T Y)`` for ``n`` samples, exactly in law (module docstring).

    ``Sigma`` (d, d) or (B, d, d), ``W_star`` (r, d) or (B, r, d).  Returns (B, d, d), (B, d, r).
    """
    Sigma = check_covariance(Sigma)
    d, r = Sigma.shape[-1], W_star.shape[-2]
    if n < d:
        raise ValueError(f"need n >= d for an invertible X^T X, got n={n}, d={d}")
    C = torch.linalg.cholesky(Sigma)
    dof = (n - torch.arange(d, dtype=DTYPE)).expand(batch, d)
    diag = (2 * torch._standard_gamma(dof / 2, generator=gen)).sqrt()  # chi_{n-i}
    A = torch.randn(batch, d, d, generator=gen, dtype=DTYPE).tril(-1) + torch.diag_embed(diag)
    R = C @ A
    Z = torch.randn(batch, r, d, generator=gen, dtype=DTYPE)
    XtX = R @ R.mT
    XtY = XtX @ W_star.mT + sigma * R @ Z.mT
    return XtX, XtY


def least_squares_from_statistics(XtX, XtY, n: int):
    r"""``(What, Sigmahat)`` as in :func:`numerics.paper_a.algorithms.least_squares`."""
    S_hat = XtX / n
    W_hat = torch.linalg.solve(XtX, XtY).mT
    return W_hat, S_hat


# Step 2 of Algorithm 1 from (What, Sigmahat), re-exported: one implementation serves both entry points.
spectral_init_from_estimates = al.spectral_init_from_estimates


def whitened_error(S_hat, Sigma) -> torch.Tensor:
    r"""``e = ||Sigma^{1/2} Sigmahat^{-1} Sigma^{1/2} - I||_op``: how far the preconditioner is from the truth
    in the Sigmatilde geometry; ``||Sigmahat^{-1} - Sigma^{-1}||_op <= e ||Sigma^{-1}||_op``."""
    S = sym_sqrt(Sigma)
    E = S @ torch.linalg.inv(S_hat) @ S
    E = (E + E.mT) / 2 - torch.eye(Sigma.shape[-1], dtype=DTYPE)
    return torch.linalg.eigvalsh(E).abs().max(-1).values


def lstsq_tail_bound(n, delta, d: int, r: int, sigma: float, lam_min):
    r"""Explicit form of Lemma 6: ``P(||What - W*||_op <= b) >= 1 - delta`` with

    ``b = sigma (sqrt r + sqrt d + t) / ( sqrt(n lam_min(Sigma)) (1 - (sqrt d + t)/sqrt n) )``,
    ``t = sqrt(2 log(2/delta))``, valid when ``sqrt n > sqrt d + t`` (``inf`` otherwise).

    Derivation: ``What - W* = sigma Z R^{-1}`` with ``R R^T = X^T X`` (module docstring), so
    ``||What - W*||_op <= sigma ||Z||_op / s_min(X)``.  Gaussian concentration of the Lipschitz functions
    ``||Z||_op`` and ``s_min(G)`` (``X = G Sigma^{1/2}``) with Gordon's bounds ``E||Z||_op <= sqrt r + sqrt d``,
    ``E s_min(G) >= sqrt n - sqrt d`` (Vershynin 2010, Cor. 5.35, the paper's reference [14]) give each event
    with probability ``>= 1 - e^{-t^2/2} = 1 - delta/2``; ``s_min(X) >= s_min(G) lam_min(Sigma)^{1/2}``.
    """
    n = torch.as_tensor(n, dtype=DTYPE)
    t = math.sqrt(2 * math.log(2 / delta))
    slack = 1 - (math.sqrt(d) + t) / n.sqrt()
    b = sigma * (math.sqrt(r) + math.sqrt(d) + t) / ((n * lam_min).sqrt() * slack)
    return torch.where(slack > 0, b, torch.full_like(b, math.inf))


def spectral_init_draws(Sigma, W_star, sigma: float, n: int, draws: int, gen: torch.Generator,
                        init=spectral_init_from_estimates) -> dict[str, torch.Tensor]:
    r"""``draws`` independent training sets of ``n`` samples for one instance (``Sigma`` (d, d), ``W_star`` (r, d)):
    steps 1-2 of Algorithm 1 and the errors Lemmas 3, 5, 6 talk about, each (draws,).  ``init`` is step 2, a map
    ``(What, Sigmahat) -> theta_0`` (:func:`spectral_init_from_estimates`, Algorithm 1's).

    Keys: ``dist`` (``dist(theta_0, Mfold)``), ``ls_op`` / ``ls_F`` (``||What - W*||`` op / Frobenius),
    ``cov_F`` (``||Sigmahat - Sigma||_F``), ``e`` (:func:`whitened_error`), ``B_op`` (``||Sigma^{1/2} K_0 Sigma^{1/2}||_op``).
    """
    XtX, XtY = sample_statistics(Sigma, W_star, sigma, n, draws, gen)
    W_hat, S_hat = least_squares_from_statistics(XtX, XtY, n)
    V, K = init(W_hat, S_hat)
    return {
        "dist": ge.dist_to_manifold(V, K, Sigma, W_star),
        "ls_op": torch.linalg.matrix_norm(W_hat - W_star, ord=2),
        "ls_F": torch.linalg.matrix_norm(W_hat - W_star),
        "cov_F": torch.linalg.matrix_norm(S_hat - Sigma),
        "e": whitened_error(S_hat, Sigma),
        "B_op": torch.linalg.matrix_norm(ge.to_factors(V, K, Sigma)[1], ord=2),
    }


# ---------------------------------------------------------------------------
# Linearized Algorithm 1: Hessian and preconditioner in factor coordinates
# ---------------------------------------------------------------------------


def factor_hessian(Sigma, W_star, lam: float = ge.LAMBDA, point=None):
    r"""Hessians in flattened factor coordinates ``z = (vec A, vec B)`` of
    ``f = ||A B^T - M*||^2 + lam ||A^T A - B^T B||^2`` (``= L_lambda - L*``) and of its first term (``= L - L*``),
    at ``point = (V, K)`` (default: the ``Q = I`` point of Mfold).

    Single instance: ``Sigma`` (d, d), ``W_star`` (r, d).  Returns ``(H, H_L)``, each (p, p), ``p = r d + d^2``.
    """
    U, Lam, Vs = ge.target_svd(Sigma, W_star)
    A0, B0 = ge.manifold_factors(U, Lam, Vs) if point is None else ge.to_factors(*point, Sigma)
    M = (U * Lam) @ Vs.mT
    r, d = A0.shape

    def split(z):
        return z[: r * d].reshape(r, d), z[r * d:].reshape(d, d)

    def f_L(z):
        A, B = split(z)
        return (A @ B.mT - M).pow(2).sum()

    def f(z):
        A, B = split(z)
        return f_L(z) + lam * (A.mT @ A - B.mT @ B).pow(2).sum()

    z0 = torch.cat([A0.flatten(), B0.flatten()])
    return torch.autograd.functional.hessian(f, z0), torch.autograd.functional.hessian(f_L, z0)


def preconditioner_operator(Sigma, S_hat, kind: str = "two_sided"):
    r"""The preconditioned step as a linear map on flattened factor-coordinate gradients (p, p).

    A theta-step ``(g_V P_V, P_L g_K P_R)`` is, in factor coordinates (``g_V = G_A S``, ``g_K = S G_B S``,
    ``S = Sigma^{1/2}``), ``(G_A M_V, M_L G_B M_R)`` with ``M_. = S P_. S``.  Two-sided (Algorithm 1):
    ``P = Sigmahat^{-1}`` everywhere, ``M = S Sigmahat^{-1} S ~ I``; one-sided: ``P_R = I``; none: all ``P = I``.
    """
    d = Sigma.shape[-1]
    S = sym_sqrt(Sigma)
    Si = torch.linalg.inv(S_hat)
    I = torch.eye(d, dtype=DTYPE)
    P_V, P_L, P_R = {"two_sided": (Si, Si, Si), "one_sided": (Si, Si, I), "none": (I, I, I)}[kind]
    M_V, M_L, M_R = S @ P_V @ S, S @ P_L @ S, S @ P_R @ S

    def apply(z, r):
        GA, GB = z[: r * d].reshape(r, d), z[r * d:].reshape(d, d)
        return torch.cat([(GA @ M_V).flatten(), (M_L @ GB @ M_R).flatten()])

    def operator(r):
        p = r * d + d * d
        return torch.stack([apply(e, r) for e in torch.eye(p, dtype=DTYPE)], 1)

    return operator


def linear_rate(Sigma, W_star, S_hat, eta: float, lam: float = ge.LAMBDA, kind: str = "two_sided", point=None):
    r"""Predicted asymptotic decay rate ``c`` of the excess loss, ``L(theta_t) - L* ~ C e^{-c t}``, for the
    iteration ``z <- z - eta T grad f(z)`` linearized at Mfold: ``z_t - z* ~ (I - eta T H)^t (z_0 - z*)``.

    ``T H`` has real eigenvalues ``mu_k >= 0`` (it is similar to ``T^{1/2} H T^{1/2}``); the ``d(d-1)/2`` zero ones are
    the tangent (rotation) directions of Mfold, along which the loss does not change.  The excess is the quadratic
    form ``H_L`` of the displacement, so its slowest term decays like ``(1 - eta mu)^{2t}`` for the slowest mode
    ``mu`` that ``H_L`` sees: ``c = -2 log |1 - eta mu|``.  Returns ``(c, mu, spectrum)``.

    ``point`` is where to linearize: with ``Sigmahat != Sigma`` the rate depends on which point of Mfold the
    iteration approaches (``T`` does not commute with the rotations), so pass the limit point when it is known.
    """
    H, H_L = factor_hessian(Sigma, W_star, lam, point)
    r = W_star.shape[-2]
    T = preconditioner_operator(Sigma, S_hat, kind)(r)
    evals, evecs = torch.linalg.eig(T @ H)
    mu, vec = evals.real, evecs.real
    vec = vec / vec.norm(dim=0, keepdim=True)
    seen = torch.einsum("ik,ij,jk->k", vec, H_L, vec)
    scale = float(mu.abs().max())
    nontangent = (mu.abs() > 1e-9 * scale) & (seen > 1e-9 * scale)
    contraction = (1 - eta * mu).abs()
    worst = contraction.masked_fill(~nontangent, -1.0).argmax()
    return float(-2 * torch.log(contraction[worst])), float(mu[worst]), mu.sort().values


# ---------------------------------------------------------------------------
# The gradient oracle with control variates
# ---------------------------------------------------------------------------


def regularizer_grad_linear(V, K, Sigma, Delta):
    r"""``D(grad R)(Sigma)[Delta]`` in closed form (same map as ``moments.regularizer_grad_linear``, which uses
    forward-mode autodiff and costs far more per call).

    ``grad R = (4 V E, -4 Sigma K E)`` with ``E = Sigma D Sigma``, ``D = V^T V - K^T Sigma K``; along ``Delta``:
    ``D' = -K^T Delta K``, ``E' = Delta D Sigma + Sigma D' Sigma + Sigma D Delta``, so the derivative is
    ``(4 V E', -4 (Delta K E + Sigma K E'))``.
    """
    Dm = V.mT @ V - K.mT @ Sigma @ K
    E = Sigma @ Dm @ Sigma
    E1 = Delta @ Dm @ Sigma - Sigma @ (K.mT @ Delta @ K) @ Sigma + Sigma @ Dm @ Delta
    return 4 * V @ E1, -4 * (Delta @ K @ E + Sigma @ K @ E1)


def oracle_bias_samples(V, K, Sigma, W_star, n: int, n_batches: int, gen: torch.Generator, lam: float = ge.LAMBDA,
                        include_self: bool = False, reg_Sigma=None):
    r"""Per-batch draws ``D_k`` (m, B, r d + d^2), in factor coordinates, with ``E D_k = E grad(Lhat_n + lam Rhat) -
    grad(L + lam R)``: the oracle's bias at ``theta``.

    ``D_k = [grad Lhat_n - grad L_o] + lam [grad Rhat - D(grad R)(Sigma)[Sigmahat - Sigma] - grad R]`` on batch ``k``
    (``L_o`` the oracle loss, ``E grad L_o = grad L``; the Taylor term has mean zero): standard deviation O(1/n).
    Responses are noiseless: the noise enters each per-batch gradient linearly with conditional mean zero, so the
    expectation is unchanged and only variance is removed.  ``reg_Sigma`` fixes the covariance inside ``Rhat``
    (negative control ``I``): then ``Rhat = R`` exactly and its term vanishes.
    """
    Sigma = check_covariance(Sigma)
    Bsz = V.shape[0]
    C = torch.linalg.cholesky(Sigma)
    d = Sigma.shape[-1]
    x_all = torch.randn(n_batches, Bsz, n, d, generator=gen, dtype=DTYPE) @ C.mT
    # the draw above; its O(n^2) work in cache-sized row blocks (model.BLOCK_ELEMS)
    return torch.cat([_oracle_bias(V, K, Sigma, W_star, x_all[b], lam, include_self, reg_Sigma)
                      for b in row_blocks(n_batches, Bsz * n * n)])


def _oracle_bias(V, K, Sigma, W_star, x, lam, include_self, reg_Sigma):
    """:func:`oracle_bias_samples` on the batches ``x`` (m, B, n, d)."""
    y = x @ W_star.mT
    _, hV, hK = mo.empirical_loss_grad(V, K, x, y, include_self)
    _, oV, oK = mo.oracle_loss_grad(V, K, Sigma, x, y)
    dV, dK = hV - oV, hK - oK
    if lam and reg_Sigma is None:
        Sh = ge.sample_covariance(x)
        rV, rK = ge.regularizer_grad(V, K, Sh)
        gV, gK = ge.regularizer_grad(V, K, Sigma)
        lV, lK = regularizer_grad_linear(V, K, Sigma, Sh - Sigma)
        dV, dK = dV + lam * (rV - gV - lV), dK + lam * (rK - gK - lK)
    return mo.to_factor_coords(dV, dK, Sigma)


class ControlVariateOracle:
    r"""``objective(params)`` for :func:`numerics.optim.run`: the oracle gradient ``E grad(Lhat_n + lam Rhat)``
    estimated as ``grad(L + lam R)`` (closed form) plus the mean of ``n_batches`` control-variate differences
    (:func:`oracle_bias_samples`); unbiased for the oracle, with error O(1/(n sqrt(n_batches))).

    ``reg_Sigma`` (negative control) replaces the covariance inside the regularizer; ``include_self`` the softmax.
    """

    def __init__(self, Sigma, W_star, sigma: float, n: int, n_batches: int, gen: torch.Generator,
                 lam: float = ge.LAMBDA, include_self: bool = False, reg_Sigma=None, max_elems: int = 2**21):
        self.Sigma, self.W, self.sigma, self.n, self.m = Sigma, W_star, sigma, n, n_batches
        self.gen, self.lam, self.include_self, self.reg_Sigma = gen, lam, include_self, reg_Sigma
        self.max_elems = max_elems

    def __call__(self, params):
        V, K = params
        Bsz, r, d = V.shape
        gV, gK = ge.regularized_loss_grad(V, K, self.Sigma, self.W, self.lam, self.reg_Sigma)
        per = max(1, self.max_elems // (Bsz * self.n * self.n))
        total, done = 0.0, 0
        while done < self.m:
            k = min(per, self.m - done)
            D = oracle_bias_samples(V, K, self.Sigma, self.W, self.n, k, self.gen, self.lam, self.include_self,
                                    self.reg_Sigma)
            total = total + D.sum(0)
            done += k
        mean = total / self.m
        S = sym_sqrt(self.Sigma)
        bV = mean[:, : r * d].reshape(Bsz, r, d) @ S  # back from factor to theta coordinates
        bK = S @ mean[:, r * d:].reshape(Bsz, d, d) @ S
        return (gV + bV, gK + bK), {"loss": torch.zeros(Bsz, dtype=DTYPE)}


class FreshBatchOracle:
    r"""``objective(params)``: the gradient of ``Lhat_n + lam Rhat`` on ONE fresh batch of ``n`` noisy samples per
    step and run (the practical, stochastic stand-in for the oracle; its noise has variance O(1/n))."""

    def __init__(self, Sigma, W_star, sigma: float, n: int, gen: torch.Generator, lam: float = ge.LAMBDA):
        self.Sigma, self.W, self.sigma, self.n, self.gen, self.lam = Sigma, W_star, sigma, n, gen, lam
        self.C = torch.linalg.cholesky(check_covariance(Sigma))

    def __call__(self, params):
        V, K = params
        Bsz, r, d = V.shape
        x = torch.randn(Bsz, self.n, d, generator=self.gen, dtype=DTYPE) @ self.C.mT
        y = x @ self.W.mT + self.sigma * torch.randn(Bsz, self.n, r, generator=self.gen, dtype=DTYPE)
        loss, gV, gK = mo.empirical_loss_grad(V, K, x, y)
        if self.lam:
            rV, rK = ge.regularizer_grad(V, K, ge.sample_covariance(x))
            gV, gK = gV + self.lam * rV, gK + self.lam * rK
        return (gV, gK), {"loss": loss}


# ---------------------------------------------------------------------------
# Stacked minibatch runs (Figures 1-2)
# ---------------------------------------------------------------------------


class StackedMinibatchObjective:
    r"""The practical oracle of Appendix A for a stack of runs: at call ``t``, the gradient of
    ``Lhat_b + lam_k Rhat`` on minibatch ``schedule[t]`` of run ``k``'s data, with a per-run weight ``lam`` (B,).

    Same law as :class:`numerics.paper_a.oracle.MinibatchObjective` given the schedule (``Rhat`` from the
    minibatch's own ``Sigmahat``), so Algorithm 1 (``lam = 1/4``) and SGD (``lam = 0``) can share one batch.
    ``rows`` (B,): run ``k`` trains on data set ``rows[k]`` of ``x, y`` and walks that data set's ``schedule``, so
    runs that compare methods on the same data and minibatches share one copy of both (default: run ``k`` on data
    set ``k``).  ``info["loss"]`` is the minibatch objective.
    """

    def __init__(self, x, y, schedule, lam: torch.Tensor, rows: torch.Tensor | None = None):
        n_sets, N, _ = x.shape
        self.x, self.y, self.N = x.reshape(n_sets * N, -1), y.reshape(n_sets * N, -1), N
        self.schedule = schedule  # (steps, data sets, b): indices into each data set's samples
        self.rows = torch.arange(n_sets) if rows is None else rows
        self.lam = lam.to(DTYPE)
        self.step = 0

    def __call__(self, params):
        V, K = params
        # this step's row indices into the flattened data, formed per step: a (steps, runs, b) table of them would
        # hold as much memory as the data once per method
        idx = self.schedule[self.step % self.schedule.shape[0]][self.rows] + self.N * self.rows.unsqueeze(-1)
        self.step += 1
        xb = self.x.index_select(0, idx.reshape(-1)).reshape(*idx.shape, -1)
        yb = self.y.index_select(0, idx.reshape(-1)).reshape(*idx.shape, -1)
        loss, gV, gK = mo.empirical_loss_grad(V, K, xb, yb)
        Sh = ge.sample_covariance(xb)
        rV, rK = ge.regularizer_grad(V, K, Sh)
        lam = self.lam[:, None, None]
        return (gV + lam * rV, gK + lam * rK), {"loss": loss}


def epoch_schedule(N: int, b: int, n_steps: int, batch: int, gen: torch.Generator) -> torch.Tensor:
    r"""Minibatch indices (n_steps + 1, B, b): each run walks through fresh random permutations of its ``N`` samples
    in blocks of ``b`` (sampling without replacement within each step and within each epoch).

    O(N) random numbers per epoch instead of per step (``oracle.minibatch_schedule`` draws independent subsets, at
    O(N) per step, which dominates long runs on large data sets).
    """
    if not 0 < b <= N:
        raise ValueError(f"need 0 < b <= N, got b={b}, N={N}")
    per_epoch = N // b
    epochs = -(-(n_steps + 1) // per_epoch)
    perms = torch.rand(epochs, batch, N, generator=gen, dtype=DTYPE).argsort(-1)[..., : per_epoch * b]
    blocks = perms.reshape(epochs, batch, per_epoch, b).permute(0, 2, 1, 3).reshape(epochs * per_epoch, batch, b)
    return blocks[: n_steps + 1]

