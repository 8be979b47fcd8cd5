r"""Paper B's data: Example 1, data model DM, the two-token example, the C.1 bad init, binary digits.

The seed lost every constant; each generator states the ones we chose.  All
randomness comes from a ``torch.Generator`` (pass a seed or a generator).
Tokens are rows of X_i (T, d); token 0 is the query x_i1.

Measured assumption parameters (``assumptions``):

    nu     = max |<x_it, x_js>| / min_i ||x_{i,opt_i}||^2   over distinct token pairs with at least one
             non-opt token (Ass 1, near-orthogonality; spec's definition)
    spread = max_i (max_{t != opt} gamma_it - min_{t != opt} gamma_it)   (Ass 2 holds iff spread = 0)
    gap    = min_i (gamma_{i,opt} - max_{t != opt} gamma_it)              (> 0: opt tokens are unique)
    R      = max ||x_it||
    degradation_i = e^{-gammabar_i} - e^{-gamma_{i,opt}} (exp loss; gammabar_i = mean non-opt score),
    kappa  = max_i degradation_i / min_i degradation_i
"""
from __future__ import annotations

import math

import torch

from numerics import DTYPE

from .model import Dataset, token_scores


def _gen(seed) -> torch.Generator:
    return seed if isinstance(seed, torch.Generator) else torch.Generator().manual_seed(int(seed))


def _randn(g, *shape):
    return torch.randn(*shape, generator=g, dtype=DTYPE)


def _labels(g, n):
    return torch.randint(0, 2, (n,), generator=g).to(DTYPE) * 2 - 1


def _positions(g, n, T, opt_position):
    if opt_position is None:
        return torch.randint(0, T, (n,), generator=g)
    return torch.full((n,), int(opt_position), dtype=torch.long)


# ---------------------------------------------------------------------------
# Example 1 (fixed head)
# ---------------------------------------------------------------------------


def example1(n: int = 8, T: int = 4, d: int = 64, gamma_opt: float = 1.0, gamma_other: float = 0.0,
             spread: float = 0.0, sigma: float | None = None, opt_position: int | None = None,
             seed=0) -> Dataset:
    r"""Example 1: nearly orthogonal high-dimensional Gaussian tokens, one opt token per sequence.

    Head u = e_1 (unit).  Labels y_i uniform on {+1, -1}.  opt_i uniform on [T] (or ``opt_position``).
    Tokens  x_it = y_i g_it e_1 + P z_it,   z_it ~ N(0, sigma^2 I_d) iid,  P = I - e_1 e_1^T,
    so gamma_it = y_i u^T x_it = g_it exactly, with
        g_{i,opt} = gamma_opt,   g_it = gamma_other + spread * xi_it  (t != opt),  xi_it ~ U(-1/2, 1/2).
    spread = 0 gives Ass 2 exactly; spread > 0 breaks it (per-sample spread <= ``spread``).
    sigma defaults to 1/sqrt(d) (noise norm ~ 1); for d >> n T the noise parts are nearly
    orthogonal (|<z, z'>| ~ sigma^2 sqrt(d)), which is Ass 1 (B.L6).
    Defaults: n = 8, T = 4, d = 64, gamma_opt = 1, gamma_other = 0.  Requires
    gamma_other + spread/2 < gamma_opt (unique opt tokens).
    """
    if not gamma_other + spread / 2 < gamma_opt:
        raise ValueError("need gamma_other + spread/2 < gamma_opt for the opt token to be unique")
    g = _gen(seed)
    sigma = 1 / math.sqrt(d) if sigma is None else sigma
    y = _labels(g, n)
    opt = _positions(g, n, T, opt_position)
    is_opt = torch.nn.functional.one_hot(opt, T).bool()
    xi = torch.rand(n, T, generator=g, dtype=DTYPE) - 0.5
    scores = torch.where(is_opt, torch.as_tensor(gamma_opt, dtype=DTYPE), gamma_other + spread * xi)
    Z = sigma * _randn(g, n, T, d)
    Z[..., 0] = 0.0
    X = Z.clone()
    X[..., 0] = y[:, None] * scores
    u = torch.zeros(d, dtype=DTYPE)
    u[0] = 1.0
    meta = dict(name="example1", n=n, T=T, d=d, gamma_opt=gamma_opt, gamma_other=gamma_other, spread=spread,
                sigma=sigma, opt_position=opt_position)
    return Dataset(X, y, u=u, meta=meta)


# ---------------------------------------------------------------------------
# Data model DM (joint training)
# ---------------------------------------------------------------------------


def dm(n: int = 8, T: int = 4, d: int = 64, sigma: float | None = None, opt_ratio: float = 2.0,
       opt_position: int | None = None, seed=0) -> Dataset:
    r"""Data model DM for joint (u, W) training: one large opt token, labels from a fixed vector.

    Per sequence: x_it ~ N(0, sigma^2 I_d) for t != opt_i, x_{i,opt} ~ N(0, (opt_ratio sigma)^2 I_d),
    all independent; y_i = sign(v^T x_{i,opt}) with v = e_1.  opt_i uniform on [T] (or ``opt_position``)
    and recorded in ``ds.opt`` (there is no fixed head: opt is the designated large token).
    sigma (token-norm scale) defaults to 1/sqrt(d): ||x_t|| ~ 1 and ||x_opt|| ~ opt_ratio.
    opt_ratio (> 1: "opt token has larger norm") defaults to 2.
    Defaults: n = 8, T = 4, d = 64.  d >> n keeps the tokens nearly orthogonal (B.L9).
    """
    g = _gen(seed)
    sigma = 1 / math.sqrt(d) if sigma is None else sigma
    opt = _positions(g, n, T, opt_position)
    is_opt = torch.nn.functional.one_hot(opt, T).bool()
    scale = sigma * torch.where(is_opt, float(opt_ratio), 1.0).to(DTYPE)
    X = scale[..., None] * _randn(g, n, T, d)
    x_opt = X[torch.arange(n), opt]
    y = torch.where(x_opt[:, 0] >= 0, 1.0, -1.0).to(DTYPE)
    meta = dict(name="dm", n=n, T=T, d=d, sigma=sigma, opt_ratio=opt_ratio, v="e_1", opt_position=opt_position)
    return Dataset(X, y, opt=opt, meta=meta)


# ---------------------------------------------------------------------------
# Section 3.3 two-token example, and the C.1 bad-direction init
# ---------------------------------------------------------------------------


def two_token() -> Dataset:
    r"""n = 1, T = 2, d = 2: x_1 = e_1 (query and opt), x_2 = e_2, u = e_1, y = 1 (spec B.S33).

    gamma = (1, 0); the single W-SVM constraint is W_11 - W_21 >= 1, so W_mm = [[1/2, 0], [-1/2, 0]]
    (``meta['W_mm']``) and every gradient is parallel to W_mm.
    """
    X = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=DTYPE)
    W_mm = torch.tensor([[0.5, 0.0], [-0.5, 0.0]], dtype=DTYPE)
    return Dataset(X, torch.ones(1, dtype=DTYPE), u=torch.tensor([1.0, 0.0], dtype=DTYPE),
                   meta=dict(name="two_token", W_mm=W_mm))


def bad_init(scale: float = 0.1) -> tuple[Dataset, torch.Tensor]:
    r"""Appendix C.1: data and an init W_0 = scale * Wbar_0 along a "bad" stationary direction.

    Data (ours; the seed's vectors are lost): d = 2, n = 2, T = 2, head u = e_1,
        sample 0: y = +1, x_01 = (1, 0.5) (query, opt: gamma = 1),    x_02 = (-0.2, 1)   (gamma = -0.2)
        sample 1: y = -1, x_11 = (0.3, 1) (query, gamma = -0.3),       x_12 = (-1, 0.4)   (opt: gamma = 1)
    With A_i = (x_{i,opt} - x_{i,other}) x_i1^T, Wbar_0 is the unit min-norm W with <A_0, W> = -1 and
    <A_1, W> = +1: it violates sample 0's W-SVM constraint (so along R Wbar_0, R -> inf, s_{0,opt} -> 0
    and the gradient vanishes: an asymptotically stationary direction) and satisfies sample 1's.
    Returns (dataset, W_0 (2, 2)); ``meta`` holds Wbar_0 and the violated constraint (0, 1).
    """
    X = torch.tensor([[[1.0, 0.5], [-0.2, 1.0]], [[0.3, 1.0], [-1.0, 0.4]]], dtype=DTYPE)
    y = torch.tensor([1.0, -1.0], dtype=DTYPE)
    u = torch.tensor([1.0, 0.0], dtype=DTYPE)
    A = torch.stack([torch.outer(X[0, 0] - X[0, 1], X[0, 0]).flatten(),      # sample 0: opt 0 vs token 1
                     torch.outer(X[1, 1] - X[1, 0], X[1, 0]).flatten()])     # sample 1: opt 1 vs token 0
    W = A.T @ torch.linalg.solve(A @ A.T, torch.tensor([-1.0, 1.0], dtype=DTYPE))
    W_bar = (W / W.norm()).reshape(2, 2)
    ds = Dataset(X, y, u=u, meta=dict(name="bad_init", scale=scale, W0_bar=W_bar, violated=[(0, 1)]))
    return ds, scale * W_bar


# ---------------------------------------------------------------------------
# Binary digits (Fig. 9)
# ---------------------------------------------------------------------------


def digits(n: int = 16, T: int = 4, noise: float = 0.1, signal_position: int | None = None, seed=0) -> Dataset:
    r"""Binary 0-vs-1 digit patches (Appendix C.2), from sklearn's bundled 8x8 digits (no download).

    Token dimension d = 64 (one 8x8 patch).  Each sequence: one signal token = a digit image
    (pixels / 16, minus the mean image of all 0/1 digits), the other T-1 tokens iid N(0, noise^2 I_64).
    y = +1 for a "1", -1 for a "0".  Head u: logistic regression (sklearn, C = 1, no intercept,
    lbfgs) fit on all 360 centred 0/1 images, rescaled so that its mean margin y u^T x over them
    is 1.  Samples: n images drawn without replacement; the signal position uniform on [T] (or
    ``signal_position``); a draw whose signal token is not the unique top-scoring token is redrawn
    (none at the defaults).  ``meta['u_train_accuracy']`` reports the head's accuracy.
    Defaults: n = 16, T = 4, noise = 0.1.
    """
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    g = _gen(seed)
    data = load_digits()
    keep = data.target <= 1
    imgs = torch.as_tensor(data.data[keep] / 16.0, dtype=DTYPE)
    imgs = imgs - imgs.mean(0)
    labels = torch.as_tensor(np.where(data.target[keep] == 1, 1.0, -1.0), dtype=DTYPE)
    clf = LogisticRegression(C=1.0, fit_intercept=False, max_iter=5000).fit(imgs.numpy(), labels.numpy())
    u = torch.as_tensor(clf.coef_[0], dtype=DTYPE)
    u = u / (labels * (imgs @ u)).mean()
    acc = float(((imgs @ u).sign() == labels).to(DTYPE).mean())

    X = torch.empty(n, T, 64, dtype=DTYPE)
    y = torch.empty(n, dtype=DTYPE)
    order = torch.randperm(imgs.shape[0], generator=g)
    k = 0
    for i in range(n):
        while True:
            if k >= len(order):
                raise ValueError("digits: ran out of images whose signal token is the unique opt")
            img, lab = imgs[order[k]], labels[order[k]]
            k += 1
            pos = int(torch.randint(0, T, (1,), generator=g)) if signal_position is None else signal_position
            toks = noise * _randn(g, T, 64)
            toks[pos] = img
            scores = lab * (toks @ u)
            others = scores.masked_fill(torch.arange(T) == pos, -math.inf)
            if bool((scores[pos] > others).all()):     # the signal token is the unique opt
                break
        X[i], y[i] = toks, lab
    meta = dict(name="digits", n=n, T=T, d=64, noise=noise, signal_position=signal_position,
                u_train_accuracy=acc, head="logistic regression, C=1, no intercept, mean margin 1")
    return Dataset(X, y, u=u, meta=meta)


# ---------------------------------------------------------------------------
# Batching and measured assumptions
# ---------------------------------------------------------------------------


def stack(datasets: list[Dataset]) -> Dataset:
    """B same-shape datasets -> one per-run dataset (X (B, n, T, d), y (B, n), u (B, d), opt (B, n))."""
    X = torch.stack([ds.X for ds in datasets])
    y = torch.stack([ds.y for ds in datasets])
    u = torch.stack([ds.u for ds in datasets]) if all(ds.u is not None for ds in datasets) else None
    opt = torch.stack([ds.opt_index for ds in datasets]) if u is None else None
    return Dataset(X, y, u=u, opt=opt, meta=dict(name="stack", parts=[ds.meta for ds in datasets]))


def assumptions(ds: Dataset, u: torch.Tensor | None = None) -> dict:
    """nu, R and, when a head is known (``u`` or ds.u), spread, gap, degradation, kappa (module docstring).

    Works on one dataset or a per-run stack; opt tokens are ``ds.opt_index``.
    """
    X = ds.X
    n, T, d = X.shape[-3:]
    is_opt = torch.nn.functional.one_hot(ds.opt_index, T).bool()
    toks = X.reshape(*X.shape[:-3], n * T, d)
    opt_flat = is_opt.reshape(*is_opt.shape[:-2], n * T)
    pair = ~(opt_flat[..., :, None] & opt_flat[..., None, :]) & ~torch.eye(n * T, dtype=torch.bool)
    opt_norm2 = (X.pow(2).sum(-1) * is_opt).sum(-1).amin(-1)
    out = dict(nu=((toks @ toks.mT).abs() * pair).flatten(-2).amax(-1) / opt_norm2,
               R=X.norm(dim=-1).flatten(-2).amax(-1))
    if u is None and ds.u is None:
        return out
    gamma = ds.gamma if u is None else token_scores(u, ds)
    g_opt = (gamma * is_opt).sum(-1)
    rest_max = gamma.masked_fill(is_opt, -math.inf).amax(-1)
    rest_min = gamma.masked_fill(is_opt, math.inf).amin(-1)
    g_bar = (gamma * ~is_opt).sum(-1) / (T - 1)
    degradation = torch.exp(-g_bar) - torch.exp(-g_opt)
    out.update(spread=(rest_max - rest_min).amax(-1), gap=(g_opt - rest_max).amin(-1),
               degradation=degradation, kappa=degradation.amax(-1) / degradation.amin(-1))
    return out
