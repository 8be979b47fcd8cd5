r"""Step-by-step trajectory records for paper B's fixed-head lemmas (B.L3, B.L4, B.L5, B.L7, C.1).

The lemmas are statements about *every* iterate, so the checks record at every step
and need per-step quantities the generic ``algorithms.recorder`` does not keep:

    log_s_opt   (B, n)  log s_{i,opt}(W_t)                                   (B.L3)
    logit_gap   (B, n)  min_{t != opt} (x_opt - x_t)^T W x_1 = min_t (a_opt - a_t)   (W-SVM constraint values)
    W_norm      (B,)    ||W_t||_F
    log_grad_norm (B,)  log ||grad L(W_t)||
    corr_mm, one_minus_corr, grad_corr_mm, grad_corr_self (B,) when W_mm is given   (B.L4, B.L5, B.L7)
    log_l4_ratio (B,)   log( <-grad L, W_mm> / LB(W) ),
                        LB(W) = (1/n) sum_i e^{-m_i} s_io (1 - s_io)(gamma_io - gammabar_i)
                        (the exact lower bound under Ass 2 derived in B.L4; needs the exp loss, a fixed head)
    log_excess_loss (B,) log(L - L*) when ``values``

Everything is read off the log-domain ``model.Evaluation`` of the step (no second forward pass);
the logit gaps are differences of log-scores, exact up to rounding of the logits.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from numerics import DTYPE, optim

from . import algorithms, model, records
from .model import Dataset


def opt_masks(ds: Dataset) -> torch.Tensor:
    """(n, T) boolean mask of the opt tokens."""
    return F.one_hot(ds.opt_index, ds.T).bool()


def log_l4_bound(ev: model.Evaluation, ds: Dataset) -> torch.Tensor:
    r"""log LB(W) (B,), LB = (1/n) sum_i e^{-m_i} s_io (1 - s_io) (gamma_io - gammabar_i), exp loss, fixed head.

    gammabar_i is the mean non-opt score (the common one under Ass 2).  log(1 - s_io) is a
    logsumexp of the non-opt log-scores, so LB is exact where 1 - s_io underflows.
    """
    is_opt = opt_masks(ds)
    log_s = ev.log_s                                                          # (B, n, T)
    log_so = (log_s * is_opt).sum(-1)
    log_1mso = torch.logsumexp(log_s.masked_fill(is_opt, -math.inf), -1)
    g = ds.gamma
    g_o = (g * is_opt).sum(-1)
    g_bar = (g * ~is_opt).sum(-1) / (ds.T - 1)
    terms = -ev.margin + log_so + log_1mso + torch.log(g_o - g_bar)
    return torch.logsumexp(terms, -1) - math.log(ds.n)


def step_recorder(ds: Dataset, W_mm: torch.Tensor | None = None, values: bool = False, l4: bool = False,
                  loss="exp", extra_refs: dict | None = None):
    """``records.recorder`` with the per-step metrics of the module docstring (fixed head).

    ``extra_refs`` {name: W_ref}: also record ``grad_corr_mm_<name>`` (and ``log_l4_ratio_<name>`` with ``l4``)
    against other reference matrices, e.g. a deliberately wrong W_mm for a negative control, in the same run.
    """
    names = ["log_s_opt", "logit_gap", "W_norm", "log_grad_norm"] + (["log_excess_loss", "log_loss"] if values else [])
    names += list(records.ALIGNMENT) if W_mm is not None else []
    extra = {}
    if l4:
        refs = {"": W_mm} if W_mm is not None else {}
        refs.update({"_" + k: v for k, v in (extra_refs or {}).items()})
        for k, ref in refs.items():
            extra["log_l4_ratio" + k] = lambda a, ref=ref: (
                torch.log(a.neg_dir @ ref.flatten()) + a.info["log_grad_norm"] - _log_lb(a))
    return records.recorder(ds, names, W_mm, extra_refs=extra_refs, extra=extra, loss=loss)


def _log_lb(a: records.At) -> torch.Tensor:
    """``log_l4_bound`` of the step, computed once however many references use it."""
    if "log_lb" not in a.__dict__:
        a.__dict__["log_lb"] = log_l4_bound(a.ev, a.ds)
    return a.__dict__["log_lb"]


def run_recorded(ds: Dataset, algorithm, W0: torch.Tensor, n_steps: int, W_mm=None, every: int = 1,
                 values: bool = False, l4: bool = False, objective=None, extra_refs=None) -> optim.Trajectory:
    """Run ``algorithm`` from W0 (B, d, d) on one shared dataset, recording every ``every`` steps.

    ``objective`` defaults to the log-domain ``algorithms.objective``; pass
    ``algorithms.objective_autograd(ds)`` for the linear-domain negative control.
    """
    obj = algorithms.objective(ds) if objective is None else objective
    rec = step_recorder(ds, W_mm, values=values, l4=l4, extra_refs=extra_refs)
    return optim.run((W0,), obj, algorithm, n_steps, record=rec, record_at=range(0, n_steps + 1, every))


def gaussian_init(B: int, d: int, scale: float | torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """W_0 with iid N(0, scale^2) entries, (B, d, d); ``scale`` may be per run (B,)."""
    s = torch.as_tensor(scale, dtype=DTYPE)
    s = s.reshape(-1, 1, 1) if s.dim() == 1 else s
    return s * torch.randn(B, d, d, generator=gen, dtype=DTYPE)


def monotone_violations(log_s_opt: torch.Tensor, gap: torch.Tensor, threshold: float = 1.0,
                        tol: float = 1e-10) -> tuple[torch.Tensor, torch.Tensor]:
    r"""B.L3's step condition on a (K, B, n) record taken at every step.

    Returns (violations, eligible), both (K-1, B, n) boolean: ``eligible`` where sample i violates a
    W-SVM constraint at step k (gap < ``threshold``), ``violations`` where moreover
    log s_opt drops at the next step by more than ``tol`` (relative rounding of the log-scores).
    """
    eligible = gap[:-1] < threshold
    drop = log_s_opt[1:] - log_s_opt[:-1] < -tol * (1 + log_s_opt[:-1].abs())
    return eligible & drop, eligible


# ---------------------------------------------------------------------------
# Data with exactly controlled near-orthogonality (probes) and cached W-SVM solutions
# ---------------------------------------------------------------------------


def orthogonal_tokens(n: int = 4, T: int = 3, rho: float = 0.0, spread: float = 0.0, gamma_opt: float = 1.0,
                      extra_dims: int = 1, seed=0) -> Dataset:
    r"""Example-1-like data whose noise parts are exactly orthonormal, then perturbed by ``rho``.

    Head u = e_1; x_it = y_i g_it e_1 + P z_it with the n T vectors z_it the columns of a random
    orthonormal frame of e_1's complement (d = n T + 1 + extra_dims), mixed as
    Z <- (Z + rho G / sqrt(d)) (G iid N(0, 1)), so nu = 0 at rho = 0 and spread = 0, and nu ~ rho.
    Scores: g_{i,opt} = gamma_opt, g_it = spread * xi_it, xi ~ U(-1/2, 1/2) (Ass 2 iff spread = 0).
    ``opt_i`` uniform on [T]; labels uniform.
    """
    g = torch.Generator().manual_seed(int(seed)) if not isinstance(seed, torch.Generator) else seed
    d = n * T + 1 + extra_dims
    y = torch.randint(0, 2, (n,), generator=g).to(DTYPE) * 2 - 1
    opt = torch.randint(0, T, (n,), generator=g)
    is_opt = F.one_hot(opt, T).bool()
    xi = torch.rand(n, T, generator=g, dtype=DTYPE) - 0.5
    scores = torch.where(is_opt, torch.as_tensor(gamma_opt, dtype=DTYPE), spread * xi)
    Q, _ = torch.linalg.qr(torch.randn(d - 1, n * T, generator=g, dtype=DTYPE))
    Z = Q.T + rho * torch.randn(n * T, d - 1, generator=g, dtype=DTYPE) / math.sqrt(d)
    X = torch.zeros(n, T, d, dtype=DTYPE)
    X[..., 1:] = Z.reshape(n, T, d - 1)
    X[..., 0] = y[:, None] * scores
    u = torch.zeros(d, dtype=DTYPE)
    u[0] = 1.0
    return Dataset(X, y, u=u, meta=dict(name="orthogonal_tokens", n=n, T=T, d=d, rho=rho, spread=spread,
                                        gamma_opt=gamma_opt))


_SVM_CACHE: dict = {}


def with_w_mm(maker, *args, drop=None, **kwargs):
    """(dataset, W-SVM result) for ``maker(*args, **kwargs)`` (a deterministic generator), cached by arguments.

    Several checks and their controls share instances; a W-SVM solve costs ~0.1-0.5 s.
    """
    from . import svm

    key = (maker.__module__, maker.__name__, args, tuple(sorted(kwargs.items())), repr(drop))
    if key not in _SVM_CACHE:
        ds = maker(*args, **kwargs)
        _SVM_CACHE[key] = (ds, svm.w_svm(ds, drop=drop))
    return _SVM_CACHE[key]


# ---------------------------------------------------------------------------
# Constants of the fixed-head lemmas (derivations: theorems/paper_b/l3_opt_score.py, l4, l5)
# ---------------------------------------------------------------------------


def geometry(ds: Dataset) -> dict:
    r"""Per-dataset constants: nu, R, M_o = min ||x_opt||^2, q = min ||x_i1||, Delta_i = gamma_io - gammabar_i,
    and the extremes of e^{-gamma_io} Delta_i and e^{-gammabar_i} Delta_i (exp-loss coefficient bounds)."""
    from . import data

    a = data.assumptions(ds)
    is_opt = opt_masks(ds)
    g = ds.gamma
    g_o = (g * is_opt).sum(-1)
    g_bar = (g * ~is_opt).sum(-1) / (ds.T - 1)
    delta = g_o - g_bar
    norms2 = ds.X.pow(2).sum(-1)
    return dict(nu=float(a["nu"]), R=float(a["R"]), spread=float(a["spread"]),
                M_o=float((norms2 * is_opt).sum(-1).min()), q=float(ds.Xq.norm(dim=-1).min()),
                lo=float((torch.exp(-g_o) * delta).min()), hi=float((torch.exp(-g_bar) * delta).max()))


def init_logit_bound(W0: torch.Tensor, ds: Dataset) -> torch.Tensor:
    """eps = max_{i,t} |a_it(W_0)| per run, (B,)."""
    return model.logits(W0, ds).abs().flatten(-2).amax(-1)


def opt_score_floor(T: int, R: float, eps, step) -> torch.Tensor:
    r"""b = 1 / (1 + (T-1) exp(max(2 eps, 2 R^2 step - 1)))  (B.L3's lower bound on s_opt)."""
    eps, step = torch.as_tensor(eps, dtype=DTYPE), torch.as_tensor(step, dtype=DTYPE)
    return 1.0 / (1.0 + (T - 1) * torch.exp(torch.maximum(2 * eps, 2 * R**2 * step - 1)))


def nu_star(geo: dict, n: int, b) -> torch.Tensor:
    r"""B.L3's sufficient near-orthogonality level: Ass 1 (ours) is nu / (1 - 3 nu) <= nu*,

        nu* = q^2 b (1 - b/e) min_i(e^{-gamma_io} Delta_i) / (e (n-1) R^2 max_j(e^{-gammabar_j} Delta_j)),

    and nu < 1/3 (n = 1: no cross-sample terms, nu* = inf)."""
    b = torch.as_tensor(b, dtype=DTYPE)
    if n == 1:
        return torch.full_like(b, math.inf)
    return geo["q"] ** 2 * b * (1 - b / math.e) * geo["lo"] / (math.e * (n - 1) * geo["R"] ** 2 * geo["hi"])


def ass1_holds(geo: dict, n: int, b) -> torch.Tensor:
    nu = geo["nu"]
    lhs = nu / (1 - 3 * nu) if nu < 1 / 3 else math.inf
    return torch.as_tensor(lhs <= nu_star(geo, n, b))


def step_lengths(traj: optim.Trajectory, kind: str, eta: float) -> torch.Tensor:
    r"""||W_{t+1} - W_t|| per recorded step (K-1, B) from log ||grad||, for a record taken every step:
    GD eta ||g||, NGD eta, Polyak min(eta_max ||g||, (L - L*)/||g||) (needs ``values``)."""
    lg = traj["log_grad_norm"][:-1]
    if kind == "gd":
        return eta * lg.exp()
    if kind == "ngd":
        return torch.full_like(lg, eta)
    if kind == "polyak":
        return torch.exp(torch.minimum(lg + math.log(eta), traj["log_excess_loss"][:-1] - lg))
    raise ValueError(kind)
