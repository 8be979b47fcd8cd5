r"""B.T6 — GD with a constant step also converges globally to W_mm in direction (Theorem 6), slower than NGD.

Statement (spec: exact in shape).  Under Theorem 1's conditions, GD ``W_{t+1} = W_t - eta grad L(W_t)`` with a
constant step converges in direction: ``<Wbar_t, Wbar_mm> -> 1`` from any initial direction (small norm).

An asymptotic statement has no finite-time test; we test the quantitative surrogate the paper's own example
gives.  On the two-token example GD has ``1 - corr = Theta(1/log^2 t)`` exactly (B.S33, derived in closed form),
and for linear logistic regression GD's residual orthogonal to the max-margin direction grows at most like
``log log t`` (Soudry et al. 2018).  So the surrogate envelope is

    1 - <Wbar_t, Wbar_mm> <= C (log log t)^2 / log^2 t,

decided like B.T1's: per run, the slope of ``log(1 - corr)`` on ``log log t`` over the late window
``[N/10, N]`` (of the upper envelope, ``rate_fixtures``); the ``(log log t)^2`` factor is allowed by
``s = 2 (lll t_2 - lll t_1)/(ll t_2 - ll t_1)`` (lll = log log log); fail if the interval of the mean exponent
lies above ``-2 + s``, pass if below (and narrower than 1).

"Slower than NGD": on the same runs, the paired difference of the exponents of 1 - corr in t (GD minus NGD)
must be positive (interval above 0; a difference of exactly 0, an algorithm against itself, is not slower).

Negative controls (overrides of their checks' parameters): a direction other than W_mm makes 1 - corr level
off at a positive value (exponent -> 0), which the rule rejects (alignment measured against the W-SVM with a
dropped constraint); NGD against itself for "slower".

Setting: the Example-1 suite of ``rate_fixtures`` (n = 4, T = 3, d = 16, ``||W_0|| = 0.5`` in random and
adversarial directions), GD and NGD with eta = 1.  GD moves in log t, so its "direction" runs are longer than the suite's
(2000 steps at the quick budget, 15000 at standard); "slower than NGD" compares both over the suite's horizon.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.stats import decide_lower, decide_upper, mean_interval, per_run_slopes
from theorems.claim import Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.paper_b import rate_fixtures as rf
from theorems.plots import new_figure

ID = "B.T6"

STATEMENT = (
    r"W_{t+1}=W_t-\eta\nabla L(W_t):\quad \langle\bar W_t,\bar W_{mm}\rangle\to1\ \text{from any direction};"
    r"\quad\text{surrogate: }1-\langle\bar W_t,\bar W_{mm}\rangle\le C\,\frac{(\log\log t)^2}{\log^2 t}"
)

MAX_WIDTH = 1.0    # an exponent-in-log-t interval wider than this cannot tell 1/log²t from 1/log t
STRICT = 1e-12     # "slower" is strict: an exponent difference of exactly 0 (an algorithm against itself) is no
                   # difference; 1e-12 is far below any real one and above float64 noise in the paired slopes


def loglog_allowance(t1_: float, t2: float, k: float = 2.0) -> float:
    """Window-averaged slope in log log t of (log log t)^k over [t1, t2]."""
    lll = lambda t: math.log(math.log(math.log(t)))  # noqa: E731
    return k * (lll(t2) - lll(t1_)) / (math.log(math.log(t2)) - math.log(math.log(t1_)))


def n_steps(ctx: Context) -> int:
    """GD moves in log t: a longer horizon than the shared suite's (which NGD needs only to 500 steps)."""
    return ctx.pick(2000, 15000, 50000)


def check_direction(ctx: Context, algorithm: str = "GD", wrong_svm: bool = False) -> Outcome:
    """Exponent of 1 - corr in log t against the surrogate (control: alignment against a wrong W_mm)."""
    s = rf.suite(ctx)
    N = n_steps(ctx)
    traj = rf.trajectory(ctx, algorithm, N)
    om = rf.one_minus_corr(traj["W"], s.W_mm_wrong if wrong_svm else s.W_mm).numpy()
    steps = traj.steps.numpy()
    sel = rf.late(steps, N)
    t = steps[sel].astype(float)
    slopes = per_run_slopes(np.log(np.log(t)), np.log(rf.upper_envelope(om[sel])))
    ev = Evidence(ctx)
    m, lo, hi = mean_interval(slopes, ev.z)
    allowance = loglog_allowance(t[0], t[-1])
    bound = -2 + allowance
    d = decide_upper(lo, hi, bound, max_width=MAX_WIDTH)
    ev.decide(f"exponent of 1 − corr in log t over t ∈ [{t[0]:.0f}, {t[-1]:.0f}] (mean over runs)", d, value=m,
              line=f"{algorithm}: exponent in log t {m:.2f} [{lo:.2f}, {hi:.2f}], surrogate allows ≤ {bound:.2f}; "
                   f"max final 1 − corr {om[-1].max():.2e} [{d.status}]")
    ev.measure("1 − corr at t = N, largest over runs", float(om[-1].max()), claimed="→ 0")
    ev.measure("1 − corr at t = N, median", float(np.median(om[-1])))
    ev.measure("K = max over runs of (1 − corr) log²t at t = N", float((om[-1] * math.log(t[-1]) ** 2).max()),
               claimed="bounded (two-token: → r²)")
    if ev.plots:
        fig, ax = new_figure()
        pos = steps > 0
        for b in range(om.shape[1]):
            ax.loglog(steps[pos], om[pos, b], color="tab:red" if s.adversarial[b] else "tab:orange", lw=0.6,
                      alpha=0.6)
        K = (om[sel] * np.log(t[:, None]) ** 2).max()
        tt = steps[steps >= 3]
        ax.loglog(tt, K / np.log(tt) ** 2, "k--", lw=1, label="C / log²t")
        ax.axvspan(t[0], t[-1], color="0.9", zorder=0)
        ax.set_xlabel("t")
        ax.set_ylabel("1 − ⟨W̄ₜ, W̄mm⟩")
        ax.set_title(f"{algorithm}, η = {rf.ETA}", fontsize=8)
        ax.legend(loc="best", fontsize=7)
        ev.figure("GD alignment vs the 1/log²t surrogate", fig,
                  "1 − ⟨W̄ₜ, W̄mm⟩ per run; red: W₀ ∝ −W̄mm; dashed: C/log²t through the worst run.")
    return ev.outcome(headline=f"exponent in log t {m:.2f} [{lo:.2f}, {hi:.2f}], surrogate ≤ {bound:.2f}",
                      slopes=slopes.tolist(), window=[float(t[0]), float(t[-1])])


def check_slower(ctx: Context, algorithm: str = "GD") -> Outcome:
    """Paired difference of the exponents of 1 - corr in t, ``algorithm`` minus NGD, is positive (control: NGD)."""
    s = rf.suite(ctx)
    ev = Evidence(ctx)
    fits = {a: rf.rate_fit(rf.trajectory(ctx, a), s.W_mm, s.n_steps, ev.z) for a in (algorithm, "NGD")}
    diff = fits[algorithm]["slopes"] - fits["NGD"]["slopes"]
    m, lo, hi = mean_interval(diff, ev.z)
    ratio = np.log10(fits[algorithm]["om"][-1] / fits["NGD"]["om"][-1])
    d = decide_lower(lo, hi, STRICT, max_width=math.inf)
    ev.decide(f"exponent of 1 − corr in t: {algorithm} − NGD (paired)", d, value=m,
              line=f"{algorithm} − NGD exponent {m:.3f} [{lo:.3f}, {hi:.3f}]; at t = N {algorithm}'s 1 − corr is "
                   f"10^{np.median(ratio):.1f}× NGD's [{d.status}]")
    for a, name in ((algorithm, f"{algorithm} exponent in t"), ("NGD", "NGD exponent in t")):
        ev.measure(name, fits[a]["mean"], lo=fits[a]["lo"], hi=fits[a]["hi"])
    ev.measure(f"log₁₀ of (1 − corr) {algorithm} / NGD at t = N (median)", float(np.median(ratio)))
    return ev.outcome(diff=diff.tolist())


CLAIM = Claim(
    id=ID,
    title="GD (constant step) converges globally to W̄mm, slower than NGD",
    statement=STATEMENT,
    fidelity="exact",
    fidelity_note=("The seed states Theorem 6 in words (asymptotic global convergence of GD with a constant step, "
                   "no rate). Its finite-time test is our surrogate envelope (log log t)²/log²t, derived from the "
                   "two-token closed form (B.S33) and the linear-regression analogy; 'slower than NGD' is from "
                   "Section 3.3 and Remark 2."),
    assumptions=rf.ASSUMPTIONS,
    checks=(
        Check("direction", "numeric", "Exponent of 1 − corr in log t for GD over a late window, against the "
              "(log log t)²/log²t surrogate", check_direction),
        Check("slower-than-NGD", "numeric", "Paired difference of exponents in t, GD minus NGD, is positive",
              check_slower),
    ),
    controls=(
        Control("wrong W_mm", "direction", "alignment against the W-SVM with its most-loaded constraint dropped",
                {"wrong_svm": True}),
        Control("NGD vs NGD", "slower-than-NGD", "NGD in place of GD: no difference", {"algorithm": "NGD"}),
    ),
)
