r"""Shared set-ups of paper A's gradient-approximation claims (A.T3-A.T5) and softmax-row lemmas (A.L9-A.L23).

This module defines no claim.  It holds what several claims use, so that no claim module imports another:

1. **Derived coefficients** shared by several claims, each beside a pointer to its derivation: the n-law
   coefficient ``c(theta)`` of A.T1.1 (derived in ``t1_1_population_loss.py``) and its gradient (A.T3, A.T4); the
   regularizer's Isserlis coefficient ``c_R`` (derived in ``t5_gradient_regularizer.py``; A.T3, A.T5); the tilted
   limits of the softmax-weighted sums (derived in ``technical_lemmas.py``; A.L9-A.L23); and the exact Gaussian
   expectation used by the sympy derivations (A.T1.1, A.T5, A.L11-A.L22).
2. **Gradient data** (A.T3-A.T5): one instance, two points near the manifold, control-variated gradient differences
   at each context size, cached per (seed, budget) so the three claims and their controls share one set of batches.
3. **Softmax rows** (A.L9-A.L23): the lemma instance with two fixed queries and the Monte Carlo rows, cached.
4. **Decisions and plots** these claims share: a fitted exponent against the derived one (the paper's ``O(n^e)``
   envelope reported beside it), a leading coefficient fitted as a polynomial in ``1/m`` against a derived value, and
   their figures.

Pre-registration (issue 11).  Every decision constant below carries its reason; ``PREREGISTERED`` lists those set or
changed with results in view.  Removed in issue 11: ``ENVELOPE_MAX_WIDTH = 0.8`` (an exponent interval below the
paper's envelope passed at any width, one straddling it up to 0.8: the rate checks could not fail, since the derived
exponent is one power below the envelope); the rate checks now decide the derived exponent.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import matplotlib.ticker as mticker
import numpy as np
import sympy as sp
import torch

from numerics import DTYPE
from numerics.paper_a import moments as mo
from numerics.paper_a.algorithms import random_instance
from numerics.paper_a.geometry import haar_orthogonal, perturb_from_manifold, regularizer_grad, target_svd
from numerics.paper_a.model import attention_map, factor_B, sym_sqrt
from numerics.stats import decide_close, decide_equal, decide_exponent, weighted_fit
from theorems.claim import Context
from theorems.evidence import Evidence
from theorems.plots import new_figure

#: the derived exponent of every squared bias these claims measure (bias = coefficient/m + O(m^-2), m = n - 1 or n)
RATE_TARGET = -2.0
#: the paper's envelope for the same squared errors (Õ(1/n)): reported beside the decision, not decided (it cannot
#: fail where the derived exponent holds)
RATE_ENVELOPE = -1.0
#: an exponent interval that meets -2 ± 0.1 and is at most 0.5 wide lies below -1.4: it excludes the paper's envelope
#: -1 by a margin and tells a bias O(1/n) from O(n^-3/4) or O(n^-5/4)
RATE_MAX_WIDTH = 0.5
#: the fit keeps the first correction (log y = a + b log m + k/m); the O(m^-2) terms it leaves out move the fitted
#: exponent over m = 7..255 by a few hundredths (derived series; measured -1.95 at q = 0.6 at high power)
RATE_RESOLUTION = 0.1
#: a fitted leading coefficient whose half-width exceeds a quarter of its own derived value (per block) does not pin
#: it down
COEFFICIENT_REL_WIDTH = 0.25
#: the bias coefficients (per point and block) are decided equal to the derived ones up to 5% of the block's derived
#: norm: the three-term fit of a series still rising at n = 256 carries a truncation error of a few percent (the
#: K-block's, measured: PREREGISTERED), seed-independent, which a precise interval would otherwise call a violation
COEFFICIENT_RESOLUTION = 0.05
#: the loss's bias series n'·bias = a + b/m + c/m² + d/m³ (A.T3, A.T4): its second- and third-order terms are large at
#: n = 8 (tilted moments E e^{3q} with polynomial weights of degree 6; the K-block's scaled bias is still 10% below
#: its limit at n = 256), so the fit keeps three correction terms
LOSS_COEFFICIENT_ORDER = 3
#: the regularizer's bias is exactly c_R/n + c_2/n² + c_3/n³ (R is a degree-4 polynomial in Σ̂ = Σ + Δ, and the
#: moments of Δ of order k are O(n^-⌈k/2⌉)), so n·bias = a + b/n + c/n² is exact
REGULARIZER_COEFFICIENT_ORDER = 2
#: the softmax-row limits (A.L9 (i), A.L11/15/20, the Poincaré lemmas' n'·Var; the bias coefficients of A.L13/18/22)
#: are fitted as a + b/m + c/m² + d/m³: the series' coefficients grow like e^{kq}, and at q = 0.6 over n = 8..256 the
#: omitted terms of a two-term fit move the limit by 2.3 (quick) to 4 (standard) standard errors, those of a three-term
#: fit by 0.4-0.65 (exact quadrature of n'·E Σs², moments.scaled_ss_exact; PREREGISTERED)
LIMIT_ORDER = 3

PREREGISTERED = {
    "M_OP": "was 0.25 (σ₁(M*) of the oracle's unit tests), is 0.1: changed when A.T3 was written, after its derived "
            "leading term missed at 0.25 (‖B‖op ≈ 0.52, so E e^{3q} = ∞ and the O(n⁻²) remainder is not O(n⁻²): the "
            "dual-norm bias was 2-3× below ‖∇c + λc_R‖/(n−1) over n ≤ 128 and its squared exponent ≈ −1.7, inside "
            "the paper's Õ(1/n) but not at our derived −2). Kept in issue 11: the checks decide our derived leading "
            "term, which needs ‖B‖op² < 1/6; the instance is recorded as a scope limit in A.T3's findings.",
    "LIMIT_ORDER": "was 1 (a + b/m), then 2: the 1/m² term was added after the fit with b/m alone missed the derived "
                   "n'·Var(x̄x̄ᵀ) limit by 4 standard errors at q = 0.6 (standard tier: 171 at n = 8 → 144 at n = 256 "
                   "towards the derived 139). Diagnosis: the fit model, not a bug or the estimator: the row statistics "
                   "are convex combinations of Gaussian points (all moments finite, the SE is honest); the series in "
                   "1/n' has coefficients growing like e^{kq}, large at q = 0.6. "
                   "Is 3 (issue 11, second pass), changed AFTER seeing quick seed 2, where A.L9 (i), A.L10 and "
                   "A.L20/A.L23 missed at q = 0.6 only (n'·E Σs²: [1.809, 1.820] vs e^q = 1.8221; n'·MSE(M2): "
                   "[1242, 1340] vs 1350), all below the limit. Diagnosis, measured: (1) n'·E Σs² depends on q "
                   "alone and has an exact one-dimensional integral (1/S² = ∫ t e^{-tS} dt; "
                   "moments.scaled_ss_exact): 1.5050, 1.6355, 1.7175, 1.7658, 1.7927, 1.8071 at n = 8..256, "
                   "1.8183 at 1024; the two-term fit of these exact values lands at 1.8188, 0.0033 below e^q: "
                   "2.3 quick (4 standard) standard errors of seed-independent truncation error of the model, "
                   "to which seed 2's Monte Carlo added -2.6 SE at n = 256 (seeds 0, 1 missed by -0.7, -1.2 SE). "
                   "The three-term fit of the exact values lands at 1.8214 (0.4 quick, 0.65 standard SE), the "
                   "four-term at 1.8220. (2) High-power runs at seed 2's instance (200k contexts per n, 60k at "
                   "n = 1024): n'·MSE(M2) is 1294 ± 5 at n = 256 and 1336 ± 7 at n = 1024 against the derived 1350 "
                   "(a 1/m term of about -1.2e4: the limit holds), and the two-term fit of n = 8..256 lands 2.4 of "
                   "its SE below (≈ 0.7 quick SE), the three-term 0.9 of its SE (≈ 0.3 quick SE); x̄x̄ᵀ and x̄ "
                   "alike. No bug, no discrepancy with the derived limits: the fit model. Three terms (not four, "
                   "whose single degree of freedom over 6 points more than doubles the SE) keep the derived "
                   "truncation below one standard error at both tiers; A.L9's record states the exact truncation "
                   "at each query. Applies to the bias coefficients of A.L13/18/22 too (one fit model).",
    "LOSS_COEFFICIENT_ORDER": "was 2 (shared with LIMIT_ORDER), with the K-block (A.T4) and B-block (A.T3) fitted and "
                              "'reported, not decided' after their Monte Carlo drifted (0.25 vs the derived 0.32 at "
                              "n = 256; 0.63 ± 0.11 at n = 1024); is 3, every block decided. Diagnosis (issue 11): the "
                              "drift was the estimator, not the derivation: the control variate L_o left an O(n^-1/2) "
                              "softmax fluctuation shared by the queries of a batch (the K-projection's standard "
                              "deviation grew 0.4 → 2.2 from n = 8 to 512), now removed by the linear term of "
                              "moments.softmax_linear_terms (0.25-0.37 at every n); with it (seed 0, 8000 batches per "
                              "n) the scaled K-projection is 0.112, 0.174, 0.207, 0.243, 0.280, 0.290, 0.301 at "
                              "n = 8..512 against the derived 0.316: a slow approach that a + b/m + c/m² misfits "
                              "(χ²/dof 8-14) and a + b/m + c/m² + d/m³ fits (χ²/dof ≈ 1; limit 0.310 ± 0.014). Chosen "
                              "with those diagnostic runs (seeds 0, 1) in view.",
    "COEFFICIENT_RESOLUTION": "new (session 11, issue #13's audit of strict-equality decisions), chosen after seeing "
                              "data: over the fresh quick seeds 600-619 the fitted K-block limit of A.T4 sat at -0.35 "
                              "of its interval's half-width on average (sd 0.25 over 40 point-seeds: 9 standard errors "
                              "from 0), A.T3's B-block at -0.16; V-blocks and A.L13/18/22 near 0. Diagnosis (fresh "
                              "seeds 5000-5019, refits of the same draws): the K-block's relative deviation shrinks as "
                              "the fit gains terms (point 1: -7% with two correction terms, -3% with three, 0% with "
                              "four; point 2: -7%, -3.7%, -3% ± 2%), i.e. the three-term fit's truncation, not the "
                              "derivation; a seed-independent -3..-4% that an interval narrower than ~4 x that "
                              "(standard, full) would call a violation (projected ~5% of standard seeds). 5% is the "
                              "measured truncation rounded up; a tenth of the 25%-wide maximum, far below the "
                              "include-self control's shift. Seeds 100-119 / 100-104 and later ones did not choose it.",
    "COEFFICIENT_REL_WIDTH": "value unchanged (0.25); was relative to the whole coefficient's norm (so a block with a "
                             "small share, the K-block at ~30%, passed at ±90% of its own size), is relative to each "
                             "block's own derived norm (issue 11).",
    "RATE_MAX_WIDTH": "new in issue 11 (the rate checks decided only the paper's envelope before, and could not fail); "
                      "0.5 fixed from its reason, with the exploratory fits of seeds 0-2 in view.",
    "RATE_RESOLUTION": "new in issue 11, chosen with the exploratory fits of seeds 0-2 in view (the first-correction "
                       "fit leaves the q = 0.6 bias exponents at -1.93..-1.96 at high power, where the pure log-log "
                       "slope was -1.84..-1.89).",
    "GRAD_NS": "was n = 8..128 at quick, is 8..256 (as standard): issue 11's narrower rate rule needs the longer range.",
    "GRAD_BATCHES": "was (1500, 4000), is (2000, 6000): raised in issue 11 with the linear control variate, for the "
                    "narrower rate rule and the newly decided K-block.",
    "ROW_NS": "was n = 8..128 at quick, is 8..256 (as standard): issue 11's narrower rate rule.",
    "ROW_DRAWS": "was (6000, 20000), is (20000, 60000): issue 11's narrower rate rule and the tolerance-free bounds.",
}


# ---------------------------------------------------------------------------
# 1. Derived coefficients
# ---------------------------------------------------------------------------

def std_normal_expectation(poly: sp.Expr, zs: list[sp.Symbol]) -> sp.Expr:
    """Exact ``E[poly(z)]`` for independent standard normals ``zs`` (moments (k-1)!! for even k)."""
    P = sp.Poly(sp.expand(poly), *zs)
    moment = lambda k: 0 if k % 2 else sp.factorial2(k - 1)  # noqa: E731
    return sp.expand(sum(coef * sp.prod([moment(k) for k in mon]) for mon, coef in P.terms()))


def loo_bias_coefficient(V: torch.Tensor, K: torch.Tensor, Sigma: torch.Tensor, W_star: torch.Tensor) -> torch.Tensor:
    r"""Leading coefficient ``c`` in ``E Lhat_n(theta) - L(theta) = c/(n-1) + O(n^{-2})`` (leave-one-out), derived in
    ``t1_1_population_loss.py`` (delta method on the self-normalized ratio): with ``P = V Sigma K^T``,
    ``M = K Sigma K^T``, ``S = (Sigma^{-1} - 2M)^{-1}``, ``Z = det(I - 2 Sigma^{1/2} M Sigma^{1/2})^{-1/2}``,

    ``c = Z [ tr(V Sigma V^T) + tr(P S P^T) + 2 tr((W* - P) S P^T) ]``,

    finite iff ``||B||_op^2 < 1/2`` (Lemma 7).  Returns NaN outside that region.
    """
    P = attention_map(V, K, Sigma)
    M = K @ Sigma @ K.mT
    d = Sigma.shape[-1]
    R = sym_sqrt(Sigma)
    G = torch.eye(d, dtype=DTYPE) - 2 * R @ M @ R
    lam_min = torch.linalg.eigvalsh(G).min(-1).values
    S = torch.linalg.inv(torch.linalg.inv(Sigma) - 2 * M)
    Z = torch.linalg.det(G).clamp_min(1e-300).rsqrt()
    tr = lambda A: A.diagonal(dim1=-2, dim2=-1).sum(-1)  # noqa: E731
    c = Z * (tr(V @ Sigma @ V.mT) + tr(P @ S @ P.mT) + 2 * tr((W_star - P) @ S @ P.mT))
    return torch.where(lam_min > 0, c, torch.full_like(c, math.nan))


def loss_bias_gradient(V, K, Sigma, W):
    """``(c, grad_V c, grad_K c)``: the loss-bias coefficient and its gradient (autograd), the leading term of the
    expected empirical gradient's bias ``grad c / (n - 1)`` (A.T4's derivation)."""
    Vr, Kr = V.clone().requires_grad_(True), K.clone().requires_grad_(True)
    with torch.enable_grad():
        c = loo_bias_coefficient(Vr, Kr, Sigma, W)
        gV, gK = torch.autograd.grad(c.sum(), (Vr, Kr))
    return c.detach(), gV, gK


def regularizer_bias_coefficient(V, K, Sigma, pairings: str = "isserlis"):
    r"""Leading coefficient ``c_R`` in ``E grad Rhat - grad R = c_R / n + O(n^{-2})``, per instance (pair V, K), derived
    in ``t5_gradient_regularizer.py``.

    ``f(S) = grad R(theta; S)`` is a polynomial of degree 4 in ``S``; ``Sigmahat = Sigma + Delta`` with
    ``Delta = (1/n) sum_k (x_k x_k^T - Sigma)``, so ``E Delta = 0``, ``E Delta (x) Delta = (1/n) E H (x) H``
    (``H = x x^T - Sigma``) and the third and fourth moments of ``Delta`` are O(n^{-2}).  Hence, exactly,
    ``c_R = (1/2) E D^2 f(Sigma)[H, H]``.  Isserlis: ``E H_ab H_cd = Sigma_ac Sigma_bd + Sigma_ad Sigma_bc``, i.e.
    ``E H (x) H = (1/2) sum_{a,b} G_ab (x) G_ab`` with ``G_ab = S (E_ab + E_ba) S``, ``S = Sigma^{1/2}``, so
    ``c_R = (1/4) sum_{a,b} D^2 f(Sigma)[G_ab, G_ab]``.  ``D^2 f[G, G] = p''(0)`` for the quartic
    ``p(t) = f(Sigma + t G)``, computed by the five-point stencil, which is exact for polynomials of degree <= 5.

    ``pairings="first_only"`` (a negative control) keeps only the ``Sigma_ac Sigma_bd`` pairing,
    ``c_R = (1/2) sum_{a,b} D^2 f(Sigma)[S E_ab S, S E_ab S]`` -- a classic slip.
    """
    d = Sigma.shape[-1]
    R = sym_sqrt(Sigma)
    E = torch.eye(d * d, dtype=DTYPE).reshape(d * d, d, d)  # E_ab, (d^2, d, d)
    if pairings == "isserlis":
        G, w = R @ (E + E.mT) @ R, 0.25
    elif pairings == "first_only":
        G, w = R @ E @ R, 0.5
    else:
        raise ValueError(f"unknown pairings {pairings!r}")
    G = G.unsqueeze(1)  # (d^2, 1, d, d): broadcast over instances
    stencil = {-2: -1.0, -1: 16.0, 0: -30.0, 1: 16.0, 2: -1.0}
    acc_V, acc_K = 0.0, 0.0
    for t, c in stencil.items():
        fV, fK = regularizer_grad(V, K, Sigma + t * G)
        acc_V = acc_V + c * fV.sum(0)
        acc_K = acc_K + c * fK.sum(0)
    return w * acc_V / 12, w * acc_K / 12


def tilted_limits(K, Sigma, xq) -> dict[str, torch.Tensor]:
    r"""Limits ``n' * (...)`` as ``n -> inf`` at query ``x_q`` (``mu = Sigma K^T x_q``, ``q = mu^T Sigma^{-1} mu``),
    derived in ``technical_lemmas.py`` (delta method for the self-normalized ratio, Gaussian tilting).

    For a ratio estimator ``sum_j w_j g(x_j) / sum_j w_j`` of ``G = E_{N(mu,Sigma)} g`` (``w_j = e^{a_j}``):
    MSE ``~ (e^q / n') E_{N(2 mu, Sigma)} ||g - G||^2`` and bias ``~ (e^q / n') (G - E_{N(2mu,Sigma)} g)``.
    Closed forms (``t = tr Sigma``, ``F = ||Sigma||_F^2``, ``m2 = ||mu||^2``, ``mSm = mu^T Sigma mu``):

    * ``ss``: ``n' E sum_j s_j^2 -> e^q``;  ``n'^2 E (sum_j s_j^2)^2 -> e^{2q}``
    * ``xbar_mse``: ``e^q (t + m2)``;  ``xbar_bias``: ``-e^q mu``
    * ``outer_mse`` (xbar xbar^T): ``e^q (4 m2^2 + 2 m2 t + 2 mSm)``;  ``outer_bias``: ``e^q (Sigma - mu mu^T)``
    * ``M2_mse``: ``e^q (9 m2^2 + 8 m2 t + 8 mSm + t^2 + F)``;  ``M2_bias``: ``-3 e^q mu mu^T``
    """
    mu = xq @ K @ Sigma
    q = mo.query_scale(K, Sigma, xq)
    eq = torch.exp(q)
    t = torch.diagonal(Sigma).sum()
    F = Sigma.pow(2).sum()
    m2 = mu.pow(2).sum(-1)
    mSm = (mu @ Sigma * mu).sum(-1)
    mm = mu.unsqueeze(-1) * mu.unsqueeze(-2)
    return {
        "ss": eq, "ss2": eq**2,
        "xbar_mse": eq * (t + m2), "xbar_bias": -eq.unsqueeze(-1) * mu,
        "outer_mse": eq * (4 * m2**2 + 2 * m2 * t + 2 * mSm),
        "outer_bias": eq[:, None, None] * (Sigma - mm),
        "M2_mse": eq * (9 * m2**2 + 8 * m2 * t + 8 * mSm + t**2 + F),
        "M2_bias": -3 * eq[:, None, None] * mm,
    }


# ---------------------------------------------------------------------------
# 2. Gradient data for A.T3, A.T4, A.T5 (one set of batches, cached per seed and budget)
# ---------------------------------------------------------------------------

#: the name of the gradient Monte Carlo stream (seeds are derived from it, so its draws do not depend on other checks)
DATA_ID = "A.T3-T5"
#: d = 3, r = 4 (r > d: A2 with room), the smallest dimensions where V, K and W* are generic matrices
DIM, RDIM = 3, 4
#: A3's scale σ₁(W*Σ^{1/2}) = 0.1: ‖B‖op² ≈ 0.1 near the manifold, so the tilted moments E e^{kq} of the first two
#: orders of the bias series (k ≤ 3) are finite (k ‖B‖op² < 1/2)
M_OP = 0.1
#: Σ̃-distance of the points from the manifold ("ρ-close"): small against the manifold's scale (σ₁ = 0.1 → ~0.45)
RADIUS = 0.05
#: two points: a Haar-random one and the one with symmetric positive definite B (self-scores largest)
N_POINTS = 2
#: context sizes: five doublings from n = 8, where the bias series' terms are large, to 256, where they are small
GRAD_NS = [8, 16, 32, 64, 128, 256]
#: batches per context size (quick, standard): the scaled K-projection has standard deviation ~0.35 per batch with the
#: linear control variate, so the K-block's fitted limit has a half-width ~0.1 of its value at quick
GRAD_BATCHES = (2000, 6000)
#: the include-self control draws a third of the batches: its coefficient is 2.5-4× the leave-one-out one
INCLUDE_SELF_SHARE = 3
#: A.T5's own regularizer-only batches (quick, standard): cheap (no softmax), so the squared bias's exponent reaches the
#: rate rule's width (its U-statistic has a relative error ~30% per n at 2000 batches)
REG_BATCHES = (20000, 60000)


def blocks(first: str = "V", second: str = "K") -> dict[str, slice]:
    """The two parameter blocks of a flattened gradient (``r d`` value entries, then ``d d`` key-query entries)."""
    return {first: slice(0, RDIM * DIM), second: slice(RDIM * DIM, RDIM * DIM + DIM * DIM)}


@dataclass(frozen=True)
class GradientData:
    ns: list[int]
    samples: list[mo.GradientBiasSamples]
    Sigma: torch.Tensor
    W: torch.Tensor
    V: torch.Tensor
    K: torch.Tensor
    n_batches: int


def gradient_instance(seed: int):
    """``Sigma, W*`` from ``random_instance(3, 4, m_op=0.1)``; two ``theta`` at distance 0.05 from the manifold.

    Point 1 perturbs a Haar-random point of the manifold; point 2 the point with rotation ``Q = Vs^T``, where
    ``B = Vs Lam^{1/2} Vs^T`` is symmetric positive definite: self-scores ``x_i^T K x_i`` are then largest,
    so that the leave-one-out choice (and its include-self control) matters most.
    """
    gen = Context(seed=seed).generator(DATA_ID, "instance")
    Sigma, W = random_instance(DIM, RDIM, gen, m_op=M_OP)
    Vs = target_svd(Sigma, W)[2]
    Q = torch.stack([haar_orthogonal(1, DIM, gen)[0], Vs.mT])
    (V, K), _ = perturb_from_manifold(Sigma, W, RADIUS, N_POINTS, gen, Q=Q)
    return Sigma, W, V, K


def gradient_data(seed: int, budget: str, include_self: bool = False) -> GradientData:
    """Control-variated gradient differences at each context size, cached per (seed, budget, include_self).

    The include-self control draws a third of the batches (its effect is many standard errors wide).
    """
    return _gradient_data(seed, budget, bool(include_self))


@functools.lru_cache(maxsize=4)
def _gradient_data(seed: int, budget: str, include_self: bool) -> GradientData:
    ctx = Context(seed=seed, budget=budget)
    Sigma, W, V, K = gradient_instance(seed)
    gen = ctx.generator(DATA_ID, "batches")
    N = ctx.pick(*GRAD_BATCHES) // (INCLUDE_SELF_SHARE if include_self else 1)
    samples = [mo.gradient_bias_samples(V, K, Sigma, W, n, N, gen, include_self=include_self) for n in GRAD_NS]
    return GradientData(list(GRAD_NS), samples, Sigma, W, V, K, N)


@dataclass(frozen=True)
class RegularizerData:
    ns: list[int]
    dR: list[tuple[torch.Tensor, torch.Tensor]]  # per n: E = bias (linear term removed), pair (V, K)
    dR_raw: list[tuple[torch.Tensor, torch.Tensor]]  # per n: grad Rhat - grad R itself
    Sigma: torch.Tensor
    V: torch.Tensor
    K: torch.Tensor
    n_batches: int


@functools.lru_cache(maxsize=2)
def regularizer_data(seed: int, budget: str) -> RegularizerData:
    """A.T5's regularizer-only batches at the same instance and points (its own stream), cached per (seed, budget)."""
    ctx = Context(seed=seed, budget=budget)
    Sigma, _, V, K = gradient_instance(seed)
    gen = ctx.generator(DATA_ID, "regularizer batches")
    N = ctx.pick(*REG_BATCHES)
    draws = [mo.regularizer_bias_samples(V, K, Sigma, n, N, gen) for n in GRAD_NS]
    return RegularizerData(list(GRAD_NS), [d[0] for d in draws], [d[1] for d in draws], Sigma, V, K, N)


# ---------------------------------------------------------------------------
# 3. The lemma instance and the softmax rows shared by A.L9-A.L23
# ---------------------------------------------------------------------------

#: the name of the softmax-row Monte Carlo stream
LEMMA_DATA_ID = "A.L9-L23"
#: d = 3: the smallest dimension where Σ, K and the tilt direction are generic
LEMMA_DIM = 3
#: ‖B‖op = 0.35: ‖B‖op² < 1/4, so the averaged constant E e^{2q} of Lemma 9 is finite (Lemma 7)
B_OP = 0.35
#: two queries: q = 0.25 (random direction, moderate tilt) and 0.6 (B's top direction, strong tilt per unit norm)
QUERY_Q = (0.25, 0.6)
#: context sizes: five doublings from n = 8
ROW_NS = [8, 16, 32, 64, 128, 256]
#: contexts per n and query (quick, standard): the bias exponents' intervals reach the rate rule's width
ROW_DRAWS = (20000, 60000)


@dataclass(frozen=True)
class LemmaInstance:
    Sigma: torch.Tensor  # (d, d)
    K: torch.Tensor  # (d, d)
    xq: torch.Tensor  # (Q, d) the fixed queries x_i
    q: torch.Tensor  # (Q,)


def lemma_instance(seed: int) -> LemmaInstance:
    r"""``Sigma = 2 (A A^T / d + I)`` (eigenvalues >= 2, so that a dropped ``Sigma`` weight is visible), ``K`` iid
    N(0,1) rescaled to ``||B||_op = 0.35`` (``B = Sigma^{1/2} K Sigma^{1/2}``; Lemma 7's region needs
    ``||B||_op^2 < 1/4`` for the averaged constants); two queries with ``q = 0.25`` (random direction) and
    ``q = 0.6`` (the direction of ``B``'s top left singular vector, where the tilt is strongest per unit norm).
    """
    gen = Context(seed=seed).generator(LEMMA_DATA_ID, "instance")
    d = LEMMA_DIM
    A = torch.randn(d, d, generator=gen, dtype=DTYPE)
    Sigma = 2 * (A @ A.T / d + torch.eye(d, dtype=DTYPE))
    K = torch.randn(d, d, generator=gen, dtype=DTYPE)
    K = K * B_OP / torch.linalg.matrix_norm(factor_B(K, Sigma), ord=2)
    R = sym_sqrt(Sigma)
    Bm = R @ K @ R
    U = torch.linalg.svd(Bm)[0]
    dirs = torch.stack([torch.randn(d, generator=gen, dtype=DTYPE), U[:, 0]])
    z = dirs * (torch.tensor(QUERY_Q, dtype=DTYPE) / (dirs @ Bm).pow(2).sum(-1)).sqrt().unsqueeze(-1)  # q = ||B^T z||^2
    xq = z @ R  # x = Sigma^{1/2} z
    return LemmaInstance(Sigma, K, xq, mo.query_scale(K, Sigma, xq))


@dataclass(frozen=True)
class RowData:
    inst: LemmaInstance
    ns: list[int]
    rows: list[mo.RowStats]
    n_draws: int


def lemma_setup(seed: int, budget: str, stream: str) -> tuple[Context, LemmaInstance, torch.Generator]:
    """The context, the lemma instance and the generator of one named Monte Carlo stream of A.L9-A.L23."""
    ctx = Context(seed=seed, budget=budget)
    return ctx, lemma_instance(seed), ctx.generator(LEMMA_DATA_ID, stream)


@functools.lru_cache(maxsize=2)
def row_data(seed: int, budget: str) -> RowData:
    """The softmax rows of both queries at ``ROW_NS``, cached per (seed, budget)."""
    ctx, inst, gen = lemma_setup(seed, budget, "rows")
    N = ctx.pick(*ROW_DRAWS)
    rows = [mo.softmax_row_stats(inst.K, inst.Sigma, inst.xq, n, N, gen) for n in ROW_NS]
    return RowData(inst, list(ROW_NS), rows, N)


def mean_and_se(draws) -> tuple[np.ndarray, np.ndarray]:
    """Per entry of ``draws`` (N, ...): the sample mean and its standard error, as arrays."""
    return draws.mean(0).numpy(), (draws.std(0) / math.sqrt(draws.shape[0])).numpy()


# ---------------------------------------------------------------------------
# 4. Shared decisions and plots
# ---------------------------------------------------------------------------

def n_axes(ax, ns, logy: bool = False) -> None:
    """Log2 x-axis labelled at the context sizes (and optionally a log y-axis) with plain tick labels:
    matplotlib's default log labels go through mathtext, which costs more than the rest of a check."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(ns))
    ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(mticker.NullFormatter())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:.2g}"))
        ax.yaxis.set_minor_formatter(mticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def rate_fit(m, vals, ses):
    r"""WLS fit ``log y = a + b log m + k/m`` (delta-method errors ``se/y``): the exponent ``b`` with the first
    correction of a series ``y = C m^b (1 + k/m + O(m^-2))`` absorbed.  Coefficient 1 is ``b``."""
    m = np.asarray(m, float)
    X = np.column_stack([np.ones(len(m)), np.log(m), 1 / m])
    return weighted_fit(X, np.log(vals), np.asarray(ses, float) / np.asarray(vals, float))


def rate_decisions(ev: Evidence, ns, draws, what: str, mse: bool = False, derived=None, derived_label: str = "",
                   unit: str = "point", shift: int = 1) -> tuple[np.ndarray, np.ndarray]:
    r"""Per point (column): the exponent of ``||E D||^2`` (``mse=False``: U-statistic, Monte Carlo variance removed)
    or ``E ||D||^2`` (``mse=True``, a negative control: the mean square in place of the squared mean) in
    ``m = n - shift``, fitted by :func:`rate_fit` and decided against the derived exponent ``RATE_TARGET`` (``= -2 ±
    RATE_RESOLUTION``, width at most ``RATE_MAX_WIDTH``); where the interval lies relative to the paper's envelope
    ``RATE_ENVELOPE`` is reported beside it.  One decision per point.

    ``draws``: list over ``ns`` of (N, B, p) draws; ``derived``: optional callable ``m -> (len(m), B)`` array, the
    derived leading-order curve drawn for comparison.  Returns the values and standard errors, arrays (len(ns), B).
    """
    vals, ses = [], []
    for D in draws:
        if mse:
            v, s = mean_and_se(D.pow(2).sum(-1))
        else:
            est = mo.squared_norm_of_mean(D)
            v, s = est.value.numpy(), est.se.numpy()
        vals.append(v)
        ses.append(s)
    vals, ses = np.array(vals), np.array(ses)
    m = np.array(ns, float) - shift
    fits = {}
    for b in range(vals.shape[1]):
        if np.any(vals[:, b] <= 0):
            ev.status("inconclusive", f"{unit} {b + 1}: a non-positive estimate (noise dominates)")
            continue
        fit = fits[b] = rate_fit(m, vals[:, b], ses[:, b])
        d = decide_exponent(fit, ev.z, RATE_TARGET, max_width=RATE_MAX_WIDTH, resolution=RATE_RESOLUTION)
        side = ("below" if d.hi < RATE_ENVELOPE else "above" if d.lo > RATE_ENVELOPE else "across")
        ev.decide(f"{unit} {b + 1}: exponent of {what} in n", d, value=float(fit.coef[1]),
                  line=f"{unit} {b + 1}: exponent {fit.coef[1]:.2f} [{d.lo:.2f}, {d.hi:.2f}] vs derived "
                  f"{RATE_TARGET:g} ± {RATE_RESOLUTION:g} [{d.status}] (paper's envelope {RATE_ENVELOPE:g}: interval "
                  f"{side} it, reported)")
    if ev.plots:
        fig, ax = new_figure()
        for b, fit in fits.items():
            h = ax.errorbar(m + shift, vals[:, b], yerr=ev.z * ses[:, b], fmt="o", capsize=3, label=f"{unit} {b + 1}")
            col = h[0].get_color()
            ax.plot(m + shift, np.exp(fit.coef[0] + fit.coef[2] / m) * m ** fit.coef[1], "-", color=col, lw=0.8)
            ax.plot(m + shift, vals[0, b] * (m[0] / m) ** (-RATE_ENVELOPE), ":", color=col, lw=0.8)
            if derived is not None:
                ax.plot(m + shift, derived(m)[:, b], "--", color=col, lw=0.8)
        n_axes(ax, ns, logy=True)
        ax.set_xlabel("context size n")
        ax.set_ylabel(what)
        ax.set_title(f"solid: fit (exponent + 1/m correction); dotted: paper's envelope n^{RATE_ENVELOPE:g}"
                     + (f"; dashed: {derived_label}" if derived_label else ""), fontsize=8)
        ax.legend(loc="best")
        ev.figure(f"Decay of {what}", fig,
                  f"{'Mean squared norm' if mse else 'U-statistic estimate (MC variance removed)'} with ±z SE bars "
                  f"(Bonferroni over {unit}s); decided: the fitted exponent = {RATE_TARGET:g} ± {RATE_RESOLUTION:g} "
                  f"(derived); the paper's envelope n^{RATE_ENVELOPE:g} is anchored at the first point.")
    return vals, ses


def coefficient_decisions(ev: Evidence, ns, draws, target, scale, parts: dict[str, slice], order: int,
                          unit: str = "point") -> dict:
    r"""Per point and block: ``scale_n <Dbar_n, e>`` (``e`` the unit vector along the block of ``target``) fitted as
    ``a + b_1/scale_n + ... + b_order/scale_n^order``; ``a`` must equal ``||target_block||`` up to
    ``COEFFICIENT_RESOLUTION`` of it (``decide_close``, one decision per point and block; too wide above a half-width
    of ``COEFFICIENT_REL_WIDTH`` times the block's own derived norm).  Returns ``series[(point, block)] = (y, se, claimed)`` for :func:`coefficient_plot`.
    """
    series = {}
    for b in range(target.shape[0]):
        for name, sl in parts.items():
            t = target[b:b + 1, sl]
            y, se = mo.projected_series([D[:, b:b + 1, sl] for D in draws], t, scale)
            fit = mo.limit_fit(scale, y[:, 0], se[:, 0], order=order)
            claimed, a = float(t.norm()), float(fit.coef[0])
            a_se = float(fit.se[0])
            d = decide_close(a - ev.z * a_se, a + ev.z * a_se, claimed, resolution=COEFFICIENT_RESOLUTION * claimed,
                             max_width=2 * COEFFICIENT_REL_WIDTH * claimed)
            ev.decide(f"{unit} {b + 1}, {name}-block: leading coefficient (projected)", d, value=a,
                      line=f"{unit} {b + 1} {name}: {d}")
            series[(b, name)] = (y[:, 0], se[:, 0], claimed)
    return series


def limit_decisions(ev: Evidence, ns, y, se, targets, labels, order: int = LIMIT_ORDER) -> None:
    r"""Per column of ``y`` (len(ns), Q): fit ``y = a + b/m + c/m^2 + d/m^3`` (``order``) with ``m = n - 1``
    and decide ``a = targets[col]`` (``decide_equal``, too wide above a half-width of
    ``COEFFICIENT_REL_WIDTH * |target|``).  Why three correction terms: ``PREREGISTERED["LIMIT_ORDER"]``.
    """
    m = np.array([n - 1 for n in ns], float)
    for col in range(y.shape[1]):
        fit = mo.limit_fit(m, y[:, col], se[:, col], order)
        target = float(targets[col])
        d = decide_equal(float(fit.coef[0]), float(fit.se[0]), target, ev.z,
                         max_width=2 * COEFFICIENT_REL_WIDTH * abs(target))
        ev.decide(labels[col], d, value=float(fit.coef[0]), line=f"{labels[col]}: {d}")


def series_plot(ns, curves, z, ylabel: str):
    """Scaled statistics vs n with ±z SE bars and a dashed line at each derived value:
    ``curves`` is a list of ``(label, y, se, derived)``."""
    fig, ax = new_figure()
    for label, y, se, derived in curves:
        h = ax.errorbar(ns, y, yerr=z * np.asarray(se), fmt="o-", capsize=3, label=label)
        ax.axhline(float(derived), ls="--", lw=0.8, color=h[0].get_color())
    n_axes(ax, ns)
    ax.set_xlabel("context size n")
    ax.set_ylabel(ylabel)
    ax.legend(loc="best", fontsize=7)
    return fig


def coefficient_plot(ns, series, z, ylabel: str, unit: str = "point"):
    """The series of :func:`coefficient_decisions` against their derived coefficients."""
    return series_plot(ns, [(f"{unit} {b + 1}, {name}", y, se, claimed) for (b, name), (y, se, claimed)
                            in series.items()], z, ylabel)


#: the coefficient figures' caption (text, not a decision)
COEFFICIENT_CAPTION = ("Scaled bias projected on the derived leading coefficient, with ±z SE bars; dashed: the "
                       "derived coefficient's norm, which the fitted limit must match.")


def limit_plot(ns, y, se, targets, labels, z, ylabel: str):
    """Columns of ``y`` (len(ns), Q) against their derived limits ``targets``."""
    return series_plot(ns, [(labels[c], y[:, c], se[:, c], targets[c]) for c in range(y.shape[1])], z, ylabel)
