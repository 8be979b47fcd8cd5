"""theorems.pilot (sample-size re-estimation); B.L11's known violating draw, replayed at every seed (issue 13); A.T1.3's
probe stratum of far rotations, which its Q = I control's own search uses, no known instance fed to it (issue 31)."""
import math

import torch

from numerics.paper_b import data
from theorems.paper_a import t1_3_strong_convexity as t13
from theorems.paper_b import l11_joint_invariants as l11
from theorems.paper_b.joint_assumptions import MAIN, nu_threshold
from theorems.pilot import planned_growth, sized_by_pilot, widest_ratio


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
