r"""B.L10 — iterate norms under joint training (Vasudeva, Deora, Thrampoulidis; Lemma 10).

Statement (spec: qualitative).  With the updates (10), ``||W_t||`` grows, but slower than ``Theta(t)``: the
extra factor in W's step ("smaller step-size") slows the growth (seed, Sec. 4.2: "the iterate norm grows as
[...] in contrast to the [Theta(t)] rate in Sec. 3").

Our reading (derived in B.T2): W's step is ``eta (t+1)^{-1/3}`` times a unit direction and u's is
``eta (t+1)^{-2/3} grad_u L / L``, so

    ||W_t|| <= eta sum_{s<t} (s+1)^{-1/3} <= (3/2) eta t^{2/3},      ||u_t|| <= eta R sum_{s<t} (s+1)^{-2/3} <= 3 eta R t^{1/3}

(triangle inequality; ``||grad_u L|| <= R L``), and the lower bounds of the same order follow from the
gradient's positive correlation with ``W_mm`` and ``u_mm`` (Lemma 4's argument).  Claimed: ``||W_t|| = Theta(t^{2/3})``,
``||u_t|| = Theta(t^{1/3})``.

Evidence: on DM draws under Condition 1 (the shared set-up of ``joint_fixtures``), the growth exponents of
``||W_t||`` and ``||u_t||`` from the increments of the norms over ``[N/5, N]`` (offset-free; interval = across-run
error + the drift between the two window halves), compared with 2/3 and 1/3 up to a resolution of 0.02; W's
interval must not lie at or above ``1 - 0.02`` (slower than ``Theta(t)``), and ``||W_t||`` must stay below the
triangle bound at every record.

Controls: (10) without W's extra factor (``a = 0``: NGD in W, exponent 1); the claim ``||W_t|| = Theta(t)``
(Section 3's rate) for (10).
"""
from __future__ import annotations

import numpy as np

from numerics.stats import decide_close
from theorems.claim import Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.paper_b.joint_fixtures import (ETA, EQ10_SPEC, RESOLUTION, WINDOW, condition1_assumptions, main_run,
                                             n_ctrl, n_main, run, tail_exponent)
from theorems.plots import new_figure

ID = "B.L10"

STATEMENT = (
    r"\|W_t\|\le\eta\sum_{s<t}(s+1)^{-1/3}\le\tfrac32\,\eta\,t^{2/3},\qquad \|W_t\|=\Theta(t^{2/3}),\;"
    r"\|u_t\|=\Theta(t^{1/3})\quad(\text{slower than }\Theta(t))"
)

#: an exponent interval wider than 0.1 cannot tell 2/3 from 1/2 or 1 (nor 1/3 from 1/2)
MAX_WIDTH = 0.1
#: rounding allowance of the triangle bound (relative)
BOUND_TOL = 1e-12


def check_norms(ctx: Context, spec: tuple | None = None, claimed_W: float = 2 / 3, claimed_u: float = 1 / 3) -> Outcome:
    """Growth exponents of ||W_t|| and ||u_t|| against the claims; ||W_t|| against the triangle bound.

    ``spec``: another algorithm of the family (10) (a control), run for the control horizon."""
    traj, N = (main_run(ctx), n_main(ctx)) if spec is None else (run(ctx, spec), n_ctrl(ctx))
    a = (EQ10_SPEC if spec is None else spec)[2]
    name = "updates (10)" if spec is None else str(spec)
    ev = Evidence(ctx, decisions=2)
    steps = traj.steps.numpy()
    Wn, un = traj["W_norm"].numpy(), traj["u_norm"].numpy()
    eW = tail_exponent(steps, Wn, N, ev.z, increments=True)
    eu = tail_exponent(steps, un, N, ev.z, increments=True)
    dW = decide_close(eW.lo, eW.hi, claimed_W, resolution=RESOLUTION, max_width=MAX_WIDTH)
    ev.decide("growth exponent of ||W_t||", dW, value=eW.est,
              line=f"{name}: ||W_t|| ~ t^{eW.text()} (claimed {claimed_W:.3g}) [{dW.status}]")
    ev.exact("||W_t|| slower than Θ(t)", eW.lo < 1 - RESOLUTION,
             f"slower than Θ(t): W's interval {'below' if eW.lo < 1 - RESOLUTION else 'NOT below'} 1 − {RESOLUTION:g}")
    du = decide_close(eu.lo, eu.hi, claimed_u, resolution=RESOLUTION, max_width=MAX_WIDTH)
    ev.decide("growth exponent of ||u_t||", du, value=eu.est,
              line=f"||u_t|| ~ t^{eu.text()} (claimed {claimed_u:.3g}) [{du.status}]")
    # the triangle bound ||W_t|| <= eta sum_{s<t} (s+1)^{-a}, at every record
    csum = np.concatenate([[0.0], np.cumsum(ETA * np.arange(1, N + 1, dtype=float) ** -a)])
    bound = csum[steps.astype(int)]
    ratio = np.where(bound[:, None] > 0, Wn / np.where(bound > 0, bound, 1.0)[:, None], 0.0)
    late = steps >= WINDOW * N
    ev.exact("||W_t|| / (η Σ (s+1)^{-a}) on the window (min over runs and t)",
             bool((ratio <= 1 + BOUND_TOL).all()),
             f"triangle bound {'holds' if (ratio <= 1 + BOUND_TOL).all() else 'VIOLATED'} at every record; "
             f"{Wn.shape[1]} DM draws, {N} steps",
             value=float(ratio[late].min()), claimed="≤ 1, bounded below")
    ev.measure("||W_N|| / N^{2/3} (mean)", float((Wn[-1] / N ** (2 / 3)).mean()))
    ev.measure("||u_N|| / N^{1/3} (mean)", float((un[-1] / N ** (1 / 3)).mean()))
    if ev.plots:
        fig, ax = new_figure()
        t = steps[1:].astype(float)
        ax.loglog(t, Wn[1:], color="tab:blue", alpha=0.5, lw=1)
        ax.loglog(t, un[1:], color="tab:orange", alpha=0.5, lw=1)
        ax.loglog(t, bound[1:], "k--", lw=1, label="η Σ (s+1)^{-a} (bound on ||W_t||)")
        ax.loglog(t, ETA * t, "k:", lw=1, label="η t (Section 3's NGD)")
        ax.plot([], [], color="tab:blue", label="||W_t||")
        ax.plot([], [], color="tab:orange", label="||u_t||")
        ax.set_xlabel("step t")
        ax.set_ylabel("norm")
        ax.legend(loc="best", fontsize=7)
        ev.figure("Iterate norms under joint training", fig,
                  "One line per DM draw; dashed: the triangle-inequality bound of W's step sizes.")
    return ev.outcome(headline=f"||W_t|| ~ t^{eW.text()}, ||u_t|| ~ t^{eu.text()}",
                      per_run_W_exponent=eW.per_run, per_run_u_exponent=eu.per_run)


CLAIM = Claim(
    id=ID,
    title="Iterate norms under joint training grow slower than Θ(t)",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("The seed says only that ||W_t|| grows slower than in Section 3 because of the extra factor in "
                   "W's step. The exponents 2/3 (W) and 1/3 (u) follow from our reading of (10), "
                   "(a, α, b) = (1/3, 1, 2/3), derived in B.T2 (reconstructed); they are measured here."),
    assumptions=condition1_assumptions(),
    checks=(
        Check("norm-exponents", "numeric", "growth exponents of ||W_t|| (2/3, < 1) and ||u_t|| (1/3); triangle bound",
              check_norms),
    ),
    controls=(
        Control("no extra factor on W", "norm-exponents", "(10) with a = 0 (NGD in W): ||W_t|| ~ t",
                {"spec": ("eq10", ETA, 0.0, 1.0, 2 / 3)}),
        Control("claimed Θ(t)", "norm-exponents", "Section 3's linear growth claimed for (10)", {"claimed_W": 1.0}),
    ),
)
