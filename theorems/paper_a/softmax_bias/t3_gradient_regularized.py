r"""A.T3 — uniform approximation of the expected empirical gradient of the regularized objective (Theorem 3).

Statement (the source text's, shape exact).  For ``theta`` rho-close to the manifold of minima,
``|| E grad (Lhat_n + lambda Rhat)(theta) - grad L_lambda(theta) ||^2 = O~(1/n)`` for ``n`` large enough.

The oracle's batch forms both ``Lhat_n`` and ``Sigmahat`` inside ``Rhat``, and expectation is linear, so the
bias is the sum of A.T4's and A.T5's:

    E grad(Lhat_n + lambda Rhat) - grad L_lambda = grad c / (n - 1) + lambda c_R / n + O(n^{-2})

(``c``: the loss-bias coefficient of A.T1.1; ``c_R``: the regularizer's Isserlis coefficient of A.T5; both derived in
those modules and shared through ``coefficients``; label: reconstructed). The squared error is therefore O(n^{-2}):
the paper's O~(1/n) holds and is loose by a factor 1/n.  We measure it in the dual norm of the
Sigmatilde geometry, ``||G||_*`` = the Frobenius norm of the gradient in factor coordinates
``(G_V S^{-1}, S^{-1} G_K S^{-1})``, the norm in which Lemma 4 and Theorem 2 use it (all norms are equivalent here,
so the exponent does not depend on this choice).

Evidence: (1) the exponent of the squared dual-norm bias (U-statistic: ``E||Dbar||^2 = ||bias||^2 + tr Cov/N``, so the
naive estimate is biased upward and is not used), fitted with its first correction
(``log y = a + b log(n-1) + k/(n-1)``) and decided against the *derived* exponent -2 (verified inside -2 ± 0.5, half the
distance to the paper's -1: ``decisions.RATE_MARGIN``); the paper's envelope 1/n is reported beside it; (2)
``(n-1) x`` bias projected on each block (A and B, factor coordinates) of ``grad c + lambda c_R``, fitted as
``a + b/m + c/m^2 + d/m^3`` (``LOSS_COEFFICIENT_ORDER``), decided inside half the distance to the coefficient without
the regularizer's term ``lambda c_R`` (the mutant of this claim's control, :func:`derived_alternatives`; what A.T3 adds
to A.T4 and A.T5 is that the two biases add up, so the term it must not lose is A.T5's); the B-block is decided
too, not only reported (a reported block cannot fail; see A.T4 and ``decisions``'s ledger).  Controls: the
mean square in place of the squared mean (the single-batch error, which decays like 1/n: rejected by the derived exponent;
:data:`SINGLE_BATCH_ERROR`) and the oracle with ``Sigmahat`` dropped from ``Rhat`` (``Rhat = R(theta; Sigma)``,
unbiased: the data then miss ``lambda c_R``; :func:`regularizer_at_sigma_draws`).  Batches, points and ``lambda = 1/4``
as in A.T4 (the fixture ``gradient_setups.gradient_data``, shared with A.T4; ``numerics.paper_a.geometry.LAMBDA``); both
checks sized in two looks (the shared batches first, decided there when every decision is or one fails; otherwise more
on this claim's own stream, as many as the widest interval asks to reach its 95 %-power width, up to
``PILOT_MAX_GROWTH``; each look at half the level: ``theorems.pilot.two_looks``; the extra chunks are drawn once and
shared by both checks and their controls, :func:`pilot_samples`).

Why the scope matters (measured when this module was written; gradient_setups's ledger entry ``M_OP``).  With
``sigma_1(M*) = 0.25`` (``||B||_op ~ 0.52``, the setting of the oracle's unit tests) the dual-norm bias was 0.18,
0.095, 0.052, 0.032 at n = 16, 32, 64, 128 (U-statistic): an apparent norm exponent of -0.85, and 2-3 times below the
leading term ``||grad c + lambda c_R||_*/(n-1)``.  The leading term still holds asymptotically, but the next order
needs ``E e^{3q}``, infinite once ``||B||_op^2 >= 1/6``, so the approach is slower than ``1/n^2``; the squared error
(exponent ~ -1.7 there) is still inside the paper's envelope.  The instance was then moved to
``sigma_1(M*) = 0.1`` -- after that miss, which the pre-registration records.  Measured again with this
module's checks at ``sigma_1 = 0.25`` (seed 0, quick sizes: 2000 batches per n, n = 8..256, the linear control
variate; ``||B||_op = 0.500, 0.498`` at the two points): squared-bias exponents -1.59 [-1.71, -1.47] and
-1.69 [-1.95, -1.42] -- below the paper's envelope -1 (the paper's claim holds there) but not at our derived -2 -- and
the projected coefficients 10-45% below ``grad c + lambda c_R`` (e.g. A-block [1.66, 1.97] vs 2.12).  So the change
of instance does not hide a violation of the paper's statement; it restricts our derived leading term to
``||B||_op^2 < 1/6``, a scope limit listed in the findings.

Free choices (shared with A.T4 and A.T5: ``gradient_setups.instance_choices``): ``sigma_1(M*)`` over 0.04-0.25, so
the sensitivity map decides the checks at 0.25 as well, the distance ``rho`` of the points and the dimension ``d``.
"""
from __future__ import annotations

import functools

import sympy as sp
import torch

from numerics.paper_a import moments as mo
from numerics.paper_a.geometry import LAMBDA
from theorems.claim import Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.fixture import Parts, fixture
from theorems.paper_a.assumptions import A1, A2
from theorems.paper_a.softmax_bias.coefficients import loss_bias_gradient, regularizer_bias_coefficient
from theorems.paper_a.softmax_bias.decisions import (COEFFICIENT_CAPTION, LOSS_COEFFICIENT_ORDER, SquaredNorm,
                                                     coefficient_decisions, coefficient_plot, headline, mean_square,
                                                     rate_decisions)
from theorems.paper_a.softmax_bias.gradient_setups import (INSTANCE_A3, N_POINTS, NEAR_MANIFOLD, PROBE, PROBE_BATCHES,
                                                           SCALE_SCOPE, PilotChunks, ProbePoint, bias_law_conclusion,
                                                           blocks, gradient_data, instance_choices)
from theorems.probe import probe
from theorems.symbolic import Derivation

ID = "A.T3"
STATEMENT = (
    r"\left\|\mathbb{E}\,\nabla\left(\hat L_n+\lambda\hat R\right)(\theta)-\nabla L_\lambda(\theta)\right\|_*^2"
    r"=\tilde O\!\left(\frac{1}{n}\right)\quad\text{for }\operatorname{dist}(\theta)\le\rho"
)
TITLE = "Uniform approximation of the expected regularized gradient"
FIDELITY_NOTE = (
    "Shape exact (the reconstructed statement is exact in shape): Õ(1/n) bound on the squared error near the manifold. "
    "ρ and the constant are lost; we test θ at Σ̃-distance 0.05 with A3 as σ₁(W*Σ^{1/2}) = 0.1 (moved from 0.25 "
    "after a miss of our derived leading term there, see the module docstring), in the dual norm ‖·‖_*. The exact "
    "leading term (∇c + λc_R)/n (squared-error exponent −2) is our derivation (reconstructed) from A.T4 and A.T5; the "
    "checks decide it (exponent and both blocks of the coefficient), the paper's envelope is reported beside it."
)
#: what we found beyond the verdict (``verify readme`` lists it)
FINDINGS = (
    "Loose by a factor 1/n: the squared bias of the expected regularized gradient decays with exponent −2 (decided "
    "against our derivation (∇c + λc_R)/n), one power below the paper's Õ(1/n) envelope.",
    "Scope: our derived leading term needs ‖B‖op² < 1/6 (the bias series' second order needs E e^{3q} < ∞); at "
    "σ₁(M*) = 0.25 (‖B‖op ≈ 0.52) the bias approaches it far more slowly than 1/n², so the instance is "
    "σ₁(M*) = 0.1, chosen after that miss.",
    "Each block is decided inside half the distance to the coefficient without λc_R (the control's mutant), which "
    "the instance sets: the B-blocks and point 2's A-block lie about 20 % or more from it at 99 % of instances, but "
    "at point 1 (a Haar-random point of the manifold) λc_R moves the A-block by a few percent of ∇_V c (median 4.2 % "
    "over 400 instance draws; 14.6 % at seed 0), below the ~13 % (quick) and ~7.5 % (standard) the check resolves "
    "at its pilot's cap: that block is then inconclusive for lack of power at most instances "
    "(verify/expectations.toml).",
)

#: the decisions the control "Σ̂ dropped from R̂" must fail (its aim): the blocks where the missing λc_R lies about
#: 20 % or more from ∇c + λc_R at 99 % of 400 instance draws (FINDINGS); at point 1's A-block it moves the coefficient
#: by a few percent, below the check's resolution, so a rejection there would be luck
SIGMA_HAT_MOVES = ("point 1, B-block*", "point 2, *")
#: the pilot's cap on cost (``theorems.pilot.two_looks``: more batches where the pilot's widest interval is wider than
#: its 95 %-power width): 4-fold the shared batches, about a minute more per run at quick; A.T4's cap (the same batches)
PILOT_MAX_GROWTH = 4
#: the coefficient check's cap per budget (quick, standard, full): at quick its point-1 A-block alternative lies within
#: the ~13 % it resolves even at 4-fold the batches at 96 % of instances (FINDINGS), so the check decided at 1 of 20
#: quick confirmation seeds while its growth was a third of the quick tier's longest chain: quick decides on the pilot
#: (each block's interval reported, with why it cannot decide), standard and full as before
COEFFICIENT_MAX_GROWTH = (1, PILOT_MAX_GROWTH, PILOT_MAX_GROWTH)

# ---------------------------------------------------------------------------
# 1. Symbolic derivation: the dual norm's coordinates and the leading term of the sum
# ---------------------------------------------------------------------------

def summed_coefficient(loss, regularizer, lam):
    """The leading coefficient the checks decide: ``(n - 1)`` times ``loss / (n - 1) + lam regularizer / n`` tends to
    ``loss + lam regularizer`` (``grad c + lambda c_R``)."""
    return loss + lam * regularizer


def coefficient_without_regularizer(loss, regularizer, lam):
    """Wrong on purpose (control): the leading coefficient without the regularizer's bias (``grad c`` alone)."""
    return loss


def _sym_matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, sp.symbols(f"{name}_1:{rows + 1}(1:{cols + 1})", real=True))


def symbolic_derivation(coefficient=summed_coefficient) -> Outcome:
    """(1) The dual norm's coordinates: with ``A = V S``, ``B = S K S`` (``S = Sigma^{1/2}``), the chain rule gives
    ``grad_A g = grad_V f S^{-1}`` and ``grad_B g = S^{-1} grad_K f S^{-1}`` for ``f(V, K) = g(V S, S K S)`` (d = r = 2,
    a ``g`` with linear and cubic terms); (2) with the bias ``a/(n-1) + lambda b/n + e/n^2`` (``a = grad c``,
    ``b = c_R``, ``e`` the remainder's coefficient), ``(n-1)`` times it tends to ``coefficient(a, b, lambda)`` and
    ``n^2`` times its squared norm to that coefficient's squared norm: exponent -2 whatever ``n`` or ``n - 1``
    scales each part.  The control passes :func:`coefficient_without_regularizer`."""
    D = Derivation()
    D.say("The oracle's batch forms both L̂ₙ and the Σ̂ inside R̂; expectation is linear, so E∇(L̂ₙ + λR̂) − ∇L_λ = "
          "(E∇L̂ₙ − ∇L) + λ(E∇R̂ − ∇R) = ∇c/(n−1) + λc_R/n + O(n⁻²) (A.T4's and A.T5's derivations).")
    # (1) factor coordinates
    s11, s22 = sp.symbols("S_11 S_22", positive=True)
    s12 = sp.Symbol("S_12", real=True)
    Sm = sp.Matrix([[s11, s12], [s12, s22]])
    V, K, P, Qm = (_sym_matrix(x, 2, 2) for x in ("V", "K", "P", "Q"))
    A, B = _sym_matrix("A", 2, 2), _sym_matrix("B", 2, 2)
    g = (P * A).trace() + (Qm * B).trace() + (A.T * A * B).trace()  # linear and cubic in the factors
    at = dict(zip(list(A) + list(B), list(V * Sm) + list(Sm * K * Sm)))
    f = g.subs(at, simultaneous=True)
    grad = lambda h, X: sp.Matrix(2, 2, lambda i, j: sp.diff(h, X[i, j]))  # noqa: E731
    gA, gB = grad(g, A).subs(at, simultaneous=True), grad(g, B).subs(at, simultaneous=True)
    GA, GV, GB, GK = (sp.MatrixSymbol(x, 2, 2) for x in ("G_A", "G_V", "G_B", "G_K"))
    Ssym = sp.MatrixSymbol("S", 2, 2)
    D.prove_zero("chain rule, value block: ∇_V f = (∇_A g) S, so the factor-coordinate gradient is G_A = G_V S⁻¹ "
                 "(d = r = 2, S = Σ^{1/2} symmetric, g linear + cubic in (A, B))",
                 (grad(f, V) - gA * Sm).applyfunc(sp.expand), shown=sp.Eq(GA, GV * Ssym.I, evaluate=False))
    D.prove_zero("chain rule, key block: ∇_K f = S (∇_B g) S, so G_B = S⁻¹ G_K S⁻¹",
                 (grad(f, K) - Sm * gB * Sm).applyfunc(sp.expand),
                 shown=sp.Eq(GB, Ssym.I * GK * Ssym.I, evaluate=False))
    D.say("The Σ̃ geometry's dual norm is the Frobenius norm of (G_A, G_B) (numerics.paper_a.moments.to_factor_coords): "
          "the coordinates of every draw and of ∇c + λc_R in this claim's checks.")
    # (2) the sum's leading term and its squared norm
    n = sp.Symbol("n", positive=True)
    lam = sp.Symbol("lambda", positive=True)
    a, b, e = (sp.Matrix(sp.symbols(f"{x}_1:3", real=True)) for x in ("a", "b", "e"))
    bias = a / (n - 1) + lam * b / n + e / n**2
    claimed = coefficient(a, b, lam)
    lim = bias.applyfunc(lambda v: sp.limit((n - 1) * v, n, sp.oo))
    D.prove_zero("(n−1)·bias → the decided coefficient (a = ∇c, b = c_R, e the O(n⁻²) remainder's coefficient; "
                 "two coordinates)", lim - claimed,
                 shown=sp.Eq(sp.Limit((n - 1) * bias, n, sp.oo), claimed, evaluate=False))
    sq = (bias.T * bias)[0]
    D.prove_equal("n²‖bias‖² → ‖∇c + λc_R‖²: the squared error's exponent is −2 (the n−1 and n scalings differ at "
                  "O(n⁻³))", sp.limit(sp.expand(n**2 * sq), n, sp.oo), sp.expand((claimed.T * claimed)[0]),
                  shown=sp.Eq(sp.Limit(n**2 * sq, n, sp.oo), (claimed.T * claimed)[0], evaluate=False))
    D.say("So ‖E∇(L̂ₙ + λR̂) − ∇L_λ‖²_* = ‖∇c + λc_R‖²_*/n² + O(n⁻³) ⊂ Õ(1/n): the exponent −2 and the coefficient "
          "∇c + λc_R the numeric checks decide.")
    return D.outcome("regularized gradient bias (∇c + λc_R)/n + O(n⁻²) in the dual norm's coordinates")


# ---------------------------------------------------------------------------
# 2. The regularized objective's draws and derived coefficient (factor coordinates)
# ---------------------------------------------------------------------------

def _factor(pair, Sigma):
    return mo.to_factor_coords(pair[0], pair[1], Sigma)


def regularized_draws(data, samples):
    """Per-n draws of the regularized objective's gradient bias in factor coordinates (``samples``: per n, a
    ``GradientBiasSamples``): the loss part plus ``lambda`` times the regularizer's, control variates removed."""
    return [_factor(s.dL, data.Sigma) + LAMBDA * _factor(s.dR, data.Sigma) for s in samples]


def single_batch_draws(data, samples):
    """Per-n draws of the single-batch error ``grad(Lhat_n + lambda Rhat) - grad L_lambda`` itself (noisy responses, no
    control variate), which exists for the first batches only (see ``gradient_bias_samples``)."""
    return [_factor(s.err_L, data.Sigma) + LAMBDA * _factor(s.dR_raw, data.Sigma)[: s.err_L[0].shape[0]]
            for s in samples]


def regularizer_at_sigma_draws(data, samples):
    """Wrong on purpose (control): the draws of an oracle whose regularizer is evaluated at ``Sigma`` instead of the
    batch's ``Sigmahat`` (``R(theta; Sigma)`` is exact, so its part of the bias, ``lambda c_R / n``, is missing)."""
    return [_factor(s.dL, data.Sigma) for s in samples]


#: the squared bias the claim bounds: the U-statistic of the regularized draws
REGULARIZED_BIAS = SquaredNorm("‖E∇(L̂ₙ+λR̂) − ∇L_λ‖²_*", regularized_draws)
#: wrong on purpose (control): the mean square of the single-batch error, which keeps its variance (decays like 1/n)
SINGLE_BATCH_ERROR = SquaredNorm("E‖∇(L̂ₙ+λR̂) − ∇L_λ‖²_*", single_batch_draws, mean_square)


def derived_coefficient(data):
    """``grad c + lambda c_R`` in factor coordinates."""
    _, gV, gK = loss_bias_gradient(data.V, data.K, data.Sigma, data.W)
    return mo.to_factor_coords(gV, gK, data.Sigma) + LAMBDA * mo.to_factor_coords(
        *regularizer_bias_coefficient(data.V, data.K, data.Sigma), data.Sigma)


def derived_alternatives(data) -> dict:
    """What the coefficient check must exclude: the coefficient without the regularizer's bias ``lambda c_R``
    (``grad c`` alone, factor coordinates), the value this claim's control (:func:`regularizer_at_sigma_draws`)
    measures; ``decisions.coefficient_decisions`` projects it on each derived block."""
    _, gV, gK = loss_bias_gradient(data.V, data.K, data.Sigma, data.W)
    return {"∇c without λc_R (the regularizer's bias dropped)": mo.to_factor_coords(gV, gK, data.Sigma)}


# ---------------------------------------------------------------------------
# 3. Numeric checks (batches shared with A.T4 and A.T5)
# ---------------------------------------------------------------------------

def more_samples(ctx: Context, data, chunk: int) -> list:
    """The pilot's later stages: the shared batches' number again, per n, on this claim's own stream (chunk 1, 2, ...:
    growth g pools chunks 1..g-1; each chunk's draws depend on the run and its number alone)."""
    gen = ctx.generator(ID, "more batches", chunk)
    return [mo.gradient_bias_samples(data.V, data.K, data.Sigma, data.W, n, data.n_batches, gen) for n in data.ns]


@fixture(uses={"data": gradient_data})
def pilot_samples(ctx, data) -> PilotChunks:
    """``data`` with this claim's later chunks drawn on demand and kept with the value: the rate and coefficient
    checks and their controls, which share it, draw each chunk once (the draws are the same whichever draws first)."""
    return PilotChunks(data, Parts(functools.partial(more_samples, ctx, data)))


def pilot_sized(ctx: Context, batches: PilotChunks, draws_of, decide, decisions: int,
                cap: int = PILOT_MAX_GROWTH) -> tuple[Evidence, object, dict]:
    """``decide(ev, draws)`` (``decisions`` of them) on the shared batches' draws (``draws_of(samples)``, per n), the
    pilot, and in a second look on more batches pooled in (:meth:`PilotChunks.sized`, at most ``cap`` times the
    pilot).  Returns the deciding evidence, ``decide``'s result and what the pilot did (for the record)."""
    shared = draws_of(batches.data.samples)

    def decide_pooled(ev, growth):
        more = [draws_of(batches.more[chunk]) for chunk in range(1, growth)]
        return decide(ev, [torch.cat(per_n) for per_n in zip(shared, *more)])

    return batches.sized(ctx, decide_pooled, decisions, cap)


def check_rate(ctx: Context, batches: PilotChunks, error: SquaredNorm = REGULARIZED_BIAS) -> Outcome:
    """Exponent of the squared dual-norm bias = the derived -2 (the paper's envelope -1 reported); the control passes
    :data:`SINGLE_BATCH_ERROR` (the mean square in place of the squared mean: the single-batch error, which decays
    like 1/n).  Batches sized by a pilot (:func:`pilot_sized`)."""
    data = batches.data

    def draws_of(samples):
        return error.draws(data, samples)

    def derived(m):
        return derived_coefficient(data).pow(2).sum(-1).numpy() / m[:, None] ** 2

    def decide(ev, draws):
        return rate_decisions(ev, data.ns, draws, error.name, error.estimate, derived=derived,
                              derived_label="‖∇c + λc_R‖²/(n−1)²")

    ev, (vals, ses), pilot = pilot_sized(ctx, batches, draws_of, decide, N_POINTS)
    return ev.outcome(headline=headline(ev, f"exponent of {error.name} in n"), ns=data.ns, values=vals, se=ses,
                      **pilot)


def check_coefficient(ctx: Context, batches: PilotChunks, draws=regularized_draws) -> Outcome:
    """(n−1)·bias → ∇c + λc_R in factor coordinates, both blocks decided per point, on ``draws(data, samples)``; the
    control passes :func:`regularizer_at_sigma_draws` (the oracle's R̂ evaluated at Σ instead of the batch's Σ̂, so its
    bias λc_R/n is missing).  Batches sized by a pilot (:func:`pilot_sized`)."""
    data = batches.data
    target = derived_coefficient(data)
    alternatives = derived_alternatives(data)

    def draws_of(samples):
        return draws(data, samples)

    def decide(ev, draws):
        return coefficient_decisions(ev, data.ns, draws, target, [n - 1 for n in data.ns], blocks("A", "B", like=data),
                                     order=LOSS_COEFFICIENT_ORDER, alternatives=alternatives)

    ev, series, pilot = pilot_sized(ctx, batches, draws_of, decide, 2 * target.shape[0],
                                    ctx.pick(*COEFFICIENT_MAX_GROWTH))
    if ev.plots:
        ev.figure("Regularized-gradient bias × (n−1) → ∇c + λc_R",
                  coefficient_plot(data.ns, series, ev.z, "(n−1) ⟨bias, e⟩ (factor coordinates)"), COEFFICIENT_CAPTION)
    return ev.outcome(headline=headline(ev, "(n−1)·bias → ∇c + λc_R per block"), ns=data.ns, lam=LAMBDA,
                      draws=draws.__name__, **pilot)


# ---------------------------------------------------------------------------
# 4. The probe: across A3's scale and the distance from the manifold (gradient_setups' search and rule)
# ---------------------------------------------------------------------------

def probe_draws(point: ProbePoint, gen: torch.Generator) -> torch.Tensor:
    """The regularized objective's control-variated gradient differences (mean: its bias) of ``PROBE_BATCHES`` batches
    at the probed point, in factor coordinates (the dual norm's), (PROBE_BATCHES, 1, p)."""
    s = mo.gradient_bias_samples(point.V, point.K, point.Sigma, point.W, point.n, PROBE_BATCHES, gen, n_err=1)
    return _factor(s.dL, point.Sigma) + LAMBDA * _factor(s.dR, point.Sigma)


def _leading_parts(point: ProbePoint) -> tuple[torch.Tensor, torch.Tensor]:
    """The two parts of the derived leading term at the probed point, factor coordinates: ``grad c / (n - 1)`` (the
    loss's) and ``lambda c_R / n`` (the regularizer's)."""
    _, gV, gK = loss_bias_gradient(point.V, point.K, point.Sigma, point.W)
    c_R = regularizer_bias_coefficient(point.V, point.K, point.Sigma)
    return (mo.to_factor_coords(gV, gK, point.Sigma) / (point.n - 1),
            LAMBDA * mo.to_factor_coords(*c_R, point.Sigma) / point.n)


def probe_leading(point: ProbePoint) -> torch.Tensor:
    """The derived leading term ``grad c / (n - 1) + lambda c_R / n`` at the probed point (factor coordinates)."""
    loss, reg = _leading_parts(point)
    return loss + reg


def probe_leading_without_loss(point: ProbePoint) -> torch.Tensor:
    """Wrong on purpose (control): the regularizer's part ``lambda c_R / n`` alone, as if the leave-one-out loss's
    gradient were unbiased (the oracle loss's is).  The other mutant, ``lambda c_R`` dropped (the coefficient check's
    control), moves the term by a few percent at most instances, inside the probe's band: no probe control."""
    return _leading_parts(point)[1]


def probe_conclusion(inst, alpha_each, leading=probe_leading):
    """The regularized bias at the drawn instance is its derived leading term (``gradient_setups.bias_law_conclusion``:
    within ``PROBE_SHARE`` of its norm); the control passes :func:`probe_leading_without_loss`."""
    return bias_law_conclusion(inst, alpha_each, probe_draws, leading)


# ---------------------------------------------------------------------------
# 5. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID, title=TITLE, statement=STATEMENT, fidelity="exact", fidelity_note=FIDELITY_NOTE, findings=FINDINGS,
    assumptions=(A1, A2, INSTANCE_A3, NEAR_MANIFOLD, SCALE_SCOPE),
    checks=(Check("derivation", "symbolic", "Chain rule to factor coordinates (the dual norm's); (n−1)·bias → "
                  "∇c + λc_R and n²‖bias‖² → ‖∇c + λc_R‖² for the sum of the two biases", symbolic_derivation),
            Check("bias-rate", "numeric", "Exponent of the squared dual-norm bias of the regularized gradient "
                  "(U-statistic) = the derived −2 (the paper's envelope 1/n reported)", check_rate,
                  uses={"batches": pilot_samples}),
            Check("bias-coefficient", "numeric", "(n−1)·bias → ∇c + λc_R in factor coordinates, A- and B-block",
                  check_coefficient, uses={"batches": pilot_samples}),
            probe("Hypothesis across A3's scale σ₁(M*) (to 0.4; our derived term needs ‖B‖op² < "
                  "1/6 at θ) and the distance from Mfold (to 2.5ρ), d ≤ 3, n ∈ {32, 64}: the regularized bias is "
                  "∇c/(n−1) + λc_R/n within half its norm (dual norm; U-statistic of a Monte Carlo per instance)",
                  PROBE, conclusion=probe_conclusion)),
    controls=(Control("symbolic: regularizer's bias dropped", "derivation", "the leading coefficient ∇c alone (λc_R "
                      "dropped): sympy must refuse both limits", {"coefficient": coefficient_without_regularizer}),
              Control("mean square in place of squared mean", "bias-rate",
                      "the single-batch error E‖∇(L̂ₙ+λR̂) − ∇L_λ‖²_* (variance included) decays like 1/n; the "
                      "derived exponent −2 must reject it", {"error": SINGLE_BATCH_ERROR}),
              Control("Σ̂ dropped from R̂", "bias-coefficient",
                      "the oracle's regularizer evaluated at Σ instead of the batch's Σ̂ (unbiased: its λc_R/n missing); "
                      "aimed at the blocks λc_R moves by about 20 % or more (FINDINGS), not point 1's A-block",
                      {"draws": regularizer_at_sigma_draws}, fails=SIGMA_HAT_MOVES),
              Control("probe: the loss's bias dropped", "probe", "the leading term λc_R/n alone (as if the "
                      "leave-one-out loss's gradient were unbiased): the probe must find an instance whose bias it "
                      "misses", {"mutant": {"leading": probe_leading_without_loss}})),
    free_choices=instance_choices({"bias-rate": {"batches": pilot_samples},
                                   "bias-coefficient": {"batches": pilot_samples}}),
)
