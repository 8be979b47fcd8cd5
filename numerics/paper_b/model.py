r"""Paper B's model: one softmax-attention layer with a linear head, evaluated in the log domain.

    f(X) = u^T X^T softmax(X W x_1)              (1)

X in R^{T x d} holds the tokens x_1..x_T as rows; the first token is the query.
For sample i:

    logits        a_it     = x_it^T W x_i1                  a_i = X_i W x_i1
    scores        s_i      = softmax(a_i)
    token scores  gamma_it = y_i u^T x_it                   (Definition 1)
    opt token     opt_i    = argmax_t gamma_it              (assumed unique)
    margin        m_i      = y_i f(X_i) = sum_t s_it gamma_it
    loss          L(W, u)  = (1/n) sum_i l(m_i),  l(z) = exp(-z)  or  log(1 + exp(-z))
    optimum       L*(u)    = (1/n) sum_i l(gamma_{i,opt_i})  (all softmax mass on the opt tokens)

Gradients (J = diag(s) - s s^T is the softmax Jacobian, so J gamma = s * (gamma - m)):

    grad_W L = (1/n) sum_i l'(m_i) sum_t s_it (gamma_it - m_i) x_it x_i1^T
    grad_u L = (1/n) sum_i l'(m_i) y_i sum_t s_it x_it

Why a log domain.  On separable data NGD drives ||W|| -> infinity linearly, the
softmax saturates, and within a few hundred float64 steps s_it underflows to 0
for every non-opt token while m_i rounds to gamma_{i,opt}: every coefficient
s_it (gamma_it - m_i) is then exactly 0, autograd returns a zero gradient, and
normalizing it gives NaN (``grad_W_naive`` reproduces this).  The gradient
*direction* is still perfectly defined, so we compute it from log s (finite
for all finite logits) and never form a number that can underflow before a
common factor has been divided out.  Only one coefficient per sample suffers
cancellation, that of its dominant token k_i (largest s_it), since m_i -> gamma_ik;
and the coefficients of a sample sum to zero exactly,

    sum_t s_it (gamma_it - m_i) = 0,

so c_ik is set to minus the sum of the others, which are formed from logs
log s_it + log(-l'(m_i)) after factoring out their largest value per run.
The result is the pair (log ||grad||, grad / ||grad||).  (``evaluate``.)

Shapes: parameters are batched over runs, W (B, d, d), u (B, d); a dataset is
shared, X (n, T, d), y (n,), or per run, X (B, n, T, d), y (B, n).  Every
function also accepts an unbatched W (d, d).  Everything is float64.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, NamedTuple

import torch
import torch.nn.functional as F

from numerics import DTYPE

# ---------------------------------------------------------------------------
# Data container (precomputes the data-only tensors every step reuses)
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Dataset:
    """Sequences X (.., n, T, d), labels y (.., n) in {+1, -1}, optional fixed head u (.., d).

    ``opt`` (.., n) designates the opt tokens when they are not read off a fixed
    head (data model DM for joint training); otherwise opt_i = argmax_t gamma_it
    under ``u``.  ``meta`` records the generator's constants.

    The engines work on (T, n, B) arrays, token-major and run-minor: the
    reductions over tokens and samples then run along outer axes with the B
    runs contiguous, and the two matmuls per step are (T n, d^2) x (d^2, B)
    GEMMs, which is ~3x faster on CPU than reducing a short innermost T axis.
    Public functions return (B, n, T) views.
    """

    X: torch.Tensor
    y: torch.Tensor
    u: torch.Tensor | None = None
    opt: torch.Tensor | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.X = torch.as_tensor(self.X, dtype=DTYPE)
        self.y = torch.as_tensor(self.y, dtype=DTYPE)
        if self.u is not None:
            self.u = torch.as_tensor(self.u, dtype=DTYPE)
        if self.opt is not None:
            self.opt = torch.as_tensor(self.opt, dtype=torch.long)

    n = property(lambda self: self.X.shape[-3])
    T = property(lambda self: self.X.shape[-2])
    d = property(lambda self: self.X.shape[-1])

    @cached_property
    def Xq(self) -> torch.Tensor:
        """Queries x_i1, (.., n, d)."""
        return self.X[..., 0, :]

    @cached_property
    def X_tn(self) -> torch.Tensor:
        """All tokens as rows, token-major: row t*n + i is x_it; (.., T*n, d)."""
        return self.X.transpose(-3, -2).reshape(*self.X.shape[:-3], self.T * self.n, self.d)

    @cached_property
    def Z_tn(self) -> torch.Tensor:
        """Rows vec(x_it x_i1^T), token-major, (.., T*n, d*d): a_it = <W, x_it x_i1^T>, so the
        logits and grad_W are one matmul each."""
        Z = self.X[..., :, :, :, None] * self.Xq[..., :, None, None, :]            # (.., n, T, d, d)
        return Z.transpose(-4, -3).reshape(*self.X.shape[:-3], self.T * self.n, self.d * self.d)

    @cached_property
    def y_r(self) -> torch.Tensor:
        """Labels as (n, 1), or (n, B) for per-run data."""
        return self.y.T if self.y.dim() == 2 else self.y.unsqueeze(-1)

    @cached_property
    def gamma_r(self) -> torch.Tensor:
        """Token scores under the fixed head, (T, n, 1) or (T, n, B)."""
        if self.u is None:
            raise ValueError("this dataset has no fixed head u")
        return _scores_r(self.u, self)

    @cached_property
    def log_gap_r(self) -> torch.Tensor:
        """log(gamma_{i,opt} - gamma_it) under the fixed head, (T, n, 1 or B); -inf at the opt token."""
        g = self.gamma_r
        return torch.log(g.amax(0, keepdim=True) - g)

    @property
    def gamma(self) -> torch.Tensor:
        """Token scores under the fixed head, (.., n, T)."""
        g = self.gamma_r.permute(2, 1, 0)
        return g if self.X.dim() == 4 else g[0]

    @cached_property
    def opt_index(self) -> torch.Tensor:
        """opt_i (.., n): the designated ones, else argmax_t gamma_it (must be unique)."""
        if self.opt is not None:
            return self.opt
        return opt_tokens(self.gamma)


# ---------------------------------------------------------------------------
# Forward quantities
# ---------------------------------------------------------------------------


def _per_run_dot(M: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """M_k . V_b for shared rows M (k, m) (one GEMM) or per-run rows M (B, k, m); V (B, m) -> (k, B)."""
    return M @ V.T if M.dim() == 2 else (M @ V.unsqueeze(-1)).squeeze(-1).T


def _per_run_combine(M: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """sum_k C[k, b] M_k for M (k, m) (one GEMM) or (B, k, m); C (k, B) -> (B, m), contiguous rows."""
    return C.T @ M if M.dim() == 2 else (C.T.unsqueeze(-2) @ M).squeeze(-2)


def _logits_r(W, ds):
    """a (T, n, B) for W (B, d, d)."""
    return _per_run_dot(ds.Z_tn, W.reshape(W.shape[0], -1)).reshape(ds.T, ds.n, -1)


def _scores_r(u, ds):
    """gamma (T, n, B) for u (B, d) (or (T, n, 1) for one u (d,))."""
    U = u if u.dim() == 2 else u.unsqueeze(0)
    return _per_run_dot(ds.X_tn, U).reshape(ds.T, ds.n, -1) * ds.y_r


def _batched(W):
    return W if W.dim() == 3 else W.unsqueeze(0)


def logits(W: torch.Tensor, ds: Dataset) -> torch.Tensor:
    """a_it = x_it^T W x_i1, (B, n, T) for W (B, d, d); (n, T) for W (d, d)."""
    a = _logits_r(_batched(W), ds).permute(2, 1, 0)
    return a if W.dim() == 3 else a[0]


def log_scores(W: torch.Tensor, ds: Dataset) -> torch.Tensor:
    """log s_it = log softmax(a_i)_t, (B, n, T); finite for every finite W."""
    return torch.log_softmax(logits(W, ds), dim=-1)


def token_scores(u: torch.Tensor, ds: Dataset) -> torch.Tensor:
    """gamma_it = y_i u^T x_it, (.., n, T) for u (.., d)."""
    g = _scores_r(u, ds).permute(2, 1, 0)
    return g if (u.dim() == 2 or ds.X.dim() == 4) else g[0]


def opt_tokens(gamma: torch.Tensor, rtol: float = 1e-9) -> torch.Tensor:
    """opt_i = argmax_t gamma_it for gamma (.., n, T).

    Raises ValueError when the largest score is not unique (to ``rtol`` of the score scale).
    """
    top2 = gamma.topk(2, dim=-1).values
    scale = gamma.abs().amax(-1).clamp_min(1e-300)
    if bool(((top2[..., 0] - top2[..., 1]) <= rtol * scale).any()):
        raise ValueError("opt token not unique: two tokens share the largest score gamma_it")
    return gamma.argmax(-1)


def forward(W: torch.Tensor, u: torch.Tensor, ds: Dataset) -> torch.Tensor:
    """f(X_i) = u^T X_i^T softmax(X_i W x_i1), (B, n).  Linear domain."""
    return (torch.softmax(logits(W, ds), -1) * token_scores(u, ds)).sum(-1) * ds.y


# ---------------------------------------------------------------------------
# Losses, each with the log-domain pieces the engines need
# ---------------------------------------------------------------------------


def log_expm1_exp(log_x: torch.Tensor) -> torch.Tensor:
    """log(exp(x) - 1) given log x, accurate for x far below the float64 range (log_x = -1e5 is fine)."""
    x = log_x.exp()
    small = log_x + 0.5 * x                      # expm1(x)/x = 1 + x/2 + O(x^2); error < 1e-18 for log_x < -20
    big = x + torch.log1p(-torch.exp(-x))        # avoids expm1 overflow
    mid = torch.log(torch.expm1(x))
    return torch.where(log_x < -20, small, torch.where(x > 30, big, mid))


def log_softplus(z: torch.Tensor) -> torch.Tensor:
    """log(log(1 + e^z)), accurate when e^z underflows (z << 0)."""
    return torch.where(z < -20, z - 0.5 * z.exp(), torch.log(F.softplus(z)))


class Loss(NamedTuple):
    r"""A decreasing loss l with its log-domain pieces.

    value(z) = l(z);  log_value(z) = log l(z);  log_neg_deriv(z) = log(-l'(z));
    log_excess(z_opt, log_D) = log(l(z_opt - D) - l(z_opt)) for D >= 0 given as log D.
    """

    name: str
    value: Callable
    log_value: Callable
    log_neg_deriv: Callable
    log_excess: Callable


EXP = Loss(
    "exp",
    value=lambda z: torch.exp(-z),
    log_value=lambda z: -z,
    log_neg_deriv=lambda z: -z,
    # e^{-(z-D)} - e^{-z} = e^{-z} expm1(D)
    log_excess=lambda z_opt, log_D: -z_opt + log_expm1_exp(log_D),
)
LOGISTIC = Loss(
    "logistic",
    value=lambda z: F.softplus(-z),
    log_value=lambda z: log_softplus(-z),
    log_neg_deriv=lambda z: F.logsigmoid(-z),
    # l(z-D) - l(z) = log1p(sigmoid(-z) expm1(D))
    log_excess=lambda z_opt, log_D: log_softplus(F.logsigmoid(-z_opt) + log_expm1_exp(log_D)),
)
LOSSES = {"exp": EXP, "logistic": LOGISTIC}


def get_loss(loss: str | Loss) -> Loss:
    return LOSSES[loss] if isinstance(loss, str) else loss


# ---------------------------------------------------------------------------
# Linear-domain losses (reference; fine away from saturation)
# ---------------------------------------------------------------------------


def _gamma(u, ds):
    return ds.gamma if u is None else token_scores(u, ds)


def loss_value(W, u, ds, loss="exp") -> torch.Tensor:
    """L(W, u) = mean_i l(m_i), (B,).  Linear domain, differentiable; ``u=None`` uses the fixed head."""
    margins = (torch.softmax(logits(W, ds), -1) * _gamma(u, ds)).sum(-1)
    return get_loss(loss).value(margins).mean(-1)


def loss_star(u, ds, loss="exp") -> torch.Tensor:
    """L*(u) = mean_i l(gamma_{i,opt_i}): the infimum over W for this head."""
    return get_loss(loss).value(_gamma(u, ds).amax(-1)).mean(-1)


# ---------------------------------------------------------------------------
# Log-domain evaluation: losses, saturation, gradient directions
# ---------------------------------------------------------------------------


class Evaluation(NamedTuple):
    log_s: torch.Tensor            # (B, n, T)
    gamma: torch.Tensor            # (.., n, T)
    margin: torch.Tensor           # (B, n)  m_i = y_i f(X_i)
    log_loss: torch.Tensor | None         # (B,)  log L          (None unless values=True)
    log_excess_loss: torch.Tensor | None  # (B,)  log(L - L*)    (None unless values=True)
    log_grad_norm_W: torch.Tensor  # (B,)    log ||grad_W L||_F
    dir_W: torch.Tensor            # (B, d, d) grad_W L / ||grad_W L||_F
    log_grad_norm_u: torch.Tensor | None = None  # (B,)
    dir_u: torch.Tensor | None = None            # (B, d)


_TINY = 1e-300  # guards 0/0 only: a zero shifted gradient means an exactly stationary point


def _unit(G: torch.Tensor, log_shift: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(log ||G_b|| + shift_b, G_b / ||G_b||) for G (B, m), one row per run; a zero row gives (-inf, 0).

    The rows come out contiguous on purpose: W + update with a transposed update is ~5x slower.
    """
    nrm = torch.linalg.vector_norm(G, dim=-1)
    return log_shift + nrm.log(), G / nrm.clamp_min(_TINY).unsqueeze(-1)


def _exp(x: torch.Tensor) -> torch.Tensor:
    """exp(max(x, -700)), in place on the temporary x: terms below e^-700 ~ 1e-304 of the largest are
    noise either way, and keeping them out of the subnormal range keeps exp at full speed."""
    return x.clamp_min_(-700.0).exp_()


def evaluate(W, u, ds: Dataset, loss="exp", grad_u: bool = False, values: bool = True) -> Evaluation:
    r"""All per-step quantities at (W, u) in the log domain; ``u=None`` means the dataset's fixed head.

    grad_W.  The coefficient of x_it x_i1^T in grad_W L is c_it = (1/n)(-l'(m_i)) s_it (m_i - gamma_it).
    Only the token k_i with the largest s_it can suffer cancellation (m_i -> gamma_ik as s_ik -> 1),
    and sum_t s_it (m_i - gamma_it) = 0 exactly, so we form c_it for t != k_i from
    exp(log s_it + log(-l'(m_i)) - shift) (shift = their max over i, t: per run) and set
    c_ik = -sum_{t != k} c_it.  The shift is added back as a log.

    ``values=False`` skips log L and log(L - L*) (None in the result): NGD and GD need only the
    gradient; ``loss_values`` computes them later from the result.

    log(L - L*) = logsumexp_i log(l(g_i - D_i) - l(g_i)) - log n, with g_i = gamma_{i,opt} and
    log D_i = log(g_i - m_i) = logsumexp_t (log s_it + log(g_i - gamma_it)) (no cancellation).

    Internally every array is (T, n, B) (see ``Dataset``); the result is in (B, n, T) / (B, ...) views.
    """
    loss = get_loss(loss)
    single = W.dim() == 2
    W = _batched(W)
    B, T, n, d = W.shape[0], ds.T, ds.n, ds.d
    log_n = math.log(n)
    fixed = u is None
    gamma = ds.gamma_r if fixed else _scores_r(u, ds)                             # (T, n, 1 or B)
    a = _logits_r(W, ds)                                                          # (T, n, B)
    a_max, dom = a.max(0, keepdim=True)
    z = a - a_max                                                                 # log_softmax by hand, reusing the max
    e = z.clamp_min(-700.0).exp_()                                                # (see _exp)
    S = e.sum(0)
    log_s = z.sub_(S.log())
    margin = e.mul_(gamma).sum(0).div_(S)                                         # m_i = sum_t s_it gamma_it, (n, B)
    log_neg_dl = loss.log_neg_deriv(margin)                                       # log(-l'(m_i))

    is_dom = torch.arange(T).view(T, 1, 1) == dom                                 # the dominant token k_i, one per sample
    log_w = (log_s + log_neg_dl).masked_fill_(is_dom, -math.inf)
    shift = log_w.reshape(T * n, B).amax(0)                                       # (B,)
    c = _exp(log_w - shift) * (margin - gamma)
    c = torch.where(is_dom, -c.sum(0, keepdim=True), c)
    log_gn_W, dir_W = _unit(_per_run_combine(ds.Z_tn, c.reshape(T * n, B)), shift - log_n)
    dir_W = dir_W.reshape(B, d, d)

    log_loss = log_excess = None
    if values:
        log_loss, log_excess = _values_r(log_s, gamma, margin, ds.log_gap_r if fixed else None, loss, log_n)

    log_gn_u = dir_u = None
    if grad_u:
        # coefficient of x_it is -(1/n)(-l'(m_i)) y_i s_it: one sign per sample, no cancellation
        log_wu = log_s + log_neg_dl
        shift_u = log_wu.reshape(T * n, B).amax(0)
        cu = _exp(log_wu - shift_u) * -ds.y_r
        log_gn_u, dir_u = _unit(_per_run_combine(ds.X_tn, cu.reshape(T * n, B)), shift_u - log_n)

    ev = Evaluation(log_s.permute(2, 1, 0), (ds.gamma if fixed else gamma.permute(2, 1, 0)), margin.T,
                    log_loss, log_excess, log_gn_W, dir_W, log_gn_u, dir_u)
    if single:
        ev = ev._replace(**{k: getattr(ev, k)[0] for k in ev._fields if k != "gamma" and getattr(ev, k) is not None})
    return ev


def _values_r(log_s, gamma, margin, log_gap, loss, log_n):
    """(log L, log(L - L*)) from (T, n, B) arrays; ``log_gap`` = log(gamma_opt - gamma) if precomputed."""
    log_loss = torch.logsumexp(loss.log_value(margin), 0) - log_n
    g_opt = gamma.amax(0)
    log_gap = torch.log(g_opt - gamma) if log_gap is None else log_gap               # log 0 = -inf drops opt
    log_D = torch.logsumexp(log_s + log_gap, 0)
    return log_loss, torch.logsumexp(loss.log_excess(g_opt, log_D), 0) - log_n


def loss_values(ev: Evaluation, ds: Dataset, loss="exp", fixed_head: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """(log L, log(L - L*(u))) (B,) from a batched ``evaluate(..., values=False)`` result: the values half
    of ``evaluate``, for callers that need them only sometimes.  ``fixed_head``: ev was computed with u=None."""
    loss = get_loss(loss)
    r = lambda t: t.permute(2, 1, 0)
    gamma, log_gap = (ds.gamma_r, ds.log_gap_r) if fixed_head else (r(ev.gamma), None)
    return _values_r(r(ev.log_s), gamma, ev.margin.T, log_gap, loss, math.log(ds.n))


def grad_W(W, u, ds, loss="exp") -> tuple[torch.Tensor, torch.Tensor]:
    """(log ||grad_W L||, grad_W L / ||grad_W L||), log domain; finite wherever the exact gradient is nonzero."""
    ev = evaluate(W, u, ds, loss, values=False)
    return ev.log_grad_norm_W, ev.dir_W


def grad_u(W, u, ds, loss="exp") -> tuple[torch.Tensor, torch.Tensor]:
    """(log ||grad_u L||, grad_u L / ||grad_u L||), log domain."""
    ev = evaluate(W, u, ds, loss, grad_u=True, values=False)
    return ev.log_grad_norm_u, ev.dir_u


def log_one_minus_s_opt(W, ds, gamma=None) -> torch.Tensor:
    """log(1 - s_{i,opt_i}) = logsumexp_{t != opt} log s_it, (B, n); exact where 1 - s_opt underflows.

    The opt tokens are ``ds.opt_index`` unless token scores ``gamma`` (.., n, T) are given (then argmax_t gamma).
    """
    log_s = log_scores(W, ds)
    opt = ds.opt_index if gamma is None else gamma.argmax(-1)
    is_opt = F.one_hot(opt, ds.T).bool().expand_as(log_s)
    return torch.logsumexp(log_s.masked_fill(is_opt, -math.inf), -1)


def log_excess_loss(W, u, ds, loss="exp") -> torch.Tensor:
    """log(L(W, u) - L*(u)), (B,), accurate down to L - L* ~ exp(-1e5)."""
    return evaluate(W, u, ds, loss).log_excess_loss


# ---------------------------------------------------------------------------
# References and negative controls (linear domain)
# ---------------------------------------------------------------------------


def grad_W_autograd(W, u, ds, loss="exp") -> tuple[torch.Tensor, torch.Tensor]:
    """Reference: autograd of the linear-domain loss; (log ||grad||, grad/||grad||).  NaN once saturated."""
    with torch.enable_grad():
        Wr = W.detach().clone().requires_grad_(True)
        (G,) = torch.autograd.grad(loss_value(Wr, u, ds, loss).sum(), Wr)  # runs are independent: sum = per-run grads
    nrm = torch.linalg.vector_norm(G.flatten(-2), dim=-1)
    return nrm.log(), G / nrm[..., None, None]


def grad_u_autograd(W, u, ds, loss="exp") -> tuple[torch.Tensor, torch.Tensor]:
    """Reference for grad_u L via autograd; (log ||grad||, grad/||grad||)."""
    with torch.enable_grad():
        ur = u.detach().clone().requires_grad_(True)
        (g,) = torch.autograd.grad(loss_value(W, ur, ds, loss).sum(), ur)
    nrm = torch.linalg.vector_norm(g, dim=-1)
    return nrm.log(), g / nrm[..., None]


def grad_W_naive(W, u, ds, loss="exp") -> tuple[torch.Tensor, torch.Tensor]:
    """Negative control: the closed-form gradient in the linear domain, s_it (gamma_it - m_i) formed directly.

    W (B, d, d).
    Correct away from saturation; once 1 - s_opt underflows every coefficient is 0
    and the returned direction is 0/0 = NaN, exactly like autograd.
    """
    loss = get_loss(loss)
    gamma = _gamma(u, ds)
    s = torch.softmax(logits(W, ds), -1)
    m = (s * gamma).sum(-1)
    coef = loss.log_neg_deriv(m).exp().unsqueeze(-1) * s * (m.unsqueeze(-1) - gamma) / ds.n
    G = _per_run_combine(ds.Z_tn, coef.permute(2, 1, 0).reshape(ds.T * ds.n, -1))
    nrm = torch.linalg.vector_norm(G, dim=-1)
    return nrm.log(), (G / nrm.unsqueeze(-1)).unflatten(-1, (ds.d, ds.d))


def neg_grad_W_ass2(W, ds) -> torch.Tensor:
    r"""-grad_W L for the exp loss in the one-direction form (14)/(5), valid under Ass 2 (fixed head):

        -grad L = (1/n) sum_i e^{-m_i} s_io (1 - s_io) (gamma_io - gammabar_i)
                          (x_io - sum_{t != o} s_it x_it / (1 - s_io)) x_i1^T,

    o = opt_i, gammabar_i the common non-opt score (here: the mean of the non-opt scores).
    Derivation: with gamma_it = gammabar_i for t != o, m_i = s_io gamma_io + (1 - s_io) gammabar_i, so
    gamma_io - m_i = (1 - s_io)(gamma_io - gammabar_i) and gammabar_i - m_i = -s_io (gamma_io - gammabar_i);
    substitute into sum_t s_it (gamma_it - m_i) x_it.  Linear domain (a reference, not an engine).
    """
    gamma, opt = ds.gamma, ds.opt_index
    s = torch.softmax(logits(W, ds), -1)
    is_opt = F.one_hot(opt, ds.T).to(DTYPE)
    s_o = (s * is_opt).sum(-1)                                                  # (B, n)
    g_o = (gamma * is_opt).sum(-1)
    g_bar = (gamma * (1 - is_opt)).sum(-1) / (ds.T - 1)
    m = (s * gamma).sum(-1)
    scal = torch.exp(-m) * s_o * (1 - s_o) * (g_o - g_bar) / ds.n               # (B, n)
    x_o = (is_opt.unsqueeze(-1) * ds.X).sum(-2)                                 # (n, d)
    x_rest = ((s * (1 - is_opt)).unsqueeze(-1) * ds.X).sum(-2) / (1 - s_o).unsqueeze(-1)
    v = scal.unsqueeze(-1) * (x_o - x_rest)                                     # (B, n, d)
    return v.transpose(-1, -2) @ ds.Xq                                          # sum_i v_i x_i1^T
