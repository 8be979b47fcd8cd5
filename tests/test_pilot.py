"""theorems.pilot (sample-size re-estimation); B.L11's known violating draw, replayed at every seed (issue 13); A.T1.3's
probe stratum of far rotations, which its Q = I control's own search uses, no known instance fed to it (issue 31)."""
import math

import torch

from numerics.paper_b import data
from theorems.paper_a.geometry import t1_3_strong_convexity as t13
from theorems.paper_b.joint import l11_joint_invariants as l11
from theorems.paper_b.joint.assumptions import MAIN, nu_threshold
from theorems.pilot import LOOKS, planned_growth, sized_by_pilot, two_looks, widest_ratio


def test_planned_growth_follows_the_squared_width_ratio_within_its_bounds():
    assert planned_growth(0.5, 0.6, 4) == 1            # narrow enough: no growth
    assert planned_growth(0.9, 0.6, 4) == 3            # (0.9 / 0.6)^2 = 2.25 -> 3
    assert planned_growth(1.7, 0.6, 4) == 4            # capped
    assert planned_growth(math.nan, 0.6, 4) == 4       # a non-finite pilot interval: the most draws
    two = [{"lo": 0.0, "hi": 1.0, "max_width": 2.0}, {"lo": 1.0, "hi": 4.0, "max_width": 4.0}]
    assert widest_ratio(two) == widest_ratio(two, expected=2) == 0.75
    assert widest_ratio(two, expected=3) == math.inf   # a decision left out counts as too wide


def _stages(ratios):
    """A decide_at whose stage at growth g reports ``ratios[g]``, logging the growths asked for."""
    asked = []

    def decide_at(g):
        asked.append(g)
        return ratios[g], f"decided at {g}"
    return decide_at, asked


def test_sized_by_pilot_grows_only_past_its_trigger_and_replans_once_a_stage_too_wide():
    decide_at, asked = _stages({1: 0.5})
    assert sized_by_pilot(decide_at, 0.6, 4) == ("decided at 1", 1) and asked == [1]
    decide_at, asked = _stages({1: 0.7})  # inside the trigger: no growth, even above the target
    assert sized_by_pilot(decide_at, 0.6, 4, trigger=0.8) == ("decided at 1", 1) and asked == [1]
    decide_at, asked = _stages({1: 0.8, 2: 0.62})  # planned 2-fold; decidable there: no re-plan
    assert sized_by_pilot(decide_at, 0.6, 4) == ("decided at 2", 2) and asked == [1, 2]
    decide_at, asked = _stages({1: 0.84, 2: 1.005, 4: 0.7})  # fresh seed 501's A.T4: wider after pooling -> re-plan
    assert sized_by_pilot(decide_at, 0.6, 4) == ("decided at 4", 4) and asked == [1, 2, 4]
    decide_at, asked = _stages({1: 1.7, 4: 1.2})  # already at the cap: what the cap gives is the answer
    assert sized_by_pilot(decide_at, 0.6, 4) == ("decided at 4", 4) and asked == [1, 4]
    decide_at, asked = _stages({1: math.inf, 4: 0.5})  # a decision missing from the pilot: the most draws
    assert sized_by_pilot(decide_at, 0.6, 4) == ("decided at 4", 4)


def _two_look_rates(truth: float, reps: int = 4000, alpha: float = 0.1, seed: int = 11):
    """(false-pass rate, fail rate, share stopped at look 1) of :func:`two_looks` on one equivalence decision of a
    normal mean against 0 +- 1, each look at ``alpha / LOOKS``, a pilot of 8 draws (sd 1.5: wider than the 95 %-power
    width, so the pilot alone often cannot decide) grown to at most 4 times."""
    import numpy as np
    from scipy.stats import norm

    from numerics import stats

    margin, sd, n0 = stats.Margin(1.0, excludes="planted"), 1.5, 8
    z = float(norm.isf(alpha / LOOKS / 2))
    max_width = stats.width_for_power(margin.half_width, z)
    rng = np.random.default_rng(seed)
    passed = failed = early = 0
    for _ in range(reps):
        draws = rng.normal(truth, sd, 4 * n0)

        def decide_at(g):
            x = draws[:g * n0]
            m, se = x.mean(), sd / math.sqrt(len(x))  # a known spread: the design alone, no t correction
            d = stats.decide_interval(m - z * se, m + z * se, 0.0, margin=margin)
            return 2 * z * se / max_width, [{"status": d.status}], d.status

        status, g = two_looks(decide_at, 0.8, 4)
        passed, failed, early = passed + (status == "pass"), failed + (status == "fail"), early + (g == 1)
    return passed / reps, failed / reps, early / reps


def test_two_looks_spend_the_level_once_over_both_looks():
    """At the band's edge the chance of a false pass over both looks is at most alpha/2 (each look at alpha/4); at
    the target a false fail is as rare and the power is high; a mutant far outside stops at the pilot."""
    slack = 3 * math.sqrt(0.05 * 0.95 / 4000)
    p_edge, _, _ = _two_look_rates(1.0)
    assert p_edge <= 0.05 + slack
    p_target, f_target, _ = _two_look_rates(0.0)
    assert f_target <= 0.05 + slack and p_target > 0.8
    _, f_far, early_far = _two_look_rates(4.0)
    assert f_far > 0.9 and early_far > 0.5


def test_b_l11_known_draw_is_inside_condition1_and_breaks_invariant_iii():
    ds = l11.known_violation()
    nu = float(torch.as_tensor(data.assumptions(ds)["nu"]).max())
    assert nu <= nu_threshold(MAIN["n"], MAIN["T"], MAIN["opt_ratio"])
    inv = l11.early_invariants(ds, l11.SCAN_STEPS)
    assert inv["(ii) gap > 0"].all() and inv["(ii) gap non-decreasing"].all()
    assert not inv["(iii) s_opt non-decreasing"][0] and inv["s_opt_drop_max"][0] > 1e-4  # far above rounding


def test_a_t1_3_probe_and_its_control_run_one_search_with_a_far_rotation_stratum():
    """No known instance is fed to the control: it overrides only the projection, and the shared strategy draws
    rotations far from I (the quarter-turn stratum), where the Q = I mutant separates from the claim."""
    import numpy as np
    from hypothesis import given, settings

    from theorems import strategies as S

    control = next(c for c in t13.CLAIM.controls if c.name == "probe: Q = I projection")
    assert set(control.overrides) == {"mutant"}

    @settings(max_examples=30, database=None, deadline=None)
    @given(S.quarter_turn(3, t13.FAR_ROTATION_JITTER))
    def far(Q):
        assert np.allclose(Q @ Q.T, np.eye(3)) and np.linalg.norm(Q - np.eye(3)) > 1.0

    far()
    quarter = {"d": 2, "r": 2, "Sigma": np.eye(2), "M": np.eye(2), "Q": np.array([[0.0, -1.0], [1.0, 0.0]]),
               "H": np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), "frac": 1.0, "direction": "normal"}
    assert all(t13.probe_assumptions(quarter).values())
    assert t13.probe_conclusion(quarter, 1e-6)[0]                               # the claim holds there
    assert not t13.probe_conclusion(quarter, 1e-6, projection="identity")[0]    # the mutant fails there
