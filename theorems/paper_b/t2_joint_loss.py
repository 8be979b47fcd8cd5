r"""B.T2 — train-loss convergence under joint training (Vasudeva, Deora, Thrampoulidis; Theorem 2 / Thm. 8).

Statement (spec: qualitative).  Under Condition 1, on data model DM, the updates (10) drive the train loss to
0 as ``L(W_t, u_t) <= exp(-c t^p)``; a third-party summary quotes ``p = 1/3``.  The seed lost the factors of
(10); this module derives them (below), measures ``p`` and sweeps the factors.

What the seed says about (10) (Sec. 4.1, 4.3, footnote 1):

* W gets a normalized step with an *additional decreasing factor* ("smaller step-size"), which makes
  ``||W_t||`` grow slower than ``t``; the W-direction rate is therefore slower than Theorem 1's ``t^{-1/2}``;
  the factor "helps to account for the non-smoothness of the objective".
* u gets a loss-normalized step whose factor ``1/L`` "can be replaced with ``1/L^alpha``"; "we present
  findings using [alpha = 1], as it yields the fastest rate".
* The proof of Theorem 2: (1) PL-like ``||grad_u L|| >= c L``; (2) the loss on the segment
  ``[theta_t, theta_{t+1}]`` is at most ``c L(theta_t)``, proved from ``|y f(theta') - y f(theta_t)|``, Lemma 10's
  iterate-norm bound and the step sizes of (10), "then using Cond. 1 for eta"; (3) ``||Hess|| <= C L``;
  then a second-order Taylor expansion and telescoping.

Derivation (ours; sympy proves the identities in ``derivation``).  Write (10) as
``W+ = W - eta (t+1)^{-a} grad_W L/||grad_W L||`` and ``u+ = u - eta (t+1)^{-b} grad_u L / L^alpha``.

1. Loss decay.  The second-order expansion with (1)-(3) gives ``L_{t+1} <= L_t - c' eta t^{-b} L_t^{2-alpha}``.
   For ``alpha = 1``: ``log(1/L_t) >= c' eta t^{1-b}/(1-b)``, i.e. ``p = 1 - b``.  For ``alpha < 1`` the
   solution of ``L' = -k t^{-b} L^{2-alpha}`` is ``(C + (1-alpha) k t^{1-b}/(1-b))^{-1/(1-alpha)}``, a
   *polynomial* decay.  So ``alpha = 1`` is the only power with an exponential rate: "the fastest".
2. Norms (Lemma 10).  ``||u_{t+1} - u_t|| <= eta R t^{-b}`` (``||grad_u L|| <= R L``), hence
   ``||u_t|| <= eta R t^{1-b}/(1-b)``; ``||W_t|| <= eta t^{1-a}/(1-a)``.
3. Property (2) needs the margin change over a step bounded:
   ``|Delta m_i| <= R ||Delta u|| + 2 R^3 ||u_{t+1}|| ||Delta W|| <= eta R^2 t^{-b} + 2 eta^2 R^4 t^{1-a-b}/(1-b)``,
   bounded iff ``a + b >= 1`` (and then small by Cond. 1 (iv): "using Cond. 1 for eta").
4. W's direction: as in Theorem 1, ``1 - <Wbar_t, Wbar_mm> ~ log t / ||W_t|| ~ t^{-(1-a)}`` (B.T3).

With the summary's ``p = 1/3``: ``b = 2/3``; then (3) needs ``a >= 1/3`` and (4) is fastest at the smallest
``a``: ``(a, alpha, b) = (1/3, 1, 2/3)``, ``||W_t|| ~ t^{2/3}`` (the "slower than Theta(t)" of the seed),
``||u_t|| ~ t^{1/3}``, ``||Wbar_t - Wbar_mm|| ~ t^{-1/3}``.  This is our reading of (10) (``joint_checks.EQ10``).
The numerics' default ``u_time_power = 0`` (b = 0) gives ``p = 1`` and violates (3) (``a + b = 1/3``).

Evidence: the derivation (sympy); the measured ``p`` on DM (increments of ``log(1/L_t)``, so the offset of
``log(1/L)`` at small t drops out; interval = across-run statistical error + a systematic term, the change
of the estimate between the two halves of the window); a sweep over ``b`` and ``alpha`` (``p = 1 - b``;
``alpha = 1/2`` gives ``p -> 0``).  Controls: GD in place of (10) (polynomial: ``p ~ 0``), a wrong claimed
exponent (1/2), a wrong derivation (``p = 1 - a``).

Shared by the joint-training claims (B.L10-B.L13, B.T2-B.T4, B.Fig3): DM setup, step size, horizons,
the exponent estimator and decision helpers (this module's first section).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from numerics.paper_b import joint_checks as J
from numerics.stats import mean_se
from theorems.claim import Assumption, Check, Claim, Context, Control, Figure, Measurement, Outcome
from theorems.claim import worst_status
from theorems.plots import new_figure, to_svg
from theorems.symbolic import Derivation

ID = "B.T2"

STATEMENT = (
    r"L(W_t,u_t)\le \exp\!\left(-c\,t^{p}\right),\quad p=1-b=\tfrac13\quad"
    r"\text{for (10): }W_{t+1}=W_t-\frac{\eta}{(t+1)^{1/3}}\frac{\nabla_W L}{\|\nabla_W L\|},\;"
    r"u_{t+1}=u_t-\frac{\eta}{(t+1)^{2/3}}\frac{\nabla_u L}{L}"
)

# ---------------------------------------------------------------------------
# Shared by the joint-training claims
# ---------------------------------------------------------------------------

#: DM sizes (ours; the seed's are lost): n sequences of T = 2 tokens (the seed: "for ease of exposition we
#: consider [T = 2] ... extend to [T > 2] assuming Ass. 2"), d = 64, opt tokens 4x longer (Cond. 1 (ii))
MAIN = dict(n=3, T=2, d=64, opt_ratio=4.0)
#: step size: Cond. 1 (iv) as we instantiate it, eta R^2 <= 1 with R ~ 4.3 the largest token norm
ETA = 0.05
EQ10_SPEC = ("eq10", ETA, *J.EQ10)
ETA_GD = 1.0     # GD step (Fig. 3; the paper's is lost): monotone, and faster than eta = 0.1 or 0.5
WINDOW = 0.2     # exponents are fitted on [WINDOW N, N]


def main_setup(ctx: Context) -> J.Setup:
    """DM draws conditioned on Lemma 9's event (Condition 1 holds on it)."""
    return J.Setup(**MAIN, B=ctx.pick(6, 16, 24), seed=ctx.seed)


def n_main(ctx: Context) -> int:
    return ctx.pick(1500, 6000, 15000)


def n_ctrl(ctx: Context) -> int:
    """Horizon of the extra runs (controls, sweeps, Fig. 3): a third of the main one."""
    return n_main(ctx) // 3


def main_run(ctx: Context):
    """Updates (10) with EQ10's factors on the main setup, with W and u at the log-spaced records."""
    return J.cached_run(main_setup(ctx), EQ10_SPEC, n_main(ctx), keep_params=True)


def run(ctx: Context, spec: tuple, n_steps: int | None = None, setup: J.Setup | None = None):
    """An extra run (default: main setup, control horizon), W and u kept at the records (so claims share it)."""
    return J.cached_run(main_setup(ctx) if setup is None else setup, spec, n_ctrl(ctx) if n_steps is None else n_steps,
                        keep_params=True)


def z_of(ctx: Context, n_decisions: int) -> float:
    return Context(alpha=ctx.alpha / n_decisions).z


worst = worst_status  # the shared rule (theorems.claim)


@dataclass
class Exponent:
    """A power-law exponent over a window, with per-run estimates and an interval.

    ``lo, hi = est -/+ (z stat + sys)``: stat = across-run standard error; sys = |first-half estimate -
    second-half estimate| (how much the local exponent still drifts: the finite-t bias we cannot rule out).
    """

    est: float
    stat: float
    sys: float
    z: float
    per_run: np.ndarray
    halves: tuple[float, float]

    @property
    def lo(self) -> float:
        return self.est - self.z * self.stat - self.sys

    @property
    def hi(self) -> float:
        return self.est + self.z * self.stat + self.sys

    def text(self) -> str:
        return f"{self.est:.4f} [{self.lo:.4f}, {self.hi:.4f}]"


def tail_exponent(steps, values, n_steps: int, z: float, increments: bool, start: float = WINDOW) -> Exponent:
    """Exponent of ``values`` (K, B) in t over [start N, N].

    ``increments``: the exponent of the growth itself, from the slope s of the finite-difference rate
    (``exponent = 1 + s``): offsets (``values = c t^e + c0``) drop out.  Otherwise the log-log slope of
    the values.
    """
    steps = np.asarray(steps, float)
    if increments:
        x, Y = J.increment_rates(steps, values)
        shift = 1.0
    else:
        x, Y = steps, np.asarray(values, float)
        shift = 0.0
    t1, t2 = start * n_steps, float(n_steps)
    mid = math.sqrt(t1 * t2)

    def est(a, b):
        m = (x >= a) & (x <= b)
        if m.sum() < 3:
            raise ValueError(f"fewer than 3 records in [{a:.0f}, {b:.0f}]")
        return J.per_run_slopes(x[m], Y[m]) + shift

    per_run = est(t1, t2)
    m, se = mean_se(per_run) if per_run.size > 1 else (float(per_run[0]), 0.0)
    h1, h2 = float(est(t1, mid).mean()), float(est(mid, t2).mean())
    return Exponent(m, se, abs(h1 - h2), z, per_run, (h1, h2))


#: exponents are compared with a claim up to this resolution: the estimators resolve the asymptotic exponent only
#: up to finite-horizon corrections of a few 1e-3 (second-order terms of the steps), and the claims to be told
#: apart differ by >= 1/6 (1/3 vs 1/2 vs 2/3 vs 1)
RESOLUTION = 0.02


def decide_equal_exponent(e: Exponent, target: float, max_width: float, resolution: float = RESOLUTION) -> str:
    """fail if [lo, hi] misses [target - resolution, target + resolution]; inconclusive if wider than max_width."""
    if not (math.isfinite(e.lo) and math.isfinite(e.hi)):
        return "fail"
    if e.hi < target - resolution or e.lo > target + resolution:
        return "fail"
    return "inconclusive" if e.hi - e.lo > max_width else "pass"


def decide_upper(lo: float, hi: float, bound: float, max_width: float = 0.5) -> str:
    """Claim ``value <= bound``: fail if the whole interval is above; pass if all below and narrow enough."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > bound:
        return "fail"
    return "pass" if hi <= bound and hi - lo <= max_width else "inconclusive"


def condition1_assumptions() -> tuple[Assumption, ...]:
    """Condition 1 as instantiated by the joint-training claims."""
    return (
        Assumption("Cond. 1 (i)", "zero initialization W_0 = 0, u_0 = 0"),
        Assumption("Cond. 1 (ii)", "opt tokens have larger norm: x_opt ~ N(0, rho^2 sigma^2 I), rho = 4"),
        Assumption("Cond. 1 (iii) / Lemma 9", "d large enough that nu <= (1 - 1/rho^2)/(2nT) "
                   "(draws outside this event are discarded; B.L9 measures its probability)"),
        Assumption("Cond. 1 (iv)", "small step: eta R^2 <= 1 (eta = 0.05, R = max token norm ~ 4.3)"),
        Assumption("T = 2", "two tokens per sequence, so Ass. 2 holds at every iteration"),
    )


# ---------------------------------------------------------------------------
# 1. Symbolic derivation
# ---------------------------------------------------------------------------


def derivation(claimed_p=None) -> Outcome:
    """The loss exponent implied by (10)'s factors, and the factors implied by p = 1/3 (module docstring)."""
    D = Derivation()
    t, k, C, q, eta, R = sp.symbols("t k C q eta R", positive=True)
    a, b = sp.symbols("a b", positive=True)
    D.say("Second-order expansion with the PL-like bound ||∇_u L|| ≥ cL, the segment bound and ||∇²L|| ≤ CL "
          "(Lemma 13): the u-step η t^{-b} ∇_u L / L^α lowers the loss by ≥ k t^{-b} L^{2-α} (k = c'η).")
    ell = k * t ** (1 - b) / (1 - b)
    D.prove_equal("α = 1: ℓ = log(1/L) obeys ℓ' = k t^{-b}, solved by ℓ = k t^{1-b}/(1-b)  ⇒  L = exp(-c t^{1-b})",
                  sp.diff(ell, t), k * t ** (-b), shown=sp.Eq(sp.Derivative(sp.Symbol("ell"), t), k * t ** (-b)))
    Y = sp.Symbol("Y", positive=True)
    Yexpr = C + q * k * t ** (1 - b) / (1 - b)
    L = Y ** (-1 / q)
    resid = sp.diff(L, Y) * sp.diff(Yexpr, t) + k * t ** (-b) * L ** (1 + q)
    D.prove_zero("α = 1 − q < 1: L = (C + q k t^{1-b}/(1-b))^{-1/q} solves L' = −k t^{-b} L^{2-α}: "
                 "polynomial decay L ~ t^{-(1-b)/q}; only α = 1 is exponential (\"the fastest rate\")",
                 sp.powsimp(resid / Y ** (-1 / q - 1), force=True),
                 shown=sp.Eq(sp.Symbol("L"), Yexpr ** (-1 / q)))
    s = sp.Symbol("s", positive=True)
    D.prove_equal("Lemma 10: ||u_t|| ≤ ηR Σ s^{-b} ≤ ηR ∫₀ᵗ s^{-b} ds = ηR t^{1-b}/(1-b) (b < 1)",
                  sp.integrate(s ** (-b), (s, 0, t), conds="none"), t ** (1 - b) / (1 - b))
    dm = eta * R**2 * t ** (-b) + 2 * R**4 * eta * t ** (1 - b) / (1 - b) * eta * t ** (-a)
    growing = 2 * R**4 * eta**2 * t ** (1 - a - b) / (1 - b)
    expo = sp.simplify(t * sp.diff(sp.expand_log(sp.log(growing), force=True), t))
    D.prove_equal("margin change over a step: |Δm| ≤ R||Δu|| + 2R³||u||·||ΔW|| = ηR²t^{-b} + 2η²R⁴t^{1-a-b}/(1-b); "
                  "its growing part has log-slope 1 − a − b (bounded iff a + b ≥ 1)",
                  expo, 1 - a - b, shown=sp.Eq(sp.Symbol("|Δm|"), dm))
    p = 1 - b
    b_star = sp.solve(sp.Eq(p, sp.Rational(1, 3)), b)[0]
    a_star = 1 - b_star
    D.prove_equal("the summary's p = 1/3 ⇒ b = 2/3; a + b ≥ 1 and the fastest W alignment (smallest a) ⇒ a = 1/3",
                  sp.Matrix([a_star, b_star]), sp.Matrix([sp.Rational(1, 3), sp.Rational(2, 3)]))
    D.prove_equal("then ||W_t|| ~ t^{1-a} = t^{2/3}, ||u_t|| ~ t^{1-b} = t^{1/3}, 1 − ⟨W̄_t, W̄_mm⟩ ~ t^{-(1-a)} = t^{-2/3}",
                  sp.Matrix([1 - a_star, 1 - b_star, -(1 - a_star)]),
                  sp.Matrix([sp.Rational(2, 3), sp.Rational(1, 3), -sp.Rational(2, 3)]))
    claimed = p if claimed_p is None else claimed_p(a, b)
    D.prove_equal("loss exponent of (10): p = 1 − b = 1/3", claimed.subs({a: a_star, b: b_star}), sp.Rational(1, 3))
    return D.outcome("p = 1 − b with α = 1 (the only exponential case); p = 1/3 ⇒ (a, α, b) = (1/3, 1, 2/3)")


# ---------------------------------------------------------------------------
# 2. Numeric check: the loss exponent on DM
# ---------------------------------------------------------------------------


def check_loss_exponent(ctx: Context, spec: tuple | None = None, claimed: float = 1 / 3) -> Outcome:
    """Fitted p in L = exp(-c t^p) from the increments of log(1/L_t) over [N/5, N]."""
    if spec is None:
        traj, N = main_run(ctx), n_main(ctx)
    else:
        N = n_ctrl(ctx)
        traj = run(ctx, spec, N)
    z = z_of(ctx, 1)
    steps = traj.steps.numpy()
    ell = -traj["log_loss"].numpy()
    e = tail_exponent(steps, ell, N, z, increments=True)
    status = decide_equal_exponent(e, claimed, max_width=0.1)
    # the constant: ell = c t^p + c0 on the window, with p = claimed
    m = steps >= WINDOW * N
    X = np.column_stack([steps[m] ** claimed, np.ones(m.sum())])
    c = np.linalg.lstsq(X, ell[m], rcond=None)[0][0]
    c_m, c_se = mean_se(c)
    meas = [Measurement("loss exponent p (exp(−c t^p))", e.est, e.lo, e.hi, claimed=f"= {claimed:.4g}",
                        level=1 - ctx.alpha),
            Measurement("constant c (with p fixed at the claim)", c_m, c_m - z * c_se, c_m + z * c_se,
                        level=1 - ctx.alpha),
            Measurement("log L at the last step (mean over runs)", float(-ell[-1].mean()))]
    fig, ax = new_figure()
    for b in range(ell.shape[1]):
        ax.loglog(steps[1:], ell[1:, b], color="tab:blue", alpha=0.5, lw=1)
    tt = steps[m].astype(float)
    ax.loglog(tt, c_m * tt ** claimed, "k--", label=f"c t^{claimed:.3g} (claim)")
    ax.set_xlabel("step t")
    ax.set_ylabel("log(1/L(W_t, u_t))")
    ax.set_title("updates (10) on DM" if spec is None else f"{spec}")
    ax.legend(loc="best")
    name = "updates (10)" if spec is None else str(spec)
    summary = (f"{name}: p = {e.text()} (stat ±{z * e.stat:.2g}, sys ±{e.sys:.2g}; halves {e.halves[0]:.4f}, "
               f"{e.halves[1]:.4f}) vs claimed {claimed:.4g}; c = {c_m:.3f}; {ell.shape[1]} DM draws, {N} steps")
    return Outcome(status, summary, meas,
                   [Figure("log(1/L) against t", to_svg(fig),
                           "Each line is one DM draw; the dashed line is c t^p with the claimed p fitted on the window.")],
                   details={"per_run_p": e.per_run.tolist(), "window": [WINDOW * N, N], "spec": list(spec or EQ10_SPEC)},
                   headline=f"p = {e.text()}, claimed {claimed:.4g}")


# ---------------------------------------------------------------------------
# 3. Numeric check: sweep over the factors (p = 1 - b for alpha = 1; alpha < 1 polynomial)
# ---------------------------------------------------------------------------

SWEEP = [  # (a, alpha, b): other factors of (10); the derivation predicts growth exponent 1 - b for g_alpha(L)
    (1 / 3, 1.0, 0.0),
    (1 / 3, 0.5, 2 / 3),
]
#: the sweep's step: the exponent does not depend on eta, and a larger step ends the transient (||grad_u L||/L
#: still rising while the attention saturates) within the short horizon
SWEEP_ETA = 0.2


def transformed_loss(log_loss: np.ndarray, alpha: float) -> np.ndarray:
    """g_alpha(L) = log(1/L) for alpha = 1, L^{-(1-alpha)} - 1 for alpha < 1: the quantity whose growth the
    derivation predicts as t^{1-b} (for alpha < 1: L = (1 + c t^{1-b})^{-1/(1-alpha)}, a polynomial decay)."""
    return -log_loss if alpha == 1 else np.expm1(-(1 - alpha) * log_loss)


def check_sweep(ctx: Context, predicted=None) -> Outcome:
    """Other factors (a, alpha, b): the growth exponent of g_alpha(L_t) against the derivation's 1 - b."""
    setup = main_setup(ctx)
    small = J.Setup(**MAIN, B=min(4, setup.B), seed=setup.seed)
    N = n_ctrl(ctx)
    z = z_of(ctx, len(SWEEP))
    statuses, meas, lines = [], [], []
    fig, ax = new_figure()
    for a, alpha, b in SWEEP:
        p_claim = 1 - b if predicted is None else predicted(a, alpha, b)
        traj = run(ctx, ("eq10", SWEEP_ETA, a, alpha, b), N, setup=small)
        steps = traj.steps.numpy()
        g = transformed_loss(traj["log_loss"].numpy(), alpha)
        e = tail_exponent(steps, g, N, z, increments=True)
        st_ = decide_equal_exponent(e, p_claim, max_width=0.2)
        statuses.append(st_)
        label = f"a={a:.3g}, α={alpha:g}, b={b:.3g}"
        what = "log(1/L)" if alpha == 1 else f"L^-{1 - alpha:g} − 1"
        meas.append(Measurement(f"growth exponent of {what} for {label}", e.est, e.lo, e.hi,
                                claimed=f"= 1 − b = {p_claim:.3g}", level=1 - ctx.alpha / len(SWEEP)))
        lines.append(f"{label}: {what} ~ t^{e.text()} vs {p_claim:.3g} [{st_}]")
        ax.loglog(steps[1:], g[1:].mean(1), label=f"{what}, {label}")
    main = main_run(ctx)
    ax.loglog(main.steps.numpy()[1:], -main["log_loss"].numpy()[1:].mean(1), "k", label="log(1/L), (10): b = 2/3")
    ax.set_xlabel("step t")
    ax.set_ylabel("g_α(L_t) (mean over draws)")
    ax.legend(loc="best", fontsize=7)
    return Outcome(worst(statuses), " | ".join(lines), meas,
                   [Figure("Loss decay for other factors of (10)", to_svg(fig),
                           "α = 1: log(1/L) ~ t^{1−b} (exponential rates); α = 1/2: L^{−1/2} ~ t^{1−b}, i.e. L "
                           "decays only polynomially.")],
                   details={"n_steps": N, "draws": small.B})


# ---------------------------------------------------------------------------
# 4. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID,
    paper="B",
    title="Train loss → 0 at exp(−c t^p) under joint training (updates (10))",
    statement=STATEMENT,
    fidelity="qualitative",
    fidelity_note=("The seed keeps only the shape (loss → 0 at a stretched-exponential rate); a third-party summary "
                   "quotes exp(−Ω(t^{1/3})). The factors of (10) are lost: we derive p = 1 − b from the proof sketch "
                   "(α = 1 is the only exponential case, hence 'fastest'), the constraint a + b ≥ 1 from the "
                   "segment bound, and read (a, α, b) = (1/3, 1, 2/3) off p = 1/3 (ours, reconstructed). The "
                   "exponent is then measured on DM (n=3, T=2, d=64, ρ=4, η=0.05); the sweep checks the derived law for b = 0 "
                   "(p = 1) and α = 1/2 (polynomial decay)."),
    assumptions=condition1_assumptions(),
    checks=(
        Check("derivation", "symbolic", "p = 1 − b (α = 1), polynomial for α < 1; factors from p = 1/3",
              lambda ctx: derivation(), stochastic=False),
        Check("loss-exponent", "numeric", "fitted p in exp(−c t^p) for updates (10) on DM", check_loss_exponent),
        Check("factor-sweep", "numeric", "b = 0 and α = 1/2: growth exponent 1 − b of log(1/L) (α = 1) and of "
              "L^{−(1−α)} (α < 1: polynomial decay)", check_sweep),
    ),
    controls=(
        Control("symbolic: p = 1 − a", "derivation", "the W factor in place of the u factor",
                lambda ctx: derivation(lambda a, b: 1 - a)),
        Control("GD in place of (10)", "loss-exponent", "constant-step GD: polynomial decay, p ≈ 0",
                lambda ctx: check_loss_exponent(ctx, ("gd", ETA_GD))),
        Control("wrong claimed exponent", "loss-exponent", "p = 1/2 claimed for updates (10)",
                lambda ctx: check_loss_exponent(ctx, claimed=0.5)),
        Control("sweep: p = 1 − a", "factor-sweep", "the W factor's exponent predicted instead",
                lambda ctx: check_sweep(ctx, lambda a, alpha, b: 1 - a)),
    ),
)
