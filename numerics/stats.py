"""Statistical decision rules shared by the checks: each rule is defined here once.

Every stochastic decision in the suite reads a ``1 - alpha`` confidence interval ``[lo, hi]`` for the quantity the
claim is about (``alpha`` is the check's ``Context.alpha``, split over the check's decisions by ``Context.split``, so
the false-alarm rates below hold for the whole family by Bonferroni).

**Equality** (``value = target``) is an *equivalence* decision (interval inclusion, i.e. two one-sided tests):

* ``pass`` (verified) when the interval lies inside the band ``[target - m, target + m]``;
* ``fail`` (violated) when it lies entirely outside the band;
* ``inconclusive`` otherwise: the data cannot tell, and a check never verifies by being vague.

The half-width ``m`` is a :class:`Margin`, declared in the claim module before the data with the alternative it
excludes (normally half the distance to the nearest value the claim rules out, or a numerical precision for an exact
identity).  Error rates: if the value lies outside the band (at or beyond an edge) the rule says ``pass`` with
probability at most ``alpha / 2``; if it lies inside, it says ``fail`` with probability at most ``alpha / 2``.  Its
power at the claim's own value, for an interval of half-width ``h = z se``, is ``2 Phi(m / se - z) - 1``
(:func:`power_at_target`); a check sized for 95 % power needs ``m >= (z + 1.96) se``.

**Bounds** (``value <= bound``, ``value >= bound``) are one-sided: ``pass`` only when the far end of the interval is
on the claimed side of the bound (plus a declared :class:`Margin` of tolerance, if any), ``fail`` when the whole
interval is on the wrong side of the bound itself, ``inconclusive`` otherwise or when the interval is wider than the
check's declared ``max_width``.  False-alarm rate at most ``alpha / 2`` when the claim holds.

A non-finite interval fails.  Rules (each returns a :class:`Decision`):

=====================  ==============================================================================
``decide_interval``    value = target ± margin, from an interval
``decide_equal``       the same, from an estimate and its standard error (``estimate ± z se``)
``decide_close``       the same as ``decide_interval`` (kept as the name checks read best with)
``decide_exponent``    a fitted exponent (coefficient of a :class:`Fit`) = target ± margin
``decide_upper``       value <= bound (optionally up to a declared tolerance)
``decide_lower``       value >= bound (optionally down to a declared tolerance)
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


#: the normal quantile of 95 % power (two-sided): a decision sized for 95 % power at the claim's own value
Z_POWER = float(stats.norm.isf(0.025))


@dataclass(frozen=True)
class Margin:
    """The half-width of an equivalence band, with the alternative it excludes: declared before the data.

    ``half_width`` is absolute, or a fraction of ``|target|`` when ``relative``.  ``excludes`` names the nearest
    alternative the claim must rule out and why the half-width is what it is ("the exponent -1 of the O(1/n)
    envelope a dropped bias correction gives; half the distance"), or the numerical precision an exact identity is
    read at.  A margin without its reason is refused (at import, since margins are module constants).
    """

    half_width: float
    excludes: str
    relative: bool = False

    def __post_init__(self):
        if not (isinstance(self.half_width, (int, float)) and math.isfinite(self.half_width) and self.half_width > 0):
            raise ValueError(f"Margin: half_width must be a finite positive number, got {self.half_width!r}")
        if not (isinstance(self.excludes, str) and self.excludes.strip()):
            raise ValueError("Margin: a margin must name the alternative it excludes (excludes='...')")

    def around(self, target: float) -> float:
        """The absolute half-width at ``target``."""
        return float(self.half_width * abs(target) if self.relative else self.half_width)

    def __str__(self) -> str:
        return f"{self.half_width:g}" + (" × |target|" if self.relative else "")


def _margin(margin, rule: str) -> Margin:
    if not isinstance(margin, Margin):
        raise TypeError(f"{rule}: margin must be a numerics.stats.Margin (a half-width with the alternative it "
                        f"excludes), got {type(margin).__name__}")
    return margin


def power_at_target(width: float, half_width: float, z: float) -> float:
    """P(an equivalence decision verifies) when the value equals its target, for an interval of ``width`` read
    at the normal quantile ``z``: the estimate is ``N(target, se^2)`` with ``se = width / (2 z)``, and the
    interval lies inside ``target ± m`` iff ``|estimate - target| <= m - z se``: ``2 Phi(m / se - z) - 1``."""
    if not (math.isfinite(width) and width > 0):
        return 0.0 if not math.isfinite(width) else 1.0
    se = width / (2 * z)
    return float(max(0.0, 2 * stats.norm.cdf(half_width / se - z) - 1))


def width_for_power(half_width: float, z: float, power: float = 0.95) -> float:
    """The widest interval (read at ``z``) at which an equivalence decision with half-width ``m`` verifies a value
    at its target with probability ``power``: ``2 z m / (z + z_power)``, the inverse of :func:`power_at_target`."""
    zp = float(stats.norm.isf((1 - power) / 2))
    return 2 * z * half_width / (z + zp)


@dataclass(frozen=True)
class Decision:
    """The outcome of one rule: status, the interval it was read from, and what the claim allows.

    ``claimed`` is the allowed region in words (``"= -0.5 ± 0.25"``, ``"≤ 0.25"``): the effective band the decision
    used, margin and tolerance included, so a record never hides how a pass was earned.  ``band`` is the region a
    pass lies inside (``(a, b)``, either end infinite for a bound); ``margin`` and ``excludes`` are the equivalence
    margin's absolute half-width and its reason (None for bounds without tolerance).
    """

    status: str
    rule: str
    lo: float
    hi: float
    claimed: str
    max_width: float
    why: str = ""
    band: tuple[float, float] = (-math.inf, math.inf)
    margin: float | None = None
    excludes: str = ""

    @property
    def width(self) -> float:
        return self.hi - self.lo

    @property
    def mid(self) -> float:
        return 0.5 * (self.lo + self.hi)

    @property
    def equivalence(self) -> bool:
        return self.rule in EQUIVALENCE_RULES

    def __str__(self) -> str:
        where = {"pass": "inside", "fail": "outside"}.get(self.status, "straddles") if self.equivalence else ""
        s = f"[{self.lo:.4g}, {self.hi:.4g}] " + (f"{where} {self.claimed[2:]}" if where else
                                                  f"vs {self.claimed}: {self.status}")
        return s + (f" ({self.why})" if self.why else "")


#: the rules that decide an equality by interval inclusion
EQUIVALENCE_RULES = ("interval", "equal", "close", "exponent")


def _finite(lo: float, hi: float) -> bool:
    return math.isfinite(lo) and math.isfinite(hi)


def _num(x: float) -> str:
    return f"{x:.4g}"


def decide_interval(lo: float, hi: float, target: float, *, margin: Margin, rule: str = "interval") -> Decision:
    """Claim ``value = target ± m`` (``m = margin.around(target)``) from a confidence interval ``[lo, hi]``.

    ``pass`` iff ``[lo, hi]`` lies inside ``[target - m, target + m]``; ``fail`` iff it lies entirely outside;
    ``inconclusive`` otherwise.  ``max_width`` in the result is the width at which the decision has 95 % power at
    its target (filled in by ``theorems.evidence``, which knows the interval's quantile); no width is declared.
    """
    mg = _margin(margin, f"decide_{rule}")
    m = mg.around(target)
    claimed = f"= {_num(target)} ± {_num(m)}"
    lo, hi = float(lo), float(hi)
    band = (target - m, target + m)
    out = dict(band=band, margin=m, excludes=mg.excludes)
    if not _finite(lo, hi):
        return Decision("fail", rule, lo, hi, claimed, math.inf, "non-finite interval", **out)
    if hi < band[0] or lo > band[1]:
        return Decision("fail", rule, lo, hi, claimed, math.inf, "interval outside the band", **out)
    if lo < band[0] or hi > band[1]:
        return Decision("inconclusive", rule, lo, hi, claimed, math.inf, "interval straddles the band's edge", **out)
    return Decision("pass", rule, lo, hi, claimed, math.inf, **out)


def decide_equal(estimate: float, se: float, target: float, z: float, *, margin: Margin) -> Decision:
    """Claim ``value = target ± m`` from ``estimate ± z se``."""
    return decide_interval(estimate - z * se, estimate + z * se, target, margin=margin, rule="equal")


def decide_close(lo: float, hi: float, target: float, *, margin: Margin) -> Decision:
    """Claim ``|value - target| <= m`` from ``[lo, hi]``: :func:`decide_interval` under the name checks read with."""
    return decide_interval(lo, hi, target, margin=margin, rule="close")


def decide_exponent(fit: Fit, z: float, target: float, *, margin: Margin, index: int = 1) -> Decision:
    """Claim ``exponent = target ± m`` for coefficient ``index`` of a fit (the slope of :func:`loglog_slope`)."""
    lo, hi = fit.interval(index, z)
    return decide_interval(lo, hi, target, margin=margin, rule="exponent")


def decide_upper(lo: float, hi: float, bound: float, *, max_width: float,
                 tolerance: Margin | None = None) -> Decision:
    """Claim ``value <= bound``.

    ``fail`` if the whole interval lies above ``bound``; ``pass`` if it lies below ``bound + tolerance`` and is no
    wider than ``max_width``; ``inconclusive`` otherwise (it straddles the bound, or is too wide).  A tolerance is
    a :class:`Margin` (what it allows, and why), never a bare number.
    """
    tol = 0.0 if tolerance is None else _margin(tolerance, "decide_upper").around(bound)
    claimed = f"≤ {_num(bound)}" + (f" (+ tolerance {_num(tol)})" if tol else "")
    lo, hi = float(lo), float(hi)
    out = dict(band=(-math.inf, bound + tol), margin=tol or None,
               excludes="" if tolerance is None else tolerance.excludes)
    if not _finite(lo, hi):
        return Decision("fail", "upper", lo, hi, claimed, max_width, "non-finite interval", **out)
    if lo > bound:
        return Decision("fail", "upper", lo, hi, claimed, max_width, "whole interval above the bound", **out)
    if hi > bound + tol:
        return Decision("inconclusive", "upper", lo, hi, claimed, max_width, "interval straddles the bound", **out)
    if hi - lo > max_width:
        return Decision("inconclusive", "upper", lo, hi, claimed, max_width,
                        f"width {hi - lo:.3g} > declared max {max_width:.3g}", **out)
    return Decision("pass", "upper", lo, hi, claimed, max_width, **out)


def decide_lower(lo: float, hi: float, bound: float, *, max_width: float,
                 tolerance: Margin | None = None) -> Decision:
    """Claim ``value >= bound``: the mirror image of :func:`decide_upper`."""
    d = decide_upper(-hi, -lo, -bound, max_width=max_width, tolerance=tolerance)
    tol = d.margin or 0.0
    claimed = f"≥ {_num(bound)}" + (f" (− tolerance {_num(tol)})" if tol else "")
    why = d.why.replace("above", "below")
    return Decision(d.status, "lower", float(lo), float(hi), claimed, max_width, why, band=(bound - tol, math.inf),
                    margin=d.margin, excludes=d.excludes)


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
    return Decision(d.status, "binomial", lo, hi, f"P {d.claimed}", max_width, (d.why + f" [{k}/{n}]").strip(),
                    band=d.band)
