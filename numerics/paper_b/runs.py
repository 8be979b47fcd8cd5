r"""Paper B fixed-head runs recorded at every step, the data they run on, and the per-dataset geometry.

The fixed-head lemmas (B.L3, B.L4, B.L5, B.L7, C.1) are statements about *every* iterate, so their runs record at
every step (or at chosen steps) through ``records.recorder``:

    log_s_opt, logit_gap (B, n)   W_norm, log_grad_norm (B,)   [+ log_excess_loss, log_loss with ``values``]
    [+ corr_mm, one_minus_corr, grad_corr_mm, grad_corr_self (B,) with ``W_mm``]

A claim's own per-step quantity (a bound it derives) comes in as ``extra={name: fn(at)}`` from ``theorems/``.

Also here: Gaussian inits, Example-1-like data with exactly orthonormal noise (probes), the constants of a dataset
(``geometry``) and the step lengths of a recorded run.  No claim's bound lives here.
"""
from __future__ import annotations

import math

import torch

from numerics import DTYPE, optim

from . import algorithms, data, model, records
from .model import Dataset

FIXED_HEAD_STEP = ("log_s_opt", "logit_gap", "W_norm", "log_grad_norm")
VALUES = ("log_excess_loss", "log_loss")


def algorithm(kind: str, eta: float):
    """GD (step eta), NGD (step eta) or Polyak (cap eta) by name."""
    return {"gd": algorithms.gd, "ngd": algorithms.ngd, "polyak": algorithms.polyak}[kind](eta)


def step_recorder(ds: Dataset, W_mm: torch.Tensor | None = None, values: bool = False, loss="exp",
                  extra_refs: dict | None = None, extra: dict | None = None):
    """``records.recorder`` with the per-step metrics of the module docstring (fixed head).

    ``extra_refs`` {name: W_ref}: also record ``grad_corr_mm_<name>`` against other reference matrices (e.g. a
    deliberately wrong W_mm for a negative control) in the same run; ``extra`` {name: fn(At)}: a claim's own metric.
    """
    names = list(FIXED_HEAD_STEP) + (list(VALUES) if values else [])
    names += list(records.ALIGNMENT) if W_mm is not None else []
    return records.recorder(ds, names, W_mm, extra_refs=extra_refs, extra=extra, loss=loss)


def run_recorded(ds: Dataset, algorithm, W0: torch.Tensor, n_steps: int, W_mm=None, every: int = 1,
                 values: bool = False, objective=None, extra_refs=None, extra=None,
                 record_at=None) -> optim.Trajectory:
    """Run ``algorithm`` from W0 (B, d, d) on one shared dataset, recording every ``every`` steps (or at
    ``record_at``).  ``objective`` defaults to the log-domain ``algorithms.objective``; pass
    ``algorithms.objective_autograd(ds)`` for the linear-domain negative control."""
    obj = algorithms.objective(ds) if objective is None else objective
    rec = step_recorder(ds, W_mm, values=values, extra_refs=extra_refs, extra=extra)
    at = range(0, n_steps + 1, every) if record_at is None else record_at
    return optim.run((W0,), obj, algorithm, n_steps, record=rec, record_at=at)


def log_spaced_and_half(n_steps: int, n_points: int) -> list[int]:
    """Log-spaced record steps plus ``n_steps // 2`` (decisions read the start, the middle and the end)."""
    return sorted(set(optim.log_spaced_steps(n_steps, n_points)) | {n_steps // 2})


def half_index(tr: optim.Trajectory) -> int:
    """Index of the last record at or before half the horizon."""
    return int((tr.steps <= tr.steps[-1] // 2).sum()) - 1


def gaussian_init(B: int, d: int, scale: float | torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """W_0 with iid N(0, scale^2) entries, (B, d, d); ``scale`` may be per run (B,)."""
    s = torch.as_tensor(scale, dtype=DTYPE)
    s = s.reshape(-1, 1, 1) if s.dim() == 1 else s
    return s * torch.randn(B, d, d, generator=gen, dtype=DTYPE)


def init_logit_bound(W0: torch.Tensor, ds: Dataset) -> torch.Tensor:
    """eps = max_{i,t} |a_it(W_0)| per run, (B,)."""
    return model.logits(W0, ds).abs().flatten(-2).amax(-1)


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


# ---------------------------------------------------------------------------
# Data with exactly controlled near-orthogonality (probes)
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
    is_opt = torch.nn.functional.one_hot(opt, T).bool()
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


def geometry(ds: Dataset) -> dict:
    r"""Per-dataset constants: nu, R, M_o = min ||x_opt||^2, q = min ||x_i1||, Delta_i = gamma_io - gammabar_i,
    and the extremes of e^{-gamma_io} Delta_i and e^{-gammabar_i} Delta_i (exp-loss coefficient bounds)."""
    a = data.assumptions(ds)
    is_opt = records.opt_mask(ds)
    g = ds.gamma
    g_o = (g * is_opt).sum(-1)
    g_bar = (g * ~is_opt).sum(-1) / (ds.T - 1)
    delta = g_o - g_bar
    norms2 = ds.X.pow(2).sum(-1)
    return dict(nu=float(a["nu"]), R=float(a["R"]), spread=float(a["spread"]),
                M_o=float((norms2 * is_opt).sum(-1).min()), q=float(ds.Xq.norm(dim=-1).min()),
                lo=float((torch.exp(-g_o) * delta).min()), hi=float((torch.exp(-g_bar) * delta).max()))


# ---------------------------------------------------------------------------
# Example 1's token geometry at any d, from its Gram matrix (B.L6: d up to ~1e8)
# ---------------------------------------------------------------------------


def gram_geometry(G: torch.Tensor, opt: torch.Tensor, T: int) -> dict:
    r"""nu, R, q, M_o of stacked data sets given only their token Gram matrices.

    ``G`` (C, nT, nT) holds <x_it, x_js> with token (i, t) at row i T + t, ``opt`` (C, n) the opt positions; token 0
    of each sample is its query.  Same definitions as ``data.assumptions`` / ``geometry``: nu = max |<x, x'>| over
    distinct pairs with a non-opt member, over min_i ||x_io||^2; R = max ||x||, q = min_i ||x_i1||."""
    C, p, _ = G.shape
    n = p // T
    is_opt = torch.nn.functional.one_hot(opt, T).bool().reshape(C, p)
    pair = ~(is_opt[:, :, None] & is_opt[:, None, :]) & ~torch.eye(p, dtype=torch.bool)
    diag = G.diagonal(dim1=-2, dim2=-1)
    M_o = diag.masked_fill(~is_opt, math.inf).amin(-1)
    return dict(nu=(G.abs() * pair).flatten(1).amax(-1) / M_o, R=diag.amax(-1).sqrt(), M_o=M_o,
                q=diag.reshape(C, n, T)[..., 0].amin(-1).sqrt())


def wishart_bartlett(count: int, p: int, dof: float, rng) -> torch.Tensor:
    r"""``count`` draws of Wishart_p(dof, I) = Z Z^T (Z: p x dof iid N(0, 1)) by Bartlett's decomposition
    L L^T, L lower triangular with L_ii^2 ~ chi^2_{dof - i} (i = 0..p-1) and N(0, 1) below the diagonal; the cost
    does not depend on ``dof`` (needs dof >= p).  ``rng``: a ``numpy.random.Generator``."""
    import numpy as np

    if dof < p:
        raise ValueError(f"Bartlett's decomposition needs dof >= p ({dof} < {p})")
    L = np.tril(rng.standard_normal((count, p, p)), -1)
    idx = np.arange(p)
    L[:, idx, idx] = np.sqrt(rng.chisquare(dof - idx, size=(count, p)))
    L = torch.as_tensor(L, dtype=DTYPE)
    return L @ L.mT


def example1_geometry(n: int, T: int, d: int, count: int, seed: int, gamma_opt: float = 1.0,
                      gamma_other: float = 0.0, common: float = 0.0) -> dict:
    r"""``gram_geometry`` of ``count`` independent ``data.example1(n, T, d)`` data sets (spread 0, sigma = 1/sqrt d),
    drawn through their Gram matrices, so d can be 10^8 at the cost of d = nT.

    Tokens x_it = y_i g_it e_1 + z_it, z_it ~ N(0, sigma^2 I) on e_1's complement (d - 1 coordinates).  Writing
    z = w v + z_perp for a fixed unit v in that complement, the noise Gram is sigma^2 (A + w w^T) with
    A ~ Wishart_{nT}(d - 2, I) and w ~ N(0, I_{nT}) independent: the same law as sigma^2 Wishart_{nT}(d - 1, I).
    ``common``: every token gets ``common * v`` added (B.L6's control, as in its direct version), which replaces
    w by w + common / sigma.  Labels and opt positions are uniform as in ``data.example1``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    p = n * T
    sigma2 = 1.0 / d
    opt = torch.as_tensor(rng.integers(0, T, size=(count, n)))
    y = torch.as_tensor(rng.choice([-1.0, 1.0], size=(count, n)), dtype=DTYPE)
    is_opt = torch.nn.functional.one_hot(opt, T).bool()
    e1 = (y[..., None] * torch.where(is_opt, gamma_opt, gamma_other)).reshape(count, p)   # <x_it, e_1>
    w = torch.as_tensor(rng.standard_normal((count, p)), dtype=DTYPE) + common / math.sqrt(sigma2)
    G = sigma2 * (wishart_bartlett(count, p, d - 2, rng) + w[:, :, None] * w[:, None, :])
    G = G + e1[:, :, None] * e1[:, None, :]
    out = gram_geometry(G, opt, T)
    out["spread"] = torch.zeros(count, dtype=DTYPE)   # every non-opt score is gamma_other: Ass 2 by construction
    return out
