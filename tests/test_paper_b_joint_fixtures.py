"""The joint-training claims' shared logic (theorems.paper_b.joint_fixtures) and B.L11's invariants: Lemma 9's
level, the conditioned main set-up, the exponent estimator on planted power laws, a planted invariant violation."""
import numpy as np
import pytest
import sympy as sp

from numerics.paper_b import data
from numerics.paper_b import joint as J
from theorems.claim import Context
from theorems.paper_b import joint_fixtures as F
from theorems.paper_b.l11_joint_invariants import invariants


def test_lemma9_level():
    assert F.nu_threshold(3, 2, 4.0) == pytest.approx((1 - 1 / 16) / 12)
    assert F.nu_threshold(3, 2, 1.0) == 0.0 and F.nu_threshold(3, 2, 0.8) == 0.0
    rho, n, T = sp.symbols("rho n T", positive=True)
    assert sp.simplify(F.nu0_level(rho, n, T) - (rho**2 - 1) / (2 * n * T * rho**2)) == 0   # the form B.L9 proves


def test_main_setup_is_conditioned_on_lemma9():
    ctx = Context(seed=3)
    setup = F.main_setup(ctx)
    assert setup.nu_max == F.nu_threshold(setup.n, setup.T, setup.opt_ratio)
    ds, tried = J.instances(setup)
    assert ds.X.shape[0] == setup.B == 6 and tried >= 6
    assert bool((data.assumptions(ds)["nu"] <= setup.nu_max).all())
    assert F.broken_setup(ctx).nu_max is None and F.broken_setup(ctx).B == setup.B


def test_tail_exponent_recovers_planted_exponents():
    t = np.unique(np.geomspace(1, 3000, 80).round())
    vals = np.stack([2 * t ** (1 / 3) + 4, 0.5 * t ** (2 / 3), 3 * t ** (1 / 3)], 1)
    e = F.tail_exponent(t, vals[:, [0, 2]], 3000, z=3.0, increments=True)     # offset drops out of increments
    assert e.est == pytest.approx(1 / 3, abs=2e-3) and e.lo < 1 / 3 < e.hi
    e = F.tail_exponent(t, vals[:, [1]], 3000, z=3.0, increments=False)
    assert e.est == pytest.approx(2 / 3, abs=1e-9) and e.stat == 0.0 and e.sys == pytest.approx(0, abs=1e-9)


def test_invariants_report_a_planted_violation():
    ds = data.stack([data.dm(n=3, T=2, d=8, opt_ratio=3.0, seed=100003 + b) for b in range(2)])
    traj = J.run_joint(ds, J.eq10(0.1, *F.EQ10), 30, record_at=range(31))
    inv = invariants(traj)
    assert inv["log_loss_ratio"].shape == (31, 2) and inv["gap_min"].shape == (2,)
    traj.metrics["score_gap"] = traj["score_gap"].clone()
    traj.metrics["score_gap"][10, 0, 1] -= 5.0                             # a drop at step 10 in run 0
    inv2 = invariants(traj)
    assert inv2["gap_drop_max"][0] > 4.0 and inv2["gap_drop_max"][1] == inv["gap_drop_max"][1]


def test_control_specs_change_one_piece_of_eq10():
    assert F.EQ10_SPEC == ("eq10", F.ETA, *F.EQ10)
    assert F.RAW_W_SPEC == ("eq10_mutant", F.ETA, *F.EQ10, "raw_W")
    assert F.ASCENT_W_SPEC == ("eq10_mutant", F.ETA, *F.EQ10, "ascent_W")
    kind, eta, a, alpha, b = F.NO_1_OVER_L_SPEC
    assert (kind, eta, a, b) == ("eq10", F.ETA, F.EQ10[0], F.EQ10[2]) and alpha == 0.0
    # EQ10 is the reading B.T2 states: alpha = 1, b = 2/3 (put in: p = 1 - b = 1/3), a = 1 - b
    assert F.EQ10[1] == 1.0 and abs(1 - F.EQ10[2] - 1 / 3) < 1e-15 and abs(F.EQ10[0] + F.EQ10[2] - 1) < 1e-15
