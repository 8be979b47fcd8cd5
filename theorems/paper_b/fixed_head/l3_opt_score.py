r"""B.L3 — the opt softmax score never collapses, and it cannot drop while a W-SVM constraint is violated (Lemma 3).

Our reconstruction (exact in shape): along NGD (and GD, Polyak) s_{i,opt}(W_t) stays above a constant for all t, and
whenever sample i violates a W-SVM constraint at W_t, s_{i,opt}(W_{t+1}) >= s_{i,opt}(W_t).  "Violates" is read
literally: min_{t != o} (x_io - x_it)^T W_t x_i1 < 1.  The source text's proof: induction; "Scenario 1" (constraints
satisfied) uses the step bound, "Scenario 2" (violated) shows every logit gap grows, using Ass 1 and the lower bound
itself.

Our derivation (the constants are lost; reconstructed).  Fixed head, exp loss, Ass 2, so by B.E5
-grad L = (1/n) sum_j c_j (x_jo - xbar_j) x_j1^T with c_j = e^{-m_j} s_jo (1 - s_jo) Delta_j >= 0.  Any step
W+ = W - eta_t grad L with eta_t > 0 (GD, NGD, Polyak) changes the gap of constraint (i, t) by

    eta_t <(x_io - x_it) x_i1^T, -grad L> = (eta_t/n) sum_j c_j (x_io - x_it)^T (x_jo - xbar_j) (x_i1^T x_j1).

Let nu = max |<x, x'>| / M_o over distinct token pairs with a non-opt member (Ass 1's parameter),
M_o = min_i ||x_io||^2, q = min_i ||x_i1||, R = max ||x_it||.
  own term (j = i) >= c_i q^2 M_o (1 - 3 nu)    (||x_io||^2 >= M_o; three cross products, each >= -nu M_o);
  cross terms >= -4 R^2 nu M_o c_j               (if both queries are opt: (p - beta) p >= -beta^2/4 with
                                                  |beta| <= 3 nu M_o; else |x_i1^T x_j1| <= nu M_o).
If sample i violates a constraint, some s_it > e^{-1} s_io, so with s_io >= b (induction) s_io(1 - s_io) >=
(b/e)(1 - b/e) (s(1-s) is smallest at an end of [b, 1 - b/e], b <= 1/2), c_i >= e^{-gamma_io} (b/e)(1 - b/e) Delta_i,
while c_j <= e^{-gammabar_j} Delta_j / 4 (m_j >= gammabar_j).  Every gap of sample i then grows if

    Ass 1 (ours):  nu / (1 - 3 nu) <= nu*,
                   nu* = q^2 b (1 - b/e) min_i(e^{-gamma_io} Delta_i) / (e (n-1) R^2 max_j(e^{-gammabar_j} Delta_j)),

and s_io = 1/(1 + sum_t e^{-gap_t}) is increasing in every gap: (ii) s_io(W_{t+1}) >= s_io(W_t).  If sample i
satisfies every constraint at W_t (gaps >= 1) a step of length <= Delta moves each gap by at most 2 R^2 Delta,
so s_io(W_{t+1}) >= 1/(1 + (T-1) e^{2 R^2 Delta - 1}).  With eps = max |a_it(W_0)| the induction closes with

    (i)  s_io(W_t) >= b = 1 / (1 + (T - 1) e^{max(2 eps, 2 R^2 Delta - 1)})   for all t.

Under Lemma 2's init eps <= 1/4 (B.L2).  Delta = eta for NGD; for GD and Polyak we use the largest step taken.
The floor b (``opt_score_floor``), nu* (``nu_star``) and our Ass 1 (``ass1``, ``ASS1``) are written in
``assumptions``: this derivation is the suite's one definition of Ass 1 for every fixed-head claim (B.L6
decides the d at which Example 1 meets it, ~2e6 for n = 8, T = 4); the step condition (ii) is
``monotone_violations`` below.

What is checked.  (a) symbolic: the gap-increment identity, the own-term expansion, the both-opt bound, the
endpoint comparison of s(1-s), the monotonicity of s_o in the gaps.  (b) numeric, every step of GD (eta = 1),
NGD (eta = 0.2, 10) and Polyak (cap 10) (the trajectory bank's algorithms) from Lemma-2 inits inside the
assumptions: the in-scope family of ``inscope`` (near-orthogonal tokens at half our Ass 1's level for
each algorithm's largest step; each run's scope read off its record, ``scope_evidence``): no drop of s_opt while
violated, and min_t s_opt >= b.  The same, as a labelled second check, on the shared trajectory bank (Example 1 at
n = 8, T = 4, d = 32, where nu ~ 0.35 is far above our nu* ~ 1e-3: this tests the paper's claim that Example 1 is
in scope; and one exactly orthogonal instance).  (c) probe over token geometry (nu on both sides of nu*; half the draws aimed inside Ass 1 and
Ass 2, classified by the computed assumption), Ass 2, init scale and step sizes; at least ``MIN_DECIDED`` instances
decided inside the assumptions.
Negative controls (each passes other runs, ``fresh_runs``, to the every-step check): Ass 1 broken (Example 1 at
d = 8, nu ~ 1): s_opt drops while violated; init 40x Lemma 2's scale (the init condition dropped, floor computed from
eps = 1/4): s_opt starts below the floor, and on Example 1 it also drops while violated (a larger init makes b, hence
nu*, smaller); a probe claiming the floor 1/T.
"""
from __future__ import annotations

import math

import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from numerics import optim
from numerics.paper_b import data, runs
from theorems.claim import Assumption, Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.fixture import fixture
from theorems.paper_b.fixed_head.assumptions import ASS1, ASS2, EPS, ass1, ass2_holds, nu_star, opt_score_floor, sigma0
from theorems.paper_b.fixed_head.bank import INIT_DELTA, trajectory_bank
from theorems.paper_b.fixed_head.inscope import (FAMILY_SCOPE, INSCOPE_LEVEL, INSCOPE_SIZES, StepRuns, inscope_bank,
                                                 record_scope)
from theorems.paper_b.fixed_head.lemma_probes import PROBE, probe_dataset
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.strata import fair_sampled_from
from theorems.symbolic import Derivation

ID = "B.L3"

STATEMENT = (
    r"\min_{t'\ne o}(x_{i,o}-x_{it'})^\top W_tx_{i1}<1\;\Rightarrow\;s_{i,o}(W_{t+1})\ge s_{i,o}(W_t),\qquad "
    r"s_{i,o}(W_t)\ge b=\frac{1}{1+(T-1)e^{\max(2\epsilon,\,2R^2\Delta-1)}}\quad\forall t"
)
TOL = 1e-10  # relative rounding of log s_opt between consecutive steps
VIOLATED = 1.0  # a W-SVM constraint is violated when its logit gap is below 1 (our reconstruction, read literally)
# the controls' fresh runs: the bank's algorithms but NGD eta = 10 (GD eta = 1, NGD eta = 0.2, Polyak cap 10)
ALGOS = (("GD η=1", "gd", 1.0), ("NGD η=0.2", "ngd", 0.2), ("Polyak cap 10", "polyak", 10.0))
PROBE_STEPS = 30  # steps of each probe run
#: the controls' fresh runs at quick / standard / full: inits per instance, steps, Example 1 data seeds
CONTROL_INITS, CONTROL_STEPS, CONTROL_SEEDS = (4, 8, 16), (150, 400, 1000), (2, 4, 6)
#: the probe's in-scope half: exactly orthogonal tokens perturbed by at most 1e-4 (nu far below nu* ~ 5e-3) and
#: steps 10^U(-2, -0.5) (below (1 + 2 eps)/(2 R^2), where the floor b does not depend on the step)
IN_SCOPE_RHO, IN_SCOPE_LOG_ETA = [0.0, 1e-4], (-2.0, -0.5)
#: decided instances the probe needs inside Ass 1 (ours) and Ass 2 (about 20 expected at quick from 40 examples)
MIN_DECIDED = 10
#: probe examples at quick / standard / full: the shared PROBE's, but 80 at quick (40 left the decided count's lower
#: tail at the minimum: hypothesis spends runs of examples mutating one instance)
PROBE_EXAMPLES = (80, 120, 300)


# ---------------------------------------------------------------------------
# 1. Symbolic
# ---------------------------------------------------------------------------

def centred_direction(x_o, x_bar, x_1):
    """Eq. (5)'s direction of −∇L for one sample: the opt token centred by the softmax average, times the query."""
    return (x_o - x_bar) * x_1.T


def uncentred_direction(x_o, x_bar, x_1):
    """A mutant for the derivation's control: the softmax average x̄ dropped from (5)'s direction."""
    return x_o * x_1.T


def derivation(direction=centred_direction) -> Outcome:
    """Lemma 3's algebra with −∇L built from ``direction`` (a control passes :func:`uncentred_direction`)."""
    D = Derivation()
    d = 2
    vec = lambda name: sp.Matrix(sp.symbols(f"{name}_1:{d + 1}", real=True))  # noqa: E731
    xo, xt, x1, yo, ybar, y1 = vec("xo"), vec("xt"), vec("x1"), vec("yo"), vec("ybar"), vec("y1")
    ci, cj, eta = sp.symbols("c_i c_j eta", positive=True)
    W = sp.Matrix(d, d, lambda j, k: sp.Symbol(f"W{j + 1}{k + 1}", real=True))
    xbar = vec("xbar")
    G = ci * direction(xo, xbar, x1) + cj * direction(yo, ybar, y1)  # -grad L (times n) for two samples, by (5)
    gap = lambda M: ((xo - xt).T * M * x1)[0]  # noqa: E731
    D.prove_equal("a step W + ηG moves the gap of constraint (i, t) by "
                  "η Σ_j c_j (x_io − x_it)ᵀ(x_jo − x̄_j)(x_i1ᵀx_j1) (two samples, d = 2)", gap(W + eta * G) - gap(W),
                  eta * (ci * ((xo - xt).T * (xo - xbar))[0] * (x1.T * x1)[0]
                         + cj * ((xo - xt).T * (yo - ybar))[0] * (x1.T * y1)[0]))
    D.prove_equal("own term: (x_o − x_t)ᵀ(x_o − x̄) = ‖x_o‖² − x_oᵀx̄ − x_tᵀx_o + x_tᵀx̄ (each cross product ≥ −νM_o)",
                  ((xo - xt).T * (xo - xbar))[0], (xo.T * xo)[0] - (xo.T * xbar)[0] - (xt.T * xo)[0] + (xt.T * xbar)[0])
    p, beta = sp.symbols("p beta", real=True)
    D.prove_equal("both queries opt: (p − β)p = (p − β/2)² − β²/4 ≥ −β²/4 (p = x_ioᵀx_jo, |β| ≤ 3νM_o)",
                  (p - beta) * p, (p - beta / 2) ** 2 - beta**2 / 4)
    x, y = sp.symbols("x y", positive=True)
    D.prove_equal("s(1−s) at the ends of [b, 1 − b/e]: f(x) − f(y) = (x − y)(1 − x − y), ≥ 0 for y = b/e ≤ x = b ≤ 1/2",
                  x * (1 - x) - y * (1 - y), (x - y) * (1 - x - y))
    g = sp.symbols("g2:4", real=True)
    s_o = 1 / (1 + sum(sp.exp(-gi) for gi in g))
    D.prove_equal("s_o = 1/(1 + Σ_t e^{−gap_t}) is increasing in every gap: ∂s_o/∂gap_t = e^{−gap_t} s_o² ≥ 0 (T = 3)",
                  sp.diff(s_o, g[0]), sp.exp(-g[0]) * s_o**2,
                  shown=sp.Eq(sp.Derivative(s_o, g[0]), sp.exp(-g[0]) * s_o**2, evaluate=False))
    D.say("Summing: own ≥ c_i q² M_o(1 − 3ν), cross ≥ −4R²νM_o Σ_{j≠i} c_j; with c_i ≥ e^{−γ_io}(b/e)(1 − b/e)Δ_i and "
          "c_j ≤ e^{−γ̄_j}Δ_j/4 every gap of a violating sample grows when ν/(1 − 3ν) ≤ ν*.  A satisfied sample's gaps "
          "move by at most 2R²Δ per step; induction from s_io(W_0) ≥ 1/(1 + (T−1)e^{2ε}) gives s_io ≥ b.")
    return D.outcome("Lemma 3 (our constants) derived")


def monotone_violations(log_s_opt: torch.Tensor, gap: torch.Tensor, threshold: float = VIOLATED,
                        tol: float = TOL) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Lemma 3's step condition (ii) on a (K, B, n) record taken at every step.

    Returns (violations, eligible), both (K-1, B, n) boolean: ``eligible`` where sample i violates a
    W-SVM constraint at step k (gap < ``threshold``), ``violations`` where moreover
    log s_opt drops at the next step by more than ``tol`` (relative rounding of the log-scores).
    """
    eligible = gap[:-1] < threshold
    drop = log_s_opt[1:] - log_s_opt[:-1] < -tol * (1 + log_s_opt[:-1].abs())
    return eligible & drop, eligible


# ---------------------------------------------------------------------------
# 2. Numeric: every step
# ---------------------------------------------------------------------------

def score_run(ds, kind, eta, tr, W0, floor_eps=None) -> dict:
    """Counts and extremes for one every-step record: drops of s_opt while violated, runs below the floor b
    (b from each run's measured eps = max |a_it(W_0)|, or from ``floor_eps``)."""
    viol, elig = monotone_violations(tr["log_s_opt"], tr["logit_gap"])
    R = runs.geometry(ds)["R"]
    eps = runs.init_logit_bound(W0, ds) if floor_eps is None else torch.full((W0.shape[0],), floor_eps, dtype=DTYPE)
    step = runs.step_lengths(tr, kind, eta).amax(0)
    b = opt_score_floor(ds.T, R, eps, step)                                 # (B,)
    s_min = tr["log_s_opt"].amin(dim=(0, 2)).exp()                         # (B,)
    finite = bool(torch.isfinite(tr["log_s_opt"]).all())
    return dict(viol=int(viol.sum()), elig=int(elig.sum()), strict=int((tr["logit_gap"][:-1] < 0).sum()),
                below=int((~(s_min >= b * (1 - TOL))).sum()) + (0 if finite else 1),
                s_min=float(s_min.min()), b=float(b.min()), traj=tr)


def _first_columns(tr, B):
    return optim.Trajectory(tr.steps, {k: v[:, :B] for k, v in tr.metrics.items()}, tuple(p[:B] for p in tr.final))


@fixture(uses={"bank": trajectory_bank})
def bank_runs(ctx, bank) -> StepRuns:
    """The shared trajectory bank's runs from Lemma-2 inits (Example 1 at d = 32 and orthogonal tokens)."""
    out = []
    for e in bank:
        B = e["n_lemma2"]
        for label, (kind, eta, tr) in e["runs"].items():
            out.append((e["ds"], label, kind, eta, _first_columns(tr, B), e["W0"][:B]))
    return StepRuns("the shared trajectory bank, Lemma-2 inits", dict(source="bank", d=32, init_mult=1.0), out)


@fixture
def fresh_runs(ctx, d: int = 32, init_mult: float = 1.0) -> StepRuns:
    """Fresh runs for the controls: Example 1 at dimension d (seeds 0..), ``ALGOS``, from init_mult x Lemma 2's scale."""
    gen = ctx.generator(ID, "control", d, init_mult)
    B, steps = ctx.pick(*CONTROL_INITS), ctx.pick(*CONTROL_STEPS)
    out = []
    for s_ in range(ctx.pick(*CONTROL_SEEDS)):
        ds = data.example1(n=8, T=4, d=d, seed=s_)
        W0 = runs.gaussian_init(B, ds.d, init_mult * sigma0(ds, delta=INIT_DELTA), gen)
        for label, kind, eta in ALGOS:
            tr = runs.run_recorded(ds, runs.algorithm(kind, eta), W0, steps, values=kind == "polyak")
            out.append((ds, label, kind, eta, tr, W0))
    return StepRuns(f"Example 1 at d = {d}, init {init_mult:g}× Lemma 2's scale (control)",
                    dict(source="example1", d=d, init_mult=init_mult), out)


#: Ass 1 broken: Example 1 at d = 8 (nu ~ 1), where cross-sample gradients lower violated samples' opt scores
ASS1_BROKEN = fresh_runs.bind(d=8)
#: the init condition dropped: inits 40x Lemma 2's scale (the control keeps the floor computed from eps = 1/4)
LARGE_INIT = fresh_runs.bind(init_mult=40.0)


def check_steps(ctx: Context, step_runs: StepRuns, floor_eps: float | None = None) -> Outcome:
    """No drop of s_opt while violated and min s_opt >= b, at every step of every one of ``step_runs``: the trajectory
    bank's Lemma-2 inits, or a control's fresh runs (``fresh_runs``; with ``floor_eps = EPS`` the floor still
    assumes the init condition the runs drop)."""
    all_runs, tag = step_runs.runs, step_runs.tag
    tot = dict(viol=0, elig=0, strict=0, below=0)
    s_min, rows, nus, shown, inside = math.inf, [], {}, [], []
    for ds, label, kind, eta, tr, W0 in all_runs:
        r = score_run(ds, kind, eta, tr, W0, floor_eps)
        inside += run_scope(ds, kind, eta, tr, W0)
        for k in tot:
            tot[k] += r[k]
        s_min = min(s_min, r["s_min"])
        geo = runs.geometry(ds)
        key = (ds.meta["name"], round(geo["nu"], 3))                 # the largest nu* over the algorithms' floors
        nus[key] = max(nus.get(key, 0.0), float(nu_star(geo, ds.n, r["b"])))
        rows.append(f"{ds.meta['name']} {label}: b={r['b']:.3g}, min s_opt={r['s_min']:.3f}, "
                    f"drops {r['viol']}/{r['elig']}")
        if ds is all_runs[0][0]:
            shown.append((tr, r["b"]))
    ev = Evidence(ctx)
    nu_txt = "; ".join(f"{n}: ν={a:.3g} vs ν*≤{b:.2g}" for (n, a), b in sorted(nus.items()))
    ev.exact("drops of s_opt while violated", tot["viol"] == 0,
             f"{tag}: {tot['viol']} drops of s_opt in {tot['elig']} violated (sample, step) pairs ({tot['strict']} "
             f"with a negative gap)", value=tot["viol"], claimed="0")
    ev.exact("runs below the floor b", tot["below"] == 0,
             f"{tot['below']} runs below the floor b; min s_opt {s_min:.3f}. {nu_txt}", value=tot["below"], claimed="0")
    ev.measure("violated (sample, step) pairs examined", tot["elig"])
    ev.measure("min s_opt over all runs and steps", s_min, claimed="≥ b")
    if ev.plots:
        ev.figure("Opt softmax scores along training", _plot(shown),
                  "One run per algorithm on the first instance; every sample's s_opt at every step.")
    where = record_scope(ev, sum(inside), len(inside), "Ass 1 (ν/(1−3ν) ≤ ν* at the run's ε and largest step), "
                           "Ass 2, Lemma 2's init (max|a(W₀)| ≤ 1/4)")
    return ev.outcome(headline=f"{tot['viol']} drops in {tot['elig']} violated steps; min s_opt {s_min:.3f}; "
                               f"{where['scope_evidence']}",
                      **step_runs.setup, floor_eps=floor_eps, per_run=rows, init_delta=INIT_DELTA, **where)


def run_scope(ds, kind: str, eta: float, tr, W0: torch.Tensor) -> list[bool]:
    """Per init of an every-step record: whether it lies inside the lemma's assumptions (Ass 1 at its measured
    initial logit bound and its largest step, Ass 2, Lemma 2's init)."""
    eps = runs.init_logit_bound(W0, ds)
    step = runs.step_lengths(tr, kind, eta).amax(0)
    return [bool(ass1(ds, step=float(step[b]), eps=float(eps[b])).holds and ass2_holds(ds) and float(eps[b]) <= EPS)
            for b in range(W0.shape[0])]


def _plot(shown):
    fig, ax = new_figure()
    for tr, b in shown:
        ax.plot(tr["log_s_opt"][:, 0, :].exp().numpy(), lw=0.6)
        ax.axhline(b, ls="--", lw=0.8, color=ax.lines[-1].get_color())
    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlabel("step t")
    ax.set_ylabel("s_{i,opt}(W_t), every sample, one run")
    ax.set_title("first instance, one run per algorithm; dashed: its floor b", fontsize=8)
    return fig


# ---------------------------------------------------------------------------
# 3. Probe
# ---------------------------------------------------------------------------

@st.composite
def l3_instances(draw):
    """Token geometry (orthogonal + rho, or Example 1 at d), sizes, spread (Ass 2), log10 init / sigma_0, algorithm
    and log10 eta are hypothesis primitives; ``seed`` draws the dataset (``probe_dataset``) and the two inits W_0
    (d x d each, d up to 40)."""
    # half the draws aimed inside Ass 1 (ours) and Ass 2 (classified as computed), by a fair coin: hypothesis's
    # st.booleans() has a bias that it varies per run (the ledger's IN_SCOPE_COIN)
    in_scope = draw(fair_sampled_from([True, False]))
    kind = "orthogonal" if in_scope else draw(st.sampled_from(["orthogonal", "orthogonal", "gaussian"]))
    n, T = draw(st.integers(1, 5)), draw(st.integers(2, 4))
    algo = draw(st.sampled_from(["gd", "ngd", "polyak"]))
    log_eta = draw(st.floats(*(IN_SCOPE_LOG_ETA if in_scope else (-2.0, 1.0))))
    rho = draw(st.sampled_from(IN_SCOPE_RHO if in_scope else [0.0, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0]))
    spread = 0.0 if in_scope else draw(st.sampled_from([0.0, 0.0, 0.5, 1.5]))
    return dict(kind=kind, n=n, T=T, d=draw(st.integers(max(n, T) + 1, 40)), rho=rho, spread=spread,
                log_init=draw(st.floats(-1.0, 1.5)), algo=algo, log_eta=log_eta, seed=draw(st.integers(0, 2**31 - 1)))


def l3_conclusion(inst, alpha_each, naive_floor: bool = False):
    """No drop while violated and s_opt >= b along 30 steps; ``naive_floor``: also claim s_opt >= 1/T (control).
    Facts: Ass 1 at the run's floor (whether it holds, nu, nu*)."""
    ds = probe_dataset(inst)
    W0 = runs.gaussian_init(2, ds.d, 10 ** inst["log_init"] * sigma0(ds), torch.Generator().manual_seed(inst["seed"]))
    eta = 10 ** inst["log_eta"]
    tr = runs.run_recorded(ds, runs.algorithm(inst["algo"], eta), W0, PROBE_STEPS, values=inst["algo"] == "polyak")
    r = score_run(ds, inst["algo"], eta, tr, W0)
    # THE Ass 1 (assumptions) at this run's floor: its measured eps and its largest step
    a1 = ass1(ds, step=float(runs.step_lengths(tr, inst["algo"], eta).max()),
              eps=float(runs.init_logit_bound(W0, ds).max()))
    facts = {"_ass1": a1.holds, "_nu": a1.nu, "_nu_star": a1.nu_star}
    ok = r["viol"] == 0 and r["below"] == 0
    if naive_floor:  # control: the floor 1/T (the e^{2 eps} factor dropped)
        ok = ok and r["s_min"] >= 1 / ds.T
    return ok, "", "" if ok else (f"{r['viol']} drops while violated, {r['below']} below floor b={r['b']:.3g}, "
                                  f"min s_opt {r['s_min']:.3g} (T = {ds.T})"), facts


def l3_assumptions(inst, facts):
    return {"Ass 1 (ν/(1−3ν) ≤ ν*)": facts["_ass1"], "Ass 2": inst["spread"] == 0.0}


def l3_parameters(inst, facts):
    return {"log10 ν/ν*": math.log10(max(facts["_nu"] / facts["_nu_star"], 1e-18)), "spread": inst["spread"],
            "log10 init/σ₀": inst["log_init"], "log10 η": inst["log_eta"]}


# ---------------------------------------------------------------------------
# 4. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID,
    title="The opt softmax score never collapses and cannot drop while a constraint is violated",
    statement=STATEMENT,
    fidelity="exact",
    fidelity_note=("Exact in shape (our reconstruction). Ass 1's inequality and the floor b are lost: our sufficient "
                   "form ν/(1−3ν) ≤ ν* and b are derived in this module (reconstructed) and are the suite's one Ass 1 "
                   "(fixed_head_assumptions.ASS1). The every-step check runs inside it (near-orthogonal tokens at half "
                   "its level for each algorithm's step); Example 1 at d = 32 has ν ≈ 0.4 against our ν* ≈ 1e-3, and "
                   "the labelled second check there tests the paper's claim that Example 1 is in scope."),
    assumptions=(ASS1, ASS2, Assumption("Lemma 2 init", "max |a_it(W₀)| ≤ ε = 1/4 (B.L2)"), FAMILY_SCOPE),
    checks=(
        Check("derivation", "symbolic", "Gap increments, own/cross terms, s(1−s) endpoints, monotonicity of s_o",
              derivation),
        Check("every-step", "numeric", "GD/NGD/Polyak, every step, inside the assumptions (near-orthogonal tokens at "
              "half Ass 1's level, Lemma-2 inits): no drop of s_opt while violated; min s_opt ≥ b",
              check_steps, stochastic=False, uses={"step_runs": inscope_bank}),
        Check("every-step (Example 1)", "numeric", "The same on the shared trajectory bank's Lemma-2 inits (Example 1 "
              "at d = 32, outside our Ass 1, and one exactly orthogonal instance)", check_steps, stochastic=False,
              uses={"step_runs": bank_runs}),
        probe("Hypothesis over ν (both sides of ν*), Ass 2, init scale, algorithm and step size", PROBE,
              examples=PROBE_EXAMPLES, strategy=l3_instances(), conclusion=l3_conclusion, assumptions=l3_assumptions,
              parameters=l3_parameters, min_decided=MIN_DECIDED),
    ),
    controls=(
        Control("symbolic: x̄ dropped from (5)", "derivation", "−∇L's direction without the softmax average, "
                "(x_o x₁ᵀ): the gap increment and its own term must be refused", {"direction": uncentred_direction}),
        Control("Ass 1 broken (d = 8)", "every-step", "Example 1 at d = 8 (ν ≈ 1): cross-sample gradients lower "
                "violated samples' opt scores", {"step_runs": ASS1_BROKEN}),
        Control("init condition dropped", "every-step (Example 1)", "init 40× Lemma 2's scale with the floor still "
                "computed from ε = 1/4", {"step_runs": LARGE_INIT, "floor_eps": EPS}),
        Control("probe: floor 1/T", "probe", "the floor without the e^{2ε} factor (s_opt ≥ 1/T): random inits start "
                "below it", {"mutant": {"naive_floor": True}}),
    ),
    free_choices=(
        FreeChoice("level", INSCOPE_LEVEL, "where inside our Ass 1 the family sits (ν/(1−3ν) = level × ν*): from "
                   "near its exactly orthogonal centre (1e-2) to its boundary (1), where the derived sufficient "
                   "condition is tightest", {"every-step": lambda v: {"step_runs": inscope_bank.bind(level=v)}},
                   low=0.01, high=1.0, scale="log"),
        FreeChoice("n", INSCOPE_SIZES["n"], "the lemma's cross-sample terms grow with n (ν* ∝ 1/(n − 1)): from 2 "
                   "(the fewest with such terms) to 8 (the trajectory bank's Example 1)",
                   {"every-step": lambda v: {"step_runs": inscope_bank.bind(n=v)}},
                   low=2, high=8, integer=True),
    ),
    findings=("On Example 1 at d = 32 (ν ≈ 0.4, hundreds of times our sufficient ν* ≲ 1.4e-3: outside Ass 1 as we derive it) "
              "no opt score dropped while its sample violated a constraint, at any step of GD, NGD or Polyak: the "
              "conclusion holds far outside the Ass 1 we can derive.",),
)
