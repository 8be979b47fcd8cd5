r"""B.L4's lower bound on the gradient's correlation with W_mm, as a formula and as a per-step record.  Defines no
claim.

    LB(W) = (1/n) sum_i e^{-m_i} s_io (1 - s_io)(gamma_io - gammabar_i) <= <-grad L(W), W_mm>

(derived in ``l4_gradient_correlation``).  The trajectory bank (``bank``) records
``log(<-grad L, W_ref> / LB(W))`` at every step with :func:`l4_ratio_metrics`; B.L4 also evaluates it at sampled W.
"""
from __future__ import annotations

import math

import torch

from numerics.paper_b import model, records


def log_l4_bound(ev: model.Evaluation, ds) -> torch.Tensor:
    r"""log LB(W) (B,), LB = (1/n) sum_i e^{-m_i} s_io (1 - s_io) (gamma_io - gammabar_i), exp loss, fixed head.

    gammabar_i is the mean non-opt score (the common one under Ass 2).  log(1 - s_io) is a
    logsumexp of the non-opt log-scores, so LB is exact where 1 - s_io underflows.
    """
    is_opt = records.opt_mask(ds)
    log_s = ev.log_s                                                          # (B, n, T)
    log_so = (log_s * is_opt).sum(-1)
    log_1mso = torch.logsumexp(log_s.masked_fill(is_opt, -math.inf), -1)
    g = ds.gamma
    g_o = (g * is_opt).sum(-1)
    g_bar = (g * ~is_opt).sum(-1) / (ds.T - 1)
    terms = -ev.margin + log_so + log_1mso + torch.log(g_o - g_bar)
    return torch.logsumexp(terms, -1) - math.log(ds.n)


def log_l4_ratio(neg_dir: torch.Tensor, log_grad_norm: torch.Tensor, W_ref: torch.Tensor,
                 log_lb: torch.Tensor) -> torch.Tensor:
    """log(<-grad L, W_ref> / LB(W)) from the unit direction -grad L/||grad L|| (B, d*d) and log ||grad L||."""
    return torch.log(neg_dir @ W_ref.flatten()) + log_grad_norm - log_lb


def l4_ratio_metrics(refs: dict) -> dict:
    """Recorder metrics ``log_l4_ratio<suffix>`` for each reference ``{suffix: W_ref}`` (LB computed once a step)."""
    def log_lb(a: records.At) -> torch.Tensor:
        if "log_lb" not in a.__dict__:
            a.__dict__["log_lb"] = log_l4_bound(a.ev, a.ds)
        return a.__dict__["log_lb"]

    return {"log_l4_ratio" + k: (lambda a, ref=ref: log_l4_ratio(a.neg_dir, a.info["log_grad_norm"], ref, log_lb(a)))
            for k, ref in refs.items()}
