r"""Joint (u, W) training on data model DM (paper B, Section 4 / Appendix B): batches of DM draws, runs, max-margin
solutions, and the per-step numerics the joint-training claims read (segment ratios, Hessian norms, rates).

Updates (10), the family implemented by ``algorithms.scale_by_joint`` (t counts from 0):

    W_{t+1} = W_t - eta (t+1)^{-a} grad_W L / ||grad_W L||
    u_{t+1} = u_t - eta (t+1)^{-b} grad_u L / L^alpha

The factors (a, alpha, b) are parameters here; the claims' reading of them, Condition 1's thresholds, the mutants of
(10) their controls run and the invariants the claims test live in ``theorems/paper_b/`` (``joint_assumptions``,
``joint_setups``).  Records (``JOINT_RECORD``, metrics of ``records``), per run, at the recorded steps:

    log_loss (B,)          log L(W_t, u_t)
    margin (B, n)          m_i = y_i f(X_i); the per-sample loss is exp(-m_i) (exp loss)
    log_s_opt (B, n)       log s_{i,opt}(W_t);  log_one_minus_s_opt (B, n) = log(1 - s_{i,opt}) (no cancellation)
    score_gap (B, n)       gamma_{i,opt} - max_{t != opt} gamma_it under u_t
    logit_gap (B, n)       min_{t != opt} (a_{i,opt} - a_it): the W-SVM constraint values at W_t
    W_norm, u_norm (B,)    ||W_t||_F, ||u_t||
    log_grad_norm_W, log_grad_norm_u (B,)
    u_margin (B,)          min_i y_i u_t^T x_{i,opt} / ||u_t||    (NaN at u = 0)
    with W_mm (B, d, d):   one_minus_corr (B,) = ||Wbar_t - Wbar_mm||^2 / 2
    with u_mm (B, d):      u_corr_mm (B,) = <ubar_t, ubar_mm>;  r_margin (B, n) = y_i <ubar_mm, X_i^T s_i(W_t)>

W_mm and u_mm are per run (one DM draw per run); ``records`` normalizes them run by run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from numerics import DTYPE, optim

from . import algorithms as A
from . import data, model, records, svm
from .model import Dataset

# ---------------------------------------------------------------------------
# Algorithms
# ---------------------------------------------------------------------------


def eq10(eta: float, a: float, alpha: float, b: float) -> optim.Transform:
    """Updates (10) with factors (a, alpha, b) and one step size eta for both blocks."""
    return A.joint(eta, eta, w_time_power=a, u_loss_power=alpha, u_time_power=b)


# ---------------------------------------------------------------------------
# Batches of DM draws and their max-margin solutions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    """One batch of DM data sets: B draws at (n, T, d, opt_ratio), sigma = 1/sqrt(d).

    ``nu_max``: keep only draws whose near-orthogonality ``nu`` (``data.assumptions``) is at most ``nu_max`` (the
    caller's event, e.g. Lemma 9's); None keeps every draw.  Draws are tried in order of the seeds
    ``seed * 100003 + k``, k = 0, 1, ...
    """

    n: int = 3
    T: int = 2
    d: int = 64
    opt_ratio: float = 4.0
    B: int = 6
    seed: int = 0
    nu_max: float | None = None


def instances(setup: Setup) -> tuple[Dataset, int]:
    """(per-run Dataset of ``setup.B`` draws, number of draws tried).  Computed on each call: the claims share a
    batch as a fixture (``theorems.paper_b.joint_setups``)."""
    kept, k = [], 0
    while len(kept) < setup.B:
        if k >= 100 * setup.B:
            raise ValueError(f"{setup}: the event nu <= nu_max is too rare ({len(kept)} of {k} draws)")
        ds = data.dm(n=setup.n, T=setup.T, d=setup.d, opt_ratio=setup.opt_ratio, seed=setup.seed * 100003 + k)
        k += 1
        if setup.nu_max is None or bool(data.assumptions(ds)["nu"] <= setup.nu_max):
            kept.append(ds)
    return data.stack(kept), k


def max_margin_solutions(ds: Dataset) -> tuple[torch.Tensor, torch.Tensor, list, list]:
    """Per-run (W_mm (B, d, d), u_mm (B, d), W-SVM results, u-SVM results) for the designated opt tokens."""
    ws, us = [], []
    for b in range(ds.X.shape[0]):
        one = Dataset(ds.X[b], ds.y[b], opt=ds.opt_index[b])
        ws.append(svm.w_svm(one))
        us.append(svm.u_svm(one))
    return torch.stack([w.solution for w in ws]), torch.stack([u.solution for u in us]), ws, us


# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------


#: what joint runs record (``numerics.paper_b.records``): with W_mm also one_minus_corr, with u_mm u_corr_mm, r_margin
JOINT_RECORD = ("log_loss", "margin", "log_s_opt", "log_one_minus_s_opt", "score_gap", "logit_gap", "W_norm", "u_norm",
                "log_grad_norm_W", "log_grad_norm_u", "u_margin")


def run_joint(ds: Dataset, algorithm: optim.Transform, n_steps: int, W0=None, u0=None, W_mm=None, u_mm=None,
              record_at=None, n_points: int = 60, keep_params: bool = False) -> optim.Trajectory:
    """Joint training from (W0, u0) (default: zero init); records ``JOINT_RECORD``'s metrics.

    ``record_at`` defaults to log-spaced steps; pass ``range(n_steps + 1)`` for every step.
    """
    B, d = ds.X.shape[0], ds.d
    W0 = torch.zeros(B, d, d, dtype=DTYPE) if W0 is None else W0
    u0 = torch.zeros(B, d, dtype=DTYPE) if u0 is None else u0
    at = optim.log_spaced_steps(n_steps, n_points) if record_at is None else record_at
    names = list(JOINT_RECORD) + (["one_minus_corr"] if W_mm is not None else [])
    names += (["u_corr_mm", "r_margin"] if u_mm is not None else []) + (["W", "u"] if keep_params else [])
    return optim.run((W0, u0), A.objective(ds, "exp", joint=True), algorithm, n_steps,
                     record=records.recorder(ds, names, W_mm, u_mm), record_at=at)


# ---------------------------------------------------------------------------
# Step-wise quantities: the loss on a step's segment, the Hessian
# ---------------------------------------------------------------------------


def step_update(ds: Dataset, algorithm: optim.Transform, params, step: int):
    """The update (dW, du) that ``algorithm`` (a stateless transform) applies at ``params`` at step ``step``."""
    grads, info = A.objective(ds, "exp", joint=True)(params)
    info["step"] = step
    updates, _ = algorithm.update(grads, algorithm.init(params), params, info)
    return updates


def segment_log_ratio(ds: Dataset, params, updates, n_points: int = 9) -> torch.Tensor:
    """max over theta' on [theta, theta + update] of log L(theta') - log L(theta), (B,)."""
    W, u = params
    dW, du = updates
    base = model.evaluate(W, u, ds, grad_u=False).log_loss
    worst = torch.zeros_like(base)
    for k in range(1, n_points + 1):
        lam = k / n_points
        ll = model.evaluate(W + lam * dW, u + lam * du, ds).log_loss
        worst = torch.maximum(worst, ll - base)
    return worst


def segment_margin_change(ds: Dataset, params, updates, n_points: int = 9) -> torch.Tensor:
    """max over theta' on [theta, theta + update] and samples i of |m_i(theta') - m_i(theta)|, (B,): the margin
    change over one step that the proof of Lemma 13 (2) bounds (then L(theta')/L(theta) <= e^{this})."""
    W, u = params
    dW, du = updates
    base = model.evaluate(W, u, ds, grad_u=False).margin
    worst = torch.zeros(base.shape[0], dtype=base.dtype)
    for k in range(1, n_points + 1):
        lam = k / n_points
        m = model.evaluate(W + lam * dW, u + lam * du, ds).margin
        worst = torch.maximum(worst, (m - base).abs().amax(-1))
    return worst


def _shifted_losses(theta: torch.Tensor, ds: Dataset, shift: torch.Tensor) -> torch.Tensor:
    """L_b(theta_b) e^{shift_b} (B,), theta = (vec W, u) per run (B, d^2 + d); linear domain, differentiable."""
    B, d = theta.shape[0], ds.d
    W, u = theta[:, : d * d].reshape(B, d, d), theta[:, d * d:]
    s = torch.softmax(model.logits(W, ds), dim=-1)                                     # (B, n, T)
    margin = (s * model.token_scores(u, ds)).sum(-1)
    return torch.exp(shift.unsqueeze(-1) - margin).mean(-1)


def log_hessian_ratio(W: torch.Tensor, u: torch.Tensor, ds: Dataset, iters: int = 40,
                      gen: torch.Generator | None = None) -> torch.Tensor:
    """log(||Hess_theta L||_op / L) per run (B,), theta = (W, u), by power iteration on Hessian-vector products.

    The loss is multiplied by e^{min_i m_i} so that neither L nor the Hessian underflows (the ratio is
    invariant).  Runs are independent, so one double-backward of the summed losses gives every run's
    Hessian-vector product.  ||H v_k|| -> max |eigenvalue| (the operator norm; H may be indefinite).
    """
    B = W.shape[0]
    theta = torch.cat([W.reshape(B, -1), u], -1).detach().requires_grad_(True)
    with torch.no_grad():
        margin = (torch.softmax(model.logits(W, ds), -1) * model.token_scores(u, ds)).sum(-1)
        shift = margin.amin(-1)
    with torch.enable_grad():
        losses = _shifted_losses(theta, ds, shift)
        (g,) = torch.autograd.grad(losses.sum(), theta, create_graph=True)
        v = torch.randn(theta.shape, generator=gen, dtype=DTYPE)
        v = v / torch.linalg.vector_norm(v, dim=-1, keepdim=True)
        for _ in range(iters):
            (Hv,) = torch.autograd.grad((g * v).sum(), theta, retain_graph=True)
            nrm = torch.linalg.vector_norm(Hv, dim=-1, keepdim=True)
            v = Hv / nrm
    return nrm.squeeze(-1).log() - losses.detach().log()


def hessian_full(W: torch.Tensor, u: torch.Tensor, ds: Dataset) -> torch.Tensor:
    """The full Hessian of L e^{min_i m_i} for run 0 only (reference for small instances), (P, P)."""
    theta = torch.cat([W[:1].reshape(1, -1), u[:1]], -1).detach()
    one = Dataset(ds.X[:1], ds.y[:1], opt=ds.opt_index[:1])
    with torch.no_grad():
        shift = ((torch.softmax(model.logits(W[:1], one), -1) * model.token_scores(u[:1], one)).sum(-1)).amin(-1)
    return torch.autograd.functional.hessian(lambda th: _shifted_losses(th.unsqueeze(0), one, shift).sum(),
                                             theta[0])


# ---------------------------------------------------------------------------
# Rates from trajectories
# ---------------------------------------------------------------------------


def increment_rates(steps, values) -> tuple[np.ndarray, np.ndarray]:
    """Finite-difference rates between recorded steps: (midpoints (K-1,), (v_{k+1} - v_k)/(t_{k+1} - t_k) (K-1, B)).

    Midpoints are geometric means (the right abscissa for power laws on log-spaced records).
    """
    t = np.asarray(steps, float)
    v = np.asarray(values, float)
    rate = np.diff(v, axis=0) / np.diff(t)[:, None]
    mid = np.sqrt(t[1:] * t[:-1])
    return mid, rate


