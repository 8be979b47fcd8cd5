r"""B.L12 — the opt tokens, and the attention-weighted tokens, are separable by u_mm (Vasudeva, Deora,
Thrampoulidis; Lemma 12, Sec. 4.3).

Statement (our reconstruction: exact in shape).  (u-SVM) ``u_mm = argmin ||u|| s.t. y_i u^T x_{i,opt} >= 1`` is
feasible, and along the joint training the samples ``(X_i^T s_i(W_t), y_i)`` — the tokens as the attention mixes them —
are separated by ``u_mm``:

    y_i u_mm^T X_i^T s_i(W_t) >= s_{i,opt}(W_t) - (1 - s_{i,opt}(W_t)) max_{tau != opt} |u_mm^T x_{i,tau}| > 0.

The source text's proof: Lemma 9 bounds ``|u_mm^T x_{i,tau}|`` for the non-opt tokens (nearly orthogonal to the opt
tokens u_mm is built from), and eq. (11) bounds ``s_{i,opt}`` below; this is what makes the PL-like
inequality of Lemma 13 hold (choose ``v = ubar_mm`` in ``||grad_u L|| >= <-grad_u L, v>``).

Evidence.  (1) u-SVM on every DM draw of the shared set-up (``setups``): a KKT certificate against the
*full* constraint set (primal and dual feasibility, stationarity, complementarity, duality gap, all <= 1e-8).
(2) Along the updates (10): ``min_{i,t} y_i ubar_mm^T X_i^T s_i(W_t) > 0`` in every run, and the bound itself > 0
at every record (the statement's last inequality; it holds by the dynamics, eq. (11)'s s_opt).  That the margin is at
or above the bound at every record holds by algebra once the code is right (the u-SVM's constraints and
sum_tau s_tau = 1): a check of its own, ``above-lemma-12-bound``, labelled an implementation check (not evidence).
All are deterministic (no statistical decision).  (3) The derivation (sympy, three tokens): the margin minus the
bound is a sum of nonnegative terms (the u-SVM's constraint, Sum_tau s_tau = 1), the bound is positive exactly for
s_opt above ``M/(1/||u_mm|| + M)``, and at uniform attention (W = 0, s_opt = 1/T, which B.L11 (iii) keeps from
falling) positive iff ``||u_mm|| M < 1/(T - 1)``, M = max |ubar_mm^T x_tau|.  (4) A probe (the family's engine,
``probing``) over n, T, d, rho, eta R^2 and the init on both sides of Condition 1: each instance's u-SVM certified
and (2) at every record of its run into its phase (a statement for every t: a run that never reached its phase is
decided where it fails).  Free choices: the step eta, the DM dimension d and the horizon (``setups.joint_choices``),
on the runs along (10) and (d) on the draws the u-SVM is certified on; the probe draws its own.

Controls (mutants of the mathematics): the u-SVM with its most loaded constraint dropped (the certificate against
the full set must fail); the W-step of (10) with the wrong sign (ascent in W: attention moves to the non-opt tokens,
which u_mm does not separate, and Lemma 12's bound, which needs s_opt bounded below by eq. (11), turns negative);
Lemma 12's bound with the opt term's weight s_opt dropped (at a support vector, where ``y_i ubar_mm^T x_opt =
1/||u_mm||``, the margin is below it while s_opt < 1, given a non-opt token with a negative projection or near
orthogonality (Lemma 9) down to ``max |ubar_mm^T x_tau| < 1/(2||u_mm||)``), also in the derivation, which sympy must
refuse; the probe's instances run with the W-step's wrong sign (it must find one inside Condition 1 where the mixed
tokens are not separated).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import sympy as sp
import torch

from numerics.paper_b import svm
from numerics.paper_b.model import Dataset
from numerics.paper_b.records import opt_mask, unit_rows
from theorems.claim import Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.paper_b.joint import probing
from theorems.paper_b.joint.assumptions import condition1_assumptions
from theorems.paper_b.joint.setups import (ASCENT_RUN, ASCENT_W, EQ10_UPDATE, MAIN_RUN, DMBatch, JointRun, Update,
                                           at_choices, batch_at, dm_batch, joint_choices)
from theorems.plots import new_figure
from theorems.symbolic import Derivation

ID = "B.L12"

STATEMENT = (
    r"u_{mm}=\arg\min\|u\|\ \text{s.t.}\ y_iu^\top x_{i,\mathrm{opt}}\ge1\ \text{exists, and}\ "
    r"y_i\,u_{mm}^\top X_i^\top\varphi(X_iW_tx_{i1})\ge s_{i,\mathrm{opt}}-(1-s_{i,\mathrm{opt}})"
    r"\max_{\tau\ne\mathrm{opt}}|u_{mm}^\top x_{i\tau}|>0\ \ \forall i,t"
)

#: KKT residuals of a certified solution (the solver polishes to ~1e-15; 1e-8 leaves room for conditioning)
TOL = 1e-8
#: rounding allowance of the comparison with Lemma 12's bound
BOUND_TOL = 1e-12


def certificate_full(X_opt: np.ndarray, y: np.ndarray, u: np.ndarray, alpha: np.ndarray) -> dict[str, float]:
    """KKT residuals of (u, alpha) for min ||u||^2/2 s.t. y_i u^T x_{i,opt} >= 1, over ALL n constraints."""
    A = y[:, None] * X_opt
    slack = A @ u - 1
    Atw = A.T @ alpha
    P, D = 0.5 * u @ u, alpha.sum() - 0.5 * Atw @ Atw
    return {"violation": float(np.clip(-slack, 0, None).max()),
            "dual_infeasibility": float(np.clip(-alpha, 0, None).max()),
            "stationarity": float(np.linalg.norm(u - Atw) / np.linalg.norm(u)),
            "complementarity": float(np.abs(alpha * slack).max()),
            "duality_gap": float(abs(P - D) / P)}


def u_svm_without_most_loaded(batch: DMBatch) -> tuple[str, list]:
    """The wrong u-SVM (control): per draw of the certificate's own batch (at whatever d a setting of the map gives
    it), the u-SVM with its most loaded constraint (largest dual weight) dropped, with the words the record uses."""
    solved = []
    for b in range(batch.setup.B):
        one = Dataset(batch.ds.X[b], batch.ds.y[b], opt=batch.ds.opt_index[b])
        solved.append(svm.u_svm(one, drop=int(batch.u_svm[b].alpha.argmax())))
    return "u-SVM with its most loaded constraint dropped", solved


def check_u_svm(ctx: Context, batch: DMBatch, u_svm: Callable[[DMBatch], tuple[str, list]] | None = None) -> Outcome:
    """The u-SVM of every draw, certified against all its constraints (``u_svm``: a function of the batch giving
    (what, per-draw results) to certify in place of the batch's own, the control's wrong SVM)."""
    setup, ds = batch.setup, batch.ds
    what, solved = ("u-SVM", batch.u_svm) if u_svm is None else u_svm(batch)
    rows, norms = [], []
    for b in range(setup.B):
        one = Dataset(ds.X[b], ds.y[b], opt=ds.opt_index[b])
        res = solved[b]
        X_opt = torch.take_along_dim(one.X, one.opt_index[:, None, None], dim=1).squeeze(1).numpy()
        rows.append(certificate_full(X_opt, one.y.numpy(), res.solution.numpy(), res.alpha.numpy()))
        norms.append(res.norm)
    worst = float(max(max(r.values()) for r in rows))
    ev = Evidence(ctx)
    ev.exact("KKT certificate", worst <= TOL,
             f"{what}: worst KKT residual against all {setup.n} opt-token constraints {worst:.2e} "
             f"(≤ {TOL:g} required) on {setup.B} DM draws; ||u_mm|| = {np.mean(norms):.3f} on average")
    for k in rows[0]:
        ev.measure(f"max {k} over draws", float(max(r[k] for r in rows)), claimed=f"≤ {TOL:g}")
    ev.measure("||u_mm|| (mean over draws)", float(np.mean(norms)))
    ev.measure("max margin 1/||u_mm|| (min over draws)", float(1 / np.max(norms)))
    return ev.outcome(headline=f"u-SVM feasible with KKT certificate {worst:.1e} on {setup.B} draws",
                      certificates=rows)


def lemma12_form(s_opt, unit, other_max):
    """Lemma 12's lower bound on y_i ubar_mm^T X_i^T s_i, ``s_opt / ||u_mm|| - (1 - s_opt) max_{tau != opt}
    |ubar_mm^T x_{i,tau}|`` (``unit`` = 1/||u_mm||): numbers, broadcasting tensors or sympy expressions."""
    return s_opt * unit - (1 - s_opt) * other_max


def lemma12_form_without_s_opt(s_opt, unit, other_max):
    """A mutant of :func:`lemma12_form` (the controls of ``above-lemma-12-bound`` and of the derivation): the opt
    term without its weight s_opt, ``1/||u_mm|| - (1 - s_opt) max|...|``.  At a support vector (``y_i ubar_mm^T x_opt
    = 1/||u_mm||``) the margin is below it while s_opt < 1 unless the non-opt tokens' ``y_i ubar_mm^T x_tau +
    max|...|`` reach 1/||u_mm||: a non-opt token with a negative projection, or near orthogonality (Lemma 9) down to
    max|...| < 1/(2||u_mm||), rules that out."""
    return unit - (1 - s_opt) * other_max


def lemma12_bound(s_opt: torch.Tensor, unit: torch.Tensor, other_max: torch.Tensor) -> torch.Tensor:
    """:func:`lemma12_form` on a run's records (``unit`` = 1/||u_mm|| (B,), ``s_opt`` (K, B, n), ``other_max`` (B, n))."""
    return lemma12_form(s_opt, unit[:, None], other_max)


def lemma12_bound_without_s_opt(s_opt: torch.Tensor, unit: torch.Tensor, other_max: torch.Tensor) -> torch.Tensor:
    """:func:`lemma12_form_without_s_opt` on a run's records (the control of ``above-lemma-12-bound``)."""
    return lemma12_form_without_s_opt(s_opt, unit[:, None], other_max).expand_as(s_opt)


# ---------------------------------------------------------------------------
# Symbolic: Lemma 12's bound from the u-SVM's constraints, and where it is positive
# ---------------------------------------------------------------------------


def derivation(form=lemma12_form) -> Outcome:
    """``form(s_opt, 1/||u_mm||, max|ubar_mm^T x_tau|)`` against the margin of the attention-mixed tokens (module
    docstring): the margin minus the bound is a sum of nonnegative terms, the bound is positive above a threshold of
    s_opt, and at s_opt = 1/T (W = 0) that threshold is a condition on ``||u_mm|| max|ubar_mm^T x_tau|``."""
    D = Derivation()
    s1, s2, s3 = sp.symbols("s_1 s_2 s_3", positive=True)
    g1, g2, g3 = sp.symbols("g_1 g_2 g_3", real=True)
    unit, M, U, T = sp.symbols("mu M U T", positive=True)
    D.say("Three tokens (opt = 1; T = 2 is s₃ = 0), attention s₁ + s₂ + s₃ = 1, projections g_τ = y ū_mm^T x_τ. "
          "The u-SVM's constraint gives g₁ ≥ μ = 1/||u_mm||; M = max_{τ≠1} |g_τ| bounds g₂, g₃ from below by −M.")
    margin = s1 * g1 + s2 * g2 + s3 * g3
    bound = form(s1, unit, M)
    rest = s1 * (g1 - unit) + s2 * (g2 + M) + s3 * (g3 + M)
    D.prove_equal("margin − bound = s₁(g₁ − μ) + s₂(g₂ + M) + s₃(g₃ + M), each term ≥ 0: the margin y ū_mm^T X^T s "
                  "is at least the bound", (margin - bound).subs(s3, 1 - s1 - s2), rest.subs(s3, 1 - s1 - s2),
                  shown=sp.Eq(margin - bound, rest))
    threshold = M / (unit + M)
    D.prove_zero("the bound vanishes at s_opt = M/(μ + M) and grows with s_opt: it is positive exactly above that "
                 "threshold", sp.simplify(form(threshold, unit, M)),
                 shown=sp.Eq(form(sp.UnevaluatedExpr(threshold), unit, M), 0, evaluate=False))
    D.prove_equal("its slope in s_opt is μ + M > 0", sp.diff(form(s1, unit, M), s1), unit + M,
                  shown=sp.Eq(sp.Derivative(form(s1, unit, M), s1), unit + M, evaluate=False))
    at_start = sp.simplify(form(1 / T, unit, M) * T / unit)
    D.prove_equal("at W = 0 the attention is uniform (s_opt = 1/T) and B.L11 (iii) keeps it from falling: the bound "
                  "stays positive when 1 − (T − 1) U > 0, U = ||u_mm|| M (the number attention-separable reports as "
                  "max |ū_mm^T x_τ| ||u_mm||)", at_start.subs(M, U * unit), 1 - (T - 1) * U)
    return D.outcome("margin ≥ s_opt/||u_mm|| − (1 − s_opt) max|ū_mm^T x_τ| > 0 once s_opt ≥ 1/T and "
                     "||u_mm|| max|ū_mm^T x_τ| < 1/(T − 1)")


def separability(run: JointRun, bound=lemma12_bound):
    """(margins y_i ubar_mm^T X_i^T s_i(W_t) (K, B, n), Lemma 12's bound (K, B, n), s_opt (K, B, n), other_max (B, n),
    1/||u_mm|| (B,)) along ``run``; ``bound``: how the bound is computed (a control passes a mutant)."""
    ds, u_mm, traj = run.batch.ds, run.batch.u_mm, run.traj
    is_opt = opt_mask(ds)                                                                # (B, n, T)
    proj = ds.y[..., None] * (ds.X @ unit_rows(u_mm)[:, None, :, None]).squeeze(-1)    # y_i ubar^T x_it, (B, n, T)
    other_max = proj.abs().masked_fill(is_opt, 0).amax(-1)                               # (B, n)
    s_opt = traj["log_s_opt"].exp()                                                      # (K, B, n)
    unit = 1 / torch.linalg.vector_norm(u_mm, dim=-1)                                   # ubar^T x_opt y >= 1/||u_mm||
    return traj["r_margin"].numpy(), bound(s_opt, unit, other_max).numpy(), s_opt, other_max, unit


def check_attention_separable(ctx: Context, run: JointRun) -> Outcome:
    """min over runs, samples, recorded steps of y_i ubar_mm^T X_i^T s_i(W_t) along ``run`` (the main run of (10); a
    control passes a mutant's) > 0, and Lemma 12's lower bound > 0."""
    values, bound, s_opt, other_max, unit = separability(run)
    traj = run.traj
    per_run = values.min((0, 2))
    what = "attention-weighted tokens" + ("" if run.update == EQ10_UPDATE else f", {run.update.label}")
    ev = Evidence(ctx)
    ev.exact("separable", bool((per_run > 0).all()),
             f"{what}: min_i,t y_i ūmm^T r_i = {per_run.min():.4f} (worst of {len(per_run)} runs; must be > 0)")
    positive = bool((bound.min((0, 2)) > 0).all())
    ev.exact("Lemma 12's bound > 0", positive, f"Lemma 12's bound > 0 at every record of every run: {positive} (min "
             f"{bound.min():.4f})")
    ev.measure("min over i, t of y_i ūmm^T X_i^T s_i(W_t) (worst run)", float(per_run.min()), claimed="> 0")
    ev.measure("min over i, t of Lemma 12's lower bound (worst run)", float(bound.min()))
    ev.measure("min s_{i,opt}(W_t) over i, t", float(s_opt.min()))
    ev.measure("max over i, τ≠opt of |ūmm^T x_iτ| · ||u_mm||", float((other_max * (1 / unit)[:, None]).max()))
    if ev.plots:
        fig, ax = new_figure()
        t = traj.steps.numpy()
        norm = (1 / unit).numpy()
        for b in range(values.shape[1]):
            ax.plot(t[1:], values[1:, b].min(-1) * norm[b], color="tab:blue", lw=1, alpha=0.6)
            ax.plot(t[1:], bound[1:, b].min(-1) * norm[b], color="tab:gray", lw=1, ls="--", alpha=0.6)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("step t")
        ax.set_ylabel("min_i y_i u_mm^T r_i(t)")
        ax.set_title("r_i = X_i^T s_i(W_t)")
        ev.figure("Margins of u_mm on the attention-weighted tokens", fig,
                  "Solid: min_i y_i u_mm^T X_i^T s_i(W_t) per run; dashed: Lemma 12's lower bound "
                  "s_opt − (1 − s_opt) max|u_mm^T x_other|; both must stay above 0.")
    return ev.outcome(per_run_min=per_run)


def check_above_bound(ctx: Context, run: JointRun, bound=lemma12_bound) -> Outcome:
    """The margin y_i ubar_mm^T X_i^T s_i(W_t) at or above Lemma 12's bound at every record of ``run`` (exact; true by
    algebra).  ``bound``: how the bound is computed (the control passes a mutant)."""
    values, b, *_ = separability(run, bound)
    above = not (values < b - BOUND_TOL).any()
    ev = Evidence(ctx)
    ev.exact("Lemma 12's bound", above, f"the actual margin ≥ Lemma 12's bound at every record: {above} (min of margin "
             f"− bound {(values - b).min():.3g})")
    ev.measure("min over i, t, runs of margin − Lemma 12's bound", float((values - b).min()), claimed="≥ 0")
    return ev.outcome(headline=f"margin ≥ Lemma 12's bound at every record (min excess {(values - b).min():.3g})")


# ---------------------------------------------------------------------------
# Probe: separability along (10) over the data model's and the training's parameters
# ---------------------------------------------------------------------------


def probe_conclusion(inst, alpha_each, update: Update = EQ10_UPDATE):
    """The u-SVM certified (KKT residuals <= TOL) and, at every record of ``update``'s run on the instance (into its
    phase, ``probing.phase_run``), the margin y_i ubar_mm^T X_i^T s_i(W_t) at or above Lemma 12's bound and the bound
    positive (exact, up to BOUND_TOL); ``update``: (10), or the control's mutant.  A statement for every t: a run
    that did not reach its phase (or left it) is decided where it fails and not decided where it holds (its horizon
    was not reached); a diverged one is not decided."""
    pr = probing.phase_run(inst, update, solve=("u",))
    run = pr.run
    if run is None or pr.status == "diverged":
        return None, pr.status, pr.why, pr.facts
    one = run.batch.ds
    X_opt = torch.take_along_dim(one.X[0], one.opt_index[0][:, None, None], dim=1).squeeze(1).numpy()
    res = run.batch.u_svm[0]
    cert = max(certificate_full(X_opt, one.y[0].numpy(), res.solution.numpy(), res.alpha.numpy()).values())
    values, bound, *_ = separability(run)
    ok = {"u-SVM certified": cert <= TOL, "margin > 0": bool(values.min() > 0), "bound > 0": bool(bound.min() > 0),
          "margin ≥ bound": not bool((values < bound - BOUND_TOL).any())}
    holds = all(ok.values())
    broken = ", ".join(k for k, v in ok.items() if not v)
    detail = (f"min margin {values.min():.4g}, min bound {bound.min():.4g}, KKT {cert:.1e} over [0, {run.n_steps}]"
              + (f": {broken} fails" if broken else ""))
    if holds and pr.status != "phase":
        return None, pr.status, f"{pr.why}; {detail} so far", pr.facts
    return holds, "in phase" if pr.status == "phase" else pr.status, detail, pr.facts


def _choice_sets(key: str) -> dict:
    """The joint-training free choice ``key`` (``setups.at_choices``' name) on the checks along the main run, and
    the DM dimension also on the u-SVM certificate (its draws; the step and the horizon do not enter it)."""
    out = {c: (lambda v: {"run": at_choices(MAIN_RUN, **{key: v})})
           for c in ("attention-separable", "above-lemma-12-bound")}
    if key == "d":
        out["u-svm-certificate"] = lambda v: {"batch": batch_at(dm_batch, d=v)}
    return out


CLAIM = Claim(
    id=ID,
    title="Opt tokens, and the attention-mixed tokens along training, are separable by u_mm",
    statement=STATEMENT,
    fidelity="exact",
    fidelity_note=("The source text states Lemma 12 in words (the samples (X_i^T s_i, y_i) are separable using u_mm); "
                   "the explicit lower bound s_opt − (1 − s_opt) max|u_mm^T x_other| is our reconstruction of its "
                   "two-line proof. Checked on the DM draws and updates (10) shared with B.T2 (Condition 1 as there)."),
    assumptions=condition1_assumptions(),
    checks=(
        Check("u-svm-certificate", "numeric", "u-SVM feasible: KKT certificate on every DM draw", check_u_svm,
              stochastic=False, uses={"batch": dm_batch}),
        Check("attention-separable", "numeric", "y_i u_mm^T X_i^T s_i(W_t) > 0 along (10), and Lemma 12's bound > 0",
              check_attention_separable, stochastic=False, uses={"run": MAIN_RUN}),
        Check("above-lemma-12-bound", "numeric", "y_i u_mm^T X_i^T s_i(W_t) ≥ Lemma 12's bound at every record along "
              "(10)", check_above_bound, stochastic=False, uses={"run": MAIN_RUN}, evidence="implementation",
              by_algebra="y_i ū_mm^T X_i^T s_i = s_opt y_i ū_mm^T x_opt + Σ_τ≠opt s_τ y_i ū_mm^T x_τ with "
                         "y_i ū_mm^T x_opt ≥ 1/||u_mm|| (u-SVM) and Σ_τ≠opt s_τ = 1 − s_opt"),
        Check("derivation", "symbolic", "Lemma 12's bound from the u-SVM's constraints (margin − bound a sum of "
              "nonnegative terms), its threshold in s_opt and the condition at uniform attention", derivation),
        probing.joint_probe("u-SVM certified, margin ≥ Lemma 12's bound > 0 at every record", probe_conclusion),
    ),
    controls=(
        Control("dropped constraint", "u-svm-certificate", "u-SVM without its most loaded constraint, certified "
                "against all constraints", {"u_svm": u_svm_without_most_loaded}),
        Control("W-step with the wrong sign", "attention-separable", "W+ = W + η(t+1)^{-a} ∇_W L/||∇_W L|| (ascent in "
                "W): attention moves to the non-opt tokens", {"run": ASCENT_RUN}),
        Control("symbolic: opt term without s_opt", "derivation", "1/||u_mm|| − (1 − s_opt) max|ū_mm^T x_other| "
                "in place of Lemma 12's bound", {"form": lemma12_form_without_s_opt}),
        Control("probe: W-step with the wrong sign", "probe", "each instance run with W+ = W + η(t+1)^{-a} ∇_W L/"
                "||∇_W L|| (ascent in W): the probe must find one inside Condition 1 where the mixed tokens are not "
                "separated", {"mutant": {"update": ASCENT_W}}),
        Control("opt term without s_opt", "above-lemma-12-bound", "1/||u_mm|| − (1 − s_opt) max|ū_mm^T x_other| (the "
                "opt term's weight s_opt dropped): above a support vector's margin while s_opt < 1",
                {"bound": lemma12_bound_without_s_opt}),
    ),
    free_choices=joint_choices(sets=_choice_sets),
)
