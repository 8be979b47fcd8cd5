"""Operating characteristics of the public decision rules of numerics.stats, by simulation (or exactly, for counts).

tests/test_stats.py measures the error rates of ``decide_interval`` itself; here each rule built on it or beside it
(``decide_equal``, ``decide_close``, ``decide_exponent``, ``decide_upper``, ``decide_lower``, ``decide_binomial``,
and ``binomial_interval``) is held to what the module documents: at the edge of the claim a false ``pass`` (and a
false ``fail``) has rate at most the one-sided ``alpha / 2`` of its interval, and well inside the claim a narrow
interval passes with high power, so that a rule that is too eager and a rule that never passes both turn a test red.

Intervals are read at the ``z`` of ``alpha = 0.1`` so that the documented rate 0.05 is measurable; Monte Carlo
rates get a slack of four standard errors (the file makes some sixty such comparisons; seeds are fixed).  Every
property is written as a ``_check_*`` function of the module object, so that
``test_the_properties_catch_planted_slips`` can run them on a copy of numerics/stats.py with one plausible slip
planted (never on this checkout's file) and show that each slip is caught.
"""
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as ss

from numerics import stats

Z = float(ss.norm.isf(0.05))  # the two-sided z of alpha = 0.1
HALF_ALPHA = 0.05             # the documented one-sided error rate of an interval read at Z
DRAWS = 4000                  # Monte Carlo draws per simulated case (the rules take scalars: a Python loop)
FAR = Z + 2.5                 # "well inside / outside": the value this many standard errors beyond the edge


def _mc_slack(p: float, n: int = DRAWS) -> float:
    """Four standard errors of a Monte Carlo frequency of ``p`` over ``n`` draws."""
    return 4 * math.sqrt(p * (1 - p) / n)


SLACK = _mc_slack(HALF_ALPHA)
POWER_FAR = float(ss.norm.cdf(FAR - Z))  # one-sided power at FAR standard errors beyond a bound: Phi(2.5)


def _statuses(decisions) -> np.ndarray:
    return np.array([d.status for d in decisions])


def _rates(decisions) -> tuple[float, float]:
    """(pass, fail) frequencies of a sequence of decisions."""
    s = _statuses(decisions)
    return float(np.mean(s == "pass")), float(np.mean(s == "fail"))


def _estimates(value: float, se: float, seed: int, n: int = DRAWS) -> np.ndarray:
    return np.random.default_rng(seed).normal(value, se, n)


# ---------------------------------------------------------------------------
# Equivalence rules: decide_equal, decide_close
# ---------------------------------------------------------------------------


def _check_equivalence(decide, target: float, m: float, se: float, seed: int, name: str):
    """``decide(est)`` decides ``value = target ± m`` from ``est ± Z se`` with ``est ~ N(value, se^2)``."""
    for i, edge in enumerate((target + m, target - m)):
        p, f = _rates(decide(e) for e in _estimates(edge, se, seed + i))
        # at an edge both errors are at their largest: a false pass (the edge is outside) and a false fail (by
        # continuity, the worst value inside the band)
        assert p <= HALF_ALPHA + SLACK, f"{name}: false pass rate {p:.4f} at the band's edge {edge:g}"
        assert f <= HALF_ALPHA + SLACK, f"{name}: false fail rate {f:.4f} at the band's edge {edge:g}"
    p, f = _rates(decide(e) for e in _estimates(target, se, seed + 2))
    assert f <= HALF_ALPHA + SLACK, f"{name}: false fail rate {f:.4f} at the target"
    power = float(2 * ss.norm.cdf(m / se - Z) - 1)  # the documented power at the target (power_at_target)
    assert p > 0.9 and abs(p - power) <= _mc_slack(power), f"{name}: power {p:.4f} at the target, expected {power:.4f}"
    for i, far in enumerate((target + m + FAR * se, target - m - FAR * se)):
        p, f = _rates(decide(e) for e in _estimates(far, se, seed + 3 + i))
        assert p <= HALF_ALPHA + SLACK, f"{name}: pass rate {p:.4f} far outside the band"
        assert f > 0.9 and abs(f - POWER_FAR) <= _mc_slack(POWER_FAR), f"{name}: fail rate {f:.4f} far outside"


def _check_equal(st):
    target, m = -0.5, 0.25
    se = m / FAR  # power at the target 2 Phi(2.5) - 1 = 0.988
    mg = st.Margin(m, excludes="planted")
    _check_equivalence(lambda e: st.decide_equal(e, se, target, Z, margin=mg), target, m, se, 10, "decide_equal")


def _check_close(st):
    target = 2.0
    mg = st.Margin(0.1, excludes="planted", relative=True)  # 0.2 at the target
    m = 0.1 * abs(target)
    se = m / FAR
    _check_equivalence(lambda e: st.decide_close(e - Z * se, e + Z * se, target, margin=mg), target, m, se, 20,
                       "decide_close")


# ---------------------------------------------------------------------------
# decide_exponent on power laws fitted the way the module intends
# ---------------------------------------------------------------------------

EXP_X = np.geomspace(10.0, 1000.0, 8)
EXP_SIGMA = 0.05  # lognormal noise: y = c x^b exp(N(0, sigma^2)), so se(log y) = se_y / y = sigma
EXP_DRAWS = 2000
EXP_SE = EXP_SIGMA / math.sqrt(((np.log(EXP_X) - np.log(EXP_X).mean()) ** 2).sum())  # the slope's se, known sigma


def _power_law(b: float, seed: int) -> np.ndarray:
    """EXP_DRAWS noisy power laws ``3 x^b`` (one per row) at ``EXP_X``."""
    eps = np.random.default_rng(seed).normal(0.0, EXP_SIGMA, (EXP_DRAWS, EXP_X.size))
    return 3.0 * EXP_X ** b * np.exp(eps)


def _check_exponent(st):
    target = -1.0
    m = FAR * EXP_SE
    mg = st.Margin(m, excludes="planted")
    slack = _mc_slack(HALF_ALPHA, EXP_DRAWS)

    def loglog(Y):  # the slope of loglog_slope: coefficient 1, decide_exponent's default index
        return [st.decide_exponent(st.loglog_slope(EXP_X, y, EXP_SIGMA * y), Z, target, margin=mg) for y in Y]

    def wls(Y):  # the same fit with the columns the other way round: the exponent is coefficient 0
        X = np.column_stack([np.log(EXP_X), np.ones(EXP_X.size)])
        se = np.full(EXP_X.size, EXP_SIGMA)
        return [st.decide_exponent(st.weighted_fit(X, np.log(y), se), Z, target, margin=mg, index=0) for y in Y]

    for fit_name, decide in (("loglog_slope", loglog), ("weighted_fit, index=0", wls)):
        for i, edge in enumerate((target + m, target - m)):
            p, f = _rates(decide(_power_law(edge, 30 + i)))
            assert p <= HALF_ALPHA + slack, f"decide_exponent ({fit_name}): false pass rate {p:.4f} at {edge:g}"
            assert f <= HALF_ALPHA + slack, f"decide_exponent ({fit_name}): false fail rate {f:.4f} at {edge:g}"
        p, f = _rates(decide(_power_law(target, 32)))
        assert f <= HALF_ALPHA + slack, f"decide_exponent ({fit_name}): false fail rate {f:.4f} at the target"
        # known-sigma power 2 Phi(2.5) - 1 = 0.988, a little less with the Birge ratio's widening
        assert p > 0.9, f"decide_exponent ({fit_name}): power {p:.4f} at the target"


# ---------------------------------------------------------------------------
# Bounds: decide_upper, decide_lower
# ---------------------------------------------------------------------------


def _check_bound(decide, inside: int, bound: float, se: float, seed: int, name: str):
    """``decide(lo, hi)`` decides a bound whose claimed side is ``inside`` (-1: value <= bound, +1: value >= bound),
    from ``est ± Z se``."""
    cases = {"at": bound, "inside": bound + inside * FAR * se, "outside": bound - inside * FAR * se}
    r = {k: _rates(decide(e - Z * se, e + Z * se) for e in _estimates(v, se, seed + i))
         for i, (k, v) in enumerate(cases.items())}
    # at the bound both errors are at their largest (a false pass just beyond it, a false fail on it)
    assert r["at"][0] <= HALF_ALPHA + SLACK, f"{name}: pass rate {r['at'][0]:.4f} at the bound"
    assert r["at"][1] <= HALF_ALPHA + SLACK, f"{name}: false fail rate {r['at'][1]:.4f} at the bound"
    p, f = r["inside"]
    assert f <= HALF_ALPHA + SLACK, f"{name}: false fail rate {f:.4f} well inside the claim"
    assert p > 0.9 and abs(p - POWER_FAR) <= _mc_slack(POWER_FAR), f"{name}: power {p:.4f} well inside"
    p, f = r["outside"]
    assert p <= HALF_ALPHA + SLACK, f"{name}: false pass rate {p:.4f} well outside the claim"
    assert f > 0.9 and abs(f - POWER_FAR) <= _mc_slack(POWER_FAR), f"{name}: fail rate {f:.4f} well outside"


def _check_upper(st):
    se = 0.05
    _check_bound(lambda lo, hi: st.decide_upper(lo, hi, 0.25, max_width=4 * Z * se), -1, 0.25, se, 40,
                 "decide_upper")


def _check_lower(st):
    se = 0.05
    _check_bound(lambda lo, hi: st.decide_lower(lo, hi, 0.25, max_width=4 * Z * se), +1, 0.25, se, 50,
                 "decide_lower")


def _check_tolerance_side(st, rule: str, inside: int, tolerance, tol: float, seed: int):
    """The tolerance of ``rule`` (claimed side ``inside``) at bound 0.25, whose absolute value is ``tol``."""
    bound = 0.25
    decide = getattr(st, rule)

    def rates(value, se, s, **kw):
        return _rates(decide(e - Z * se, e + Z * se, bound, max_width=1.0, **kw) for e in _estimates(value, se, s))

    # on the bound, an interval narrow beside the tolerance straddles it with rate 1 - alpha: with the tolerance
    # it passes unless it lies wholly beyond the bound (rate 1 - alpha/2), without it only if wholly inside
    se = tol / (Z + 3)
    p_tol, f_tol = rates(bound, se, seed, tolerance=tolerance)
    p_plain, _ = rates(bound, se, seed)
    assert p_plain <= HALF_ALPHA + SLACK, f"{rule}: pass rate {p_plain:.4f} on the bound without tolerance"
    assert abs(p_tol - (1 - HALF_ALPHA)) <= SLACK, f"{rule}: pass rate {p_tol:.4f} on the bound with tolerance {tol}"
    assert f_tol <= HALF_ALPHA + SLACK, f"{rule}: false fail rate {f_tol:.4f} on the bound with tolerance"
    # the tolerance admits a straddle by at most tol: at the tolerated edge a false pass has rate <= alpha/2
    p, _ = rates(bound - inside * tol, tol, seed + 1, tolerance=tolerance)
    assert p <= HALF_ALPHA + SLACK, f"{rule}: pass rate {p:.4f} at the edge of the tolerance"
    # and it moves only the pass threshold: an interval wholly beyond the bound, within the tolerance, fails
    se = tol / (2 * (Z + 3))
    p, f = rates(bound - inside * tol / 2, se, seed + 2, tolerance=tolerance)
    assert p <= HALF_ALPHA + SLACK and f > 0.9, (f"{rule}: an interval wholly beyond the bound inside the "
                                                  f"tolerance passed at rate {p:.4f}, failed at rate {f:.4f}")


def _check_tolerance(st):
    _check_tolerance_side(st, "decide_upper", -1, st.Margin(0.1, excludes="planted"), 0.1, 60)
    # a relative tolerance is read at |bound|: 0.4 x 0.25 = 0.1
    _check_tolerance_side(st, "decide_lower", +1, st.Margin(0.4, excludes="planted", relative=True), 0.1, 70)


def _check_max_width(st):
    bound, n_runs, per_run = 0.25, 1000, 10
    rng = np.random.default_rng(80)
    noise = rng.normal(0.0, 1.0, (n_runs, per_run))
    se = noise.std(axis=1, ddof=1) / math.sqrt(per_run)  # estimated standard errors: the widths vary
    width = 2 * Z * se
    max_width = float(np.median(width))
    wide = width > max_width
    for rule, inside in (("decide_upper", -1), ("decide_lower", +1)):
        for where, value in (("inside", bound + inside * 1.5), ("outside", bound - inside * 1.5)):
            est = value + noise.mean(axis=1)
            s = _statuses(getattr(st, rule)(e - Z * h, e + Z * h, bound, max_width=max_width)
                          for e, h in zip(est, se))
            assert not np.any(s[wide] == "pass"), f"{rule}: an interval wider than max_width passed ({where})"
            if where == "inside":
                assert np.all(s[wide] == "inconclusive"), f"{rule}: too wide well inside is not inconclusive"
                assert np.mean(s[~wide] == "pass") > 0.9, f"{rule}: narrow enough intervals well inside rarely pass"
            else:  # the width gates passes only: an interval wholly on the wrong side fails however wide
                assert np.mean(s == "fail") > 0.9, f"{rule}: intervals well outside rarely fail"


# ---------------------------------------------------------------------------
# Counts: decide_binomial and binomial_interval (exact, by pmf sums over every k)
# ---------------------------------------------------------------------------

BINOM_N, BINOM_LEVEL = 60, 0.9
BINOM_TAIL = (1 - BINOM_LEVEL) / 2


def _check_binomial(st):
    n, level, tail = BINOM_N, BINOM_LEVEL, BINOM_TAIL
    ks = np.arange(n + 1)
    for side, bound in (("at_least", 0.7), ("at_most", 0.3)):
        inside = +1 if side == "at_least" else -1
        decisions = [st.decide_binomial(int(k), n, level, max_width=1.0, **{side: bound}) for k in ks]
        s = _statuses(decisions)
        sd = math.sqrt(bound * (1 - bound) / n)

        def rate(p, status):
            return float(ss.binom.pmf(ks, n, p)[s == status].sum())

        # k ~ Binomial(n, p) at p = the bound: a false pass (just beyond it) and a false fail (on it), exactly
        assert rate(bound, "pass") <= tail + 1e-12, f"decide_binomial {side}: false pass rate {rate(bound, 'pass')}"
        assert rate(bound, "fail") <= tail + 1e-12, f"decide_binomial {side}: false fail rate {rate(bound, 'fail')}"
        assert rate(bound + inside * 3.5 * sd, "pass") > 0.9, f"decide_binomial {side}: low power well inside"
        assert rate(bound - inside * 3.5 * sd, "fail") > 0.9, f"decide_binomial {side}: rarely fails well outside"
        # a pass is exactly the rejection region of the exact one-sided test of level (1 - level)/2
        beyond = ss.binom.sf(ks - 1, n, bound) if side == "at_least" else ss.binom.cdf(ks, n, bound)
        assert np.array_equal(s == "pass", beyond <= tail), f"decide_binomial {side}: not the exact test at {level}"
        if side == "at_least":
            # max_width gates the passes only: a pass whose interval is too wide becomes inconclusive
            mw = 0.1
            s_mw = _statuses(st.decide_binomial(int(k), n, level, max_width=mw, at_least=bound) for k in ks)
            too_wide = np.array([d.hi - d.lo > mw for d in decisions])
            expected = np.where((s == "pass") & too_wide, "inconclusive", s)
            assert too_wide[s == "pass"].any() and not too_wide[s == "pass"].all()  # the case is informative
            assert np.array_equal(s_mw, expected), "decide_binomial: max_width not honoured"


def _check_binomial_interval(st):
    for n, p, level in ((20, 0.1, 0.9), (50, 0.5, 0.95), (60, 0.03, 0.8)):
        tail = (1 - level) / 2
        ks = np.arange(n + 1)
        lo, hi = np.array([st.binomial_interval(int(k), n, level) for k in ks]).T
        pmf = ss.binom.pmf(ks, n, p)
        assert pmf[(lo <= p) & (p <= hi)].sum() >= level - 1e-12, f"coverage below {level} at n={n}, p={p}"
        assert pmf[hi < p].sum() <= tail + 1e-12 and pmf[lo > p].sum() <= tail + 1e-12, f"a tail > {tail}"
        # the ends invert the binomial tails at exactly (1 - level)/2: the interval is neither too wide nor too narrow
        assert lo[0] == 0.0 and hi[-1] == 1.0
        assert np.allclose(ss.binom.sf(ks[1:] - 1, n, lo[1:]), tail, rtol=1e-6, atol=0), f"lower ends, n={n}"
        assert np.allclose(ss.binom.cdf(ks[:-1], n, hi[:-1]), tail, rtol=1e-6, atol=0), f"upper ends, n={n}"


# ---------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------


def test_equal_error_rates_and_power():
    """decide_equal: false pass and false fail <= alpha/2 at the band's edges; power 2 Phi(m/se - z) - 1 at target."""
    _check_equal(stats)


def test_close_error_rates_and_power():
    """decide_close (relative margin): false pass and fail <= alpha/2 at the edges; documented power at the target."""
    _check_close(stats)


def test_exponent_error_rates_and_power():
    """decide_exponent on lognormal power-law fits (loglog_slope; weighted_fit at index=0): <= alpha/2, power > .9."""
    _check_exponent(stats)


def test_upper_error_rates_and_power():
    """decide_upper: false pass and false fail <= alpha/2 at the bound; one-sided power Phi(2.5) well inside."""
    _check_upper(stats)


def test_lower_error_rates_and_power():
    """decide_lower: false pass and false fail <= alpha/2 at the bound; one-sided power Phi(2.5) well inside."""
    _check_lower(stats)


def test_tolerance_admits_a_straddle_by_at_most_its_width():
    """A tolerance Margin admits a straddle up to its width on the claimed side only, and leaves the fail side."""
    _check_tolerance(stats)


def test_max_width_gates_passes_only():
    """decide_upper/decide_lower: an interval wider than max_width never passes (inconclusive), yet can fail."""
    _check_max_width(stats)


def test_binomial_error_rates_are_exact():
    """decide_binomial at_least/at_most: exact false pass/fail <= (1 - level)/2 at the bound; power; max_width."""
    _check_binomial(stats)


def test_binomial_interval_is_clopper_pearson():
    """binomial_interval: exact coverage >= level, each tail <= (1 - level)/2, ends invert the tails exactly."""
    _check_binomial_interval(stats)


# ---------------------------------------------------------------------------
# The properties can fail: each plausible slip, planted in a copy of numerics/stats.py, is caught
# ---------------------------------------------------------------------------

#: (name, old text, new text, the property check that must catch it)
SLIPS = [
    ("upper compares lo to the bound", "if hi > bound + tol:", "if lo > bound + tol:", _check_upper),
    ("lower reads the wrong ends", "decide_upper(-hi, -lo, -bound,", "decide_upper(-lo, -hi, -bound,", _check_lower),
    ("equal applies z twice", "estimate - z * se, estimate + z * se", "estimate - z * z * se, estimate + z * z * se",
     _check_equal),
    ("close swaps lo and hi", 'decide_interval(lo, hi, target, margin=margin, rule="close")',
     'decide_interval(hi, lo, target, margin=margin, rule="close")', _check_close),
    ("exponent drops z", "lo, hi = fit.interval(index, z)", "lo, hi = fit.interval(index, 1.0)", _check_exponent),
    ("exponent ignores index", "lo, hi = fit.interval(index, z)", "lo, hi = fit.interval(1, z)", _check_exponent),
    ("tolerance on the wrong side", "if hi > bound + tol:", "if hi > bound - tol:", _check_tolerance),
    ("tolerance moves the fail side", "if lo > bound:", "if lo > bound + tol:", _check_tolerance),
    ("max_width ignored", "if hi - lo > max_width:", "if False:", _check_max_width),
    ("binomial at level 0.5", "lo, hi = binomial_interval(k, n, level)", "lo, hi = binomial_interval(k, n, 0.5)",
     _check_binomial),
    ("binomial one-sided level used two-sided", "lo, hi = binomial_interval(k, n, level)",
     "lo, hi = binomial_interval(k, n, 2 * level - 1)", _check_binomial),
    ("binomial at_most read as a lower bound", "d = decide_upper(lo, hi, at_most,", "d = decide_lower(lo, hi, at_most,",
     _check_binomial),
    ("Clopper-Pearson at a higher level", "confidence_level=level,", "confidence_level=(1 + level) / 2,",
     _check_binomial_interval),
]


def _with_slip(old: str, new: str):
    """A fresh module from numerics/stats.py's text with ``old`` replaced by ``new`` (the file is only read)."""
    src = Path(stats.__file__).read_text()
    assert src.count(old) == 1, f"the slip's old text {old!r} is found {src.count(old)} times: update the slip"
    name = "_decision_error_rates_slipped_stats"
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader=None))
    sys.modules[name] = mod  # dataclasses look their module up while the classes are made
    try:
        exec(compile(src.replace(old, new), f"<{stats.__file__} with a slip>", "exec"), mod.__dict__)
    finally:
        del sys.modules[name]
    return mod


@pytest.mark.parametrize("old, new, check", [s[1:] for s in SLIPS], ids=[s[0] for s in SLIPS])
def test_the_properties_catch_planted_slips(old, new, check):
    """Each planted slip in a copy of numerics/stats.py makes its property check fail (the tests can fail)."""
    with pytest.raises(AssertionError):
        check(_with_slip(old, new))
