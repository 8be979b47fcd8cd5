"""B.T4's margin-fraction check at fresh seed 618, where the six shared runs left the approach exponent's interval
0.41 wide against its maximum 0.4 (one run at -0.20, the others at -0.40..-0.45): the pilot now runs more DM draws."""
from theorems.claim import Context
from theorems.paper_b import t4_u_margin as t4


def test_the_pilot_decides_seed_618_on_more_draws(monkeypatch):
    ctx = Context(seed=618, budget="quick", figures=False)
    out = t4.check_margin(ctx)
    assert out.status == "pass", out.summary
    assert out.details["pilot_growth"] > 1 and out.details["runs"] == 6 * out.details["pilot_growth"]
    # the miss it replaces: without the pilot the approach decision was too wide to decide
    monkeypatch.setattr(t4, "PILOT_MAX_GROWTH", 1)
    old = t4.check_margin(ctx)
    assert old.status == "inconclusive" and old.details["runs"] == 6


def test_the_pilots_first_runs_are_the_shared_runs():
    ctx = Context(seed=618, budget="quick", figures=False)
    steps, q, _ = t4.margin_fraction(ctx)
    steps2, q2, _ = t4.margin_fraction(ctx, growth=2)
    assert q2.shape[1] == 2 * q.shape[1] and (steps2 == steps).all()
    assert abs(q2[1:, :q.shape[1]] - q[1:]).max() < 1e-9  # row 0: u_0 = 0, q undefined (the check skips it)
