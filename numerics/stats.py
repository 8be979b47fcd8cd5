"""Statistical decision rules shared by the checks.

Every stochastic decision in the suite is a two-sided test at a stated per-decision
false-alarm rate ``alpha`` (the claim module's ``Context.alpha``), expressed through
its normal quantile ``z``.  An interval too wide to say anything makes the decision
``inconclusive``, never ``pass``: a check must not verify a claim by being vague.
"""
from __future__ import annotations

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


def decide_equal(estimate: float, se: float, target: float, z: float, rel_width: float) -> tuple[str, str]:
    """Two-sided test of ``estimate == target`` at the level implied by ``z``.

    * ``fail`` when ``|estimate - target| > z se`` (false-alarm rate alpha if the claim holds);
    * ``inconclusive`` when the half-width ``z se`` exceeds ``rel_width |target|`` (too vague);
    * ``pass`` otherwise.
    """
    dev = abs(estimate - target)
    msg = f"{estimate:.6g} ± {z * se:.2g} (z={z:.2f}) vs {target:.6g}"
    if dev > z * se:
        return "fail", msg + f": off by {dev / se:.1f} standard errors"
    if z * se > rel_width * abs(target):
        return "inconclusive", msg + ": interval too wide to decide"
    return "pass", msg


def decide_in_interval(lo: float, hi: float, target: float, max_width: float) -> str:
    """``fail`` if ``target`` lies outside ``[lo, hi]``; ``inconclusive`` if wider than ``max_width``."""
    if not lo <= target <= hi:
        return "fail"
    if hi - lo > max_width:
        return "inconclusive"
    return "pass"


def binomial_interval(k: int, n: int, level: float) -> tuple[float, float]:
    """Clopper-Pearson (exact) interval for a probability from ``k`` successes in ``n`` trials."""
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)
