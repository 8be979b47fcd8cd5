"""numerics.stats: fits, and every decision rule's three outcomes (pass / fail / inconclusive) on planted data.

A rule that can no longer say "inconclusive" (or "fail") must turn one of these tests red.
"""
import math

import numpy as np
import pytest

from numerics import stats


def test_weighted_fit_recovers_a_known_line():
    rng = np.random.default_rng(0)
    x = np.linspace(1, 5, 20)
    se = np.full_like(x, 0.01)
    y = 2.0 - 1.0 * x + rng.normal(0, 0.01, x.size)
    fit = stats.weighted_fit(np.column_stack([np.ones_like(x), x]), y, se)
    lo, hi = fit.interval(1, 4.0)
    assert lo < -1.0 < hi and hi - lo < 0.05


def test_loglog_slope_carries_relative_errors_to_the_exponent():
    """Values ``3 x^-1`` known to 10 % each: log values known to 0.1 each (the delta method), so the exponent's
    standard error is 0.1 over the root of the spread of log x, whatever the values' size."""
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    values = 3.0 / x
    fit = stats.loglog_slope(x, values, 0.1 * values)
    spread = ((np.log(x) - np.log(x).mean()) ** 2).sum()
    assert fit.coef[1] == pytest.approx(-1.0) and fit.se[1] == pytest.approx(0.1 / np.sqrt(spread))
    assert stats.loglog_slope(x, 1e3 * values, 1e2 * values).se[1] == pytest.approx(fit.se[1])


def test_birge_ratio_widens_understated_errors():
    rng = np.random.default_rng(1)
    x = np.linspace(1, 5, 30)
    y = 1.0 + 0.5 * x + rng.normal(0, 0.3, x.size)  # true scatter 0.3, claimed 0.01
    fit = stats.weighted_fit(np.column_stack([np.ones_like(x), x]), y, np.full_like(x, 0.01))
    assert fit.chi2_dof > 10
    lo, hi = fit.interval(1, 4.0)
    assert lo < 0.5 < hi


def test_loglog_slope_and_binomial():
    n = np.array([10, 20, 40, 80.0])
    fit = stats.loglog_slope(n, 3.0 / n, 0.01 * 3.0 / n)
    assert abs(fit.coef[1] + 1) < 1e-9
    lo, hi = stats.binomial_interval(95, 100, 0.99)
    assert lo < 0.95 < hi
    with pytest.raises(ValueError):
        stats.loglog_slope(n, -n, n)


def _status(d):
    return d.status


#: a margin for the planted cases: the reason is part of the value, so the tests declare one too
M = stats.Margin(0.1, excludes="a planted alternative at distance 0.2; half of it")


def test_interval_is_an_equivalence_decision():
    # verified only when the whole interval lies inside the band target ± m
    assert _status(stats.decide_interval(0.95, 1.05, 1.0, margin=M)) == "pass"
    assert _status(stats.decide_interval(1.05, 1.15, 1.0, margin=M)) == "inconclusive"  # touches the band: not shown
    assert _status(stats.decide_interval(0.2, 1.8, 1.0, margin=M)) == "inconclusive"    # vague
    assert _status(stats.decide_interval(1.2, 1.4, 1.0, margin=M)) == "fail"            # shown outside
    assert _status(stats.decide_interval(math.nan, 1.0, 1.0, margin=M)) == "fail"
    d = stats.decide_interval(0.95, 1.05, 1.0, margin=M)
    assert d.band == (0.9, 1.1) and d.margin == 0.1 and d.excludes == M.excludes
    assert str(d) == "[0.95, 1.05] inside 1 ± 0.1"


def test_relative_margin_scales_with_the_target():
    rel = stats.Margin(0.05, excludes="a factor 1.1 off; half of it", relative=True)
    assert stats.decide_close(-2.08, -1.92, -2.0, margin=rel).status == "pass"
    assert stats.decide_close(-2.12, -1.92, -2.0, margin=rel).status == "inconclusive"


def test_equal_close_exponent_share_the_rule():
    assert _status(stats.decide_equal(1.0, 0.01, 1.02, 4.0, margin=M)) == "pass"
    assert _status(stats.decide_equal(1.0, 0.01, 1.2, 4.0, margin=M)) == "fail"
    assert _status(stats.decide_equal(1.0, 0.5, 1.02, 4.0, margin=M)) == "inconclusive"
    assert _status(stats.decide_close(0.32, 0.34, 1 / 3, margin=M)) == "pass"
    n = np.logspace(1, 4, 8)
    tight = stats.loglog_slope(n, n**-0.5, 1e-4 * n**-0.5)
    loose = stats.loglog_slope(n, n**-0.5 * (1 + 0.3 * np.cos(n)), 0.3 * n**-0.5)
    assert _status(stats.decide_exponent(tight, 4.0, -0.5, margin=M)) == "pass"
    assert _status(stats.decide_exponent(tight, 4.0, -1.0, margin=M)) == "fail"
    assert _status(stats.decide_exponent(loose, 4.0, -0.5, margin=M)) == "inconclusive"


def test_a_margin_must_name_what_it_excludes():
    with pytest.raises(ValueError, match="alternative"):
        stats.Margin(0.1, excludes="")
    with pytest.raises(ValueError):
        stats.Margin(0.0, excludes="x")
    with pytest.raises(ValueError):
        stats.Margin(math.inf, excludes="x")
    with pytest.raises(TypeError, match="Margin"):
        stats.decide_close(0.9, 1.1, 1.0, margin=0.1)  # a bare number has no reason
    with pytest.raises(TypeError):
        stats.decide_close(0.9, 1.1, 1.0)  # no margin at all
    with pytest.raises(TypeError):
        stats.decide_close(0.9, 1.1, 1.0, margin=M, max_width=0.5)  # the width is no longer a decision input


def _rates(true_value, m, se, z, n=200_000, seed=0):
    """The rule's (pass, fail) frequencies over normal estimates of ``true_value`` with standard error ``se``."""
    est = np.random.default_rng(seed).normal(true_value, se, n)
    lo, hi = est - z * se, est + z * se
    band_lo, band_hi = -m, m
    passed = (lo >= band_lo) & (hi <= band_hi)
    failed = (hi < band_lo) | (lo > band_hi)
    # the vectorised form above is the rule; check it against the rule itself on a few draws
    for i in range(20):
        d = stats.decide_interval(lo[i], hi[i], 0.0, margin=stats.Margin(m, excludes="planted"))
        assert d.status == ("pass" if passed[i] else "fail" if failed[i] else "inconclusive")
    return passed.mean(), failed.mean()


def test_error_rates_are_as_documented():
    """At the band's edge a false "verified" has rate <= alpha/2; at the target a false "violated" has rate
    <= alpha/2; the power at the target is ``power_at_target``."""
    z = 1.6448536269514722  # alpha = 0.1 so that the rates are measurable with 2e5 draws
    m, se = 1.0, 0.2
    p_edge, _ = _rates(m, m, se, z)
    assert p_edge <= 0.05 + 0.003
    p_target, f_target = _rates(0.0, m, se, z)
    assert f_target == 0.0  # the whole interval outside the band needs |est| > m + z se
    width = 2 * z * se
    assert abs(p_target - stats.power_at_target(width, m, z)) < 0.005
    # width_for_power inverts power_at_target
    w95 = stats.width_for_power(m, z)
    assert abs(stats.power_at_target(w95, m, z) - 0.95) < 1e-9


def test_upper_three_ways():
    assert _status(stats.decide_upper(0.1, 0.2, 0.5, max_width=0.3)) == "pass"
    assert _status(stats.decide_upper(0.6, 0.7, 0.5, max_width=0.3)) == "fail"
    assert _status(stats.decide_upper(0.4, 0.6, 0.5, max_width=0.3)) == "inconclusive"   # straddles
    assert _status(stats.decide_upper(-0.9, 0.2, 0.5, max_width=0.3)) == "inconclusive"  # too wide
    assert _status(stats.decide_upper(-math.inf, 0.2, 0.5, max_width=0.3)) == "fail"
    # a declared tolerance admits a straddle by at most that much, and is printed in the decision
    d = stats.decide_upper(0.45, 0.55, 0.5, max_width=0.3, tolerance=stats.Margin(0.1, excludes="rounding"))
    assert d.status == "pass" and "tolerance" in d.claimed


def test_lower_three_ways():
    assert _status(stats.decide_lower(0.6, 0.7, 0.5, max_width=0.3)) == "pass"
    assert _status(stats.decide_lower(0.1, 0.2, 0.5, max_width=0.3)) == "fail"
    assert _status(stats.decide_lower(0.4, 0.6, 0.5, max_width=0.3)) == "inconclusive"
    assert _status(stats.decide_lower(0.6, 1.6, 0.5, max_width=0.3)) == "inconclusive"
    assert _status(stats.decide_lower(0.45, 0.55, 0.5, max_width=0.3,
                                      tolerance=stats.Margin(0.1, excludes="rounding"))) == "pass"
    with pytest.raises(TypeError):
        stats.decide_lower(0.45, 0.55, 0.5, max_width=0.3, tolerance=0.1)  # a tolerance needs its reason


def test_binomial_three_ways():
    assert _status(stats.decide_binomial(1000, 1000, 0.99, at_least=0.99, max_width=0.05)) == "pass"
    assert _status(stats.decide_binomial(500, 1000, 0.99, at_least=0.99, max_width=0.5)) == "fail"
    assert _status(stats.decide_binomial(10, 10, 0.99, at_least=0.9, max_width=0.5)) == "inconclusive"
    assert _status(stats.decide_binomial(0, 1000, 0.99, at_most=0.01, max_width=0.05)) == "pass"
    assert _status(stats.decide_binomial(500, 1000, 0.99, at_most=0.01, max_width=0.5)) == "fail"
    with pytest.raises(ValueError):
        stats.decide_binomial(1, 2, 0.9, max_width=1.0)


def test_bounds_need_a_declared_max_width():
    with pytest.raises(TypeError):
        stats.decide_upper(0.0, 1.0, 0.5)


def test_decision_text_shows_the_effective_bound():
    d = stats.decide_upper(0.1, 0.2, 0.5, max_width=0.3, tolerance=stats.Margin(0.05, excludes="rounding"))
    assert "≤ 0.5" in str(d) and "0.05" in str(d) and "pass" in str(d)
