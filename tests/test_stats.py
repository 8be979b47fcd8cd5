import numpy as np

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


def test_decide_equal_three_ways():
    assert stats.decide_equal(1.0, 0.01, 1.02, 4.0, 0.1)[0] == "pass"
    assert stats.decide_equal(1.0, 0.01, 1.10, 4.0, 0.1)[0] == "fail"
    assert stats.decide_equal(1.0, 0.5, 1.10, 4.0, 0.1)[0] == "inconclusive"


def test_loglog_slope_and_binomial():
    n = np.array([10, 20, 40, 80.0])
    fit = stats.loglog_slope(n, 3.0 / n, 0.01 * 3.0 / n)
    assert abs(fit.coef[1] + 1) < 1e-9
    lo, hi = stats.binomial_interval(95, 100, 0.99)
    assert lo < 0.95 < hi
