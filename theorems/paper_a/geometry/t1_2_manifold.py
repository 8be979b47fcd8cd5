r"""A.T1.2 — the global minimizers of ``L_lambda`` form the manifold Mfold (Theorem 1.2).

Statement (our reconstruction).  With the compact SVD ``M* = W* Sigma^{1/2} = U Lam Vs^T``,
``Mfold = {theta : A = U Lam^{1/2} Q, B = Vs Lam^{1/2} Q, Q in O(d)}``  (``A = V Sigma^{1/2}``,
``B = Sigma^{1/2} K Sigma^{1/2}``).  Every point of Mfold has ``L = L*`` and ``R = 0``, hence is a global minimizer
of ``L_lambda = L + lambda R``; conversely every global minimizer lies on Mfold.

Derivation.  ``L - L* = ||A B^T - M*||^2 >= 0`` and ``R = ||A^T A - B^T B||^2 >= 0``, so the global minimizers are
exactly the points with ``A B^T = M*`` and ``A^T A = B^T B`` (Mfold attains both).
*Forward*: ``A B^T = U Lam^{1/2} Q Q^T Lam^{1/2} Vs^T = M*`` and ``A^T A - B^T B = Q^T Lam^{1/2}(U^T U - Vs^T Vs)
Lam^{1/2} Q = 0``.
*Converse* (A2: ``rank M* = d``): ``A B^T = M*`` forces ``B`` (d x d) invertible.  ``O = A B^{-1}`` satisfies
``O^T O = B^{-T} A^T A B^{-1} = I`` by balance, so ``M*^T M* = B B^T O^T O B B^T = (B B^T)^2`` and, by uniqueness of
the PSD square root, ``B B^T = Vs Lam Vs^T``.  Then ``Q := Lam^{-1/2} Vs^T B`` has ``Q Q^T = I``, ``B = Vs Lam^{1/2} Q``
and ``A = M* B^{-T} = U Lam Vs^T Vs Lam^{-1/2} Q = U Lam^{1/2} Q``.

Remark (found while checking).  ``Q -> (U Lam^{1/2} Q, Vs Lam^{1/2} Q)`` is a homeomorphism of O(d) onto Mfold
(inverse ``Q = Lam^{-1/2} Vs^T B``), so Mfold has **two** connected components (``det Q = +1`` and ``-1``); the
source text's introduction calls it "a smooth connected manifold".  Both components are global minima: gradient descent
from random inits lands on both (measured below: which sign is called ``det Q = -1`` depends on the SVD's sign
convention, but runs of opposite signs lie in different components whatever the convention), and a probe control
that admits only ``SO(d)`` finds counterexamples.

Evidence: sympy (forward and converse steps, d = 2, r = 3, orthogonal matrices as products of plane rotations; the
converse's identities ``O^T O = I``, ``M*^T M* = (B B^T)^2``, ``Q Q^T = I`` are bookkeeping that holds by associativity
once the hypotheses are substituted, and its one real step, the uniqueness of the PSD square root, is proved in
``d = 2`` by the eigen-decomposition argument: ``N = V_s^T B B^T V_s = [[a, b], [b, c]]`` PSD with ``N^2 = Lam^2``
forces ``b = 0`` (else ``c = -a`` and ``det N < 0``) and ``a = m1^2``, ``c = m2^2``); numeric:
random points of Mfold are stationary global minima; structure-aware GD on the population ``L_lambda`` from random
inits ends on Mfold (every run whose objective reached its minimum has ``dist -> 0``); probe: minimizers built by a
second route (``B = (M*^T M*)^{1/4} O``, ``A = M* B^{-T}``, ``O`` any orthogonal matrix, drawn with the instance by
``instances.spectral_instances``) lie on Mfold.

Controls (each re-runs its check with one parameter overridden): a wrong manifold (``Lam`` in place of ``Lam^{1/2}``)
in the derivation and on the points; the square root's uniqueness without the PSD hypothesis (it fails); the regularizer with ``I`` in place of ``Sigma`` (its minimizers leave Mfold);
no regularizer (minimizers of ``L`` alone keep the conserved imbalance ``A^T A - B^T B`` of the init); the
probe's second route with the balancing exponent 1/2 for 1/4 (a point off Mfold), and the probe's conclusion read as
``SO(d)`` only (the source text's 'connected').
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch

from numerics import DTYPE
from numerics.paper_a import algorithms as al
from numerics.paper_a import geometry as ge
from numerics.paper_a.model import optimal_loss, population_loss, sym_sqrt
from theorems import strategies as S
from theorems.claim import Assumption, Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_a.assumptions import A1, A2
from theorems.paper_a.displays import starred
from theorems.paper_a.geometry.instances import SHAPES, describe, instance_tensors, spectral_instances
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.symbolic import Derivation

ID = "A.T1.2"
SIGMA_NOISE = 0.3  # label noise: it enters L* only (L − L* does not depend on it); any value gives the same minimizers

STATEMENT = (
    r"\operatorname{argmin}_\theta L_\lambda(\theta)=\mathcal{M}=\{\theta:\;V\Sigma^{1/2}=U\Lambda^{1/2}Q,\;"
    r"\Sigma^{1/2}K\Sigma^{1/2}=V_s\Lambda^{1/2}Q,\;Q\in O(d)\},\quad L=L^*,\;R=0\text{ on }\mathcal{M}"
)

TOL = 1e-11  # relative L − L*, R, ‖∇L_λ‖* at exact points of Mfold: float64 rounding is ~1e-15
MINIMA_POINTS = (64, 512, 2048)  # random points of Mfold per shape at quick / standard / full (both components)
#: (d, r) of the GD runs: r > d twice and a square-ish case; quick runs the first two
GD_INSTANCES = ((3, 5), (2, 3), (4, 5))
GD_INSTANCE_COUNT = (2, 3, 3)  # how many of GD_INSTANCES run at quick / standard / full
GD_RUNS = (16, 48, 128)  # random inits per instance at quick / standard / full
#: GD steps: the "R with I" control's runs (its objective does not match Algorithm 1's preconditioner) need the most;
#: at 5000 steps at least 11 of its 32 quick runs converged at each of 100 fresh seeds (ledger)
GD_STEPS = (5000, 5000, 8000)
ETA, INIT_SCALE = 0.05, 0.3  # GD step (stable: eta < 2/lambda_max(Hess) on these instances) and init scale
#: the curvature of L_lambda at an init of scale s grows as s^2 (its quartic terms): from inits larger than INIT_SCALE
#: the step shrinks by (INIT_SCALE / s)^2 and the horizon grows by the same factor (gd_schedule)
STEP_SCALING = 2
OBJ_TOL, DIST_TOL = 1e-14, 1e-5  # converged: objective within 1e-14 ||M*||^2 of L*; on Mfold: dist <= 1e-5 ||M*||^{1/2}
#: fewer converged runs than this fraction: too few minimizers found to say where minimizers lie (inconclusive)
MIN_CONVERGED_FRACTION = 0.5
PROBE_GAP_TOL, PROBE_DIST_TOL = 1e-10, 1e-7  # the second-route minimizer: relative L_λ − L* and dist (rounding ~1e-13)
PROBE_EXAMPLES = (25, 100, 300)  # probe examples at quick / standard / full
#: the probe is deterministic (closed-form minimizers, no Monte Carlo): every draw is decided; 20 is most of quick's 25
PROBE_MIN_DECIDED = 20


# ---------------------------------------------------------------------------
# 1. Symbolic derivation
# ---------------------------------------------------------------------------

CS = [sp.symbols(f"c{i} s{i}", real=True) for i in range(1, 5)]  # cosine/sine pairs, c^2 + s^2 = 1
_RELATIONS = [s_**2 + c_**2 - 1 for c_, s_ in CS]
_GENS = [s_ for _, s_ in CS] + [c_ for c_, _ in CS]


def rot(k: int, i: int = 0, j: int = 1, n: int = 2) -> sp.Matrix:
    """Plane rotation in the (i, j) plane of R^n with the k-th cosine/sine pair (polynomial entries)."""
    c_, s_ = CS[k]
    R = sp.eye(n)
    R[i, i], R[i, j], R[j, i], R[j, j] = c_, -s_, s_, c_
    return R


def _z(expr):
    """Reduce to a canonical form modulo c_i^2 + s_i^2 = 1: the numerator's remainder on division by the
    relations (a Groebner basis: their leading terms s_i^2 are coprime), over the denominator.  An identity
    that holds for all angles becomes exactly 0."""
    if isinstance(expr, sp.MatrixBase):
        return expr.applyfunc(_z)
    num, den = sp.fraction(sp.together(sp.expand(expr)))
    num = sp.expand(num)
    if num == 0:
        return sp.Integer(0)
    gens = _GENS + sorted(num.free_symbols - set(_GENS), key=str)
    rem = sp.reduced(num, _RELATIONS, *gens, order="lex")[1]
    return sp.expand(rem) / den


def _show(lhs, rhs):
    return sp.Eq(lhs, rhs, evaluate=False)


#: display-only matrices (d = 2, r = 3): U, V_s, Λ and its powers, Q, B, M*, I
_U, _VS = sp.MatrixSymbol("U", 3, 2), sp.MatrixSymbol("V_s", 2, 2)
_LAM, _Q, _B = (sp.MatrixSymbol(n, 2, 2) for n in ("Lambda", "Q", "B"))
_LH, _LHI = sp.MatPow(_LAM, sp.Rational(1, 2)), sp.MatPow(_LAM, sp.Rational(-1, 2))
_MS, _I = starred("M", 3, 2), sp.Identity(2)
_DET = sp.Function("det")


def _prove_fact(D: Derivation, text: str, holds: bool, shown) -> bool:
    """Record a fact sympy's assumption system decides (an inequality, a solution set): pass iff ``holds``."""
    return D.prove_zero(text, sp.Integer(0 if holds else 1), shown)


def _uniqueness_of_psd_root(D: Derivation, m1, m2, psd: bool = True) -> None:
    r"""The converse's real step in d = 2: a symmetric PSD ``P`` with ``P^2 = V_s Lam^2 V_s^T`` is ``V_s Lam V_s^T``.

    ``N = V_s^T P V_s = [[a, b], [b, c]]`` is symmetric PSD with ``N^2 = Lam^2 = diag(m1^4, m2^4)``.  The off-diagonal
    entry ``b(a + c)`` of ``N^2`` vanishes, so ``b = 0`` or ``c = -a``; if ``b != 0`` then ``c = -a`` and
    ``det N = -(a^2 + b^2) < 0``: not PSD.  So ``b = 0``, ``a^2 = m1^4``, ``c^2 = m2^4`` with ``a, c >= 0``: ``N = Lam``.
    ``psd=False`` (control) drops the PSD hypothesis: both uses of it fail (the other square roots ``a = -m1^2``, and
    for ``m1 = m2`` the family ``c = -a``, are then admissible)."""
    a, c = (sp.Symbol(n, nonnegative=True) if psd else sp.Symbol(n, real=True) for n in ("a", "c"))
    b = sp.Symbol("b", real=True)
    N = sp.Matrix([[a, b], [b, c]])
    D.say("Uniqueness of the PSD square root (the converse's one real step; d = 2, by eigen-decomposition). "
          "P := BBᵀ is symmetric PSD and P² = V_sΛ²V_sᵀ (above); N := V_sᵀPV_s = [[a, b], [b, c]] is symmetric "
          + ("PSD (a, c ≥ 0, ac − b² ≥ 0)" if psd else "(control: PSD NOT assumed)") + " with N² = Λ² = diag(m₁⁴, m₂⁴).")
    D.prove_equal("N² − Λ²: the off-diagonal entry b(a + c) must vanish, so b = 0 or c = −a",
                  N * N - sp.diag(m1**4, m2**4),
                  sp.Matrix([[a**2 + b**2 - m1**4, b * (a + c)], [b * (a + c), b**2 + c**2 - m2**4]]))
    bnz = sp.Symbol("b", real=True, nonzero=True)
    det_case = (N.det()).subs(c, -a).subs(b, bnz)
    D.prove_equal("if b ≠ 0 then c = −a and det N = ac − b² = −(a² + b²)", det_case, -(a**2 + bnz**2),
                  shown=sp.Eq(_DET(sp.ImmutableMatrix([[a, bnz], [bnz, -a]])),
                              sp.Mul(-1, a**2 + bnz**2, evaluate=False), evaluate=False))
    _prove_fact(D, "… which is < 0 for real a and b ≠ 0 (sympy's assumptions), contradicting det N ≥ 0 (PSD): b = 0",
                psd and bool((-(a**2 + bnz**2)).is_negative),
                sp.StrictLessThan(sp.Mul(-1, a**2 + bnz**2, evaluate=False), 0, evaluate=False))
    roots_a, roots_c = sp.solve(a**2 - m1**4, a), sp.solve(c**2 - m2**4, c)
    _prove_fact(D, "with b = 0: a² = m₁⁴ and c² = m₂⁴ have the single roots a = m₁², c = m₂² with a, c ≥ 0 (PSD), "
                "so N = Λ and BBᵀ = V_sΛV_sᵀ", roots_a == [m1**2] and roots_c == [m2**2],
                sp.Eq(sp.ConditionSet(a, sp.Eq(a**2, m1**4), sp.Interval(0, sp.oo) if psd else sp.S.Reals),
                      sp.FiniteSet(*roots_a), evaluate=False))


def symbolic_derivation(b_power: int = 1, only_forward: bool = False, psd: bool = True) -> Outcome:
    """Forward and converse steps (d = 2, r = 3).  ``b_power = 2`` (control) puts ``Lam`` in place of
    ``Lam^{1/2}`` in ``B``; ``only_forward`` stops after the forward steps (all the control changes); ``psd=False``
    (control) drops the PSD hypothesis from the uniqueness of the square root."""
    D = Derivation()
    m1, m2 = sp.symbols("m1 m2", positive=True)
    U = (rot(0, 0, 1, 3) * rot(1, 1, 2, 3))[:, :2]
    Vs = rot(2)
    Lh = sp.diag(m1, m2)  # Lam^{1/2}
    M = U * Lh * Lh * Vs.T
    D.say("M* = UΛV_sᵀ with U (3×2) and V_s (2×2) orthonormal (products of plane rotations with cosine/sine "
          "pairs cᵢ² + sᵢ² = 1, identities reduced modulo these relations) and Λ^{1/2} = diag(m₁, m₂).")
    Qs = {"rotation": rot(3), "reflection": rot(3) * sp.diag(1, -1)}
    for kind, Q in Qs.items():
        A, B = U * Lh * Q, Vs * Lh**b_power * Q
        D.prove_zero(f"forward ({kind} Q): ABᵀ = UΛ^{{1/2}}QQᵀΛ^{{1/2}}V_sᵀ = M*, so L = L*", _z(A * B.T - M),
                     _show(sp.MatMul(_U, _LH, _Q, sp.Transpose(sp.MatMul(_VS, sp.MatPow(_LAM, sp.Rational(b_power, 2)),
                                                                            _Q))), _MS))
        D.prove_zero(f"forward ({kind} Q): AᵀA − BᵀB = QᵀΛ^{{1/2}}(UᵀU − V_sᵀV_s)Λ^{{1/2}}Q = 0, so R = 0",
                     _z(A.T * A - B.T * B),
                     _show(sp.MatMul(sp.Transpose(_U * _LH * _Q), _U * _LH * _Q),
                           sp.MatMul(sp.Transpose(_VS * sp.MatPow(_LAM, sp.Rational(b_power, 2)) * _Q),
                                     _VS * sp.MatPow(_LAM, sp.Rational(b_power, 2)) * _Q)))
    if only_forward:
        return D.outcome("Mfold ⊂ argmin L_λ")
    # converse: generic invertible B, and A^T A replaced by B^T B (the balance condition).  The identities marked
    # "bookkeeping" hold by associativity once the hypotheses are substituted; the one real step is the uniqueness
    # of the PSD square root, proved after them by the eigen-decomposition argument (d = 2).
    Bg = sp.Matrix(2, 2, sp.symbols("b_11 b_12 b_21 b_22", real=True))
    Bi = Bg.inv()
    D.prove_zero("converse, bookkeeping (associativity): with AᵀA = BᵀB, O = AB⁻¹ has OᵀO = B⁻ᵀ(BᵀB)B⁻¹ = I",
                 sp.simplify(Bi.T * (Bg.T * Bg) * Bi - sp.eye(2)),
                 _show(sp.MatMul(sp.Inverse(_B.T), _B.T * _B, sp.Inverse(_B)), _I))
    D.prove_zero("… bookkeeping (associativity): M*ᵀM* = B(AᵀA)Bᵀ = (BBᵀ)²  (with AᵀA = BᵀB)",
                 sp.expand(Bg * (Bg.T * Bg) * Bg.T - (Bg * Bg.T) ** 2),
                 _show(sp.MatMul(_B, _B.T * _B, _B.T), sp.MatPow(_B * _B.T, 2)))
    D.prove_zero("… bookkeeping: M*ᵀM* = V_sΛ²V_sᵀ = (V_sΛV_sᵀ)²", _z(M.T * M - (Vs * Lh**2 * Vs.T) ** 2),
                 _show(_MS.T * _MS, sp.MatPow(_VS * _LAM * _VS.T, 2)))
    _uniqueness_of_psd_root(D, m1, m2, psd)
    Qd = Lh.inv() * Vs.T  # Q := Lam^{-1/2} Vs^T B
    D.prove_zero("bookkeeping: Q := Λ^{-1/2}V_sᵀB has QQᵀ = Λ^{-1/2}V_sᵀ(BBᵀ)V_sΛ^{-1/2} = I",
                 _z(Qd * (Vs * Lh**2 * Vs.T) * Qd.T - sp.eye(2)),
                 _show(sp.MatMul(_LHI, _VS.T, _VS * _LAM * _VS.T, _VS, _LHI), _I))
    D.prove_zero("… bookkeeping: B = V_sΛ^{1/2}Q", _z(Vs * Lh * Qd * Bg - Bg),
                 _show(sp.MatMul(_VS, _LH, _LHI, _VS.T, _B), _B))
    for kind, Q in Qs.items():
        Bq = Vs * Lh * Q
        adjT = sp.Matrix([[Bq[1, 1], -Bq[1, 0]], [-Bq[0, 1], Bq[0, 0]]])  # B^{-T} = adj(B)^T / det B
        D.prove_zero(f"A = M*B⁻ᵀ = UΛ^{{1/2}}Q ({kind} Q): M*·adj(B)ᵀ − det(B)·UΛ^{{1/2}}Q = 0",
                     _z(M * adjT - Bq.det() * U * Lh * Q), _show(sp.MatMul(_MS, sp.Inverse(_B.T)), _U * _LH * _Q))
        D.prove_zero(f"… with det B = ±m₁m₂ ≠ 0 ({kind} Q)", _z(Bq.det() - (1 if kind == "rotation" else -1) * m1 * m2),
                     _show(_DET(_VS * _LH * _Q), (1 if kind == "rotation" else -1) * m1 * m2))
    return D.outcome("Mfold ⊂ argmin L_λ and argmin L_λ ⊂ Mfold")


# ---------------------------------------------------------------------------
# 2. Numeric check: points of Mfold are stationary global minima
# ---------------------------------------------------------------------------

def wrong_manifold_point(Sigma, W, Q):
    """Negative control: ``B = Vs Lam Q`` (``Lam`` in place of ``Lam^{1/2}``)."""
    U, Lam, Vs = ge.target_svd(Sigma, W)
    A, _ = ge.manifold_factors(U, Lam, Vs, Q)
    return ge.from_factors(A, (Vs * Lam.unsqueeze(-2)) @ Q, Sigma)


def regularizer_and_gradient(V, K, Sigma, W):
    """``R`` and ``grad L_lambda`` as the theorem defines them (``Sigma`` inside ``R``)."""
    return ge.regularizer(V, K, Sigma), ge.regularized_loss_grad(V, K, Sigma, W)


def identity_regularizer_and_gradient(V, K, Sigma, W):
    """Negative control: ``R`` with ``I`` in place of ``Sigma``, and the gradient of ``L + lambda R_I``."""
    d = Sigma.shape[-1]
    return ge.identity_regularizer(V, K), ge.regularized_loss_grad(V, K, Sigma, W, ge.LAMBDA, torch.eye(d, dtype=DTYPE))


def check_minima(ctx: Context, point=ge.minimizer, regularizer=regularizer_and_gradient) -> Outcome:
    """On random points of Mfold (Haar Q, both components): ``L - L*``, ``R``, ``||grad L_lambda||_*`` all vanish
    (relative to ``||M*||^2``, ``||M*||^2``, ``||M*||^{3/2}``).  ``point(Sigma, W, Q)`` is the point of Mfold with
    rotation ``Q``, ``regularizer(V, K, Sigma, W)`` gives ``(R, grad L_lambda)``; the controls pass
    :func:`wrong_manifold_point` and :func:`identity_regularizer_and_gradient`."""
    gen = ctx.generator(ID, "minima")
    n = ctx.pick(*MINIMA_POINTS)
    ev = Evidence(ctx)
    for d, r in SHAPES:
        Sigma, W = al.random_instance(d, r, gen)
        _, Lam, _ = ge.target_svd(Sigma, W)
        s = float(Lam.pow(2).sum().sqrt())  # ||M*||_F
        Q = ge.haar_orthogonal(n, d, gen)
        V, K = point(Sigma, W, Q)
        excess = (population_loss(V, K, Sigma, W, SIGMA_NOISE) - optimal_loss(W, SIGMA_NOISE)).abs() / s**2
        R, G = regularizer(V, K, Sigma, W)
        R = R / s**2
        gnorm = ge.dual_norm(G, Sigma) / s**1.5
        bad = int(((excess > TOL) | (R > TOL) | (gnorm > TOL)).sum())
        det_neg = int((torch.linalg.det(Q) < 0).sum())
        ev.measure(f"d={d}, r={r}: max (L − L*)/‖M*‖²", float(excess.max()), claimed="0")
        ev.measure(f"d={d}, r={r}: max R/‖M*‖²", float(R.max()), claimed="0")
        ev.measure(f"d={d}, r={r}: max ‖∇L_λ‖*/‖M*‖^{{3/2}}", float(gnorm.max()), claimed="0")
        ev.exact(f"d={d}, r={r}: stationary global minima", bad == 0,
                 f"d={d},r={r}: {bad}/{n} not stationary minima (max rel. L−L* {float(excess.max()):.1e}, "
                 f"R {float(R.max()):.1e}, ‖∇‖* {float(gnorm.max()):.1e}; {det_neg} with det Q = −1)")
    return ev.outcome(tolerance=TOL)


# ---------------------------------------------------------------------------
# 3. Numeric check: numerically found minimizers lie on Mfold
# ---------------------------------------------------------------------------

def population_objective_with_identity_regularizer(Sigma, W, sigma: float, lam: float):
    """Negative control: the exact gradient of ``L + lambda R`` with ``I`` in place of ``Sigma`` inside ``R``."""
    return al.population_objective(Sigma, W, sigma, lam, torch.eye(Sigma.shape[-1], dtype=DTYPE))


def gd_schedule(init_scale: float, steps: int) -> tuple[float, int]:
    r"""The GD step and horizon for inits of standard deviation ``init_scale``: ``(ETA c, ceil(steps / c))`` with
    ``c = min(1, (INIT_SCALE / init_scale)^STEP_SCALING)``.

    ``ETA`` is stable from inits of scale ``INIT_SCALE``; the Hessian of ``L_lambda`` at an init of scale ``s`` grows
    as ``s^2`` (``d^2 ||A B^T - M*||^2 / dA^2 ~ B^T B`` and likewise for the quartic ``R``), so a larger init needs a
    step smaller by that factor, and proportionally more steps cover the same flow time ``eta T``.  Inits at or below
    ``INIT_SCALE`` keep ``(ETA, steps)``."""
    c = min(1.0, (INIT_SCALE / init_scale) ** STEP_SCALING)
    return ETA * c, math.ceil(steps / c)


def check_gd_minimizers(ctx: Context, lam: float = ge.LAMBDA, objective=al.population_objective,
                        init_scale: float = INIT_SCALE) -> Outcome:
    r"""Structure-aware GD (Algorithm 1 step 3 with the exact population gradient, i.e. GD in factor coordinates)
    from iid ``N(0, init_scale^2)`` inits, with the step and horizon of :func:`gd_schedule`.  A run *found a global minimizer of its objective* when the objective is within
    ``1e-14 ||M*||^2`` of its minimum ``L*``; the claim says each such run is on Mfold (``dist <= 1e-5 ||M*||^{1/2}``).

    Decision: ``fail`` if any converged run is off Mfold (a minimizer outside Mfold); ``inconclusive`` if fewer
    than half of the runs converged; else ``pass``.  ``objective(Sigma, W, sigma, lam)`` is the exact gradient GD
    follows, ``lam`` the regularization weight; the controls (:func:`population_objective_with_identity_regularizer`,
    R with I; ``lam = 0``) have other minimizers.  ``init_scale`` is the inits' standard deviation.
    """
    gen = ctx.generator(ID, "gd")
    runs = ctx.pick(*GD_RUNS)
    eta, T = gd_schedule(init_scale, ctx.pick(*GD_STEPS))
    ev = Evidence(ctx)
    n_conv = n_off = n_total = 0
    curves = []
    for d, r in GD_INSTANCES[:ctx.pick(*GD_INSTANCE_COUNT)]:
        Sigma, W = al.random_instance(d, r, gen)
        U, Lam, Vs = ge.target_svd(Sigma, W)
        s = float(Lam.pow(2).sum().sqrt())
        init = al.random_init(runs, r, d, gen, scale=init_scale)
        steps = sorted(set(np.unique(np.round(np.logspace(0, math.log10(T), 30))).astype(int).tolist()) | {0, T})
        tr = al.train(init, objective(Sigma, W, SIGMA_NOISE, lam), al.algorithm1(Sigma, eta), T,
                      Sigma, W, SIGMA_NOISE, lam=lam, record_at=steps)
        gap = (tr["objective"][-1] - optimal_loss(W, SIGMA_NOISE)).abs() / s**2
        dist = tr["dist"][-1] / s**0.5
        conv = torch.isfinite(gap) & (gap <= OBJ_TOL)
        off = conv & (dist > DIST_TOL)
        n_conv += int(conv.sum())
        n_off += int(off.sum())
        n_total += runs
        # which component of Mfold did each converged run reach?  (det of the Procrustes rotation)
        A, B = ge.to_factors(*tr.final, Sigma)
        detQ = torch.linalg.det(ge.procrustes_rotation(A, B, U, Lam, Vs))
        n_neg = int((conv & (detQ < 0)).sum())
        max_dist = float(dist[conv].max()) if conv.any() else math.nan
        ev.measure(f"d={d}, r={r}: max dist/‖M*‖^{{1/2}} of converged runs", max_dist, claimed="0")
        ev.measure(f"d={d}, r={r}: fraction of converged runs on the det Q = −1 component",
                   n_neg / max(1, int(conv.sum())), claimed="both components are minima (> 0)")
        ev.exact(f"d={d}, r={r}: converged runs on Mfold", not off.any(),
                 f"d={d},r={r}: {int(conv.sum())}/{runs} converged, {int(off.sum())} of them off Mfold "
                 f"(max dist {max_dist:.2e}); det Q = −1 on {n_neg}/{int(conv.sum())}")
        curves.append((d, r, tr.steps.numpy()[1:], (tr["dist"][1:, :min(runs, 6)] / s**0.5).clamp_min(1e-17).numpy()))
    ev.measure("runs that converged to a global minimizer of their objective", n_conv, claimed=f"of {n_total}")
    if not n_off and n_conv < MIN_CONVERGED_FRACTION * n_total:
        ev.status("inconclusive", f"only {n_conv} of {n_total} runs converged (fewer than {MIN_CONVERGED_FRACTION:.0%})")
    if ev.plots:
        fig, ax = new_figure()
        for d, r, x, ys in curves:
            for k in range(ys.shape[1]):
                ax.loglog(x, ys[:, k], lw=0.7, color=f"C{GD_INSTANCES.index((d, r))}",
                          label=f"d={d}, r={r}" if k == 0 else None)
        ax.axhline(DIST_TOL, color="k", ls="--", lw=0.8)
        ax.set(xlabel="step", ylabel="dist(θ_t, Mfold) / ‖M*‖^{1/2}", title=gd_title(lam, objective))
        ax.legend(loc="best", fontsize=7)
        ev.figure("Minimizers found by GD lie on Mfold", fig, "Distance to Mfold along structure-aware GD runs from "
                  "random inits (6 runs per instance); dashed: the tolerance.")
    return ev.outcome(summary_prefix=f"{n_off} of {n_conv} minimizers off Mfold | ", eta=eta, init_scale=init_scale,
                      steps=T, obj_tol=OBJ_TOL, dist_tol=DIST_TOL, lam=lam, objective=objective.__name__)


def gd_title(lam: float, objective) -> str:
    """The GD plot's title: the check's, or which control (not a decision)."""
    if objective is not al.population_objective:
        return "control: R with I in place of Σ"
    return "structure-aware GD on L_λ" if lam == ge.LAMBDA else f"control: λ = {lam:g}"


# ---------------------------------------------------------------------------
# 4. Probe: minimizers built another way lie on Mfold
# ---------------------------------------------------------------------------

def probe_instances():
    """Σ with eigenvalues in [0.1, 10], M* with singular values in [0.01, 5], d ≤ 4, r ≤ d + 2, and an orthogonal
    ``O`` (d x d, either component of O(d))."""
    return spectral_instances((0.1, 10.0), (0.01, 5.0), O=lambda d, r: S.rotation(d))


def balanced_minimizer(Sigma, W, O, power: float = 0.25):
    """A second route to a global minimizer: ``B = (M*^T M*)^{1/4} O``, ``A = M* B^{-T}``
    (eigendecompositions, no SVD).  ``power``: the balancing exponent 1/4 (a control passes 1/2: ``A B^T = M*``
    still, but the factors are unbalanced, so ``R > 0`` and the point is off Mfold)."""
    Sh = sym_sqrt(Sigma)
    M = W @ Sh
    P = sym_sqrt(sym_sqrt(M.mT @ M)) if power == 0.25 else _sym_power(M.mT @ M, power)
    B = P @ O
    A = M @ torch.linalg.inv(B).mT
    return ge.from_factors(A, B, Sigma)


def _sym_power(X, power: float):
    """``X^power`` of a symmetric PSD matrix by its eigendecomposition (eigenvalues clipped at 0)."""
    lam, Q = torch.linalg.eigh(X)
    return Q @ torch.diag_embed(lam.clamp_min(0) ** power) @ Q.mT


PROBE_CONCLUSIONS = ("on_mfold", "so_d")  # the claim's conclusion, then a misreading of it (a probe control)


def probe_conclusion(inst, alpha_each, conclusion: str = "on_mfold", balance_power: float = 0.25):
    """``conclusion``: ``"on_mfold"`` (the claim) or ``"so_d"`` (the source text's 'connected' read as a claim:
    minimizers have det Q = +1); ``balance_power``: the second route's exponent (:func:`balanced_minimizer`; a
    control passes 1/2)."""
    if conclusion not in PROBE_CONCLUSIONS:
        raise ValueError(f"unknown conclusion {conclusion!r}; choose from {PROBE_CONCLUSIONS}")
    Sigma, W = instance_tensors(inst)
    V, K = balanced_minimizer(Sigma, W, S.tensor(inst["O"]), balance_power)
    U, Lam, Vs = ge.target_svd(Sigma, W)
    s = float(Lam.pow(2).sum().sqrt())
    gap = (ge.regularized_loss(V, K, Sigma, W, 0.0) / s**2).abs()
    dist = ge.dist_to_manifold(V, K, Sigma, W) / s**0.5
    ok = bool((gap <= PROBE_GAP_TOL).all() and (dist <= PROBE_DIST_TOL).all())
    if conclusion == "so_d":
        A, B = ge.to_factors(V, K, Sigma)
        ok = ok and bool((torch.linalg.det(ge.procrustes_rotation(A, B, U, Lam, Vs)) > 0).all())
    return ok, "in scope", f"max (L_λ − L*)/‖M*‖² {float(gap.max()):.1e}, max dist/‖M*‖^½ {float(dist.max()):.1e}"


# ---------------------------------------------------------------------------
# 5. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID,
    title="The global minimizers of L_λ are the manifold Mfold",
    statement=STATEMENT,
    fidelity="reconstructed",
    fidelity_note=("The source text keeps the 'for some orthogonal matrix' structure and that every point of Mfold has "
                   "L = L* and R = 0; the formulas and the converse (every minimizer is on Mfold) are our "
                   "reconstruction, derived here (sympy). In the converse, the identities OᵀO = I, "
                   "M*ᵀM* = (BBᵀ)², QQᵀ = I and B = V_sΛ^{1/2}Q are bookkeeping (they hold by associativity once the "
                   "hypotheses are substituted); its one real step, the uniqueness of the PSD square root, is proved "
                   "in d = 2 by the eigen-decomposition argument (a control drops the PSD hypothesis and fails); for "
                   "d > 2 the converse rests on the standard theorem and on the probe. Mfold ≅ O(d) has two connected "
                   "components, while the source text's introduction says 'connected'; both components are minima (GD "
                   "reaches both)."),
    findings=(
        "The set of minimizers is a copy of O(d): two connected components (det Q = ±1), not one connected manifold "
        "as the introduction's wording suggests; GD lands on both.",
    ),
    assumptions=(A1, A2, Assumption("λ > 0", "the regularizer is on")),
    checks=(
        Check("derivation", "symbolic", "Forward (Mfold ⊂ argmin) and converse (argmin ⊂ Mfold) by sympy",
              symbolic_derivation),
        Check("manifold-points-are-minima", "numeric", "Random points of Mfold (both components): L = L*, R = 0, "
              "∇L_λ = 0", check_minima, stochastic=False),
        Check("gd-minimizers-on-manifold", "numeric", "Structure-aware GD on the population L_λ from random inits: "
              "every run that reaches min L_λ is on Mfold", check_gd_minimizers, stochastic=False),
        probe("Minimizers built by a second route ((M*ᵀM*)^{1/4}O, any O in O(d)) lie on Mfold",
              strategy=probe_instances(), conclusion=probe_conclusion, examples=PROBE_EXAMPLES, describe=describe,
              min_decided=PROBE_MIN_DECIDED, stochastic=False),
    ),
    controls=(
        Control("symbolic: Λ in place of Λ^{1/2}", "derivation", "B = V_sΛQ: ABᵀ ≠ M*",
                {"b_power": 2, "only_forward": True}),
        Control("symbolic: square root without PSD", "derivation", "the converse's uniqueness step without the PSD "
                "hypothesis: a² = m₁⁴ has the second root −m₁², so BBᵀ is not determined", {"psd": False}),
        Control("regularizer with I (on Mfold)", "manifold-points-are-minima", "R with I in place of Σ is not 0 "
                "on Mfold and its gradient does not vanish", {"regularizer": identity_regularizer_and_gradient}),
        Control("Λ in place of Λ^{1/2}", "manifold-points-are-minima", "a wrong manifold: B = V_sΛQ",
                {"point": wrong_manifold_point}),
        Control("regularizer with I (GD)", "gd-minimizers-on-manifold", "minimizers of L + λ‖VᵀV − KᵀK‖² have "
                "L = L* but are off Mfold", {"objective": population_objective_with_identity_regularizer}),
        Control("no regularizer (GD)", "gd-minimizers-on-manifold", "minimizers of L alone keep the init's "
                "imbalance AᵀA − BᵀB: not on Mfold", {"lam": 0.0}),
        Control("probe: balancing power 1/2", "probe", "the second route built with B = (M*ᵀM*)^{1/2}O for "
                "^{1/4} (a wrong exponent): AB^T = M* still, but the factors are unbalanced (R > 0), off Mfold",
                {"mutant": {"balance_power": 0.5}}),
        Control("probe: SO(d) only", "probe", "wrong conclusion: minimizers have det Q = +1 (one component)",
                {"mutant": {"conclusion": "so_d"}}),
    ),
    free_choices=(
        FreeChoice("λ", ge.LAMBDA, "any λ > 0 has the same minimizers (1/4 is our choice); 1/16-1 spans a "
                   "factor 4 either side", {"gd-minimizers-on-manifold": lambda v: {"lam": v}},
                   low=1 / 16, high=1.0, scale="log"),
        FreeChoice("init scale", INIT_SCALE, "the theorem holds from any init; 0.1-1 spans from a start near the "
                   "origin to the paper's iid N(0, 1) init (Appendix A)",
                   {"gd-minimizers-on-manifold": lambda v: {"init_scale": v}}, low=0.1, high=1.0, scale="log"),
    ),
)
