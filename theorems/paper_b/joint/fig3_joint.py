r"""B.Fig3 — joint training on DM: GD, NGD, PS and joint NGD (Vasudeva, Deora, Thrampoulidis; Fig. 3, Sec. 5).

What the figure shows (source text): train loss, ``||W_t||`` and ``||u_t||``, the mean opt softmax score, and the
alignment of ``W_t`` and ``u_t`` with ``W_mm`` and ``u_mm``, for "standard GD, NGD updates in Eq. (10) (without
the additional factors in the step-size), PS updates, and joint NGD updates".  Claims: "all other algorithms
are faster than GD, with PS being the fastest"; "the train loss converges at a similar rate for NGD and
joint-NGD, while for the other metrics, NGD is slightly faster than joint-NGD".

The algorithms (ours where the source text is silent; :data:`UPDATES`, each run by ``setups.joint_run``):

    GD         theta <- theta - eta_GD grad L                                    (eta_GD = 1)
    NGD        (10) without the extra factors: W <- W - eta grad_W L/||grad_W L||, u <- u - eta grad_u L / L
    joint NGD  theta <- theta - eta grad L / ||grad L||   (one normalization over theta = (W, u))
    PS         theta <- theta - (L / ||grad L||^2) grad L   (L* = 0 under joint training; no cap: the source text
               names none for Fig. 3, and a cap turns PS into GD once L < 1/(cap ||grad L / L||^2))
    (10)       with our factors (B.T2), drawn for reference (not part of the source text's comparison)

with eta = 0.05 (B.T2's step), on DM draws conditioned as the shared set-up (``setups``: n = 3, T = 2,
d = 64, rho = 4, zero init), 12 draws at the quick budget (the shared 6 and 6 more), 16 / 24 beyond.

**PS is left uncapped on purpose, and that favours "PS fastest".**  An uncapped Polyak step with L* = 0 takes
steps of length L/||grad L||, which grow without bound as the loss falls (here log L reaches about -490 at t = 500
while NGD reaches about -130): it is the most favourable reading of PS for that claim.  With any cap PS becomes GD
once the cap binds (the control shows it), and "PS fastest" then fails.  So the "PS fastest" check is a statement
about the uncapped step only; the source text names no cap for Fig. 3 (it does for Fig. 2).

Checks.  (1) "all beat GD": for NGD, joint NGD and PS, the paired difference (per draw) of log L and of
log(1 - <Wbar, Wbar_mm>) against GD at the last step; pass if every interval is below 0, fail if one lies
above 0.  (2) "PS fastest": PS's log L at the last step against each of the others, same rule.
The other metrics' ordering (the "slightly faster" remark) is reported, not decided.

Free choices (``Claim.free_choices``, decided over their ranges by ``verify sensitivity``): PS's cap (none, ours, or
Fig. 2's range 1e2-1e6), the step eta of NGD and joint NGD and the horizon (``setups.joint_choices``).

Controls (mutants of the mathematics): NGD with its u-step's 1/L factor dropped (alpha = 0: the u-step becomes a
GD step of size eta = 0.05, the loss decays polynomially and does not beat GD); PS with the square of the gradient
norm dropped, (L/||g||) g for (L/||g||^2) g (a slip in the step's formula).
"""
from __future__ import annotations

import math

import numpy as np

from numerics.paper_b import algorithms as A
from numerics.stats import decide_upper, mean_interval
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.fixture import per_budget
from theorems.paper_b.joint.assumptions import condition1_assumptions
from theorems.paper_b.joint.setups import (EQ10, ETA, ETA_GD, MAIN_RUN, N_CTRL, JointRun, Update, at_choices, changed,
                                           dm_batch, eq10_update, joint_choices, joint_run)
from theorems.plots import new_figure

ID = "B.Fig3"

STATEMENT = (
    r"\text{DM, joint training: }L_t^{\mathrm{NGD}},\,L_t^{\mathrm{joint\,NGD}},\,L_t^{\mathrm{PS}}<L_t^{\mathrm{GD}},"
    r"\quad L_t^{\mathrm{PS}}=\min_{\mathrm{alg}}L_t^{\mathrm{alg}}\ \ (\text{PS uncapped, on purpose: the most "
    r"favourable reading; with a cap it is GD once the cap binds})"
)

#: PS's cap: none.  The source text names no cap for Fig. 3; uncapped is the most favourable reading of "PS fastest" (a
#: cap turns PS into GD once it binds): the check is a statement about the uncapped step only (module docstring)
PS_CAP = math.inf
#: the four algorithms of Fig. 3 as the source text names them (module docstring): GD at ETA_GD (the strongest GD
#: baseline), NGD = (10) without the extra factors (the source text's words), joint NGD = one normalization over (W, u)
#: (our reading), PS uncapped
UPDATES = {"GD": Update(repr(("gd", ETA_GD)), A.gd, (("eta", ETA_GD),)),
           "NGD": eq10_update(ETA, 0.0, 1.0, 0.0),
           "joint NGD": Update(repr(("ngd", ETA)), A.ngd, (("eta", ETA),)),
           "PS": Update(repr(("ps", PS_CAP)), A.polyak, (("eta_max", PS_CAP),))}
COLORS = {"GD": "tab:gray", "NGD": "tab:blue", "joint NGD": "tab:green", "PS": "tab:red", "(10)": "black"}  # plot only
#: DM draws at the quick / standard / full budget (the shared set-up's first draws, then more): paired differences
#: of per-draw metrics need more draws than the shared 6 to place their sign at the quick tier
DRAWS = (12, 16, 24)
#: "faster" is the sign of a paired difference: an interval below 0 decides it, whatever its width
MAX_WIDTH = math.inf
#: the compared metrics of "all beat GD": (record, transform)
BEAT_GD_METRICS = {"log L": ("log_loss", None), "log(1 − ⟨W̄, W̄_mm⟩)": ("one_minus_corr", np.log)}
#: the first control's NGD: (10) without the extra factors AND without the u-step's 1/L (alpha = 0)
NGD_WITHOUT_1_OVER_L = eq10_update(ETA, 0.0, 0.0, 0.0)
#: the second control's PS: the figure's (uncapped) Polyak step with the square of the gradient norm dropped, L/||g||
#: for L/||g||^2 (a slip in the step's formula)
PS_UNSQUARED = Update(repr(("ps unsquared", PS_CAP)), A.polyak_unsquared, (("eta_max", PS_CAP),))


#: the figure's draws: the main batch's first draws, then more (DRAWS of them)
FIG3_BATCH = dm_batch.bind(B=per_budget(*DRAWS))


def fig3_run(update: Update):
    """``update`` on FIG3_BATCH for the control horizon (the figure's common horizon)."""
    return joint_run.bind(batch=FIG3_BATCH, update=update, n_steps=N_CTRL)


#: the runs of the four algorithms, and of the controls' NGD and PS
RUNS = {name: fig3_run(u) for name, u in UPDATES.items()}
NGD_WITHOUT_1_OVER_L_RUN = fig3_run(NGD_WITHOUT_1_OVER_L)
PS_UNSQUARED_RUN = fig3_run(PS_UNSQUARED)


#: PS's cap as the free choice names it (a level: "none" is uncapped, PS_CAP)
CAP_LEVELS = {"none": PS_CAP, "1e2": 1e2, "1e4": 1e4, "1e6": 1e6}


def runs_at(eta: float = ETA, horizon: float = 1.0, cap: str = "none") -> dict:
    """The four runs at other values of the free choices: the step of NGD and joint NGD (``eta``; GD keeps its own),
    the common horizon (``horizon`` times the budget's) and PS's cap (``cap``, a level of CAP_LEVELS)."""
    out = {}
    for name, run in RUNS.items():
        run = at_choices(run, eta=eta if name in ("NGD", "joint NGD") else ETA, horizon=horizon)
        if name == "PS" and CAP_LEVELS[cap] != PS_CAP:
            run = run.bind(update=changed(run.params["update"], eta_max=CAP_LEVELS[cap]))
        out[name.lower().replace(" ", "_")] = run       # the checks' parameter: gd, ngd, joint_ngd, ps
    return out


def _choice_sets(key: str) -> dict:
    """Free choice ``key`` ("eta", "horizon", "cap") on both checks' runs."""
    return {"all-beat-gd": lambda v: runs_at(**{key: v}), "ps-fastest": lambda v: runs_at(**{key: v})}


def constants(run: JointRun) -> dict:
    s = run.batch.setup
    return {"n": s.n, "T": s.T, "d": s.d, "rho": s.opt_ratio, "sigma": "1/sqrt(d)", "draws": s.B,
            "conditioned on Lemma 9's event": s.nu_max is not None, "init": "W_0 = 0, u_0 = 0",
            "eta (NGD, joint NGD, (10))": ETA, "eta_GD": ETA_GD, "PS cap": "none (uncapped on purpose: favours PS)",
            "steps": run.n_steps,
            "(10) factors (a, alpha, b)": list(EQ10), "loss": "exp"}


def final(traj, key: str, transform=None) -> np.ndarray:
    v = traj[key][-1].numpy()
    return v if transform is None else transform(v)


def below(ev: Evidence, name: str, a: np.ndarray, b: np.ndarray, digits: int) -> str:
    """Decide mean(a - b) < 0 from the paired differences (per draw); returns the summary line."""
    m, lo, hi = mean_interval(a - b, ev.z)
    d = decide_upper(lo, hi, 0.0, max_width=MAX_WIDTH)
    line = f"{name}: {m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}] [{d.status}]"
    ev.decide(f"{name} at the last step", d, value=m, line=line)
    return line


def figure(trajs: dict, main, N: int):
    """The six panels: medians over the draws of each algorithm's run, and (10)'s main run up to ``N`` (dashed)."""
    keep = main.steps.numpy() <= N
    fig, _ = new_figure()
    fig.clear()
    fig.set_size_inches(9.5, 5.6)
    axes = fig.subplots(2, 3).ravel()
    panels = [("log L", lambda tr: tr["log_loss"].numpy(), "linear"),
              ("||W_t||", lambda tr: tr["W_norm"].numpy(), "log"),
              ("||u_t||", lambda tr: tr["u_norm"].numpy(), "log"),
              ("mean log(1 − s_opt)", lambda tr: tr["log_one_minus_s_opt"].numpy().mean(-1), "linear"),
              ("1 − ⟨W̄_t, W̄_mm⟩", lambda tr: tr["one_minus_corr"].numpy(), "log"),
              ("1 − ⟨ū_t, ū_mm⟩", lambda tr: 1 - tr["u_corr_mm"].numpy(), "log")]
    series = dict(trajs) | {"(10)": main}
    for i, (ax, (title, get, yscale)) in enumerate(zip(axes, panels)):
        for name, tr in series.items():
            t = tr.steps.numpy()
            v = get(tr)
            if name == "(10)":
                t, v = t[keep], v[keep]
            ax.plot(t[2:], np.median(v[2:], axis=1), color=COLORS[name], label=name,
                    ls="--" if name == "(10)" else "-")
        ax.set_xscale("log")
        ax.set_yscale(yscale)
        ax.set_title(title, fontsize=8)
        if i >= 3:
            ax.set_xlabel("step t", fontsize=8)
    axes[0].legend(fontsize=7)
    return fig


def check_beat_gd(ctx: Context, gd: JointRun, ngd: JointRun, joint_ngd: JointRun, ps: JointRun,
                  main: JointRun) -> Outcome:
    """NGD, joint NGD and PS below GD in log L and in log(1 − corr(W)) at the last step (``ngd``: a control passes
    another algorithm's run in NGD's place; ``main``: (10)'s run, drawn for reference)."""
    runs = {"GD": gd, "NGD": ngd, "joint NGD": joint_ngd, "PS": ps}
    trajs = {name: r.traj for name, r in runs.items()}
    others = ["NGD", "joint NGD", "PS"]
    ev = Evidence(ctx, decisions=len(others) * len(BEAT_GD_METRICS))
    loss_lines = []
    for alg in others:
        for mname, (key, tf) in BEAT_GD_METRICS.items():
            line = below(ev, f"{alg} − GD: {mname}", final(trajs[alg], key, tf), final(trajs["GD"], key, tf), 2)
            if key == "log_loss":
                loss_lines.append(line)
    if ev.plots:
        ev.figure("Fig. 3: joint training on DM", figure(trajs, main.traj, gd.n_steps),
                  "Medians over the DM draws. NGD = (10) without the extra factors; (10) dashed = with our factors "
                  "(B.T2), for reference only.")
    note = "" if ngd.update == UPDATES["NGD"] else f" (NGD replaced by {ngd.update.label})"
    return ev.outcome(headline="; ".join(loss_lines), summary_prefix=f"at t = {gd.n_steps}{note}: ",
                      constants=constants(gd))


def check_ps_fastest(ctx: Context, gd: JointRun, ngd: JointRun, joint_ngd: JointRun, ps: JointRun) -> Outcome:
    """PS below each of the others in log L at the last step (``ps``: a control passes the capped PS's run)."""
    trajs = {"GD": gd.traj, "NGD": ngd.traj, "joint NGD": joint_ngd.traj, "PS": ps.traj}
    ps_cap = ps.update["eta_max"]
    ev = Evidence(ctx, decisions=3)
    ps_loss = final(trajs["PS"], "log_loss")
    lines = [below(ev, f"PS − {alg}: log L", ps_loss, final(trajs[alg], "log_loss"), 1)
             for alg in ("GD", "NGD", "joint NGD")]
    # reported, not decided: the other metrics' order at the last step (medians)
    order = {}
    for key, lab in (("one_minus_corr", "1 − corr(W)"), ("u_corr_mm", "1 − corr(u)")):
        tf = (lambda v: 1 - v) if key == "u_corr_mm" else None
        vals = {a: float(np.median(final(tr, key, tf))) for a, tr in trajs.items()}
        order[lab] = sorted(vals, key=vals.get)
        ev.measure(f"order by {lab} at the last step (best first)", float("nan"), claimed=" < ".join(order[lab]))
    ev.say("other metrics, best first: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in order.items()))
    cap = "" if math.isinf(ps_cap) else f" (PS capped at {ps_cap:g})"
    return ev.outcome(headline="; ".join(lines), summary_prefix=f"log L at t = {gd.n_steps}{cap}: ",
                      constants=constants(gd) | {"PS cap": ps_cap}, order=order)


CLAIM = Claim(
    id=ID,
    title="Fig. 3: joint training on DM — normalized methods beat GD, PS fastest",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("The figure's numbers (n, T, d, steps, step sizes) are lost; ours are in the outcome's "
                   "details['constants'] and pre-registered. 'NGD' is (10) without the extra factors (as the source "
                   "text says), 'joint NGD' one normalization over (W, u) (our reading). PS is left UNCAPPED on "
                   "purpose (the source text names no cap for Fig. 3): that is the most favourable reading of 'PS "
                   "fastest', so that verdict holds for the uncapped step only; with a cap PS becomes GD once it "
                   "binds. Decided on the last step of the common horizon, paired over 12 DM draws at the quick "
                   "budget; the 'slightly faster' remarks are reported only."),
    findings=(
        "'PS fastest' is decided for the uncapped Polyak step only, chosen on purpose as the most favourable reading "
        "(the source text names no cap for Fig. 3): with a cap PS becomes GD once the cap binds and is no longer "
        "fastest at caps that bind early (the free choice 'PS cap' maps it over Fig. 2's range), so the verdict is "
        "conditional on running PS without a cap.",
    ),
    assumptions=condition1_assumptions(),
    checks=(
        Check("all-beat-gd", "numeric", "NGD, joint NGD, PS below GD in log L and in 1 − corr(W) (paired)",
              check_beat_gd, uses=dict(gd=RUNS["GD"], ngd=RUNS["NGD"], joint_ngd=RUNS["joint NGD"], ps=RUNS["PS"],
                                       main=MAIN_RUN)),
        Check("ps-fastest", "numeric", "PS has the lowest train loss (paired against each)", check_ps_fastest,
              uses=dict(gd=RUNS["GD"], ngd=RUNS["NGD"], joint_ngd=RUNS["joint NGD"], ps=RUNS["PS"])),
    ),
    controls=(
        Control("NGD without the u-step's 1/L", "all-beat-gd", "α = 0 in NGD's u-step: a GD step of size η in u, "
                "polynomial loss decay", {"ngd": NGD_WITHOUT_1_OVER_L_RUN}),
        Control("PS with ‖g‖ for ‖g‖²", "ps-fastest", "the Polyak step's square dropped, (L/‖∇L‖)·∇L (a slip in the "
                "step's formula): must not be fastest", {"ps": PS_UNSQUARED_RUN}),
    ),
    free_choices=(
        FreeChoice("PS cap", "none", "the source text names no cap for Fig. 3 while Fig. 2's experiments cap PS: "
                   "uncapped (ours) or Fig. 2's range 1e2-1e6", _choice_sets("cap"), levels=tuple(CAP_LEVELS)),
        *(f for f in joint_choices(sets=_choice_sets) if f.name != "DM dimension d"),
    ),
)
