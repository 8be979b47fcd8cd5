r"""A.L9 — conditional moments of the leave-one-out softmax weights (Goel et al. 2026, Lemma 9).

Setting.  Fix the query ``x_i``; the other ``n' = n - 1`` covariates ``x_j ~ N(0, Sigma)`` are iid, scores
``a_ij = x_i^T K x_j``, weights ``s_ij = e^{a_ij} / sum_{k != i} e^{a_ik}``.  Given ``x_i``, ``a_ij ~ N(0, q_i)`` with
``q_i = x_i^T K Sigma K^T x_i = ||Sigma^{1/2} K^T x_i||^2``, and ``E e^{t a_ij} = e^{t^2 q_i / 2}``.

Statement (reconstructed; the source text keeps the proof's words "AM-GM", "independent", "numerical fact").

    (i)  E_{-i} sum_j s_ij^2        <= e^{2 q_i (1 - 1/n')} / n'                       <= e^{2 q_i} / n'
    (ii) E_{-i} (sum_j s_ij^2)^2    <= [e^{8 q_i (1-1/n')} + (n'-1) e^{4 q_i (1-2/n')}] / n'^3
                                    <= e^{4 q_i}/n'^2 + e^{8 q_i}/n'^3

so both are O(1/n) resp. O(1/n^2), with constants that are Gaussian exponential moments; averaged over
the query, ``E e^{2 q} = det(I - 4 Sigma^{1/2} K Sigma K^T Sigma^{1/2})^{-1/2}``, finite iff ``||B||_op^2 < 1/4``
(Lemma 7).  Which second inequality the paper states is lost; (ii) is the one its later proofs need (the
Cauchy-Schwarz steps of Lemmas 14, 19, 23 pair ``sum_j s_ij^2`` with ``max_j ||x_j||^2``).

Derivation.  AM-GM on the denominator: ``sum_k e^{a_ik} >= n' exp(abar_i)``, ``abar_i = (1/n') sum_k a_ik``, so
``s_ij <= exp(a_ij - abar_i) / n'``.  For (i), ``2(a_ij - abar_i) = 2(1 - 1/n') a_ij - (2/n') sum_{k != j} a_ik``
is a sum of independent Gaussian scores, and
``E_{-i} exp(...) = exp(q_i/2 [(2 - 2/n')^2 + (n'-1)(2/n')^2]) = exp(2 q_i (1 - 1/n'))``.  For (ii), expand
``(sum_j e^{2(a_ij - abar)})^2`` into ``n'`` diagonal terms with exponent coefficients ``(4 - 4/n', -4/n', ...)`` and
``n'(n'-1)`` off-diagonal terms with ``(2 - 4/n', 2 - 4/n', -4/n', ...)``; the quadratic forms are
``16 - 16/n'`` and ``8 - 16/n'`` (sympy, below).

Asymptotics (ours).  By the delta method on ``sum_j w_j^2 / (sum_j w_j)^2`` (``w_j = e^{a_ij}``):
``n' E_{-i} sum_j s_ij^2 -> E w^2 / (E w)^2 = e^{q_i}`` and ``n'^2 E_{-i} (sum_j s_ij^2)^2 -> e^{2 q_i}``: the AM-GM
constants are loose by the factor ``e^{q_i}`` (reported as tightness).

Evidence: (1) symbolic: the exponent algebra for general ``n'`` and the Gaussian moment generating function; (2)
numeric: Monte Carlo of both moments at two queries and n = 8..256 against the bounds, with no tolerance: a cell
passes when its whole confidence interval lies below the bound, fails when it lies above, and is undecided otherwise
(a tolerance would pass a bound exceeded by it); (3) numeric: the fitted limit of ``n' x`` (i) against
``e^{q}`` (fit ``a + b/n' + c/n'^2 + d/n'^3``, ``decisions.LIMIT_ORDER``), inside half the distance to 1, the
limit without the tilt factor (the uniform weights' value, the control's), with the fit model's own truncation
error reported beside it: ``n' E sum_j s_j^2`` depends on ``q`` alone and has an exact one-dimensional integral
(``1/S^2 = int t e^{-tS} dt``, ``moments.scaled_ss_exact``), so the same fit applied to the exact finite-n values
shows how far the omitted terms move the fitted limit (at q = 0.6: -0.0033 for two correction terms, 2.3 quick
standard errors, which made quick seed 2 miss; -0.0007 for three); ``n'^2 x`` (ii) is reported against ``e^{2q}`` but not decided (``DECIDED_LIMITS``): its expansion in
``1/n'`` has coefficients growing like ``e^{4kq}`` (order ``k`` needs ``E w^{2k+2}``; e.g. the third-order term is
~``e^{24 q}/n'^3``, 7 at n = 64 for q = 0.6), and at the standard tier a polynomial extrapolation landed 4.9
standard errors above ``e^{2q}`` although the value at n = 256 (3.318 +- 0.007) is already at it (3.320).  Diagnosis
of that miss: the extrapolation model, not a bug and not the estimator (``sum_j s_ij^2`` lies in ``[1/n', 1]``, so
its Monte Carlo error bar is honest); the limit ``e^{2q}`` is our tightness derivation, not the paper's claim, whose
bound (ii) is decided in (2).  Controls: the bounds at the score variance with ``Sigma`` dropped
(``q = ||K^T x_i||^2``, :func:`query_scale_without_sigma`, an implementation error of the one quantity through which
the data model enters the bound; it understates ``q`` where ``Sigma > I``, as on the shared instance, ``Sigma >= 2I``:
see the control's description for why that is not a favourable choice but a gauge),
the limits without the tilt factor (uniform weights; ``coefficients.untilted_limits``), and a wrong exponent count
in the symbolic step (:func:`all_scores`).

Probe: hypothesis draws ``d <= 4``, ``Sigma``, the query's tilt ``mu = Sigma K^T x_i`` (``q`` up to 3), ``n`` from 2
to 2^20 and the context law (``row_setups.row_probe_instances``: Gaussian, or a scale mixture of Gaussians with the
same covariance, crossing A1; ``||B||_op`` on both sides of A3's 1/2, where the averaged constant ``E e^{2q}`` becomes
infinite) and decides both bounds at the drawn ``n`` exactly: ``E_{-i} sum_j s_ij^2`` and ``E_{-i}(sum_j s_ij^2)^2``
by quadrature (``row_setups.RowQuadrature``), no Monte Carlo.  Inside the assumptions no instance may exceed a bound;
outside A1 the Gaussian moment generating function behind the bounds no longer holds: a scale mixture exceeds them
where its spread, ``q`` and ``n`` are all large (spread 0.9 at ``q = 1.5`` from ``n ~ 10^4``), which the parameter
plot locates.  Control: the bounds at the score variance with ``Sigma`` dropped.

The lemma instance and the Monte Carlo rows are fixtures shared with A.L10-A.L23
(``row_setups``).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch

from numerics.paper_a import moments as mo
from numerics.stats import decide_lower
from theorems.claim import Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.evidence import Evidence
from theorems.paper_a.assumptions import A1, a3
from theorems.paper_a.displays import primed
from theorems.paper_a.softmax_bias.coefficients import ALTERNATIVE_LIMITS, tilted_limits, untilted_limits
from theorems.paper_a.softmax_bias.decisions import LIMIT_ORDER, limit_decisions, limit_plot, n_axes
from theorems.paper_a.softmax_bias.row_setups import (QUERY_Q, ROW_NS, RowQuadrature, doublings, lemma_instance,
                                                      row_data, row_geometry, row_probe_assumptions,
                                                      row_probe_describe, row_probe_instances, row_probe_parameters,
                                                      row_probe_setup)
from theorems.plots import new_figure
from theorems.probe import probe
from theorems.symbolic import Derivation

ID = "A.L9"
STATEMENT = (
    r"\mathbb{E}_{-i}\sum_{j\ne i}s_{ij}^2\le\frac{e^{2q_i(1-1/n')}}{n'},\qquad"
    r"\mathbb{E}_{-i}\Big(\sum_{j\ne i}s_{ij}^2\Big)^2\le\frac{e^{8q_i(1-1/n')}+(n'-1)e^{4q_i(1-2/n')}}{n'^3},"
    r"\qquad q_i=x_i^\top K\Sigma K^\top x_i,\ n'=n-1"
)
TITLE = "Conditional moments of softmax weights"
FIDELITY_NOTE = (
    "Reconstructed. The source text keeps the proof's words (AM-GM on the denominator, independence "
    "of the scores, a numerical fact); the formulas are ours. The second inequality (a bound on the "
    "second moment of Σⱼs²ᵢⱼ) is our reading of 'the second inequality' from how Lemmas 14, 19, 23 "
    "use Lemma 9 after Cauchy-Schwarz. The limits e^q, e^{2q} (tightness) are our derivation."
)

#: a bound holds at a cell's confidence once the cell's whole interval lies below it; a wide interval below the bound
#: is still a pass (one-sided claim), one that straddles it is undecided: no width limit, no tolerance
BOUND_MAX_WIDTH = math.inf
#: the limits decided by the tightness check: (i) only; (ii)'s is reported (see the ledger)
DECIDED_LIMITS = ("ss",)
#: findings of this claim (``verify readme`` lists them)
FINDINGS = (
    "The AM-GM bounds hold with room: their constants e^{2q}, e^{4q} exceed the limits e^q, e^{2q} of n'·E Σs² and "
    "n'²·E(Σs²)² by the factor e^q (the first limit decided, the second reported).",
    "n'·E Σs² approaches e^q slowly at q = 0.6 (exact by quadrature: 1.807 at n = 256, 1.818 at n = 1024, against "
    "1.822), so a fit a + b/n' + c/n'² over n = 8..256 undershoots the limit by 0.0033, 2.3 quick standard errors "
    "(quick seed 2 missed with it); with the d/n'³ term the fit model's own error is 0.0007, reported in the record.",
)


# ---------------------------------------------------------------------------
# 1. Symbolic derivation, and the bounds it derives
# ---------------------------------------------------------------------------

def other_scores(m):
    """How many scores besides ``a_j`` the AM-GM exponent sums over: ``n' - 1``."""
    return m - 1


def all_scores(m):
    """Wrong on purpose (control): the other scores counted over ``n'`` terms instead of ``n' - 1``."""
    return m


def symbolic_derivation(others=other_scores) -> Outcome:
    """The Gaussian mgf and the exponent algebra of the AM-GM bounds, the other scores counted by ``others(n')``
    (the control passes :func:`all_scores`)."""
    D = Derivation()
    m = sp.Symbol("n'", positive=True)
    t, q = sp.symbols("t q", positive=True)
    a = sp.Symbol("a", real=True)
    mgf = sp.integrate(sp.exp(t * a) * sp.exp(-a**2 / (2 * q)), (a, -sp.oo, sp.oo)) / sp.sqrt(2 * sp.pi * q)
    mgf_shown = sp.Integral(sp.exp(t * a) * sp.exp(-a**2 / (2 * q)) / sp.sqrt(2 * sp.pi * q), (a, -sp.oo, sp.oo))
    D.prove_equal("Gaussian score a ~ N(0, q): E e^{t a} = e^{t² q / 2}", sp.simplify(mgf), sp.exp(t**2 * q / 2),
                  shown=sp.Eq(mgf_shown, sp.exp(t**2 * q / 2), evaluate=False))
    D.say("AM-GM: Σ_k e^{a_k} ≥ n' e^{ā}, so s_j ≤ e^{a_j − ā}/n', and the exponent is a sum of independent scores.")
    others = others(m)
    quad_i = (2 - 2 / m) ** 2 + others * (2 / m) ** 2
    np_ = primed("n", positive=True)  # n' in the displays

    def show(lhs, rhs):
        return sp.Eq(lhs.subs(m, np_), rhs.subs(m, np_), evaluate=False)

    D.prove_equal("(i): ½·[(2 − 2/n')² + (n'−1)(2/n')²] q = 2q(1 − 1/n')",
                  quad_i * q / 2, 2 * q * (1 - 1 / m), shown=show(quad_i * q / 2, 2 * q * (1 - 1 / m)))
    quad_diag = (4 - 4 / m) ** 2 + (others) * (4 / m) ** 2
    quad_off = 2 * (2 - 4 / m) ** 2 + (others - 1) * (4 / m) ** 2
    D.prove_equal("(ii) diagonal terms: ½·[(4 − 4/n')² + (n'−1)(4/n')²] q = 8q(1 − 1/n')",
                  quad_diag * q / 2, 8 * q * (1 - 1 / m), shown=show(quad_diag * q / 2, 8 * q * (1 - 1 / m)))
    D.prove_equal("(ii) off-diagonal terms: ½·[2(2 − 4/n')² + (n'−2)(4/n')²] q = 4q(1 − 2/n')",
                  quad_off * q / 2, 4 * q * (1 - 2 / m), shown=show(quad_off * q / 2, 4 * q * (1 - 2 / m)))
    D.say("Summing: (i) ≤ n'·e^{2q(1−1/n')}/n'², (ii) ≤ [n' e^{8q(1−1/n')} + n'(n'−1) e^{4q(1−2/n')}]/n'⁴.")
    return D.outcome("AM-GM bounds of Lemma 9 derived")


def amgm_bounds(q: torch.Tensor, n: int) -> dict[str, torch.Tensor]:
    r"""The AM-GM bounds derived above at query scale ``q`` (``n' = n - 1``):

    ``E_{-i} sum_j s_ij^2 <= e^{2q(1 - 1/n')} / n'`` and
    ``E_{-i} (sum_j s_ij^2)^2 <= [e^{8q(1-1/n')} + (n'-1) e^{4q(1-2/n')}] / n'^3``.
    """
    m = n - 1
    return {
        "ss": torch.exp(2 * q * (1 - 1 / m)) / m,
        "ss2": (torch.exp(8 * q * (1 - 1 / m)) + (m - 1) * torch.exp(4 * q * (1 - 2 / m))) / m**3,
    }


# ---------------------------------------------------------------------------
# 2. Numeric: the bounds hold
# ---------------------------------------------------------------------------

def query_scale_without_sigma(K: torch.Tensor, Sigma: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
    """Wrong on purpose (control): the score variance with ``Sigma`` dropped, ``q = ||K^T x_i||^2`` (the variance of
    ``x_i^T K x_j`` if ``x_j ~ N(0, I)``), in place of ``q = ||Sigma^{1/2} K^T x_i||^2`` (``moments.query_scale``)."""
    a = xq @ K
    return (a * a).sum(-1)


def _moments(rows):
    """Per n: means and SEs of sum s^2 and (sum s^2)^2, arrays (len(ns), Q)."""
    out = {"ss": ([], []), "ss2": ([], [])}
    for r in rows:
        for key, v in (("ss", r.ss), ("ss2", r.ss.pow(2))):
            out[key][0].append(v.mean(0).numpy())
            out[key][1].append((v.std(0) / math.sqrt(v.shape[0])).numpy())
    return {k: (np.array(a), np.array(b)) for k, (a, b) in out.items()}


def check_bounds(ctx: Context, data, scale=mo.query_scale) -> Outcome:
    """Per (n, moment, query) cell: the relative margin ``(bound − E)/bound`` of the Monte Carlo mean is ``>= 0``
    (``decide_lower``, no tolerance), the bounds :func:`amgm_bounds` at the query scale ``q = scale(K, Sigma, x_i)``
    (the control passes :func:`query_scale_without_sigma`: ``Sigma`` dropped from the score variance)."""
    mom = _moments(data.rows)
    q = scale(data.inst.K, data.inst.Sigma, data.inst.xq)
    Q = q.shape[0]
    ev = Evidence(ctx, decisions=2 * Q * len(data.ns))
    statuses, bounds_by_cell = [], {}
    for i, n in enumerate(data.ns):
        at_n = amgm_bounds(q, n)
        for key in ("ss", "ss2"):
            for b in range(Q):
                bound = float(at_n[key][b])
                margin, h = (bound - float(mom[key][0][i, b])) / bound, ev.z * float(mom[key][1][i, b]) / bound
                d = decide_lower(margin - h, margin + h, 0.0, max_width=BOUND_MAX_WIDTH)
                ev.decide(f"{key}, query {b + 1} (q={float(q[b]):.2f}), n={n}: relative margin "
                          "(bound − E)/bound", d, say=False, measure=n == data.ns[-1] or d.status != "pass")
                statuses.append(d.status)
                bounds_by_cell.setdefault((key, b), []).append(bound)
    if ev.plots:
        fig, ax = new_figure()
        ns = np.array(data.ns, float)
        for key, lab in (("ss", "E Σs²"), ("ss2", "E (Σs²)²")):
            for b in range(Q):
                h = ax.errorbar(ns, mom[key][0][:, b], yerr=ev.z * mom[key][1][:, b], fmt="o", capsize=2,
                                label=f"{lab}, q={float(q[b]):.2f}")
                ax.plot(ns, bounds_by_cell[(key, b)], "--", color=h[0].get_color(), lw=0.8)
        n_axes(ax, data.ns, logy=True)
        ax.set_xlabel("context size n")
        ax.set_title("points: Monte Carlo; dashed: AM-GM bound", fontsize=8)
        ax.legend(loc="best", fontsize=7)
        ev.figure("Softmax-weight moments vs Lemma 9's AM-GM bounds", fig,
                  "Monte Carlo means with ±z SE bars (Bonferroni over all cells) and the bounds.")
    margins = [(m.value, m.lo) for m in ev.measurements]
    ev.say(f"{statuses.count('pass')}/{len(statuses)} (query, n, moment) cells satisfy the bound (whole interval "
           f"below it, no tolerance); {statuses.count('fail')} violated, {statuses.count('inconclusive')} undecided"
           + (f"; smallest recorded margin's lower end {min(lo for _, lo in margins):.3g}" if margins else ""))
    return ev.outcome(ns=data.ns, q=q.tolist(), n_draws=data.n_draws, scale=scale.__name__)


# ---------------------------------------------------------------------------
# 3. Numeric: leading constants (tightness)
# ---------------------------------------------------------------------------

def check_limits(ctx: Context, data, limits=tilted_limits) -> Outcome:
    """n'·E Σs² → e^q (decided per query); n'²·E(Σs²)² vs e^{2q} reported; the limits from ``limits`` (the control
    passes ``untilted_limits``: limits 1)."""
    mom = _moments(data.rows)
    lim = limits(data.inst.K, data.inst.Sigma, data.inst.xq)
    Q = data.inst.q.shape[0]
    ev = Evidence(ctx, decisions=Q)
    z = ev.z
    m = np.array([n - 1 for n in data.ns], float)[:, None]
    y = np.concatenate([m * mom["ss"][0], m**2 * mom["ss2"][0]], 1)
    se = np.concatenate([m * mom["ss"][1], m**2 * mom["ss2"][1]], 1)
    targets = np.concatenate([lim["ss"].numpy(), lim["ss2"].numpy()])
    qs = [f"{float(v):.2f}" for v in data.inst.q]
    labels = [f"n'·E Σs², q={v}" for v in qs] + [f"n'²·E (Σs²)², q={v}" for v in qs]
    # (i) is decided; (ii) is reported only (DECIDED_LIMITS): its 1/n' expansion has coefficients growing like
    # e^{4kq} (the k-th order needs E w^{2k+2}), so at q = 0.6 no polynomial in 1/n' describes n <= 256 (see docstring)
    assert DECIDED_LIMITS == ("ss",)
    # the margin: half the distance to the nearest of ALTERNATIVE_LIMITS other than the target (the constant without
    # the tilt factor, 1; or, in the control, the derived e^q)
    alternatives = {name: f(data.inst.K, data.inst.Sigma, data.inst.xq)["ss"].numpy()
                    for name, f in ALTERNATIVE_LIMITS.items()}
    limit_decisions(ev, data.ns, y[:, :Q], se[:, :Q], targets[:Q], labels[:Q], alternatives=alternatives)
    for b in range(Q):  # the fit model's own truncation error, from the exact finite-n values (q alone decides them)
        qb = float(data.inst.q[b])
        exact = np.array([mo.scaled_ss_exact(qb, n - 1) for n in data.ns])
        fx = mo.limit_fit(m[:, 0], exact, se[:, b], LIMIT_ORDER)
        trunc, sd = float(fx.coef[0]) - math.exp(qb), float(fx.se[0])
        ev.measure(f"truncation of the fit model at q={qs[b]}: fit of the exact n'·E Σs² (quadrature) − e^q "
                   "[reported]", trunc, claimed=f"{trunc / sd:+.2f} of the fit's standard error")
        ev.say(f"fit model's truncation at q={qs[b]} (its fit to the exact finite-n values, quadrature): "
               f"{trunc:+.2g} = {trunc / sd:+.2f} SE; largest Monte Carlo deviation from the exact values: "
               f"{np.max(np.abs(y[:, b] - exact) / se[:, b]):.1f} SE")
    for col in range(Q, 2 * Q):
        ev.measure(labels[col] + " [reported, not decided]", float(y[-1, col]),
                   claimed=f"→ {targets[col]:.4g} (derived limit); value at n = {data.ns[-1]}",
                   lo=float(y[-1, col] - z * se[-1, col]), hi=float(y[-1, col] + z * se[-1, col]))
        ev.say(f"{labels[col]} at n={data.ns[-1]}: {y[-1, col]:.4g} ± {z * se[-1, col]:.2g} "
               f"(limit {targets[col]:.4g}; reported)")
    for b in range(Q):
        ev.measure(f"tightness of (i) at q={qs[b]}: bound constant e^{{2q}} / limit e^q",
                   float(math.exp(float(data.inst.q[b]))))
    M = data.inst.K @ data.inst.Sigma @ data.inst.K.T
    ev.measure("averaged constant E_x e^{2q(x)} = det(I − 4Σ^{1/2}KΣKᵀΣ^{1/2})^{-1/2}",
               float(mo.exp_quadratic_moment(2 * M, data.inst.Sigma)), claimed="finite iff ‖B‖op² < 1/4")
    if ev.plots:
        ev.figure("Scaled moments → e^q, e^{2q}",
                  limit_plot(data.ns, y, se, targets, labels, z, "scaled moment"),
                  "n'·E Σs² (decided: the fitted a + b/n' + c/n'² + d/n'³ must reach the dashed e^q) and n'²·E(Σs²)² "
                  "(reported; dashed: e^{2q}), ±z SE bars.")
    return ev.outcome(ns=data.ns, limits=limits.__name__)


# ---------------------------------------------------------------------------
# 4. Probe: both bounds at the drawn n, exactly
# ---------------------------------------------------------------------------

#: the context sizes the probe draws n from (log-uniform): from n = 2 (n' = 1, where both bounds hold with equality)
#: to 2^20 (the bounds hold at every n; the quadrature's cost does not depend on n, and a scale mixture's moments
#: approach their limits slowly, so they exceed the Gaussian bounds only from n ~ 10^4 on)
PROBE_NS = (2, 2**20)
#: a bound holds up to the quadrature's rounding: RowQuadrature reproduces moments.scaled_ss_exact to 2e-12 relative,
#: and at n' = 1 (s = 1) value and bound are both exactly 1
PROBE_ROUNDING = 1e-9
#: probe examples at quick / standard / full; each is exact (one quadrature, about 10 ms)
PROBE_EXAMPLES = (24, 100, 300)
#: at least 8 instances decided inside both assumptions: about half the examples are drawn there (row_setups'
#: ROW_PROBE_DRAW), and none is undecided (exact)
PROBE_MIN_DECIDED = 8


def probe_conclusion(inst, alpha_each, scale=mo.query_scale):
    """Both AM-GM bounds (:func:`amgm_bounds` at ``q = scale(K, Sigma, x_i)``; the control passes
    :func:`query_scale_without_sigma`) hold at the drawn ``n`` for the exact moments of the drawn context law (no
    Monte Carlo: ``alpha_each`` is unused)."""
    setup = row_probe_setup(inst)
    geo = row_geometry(setup.K, setup.Sigma, setup.xq, setup.law)
    quad, m = RowQuadrature(geo.q, geo.law), inst["n"] - 1
    exact = {"ss": float(quad.moment(((2, "1"),), [m])[0]), "ss2": float(quad.moment(((2, "1"), (2, "1")), [m])[0])}
    bounds = {k: float(v[0]) for k, v in amgm_bounds(scale(setup.K, setup.Sigma, setup.xq), inst["n"]).items()}
    over = [k for k in exact if not exact[k] <= bounds[k] * (1 + PROBE_ROUNDING)]
    line = "; ".join(f"{name}: {exact[k]:.6g} vs bound {bounds[k]:.6g}" for k, name in
                     (("ss", "E Σs²"), ("ss2", "E (Σs²)²")))
    return not over, "decided", (f"n = {inst['n']}, q = {geo.q:.4g}: " + line
                                 + (f" ({', '.join(over)} exceeded)" if over else ""))


# ---------------------------------------------------------------------------
# 5. The claim
# ---------------------------------------------------------------------------

CLAIM = Claim(
    id=ID, title=TITLE, statement=STATEMENT, fidelity="reconstructed", fidelity_note=FIDELITY_NOTE, findings=FINDINGS,
    assumptions=(A1, a3("‖B‖op = 0.35 at the lemma instance (‖B‖op² < 1/4: the averaged constant E e^{2q} is "
                        "finite); x_j ~ N(0, Σ) iid given the fixed query x_i")),
    checks=(Check("derivation", "symbolic", "Gaussian mgf and the exponent algebra of the AM-GM bounds",
                  symbolic_derivation),
            Check("amgm-bounds", "numeric", "Monte Carlo E₋ᵢΣs² and E₋ᵢ(Σs²)² below the bounds (no tolerance) at two "
                  "queries, n = 8..256", check_bounds, uses={"data": row_data}),
            Check("limits", "numeric", "n'·E Σs² → e^q ± (e^q − 1)/2, half the distance to the untilted 1 (fitted a + "
                  "b/n' + c/n'² + d/n'³; the fit's truncation error "
                  "reported from the exact finite-n values); n'²·E(Σs²)² vs e^{2q} reported",
                  check_limits, uses={"data": row_data}),
            probe("Hypothesis over d ≤ 4, Σ, the query's tilt (μ = ΣKᵀxᵢ, q ≤ 3), n = 2..2²⁰ and "
                  "the context law (Gaussian or a scale mixture: A1 crossed; ‖B‖op across A3's 1/2): both AM-GM bounds "
                  "hold for the "
                  "exact moments (quadrature, no Monte Carlo; A3 bounds only the averaged constant E e^{2q}, so a "
                  "fixed query needs none)", strategy=row_probe_instances(PROBE_NS), conclusion=probe_conclusion,
                  examples=PROBE_EXAMPLES, describe=row_probe_describe, assumptions=row_probe_assumptions,
                  parameters=row_probe_parameters, min_decided=PROBE_MIN_DECIDED)),
    controls=(Control("symbolic: off-by-one count", "derivation", "the other scores counted n' times instead of n'−1",
                      {"others": all_scores}),
              Control("score variance without Σ", "amgm-bounds", "the bounds at q = ‖Kᵀxᵢ‖² (Σ dropped from the "
                      "variance of the scores xᵢᵀKxⱼ, as if xⱼ ~ N(0, I)). The lemma is invariant under Σ → cΣ, K → K/c "
                      "(every score unchanged), so the scale of Σ is a gauge of the claim; the mutant breaks it and "
                      "understates q exactly where Σ > I along Kᵀxᵢ, which the shared instance's Σ ≥ 2I is. Where "
                      "Σ ≤ I it overstates q, a looser bound no upper-bound check can reject",
                      {"scale": query_scale_without_sigma}),
              Control("untilted limits", "limits", "limits 1 (uniform weights 1/n', no exponential tilt)",
                      {"limits": untilted_limits}),
              Control("probe: score variance without Σ", "probe", "the bounds at q = ‖Kᵀxᵢ‖²: the probe must find an "
                      "instance (Σ > I along Kᵀxᵢ) whose exact moment exceeds them",
                      {"mutant": {"scale": query_scale_without_sigma}})),
    free_choices=(
        FreeChoice("tilted query q", QUERY_Q[1], "the lemma holds at every query; 0.1-1 spans tilts e^q from 1.1 to "
                   "2.7, up to the 96th percentile of ‖B‖op²·χ²₃ ≥ q for a Gaussian query",
                   {check: (lambda v: {"data": row_data.bind(inst=lemma_instance.bind(query_q=(QUERY_Q[0], v)))})
                    for check in ("amgm-bounds", "limits")}, low=0.1, high=1.0, scale="log"),
        FreeChoice("largest n", ROW_NS[-1], "the limit is extrapolated from n ≤ 256; 128-512 spans a factor 2 either "
                   "side (the four-term fit needs at least 5 context sizes)",
                   {check: (lambda v: {"data": row_data.bind(ns=doublings(v))}) for check in ("amgm-bounds", "limits")},
                   low=128, high=512, scale="log", integer=True),
    ),
)
