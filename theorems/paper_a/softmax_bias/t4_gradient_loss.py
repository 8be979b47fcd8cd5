r"""A.T4 — the expected empirical gradient approximates the population gradient (Goel et al. 2026, Theorem 4).

Statement (the source text's, shape exact).  For ``theta`` close to the manifold of minima,
``|| E grad Lhat_n(theta) - grad L(theta) ||^2 = O~(1/n)``, and ``Lhat_n -> L`` pointwise.

What the paper proves is an *upper bound* on the squared error.  Its proof bounds the squared bias of every
softmax-weighted sum by its conditional mean-squared error (Jensen), which is O(1/n); the bias itself is
smaller.  Our derivation (below, label: reconstructed) gives the exact leading term:

    E grad Lhat_n(theta) - grad L(theta) = grad c(theta) / (n - 1) + O(n^{-2}),

so the squared error is ``||grad c||^2 / (n-1)^2 + O(n^{-3})``: exponent **-2**, not -1.  The paper's
claim holds (with room to spare); a measured squared-error exponent near -1 would have meant our derivation
was wrong, and one above -1 would have violated the paper.

Derivation.  ``E grad Lhat_n = grad E Lhat_n`` (differentiation under the expectation: inside the
integrability region of Lemma 7 the per-sample gradients are dominated by integrable exponential moments).
Theorem 1.1's n-law (``t1_1_population_loss``) gives
``E Lhat_n - L = c(theta)/(n-1) + O(n^{-2})`` with
``c = Z [tr(V Sigma V^T) + tr(P S P^T) + 2 tr((W* - P) S P^T)]``, ``P = V Sigma K^T``,
``S = (Sigma^{-1} - 2 K Sigma K^T)^{-1}``, ``Z = det(I - 2 Sigma^{1/2} K Sigma K^T Sigma^{1/2})^{-1/2}``; the
expansion is smooth in ``theta``, so differentiating it gives the gradient bias ``grad c/(n-1)``.
Second route (the paper's own): per query ``x_i`` (``mu_i = Sigma K^T x_i``, ``q_i = mu_i^T Sigma^{-1} mu_i``,
noise-free responses) the V-bias is ``-2 W* E[x_i (xbar_i - mu_i)^T] + 2 V E[xbar_i xbar_i^T - mu_i mu_i^T]`` and the
K-bias ``E[x_i (E_{-i}[u_i^T C_i] - u_i^{o T} Sigma)]`` with Lemma 8's ``u_i = -2 V^T e_i`` and softmax covariance
``C_i``; the conditional lemmas (our A.L13, A.L18, A.L22 and the tilted third moment of ``(xbar, C)``) give each
to O(1/n'), and ``E_x[e^{q} h(x)] = Z E_{N(0,S)} h`` with exact Gaussian moments of order <= 4 finishes it
(:func:`lemma_route_coefficient` below).  The two routes agree to rounding (checked below, and
sympy proves the V-block identity symbolically).

Evidence, top-down:

1. *symbolic*: the V-block identity above and the Gaussian integral ``E[e^{x^T M x} x x^T] = Z S`` (d = 1).
2. *numeric, two routes*: ``grad c`` (autograd) equals the lemma-route coefficient in both blocks (exact: both are
   closed forms; this checks our algebra, not the data).
3. *numeric, bias rate*: the squared bias, estimated without the Monte Carlo variance inflation by the
   U-statistic ``(1/(N(N-1))) sum_{k != l} <D_k, D_l>`` (``E ||Dbar||^2 = ||bias||^2 + tr Cov/N``), fitted as
   ``log y = a + b log(n-1) + k/(n-1)`` over n = 8..256; ``b`` is decided against the *derived* exponent -2 (verified
   when the interval lies inside -2 ± 0.5, half the distance to the paper's -1: ``decisions.RATE_MARGIN``),
   which can fail; the paper's envelope -1 is reported beside it (a pass puts the interval below -1.5).
4. *numeric, bias coefficient*: ``(n-1) x`` the bias, projected on each block of ``grad c``, fitted as
   ``a + b/m + c/m^2 + d/m^3`` (``LOSS_COEFFICIENT_ORDER``; why three terms: ``decisions``'s ledger); ``a``
   must equal ``||grad_V c||`` and ``||grad_K c||``, each inside half the distance to the value the derivation gives
   without a term it says is there (the controls' mutants, :func:`derived_alternatives`: the V-block without the
   covariance term, the K-block without the tilted third moment).  The loss gap ``(n-1)(E Lhat_n - L) -> c`` (pointwise
   convergence) is decided in the same check, inside half the distance to ``c`` without its covariance term
   ``Z tr(V Sigma V^T)`` (the same slip one level up: its V-gradient is the V-block mutant).  Why the control
   variate and three terms: without them the K-block's Monte Carlo drifts (0.25 vs 0.32 at n = 256, 0.63 +- 0.11 at
   n = 1024); the cause is the estimator (a softmax fluctuation shared by the queries of a batch, which the oracle loss
   does not cancel and whose scaled standard deviation grows like n^{1/2}), removed by an exact mean-zero linear control
   variate (``numerics.paper_a.moments.softmax_linear_terms``), plus a slow approach that an order-2 fit misfits.
   Diagnostic runs with the control variate (6000-8000 batches per n; not part of the checks): seed 0 point
   1, the scaled K-projection 0.112, 0.174, 0.207, 0.243, 0.280, 0.290, 0.301 at n = 8..512 against the derived 0.316;
   seed 1 point 1, 0.068, 0.098, 0.132, 0.158, 0.177, 0.197, 0.203 (two runs), 0.210 at n = 8..1024 against 0.217: the
   data approach the derived coefficient, slowly (8-10% below it at n = 256, 3% at n = 1024).
5. *negative controls*: the include-self softmax (a different bias, rejected by the coefficient check; the
   batches of :data:`INCLUDE_SELF_DATA`), the mean square in place of the squared mean (the single-batch error
   ``E ||grad Lhat_n - grad L||^2`` with noise, which decays like 1/n: the paper's Jensen step; rejected by the rate
   check's derived exponent; :data:`SINGLE_BATCH_ERROR`), the lemma route without the tilted third moment
   (:func:`lemma_route_without_third_moment`), and, symbolically, the V-coefficient with the covariance term dropped
   (:func:`v_route_without_covariance`).

Monte Carlo design.  Per fresh batch we record ``grad Lhat_n - grad L_o`` minus the linear softmax term, where
``L_o = (1/n) sum_i ||y_i - V Sigma K^T x_i||^2`` has ``E grad L_o = grad L`` exactly and the linear term has mean
exactly zero: control variates with an O(1/n) residual, so the O(1/n) bias is resolved with a few thousand batches at
every ``n`` (``numerics.paper_a.moments.gradient_bias_samples``; noise ``sigma = 0`` because ``E grad Lhat_n`` does
not depend on it).  The batches, the instance and the points are fixtures shared with A.T3 and A.T5
(``gradient_setups``).  Instances: ``random_instance(d=3, r=4, m_op=0.1)``
(``sigma_1(M*) = 0.1``, i.e. A3 with ``||B||_op ~ 0.32`` on the manifold, ``||B||_op^2 ~ 0.1``: the averaged
exponential moments ``E e^{k q}`` of the first two orders of the expansion (k <= 3) are finite,
``k ||B||_op^2 < 1/2``; those of order ``n^{-3}`` (k = 6) are not, one reason why the subleading behaviour is slow
and heavy-tailed), two points at Sigmatilde-distance 0.05 from the manifold: point 1 around a Haar-random point of
the manifold, point 2 around the point whose ``B`` is symmetric positive definite.  The scale ``sigma_1(M*)`` (0.04-0.25:
up to the instance before A.T3's miss), the distance and ``d`` are free choices shared with A.T3 and A.T5
(``gradient_setups.instance_choices``).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
import torch

from numerics import DTYPE
from numerics.paper_a import moments as mo
from numerics.paper_a.model import factor_B, sym_sqrt
from numerics.stats import decide_equal
from theorems.claim import Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.fixture import Parts, fixture
from theorems.paper_a.assumptions import A1, A2
from theorems.paper_a.softmax_bias.coefficients import loss_bias_gradient
from theorems.paper_a.softmax_bias.decisions import (COEFFICIENT_CAPTION, LOSS_COEFFICIENT_ORDER, SquaredNorm,
                                                     alternative_margin, coefficient_decisions, coefficient_plot,
                                                     headline, mean_square, rate_decisions)
from theorems.paper_a.softmax_bias.gradient_setups import (INSTANCE_A3, N_POINTS, NEAR_MANIFOLD, PROBE, PROBE_BATCHES,
                                                           SCALE_SCOPE, PilotChunks, ProbePoint, bias_law_conclusion,
                                                           blocks, gradient_data, gradient_instance, instance_choices)
from theorems.probe import probe
from theorems.symbolic import Derivation

ID = "A.T4"
STATEMENT = (
    r"\left\|\mathbb{E}\,\nabla\hat L_n(\theta)-\nabla L(\theta)\right\|_F^2=\tilde O\!\left(\frac{1}{n}\right),"
    r"\qquad \hat L_n(\theta)\to L(\theta)\ \text{pointwise}"
)
TITLE = "Expected empirical gradient ≈ population gradient (loss part)"
FIDELITY_NOTE = (
    "Shape exact (the reconstructed statement is exact in shape): the source text states an Õ(1/n) bound on the "
    "squared error of the expected empirical gradient. The norm (Frobenius) and the neighbourhood (distance 0.05, A3 "
    "with σ₁(M*) = 0.1) are our choices. The exact leading term ∇c/(n−1), hence the squared-error "
    "exponent −2, is our derivation (reconstructed); the checks decide that derived exponent (the paper's "
    "envelope −1 is reported beside it) and the derived coefficient in both blocks."
)
#: what we found beyond the verdict (``verify readme`` lists it)
FINDINGS = (
    "Loose by a factor 1/n: the squared bias of the expected empirical gradient decays with exponent −2 (decided "
    "against our derivation ∇c/(n−1) + O(n⁻²)), one power below the paper's Õ(1/n) envelope.",
    "The bias's leading coefficient ∇c (A.T1.1's n-law coefficient, differentiated; the same by a second route through "
    "the conditional lemmas) matches the Monte Carlo in both blocks; the K-block approaches it slowly (its scaled "
    "bias is still 8-10% below the limit at n = 256), which is why its fit keeps terms to 1/n³. Each block is decided "
    "inside half the distance to the mutant the derivation's controls name (V-block: covariance term dropped, ±50%; "
    "K-block: tilted third moment dropped, ±67-70% at seed 0): that, not a few percent, is what the check excludes.",
    "The K-block's fitted limit lies below the derived one at every instance examined (seeds 0-4, quick and standard "
    "alike: point 1 by 1-10%, point 2 at 4 of 5 seeds; standard seed 1: 0.196 ± 0.025 vs 0.217, inside the interval). "
    "The cause is the three-term fit's truncation error (the series is still rising at n = 256), not the derived "
    "K-block: refitting the same draws at 20 fresh instances "
    "(seeds 5000-5019), the relative deviation shrinks as the fit gains terms: point 1 −6.6%, −2.7%, −0.2% (two, "
    "three, four correction terms), point 2 −7.0%, −4.1%, −2.6% ± 1.2%; the V-block within 1% at every order.",
)

#: the two derivations of the coefficient are exact (closed forms in float64): they must agree to rounding
TWO_ROUTES_TOL = 1e-9
#: the pilot's cap on cost (``PilotChunks.sized``: a second look on more batches of this claim's own stream when the
#: pilot leaves a decision open, as many as its widest interval asks to reach its 95 %-power width): 4-fold the shared
#: batches, about a minute more per run at quick
PILOT_MAX_GROWTH = 4


#: wrong on purpose (control): the include-self softmax's batches, the query kept in its own context
INCLUDE_SELF_DATA = gradient_data.bind(include_self=True)


def more_batches(ctx: Context, data, chunk: int) -> list:
    """The pilot's later stages: the shared batches' number again, per n, of the same kind as ``data`` (leave-one-out
    or include-self), on this claim's own stream (chunk 1, 2, ...: growth g pools chunks 1..g-1; each chunk's draws
    depend on the run, the kind and its number alone)."""
    gen = ctx.generator(ID, "more batches", data.include_self, chunk)
    return [mo.gradient_bias_samples(data.V, data.K, data.Sigma, data.W, n, data.n_batches, gen,
                                     include_self=data.include_self) for n in data.ns]


@fixture(uses={"data": gradient_data})
def pilot_batches(ctx, data) -> PilotChunks:
    """``data`` with its later chunks drawn on demand and kept with the value: the rate and coefficient checks, which
    share it, draw each chunk once."""
    return PilotChunks(data, Parts(functools.partial(more_batches, ctx, data)))


#: wrong on purpose (control): the include-self softmax's batches and their chunks
INCLUDE_SELF_BATCHES = pilot_batches.bind(data=INCLUDE_SELF_DATA)


def pooled(batches: PilotChunks, growth: int) -> list[list]:
    """Per n, the shared samples and those of chunks 1..growth-1."""
    return batches.pooled(batches.data.samples, growth)


# ---------------------------------------------------------------------------
# 1. Symbolic derivation
# ---------------------------------------------------------------------------

def _sym_matrix(name: str, rows: int, cols: int, symmetric: bool = False) -> sp.Matrix:
    if symmetric:
        a, b, c = sp.symbols(f"{name}_11 {name}_12 {name}_22", real=True)
        return sp.Matrix([[a, b], [b, c]])
    return sp.Matrix(rows, cols, sp.symbols(f"{name}_1:{rows + 1}(1:{cols + 1})", real=True))


def v_route(Z, W, S, K, V, Sig):
    """The V-coefficient assembled from Lemmas 13 and 18: 2Z[VΣ + W*SKΣ − VΣKᵀSKΣ]."""
    return 2 * Z * (W * S * K * Sig - V * Sig * K.T * S * K * Sig) + 2 * Z * V * Sig


def v_route_without_covariance(Z, W, S, K, V, Sig):
    """Wrong on purpose (control): the V-coefficient without the VΣ term (forgetting Cov₋ᵢ x̄ in E x̄x̄ᵀ)."""
    return 2 * Z * (W * S * K * Sig - V * Sig * K.T * S * K * Sig)


def symbolic_derivation(route=v_route) -> Outcome:
    """∂c/∂V equals ``route`` (the lemma route's V-coefficient; the control passes
    :func:`v_route_without_covariance`), and the Gaussian integral the outer average needs."""
    D = Derivation()
    D.say("E ∇L̂ₙ = ∇ E L̂ₙ (differentiation under E inside Lemma 7's integrability region), and by the n-law of "
          "A.T1.1, E L̂ₙ − L = c(θ)/(n−1) + O(n⁻²); the gradient bias is therefore ∇c/(n−1) + O(n⁻²) and its "
          "square is O(n⁻²) ⊂ Õ(1/n).")
    Sig, S = _sym_matrix("Sigma", 2, 2, True), _sym_matrix("S", 2, 2, True)
    K, V, W = _sym_matrix("K", 2, 2), _sym_matrix("V", 2, 2), _sym_matrix("W", 2, 2)
    Z = sp.Symbol("Z", positive=True)
    P = V * Sig * K.T
    c = Z * ((V * Sig * V.T).trace() + (P * S * P.T).trace() + 2 * ((W - P) * S * P.T).trace())
    dcdV = sp.Matrix(2, 2, lambda i, j: sp.diff(c, V[i, j]))
    lemma_route = route(Z, W, S, K, V, Sig)
    D.say("Lemma route for the V-block: −2W* E[x(x̄−μ)ᵀ] + 2V E[x̄x̄ᵀ − μμᵀ] with E₋ᵢx̄ − μ = −e^q μ/(n−1), "
          "E₋ᵢx̄x̄ᵀ − μμᵀ = e^q(Σ − μμᵀ)/(n−1) and E_x[e^q x xᵀ] = Z S gives 2Z[VΣ + W*SKΣ − VΣKᵀSKΣ]/(n−1).")
    D.prove_zero("∂c/∂V equals the lemma-route V-coefficient (symbolic 2×2 Σ, S, K, V, W*)",
                 (dcdV - lemma_route).applyfunc(sp.expand),
                 shown=sp.Eq(sp.Derivative(sp.Symbol("c"), sp.MatrixSymbol("V", 2, 2)), sp.ImmutableMatrix(lemma_route),
                             evaluate=False))
    x = sp.Symbol("x", real=True)
    s, beta = sp.symbols("s beta", positive=True)
    m = 1 / (2 * s) - beta  # E exp(m x^2) finite iff m < 1/(2s), i.e. beta > 0 (Lemma 7 in d = 1)
    D.prove_equal("exponent of e^{m x²} φ_s(x): m x² − x²/(2s) = −β x²", m * x**2 - x**2 / (2 * s), -beta * x**2)
    lhs = sp.integrate(x**2 * sp.exp(-beta * x**2), (x, -sp.oo, sp.oo)) / sp.sqrt(2 * sp.pi * s)
    Zs, Ss = (1 - 2 * m * s) ** sp.Rational(-1, 2), 1 / (1 / s - 2 * m)
    ms = sp.Symbol("m", real=True)  # the display keeps m (the proof substitutes m = 1/(2s) − β)
    D.prove_equal("E[e^{m x²} x²] = Z·S with Z = (1−2ms)^{-1/2}, S = (1/s − 2m)^{-1}  (d = 1, x ~ N(0, s))",
                  sp.simplify(lhs), sp.simplify(Zs * Ss),
                  shown=sp.Eq(sp.Integral(x**2 * sp.exp(ms * x**2) * sp.exp(-x**2 / (2 * s)) / sp.sqrt(2 * sp.pi * s),
                                          (x, -sp.oo, sp.oo)),
                              (1 - 2 * ms * s) ** sp.Rational(-1, 2) / (1 / s - 2 * ms), evaluate=False))
    return D.outcome("gradient-bias coefficient: lemma route = ∇c")


# ---------------------------------------------------------------------------
# 2. The second route: the coefficient assembled from the conditional lemmas
# ---------------------------------------------------------------------------

def _route_parts(V, K, Sigma, W_star):
    """What both lemma routes share: ``Z`` (per instance), ``S``, ``P0`` (``mu = P0 x``), ``A = V^T V``, the
    quartic Gaussian moment and the trace, the V-coefficient, and the K-coefficient's terms without ``E[xbar^T A C]``."""
    M = K @ Sigma @ K.mT
    d = Sigma.shape[-1]
    R = sym_sqrt(Sigma)
    S = torch.linalg.inv(torch.linalg.inv(Sigma) - 2 * M)
    Z = torch.linalg.det(torch.eye(d, dtype=DTYPE) - 2 * R @ M @ R).rsqrt()[..., None, None]
    P0 = Sigma @ K.mT  # mu = P0 x
    A = V.mT @ V
    tr = lambda X: X.diagonal(dim1=-2, dim2=-1).sum(-1)[..., None, None]  # noqa: E731

    def quartic(Bm):  # E[x (x^T Bm x) x^T] under N(0, S)
        return tr(Bm @ S) * S + S @ (Bm + Bm.mT) @ S

    cV = 2 * Z * (W_star @ S @ P0.mT + V @ Sigma - V @ P0 @ S @ P0.mT)
    B1 = W_star.mT @ V @ P0
    cK = 2 * S @ W_star.mT @ V @ Sigma + 4 * quartic(B1) @ P0.mT
    return Z, S, P0, A, quartic, tr, cV, cK


def lemma_route_coefficient(V, K, Sigma, W_star):
    r"""Leading coefficient of ``E grad Lhat_n - grad L`` (times ``n - 1``) from the conditional lemmas, exactly.

    Per query ``x`` (``mu = Sigma K^T x``, ``q = x^T K Sigma K^T x``, ``A = V^T V``, noise-free responses), the
    delta method gives, to O(1/n'): ``E_{-i} xbar - mu = -e^q mu/n'``, ``E_{-i} xbar xbar^T - mu mu^T =
    e^q (Sigma - mu mu^T)/n'``, ``E_{-i} C - Sigma = -e^q (Sigma + 2 mu mu^T)/n'`` for the softmax covariance
    ``C = sum_j s_j x_j x_j^T - xbar xbar^T``, and the tilted third moment
    ``n' E[delta_a (Delta C)_bc] -> e^q (mu_a mu_b mu_c + Sigma_ab mu_c + Sigma_ac mu_b)``.  With Lemma 8's per-sample
    gradients ``-2 e xbar^T`` and ``x u^T C`` (``u = -2 V^T e``) this yields the per-query coefficients

    * V: ``e^q [2 W* x mu^T + 2 V (Sigma - mu mu^T)]``
    * K: ``e^q x r(x)`` with the row vector
      ``r = 2 (W* x)^T V (Sigma + 2 mu mu^T) - 2 mu^T A Sigma - 2 (mu^T A mu) mu^T + 2 tr(A Sigma) mu^T``

    (the last three terms of ``r`` come from ``E[xbar^T A C]``; :func:`lemma_route_without_third_moment` omits the
    tilted third moment's share ``(mu^T A mu) mu^T + tr(A Sigma) mu^T + mu^T A Sigma``, a negative control).  The outer
    average ``E_x[e^{x^T M x} h(x)] = Z E_{N(0,S)} h`` (``M = K Sigma K^T``) is done exactly with Gaussian moments up
    to order 4: ``E[x x^T B x x^T] = tr(B S) S + S (B + B^T) S``.  Returns (cV, cK), per instance.
    """
    Z, S, P0, A, quartic, tr, cV, cK = _route_parts(V, K, Sigma, W_star)
    B2 = P0.mT @ A @ P0
    cK = cK - 2 * S @ P0.mT @ A @ Sigma - 2 * quartic(B2) @ P0.mT + 2 * tr(A @ Sigma) * S @ P0.mT
    return cV, Z * cK


def lemma_route_without_third_moment(V, K, Sigma, W_star):
    """Wrong on purpose (control): :func:`lemma_route_coefficient` with ``xbar`` and ``C`` treated as uncorrelated
    (the tilted third moment ``E[delta^T A Delta C]`` dropped)."""
    Z, S, P0, A, quartic, tr, cV, cK = _route_parts(V, K, Sigma, W_star)
    B2 = P0.mT @ A @ P0
    cK = cK - 4 * S @ P0.mT @ A @ Sigma - 4 * quartic(B2) @ P0.mT
    return cV, Z * cK


def derived_alternatives(V, K, Sigma, W_star) -> tuple[dict, dict]:
    """What the coefficient check must exclude, per point: the values the derivation gives without a term it says is
    there, the mutants this module's controls name.  Returns ``(gradient, loss)``: name -> flattened
    ``(grad_V, grad_K)`` coefficient (``decisions.coefficient_decisions`` projects each on the derived block),
    and name -> ``c``.

    * V-block without the covariance term ``V Sigma`` (:func:`v_route_without_covariance`, the symbolic control);
    * K-block without the tilted third moment (:func:`lemma_route_without_third_moment`, the two-routes control);
    * ``c`` without ``Z tr(V Sigma V^T)``, the same covariance term in the loss (its V-gradient is ``2 Z V Sigma``, the
      term the V-block mutant drops).
    """
    c, gV, gK = loss_bias_gradient(V, K, Sigma, W_star)
    Z = _route_parts(V, K, Sigma, W_star)[0]  # (..., 1, 1)
    _, cK_third = lemma_route_without_third_moment(V, K, Sigma, W_star)
    cov = V @ Sigma
    gradient = {"V-block without the covariance term VΣ (symbolic control)": mo.flat(gV - 2 * Z * cov, gK),
                "K-block without the tilted third moment (two-routes control)": mo.flat(gV, cK_third)}
    trVSV = (cov @ V.mT).diagonal(dim1=-2, dim2=-1).sum(-1)
    loss = {"c without its covariance term Z tr(VΣVᵀ)": c - Z[..., 0, 0] * trVSV}
    return gradient, loss


#: how the two-routes check's summary names a route other than the claim's own
_ROUTE_NOTE = {lemma_route_without_third_moment: "(third-moment term dropped: control)"}


# ---------------------------------------------------------------------------
# 3. Numeric checks
# ---------------------------------------------------------------------------

def check_two_routes(ctx: Context, instance, route=lemma_route_coefficient) -> Outcome:
    """The full leading coefficient two ways: autograd of c (A.T1.1's n-law) and ``route`` (the lemma route,
    :func:`lemma_route_coefficient`: Lemmas 13, 18, the softmax covariance and its tilted third moment; the control
    passes :func:`lemma_route_without_third_moment`)."""
    Sigma, W, V, K = instance.Sigma, instance.W, instance.V, instance.K
    _, gV, gK = loss_bias_gradient(V, K, Sigma, W)
    cV, cK = route(V, K, Sigma, W)
    scale = float(mo.flat(gV, gK).norm(dim=-1).max())
    dev = float(mo.flat(cV - gV, cK - gK).norm(dim=-1).max()) / scale
    ev = Evidence(ctx)
    ev.exact("max relative difference ‖lemma route − ∇c‖/‖∇c‖", dev < TWO_ROUTES_TOL,
             f"relative difference {dev:.2e} between the two derivations of the bias coefficient "
             + _ROUTE_NOTE.get(route, ""), value=dev, claimed=f"0 (< {TWO_ROUTES_TOL:g})")
    for b in range(V.shape[0]):  # two norms of the derived coefficient (closed forms, no interval)
        ev.measure(f"point {b + 1}: ‖∇_V c‖ (derived)", float(gV[b].norm()))
        ev.measure(f"point {b + 1}: ‖∇_K c‖ (derived)", float(gK[b].norm()))
    return ev.outcome(grad_c_V=gV.tolist(), grad_c_K=gK.tolist(), lemma_V=cV.tolist(), lemma_K=cK.tolist())


def bias_draws(s):
    """A batch set's control-variated gradient bias draws, flattened (Frobenius coordinates)."""
    return mo.flat(*s.dL)


def single_batch_draws(s):
    """A batch set's single-batch errors ``grad Lhat_n - grad L`` (noisy responses, no control variate), flattened."""
    return mo.flat(*s.err_L)


#: the squared bias the claim bounds: the U-statistic of the control-variated draws
SQUARED_BIAS = SquaredNorm("‖E∇L̂ₙ − ∇L‖²_F", bias_draws)
#: wrong on purpose (control): the mean square of the single-batch error (the quantity the paper's proof bounds by
#: Jensen), which keeps its variance and decays like 1/n
SINGLE_BATCH_ERROR = SquaredNorm("E‖∇L̂ₙ − ∇L‖²_F", single_batch_draws, mean_square)


def check_rate(ctx: Context, batches: PilotChunks, error: SquaredNorm = SQUARED_BIAS) -> Outcome:
    """Exponent of the squared gradient bias = the derived -2 (the paper's envelope -1 reported); the control passes
    :data:`SINGLE_BATCH_ERROR` (the mean square in place of the squared mean, the single-batch error
    ``E||grad Lhat_n - grad L||^2``), which decays like 1/n.  Batches sized by a pilot (as :func:`check_coefficient`)."""
    data = batches.data

    def derived(m):
        _, gV, gK = loss_bias_gradient(data.V, data.K, data.Sigma, data.W)
        return mo.flat(gV, gK).pow(2).sum(-1).numpy() / m[:, None] ** 2

    def decide(ev, growth):
        draws = [torch.cat([error.draws(s) for s in per_n]) for per_n in pooled(batches, growth)]
        return rate_decisions(ev, data.ns, draws, error.name, error.estimate, derived=derived,
                              derived_label="‖∇c‖²/(n−1)²")

    ev, (vals, ses), pilot = batches.sized(ctx, decide, N_POINTS, PILOT_MAX_GROWTH)
    return ev.outcome(headline=headline(ev, f"exponent of {error.name} in n"), ns=data.ns, values=vals, se=ses,
                      **pilot)


def coefficient_decisions_of(ev: Evidence, data, dL, loss_gap) -> dict:
    """The coefficient decisions on the draws ``dL`` (per n: (N, B, p)) and ``loss_gap`` (per n: (N, B)), made on
    ``ev``: per point, both blocks of (n−1)·bias against ∇c and (n−1)(E L̂ₙ − L) against c (``3 B`` decisions)."""
    c, gV, gK = loss_bias_gradient(data.V, data.K, data.Sigma, data.W)
    target = mo.flat(gV, gK)
    alternatives, loss_alternatives = derived_alternatives(data.V, data.K, data.Sigma, data.W)
    B = target.shape[0]
    m = [n - 1 for n in data.ns]
    series = coefficient_decisions(ev, data.ns, dL, target, m, blocks(like=data), order=LOSS_COEFFICIENT_ORDER,
                                   alternatives=alternatives)
    for b in range(B):  # pointwise convergence of the loss, at the rate c/(n-1)
        y = np.array([(n - 1) * float(g[:, b].mean()) for n, g in zip(data.ns, loss_gap)])
        se = np.array([(n - 1) * float(g[:, b].std()) / math.sqrt(g.shape[0]) for n, g in zip(data.ns, loss_gap)])
        fit = mo.limit_fit(m, y, se, LOSS_COEFFICIENT_ORDER)
        cb = float(c[b])
        margin = alternative_margin(cb, {k: float(v[b]) for k, v in loss_alternatives.items()})
        d = decide_equal(float(fit.coef[0]), float(fit.se[0]), cb, ev.z, margin=margin)
        ev.decide(f"point {b + 1}: (n−1)(E L̂ₙ − L) → c", d, value=float(fit.coef[0]),
                  line=f"point {b + 1} loss gap: {float(fit.coef[0]):.4g} {d} (excludes {margin.excludes})")
    return series


def check_coefficient(ctx: Context, batches: PilotChunks) -> Outcome:
    """(n−1)·bias → ∇c (V- and K-block) and (n−1)(E L̂ₙ − L) → c, per point, on the batches ``batches`` (leave-one-out;
    the control passes :data:`INCLUDE_SELF_BATCHES`).

    Sized by a pilot in two looks: the shared batches first, then, unless every decision is decided there, more of
    the same kind on this claim's own stream, as many as the pilot's widest interval asks, up to ``PILOT_MAX_GROWTH``
    (:meth:`PilotChunks.sized`); each look on all batches pooled."""
    data = batches.data

    def decide(ev, growth):
        per_n = pooled(batches, growth)
        dL = [torch.cat([mo.flat(*s.dL) for s in group]) for group in per_n]
        loss_gap = [torch.cat([s.loss_gap for s in group]) for group in per_n]
        return coefficient_decisions_of(ev, data, dL, loss_gap)

    ev, series, pilot = batches.sized(ctx, decide, 3 * N_POINTS, PILOT_MAX_GROWTH)
    if ev.plots:
        ev.figure("Gradient bias × (n−1) → ∇c" + (" (include-self control)" if data.include_self else ""),
                  coefficient_plot(data.ns, series, ev.z, "(n−1) ⟨E∇L̂ₙ − ∇L, e⟩"), COEFFICIENT_CAPTION)
    B_op = torch.linalg.matrix_norm(factor_B(data.K, data.Sigma), ord=2)
    for b, v in enumerate(B_op.tolist()):
        ev.measure(f"point {b + 1}: ‖B‖op (A3 scope)", v)
    target = mo.flat(*loss_bias_gradient(data.V, data.K, data.Sigma, data.W)[1:])
    return ev.outcome(headline=headline(ev, "(n−1)·bias → ∇c per block, (n−1)(E L̂ₙ − L) → c"), ns=data.ns,
                      include_self=data.include_self, **pilot,
                      grad_c_norm=target.norm(dim=-1).tolist())


# ---------------------------------------------------------------------------
# 4. The probe: across A3's scale and the distance from the manifold (gradient_setups' search and rule)
# ---------------------------------------------------------------------------

def probe_draws(point: ProbePoint, gen: torch.Generator) -> torch.Tensor:
    """The control-variated gradient differences (mean: the bias ``E grad Lhat_n - grad L``) of ``PROBE_BATCHES``
    batches at the probed point, flattened (Frobenius coordinates), (PROBE_BATCHES, 1, p)."""
    s = mo.gradient_bias_samples(point.V, point.K, point.Sigma, point.W, point.n, PROBE_BATCHES, gen, n_err=1)
    return mo.flat(*s.dL)


def probe_leading(point: ProbePoint) -> torch.Tensor:
    """The derived leading term ``grad c / (n - 1)`` at the probed point, flattened, (1, p)."""
    _, gV, gK = loss_bias_gradient(point.V, point.K, point.Sigma, point.W)
    return mo.flat(gV, gK) / (point.n - 1)


def probe_leading_without_covariance(point: ProbePoint) -> torch.Tensor:
    """Wrong on purpose (control): the leading term with the V-block's covariance term ``2 Z V Sigma`` dropped (the
    symbolic control's slip, :func:`v_route_without_covariance`, as the coefficient check's alternative)."""
    _, gV, gK = loss_bias_gradient(point.V, point.K, point.Sigma, point.W)
    Z = _route_parts(point.V, point.K, point.Sigma, point.W)[0]
    return mo.flat(gV - 2 * Z * point.V @ point.Sigma, gK) / (point.n - 1)


def probe_conclusion(inst, alpha_each, leading=probe_leading):
    """The bias at the drawn instance is its derived leading term (``gradient_setups.bias_law_conclusion``: within
    ``PROBE_SHARE`` of its norm); the control passes :func:`probe_leading_without_covariance`."""
    return bias_law_conclusion(inst, alpha_each, probe_draws, leading)


# ---------------------------------------------------------------------------
# 5. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID, title=TITLE, statement=STATEMENT, fidelity="exact", fidelity_note=FIDELITY_NOTE, findings=FINDINGS,
    assumptions=(A1, A2, INSTANCE_A3, NEAR_MANIFOLD, SCALE_SCOPE),
    checks=(Check("derivation", "symbolic", "∂c/∂V equals the V-coefficient assembled from Lemmas 13 and 18; "
                  "Gaussian integral E[e^{xᵀMx} x xᵀ] = Z S", symbolic_derivation),
            Check("coefficient-two-routes", "numeric", "∇c (autograd of A.T1.1's loss-bias coefficient) equals the "
                  "coefficient assembled from the conditional lemmas (exact Gaussian moments), V and K blocks",
                  check_two_routes, stochastic=False, uses={"instance": gradient_instance}),
            Check("bias-rate", "numeric", "Exponent of the squared gradient bias (U-statistic, MC variance removed) "
                  "= the derived −2 (the paper's envelope −1 reported)", check_rate, uses={"batches": pilot_batches}),
            Check("bias-coefficient", "numeric", "(n−1)·bias → ∇c in both blocks and (n−1)(E L̂ₙ − L) → c",
                  check_coefficient, uses={"batches": pilot_batches}),
            probe("Hypothesis across A3's scale σ₁(M*) (to 0.4; our derived term needs ‖B‖op² < "
                  "1/6 at θ) and the distance from Mfold (to 2.5ρ), d ≤ 3, n ∈ {32, 64}: the bias is its derived "
                  "leading term ∇c/(n−1) within half its norm (U-statistic of a Monte Carlo per instance)", PROBE,
                  conclusion=probe_conclusion)),
    controls=(Control("symbolic: covariance term dropped", "derivation",
                      "V-coefficient without the VΣ term (forgetting Cov₋ᵢ x̄ in E x̄x̄ᵀ)", {"route": v_route_without_covariance}),
              Control("third moment dropped", "coefficient-two-routes",
                      "lemma route without the tilted third moment E[δᵀA ΔC] (treating x̄ and C as uncorrelated)",
                      {"route": lemma_route_without_third_moment}),
              Control("mean square in place of squared mean", "bias-rate",
                      "the single-batch error E‖∇L̂ₙ − ∇L‖² (variance included: the paper's Jensen step) decays like "
                      "1/n; the derived exponent −2 must reject it", {"error": SINGLE_BATCH_ERROR}),
              Control("include-self softmax", "bias-coefficient", "the query's own sample kept in its softmax context",
                      {"batches": INCLUDE_SELF_BATCHES}),
              Control("probe: covariance term dropped", "probe", "the leading term with the V-block's covariance "
                      "term 2ZVΣ dropped: the probe must find an instance whose bias it misses",
                      {"mutant": {"leading": probe_leading_without_covariance}})),
    free_choices=instance_choices({"coefficient-two-routes": {"instance": gradient_instance},
                                   "bias-rate": {"batches": pilot_batches},
                                   "bias-coefficient": {"batches": pilot_batches}}),
)
