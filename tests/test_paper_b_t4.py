"""B.T4's margin-fraction check at fresh seed 618, where the six shared runs left the approach exponent's interval
0.41 wide against its maximum 0.4 (one run at -0.20, the others at -0.40..-0.45): the pilot now runs more DM draws."""
from theorems.claim import Context
from theorems.fixture import resolve
from theorems.paper_b.joint import setups
from theorems.paper_b.joint import t4_u_margin as t4


#: the draws of the quick run at seed 618 before the DM draws were seeded by name (data seeds 618 * 100003 + k):
#: where the pilot was introduced, the approach decision too wide to decide on 6 runs
SEED_618_RUN = t4.MAIN_RUN.bind(batch=setups.dm_batch.bind(seed=618))


def test_the_pilot_decides_seed_618_on_more_draws(monkeypatch):
    ctx = Context(seed=618, budget="quick", figures=False)
    check = t4.CLAIM.check("margin-fraction")
    out = check.run(ctx, **{"run": SEED_618_RUN})
    assert out.status == "pass", out.summary
    assert out.details["pilot_growth"] > 1 and out.details["runs"] == 6 * out.details["pilot_growth"]
    # the miss it replaces: without the pilot the approach decision was too wide to decide
    monkeypatch.setattr(t4, "PILOT_MAX_GROWTH", 1)
    old = check.run(ctx, **{"run": SEED_618_RUN})
    assert old.status == "inconclusive" and old.details["runs"] == 6


def test_the_pilots_first_runs_are_the_shared_runs():
    ctx = Context(seed=618, budget="quick", figures=False)
    run = resolve(t4.MAIN_RUN, ctx)
    steps, q, _ = t4.margin_fraction(run)
    steps2, q2, _ = t4.margin_fraction(run, growth=2)
    assert q2.shape[1] == 2 * q.shape[1] and (steps2 == steps).all()
    assert abs(q2[1:, :q.shape[1]] - q[1:]).max() < 1e-9  # row 0: u_0 = 0, q undefined (the check skips it)
