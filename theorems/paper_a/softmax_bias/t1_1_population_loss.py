r"""A.T1.1 — closed form of the population loss (Goel, Soltanolkotabi, Bartlett 2026, Theorem 1.1).

Statement.  For ``x ~ N(0, Sigma)``, ``y = W* x + eps``, ``eps ~ N(0, sigma^2 I_r)``,

    L(theta) = E || y - V E_{x'}[x' e^{x^T K x'}] / E_{x'}[e^{x^T K x'}] ||^2
             = || (V Sigma K^T - W*) Sigma^{1/2} ||_F^2 + r sigma^2.

Evidence, top-down:

1. *symbolic*: the Gaussian tilting identity ``E[x e^{a.x}] / E[e^{a.x}] = Sigma a``
   by completing the square (sympy, symbolic 2x2 covariance) and by direct
   integration in one dimension; then the closed form by exact Gaussian moments.
2. *numeric, closed form*: a nested Monte Carlo estimate of definition (2)
   (``numerics.paper_a.model.mc_population_loss``: jackknifed ratio, noise
   integrated exactly) against the closed form on several instances, an equivalence decision per instance
   (Bonferroni over instances) whose margin is half the distance to the nearer of the controls' two mutants there
   (instances where a mutant lies within 5% of ``L`` are redrawn: no Monte Carlo tells those apart).
3. *numeric, n-law*: the leave-one-out empirical loss approaches ``L`` as
   ``E Lhat_n - L = c/(n-1) + O(n^-2)`` with ``c`` derived below; the fitted
   log-log slope (claimed -1, margin 1/4: half the distance to the ratio's ``n^{-1/2}`` fluctuation order) per
   instance, and the fitted leading coefficients over the derived ``c``, pooled over the instances (claimed 1, margin
   half the distance to ``1/Z``: the coefficient without the outer integral's factor), are decided; each instance's
   coefficient is reported, and fails the check when its interval lies wholly outside that band (a pooled ratio
   alone would pass errors of opposite sign that average out).
4. *probe*: hypothesis draws dimensions, covariances, ``W*``, ``theta``, noise from
   ``theorems.strategies`` pieces (a counterexample shrinks to small explicit matrices), with
   ``||B||_op`` in the region where the nested Monte Carlo's error bar is honest (finite fourth moment,
   ``||B||_op^2 < 1/8``): there the closed form must match.  An instance the estimator cannot decide
   (heavy-tailed or outside its scope, possible only at the boundary by rounding) returns "not decided".
   Outside the scope nothing is compared: the estimator's scope flag against a recomputation of the same
   condition ``||B||_op < 1/2`` would be circular; the divergence outside Lemma 7's region is A.L7's claim.
5. *negative controls*: a closed form with the ``Sigma`` factor dropped, one with the
   ``Sigma^{1/2}`` weight misplaced (unweighted Frobenius norm), and the include-self
   softmax in the n-law (:func:`include_self_gaps`).

Free choices (the closed form and the n-law hold at every θ; the checks' instance families are ours): the closed-form
filter's threshold ``CF_MIN_MUTANT_GAP`` and the lower end of its ``‖B‖op`` range ``CF_B_OP``, and the lower end of the
n-law's ``NLAW_B_OP``; the upper ends stay at 0.35, inside the region where the Monte Carlo's error bar is honest.

Derivation of the n-law coefficient (ours; label: reconstructed).  Fix the query
``x`` (so ``a = K^T x``) and let ``m = n - 1`` other samples give
``N = (1/m) sum x_j w_j``, ``D = (1/m) sum w_j``, ``w_j = e^{a.x_j}``, ratio ``r = N/D``
estimating ``mu = Sigma a``.  Tilting by ``2a`` gives ``E[w^2] = e^{2 a'Sigma a}``,
``E[x w^2] = 2 Sigma a e^{2 a'Sigma a}``, ``E[x x' w^2] = (Sigma + 4 Sigma a a' Sigma) e^{2a'Sigma a}``;
with ``E[w] = e^{a'Sigma a/2}`` the delta method yields
``E[r] - mu = -(1/m) e^{a'Sigma a} Sigma a`` and ``Cov r = (1/m) e^{a'Sigma a} (Sigma + Sigma a a' Sigma)``
to first order.  The noise is independent of ``r``, so
``E Lhat_n - L = E||V(r - mu)||^2 - 2 E<(W* - P) x, V(E r - mu)>`` with ``P = V Sigma K^T``, i.e.
``(1/m) E_x[e^{x'Mx} (tr(V Sigma V') + x'P'Px + 2 x'(W*-P)'Px)]``, ``M = K Sigma K'``.
The outer Gaussian integral with weight ``e^{x'Mx}`` is ``Z E_{N(0,S)}[...]`` with
``S = (Sigma^{-1} - 2M)^{-1}``, ``Z = det(I - 2 Sigma^{1/2} M Sigma^{1/2})^{-1/2}``, finite iff
``||B||_op^2 < 1/2`` (Lemma 7, ``B = Sigma^{1/2} K Sigma^{1/2}``).  Hence
``c = Z [tr(V Sigma V') + tr(P S P') + 2 tr((W* - P) S P')]``
(``loo_bias_coefficient`` in ``coefficients``: A.T3 and A.T4 differentiate it).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st
from scipy.stats import norm as normal_law

from numerics import DTYPE
from numerics.paper_a import model
from numerics.stats import Margin, decide_equal, decide_exponent, loglog_slope, weighted_fit, width_for_power
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome, ScopeFilter
from theorems.evidence import Evidence
from theorems.paper_a.assumptions import A1
from theorems.paper_a.displays import NORMAL, expect, norm
from theorems.paper_a.softmax_bias.coefficients import loo_bias_coefficient, std_normal_expectation
from theorems.pilot import LOOKS, planned_growth, two_looks
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.strategies import dims, matrix, readable, spd, tensor, with_singular_values
from theorems.symbolic import Derivation

ID = "A.T1.1"

STATEMENT = (
    r"L(\theta)=\mathbb{E}\left\|y-V\,\frac{\mathbb{E}_{x'}[x'e^{x^\top Kx'}]}{\mathbb{E}_{x'}[e^{x^\top Kx'}]}\right\|^2"
    r"=\left\|(V\Sigma K^\top-W^*)\Sigma^{1/2}\right\|_F^2+r\sigma^2"
)
TITLE = "Closed form of the population loss"
FIDELITY_NOTE = (
    "The source text states the population loss as a ratio of expectations and its closed form up to "
    "notation; our reconstruction checked it by Monte Carlo. The n-law coefficient c and the "
    "Monte Carlo scope region are our derivations (reconstructed), written out in this module's docstring. "
    "The Monte Carlo checks and the probe draw θ with ‖B‖op² < 1/8, where the estimator's error bar is honest; the "
    "closed form is an exact Gaussian identity for every θ (sympy), which the Monte Carlo cannot test beyond that."
)

#: Monte Carlo vs closed form (an exact identity, proved by sympy): each instance's margin is half the distance from the
#: closed form to the nearer of the two mutants the controls test (Σ dropped from the tilted mean; the Σ^{1/2} weight
#: misplaced), read off the instance, never off the Monte Carlo, and the same whichever closed form a run decides (so a
#: control's mutant sits at least two margins from the truth)
CF_MARGIN_RULE = ("the nearer control mutant at this instance (Σ dropped from the tilted mean, or the Σ^{1/2} weight "
                  "misplaced): half the distance from the closed form to it")
#: closed-form instances are redrawn until the nearer mutant moves L by at least 5% (margin ≥ 2.5% of L): where a
#: mutant nearly coincides with the closed form no Monte Carlo can tell them apart (a tenth of the family is within
#: 1%); about half of the family qualifies (design generator, 3600 instances)
CF_MIN_MUTANT_GAP = 0.05
#: candidates drawn per group (one covariance) and redraws of the group before the check gives up (inconclusive):
#: 12 candidates hold 3 qualifying ones 94% of the time (design generator)
CF_CANDIDATES, CF_MAX_REDRAWS = 12, 20
CF_SCOPE = ScopeFilter(
    "closed-form instances with a distant mutant",
    f"the closed-form check's instances kept only when the nearer control mutant moves L by ≥ {CF_MIN_MUTANT_GAP:.0%} "
    f"(rejection sampling among {CF_CANDIDATES} candidates per covariance)",
    why="where a mutant nearly coincides with the closed form no Monte Carlo tells them apart, so the margin (half "
        "that distance) could not be decided; the paper claims the closed form for every θ")
#: the probe's z-test allows for float64 rounding in the Monte Carlo mean (relative; ~4000 additions of eps 2e-16)
ROUNDING = 1e-9
#: closed-form check: instance groups (d = 2, 3, 4 cycling) per budget, three instances each, and the nested Monte
#: Carlo's outer x inner draws per budget (the inner jackknife leaves an O(m^-2) bias far below the SE)
CF_GROUPS, CF_INSTANCES = (2, 4, 6), 3
CF_OUTER, CF_INNER = (12000, 40000, 100000), (128, 256, 512)
#: closed-form power: the outer draws grow until every interval is predicted at the width giving its decision 95%
#: power at the claim's value (pilot: the standard errors only), at most CF_MAX_GROWTH-fold
CF_TARGET_WIDTH = 1.0
CF_MAX_GROWTH = 8
#: closed-form instances: ‖B‖op uniform on [0.15, 0.35], inside the light-tailed region ‖B‖op² < 1/8
CF_B_OP = (0.15, 0.35)
#: n-law: context sizes per budget (doublings from 8), data sets per unit of n (keeps every point's relative error
#: similar), and keys with large self-scores at ‖B‖op in [0.3, 0.35] (the gap is largest there, still light-tailed)
NLAW_NS = ([8, 16, 32, 64, 128], [8, 16, 32, 64, 128], [8, 16, 32, 64, 128, 256])
NLAW_PER_N = (150, 300, 400)
NLAW_B_OP = (0.3, 0.35)
#: n-law power: the pilot's draws grow until every interval is predicted at 0.8 of the width giving its decision 95%
#: power at the claim's value (about 99 % power, room for the pilot's own noise and the fit model's ~1 % offset; the
#: coefficient's margin is 5-7% of c), at most NLAW_MAX_GROWTH-fold (the cost: ledger)
NLAW_TARGET_WIDTH = 0.8
NLAW_MAX_GROWTH = 4
#: the slope is fitted from n = 16 on, where the O(n^-2) term moves it by a few hundredths
SLOPE_FROM_N = 16
#: the gap's exponent is -1 (a bias of order 1/n); the nearest rate the claim rules out is n^{-1/2}, the order of the
#: self-normalized ratio's fluctuation (a gap driven by the estimator's noise rather than its bias): half the distance
SLOPE_MARGIN = Margin(0.25, excludes="exponent -1/2 (a gap of the order of the ratio's n^{-1/2} fluctuation, not its "
                      "1/n bias); half the distance from -1")
#: a pooled ratio averages deviations of opposite sign toward 1 (a mutant at -30 %, +74 % and +182 % of c pooled to
#: 1.0066); under the claim every instance's ratio is 1, so an instance whose interval lies wholly outside the pooled
#: band 1 ± m is evidence against it at no more than its share of alpha, while one that merely straddles the band is
#: reported (deciding each instance equal would need ~9x the draws). Only fails are decided per instance.
FALSIFY_PER_INSTANCE = True
#: the leading coefficient c = Z [tr(VΣVᵀ) + tr(PSPᵀ) + 2 tr((W* − P)SPᵀ)] carries the factor Z = det(I −
#: 2Σ^{1/2}MΣ^{1/2})^{-1/2}
#: of the outer Gaussian integral with weight e^{xᵀMx}; the claim must exclude c without it (c/Z).  Decided on the
#: ratio fitted/derived pooled over the instances (inverse-variance weights): the alternative puts every ratio at 1/Z_i
#: (Z_i = 1.13-1.16 at ‖B‖op 0.3-0.35), the pooled one at least min_i (1 − 1/Z_i) below 1; the margin is half that,
#: read off the instances (ledger: why pooled)
COEFFICIENT_MARGIN_RULE = ("the coefficients without the outer integral's factor Z = det(I − 2Σ^{1/2}KΣKᵀΣ^{1/2})^{-1/2} "
                           "(ratio 1/Z_i at every instance): half the smallest distance min_i (1 − 1/Z_i) from 1")
#: probe: examples per budget; ‖B‖op drawn on [0.05, 0.35] (the light-tailed region, where the Monte Carlo decides);
#: each instance's nested Monte Carlo draws 4000 outer x 128 inner points
PROBE_EXAMPLES = (25, 100, 300)
PROBE_B_OP = (0.05, 0.35)
PROBE_OUTER, PROBE_INNER = 4000, 128
#: the probe is inconclusive unless 20 instances were decided (80% of the quick budget's 25: only rounding at the
#: light-tailed boundary leaves one undecided)
PROBE_MIN_DECIDED = 20


# ---------------------------------------------------------------------------
# 1. Symbolic derivation
# ---------------------------------------------------------------------------

def paper_closed_form(E, S):
    """The paper's closed form of ``L - r sigma^2`` for the error map ``E``: ``tr(E Sigma E^T)``."""
    return (E * S * E.T).trace()


def closed_form_without_sigma(E, S):
    """Wrong on purpose (control): ``tr(E E^T)``, the Σ factor dropped."""
    return (E * E.T).trace()


def symbolic_derivation(closed_form=paper_closed_form) -> Outcome:
    """Tilting identity and closed form, proved by sympy.

    ``closed_form(E, Sigma)`` is the candidate expression for ``L - (noise)`` given the
    error map ``E = P - W*``; by default the paper's ``||E Sigma^{1/2}||_F^2 = tr(E Sigma E^T)``
    (:func:`paper_closed_form`).  The control passes :func:`closed_form_without_sigma`.
    """
    D = Derivation()
    # -- tilting identity, 2x2 symbolic covariance: complete the square
    s11, s22 = sp.symbols("Sigma_11 Sigma_22", positive=True)
    s12 = sp.Symbol("Sigma_12", real=True)
    Sig = sp.Matrix([[s11, s12], [s12, s22]])
    a = sp.Matrix(sp.symbols("a_1 a_2", real=True))
    x = sp.Matrix(sp.symbols("x_1 x_2", real=True))
    Si = Sig.inv()
    lhs = (-(x.T * Si * x) / 2 + a.T * x)[0]
    rhs = (-((x - Sig * a).T * Si * (x - Sig * a)) / 2 + (a.T * Sig * a) / 2)[0]
    D.say("Gaussian density of x ~ N(0, Σ) times the tilt e^{a·x}; complete the square in the exponent:")
    xs, as_ = sp.MatrixSymbol("x", 2, 1), sp.MatrixSymbol("a", 2, 1)
    Ss = sp.MatrixSymbol("Sigma", 2, 2)
    shown = sp.Eq(-sp.Rational(1, 2) * xs.T * Ss.I * xs + as_.T * xs,
                  -sp.Rational(1, 2) * (xs - Ss * as_).T * Ss.I * (xs - Ss * as_) + sp.Rational(1, 2) * as_.T * Ss * as_,
                  evaluate=False)
    D.prove_equal("exponent of e^{a·x} φ_Σ(x) equals that of N(Σa, Σ) up to the constant a'Σa/2 "
                  "(proved entrywise for a symbolic 2×2 Σ)", lhs, rhs, shown=shown)
    D.say("Hence e^{a·x} φ_Σ(x) = e^{a'Σa/2} φ(x; Σa, Σ): E[e^{a·x}] = e^{a'Σa/2} and "
          "E[x e^{a·x}] = Σa e^{a'Σa/2}, so the ratio of expectations is the tilted mean Σa.")
    # -- the same in one dimension by direct integration
    t, al = sp.symbols("t alpha", real=True)
    s = sp.Symbol("s", positive=True)
    dens = sp.exp(-t**2 / (2 * s**2)) / sp.sqrt(2 * sp.pi * s**2)
    num = sp.integrate(t * sp.exp(al * t) * dens, (t, -sp.oo, sp.oo))
    den = sp.integrate(sp.exp(al * t) * dens, (t, -sp.oo, sp.oo))
    shown = sp.Eq(sp.Integral(t * sp.exp(al * t) * dens, (t, -sp.oo, sp.oo))
                  / sp.Integral(sp.exp(al * t) * dens, (t, -sp.oo, sp.oo)), s**2 * al, evaluate=False)
    D.prove_equal("direct integration in d = 1: E[x e^{αx}]/E[e^{αx}] = s²α", sp.simplify(num / den), s**2 * al,
                  shown=shown)
    # -- with a = K^T x the population predictor is V Σ K^T x; expected loss by exact moments
    D.say("With a = Kᵀx the population predictor is V Σ Kᵀ x =: P x.  Write x = C z (Σ = C Cᵀ), eps = σ e, "
          "z, e standard normal, and E = P − W*; the loss is E‖e σ − E C z‖² with exact Gaussian moments.")
    c11, c22 = sp.symbols("C_11 C_22", positive=True)
    c21 = sp.Symbol("C_21", real=True)
    C = sp.Matrix([[c11, 0], [c21, c22]])
    Emat = sp.Matrix(2, 2, sp.symbols("E_11 E_12 E_21 E_22", real=True))
    z = list(sp.symbols("z_1 z_2", real=True))
    e = list(sp.symbols("e_1 e_2", real=True))
    sig = sp.Symbol("sigma", positive=True)
    resid = sp.Matrix(e) * sig - Emat * C * sp.Matrix(z)
    expected = std_normal_expectation((resid.T * resid)[0], z + e)
    candidate = closed_form(Emat, C * C.T)
    Es, Cs = sp.MatrixSymbol("E", 2, 2), sp.MatrixSymbol("C", 2, 2)
    ev, zv = sp.MatrixSymbol("e", 2, 1), sp.MatrixSymbol("z", 2, 1)
    shown = sp.Eq(expect(norm(sp.MatAdd(sig * ev, -Es * Cs * zv)) ** 2, NORMAL(0, sp.Identity(4))),
                  sp.Trace(Es * Cs * Cs.T * Es.T) + 2 * sig**2, evaluate=False)
    D.prove_equal("E‖y − P x‖² = tr(E Σ Eᵀ) + r σ² = ‖(VΣKᵀ − W*)Σ^{1/2}‖²_F + r σ²  (r = 2, proved for symbolic "
                  "E and lower-triangular C)", expected, candidate + 2 * sig**2, shown=shown)
    return D.outcome("tilting identity and closed form derived")


# ---------------------------------------------------------------------------
# 2. Instances (all constants stated here) and the wrong closed forms of the controls
# ---------------------------------------------------------------------------

def make_instances(gen: torch.Generator, n_inst: int, d: int, B_op_range=CF_B_OP, psd_keys=False):
    r"""Random instances sharing one covariance (batched along dim 0).

    ``Sigma = A A^T / d + 0.3 I`` with ``A`` iid N(0,1) (anisotropic, condition number
    typically 5-30); ``W*`` iid ``N(0, 1/d)`` with ``r = d + 1``; ``V`` iid N(0,1);
    ``K`` iid N(0,1) (or, with ``psd_keys``, ``Sigma^{-1/2} (G G^T + I/2) Sigma^{-1/2}`` so that
    self-scores are large), rescaled so ``||B||_op`` is uniform on ``B_op_range``;
    noise ``sigma`` uniform on [0.1, 1].
    """
    r = d + 1
    A = torch.randn(d, d, generator=gen, dtype=DTYPE)
    Sigma = A @ A.T / d + 0.3 * torch.eye(d, dtype=DTYPE)
    W = torch.randn(n_inst, r, d, generator=gen, dtype=DTYPE) / math.sqrt(d)
    V = torch.randn(n_inst, r, d, generator=gen, dtype=DTYPE)
    K = torch.randn(n_inst, d, d, generator=gen, dtype=DTYPE)
    if psd_keys:
        Si = model.sym_inv_sqrt(Sigma)
        K = Si @ (K @ K.mT + 0.5 * torch.eye(d, dtype=DTYPE)) @ Si
    target = B_op_range[0] + (B_op_range[1] - B_op_range[0]) * torch.rand(n_inst, generator=gen, dtype=DTYPE)
    K = K * (target / torch.linalg.matrix_norm(model.factor_B(K, Sigma), ord=2))[:, None, None]
    sigma = float(0.1 + 0.9 * torch.rand((), generator=gen, dtype=DTYPE))
    return Sigma, W, V, K, sigma


def population_loss_dropped_sigma(V, K, Sigma, W_star, sigma):
    """Wrong on purpose: the tilted mean taken as K^T x instead of Sigma K^T x."""
    E = V @ K.mT - W_star
    return (E @ Sigma * E).sum((-1, -2)) + W_star.shape[-2] * sigma**2


def population_loss_unweighted(V, K, Sigma, W_star, sigma):
    """Wrong on purpose: the Sigma^{1/2} weight misplaced (plain Frobenius norm of the error map)."""
    E = model.attention_map(V, K, Sigma) - W_star
    return E.pow(2).sum((-1, -2)) + W_star.shape[-2] * sigma**2


def pooled(m1, se1, n1: int, m2, se2, n2: int):
    """Mean and standard error of two iid samples' pooled draws, from each one's mean and standard error (ddof 1)."""
    n = n1 + n2
    mean = (n1 * m1 + n2 * m2) / n
    sumsq = (n1 - 1) * n1 * se1.pow(2) + n1 * m1.pow(2) + (n2 - 1) * n2 * se2.pow(2) + n2 * m2.pow(2)
    var = (sumsq - n * mean.pow(2)) / (n - 1)
    return mean, (var.clamp_min(0) / n).sqrt()


#: the mutants the closed-form controls decide: their distance from L at an instance sets its margin (CF_MARGIN_RULE)
CF_MUTANTS = (population_loss_dropped_sigma, population_loss_unweighted)


def nearest_mutant_gap(V, K, Sigma, W_star, sigma) -> tuple[torch.Tensor, torch.Tensor]:
    """Per instance: the closed form ``L`` and its distance to the nearer of ``CF_MUTANTS`` (absolute)."""
    cf = model.population_loss(V, K, Sigma, W_star, sigma)
    return cf, torch.stack([(f(V, K, Sigma, W_star, sigma) - cf).abs() for f in CF_MUTANTS]).min(0).values


def closed_form_instances(gen: torch.Generator, n_inst: int, d: int, ev=None, min_gap: float = CF_MIN_MUTANT_GAP,
                          B_op_range=CF_B_OP):
    """``n_inst`` instances of :func:`make_instances` (one covariance; ``‖B‖op`` on ``B_op_range``) whose nearer
    mutant is at least ``min_gap`` (``CF_MIN_MUTANT_GAP``) of ``L`` away: the first qualifying ones of ``CF_CANDIDATES``
    candidates, the group redrawn (new covariance) until enough qualify, at most ``CF_MAX_REDRAWS`` times.  Returns
    ``(Sigma, W, V, K, sigma, half-widths)``, the half-widths being each instance's margin (half its mutant distance),
    or None.  The candidates rejected are recorded on ``ev`` under :data:`CF_SCOPE`."""
    for _ in range(CF_MAX_REDRAWS):
        Sigma, W, V, K, sigma = make_instances(gen, CF_CANDIDATES, d, B_op_range=B_op_range)
        cf, gap = nearest_mutant_gap(V, K, Sigma, W, sigma)
        ok = gap >= min_gap * cf.abs()
        if ev is not None:
            ev.scope(CF_SCOPE, int((~ok).sum()), CF_CANDIDATES)
        keep = torch.nonzero(ok).flatten()[:n_inst]
        if len(keep) == n_inst:
            return Sigma, W[keep], V[keep], K[keep], sigma, gap[keep] / 2
    return None


# ---------------------------------------------------------------------------
# 3. Numeric check: Monte Carlo of definition (2) vs the closed form
# ---------------------------------------------------------------------------

def check_closed_form(ctx: Context, closed_form=model.population_loss, min_mutant_gap: float = CF_MIN_MUTANT_GAP,
                      B_op_range=CF_B_OP) -> Outcome:
    """Per instance: the nested Monte Carlo estimate equals ``closed_form`` to within half the distance from Theorem
    1.1's closed form to the nearer control mutant at that instance (``decide_equal``, ``CF_MARGIN_RULE``, Bonferroni
    over the instances); the controls pass :func:`population_loss_dropped_sigma` or :func:`population_loss_unweighted`
    (the margins are the same: a mutant lies at least two margins from the truth).  ``min_mutant_gap`` and
    ``B_op_range`` are the instance family's (free choices: :func:`closed_form_instances`)."""
    gen = ctx.generator(ID, "closed-form")
    n_groups, n_inst = ctx.pick(*CF_GROUPS), CF_INSTANCES
    n_outer, n_inner = ctx.pick(*CF_OUTER), ctx.pick(*CF_INNER)
    ev = Evidence(ctx, decisions=n_groups * n_inst)
    z = ev.z
    rows, statuses, growths = [], [], []
    for gi in range(n_groups):
        drawn = closed_form_instances(gen, n_inst, d=2 + gi % 3, ev=ev, min_gap=min_mutant_gap, B_op_range=B_op_range)
        if drawn is None:
            ev.status("inconclusive", f"group {gi + 1}: fewer than {n_inst} of {CF_CANDIDATES} candidates had a mutant "
                      f"{min_mutant_gap:.0%} of L away in {CF_MAX_REDRAWS} draws")
            continue
        Sigma, W, V, K, sigma, half = drawn
        est = model.mc_population_loss(V, K, Sigma, W, sigma, n_outer, n_inner, gen)
        mean_, se_ = est.mean, est.se
        # pilot (the ledger's CF_TARGET_WIDTH): more outer draws where an interval is wider than the width that
        # gives its decision 95% power; sized from the standard errors only
        ratio = max(2 * z * float(se_[i]) / width_for_power(float(half[i]), z) for i in range(n_inst))
        growth = planned_growth(ratio, CF_TARGET_WIDTH, CF_MAX_GROWTH)
        if growth > 1:
            extra = model.mc_population_loss(V, K, Sigma, W, sigma, (growth - 1) * n_outer, n_inner, gen)
            mean_, se_ = pooled(mean_, se_, n_outer, extra.mean, extra.se, (growth - 1) * n_outer)
        growths.append(growth)
        cf = closed_form(V, K, Sigma, W, sigma)
        for i in range(n_inst):
            mean, se, c, h = float(mean_[i]), float(se_[i]), float(cf[i]), float(half[i])
            d = decide_equal(mean, se, c, z, margin=Margin(h, excludes=CF_MARGIN_RULE))
            ev.decide(f"instance {len(rows) + 1} (d={2 + gi % 3}, ‖B‖op={float(est.B_op[i]):.2f})", d,
                      value=mean, say=False)
            statuses.append(d.status)
            rows.append((c, mean, z * se, h))
    if not rows:
        return ev.outcome()
    cf_, mc_, hw_, m_ = map(np.array, zip(*rows))
    rel = mc_ / cf_ - 1
    if ev.plots:
        fig, ax = new_figure()
        x = np.arange(len(rows))
        ax.errorbar(x, rel, yerr=hw_ / np.abs(cf_), fmt="o", capsize=3,
                    color="tab:blue", label=f"MC / closed form − 1 (±{z:.1f} SE)")
        ax.errorbar(x + 0.15, np.zeros_like(rel), yerr=m_ / np.abs(cf_), fmt="none", capsize=5, color="tab:gray",
                    label="margin: half the distance to the nearer mutant")
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xlabel("instance")
        ax.set_ylabel("relative deviation")
        ax.legend(loc="best")
        ev.figure("Nested Monte Carlo vs closed form", fig, "Relative deviation of the jackknifed nested Monte Carlo "
                  "estimate of definition (2) from the closed form, with Bonferroni intervals; grey: each instance's "
                  "margin (a pass needs the interval inside it).")
    n_bad = len(statuses) - statuses.count("pass")
    ev.say((f"{statuses.count('fail')} outside their band, {statuses.count('inconclusive')} straddling it; "
            if n_bad else "")
           + f"{statuses.count('pass')}/{len(statuses)} instances inside closed form ± half the distance to the nearer "
           f"mutant (margins {np.min(m_ / np.abs(cf_)):.1%}-{np.max(m_ / np.abs(cf_)):.1%} of L; max |rel. dev.| "
           f"{np.abs(rel).max():.2%}; {n_outer} outer × {n_inner} inner draws, grown ×{max(growths)} at most)")
    return ev.outcome(outer_draws=n_outer, inner_draws=n_inner, pilot_growth=growths)


# ---------------------------------------------------------------------------
# 4. Numeric check: the n-law  E Lhat_n - L = c/(n-1) + O(n^-2)
# ---------------------------------------------------------------------------

def include_self_gaps(V, K, Sigma, W_star, sigma, n, n_datasets, gen):
    """Wrong on purpose (control): the n-law's gap draws with the query's own sample kept in its softmax context."""
    return model.loo_gap_samples(V, K, Sigma, W_star, sigma, n, n_datasets, gen, include_self=True)


def outer_factor(K, Sigma) -> torch.Tensor:
    """``Z = det(I - 2 Sigma^{1/2} K Sigma K^T Sigma^{1/2})^{-1/2}``: the factor of the n-law coefficient that the outer
    Gaussian integral with weight ``e^{x^T M x}`` contributes (the coefficient without it is the margin's alternative)."""
    R = model.sym_sqrt(Sigma)
    G = torch.eye(Sigma.shape[-1], dtype=DTYPE) - 2 * R @ (K @ Sigma @ K.mT) @ R
    return torch.linalg.det(G).rsqrt()


def coefficient_margin(Z) -> Margin:
    """Half the smallest distance ``min_i (1 - 1/Z_i)`` from 1 to the alternative ratio ``1/Z_i``
    (``COEFFICIENT_MARGIN_RULE``)."""
    return Margin(float(np.min(np.abs(1 - 1 / np.asarray(Z, float)))) / 2,
                  excludes=f"{COEFFICIENT_MARGIN_RULE}; 1/Z_i = " + ", ".join(f"{1 / z:.4f}" for z in np.atleast_1d(Z)))


def pooled_ratio(fits, c_derived) -> tuple[float, float]:
    """The fitted leading coefficients over the derived ones, pooled over the instances with inverse-variance weights:
    ``(ratio, standard error)``."""
    r = np.array([fit.coef[0] / c for (fit, _), c in zip(fits, c_derived)])
    se = np.array([fit.se[0] / abs(c) for (fit, _), c in zip(fits, c_derived)])
    w = 1 / se**2
    return float((w * r).sum() / w.sum()), float(w.sum() ** -0.5)


def n_law_fits(ns, samples, c_derived, margin: Margin, z):
    """Per instance, from the gap draws at each ``n`` (list of (N, B) tensors): the weighted fit of
    ``(n-1) gap = c1 + c2/(n-1)`` and the log-log slope of ``|gap|`` from ``SLOPE_FROM_N`` on; and the widest of the
    decided intervals (the pooled coefficient ratio's, :func:`pooled_ratio`, with ``margin``, and the slopes') relative
    to the width that gives its decision 95% power at the claim's value (the pilot's power statistic)."""
    means = np.array([s.mean(0).numpy() for s in samples])  # (len(ns), B)
    ses = np.array([(s.std(0) / math.sqrt(s.shape[0])).numpy() for s in samples])
    m = np.array(ns, float) - 1
    half = m >= SLOPE_FROM_N - 1  # the O(n^-2) term is small there
    fits = [(weighted_fit(np.column_stack([np.ones_like(m), 1 / m]), m * means[:, i], m * ses[:, i]),
             loglog_slope(m[half], np.abs(means[half, i]), ses[half, i])) for i in range(len(c_derived))]
    _, r_se = pooled_ratio(fits, c_derived)
    slope_width = width_for_power(SLOPE_MARGIN.half_width, z)
    ratio = max([2 * z * r_se / width_for_power(margin.half_width, z)]
                + [2 * z * sl.se[1] / slope_width for _, sl in fits])
    return means, ses, fits, ratio


def check_n_law(ctx: Context, gap_samples=model.loo_gap_samples, B_op_range=NLAW_B_OP) -> Outcome:
    """Per instance the log-log slope of the gap is -1 ± 1/4 (``SLOPE_MARGIN``), and the fitted leading coefficients
    of ``(n-1)(E Lhat_n - L)`` over the derived ``c``, pooled over the instances, are 1 to within half the distance to
    ``1/Z`` (``COEFFICIENT_MARGIN_RULE``), from the draws of ``gap_samples`` (leave-one-out; the control passes
    :func:`include_self_gaps`).  Each instance's coefficient is reported with its interval, and one whose ratio's
    interval lies wholly outside the pooled band fails the check (``FALSIFY_PER_INSTANCE``).

    Two looks (:func:`theorems.pilot.two_looks`, group-sequential): a pilot of ``NLAW_PER_N`` data sets per unit of
    ``n``, decided there when every decision is; otherwise, if its widest interval is above ``NLAW_TARGET_WIDTH`` of
    the width giving 95% power, more draws of the same kind, every interval decided on all draws pooled.  The growth
    is set from the noise only, never from the estimate's distance to the claim; each look decides at half the
    check's level, so the two together spend it once.  ``B_op_range``: the keys' ``‖B‖op``
    (``NLAW_B_OP``; its lower end a free choice)."""
    gen = ctx.generator(ID, "n-law")
    ns = ctx.pick(*NLAW_NS)
    per_n = ctx.pick(*NLAW_PER_N)
    Sigma, W, V, K, sigma = make_instances(gen, 3, d=3, B_op_range=B_op_range, psd_keys=True)
    c_derived = loo_bias_coefficient(V, K, Sigma, W).numpy()
    Z = outer_factor(K, Sigma).numpy()
    margin = coefficient_margin(Z)
    def draws(k):
        return [gap_samples(V, K, Sigma, W, sigma, n, k * per_n * n, gen) for n in ns]

    pilot = draws(1)

    def decide_at(g):
        samples = pilot if g == 1 else [torch.cat([s, extra]) for s, extra in zip(pilot, draws(g - 1))]
        # each of the two looks at half the level; per instance a slope and a falsification of its coefficient
        ev = Evidence(ctx, decisions=LOOKS * (2 * len(c_derived) + 1))
        means, ses, fits, ratio = n_law_fits(ns, samples, c_derived, margin, ev.z)
        r, r_se = pooled_ratio(fits, c_derived)
        d = decide_equal(r, r_se, 1.0, ev.z, margin=margin)
        ev.decide("leading coefficient: fitted / derived c, pooled over the instances", d, value=r,
                  line=f"c fitted/derived (pooled) {r:.4f} {d}")
        for i, (c, (fit, sl)) in enumerate(zip(c_derived, fits)):
            a, h = float(fit.coef[0]), ev.z * float(fit.se[0])
            ev.measure(f"instance {i + 1}: leading coefficient c [reported; decided pooled]", a,
                       claimed=f"= {c:.4g} (derived; without Z: {c / Z[i]:.4g})", lo=a - h, hi=a + h, level=ev.level)
            outside = decide_equal(a / c, float(fit.se[0]) / abs(c), 1.0, ev.z, margin=margin)
            if FALSIFY_PER_INSTANCE and outside.status == "fail":  # only a fail is decided per instance
                ev.decide(f"instance {i + 1}: fitted / derived c, outside the pooled band", outside, value=a / c,
                          line=f"#{i + 1}: c fitted/derived {a / c:.4f} {outside}")
            d = decide_exponent(sl, ev.z, -1.0, margin=SLOPE_MARGIN)
            ev.decide(f"instance {i + 1}: exponent of |E Lhat_n − L| in n", d, value=float(sl.coef[1]),
                      line=f"#{i + 1}: c {a:.4g} ± {h:.2g} (derived {c:.4g}); slope {sl.coef[1]:.3f} {d}")
        return ratio, ev.decisions, (ev, means, ses)

    (ev, means, ses), growth = two_looks(decide_at, NLAW_TARGET_WIDTH, NLAW_MAX_GROWTH)
    m = np.array(ns, float) - 1
    if ev.plots:
        fig, ax = new_figure()
        for i, c in enumerate(c_derived):
            ax.errorbar(ns, m * means[:, i], yerr=ev.z * m * ses[:, i], fmt="o-", capsize=3, label=f"instance {i + 1}")
            ax.axhline(c, ls="--", color=ax.lines[-1].get_color(), lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("context size n")
        ax.set_ylabel("(n − 1)(E L̂ₙ − L)")
        ax.set_title(f"{gap_samples.__name__}: dashed = derived c")
        ax.legend(loc="best")
        ev.figure("Empirical loss → population loss at rate 1/n", fig, "Scaled gap (n−1)(E L̂ₙ − L) with Bonferroni "
                  "intervals; it must level off at the derived coefficient c (dashed).")
    return ev.outcome(ns=ns, datasets_per_n=[growth * per_n * n for n in ns], pilot_growth=growth,
                      c_derived=c_derived.tolist(), c_without_Z=(c_derived / Z).tolist(),
                      gap_samples=gap_samples.__name__)


# ---------------------------------------------------------------------------
# 5. Probe
# ---------------------------------------------------------------------------

def integrable_for_mc(K: torch.Tensor, Sigma: torch.Tensor) -> bool:
    r"""Lemma 7 with ``M = 2 K Sigma K^T``: ``E exp(x^T M x) < inf`` iff ``lambda_max(Sigma^{1/2} M Sigma^{1/2}) < 1/2``.

    This is the moment the Monte Carlo variance needs (see ``model.mc_scope``).
    """
    R = model.sym_sqrt(Sigma)
    M = 2 * K @ Sigma @ K.mT
    return bool(torch.linalg.eigvalsh(R @ M @ R).max() < 0.5)


def light_tailed(K: torch.Tensor, Sigma: torch.Tensor) -> bool:
    r"""Lemma 7 with ``M = 4 K Sigma K^T``: the per-point loss has a finite 4th moment (``||B||_op^2 < 1/8``).

    Only there is the Monte Carlo standard error reliable at moderate sample sizes; the
    numeric checks draw their instances inside this region (``||B||_op <= 0.35 < 8^{-1/2}``).
    """
    R = model.sym_sqrt(Sigma)
    return bool(torch.linalg.eigvalsh(R @ (4 * K @ Sigma @ K.mT) @ R).max() < 0.5)


@st.composite
def instances(draw):
    """Small pieces that shrink on their own: ``(d, r)``; ``Sigma`` (rotation x spectrum in [0.1, 5]); ``W*`` (entries
    in [-3, 3]); ``V`` of full column rank (singular values in [0.5, 2]); the key-query factor ``B = Sigma^{1/2} K
    Sigma^{1/2}`` as ``||B||_op`` (the scope parameter) times a direction with singular values in [0.1, 1] (largest 1);
    noise.  ``V`` and ``B`` never vanish, so every instance tests the Σ factor of the closed form (at ``V = 0`` or
    ``K = 0`` the loss does not depend on it); a shrunk counterexample is a 1 x 1 instance with round entries."""
    d, r = draw(dims(max_d=4, extra=2))
    Sigma = tensor(draw(spd(d, 0.1, 5.0)), batch=False)
    W = tensor(draw(matrix(r, d)))
    V = tensor(draw(with_singular_values(r, d, 0.5, 2.0)))
    direction = tensor(draw(with_singular_values(d, d, 0.1, 1.0)))
    B_op = draw(st.floats(*PROBE_B_OP))
    sigma = draw(st.floats(0.0, 2.0))
    # the nested Monte Carlo draws 4000 x 128 inner samples per instance, too many to generate with hypothesis:
    # its seed is part of the instance, so a counterexample replays
    mc_seed = draw(st.integers(0, 2**31 - 1))
    Si = model.sym_inv_sqrt(Sigma)
    K = Si @ direction @ Si * (B_op / torch.linalg.matrix_norm(direction, ord=2))[:, None, None]
    return {"d": d, "r": r, "Sigma": Sigma, "W": W, "V": V, "K": K, "B_op": B_op, "sigma": sigma, "mc_seed": mc_seed}


def probe_conclusion(inst, alpha_each: float, closed_form=model.population_loss):
    """The nested Monte Carlo matches ``closed_form`` (z-test at the probe's per-example rate); ``None`` (not decided)
    where its error bar is not honest: outside its scope or without a finite fourth moment (``light_tailed``)."""
    if not (integrable_for_mc(inst["K"][0], inst["Sigma"]) and light_tailed(inst["K"][0], inst["Sigma"])):
        # only at the light-tailed boundary ‖B‖op² = 1/8, by rounding (the strategy draws inside it)
        return None, "not decided (heavy-tailed)", "the Monte Carlo standard error is not reliable here"
    g = torch.Generator().manual_seed(inst["mc_seed"])
    est = model.mc_population_loss(inst["V"], inst["K"], inst["Sigma"], inst["W"], inst["sigma"], PROBE_OUTER,
                                   PROBE_INNER, g)
    z = float(normal_law.isf(alpha_each / 2))  # two-sided, at the probe's per-example rate
    cf = float(closed_form(inst["V"], inst["K"], inst["Sigma"], inst["W"], inst["sigma"])[0])
    dev = abs(float(est.mean[0]) - cf)
    # plus rounding: where every outer term is the same number (e.g. V = W* = 0) the sample SE is 0, and the mean of
    # 4000 equal floats differs from their value in the last digits
    ok = dev <= z * float(est.se[0]) + ROUNDING * max(1.0, abs(cf))
    return ok, "decided", f"MC {float(est.mean[0]):.5g} ± {z * float(est.se[0]):.2g} vs closed form {cf:.5g}"


def describe(inst) -> dict:
    """The instance as plain numbers and nested lists (``K`` already scaled to ``||B||_op = B_op``)."""
    return readable({"d": inst["d"], "r": inst["r"], "Sigma": inst["Sigma"], "W_star": inst["W"][0],
                     "V": inst["V"][0], "K": inst["K"][0], "B_op": inst["B_op"], "sigma": inst["sigma"],
                     "mc_seed": inst["mc_seed"]})


def probe_parameters(inst) -> dict:
    ev = torch.linalg.eigvalsh(inst["Sigma"])
    return {"‖Σ^½KΣ^½‖op (scope < 1/2)": inst["B_op"], "noise σ": inst["sigma"], "cond(Σ)": float(ev.max() / ev.min())}


# ---------------------------------------------------------------------------
# 6. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID, title=TITLE, statement=STATEMENT, fidelity="exact", fidelity_note=FIDELITY_NOTE,
    assumptions=(A1,
                 ScopeFilter("Monte Carlo scope", "‖Σ^{1/2} K Σ^{1/2}‖op² < 1/8 (K rescaled into it)",
                             why="Lemma 7 with M = 4KΣKᵀ: the nested Monte Carlo's per-point loss then has a finite "
                                 "fourth moment, so its error bar is honest; the closed form itself is claimed for "
                                 "every θ", unit=""),
                 CF_SCOPE),
    checks=(Check("derivation", "symbolic", "Tilting identity and closed form by sympy", symbolic_derivation),
            Check("closed-form-vs-monte-carlo", "numeric",
                  "Nested Monte Carlo of definition (2) vs the closed form on random instances, inside half the "
                  "distance to the nearer control mutant", check_closed_form),
            Check("n-law", "numeric", "E L̂ₙ − L = c/(n−1) + O(n⁻²): log-log slope −1 ± 1/4 per instance; fitted/derived "
                  "c = 1 ± half the distance to 1/Z, pooled over the instances",
                  check_n_law),
            probe("Hypothesis over dimensions, covariances, W*, θ, noise, with ‖B‖op where the "
                  "nested Monte Carlo decides (‖B‖op² < 1/8): the closed form matches", strategy=instances(),
                  conclusion=probe_conclusion, examples=PROBE_EXAMPLES, describe=describe, parameters=probe_parameters,
                  min_decided=PROBE_MIN_DECIDED)),
    controls=(Control("symbolic: dropped Σ", "derivation", "closed form tr(E Eᵀ) in place of tr(E Σ Eᵀ)",
                      {"closed_form": closed_form_without_sigma}),
              Control("dropped Σ factor", "closed-form-vs-monte-carlo", "tilted mean Kᵀx in place of ΣKᵀx",
                      {"closed_form": population_loss_dropped_sigma}),
              Control("misplaced Σ^{1/2}", "closed-form-vs-monte-carlo", "unweighted ‖VΣKᵀ − W*‖²_F",
                      {"closed_form": population_loss_unweighted}),
              Control("include-self softmax", "n-law", "the query's own sample kept in its softmax context",
                      {"gap_samples": include_self_gaps}),
              Control("probe: dropped Σ factor", "probe",
                      "the probe must find a counterexample to a wrong closed form",
                      {"mutant": {"closed_form": population_loss_dropped_sigma}})),
    free_choices=(
        FreeChoice("mutant gap", CF_MIN_MUTANT_GAP, "the filter is ours (the closed form is claimed at every θ): 2 % "
                   "(margins 1 % of L) to 12.5 % (fewer qualify than the 29 % at 10 %), a factor 2.5 either side",
                   {"closed-form-vs-monte-carlo": lambda v: {"min_mutant_gap": float(v)}},
                   low=0.02, high=0.125, scale="log"),
        FreeChoice("closed-form ‖B‖op from", CF_B_OP[0], "the closed form holds at every θ and the Monte Carlo decides "
                   "below ‖B‖op = 0.35: the family's lower end from 0.05 (the probe's) to 0.25",
                   {"closed-form-vs-monte-carlo": lambda v: {"B_op_range": (float(v), CF_B_OP[1])}},
                   low=0.05, high=0.25),
        FreeChoice("n-law ‖B‖op from", NLAW_B_OP[0], "the n-law holds at every θ in Lemma 7's region; ours are the "
                   "largest keys the Monte Carlo decides (to 0.35): their lower end from 0.2 (a smaller gap, Z nearer "
                   "1) to 0.34", {"n-law": lambda v: {"B_op_range": (float(v), NLAW_B_OP[1])}},
                   low=0.2, high=0.34),
    ),
)
