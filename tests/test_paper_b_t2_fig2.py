"""B.T2's interior points and B.Fig2's early window and cap range (issues 31, 32): the rules are the derivation's and the
paper's wording, fixed in the module, not read off the runs."""
from __future__ import annotations

import math

import numpy as np

from theorems import fixture as fx
from theorems.paper_b.fixed_head import example1_suite
from theorems.paper_b.fixed_head import fig2_fixed_head as F2
from theorems.paper_b.joint import t2_joint_loss as T2
from theorems.paper_b.joint.rates import WINDOW
from theorems.paper_b.joint.setups import EQ10, ETA, STEPS


def _w_bound(t: int, a: float) -> float:
    """The schedule's bound eta sum_{s <= t} s^{-a} on ||W_t||."""
    return ETA * float(np.sum(np.arange(1, t + 1, dtype=float) ** -a))


def test_t2_interior_points_are_inside_the_condition_and_keep_the_boundary_sweep():
    for a, alpha, b in (*T2.INTERIOR, *T2.INTERIOR_REPORTED):
        assert a + b > 1 and alpha == 1
    assert all(math.isclose(a + b, 1) for a, alpha, b in T2.SWEEP)      # the boundary check stays as it was


def test_t2_interior_horizon_starts_its_window_at_eq10s_norm_bound():
    """Derivation step 5: the window [N/5, N] starts where the schedule's ||W|| bound first reaches EQ10's at its own
    window start, at every budget."""
    a = T2.INTERIOR[0][0]
    for n_main, n in zip(STEPS, (T2.INTERIOR_STEPS.quick, T2.INTERIOR_STEPS.standard, T2.INTERIOR_STEPS.full)):
        ref = _w_bound(int(WINDOW * n_main), EQ10[0])
        t = round(WINDOW * n)
        assert _w_bound(t, a) >= ref > _w_bound(t - 1, a)
    assert T2.interior_horizon(0.75, STEPS[0]) > 4e5 > T2.INTERIOR_STEPS.full   # a = 3/4: beyond every budget


def test_t2_interior_margin_is_within_half_the_distance_to_the_nearest_alternative():
    laws = sorted({T2.loss_exponent(*p) for p in T2.SWEEP})
    for p in T2.INTERIOR:
        law = T2.loss_exponent(*p)
        alternatives = [T2.w_factor_exponent(*p)] + [x for x in laws if not math.isclose(x, law)]
        assert T2.LAW_MARGIN.half_width <= min(abs(x - law) for x in alternatives) / 2


def test_t2_derivation_proves_the_interior_and_rejects_the_w_factor():
    assert T2.derivation().status == "pass"
    assert T2.derivation(T2.w_factor_exponent).status == "fail"


def test_fig2_early_is_the_first_tenth_of_the_figure_and_names_no_cap():
    assert F2.EARLY_END == example1_suite.SUITE_STEPS[0] // 10
    assert "t_cap" not in F2.early_gaps.__code__.co_varnames       # the window does not move with the cap
    lo, hi = F2.CAP_RANGE
    assert math.isclose(example1_suite.PS_CAP / lo, 100) and math.isclose(hi / example1_suite.PS_CAP, 100)
    cap = F2.CLAIM.free_choice("PS cap")          # the cap is a free choice over CAP_RANGE, the suite's 1e4 its value
    assert (cap.value, cap.low, cap.high) == (example1_suite.PS_CAP, *F2.CAP_RANGE)
    assert cap.sets["ps-fastest-early"](example1_suite.PS_CAP)["ps"] is F2.PS_CAPPED_RUN
    assert cap.sets["ps-fastest-early"](lo)["ps"].params == {"cap": lo}
    assert not cap.analysis                       # another cap is another Polyak run (a fixture bound at it)
    for name, check in (("early window", "ps-fastest-early"), ("far faster", "ngd-far-faster-than-gd")):
        f = F2.CLAIM.free_choice(name)            # readings of the same trajectories: plain parameters, no new runs
        assert f.analysis and not any(fx.is_fixture(v) for v in f.sets[check](f.low).values())
