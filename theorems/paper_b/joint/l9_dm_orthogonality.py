r"""B.L9 — DM tokens are nearly orthogonal with high probability under Condition 1 (Vasudeva, Deora,
Thrampoulidis; Lemma 9).

Statement (our reconstruction: qualitative).  Data model DM: per sequence one opt token
``x_opt ~ N(0, rho^2 sigma^2 I_d)`` and ``T - 1`` tokens ``N(0, sigma^2 I_d)``, all independent
(``numerics.paper_b.data.dm``).  The source text's proof: Bernstein's inequality for the squared norms and for the
inner products (zero mean), and a union bound.
We make the event concrete with our reconstruction's near-orthogonality parameter

    nu = max |<x, x'>| / min_i ||x_{i,opt}||^2      (distinct token pairs with at least one non-opt token)

and the level ``nu_0 = (1 - 1/rho^2) / (2 n T)``; Lemma 9's claim becomes ``P(nu <= nu_0) >= 1 - delta`` for
``d >= d_9(delta)``.

**This level is Lemma 9's event of Condition 1 (joint training, Section 4; ``assumptions.nu0_level``), not
paper B's Assumption 1 of the fixed-head sections** (B.L3-B.L7, B.T1, B.T6, B.T7), whose single definition (ours:
``nu/(1 - 3 nu) <= nu*``, B.L3's derived level) lives in ``fixed_head.assumptions``.  The source text states the two
separately, for different data models and algorithms; they share only the parameter nu.

Where nu_0 comes from (ours; sympy below).  Lemma 11's induction starts with the first u-step from zero init:
``u_1 = (eta/n) sum_j y_j r_j``, ``r_j = (1/T) sum_tau x_{j tau}`` (uniform attention at W = 0).  The increase of
sample i's score gap against a non-opt token o is ``(eta/n) sum_j y_i y_j <r_j, x_{i,opt} - x_{i,o}>``: the
self term is ``(1/T)(||x_{i,opt}||^2 - ||x_{i,o}||^2) ~ (m/T)(1 - 1/rho^2)`` (norms at their means, m the
smallest opt norm^2) and every other term is at most ``2 nu m`` in size, ``n - 1`` of them from the other
sequences and ``(T - 2)/T`` from sample i's other tokens.  The increase is positive for every i once
``nu <= nu_0``: at ``nu = nu_0`` the margin left is ``2 m (1 - 1/rho^2)/(n T^2) > 0``.  The level is
``assumptions.nu0_level``, the one the joint-training claims condition their DM draws on: the derivation
proves that very function.

d_9(delta) (ours, an explicit union bound): with ``D_pm = d -/+ 2 sqrt(d x) (+ 2x)`` (Laurent-Massart chi-square
tails) and a Gaussian tail for ``<x, x'>`` given ``x'``,

    nu <= sqrt(2 y D_+) / (rho D_-)  w.p. >= 1 - delta,   x = log(3nT/delta) (D_+), log(3n/delta) (D_-),
    y = log(6P/delta), P = C(nT, 2) - C(n, 2) pairs;

``d_9`` is the smallest d with this bound ``<= nu_0``; it grows like ``log(nT/delta) / (rho^2 nu_0^2)``.

Evidence: the derivation of nu_0 (sympy); Monte Carlo of ``P(nu <= nu_0)`` at ``d_9`` with a Clopper-Pearson
interval (pass if its lower end is >= 1 - delta, fail if its upper end is below), and the curve ``P`` against d;
a probe over n (2-5), T (2-4), rho (0.8-8), delta (0.01-0.1) and d on both sides of d_9(delta) (from d_9 to 4 d_9
inside, 4 to 65536 on the wide side), each instance decided by the same Clopper-Pearson rule on 4000 data sets
whose Gram matrices are drawn directly (``gram_nu``: Bartlett's decomposition, so d up to 10^5 costs nothing).

Free choices (decided over their ranges by ``verify sensitivity``): delta (0.01-0.1) and the set-up's rho (2-8), on
the Monte Carlo at d_9; the probe draws both itself.

Controls: the level derived with the cross terms' factor 2 dropped (each ``<r_j, x_{i,opt} - x_{i,o}>`` bounded by
``nu m`` as if the difference were one token, not two: ``(1 - 1/rho^2)/(n T)``, twice nu_0), which sympy must refuse;
the opt token not larger (``rho = 1``, Cond. 1 (ii) broken) at the same d; d = d_9/16 (Cond. 1 (iii) broken); the
probe with d_9 from one inner product's typical size (its tails and the union over pairs dropped, ``d9_typical``),
under which it must find an instance with d >= that d_9 where the event fails.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from numerics.paper_b import data
from numerics.paper_b.model import Dataset
from numerics.stats import binomial_interval, decide_binomial
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_b.joint.assumptions import MAIN, nu0_level, nu_threshold
from theorems.plots import new_figure
from theorems.probe import instance_and_facts, probe
from theorems.strata import fair_sampled_from
from theorems.strategies import log_uniform
from theorems.symbolic import Derivation

ID = "B.L9"

STATEMENT = (
    r"d\ge d_9(\delta)\ \Rightarrow\ \Pr\Big[\max_{(x,x')\not\subset\mathrm{opt}}|\langle x,x'\rangle|\le"
    r"\nu_0\min_i\|x_{i,\mathrm{opt}}\|^2\Big]\ge1-\delta,\qquad \nu_0=\frac{1-\rho^{-2}}{2nT}"
)

#: the claim's failure probability (ours: the source text's is lost)
DELTA = 0.05
#: the claim is P >= 1 - delta: the Clopper-Pearson lower end at or above 1 - delta decides it, whatever the width
MAX_WIDTH = math.inf
#: the d grid of the reported curve P(nu <= nu_0) against d (d_9 is added to it)
D_GRID = (8, 16, 32, 64, 128)
#: Monte Carlo draws at the quick / standard / full budget: at P ~ 1 the Clopper-Pearson lower end at alpha = 5e-5 is
#: ~ 1 - 10/K, so K = 400 already clears 1 - delta = 0.95 when the event holds with P >= 0.99
MC_DRAWS = (400, 2000, 5000)


def nu0_doubled(rho, n, T):
    """A wrong level (control): the one the derivation gives with each cross term bounded by nu m instead of 2 nu m,
    i.e. with <r_j, x_{i,opt} - x_{i,o}> bounded as one inner product where the difference holds two tokens (each
    |<x, x'>| <= nu m): (1 - 1/rho^2)/(n T), twice Lemma 9's."""
    return 2 * nu0_level(rho, n, T)


# ---------------------------------------------------------------------------
# 1. Symbolic: the level nu_0
# ---------------------------------------------------------------------------


def derivation(nu0=nu0_level) -> Outcome:
    """``nu0(rho, n, T)`` keeps the first u-step's score gaps increasing (module docstring)."""
    D = Derivation()
    m, rho, n, T, nu = sp.symbols("m rho n T nu", positive=True)
    level = nu0(rho, n, T)
    D.say("First u-step from zero init: Δgap_i ∝ Σ_j y_i y_j ⟨r_j, x_{i,opt} − x_{i,o}⟩, r_j the token mean. "
          "Self term (m/T)(1 − 1/ρ²); each of the other terms at most 2νm: n − 1 sequences and (T − 2)/T own tokens.")
    lower = (m / T) * (1 - 1 / rho**2) - 2 * nu * m * ((n - 1) + (T - 2) / T)
    D.prove_equal("at ν = ν₀ = (1 − 1/ρ²)/(2nT) the lower bound on Δgap_i is 2m(1 − 1/ρ²)/(nT²) > 0 (so ν ≤ ν₀ "
                  "makes every gap grow at the first step)", lower.subs(nu, level),
                  2 * m * (1 - 1 / rho**2) / (n * T**2),
                  shown=sp.Eq(sp.Symbol("Δgap_min"), lower))
    D.prove_equal("ν₀ > 0 iff ρ > 1 (Cond. 1 (ii)): ν₀ factors as (ρ − 1)(ρ + 1)/(2nTρ²)",
                  sp.factor(level), (rho - 1) * (rho + 1) / (2 * n * T * rho**2),
                  shown=sp.Eq(level, (rho - 1) * (rho + 1) / (2 * n * T * rho**2), evaluate=False))
    return D.outcome("ν₀ = (1 − 1/ρ²)/(2nT) keeps the first step's score gaps increasing")


# ---------------------------------------------------------------------------
# 2. Numeric: P(nu <= nu_0) at d_9
# ---------------------------------------------------------------------------


def nu_bound(d: float, n: int, T: int, rho: float, delta: float) -> float:
    """The union bound on nu that holds with probability >= 1 - delta (module docstring)."""
    x_up, x_lo = math.log(3 * n * T / delta), math.log(3 * n / delta)
    P = math.comb(n * T, 2) - math.comb(n, 2)
    y = math.log(6 * P / delta)
    D_plus = d + 2 * math.sqrt(d * x_up) + 2 * x_up
    D_minus = d - 2 * math.sqrt(d * x_lo)
    return math.inf if D_minus <= 0 else math.sqrt(2 * y * D_plus) / (rho * D_minus)


def d9(n: int, T: int, rho: float, delta: float) -> float:
    """The smallest d >= 2 whose union bound is at most nu_0 (inf when rho <= 1: nu_0 = 0, the event is empty).  The
    bound falls with d wherever it is finite (checked in the unit tests), so the smallest such d is found by doubling
    and bisection."""
    nu0 = nu_threshold(n, T, rho)
    if nu0 <= 0:
        return math.inf
    if nu_bound(2, n, T, rho, delta) <= nu0:
        return 2
    lo, hi = 2, 4                       # nu_bound(lo) > nu0 throughout
    while nu_bound(hi, n, T, rho, delta) > nu0:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if nu_bound(mid, n, T, rho, delta) > nu0 else (lo, mid)
    return hi


def d9_typical(n: int, T: int, rho: float, delta: float) -> float:
    """A wrong d_9 (the probe's control): from one inner product's typical size, ``1/(rho sqrt(d)) <= nu_0``, i.e. the
    union bound with its tails and its union over the token pairs dropped: ``ceil(1/(rho nu_0)^2)``, some 10-40 times
    smaller than :func:`d9`."""
    nu0 = nu_threshold(n, T, rho)
    return math.inf if nu0 <= 0 else max(2, math.ceil(1 / (rho * nu0) ** 2))


def sample_nu(gen: torch.Generator, K: int, n: int, T: int, d: int, rho: float) -> np.ndarray:
    """nu (``data.assumptions``) of K independent DM data sets, batched (sigma = 1; nu is scale-free, and the labels
    do not enter it)."""
    opt = torch.randint(0, T, (K, n), generator=gen)
    is_opt = torch.nn.functional.one_hot(opt, T).bool()                              # (K, n, T)
    X = torch.randn(K, n, T, d, generator=gen, dtype=DTYPE) * torch.where(is_opt, rho, 1.0)[..., None].to(DTYPE)
    return data.assumptions(Dataset(X, torch.ones(K, n), opt=opt))["nu"].numpy()


def check_probability(ctx: Context, rho: float = MAIN["opt_ratio"], d_factor: float = 1.0, delta: float = DELTA,
                      rho0: float = MAIN["opt_ratio"]) -> Outcome:
    """P(nu <= nu_0) at ``d_factor`` d_9 for DM with opt-token ratio ``rho``, and the curve in d.

    nu_0 and d_9 are those of the set-up's ratio ``rho0`` (a control draws with another ``rho`` against them) and the
    failure probability ``delta`` (``rho0`` and ``delta``: free choices)."""
    n, T = MAIN["n"], MAIN["T"]
    nu0 = nu_threshold(n, T, rho0)
    d_star = d9(n, T, rho0, delta)
    d_test = max(2, int(round(d_star * d_factor)))
    K = ctx.pick(*MC_DRAWS)
    gen = ctx.generator(ID, "monte-carlo", rho, d_factor)
    ev = Evidence(ctx, decisions=1)
    grid = sorted({*D_GRID, d_test})
    counts = {d: int((sample_nu(gen, K, n, T, d, rho) <= nu0).sum()) for d in grid}
    curve = {d: (k / K, *binomial_interval(k, K, ev.level)) for d, k in counts.items()}
    p, lo, hi = curve[d_test]
    ev.decide(f"P(ν ≤ ν₀) at d = {d_test}",
              decide_binomial(counts[d_test], K, ev.level, at_least=1 - delta, max_width=MAX_WIDTH), value=p,
              line=f"ρ = {rho:g}, n = {n}, T = {T}: P(ν ≤ ν₀ = {nu0:.4f}) at d = {d_test} is {p:.4f} "
                   f"[{lo:.4f}, {hi:.4f}] (Clopper-Pearson, {K} draws) vs 1 − δ = {1 - delta:g}; d₉ = {d_star}")
    ev.measure("d₉(δ) from the union bound", d_star)
    ev.measure("ν₀", nu0)
    for d, (pd, lo_d, hi_d) in curve.items():
        if d != d_test:
            ev.measure(f"P(ν ≤ ν₀) at d = {d}", pd, lo=lo_d, hi=hi_d, level=ev.level)
    if ev.plots:
        fig, ax = new_figure()
        ps = np.array([curve[d][0] for d in grid])
        err = np.array([[curve[d][0] - curve[d][1], curve[d][2] - curve[d][0]] for d in grid]).T
        ax.errorbar(np.array(grid, float), ps, yerr=err, fmt="o-", capsize=3, label=f"ρ = {rho:g}")
        ax.axhline(1 - delta, color="k", ls="--", lw=0.8, label="1 − δ")
        ax.axvline(d_star, color="tab:gray", ls=":", label="d₉(δ) (union bound)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("d")
        ax.set_ylabel("P(ν ≤ ν₀)")
        ax.legend(loc="best")
        ev.figure("Probability of Lemma 9's event against d", fig,
                  "Monte Carlo with exact binomial intervals; the union bound's d₉ is conservative.")
    return ev.outcome(headline=f"P = {p:.4f} [{lo:.4f}, {hi:.4f}] at d = {d_test} (d₉ = {d_star})",
                      curve={str(d): list(c) for d, c in curve.items()}, d9=d_star, nu0=nu0, rho=rho)


# ---------------------------------------------------------------------------
# 3. Probe: n, T, rho, delta and d on both sides of d_9
# ---------------------------------------------------------------------------

#: hypothesis examples at the quick / standard / full budget: an example is PROBE_DRAWS Gram matrices (~20-50 ms)
PROBE_EXAMPLES = (60, 100, 300)
#: DM data sets per example: at P = 1 the Clopper-Pearson lower end at the quick probe's per-example level (alpha /
#: (60 x 3) ~ 3e-7) is ~1 - 16/K, so K = 4000 clears 1 - delta for every delta >= 0.01 of the range
PROBE_DRAWS = 4000
#: the probe is inconclusive with fewer decided instances inside the assumptions
PROBE_MIN_DECIDED = 5
#: the probe's n, T and delta: n sequences of T tokens, up to 5 x 4 = 20 tokens (ours: the claims' DM has 3 x 2);
#: delta over the free choice's range 0.01-0.1
PROBE_N = (2, 5)
PROBE_T = (2, 3, 4)
PROBE_DELTA = (0.01, 0.1)
#: rho of the draws aimed inside (rho > 1; below 1.5 d_9 exceeds 10^4 at n T >= 12) and of the wide ones (down to
#: 0.8: Cond. 1 (ii) broken)
PROBE_RHO_IN = (1.5, 8.0)
PROBE_RHO_OUT = (0.8, 8.0)
#: aimed draws: d = ceil(f d_9), f log-uniform over this range (inside Cond. 1 (iii), up to 4 d_9)
PROBE_D_FACTOR = (1.0, 4.0)
#: boundary draws: d = ceil(f d_9) below Condition 1 (iii), f log-uniform over this range, where a d_9 derived too
#: small (the control's, 10-40 times smaller) still counts the instance inside while the conclusion starts to fail
#: (the union bound is loose: it fails well below d_9)
PROBE_D_BELOW = (1 / 64, 1.0)
#: wide draws: d = round(2^x), x uniform over this range (4 to 65536: far below and above every d_9 of the range)
PROBE_LOG2_D = (2.0, 16.0)
#: log2(d / d_9) is plotted within +-PARAM_CLIP (d_9 = inf when rho <= 1)
PARAM_CLIP = 20.0


def gram_nu(rng: np.random.Generator, K: int, n: int, T: int, d: int, rho: float) -> np.ndarray:
    """nu of K independent DM data sets from their Gram matrices alone (nu reads only inner products).

    The n T tokens of a data set are independent, ``N(0, s_k^2 I_d)`` with ``s_k = rho`` for the opt tokens and 1
    for the others (sigma = 1: nu is scale-free), so their Gram matrix is ``S A A^T S`` with ``A A^T`` a Wishart
    matrix of d degrees of freedom, drawn by Bartlett's decomposition (A lower triangular, ``A_kk^2 ~ chi^2(d - k)``,
    ``A_kl ~ N(0, 1)`` below the diagonal): exact, and its cost does not grow with d (up to d ~ 10^5 here).  Below
    d = n T the Gram matrix is singular and is drawn from the tokens themselves.  The opt token is the first of each
    sequence: nu's law does not depend on which token it is."""
    p = n * T
    scale = np.where(np.arange(p) % T == 0, rho, 1.0)
    if d < p:
        X = rng.standard_normal((K, p, d)) * scale[None, :, None]
        G = X @ X.transpose(0, 2, 1)
    else:
        A = np.tril(rng.standard_normal((K, p, p)), -1)
        A[:, np.arange(p), np.arange(p)] = np.sqrt(rng.chisquare(d - np.arange(p), size=(K, p)))
        G = (A @ A.transpose(0, 2, 1)) * np.outer(scale, scale)[None]
    is_opt = np.arange(p) % T == 0
    pair = ~(is_opt[:, None] & is_opt[None, :]) & ~np.eye(p, dtype=bool)
    opt_norm2 = G[:, is_opt, is_opt].min(-1)
    return np.abs(G[:, pair]).max(-1) / opt_norm2


@st.composite
def probe_instances(draw):
    """A third of the draws inside Condition 1 (ii)-(iii) at d = f d_9(delta), f in [1, 4]; a third just below its
    d_9 (f in [1/8, 1]); a third with rho down to 0.8 and d anywhere in 4 ... 65536.  n, T, rho, delta and d (or f)
    are hypothesis primitives and shrink; the Gram matrices come from a drawn seed (``gram_nu``)."""
    where = draw(fair_sampled_from(["inside", "below d_9", "wide"]))
    n, T = draw(st.integers(*PROBE_N)), draw(st.sampled_from(PROBE_T))
    delta = draw(log_uniform(*PROBE_DELTA))
    if where != "wide":
        rho = draw(st.floats(*PROBE_RHO_IN))
        factor = draw(log_uniform(*(PROBE_D_FACTOR if where == "inside" else PROBE_D_BELOW)))
        d = math.ceil(factor * d9(n, T, rho, delta))
    else:
        rho = draw(st.floats(*PROBE_RHO_OUT))
        d = int(round(2 ** draw(st.floats(*PROBE_LOG2_D))))
    seed = draw(st.integers(0, 2**31 - 1))
    return {"n": n, "T": T, "d": d, "rho": rho, "delta": delta, "seed": seed}


def probe_conclusion(inst, alpha_each, d9_fn=d9):
    """P(nu <= nu_0) >= 1 - delta at the instance, decided by a Clopper-Pearson interval on PROBE_DRAWS data sets at
    the example's level; ``d9_fn``: the d_9 the assumptions read (the control passes :func:`d9_typical`).  Facts: d_9
    and the estimate."""
    n, T, d, rho, delta = (inst[k] for k in ("n", "T", "d", "rho", "delta"))
    nu0 = nu_threshold(n, T, rho)
    nu = gram_nu(np.random.default_rng(inst["seed"]), PROBE_DRAWS, n, T, d, rho)
    k = int((nu <= nu0).sum())
    dec = decide_binomial(k, PROBE_DRAWS, 1 - alpha_each, at_least=1 - delta, max_width=MAX_WIDTH)
    holds = {"pass": True, "fail": False}.get(dec.status)
    facts = {"d9": d9_fn(n, T, rho, delta), "P(ν ≤ ν₀)": k / PROBE_DRAWS}
    return holds, "decided" if holds is not None else "interval straddles 1 − δ", \
        f"P(ν ≤ ν₀ = {nu0:.4g}) = {k}/{PROBE_DRAWS} [{dec.lo:.4f}, {dec.hi:.4f}] vs 1 − δ = {1 - delta:.4g} at d = {d}", \
        facts


def probe_assumptions(inst, facts) -> dict[str, bool]:
    return {"Cond. 1 (ii) ρ > 1": inst["rho"] > 1.0, "Cond. 1 (iii) d ≥ d₉(δ)": inst["d"] >= facts.get("d9", math.inf)}


def probe_parameters(inst, facts) -> dict[str, float]:
    ratio = math.log2(inst["d"] / facts["d9"]) if math.isfinite(facts.get("d9", math.inf)) else -PARAM_CLIP
    return {"log₂(d/d₉)": float(np.clip(ratio, -PARAM_CLIP, PARAM_CLIP)), "ρ": inst["rho"],
            "nT": float(inst["n"] * inst["T"]), "δ": inst["delta"]}



CLAIM = Claim(
    id=ID,
    title="DM tokens are nearly orthogonal with high probability under Condition 1",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("The source text keeps the proof's ingredients (Bernstein, union bound) but not the event's "
                   "constants. We fix the event as ν ≤ ν₀ with ν our reconstruction's near-orthogonality parameter and "
                   "ν₀ derived from the first step of Lemma 11's induction, and d₉(δ) from an explicit chi-square / "
                   "Gaussian union bound "
                   f"(ours). Checked for n = {MAIN['n']}, T = {MAIN['T']}, ρ = {MAIN['opt_ratio']:g}, δ = {DELTA}. ν₀ is "
                   "Lemma 9's event of Condition 1 (joint training), not paper B's Ass. 1 of the fixed-head sections "
                   "(defined once in fixed_head_assumptions). The Monte Carlo confirms our union bound's d₉ (it can fail "
                   "only if that bound is wrong); the curve in d shows where the event starts to hold."),
    checks=(
        Check("derivation", "symbolic", "ν₀ makes the first u-step raise every score gap", derivation),
        Check("probability-at-d9", "numeric", "Monte Carlo P(ν ≤ ν₀) at d₉(δ) with a Clopper-Pearson interval",
              check_probability),
        probe("hypothesis over n, T, ρ, δ and d on both sides of d₉(δ) (and of ρ = 1): P(ν ≤ ν₀) "
              "≥ 1 − δ by a Clopper-Pearson interval per instance", strategy=probe_instances(),
              conclusion=probe_conclusion, examples=PROBE_EXAMPLES, describe=instance_and_facts,
              assumptions=probe_assumptions, parameters=probe_parameters, min_decided=PROBE_MIN_DECIDED),
    ),
    controls=(
        Control("symbolic: ν₀ twice as large", "derivation", "ν₀ = (1 − 1/ρ²)/(nT): the cross term "
                "⟨r_j, x_opt − x_o⟩ bounded by νm (one token) instead of 2νm (two)", {"nu0": nu0_doubled}),
        Control("opt token not larger", "probability-at-d9", "ρ = 1 (Cond. 1 (ii) broken) at d₉", {"rho": 1.0}),
        Control("d too small", "probability-at-d9", "d = d₉/16 (Cond. 1 (iii) broken)", {"d_factor": 1 / 16}),
        Control("probe: d₉ without its tails", "probe", "d₉ from one inner product's typical size, 1/(ρ√d) ≤ ν₀ (the "
                "union bound's tails and its union over pairs dropped): the probe must find d ≥ this d₉ where the "
                "event fails", {"mutant": {"d9_fn": d9_typical}}),
    ),
    free_choices=(
        FreeChoice("δ", DELTA, "'with high probability' for some δ: 0.01-0.1, the usual levels",
                   {"probability-at-d9": lambda v: {"delta": v}}, low=0.01, high=0.1, scale="log"),
        FreeChoice("opt-token ratio ρ", MAIN["opt_ratio"], "Cond. 1 (ii) asks only for larger opt tokens: ρ = 2-8, "
                   "half to twice ours (the level ν₀ and d₉ move with it)",
                   {"probability-at-d9": lambda v: {"rho": v, "rho0": v}}, low=2.0, high=8.0, scale="log"),
    ),
)
