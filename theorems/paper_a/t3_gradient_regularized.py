r"""A.T3 — uniform approximation of the expected empirical gradient of the regularized objective (Theorem 3).

Statement (seed, shape exact).  For ``theta`` rho-close to the manifold of minima,
``|| E grad (Lhat_n + lambda Rhat)(theta) - grad L_lambda(theta) ||^2 = O~(1/n)`` for ``n`` large enough.

The oracle's batch forms both ``Lhat_n`` and ``Sigmahat`` inside ``Rhat``, and expectation is linear, so the
bias is the sum of A.T4's and A.T5's:

    E grad(Lhat_n + lambda Rhat) - grad L_lambda = grad c / (n - 1) + lambda c_R / n + O(n^{-2})

(``c``: the loss-bias coefficient of A.T1.1; ``c_R``: the regularizer's Isserlis coefficient of A.T5; both derived in
those modules and shared through ``theorems/paper_a/gradient_fixtures.py``; label: reconstructed). The squared error
is therefore O(n^{-2}): the paper's O~(1/n) holds and is loose by a factor 1/n.  We measure it in the dual norm of the
Sigmatilde geometry, ``||G||_*`` = the Frobenius norm of the gradient in factor coordinates
``(G_V S^{-1}, S^{-1} G_K S^{-1})``, the norm in which Lemma 4 and Theorem 2 use it (all norms are equivalent here,
so the exponent does not depend on this choice).

Evidence: (1) the exponent of the squared dual-norm bias (U-statistic: ``E||Dbar||^2 = ||bias||^2 + tr Cov/N``,
so the naive estimate is biased upward and is not used) against the envelope 1/n; (2) ``(n-1) x`` bias
projected on the A-block of ``grad c + lambda c_R`` (factor coordinates), fitted as ``a + b/(n-1) + c/(n-1)^2``;
the B-block (which carries the loss's K-gradient, whose Monte Carlo approach is slow and heavy-tailed, see
A.T4) is fitted and reported, not decided.  Controls: a claimed O(1/n^2) envelope for the single-batch error
(which decays like 1/n) and the bias coefficient with the regularizer's share ``lambda c_R`` forgotten.
Batches, points and ``lambda = 1/4`` as in A.T4 (``numerics.paper_a.geometry.LAMBDA``).

Why the scope matters (measured while writing).  With ``sigma_1(M*) = 0.25`` (``||B||_op ~ 0.52``, the setting
of the oracle's unit tests) the dual-norm bias is 0.18, 0.095, 0.052, 0.032 at n = 16, 32, 64, 128 (U-statistic;
the naive estimate is only ~1% higher there): an apparent norm exponent of -0.85, and 2-3 times below the
leading term ``||grad c + lambda c_R||_*/(n-1)``.  The leading term still holds asymptotically, but the next order
needs ``E e^{3q}``, infinite once ``||B||_op^2 >= 1/6``, so the approach is slower than ``1/n^2``; the squared
error (exponent ~ -1.7 there) is still inside the paper's envelope.  Hence our ``sigma_1(M*) = 0.1``.
"""
from __future__ import annotations

from numerics.paper_a import moments as mo
from numerics.paper_a.geometry import LAMBDA
from theorems.claim import Assumption, Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.paper_a.gradient_fixtures import (COEFFICIENT_CAPTION, N_POINTS, blocks, coefficient_decisions,
                                                coefficient_plot, gradient_data, loss_bias_gradient, rate_decisions,
                                                regularizer_bias_coefficient)

ID = "A.T3"
STATEMENT = (
    r"\left\|\mathbb{E}\,\nabla\left(\hat L_n+\lambda\hat R\right)(\theta)-\nabla L_\lambda(\theta)\right\|_*^2"
    r"=\tilde O\!\left(\frac{1}{n}\right)\quad\text{for }\operatorname{dist}(\theta)\le\rho"
)
TITLE = "Uniform approximation of the expected regularized gradient"
FIDELITY_NOTE = (
    "Shape exact (spec: exact (shape)): Õ(1/n) bound on the squared error near the manifold. "
    "ρ and the constant are lost; we test θ at Σ̃-distance 0.05 with A3 as σ₁(W*Σ^{1/2}) = 0.1, "
    "in the dual norm ‖·‖_*. The exact leading term (∇c + λc_R)/n (squared-error exponent −2) is "
    "our derivation (reconstructed) from A.T4 and A.T5."
)
#: what we found beyond the verdict (``verify readme`` lists it)
FINDINGS = (
    "Loose by a factor 1/n: the expected empirical gradient's bias is O(1/n) (its leading coefficient derived and "
    "matched), so the squared error decays like n⁻², inside the paper's Õ(1/n) envelope.",
)


# ---------------------------------------------------------------------------
# 1. The regularized objective's draws and derived coefficient (factor coordinates)
# ---------------------------------------------------------------------------

def _factor(pair, Sigma):
    return mo.to_factor_coords(pair[0], pair[1], Sigma)


def combined_draws(data, raw: bool = False):
    """Per-n draws of the regularized objective's gradient difference in factor coordinates."""
    if raw:  # the noisy single-batch error exists for the first batches only (see gradient_bias_samples)
        return [_factor(s.err_L, data.Sigma) + LAMBDA * _factor(s.dR_raw, data.Sigma)[: s.err_L[0].shape[0]]
                for s in data.samples]
    return [_factor(s.dL, data.Sigma) + LAMBDA * _factor(s.dR, data.Sigma) for s in data.samples]


def derived_coefficient(data, with_regularizer: bool = True):
    """``grad c + lambda c_R`` in factor coordinates (``with_regularizer=False``: ``grad c`` alone, the control)."""
    _, gV, gK = loss_bias_gradient(data.V, data.K, data.Sigma, data.W)
    coef = mo.to_factor_coords(gV, gK, data.Sigma)
    if with_regularizer:
        coef = coef + LAMBDA * mo.to_factor_coords(*regularizer_bias_coefficient(data.V, data.K, data.Sigma),
                                                   data.Sigma)
    return coef


# ---------------------------------------------------------------------------
# 2. Numeric checks (batches shared with A.T4 and A.T5)
# ---------------------------------------------------------------------------

def check_rate(ctx: Context, single_batch: bool = False) -> Outcome:
    """Exponent of the squared dual-norm bias against the envelope 1/n; ``single_batch`` (the control): the
    single-batch error, which decays like 1/n, against a claimed envelope n^-2."""
    data = gradient_data(ctx.seed, ctx.budget)
    ev = Evidence(ctx, decisions=N_POINTS)
    if single_batch:
        vals, ses = rate_decisions(ev, data.ns, combined_draws(data, raw=True), -2.0, "E‖∇(L̂ₙ+λR̂) − ∇L_λ‖²_*",
                                   mse=True)
    else:
        k = derived_coefficient(data).pow(2).sum(-1).numpy()
        vals, ses = rate_decisions(ev, data.ns, combined_draws(data), -1.0, "‖E∇(L̂ₙ+λR̂) − ∇L_λ‖²_*",
                                   derived=lambda n: k / (n[:, None] - 1) ** 2, derived_label="‖∇c + λc_R‖²/(n−1)²")
        ev.measure("derived exponent (this module)", -2.0, claimed="−2 (bias (∇c + λc_R)/n + O(n⁻²))")
    return ev.outcome(ns=data.ns, values=vals, se=ses)


def check_coefficient(ctx: Context, with_regularizer: bool = True) -> Outcome:
    """(n−1)·bias → ∇c + λc_R in factor coordinates: A-block decided per point, B-block reported."""
    data = gradient_data(ctx.seed, ctx.budget)
    target = derived_coefficient(data, with_regularizer)
    ev = Evidence(ctx, decisions=target.shape[0])
    series = coefficient_decisions(ev, data.ns, combined_draws(data), target, [n - 1 for n in data.ns],
                                   blocks("A", "B"), report_only=("B",))
    if ev.plots:
        ev.figure("Regularized-gradient bias × (n−1) → ∇c + λc_R"
                  + ("" if with_regularizer else " (control: λc_R forgotten)"),
                  coefficient_plot(data.ns, series, ev.z, "(n−1) ⟨bias, e⟩ (factor coordinates)"), COEFFICIENT_CAPTION)
    return ev.outcome(ns=data.ns, n_batches=data.n_batches, lam=LAMBDA, with_regularizer=with_regularizer)


# ---------------------------------------------------------------------------
# 3. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID, title=TITLE, statement=STATEMENT, fidelity="exact", fidelity_note=FIDELITY_NOTE, findings=FINDINGS,
    assumptions=(Assumption("A1-A3", "Σ positive definite, r ≥ d, σ₁(W*Σ^{1/2}) = 0.1"),
                 Assumption("ρ-close", "θ at Σ̃-distance 0.05 from Mfold")),
    checks=(Check("bias-rate", "numeric", "Exponent of the squared dual-norm bias of the regularized gradient "
                  "(U-statistic) vs the paper's envelope 1/n", check_rate),
            Check("bias-coefficient", "numeric", "(n−1)·bias → ∇c + λc_R in factor coordinates (A-block decided, "
                  "B-block reported)", check_coefficient)),
    controls=(Control("single-batch error claimed O(1/n²)", "bias-rate",
                      "the single-batch error E‖∇(L̂ₙ+λR̂) − ∇L_λ‖²_* decays like 1/n; envelope n⁻² must be rejected",
                      {"single_batch": True}),
              Control("regularizer bias forgotten", "bias-coefficient",
                      "derived coefficient ∇c only (as if R̂ were unbiased)", {"with_regularizer": False})),
)
