r"""A.L10, A.L14, A.L19, A.L23 — Gaussian Poincare bounds on the conditional variances (Appendix D).

Method (seed, exact).  For ``f`` of the other covariates ``X = (x_j)_{j != i}``, ``x_j ~ N(0, Sigma)`` iid, the
Gaussian Poincare inequality (Boucheron et al., cited by the paper) gives

    Var_{-i} f  :=  E_{-i} ||f - E_{-i} f||^2  <=  sum_{j != i} E_{-i} tr( J_j Sigma J_j^T ),   J_j = d f / d x_j,

i.e. ``sum_j E ||grad_{x_j} f||_Sigma^2`` ("(20), (21), (23), (27), (34) ... where we used the fact that the
covariates are i.i.d."); the proofs then bound ``||J_j||`` with Lemma 8's softmax gradients and Lemma 9, so each
variance is O(1/n).  Terms (reconstructed): the functions are the softmax-weighted objects of each section,

    A.L10  f = (s_ij)_{j != i}          (the weight vector: "conditional variance of softmax weights")
    A.L14  f = xbar_i = sum_j s_ij x_j
    A.L19  f = xbar_i xbar_i^T           ("closely imitates Lemma 14 ... product rule")
    A.L23  f = sum_j s_ij x_j x_j^T      ("convexity of the squared Frobenius norm")

Leading constants (ours, delta method; ``q, mu, t, F, m2, mSm`` as in ``technical_lemmas.py``):
``n' Var_{-i} f`` tends to ``e^q - 1``, ``e^q (t + m2)``, ``e^q (4 m2^2 + 2 m2 t + 2 mSm)``,
``e^q (9 m2^2 + 8 m2 t + 8 mSm + t^2 + F)`` respectively (the variance and the MSE share their first-order term).

Evidence.  (1) *Inequality*: both sides by Monte Carlo at two fixed queries and n = 8..32 (standard:
8..128), from the same draws: ``||f(X_k) - fbar||^2 M/(M-1)`` (its mean is the unbiased sample variance) and
each draw's gradient sum by autograd (``torch.func.jacrev``); the ratio ``LHS/RHS`` (delta-method errors from the
paired draws) is decided by ``decide_upper`` against 1 with no tolerance: a cell passes when its whole interval lies
below 1, fails when it lies above, and is undecided otherwise (a tolerance would pass a bound exceeded by it).
(2) *O(1/n)*: the fitted limit of ``n' Var_{-i} f`` equals the derived constant, inside half the distance to the
constant without the tilt factor (``e^q - 1`` against 0 for the weights; the control's value, ``ALTERNATIVE_LIMITS``)
(sample variances over the larger Monte Carlo rows shared with A.L9, n = 8..256; the fitted limit of ``n' x bound``
is reported too).
The instance and the rows are fixtures shared with A.L9-A.L22 (``row_setups``), the
paired draws of (1) a fixture of this module (:func:`poincare_data`), the derived constants in
``coefficients``.
Controls (mutants of the inequality's right side, passed as the function that reads it off the draws): the ``Sigma``
weight dropped (``sum_j E ||J_j||_F^2``, :func:`identity_weighted_bound`; the instance has ``Sigma >= 2 I``, so it
under-weights every direction, and that is a gauge, not a favourable case: the control's description derives why);
the softmax weights frozen in the Jacobian (the chain rule through the weights dropped, :func:`frozen_softmax_bound`;
for the weight vector itself the bound becomes 0), run on all four lemmas: for x̄ the frozen sum t·Σⱼs²ⱼ undercuts the
variance e^q(t + ‖μ‖²)/n' only by t/(t + ‖μ‖²) ≈ 0.9, and for x̄x̄ᵀ and M2 the frozen right side still exceeds the
variance (the bound has slack ~2), so there the inequality cannot tell a frozen softmax from the true one and the
control is not rejected: a stated limitation, not a reason to drop it; and, for (2), the constant without the tilt
factor (``untilted_limits``).  The right side divided by n' would be a rescaled constant, not a mutant of the
mathematics; the frozen softmax is one.
Free choices (``row_setups.instance_choices``; ``verify sensitivity`` maps the verdict over them): the strongly tilted
query's q (0.3-1.2), the window of n of (2) (8..128 to 8..1024) and the dimension (2-6); the lemmas hold for each.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from numerics import DTYPE
from numerics.paper_a import moments as mo
from numerics.stats import decide_upper
from theorems.claim import Check, Claim, Context, Control, Outcome
from theorems.evidence import Evidence
from theorems.paper_a.assumptions import A1, a3
from theorems.fixture import fixture
from theorems.paper_a.softmax_bias.coefficients import ALTERNATIVE_LIMITS, tilted_limits, untilted_limits
from theorems.paper_a.softmax_bias.decisions import headline, limit_decisions, limit_plot, mean_and_se, n_axes
from theorems.paper_a.softmax_bias.row_setups import (LEMMA_DATA_ID, LemmaInstance, instance_choices, lemma_instance,
                                                      row_data)
from theorems.plots import new_figure

#: which function of the context each lemma bounds (reconstructed from Appendix D's section titles)
FUNC = {"A.L10": "weights", "A.L14": "xbar", "A.L19": "outer", "A.L23": "M2"}
#: the derived limit of n'·Var for each function (the MSE's leading constant: both share their first-order term)
LIMIT_KEY = {"xbar": "xbar_mse", "outer": "outer_mse", "M2": "M2_mse"}
#: the inequality's cells: context sizes per budget (quick, standard); the gradients' autograd makes large n costly
POINCARE_NS = ([8, 16, 32], [8, 16, 32, 64, 128])
#: paired draws per cell (quick, standard): the tightest cells (the weights, ratio ≈ 0.9 at n = 8) need their
#: interval's upper end below 1 with no tolerance: half-width ≈ 0.04 at 4000 draws
POINCARE_DRAWS = (4000, 5000)
#: a bound holds at a cell's confidence once the whole interval lies below it; no width limit, no tolerance
BOUND_MAX_WIDTH = math.inf


# ---------------------------------------------------------------------------
# 1. Both sides of the inequality by Monte Carlo (paired draws at the lemma instance's queries)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PoincareData:
    inst: LemmaInstance
    ns: list[int]
    per_query: list[list[mo.PoincareSamples]]  # [query][n]
    n_draws: int


@fixture(uses={"inst": lemma_instance})
def poincare_data(ctx, inst: LemmaInstance) -> PoincareData:
    """Both sides of the inequality at each query and n (paired draws), on the stream (``LEMMA_DATA_ID``,
    "poincare"); the right side with the Poincaré weight Σ and the controls' identity weight and frozen softmax."""
    gen = ctx.generator(LEMMA_DATA_ID, "poincare")
    ns = ctx.pick(*POINCARE_NS)
    N = ctx.pick(*POINCARE_DRAWS)
    eye = torch.eye(inst.Sigma.shape[-1], dtype=DTYPE)
    per_query = [[mo.poincare_samples(inst.K, inst.Sigma, xq, n, N, gen, weightings={"I": eye}) for n in ns]
                 for xq in inst.xq]
    return PoincareData(inst, ns, per_query, N)


def poincare_bound(P: mo.PoincareSamples, f: str) -> torch.Tensor:
    """The Gaussian Poincaré bound's draws for the function ``f``: ``sum_j tr(J_j Sigma J_j^T)``."""
    return P.grad_sq[(f, "Sigma")]


def identity_weighted_bound(P: mo.PoincareSamples, f: str) -> torch.Tensor:
    """Wrong on purpose (control): the bound's draws without the covariance weight, ``sum_j ||J_j||_F^2``."""
    return P.grad_sq[(f, "I")]


def frozen_softmax_bound(P: mo.PoincareSamples, f: str) -> torch.Tensor:
    """Wrong on purpose (control): the bound's draws with the softmax weights held fixed in the Jacobian."""
    return P.grad_sq[(f, "frozen")]


#: how the inequality's figure names each bound (text, not a decision)
_BOUND_NAME = {poincare_bound: "Σ_j E‖∇_{x_j} f‖²_Σ", identity_weighted_bound: "Σ_j E‖∇_{x_j} f‖² (Σ dropped: control)",
               frozen_softmax_bound: "Σ_j E‖∇_{x_j} f‖²_Σ, softmax frozen (control)"}


def ratio_and_se(lhs: torch.Tensor, rhs: torch.Tensor) -> tuple[float, float]:
    r"""``E lhs / E rhs`` from paired draws and its standard error by the ratio delta method."""
    g, h = rhs.mean(), lhs.mean()
    r = float((g - h) / g)  # the relative margin (E rhs - E lhs) / E rhs
    resid = (rhs - lhs) - r * rhs  # influence function of the ratio
    return 1 - r, float(resid.std() / math.sqrt(resid.shape[0]) / g)


def check_inequality(ctx: Context, data: PoincareData, lemma: str, bound=poincare_bound) -> Outcome:
    """Per (query, n) cell: ``Var₋ᵢ f / bound <= 1`` (``decide_upper``, no tolerance), the bound's draws read off the
    paired samples by ``bound(samples, f)``: :func:`poincare_bound` (the Poincaré weight Σ); the controls pass
    :func:`identity_weighted_bound` (weight dropped) or :func:`frozen_softmax_bound` (the softmax weights held fixed in
    the Jacobian)."""
    inst = data.inst
    f = FUNC[lemma]
    ev = Evidence(ctx, decisions=len(data.per_query) * len(data.ns))
    z = ev.z
    statuses, sides = [], []
    for b, per_n in enumerate(data.per_query):
        L, R, ratios = [], [], []
        for n, P in zip(data.ns, per_n):
            lhs = P.dev_sq[f]
            rhs = bound(P, f)
            ratio, se = ratio_and_se(lhs, rhs)
            d = decide_upper(ratio - z * se, ratio + z * se, 1.0, max_width=BOUND_MAX_WIDTH)
            ev.decide(f"query {b + 1} (q={float(inst.q[b]):.2f}), n={n}: Var₋ᵢf / bound", d, value=ratio, say=False)
            statuses.append(d.status)
            ratios.append((ratio, se))
            L.append(mean_and_se(lhs))
            R.append(mean_and_se(rhs))
        sides.append((np.array(L, float), np.array(R, float)))
        ev.say(f"query {b + 1}: Var/bound = " + ", ".join(f"{q:.2f}±{z * se:.2f}" for q, se in ratios))
    if ev.plots:
        ev.figure("Gaussian Poincaré inequality, both sides by Monte Carlo", _inequality_plot(lemma, bound, data.ns,
                                                                                             sides, z),
                  "Same draws for both sides (sample variance and autograd gradient norms), ±z SE bars, "
                  "Bonferroni over the cells.")
    return ev.outcome(summary_prefix=f"{statuses.count('pass')}/{len(statuses)} (query, n) cells satisfy "
                      f"Var₋ᵢ f ≤ bound (whole interval below it, no tolerance); {statuses.count('fail')} violated, "
                      f"{statuses.count('inconclusive')} undecided | ",
                      ns=data.ns, n_draws=data.n_draws, bound=bound.__name__)


def _inequality_plot(lemma, bound, ns, sides, z):
    fig, ax = new_figure()
    x = np.array(ns, float)
    for b, (L, R) in enumerate(sides):
        h = ax.errorbar(x, L[:, 0], yerr=z * L[:, 1], fmt="o", capsize=3, label=f"Var₋ᵢ f, query {b + 1}")
        ax.errorbar(x, R[:, 0], yerr=z * R[:, 1], fmt="s--", capsize=3, color=h[0].get_color(), mfc="none",
                    label=f"bound, query {b + 1}")
    n_axes(ax, ns, logy=True)
    ax.set_xlabel("context size n")
    name = _BOUND_NAME.get(bound, bound.__name__)
    ax.set_title(f"{lemma}: Var₋ᵢ f (filled) vs {name} (open)", fontsize=8)
    ax.legend(loc="best", fontsize=7)
    return fig


# ---------------------------------------------------------------------------
# 2. O(1/n): the derived leading constant
# ---------------------------------------------------------------------------

def derived_constants(lemma: str, inst, limits=tilted_limits) -> np.ndarray:
    """``lim n' Var_{-i} f`` from ``limits`` (technical_lemmas' constants; for the weights ``n' E sum_j s_j^2 - 1``,
    i.e. ``e^q - 1``, and 0 for the uniform weights of ``untilted_limits``)."""
    lim = limits(inst.K, inst.Sigma, inst.xq)
    if FUNC[lemma] == "weights":  # Var_{-i} (s_j)_j = E sum_j s_j^2 - 1/n' (exchangeability)
        return (lim["ss"] - 1).numpy()
    return lim[LIMIT_KEY[FUNC[lemma]]].numpy()


def variance_draws(row: mo.RowStats, f: str) -> torch.Tensor:
    r"""Per draw (N, Q): ``||f_k - fbar||^2 N/(N-1)`` (mean: unbiased ``Var_{-i} f``) from the rows of A.L9.

    For the weight vector, exchangeability gives ``E s_j = 1/n'`` exactly, so
    ``Var_{-i} (s_ij)_j = E sum_j s_ij^2 - 1/n'`` and the draws are ``sum_j s_ij^2 - 1/n'``.
    """
    if f == "weights":
        return row.ss - 1 / (row.n - 1)
    v = {"xbar": row.xbar, "outer": (row.xbar.unsqueeze(-1) * row.xbar.unsqueeze(-2)).flatten(-2),
         "M2": row.M2.flatten(-2)}[f]
    N = v.shape[0]
    return (v - v.mean(0)).pow(2).sum(-1) * (N / (N - 1))


def check_one_over_n(ctx: Context, rows, data: PoincareData, lemma: str, limits=tilted_limits) -> Outcome:
    """n' Var_{-i} f from the (cheaper, larger) Monte Carlo rows shared with A.L9 (no gradients needed for this side)
    against the derived constant from ``limits`` (the control passes ``untilted_limits``); the bound's own 1/n constant
    from the paired draws ``data``, reported."""
    inst = rows.inst
    f = FUNC[lemma]
    Q = inst.q.shape[0]
    ev = Evidence(ctx, decisions=Q)
    m = np.array([n - 1 for n in rows.ns], float)[:, None]
    draws = [variance_draws(r, f) for r in rows.rows]
    y = m * np.array([v.mean(0).numpy() for v in draws])
    se = m * np.array([(v.std(0) / math.sqrt(v.shape[0])).numpy() for v in draws])
    targets = derived_constants(lemma, inst, limits)
    alternatives = {name: derived_constants(lemma, inst, f) for name, f in ALTERNATIVE_LIMITS.items()}
    labels = [f"query {b + 1} (q={float(inst.q[b]):.2f}): n'·Var₋ᵢ f" for b in range(Q)]
    limit_decisions(ev, rows.ns, y, se, targets, labels, alternatives=alternatives)
    # the bound's own 1/n constant, for the record
    mp = np.array([n - 1 for n in data.ns], float)
    for b, per_n in enumerate(data.per_query):
        yr = np.array([mp[i] * float(poincare_bound(per_n[i], f).mean()) for i in range(len(data.ns))])
        sr = np.array([mp[i] * float(poincare_bound(per_n[i], f).std()) / math.sqrt(data.n_draws)
                       for i in range(len(data.ns))])
        fit = mo.limit_fit(mp, yr, sr)
        lo, hi = fit.interval(0, ev.z)
        ev.measure(f"query {b + 1}: fitted limit of n'·(Poincaré bound)", float(fit.coef[0]), lo=lo, hi=hi)
    if ev.plots:
        ev.figure(f"{lemma}: n'·Var₋ᵢ f → derived constant",
                  limit_plot(rows.ns, y, se, targets, labels, ev.z, "n' × Var₋ᵢ f"),
                  "Scaled conditional variance (sample variance over the A.L9 rows) with ±z SE bars; "
                  "dashed: the derived constant.")
    return ev.outcome(headline=headline(ev, "fitted limit of n'·Var₋ᵢ f"), ns=rows.ns, n_draws=rows.n_draws,
                      limits=limits.__name__)


# ---------------------------------------------------------------------------
# 3. The claims
# ---------------------------------------------------------------------------

_F_TEX = {
    "A.L10": r"(s_{ij})_{j\ne i}",
    "A.L14": r"\bar x_i=\textstyle\sum_{j\ne i}s_{ij}x_j",
    "A.L19": r"\bar x_i\bar x_i^\top",
    "A.L23": r"\textstyle\sum_{j\ne i}s_{ij}x_jx_j^\top",
}
_TITLES = {
    "A.L10": "Poincaré bound: conditional variance of the softmax weights",
    "A.L14": "Poincaré bound: conditional variance of x̄ᵢ",
    "A.L19": "Poincaré bound: conditional variance of x̄ᵢx̄ᵢᵀ",
    "A.L23": "Poincaré bound: conditional variance of Σⱼ sᵢⱼ xⱼxⱼᵀ",
}


def _at_instance(**params) -> dict[str, dict]:
    """Each check's fixtures at the lemma instance ``lemma_instance.bind(**params)``."""
    inst = lemma_instance.bind(**params)
    data = poincare_data.bind(inst=inst)
    return {"poincare-inequality": {"data": data}, "one-over-n": {"rows": row_data.bind(inst=inst), "data": data}}


def _claim(lemma: str) -> Claim:
    st = (r"\operatorname{Var}_{-i}f\le\sum_{j\ne i}\mathbb{E}_{-i}\left\|\nabla_{x_j}f\right\|_\Sigma^2=O\!\left("
          r"\frac{1}{n}\right),\quad f=" + _F_TEX[lemma])
    return Claim(
        id=lemma, title=_TITLES[lemma], statement=st, fidelity="reconstructed",
        fidelity_note=("Spec: exact (method), reconstructed (terms); labelled reconstructed because the statement "
                       "as a whole depends on the terms. The Gaussian Poincaré inequality with the "
                       "Σ-weighted gradient norm is the seed's method; which function each lemma bounds is our "
                       "reading of Appendix D's section titles and proof words, and the O(1/n) constant is our "
                       "derivation (the paper's constants are lost)."),
        assumptions=(A1, a3("‖B‖op = 0.35 at the lemma instance; x_j ~ N(0, Σ) iid given the fixed query x_i")),
        checks=(
            Check("poincare-inequality", "numeric", "Var₋ᵢ f ≤ Σⱼ E‖∇_{x_j} f‖²_Σ, both sides by paired Monte "
                  "Carlo (autograd for the gradients), two queries, n = 8..32 (quick), 8..128 (standard)",
                  check_inequality, params={"lemma": lemma}, uses={"data": poincare_data}, evidence="implementation",
                  by_algebra="the Gaussian Poincaré inequality is a textbook theorem: both sides estimated from our "
                             "f and its autograd gradients can break it only through our code or the Monte Carlo"),
            Check("one-over-n", "numeric", "n'·Var₋ᵢ f → derived constant (fitted a + b/n' + c/n'² + d/n'³, n = 8..256)",
                  check_one_over_n, params={"lemma": lemma}, uses={"rows": row_data, "data": poincare_data}),
        ),
        controls=(
            Control("softmax frozen in the Jacobian", "poincare-inequality", "Σⱼ E‖∇_{x_j} f‖²_Σ with the weights sᵢⱼ "
                    "treated as constants (the chain rule through the softmax dropped); run on every lemma. Where it "
                    "is not rejected the frozen right side is itself an upper bound on the variance here, so the "
                    "inequality cannot tell a frozen softmax from the true one (a limitation of this evidence)",
                    {"bound": frozen_softmax_bound}),
            Control("Σ weight dropped", "poincare-inequality", "Σⱼ E‖∇_{x_j} f‖²_F (identity weight). The lemma is "
                    "invariant under Σ → cΣ, K → K/c (x → √c x: every score and weight unchanged, both sides covariant), "
                    "so the scale of Σ is a gauge of the claim; the mutant breaks it (‖J‖_F² scales as 1/c against "
                    "tr(JΣJᵀ)) and under-weights every direction exactly where Σ > I, which the shared instance's "
                    "Σ ≥ 2I is (where Σ ≤ I it over-weights: a looser bound no upper-bound check can reject)",
                    {"bound": identity_weighted_bound}),
            Control("tilt factor dropped", "one-over-n", "the derived constant without e^q (for the weights: the "
                    "uniform-weight value 0)", {"limits": untilted_limits}),
        ),
        # the inequality's own cells (POINCARE_NS) are no choice: the inequality is a theorem at every n
        free_choices=instance_choices(_at_instance, lambda ns: {"one-over-n": {"rows": row_data.bind(ns=ns)}}),
    )


CLAIMS = [_claim(L) for L in ("A.L10", "A.L14", "A.L19", "A.L23")]
