r"""B.L2 — a small Gaussian init keeps every logit small w.h.p. (Lemma 2).

Source text (formulas lost): "Let [W_0 iid Gaussian] for all [entries], with the initialization scale [...] for some
[delta], and absolute constant [c].  Further, if [||x_it|| <= R] for any [i, t], then with probability at least
[1 - delta], we have [...] for every [i, t]."  Proof: "for any [i, t] ... with probability at least [1 - delta] we
have [a Gaussian tail bound] ... Also, [a norm bound]."  Our reconstruction: qualitative.

Our reconstruction (derived here).  W_0 has iid N(0, sigma^2) entries.  For fixed tokens,
a_it(W_0) = x_it^T W_0 x_i1 = sum_jk x_it,j x_i1,k W_jk is N(0, sigma^2 ||x_it||^2 ||x_i1||^2), with standard deviation
at most sigma R^2.  With the tail bound P(|N(0,1)| > u) <= 2 e^{-u^2/2} and a union bound over the n T logits
(failure budget delta/2), and Gaussian concentration of the 1-Lipschitz ||.||_F (E||G||_F <= d; budget delta/2):

    sigma <= sigma_0 := eps / (R^2 sqrt(2 log(4 n T / delta)))   implies, with probability >= 1 - delta,
    max_{i,t} |a_it(W_0)| <= eps   and   ||W_0||_F <= sigma (d + sqrt(2 log(2/delta))),

so every opt score starts at s_io(W_0) = 1/(1 + sum_{t != o} e^{a_it - a_io}) >= 1/(1 + (T - 1) e^{2 eps}).
The norm threshold sigma_0 (d + sqrt(2 log(2/delta))) is the "data-dependent threshold" of our reconstruction
(through R, n, T).  Constants used: eps = 1/4, delta = 0.05 (free choices of the event check: ``verify sensitivity``
decides it over eps in 0.05-1 and delta in 0.01-0.1).

Evidence: sympy (variance of the bilinear form, the union-bound quantile, the opt-score floor, the
derivative identity behind the tail bound); Monte Carlo of the event at sigma_0 with a Clopper-Pearson
interval against 1 - delta, and the measured critical scale sigma_delta (largest sigma with probability
1 - delta) against sigma_0; a probe over (n, T, d, delta, the token-norm scale R, the init scale multiplier).
Negative controls: the variance without the query norm (symbolic); the scale without the R^2 factor
(sigma = eps / sqrt(2 log(4nT/delta))) in the event check and in the probe.  The probe draws token norms from 0.3
to 10 times Example 1's (R ~ 0.5 .. 20): the lemma is stated for any R, and at Example 1's own R ~ 1.4 dropping R^2
moves sigma by ~2x, inside the lemma's slack (sigma_delta/sigma_0 ~ 2.3), so a probe at that R alone would not
reject the control (it did not at quick seeds 1, 2 and standard seed 0).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from numerics.paper_b import data, model, runs
from numerics.stats import binomial_interval, decide_binomial
from theorems.claim import Assumption, Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_b.fixed_head.assumptions import DELTA, EPS, sigma0
from theorems.paper_b.fixed_head.bank import orthogonal_seed
from theorems.paper_b.fixed_head.lemma_probes import PROBE
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.symbolic import Derivation

ID = "B.L2"

STATEMENT = (
    r"\sigma\le\sigma_0=\frac{\epsilon}{R^2\sqrt{2\log(4nT/\delta)}}\;\Rightarrow\;"
    r"\Pr\Big[\max_{i,t}|x_{it}^\top W_0x_{i1}|\le\epsilon,\ \|W_0\|_F\le\sigma\big(d+\sqrt{2\log(2/\delta)}\big)\Big]"
    r"\ge1-\delta,\qquad s_{i,o}(W_0)\ge\frac{1}{1+(T-1)e^{2\epsilon}}"
)
# The event's probability is decided by its Clopper-Pearson interval against 1 - delta (pass: lower end >= 1 - delta);
# no width rule on top: a lower end above 1 - delta already needs a narrow interval.
MAX_WIDTH = math.inf
PROBE_DRAWS = 1000  # Monte Carlo draws of W_0 per probe instance
EVENT_SEEDS = (1, 2, 4)  # Example 1 data seeds per dimension (d = 32, 64) at quick / standard / full
#: Monte Carlo draws of W_0 per instance at quick / standard / full (the Clopper-Pearson lower end must clear 0.95)
EVENT_DRAWS = (2000, 20000, 60000)
#: the probe's examples at quick / standard / full: each is a 1000-draw Monte Carlo of ~0.05 s, so 40 at quick put
#: ~25 instances inside the assumptions (PROBE_EXAMPLES of lemma_probes gives 10 for probes that train)
L2_EXAMPLES = (40, 150, 400)
#: log10 of the init scale over sigma_0: 0.1 .. 5, about 60 % of the draws inside the assumption (scale <= sigma_0)
LOG_MULT = (-1.0, 0.7)
#: log10 of the token-norm scale: 0.3 .. 10 times Example 1's tokens (R from ~0.5 to ~20); Lemma 2 holds for any R
LOG_TOKEN_SCALE = (-0.5, 1.0)
#: decided instances the probe needs inside the assumptions (about 24 expected at quick; fewer than 10 says the
#: strategy no longer reaches the lemma's domain)
MIN_DECIDED = 10


# Lemma 2's scale sigma0 (and eps, delta) is in assumptions: B.L3, B.L4, B.L6 and B.Fig9 start from it.

def norm_bound(sigma: float, d: int, delta: float = DELTA) -> float:
    """Lemma 2's norm threshold sigma (d + sqrt(2 log(2/delta)))."""
    return sigma * (d + math.sqrt(2 * math.log(2 / delta)))


def opt_floor(T: int, eps: float = EPS) -> float:
    """Lemma 2's opt-score floor 1 / (1 + (T - 1) e^{2 eps})."""
    return 1 / (1 + (T - 1) * math.exp(2 * eps))


# ---------------------------------------------------------------------------
# 1. Symbolic
# ---------------------------------------------------------------------------

def derivation(wrong_variance: bool = False) -> Outcome:
    """``wrong_variance``: the control's candidate Var(x^T W y) = sigma^2 ||x||^2 (the query's norm dropped)."""
    D = Derivation()
    d = 3
    x = sp.symbols("x1:4", real=True)
    xp = sp.symbols("y1:4", real=True)
    sig = sp.Symbol("sigma", positive=True)
    # a = sum_jk x_j y_k W_jk with iid W_jk of variance sigma^2: Var a = sigma^2 sum_jk x_j^2 y_k^2
    var = sig**2 * sum(x[j] ** 2 * xp[k] ** 2 for j in range(d) for k in range(d))
    target = sig**2 * sum(v**2 for v in x) * (1 if wrong_variance else sum(v**2 for v in xp))
    D.prove_equal("Var(xᵀW y) = σ² Σ_jk x_j² y_k² = σ²‖x‖²‖y‖² for iid N(0, σ²) entries (d = 3)", var, target)
    u = sp.Symbol("u", positive=True)
    n, T, delta = sp.symbols("n T delta", positive=True)
    sol = sp.solve(sp.Eq(n * T * 2 * sp.exp(-u**2 / 2), delta / 2), u)
    D.prove_equal("union bound over nT logits with budget δ/2: nT·2e^{−u²/2} = δ/2 at u = √(2 log(4nT/δ))",
                  sol[0], sp.sqrt(2 * sp.log(4 * n * T / delta)),
                  shown=sp.Eq(n * T * 2 * sp.exp(-sp.UnevaluatedExpr(sp.sqrt(2 * sp.log(4 * n * T / delta))) ** 2 / 2),
                              delta / 2, evaluate=False))
    v = sp.Symbol("v", positive=True)
    D.prove_zero("tail bound erfc(v) ≤ e^{−v²} (i.e. P(|Z| > u) ≤ 2e^{−u²/2}, v = u/√2): f = e^{−v²} − erfc(v) has "
                 "f(0) = 0, f(∞) = 0 and f′ = e^{−v²}(2/√π − 2v), one sign change, so f ≥ 0",
                 sp.diff(sp.exp(-v**2) - sp.erfc(v), v) - sp.exp(-v**2) * (2 / sp.sqrt(sp.pi) - 2 * v))
    a = sp.symbols("a1:4", real=True)
    s_o = sp.exp(a[0]) / sum(sp.exp(ai) for ai in a)
    D.prove_equal("opt score as a function of the logit gaps: s_o = 1/(1 + Σ_{t≠o} e^{a_t − a_o}) (T = 3)",
                  s_o, 1 / (1 + sum(sp.exp(ai - a[0]) for ai in a[1:])))
    D.say("With |a_t| ≤ ε every gap a_t − a_o ≤ 2ε, hence s_o ≥ 1/(1 + (T−1)e^{2ε}); Gaussian concentration of the "
          "1-Lipschitz map G ↦ ‖G‖_F with E‖G‖_F ≤ √(E‖G‖²) = d gives P(‖G‖_F > d + u) ≤ e^{−u²/2} = δ/2.")
    return D.outcome("Lemma 2 constants derived")


# ---------------------------------------------------------------------------
# 2. Numeric: Monte Carlo of the event
# ---------------------------------------------------------------------------

def _instances(ctx: Context):
    """Example 1 (n = 8, T = 4) at d = 32 and d = 64, seeds 0..; orthogonal tokens (n = 4, T = 3)."""
    k = ctx.pick(*EVENT_SEEDS)
    out = [data.example1(n=8, T=4, d=d, seed=s) for d in (32, 64) for s in range(k)]
    return out + [runs.orthogonal_tokens(4, 3, seed=orthogonal_seed(ctx))]


def unit_scale_stats(ds, count: int, gen: torch.Generator, chunk: int = 500):
    """For W = G with iid N(0, 1) entries: (max_{i,t} |a_it(G)|, ||G||_F), each (count,)."""
    M, N = [], []
    for k in range(0, count, chunk):
        G = torch.randn(min(chunk, count - k), ds.d, ds.d, generator=gen, dtype=DTYPE)
        M.append(model.logits(G, ds).abs().flatten(1).amax(1))
        N.append(G.flatten(1).norm(dim=1))
    return torch.cat(M), torch.cat(N)


def event_count(ds, M, N, sigma: float, delta: float = DELTA, eps: float = EPS) -> int:
    """How many of the unit-scale draws (M, N) satisfy the event at scale ``sigma``."""
    return int(((sigma * M <= eps) & (sigma * N <= norm_bound(sigma, ds.d, delta))).sum())


def critical_scale_ratio(M, s0: float, z: float, eps: float = EPS, delta: float = DELTA) -> tuple[float, float, float]:
    """sigma_delta / sigma_0 with a distribution-free interval: the (1 - delta)-quantile q of max|a(G)| gives the
    largest scale with probability 1 - delta, sigma_delta = eps / q; order statistics at ±z binomial sd bound q."""
    count = len(M)
    Ms = np.sort(M.numpy())
    c = count * (1 - delta)
    i_lo = int(max(0, math.floor(c - z * math.sqrt(count * delta * (1 - delta)))))
    i_hi = int(min(count - 1, math.ceil(c + z * math.sqrt(count * delta * (1 - delta)))))
    return eps / float(Ms[int(c)]) / s0, eps / float(Ms[i_hi]) / s0, eps / float(Ms[i_lo]) / s0


def check_event(ctx: Context, r_power: int = 2, eps: float = EPS, delta: float = DELTA) -> Outcome:
    """Per instance: P(event) at sigma_0 against 1 - delta (Clopper-Pearson); ``r_power=0``: sigma_0 without R^2;
    ``eps``, ``delta``: the lemma's logit bound and failure probability (free choices)."""
    gen = ctx.generator(ID, "event")
    count = ctx.pick(*EVENT_DRAWS)
    insts = _instances(ctx)
    ev = Evidence(ctx, decisions=len(insts))
    curves = []
    for j, ds in enumerate(insts):
        s0 = sigma0(ds, eps=eps, delta=delta, r_power=r_power)
        M, N = unit_scale_stats(ds, count, gen)
        k = event_count(ds, M, N, s0, delta, eps)
        ratio, ratio_lo, ratio_hi = critical_scale_ratio(M, s0, ev.z, eps, delta)
        name = f"{ds.meta['name']} d={ds.d} #{j + 1}"
        d = decide_binomial(k, count, ev.level, at_least=1 - delta, max_width=MAX_WIDTH)
        ev.decide(f"{name}: P(event) at σ = {s0:.3g}", d, value=k / count,
                  line=f"{name}: P = {k / count:.4f} [{d.lo:.4f}, {d.hi:.4f}], σ_δ/σ₀ = {ratio:.2f} [{d.status}]")
        ev.measure(f"{name}: σ_δ/σ₀ (measured critical scale over the lemma's)", ratio,
                   claimed="≥ 1 (the lemma is conservative)", lo=ratio_lo, hi=ratio_hi, level=ev.level)
        curves.append((name, s0, M))
    if ev.plots:
        ev.figure("Probability that every initial logit is below ε", _plot(curves, r_power, eps, delta),
                  f"{count} Gaussian W₀ per instance; ε = {eps}, δ = {delta}; the lemma's scale is at 1.")
    return ev.outcome(headline=ev.lines[0], eps=eps, delta=delta, draws=count, r_power=r_power,
                      opt_floor=opt_floor(4, eps))


def _plot(curves, r_power, eps=EPS, delta=DELTA):
    fig, ax = new_figure()
    grid = np.linspace(0.2, 4.0, 40)
    for name, s0, M in curves:
        ax.plot(grid, [float(((g * s0 * M) <= eps).double().mean()) for g in grid], label=name)
    ax.axhline(1 - delta, color="k", ls="--", lw=0.8, label="1 − δ")
    ax.axvline(1.0, color="gray", lw=0.8)
    ax.set_xlabel("init scale / σ₀" + ("" if r_power == 2 else " (σ₀ without R²: control)"))
    ax.set_ylabel("P(max |a_it(W₀)| ≤ ε)")
    ax.legend(fontsize=7)
    return fig


# ---------------------------------------------------------------------------
# 3. Probe: dimensions, delta and the scale on both sides of sigma_0
# ---------------------------------------------------------------------------

@st.composite
def l2_instances(draw):
    """n, T, d, log10 delta, log10 of the scale multiplier and log10 of the token-norm scale shrink on their own
    (towards the boundary: multiplier 1, token scale 1); ``seed`` draws the Example 1 dataset (up to 8 x 6 tokens in
    d <= 48) and the Monte Carlo W_0: too many numbers to draw through hypothesis.

    The token-norm scale multiplies every token (R with it): Lemma 2 holds for any R (sigma_0 scales as 1/R^2, so the
    true conclusion does not move), while a scale that forgets a power of R is wrong by a factor R^2 there."""
    n, T = draw(st.integers(1, 8)), draw(st.integers(2, 6))
    return dict(n=n, T=T, d=draw(st.integers(4, 48)), log_delta=draw(st.floats(-3.0, -0.5)),
                log_mult=draw(st.floats(*LOG_MULT)), log_scale=draw(st.floats(*LOG_TOKEN_SCALE)),
                seed=draw(st.integers(0, 2**31 - 1)))


def l2_assumptions(inst) -> dict:
    return {"scale ≤ σ₀": inst["log_mult"] <= 0.0}


def l2_parameters(inst, facts) -> dict:
    return {"scale / σ₀": 10 ** inst["log_mult"], "log10 δ": inst["log_delta"], "log10 R": facts["_log_R"]}


def l2_dataset(inst):
    """Example 1 with every token multiplied by 10^log_scale (R scales with it)."""
    ds = data.example1(n=inst["n"], T=inst["T"], d=inst["d"], seed=inst["seed"])
    return type(ds)(ds.X * 10 ** inst["log_scale"], ds.y, u=ds.u, meta=ds.meta)


def l2_conclusion(inst, alpha_each, r_power: int = 2):
    """P(event) at 10^log_mult sigma_0 (Clopper-Pearson upper end) >= 1 - delta; ``r_power=0``: sigma_0 without
    1/R^2 (the control).  Facts: log10 R of the instance's tokens."""
    ds = l2_dataset(inst)
    facts = {"_log_R": math.log10(float(data.assumptions(ds)["R"]))}
    delta = 10 ** inst["log_delta"]
    s = 10 ** inst["log_mult"] * sigma0(ds, delta=delta, r_power=r_power)
    M, N = unit_scale_stats(ds, PROBE_DRAWS, torch.Generator().manual_seed(inst["seed"] + 3))
    k = event_count(ds, M, N, s, delta)
    lo, hi = binomial_interval(k, PROBE_DRAWS, 1 - alpha_each)
    ok = hi >= 1 - delta
    return ok, "", "" if ok else f"P = {k / PROBE_DRAWS:.3f} (upper {hi:.3f}) < 1 − δ = {1 - delta:.3f}", facts


# ---------------------------------------------------------------------------
# 4. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID,
    title="Small Gaussian initialization: all initial logits small with high probability",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("The source text keeps only the shape (Gaussian init below a data-dependent scale; an event for "
                   "every (i, t) with probability ≥ 1 − δ; 'Also' a norm bound). The scale σ₀, the logit bound ε, the "
                   "norm threshold and the opt-score floor are our derivation (union bound + Gaussian tail + Lipschitz "
                   "concentration), written in this module; ε = 1/4, δ = 0.05 are our choices."),
    assumptions=(Assumption("token norms", "‖x_it‖ ≤ R"), Assumption("init", "W₀ iid N(0, σ²) with σ ≤ σ₀")),
    checks=(
        Check("derivation", "symbolic", "Variance of xᵀW₀y, union-bound quantile, tail bound, opt-score floor",
              derivation),
        Check("event", "numeric", "Monte Carlo P(all |a_it(W₀)| ≤ ε and ‖W₀‖ ≤ bound) at σ₀ vs 1 − δ "
              "(Clopper-Pearson); measured critical scale σ_δ/σ₀", check_event),
        probe("Hypothesis over n, T, d, δ, the token-norm scale R and the init scale on both sides of σ₀", PROBE,
              strategy=l2_instances(), conclusion=l2_conclusion, assumptions=l2_assumptions, parameters=l2_parameters,
              examples=L2_EXAMPLES, min_decided=MIN_DECIDED),
    ),
    controls=(
        Control("symbolic: query norm dropped", "derivation", "Var(xᵀW₀y) = σ²‖x‖² (the ‖y‖² factor dropped)",
                {"wrong_variance": True}),
        Control("probe: dropped R² factor", "probe", "σ₀ without 1/R²: the probe must find an instance below 1 − δ",
                {"mutant": {"r_power": 0}}),
        Control("dropped R² factor", "event", "σ = ε/√(2 log(4nT/δ)) (no 1/R²): too large for ‖x‖ up to R",
                {"r_power": 0}),
    ),
    free_choices=(
        FreeChoice("ε", EPS, "the lemma bounds the logits by some ε (ours 1/4): 0.05-1, from nearly uniform attention "
                   "to logits of order one", {"event": lambda v: {"eps": v}}, low=0.05, high=1.0, scale="log"),
        FreeChoice("δ", DELTA, "'with probability at least 1 − δ' for some δ: 0.01-0.1, the usual levels",
                   {"event": lambda v: {"delta": v}}, low=0.01, high=0.1, scale="log"),
    ),
    findings=("The measured critical scale σ_δ (largest init scale with P(event) ≥ 1 − δ) is 1.6–2.3 times our σ₀ "
              "on every instance: the union-bound scale is conservative by about 2×, so a scale that is off by less "
              "than that (e.g. dropping R² at Example 1's own R ≈ 1.4) is not caught at Example 1's token norms.",),
)
