r"""A.L3 — good initialization with high probability (Goel, Soltanolkotabi, Bartlett 2026, Lemma 3).

Statement (spec: exact in shape).  For every ``delta`` there is ``n0(delta)`` such that for ``n >= n0`` the two
events

    E1:  dist(theta_0, Mfold) <= rho'            (the spectral initialization of Algorithm 1)
    E2:  Sigmahat^{-1} is close to Sigma^{-1}

hold simultaneously with probability at least ``1 - delta`` over the ``n`` training samples.

What the constants are (the seed lost them; ours, label reconstructed):

* ``rho' = min(rho, rho_7)``: the seed sets the radius to the smaller of Theorem 1's and Lemma 7's.  ``rho`` is
  A.T1.3's derived radius ``(2/sqrt 5) sigma_d(M*)^{1/2}`` (where ``alpha(rho) = sigma_d``).  Lemma 7's radius keeps the
  exponential moments finite; on Mfold ``||B||_op = sigma_1(M*)^{1/2}`` and within ``rho`` of it ``||B||_op <=
  sigma_1(M*)^{1/2} + rho``, so ``rho_7 = 1/2 - sigma_1(M*)^{1/2}`` keeps ``||B||_op < 1/2``, the region where the
  moments A.T1.1's estimators rely on are finite.
* ``E2`` is made concrete as ``e = ||Sigma^{1/2} Sigmahat^{-1} Sigma^{1/2} - I||_op <= e_0`` (this implies
  ``||Sigmahat^{-1} - Sigma^{-1}||_op <= e_0 ||Sigma^{-1}||_op``).  ``e_0`` is what Lemma 4 needs: in factor
  coordinates the preconditioner mismatch has norm ``kappa = 2e + e^2`` (A.L4), and Lemma 4's constant
  ``alpha/2 - kappa sqrt(beta)`` stays ``>= alpha/4`` iff ``kappa <= alpha/(4 sqrt(beta))``, i.e.
  ``e_0 = sqrt(1 + alpha(rho')/(4 sqrt(beta(rho')))) - 1`` with A.T1.3's ``alpha``, ``beta``.  (Both are computed by
  ``theorems.paper_a.geometry_fixtures.good_init_constants``: A.L4 and A.T2 use them too.)

Evidence.  Algorithm 1's steps 1-2 depend on the data only through ``(X^T X, X^T Y)``, which are sampled exactly
(Wishart by the Bartlett decomposition, then the Gaussian ``X^T E``; ``numerics.paper_a.experiments``), so the
probability ``P(E1 and E2)`` is estimated at ``n = 10^2 .. 10^8`` from hundreds of independent training sets per
``n``.  Decision per instance at the largest ``n`` (the witness ``n0``): Clopper-Pearson interval against
``1 - delta`` (``delta = 0.05``): pass if its lower end is ``>= 1 - delta``, fail if its upper end is below.  The
smallest grid ``n`` from which the estimate stays ``>= 1 - delta`` is reported as the measured ``n0``.

Negative control (the check re-run with ``variant="no_sigma_sqrt"``): the spectral initialization without
``Sigmahat^{1/2}`` (SVD of ``What`` instead of ``What Sigmahat^{1/2}``) converges to a point off Mfold, so ``E1`` fails
for every large ``n``.

Instances: ``theorems.paper_a.init_fixtures`` (``random_instance(d=4, r=5, m_op=0.15)``, noise ``sigma = 0.3``), four
instances, no conditioning.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.paper_a import experiments as ex
from numerics.stats import decide_binomial
from theorems.claim import Assumption, Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.paper_a.geometry_fixtures import good_init_constants
from theorems.paper_a.init_fixtures import NOISE, instances
from theorems.plots import new_figure

ID = "A.L3"

STATEMENT = (
    r"\forall\delta\;\exists n_0(\delta):\;n\ge n_0\Rightarrow"
    r"\Pr\Big[\operatorname{dist}(\theta_0,\mathcal{M})\le\rho'\;\wedge\;"
    r"\|\Sigma^{1/2}\hat\Sigma^{-1}\Sigma^{1/2}-I\|_{op}\le e_0\Big]\ge1-\delta,\quad"
    r"\rho'=\min\big(\tfrac{2}{\sqrt5}\sigma_d(M^*)^{1/2},\,\tfrac12-\sigma_1(M^*)^{1/2}\big),\;"
    r"e_0=\sqrt{1+\alpha(\rho')/(4\sqrt{\beta(\rho')})}-1"
)

DELTA = 0.05  # the lemma's delta: P(E1 and E2) >= 1 - delta is what is tested
NS = [10**k for k in range(2, 9)]  # training-set sizes; the largest, 1e8, is the witness n0
MAX_WIDTH = math.inf  # a lower bound on a probability: any Clopper-Pearson interval wholly above 1 - delta passes


def first_good_n(ps) -> int | None:
    """The smallest grid ``n`` from which every estimate is ``>= 1 - delta`` (the measured ``n0``)."""
    return next((n for j, n in enumerate(NS) if all(q >= 1 - DELTA for q in ps[j:])), None)


def check_good_init(ctx: Context, variant: str = "correct") -> Outcome:
    """Per instance: ``P(E1 and E2)`` at ``n = 1e8`` by exact sampling, Clopper-Pearson against ``1 - delta``.
    ``variant`` is the spectral initialization (control: "no_sigma_sqrt")."""
    gen = ctx.generator(ID, "good-init")
    n_inst = ctx.pick(4, 6, 8)
    draws = ctx.pick(400, 2000, 5000)
    ev = Evidence(ctx, decisions=n_inst)
    Sig, Ws = instances(gen, n_inst)
    curves = []
    for i in range(n_inst):
        c = good_init_constants(Sig[i], Ws[i])
        k, p1, p2 = [], [], []
        for n in NS:
            r = ex.spectral_init_draws(Sig[i], Ws[i], NOISE, n, draws, gen, variant)
            e1, e2 = r["dist"] <= c["rho"], r["e"] <= c["e0"]
            k.append(int((e1 & e2).sum()))
            p1.append(float(e1.double().mean()))
            p2.append(float(e2.double().mean()))
        p = [kk / draws for kk in k]
        decisions = [decide_binomial(kk, draws, ev.level, at_least=1 - DELTA, max_width=MAX_WIDTH) for kk in k]
        n0, n1, n2 = first_good_n(p), first_good_n(p1), first_good_n(p2)
        d = decisions[-1]
        ev.decide(f"instance {i + 1}: P(E1 ∧ E2) at n = 1e8", d, value=p[-1],
                  line=f"#{i + 1} (σ_d={c['sigma_d']:.3f}, ρ'={c['rho']:.3f}, e0={c['e0']:.4f}): "
                       f"P={p[-1]:.3f} [{d.lo:.3f}, {d.hi:.3f}], n0≈{n0 if n0 else '>1e8'} "
                       f"(E1 alone: {n1 if n1 else '>1e8'}, E2 alone: {n2 if n2 else '>1e8'}) [{d.status}]")
        ev.measure(f"instance {i + 1}: measured n0 (δ = {DELTA})", float(n0) if n0 else math.nan, claimed="exists")
        curves.append((p, [x.lo for x in decisions], [x.hi for x in decisions]))
    if ev.plots:
        fig, ax = new_figure()
        for i, (p, lo, hi) in enumerate(curves):
            ax.errorbar(NS, p, yerr=[np.array(p) - lo, np.array(hi) - p], fmt="o-", capsize=2,
                        label=f"instance {i + 1}")
        ax.axhline(1 - DELTA, color="k", ls="--", lw=0.8, label="1 − δ")
        ax.set(xscale="log", xlabel="training samples n", ylabel="P(dist(θ₀) ≤ ρ′ and e ≤ e₀)", title="spectral init")
        ax.legend(loc="best", fontsize=7)
        ev.figure("Probability of a good initialization vs n", fig,
                  f"{draws} exactly sampled training sets per n and instance; Clopper-Pearson intervals at "
                  f"level {ev.level:.6f}.")
    return ev.outcome(ns=NS, draws_per_n=draws, delta=DELTA, variant=variant)


CLAIM = Claim(
    id=ID,
    title="Spectral initialization lands near the manifold with high probability",
    statement=STATEMENT,
    fidelity="exact",
    fidelity_note=("The seed pins down the shape (two events, probability ≥ 1−δ for n ≥ n0(δ)). The radius ρ′ "
                   "(A.T1.3's ρ and a Lemma-7 radius keeping ‖B‖op < 1/2) and the closeness e0 of Σ̂⁻¹ (what A.L4's "
                   "constants need) are our reconstruction, derived in the module."),
    assumptions=(
        Assumption("A1", "Σ positive definite"),
        Assumption("A2", "r ≥ d and W* of full column rank"),
        Assumption("A3 (ours)", "σ₁(M*)^{1/2} < 1/2 so that ρ′ > 0 (here σ₁(M*) = 0.15)"),
    ),
    checks=(
        Check("good-init", "numeric",
              "P(E1 ∧ E2) by exact sampling of (XᵀX, XᵀY) at n = 1e2..1e8; Clopper-Pearson at the witness n0 = 1e8",
              check_good_init),
    ),
    controls=(
        Control("spectral init without Σ̂^{1/2}", "good-init", "SVD of Ŵ instead of ŴΣ̂^{1/2}: θ₀ stays off Mfold",
                {"variant": "no_sigma_sqrt"}),
    ),
)
