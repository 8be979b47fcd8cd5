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
  ``theorems.paper_a.geometry.constants.good_init_constants``: A.L4 and A.T2 use them too.)

What is tested: ``n0(delta)``, the lemma's content.  Any consistent initialization has ``P(E1 and E2) -> 1``, so a
probability decided at one huge ``n`` (say ``n = 10^8``) cannot fail; the question is *from which n*.
The suite's own analysis predicts it: A.L5 (and the Wishart CLT for ``e``) give the ``sqrt(n)`` law, under which
``T_n = sqrt(n) max(dist(theta_0)/rho', e/e_0)`` has an ``n``-free limit law, and ``E1 and E2`` at ``n`` is
``T_n <= sqrt(n)``; so

    n0(delta) = q_{1-delta}(T)^2,

with ``q`` the quantile of ``T``, read off exactly sampled training sets at one small reference size ``N_REF = 10^3``
(where A.L5's grid starts).  This predicts ``n0`` two to three decades above ``N_REF``.  Decisions per instance and
``delta`` (fresh training sets, Clopper-Pearson): ``P(E1 and E2) >= 1 - delta`` at ``2 n_pred(delta)`` (the lemma at
the predicted ``n0``, with a factor 2 of room), and ``P(E1 and E2) < 1 - delta`` at ``n_pred(delta)/2`` (``n0`` is
not smaller than predicted: the prediction is sharp, not merely a sufficient size).  Together: the measured
``n0(delta)`` lies within a factor 2 of the prediction for ``delta = 0.2 .. 0.002``, and its growth in
``log(1/delta)`` (reported: ``n_pred`` per unit ``log(1/delta)``, affine for the near-Gaussian tails of ``T``) is the
one the lemma's concentration argument gives, not the ``1/delta`` of a variance bound.  On these instances ``E2``
binds (``e_0`` is small: Lemma 4 needs the preconditioner within ``kappa <= alpha/(4 sqrt(beta))``).

Negative controls (each re-runs the check with one parameter overridden): the spectral initialization without
``Sigmahat^{1/2}`` (SVD of ``What`` instead of ``What Sigmahat^{1/2}``) converges to a point off Mfold, so ``E1`` fails
at every large ``n``; the prediction with the rate ``1/n`` in place of ``1/sqrt(n)`` (``n_pred = q_{1-delta}(N_REF
max(...))``: a weaker-than-true ``n0``, as a faster claimed rate would give) puts ``2 n_pred`` below the true ``n0``,
so ``P(E1 and E2) < 1 - delta`` there.

Instances: ``theorems.paper_a.init_instances`` (``random_instance(d=4, r=5, m_op=0.15)``, noise ``sigma = 0.3``), no
conditioning.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from numerics.paper_a import experiments as ex
from numerics.paper_a.algorithms import spectral_init_from_estimates
from numerics.stats import decide_binomial
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_a.assumptions import A1, A2, a3
from theorems.paper_a.geometry.constants import good_init_constants
from theorems.paper_a.init_algorithm import spectral_init_without_sigma_sqrt
from theorems.paper_a.init_instances import M_OP, NOISE, SPECTRAL_SCOPE, instances
from theorems.plots import new_figure

ID = "A.L3"

STATEMENT = (
    r"\forall\delta\;\exists n_0(\delta):\;n\ge n_0\Rightarrow"
    r"\Pr\Big[\operatorname{dist}(\theta_0,\mathcal{M})\le\rho'\;\wedge\;"
    r"\|\Sigma^{1/2}\hat\Sigma^{-1}\Sigma^{1/2}-I\|_{op}\le e_0\Big]\ge1-\delta,\quad"
    r"\rho'=\min\big(\tfrac{2}{\sqrt5}\sigma_d(M^*)^{1/2},\,\tfrac12-\sigma_1(M^*)^{1/2}\big),\;"
    r"e_0=\sqrt{1+\alpha(\rho')/(4\sqrt{\beta(\rho')})}-1,\quad "
    r"n_0(\delta)\approx q_{1-\delta}\big(\sqrt n\max(\operatorname{dist}/\rho',\,e/e_0)\big)^2"
)

DELTAS = (0.2, 0.05, 0.01, 0.002)  # the lemma's delta: n0(delta) tested over two decades of log(1/delta)
N_REF = 10**3  # reference size of the sqrt(n)-law prediction: where A.L5's grid (and its sqrt(n) law) starts
REF_DRAWS = (50_000, 100_000, 200_000)  # training sets at N_REF: >= 100 beyond the 0.998 quantile at quick
DRAWS = (10_000, 20_000, 50_000)  # fresh training sets per decision size, at quick / standard / full
N_INST = (3, 4, 6)  # instances at quick / standard / full
#: n0 is decided within a factor 2 of the prediction (sqrt 2 on the scale of T): wider than the reference's
#: finite-n bias (~15% in n at N_REF = 1e3, measured against 1e4 when the check was designed), far narrower than
#: the gap to a wrong rate (a factor sqrt(n0/N_REF) ~ 10-60)
N_FACTOR = 2
#: P >= 1 - delta at 2 n_pred: an interval wider than delta cannot tell P >= 1 - delta from P >= 1 - 2 delta
#: (max_width = delta, per decision); P < 1 - delta at n_pred/2: the interval must lie below 1 - delta and be
#: narrower than LOWER_MAX_WIDTH (the probability located to +-0.1)
LOWER_MAX_WIDTH = 0.2
#: the rate of the errors in n behind the prediction: A.L5's n^(-1/2) (the control claims n^(-1))
RATE = 0.5


def predicted_n0(dist, e, rho, e0, n_ref: int, delta: float, rate: float = RATE) -> int:
    """``n_pred(delta)``: the smallest ``n`` at which the ``(1 - delta)``-quantile of ``max(dist/rho', e/e0)``, scaled
    from ``n_ref`` by the rate (``(n_ref/n)^rate``: ``1/2``, the suite's; ``1``, a control), is at most 1."""
    m = torch.maximum(dist / rho, e / e0)
    q = float(torch.quantile(m, 1 - delta)) if m.numel() <= 16_000_000 else float(np.quantile(m.numpy(), 1 - delta))
    return max(1, math.ceil(n_ref * q ** (1 / rate)))


def check_n0(ctx: Context, spectral_init=spectral_init_from_estimates, rate: float = RATE, n_ref: int = N_REF,
             m_op: float = M_OP) -> Outcome:
    """Per instance and ``delta``: ``P(E1 and E2) >= 1 - delta`` at ``N_FACTOR n_pred(delta)`` and ``< 1 - delta`` at
    ``n_pred(delta)/N_FACTOR`` (exact sampling, Clopper-Pearson).  ``spectral_init`` is step 2 of Algorithm 1,
    ``(What, Sigmahat) -> theta_0`` (control: ``spectral_init_without_sigma_sqrt``), ``rate`` the prediction's
    (control: 1, the rate 1/n); ``n_ref`` the size the prediction is read at, ``m_op`` the instances'
    ``sigma_1(M*)``."""
    gen = ctx.generator(ID, "n0")
    n_inst, draws = ctx.pick(*N_INST), ctx.pick(*DRAWS)
    ev = Evidence(ctx, decisions=2 * n_inst * len(DELTAS))
    Sig, Ws = instances(gen, n_inst, ev, m_op=m_op)
    rows = []
    for i in range(n_inst):
        c = good_init_constants(Sig[i], Ws[i])
        d = Sig.shape[-1]
        ref = ex.spectral_init_draws(Sig[i], Ws[i], NOISE, n_ref, ctx.pick(*REF_DRAWS), gen, spectral_init)
        preds = []
        for delta in DELTAS:
            n_pred = predicted_n0(ref["dist"], ref["e"], c["rho"], c["e0"], n_ref, delta, rate)
            preds.append(n_pred)
            for side, n in (("above", N_FACTOR * n_pred), ("below", max(d, n_pred // N_FACTOR))):
                r = ex.spectral_init_draws(Sig[i], Ws[i], NOISE, n, draws, gen, spectral_init)
                k = int(((r["dist"] <= c["rho"]) & (r["e"] <= c["e0"])).sum())
                if side == "above":
                    dec = decide_binomial(k, draws, ev.level, at_least=1 - delta, max_width=delta)
                    what = f"P(E1 ∧ E2) at {N_FACTOR}·n_pred = {n:.3g}"
                else:
                    dec = decide_binomial(k, draws, ev.level, at_most=1 - delta, max_width=LOWER_MAX_WIDTH)
                    what = f"P(E1 ∧ E2) at n_pred/{N_FACTOR} = {n:.3g}"
                ev.decide(f"instance {i + 1}, δ = {delta}: {what}", dec, value=k / draws, say=False,
                          measure=(i == 0 or dec.status != "pass"))
                rows.append((i, delta, side, n, k / draws, dec))
        slope = np.polyfit(np.log(1 / np.array(DELTAS)), np.array(preds, float), 1)[0]
        ev.measure(f"instance {i + 1}: predicted n0(δ) per unit log(1/δ)", float(slope),
                   claimed="affine in log(1/δ) (Gaussian-like tails), not ∝ 1/δ")
        e1_alone = predicted_n0(ref["dist"], torch.zeros_like(ref["e"]), c["rho"], c["e0"], n_ref, DELTAS[1], rate)
        ev.measure(f"instance {i + 1}: n_pred(δ = {DELTAS[1]}) of E1 alone / of E1 ∧ E2", e1_alone / preds[1],
                   claimed="< 1: E2 binds")
        ev.say(f"#{i + 1} (σ_d={c['sigma_d']:.3f}, ρ'={c['rho']:.3f}, e0={c['e0']:.4f}): n_pred(δ) = "
               + ", ".join(f"{n:.3g} (δ={dl})" for n, dl in zip(preds, DELTAS)))
    bad = [r for r in rows if r[5].status != "pass"]
    for i, delta, side, n, p, dec in bad[:6]:
        ev.say(f"#{i + 1}, δ={delta}, n={n:.3g} ({side}): P = {p:.4f} {dec}")
    passed = sum(r[5].status == "pass" for r in rows)
    if ev.plots:
        ev.figure("Probability of a good initialization around the predicted n0(δ)", _plot(rows),
                  f"P(E1 ∧ E2) at n_pred(δ)/{N_FACTOR} (below 1 − δ: open) and {N_FACTOR}·n_pred(δ) (at least 1 − δ: "
                  f"filled), {draws} exactly sampled training sets each, Clopper-Pearson at level {ev.level:.6f}; "
                  f"n_pred from the sqrt(n) law and {ctx.pick(*REF_DRAWS)} training sets at n = {n_ref}.")
    return ev.outcome(summary_prefix=f"{passed}/{len(rows)} decisions pass; ", deltas=list(DELTAS), n_ref=n_ref,
                      draws=draws, spectral_init=spectral_init.__name__, rate=rate,
                      n_pred=[[int(r[3]) for r in rows if r[0] == i and r[2] == "above"] for i in range(n_inst)])


def _plot(rows):
    fig, ax = new_figure()
    for i in sorted({r[0] for r in rows}):
        for side, mk in (("above", "o"), ("below", "s")):
            sel = [r for r in rows if r[0] == i and r[2] == side]
            x = [math.log(1 / r[1]) for r in sel]
            y = [1 - r[4] for r in sel]
            ax.plot(x, np.maximum(y, 1e-5), mk + ("-" if side == "above" else "--"), color=f"C{i}",
                    mfc=None if side == "above" else "none", label=f"instance {i + 1}" if side == "above" else None)
    xs = np.linspace(math.log(1 / DELTAS[0]), math.log(1 / DELTAS[-1]), 20)
    ax.plot(xs, np.exp(-xs), "k:", lw=0.8, label="δ")
    ax.set(yscale="log", xlabel="log(1/δ)", ylabel="1 − P(E1 ∧ E2)",
           title="filled: at 2·n_pred (must be ≤ δ); open: at n_pred/2 (must be > δ)")
    ax.legend(loc="best", fontsize=7)
    return fig


CLAIM = Claim(
    id=ID,
    title="Spectral initialization lands near the manifold with high probability",
    statement=STATEMENT,
    fidelity="reconstructed",
    fidelity_note=("The seed pins down the shape (two events, probability ≥ 1−δ for n ≥ n0(δ)). The radius ρ′ "
                   "(A.T1.3's ρ and a Lemma-7 radius keeping ‖B‖op < 1/2), the closeness e0 of Σ̂⁻¹ (what A.L4's "
                   "constants need) and the prediction of n0(δ) from the √n law are our reconstruction, derived in the "
                   "module. The lemma's content is n0(δ): the check decides that the measured n0(δ) lies within a "
                   "factor 2 of the √n-law prediction (P ≥ 1 − δ at 2·n_pred, < 1 − δ at n_pred/2) for δ = 0.2..0.002, "
                   "not a probability at one huge n (which any consistent initialization passes)."),
    findings=(
        "On these instances E2 (Σ̂⁻¹ within e0 of Σ⁻¹) is the binding event: n0(δ), 1e5 to 1e8 here, is set by e0, which "
        "A.L4's constants make small (κ ≤ α/(4√β)); E1 alone is reached about two to three and a half decades earlier.",
    ),
    assumptions=(A1, A2, a3("σ₁(M*)^{1/2} < 1/2 so that ρ′ > 0 (here σ₁(M*) = 0.15)"), SPECTRAL_SCOPE),
    checks=(
        Check("n0", "numeric",
              "n0(δ) within a factor 2 of the √n-law prediction from n = 1e3: P(E1 ∧ E2) ≥ 1 − δ at 2·n_pred and "
              "< 1 − δ at n_pred/2, δ = 0.2..0.002 (exact sampling of (XᵀX, XᵀY), Clopper-Pearson)", check_n0),
    ),
    controls=(
        Control("spectral init without Σ̂^{1/2}", "n0", "SVD of Ŵ instead of ŴΣ̂^{1/2}: θ₀ stays off Mfold",
                {"spectral_init": spectral_init_without_sigma_sqrt}),
        Control("prediction with rate 1/n", "n0", "n0 predicted with the rate 1/n instead of 1/√n: the squared "
                "errors' rate (dist², e², as a mean-square analysis gives) read as the errors' own, a derivation "
                "error of the lemma's n0 itself. It predicts n0 = N_REF·q instead of N_REF·q², smaller by the factor "
                "q = √(n0/N_REF) ~ 10-60 on these instances (derived from the predicted n0, two to three decades "
                "above N_REF), far outside the factor-2 window, so 2·n_pred falls below the true n0", {"rate": 1.0}),
    ),
    free_choices=(
        FreeChoice("reference n", N_REF, "the √n law holds asymptotically and no size is given to read it at; 1e2-1e4 "
                   "spans a decade either side of ours (A.L5's grid starts at 1e3)", {"n0": lambda v: {"n_ref": v}},
                   low=100, high=10_000, scale="log", integer=True),
        FreeChoice("σ₁(M*)", M_OP, "A3's constant is lost; as reconstructed it needs σ₁(M*) < 1/4 (ρ′ > 0): 0.05-0.2 "
                   "spans a factor 3 below our 0.15 to near that bound", {"n0": lambda v: {"m_op": v}},
                   low=0.05, high=0.2, scale="log"),
    ),
)
