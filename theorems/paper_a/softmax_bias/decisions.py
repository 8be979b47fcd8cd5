r"""The decision rules and figures shared by paper A's bias laws (A.T3-A.T5) and softmax-row lemmas (A.L9-A.L23).

This module defines no claim and holds no data.  Each check passes its draws (from the fixtures of
``gradient_setups`` or ``row_setups``) to one of these rules:

* :func:`rate_decisions`: the exponent of a squared norm in ``n`` (one decision per point or query), fitted with its
  first correction and decided against the *derived* exponent ``RATE_TARGET`` (± ``RATE_MARGIN``, half the distance
  to the paper's exponent); the paper's ``O(n^e)`` envelope is
  reported beside it, not decided, because an interval below the envelope would pass at any width and the rule could
  not fail where the derived exponent holds.  What is measured is a :class:`SquaredNorm`: the squared norm of the
  draws' mean (:func:`squared_mean`), or, in a negative control, their mean squared norm (:func:`mean_square`);
* :func:`coefficient_decisions`: a leading coefficient, fitted as a polynomial in ``1/m``, against a derived value,
  block by block;
* :func:`limit_decisions`: the limit of a scaled statistic against a derived value;

each an equivalence decision (verified when the interval lies inside the band) whose half-width is half the distance
to the nearest alternative the claim's controls name (:func:`alternative_margin`; ``ALTERNATIVE_SHARE``), and each
check's decisions summarised by :func:`headline`;

and draws its figure with :func:`coefficient_plot`, :func:`limit_plot` or :func:`series_plot`.  The derived values
live in ``coefficients``.  Every decision constant below carries its reason; the ledger lists those set or
changed with results in view.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import matplotlib.ticker as mticker
import numpy as np

from numerics.paper_a import moments as mo
from numerics.stats import Margin, decide_close, decide_equal, decide_exponent, weighted_fit
from theorems.evidence import Evidence
from theorems.plots import new_figure

#: the derived exponent of every squared bias these claims measure (bias = coefficient/m + O(m^-2), m = n - 1 or n)
RATE_TARGET = -2.0
#: the paper's envelope for the same squared errors (Õ(1/n)): reported beside the decision, not decided (it cannot
#: fail where the derived exponent holds)
RATE_ENVELOPE = -1.0
#: the exponent must exclude -1: the paper's Õ(1/n) envelope, which the squared bias would have if the bias were
#: O(n^-1/2) (the paper's Jensen step tight, our derivation wrong) and which the controls' mean squares (single-batch
#: errors, conditional MSEs) have; half the distance from -2 (it excludes -3 alike)
RATE_MARGIN = Margin(0.5, excludes="exponent −1 (the paper's Õ(1/n) envelope; the single-batch error's or "
                                   "conditional MSE's rate); half the distance from the derived −2")
#: a leading coefficient or limit is decided inside half the distance between its derived value and the nearest
#: alternative its module's controls name (the value the derivation gives without a factor or term it says is
#: there: e^q dropped, the covariance term, the tilted third moment, one Isserlis pairing, λc_R): the half-width is
#: computed from the instance by :func:`alternative_margin`, never from the data
ALTERNATIVE_SHARE = 0.5
#: an alternative within this relative distance of the target is the target itself, not a rival (the claim's own
#: value is passed among the alternatives, so a control that swaps in a mutant target is decided against it)
SAME_VALUE_RTOL = 1e-9
#: the loss's bias series n'·bias = a + b/m + c/m² + d/m³ (A.T3, A.T4): its second- and third-order terms are large at
#: n = 8 (tilted moments E e^{3q} with polynomial weights of degree 6; the K-block's scaled bias is still 10% below
#: its limit at n = 256), so the fit keeps three correction terms
LOSS_COEFFICIENT_ORDER = 3
#: the regularizer's bias is exactly c_R/n + c_2/n² + c_3/n³ (R is a degree-4 polynomial in Σ̂ = Σ + Δ, and the
#: moments of Δ of order k are O(n^-⌈k/2⌉)), so n·bias = a + b/n + c/n² is exact
REGULARIZER_COEFFICIENT_ORDER = 2
#: the softmax-row limits (A.L9 (i), A.L11/15/20, the Poincaré lemmas' n'·Var; the bias coefficients of A.L13/18/22)
#: are fitted as a + b/m + c/m² + d/m³: the series' coefficients grow like e^{kq}, and at q = 0.6 over n = 8..256 the
#: omitted terms of a two-term fit move the limit by 2.3 (quick) to 4 (standard) standard errors, those of a three-term
#: fit by 0.4-0.65 (exact quadrature of n'·E Σs², moments.scaled_ss_exact; ledger)
LIMIT_ORDER = 3


def n_axes(ax, ns, logy: bool = False) -> None:
    """Log2 x-axis labelled at the context sizes (and optionally a log y-axis) with plain tick labels:
    matplotlib's default log labels go through mathtext, which costs more than the rest of a check."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(ns))
    ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(mticker.NullFormatter())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:.2g}"))
        ax.yaxis.set_minor_formatter(mticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def mean_and_se(draws) -> tuple[np.ndarray, np.ndarray]:
    """Per entry of ``draws`` (N, ...): the sample mean and its standard error, as arrays."""
    return draws.mean(0).numpy(), (draws.std(0) / math.sqrt(draws.shape[0])).numpy()


def squared_mean(D) -> tuple[np.ndarray, np.ndarray]:
    """U-statistic estimate (MC variance removed) of ``||E D||^2`` per column of the draws ``D`` (N, B, p): values
    and standard errors."""
    est = mo.squared_norm_of_mean(D)
    return est.value.numpy(), est.se.numpy()


def mean_square(D) -> tuple[np.ndarray, np.ndarray]:
    """Mean squared norm ``E ||D||^2`` per column of the draws ``D`` (N, B, p): the mean square in place of the
    squared mean, which keeps the draws' variance (a negative control where the claim is about a bias)."""
    return mean_and_se(D.pow(2).sum(-1))


#: how a figure caption names each estimator (text, not a decision)
_ESTIMATE_CAPTION = {squared_mean: "U-statistic estimate (MC variance removed)", mean_square: "Mean squared norm"}


@dataclass(frozen=True)
class SquaredNorm:
    """What a rate check fits the decay of: ``name`` (as its decisions record it), ``draws`` (the claim's function
    from its samples to the draws at one ``n``) and ``estimate`` (:func:`squared_mean`, or :func:`mean_square` for the
    single-batch error of a negative control)."""

    name: str
    draws: Callable
    estimate: Callable = squared_mean


def rate_fit(m, vals, ses):
    r"""WLS fit ``log y = a + b log m + k/m`` (delta-method errors ``se/y``): the exponent ``b`` with the first
    correction of a series ``y = C m^b (1 + k/m + O(m^-2))`` absorbed.  Coefficient 1 is ``b``."""
    m = np.asarray(m, float)
    X = np.column_stack([np.ones(len(m)), np.log(m), 1 / m])
    return weighted_fit(X, np.log(vals), np.asarray(ses, float) / np.asarray(vals, float))


def rate_decisions(ev: Evidence, ns, draws, what: str, estimate: Callable = squared_mean, derived=None,
                   derived_label: str = "", unit: str = "point", shift: int = 1) -> tuple[np.ndarray, np.ndarray]:
    r"""Per point (column): the exponent in ``m = n - shift`` of what ``estimate`` reads off the draws, ``||E D||^2``
    (:func:`squared_mean`: U-statistic, Monte Carlo variance removed) or ``E ||D||^2`` (:func:`mean_square`, a
    negative control: the mean square in place of the squared mean), fitted by :func:`rate_fit` and decided against
    the derived exponent ``RATE_TARGET`` (``-2 ± RATE_MARGIN``: verified when the interval lies inside); where the
    interval lies relative to the paper's envelope ``RATE_ENVELOPE`` is reported beside it.  One decision per point.

    ``draws``: list over ``ns`` of (N, B, p) draws; ``derived``: optional callable ``m -> (len(m), B)`` array, the
    derived leading-order curve drawn for comparison.  Returns the values and standard errors, arrays (len(ns), B).
    """
    vals, ses = [], []
    for D in draws:
        v, s = estimate(D)
        vals.append(v)
        ses.append(s)
    vals, ses = np.array(vals), np.array(ses)
    m = np.array(ns, float) - shift
    fits = {}
    for b in range(vals.shape[1]):
        if np.any(vals[:, b] <= 0):
            ev.status("inconclusive", f"{unit} {b + 1}: a non-positive estimate (noise dominates)")
            continue
        fit = fits[b] = rate_fit(m, vals[:, b], ses[:, b])
        d = decide_exponent(fit, ev.z, RATE_TARGET, margin=RATE_MARGIN)
        side = ("below" if d.hi < RATE_ENVELOPE else "above" if d.lo > RATE_ENVELOPE else "across")
        ev.decide(f"{unit} {b + 1}: exponent of {what} in n", d, value=float(fit.coef[1]),
                  line=f"{unit} {b + 1}: exponent {fit.coef[1]:.3g} {d} (paper's envelope {RATE_ENVELOPE:g}: "
                  f"interval {side} it, reported)")
    if ev.plots:
        fig, ax = new_figure()
        for b, fit in fits.items():
            h = ax.errorbar(m + shift, vals[:, b], yerr=ev.z * ses[:, b], fmt="o", capsize=3, label=f"{unit} {b + 1}")
            col = h[0].get_color()
            ax.plot(m + shift, np.exp(fit.coef[0] + fit.coef[2] / m) * m ** fit.coef[1], "-", color=col, lw=0.8)
            ax.plot(m + shift, vals[0, b] * (m[0] / m) ** (-RATE_ENVELOPE), ":", color=col, lw=0.8)
            if derived is not None:
                ax.plot(m + shift, derived(m)[:, b], "--", color=col, lw=0.8)
        n_axes(ax, ns, logy=True)
        ax.set_xlabel("context size n")
        ax.set_ylabel(what)
        ax.set_title(f"solid: fit (exponent + 1/m correction); dotted: paper's envelope n^{RATE_ENVELOPE:g}"
                     + (f"; dashed: {derived_label}" if derived_label else ""), fontsize=8)
        ax.legend(loc="best")
        ev.figure(f"Decay of {what}", fig,
                  f"{_ESTIMATE_CAPTION.get(estimate, estimate.__name__)} with ±z SE bars "
                  f"(Bonferroni over {unit}s); decided: the fitted exponent's interval inside {RATE_TARGET:g} ± "
                  f"{RATE_MARGIN} (derived; the margin excludes {RATE_ENVELOPE:g}); the paper's envelope "
                  f"n^{RATE_ENVELOPE:g} is anchored at the first point.")
    return vals, ses


def alternative_margin(target: float, alternatives: dict[str, float]) -> Margin | None:
    """Half (``ALTERNATIVE_SHARE``) the distance from ``target`` to the nearest of ``alternatives`` (name -> value of
    the decided quantity under that alternative), those equal to ``target`` skipped (``SAME_VALUE_RTOL``): the claim's
    own value may be among them, so a control that swaps in a mutant target is decided against the claim's value.
    ``None`` when no alternative differs from the target (the decision cannot exclude any)."""
    tol = SAME_VALUE_RTOL * max(abs(target), 1e-300)
    rivals = {k: float(v) for k, v in alternatives.items() if abs(float(v) - target) > tol}
    if not rivals:
        return None
    name, alt = min(rivals.items(), key=lambda kv: abs(kv[1] - target))
    return Margin(ALTERNATIVE_SHARE * abs(alt - target),
                  excludes=f"{name} ({alt:.4g}); half the distance from {target:.4g}")


def _undecidable(d, half: float, band: float) -> str:
    """The reason an undecided equivalence could not have been decided at this sample size (its interval's half-width
    ``half`` exceeds the band's ``band``: no interval this wide fits inside, wherever it lies), or ``""``.  Read off
    the widths only, never the estimate."""
    if d.status != "inconclusive" or half <= band:
        return ""
    return (f"; undecidable at this size: the interval's half-width {half:.2g} exceeds the band's {band:.2g} (the "
            "alternative lies within the resolution)")


def coefficient_decisions(ev: Evidence, ns, draws, target, scale, parts: dict[str, slice], order: int,
                          alternatives: dict, unit: str = "point") -> dict:
    r"""Per point and block: ``scale_n <Dbar_n, e>`` (``e`` the unit vector along the block of ``target``) fitted as
    ``a + b_1/scale_n + ... + b_order/scale_n^order``; ``a`` is decided equal to ``||target_block||`` inside half
    the distance to the nearest alternative (:func:`alternative_margin`; ``decide_close``, one decision per point
    and block).  ``alternatives``: name -> a coefficient of ``target``'s shape (B, p), the value under a mutant the
    module's controls name (or the claim's own, in a control that swaps the target); its value of the decided
    quantity is its projection on ``e``.  Returns ``series[(point, block)] = (y, se, claimed)`` for
    :func:`coefficient_plot`.
    """
    series = {}
    for b in range(target.shape[0]):
        for name, sl in parts.items():
            t = target[b:b + 1, sl]
            y, se = mo.projected_series([D[:, b:b + 1, sl] for D in draws], t, scale)
            fit = mo.limit_fit(scale, y[:, 0], se[:, 0], order=order)
            claimed, a = float(t.norm()), float(fit.coef[0])
            a_se = float(fit.se[0])
            e = t[0] / t.norm()
            margin = alternative_margin(claimed, {k: float((alt[b, sl] * e).sum()) for k, alt in
                                                  alternatives.items()})
            label = f"{unit} {b + 1}, {name}-block: leading coefficient (projected)"
            series[(b, name)] = (y[:, 0], se[:, 0], claimed)
            if margin is None:
                ev.status("inconclusive", f"{label}: no named alternative differs from {claimed:.4g} here")
                continue
            d = decide_close(a - ev.z * a_se, a + ev.z * a_se, claimed, margin=margin)
            ev.decide(label, d, value=a, line=f"{unit} {b + 1} {name}: {a:.4g} {d} (excludes {margin.excludes})"
                      + _undecidable(d, ev.z * a_se, margin.around(claimed)))
    return series


def limit_decisions(ev: Evidence, ns, y, se, targets, labels, order: int = LIMIT_ORDER, *,
                    alternatives: dict) -> None:
    r"""Per column of ``y`` (len(ns), Q): fit ``y = a + b/m + c/m^2 + d/m^3`` (``order``) with ``m = n - 1``
    and decide ``a = targets[col]`` inside half the distance to the nearest alternative (:func:`alternative_margin`;
    ``alternatives``: name -> per-column values, e.g. the constants without the tilt factor, and the claim's own in a
    control that swaps the target; ``decide_equal``).  Why three correction terms: the ledger's ``LIMIT_ORDER``.
    """
    m = np.array([n - 1 for n in ns], float)
    for col in range(y.shape[1]):
        fit = mo.limit_fit(m, y[:, col], se[:, col], order)
        target = float(targets[col])
        margin = alternative_margin(target, {k: float(np.asarray(v)[col]) for k, v in alternatives.items()})
        if margin is None:
            ev.status("inconclusive", f"{labels[col]}: no named alternative differs from {target:.4g}")
            continue
        d = decide_equal(float(fit.coef[0]), float(fit.se[0]), target, ev.z, margin=margin)
        ev.decide(labels[col], d, value=float(fit.coef[0]),
                  line=f"{labels[col]}: {float(fit.coef[0]):.4g} {d} (excludes {margin.excludes})")


def headline(ev: Evidence, what: str) -> str:
    """A check's equality decisions in one line, ``what: point 1 -1.95 [-2.02, -1.88] inside -2 ± 0.5; ...``:
    each decision's name up to its colon, its interval's midpoint and the interval against its band."""
    parts = []
    for row in ev.decisions:
        word = {"pass": "inside", "fail": "outside"}.get(row["status"], "straddles")
        mid = 0.5 * (row["lo"] + row["hi"])
        parts.append(f"{row['name'].split(':')[0]} {mid:.4g} [{row['lo']:.4g}, {row['hi']:.4g}] {word} "
                     f"{row['claimed'][2:]}")
    return f"{what}: " + "; ".join(parts)


def series_plot(ns, curves, z, ylabel: str):
    """Scaled statistics vs n with ±z SE bars and a dashed line at each derived value:
    ``curves`` is a list of ``(label, y, se, derived)``."""
    fig, ax = new_figure()
    for label, y, se, derived in curves:
        h = ax.errorbar(ns, y, yerr=z * np.asarray(se), fmt="o-", capsize=3, label=label)
        ax.axhline(float(derived), ls="--", lw=0.8, color=h[0].get_color())
    n_axes(ax, ns)
    ax.set_xlabel("context size n")
    ax.set_ylabel(ylabel)
    ax.legend(loc="best", fontsize=7)
    return fig


def coefficient_plot(ns, series, z, ylabel: str, unit: str = "point"):
    """The series of :func:`coefficient_decisions` against their derived coefficients."""
    return series_plot(ns, [(f"{unit} {b + 1}, {name}", y, se, claimed) for (b, name), (y, se, claimed)
                            in series.items()], z, ylabel)


#: the coefficient figures' caption (text, not a decision)
COEFFICIENT_CAPTION = ("Scaled bias projected on the derived leading coefficient, with ±z SE bars; dashed: the "
                       "derived coefficient's norm; the fitted limit's interval must lie within half the distance "
                       "from it to the nearest named alternative.")


def limit_plot(ns, y, se, targets, labels, z, ylabel: str):
    """Columns of ``y`` (len(ns), Q) against their derived limits ``targets``."""
    return series_plot(ns, [(labels[c], y[:, c], se[:, c], targets[c]) for c in range(y.shape[1])], z, ylabel)
