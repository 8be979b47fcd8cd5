r"""B.T3 — W converges in direction to W_mm under joint training, slower than with a fixed head
(Vasudeva, Deora, Thrampoulidis; Theorem 3 / Thm. 9).

Statement (our reconstruction: qualitative).  Under Condition 1, along the updates (10), ``Wbar_t -> Wbar_mm`` (the
W-SVM with the designated opt tokens of DM), at a rate slower than Theorem 1's: the source text explains that W's extra
step factor slows the growth of ``||W_t||`` and "consequently, the convergence to implicit bias is slower".

Structure (as in Theorem 1: the eps_t-argument of Lemma 7 / eq. (56)-(58) bounds the misalignment by the norm):

    1 - <Wbar_t, Wbar_mm> <= C polylog(t) / ||W_t||                                   (A: alignment per unit norm)

and with B.L10's ``||W_t|| = Theta(t^{1-a})``:  ``1 - <Wbar_t, Wbar_mm> <= C polylog(t) t^{-(1-a)}``   (B: the rate in t).

**What the schedule implies and what it does not.**  The exponent ``-(1 - a) = -2/3`` of (B), and "slower than
with a fixed head" (where ``||W_t|| ~ t``), come from the W factor we chose (``setups.EQ10``, a = 1/3, set
together with the b = 2/3 that was put in to match a summary's 1/3): they are not measurements of the paper's
rate.  (A) does not involve the schedule at all: how well W's direction has aligned for a given norm is a property of
the loss landscape and of the direction of the steps.  So (A) is the claim's evidence; (B) is decided as its
consequence together with B.L10's lower bound, with its exponent labelled as the schedule's.

Evidence.  On the shared DM runs (``setups``), over the window ``[N/5, N]``, per run, with ``rates``'
interval (across-run error + the drift between window halves):
(A) the log-log slope in t of ``Q_t = ||W_t|| (1 - corr_t) / log^k t`` (k = 2, the polylog degree B.T1 allows; the
    log factor is divided out exactly, no window-averaged allowance) must be <= 0: Q non-increasing, i.e. (A) holds
    with C = Q at the window's start;
(B) the log-log slope of ``1 - corr = ||Wbar_t - Wbar_mm||^2/2`` must be <= ``-(1 - a) + s_k`` with ``s_k`` the
    window-averaged slope of ``log^k t`` (the effective bound is printed: -0.358 at quick, -0.412 at standard).
The exponent of ``1 - corr`` against ``||W_t||`` is reported: it is close to -2 (as B.T1's t^{-2} for NGD with
``||W_t|| ~ t``), not -1.  The derivation (sympy): ``1 - corr = ||Wbar - Wbar_mm||^2/2``; the local exponent of
``1 - corr`` is Q's plus ``k/log t`` minus ``||W_t||``'s, so (A) and B.L10 give the envelope's ``-(1 - a)``; the
window's mean of ``k/log t`` is ``polylog_allowance``.  A probe (the family's engine, ``probing``) over n, T, d,
rho, eta R^2 and the init on both sides of Condition 1 decides (A) and (B) by the same rules on each instance's
window in its phase.

Free choices: the polylog degree k (1-3), the step eta, the DM dimension d and the horizon
(``setups.joint_choices``), on the main runs; the probe draws its own (k at its value).

Controls (mutants of the mathematics): a wrong W_mm (the W-SVM with its most loaded constraint dropped: the
direction aligns with something else, Q grows like ||W_t||), also in the probe; the W-step with the wrong sign
(gradient ascent in W: the direction leaves W_mm, 1 - corr does not decay); the derivation with Theorem 1's
envelope ``t^{-1}`` (a fixed head's ``||W_t|| ~ t``), which sympy must refuse.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import sympy as sp
import torch

from numerics.paper_b import svm
from numerics.paper_b.model import Dataset
from numerics.stats import decide_upper
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.fixture import per_budget
from theorems.paper_b.joint import probing
from theorems.paper_b.joint.assumptions import condition1_assumptions
from theorems.paper_b.joint.rates import WINDOW, tail_exponent
from theorems.paper_b.joint.setups import ASCENT_W, N_CTRL, DMBatch, JointRun, dm_batch, joint_choices, joint_run
from theorems.plots import new_figure
from theorems.symbolic import Derivation

ID = "B.T3"

STATEMENT = (
    r"1-\langle\bar W_t,\bar W_{mm}\rangle\le C\,\frac{\log^2 t}{\|W_t\|}\ \ \text{(decided: alignment per unit norm)},"
    r"\quad\text{hence with }\|W_t\|=\Theta(t^{1-a}):\ \le C\,\mathrm{polylog}(t)\,t^{-(1-a)}"
    r"\ \ (a=\tfrac13:\ t^{-2/3},\text{ the schedule's})"
)

#: the polylog degree k of the envelope (the log^k t factor): B.T1 allows the same for NGD with a fixed head
POLYLOG_K = 2
#: (A): Q_t = ||W_t|| (1 - corr_t) / log^k t must not grow: its log-log slope in t is decided <= this bound
Q_SLOPE_MAX = 0.0
#: (A): an interval below 0 at most 0.6 wide excludes a flat Q by its whole width; wider intervals come from runs whose
#: Q has not settled (a non-converging direction has slope ~ +(1 - a) - k/log t ~ +0.35 here)
Q_MAX_WIDTH = 0.6
#: (B): an exponent interval wider than 0.5 could hold both the -2/3 envelope and a logarithmic rate (exponent ~ 0)
MAX_WIDTH = 0.5
#: DM draws at the quick / standard / full budget (the shared set-up's first draws, then more): at the quick horizon
#: a draw whose attention saturates late still has a slower local exponent in the window, and with 6 draws one such
#: draw widens the across-run interval past the widths above; the longer horizons are not immune (standard seed 723)
DRAWS = (48, 48, 48)


#: the claim's draws: the main batch's first draws, then more (DRAWS of them)
T3_BATCH = dm_batch.bind(B=per_budget(*DRAWS))
#: (10) on T3_BATCH for the main horizon; W kept at the records (the wrong-W_mm control measures against them)
T3_RUN = joint_run.bind(batch=T3_BATCH, keep_params=True)
#: the W-step with the wrong sign on T3_BATCH for the control horizon (control)
T3_ASCENT_RUN = joint_run.bind(batch=T3_BATCH, update=ASCENT_W, n_steps=N_CTRL)


def polylog_allowance(t1: float, t2: float, k: float = POLYLOG_K, log=math.log) -> float:
    """Window-averaged log-log slope of log^k t over [t1, t2] (``log``: ``sympy.log`` for the derivation)."""
    return k * (log(log(t2)) - log(log(t1))) / (log(t2) - log(t1))


def envelope_exponent(a):
    """The envelope's exponent in t, (A) with B.L10's ``||W_t|| = Theta(t^{1-a})``: ``-(1 - a)``."""
    return -(1 - a)


def envelope_fixed_head(a):
    """A wrong envelope (the derivation's control): Theorem 1's ``t^{-1}`` for NGD with a fixed head (``||W_t|| ~ t``),
    in place of joint training's slower norm."""
    return -1


def misalignment(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """``1 - <Wbar_t, Mbar> = ||Wbar_t - Mbar||^2 / 2`` per record and run: ``W`` (K, B, d^2), ``M`` (B, d^2)."""
    return 0.5 * (W / W.norm(dim=-1, keepdim=True) - M / M.norm(dim=-1, keepdim=True)).pow(2).sum(-1)


def dropped_w_mm(batch: DMBatch) -> torch.Tensor:
    """The wrong W_mm (controls): per draw, the W-SVM with its most loaded constraint (largest dual weight) dropped."""
    ds = batch.ds
    out = []
    for b, res in enumerate(batch.w_svm):
        i, t = divmod(int(res.alpha.flatten().argmax()), ds.T)
        out.append(svm.w_svm(Dataset(ds.X[b], ds.y[b], opt=ds.opt_index[b]), drop=(i, t)).solution)
    return torch.stack(out)


def own_w_mm(batch: DMBatch) -> torch.Tensor:
    """The batch's own W_mm (the probe's reference)."""
    return batch.W_mm


# ---------------------------------------------------------------------------
# Symbolic: the rate in t from (A) and B.L10, and the window's log allowance
# ---------------------------------------------------------------------------


def derivation(envelope=envelope_exponent) -> Outcome:
    """(A) with B.L10's norm growth gives the envelope ``envelope(a)`` (+ the window's polylog allowance, the number
    direction-rate adds to its bound); ``envelope``: the exponent claimed (the control passes Theorem 1's)."""
    D = Derivation()
    th, ph = sp.symbols("theta phi", real=True)
    x, y = sp.Matrix([sp.cos(th), sp.sin(th)]), sp.Matrix([sp.cos(ph), sp.sin(ph)])
    D.prove_equal("for unit vectors 1 − ⟨x̄, ȳ⟩ = ||x̄ − ȳ||²/2 (what the records' one_minus_corr computes)",
                  1 - (x.T * y)[0], ((x - y).T * (x - y))[0] / 2)
    t, k, c, a = sp.symbols("t k c a", positive=True)
    Q, Wn = sp.Function("Q")(t), sp.Function("N_W")(t)
    omc = Q * sp.log(t) ** k / Wn
    D.prove_zero("with Q_t = ||W_t||(1 − corr_t)/log^k t: the local exponent of 1 − corr is Q's, plus k/log t, minus "
                 "||W_t||'s (t d log(1 − corr)/dt)",
                 sp.expand(t * sp.diff(sp.log(omc), t) - (t * sp.diff(Q, t) / Q + k / sp.log(t) - t * sp.diff(Wn, t) / Wn)),
                 shown=sp.Eq(t * sp.Derivative(sp.log(omc), t),
                             t * sp.Derivative(Q, t) / Q + k / sp.log(t) - t * sp.Derivative(Wn, t) / Wn))
    W_exp = sp.limit(t * sp.diff(sp.log(c * t ** (1 - a)), t), t, sp.oo)
    D.prove_equal("(A) Q non-increasing (its exponent ≤ 0) and B.L10's ||W_t|| = Θ(t^{1−a}) (exponent 1 − a): the "
                  "exponent of 1 − corr is at most −(1 − a) + k/log t, the claimed envelope's exponent plus the log's",
                  envelope(a), -W_exp,
                  shown=sp.Eq(-sp.Limit(t * sp.Derivative(sp.log(c * t ** (1 - a)), t), t, sp.oo), envelope(a)))
    t1, t2, lam = sp.symbols("t_1 t_2 lambda", positive=True)
    L1, L2 = sp.log(t1), sp.log(t2)
    mean_slope = sp.integrate(k / lam, (lam, L1, L2)) / (L2 - L1)
    D.prove_equal("over a window [t₁, t₂] the log's exponent k/log t averages (in λ = log t) to polylog_allowance, "
                  "the number direction-rate adds to −(1 − a)", sp.expand_log(mean_slope, force=True),
                  sp.expand_log(polylog_allowance(t1, t2, k, log=sp.log), force=True),
                  shown=sp.Eq(sp.Integral(k / lam, (lam, L1, L2)) / (L2 - L1),
                              polylog_allowance(t1, t2, k, log=sp.log)))
    return D.outcome("1 − ⟨W̄_t, W̄_mm⟩ ≤ C log^k t · t^{−(1−a)} from (A) and ||W_t|| = Θ(t^{1−a}); the window's log "
                     "allowance is polylog_allowance")


def w_mm_without_most_loaded(batch: DMBatch) -> tuple[str, torch.Tensor]:
    """The wrong W_mm (control): :func:`dropped_w_mm` of the run's own draws (at whatever d a setting of the map gives
    them), with the words the record uses for it."""
    return "W_mm with a dropped constraint", dropped_w_mm(batch)


def check_direction(ctx: Context, run: JointRun, reference: Callable[[DMBatch], tuple[str, torch.Tensor]] | None = None,
                    polylog_k: float = POLYLOG_K) -> Outcome:
    """(A) Q_t = ||W_t|| (1 − corr_t) / log^k t non-increasing; (B) exponent of 1 − corr in t against the envelope.

    ``run``: T3_RUN, or a control's mutant run (the control horizon); ``reference``: a function of the run's batch
    giving (what, W_mm per draw) to measure the alignment against in place of the run's own W_mm (a control: the wrong
    W_mm); ``polylog_k``: the envelope's polylog degree k (a free choice)."""
    traj, N = run.traj, run.n_steps
    a = run.update["a"]
    if reference is not None:
        what, M = reference(run.batch)
        omc = misalignment(traj["W"].flatten(2), M.flatten(1)).numpy()
    else:
        omc = traj["one_minus_corr"].numpy()
    name = run.update.label + ("" if reference is None else f", {what}")
    ev = Evidence(ctx, decisions=2)
    steps = traj.steps.numpy()
    Wn = traj["W_norm"].numpy()
    t = steps[1:].astype(float)
    Q = Wn[1:] * omc[1:] / np.log(np.maximum(t, 2.0))[:, None] ** polylog_k
    eQ = tail_exponent(t, Q, N, ev.z, increments=False)
    dQ = decide_upper(eQ.lo, eQ.hi, Q_SLOPE_MAX, max_width=Q_MAX_WIDTH)
    ev.decide("(A) log-log slope of ||W_t||(1 − corr)/log^k t in t (alignment per unit norm)", dQ, value=eQ.est,
              line=f"{name}: (A) Q_t = ||W_t||(1 − corr)/log^{polylog_k:g} t ~ t^{eQ.text()} (must be ≤ "
                   f"{Q_SLOPE_MAX:g}: 1 − corr ≤ C log^{polylog_k:g} t/||W_t||) [{dQ.status}]")
    e = tail_exponent(t, omc[1:], N, ev.z, increments=False)
    allowance = polylog_allowance(WINDOW * N, N, polylog_k)
    bound = envelope_exponent(a) + allowance
    d = decide_upper(e.lo, e.hi, bound, max_width=MAX_WIDTH)
    ev.decide("(B) exponent of 1 − ⟨W̄_t, W̄_mm⟩ in t on the window", d, value=e.est,
              line=f"(B) 1 − corr ~ t^{e.text()} on [{WINDOW * N:.0f}, {N}]: envelope −(1 − a) + log^{polylog_k:g} "
                   f"allowance = {-(1 - a):.3f} + {allowance:.3f} = {bound:.3f} (the exponent −(1 − a) is the "
                   f"schedule's) [{d.status}]; final max {omc[-1].max():.2e}; {omc.shape[1]} runs")
    m = (steps >= WINDOW * N)
    slopes = [np.polyfit(np.log(Wn[m, b]), np.log(omc[m, b]), 1)[0] for b in range(Wn.shape[1])
              if np.all(omc[m, b] > 0) and np.ptp(np.log(Wn[m, b])) > 0]
    if slopes:
        ev.measure("exponent of 1 − corr against ||W_t|| on the window (mean over runs; reported)",
                   float(np.mean(slopes)), claimed="≤ −1 (A, up to logs)")
    ev.measure("1 − ⟨W̄_N, W̄_mm⟩ (max over runs)", float(omc[-1].max()))
    ev.measure("B.T1's envelope exponent for comparison (fixed head, NGD, ||W_t|| ~ t)", -1.0)
    if ev.plots:
        fig, ax = new_figure()
        ax.loglog(t, omc[1:], color="tab:blue", lw=1, alpha=0.6)
        tw = t[t >= WINDOW * N]
        ax.loglog(tw, omc[-1].max() * (tw / N) ** -(1 - a), "k--", label="∝ t^{−(1−a)} (envelope, no logs)")
        ax.set_xlabel("step t")
        ax.set_ylabel("1 − ⟨W̄_t, W̄_mm⟩")
        ax.legend(loc="best")
        ax.set_title(name)
        ev.figure("Directional convergence of W_t to W_mm", fig,
                  "1 − ⟨W̄_t, W̄_mm⟩ per run with a t^{−(1−a)} guide (the envelope's exponent is the schedule's).")
    return ev.outcome(headline=f"(A) ||W_t||(1 − corr)/log^{polylog_k:g} t ~ t^{eQ.text()} ≤ 0; (B) 1 − corr ~ "
                               f"t^{e.text()}, "
                               f"envelope ≤ {bound:.3f}", per_run=e.per_run, per_run_Q=eQ.per_run, envelope=bound)


# ---------------------------------------------------------------------------
# Probe: (A) and (B) over the data model's and the training's parameters
# ---------------------------------------------------------------------------


def probe_conclusion(inst, alpha_each, reference=own_w_mm):
    """(A) and (B) by direction-rate's rules (Q_MAX_WIDTH, MAX_WIDTH, the polylog degree POLYLOG_K) on the instance's
    window in its phase (``probing.phase_run``), the misalignment measured against ``reference(batch)`` (the draw's
    W_mm; the control passes :func:`dropped_w_mm`)."""
    pr = probing.phase_run(inst, keep_params=True, solve=("W",))
    run = pr.rate_run()
    if run is None:
        return None, pr.status, pr.why, pr.facts
    traj, N, a = run.traj, run.n_steps, run.update["a"]
    omc = misalignment(traj["W"].flatten(2), reference(run.batch).flatten(1)).numpy()
    t = traj.steps.numpy()[1:].astype(float)
    z = probing.z_each(alpha_each)
    Q = traj["W_norm"].numpy()[1:] * omc[1:] / np.log(np.maximum(t, 2.0))[:, None] ** POLYLOG_K
    eQ = tail_exponent(t, Q, N, z, increments=False)
    dQ = decide_upper(eQ.lo, eQ.hi, Q_SLOPE_MAX, max_width=Q_MAX_WIDTH)
    e = tail_exponent(t, omc[1:], N, z, increments=False)
    bound = envelope_exponent(a) + polylog_allowance(WINDOW * N, N)
    d = decide_upper(e.lo, e.hi, bound, max_width=MAX_WIDTH)
    holds = probing.holds(dQ.status, d.status)
    return holds, "in phase" if holds is not None else "interval too wide or straddling", \
        (f"(A) Q_t ~ t^{eQ.text()} ≤ {Q_SLOPE_MAX:g} [{dQ.status}]; (B) 1 − corr ~ t^{e.text()} ≤ {bound:.3f} "
         f"[{d.status}] on [{N // probing.PHASE_SPAN}, {N}]"), pr.facts


CLAIM = Claim(
    id=ID,
    title="Joint training: W_t → W_mm in direction, slower than with a fixed head",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("The source text keeps the shape (global directional convergence, slower than Theorem 1 because "
                   "||W_t|| grows slower). Decided: (A) the alignment per unit norm, 1 − corr ≤ C log²t/||W_t|| "
                   "(Q_t = ||W_t||(1 − corr)/log²t non-increasing), which the step schedule does not imply; and (B) "
                   "the resulting rate in t against −(1 − a) + the window's log² allowance (printed). The exponent "
                   "−2/3 of (B) and 'slower than a fixed head' come from the W factor a = 1/3 we chose (B.T2: b = 2/3 "
                   "put in to match a summary's 1/3, a the smallest allowed), not from the paper."),
    findings=(
        "Under joint training 1 − ⟨W̄_t, W̄_mm⟩ falls like ||W_t||^−2 (≈ t^−4/3 with ||W_t|| ~ t^{2/3}), as B.T1's t^−2 "
        "for NGD with ||W_t|| ~ t: the misalignment is set by the norm; the envelope's 1/||W_t|| is not tight.",
    ),
    assumptions=condition1_assumptions(),
    checks=(
        Check("derivation", "symbolic", "the envelope's exponent −(1 − a) from (A) and B.L10's norm growth, and the "
              "window's polylog allowance", derivation),
        Check("direction-rate", "numeric", "(A) ||W_t||(1 − corr)/log²t non-increasing; (B) exponent of 1 − ⟨W̄_t, "
              "W̄_mm⟩ against −(1 − a) + polylog allowance", check_direction, uses={"run": T3_RUN}),
        probing.joint_probe("(A) and (B) by direction-rate's rules", probe_conclusion),
    ),
    controls=(
        Control("symbolic: Theorem 1's envelope", "derivation", "t^{−1} (NGD with a fixed head, ||W_t|| ~ t) in place "
                "of −(1 − a)", {"envelope": envelope_fixed_head}),
        Control("probe: wrong W_mm", "probe", "each instance's misalignment measured against its W-SVM with the most "
                "loaded constraint dropped", {"mutant": {"reference": dropped_w_mm}}),
        Control("wrong W_mm", "direction-rate", "W-SVM with its most loaded constraint dropped",
                {"reference": w_mm_without_most_loaded}),
        Control("W-step with the wrong sign", "direction-rate", "W+ = W + η(t+1)^{-a} ∇_W L/||∇_W L|| (ascent in W)",
                {"run": T3_ASCENT_RUN}),
    ),
    free_choices=(
        FreeChoice("polylog degree k", POLYLOG_K, "'C polylog(t)' fixes no power of log t: 1-3 around B.T1's 2",
                   {"direction-rate": lambda v: {"polylog_k": v}}, low=1, high=3),
        *joint_choices({"direction-rate": {"run": T3_RUN}}),
    ),
)
