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
  ``e_0 = sqrt(1 + alpha(rho')/(4 sqrt(beta(rho')))) - 1`` with A.T1.3's ``alpha``, ``beta``.

Evidence.  Algorithm 1's steps 1-2 depend on the data only through ``(X^T X, X^T Y)``, which are sampled exactly
(Wishart by the Bartlett decomposition, then the Gaussian ``X^T E``; ``numerics.paper_a.experiments``), so the
probability ``P(E1 and E2)`` is estimated at ``n = 10^2 .. 10^8`` from hundreds of independent training sets per
``n``.  Decision per instance at the largest ``n`` (the witness ``n0``): Clopper-Pearson interval against
``1 - delta`` (``delta = 0.05``): pass if its lower end is ``>= 1 - delta``, fail if its upper end is below.  The
smallest grid ``n`` from which the estimate stays ``>= 1 - delta`` is reported as the measured ``n0``.

Negative control: the spectral initialization without ``Sigmahat^{1/2}`` (SVD of ``What`` instead of
``What Sigmahat^{1/2}``) converges to a point off Mfold, so ``E1`` fails for every large ``n``.

Instances: ``numerics.paper_a.algorithms.random_instance(d=4, r=5, m_op=0.15)`` (``Sigma = I/2 + G G^T/4``,
``M* = 0.15 H/||H||_op``, ``G, H`` iid N(0,1)), noise ``sigma = 0.3``, four instances, no conditioning.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from numerics.paper_a import experiments as ex
from numerics.paper_a.model import sym_sqrt
from numerics.stats import binomial_interval
from theorems.claim import Assumption, Check, Claim, Context, Control, Figure, Measurement, Outcome
from theorems.claim import worst_status
from theorems.paper_a.t1_3_strong_convexity import alpha_bound, rho_of, sqrt_beta_bound
from theorems.paper_a.init_fixtures import NOISE, instances
from theorems.plots import new_figure, to_svg

ID = "A.L3"
DELTA = 0.05

STATEMENT = (
    r"\forall\delta\;\exists n_0(\delta):\;n\ge n_0\Rightarrow"
    r"\Pr\Big[\operatorname{dist}(\theta_0,\mathcal{M})\le\rho'\;\wedge\;"
    r"\|\Sigma^{1/2}\hat\Sigma^{-1}\Sigma^{1/2}-I\|_{op}\le e_0\Big]\ge1-\delta,\quad"
    r"\rho'=\min\big(\tfrac{2}{\sqrt5}\sigma_d(M^*)^{1/2},\,\tfrac12-\sigma_1(M^*)^{1/2}\big),\;"
    r"e_0=\sqrt{1+\alpha(\rho')/(4\sqrt{\beta(\rho')})}-1"
)


def constants(Sigma: torch.Tensor, W: torch.Tensor) -> dict[str, float]:
    """``rho'``, ``e_0`` and the singular values they come from, for one instance (module docstring)."""
    sv = torch.linalg.svdvals(W @ sym_sqrt(Sigma))
    sd, s1 = float(sv[-1]), float(sv[0])
    rho = min(rho_of(sd), 0.5 - s1**0.5)
    kappa_max = alpha_bound(sd, rho) / (4 * sqrt_beta_bound(s1, rho))
    return {"sigma_d": sd, "sigma_1": s1, "rho": rho, "e0": math.sqrt(1 + kappa_max) - 1}


def check_good_init(ctx: Context, variant: str = "correct") -> Outcome:
    gen = ctx.generator(ID, "good-init")
    n_inst = ctx.pick(4, 6, 8)
    draws = ctx.pick(400, 2000, 5000)
    ns = [10**k for k in range(2, 9)]
    level = 1 - ctx.alpha / n_inst
    Sig, Ws = instances(gen, n_inst)
    statuses, meas, lines = [], [], []
    fig, ax = new_figure()
    for i in range(n_inst):
        c = constants(Sig[i], Ws[i])
        p, lo, hi, p1, p2 = [], [], [], [], []
        for n in ns:
            r = ex.spectral_init_draws(Sig[i], Ws[i], NOISE, n, draws, gen, variant)
            e1, e2 = r["dist"] <= c["rho"], r["e"] <= c["e0"]
            k = int((e1 & e2).sum())
            p.append(k / draws)
            p1.append(float(e1.double().mean()))
            p2.append(float(e2.double().mean()))
            a, b = binomial_interval(k, draws, level)
            lo.append(a)
            hi.append(b)
        st = "pass" if lo[-1] >= 1 - DELTA else "fail" if hi[-1] < 1 - DELTA else "inconclusive"
        statuses.append(st)
        first = lambda ps: next((n for j, n in enumerate(ns) if all(q >= 1 - DELTA for q in ps[j:])), None)  # noqa: E731
        n0, n1, n2 = first(p), first(p1), first(p2)
        meas.append(Measurement(f"instance {i + 1}: P(E1 ∧ E2) at n = 1e8", p[-1], lo[-1], hi[-1],
                                claimed=f"≥ 1 − δ = {1 - DELTA}", level=level))
        meas.append(Measurement(f"instance {i + 1}: measured n0 (δ = {DELTA})", float(n0) if n0 else math.nan,
                                claimed="exists"))
        lines.append(f"#{i + 1} (σ_d={c['sigma_d']:.3f}, ρ'={c['rho']:.3f}, e0={c['e0']:.4f}): "
                     f"P={p[-1]:.3f} [{lo[-1]:.3f}, {hi[-1]:.3f}], n0≈{n0 if n0 else '>1e8'} "
                     f"(E1 alone: {n1 if n1 else '>1e8'}, E2 alone: {n2 if n2 else '>1e8'}) [{st}]")
        ax.errorbar(ns, p, yerr=[np.array(p) - lo, np.array(hi) - p], fmt="o-", capsize=2, label=f"instance {i + 1}")
    ax.axhline(1 - DELTA, color="k", ls="--", lw=0.8, label="1 − δ")
    ax.set_xscale("log")
    ax.set_xlabel("training samples n")
    ax.set_ylabel("P(dist(θ₀) ≤ ρ′ and e ≤ e₀)")
    ax.set_title("spectral init" + ("" if variant == "correct" else f" ({variant}: control)"))
    ax.legend(loc="best", fontsize=7)
    worst = worst_status(statuses)
    return Outcome(worst, " | ".join(lines), meas,
                   [Figure("Probability of a good initialization vs n", to_svg(fig),
                           f"{draws} exactly sampled training sets per n and instance; Clopper-Pearson intervals at "
                           f"level {level:.6f}.")],
                   details={"ns": ns, "draws_per_n": draws, "delta": DELTA, "variant": variant})


CLAIM = Claim(
    id=ID,
    paper="A",
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
                lambda ctx: check_good_init(ctx, "no_sigma_sqrt")),
    ),
)
