r"""B.L3 — the opt softmax score never collapses, and it cannot drop while a W-SVM constraint is violated (Lemma 3).

Spec (exact in shape): along NGD (and GD, Polyak) s_{i,opt}(W_t) stays above a constant for all t, and whenever
sample i violates a W-SVM constraint at W_t, s_{i,opt}(W_{t+1}) >= s_{i,opt}(W_t).  "Violates" is read literally:
min_{t != o} (x_io - x_it)^T W_t x_i1 < 1.  The seed's proof: induction; "Scenario 1" (constraints satisfied) uses
the step bound, "Scenario 2" (violated) shows every logit gap grows, using Ass 1 and the lower bound itself.

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

What is checked.  (a) symbolic: the gap-increment identity, the own-term expansion, the both-opt bound, the
endpoint comparison of s(1-s), the monotonicity of s_o in the gaps.  (b) numeric, every step of GD (eta = 1),
NGD (eta = 0.2, 10) and Polyak (cap 10) (B.L4's shared trajectory bank) from Lemma-2 inits on Example 1
(n = 8, T = 4, d = 32; there nu ~ 0.35 is far
above our nu* ~ 1e-3: this tests the paper's claim that Example 1 is in scope) and on exactly orthogonal tokens
(nu = 0, inside our Ass 1): no drop of s_opt while violated, and min_t s_opt >= b.  (c) probe over token
geometry (nu on both sides of nu*), Ass 2, init scale and step sizes.  Negative controls: Ass 1 broken
(Example 1 at d = 8, nu ~ 1): s_opt drops while violated; init 40x Lemma 2's scale (the init condition
dropped, floor computed from eps = 1/4): s_opt starts below the floor, and on Example 1 it also drops while
violated (a larger init makes b, hence nu*, smaller); a probe claiming the floor 1/T.
"""
from __future__ import annotations

import math

import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from numerics import optim
from numerics.paper_b import data
from numerics.paper_b import trajectory_checks as tc
from theorems.claim import Assumption, Check, Claim, Context, Control, Figure, Measurement, Outcome
from theorems.paper_b.l2_init_scale import EPS, sigma0
from theorems.paper_b.l4_gradient_correlation import INIT_DELTA, algorithm, trajectory_bank
from theorems.plots import new_figure, to_svg
from theorems.probe import run_probe
from theorems.symbolic import Derivation

ID = "B.L3"

STATEMENT = (
    r"\min_{t'\ne o}(x_{i,o}-x_{it'})^\top W_tx_{i1}<1\;\Rightarrow\;s_{i,o}(W_{t+1})\ge s_{i,o}(W_t),\qquad "
    r"s_{i,o}(W_t)\ge b=\frac{1}{1+(T-1)e^{\max(2\epsilon,\,2R^2\Delta-1)}}\quad\forall t"
)
TOL = 1e-10  # relative rounding of log s_opt between consecutive steps
ALGOS = (("GD η=1", "gd", 1.0), ("NGD η=0.2", "ngd", 0.2), ("Polyak cap 10", "polyak", 10.0))


# ---------------------------------------------------------------------------
# 1. Symbolic
# ---------------------------------------------------------------------------

def derivation() -> Outcome:
    D = Derivation()
    d = 2
    vec = lambda name: sp.Matrix(sp.symbols(f"{name}_1:{d + 1}", real=True))  # noqa: E731
    xo, xt, x1, yo, ybar, y1 = vec("xo"), vec("xt"), vec("x1"), vec("yo"), vec("ybar"), vec("y1")
    ci, cj, eta = sp.symbols("c_i c_j eta", positive=True)
    W = sp.Matrix(d, d, lambda j, k: sp.Symbol(f"W{j + 1}{k + 1}", real=True))
    xbar = vec("xbar")
    G = ci * (xo - xbar) * x1.T + cj * (yo - ybar) * y1.T           # -grad L (times n) for two samples, by (5)
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
                  sp.diff(s_o, g[0]), sp.exp(-g[0]) * s_o**2)
    D.say("Summing: own ≥ c_i q² M_o(1 − 3ν), cross ≥ −4R²νM_o Σ_{j≠i} c_j; with c_i ≥ e^{−γ_io}(b/e)(1 − b/e)Δ_i and "
          "c_j ≤ e^{−γ̄_j}Δ_j/4 every gap of a violating sample grows when ν/(1 − 3ν) ≤ ν*.  A satisfied sample's gaps "
          "move by at most 2R²Δ per step; induction from s_io(W_0) ≥ 1/(1 + (T−1)e^{2ε}) gives s_io ≥ b.")
    return D.outcome("Lemma 3 (our constants) derived")


# ---------------------------------------------------------------------------
# 2. Numeric: every step
# ---------------------------------------------------------------------------

def score_run(ds, kind, eta, tr, W0, eps_floor=None) -> dict:
    """Counts and extremes for one every-step record: drops of s_opt while violated, runs below the floor b."""
    viol, elig = tc.monotone_violations(tr["log_s_opt"], tr["logit_gap"], 1.0, TOL)
    R = tc.geometry(ds)["R"]
    eps = tc.init_logit_bound(W0, ds) if eps_floor is None else torch.full((W0.shape[0],), eps_floor, dtype=DTYPE)
    step = tc.step_lengths(tr, kind, eta).amax(0)
    b = tc.opt_score_floor(ds.T, R, eps, step)                             # (B,)
    s_min = tr["log_s_opt"].amin(dim=(0, 2)).exp()                         # (B,)
    finite = bool(torch.isfinite(tr["log_s_opt"]).all())
    return dict(viol=int(viol.sum()), elig=int(elig.sum()), strict=int((tr["logit_gap"][:-1] < 0).sum()),
                below=int((~(s_min >= b * (1 - TOL))).sum()) + (0 if finite else 1),
                s_min=float(s_min.min()), b=float(b.min()), traj=tr)


def run_and_score(ds, kind, eta, W0, steps, eps_floor=None):
    tr = tc.run_recorded(ds, algorithm(kind, eta), W0, steps, values=kind == "polyak")
    return score_run(ds, kind, eta, tr, W0, eps_floor)


def _first_columns(tr, B):
    return optim.Trajectory(tr.steps, {k: v[:, :B] for k, v in tr.metrics.items()}, tuple(p[:B] for p in tr.final))


def bank_runs(ctx: Context):
    """[(ds, label, kind, eta, traj, W0)] from B.L4's trajectory bank, Lemma-2 inits only."""
    out = []
    for e in trajectory_bank(ctx):
        B = e["n_lemma2"]
        for label, (kind, eta, tr) in e["runs"].items():
            out.append((e["ds"], label, kind, eta, _first_columns(tr, B), e["W0"][:B]))
    return out


def control_runs(ctx: Context, d: int = 32, init_mult: float = 1.0):
    """Fresh runs for the controls: Example 1 at dimension d (seeds 0..), GD eta = 1, NGD eta = 0.2, Polyak cap 10."""
    gen = ctx.generator(ID, "control", d, init_mult)
    B, steps = ctx.pick(4, 8, 16), ctx.pick(150, 400, 1000)
    out = []
    for s_ in range(ctx.pick(2, 4, 6)):
        ds = data.example1(n=8, T=4, d=d, seed=s_)
        W0 = tc.gaussian_init(B, ds.d, init_mult * sigma0(ds, delta=INIT_DELTA), gen)
        for label, kind, eta in ALGOS:
            tr = tc.run_recorded(ds, algorithm(kind, eta), W0, steps, values=kind == "polyak")
            out.append((ds, label, kind, eta, tr, W0))
    return out


def check_steps(ctx: Context, control: str | None = None) -> Outcome:
    if control is None:
        runs, eps_floor, tag = bank_runs(ctx), None, "B.L4's trajectory bank, Lemma-2 inits"
    elif control == "d8":
        runs, eps_floor, tag = control_runs(ctx, d=8), None, "Example 1 at d = 8 (control)"
    else:
        runs, eps_floor, tag = control_runs(ctx, init_mult=40.0), EPS, "init 40× Lemma 2's scale (control)"
    tot = dict(viol=0, elig=0, strict=0, below=0)
    s_min, rows, nus = math.inf, [], {}
    fig, ax = new_figure()
    first = runs[0][0]
    for ds, label, kind, eta, tr, W0 in runs:
        r = score_run(ds, kind, eta, tr, W0, eps_floor)
        for k in tot:
            tot[k] += r[k]
        s_min = min(s_min, r["s_min"])
        geo = tc.geometry(ds)
        key = (ds.meta["name"], round(geo["nu"], 3))                 # the largest nu* over the algorithms' floors
        nus[key] = max(nus.get(key, 0.0), float(tc.nu_star(geo, ds.n, r["b"])))
        rows.append(f"{ds.meta['name']} {label}: b={r['b']:.3g}, min s_opt={r['s_min']:.3f}, "
                    f"drops {r['viol']}/{r['elig']}")
        if ds is first:
            ax.plot(tr["log_s_opt"][:, 0, :].exp().numpy(), lw=0.6)
            ax.axhline(r["b"], ls="--", lw=0.8, color=ax.lines[-1].get_color())
    status = "pass" if tot["viol"] == 0 and tot["below"] == 0 else "fail"
    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlabel("step t")
    ax.set_ylabel("s_{i,opt}(W_t), every sample, one run")
    ax.set_title("first instance, one run per algorithm; dashed: its floor b", fontsize=8)
    nu_txt = "; ".join(f"{n}: ν={a:.3g} vs ν*≤{b:.2g}" for (n, a), b in sorted(nus.items()))
    summary = (f"{tag}: {tot['viol']} drops of s_opt in {tot['elig']} violated (sample, step) pairs ({tot['strict']} "
               f"with a negative gap); {tot['below']} runs below the floor b; min s_opt {s_min:.3f}. {nu_txt}")
    return Outcome(status, summary,
                   [Measurement("drops of s_opt while violated", float(tot["viol"]), claimed="0"),
                    Measurement("violated (sample, step) pairs examined", float(tot["elig"])),
                    Measurement("min s_opt over all runs and steps", s_min, claimed="≥ b"),
                    Measurement("runs below the floor b", float(tot["below"]), claimed="0")],
                   [Figure("Opt softmax scores along training", to_svg(fig),
                           "One run per algorithm on the first instance; every sample's s_opt at every step.")],
                   details={"control": control, "per_run": rows, "init_delta": INIT_DELTA},
                   headline=f"{tot['viol']} drops in {tot['elig']} violated steps; min s_opt {s_min:.3f}")


# ---------------------------------------------------------------------------
# 3. Probe
# ---------------------------------------------------------------------------

@st.composite
def l3_instances(draw):
    kind = draw(st.sampled_from(["orthogonal", "orthogonal", "gaussian"]))
    n, T = draw(st.integers(1, 5)), draw(st.integers(2, 4))
    algo = draw(st.sampled_from(["gd", "ngd", "polyak"]))
    log_eta = draw(st.floats(-2.0, 1.0))
    return dict(kind=kind, n=n, T=T, d=draw(st.integers(max(n, T) + 1, 40)),
                rho=draw(st.sampled_from([0.0, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0])),
                spread=draw(st.sampled_from([0.0, 0.0, 0.5, 1.5])), log_init=draw(st.floats(-1.0, 1.5)),
                algo=algo, log_eta=log_eta, seed=draw(st.integers(0, 2**31 - 1)))


def _probe_ds(inst):
    if inst["kind"] == "orthogonal":
        return tc.orthogonal_tokens(inst["n"], inst["T"], rho=inst["rho"], spread=inst["spread"], seed=inst["seed"])
    return data.example1(n=inst["n"], T=inst["T"], d=inst["d"], spread=inst["spread"], seed=inst["seed"])


def l3_conclusion(inst, alpha_each, naive_floor=False):
    ds = _probe_ds(inst)
    W0 = tc.gaussian_init(2, ds.d, 10 ** inst["log_init"] * sigma0(ds), torch.Generator().manual_seed(inst["seed"]))
    r = run_and_score(ds, inst["algo"], 10 ** inst["log_eta"], W0, 30)
    geo = tc.geometry(ds)
    inst["_ass1"] = bool(tc.ass1_holds(geo, ds.n, r["b"]))
    inst["_nu"], inst["_nu_star"] = geo["nu"], float(tc.nu_star(geo, ds.n, r["b"]))
    ok = r["viol"] == 0 and r["below"] == 0
    if naive_floor:  # control: the floor 1/T (the e^{2 eps} factor dropped)
        ok = ok and r["s_min"] >= 1 / ds.T
    return ok, "", "" if ok else (f"{r['viol']} drops while violated, {r['below']} below floor b={r['b']:.3g}, "
                                  f"min s_opt {r['s_min']:.3g} (T = {ds.T})")


def l3_assumptions(inst):
    return {"Ass 1 (ν/(1−3ν) ≤ ν*)": inst["_ass1"], "Ass 2": inst["spread"] == 0.0}


def check_probe(ctx: Context, naive_floor=False) -> Outcome:
    return run_probe(ctx, l3_instances(), lambda i, a: l3_conclusion(i, a, naive_floor), ctx.pick(10, 60, 200),
                     describe=lambda i: dict(i), assumptions=l3_assumptions,
                     parameters=lambda i: {"log10 ν/ν*": math.log10(max(i["_nu"] / i["_nu_star"], 1e-18)),
                                           "spread": i["spread"], "log10 init/σ₀": i["log_init"],
                                           "log10 η": i["log_eta"]},
                     shrink_cells=ctx.budget != "quick")


CLAIM = Claim(
    id=ID,
    paper="B",
    title="The opt softmax score never collapses and cannot drop while a constraint is violated",
    statement=STATEMENT,
    fidelity="exact",
    fidelity_note=("Exact in shape (spec). Ass 1's inequality and the floor b are lost: our sufficient form "
                   "ν/(1−3ν) ≤ ν* and b are derived in this module (reconstructed). Example 1 at d = 32 has ν far "
                   "above "
                   "our ν*; the numeric check there tests the paper's claim that Example 1 is in scope, the exactly "
                   "orthogonal family is inside our Ass 1."),
    assumptions=(Assumption("Ass 1", "near-orthogonal tokens; ours: ν/(1−3ν) ≤ ν* (module docstring)"),
                 Assumption("Ass 2", "equal non-opt token scores"),
                 Assumption("Lemma 2 init", "max |a_it(W₀)| ≤ ε = 1/4 (B.L2)")),
    checks=(
        Check("derivation", "symbolic", "Gap increments, own/cross terms, s(1−s) endpoints, monotonicity of s_o",
              lambda ctx: derivation(), stochastic=False),
        Check("every-step", "numeric", "GD/NGD/Polyak, every step: no drop of s_opt while violated; min s_opt ≥ b",
              check_steps, stochastic=False),
        Check("probe", "probe", "Hypothesis over ν (both sides of ν*), Ass 2, init scale, algorithm and step size",
              check_probe),
    ),
    controls=(
        Control("Ass 1 broken (d = 8)", "every-step", "Example 1 at d = 8 (ν ≈ 1): cross-sample gradients lower "
                "violated samples' opt scores", lambda ctx: check_steps(ctx, "d8")),
        Control("init condition dropped", "every-step", "init 40× Lemma 2's scale with the floor still computed from "
                "ε = 1/4", lambda ctx: check_steps(ctx, "init40")),
        Control("probe: floor 1/T", "probe", "the floor without the e^{2ε} factor (s_opt ≥ 1/T): random inits start "
                "below it", lambda ctx: check_probe(ctx, naive_floor=True)),
    ),
)
