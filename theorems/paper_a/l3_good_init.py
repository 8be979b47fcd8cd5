r"""A.L3 — good initialization with high probability (Goel, Soltanolkotabi, Bartlett 2026, Lemma 3).

Statement (reconstructed; exact in shape).  For every ``delta`` there is ``n0(delta)`` such that for ``n >= n0`` the two
events

    E1:  dist(theta_0, Mfold) <= rho'            (the spectral initialization of Algorithm 1)
    E2:  Sigmahat^{-1} is close to Sigma^{-1}

hold simultaneously with probability at least ``1 - delta`` over the ``n`` training samples.

What the constants are (the source text lost them; ours, label reconstructed):

* ``rho' = min(rho, rho_7)``: the source text sets the radius to the smaller of Theorem 1's and Lemma 7's.  ``rho`` is
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

Symbolic: sympy proves the constants (``alpha(rho) = sigma_d``; ``kappa(e0) = alpha/(4 sqrt(beta))``, where Lemma 4's
constant is ``alpha/4``), the exact second moment ``E e^2 = (2n + 8)/((n - 2)(n - 4))`` of the preconditioner's error in
``d = 1`` (``Sigmahat/Sigma = chi^2_n/n``), whose ``n``-multiple tends to 2 (the rate ``n^{-1/2}`` behind the
prediction), and ``n0 = n_ref q^2 = q(T)^2`` from that rate.  Control: the rate 1 (``n^2 E e^2`` has no finite limit,
and ``n_ref q`` is not ``q(T)^2``).

Probe: hypothesis draws ``d <= 4``, ``r <= d + 2``, ``Sigma``, ``M*`` with ``sigma_1(M*)`` across A3's 1/4 (where
``rho'`` vanishes) and ``sigma_d/sigma_1`` across our 1/10, the noise level, ``delta`` in [0.05, 0.2] and the training-set
size ``n`` from ``n_pred/8`` to ``8 n_pred``; inside the assumptions (A3, ``n >= n0(delta) = 2 n_pred(delta)``, our
filter) ``P(E1 and E2) >= 1 - delta`` is decided per instance from exactly sampled training sets (Clopper-Pearson),
``n_pred`` read as in the check from training sets at ``n_ref`` drawn for the instance.  Control: the prediction with
the rate ``1/n``.

Instances: ``theorems.paper_a.init_instances`` (``random_instance(d=4, r=5, m_op=0.15)``, noise ``sigma = 0.3``), no
conditioning.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics.paper_a import experiments as ex
from numerics.paper_a.algorithms import spectral_init_from_estimates
from numerics.stats import decide_binomial
from theorems import strategies as S
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_a.assumptions import A1, A2, a3
from theorems.paper_a.geometry.constants import good_init_constants
from theorems.paper_a.geometry.instances import instance_tensors, spectral_instances
from theorems.paper_a.init_algorithm import spectral_init_without_sigma_sqrt
from theorems.paper_a.init_instances import (M_OP, NOISE, SPECTRAL_MIN_RATIO, SPECTRAL_SCOPE, chi2_expectation, chi2_moment,
                                             instance_generator, instances)
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.strata import fair_sampled_from
from theorems.symbolic import Derivation

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


# ---------------------------------------------------------------------------
# Symbolic derivation: the constants and the n0 prediction
# ---------------------------------------------------------------------------

def symbolic_derivation(rate=sp.Rational(1, 2)) -> Outcome:
    r"""The algebra behind the lemma's constants and its ``n0(delta)``: ``rho`` where ``alpha(rho) = sigma_d``,
    ``e0`` where ``kappa(e0) = alpha/(4 sqrt(beta))`` (so Lemma 4's constant is ``alpha/4``), the exact second moment
    of ``e`` in ``d = 1`` (``Sigmahat/Sigma = chi^2_n/n``), whose ``n^{2 rate}`` multiple must have a finite nonzero
    limit (the rate of the errors behind the prediction), and ``n0 = n_ref q^{1/rate} = q(T)^2``, ``T = sqrt(n_ref)
    max(dist/rho', e/e0)``.  ``rate`` is the errors' claimed rate (control: 1, the squared errors' rate)."""
    Dv = Derivation()
    sd, s1, D, c = sp.symbols("sigma_d sigma_1 D c", positive=True)
    alpha = 2 * sd - sp.Rational(5, 4) * D**2
    rho = 2 / sp.sqrt(5) * sp.sqrt(sd)
    Dv.prove_equal("ρ = (2/√5)σ_d^{1/2} is where A.T1.3's α(D) = 2σ_d − (5/4)D² falls to σ_d", alpha.subs(D, rho), sd,
                   shown=sp.Eq(sp.Subs(alpha, D, rho), sd, evaluate=False))
    e0 = sp.sqrt(1 + c) - 1
    Dv.prove_equal("e0 = √(1 + c) − 1 solves κ(e0) = 2e0 + e0² = c, with c = α/(4√β)", 2 * e0 + e0**2, c,
                   shown=sp.Eq(2 * sp.UnevaluatedExpr(e0) + sp.UnevaluatedExpr(e0) ** 2, c, evaluate=False))
    a, beta = sp.symbols("alpha beta", positive=True)
    kappa = a / (4 * sp.sqrt(beta))
    Dv.prove_equal("at κ = α/(4√β), Lemma 4's constant α/2 − κ√β is α/4", a / 2 - kappa * sp.sqrt(beta), a / 4,
                   shown=sp.Eq(a / 2 - sp.UnevaluatedExpr(kappa) * sp.sqrt(beta), a / 4, evaluate=False))
    n = sp.Symbol("n", positive=True)
    # d = 1: e = |Sigma/Sigmahat - 1| = |n/chi2_n - 1|; its second moment from the chi-square's inverse moments
    e2 = sp.factor(n**2 * chi2_moment(n, -2) - 2 * n * chi2_moment(n, -1) + 1)
    Dv.prove_equal("d = 1: e = |n/χ²_n − 1| (Σ̂/Σ = χ²_n/n), so E e² = n²E[χ⁻⁴] − 2nE[χ⁻²] + 1 = (2n + 8)/((n − 2)(n − 4))",
                   e2, (2 * n + 8) / ((n - 2) * (n - 4)),
                   shown=sp.Eq(chi2_expectation(n, lambda x: (n / x - 1) ** 2), (2 * n + 8) / ((n - 2) * (n - 4)),
                               evaluate=False))
    Dv.prove_equal(f"n^(2·{rate}) E e² → 2: the error e decays like n^(−{rate}) (finite, nonzero limit)",
                   sp.limit(n ** (2 * rate) * e2, n, sp.oo), 2,
                   shown=sp.Eq(sp.Limit(n ** (2 * rate) * e2, n, sp.oo), 2, evaluate=False))
    q, n_ref, nn = sp.symbols("q n_ref n", positive=True)
    n0 = sp.solve(sp.Eq(q * (n_ref / nn) ** rate, 1), nn)
    Dv.prove_equal(f"E1 ∧ E2 at n ⟺ q·(n_ref/n)^{rate} ≤ 1 (q = max(dist/ρ′, e/e0) at n_ref): n0 = n_ref q^(1/{rate}) "
                   "= (√n_ref q)² = q_(1−δ)(T)²", n0[0] if len(n0) == 1 else sp.nan, (sp.sqrt(n_ref) * q) ** 2,
                   shown=sp.Eq(n0[0] if len(n0) == 1 else sp.nan, sp.UnevaluatedExpr(sp.sqrt(n_ref) * q) ** 2,
                               evaluate=False))
    return Dv.outcome("ρ, e0, Lemma 4's constant, the n^(−1/2) rate of e in d = 1 and n0(δ) = q(T)² derived")


# ---------------------------------------------------------------------------
# Probe: P(E1 and E2) >= 1 - delta from n0(delta) on, across instances, noise, delta and A3
# ---------------------------------------------------------------------------

#: strata of the probe: (range of sigma_1(M*), range of log2(n / n_pred(delta))).  Inside: A3 holds (rho' > 0 needs
#: sigma_1 < 1/4) and n >= n0(delta) = N_FACTOR n_pred(delta) (log2 >= 1); the others cross n >= n0 (a smaller
#: training set) or A3 (sigma_1 >= 1/4: E1 is empty, decided without draws)
PROBE_STRATA = {
    "n ≥ n0(δ)": ((0.03, 0.24), (1.0, 3.0)),
    "n < n0(δ)": ((0.03, 0.24), (-3.0, 1.0)),
    "A3 fails": ((0.25, 0.35), (1.0, 3.0)),
}
#: the strata as drawn: inside three times in five, so that PROBE_MIN_DECIDED is met at the quick budget
PROBE_DRAW = ("n ≥ n0(δ)", "n ≥ n0(δ)", "n ≥ n0(δ)", "n < n0(δ)", "A3 fails")
#: the range of the drawn delta (log-uniform): the check's 0.2 down to 0.05 (the probe's training sets grow like
#: 1/delta;
#: the check covers delta down to 0.002 on its own instances)
PROBE_DELTAS = (0.05, 0.2)
#: reference training sets at n_ref, times 1/delta: 50 beyond the (1 - delta)-quantile, which locates it to ~15% (30% in
#: n_pred), inside the factor-2 room of n0 = 2 n_pred
PROBE_REF_PER_DELTA = 50
#: training sets at the probed n, times 1/delta: ~12 failures expected at 2 n_pred (where 1 - P ~ delta/5) put the
#: Clopper-Pearson interval (at the probe's per-example level, z ~ 5) at ~0.7 delta, inside the declared width delta
PROBE_DRAWS_PER_DELTA = 60
#: n_pred beyond this is not probed (float64 resolves the errors ~ sigma/sqrt(n) against O(1) entries to ~1e-9 there)
PROBE_MAX_N = 10**14
PROBE_EXAMPLES = (16, 50, 150)  # probe examples at quick / standard / full
#: at least 5 decided instances inside the assumptions (about 9 of the quick budget's 16 are drawn there: 3/5 of them,
#: less the ~10% our sigma_d/sigma_1 filter removes)
PROBE_MIN_DECIDED = 5


def probe_instances():
    """A stratum (``PROBE_STRATA``), ``d <= 4``, ``r <= d + 2``, ``Sigma`` with eigenvalues in [0.3, 3], ``M*`` with
    singular values in [0.05, 1] rescaled to ``sigma_1(M*) = m_op`` (its ``sigma_d/sigma_1`` crosses our filter at
    1/10), the noise ``sigma`` in [0.05, 1] and ``delta`` in ``PROBE_DELTAS`` (log-uniform), and the training-set
    size as ``log2(n / n_pred(delta))``.  The training sets come from a generator seeded by the instance."""
    return fair_sampled_from(PROBE_DRAW).flatmap(_probe_stratum)


@functools.cache  # a strategy cache, one strategy per stratum: hypothesis draws faster from one it has seen
def _probe_stratum(name: str):
    (m0, m1), (f0, f1) = PROBE_STRATA[name]
    return spectral_instances((0.3, 3.0), (0.05, 1.0), stratum=st.just(name), m_op=st.floats(m0, m1),
                              noise=S.log_uniform(0.05, 1.0), delta=S.log_uniform(*PROBE_DELTAS),
                              log2_factor=st.floats(f0, f1))


def _probe_target(inst) -> np.ndarray:
    """``M*`` of the instance: the drawn ``M`` rescaled to ``sigma_1 = m_op``."""
    return inst["M"] * (inst["m_op"] / np.linalg.svd(inst["M"], compute_uv=False)[0])


def probe_run(inst, alpha_each: float, rate: float = RATE, n_ref: int = N_REF) -> dict:
    """The lemma on the drawn instance: ``n_pred(delta)`` from ``PROBE_REF_PER_DELTA/delta`` training sets at
    ``n_ref`` (with the errors' ``rate``), then ``P(E1 and E2)`` at ``n = 2^log2_factor n_pred`` from
    ``PROBE_DRAWS_PER_DELTA/delta`` fresh ones, decided by Clopper-Pearson at ``1 - delta``."""
    Sigma, W = instance_tensors(inst | {"M": _probe_target(inst)})
    c = good_init_constants(Sigma, W)
    delta = inst["delta"]
    facts = {"rho": c["rho"], "e0": c["e0"], "ratio": c["sigma_d"] / c["sigma_1"], "n_pred": math.inf, "n": math.nan}
    if c["rho"] <= 0:
        return facts | {"holds": False, "detail": f"ρ′ = {c['rho']:.3g} ≤ 0: E1 = {{dist(θ₀) ≤ ρ′}} is empty"}
    gen = instance_generator(inst)
    ref = ex.spectral_init_draws(Sigma, W, inst["noise"], n_ref, math.ceil(PROBE_REF_PER_DELTA / delta), gen)
    n_pred = predicted_n0(ref["dist"], ref["e"], c["rho"], c["e0"], n_ref, delta, rate)
    n = max(inst["d"] + 1, round(2 ** inst["log2_factor"] * n_pred))
    facts |= {"n_pred": n_pred, "n": n}
    if n > PROBE_MAX_N:
        return facts | {"holds": None, "detail": f"n = {n:.3g} beyond the probe's reach"}
    draws = math.ceil(PROBE_DRAWS_PER_DELTA / delta)
    r = ex.spectral_init_draws(Sigma, W, inst["noise"], n, draws, gen)
    k = int(((r["dist"] <= c["rho"]) & (r["e"] <= c["e0"])).sum())
    dec = decide_binomial(k, draws, 1 - alpha_each, at_least=1 - delta, max_width=delta)
    return facts | {"holds": None if dec.status == "inconclusive" else dec.status == "pass", "P": k / draws,
                    "detail": f"n = {n:.3g} = {n / n_pred:.3g} n_pred: P(E1 ∧ E2) = {k / draws:.4f} (δ = {delta:.3g}) "
                              f"{dec}"}


@functools.cache  # one conclusion per reference size: the free choice "reference n" sets it, the same object at N_REF
def probe_conclusion_at(n_ref: int):
    """The probe's conclusion with the prediction read at ``n_ref``."""
    def probe_conclusion(inst, alpha_each, rate: float = RATE):
        """``P(E1 and E2) >= 1 - delta`` at the drawn ``n`` (:func:`probe_run`; ``rate``: control 1)."""
        f = probe_run(inst, alpha_each, rate, n_ref)
        return f["holds"], inst["stratum"], f["detail"], f
    return probe_conclusion


def probe_assumptions(inst, facts: dict) -> dict:
    return {"A3: ρ′ > 0": facts["rho"] > 0,
            f"n ≥ n0(δ) = {N_FACTOR}·n_pred(δ)": bool(facts["n"] >= N_FACTOR * facts["n_pred"]),
            f"ours: σ_d(M*) ≥ σ₁(M*)/{1 / SPECTRAL_MIN_RATIO:g}": facts["ratio"] >= SPECTRAL_MIN_RATIO}


def probe_parameters(inst, facts: dict) -> dict:
    return {"n / n_pred(δ)": facts["n"] / facts["n_pred"] if math.isfinite(facts["n_pred"]) else math.nan,
            "σ₁(M*) (A3: < 1/4)": inst["m_op"], "σ_d/σ₁": facts["ratio"], "δ": inst["delta"]}


def describe(inst, facts: dict) -> dict:
    return S.readable(inst | {"M*": _probe_target(inst)} | {k: v for k, v in facts.items() if k != "holds"})


CLAIM = Claim(
    id=ID,
    title="Spectral initialization lands near the manifold with high probability",
    statement=STATEMENT,
    fidelity="reconstructed",
    fidelity_note=("The source text pins down the shape (two events, probability ≥ 1−δ for n ≥ n0(δ)). The radius ρ′ "
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
        Check("derivation", "symbolic", "ρ, e0 and Lemma 4's constant α/4; E e² = (2n + 8)/((n − 2)(n − 4)) in d = 1 "
              "(the rate n^{−1/2}); n0(δ) = q_(1−δ)(T)² from that rate (sympy)", symbolic_derivation),
        Check("n0", "numeric",
              "n0(δ) within a factor 2 of the √n-law prediction from n = 1e3: P(E1 ∧ E2) ≥ 1 − δ at 2·n_pred and "
              "< 1 − δ at n_pred/2, δ = 0.2..0.002 (exact sampling of (XᵀX, XᵀY), Clopper-Pearson)", check_n0),
        probe("Hypothesis over d, r, Σ, M* (σ₁ across A3's 1/4, σ_d/σ₁ across our 1/10), noise, "
              "δ = 0.05..0.2 and n from n_pred/8 to 8·n_pred: P(E1 ∧ E2) ≥ 1 − δ from n0(δ) = 2·n_pred(δ) on "
              "(exact sampling, Clopper-Pearson)", strategy=probe_instances(), conclusion=probe_conclusion_at(N_REF),
              examples=PROBE_EXAMPLES, describe=describe, assumptions=probe_assumptions, parameters=probe_parameters,
              min_decided=PROBE_MIN_DECIDED),
    ),
    controls=(
        Control("symbolic: rate 1/n", "derivation", "the errors' rate claimed 1 (the squared errors' rate): n E e² has "
                "no finite nonzero limit, and n0 = n_ref·q is not q(T)²", {"rate": sp.Integer(1)}),
        Control("spectral init without Σ̂^{1/2}", "n0", "SVD of Ŵ instead of ŴΣ̂^{1/2}: θ₀ stays off Mfold",
                {"spectral_init": spectral_init_without_sigma_sqrt}),
        Control("prediction with rate 1/n", "n0", "n0 predicted with the rate 1/n instead of 1/√n: the squared "
                "errors' rate (dist², e², as a mean-square analysis gives) read as the errors' own, a derivation "
                "error of the lemma's n0 itself. It predicts n0 = N_REF·q instead of N_REF·q², smaller by the factor "
                "q = √(n0/N_REF) ~ 10-60 on these instances (derived from the predicted n0, two to three decades "
                "above N_REF), far outside the factor-2 window, so 2·n_pred falls below the true n0", {"rate": 1.0}),
        Control("probe: prediction with rate 1/n", "probe", "the same search with n_pred = n_ref·q: the probe must "
                "find an instance where P(E1 ∧ E2) < 1 − δ at n ≥ 2·n_pred", {"mutant": {"rate": 1.0}}),
    ),
    free_choices=(
        FreeChoice("reference n", N_REF, "the √n law holds asymptotically and no size is given to read it at; 1e2-1e4 "
                   "spans a decade either side of ours (A.L5's grid starts at 1e3)",
                   {"n0": lambda v: {"n_ref": v}, "probe": lambda v: {"conclusion": probe_conclusion_at(int(v))}},
                   low=100, high=10_000, scale="log", integer=True),
        FreeChoice("σ₁(M*)", M_OP, "A3's constant is lost; as reconstructed it needs σ₁(M*) < 1/4 (ρ′ > 0): 0.05-0.2 "
                   "spans a factor 3 below our 0.15 to near that bound", {"n0": lambda v: {"m_op": v}},
                   low=0.05, high=0.2, scale="log"),
    ),
)
