r"""A.T2 — data-compute scaling law (Goel, Soltanolkotabi, Bartlett 2026, Theorem 2).

Statement (reconstructed: qualitative; exponents exact, constants lost).  With probability ``>= 1 - delta`` over the
training
data, for ``eta`` small enough and ``n >= n0(delta)``, Algorithm 1 (spectral init, preconditioner ``Sigmahat``,
oracle gradients ``E grad(Lhat_n + lambda Rhat)`` over fresh batches of ``n``) satisfies

    L(theta_T) - L*  <=  O~(1/n)  +  C exp(-c T).

The two terms are tested separately.

**Optimization term (check "rate").**  With exact gradients of ``L_lambda`` (the oracle's ``n -> inf`` limit, so no
floor) the excess decays geometrically down to 1e-27.  How the rate is predicted (ours): in factor coordinates the
update is ``z <- z - eta T grad f(z)`` (``f = L_lambda - L*``, ``T`` the preconditioner, ``= I`` when ``Sigmahat =
Sigma``).  Linearized at the limit point on Mfold, ``z_t - z* = (I - eta T H)^t (z_0 - z*)``; the excess is the
quadratic form ``H_L`` of the displacement, so ``L - L* ~ C (1 - eta mu)^{2t}``: ``c = -2 log(1 - eta mu)`` with
``mu`` the slowest non-tangent eigenvalue of ``T H`` seen by ``H_L`` (``numerics.paper_a.experiments.linear_rate``).
With ``Sigmahat = Sigma``, ``mu = 2 sigma_d(M*)``: A.T1.3's local ``alpha``; this is "``eta alpha``" made exact.  The
paper's proof gives only the envelope ``dist_{t+1}^2 <= (1 - 2 eta alpha + eta^2 beta) dist_t^2``; with A.T1.3's
``alpha(rho')``, ``beta(rho')`` we take the step it prescribes, ``eta = alpha/beta`` (per instance), for which the
envelope rate is ``c_env = -log(1 - alpha^2/beta)``.  Decisions per training set, on the window 1e-27..1e-20 (the
asymptotic tail above float64's floor of ~1e-31) cut in two halves: on each half the run's log-linear rate equals the
linearized prediction's rate on that half to ``RATE_MARGIN`` (0.5%: the interval must lie inside it; the alternative
it excludes is the rate without the preconditioner, 3-70% off), and the slower half's rate is at least the envelope
rate (the same interval, at most ``RATE_REL_WIDTH`` wide: "not rejected" at any width would decide
nothing).  The error of a half's rate is read against the prediction (``rate_against_curve``): ``log e_t =
log curve_t + D_t``, so the run's rate is the curve's minus the slope of ``D``, with the error of that slope from
``D``'s residuals.  A bend of the decay the prediction shares (two slow modes mixing) is then not error, and a bend it
does not share moves one half's rate off the prediction: a failure, not a wider interval.  (Deciding the
whole window, its error the fit's SE and half the difference of the two halves' rates, would count a predicted bend
as misfit: fresh seed 502, the ledger's ``RATE_MARGIN``.)

Which linearized prediction (chosen after calibration seed 115).  The slowest mode's rate ``c`` is the
*asymptotic* rate; over a finite window the excess is the mixture ``sum_k C_k (1 - eta mu_k)^{2t}`` of the modes the
displacement carries.  At quick seed 115 one training set's displacement had almost no component on the slowest mode,
so its excess fell at the next mode's rate over the whole window (0.0907 against the slowest 0.0640) and the check said
"violated".  So the decided prediction is the linearized curve itself: the displacement ``delta = z_{t0} - z_T`` at
the window's first step (factor coordinates; ``z_T`` stands in for the limit point, its own error decays ``(1 - eta
mu)^{T - t0}`` times faster) propagated by the linear iteration ``delta <- (I - eta T H) delta``
(``T``, ``H`` at the limit point, ``T`` Algorithm 1's two-sided preconditioner whatever the run used), with excess
``delta^T H_L delta / 2``, and the prediction is that curve's log-linear rate over the same window.  It equals the
slowest mode's ``c`` whenever that mode dominates the window (all runs at seed 115 but run 6, to 1e-6), which is
reported per run beside it.  The envelope decision is unchanged.  The control (no preconditioner) still departs from
the two-sided prediction by 3-70% (seed 115).

**The preconditioner's sides (check "k-block-mode").**  The asymptotic rate lives in the value block, which the
two-sided preconditioner of Algorithm 1 (``g_K -> Sigmahat^{-1} g_K Sigmahat^{-1}``) and the one-sided variant
(``Sigmahat^{-1} g_K``) treat alike, so the rate check cannot tell them apart.  The key block's modes can: per
training set we take the slowest non-tangent mode of ``T H`` (two-sided ``T``, ``Sigmahat``) whose right eigenvector
lies mostly (``> 1/4`` of its norm) in the key block, start Algorithm 1 (exact gradients of ``L_lambda``, its own
``Sigmahat`` step) at ``z* + eps v`` (``eps = 1e-6 ||z*||``: the linear regime, and Mfold's tangent drift is
``O(eps^2)``), and fit the decay of the displacement's component along that mode (the left eigenvector annihilates
the tangent directions) over six decades.  It must decay at ``-log|1 - eta mu|`` per step to ``MODE_REL_TOL``; with the
one-sided preconditioner (the control) the start is not an eigenvector of the iteration and the component decays at
another rate (2% to 100% off on the instances we tried).

**The rates, derived (check "derivation", sympy).**  The proof's recursion ``D_{t+1} = (1 - 2 eta alpha + eta^2
beta) D_t`` solved (``D_t = D_0 q^t``) and minimized over the step (``eta = alpha/beta``, ``q = 1 - alpha^2/beta``:
the envelope rate ``c_env`` the rate check uses); the smallest case with the value block's extra rows, ``d = 1,
r = 2`` (``f = (a_1 b - sigma)^2 + (a_2 b)^2 + lambda (a_1^2 + a_2^2 - b^2)^2``, Mfold's point ``(sqrt sigma, 0,
sqrt sigma)``), whose Hessian has the eigenvalues ``2 sigma, 4 sigma, 16 lambda sigma``: at ``lambda = 1/4`` the
slowest is ``2 sigma_d = alpha(0)``, along ``a_2``, which the excess sees; the linear recursion along it solved
(``L - L* ~ (1 - eta mu)^{2t}``, ``c = -2 log(1 - eta mu)``); and ``(1 - eta alpha)^2 = q - eta^2 (beta - alpha^2)
<= q``, so the linearized rate is at least the envelope's.  Control: the slowest mode claimed at ``4 sigma_d``
(the rate of ``r = d``, without the extra rows A.T2's instances have).

**Statistical term (check "floor").**  Algorithm 1 with the oracle at context ``n`` converges to the fixed point of
``E grad(Lhat_n + lambda Rhat) = 0``, whose excess is the floor.  The oracle is computed by Monte Carlo with control
variates (``numerics.paper_a.experiments.ControlVariateOracle``: closed-form ``grad L_lambda`` plus per-batch
differences with exact mean the oracle bias and standard deviation O(1/n)).  Per ``n`` (8 .. 256, 1.5 decades;
continuation: each ``n`` starts where the previous ended) we run ``R`` replicas with independent oracle noise,
Polyak-average the iterates over the last two thirds of the run, and estimate the floor as ``||E r||^2`` by the
U-statistic over replicas (``r = (A B^T - M*)`` flattened, so ``L - L* = ||r||^2``; the cross-replica U-statistic
removes the positive bias of the residual Monte Carlo noise).  Our oracle is a Monte Carlo estimate of an
expectation, and at ``n = 8`` its draws are heavy-tailed: a rare draw kicks a replica out of the basin, where the
fixed step diverges (seen once in 20 seeds at 24 replicas).  Such a replica (excess above ``DIVERGED_EXCESS`` at
any step) measures our estimator, not Algorithm 1, whose oracle is exact: it is dropped from the U-statistic, and
the check is inconclusive when more than ``MAX_DROPPED_FRACTION`` of the replicas are.  Decision: the fitted log-log slope of the floor over
``n >= 32`` (the asymptotic regime; below it the floor carries higher orders in ``1/n``: local slopes steepen from
about -1.2 to -2, so one power law over all ``n`` is misspecified and its Birge-widened interval is 0.65-0.7 wide)
against the theorem's envelope ``O~(1/n)`` (an upper bound: slope ``<= -1``): fail if the whole interval lies above
-1; pass if it lies at or below -1 and is no wider than ``FLOOR_MAX_WIDTH`` = 0.5 (half the distance from the
envelope's -1 to the derived -2); else inconclusive.

What we expect beyond the envelope (derived, reported, not decided): the oracle's bias is O(1/n) (A.T1.1's
``E Lhat_n - L = c(theta)/(n-1)``, differentiated; A.T3 measures the squared bias O(n^{-2})), the fixed point
moves O(1/n) from Mfold and the excess is quadratic in that: the exact-oracle floor is O(n^{-2}); ``n^2 floor`` is
fitted to ``a + b/n``.
The ``1/n`` floor our reconstruction's note reports for minibatch training is the *noise* floor of a stochastic oracle:
with one fresh batch per step the stationary excess is ``~ eta tr(...)/n``; it is measured too (reported).

Negative controls: (rate) Algorithm 1 without the preconditioner (plain GD on ``L_lambda``): a different rate;
(k-block-mode) the one-sided preconditioner (it is NOT a rate control: the slowest mode lives in the value block,
which both preconditioners treat alike, and the rates coincide); (floor) contexts of fixed size 8 (more batches
instead of larger contexts, the pitfall noted in our reconstruction): the floor stays at its ``n = 8`` value; (probe)
the envelope
for the distance to the ``Q = I`` point of Mfold in place of the Procrustes projection (the iteration contracts towards
Mfold, not towards a fixed point of it: the tangent offset does not decay).  A contraction "four times faster than
the envelope's" would be a rescaled constant, not a mutant.  Tried first and not rejected at quick seed
0 (no trajectory inside the assumptions left the envelope, whose slack is a few percent per step): plain GD without
the preconditioner, and the Euclidean distance in theta in place of the Sigmatilde-distance.  Each control re-runs its check with one parameter overridden.

Instances: ``init_instances.conditioned_instances`` (``d=3, r=4, m_op=0.15, sigma_d/sigma_1 >= 1/2``), noise
``sigma = 0.3``, training sets of ``N = 4000`` exactly sampled (``Sigmahat``, ``What`` and the spectral init),
``lambda = 1/4``.  The rate check also requires ``sigma_{d-1} >= 1.4 sigma_d``.  Why: the iterate is stored to 1e-16
and the excess is quadratic in the displacement, so rounding sets in near 1e-31 and the usable tail is a few decades;
when the two slowest modes (``2 sigma_d``, ``2 sigma_{d-1}``, A.T1.3's spectrum) are nearly degenerate the tail ends
before the slower one dominates, and the half-window comparison would flag the fit as too uncertain (inconclusive)
rather than wrong.  A.T1.3's ``alpha``, ``beta`` and A.L3's ``rho'`` come from ``geometry.constants``.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from numerics.optim import chain, identity, run, scale
from numerics.paper_a import algorithms as al
from numerics.paper_a import experiments as ex
from numerics.paper_a import geometry as ge
from numerics.paper_a.model import sym_sqrt
from numerics.paper_a.moments import limit_fit, squared_norm_of_mean
from numerics.stats import Margin, decide_close, decide_lower, decide_upper, loglog_slope
from theorems import strategies as S
from theorems.claim import Assumption, Check, Claim, Context, Control, FreeChoice, Outcome, ScopeFilter
from theorems.evidence import Evidence
from theorems.fixture import fixture
from theorems.paper_a.assumptions import A1, A2, a3
from theorems.paper_a.geometry.constants import alpha_bound, good_init_constants, sqrt_beta_bound
from theorems.paper_a.geometry.instances import spectral_instances
from theorems.paper_a.init_algorithm import ONE_SIDED, TWO_SIDED, Preconditioner
from theorems.paper_a.init_instances import ALG_D, ALG_R, ALG_SCOPE, MIN_RATIO, NOISE, conditioned_instances
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.strata import fair_sampled_from
from theorems.symbolic import Derivation

ID = "A.T2"

STATEMENT = (
    r"L(\theta_T)-L^*\le\tilde O(1/n)+C\,e^{-cT},\qquad "
    r"c=-2\log(1-\eta\mu),\;\mu=\mu_{\min}(T_{\hat\Sigma}H)\;(=2\sigma_d(M^*)\text{ if }\hat\Sigma=\Sigma)"
)

N_TRAIN = 4000  # training-set size behind Sigmahat and the spectral init

ETA_FLOOR = 0.3  # step of the floor runs (< 2/mu_max)
MIN_GAP = 1.4  # rate check: sigma_{d-1} >= 1.4 sigma_d separates the two slowest modes (module docstring)
FIT_WINDOW = (1e-27, 1e-20)  # the asymptotic tail of the excess above float64's floor (~1e-31)
MIN_FIT_POINTS = 50  # fewer points in the window: the fit is too short to decide
#: the linearized curve's quadratic form is exact to ~1e-16 of |delta|^2: values below 1e-12 of its start are rounding
CURVE_ROUNDING = 1e-12
#: the envelope decision (a lower bound on the rate) reads a half-window's interval only when it is narrower than ±2%
#: of the prediction: a vaguer one cannot place the rate against the envelope's
RATE_REL_WIDTH = 0.02
#: fitted = predicted rate up to 0.5% (per half-window, relative): the alternative is the rate without Algorithm 1's
#: preconditioner (the control), which departs from the two-sided prediction by 3-70%: half its smallest departure
#: is 1.5%, and 0.5% sits inside that and 50x above the linearization's own errors (z_T standing in for the limit
#: point, rounding at the window's end: <= 1e-4 relative at seeds 312 and 502)
RATE_MARGIN = Margin(0.005, relative=True,
                     excludes="the rate without the preconditioner (the control: 3-70% off the two-sided prediction; "
                              "half its smallest departure is 1.5%); kept at 0.5%, 50x the linearization's own error")
RATE_RUNS, RATE_STEPS = (6, 12, 24), (1500, 3000, 4000)  # rate check: training sets, steps (to the 1e-31 floor)
#: floor exponent: an interval wider than 0.5 (half the distance from the envelope's -1 to the derived -2) is vague
FLOOR_MAX_WIDTH = 0.5
GAP_SCOPE = ScopeFilter(
    "rate instances: σ_{d−1}(M*) ≥ 1.4 σ_d(M*)",
    f"the rate check's instances kept only when σ_(d−1)(M*) ≥ {MIN_GAP:g} σ_d(M*) (rejection sampling)",
    why="the two slowest modes then separate within the fit window, so one geometric rate describes the tail (the "
        "paper's theorem has no gap condition)")
FLOOR_REPLICAS = (24, 24, 32)  # replicas with independent oracle noise (the U-statistic's width scales ~1/R)
#: a replica whose excess passes 1 (100x the n = 8 floor, ~1e4x its start) has left the basin under a heavy-tailed
#: Monte Carlo draw of the oracle (the paper's oracle is the exact expectation, which has no such draws): it is dropped
DIVERGED_EXCESS = 1.0
#: more than a quarter of the replicas dropped: the Monte Carlo oracle, not the algorithm, decides (inconclusive)
MAX_DROPPED_FRACTION = 0.25
DIVERGED_SCOPE = ScopeFilter(
    "floor replicas that diverged",
    f"a floor replica whose excess reaches {DIVERGED_EXCESS:g} (or NaN) at any step is dropped from the floor "
    f"estimate (more than {MAX_DROPPED_FRACTION:.0%} dropped: inconclusive)",
    why="it left the basin under a heavy-tailed draw of our Monte Carlo oracle; the paper's oracle is the exact "
        "expectation, which has no such draws", unit="replicas")
#: context sizes n of the floor (1.5 decades at quick; more at standard / full)
FLOOR_NS = ((8, 16, 32, 64, 128, 256), (8, 16, 32, 64, 128, 256, 512), (8, 16, 32, 64, 128, 256, 512, 1024))
FLOOR_STEPS, FLOOR_BATCHES = (60, 90, 120), (3, 4, 8)  # steps per n (Polyak average over the last 2/3), batches
FRESH_NS = ((16, 32, 64, 128), (16, 32, 64, 128, 256), (16, 32, 64, 128, 256))  # one-fresh-batch floors (reported)
FRESH_REPLICAS, FRESH_STEPS = (4, 8, 8), (200, 300, 300)  # replicas and steps of the reported noise floors
#: the floor's exponent is decided on n >= 32, the asymptotic regime the theorem's O~(1/n) (for n >= n0) is about:
#: below 32 the floor carries higher orders in 1/n and a single power law over all n is misspecified
FLOOR_BIG_N = 32
MODE_RUNS = (4, 8, 12)  # k-block-mode check: training sets (one mode each)
MODE_EPS = 1e-6  # start displacement relative to ||z*||: the nonlinear terms are O(eps) relative
MODE_STEPS = 400  # enough for the slowest key-block mode (eta mu >= ~0.05 here) to fall six decades
MODE_DECADES = 6  # the fit window: from the start down to 1e-6 of the start (rounding is ~1e-10 relative there)
MODE_MIN_POINTS = 50  # fewer points in the window: too short to fit (inconclusive)
MODE_MIN_KEY_FRACTION = 0.25  # a "key-block mode": more than a quarter of its right eigenvector's norm in the B block
#: fitted = predicted mode rate to 1e-3 relative: the linear regime's error is O(eps) ~ 1e-6 and the largest deviation
#: seen with the two-sided step was 1.1e-4; the one-sided step was 2% to 100% off when the check was designed
MODE_REL_TOL = 1e-3
PROBE_T = 60  # probe: steps along which the envelope is checked
PROBE_EXAMPLES = (80, 120, 300)  # probe examples at quick / standard / full
#: at least 8 trajectories inside the assumptions (60 steps each): 2/5 of the quick budget's 40 examples are drawn
#: from the "inside" stratum (PROBE_DRAW), and most of those meet Lemma 3's event
PROBE_MIN_DECIDED = 8


# ---------------------------------------------------------------------------
# 0. Symbolic: the envelope's rate and the linearized rate in the smallest case
# ---------------------------------------------------------------------------

def two_sigma_d(sigma_d):
    """The slowest non-tangent mode of ``H`` (``Sigmahat = Sigma``) with ``r > d``: ``2 sigma_d(M*)`` (A.T1.3's
    ``alpha`` at distance 0), along the rows of ``A`` beyond ``M*``'s column space."""
    return 2 * sigma_d


def four_sigma_d(sigma_d):
    """Wrong on purpose (control): ``4 sigma_d``, the slowest mode when ``r = d`` (the diagonal mode), as if A.T2's
    instances (``r = 4 > d = 3``) had no extra rows of ``A``."""
    return 4 * sigma_d


def symbolic_rates(slowest_mode=two_sigma_d) -> Outcome:
    """The proof's recursion solved and its step optimized; the linearized rate in the smallest case with ``r > d``
    (``d = 1, r = 2``) with the slowest mode claimed at ``slowest_mode(sigma_d)`` (the control passes
    :func:`four_sigma_d`); the linearized rate at least the envelope's."""
    D = Derivation()
    t = sp.Symbol("t", integer=True, nonnegative=True)
    eta, alpha, beta, sigma, lam = sp.symbols("eta alpha beta sigma_d lambda", positive=True)
    D0, delta0 = sp.symbols("D_0 delta_0", positive=True)
    Dt = sp.Function("D")
    q = 1 - 2 * eta * alpha + eta**2 * beta
    solved = sp.rsolve(Dt(t + 1) - q * Dt(t), Dt(t), {Dt(0): D0})
    D.prove_equal("the proof's recursion dist²_{t+1} ≤ (1 − 2ηα + η²β) dist²_t, solved: dist²_t ≤ q^t dist²_0",
                  solved, D0 * q**t, shown=sp.Eq(Dt(t), D0 * q**t, evaluate=False))
    (step,) = sp.solve(sp.diff(q, eta), eta)
    D.prove_equal("its best step: dq/dη = 0 at η = α/β", step, alpha / beta,
                  shown=sp.Eq(eta, alpha / beta, evaluate=False))
    D.prove_equal("a minimum (d²q/dη² = 2β > 0), where q = 1 − α²/β: the envelope rate c_env = −log(1 − α²/β)",
                  q.subs(eta, step), 1 - alpha**2 / beta,
                  shown=sp.Eq(sp.Subs(q, eta, alpha / beta), 1 - alpha**2 / beta, evaluate=False))
    D.say("Smallest case with the value block's extra rows: d = 1, r = 2, Σ̂ = Σ (T = I), M* = (σ_d, 0)ᵀ, factor "
          "coordinates z = (a₁, a₂, b), f = ‖abᵀ − M*‖² + λ(aᵀa − b²)² = L_λ − L*, at Mfold's point "
          "z* = (√σ_d, 0, √σ_d).")
    a1, a2, b = sp.symbols("a_1 a_2 b", real=True)
    z = (a1, a2, b)
    f_L = (a1 * b - sigma) ** 2 + (a2 * b) ** 2
    f = f_L + lam * (a1**2 + a2**2 - b**2) ** 2
    at = {a1: sp.sqrt(sigma), a2: 0, b: sp.sqrt(sigma)}
    grad = sp.Matrix([sp.diff(f, v) for v in z]).subs(at)
    F = sp.Function("f")(*z)
    D.prove_zero("z* is a critical point: ∇f(z*) = 0", grad,
                 shown=sp.Eq(sp.Matrix([sp.Derivative(F, v) for v in z]), sp.zeros(3, 1), evaluate=False))
    H, H_L = sp.hessian(f, z).subs(at), sp.hessian(f_L, z).subs(at)
    x = sp.Symbol("x")
    D.prove_equal("its Hessian's characteristic polynomial: eigenvalues 2σ_d (along a₂), 4σ_d (along (1, 0, 1)), "
                  "16λσ_d (along (1, 0, −1))", H.charpoly(x).as_expr(),
                  sp.expand((x - 2 * sigma) * (x - 4 * sigma) * (x - 16 * lam * sigma)),
                  shown=sp.Eq(H.charpoly(x).as_expr(), (x - 2 * sigma) * (x - 4 * sigma) * (x - 16 * lam * sigma),
                              evaluate=False))
    e2 = sp.Matrix([0, 1, 0])
    D.prove_equal("the a₂ mode is seen by the excess L − L*: e₂ᵀ H_L e₂ = 2σ_d ≠ 0", (e2.T * H_L * e2)[0], 2 * sigma,
                  shown=sp.Eq(sp.MatMul(sp.ImmutableMatrix(e2.T), sp.ImmutableMatrix(H_L), sp.ImmutableMatrix(e2),
                                        evaluate=False), 2 * sigma, evaluate=False))
    lam_value = sp.nsimplify(ge.LAMBDA)
    slowest = sp.Min(2 * sigma, 4 * sigma, 16 * lam_value * sigma)
    mu = slowest_mode(sigma)
    D.prove_equal(f"at λ = {lam_value} the slowest non-tangent mode is the claimed μ", slowest, mu,
                  shown=sp.Eq(sp.Min(2 * sigma, 4 * sigma, 16 * lam_value * sigma, evaluate=False), mu,
                              evaluate=False))
    rho = sp.Symbol("rho", nonnegative=True)
    D.prove_equal("μ = α(0), A.T1.3's local strong convexity α(ρ) (geometry.constants.alpha_bound) at distance 0",
                  mu, alpha_bound(sigma, 0), shown=sp.Eq(mu, sp.Subs(alpha_bound(sigma, rho), rho, 0), evaluate=False))
    dt = sp.Function("delta")
    along = sp.rsolve(dt(t + 1) - (1 - eta * mu) * dt(t), dt(t), {dt(0): delta0})
    D.prove_equal("the linearized iteration along that mode, δ_{t+1} = (1 − ημ)δ_t, solved", along,
                  delta0 * (1 - eta * mu) ** t, shown=sp.Eq(dt(t), delta0 * (1 - eta * mu) ** t, evaluate=False))
    excess = lambda k: along.subs(t, k) ** 2 * (e2.T * H_L * e2)[0] / 2  # noqa: E731
    D.prove_equal("the excess δᵀH_Lδ/2 falls by (1 − ημ)² per step: c = −2 log|1 − ημ| = −2 log|1 − 2ησ_d|",
                  sp.simplify(excess(t + 1) / excess(t)), (1 - eta * mu) ** 2,
                  shown=sp.Eq(excess(t + 1) / excess(t), (1 - eta * mu) ** 2, evaluate=False))
    D.prove_equal("with μ = α: (1 − ηα)² = q − η²(β − α²) ≤ q, since β ≥ α² (αD² ≤ ⟨u, Δ⟩ ≤ ‖u‖D ≤ √β D²): the "
                  "linearized rate is at least the envelope's", (1 - eta * alpha) ** 2,
                  q - eta**2 * (beta - alpha**2))
    return D.outcome("envelope and linearized rates derived")


def no_preconditioner(S_hat: torch.Tensor):
    """Negative control of the rate: no preconditioner at all (plain GD on ``L_lambda``)."""
    return identity()


#: the rate control's mutant: Algorithm 1's step without its preconditioner
NO_PRECONDITIONER = Preconditioner("none", no_preconditioner)


def excess(V, K, Sigma, W):
    """``L - L* = ||(V Sigma K^T - W*) Sigma^{1/2}||^2`` computed directly (no cancellation against ``L*``)."""
    E = V @ Sigma @ K.mT - W
    return (E @ Sigma * E).sum((-1, -2))


def training_sets(gen, Sigma, W, count: int, n: int = N_TRAIN):
    """``count`` training sets of ``n`` samples: spectral init and ``Sigmahat`` (Algorithm 1, steps 1-2)."""
    XtX, XtY = ex.sample_statistics(Sigma, W, NOISE, n, count, gen)
    W_hat, S_hat = ex.least_squares_from_statistics(XtX, XtY, n)
    return ex.spectral_init_from_estimates(W_hat, S_hat), S_hat


# ---------------------------------------------------------------------------
# 1. Optimization term: the geometric rate
# ---------------------------------------------------------------------------

def check_rate(ctx: Context, preconditioner: Preconditioner = TWO_SIDED, eta_mult: float = 1.0) -> Outcome:
    """Per training set: the fitted geometric rate equals the linearized prediction and is at least the envelope
    rate; ``preconditioner`` is Algorithm 1's (control: ``NO_PRECONDITIONER``).  The step is ``eta_mult`` times the
    envelope's ``alpha/beta``, the horizon ``RATE_STEPS / eta_mult`` (the same ``eta T``: every run reaches the fit
    window)."""
    gen = ctx.generator(ID, "rate")
    B = ctx.pick(*RATE_RUNS)
    T = math.ceil(ctx.pick(*RATE_STEPS) / eta_mult)
    ev = Evidence(ctx, decisions=3 * B)  # per run: rate = prediction on each half-window, rate >= envelope
    Sigma, W = conditioned_instances(gen, B, min_gap=MIN_GAP, ev=ev, gap_scope=GAP_SCOPE)
    init, S_hat = training_sets(gen, Sigma, W, B)
    cs = [good_init_constants(Sigma[i], W[i]) for i in range(B)]
    a = torch.tensor([alpha_bound(c["sigma_d"], c["rho"]) for c in cs], dtype=DTYPE)
    b = torch.tensor([sqrt_beta_bound(c["sigma_1"], c["rho"]) ** 2 for c in cs], dtype=DTYPE)
    eta = eta_mult * a / b  # a / b: the step the envelope 1 - 2 eta alpha + eta^2 beta prescribes
    tr = run(init, al.population_objective(Sigma, W, NOISE), chain(preconditioner(S_hat), scale(eta)), T,
             lambda p, info: {"excess": excess(*p, Sigma, W), "V": p[0], "K": p[1]}, range(T + 1))
    ex_t = tr["excess"].numpy()
    steps = np.arange(T + 1)
    shown = []
    for i in range(B):
        e = ex_t[:, i]
        c_env = -math.log(1 - float(eta[i] * (2 * a[i] - eta[i] * b[i])))  # = -log(1 - a²/b) at eta = a/b
        if not np.isfinite(e[-1]) or e[-1] > e[0]:
            ev.status("fail", f"#{i + 1} (η={float(eta[i]):.4f}): diverged or did not decay (final excess {e[-1]:.3g})")
            continue
        limit = (tr.final[0][i], tr.final[1][i])
        c_slowest, _, _ = ex.linear_rate(Sigma[i], W[i], S_hat[i], float(eta[i]), point=limit)
        floor = max(10 * float(e[-1]), FIT_WINDOW[0])
        win = np.flatnonzero((e > floor) & (e < FIT_WINDOW[1]))
        if len(win) < MIN_FIT_POINTS:
            ev.status("inconclusive", f"#{i + 1}: too few points in the fit window ({len(win)})")
            continue
        curve = linearized_excess(Sigma[i], W[i], S_hat[i], float(eta[i]), limit,
                                  (tr["V"][win[0], i], tr["K"][win[0], i]), win[-1] - win[0])
        # below 1e-12 of its start the quadratic form is rounding (it reaches that only under the control, whose
        # runs are slower than the two-sided iteration the curve follows)
        kept = np.flatnonzero(curve > CURVE_ROUNDING * curve[0])
        kept = kept[: np.argmax(np.diff(kept) > 1) + 1] if np.any(np.diff(kept) > 1) else kept
        if len(kept) < 2:
            ev.status("inconclusive", f"#{i + 1}: the linearized curve has no decay to fit")
            continue
        c_pred = -log_linear_fit(steps[win[0] + kept], curve[kept])[0]
        c_fit = -log_linear_fit(steps[win], e[win])[0]
        width = 2 * RATE_REL_WIDTH * abs(c_pred)
        halves = [rate_against_curve(steps, e, curve, win, kept, part) for part in (0, 1)]
        for name, (c_h, se_h, p_h, points) in zip(("first", "second"), halves):
            label = f"run {i + 1}: fitted rate c, {name} half of the window (per step)"
            if points < MIN_FIT_POINTS // 2:  # the control's curve can reach rounding early: nothing to compare
                ev.status("inconclusive", f"#{i + 1}: {points} points of the linearized curve in the {name} half")
                continue
            eq = decide_close(c_h - ev.z * se_h, c_h + ev.z * se_h, p_h, margin=RATE_MARGIN)
            ev.decide(label, eq, value=c_h, measure=(name == "first"),
                      line=f"#{i + 1} (η={float(eta[i]):.4f}), {name} half: c = {c_h:.6g} ± {ev.z * se_h:.1g} vs "
                           f"predicted {p_h:.6g} ± {RATE_MARGIN.around(p_h):.2g} (0.5%) [{eq.status}]")
        # the envelope is a lower bound on the rate: the slower half's interval must lie above it (and be as narrow)
        usable = [h for h in halves if h[3] >= MIN_FIT_POINTS // 2]
        if usable:
            c_h, se_h, _, _ = min(usable)
            env = decide_lower(c_h - ev.z * se_h, c_h + ev.z * se_h, c_env, max_width=width)
            ev.decide(f"run {i + 1}: fitted rate c (slower half) vs the envelope rate", env, value=c_h,
                      measure=False, line=f"#{i + 1}: envelope {c_env:.4g} [{env.status}]")
        else:  # no half to read a rate from: the envelope is not decided (a non-finite interval would read "fail")
            ev.status("inconclusive", f"#{i + 1}: no half of the window to compare with the envelope {c_env:.4g}")
        ev.measure(f"run {i + 1}: fitted rate c over the window (per step)", c_fit, claimed=f"≈ {c_pred:.6g}")
        ev.measure(f"run {i + 1}: slowest mode's rate (asymptotic)", c_slowest,
                   claimed=f"≤ the window's {c_pred:.6g} (equal when the slowest mode dominates the window)")
        ev.measure(f"run {i + 1}: c / (2 η · 2σ_d(M*))", c_fit / (4 * float(eta[i]) * cs[i]["sigma_d"]),
                   claimed="≈ 1 (ηα with α = 2σ_d, Σ̂ ≈ Σ)")
        if i < 4:
            shown.append((i, e, win, curve))
    if ev.plots:
        fig, ax = new_figure()
        for i, e, win, curve in shown:
            h = ax.semilogy(steps, e, lw=1, label=f"run {i + 1}")
            ax.semilogy(steps[win[0]:win[-1] + 1], 3 * curve, "--", color=h[0].get_color(), lw=0.8)
        ax.set(xlabel="iteration t", ylabel="L(θ_t) − L*", title="exact gradients")
        ax.legend(loc="best", fontsize=7)
        ev.figure("Geometric decay of the excess loss", fig,
                  "Excess population loss of Algorithm 1 with exact gradients of L_λ (n → ∞), step η = α(ρ′)/β(ρ′) "
                  "per instance; dashed (offset ×3 for visibility): the linearized prediction over the fit window, "
                  "started from the run's displacement at the window's first step; the plateau near 1e-32 is float64 rounding.")
    return ev.outcome(T=T, eta=eta.tolist(), eta_mult=eta_mult, preconditioner=preconditioner.name)


def linearized_excess(Sigma, W, S_hat, eta: float, limit, start, steps: int):
    r"""The excess ``L - L*`` of Algorithm 1's iteration linearized at ``limit`` (a point of Mfold, as ``(V, K)``),
    from the iterate ``start`` for ``steps`` more steps: ``delta_{t+1} = (I - eta T H) delta_t``, ``L - L* =
    delta^T H_L delta / 2`` in factor coordinates (``H``, ``H_L`` = ``factor_hessian`` at ``limit``; ``T`` the
    two-sided preconditioner with ``Sigmahat``).  Returns ``steps + 1`` values (numpy)."""
    H, H_L = ex.factor_hessian(Sigma, W, point=limit)
    T = ex.preconditioner_operator(Sigma, S_hat, "two_sided")(W.shape[-2])
    step = torch.eye(H.shape[0], dtype=DTYPE) - eta * T @ H
    delta = torch.cat([(a - b).flatten() for a, b in zip(ge.to_factors(*start, Sigma), ge.to_factors(*limit, Sigma))])
    out = []
    for _ in range(steps + 1):
        out.append(float(delta @ H_L @ delta) / 2)
        delta = step @ delta
    return np.array(out)


def log_linear_fit(t, e):
    """Slope and its standard error of ``log e`` against ``t`` (ordinary least squares)."""
    X = np.column_stack([np.ones(len(t)), t.astype(float)])
    y = np.log(e)
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ coef
    s2 = resid @ resid / max(len(t) - 2, 1)
    cov = s2 * np.linalg.inv(X.T @ X)
    return float(coef[1]), float(math.sqrt(cov[1, 1]))


def rate_against_curve(steps, e, curve, win, kept, part: int):
    r"""The run's rate over one half (``part`` 0 or 1) of the fit window ``win``, read against the linearized curve.

    ``log e_t = log curve_t + D_t``: the run's log-linear rate over the half is the curve's rate ``p`` minus the slope
    ``s`` of ``D``, exactly (least squares is linear in the data), so ``c = p - s``.  Its standard error is that of
    ``s`` from ``D``'s own residuals: curvature the curve predicts (two slow modes bending the decay together) is in
    ``p``, not in the error; curvature the run does not share with the curve is in ``D`` and moves ``c`` away from
    ``p``.  Only points where the curve is above rounding (``kept``, offsets from ``win[0]``) enter.  Returns
    ``(c, se, p, points)``."""
    half = len(win) // 2
    idx = (win[:half], win[half:])[part]
    idx = idx[np.isin(idx - win[0], kept)]
    if len(idx) < 3:
        return math.nan, math.inf, math.nan, len(idx)
    p = -log_linear_fit(steps[idx], curve[idx - win[0]])[0]
    s, se = log_linear_fit(steps[idx], e[idx] / curve[idx - win[0]])
    return p - s, se, p, len(idx)


# ---------------------------------------------------------------------------
# 1b. The preconditioner's sides: a key-block mode of Algorithm 1's iteration
# ---------------------------------------------------------------------------

def key_block_mode(Sigma, W, S_hat, eta: float):
    """The slowest non-tangent mode of ``T H`` (two-sided ``T`` with ``Sigmahat``, ``H`` the factor-coordinate Hessian
    at the ``Q = I`` point ``z*`` of Mfold) whose right eigenvector has more than ``MODE_MIN_KEY_FRACTION`` of its norm
    in the key block: ``(z*, v, w, mu, c_pred)`` with ``v`` the unit right and ``w`` the left eigenvector (``w v = 1``)
    and ``c_pred = -log|1 - eta mu|`` its predicted decay per step."""
    r, d = W.shape
    U, Lam, Vs = ge.target_svd(Sigma, W)
    A0, B0 = ge.manifold_factors(U, Lam, Vs)
    z0 = torch.cat([A0.flatten(), B0.flatten()])
    H, _ = ex.factor_hessian(Sigma, W)
    T = ex.preconditioner_operator(Sigma, S_hat, "two_sided")(r)
    # T is symmetric positive definite, so T H = T^{1/2} (T^{1/2} H T^{1/2}) T^{-1/2}: the symmetric middle factor gives
    # real eigenvalues and well-conditioned eigenvectors (a general eig is ill-conditioned at the near-degenerate pairs)
    et, Ut = torch.linalg.eigh((T + T.T) / 2)
    Th, Tih = (Ut * et.sqrt()) @ Ut.T, (Ut / et.sqrt()) @ Ut.T
    mu, Qm = torch.linalg.eigh(Th @ ((H + H.T) / 2) @ Th)
    R, L = Th @ Qm, Qm.T @ Tih  # right eigenvectors (columns), left eigenvectors (rows): L R = I
    key = (R[r * d:] ** 2).sum(0) / (R**2).sum(0)
    ok = (mu.abs() > 1e-8 * float(mu.abs().max())) & (key > MODE_MIN_KEY_FRACTION)
    k = int(torch.where(ok, mu, torch.full_like(mu, math.inf)).argmin())
    nrm = R[:, k].norm()
    return z0, R[:, k] / nrm, L[k] * nrm, float(mu[k]), -math.log(abs(1 - eta * float(mu[k])))


def check_key_block_mode(ctx: Context, preconditioner: Preconditioner = TWO_SIDED) -> Outcome:
    """Per training set: Algorithm 1 (exact gradients, its ``Sigmahat`` step) started on a key-block mode of the
    two-sided iteration decays along it at the predicted rate; ``preconditioner`` is the step's (control:
    ``ONE_SIDED``)."""
    gen = ctx.generator(ID, "key-block-mode")
    B = ctx.pick(*MODE_RUNS)
    ev = Evidence(ctx)
    Sigma, W = conditioned_instances(gen, B, ev=ev)
    _, S_hat = training_sets(gen, Sigma, W, B)
    r, d = W.shape[-2:]
    shown = []
    for i in range(B):
        c = good_init_constants(Sigma[i], W[i])
        eta = alpha_bound(c["sigma_d"], c["rho"]) / sqrt_beta_bound(c["sigma_1"], c["rho"]) ** 2
        z0, v, w, mu, c_pred = key_block_mode(Sigma[i], W[i], S_hat[i], eta)
        z = z0 + MODE_EPS * float(z0.norm()) * v
        init = ge.from_factors(z[: r * d].reshape(1, r, d), z[r * d:].reshape(1, d, d), Sigma[i])
        tr = run(init, al.population_objective(Sigma[i], W[i], NOISE), chain(preconditioner(S_hat[i]), scale(eta)),
                 MODE_STEPS, lambda p, info: {"V": p[0][0], "K": p[1][0]}, range(MODE_STEPS + 1))
        A, Bf = ge.to_factors(tr["V"], tr["K"], Sigma[i])
        comp = ((torch.cat([A.flatten(1), Bf.flatten(1)], 1) - z0) @ w).abs().numpy()
        t = np.arange(MODE_STEPS + 1)
        win = np.flatnonzero(comp > comp[0] * 10.0**-MODE_DECADES)
        win = win[: np.argmax(np.diff(win) > 1) + 1] if np.any(np.diff(win) > 1) else win  # the first stretch only
        if len(win) < MODE_MIN_POINTS:
            ev.status("inconclusive", f"#{i + 1}: too few points in the fit window ({len(win)})")
            continue
        c_fit = -float(np.polyfit(t[win], np.log(comp[win]), 1)[0])
        rel = abs(c_fit - c_pred) / c_pred
        ev.exact(f"run {i + 1}: key-block mode rate", rel <= MODE_REL_TOL,
                 f"#{i + 1} (μ = {mu:.4f}, η = {eta:.4f}): c = {c_fit:.6g} vs predicted {c_pred:.6g} "
                 f"(rel. diff {rel:.1e}, tolerance {MODE_REL_TOL:g})", value=rel, claimed=f"≤ {MODE_REL_TOL:g}")
        if len(shown) < 4:
            shown.append((i, t, comp / comp[0], c_pred))
    if ev.plots:
        fig, ax = new_figure()
        for i, t, y, c_pred in shown:
            h = ax.semilogy(t, y, lw=1, label=f"run {i + 1}")
            ax.semilogy(t, np.exp(-c_pred * t), "--", color=h[0].get_color(), lw=0.8)
        ax.set(xlabel="iteration t", ylabel="key-block mode component / start", ylim=(1e-9, 2))
        ax.legend(loc="best", fontsize=7)
        ev.figure("A key-block mode of Algorithm 1", fig,
                  "Component of z_t − z* along the slowest key-block mode of the two-sided iteration (left "
                  "eigenvector), Algorithm 1 started on that mode; dashed: the predicted e^(−ct), c = −log|1 − ημ|.")
    return ev.outcome(summary_prefix=f"preconditioner {preconditioner.name}: " if preconditioner != TWO_SIDED else "",
                      preconditioner=preconditioner.name, eps=MODE_EPS, steps=MODE_STEPS)


# ---------------------------------------------------------------------------
# 2. Statistical term: the floor vs the context size n
# ---------------------------------------------------------------------------

def floor_instance(ctx: Context, ev: Evidence | None = None):
    """The floor's instance ``(Sigma, W*)``, its spectral init and ``Sigmahat`` (Algorithm 1, steps 1-2), on the
    stream "floor": the same in each half of the replicas and in the check, which records the instance's rejected
    draws on ``ev`` (its scope filter)."""
    gen = ctx.generator(ID, "floor")
    Sigma, W = conditioned_instances(gen, 1, ev=ev)
    Sigma, W = Sigma[0], W[0]
    init, S_hat = training_sets(gen, Sigma, W, 1)
    return Sigma, W, init, S_hat


@fixture
def floor_half(ctx, half: int, fixed_context: int | None = None, eta: float = ETA_FLOOR) -> dict:
    """Half ``half`` (0 or 1) of the floor's replicas: per context size ``n``, Algorithm 1 with the control-variate
    oracle at ``n`` (``fixed_context``: the oracle's contexts kept at that size), Polyak-averaged, continuing from the
    previous ``n``; returns per ``n`` the residuals ``(V Sigma K^T - W*) Sigma^{1/2}`` of the replicas alive at it.
    The replicas are independent, so the halves run as two tasks (each on its own oracle stream) and the check
    pools them into one U-statistic.  ``eta`` is the step; the steps per ``n`` scale as ``1/eta`` (``FLOOR_STEPS`` at
    ``ETA_FLOOR``: the same ``eta T``)."""
    Sigma, W, (V0, K0), S_hat = floor_instance(ctx)
    gen = ctx.generator(ID, "floor oracle", half)
    Rr = ctx.pick(*FLOOR_REPLICAS) // 2
    ns = list(ctx.pick(*FLOOR_NS))
    T = round(ctx.pick(*FLOOR_STEPS) * ETA_FLOOR / eta)
    m = ctx.pick(*FLOOR_BATCHES)
    S = sym_sqrt(Sigma)
    params = (V0.expand(Rr, -1, -1).clone(), K0.expand(Rr, -1, -1).clone())
    tx = al.algorithm1(S_hat.expand(Rr, -1, -1), eta)
    resids = []
    alive = torch.ones(Rr, dtype=torch.bool)
    for n in ns:
        ctx_n = fixed_context or n
        obj = ex.ControlVariateOracle(Sigma, W, NOISE, ctx_n, m * n // ctx_n, gen)
        tr = run(params, obj, tx, T, lambda p, info: {"V": p[0], "K": p[1], "excess": excess(*p, Sigma, W)},
                 range(T + 1))
        alive &= (tr["excess"] < DIVERGED_EXCESS).all(0)  # NaN compares False: dropped too
        if alive.sum() < (1 - MAX_DROPPED_FRACTION) * Rr:
            break
        params = (tr["V"][T // 3:].mean(0), tr["K"][T // 3:].mean(0))  # Polyak averages; also the next n's start
        # a dropped replica restarts from the others' mean so that it cannot overflow; it stays out of the estimate
        params = tuple(torch.where(alive[:, None, None], p, p[alive].mean(0)) for p in params)
        resids.append(((params[0] @ Sigma @ params[1].mT - W) @ S).flatten(-2)[alive])
    return {"ns": ns[:len(resids)], "resid": resids, "R": Rr, "T": T, "m": m, "eta": eta,
            "fixed_context": fixed_context, "dropped": int(Rr - alive.sum())}


def floor_halves(**params) -> dict:
    """The floor check's ``uses``: its two halves of replicas bound at ``params`` (``fixed_context``, ``eta``)."""
    return {f"half{h}": floor_half.bind(half=h, **params) for h in (0, 1)}


def oracle_floors(ctx: Context, halves: list[dict], fresh: bool = True, ev: Evidence | None = None):
    """Per context size ``n`` reached by both halves: the excess at the Polyak-averaged fixed point, ``||E r||^2`` by
    the U-statistic over the alive replicas of both halves pooled; ``fresh`` adds the one-fresh-batch noise floors;
    ``ev``: the check's evidence, on which the instance's rejected draws and the dropped replicas are recorded (its
    scope filters)."""
    Sigma, W, init, S_hat = floor_instance(ctx, ev=ev)
    floors, ses = [], []
    for i in range(min(len(h["ns"]) for h in halves)):
        est = squared_norm_of_mean(torch.cat([h["resid"][i] for h in halves]).unsqueeze(1))
        floors.append(float(est.value[0]))
        ses.append(float(est.se[0]))
    first = halves[0]
    out = {"ns": first["ns"][:len(floors)], "floor": np.array(floors), "se": np.array(ses),
           "R": sum(h["R"] for h in halves), "T": first["T"], "m": first["m"], "eta": first["eta"],
           "dropped": sum(h["dropped"] for h in halves)}
    if ev is not None:
        ev.scope(DIVERGED_SCOPE, out["dropped"], out["R"])
    if fresh:
        out["fresh"] = fresh_batch_floors(ctx.generator(ID, "fresh floors"), Sigma, W, init, S_hat, ctx, out["eta"])
    return out


def fresh_batch_floors(gen, Sigma, W, init, S_hat, ctx: Context, eta: float = ETA_FLOOR):
    """Stationary excess with ONE fresh noisy batch per step (no expectation): the noise floor, ~ eta/n (steps scale
    as ``1/eta``, as the floor's)."""
    ns = list(ctx.pick(*FRESH_NS))
    Rr, T = ctx.pick(*FRESH_REPLICAS), round(ctx.pick(*FRESH_STEPS) * ETA_FLOOR / eta)
    params = tuple(t.expand(Rr, -1, -1).clone() for t in init)
    vals, ses = [], []
    for n in ns:
        tr = run(params, ex.FreshBatchOracle(Sigma, W, NOISE, n, gen), al.algorithm1(S_hat.expand(Rr, -1, -1), eta),
                 T, lambda p, info: {"excess": excess(*p, Sigma, W)}, range(T // 3, T + 1))
        per_run = tr["excess"].mean(0)  # time average over the stationary window
        vals.append(float(per_run.mean()))
        ses.append(float(per_run.std() / math.sqrt(Rr)))
    return {"ns": ns, "floor": np.array(vals), "se": np.array(ses)}


def decide_floor_exponent(lo: float, hi: float):
    """The floor's exponent against the ``O~(1/n)`` envelope (an upper bound: slope ``<= -1``): ``fail`` if the whole
    interval lies above -1; ``pass`` if it lies at or below -1 and is no wider than ``FLOOR_MAX_WIDTH``; else
    ``inconclusive`` (it straddles -1, or is too wide to mean anything)."""
    return decide_upper(lo, hi, -1.0, max_width=FLOOR_MAX_WIDTH)


def check_floor(ctx: Context, half0: dict, half1: dict, big_n: int = FLOOR_BIG_N) -> Outcome:
    """The exponent of the exact oracle's floor in the context size ``n``, fitted on ``n >= big_n``, from the two
    halves of its replicas (:func:`floor_half`: the control binds them with every context kept at 8 while ``n``
    grows; the free choice binds their step)."""
    ev = Evidence(ctx)
    fixed_context = half0["fixed_context"]
    f = oracle_floors(ctx, [half0, half1], fresh=fixed_context is None, ev=ev)
    eta = f["eta"]
    ns, fl, se = np.array(f["ns"], float), f["floor"], f["se"]
    z = ev.z
    if f["dropped"] > MAX_DROPPED_FRACTION * f["R"]:
        ev.status("inconclusive", f"{f['dropped']} of {f['R']} replicas diverged under the Monte Carlo oracle's noise "
                                  f"(by n = {int(ns[-1]) if len(ns) else 8})")
        return ev.outcome(dropped=f["dropped"])
    if f["dropped"]:
        ev.say(f"{f['dropped']} of {f['R']} replicas diverged under the Monte Carlo oracle's noise and were dropped")
    if np.any(fl <= 0):
        ev.status("inconclusive", f"a floor estimate is not positive: {fl.tolist()}")
        return ev.outcome()
    big = ns >= big_n
    if big.sum() < 3:
        ev.status("inconclusive", f"fewer than 3 context sizes n ≥ {big_n}")
        return ev.outcome()
    fit = loglog_slope(ns[big], fl[big], se[big])
    d = decide_floor_exponent(*fit.interval(1, z))
    ev.decide(f"exponent of the floor in n (n ≥ {big_n})", d, value=float(fit.coef[1]),
              line=f"floor exponent (n ≥ {big_n}) {fit.coef[1]:.3f} [{d.lo:.3f}, {d.hi:.3f}] vs envelope −1 "
                   f"[{d.status}]")
    fa = loglog_slope(ns, fl, se)
    ev.measure("exponent of the floor, all n (power law misspecified: χ²/dof reported)", float(fa.coef[1]),
               "≤ −1 (envelope); local slopes steepen from ≈ −1.2 to −2", *fa.interval(1, z), level=ev.level)
    lf = limit_fit(ns, fl * ns**2, se * ns**2)
    ev.measure("limit of n²·floor (fit a + b/n)", float(lf.coef[0]), "finite, > 0 if the floor is Θ(n⁻²)",
               *lf.interval(0, z), level=ev.level)
    ev.say(f"all n: exponent {fa.coef[1]:.3f} (χ²/dof {fa.chi2_dof:.1f}); n²·floor → {lf.coef[0]:.3g} ± "
           f"{z * lf.se[0]:.2g}")
    fresh = f.get("fresh")
    if fresh is not None and np.all(fresh["floor"] > 0):
        ff = loglog_slope(np.array(fresh["ns"], float), fresh["floor"], fresh["se"])
        ev.measure("exponent of the one-fresh-batch (noise) floor", float(ff.coef[1]), "→ −1 (noise floor ∝ η/n)",
                   *ff.interval(1, z), level=ev.level)
        ev.say(f"one fresh batch per step: exponent {ff.coef[1]:.3f}")
    if ev.plots:
        ev.figure("Statistical floor vs context size", _floor_figure(ns, fl, se, fit, z, fixed_context, fresh, eta),
                  f"Excess at the Polyak-averaged fixed point of Algorithm 1 with the oracle at context n "
                  f"({f['R']} replicas × {f['m']} batches per step, {f['T']} steps per n, U-statistic across "
                  f"replicas, ±z SE), η = {eta:g}.")
    return ev.outcome(ns=f["ns"], floor=fl.tolist(), se=se.tolist(), fixed_context=fixed_context,
                      dropped=f["dropped"])


def _floor_figure(ns, fl, se, fit, z, fixed_context, fresh, eta: float):
    fig, ax = new_figure()
    ax.errorbar(ns, fl, yerr=z * se, fmt="o", capsize=2, color="tab:blue",
                label="exact oracle (control variates)" if fixed_context is None else f"context fixed at {fixed_context}")
    ax.plot(ns, np.exp(fit.coef[0]) * ns ** fit.coef[1], color="tab:blue", lw=0.8,
            label=f"fit: exponent {fit.coef[1]:.2f}")
    ax.plot(ns, fl[0] * ns[0] / ns, "k--", lw=0.8, label="envelope ∝ 1/n")
    ax.plot(ns, fl[-1] * (ns[-1] / ns) ** 2, "k:", lw=0.8, label="∝ 1/n²")
    if fresh is not None:
        ax.errorbar(np.array(fresh["ns"], float), fresh["floor"], yerr=z * fresh["se"], fmt="s", capsize=2,
                    color="tab:orange", label=f"one fresh batch per step (η = {eta:g})")
    ax.set(xscale="log", yscale="log", xlabel="context size n", ylabel="L(θ_∞) − L*")
    ax.legend(loc="best", fontsize=7)
    return fig


# ---------------------------------------------------------------------------
# 3. Probe: the optimization term's contraction, across A3, the initial distance and the step size
# ---------------------------------------------------------------------------
#
# The proof of the optimization term (exact gradients, Algorithm 1's step u with the training set's Sigmahat) is one
# line: dist_{t+1}^2 <= ||theta_t - eta u - P(theta_t)||^2 <= (1 - 2 eta (alpha - kappa sqrt(beta)) + eta^2 (1 +
# kappa)^2
# beta) dist_t^2, by A.L4's (3a), (4a) with eps = 0 (A.T1.3's (3), (4) and ||T - I|| <= kappa = 2e + e^2) while
# dist_t <= rho'.  The probe draws instances on both sides of each assumption that line uses (A3: rho' > 0; Lemma 3's
# event: initial distance <= rho' and e <= e0; step eta <= alpha/beta) and checks the envelope at every step.  Outside
# the assumptions the envelope may fail (recorded, not a counterexample).  The probe runs with the training set's
# Sigmahat: with the true Sigma as preconditioner (GD in factor coordinates, kappa = 0) it would check A.T1.3 along
# trajectories, not Algorithm 1.

# Strata of the probe: (m_op, log10_N, eta_mult) ranges inside all three assumptions, or outside one of them; their
# union is m_op in [0.03, 0.3], log10_N in [2.5, 6.5], eta_mult in [0.1, 2.5].  Drawing the stratum first (PROBE_DRAW)
# keeps a share of the examples inside the assumptions (where a counterexample can be found) at every budget.
PROBE_STRATA = {
    "inside": ((0.03, 0.15), (5.5, 6.5), (0.1, 1.0)),
    "A3 fails": ((0.25, 0.3), (2.5, 6.5), (0.1, 2.5)),
    "small training set": ((0.03, 0.25), (2.5, 5.0), (0.1, 2.5)),
    "long step": ((0.03, 0.25), (2.5, 6.5), (1.0, 2.5)),
}
#: the strata as drawn: "inside" twice, so that about 2/5 of the examples can be decided (hypothesis favours boundary
#: values, and with one "inside" in four a quick run decided only 5 of 40 at seed 1)
PROBE_DRAW = ("inside", "inside", "A3 fails", "small training set", "long step")


def probe_instances():
    """A stratum (``PROBE_STRATA``), then ``Sigma`` (3 x 3, eigenvalues in [1/2, 3]) and ``M*`` (4 x 3) with
    ``sigma_1(M*) = m_op`` (the A3 knob, boundary at 1/4) and ``sigma_d/sigma_1 >= 1/2`` (``M`` is drawn with singular
    values in [1/2, 1] and rescaled); the training-set size ``10^log10_N`` (sets dist_0); the step as a multiple of
    alpha/beta.  The training set itself (up to 3e6 samples, summarized exactly by a Wishart draw of
    ``(X^T X, X^T Y)``) comes from ``seed``: a draw hypothesis cannot generate from its law."""
    return fair_sampled_from(PROBE_DRAW).flatmap(_stratum)  # fair: the ledger's PROBE_DRAW


@functools.cache  # a strategy cache, one strategy per stratum: hypothesis draws faster from one it has seen
def _stratum(name: str):
    (m0, m1), (n0, n1), (e0, e1) = PROBE_STRATA[name]
    return spectral_instances((0.5, 3.0), (MIN_RATIO, 1.0), dims=st.just((ALG_D, ALG_R)), stratum=st.just(name),
                              m_op=st.floats(m0, m1), log10_N=st.floats(n0, n1), eta_mult=st.floats(e0, e1),
                              seed=st.integers(0, 2**31 - 1))


def _target(inst) -> np.ndarray:
    """``M*`` of the instance: the drawn ``M`` rescaled to ``sigma_1 = m_op``."""
    return inst["M"] * (inst["m_op"] / np.linalg.svd(inst["M"], compute_uv=False)[0])


def describe(inst) -> dict:
    return S.readable(inst | {"M*": _target(inst)})


def probe_run(inst) -> dict:
    """Algorithm 1 on the instance: ``dist`` (dist_t for t <= PROBE_T), the envelope factor ``q``, ``rho``, ``e``,
    ``e0`` and ``dist_q_i`` (the distance to the Q = I point of Mfold).  The conclusion runs it and returns it as its
    facts, which the assumptions and the plot read."""
    Sigma, W = ge.instance_from_target(S.tensor(inst["Sigma"]), S.tensor(_target(inst)))
    g = torch.Generator().manual_seed(inst["seed"])
    init, S_hat = training_sets(g, Sigma, W, 1, int(10 ** inst["log10_N"]))
    c = good_init_constants(Sigma[0], W[0])
    rho = c["rho"]
    e = float(ex.whitened_error(S_hat, Sigma)[0])
    kappa = 2 * e + e**2
    a, sb = alpha_bound(c["sigma_d"], max(rho, 0.0)), sqrt_beta_bound(c["sigma_1"], max(rho, 0.0))
    eta = inst["eta_mult"] * a / sb**2
    tr = run(init, al.population_objective(Sigma, W, NOISE), al.algorithm1(S_hat, eta), PROBE_T,
             lambda p, info: {"V": p[0][0], "K": p[1][0]}, range(PROBE_T + 1))
    dist = ge.dist_to_manifold(tr["V"], tr["K"], Sigma[0], W[0]).numpy()  # every step at once
    dist_q_i = ge.dist_to_manifold(tr["V"], tr["K"], Sigma[0], W[0], "identity").numpy()  # the control's projection
    # Lemma 4 with eps = 0 (exact gradients): <u, Delta> >= (alpha - kappa sqrt(beta)) D^2, ||u|| <= (1 + kappa)
    # sqrt(beta) D
    q = 1 - 2 * eta * (a - kappa * sb) + eta**2 * (1 + kappa) ** 2 * sb**2
    return {"dist": dist, "q": q, "rho": rho, "e": e, "e0": c["e0"], "dist_q_i": dist_q_i}


def probe_assumptions(inst, facts: dict) -> dict[str, bool]:
    dist, rho, e, e0 = facts["dist"], facts["rho"], facts["e"], facts["e0"]
    return {"A3: ρ′ > 0": rho > 0, "Lemma 3 event: dist₀ ≤ ρ′ and e ≤ e0": bool(dist[0] <= rho) and e <= e0,
            "step: η ≤ α/β": inst["eta_mult"] <= 1}


def probe_parameters(inst, facts: dict) -> dict[str, float]:
    dist, rho, e, e0 = facts["dist"], facts["rho"], facts["e"], facts["e0"]
    return {"σ₁(M*) (A3 needs ρ′ > 0)": inst["m_op"], "dist₀ / ρ′": float(dist[0] / rho) if rho > 0 else float("nan"),
            "e / e0": e / e0 if e0 > 0 else float("nan"), "η / (α/β)": inst["eta_mult"]}


ENVELOPE_SLACK = 1e-9  # relative slack for rounding in dist (computed from factor-coordinate differences)


def probe_conclusion(inst, alpha_each: float, projection: str = "polar"):
    """The envelope at every step of Algorithm 1 with its Sigmahat step, ``dist`` to the Procrustes projection (control:
    ``projection="identity"``, the distance to the Q = I point of Mfold instead).  Its facts: the run
    (:func:`probe_run`)."""
    facts = probe_run(inst)
    dist = facts["dist"] if projection == "polar" else facts["dist_q_i"]
    t = np.arange(len(dist))
    q_claim = facts["q"]
    if not np.all(np.isfinite(dist)):
        return False, "", "iterates diverged", facts
    env = dist[0] ** 2 * np.maximum(q_claim, 0.0) ** t
    bad = np.flatnonzero(dist**2 > env * (1 + ENVELOPE_SLACK) + 1e-24)
    if bad.size:
        k = int(bad[0])
        return False, "", f"dist²_t = {dist[k] ** 2:.3g} > envelope {env[k]:.3g} at t = {k} (q = {q_claim:.4f})", facts
    return True, "", "", facts


# ---------------------------------------------------------------------------
# 4. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID,
    title="Data-compute scaling law: Õ(1/n) + C e^{−cT}",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("Exponents exact in the source text, constants lost. The predicted rate (linearization in factor "
                   "coordinates; = 2ησ_d(M*) per step for the displacement when Σ̂ = Σ) and the envelope from A.T1.3's "
                   "constants (with A.L4's κ for Σ̂) are ours. The floor is tested against the Õ(1/n) envelope (an "
                   "upper bound, interval no wider than 0.5); the exact oracle's floor is measured to decay like n⁻² "
                   "(our derivation: O(1/n) oracle bias, squared). Every run uses Algorithm 1's own step with the "
                   "training set's Σ̂ (the probe too: with the true Σ it would check A.T1.3, not Algorithm 1). "
                   "The two-sided and "
                   "the one-sided preconditioner share the asymptotic rate; a key-block mode tells them apart."),
    findings=(
        "With the exact oracle the optimization floor is O(n⁻²), a factor 1/n below the Õ(1/n) envelope; the 1/n "
        "floor seen with one fresh minibatch per step is a noise floor ∝ η/n.",
        "A one-sided preconditioner has the same asymptotic rate as the two-sided one (the slowest mode is in the "
        "value block); only the key-block modes tell the two apart.",
    ),
    assumptions=(
        A1, A2, a3("σ₁(M*) = 0.15, so ‖B‖op < 1/2 near Mfold (the probe crosses it: σ₁(M*) up to 0.3)"),
        Assumption("Lemma 3 event", "the run starts within ρ′ of Mfold with e ≤ e0 (N = 4000 here; the probe crosses it)"),
        Assumption("step size", "rate: η = α(ρ′)/β(ρ′) per instance; floor: η = 0.3 (< 2/μ_max)"),
        ALG_SCOPE, GAP_SCOPE, DIVERGED_SCOPE,
    ),
    checks=(
        Check("derivation", "symbolic", "The proof's recursion solved and its step optimized (c_env = −log(1 − α²/β) "
              "at η = α/β); the linearized rate c = −2 log(1 − 2ησ_d) in the smallest case with r > d (d = 1, "
              "r = 2); the linearized rate at least the envelope's", symbolic_rates),
        Check("rate", "numeric", "Fitted geometric rate of L − L* vs the linearized prediction and the envelope",
              check_rate),
        Check("key-block-mode", "numeric", "Algorithm 1 started on a key-block mode of its two-sided iteration decays "
              "along it at the predicted −log|1 − ημ| (to 1e-3): where two- and one-sided preconditioners differ",
              check_key_block_mode, stochastic=False),
        Check("floor", "numeric", "Floor of Algorithm 1 with the oracle vs context size n = 8..256: exponent ≤ −1",
              check_floor, uses=floor_halves()),
        probe("Hypothesis across A3 (σ₁(M*)), the training-set size (initial distance, e) and the "
              "step size: inside the assumptions dist²_t ≤ (1 − 2η(α − κ√β) + η²(1 + κ)²β)^t dist²₀ at every step of "
              "Algorithm 1 with its Σ̂", strategy=probe_instances(), conclusion=probe_conclusion,
              examples=PROBE_EXAMPLES, describe=describe, min_decided=PROBE_MIN_DECIDED, assumptions=probe_assumptions,
              parameters=probe_parameters),
    ),
    controls=(
        Control("symbolic: slowest mode 4σ_d", "derivation", "the slowest mode claimed at 4σ_d, the rate when r = d "
                "(without the extra rows of A that A.T2's instances have)", {"slowest_mode": four_sigma_d}),
        Control("no preconditioner", "rate", "plain GD on L_λ: a different rate than predicted",
                {"preconditioner": NO_PRECONDITIONER}),
        Control("one-sided preconditioner", "key-block-mode", "(g_VΣ̂⁻¹, Σ̂⁻¹g_K): the key block's step is off by Σ on "
                "the right, so the mode decays at another rate", {"preconditioner": ONE_SIDED}),
        Control("context fixed at 8", "floor", "the oracle's contexts kept at 8 samples while n grows: no decay",
                floor_halves(fixed_context=8)),
        Control("probe: Q = I projection", "probe", "the envelope for the distance to the Q = I point of Mfold in place "
                "of the Procrustes projection P(θ): the probe must find a trajectory inside the assumptions that leaves "
                "it", {"mutant": {"projection": "identity"}}),
    ),
    free_choices=(
        FreeChoice("rate step (× α/β)", 1.0, "'for η small enough': from α/β, the largest step A.T1.3's envelope "
                   "certifies, down to a quarter of it (the horizon scales as 1/η, so every run reaches the fit window)",
                   {"rate": lambda v: {"eta_mult": v}}, low=0.25, high=1.0, scale="log"),
        FreeChoice("floor step η", ETA_FLOOR, "the paper's step is lost; 0.1-1 spans a factor 3 either side of our 0.3, "
                   "all below the stability limit 2/μ_max = 3.3 of this family (steps per n scale as 1/η: the same ηT)",
                   {"floor": lambda v: floor_halves(eta=v)}, low=0.1, high=1.0, scale="log"),
        FreeChoice("floor n0", FLOOR_BIG_N, "the theorem's n0(δ) is lost; 16-64 spans a factor 2 either side of our 32 "
                   "and leaves at least 3 context sizes at quick (n ≤ 256)", {"floor": lambda v: {"big_n": v}},
                   low=16, high=64, scale="log", integer=True),
    ),
)
