"""A.T1.2's GD check and its "R with I" control at fresh seed 613, where 2000 quick steps left the control with no
converged run (inconclusive instead of rejected)."""
from theorems.claim import Context
from theorems.paper_a.geometry import t1_2_manifold as t12


def test_the_identity_regularizer_control_finds_minimizers_off_the_manifold_at_seed_613(monkeypatch):
    ctx = Context(seed=613, budget="quick", figures=False)
    wrong = t12.population_objective_with_identity_regularizer
    out = t12.check_gd_minimizers(ctx, objective=wrong)
    assert out.status == "fail", out.summary  # rejected: converged runs of the mutant objective lie off Mfold
    assert t12.check_gd_minimizers(ctx).status == "pass"
    # the miss it replaces: at the old 2000 quick steps no run of the control converged
    monkeypatch.setattr(t12, "GD_STEPS", (2000, 5000, 8000))
    old = t12.check_gd_minimizers(ctx, objective=wrong)
    assert old.status == "inconclusive" and "only 0 of 32 runs converged" in old.summary


def test_gd_schedule_keeps_the_declared_step_up_to_the_init_scale_and_the_flow_time_beyond_it():
    """From inits no larger than INIT_SCALE the check runs ETA for GD_STEPS; from larger ones the step shrinks as the
    init's curvature grows (scale²) and the horizon grows with it, so eta·T, the flow time, stays."""
    for s in (0.1, t12.INIT_SCALE):
        assert t12.gd_schedule(s, 5000) == (t12.ETA, 5000)
    for s in (0.5, 1.0, 3.0):
        eta, T = t12.gd_schedule(s, 5000)
        assert eta == t12.ETA * (t12.INIT_SCALE / s) ** 2
        assert t12.ETA * 5000 <= eta * T < t12.ETA * 5000 + eta
