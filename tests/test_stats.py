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


def test_interval_three_ways():
    assert _status(stats.decide_interval(0.9, 1.1, 1.0, max_width=0.5)) == "pass"
    assert _status(stats.decide_interval(1.2, 1.4, 1.0, max_width=0.5)) == "fail"
    assert _status(stats.decide_interval(0.2, 1.8, 1.0, max_width=0.5)) == "inconclusive"
    assert _status(stats.decide_interval(math.nan, 1.0, 1.0, max_width=0.5)) == "fail"
    # a resolution widens what counts as equal, never the width that counts as decided
    assert _status(stats.decide_interval(1.05, 1.1, 1.0, max_width=0.5, resolution=0.06)) == "pass"
    assert _status(stats.decide_interval(1.05, 1.1, 1.0, max_width=0.5, resolution=0.04)) == "fail"


def test_equal_three_ways():
    assert _status(stats.decide_equal(1.0, 0.01, 1.02, 4.0, max_width=0.2)) == "pass"
    assert _status(stats.decide_equal(1.0, 0.01, 1.10, 4.0, max_width=0.2)) == "fail"
    assert _status(stats.decide_equal(1.0, 0.5, 1.10, 4.0, max_width=0.2)) == "inconclusive"


def test_close_three_ways():
    assert _status(stats.decide_close(0.32, 0.34, 1 / 3, resolution=0.02, max_width=0.04)) == "pass"
    assert _status(stats.decide_close(0.40, 0.45, 1 / 3, resolution=0.02, max_width=0.1)) == "fail"
    assert _status(stats.decide_close(0.20, 0.45, 1 / 3, resolution=0.02, max_width=0.04)) == "inconclusive"


def test_exponent_three_ways():
    n = np.array([1e2, 1e3, 1e4, 1e5])
    y = n**-0.5
    tight = stats.loglog_slope(n, y, 0.001 * y)
    loose = stats.loglog_slope(n, y, 0.5 * y)
    assert _status(stats.decide_exponent(tight, 4.0, -0.5, max_width=0.1)) == "pass"
    assert _status(stats.decide_exponent(tight, 4.0, -1.0, max_width=0.1)) == "fail"
    assert _status(stats.decide_exponent(loose, 4.0, -0.5, max_width=0.1)) == "inconclusive"


def test_upper_three_ways():
    assert _status(stats.decide_upper(0.1, 0.2, 0.5, max_width=0.3)) == "pass"
    assert _status(stats.decide_upper(0.6, 0.7, 0.5, max_width=0.3)) == "fail"
    assert _status(stats.decide_upper(0.4, 0.6, 0.5, max_width=0.3)) == "inconclusive"   # straddles
    assert _status(stats.decide_upper(-0.9, 0.2, 0.5, max_width=0.3)) == "inconclusive"  # too wide
    assert _status(stats.decide_upper(-math.inf, 0.2, 0.5, max_width=0.3)) == "fail"
    # a declared tolerance admits a straddle by at most that much, and is printed in the decision
    d = stats.decide_upper(0.45, 0.55, 0.5, max_width=0.3, tolerance=0.1)
    assert d.status == "pass" and "tolerance" in d.claimed


def test_lower_three_ways():
    assert _status(stats.decide_lower(0.6, 0.7, 0.5, max_width=0.3)) == "pass"
    assert _status(stats.decide_lower(0.1, 0.2, 0.5, max_width=0.3)) == "fail"
    assert _status(stats.decide_lower(0.4, 0.6, 0.5, max_width=0.3)) == "inconclusive"
    assert _status(stats.decide_lower(0.6, 1.6, 0.5, max_width=0.3)) == "inconclusive"
    assert _status(stats.decide_lower(0.45, 0.55, 0.5, max_width=0.3, tolerance=0.1)) == "pass"


def test_binomial_three_ways():
    assert _status(stats.decide_binomial(1000, 1000, 0.99, at_least=0.99, max_width=0.05)) == "pass"
    assert _status(stats.decide_binomial(500, 1000, 0.99, at_least=0.99, max_width=0.5)) == "fail"
    assert _status(stats.decide_binomial(10, 10, 0.99, at_least=0.9, max_width=0.5)) == "inconclusive"
    assert _status(stats.decide_binomial(0, 1000, 0.99, at_most=0.01, max_width=0.05)) == "pass"
    assert _status(stats.decide_binomial(500, 1000, 0.99, at_most=0.01, max_width=0.5)) == "fail"
    with pytest.raises(ValueError):
        stats.decide_binomial(1, 2, 0.9, max_width=1.0)


def test_max_width_is_required():
    with pytest.raises(TypeError):
        stats.decide_interval(0.0, 1.0, 0.5)  # no default resolution: the claim module declares it
    with pytest.raises(TypeError):
        stats.decide_upper(0.0, 1.0, 0.5)


def test_decision_text_shows_the_effective_bound():
    d = stats.decide_upper(0.1, 0.2, 0.5, max_width=0.3, tolerance=0.05)
    assert "≤ 0.5" in str(d) and "0.05" in str(d) and "pass" in str(d)
