r"""A.L6 — least-squares error (Goel, Soltanolkotabi, Bartlett 2026, Lemma 6).

Statement (spec, reconstructed).  With probability at least ``1 - delta``, for ``n`` large enough,

    ||What - W*||_op = O( sigma sqrt((d + log(1/delta)) / n) ).

An explicit version (ours; ``numerics.paper_a.experiments.lstsq_tail_bound``).  ``What - W* = sigma Z R^{-1}`` with
``R R^T = X^T X`` and ``Z`` (r x d) iid N(0, 1) independent of ``X``; so ``||What - W*||_op <= sigma ||Z||_op /
s_min(X)``, and ``s_min(X) >= lam_min(Sigma)^{1/2} s_min(G)`` for ``X = G Sigma^{1/2}``.  Gaussian concentration of the
Lipschitz maps ``||Z||_op`` and ``s_min(G)`` around Gordon's bounds ``E||Z||_op <= sqrt r + sqrt d``,
``E s_min(G) >= sqrt n - sqrt d`` (Vershynin 2010, Cor. 5.35, the seed's reference [14]) gives, with
``t = sqrt(2 log(2/delta))``, each of ``||Z||_op <= sqrt r + sqrt d + t`` and ``s_min(G) >= sqrt n - sqrt d - t``
with probability ``>= 1 - delta/2``.  Hence, with probability ``>= 1 - delta``,

    ||What - W*||_op <= b(n, delta) = sigma (sqrt r + sqrt d + t) / ( sqrt(n lam_min(Sigma)) (1 - (sqrt d + t)/sqrt n) ),

which is ``O(sigma sqrt((r + d + log(1/delta))/n))`` once ``n >> d + log(1/delta)``: the spec's form with ``r ~ d``.
(The seed's proof goes through the maximum norm of the Gaussian noise columns instead; the rate is the same.)

Evidence (exact sampling of ``X^T X``, ``X^T Y``, ``numerics.paper_a.experiments``):

1. *high-probability bound*: at ``n = 50 .. 10^5`` and ``delta = 0.1, 0.01`` the coverage ``P(||What - W*||_op <=
   b(n, delta))`` is estimated from thousands of draws; Clopper-Pearson lower end must be ``>= 1 - delta``.  The ratio
   of the empirical ``(1-delta)``-quantile to ``b`` (tightness) is reported.
2. *scaling of the quantile*: the empirical ``(1-delta)``-quantile (``delta = 0.05``) at ``n = 10^3 .. 10^6`` has
   log-log slope ``-1/2 ± 1/4`` (interval from order-statistic confidence bounds; the margin is half the distance to
   ``-1``, the squared error's rate); the normalized quantile
   ``q / (sigma sqrt((d + log(1/delta))/n))`` for ``delta = 0.1 .. 0.001`` is reported (flat in ``delta`` and ``n``).

What the coverage check can and cannot catch.  Coverage of a conservative (union-bound) bound cannot fail when the
bound is loose, and ours is: the empirical quantile is 0.3-0.5 of ``b`` (the tightness ``q/b``, reported).  So the
coverage check can only catch a bound that is *too small* -- a wrong constant or a missing factor (``sigma``,
``lam_min(Sigma)``; the finite-``n`` factor of ``s_min`` is the control), a faster rate than least squares has, or an
estimator worse than least
squares -- never a loose one.  The lemma's rate content is decided by check 2, whose exponent can fail both ways (the
dropped-``(X^T X)^{-1}`` control levels off at slope 0).  Its control shows how little the coverage check can
catch: the bound derived with ``s_min(X)`` at its population value (Gordon's finite-``n`` factor dropped, the bound
2.7-3.9 times smaller at ``n = 50``) is still covered in every cell at quick seed 0 (the empirical quantile is 0.5-0.6
of that smaller bound at ``n = 50, 300``), so the control is not rejected and the claim is inconclusive: a finding
about the coverage check's power (the union bound's other slack, about 2x, hides a wrong finite-``n`` factor), kept
as such rather than swapped for a mutant that bites.

Negative controls (each re-runs its check with one parameter overridden): (1) the bound derived with ``s_min(X)``
at its population value ``sqrt(n lam_min)`` (``X^T X`` read as ``n Sigma``: Gordon's deviation of ``s_min(G)`` dropped,
``bound_at_population_s_min``), a derivation error that shrinks the bound most at small ``n``; (2) least squares without
``(X^T X)^{-1}`` (``What = Y^T X / n``, a dropped factor, ``least_squares_without_inverse``) estimates ``W* Sigma``:
its error levels off and the slope is 0.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from numerics.paper_a import experiments as ex
from numerics.stats import Margin, decide_binomial, decide_exponent, loglog_slope
from theorems.claim import Assumption, Check, Claim, Context, Control, FreeChoice, Outcome
from theorems.paper_a.assumptions import A1
from theorems.evidence import Evidence
from theorems.paper_a.init_instances import D, NOISE, R, SPECTRAL_SCOPE, instances, n_grid
from theorems.plots import new_figure

ID = "A.L6"

STATEMENT = (
    r"\Pr\Big[\|\hat W-W^*\|_{op}\le b(n,\delta)\Big]\ge1-\delta,\quad "
    r"b(n,\delta)=\frac{\sigma(\sqrt r+\sqrt d+t)}{\sqrt{n\lambda_{\min}(\Sigma)}\,(1-(\sqrt d+t)/\sqrt n)}"
    r"=O\Big(\sigma\sqrt{\tfrac{d+\log(1/\delta)}{n}}\Big),\;t=\sqrt{2\log(2/\delta)}"
)

COVERAGE_NS = [50, 300, 2000, 10**4, 10**5]  # from where b(n, delta) is finite to where least squares is sharp
DELTAS = [0.1, 0.01]  # the failure probabilities whose bounds are tested
#: coverage P >= 1 - delta is decided with max_width = delta (an interval wider than delta cannot tell P >= 1 - delta
#: from P >= 1 - 2 delta; with no bound on the width any interval wholly above 1 - delta would pass)
COVERAGE_WIDTH_PER_DELTA = 1.0
N_INST = (2, 4, 6)  # instances at quick / standard / full
COVERAGE_DRAWS = (3000, 20000, 50000)  # data sets per (instance, delta, n) cell: CP width <= 0.005 when all covered
#: three decades from n = 1000: the quantile's finite-n factor ~ 1/(1 - sqrt(d/n)) biases the exponent by -0.005
#: over 1e2..1e5 (measured, 40000 draws, design generator seed 7: -0.504..-0.506 on 6 instances) and by <= 0.0005
#: over 1e3..1e6 (-0.5001..-0.5005); exact sampling costs the same at every n
SCALING_NS = np.logspace(3, 6, 7).round().astype(int).tolist()
SCALING_DELTA = 0.05  # the quantile whose exponent in n is fitted
SCALING_DRAWS = (4000, 20000, 50000)  # data sets per n: order-statistic SE of the 95% quantile ~1.5%
NORMALIZED_DELTAS = (0.1, 0.01, 0.001)  # deltas of the reported normalized quantile q/(sigma sqrt((d + log 1/delta)/n))
#: the quantile's exponent is -1/2; the nearest rate the claim rules out is -1, the rate of the squared error (an
#: inconsistent estimator, the scaling check's control, levels off at 0, as far on the other side): half the distance
EXPONENT_MARGIN = Margin(0.25, excludes="exponent -1 (the squared error's rate 1/n); half the distance from -1/2")



def least_squares_without_inverse(XtX, XtY, n: int):
    """Negative control: ``What = Y^T X / n``, least squares with ``(X^T X)^{-1}`` dropped (it estimates ``W* Sigma``,
    not ``W*``)."""
    return XtY.mT / n, XtX / n


def ls_errors(Sigma, W, n, draws, gen, least_squares=ex.least_squares_from_statistics):
    """``||What - W*||_op`` of ``draws`` exactly sampled data sets of ``n`` samples; ``least_squares`` maps
    ``(X^T X, X^T Y, n)`` to ``(What, Sigmahat)``."""
    XtX, XtY = ex.sample_statistics(Sigma, W, NOISE, n, draws, gen)
    W_hat, _ = least_squares(XtX, XtY, n)
    return torch.linalg.matrix_norm(W_hat - W, ord=2)


def bound_at_population_s_min(n, delta, d, r, sigma, lam_min):
    """Negative control: :func:`ex.lstsq_tail_bound` with ``s_min(G)`` read as ``sqrt(n)``, its population value
    (``X^T X`` taken as ``n Sigma``): the factor ``1 / (1 - (sqrt d + t)/sqrt n)``, Gordon's deviation of the smallest
    singular value of a Gaussian ``n x d`` matrix below ``sqrt n``, dropped."""
    t = math.sqrt(2 * math.log(2 / delta))
    n = torch.as_tensor(n, dtype=torch.float64)
    return ex.lstsq_tail_bound(n, delta, d, r, sigma, lam_min) * (1 - (math.sqrt(d) + t) / n.sqrt())


# ---------------------------------------------------------------------------
# 1. Coverage of the explicit high-probability bound
# ---------------------------------------------------------------------------

def check_coverage(ctx: Context, bound=ex.lstsq_tail_bound) -> Outcome:
    """``P(||What - W*||_op <= b(n, delta)) >= 1 - delta`` per (instance, delta, n), Clopper-Pearson; ``bound`` is the
    bound ``b(n, delta, d, r, sigma, lam_min)`` (the lemma's, ``lstsq_tail_bound``; control:
    :func:`bound_at_population_s_min`)."""
    b_of = bound
    gen = ctx.generator(ID, "coverage")
    n_inst = ctx.pick(*N_INST)
    draws = ctx.pick(*COVERAGE_DRAWS)
    # one decision per (instance, delta, n) cell; per (delta, n) the worst instance's decides (the rule is monotone
    # in the count), so the status is that of every cell and the recorded interval is the binding one
    ev = Evidence(ctx, decisions=n_inst * len(COVERAGE_NS) * len(DELTAS))
    Sig, Ws = instances(gen, n_inst, ev)
    statuses, worst, tight0 = [], {}, {}
    for i in range(n_inst):
        lam_min = float(torch.linalg.eigvalsh(Sig[i])[0])
        for delta in DELTAS:
            tight = []
            for n in COVERAGE_NS:
                err = ls_errors(Sig[i], Ws[i], n, draws, gen)
                b = float(b_of(n, delta, D, R, NOISE, lam_min))
                k = int((err <= b).sum())
                statuses.append(decide_binomial(k, draws, ev.level, at_least=1 - delta,
                                                max_width=COVERAGE_WIDTH_PER_DELTA * delta).status)
                tight.append(float(torch.quantile(err, 1 - delta)) / b)
                if (delta, n) not in worst or k < worst[(delta, n)]:
                    worst[(delta, n)] = k
            if i == 0:
                tight0[delta] = tight
            ev.measure(f"instance {i + 1}, δ = {delta}: tightness q_(1−δ)/b at n = 1e5", tight[-1], claimed="≤ 1")
    for (delta, n), k in sorted(worst.items()):
        d = decide_binomial(k, draws, ev.level, at_least=1 - delta, max_width=COVERAGE_WIDTH_PER_DELTA * delta)
        ev.decide(f"coverage P(‖Ŵ−W*‖op ≤ b), δ = {delta}, n = {n} (worst instance)", d, value=k / draws,
                  line=f"δ={delta}, n={n}: {k / draws:.4f} [{d.lo:.4f}, {d.hi:.4f}] {d.status}")
    if ev.plots:
        fig, ax = new_figure()
        for delta, tight in tight0.items():
            ax.plot(COVERAGE_NS, tight, "o-", label=f"q_(1−δ) / b(n, δ), δ = {delta}")
        ax.axhline(1, color="k", lw=0.8, ls="--")
        ax.set(xscale="log", xlabel="n", ylabel="empirical quantile / bound", title="instance 1")
        ax.legend(loc="best", fontsize=7)
        ev.figure("Tightness of the explicit Lemma 6 bound", fig,
                  "Empirical (1−δ)-quantile of ‖Ŵ − W*‖op over the bound b(n, δ): below 1 means covered.")
    summary = (f"{statuses.count('pass')}/{len(statuses)} (instance, δ, n) cells covered at ≥ 1−δ "
               f"(Clopper-Pearson, {draws} draws each); {statuses.count('fail')} rejected; min coverage "
               f"{min(worst.values()) / draws:.4f} | ")
    return ev.outcome(summary_prefix=summary, ns=COVERAGE_NS, deltas=DELTAS, draws=draws)


# ---------------------------------------------------------------------------
# 2. Scaling of the quantile in n and delta
# ---------------------------------------------------------------------------

def quantile_with_se(x: torch.Tensor, q: float) -> tuple[float, float]:
    """Empirical quantile and a standard error from the order-statistic (binomial) one-sigma band."""
    xs = np.sort(x.numpy())
    N = len(xs)
    k = q * N
    h = math.sqrt(N * q * (1 - q))
    lo, hi = xs[max(int(k - h), 0)], xs[min(int(math.ceil(k + h)), N - 1)]
    return float(np.quantile(xs, q)), float((hi - lo) / 2)


def check_quantile_scaling(ctx: Context, least_squares=ex.least_squares_from_statistics, ns=SCALING_NS,
                           delta: float = SCALING_DELTA) -> Outcome:
    """Per instance: the exponent of the ``(1 - delta)``-quantile of ``||What - W*||_op`` over the sizes ``ns`` equals
    -1/2; ``least_squares`` is the estimator (control: :func:`least_squares_without_inverse`)."""
    gen = ctx.generator(ID, "quantile-scaling")
    n_inst = ctx.pick(*N_INST)
    draws = ctx.pick(*SCALING_DRAWS)
    ev = Evidence(ctx, decisions=n_inst)
    Sig, Ws = instances(gen, n_inst, ev)
    curves = []
    for i in range(n_inst):
        qs, ses, norm = [], [], {}
        for n in ns:
            err = ls_errors(Sig[i], Ws[i], n, draws, gen, least_squares)
            q, se = quantile_with_se(err, 1 - delta)
            qs.append(q)
            ses.append(se)
            if n == ns[-1]:
                for dl in NORMALIZED_DELTAS:
                    norm[dl] = float(torch.quantile(err, 1 - dl)) / (NOISE * math.sqrt((D + math.log(1 / dl)) / n))
        fit = loglog_slope(ns, qs, ses)
        d = decide_exponent(fit, ev.z, -0.5, margin=EXPONENT_MARGIN)
        ev.decide(f"instance {i + 1}: exponent of the {100 * (1 - delta):g}% quantile of ‖Ŵ−W*‖op in n", d,
                  value=float(fit.coef[1]),
                  line=f"#{i + 1}: slope {fit.coef[1]:.3f} {d}; normalized "
                       "quantile " + ", ".join(f"{v:.2f} (δ={dl})" for dl, v in norm.items()))
        for dl, v in norm.items():
            ev.measure(f"instance {i + 1}: q_(1−δ)/(σ√((d+log 1/δ)/n)), δ = {dl}, n = {ns[-1]:.0e}", v,
                       claimed="O(1), flat in δ")
        curves.append((qs, ses, fit))
    if ev.plots:
        fig, ax = new_figure()
        x = np.array(ns, float)
        for i, (qs, ses, fit) in enumerate(curves):
            h = ax.errorbar(x, qs, yerr=ev.z * np.array(ses), fmt="o", capsize=2, label=f"instance {i + 1}")
            ax.plot(x, np.exp(fit.coef[0]) * x ** fit.coef[1], color=h[0].get_color(), lw=0.8)
        ax.plot(x, NOISE * np.sqrt((D + math.log(1 / delta)) / x), "k--", lw=0.8, label="σ√((d+log 1/δ)/n)")
        ax.set(xscale="log", yscale="log", xlabel="n", ylabel=f"{100 * (1 - delta):g}% quantile of ‖Ŵ − W*‖op",
               title="least squares")
        ax.legend(loc="best", fontsize=7)
        ev.figure("High-probability error of least squares vs n", fig,
                  f"{100 * (1 - delta):g}% quantile from {draws} exactly sampled data sets per n, order-statistic error "
                  "bars, fitted power law; dashed: the claimed envelope shape.")
    return ev.outcome(ns=list(ns), delta=delta, draws=draws, least_squares=least_squares.__name__)


CLAIM = Claim(
    id=ID,
    title="Least-squares error O(σ√((d + log 1/δ)/n)) with probability ≥ 1 − δ",
    statement=STATEMENT,
    fidelity="reconstructed",
    fidelity_note=("The spec reconstructs Lemma 6's rate; the explicit bound b(n, δ) is ours (Gordon's bounds and "
                   "Gaussian concentration, the seed's reference [14]), derived in the module. It carries √r + √d "
                   "where the spec writes d (r ~ d here: d = 4, r = 5). The coverage of this conservative bound can "
                   "only catch a bound that is too small (wrong constant, missing factor, faster rate, worse "
                   "estimator), not a loose one (the tightness q/b is reported); the rate is decided by the quantile "
                   "exponent."),
    assumptions=(A1,
                 Assumption("Gaussian design and noise", "x ~ N(0, Σ), ε ~ N(0, σ² I) independent"), SPECTRAL_SCOPE),
    checks=(
        Check("coverage", "numeric", "P(‖Ŵ−W*‖op ≤ b(n, δ)) ≥ 1 − δ at n = 50..1e5, δ = 0.1, 0.01 (Clopper-Pearson)",
              check_coverage),
        Check("quantile-scaling", "numeric", "Exponent of the 95% quantile in n (= −1/2 ± 1/4: half the distance to the "
              "squared error's −1), normalized quantiles",
              check_quantile_scaling),
    ),
    controls=(
        Control("bound at the population s_min", "coverage", "b(n, δ) with s_min(X) ≥ √(nλ_min(Σ)), XᵀX read as nΣ: "
                "Gordon's deviation √d + t of s_min(G) below √n dropped (a derivation error; it shrinks the bound by "
                "the factor 1 − (√d + t)/√n, 0.26-0.37 at n = 50, 0.94-0.95 at n = 1e4)",
                {"bound": bound_at_population_s_min}),
        Control("least squares without (XᵀX)⁻¹", "quantile-scaling", "Ŵ = YᵀX/n estimates W*Σ: error levels off",
                {"least_squares": least_squares_without_inverse}),
    ),
    free_choices=(
        FreeChoice("smallest n", SCALING_NS[0], "the rate is asymptotic and the paper fixes no n; the grid to 1e6 starts "
                   "from 1e2 to 1e4, a decade either side of ours", {"quantile-scaling": lambda v: {"ns": n_grid(v)}},
                   low=100, high=10_000, scale="log", integer=True),
        FreeChoice("quantile δ", SCALING_DELTA, "the lemma holds for every δ; 0.005-0.2 spans the usual confidence levels "
                   "(at quick's 4000 draws the 99.5% quantile still has 20 beyond it)",
                   {"quantile-scaling": lambda v: {"delta": v}}, low=0.005, high=0.2, scale="log"),
    ),
)
