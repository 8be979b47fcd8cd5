r"""B.L7 — eq. (4): for large norms the negative gradient is more aligned with W_mm than with W itself (Lemma 7).

Statement (our reconstruction, exact in shape).  For every eps > 0 there is R_eps such that every W in the lemma's
domain with ||W|| >= R_eps satisfies

    <-grad L(W), Wbar_mm> >= (1 - eps) <-grad L(W), Wbar>.                                            (4)

The lemma's domain is where its proof operates: iterates of the algorithms, on which Lemma 3 keeps every opt
score above a floor (the proof uses it: "achieved by establishing a non-trivial lower bound on the softmax
scores that holds throughout training").  The paper's R_eps (via its three-set split of the samples) is lost;
we measure it.  Both sides scale with ||grad L||, so (4) is a statement about unit directions:
corr_mm = <-grad/||grad||, Wbar_mm> and corr_self = <-grad/||grad||, Wbar> (recorded at every step).

Measured R_eps = the largest ||W|| at which (4) fails among the W examined: every step of the shared trajectory bank
(GD eta = 1, NGD eta = 0.2 and 10, Polyak cap 10, from Lemma-2 inits and from random inits of norm 1..3, on
Example 1 (n = 8, T = 4, d = 32) and on exactly orthogonal tokens), plus sampled
W = r (cos(theta) Wbar_mm + sin(theta) H) (H a random unit matrix orthogonal to W_mm, theta ~ U(0, 90 deg), r =
10^U(-1, log10 of the largest trajectory norm)) whose opt scores are all >= 0.2 (the Lemma 3 domain).  Decision:
the claim fails if (4) fails anywhere in the top half of the norms examined (then no R_eps below that range
exists); it passes when, for each eps, the failures stop below half the largest norm.  eps = 0 is reported for
information (the slack 1 - eps is needed: near W_mm both sides tend to the same limit).  What this cannot see: a
failure of (4) only at norms beyond those examined, and (4) failing below half the largest norm passes (R_eps is
then reported, not bounded).  The trajectory points in the top half lie close to W_mm (the runs have aligned), so
the wide sampled directions (up to 90 deg from W_mm: a cone around it would bias the test toward a pass)
carry the test away from W_mm.
Ass 1 (ours, ``assumptions``) holds on the orthogonal-token instance only: Example 1 at
d = 32 has nu ~ 0.4 against nu* ~ 1e-3; (4) is tested there as the paper's claim that Example 1 is in scope.
Negative controls: a W_mm solved without one sample's constraints (the wrong max-margin direction; the bank records
the gradient's correlation with it beside the right one); and the gradient mis-derived, the softmax Jacobian's
-s s^T term dropped (d m_i/d a_it = s_it gamma_it for s_it (gamma_it - m_i)), so the "gradient" pushes every token's
logit by its own score instead of the gaps that W_mm separates: evaluated at the sampled W (the check computes their
gradient; the bank's trajectory records are of the model's, and stay as they are).  The second may be not rejected
if the uncentered direction still satisfies (4) at the norms examined: then (4) as tested cannot tell the two
gradients apart (reported, not swapped).
Free choices: the sampled W's opt-score floor (the Lemma 3 domain's, ``S_FLOOR`` at the claim's value) and the
trajectory bank's horizon (``bank.bank_horizon_choice``), which sets the largest norm examined.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from numerics import DTYPE
from numerics.paper_b import model, records, svm
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome, ScopeFilter
from theorems.evidence import Evidence
from theorems.paper_b.fixed_head.assumptions import ASS1, ASS2, ass1
from theorems.paper_b.fixed_head.bank import bank_horizon_choice, most_loaded_sample_dropped, trajectory_bank
from theorems.paper_b.fixed_head.lemma_probes import PROBE, probe_problem, svm_probe_assumptions
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.strata import fair_sampled_from
from theorems.symbolic import Derivation

ID = "B.L7"
#: the eps levels decided (0.5 .. 0.02: from a coarse slack to one where near W_mm both sides nearly coincide)
EPSILONS = (0.5, 0.2, 0.1, 0.05, 0.02)
SAMPLED_COUNT = (1500, 4000, 10000)  # sampled W per instance at quick / standard / full
S_FLOOR = 0.2  # sampled W are kept when every opt score is >= this (the Lemma 3 domain)
DOMAIN_SCOPE = ScopeFilter(
    "Lemma 3 domain",
    f"iterates of the algorithms (Lemma 3 bounds their opt scores below); sampled W kept only when every opt score is "
    f"≥ {S_FLOOR:g}",
    why="the lemma's domain is where its proof operates, opt scores bounded below; the floor 0.2 for the sampled W "
        "is ours")
#: sampled W: ||W|| = 10^U(-1, log10 of the largest trajectory norm), so sampled W reach the decided top half
SAMPLED_LOG_NORM_MIN = -1.0
#: sampled W: direction cos(theta) Wbar_mm + sin(theta) H, H a random unit matrix orthogonal to W_mm and theta
#: uniform on [0, 90 deg): every angle to W_mm (beyond 90 deg no W has all opt scores >= 0.2 at large norm)
THETA_MAX_DEG = 90.0
#: the decision: (4) must hold at every examined W in the top half of the norms (above ||W||_max / 2)
TOP_FRACTION = 0.5

STATEMENT = (
    r"\forall\epsilon>0\;\exists R_\epsilon:\;\|W\|\ge R_\epsilon\;\Rightarrow\;"
    r"\langle-\nabla L(W),\bar W_{mm}\rangle\ge(1-\epsilon)\langle-\nabla L(W),\bar W\rangle"
)


def neg_grad_direction(ev: model.Evaluation, ds, W: torch.Tensor) -> torch.Tensor:
    """-grad L / ||grad L|| (m, d*d) at the W (m, d, d) that ``ev`` evaluated (the model's log-domain gradient)."""
    return -ev.dir_W.flatten(1)


def neg_grad_direction_uncentered(ev: model.Evaluation, ds, W: torch.Tensor) -> torch.Tensor:
    """The control's gradient direction (m, d*d): the softmax Jacobian's -s s^T term dropped, so
    d m_i / d a_it = s_it gamma_it in place of s_it (gamma_it - m_i) and

        -grad' = (1/n) sum_i e^{-m_i} sum_t s_it gamma_it x_it x_i1^T

    (a slip in deriving (G), the gradient whose direction (4) is about).  Linear domain: on the Lemma 3 domain
    e^{-m_i} is of order 1 and the opt term, s_io >= S_FLOOR, never underflows."""
    w = (-ev.margin).exp()[..., None] * ev.log_s.exp() * ev.gamma                  # (m, n, T)
    X = ds.X
    G = torch.einsum("mnt,ntd,ne->mde", w, X, X[:, 0]).flatten(1)
    return G / G.norm(dim=1, keepdim=True)


def sampled_domain(gen, ds, W_ref, count, log_norm_max, neg_grad=neg_grad_direction, s_floor: float = S_FLOOR):
    """(norms, -grad L/||grad L|| (m, d*d), unit directions (m, d*d), angles to W_ref in degrees (m,)) of the sampled
    W = r (cos(theta) Wbar_ref + sin(theta) H) whose opt scores are all >= ``s_floor`` (the Lemma 3 domain);
    r = 10^U(SAMPLED_LOG_NORM_MIN, log_norm_max), theta ~ U(0, THETA_MAX_DEG), H unit and orthogonal to W_ref;
    the gradient's direction by ``neg_grad(ev, ds, W)`` (control: ``neg_grad_direction_uncentered``)."""
    lo = SAMPLED_LOG_NORM_MIN
    rr = 10 ** (lo + (log_norm_max - lo) * torch.rand(count, generator=gen, dtype=DTYPE))
    u = (W_ref / W_ref.norm()).flatten()
    H = torch.randn(count, ds.d * ds.d, generator=gen, dtype=DTYPE)
    H = H - (H @ u)[:, None] * u
    H = H / H.norm(dim=1, keepdim=True)
    theta = math.radians(THETA_MAX_DEG) * torch.rand(count, generator=gen, dtype=DTYPE)
    Dm = (torch.cos(theta)[:, None] * u + torch.sin(theta)[:, None] * H).reshape(count, ds.d, ds.d)
    W = rr[:, None, None] * Dm
    ev = model.evaluate(W, None, ds, values=False)
    keep = (ev.log_s * records.opt_mask(ds)).sum(-1).amin(-1).exp() >= s_floor
    return rr[keep], neg_grad(ev, ds, W)[keep], Dm.flatten(1)[keep], torch.rad2deg(theta[keep])


def collect(ctx: Context, bank: list, dropped: bool = False, neg_grad=neg_grad_direction, s_floor: float = S_FLOOR):
    """(norms, corr_mm, corr_self, label, angle to W_mm in degrees) over every examined W as flat numpy arrays:
    every step of the shared trajectory bank and the sampled W of the Lemma 3 domain (opt scores >= ``s_floor``);
    ``dropped``: corr_mm against the dropped-constraint W_mm (a control); ``neg_grad``: the gradient's direction at the
    sampled W (a control: the uncentered one; the bank's records are of the model's gradient)."""
    gen = ctx.generator(ID, "samples")
    count = ctx.pick(*SAMPLED_COUNT)
    sfx = "_dropped" if dropped else ""
    log_top = math.log10(max(float(tr["W_norm"].max()) for e in bank for _, _, tr in e["runs"].values()))
    N, CM, CS, LAB, ANG = [], [], [], [], []
    for e in bank:
        W_mm = (e["r_dropped"] if dropped else e["r"]).solution
        for label, (kind, eta, tr) in e["runs"].items():
            N.append(tr["W_norm"][1:].flatten())
            CM.append(tr["grad_corr_mm" + sfx][1:].flatten())
            CS.append(tr["grad_corr_self"][1:].flatten())
            ANG.append(torch.rad2deg(torch.arccos((1 - tr["one_minus_corr"][1:].flatten()).clamp(-1, 1))))
            LAB += [label.split()[0]] * N[-1].numel()
        # sampled W at every angle to the true W_mm (the domain does not move with the control's reference)
        rr, neg, Dm, ang = sampled_domain(gen, e["ds"], e["r"].solution, count, log_top, neg_grad, s_floor)
        N.append(rr)
        CM.append(neg @ (W_mm / W_mm.norm()).flatten())
        CS.append((neg * Dm).sum(1))
        ANG.append(ang)
        LAB += ["sampled"] * len(rr)
    return (torch.cat(N).numpy(), torch.cat(CM).numpy(), torch.cat(CS).numpy(), np.array(LAB),
            torch.cat(ANG).numpy())


def check_alignment(ctx: Context, bank: list, dropped: bool = False, neg_grad=neg_grad_direction,
                    s_floor: float = S_FLOOR) -> Outcome:
    """R_eps per eps: the largest ||W|| where (4) fails; the claim fails if that is in the top half of the norms.
    ``s_floor``: the opt-score floor of the sampled W (a free choice).  Controls: ``dropped`` (a wrong W_mm),
    ``neg_grad=neg_grad_direction_uncentered`` (a mis-derived gradient)."""
    norms, cm, cs, lab, ang = collect(ctx, bank, dropped, neg_grad, s_floor)
    top = float(np.nanmax(norms))
    ev = Evidence(ctx)
    sampled = len(bank) * ctx.pick(*SAMPLED_COUNT)
    ev.scope(DOMAIN_SCOPE, sampled - int((lab == "sampled").sum()), sampled)
    R = {}
    upper = norms > TOP_FRACTION * top
    samp_top = upper & (lab == "sampled")
    for eps in EPSILONS + (0.0,):
        fail = ~(cm >= (1 - eps) * cs)                                   # NaN counts as a failure
        R[eps] = R_eps = float(norms[fail].max()) if fail.any() else 0.0
        beyond = int((norms > R_eps).sum())
        if eps > 0:
            ok = R_eps < TOP_FRACTION * top
            ev.exact(f"R_ε for ε = {eps}", ok, f"ε={eps}: R_ε={R_eps:.3g} ({beyond} W beyond, all satisfy (4)) "
                     f"[{'pass' if ok else 'fail'}]", value=R_eps,
                     claimed=f"finite, < {TOP_FRACTION:g}·‖W‖_max = {TOP_FRACTION * top:.3g}")
        else:
            ev.say(f"(ε=0, information: last failure at ‖W‖={R_eps:.3g})")
    eps_fit = np.array([e for e in EPSILONS if R[e] > 0])
    info = ""
    if len(eps_fit) >= 3:
        slope = np.polyfit(np.log(1 / eps_fit), np.log([R[e] for e in eps_fit]), 1)[0]
        info = f"; log R_ε vs log(1/ε) slope {slope:.2f} (information)"
    bands = np.histogram(ang[samp_top], bins=[0, 30, 45, 60, 75, 90])[0]
    ev.say(f"{len(norms)} W examined, ‖W‖ up to {top:.3g}{info}; in the decided top half (‖W‖ > {TOP_FRACTION * top:.3g}) "
           f"{int(upper.sum())} W, of them {int(samp_top.sum())} sampled at angles to W_mm of 0-30/30-45/45-60/60-75/"
           f"75-90°: {'/'.join(str(int(b)) for b in bands)}; trajectory points there lie within "
           f"{float(np.nanmax(ang[upper & (lab != 'sampled')])) if (upper & (lab != 'sampled')).any() else 0:.3g}° "
           f"of W_mm")
    ev.measure("sampled W in the decided top half", float(samp_top.sum()))
    ev.measure("widest angle to W_mm of a sampled W in the top half (degrees)",
               float(ang[samp_top].max()) if samp_top.any() else math.nan)
    if ev.plots:
        ev.figure("Eq. (4) against the norm", _plot(norms, cm, cs, lab, dropped),
                  "Every step of NGD/GD/Polyak and sampled W (every angle to W_mm) in the Lemma 3 domain (a random "
                  "1500 of them drawn); (4) holds below the dotted ε levels.")
    return ev.outcome(headline=", ".join(f"R_{e}={R[e]:.3g}" for e in EPSILONS[:3]) + f" (‖W‖ up to {top:.3g})",
                      R_eps={str(k): v for k, v in R.items()}, max_norm=top, count=len(norms),
                      algorithms=list(bank[0]["runs"]), s_floor_sampled=s_floor,
                      sampled_top_half_by_angle=bands.tolist())


def _plot(norms, cm, cs, lab, dropped):
    fig, ax = new_figure()
    thin = np.random.default_rng(0).random(len(norms)) < min(1.0, 1500 / len(norms))  # keep the SVG small
    for name, col in (("NGD", "tab:orange"), ("GD", "tab:blue"), ("Polyak", "tab:green"), ("sampled", "tab:gray")):
        m = (lab == name) & thin
        ratio = cm[m] / np.where(cs[m] > 0, cs[m], np.nan)
        ax.scatter(norms[m], 1 - ratio, s=2, alpha=0.3, color=col, label=name)
    for eps in EPSILONS:
        ax.axhline(eps, color="k", lw=0.5, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("‖W‖")
    ax.set_ylabel("1 − corr_mm / corr_self")
    ax.set_title("eq. (4)" + (" with a dropped-constraint W_mm (control)" if dropped else ""))
    ax.legend(fontsize=7, markerscale=4)
    return fig


# ---------------------------------------------------------------------------
# Symbolic: (4) on two orthogonal samples, in closed form
# ---------------------------------------------------------------------------
#
# Two samples of two tokens, x_11 = e_1 (query and opt), x_12 = e_2, x_21 = e_3 (query and opt), x_22 = e_4, scores
# gamma = (1, 0) (head e_1 + e_3, y = 1; T = 2, so Ass 2 holds), d = 4: the constraint matrices
# A_i = (x_io - x_i2) x_i1^T are orthogonal, W_mm = (A_1 + A_2)/2 with ||W_mm|| = 1 (max margin 1).  On the ray
# W = R (c A_1 + s A_2)/sqrt 2 (c^2 + s^2 = 1, here (c, s) = (3/5, 4/5)) the gaps are g_i = sqrt 2 R (c, s) and
# -grad L = (1/2) sum_i e^{-m_i} s_io (1 - s_io) A_i: as R grows the sample with the smaller gap carries all the
# weight (its coefficient is larger by e^{g_2 - g_1}), so
#     <-grad L, Wbar_mm> / <-grad L, Wbar>  ->  1 / (||W_mm|| min_i g_i(Wbar)) = 5/(3 sqrt 2) > 1,
# and min_i g_i(Wbar) <= 1/||W_mm|| (the max-margin property) makes the limit >= 1 in every direction of the domain.


def centered_coefficients(s, gamma, m):
    """Per token t: s_t (gamma_t - m), the coefficient of x_t x_1^T in -grad e^{-m} / e^{-m} (the softmax Jacobian
    diag(s) - s s^T applied to gamma)."""
    return [st * (gt - m) for st, gt in zip(s, gamma)]


def uncentered_coefficients(s, gamma, m):
    """The control's: the Jacobian's -s s^T term dropped, s_t gamma_t (the numeric control's gradient)."""
    return [st * gt for st, gt in zip(s, gamma)]


def derivation(coefficients=centered_coefficients) -> Outcome:
    """(4) in closed form on two orthogonal samples; ``coefficients(s, gamma, m)``: the gradient's per-token
    coefficients (control: :func:`uncentered_coefficients`)."""
    D = Derivation()
    R = sp.Symbol("R", positive=True)
    W = sp.Matrix(4, 4, lambda i, j: sp.Symbol(f"W_{i + 1}{j + 1}", real=True))
    e = [sp.Matrix([1 if k == j else 0 for k in range(4)]) for j in range(4)]
    samples = [(e[0], e[1]), (e[2], e[3])]                  # (query = opt, other) of each sample
    gamma = (1, 0)
    L, form = 0, sp.zeros(4, 4)
    for X in samples:
        a = [(x.T * W * X[0])[0] for x in X]
        Z = sum(sp.exp(ai) for ai in a)
        s = [sp.exp(ai) / Z for ai in a]
        m = sum(si * gi for si, gi in zip(s, gamma))
        L += sp.exp(-m) / 2
        for k, x in zip(coefficients(s, gamma, m), X):
            form += sp.exp(-m) / 2 * k * x * X[0].T
    grad = -sp.Matrix(4, 4, lambda i, j: sp.diff(L, W[i, j]))
    i, t = sp.symbols("i t", integer=True)
    # display-only subscripted symbols (an Indexed entry is named s[i, t], not a symbol of the formula)
    s_it, g_t, m_i = sp.Symbol("s_i,t"), sp.Symbol("gamma_t"), sp.Symbol("m_i")
    x_it, x_i1 = sp.MatrixSymbol("x_i,t", 4, 1), sp.MatrixSymbol("x_i,1", 4, 1)
    shown_form = sp.Rational(1, 2) * sp.Sum(sp.exp(-m_i) * sp.Sum(s_it * (g_t - m_i) * x_it * x_i1.T, (t, 1, 2)),
                                            (i, 1, 2))
    D.prove_zero("the gradient of L = (e^{−m₁} + e^{−m₂})/2 (sympy's differentiation, every entry of W) is "
                 "−∇L = ½ Σ_i e^{−m_i} Σ_t s_it(γ_t − m_i) x_it x_i1ᵀ", (grad - form).applyfunc(sp.simplify),
                 shown=sp.Eq(-sp.Derivative(sp.Symbol("L"), sp.Symbol("W")), shown_form, evaluate=False))
    A1, A2 = (e[0] - e[1]) * e[0].T, (e[2] - e[3]) * e[2].T
    W_mm = (A1 + A2) / 2
    ip = lambda P, Q: sum(P.multiply_elementwise(Q))  # noqa: E731 -- the Frobenius pairing
    D.prove_equal("W_mm = (A₁ + A₂)/2 meets both constraints ⟨A_i, W⟩ ≥ 1 with equality and has ‖W_mm‖ = 1",
                  sp.Matrix([ip(A1, W_mm), ip(A2, W_mm), ip(W_mm, W_mm)]), sp.Matrix([1, 1, 1]),
                  shown=sp.Eq(sp.Symbol("W_mm"), W_mm, evaluate=False))
    c, s_ = sp.Rational(3, 5), sp.Rational(4, 5)
    Wr = R * (c * A1 + s_ * A2) / sp.sqrt(2)
    G = form.subs({W[i, j]: Wr[i, j] for i in range(4) for j in range(4)})
    ratio = sp.simplify(ip(G, W_mm) / sp.sqrt(ip(W_mm, W_mm)) / (ip(G, Wr) / sp.sqrt(ip(Wr, Wr))))
    gmin = sp.sqrt(2) * c
    D.prove_equal("on the ray W = R(3A₁ + 4A₂)/(5√2) (gaps √2R·3/5 and √2R·4/5): lim_{R→∞} ⟨−∇L, W̄mm⟩/⟨−∇L, W̄⟩ "
                  "= 1/(‖W_mm‖ min_i gap_i(W̄)) = 5/(3√2)" + ("" if coefficients is centered_coefficients
                                                          else " [control: gradient without the centering]"),
                  sp.limit(ratio, R, sp.oo), 1 / gmin,
                  shown=sp.Eq(sp.Limit(sp.Function("rho")(R), R, sp.oo), 1 / gmin, evaluate=False))
    cc, ss = sp.symbols("c s", positive=True)
    D.prove_equal("max-margin property on these rays: min_i gap_i(W̄) = √2 min(c, s) ≤ (c + s)/√2 ≤ 1 = 1/‖W_mm‖, "
                  "as 2(c² + s²) − (c + s)² = (c − s)² ≥ 0: the limit is ≥ 1 in every direction that meets both "
                  "constraints, so (4) holds beyond some R_ε", 2 * (cc**2 + ss**2) - (cc + ss) ** 2, (cc - ss) ** 2)
    Wd = R * (A1 + A2) / 2
    Gd = form.subs({W[i, j]: Wd[i, j] for i in range(4) for j in range(4)})
    D.prove_zero("along W̄mm itself both sides coincide at every R (⟨−∇L, W̄mm⟩ = ⟨−∇L, W̄⟩): (4) is tight there, "
                 "so no R makes it hold with ε = 0 and room to spare", sp.simplify(ip(Gd, W_mm) - ip(Gd, Wd) / R),
                 shown=sp.Eq(sp.Function("rho")(R), 1, evaluate=False))
    return D.outcome("eq. (4) in closed form on two orthogonal samples")


# ---------------------------------------------------------------------------
# Probe: data, Ass 1 / Ass 2, the direction of a ray and how far out, on both sides of the Lemma 3 domain
# ---------------------------------------------------------------------------

#: the slack decided per probed ray (one of EPSILONS, the claim's middle one)
PROBE_EPS = 0.1
#: (4) is read with this absolute tolerance on <-grad/||grad||, Wbar_mm> - (1 - eps) <-grad/||grad||, Wbar> (float64
#: rounding of unit-vector pairings: along W̄mm the two sides agree exactly in exact arithmetic)
PROBE_TOL = 1e-12
#: norms per ray: the top of the ray R_top and R_top / 2^(k/4), k = 1..PROBE_NORMS - 1 (the decided top half)
PROBE_NORMS = 5
#: the ray's top norm in units of ||W_mm||: 10^U(1.5, 3.5) (the claim's bank reaches ||W|| ~ 3·10^3, measured
#: R_eps <= 2.3 at eps >= 0.02)
PROBE_LOG_TOP = (1.5, 3.5)
#: the ray's largest angle to W̄mm, by a fair draw (``theorems.strata``): within 20 deg twice (at a top norm >= 30
#: ||W_mm|| a wider ray leaves the Lemma 3 domain unless every constraint value of its direction is positive), up to
#: THETA_MAX_DEG once
PROBE_CONES = (20.0, 20.0, THETA_MAX_DEG)
#: probe examples at quick / standard / full (a W-SVM and PROBE_NORMS gradients per instance, ~0.03 s); about a
#: third are decided (inside the assumptions), so quick takes 80 for its control's power (the ledger)
PROBE_EXAMPLES = (80, 120, 300)
#: decided instances needed inside the assumptions (Ass 2, a feasible W-SVM and the Lemma 3 domain along the ray)
PROBE_MIN_DECIDED = 8


@st.composite
def probe_instances(draw):
    """Token geometry (orthogonal + rho, or Example 1 at d), sizes, score spread (Ass 2 on both sides, a fair coin),
    the ray's angle theta to W̄mm (0-90 deg) and its top norm are hypothesis primitives; ``seed`` draws the dataset
    (``lemma_probes.probe_dataset``) and the direction H orthogonal to W_mm (d x d)."""
    kind = draw(st.sampled_from(["orthogonal", "gaussian"]))
    n, T = draw(st.integers(1, 4)), draw(st.integers(2, 4))
    in_scope = draw(fair_sampled_from([True, False]))
    cone = draw(fair_sampled_from(PROBE_CONES))
    return dict(kind=kind, n=n, T=T, spread=0.0 if in_scope else draw(st.sampled_from([0.3, 1.0])),
                rho=draw(st.sampled_from([0.0, 1e-3, 0.1, 0.5])), d=draw(st.integers(max(n, T) + 2, 14)),
                theta=draw(st.floats(0.0, cone)), log_top=draw(st.floats(*PROBE_LOG_TOP)),
                seed=draw(st.integers(0, 2**31 - 1)))


def w_mm_of(ds, r: svm.SVMResult) -> torch.Tensor:
    """The instance's W_mm (the probe's reference)."""
    return r.solution


def w_mm_dropped(ds, r: svm.SVMResult) -> torch.Tensor:
    """The probe control's reference: the W-SVM without the constraints of the sample carrying the most dual mass
    (``bank.most_loaded_sample_dropped``); with one sample there is nothing to drop, and W_mm stays."""
    return most_loaded_sample_dropped(ds, r).solution if ds.n > 1 else r.solution


def probe_conclusion(inst, alpha_each, eps: float = PROBE_EPS, reference=w_mm_of):
    """(4) at ``eps`` at PROBE_NORMS norms of the ray in the top half [R_top/2, R_top] of its length, with W̄mm read
    from ``reference(ds, r)`` (control: :func:`w_mm_dropped`; the rays stay around the true W_mm).  Exact
    (deterministic).  Facts: nu, the W-SVM's feasibility, the smallest opt score along the evaluated W and Ass 1 at
    Lemma 2's eps."""
    ds, r, facts = probe_problem(inst)
    if r is None:
        return None, "W-SVM infeasible", "", facts
    u = (r.solution / r.norm).flatten()
    ref = reference(ds, r).flatten()
    ref = ref / ref.norm()
    g = torch.Generator().manual_seed(inst["seed"] + 1)
    H = torch.randn(ds.d * ds.d, generator=g, dtype=DTYPE)
    H = H - (H @ u) * u
    th = math.radians(inst["theta"])
    Dm = (math.cos(th) * u + math.sin(th) * H / H.norm()).reshape(ds.d, ds.d)
    top = r.norm * 10 ** inst["log_top"]
    norms = top * 2.0 ** (-torch.arange(PROBE_NORMS, dtype=DTYPE) / (PROBE_NORMS - 1))
    W = norms[:, None, None] * Dm
    ev = model.evaluate(W, None, ds, values=False)
    neg = neg_grad_direction(ev, ds, W)
    cm, cs = neg @ ref, neg @ Dm.flatten()
    s_min = float((ev.log_s * records.opt_mask(ds)).sum(-1).amin().exp())
    facts = facts | {"s_min": s_min, "ass1": ass1(ds).holds}
    margin = cm - (1 - eps) * cs
    ok = bool((margin >= -PROBE_TOL).all())
    return ok, "evaluated", (f"min over ‖W‖ ∈ [{float(norms[-1]):.3g}, {float(norms[0]):.3g}] of ⟨−∇L, W̄mm⟩ − "
                             f"(1 − {eps:g})⟨−∇L, W̄⟩ (unit gradient): {float(margin.nan_to_num(-math.inf).min()):.3g}"), facts


def probe_assumptions(inst, facts: dict) -> dict:
    """Ass 2 and a feasible W-SVM (``lemma_probes.svm_probe_assumptions``), Ass 1 (ours, at Lemma 2's eps and a small
    step) and the Lemma 3 domain (every opt score >= the floor at every evaluated W)."""
    return svm_probe_assumptions(inst, facts) | {"Ass 1 (ours)": facts.get("ass1", True),
                                                 f"Lemma 3 domain (s_opt ≥ {S_FLOOR:g})": facts.get("s_min", 1.0) >= S_FLOOR}


def probe_parameters(inst, facts: dict) -> dict:
    return {"angle to W̄mm (deg)": inst["theta"], "log₁₀ R_top/‖W_mm‖": inst["log_top"], "spread": inst["spread"],
            "ν": facts.get("_nu", float("nan"))}


CLAIM = Claim(
    id=ID,
    title="For large norms −∇L is more aligned with W_mm than with W (eq. (4))",
    statement=STATEMENT,
    fidelity="exact",
    fidelity_note=("Exact in shape (our reconstruction). The paper's R_ε is lost; we measure it on the Lemma 3 domain "
                   "(iterates of GD/NGD/Polyak and sampled W at every angle to W_mm with every opt score ≥ 0.2) and "
                   "report it per ε; the decision only fails (4) in the top half of the norms examined. Ass 1 (ours) "
                   "holds on the orthogonal-token instance only (Example 1 at d = 32 is far outside it)."),
    assumptions=(ASS1, ASS2, DOMAIN_SCOPE),
    checks=(
        Check("derivation", "symbolic", "The gradient by sympy, and on two orthogonal samples the limit of "
              "⟨−∇L, W̄mm⟩/⟨−∇L, W̄⟩ along a ray, 1/(‖W_mm‖ min gap(W̄)) ≥ 1 by the max-margin property",
              derivation),
        Check("alignment", "numeric", "R_ε measured for ε = 0.5 … 0.02 along trajectories and on sampled W",
              check_alignment, stochastic=False, uses={"bank": trajectory_bank}),
        probe(f"Hypothesis over token geometry (ν), sizes, score spread (Ass 2), the angle of a ray "
              f"to W̄mm and its length: (4) at ε = {PROBE_EPS:g} over the ray's top half, inside and outside the "
              "Lemma 3 domain", PROBE, strategy=probe_instances(), conclusion=probe_conclusion,
              examples=PROBE_EXAMPLES, assumptions=probe_assumptions, parameters=probe_parameters,
              min_decided=PROBE_MIN_DECIDED),
    ),
    controls=(
        Control("symbolic: gradient without the softmax centering", "derivation", "s_t γ_t in place of s_t(γ_t − m): "
                "the limit is 5√2/7, not 1/(‖W_mm‖ min gap)", {"coefficients": uncentered_coefficients}),
        Control("probe: dropped W-SVM constraints", "probe", "W̄mm read from the W-SVM without the most-loaded "
                "sample's constraints: the probe must find a ray where −∇L is less aligned with it than (1 − ε) "
                "times with W̄", {"mutant": {"reference": w_mm_dropped}}),
        Control("dropped W-SVM constraints", "alignment",
                "W_mm solved without the constraints of the sample with the most dual mass", {"dropped": True}),
        Control("gradient without the softmax centering", "alignment",
                "−∇L mis-derived with the Jacobian's −s sᵀ term dropped (s_t γ_t for s_t (γ_t − m)), at the sampled W",
                {"neg_grad": neg_grad_direction_uncentered}),
    ),
    free_choices=(
        FreeChoice("opt-score floor", S_FLOOR, "Lemma 3's lower bound on the iterates' opt scores is lost with its "
                   "constant: from 0.05 (a fifth of T = 4's uniform score) to 0.5 (the opt token holding half the "
                   "attention)", {"alignment": lambda v: {"s_floor": v}}, low=0.05, high=0.5, scale="log"),
        bank_horizon_choice({"alignment": {"bank": trajectory_bank}}),
    ),
    findings=("R_ε ≈ 1.8, 2.1, 2.3 for ε = 0.1, 0.05, 0.02 (and 0 for ε ≥ 0.2) at every seed and budget run, with "
              "‖W‖ up to 3·10³ and sampled W up to 90° from W_mm; with ε = 0, (4) still fails at norms of "
              "10²–3·10³: the slack 1 − ε is needed.",),
)
