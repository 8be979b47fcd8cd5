r"""B.L6 — Example 1 satisfies Assumptions 1-2 with high probability when d is large (Lemma 6).

Source text: "Using [d >= ...] and [...], data generated as per Example 1 satisfies Ass. 1 and 2 with probability at
least [1 - delta], for any [delta]."  Proof: Bernstein bounds on token inner products and norms, a union bound;
"in order to satisfy Assumption 1, ignoring the log factors, we require [...]".  Our reconstruction: qualitative (d >>
n, T up to logs); Ass 1's inequality is lost, its parameter is nu = max |<x, x'>| / min_i ||x_io||^2 over distinct token
pairs with a non-opt member.

Which Ass 1.  The one of ``assumptions`` (``ASS1``, defined once for every fixed-head claim): B.L3's
derived sufficient level nu / (1 - 3 nu) <= nu*(data, b), b = the opt-score floor at Lemma 2's eps = 1/4 and a small
step.  nu* is itself random (it depends on q = min ||x_i1|| and R = max ||x||); on Example 1 (n = 8, T = 4) it is
about 1.5e-3, so Ass 1 needs d of order 10^6.  (Fixed levels such as nu_0 = 0.25 or 0.15 are not
decided: nothing derives them, and B.L3's analysis calls them insufficient.)

Ass 2 is *not* verified here: in ``data.example1`` the noise is orthogonal to the head u = e_1, so every non-opt
score equals gamma_other exactly and Ass 2 holds by construction (the paper's "choosing an appropriate u").  The
record says so; it makes no decision about it.

Our derivation of the d that suffices (the lemma's lost "d >= ...").  m = d - 1 noise coordinates, sigma^2 = 1/d,
p = n T tokens with noise z_k = sigma g_k, g_k ~ N(0, I_m) independent; P = p(p-1)/2 - n(n-1)/2 pairs with a non-opt
member.  (E1) Laurent-Massart, both sides, every token: m - 2 sqrt(m x) <= ||g_k||^2 <= m + 2 sqrt(m x) + 2x with
x = log(4p/delta) (failure <= delta/2).  (E2) Given g_l, <g_k, g_l> ~ N(0, ||g_l||^2): every pair has
|<g_k, g_l>| <= s ||g_l||, s = sqrt(2 log(4P/delta)) (failure <= delta/2).  On E1 and E2 (probability >= 1 - delta):

    |<x, x'>| <= max(|g_o g_x|, g_x^2) + sigma^2 s sqrt(m + 2 sqrt(m x) + 2x)        (pairs with a non-opt member)
    ||x_io||^2 >= g_o^2 + sigma^2 (m - 2 sqrt(m x)),   q^2 >= min(g_o^2, g_x^2) + sigma^2 (m - 2 sqrt(m x)),
    R^2 <= max(g_o^2, g_x^2) + sigma^2 (m + 2 sqrt(m x) + 2x),

(g_o = gamma_opt = 1, g_x = gamma_other = 0), hence nu <= nu_up(d) and nu* >= nu*_lo(d), and Ass 1 holds for every
d >= d_1(delta) := min{d : nu_up/(1 - 3 nu_up) <= nu*_lo} (``d_sufficient``; nu_up ~ s/(g_o^2 + 1) d^{-1/2}: the
"ignoring the log factors" d ~ log(nT/delta)/nu*^2).

Sampling at d ~ 10^6.  Ass 1 depends on the tokens only through their Gram matrix, whose noise part is
sigma^2 Wishart_{nT}(d - 1, I): ``runs.example1_geometry`` draws it by Bartlett's decomposition at the cost of
d = nT (same law as ``data.example1``; ``tests/numerics/test_paper_b_runs.py`` compares the two at d = 64).

Checks.  (1) probability: for delta = 0.05 and 0.01, P(Ass 1) at d_1(delta) >= 1 - delta (Clopper-Pearson lower end;
it can fail: the union bound E2 over ~500 nearly independent pairs is almost tight, P(Ass 1) at d_1 / 2 is ~0.6).
Reported: P-hat on a grid around d_1 and the smallest grid d with P-hat >= 1 - delta (how conservative d_1 is).
(2) rate: the exponent of E[nu] in d on d = 10^4 .. 10^8 equals -1/2 (Bernstein; Gaussian inner products make it
exact up to O(d^{-1/2}) finite-d corrections): its interval must lie inside -1/2 ± 1/4 (``RATE_MARGIN``: half the
distance to -1, the rate that would make d ~ 1/nu* suffice instead of the lemma's 1/nu*^2, and to 0, no decay).
Negative controls: d_1 derived without the union bound over pairs in E2 (s = sqrt(2 log(4/delta))): too small a d,
the probability check must reject it; tokens sharing a common noise direction (a fixed unit vector added to every
token, scores unchanged): nu stays ~0.35 for every d, both checks must reject it.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from numerics.paper_b import runs
from numerics.stats import Margin, binomial_interval, decide_binomial, mean_se
from theorems.claim import Assumption, Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_b.fixed_head.assumptions import ASS1, ASS2, EPS, ass1_lhs, nu_star, opt_score_floor
from theorems.plots import new_figure
from theorems.probe import instance_and_facts, probe
from theorems.strata import fair_sampled_from
from theorems.symbolic import Derivation

ID = "B.L6"
#: Example 1's sizes (the trajectory bank's instances: n = 8 sequences of T = 4 tokens) and its scores
N, T = 8, 4
GAMMA_OPT, GAMMA_OTHER = 1.0, 0.0  # data.example1's default scores (Ass 2 by construction: spread 0)
#: the lemma's failure probabilities decided ("for any delta": a common one and a stricter one)
DELTAS = (0.05, 0.01)
#: P(Ass 1) at d_1 is decided by its Clopper-Pearson interval (pass: lower end >= 1 - delta); no width rule on top
PROB_MAX_WIDTH = math.inf
#: reported, not decided: P-hat at these multiples of d_1 (where between d_1/4 and 1.5 d_1 the probability rises)
REPORT_FACTORS = (0.25, 0.5, 0.7, 1.0, 1.5)
#: the rate's d grid: 10^4 .. 10^8 (finite-d corrections to E[nu] d^{1/2}: ~1 % at 10^4, < 0.5 % from 10^5)
RATE_LOG10_D = (4, 5, 6, 7, 8)
RATE_TARGET = -0.5  # Bernstein / Gaussian inner products: E[nu] ∝ d^{-1/2}
#: the exponent -1/2 against the nearest rates a mis-scaled reading gives: -1 (nu ~ sigma^2 = 1/d: the inner product
#: of two noise tokens without the sqrt(d) of a sum of d - 1 terms, which would make d ~ 1/nu* suffice instead of
#: the lemma's log(nT/delta)/nu*^2) and 0 (no decay: tokens sharing a direction, the control); half the distance.
#: Finite-d corrections move the fitted exponent by ~0.002 on the grid, well inside it
RATE_MARGIN = Margin(0.25, excludes="exponent −1 (ν ~ 1/d: d ~ 1/ν* would suffice) and 0 (no decay); half the "
                                    "distance from −1/2")
#: Gram draws per d at quick / standard / full (P(Ass 1) at d_1 is ~0.998: with 4000 draws up to ~10 misses still
#: clear 0.99 at the decision's level)
DRAWS = (4000, 20000, 60000)
CONTROL_COMMON = 1.0  # the control's common noise direction (a unit vector times this) added to every token

STATEMENT = (
    r"\Pr\Big[\tfrac{\nu}{1-3\nu}\le\nu^*(X)\Big]\ge1-\delta\ \text{ for } d\ge d_1(\delta)\ "
    r"\big(d_1\sim\log(nT/\delta)/\nu^{*2}\big),\qquad \mathbb E\,\nu\propto d^{-1/2},\qquad "
    r"\gamma_{it}=\bar\gamma_i\ \forall t\ne o\ \text{(by construction)}"
)


# ---------------------------------------------------------------------------
# 1. Our sufficient d
# ---------------------------------------------------------------------------

def d_sufficient(n: int, T: int, delta: float, eps: float = EPS, union: bool = True) -> int:
    """d_1(delta): the smallest d with nu_up/(1 - 3 nu_up) <= nu*_lo (module docstring); ``union=False``: the
    control's d without the union bound over pairs in E2."""
    p = n * T
    pairs = p * (p - 1) // 2 - n * (n - 1) // 2
    x = math.log(4 * p / delta)
    s = math.sqrt(2 * math.log(4 * (pairs if union else 1) / delta))
    b = float(opt_score_floor(T, 1.0, eps, 0.0))                       # small step: b does not depend on R
    go, gx = GAMMA_OPT, GAMMA_OTHER
    lo_c, hi_c = math.exp(-go) * (go - gx), math.exp(-gx) * (go - gx)

    def enough(d: int) -> bool:
        m, s2 = d - 1, 1.0 / d
        up, low = m + 2 * math.sqrt(m * x) + 2 * x, max(m - 2 * math.sqrt(m * x), 0.0)
        nu = (max(abs(go * gx), gx * gx) + s2 * s * math.sqrt(up)) / (go * go + s2 * low)
        R2, q2 = max(go * go, gx * gx) + s2 * up, min(go * go, gx * gx) + s2 * low
        ns = q2 * b * (1 - b / math.e) * lo_c / (math.e * (n - 1) * R2 * hi_c)
        return nu < 1 / 3 and nu / (1 - 3 * nu) <= ns

    lo, hi = p + 2, 10**15
    if not enough(hi):
        raise ValueError("no d up to 1e15 suffices")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


# ---------------------------------------------------------------------------
# 2. Monte Carlo through the Gram matrix
# ---------------------------------------------------------------------------

def draws(ctx: Context, d: int, common: float = 0.0, n: int = N, T: int = T, eps: float = EPS) -> dict:
    """``count`` Example 1 data sets at dimension d (n sequences of T tokens): nu, nu*, Ass 1 per draw (at Lemma 2's
    ``eps``), max spread."""
    count = ctx.pick(*DRAWS)
    g = runs.example1_geometry(n, T, d, count, ctx.derived_seed(ID, "gram", d, common), GAMMA_OPT, GAMMA_OTHER,
                               common)
    b = opt_score_floor(T, g["R"], eps, 0.0)
    ns = nu_star(dict(q=g["q"], R=g["R"], lo=math.exp(-GAMMA_OPT) * (GAMMA_OPT - GAMMA_OTHER),
                      hi=math.exp(-GAMMA_OTHER) * (GAMMA_OPT - GAMMA_OTHER)), n, b)
    return dict(nu=g["nu"].numpy(), nu_star=ns.numpy(), ass1=(ass1_lhs(g["nu"]) <= ns).numpy(),
                spread=g["spread"].numpy())


def check_probability(ctx: Context, common: float = 0.0, union: bool = True, n: int = N, T: int = T,
                      eps: float = EPS) -> Outcome:
    """P(Ass 1) at d_1(delta) >= 1 - delta for each delta; ``union=False`` / ``common``: the controls; ``n``, ``T``,
    ``eps``: Example 1's sizes and Lemma 2's eps (free choices)."""
    ev = Evidence(ctx, decisions=len(DELTAS))
    curves, spread_max = [], 0.0
    for delta in DELTAS:
        d1 = d_sufficient(n, T, delta, eps, union=union)
        grid = [max(int(f * d1), n * T + 2) for f in REPORT_FACTORS]
        res = {d: draws(ctx, d, common, n, T, eps) for d in grid}
        count = len(res[d1]["ass1"])
        ks = [int(res[d]["ass1"].sum()) for d in grid]
        spread_max = max(spread_max, max(float(np.abs(res[d]["spread"]).max()) for d in grid))
        dec = decide_binomial(ks[grid.index(d1)], count, ev.level, at_least=1 - delta, max_width=PROB_MAX_WIDTH)
        p = np.array(ks) / count
        d_ok = next((d for j, d in enumerate(grid) if all(q >= 1 - delta for q in p[j:])), None)
        tag = "" if union else " (no union bound over pairs: control)"
        ev.decide(f"δ = {delta}: P(Ass 1) at d₁(δ) = {d1:.3g}", dec, value=float(p[grid.index(d1)]),
                  line=f"δ={delta}: d₁={d1:.4g}{tag}: P(Ass 1)={p[grid.index(d1)]:.4f} [{dec.lo:.4f}, {dec.hi:.4f}] "
                       f"vs ≥ {1 - delta} [{dec.status}]; median ν* {np.median(res[d1]['nu_star']):.3g}, "
                       f"median ν {np.median(res[d1]['nu']):.3g}; P̂ ≥ 1−δ from d={d_ok if d_ok else 'none'} "
                       f"on the grid {', '.join(f'{d:.3g}' for d in grid)} (P̂ {', '.join(f'{q:.3f}' for q in p)})")
        ev.measure(f"δ = {delta}: d₁(δ) (our sufficient d)", float(d1))
        ev.measure(f"δ = {delta}: smallest grid d with P̂ ≥ 1 − δ from there on", float(d_ok) if d_ok else math.nan,
                   claimed=f"≤ d₁ = {d1:.3g}")
        curves.append((delta, grid, p, [binomial_interval(k, count, ev.level) for k in ks]))
    ev.say(f"Ass 2: max non-opt score spread over every draw = {spread_max:g} (by construction: the noise is "
           f"orthogonal to u = e₁; not a decision)")
    if ev.plots:
        ev.figure("Probability that Example 1 satisfies Ass 1 (ours)", _plot_probability(curves, common, union, n, T),
                  f"Draws through the token Gram matrix; Clopper-Pearson intervals at level {ev.level:.5f}.")
    return ev.outcome(n=n, T=T, eps=eps, deltas=DELTAS, common=common, union=union, ass2="by construction (spread 0)")


def _plot_probability(curves, common, union, n=N, T=T):
    fig, ax = new_figure()
    for delta, grid, p, ci in curves:
        ax.errorbar(grid, p, yerr=[p - np.array([c[0] for c in ci]), np.array([c[1] for c in ci]) - p], fmt="o-",
                    capsize=2, label=f"δ = {delta} (d₁ = {grid[REPORT_FACTORS.index(1.0)]:.3g})")
        ax.axhline(1 - delta, color="k", ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("P(ν/(1−3ν) ≤ ν*)")
    ax.set_title(f"Example 1, n = {n}, T = {T}" + (" + common noise direction (control)" if common else "")
                 + ("" if union else " — d₁ without the union bound (control)"), fontsize=8)
    ax.legend(fontsize=7)
    return fig


def check_rate(ctx: Context, common: float = 0.0, n: int = N, T: int = T) -> Outcome:
    """Fitted exponent of E[nu] in d on d = 10^4 .. 10^8 = -1/2 within RATE_MARGIN; ``common``: the control; ``n``,
    ``T``: Example 1's sizes (free choices)."""
    ds_ = [10**k for k in RATE_LOG10_D]
    ms = [mean_se(draws(ctx, d, common, n, T)["nu"]) for d in ds_]
    ev = Evidence(ctx)
    fit = ev.exponent("exponent of E[ν] in d", ds_, [m for m, _ in ms], [s for _, s in ms], target=RATE_TARGET,
                      margin=RATE_MARGIN)
    d1 = d_sufficient(n, T, DELTAS[0])
    ev.say(f"E[ν]·√d at d = {', '.join(f'1e{k}' for k in RATE_LOG10_D)}: "
           + ", ".join(f"{m * math.sqrt(d):.4f}" for (m, _), d in zip(ms, ds_))
           + f"; χ²/dof {fit.chi2_dof:.2f}; d₁(0.05) = {d1:.3g} is where E[ν] falls to ~ν*")
    if ev.plots:
        ev.figure("Near-orthogonality vs dimension", _plot_rate(ds_, ms, fit, ev.z),
                  "Mean ν with intervals and the fitted law.")
    lo, hi = fit.interval(1, ev.z)
    return ev.outcome(headline=f"E[ν] ~ d^{fit.coef[1]:.4f} [{lo:.4f}, {hi:.4f}] vs −1/2 ± {RATE_MARGIN.half_width:g} "
                               f"({ev.decisions[-1]['status']}; the margin excludes −1 and 0)",
                      chi2_dof=fit.chi2_dof, common=common, grid=ds_)


def _plot_rate(ds_, ms, fit, z):
    fig, ax = new_figure()
    ax.errorbar(ds_, [m for m, _ in ms], yerr=[z * s for _, s in ms], fmt="o", capsize=2, label="E[ν] (Monte Carlo)")
    xs = np.array([ds_[0], ds_[-1]], float)
    ax.plot(xs, np.exp(fit.coef[0]) * xs ** fit.coef[1], "-", label=f"fit d^{fit.coef[1]:.4f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("ν")
    ax.legend(fontsize=7)
    return fig


# ---------------------------------------------------------------------------
# 3. Symbolic: the union bounds behind d_1 and the d^{-1/2} law of nu
# ---------------------------------------------------------------------------

def s_union(pairs, delta):
    """E2's threshold s = sqrt(2 log(4 P / delta)) (``d_sufficient``): a Gaussian tail e^{-s^2/2} per pair, union over
    the P pairs."""
    return sp.sqrt(2 * sp.log(4 * pairs / delta))


def s_without_union(pairs, delta):
    """The control's threshold: the union over pairs dropped, s = sqrt(2 log(4/delta)) (``d_sufficient(union=False)``)."""
    return sp.sqrt(2 * sp.log(4 / delta))


def derivation(s_of=s_union) -> Outcome:
    """The probability bookkeeping behind ``d_sufficient`` and the exponent -1/2 the rate check decides; ``s_of``: E2's
    threshold as a function of (pairs, delta) (control: :func:`s_without_union`)."""
    D = Derivation()
    z, lam, s = sp.Symbol("z", real=True), sp.Symbol("lambda", positive=True), sp.Symbol("s", positive=True)
    mgf_int = sp.Integral(sp.exp(lam * z) * sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi), (z, -sp.oo, sp.oo))
    D.prove_equal("moment generating function of Z ~ N(0, 1): E e^{λZ} = e^{λ²/2}", mgf_int.doit(),
                  sp.exp(lam**2 / 2), shown=sp.Eq(mgf_int, sp.exp(lam**2 / 2), evaluate=False))
    best = sp.solve(sp.diff(lam**2 / 2 - lam * s, lam), lam)
    D.prove_equal("Chernoff: P(Z > s) ≤ e^{λ²/2 − λs} for every λ > 0, smallest at λ = s: e^{−s²/2}; given g_l, "
                  "⟨g_k, g_l⟩ ~ N(0, ‖g_l‖²), so P(|⟨g_k, g_l⟩| > s‖g_l‖) ≤ 2e^{−s²/2}",
                  sp.exp(lam**2 / 2 - lam * s).subs(lam, best[0]), sp.exp(-s**2 / 2),
                  shown=sp.Eq(sp.Subs(sp.exp(lam**2 / 2 - lam * s), lam, best[0]), sp.exp(-s**2 / 2), evaluate=False))
    P, delta, p = sp.Symbol("P", positive=True), sp.Symbol("delta", positive=True), sp.Symbol("p", positive=True)
    D.prove_equal("E2, union over the P pairs with a non-opt member: P · 2e^{−s²/2} = δ/2 at s = √(2 log(4P/δ))"
                  + ("" if s_of is s_union else " [control: s without the union over pairs]"),
                  sp.simplify(P * 2 * sp.exp(-s_of(P, delta) ** 2 / 2)), delta / 2,
                  shown=sp.Eq(2 * P * sp.exp(-sp.UnevaluatedExpr(s_of(P, delta)) ** 2 / 2), delta / 2, evaluate=False))
    D.prove_equal("E1, Laurent-Massart on both sides of every one of the p token norms: 2p e^{−x} = δ/2 at "
                  "x = log(4p/δ); E1 and E2 together fail with probability ≤ δ", 2 * p * sp.exp(-sp.log(4 * p / delta)),
                  delta / 2, shown=sp.Eq(2 * p * sp.exp(-sp.UnevaluatedExpr(sp.log(4 * p / delta))), delta / 2,
                                         evaluate=False))
    zz = sp.symbols("z1:4", real=True)
    zp = sp.symbols("w1:4", real=True)
    sig2 = sp.Symbol("sigma2", positive=True)
    second = sp.expand(sum(a * b for a, b in zip(zz, zp)) ** 2)
    # independent centred coordinates: E z_i z_j = sigma^2 delta_ij, and the two tokens independent
    moment = sum(term.subs({v: 1 for v in zz + zp}) * _gauss_moment(term, zz + zp, sig2)
                 for term in sp.Add.make_args(second))
    D.prove_equal("second moment of a noise inner product (m = 3 coordinates shown; every cross term has a lone "
                  "centred factor): E⟨z, z'⟩² = Σᵢ E zᵢ² E z'ᵢ² = m σ⁴", moment, 3 * sig2**2,
                  shown=sp.Eq(sp.Function("E")(sum(a * b for a, b in zip(zz, zp)) ** 2), 3 * sig2**2, evaluate=False))
    d = sp.Symbol("d", positive=True)
    rms = sp.sqrt((d - 1) / d**2)
    opt2 = 1 + (d - 1) / d
    D.say("Example 1: σ² = 1/d on m = d − 1 coordinates, γ_opt = 1, γ_other = 0: the typical noise inner product is "
          "σ²√m = √(d − 1)/d and ‖x_io‖² = 1 + σ²m on average.", sp.Eq(sp.Symbol("nu_typ"), rms / opt2))
    D.prove_equal("its exponent in d: lim_{d→∞} d · d/dd log(√(d − 1)/d / (1 + (d − 1)/d)) = −1/2 (the rate check's "
                  "target; ν is a maximum over pairs of such ratios, a factor √(2 log P) that does not depend on d)",
                  sp.limit(d * sp.diff(sp.log(rms / opt2), d), d, sp.oo), sp.Rational(-1, 2),
                  shown=sp.Eq(sp.Limit(d * sp.Derivative(sp.log(rms / opt2), d), d, sp.oo), sp.Rational(-1, 2),
                              evaluate=False))
    return D.outcome("union bounds and the d^{-1/2} law derived")


def _gauss_moment(term, symbols, sig2):
    """E of one monomial in independent centred Gaussians of variance ``sig2``: 0 with an odd power, else
    prod sig2^{k/2} (k - 1)!! (every power here is 0 or 2: sig2 per squared factor)."""
    powers = sp.Poly(term, *symbols).monoms()[0]
    if any(k % 2 for k in powers):
        return 0
    return sp.prod([sig2 ** (k // 2) * sp.factorial2(k - 1) for k in powers if k])


# ---------------------------------------------------------------------------
# 4. Probe: sizes, delta, Lemma 2's eps and d on both sides of d_1(delta)
# ---------------------------------------------------------------------------

#: Gram draws per probed instance (from a seed derived from the instance): P(Ass 1) ~ 0.998 at d_1 leaves ~4 misses in
#: 2000, whose Clopper-Pearson lower end clears 1 - delta for delta >= 0.02 at the probe's per-example level
PROBE_DRAWS = 2000
#: probe examples at quick / standard / full (a Monte Carlo of PROBE_DRAWS Gram matrices of at most 50 tokens, ~0.05 s):
#: 12 at quick met the control's mutant at 2 of dev seeds 0-2, 24 at 8 of 0-7 (it fails near d = d_1 only)
PROBE_EXAMPLES = (24, 60, 160)
#: decided instances needed inside the assumption (d >= d_1: two thirds of the draws aim there, ~16 of 24)
PROBE_MIN_DECIDED = 8
#: strata by a fair draw (``theorems.strata``): d = factor d_1(delta) with factor 10^U(0, 0.6) (inside, twice) or
#: 10^U(-1.3, 0) (outside: from d_1/20, where P(Ass 1) is near 0, up to d_1)
PROBE_STRATA = ("inside", "inside", "outside")


@st.composite
def probe_instances(draw):
    """Sizes n, T (up to 10 x 5 tokens), delta (log-uniform 0.01-0.2), Lemma 2's eps (log-uniform 0.05-1, the
    eps choice's range) and the factor on d_1(delta), by stratum; all hypothesis primitives (the Monte Carlo's seed
    is derived from them)."""
    stratum = draw(fair_sampled_from(PROBE_STRATA))
    return dict(n=draw(st.integers(2, 10)), T=draw(st.integers(2, 5)), delta=10 ** draw(st.floats(-2.0, math.log10(0.2))),
                eps=10 ** draw(st.floats(math.log10(0.05), 0.0)),
                log_factor=draw(st.floats(*((0.0, 0.6) if stratum == "inside" else (-1.3, 0.0)))))


def _mc_seed(inst) -> int:
    """The Monte Carlo's seed, derived from the instance (so the conclusion is a function of the shrinkable instance)."""
    key = hashlib.sha256(repr(sorted((k, round(v, 12) if isinstance(v, float) else v)
                                     for k, v in inst.items())).encode()).digest()
    return int.from_bytes(key[:8], "little") & (2**63 - 1)


def probe_conclusion(inst, alpha_each, union: bool = True):
    """P(Ass 1) >= 1 - delta at d = factor d_1(delta) (``d_sufficient`` with ``union``; control: ``union=False``), by
    the Clopper-Pearson interval of PROBE_DRAWS Gram draws at the level 1 - alpha_each; an interval straddling
    1 - delta leaves the instance not decided.  Facts: d_1 and d."""
    n, T, delta, eps = inst["n"], inst["T"], inst["delta"], inst["eps"]
    d1 = d_sufficient(n, T, delta, eps, union=union)
    d = max(int(math.ceil(10 ** inst["log_factor"] * d1)), n * T + 2)
    g = runs.example1_geometry(n, T, d, PROBE_DRAWS, _mc_seed(inst), GAMMA_OPT, GAMMA_OTHER)
    b = opt_score_floor(T, g["R"], eps, 0.0)
    ns = nu_star(dict(q=g["q"], R=g["R"], lo=math.exp(-GAMMA_OPT) * (GAMMA_OPT - GAMMA_OTHER),
                      hi=math.exp(-GAMMA_OTHER) * (GAMMA_OPT - GAMMA_OTHER)), n, b)
    k = int((ass1_lhs(g["nu"]) <= ns).sum())
    dec = decide_binomial(k, PROBE_DRAWS, 1 - alpha_each, at_least=1 - delta, max_width=PROB_MAX_WIDTH)
    facts = {"d1": d1, "d": d}
    detail = f"P(Ass 1) at d = {d:.4g} ({d / d1:.3g} d₁): {k}/{PROBE_DRAWS} [{dec.lo:.4f}, {dec.hi:.4f}] vs ≥ {1 - delta:.4f}"
    if dec.status == "inconclusive":
        return None, "straddles 1 − δ", detail, facts
    return dec.status == "pass", "decided", detail, facts


def probe_assumptions(inst, facts: dict) -> dict:
    """The lemma's condition as we derive it: d >= d_1(delta) (the conclusion's facts)."""
    return {"d ≥ d₁(δ)": facts.get("d", 0) >= facts.get("d1", math.inf)}


def probe_parameters(inst, facts: dict) -> dict:
    return {"log₁₀ d/d₁": math.log10(facts["d"] / facts["d1"]) if facts else inst["log_factor"],
            "log₁₀ δ": math.log10(inst["delta"]), "nT": float(inst["n"] * inst["T"])}



CLAIM = Claim(
    id=ID,
    title="Example 1 satisfies Assumptions 1-2 w.h.p. for large d",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("Qualitative (our reconstruction). Ass 1 is the suite's one definition (fixed_head_assumptions: "
                   "B.L3's derived sufficient level ν/(1−3ν) ≤ ν*, ν* ≈ 1.5e-3 here); the d that suffices, d₁(δ), is "
                   "our derivation (Laurent-Massart norms + a Gaussian union bound over pairs), decided at δ = 0.05 "
                   "and 0.01 by Monte Carlo through the token Gram matrix (d ~ 2·10⁶). Ass 2 holds by construction "
                   "(noise ⟂ u): reported, not verified. The d^{-1/2} decay of ν is our Bernstein reading of the "
                   "proof."),
    assumptions=(Assumption("Example 1", "data.example1: σ = 1/√d, noise ⟂ u = e₁, γ_opt = 1, γ_other = 0, "
                            "n = 8, T = 4"), ASS1, ASS2),
    checks=(
        Check("derivation", "symbolic", "Chernoff tail, the union bounds E1 and E2 behind d₁(δ), and E⟨z, z'⟩² = mσ⁴ "
              "giving ν's exponent −1/2 in d", derivation),
        Check("probability", "numeric", "P(Ass 1) at our sufficient d₁(δ) ≥ 1 − δ (δ = 0.05, 0.01; Clopper-Pearson)",
              check_probability),
        Check("rate", "numeric", "Exponent of E[ν] in d on 10⁴..10⁸ = −1/2 (± 1/4: excludes −1 and 0)",
              check_rate),
        probe("Hypothesis over n, T, δ, Lemma 2's ε and d on both sides of d₁(δ): P(Ass 1) ≥ 1 − δ "
              "by a Monte Carlo through the Gram matrix (Clopper-Pearson)", strategy=probe_instances(),
              conclusion=probe_conclusion, examples=PROBE_EXAMPLES, describe=instance_and_facts,
              assumptions=probe_assumptions, parameters=probe_parameters, min_decided=PROBE_MIN_DECIDED),
    ),
    controls=(
        Control("symbolic: no union bound over pairs", "derivation", "E2's threshold s = √(2 log(4/δ)): the union "
                "over pairs is lost, the failure probability is P δ/2", {"s_of": s_without_union}),
        Control("probe: no union bound over pairs", "probe", "d₁ without the union over pairs in E2: the probe must "
                "find d ≥ d₁ where P(Ass 1) < 1 − δ", {"mutant": {"union": False}}),
        Control("no union bound over pairs", "probability",
                "d₁ derived with s = √(2 log(4/δ)) (the union over ~470 pairs dropped): too small a d",
                {"union": False}),
        Control("common noise direction (probability)", "probability",
                "every token shares a unit noise direction: ν does not decay", {"common": CONTROL_COMMON}),
        Control("common noise direction (rate)", "rate", "every token shares a unit noise direction: exponent ≈ 0",
                {"common": CONTROL_COMMON}),
    ),
    free_choices=(
        FreeChoice("sequences n", N, "Example 1's sizes are lost (ours are the trajectory bank's n = 8, T = 4): n = "
                   "2-16, a quarter to twice ours", {"probability": lambda v: {"n": v}, "rate": lambda v: {"n": v}},
                   low=2, high=16, scale="log", integer=True),
        FreeChoice("tokens T", T, "Example 1's sizes are lost: T = 2-8, half to twice ours (at most 64 tokens with n, "
                   "the Monte Carlo's nT × nT Gram matrices)", {"probability": lambda v: {"T": v},
                                                                "rate": lambda v: {"T": v}},
                   low=2, high=8, scale="log", integer=True),
        FreeChoice("ε", EPS, "Lemma 2's logit bound, which sets Ass 1's level through the opt-score floor, is ours (1/4): "
                   "0.05-1, as B.L2's", {"probability": lambda v: {"eps": v}}, low=0.05, high=1.0, scale="log"),
    ),
    findings=("Example 1 (n = 8, T = 4) meets our Ass 1 (ν/(1−3ν) ≤ ν* ≈ 1.5e-3) with probability ≈ 0.6 at "
              "d ≈ 1.2·10⁶ and ≈ 0.95 at d ≈ 1.6·10⁶; our sufficient d₁(0.05) ≈ 2.3·10⁶ (P ≈ 0.998 there) is "
              "within a factor 1.5 of that, so every fixed-head run of the suite on Example 1 (d ≤ 64) is outside "
              "Ass 1 as we can derive it.",),
)
