r"""B.C1 — initializing along a "bad" stationary direction: with a small init norm GD and NGD still converge to W_mm.

Statement (our reconstruction, exact in shape; Appendix C.1).  Let Wbar_0 violate a W-SVM constraint of some sample, so
that along the ray R Wbar_0 that sample's opt score s_{i,opt} -> 0 as R -> infinity (the gradient vanishes there: an
asymptotically stationary, "bad" direction).  Started at W_0 = r Wbar_0 with a small norm r, GD and NGD still
converge in direction to W_mm and the training loss still goes down to L*.

Data (``numerics.paper_b.data.bad_init``; the source text's vectors are lost, these are the suite's): d = n = T = 2,
head u = e_1; sample 0 (y = +1): query/opt x_01 = (1, 1/2), other x_02 = (-1/5, 1); sample 1 (y = -1): query
x_11 = (3/10, 1), opt x_12 = (-1, 2/5).  Wbar_0 is the unit min-norm W with <A_0, W> = -1, <A_1, W> = +1,
A_i = (x_{i,opt} - x_{i,other}) x_i1^T.

Evidence.  (a) sympy, exactly: Wbar_0 violates sample 0's constraint; along R Wbar_0, s_{0,opt} -> 0,
s_{1,opt} -> 1, ||grad L|| -> 0 and L -> (e^{1/5} + e^{-1})/2 > L* = e^{-1}: a bad asymptotically stationary
direction.  (b) numeric: inits r normalize(Wbar_0 + tau G) (tau ~ U(0, 0.3), still violating; r = 10^U(-2, 0)),
GD (eta = 1) and NGD (eta = 0.1) for a fixed horizon: for every run 1 - <Wbar_T, Wbar_mm> <= 1e-3 and still
decreasing, L - L* reduced by a factor >= e^3 and still decreasing.  Negative control: GD from init norm 30 on the
same direction (the gradient there is ~e^{-30}: GD does not move), which the same rule rejects.  Free choices (the
appendix's values are lost): the largest init norm, a factor on both step sizes and the horizon.
"""
from __future__ import annotations

import math

import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from numerics.paper_b import data, model, runs, svm
from theorems.claim import Assumption, Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_b.fixed_head.bank import bad_init_problem, most_loaded_sample_dropped
from theorems.plots import new_figure
from theorems.probe import instance_and_facts, probe, probe_check
from theorems.strata import fair_sampled_from
from theorems.symbolic import Derivation

ID = "B.C1"
CORR_TOL, LOSS_DROP = 1e-3, 3.0  # at the horizon: 1 - <Wbar_T, Wbar_mm> <= 1e-3 and log(L - L*) down by >= 3
ALGOS = (("GD", "gd", 1.0), ("NGD", "ngd", 0.1))  # the appendix's two algorithms at the suite's step sizes (B.Fig8's)
INIT_LOG_NORMS = (-2.0, 0.0)  # small init norms 10^U(-2, 0)
TAU_MAX = 0.3  # perturbation of the bad direction, tau ~ U(0, 0.3): the inits still violate sample 0's constraint
CONTROL_NORM = 30.0  # the control's init norm: the gradient there is ~e^{-30}
RECORD_POINTS = 60  # log-spaced record steps (plus the middle)
INITS = (12, 64, 128)  # perturbed bad-direction inits at quick / standard / full
STEPS = (1000, 5000, 20000)  # horizon at quick / standard / full

STATEMENT = (
    r"\langle A_{0},\bar W_0\rangle<0\ (\text{so } s_{0,o}(R\bar W_0)\to0,\ \nabla L(R\bar W_0)\to0),\ "
    r"W_0=r\bar W_0,\ r\ \text{small}\;\Rightarrow\;\langle\bar W_t,\bar W_{mm}\rangle\to1,\ L(W_t)\downarrow L^*"
)

#: the data of ``data.bad_init`` in exact rationals (sympy): two samples of two tokens in d = 2, and their labels
X_EXACT = [[[1, sp.Rational(1, 2)], [sp.Rational(-1, 5), 1]], [[sp.Rational(3, 10), 1], [-1, sp.Rational(2, 5)]]]
OPT = (0, 1)  # opt token index per sample (gamma = (1, -1/5) and (-3/10, 1) under u = e_1, y = (+1, -1))
Y = (1, -1)  # labels of the two samples (as in data.bad_init)


# ---------------------------------------------------------------------------
# 1. Symbolic: the direction is bad and asymptotically stationary
# ---------------------------------------------------------------------------

#: the constraint values ⟨A_i, W⟩ the bad direction is solved for: sample 0's W-SVM constraint violated, sample 1's kept
BAD_TARGETS = (-1, 1)


def exact_bad_direction(targets=BAD_TARGETS):
    X = [[sp.Matrix(tok) for tok in sample] for sample in X_EXACT]
    A = []
    for i in range(2):
        o, t = OPT[i], 1 - OPT[i]
        A.append(((X[i][o] - X[i][t]) * X[i][0].T).reshape(1, 4))
    Am = sp.Matrix.vstack(*A)
    w = Am.T * (Am * Am.T).inv() * sp.Matrix(targets)
    return X, A, w / sp.sqrt((w.T * w)[0]), sp.sqrt((w.T * w)[0])


def derivation(targets=BAD_TARGETS) -> Outcome:
    """The exact direction solved for ``targets`` (a control passes ``(1, 1)``: a direction that keeps both
    constraints, along which the loss does reach L*)."""
    D = Derivation()
    X, A, wbar, wnorm = exact_bad_direction(targets)
    k = 1 / wnorm
    D.prove_equal("constraint values along W̄₀ (exact, min-norm solution of ⟨A₀,W⟩ = −1, ⟨A₁,W⟩ = 1, normalized): "
                  "⟨A₀, W̄₀⟩ = −1/‖w‖ < 0 (sample 0 violated), ⟨A₁, W̄₀⟩ = +1/‖w‖",
                  sp.Matrix([(A[0] * wbar)[0], (A[1] * wbar)[0]]), sp.Matrix([-k, k]),
                  shown=sp.Eq(sp.MatMul(sp.ImmutableMatrix.vstack(*A), sp.MatrixSymbol("wbar_0", 4, 1)),
                              sp.Matrix([-k, k]), evaluate=False))
    R = sp.Symbol("R", positive=True)
    gamma = [[Y[i] * X[i][t][0] for t in range(2)] for i in range(2)]        # u = e_1
    W = (R * wbar).reshape(2, 2)
    s_opt, c = [], []
    L = 0
    for i in range(2):
        a = [(X[i][t].T * W * X[i][0])[0] for t in range(2)]
        o, t = OPT[i], 1 - OPT[i]
        so = 1 / (1 + sp.exp(a[t] - a[o]))
        m = so * gamma[i][o] + (1 - so) * gamma[i][t]
        s_opt.append(so)
        c.append(sp.exp(-m) * so * (1 - so) * (gamma[i][o] - gamma[i][t]))
        L += sp.exp(-m) / 2
    Wbar0 = sp.Symbol("Wbar_0")
    D.prove_equal("along R W̄₀ the logit gap of sample 0 is −R/‖w‖: s_{0,opt}(R W̄₀) = 1/(1 + e^{R/‖w‖})", s_opt[0],
                  1 / (1 + sp.exp(R * k)), shown=sp.Eq(sp.Function("s_0,opt")(R * Wbar0), 1 / (1 + sp.exp(R * k)),
                                                      evaluate=False))
    D.prove_zero("lim_{R→∞} s_{0,opt}(R W̄₀) = 0", sp.limit(s_opt[0], R, sp.oo),
                 shown=sp.Eq(sp.Limit(sp.Function("s_0,opt")(R * Wbar0), R, sp.oo), 0, evaluate=False))
    D.prove_zero("lim_{R→∞} s_{1,opt}(R W̄₀) = 1", sp.limit(s_opt[1], R, sp.oo) - 1,
                 shown=sp.Eq(sp.Limit(sp.Function("s_1,opt")(R * Wbar0), R, sp.oo), 1, evaluate=False))
    D.prove_zero("the one-direction coefficients c_i = e^{−m_i} s_io(1 − s_io)Δ_i of −∇L (B.E5; T = 2) vanish: "
                 "lim c₀ = lim c₁ = 0, so ∇L(R W̄₀) → 0 (asymptotically stationary)",
                 sp.limit(c[0], R, sp.oo) + sp.limit(c[1], R, sp.oo),
                 shown=sp.Eq(sp.Limit(sp.Function("c_0")(R * Wbar0) + sp.Function("c_1")(R * Wbar0), R, sp.oo), 0,
                             evaluate=False))
    L_lim = sp.limit(L, R, sp.oo)
    L_star = (sp.exp(sp.Rational(1, 5)) + sp.exp(-1)) / 2
    D.prove_equal("the loss along the ray tends to (e^{1/5} + e^{−1})/2, not to L* = e^{−1}", L_lim, L_star,
                  shown=sp.Eq(sp.Limit(sp.Function("L")(R * Wbar0), R, sp.oo), L_star, evaluate=False))
    D.say("So R W̄₀ is a bad asymptotically stationary direction: the loss plateaus above L* while the gradient "
          "vanishes. From a small init norm the gradient is not yet small, and (B.L3/B.L4) steers W towards W_mm.")
    return D.outcome("bad stationary direction established")


# ---------------------------------------------------------------------------
# 2. Numeric: global convergence from the bad direction with a small norm
# ---------------------------------------------------------------------------

def bad_inits(gen, B, Wb, fixed_r=None, log_norms=INIT_LOG_NORMS):
    """B inits r normalize(Wbar_0 + tau G): tau ~ U(0, TAU_MAX), r = 10^U(log_norms) (or ``fixed_r``)."""
    tau = TAU_MAX * torch.rand(B, 1, 1, generator=gen, dtype=DTYPE)
    G = torch.randn(B, 2, 2, generator=gen, dtype=DTYPE)
    G = G / G.flatten(1).norm(dim=1)[:, None, None]
    Dm = Wb + tau * G
    Dm = Dm / Dm.flatten(1).norm(dim=1)[:, None, None]
    lo, hi = log_norms
    r = (10 ** (lo + (hi - lo) * torch.rand(B, generator=gen, dtype=DTYPE))
         if fixed_r is None else torch.full((B,), float(fixed_r), dtype=DTYPE))
    return r[:, None, None] * Dm


def converged(tr) -> tuple[torch.Tensor, dict]:
    """Per-run decision (B,) bool: aligned (1-corr <= tol and decreasing over the second half) and loss down."""
    omc, lex = tr["one_minus_corr"], tr["log_excess_loss"]
    half = runs.half_index(tr)
    aligned = (omc[-1] <= CORR_TOL) & (omc[-1] < omc[half])
    loss_down = (lex[-1] <= lex[0] - LOSS_DROP) & (lex[-1] < lex[half])
    ok = aligned & loss_down & torch.isfinite(omc[-1]) & torch.isfinite(lex[-1])
    return ok, dict(omc_final=omc[-1], lex_drop=lex[0] - lex[-1])


def check_convergence(ctx: Context, problem: tuple, fixed_r: float | None = None, algos=ALGOS,
                      init_log_norms=INIT_LOG_NORMS, step_factor: float = 1.0, horizon: float = 1.0) -> Outcome:
    """Every run from a perturbed bad-direction init aligns with W_mm and lowers the loss; ``problem``: C.1's data
    and its W-SVM; the control starts GD at ``fixed_r = 30``.  Free choices: the init norms 10^U(init_log_norms), every
    algorithm's step times ``step_factor`` and the horizon times ``horizon``."""
    gen = ctx.generator(ID, "convergence")
    B, steps = ctx.pick(*INITS), int(round(horizon * ctx.pick(*STEPS)))
    if step_factor != 1.0:
        algos = tuple((name, kind, eta * step_factor) for name, kind, eta in algos)
    ds, r = problem
    W0 = bad_inits(gen, B, ds.meta["W0_bar"], fixed_r=fixed_r, log_norms=init_log_norms)
    a0 = model.logits(W0, ds)[:, 0, :]                        # sample 0's logits: its opt is token 0
    viol0 = a0[:, 0] - a0[:, 1] < 0
    ev = Evidence(ctx)
    trajs = []
    for name, kind, eta in algos:
        tr = runs.run_recorded(ds, runs.algorithm(kind, eta), W0, steps, r.solution, values=True,
                               record_at=runs.log_spaced_and_half(steps, RECORD_POINTS))
        ok, info = converged(tr)
        worst_omc = float(info["omc_final"].nan_to_num(math.inf).max())
        min_drop = float(info["lex_drop"].nan_to_num(-math.inf).min())
        ev.exact(f"{name}: every run converged", bool(ok.all()),
                 f"{name}: {int(ok.sum())}/{B} converged, worst final 1−corr {worst_omc:.2e}, "
                 f"min drop of log(L−L*) {min_drop:.2f}")
        ev.measure(f"{name} (η={eta}): worst final 1 − ⟨W̄_T, W̄_mm⟩", worst_omc, claimed=f"≤ {CORR_TOL:g}")
        ev.measure(f"{name}: smallest drop of log(L − L*)", min_drop, claimed=f"≥ {LOSS_DROP:g}")
        trajs.append((kind, tr))
    if not bool(viol0.all()):
        ev.exact("inits violate sample 0", False, f"{int((~viol0).sum())} inits did not violate sample 0's constraint")
    if ev.plots:
        ev.figure("Convergence from the bad direction", _plot(trajs, fixed_r),
                  "Every run's alignment error (solid) and log excess loss (dotted).")
    span = ("10^U(-2,0)" if tuple(init_log_norms) == INIT_LOG_NORMS
            else f"10^U({init_log_norms[0]:g},{init_log_norms[1]:.3g})")
    return ev.outcome(headline=ev.lines[0], inits=B, steps=steps, init_norm=span if fixed_r is None else fixed_r,
                      tau="U(0, 0.3)",
                      algorithms=[f"{a} eta={e}" for a, _, e in algos], corr_tol=CORR_TOL, loss_drop=LOSS_DROP)


def _plot(trajs, fixed_r):
    fig, axes = new_figure()
    ax2 = axes.twinx()
    for kind, tr in trajs:
        x, col = tr.steps.numpy(), "tab:blue" if kind == "gd" else "tab:orange"
        axes.plot(x, tr["one_minus_corr"].numpy(), lw=0.5, alpha=0.5, color=col)
        ax2.plot(x, tr["log_excess_loss"].numpy(), lw=0.5, alpha=0.3, ls=":", color=col)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("step t")
    axes.set_ylabel("1 − ⟨W̄_t, W̄_mm⟩ (solid)")
    ax2.set_ylabel("log(L − L*) (dotted)")
    axes.set_title("bad-direction inits: GD blue, NGD orange" + ("" if fixed_r is None else f" (‖W₀‖ = {fixed_r})"))
    return fig


# ---------------------------------------------------------------------------
# 3. Probe: the init norm and the bad direction's perturbation, both algorithms
# ---------------------------------------------------------------------------

#: steps of each probe run: the quick check's horizon, at which the claim's ``converged`` rule was set (its worst start
#: in the family, norm 1 with tau = TAU_MAX wholly orthogonal to the span of the constraints, ends GD at 1 - corr =
#: 7.9e-4; at 300 steps it is 1.3e-3: the surrogate's threshold needs the claim's horizon, not a shorter one)
PROBE_STEPS = STEPS[0]
#: probe examples at quick / standard / full (one 1000-step run of a 2 x 2 problem each, ~0.15 s)
PROBE_EXAMPLES = (16, 60, 200)
#: decided instances needed inside the assumptions (a small init along a bad direction: ~10 of 16 expected at quick)
PROBE_MIN_DECIDED = 6
#: the probe's strata by a fair draw (``theorems.strata``): two thirds aimed inside (init norm 10^U(-2.5, 0)), a third
#: with a large norm 10^U(0.3, 2) (2-100: GD from norm 10 is stuck, B.Fig8)
PROBE_STRATA = ("small", "small", "large")
def probe_problem():
    """C.1's data (``data.bad_init``), its W-SVM and its bad direction Wbar_0 (the probe's; cheap, so per instance)."""
    ds, _ = data.bad_init(1.0)
    return ds, svm.w_svm(ds), ds.meta["W0_bar"]


@st.composite
def probe_instances(draw):
    """Algorithm (GD or NGD at the claim's steps), log10 init norm (by stratum) and the perturbation tau of the bad
    direction (the claim's family, up to TAU_MAX) are hypothesis primitives; ``seed`` draws the direction G (2 x 2) of
    the perturbation.  C.1's data and the family of directions stay the claim's: its finite-horizon rule (CORR_TOL at
    the horizon) is set on them, and GD's residual orthogonal to the constraints' span never decays (1 - corr falls
    like 1/log^2 t), so a wider family would test the horizon, not the claim."""
    stratum = draw(fair_sampled_from(PROBE_STRATA))
    return dict(algorithm=draw(st.sampled_from([a for a, _, _ in ALGOS])),
                log_norm=draw(st.floats(*((-2.5, 0.0) if stratum == "small" else (0.3, 2.0)))),
                tau=draw(st.floats(0.0, TAU_MAX)), seed=draw(st.integers(0, 2**31 - 1)))


def w_mm_of(ds, r: svm.SVMResult) -> torch.Tensor:
    """The instance's W_mm (the conclusion's reference)."""
    return r.solution


def w_mm_dropped(ds, r: svm.SVMResult) -> torch.Tensor:
    """The control's reference: the W-SVM without the constraints of the sample carrying the most dual mass."""
    return most_loaded_sample_dropped(ds, r).solution


def probe_conclusion(inst, alpha_each, reference=w_mm_of, step_factor: float = 1.0, horizon: float = 1.0,
                     largest_init_norm: float = 10 ** INIT_LOG_NORMS[1]):
    """The claim's rule (:func:`converged`: aligned to CORR_TOL and still aligning, log(L - L*) down by LOSS_DROP and
    still falling) on one run of ``horizon`` PROBE_STEPS steps at ``step_factor`` times the algorithm's step from
    ``r normalize(Wbar_0 + tau G)``, alignment against ``reference(ds, r)`` (control: :func:`w_mm_dropped`).
    Deterministic.  Facts: whether W_0 violates sample 0's constraint (the bad direction) and whether its norm is
    small (at most ``largest_init_norm``).  The last three parameters are the claim's free choices."""
    ds, r, Wb = probe_problem()
    g = torch.Generator().manual_seed(inst["seed"] + 1)
    G = torch.randn(1, 2, 2, generator=g, dtype=DTYPE)
    D = Wb + inst["tau"] * G / G.norm()
    W0 = 10 ** inst["log_norm"] * D / D.norm()
    a0 = model.logits(W0, ds)[0, 0]
    o = int(ds.opt_index[0])
    facts = {"violates": bool(a0[o] - a0[1 - o] < 0), "small": 10 ** inst["log_norm"] <= largest_init_norm}
    name, kind, eta = next(a for a in ALGOS if a[0] == inst["algorithm"])
    steps = int(round(horizon * PROBE_STEPS))
    tr = runs.run_recorded(ds, runs.algorithm(kind, eta * step_factor), W0, steps, reference(ds, r), values=True,
                           record_at=runs.log_spaced_and_half(steps, RECORD_POINTS))
    ok, info = converged(tr)
    return (bool(ok[0]), name, f"{name}: final 1 − corr {float(info['omc_final'][0]):.2e}, drop of log(L − L*) "
            f"{float(info['lex_drop'][0]):.2f}", facts)


def probe_assumptions(inst, facts: dict) -> dict:
    """C.1's premises: a bad direction (W_0 violates sample 0's W-SVM constraint) and a small init norm (at most the
    claim's largest, a free choice: the conclusion's facts)."""
    return {"bad direction (W₀ violates sample 0)": facts.get("violates", True),
            "small init norm (‖W₀‖ ≤ the largest)": facts.get("small", 10 ** inst["log_norm"] <= 1.0)}


def check_probe(ctx: Context, step_factor: float = 1.0, horizon: float = 1.0,
                largest_init_norm: float = 10 ** INIT_LOG_NORMS[1], mutant: dict | None = None, **probe) -> Outcome:
    """The probe (``theorems.probe.probe_check`` with ``probe``) at the claim's free choices: each is passed on to
    :func:`probe_conclusion` with the control's ``mutant``."""
    return probe_check(ctx, mutant=dict(mutant or {}) | dict(step_factor=step_factor, horizon=horizon,
                                                             largest_init_norm=largest_init_norm), **probe)


def probe_parameters(inst, facts: dict) -> dict:
    return {"log₁₀ ‖W₀‖": inst["log_norm"], "τ": inst["tau"]}



CLAIM = Claim(
    id=ID,
    title="Bad stationary init direction: GD/NGD still converge to W_mm from a small norm",
    statement=STATEMENT,
    fidelity="exact",
    fidelity_note=("Exact in shape (Appendix C.1 and our reconstruction). The data and the direction are the suite's "
                   "(numerics.paper_b.data.bad_init; the source text's vectors are lost); thresholds 1e−3 (alignment) "
                   "and e³ (loss reduction) at the horizon are ours."),
    assumptions=(Assumption("bad direction", "W̄₀ violates a W-SVM constraint"),
                 Assumption("small init norm", "‖W₀‖ ≤ 1 (here 10^U(−2, 0))")),
    checks=(
        Check("derivation", "symbolic", "Exact: W̄₀ violates sample 0; along R W̄₀ s_{0,opt} → 0, ∇L → 0, L ↛ L*",
              derivation),
        Check("convergence", "numeric", "GD (η = 1) and NGD (η = 0.1) from perturbed bad-direction inits of norm "
              "1e−2..1: aligned with W_mm and loss down, every run", check_convergence, stochastic=False,
              uses={"problem": bad_init_problem}),
        probe("Hypothesis over the algorithm, the init norm (small, or 2-100) and the perturbation of "
              "the bad direction: the claim's convergence rule on each run at the quick horizon", fn=check_probe,
              strategy=probe_instances(), conclusion=probe_conclusion, examples=PROBE_EXAMPLES,
              describe=instance_and_facts, assumptions=probe_assumptions, parameters=probe_parameters,
              min_decided=PROBE_MIN_DECIDED),
    ),
    controls=(
        Control("symbolic: a direction that keeps both constraints", "derivation", "W̄₀ solved for ⟨A₀, W⟩ = ⟨A₁, W⟩ "
                "= 1: no sample violated, so the constraint values, the limits and L ↛ L* must be refused",
                {"targets": (1, 1)}),
        Control("large init norm with GD", "convergence", "GD from ‖W₀‖ = 30 along the same directions: stuck",
                {"fixed_r": CONTROL_NORM, "algos": ALGOS[:1]}),
        Control("probe: wrong W_mm", "probe", "alignment against the W-SVM with the most-loaded sample's constraint "
                "dropped: the probe must meet a run that does not align with it", {"mutant": {"reference": w_mm_dropped}}),
    ),
    free_choices=(
        FreeChoice("largest init norm", 10 ** INIT_LOG_NORMS[1], "C.1 asks a small init norm, its value lost: the inits' "
                   "norms are 10^U(−2, log₁₀ of this), from 0.1 to ‖W_mm‖ ≈ 1.3 (beyond it the start is not small)",
                   {"convergence": lambda v: {"init_log_norms": (INIT_LOG_NORMS[0], math.log10(v))},
                    "probe": lambda v: {"largest_init_norm": v}},
                   low=0.1, high=1.3, scale="log"),
        FreeChoice("step factor", 1.0, "the appendix's step sizes are lost (ours: Fig. 8's GD η = 1, NGD η = 0.1): both "
                   "a decade either side", {"convergence": lambda v: {"step_factor": v},
                                            "probe": lambda v: {"step_factor": v}}, low=0.1, high=10.0,
                   scale="log"),
        FreeChoice("horizon factor", 1.0, "'converge' is asymptotic and the appendix gives no horizon: half to four "
                   "times the budget's (1000 steps at quick)", {"convergence": lambda v: {"horizon": v},
                                                                "probe": lambda v: {"horizon": v}}, low=0.5,
                   high=4.0, scale="log"),
    ),
)
