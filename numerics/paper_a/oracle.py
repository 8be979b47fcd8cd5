r"""Paper A's gradient oracle (Section 3.1) and its practical minibatch version (Appendix A).

The oracle returns ``E[grad (Lhat_n + lambda Rhat)(theta)]``, the expectation over a fresh batch of ``n``
samples; here it is a Monte Carlo mean over ``n_batches`` independent batches, with its standard error.
Each batch is its own leave-one-out context (``Lhat_n`` from :func:`numerics.paper_a.model.empirical_loss`)
and its own ``Sigmahat`` inside ``Rhat``.

Shapes: ``V`` (B, r, d), ``K`` (B, d, d); data ``x`` (..., B, n, d), ``y`` (..., B, n, r), where the extra
leading dimensions index independent data sets drawn for the same run.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from numerics import DTYPE
from numerics.paper_a.geometry import LAMBDA, Theta, regularizer, regularizer_grad, sample_covariance
from numerics.paper_a.model import check_covariance, chunked, empirical_loss, regression_draw


def sample_batches(
    Sigma: torch.Tensor, W_star: torch.Tensor, sigma: float, n: int, n_batches: int, batch: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_batches`` fresh data sets of ``n`` pairs for each of ``batch`` runs: x (m, B, n, d), y (m, B, n, r).

    Same law as ``model.sample_regression`` but with ``Sigma``/``W_star`` allowed per run (B, ., .).
    """
    return regression_draw(torch.linalg.cholesky(check_covariance(Sigma)), W_star, sigma, (n_batches, batch, n), gen)


def empirical_objective_grad(
    V: torch.Tensor,
    K: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    lam: float = LAMBDA,
    include_self: bool = False,
    Sigma_reg: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Value and gradient of ``Lhat_n + lambda Rhat`` on each data set: (loss (...,B), g_V, g_K).

    ``Lhat_n`` is differentiated by autograd (one copy of ``(V, K)`` per data set, so per-data-set
    gradients come out of a single backward pass); ``Rhat = R(theta; Sigmahat)`` uses its closed-form
    gradient with ``Sigmahat`` the data set's own second moment, or ``Sigma_reg`` when given.
    """
    V, K = V.detach(), K.detach()
    lead = x.shape[:-2]
    Vl = V.expand(*lead, *V.shape[-2:]).clone().requires_grad_(True)
    Kl = K.expand(*lead, *K.shape[-2:]).clone().requires_grad_(True)
    with torch.enable_grad():
        Lhat = empirical_loss(Vl, Kl, x, y, include_self)
        gV, gK = torch.autograd.grad(Lhat.sum(), (Vl, Kl))
    if lam == 0:
        return Lhat.detach(), gV, gK
    S = sample_covariance(x) if Sigma_reg is None else Sigma_reg
    rV, rK = regularizer_grad(V, K, S)
    return Lhat.detach() + lam * regularizer(V, K, S), gV + lam * rV, gK + lam * rK


@dataclass(frozen=True)
class OracleGradient:
    """Monte Carlo oracle output per run: mean gradient, its standard error (entrywise), mean objective."""

    grad: Theta  # (B, r, d), (B, d, d)
    se: Theta  # standard errors of the entries of grad
    loss: torch.Tensor  # (B,) mean of Lhat_n + lambda Rhat over the batches
    loss_se: torch.Tensor  # (B,)
    n: int
    n_batches: int


def oracle_gradient(V: torch.Tensor, K: torch.Tensor, Sigma: torch.Tensor, W_star: torch.Tensor, sigma: float, n: int,
                    n_batches: int, gen: torch.Generator, lam: float = LAMBDA, include_self: bool = False,
                    max_elems: int = 2**23) -> OracleGradient:
    r"""``E_{fresh batch of n}[grad (Lhat_n + lambda Rhat)(theta)]`` by averaging ``n_batches`` batches.

    Batches are processed in chunks of at most ``max_elems`` softmax entries (m B n^2) to bound memory;
    the standard error is ``sd / sqrt(n_batches)`` from the per-batch values (NaN if ``n_batches == 1``).
    """
    Bsz = V.shape[0]

    def draw(k, _):
        vals = empirical_objective_grad(V, K, *sample_batches(Sigma, W_star, sigma, n, k, Bsz, gen), lam, include_self)
        return [v.sum(0) for v in vals], [v.pow(2).sum(0) for v in vals]

    parts = chunked(n_batches, max(1, max_elems // (Bsz * n * n)), draw)
    sums, squares = ([sum(p[j][i] for p in parts) for i in range(3)] for j in (0, 1))
    m = n_batches
    means = [s / m for s in sums]
    ses = [
        ((q - m * mu.pow(2)).clamp_min(0) / (m - 1) / m).sqrt() if m > 1 else torch.full_like(mu, float("nan"))
        for q, mu in zip(squares, means)
    ]
    return OracleGradient((means[1], means[2]), (ses[1], ses[2]), means[0], ses[0], n, n_batches)


# ---------------------------------------------------------------------------
# Minibatches (Appendix A's practical oracle), an objective for numerics.optim.run: objective(params) -> (grads, info)
# ---------------------------------------------------------------------------

def minibatch_schedule(N: int, b: int, n_steps: int, batch: int, gen: torch.Generator, chunk: int = 64) -> torch.Tensor:
    """Indices (n_steps + 1, B, b): at each step, ``b`` of ``N`` samples drawn without replacement, per run.

    ``n_steps + 1`` rows because ``optim.run`` evaluates the objective once more on the final iterate.
    Build it once and hand it to every algorithm that must see the same minibatches.
    """
    if not 0 < b <= N:
        raise ValueError(f"need 0 < b <= N, got b={b}, N={N}")
    return torch.cat(chunked(n_steps + 1, chunk, lambda k, _: torch.rand(k, batch, N, generator=gen, dtype=DTYPE)
                             .topk(b, dim=-1).indices))


class MinibatchObjective:
    r"""The practical oracle: at call ``t`` the gradient of ``Lhat_b + lambda Rhat`` on minibatch ``schedule[t]``.

    Each minibatch is its own leave-one-out context.  ``Rhat`` uses the minibatch's ``Sigmahat`` unless
    ``Sigma_reg`` is given (e.g. the full-data ``Sigmahat``: the spec is silent on which one).  The objective
    is stateful (it counts its calls), so build one per run; two built from the same ``schedule`` see the
    same minibatches in the same order.
    """

    def __init__(self, x, y, schedule, lam: float = LAMBDA, include_self: bool = False, Sigma_reg=None):
        self.x, self.y, self.schedule = x, y, schedule
        self.lam, self.include_self, self.Sigma_reg = lam, include_self, Sigma_reg
        self.step = 0
        self._runs = torch.arange(x.shape[0]).unsqueeze(-1)

    def __call__(self, params):
        idx = self.schedule[self.step % self.schedule.shape[0]]
        self.step += 1
        xb, yb = self.x[self._runs, idx], self.y[self._runs, idx]
        loss, gV, gK = empirical_objective_grad(*params, xb, yb, self.lam, self.include_self, self.Sigma_reg)
        return (gV, gK), {"loss": loss}
