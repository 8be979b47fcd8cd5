r"""B.L9 — DM tokens are nearly orthogonal with high probability under Condition 1 (Vasudeva, Deora,
Thrampoulidis; Lemma 9).

Statement (spec: qualitative).  Data model DM: per sequence one opt token ``x_opt ~ N(0, rho^2 sigma^2 I_d)`` and
``T - 1`` tokens ``N(0, sigma^2 I_d)``, all independent (``numerics.paper_b.data.dm``).  The seed's proof:
Bernstein's inequality for the squared norms and for the inner products (zero mean), and a union bound.
We make the event concrete with the spec's near-orthogonality parameter

    nu = max |<x, x'>| / min_i ||x_{i,opt}||^2      (distinct token pairs with at least one non-opt token)

and the level ``nu_0 = (1 - 1/rho^2) / (2 n T)``; Lemma 9's claim becomes ``P(nu <= nu_0) >= 1 - delta`` for
``d >= d_9(delta)``.

Where nu_0 comes from (ours; sympy below).  Lemma 11's induction starts with the first u-step from zero init:
``u_1 = (eta/n) sum_j y_j r_j``, ``r_j = (1/T) sum_tau x_{j tau}`` (uniform attention at W = 0).  The increase of
sample i's score gap against a non-opt token o is ``(eta/n) sum_j y_i y_j <r_j, x_{i,opt} - x_{i,o}>``: the
self term is ``(1/T)(||x_{i,opt}||^2 - ||x_{i,o}||^2) ~ (m/T)(1 - 1/rho^2)`` (norms at their means, m the
smallest opt norm^2) and every other term is at most ``2 nu m`` in size, ``n - 1`` of them from the other
sequences and ``(T - 2)/T`` from sample i's other tokens.  The increase is positive for every i once
``nu <= nu_0``: at ``nu = nu_0`` the margin left is ``2 m (1 - 1/rho^2)/(n T^2) > 0``.

d_9(delta) (ours, an explicit union bound): with ``D_pm = d -/+ 2 sqrt(d x) (+ 2x)`` (Laurent-Massart chi-square
tails) and a Gaussian tail for ``<x, x'>`` given ``x'``,

    nu <= sqrt(2 y D_+) / (rho D_-)  w.p. >= 1 - delta,   x = log(3nT/delta) (D_+), log(3n/delta) (D_-),
    y = log(6P/delta), P = C(nT, 2) - C(n, 2) pairs;

``d_9`` is the smallest d with this bound ``<= nu_0``; it grows like ``log(nT/delta) / (rho^2 nu_0^2)``.

Evidence: the derivation of nu_0 (sympy); Monte Carlo of ``P(nu <= nu_0)`` at ``d_9`` with a Clopper-Pearson
interval (pass if its lower end is >= 1 - delta), and the curve ``P`` against d.  Controls: the opt token not
larger (``rho = 1``, Cond. 1 (ii) broken) at the same d; d = d_9/16 (Cond. 1 (iii) broken).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch

from numerics import DTYPE
from numerics.paper_b import joint_checks as J
from numerics.stats import binomial_interval
from theorems.claim import Check, Claim, Context, Control, Figure, Measurement, Outcome
from theorems.paper_b.t2_joint_loss import MAIN
from theorems.plots import new_figure, to_svg
from theorems.symbolic import Derivation

ID = "B.L9"
DELTA = 0.05

STATEMENT = (
    r"d\ge d_9(\delta)\ \Rightarrow\ \Pr\Big[\max_{(x,x')\not\subset\mathrm{opt}}|\langle x,x'\rangle|\le"
    r"\nu_0\min_i\|x_{i,\mathrm{opt}}\|^2\Big]\ge1-\delta,\qquad \nu_0=\frac{1-\rho^{-2}}{2nT}"
)


# ---------------------------------------------------------------------------
# 1. Symbolic: the level nu_0
# ---------------------------------------------------------------------------


def derivation(nu0=None) -> Outcome:
    D = Derivation()
    m, rho, n, T, nu = sp.symbols("m rho n T nu", positive=True)
    level = (1 - 1 / rho**2) / (2 * n * T) if nu0 is None else nu0(rho, n, T)
    D.say("First u-step from zero init: Δgap_i ∝ Σ_j y_i y_j ⟨r_j, x_{i,opt} − x_{i,o}⟩, r_j the token mean. "
          "Self term (m/T)(1 − 1/ρ²); each of the other terms at most 2νm: n − 1 sequences and (T − 2)/T own tokens.")
    lower = (m / T) * (1 - 1 / rho**2) - 2 * nu * m * ((n - 1) + (T - 2) / T)
    D.prove_equal("at ν = ν₀ = (1 − 1/ρ²)/(2nT) the lower bound on Δgap_i is 2m(1 − 1/ρ²)/(nT²) > 0 (so ν ≤ ν₀ "
                  "makes every gap grow at the first step)", lower.subs(nu, level),
                  2 * m * (1 - 1 / rho**2) / (n * T**2),
                  shown=sp.Eq(sp.Symbol("Δgap_min"), lower))
    D.prove_equal("ν₀ > 0 iff ρ > 1 (Cond. 1 (ii)): ν₀ factors as (ρ − 1)(ρ + 1)/(2nTρ²)",
                  sp.factor(level), (rho - 1) * (rho + 1) / (2 * n * T * rho**2))
    return D.outcome("ν₀ = (1 − 1/ρ²)/(2nT) keeps the first step's score gaps increasing")


# ---------------------------------------------------------------------------
# 2. Numeric: P(nu <= nu_0) at d_9
# ---------------------------------------------------------------------------


def nu_bound(d: float, n: int, T: int, rho: float, delta: float) -> float:
    x_up, x_lo = math.log(3 * n * T / delta), math.log(3 * n / delta)
    P = math.comb(n * T, 2) - math.comb(n, 2)
    y = math.log(6 * P / delta)
    D_plus = d + 2 * math.sqrt(d * x_up) + 2 * x_up
    D_minus = d - 2 * math.sqrt(d * x_lo)
    return math.inf if D_minus <= 0 else math.sqrt(2 * y * D_plus) / (rho * D_minus)


def d9(n: int, T: int, rho: float, delta: float) -> int:
    nu0 = J.nu_threshold(n, T, rho)
    d = 2
    while nu_bound(d, n, T, rho, delta) > nu0:
        d += 1
    return d


def sample_nu(gen: torch.Generator, K: int, n: int, T: int, d: int, rho: float) -> np.ndarray:
    """nu for K independent DM data sets (sigma = 1/sqrt(d); nu is scale-free), batched."""
    opt = torch.randint(0, T, (K, n), generator=gen)
    is_opt = torch.nn.functional.one_hot(opt, T).bool()                              # (K, n, T)
    X = torch.randn(K, n, T, d, generator=gen, dtype=DTYPE) * torch.where(is_opt, rho, 1.0)[..., None].to(DTYPE)
    toks = X.reshape(K, n * T, d)
    G = toks @ toks.mT
    flat = is_opt.reshape(K, n * T)
    pair = ~(flat[:, :, None] & flat[:, None, :]) & ~torch.eye(n * T, dtype=torch.bool)
    opt_norm2 = (X.pow(2).sum(-1) * is_opt).sum(-1).amin(-1)
    return ((G.abs() * pair).flatten(1).amax(-1) / opt_norm2).numpy()


def check_probability(ctx: Context, rho: float | None = None, d_factor: float = 1.0) -> Outcome:
    n, T, rho0 = MAIN["n"], MAIN["T"], MAIN["opt_ratio"]
    rho = rho0 if rho is None else rho
    nu0 = J.nu_threshold(n, T, rho0)
    d_star = d9(n, T, rho0, DELTA)
    d_test = max(2, int(round(d_star * d_factor)))
    K = ctx.pick(400, 2000, 5000)
    gen = ctx.generator(ID, "monte-carlo", rho, d_factor)
    level = 1 - ctx.alpha
    grid = sorted({8, 16, 32, 64, 128, d_test})
    curve = {}
    for d in grid:
        nus = sample_nu(gen, K, n, T, d, rho)
        k = int((nus <= nu0).sum())
        curve[d] = (k / K, *binomial_interval(k, K, level))
    p, lo, hi = curve[d_test]
    status = "pass" if lo >= 1 - DELTA else ("fail" if hi < 1 - DELTA else "inconclusive")
    meas = [Measurement(f"P(ν ≤ ν₀) at d = {d_test}", p, lo, hi, claimed=f"≥ 1 − δ = {1 - DELTA:g}", level=level),
            Measurement("d₉(δ) from the union bound", d_star), Measurement("ν₀", nu0)]
    meas += [Measurement(f"P(ν ≤ ν₀) at d = {d}", c[0], c[1], c[2], level=level) for d, c in curve.items()
             if d != d_test]
    fig, ax = new_figure()
    ds_ = np.array(grid, float)
    ps = np.array([curve[d][0] for d in grid])
    err = np.array([[curve[d][0] - curve[d][1], curve[d][2] - curve[d][0]] for d in grid]).T
    ax.errorbar(ds_, ps, yerr=err, fmt="o-", capsize=3, label=f"ρ = {rho:g}")
    ax.axhline(1 - DELTA, color="k", ls="--", lw=0.8, label="1 − δ")
    ax.axvline(d_star, color="tab:gray", ls=":", label="d₉(δ) (union bound)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("d")
    ax.set_ylabel("P(ν ≤ ν₀)")
    ax.legend(loc="best")
    summary = (f"ρ = {rho:g}, n = {n}, T = {T}: P(ν ≤ ν₀ = {nu0:.4f}) at d = {d_test} is {p:.4f} "
               f"[{lo:.4f}, {hi:.4f}] (Clopper-Pearson, {K} draws) vs 1 − δ = {1 - DELTA:g}; d₉ = {d_star}")
    return Outcome(status, summary, meas,
                   [Figure("Probability of Lemma 9's event against d", to_svg(fig),
                           "Monte Carlo with exact binomial intervals; the union bound's d₉ is conservative.")],
                   details={"curve": {str(d): list(c) for d, c in curve.items()}, "d9": d_star, "nu0": nu0, "rho": rho},
                   headline=f"P = {p:.4f} [{lo:.4f}, {hi:.4f}] at d = {d_test} (d₉ = {d_star})")


CLAIM = Claim(
    id=ID,
    paper="B",
    title="DM tokens are nearly orthogonal with high probability under Condition 1",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("The seed keeps the proof's ingredients (Bernstein, union bound) but not the event's constants. "
                   "We fix the event as ν ≤ ν₀ with ν the spec's near-orthogonality parameter and ν₀ derived from the "
                   "first step of Lemma 11's induction, and d₉(δ) from an explicit chi-square / Gaussian union bound "
                   f"(ours). Checked for n = {MAIN['n']}, T = {MAIN['T']}, ρ = {MAIN['opt_ratio']:g}, δ = {DELTA}."),
    checks=(
        Check("derivation", "symbolic", "ν₀ makes the first u-step raise every score gap", lambda ctx: derivation(),
              stochastic=False),
        Check("probability-at-d9", "numeric", "Monte Carlo P(ν ≤ ν₀) at d₉(δ) with a Clopper-Pearson interval",
              check_probability),
    ),
    controls=(
        Control("symbolic: ν₀ twice as large", "derivation", "ν₀ = (1 − 1/ρ²)/(nT)",
                lambda ctx: derivation(lambda rho, n, T: (1 - 1 / rho**2) / (n * T))),
        Control("opt token not larger", "probability-at-d9", "ρ = 1 (Cond. 1 (ii) broken) at d₉",
                lambda ctx: check_probability(ctx, rho=1.0)),
        Control("d too small", "probability-at-d9", "d = d₉/16 (Cond. 1 (iii) broken)",
                lambda ctx: check_probability(ctx, d_factor=1 / 16)),
    ),
)
