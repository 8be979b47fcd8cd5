"""Statistical decision rules shared by the checks: each rule is defined here once.

Every stochastic decision in the suite is a test at a stated per-decision false-alarm
rate ``alpha`` (the check's ``Context.alpha``, split over the check's decisions by
``Context.split``), expressed through its interval: ``[lo, hi]`` is a ``1 - alpha``
confidence interval for the quantity the claim is about.  Each rule then says:

* ``fail``: the interval excludes what the claim allows (false-alarm rate alpha if the claim holds);
* ``inconclusive``: the interval is wider than the check's declared ``max_width``, or straddles the
  claimed boundary: the data cannot tell (a check must not verify a claim by being vague);
* ``pass``: the interval lies inside what the claim allows and is narrow enough to mean something.

``max_width`` is a required keyword everywhere: a rule has no default resolution, the claim
module declares it (with its reason) before the data it decides.  A non-finite interval fails.

Rules (each returns a :class:`Decision`):

=====================  ==============================================================================
``decide_interval``    value = target (up to a declared ``resolution``), from an interval
``decide_equal``       value = target from an estimate and its standard error (``estimate ± z se``)
``decide_close``       value = target within ``± resolution`` (an equivalence margin)
``decide_exponent``    a fitted exponent (coefficient of a :class:`Fit`) = target
``decide_upper``       value <= bound (optionally up to a declared ``tolerance``)
``decide_lower``       value >= bound (optionally up to a declared ``tolerance``)
``decide_binomial``    a probability >= or <= a bound, from ``k`` successes in ``n`` (Clopper-Pearson)
=====================  ==============================================================================
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Fit:
    """Weighted least-squares fit ``y = X beta`` with standard errors."""

    coef: np.ndarray
    se: np.ndarray
    chi2_dof: float  # reduced chi-square (~1 when the error bars are right)
    dof: int

    def interval(self, i: int, z: float) -> tuple[float, float]:
        return float(self.coef[i] - z * self.se[i]), float(self.coef[i] + z * self.se[i])


def mean_se(samples) -> tuple[float, float]:
    """Sample mean and its standard error (ddof=1) of iid draws."""
    a = np.asarray(samples, dtype=float)
    return float(a.mean()), float(a.std(ddof=1) / np.sqrt(a.size))


def mean_interval(samples, z: float) -> tuple[float, float, float]:
    """``(mean, mean - z se, mean + z se)`` of iid draws."""
    m, se = mean_se(samples)
    return m, m - z * se, m + z * se


def weighted_fit(X, y, se_y) -> Fit:
    """WLS with known per-point standard errors.

    When the reduced chi-square exceeds 1 the error bars are scaled up by its square
    root (the Birge ratio): the points scatter more than their error bars say, and
    the coefficient intervals must widen accordingly.  They are never scaled down.
    """
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    w = 1.0 / np.asarray(se_y, float) ** 2
    XtW = X.T * w
    cov = np.linalg.inv(XtW @ X)
    coef = cov @ XtW @ y
    dof = max(len(y) - X.shape[1], 1)
    chi2 = float(((y - X @ coef) ** 2 * w).sum() / dof)
    se = np.sqrt(np.diag(cov) * max(chi2, 1.0))
    return Fit(coef, se, chi2, dof)


def loglog_slope(x, values, se_values) -> Fit:
    """Fit ``log(values) = a + b log(x)``; errors propagated by the delta method (se/value).

    Requires positive values; coefficient 1 of the fit is the exponent ``b``.
    """
    v = np.asarray(values, float)
    if np.any(v <= 0):
        raise ValueError("log-log fit needs positive values")
    X = np.column_stack([np.ones(len(v)), np.log(np.asarray(x, float))])
    return weighted_fit(X, np.log(v), np.asarray(se_values, float) / v)


def per_run_slopes(x, Y) -> np.ndarray:
    """Least-squares slope of each column of ``Y`` (K, B) on ``x`` (K,): one slope per run, (B,).

    For an exponent pass logs: ``per_run_slopes(np.log(t), np.log(Y))``.
    """
    x = np.asarray(x, float)
    Y = np.asarray(Y, float)
    xc = x - x.mean()
    return (xc[:, None] * (Y - Y.mean(0))).sum(0) / (xc**2).sum()


def binomial_interval(k: int, n: int, level: float) -> tuple[float, float]:
    """Clopper-Pearson (exact) interval for a probability from ``k`` successes in ``n`` trials."""
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


# ---------------------------------------------------------------------------
# Decisions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """The outcome of one rule: status, the interval it was read from, and what the claim allows.

    ``claimed`` is the allowed region in words (``"= -0.5"``, ``"≤ 0.25"``, ``"= 1/3 ± 0.02"``): the effective
    bound the decision used, tolerance and resolution included, so a record never hides how a pass was earned.
    """

    status: str
    rule: str
    lo: float
    hi: float
    claimed: str
    max_width: float
    why: str = ""

    @property
    def width(self) -> float:
        return self.hi - self.lo

    @property
    def mid(self) -> float:
        return 0.5 * (self.lo + self.hi)

    def __str__(self) -> str:
        s = f"[{self.lo:.4g}, {self.hi:.4g}] vs {self.claimed}: {self.status}"
        return s + (f" ({self.why})" if self.why else "")


def _finite(lo: float, hi: float) -> bool:
    return math.isfinite(lo) and math.isfinite(hi)


def _num(x: float) -> str:
    return f"{x:.4g}"


def decide_interval(lo: float, hi: float, target: float, *, max_width: float, resolution: float = 0.0,
                    rule: str = "interval") -> Decision:
    """Claim ``value = target`` (up to ``resolution``) from a confidence interval ``[lo, hi]``.

    ``fail`` if ``[lo, hi]`` misses ``[target - resolution, target + resolution]``; ``inconclusive`` if
    wider than ``max_width``; ``pass`` otherwise.
    """
    claimed = f"= {_num(target)}" + (f" ± {_num(resolution)}" if resolution else "")
    lo, hi = float(lo), float(hi)
    if not _finite(lo, hi):
        return Decision("fail", rule, lo, hi, claimed, max_width, "non-finite interval")
    if hi < target - resolution or lo > target + resolution:
        return Decision("fail", rule, lo, hi, claimed, max_width, "interval excludes the claimed value")
    if hi - lo > max_width:
        return Decision("inconclusive", rule, lo, hi, claimed, max_width,
                        f"width {hi - lo:.3g} > declared max {max_width:.3g}")
    return Decision("pass", rule, lo, hi, claimed, max_width)


def decide_equal(estimate: float, se: float, target: float, z: float, *, max_width: float) -> Decision:
    """Claim ``value = target`` from ``estimate ± z se`` (a two-sided z-test at the level of ``z``)."""
    return decide_interval(estimate - z * se, estimate + z * se, target, max_width=max_width, rule="equal")


def decide_close(lo: float, hi: float, target: float, *, resolution: float, max_width: float) -> Decision:
    """Claim ``|value - target| <= resolution`` (an equivalence margin declared in advance)."""
    return decide_interval(lo, hi, target, max_width=max_width, resolution=resolution, rule="close")


def decide_exponent(fit: Fit, z: float, target: float, *, max_width: float, resolution: float = 0.0,
                    index: int = 1) -> Decision:
    """Claim ``exponent = target`` for coefficient ``index`` of a fit (the slope of :func:`loglog_slope`)."""
    lo, hi = fit.interval(index, z)
    return decide_interval(lo, hi, target, max_width=max_width, resolution=resolution, rule="exponent")


def decide_upper(lo: float, hi: float, bound: float, *, max_width: float, tolerance: float = 0.0) -> Decision:
    """Claim ``value <= bound``.

    ``fail`` if the whole interval lies above ``bound``; ``pass`` if it lies below ``bound + tolerance`` and is no
    wider than ``max_width``; ``inconclusive`` otherwise (it straddles the bound, or is too wide).
    """
    claimed = f"≤ {_num(bound)}" + (f" (+ tolerance {_num(tolerance)})" if tolerance else "")
    lo, hi = float(lo), float(hi)
    if not _finite(lo, hi):
        return Decision("fail", "upper", lo, hi, claimed, max_width, "non-finite interval")
    if lo > bound:
        return Decision("fail", "upper", lo, hi, claimed, max_width, "whole interval above the bound")
    if hi > bound + tolerance:
        return Decision("inconclusive", "upper", lo, hi, claimed, max_width, "interval straddles the bound")
    if hi - lo > max_width:
        return Decision("inconclusive", "upper", lo, hi, claimed, max_width,
                        f"width {hi - lo:.3g} > declared max {max_width:.3g}")
    return Decision("pass", "upper", lo, hi, claimed, max_width)


def decide_lower(lo: float, hi: float, bound: float, *, max_width: float, tolerance: float = 0.0) -> Decision:
    """Claim ``value >= bound``: the mirror image of :func:`decide_upper`."""
    d = decide_upper(-hi, -lo, -bound, max_width=max_width, tolerance=tolerance)
    claimed = f"≥ {_num(bound)}" + (f" (− tolerance {_num(tolerance)})" if tolerance else "")
    why = d.why.replace("above", "below")
    return Decision(d.status, "lower", float(lo), float(hi), claimed, max_width, why)


def decide_binomial(k: int, n: int, level: float, *, at_least: float | None = None, at_most: float | None = None,
                    max_width: float) -> Decision:
    """Claim ``P >= at_least`` (or ``P <= at_most``) from ``k`` of ``n`` (Clopper-Pearson interval at ``level``)."""
    if (at_least is None) == (at_most is None):
        raise ValueError("decide_binomial: give exactly one of at_least / at_most")
    lo, hi = binomial_interval(k, n, level)
    if at_least is not None:
        d = decide_lower(lo, hi, at_least, max_width=max_width)
    else:
        d = decide_upper(lo, hi, at_most, max_width=max_width)
    return Decision(d.status, "binomial", lo, hi, f"P {d.claimed}", max_width, (d.why + f" [{k}/{n}]").strip())
