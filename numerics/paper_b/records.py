r"""What paper B's checks read off a training run: small named metrics and the one recorder that records them.

``optim.run`` calls ``record(params, info)`` at the recorded steps; :func:`recorder` builds that function from
metric names.  Each metric is a small function of one recorded step (:class:`At`), per run (leading dim B),
read off the step's log-domain ``model.Evaluation`` (no second forward pass), so it stays exact where the
softmax saturates.  ``opt`` is the dataset's opt token (``ds.opt_index``).

=========================  ==========  ===========================================================================
name                       shape       value
=========================  ==========  ===========================================================================
loss, log_loss             (B,)        L(W_t[, u_t]) and its log (computed on first read: GD/NGD do not pay for it)
log_excess_loss            (B,)        log(L - L*)   (fixed head: L* = L*(u); joint: L* = 0)
log_excess_loss_W          (B,)        joint: log(L - L*(u_t)), the gap left in W alone
log_grad_norm              (B,)        log ||grad L|| over the whole tree
log_grad_norm_W, _u        (B,)        log ||grad_W L||, log ||grad_u L|| (joint)
margin                     (B, n)      m_i = y_i f(X_i)   (the per-sample exp loss is e^{-m_i})
W_norm, u_norm             (B,)        ||W_t||_F, ||u_t||
log_s_opt, s_opt           (B, n)      log s_{i,opt}(W_t), s_{i,opt}
s_opt_min, s_opt_mean      (B,)        min / mean over samples of s_{i,opt}
log_one_minus_s_opt        (B, n)      log(1 - s_{i,opt}) as a logsumexp of the non-opt log-scores (no cancellation)
log_one_minus_s_opt_max    (B,)        its max over samples (the worst sample)
logit_gap                  (B, n)      min_{t != opt} (a_{i,opt} - a_{it}) = min_t (x_opt - x_t)^T W x_1: the W-SVM
                                       constraint values (differences of log-scores: the normalizer cancels)
score_gap                  (B, n)      gamma_{i,opt} - max_{t != opt} gamma_{it} under the head
u_margin                   (B,)        min_i y_i u^T x_{i,opt} / ||u||   (NaN at u = 0)
corr_mm                    (B,)        <Wbar_t, Wbar_mm>            (needs W_mm)
one_minus_corr             (B,)        ||Wbar_t - Wbar_mm||^2 / 2 = 1 - corr_mm without cancellation (to ~1e-30)
grad_corr_mm               (B,)        <-grad L/||grad L||, Wbar_mm>;  grad_corr_mm_<k> for each extra reference k
grad_corr_self             (B,)        <-grad L/||grad L||, Wbar_t>
u_corr_mm                  (B,)        <ubar_t, ubar_mm>            (needs u_mm)
r_margin                   (B, n)      y_i <ubar_mm, X_i^T s_i(W_t)>   (the attention-mixed token's u-margin)
W, u                       params      the iterates themselves
=========================  ==========  ===========================================================================

References ``W_mm`` (d, d) / (B, d, d) and ``u_mm`` (d,) / (B, d) are normalized run by run, never over the batch.
A claim that needs a quantity of its own (a bound it derives) passes it as ``extra={name: fn(at)}``.
"""
from __future__ import annotations

import math
from functools import cached_property
from typing import Callable, Sequence

import torch
import torch.nn.functional as F

from . import model
from .model import Dataset


def opt_mask(ds: Dataset) -> torch.Tensor:
    """(.., n, T) boolean mask of the opt tokens."""
    return F.one_hot(ds.opt_index, ds.T).bool()


def unit_rows(v: torch.Tensor) -> torch.Tensor:
    """``v / ||v||`` along the last dimension (each run's vector on its own)."""
    return v / torch.linalg.vector_norm(v, dim=-1, keepdim=True)


class At:
    """One recorded step: parameters, the objective's ``info``, and what several metrics share (computed once)."""

    def __init__(self, ds: Dataset, params, info, is_opt, loss, W_ref: dict, u_ref):
        self.ds, self.params, self.info, self.is_opt, self.loss = ds, params, info, is_opt, loss
        self.W_ref, self.u_ref = W_ref, u_ref  # {suffix: unit (.., d*d)}, unit (.., d) or None

    W = property(lambda self: self.params[0])
    u = property(lambda self: self.params[1])

    @cached_property
    def ev(self) -> model.Evaluation:
        ev = self.info.get("eval") if isinstance(self.info, dict) else None
        if ev is None:  # an autograd objective (a negative control) gives no evaluation: compute the scores only
            ev = model.evaluate(self.W, None, self.ds, self.loss, values=False)
        return ev

    @cached_property
    def Wf(self) -> torch.Tensor:
        return self.W.flatten(-2)

    @cached_property
    def W_norm(self) -> torch.Tensor:
        return torch.linalg.vector_norm(self.Wf, dim=-1)

    @cached_property
    def Wbar(self) -> torch.Tensor:
        return self.Wf / self.W_norm.unsqueeze(-1)

    @cached_property
    def u_norm(self) -> torch.Tensor:
        return torch.linalg.vector_norm(self.u, dim=-1)

    @cached_property
    def neg_dir(self) -> torch.Tensor:
        """``-grad_W L / ||grad_W L||``, flattened (B, d*d)."""
        return -self.info["direction"][0].flatten(-2)

    @cached_property
    def log_s_opt(self) -> torch.Tensor:
        return (self.ev.log_s * self.is_opt).sum(-1)

    @cached_property
    def log_one_minus_s_opt(self) -> torch.Tensor:
        return torch.logsumexp(self.ev.log_s.masked_fill(self.is_opt, -math.inf), -1)

    @cached_property
    def s_opt(self) -> torch.Tensor:
        return self.log_s_opt.exp()

    @cached_property
    def x_opt(self) -> torch.Tensor:
        return torch.take_along_dim(self.ds.X, self.ds.opt_index[..., None, None], dim=-2).squeeze(-2)


def _logit_gap(a: At) -> torch.Tensor:
    return (a.log_s_opt.unsqueeze(-1) - a.ev.log_s).masked_fill(a.is_opt, math.inf).amin(-1)


def _score_gap(a: At) -> torch.Tensor:
    g = a.ev.gamma
    return (g * a.is_opt).sum(-1) - g.masked_fill(a.is_opt, -math.inf).amax(-1)


def _r_margin(a: At) -> torch.Tensor:
    r = (a.ev.log_s.exp().unsqueeze(-1) * a.ds.X).sum(-2)                     # r_i = X_i^T s_i, (B, n, d)
    return a.ds.y * (r @ a.u_ref.unsqueeze(-1)).squeeze(-1)


METRICS: dict[str, Callable[[At], torch.Tensor]] = {
    "loss": lambda a: a.info["loss"],
    "log_loss": lambda a: a.info["log_loss"],
    "log_excess_loss": lambda a: a.info["log_excess_loss"],
    "log_excess_loss_W": lambda a: a.info["log_excess_loss_W"],
    "log_grad_norm": lambda a: a.info["log_grad_norm"],
    "log_grad_norm_W": lambda a: a.info["log_grad_norms"][0],
    "log_grad_norm_u": lambda a: a.info["log_grad_norms"][1],
    "margin": lambda a: a.ev.margin,
    "W_norm": lambda a: a.W_norm,
    "u_norm": lambda a: a.u_norm,
    "log_s_opt": lambda a: a.log_s_opt,
    "s_opt": lambda a: a.s_opt,
    "s_opt_min": lambda a: a.s_opt.amin(-1),
    "s_opt_mean": lambda a: a.s_opt.mean(-1),
    "log_one_minus_s_opt": lambda a: a.log_one_minus_s_opt,
    "log_one_minus_s_opt_max": lambda a: a.log_one_minus_s_opt.amax(-1),
    "logit_gap": _logit_gap,
    "score_gap": _score_gap,
    "u_margin": lambda a: (a.ds.y * (a.x_opt @ a.u.unsqueeze(-1)).squeeze(-1)).amin(-1) / a.u_norm,
    "corr_mm": lambda a: (a.Wbar * a.W_ref[""]).sum(-1),
    "one_minus_corr": lambda a: 0.5 * (a.Wbar - a.W_ref[""]).pow(2).sum(-1),
    "grad_corr_mm": lambda a: (a.neg_dir * a.W_ref[""]).sum(-1),
    "grad_corr_self": lambda a: (a.neg_dir * a.Wbar).sum(-1),
    "u_corr_mm": lambda a: (a.u * a.u_ref).sum(-1) / a.u_norm,
    "r_margin": _r_margin,
    "W": lambda a: a.W,
    "u": lambda a: a.u,
}
NEEDS_W_MM = {"corr_mm", "one_minus_corr", "grad_corr_mm"}
NEEDS_U_MM = {"u_corr_mm", "r_margin"}

#: the default sets of the run helpers (``algorithms.train``, ``run_every_step``, joint runs)
FIXED_HEAD = ("loss", "log_loss", "log_excess_loss", "log_grad_norm", "W_norm", "s_opt", "s_opt_min", "s_opt_mean",
              "log_one_minus_s_opt", "log_one_minus_s_opt_max", "logit_gap")
ALIGNMENT = ("corr_mm", "one_minus_corr", "grad_corr_mm", "grad_corr_self")
JOINT = ("u_norm", "log_grad_norm_W", "log_grad_norm_u", "log_excess_loss_W", "u_margin", "score_gap")


def recorder(ds: Dataset, metrics: Sequence[str], W_mm: torch.Tensor | None = None, u_mm: torch.Tensor | None = None,
             *, extra_refs: dict[str, torch.Tensor] | None = None,
             extra: dict[str, Callable[[At], torch.Tensor]] | None = None, loss="exp"):
    """``record(params, info)`` for ``optim.run``: ``{name: METRICS[name](step)}`` for each requested name.

    ``extra_refs`` {k: W_ref}: with ``grad_corr_mm`` requested, also ``grad_corr_mm_<k>`` against each (e.g. a
    deliberately wrong W_mm for a negative control, in the same run).  ``extra`` {name: fn(At)}: a claim's own
    quantities.  Unknown names, or alignment metrics without their reference, are refused here, not mid-run.
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {sorted(METRICS)}")
    if W_mm is None and NEEDS_W_MM & set(metrics):
        raise ValueError(f"metrics {sorted(NEEDS_W_MM & set(metrics))} need W_mm")
    if u_mm is None and NEEDS_U_MM & set(metrics):
        raise ValueError(f"metrics {sorted(NEEDS_U_MM & set(metrics))} need u_mm")
    W_ref = {} if W_mm is None else {"": unit_rows(W_mm.flatten(-2))}
    W_ref.update({"_" + k: unit_rows(v.flatten(-2)) for k, v in (extra_refs or {}).items()})
    u_ref = None if u_mm is None else unit_rows(u_mm)
    is_opt = opt_mask(ds)
    fns = {m: METRICS[m] for m in metrics}
    if "grad_corr_mm" in metrics:
        for k in extra_refs or {}:
            fns[f"grad_corr_mm_{k}"] = lambda a, k=k: (a.neg_dir * a.W_ref["_" + k]).sum(-1)
    fns.update(extra or {})

    def record(params, info):
        at = At(ds, params, info, is_opt, loss, W_ref, u_ref)
        return {name: fn(at) for name, fn in fns.items()}

    return record
