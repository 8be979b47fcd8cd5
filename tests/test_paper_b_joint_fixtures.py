"""The joint-training claims' shared set-ups and logic (theorems.paper_b.joint: setups, assumptions, rates)
and B.L11's invariants: Lemma 9's level, the conditioned main batch, the runs' sharing, the exponent estimator on
planted power laws, a planted invariant violation, the mutants of (10)."""
import pickle

import numpy as np
import pytest
import sympy as sp
import torch

from numerics import DTYPE
from numerics.paper_b import data, model
from numerics.paper_b import joint as J
from theorems.claim import Context
from theorems.fixture import Memo, resolve
from theorems.paper_b.joint import setups
from theorems.paper_b.joint.assumptions import MAIN, nu0_level, nu_threshold
from theorems.paper_b.joint.l11_joint_invariants import invariants
from theorems.paper_b.joint.rates import tail_exponent


def test_lemma9_level():
    assert nu_threshold(3, 2, 4.0) == pytest.approx((1 - 1 / 16) / 12)
    assert nu_threshold(3, 2, 1.0) == 0.0 and nu_threshold(3, 2, 0.8) == 0.0
    rho, n, T = sp.symbols("rho n T", positive=True)
    assert sp.simplify(nu0_level(rho, n, T) - (rho**2 - 1) / (2 * n * T * rho**2)) == 0   # the form B.L9 proves


def test_main_batch_is_conditioned_on_lemma9():
    ctx = Context(seed=3)
    batch = resolve(setups.dm_batch, ctx)
    setup = batch.setup
    seed = ctx.derived_seed(setups.DM_SEED_KEY) % 2**31  # the run's DM draws, by name
    assert setup == J.Setup(**MAIN, B=6, seed=seed, nu_max=nu_threshold(MAIN["n"], MAIN["T"], MAIN["opt_ratio"]))
    assert batch.ds.X.shape[0] == setup.B == 6 and batch.tried >= 6
    assert bool((data.assumptions(batch.ds)["nu"] <= setup.nu_max).all())
    W_mm, u_mm, _, _ = J.max_margin_solutions(batch.ds)
    assert torch.equal(batch.W_mm, W_mm) and torch.equal(batch.u_mm, u_mm)
    broken = resolve(setups.BROKEN_BATCH, ctx)
    assert broken.setup.nu_max is None and broken.setup.B == setup.B and broken.dm == setups.BROKEN
    # a larger batch starts with the main batch's draws (draws are tried in a fixed order of seeds)
    more = resolve(setups.dm_batch.bind(B=8), ctx)
    assert torch.equal(more.ds.X[:6], batch.ds.X)


def test_runs_share_one_computation_and_pickle():
    ctx = Context(seed=0, budget="quick")
    memo = Memo(ctx)
    main = memo.value(setups.MAIN_RUN.fixture.bind(update=setups.EQ10_UPDATE, keep_params=True))
    assert memo.value(setups.MAIN_RUN) is main and memo.computed[setups.joint_run.name] == 1
    assert main.n_steps == setups.STEPS[0] and int(main.traj.steps[-1]) == main.n_steps and main.update == setups.EQ10_UPDATE
    assert "W" in main.traj.metrics and "W" not in memo.value(setups.ASCENT_RUN).traj.metrics
    back = pickle.loads(pickle.dumps(main))            # the runner ships values between workers
    assert back.update == setups.EQ10_UPDATE and torch.equal(back.traj["log_loss"], main.traj["log_loss"])


def test_tail_exponent_recovers_planted_exponents():
    t = np.unique(np.geomspace(1, 3000, 80).round())
    vals = np.stack([2 * t ** (1 / 3) + 4, 0.5 * t ** (2 / 3), 3 * t ** (1 / 3)], 1)
    e = tail_exponent(t, vals[:, [0, 2]], 3000, z=3.0, increments=True)     # offset drops out of increments
    assert e.est == pytest.approx(1 / 3, abs=2e-3) and e.lo < 1 / 3 < e.hi
    e = tail_exponent(t, vals[:, [1]], 3000, z=3.0, increments=False)
    assert e.est == pytest.approx(2 / 3, abs=1e-9) and e.stat == 0.0 and e.sys == pytest.approx(0, abs=1e-9)


def test_invariants_report_a_planted_violation():
    ds = data.stack([data.dm(n=3, T=2, d=8, opt_ratio=3.0, seed=100003 + b) for b in range(2)])
    traj = J.run_joint(ds, J.eq10(0.1, *setups.EQ10), 30, record_at=range(31))
    inv = invariants(traj)
    assert inv["log_loss_ratio"].shape == (31, 2) and inv["gap_min"].shape == (2,)
    traj.metrics["score_gap"] = traj["score_gap"].clone()
    traj.metrics["score_gap"][10, 0, 1] -= 5.0                             # a drop at step 10 in run 0
    inv2 = invariants(traj)
    assert inv2["gap_drop_max"][0] > 4.0 and inv2["gap_drop_max"][1] == inv["gap_drop_max"][1]


def test_updates_change_one_piece_of_eq10():
    from theorems.paper_b.joint.l10_joint_norms import NO_1_OVER_L

    eq10 = dict(eta=setups.ETA, a=setups.EQ10[0], alpha=setups.EQ10[1], b=setups.EQ10[2])
    assert dict(setups.EQ10_UPDATE.params) == eq10 and setups.EQ10_UPDATE.make is J.eq10
    assert dict(setups.RAW_W.params) == eq10 and dict(setups.ASCENT_W.params) == eq10
    assert dict(NO_1_OVER_L.params) == dict(eq10, alpha=0.0) and NO_1_OVER_L.make is J.eq10
    # the labels the records print for them
    assert setups.RAW_W.label == "('eq10_mutant', 0.05, 0.3333333333333333, 1.0, 0.6666666666666666, 'raw_W')"
    assert NO_1_OVER_L.label == "('eq10', 0.05, 0.3333333333333333, 0.0, 0.6666666666666666)"
    # EQ10 is the reading B.T2 states: alpha = 1, b = 2/3 (put in: p = 1 - b = 1/3), a = 1 - b
    assert setups.EQ10[1] == 1.0 and abs(1 - setups.EQ10[2] - 1 / 3) < 1e-15 and abs(setups.EQ10[0] + setups.EQ10[2] - 1) < 1e-15


def test_eq10_mutants_change_only_the_named_piece():
    ds = data.stack([data.dm(n=3, T=2, d=8, opt_ratio=3.0, seed=100003 + b) for b in range(2)])
    g = torch.Generator().manual_seed(2)
    params = (0.3 * torch.randn(2, 8, 8, generator=g, dtype=DTYPE), torch.randn(2, 8, generator=g, dtype=DTYPE))
    step = 4
    ref_W, ref_u = J.step_update(ds, J.eq10(0.1, *setups.EQ10), params, step)
    raw_W, raw_u = J.step_update(ds, setups.raw_w_step(0.1, *setups.EQ10), params, step)
    asc_W, asc_u = J.step_update(ds, setups.ascent_w_step(0.1, *setups.EQ10), params, step)
    assert torch.allclose(raw_u, ref_u, atol=1e-14) and torch.allclose(asc_u, ref_u, atol=1e-14)
    assert torch.allclose(asc_W, -ref_W, atol=1e-14)                     # the W-step with the wrong sign
    # raw_W: -eta (t+1)^{-a} grad_W L, i.e. (10)'s W-step times ||grad_W L||
    gW = torch.autograd.functional.jacobian(lambda W: model.loss_value(W, params[1], ds).sum(), params[0])
    assert torch.allclose(raw_W, -0.1 * (step + 1) ** -setups.EQ10[0] * gW, rtol=1e-8, atol=1e-14)
    assert torch.allclose(ref_W.flatten(1).norm(dim=-1), torch.full((2,), 0.1 * (step + 1) ** -setups.EQ10[0], dtype=DTYPE))


def test_free_choice_runs_are_the_claims_own_at_their_values_and_keyed_by_numbers_elsewhere():
    """setups.at_choices: the request itself at the claims' values (their run is one point of every design), and
    elsewhere a request whose update is a new value keyed by its numbers, so two settings' requests for one value
    share a run."""
    assert setups.at_choices(setups.MAIN_RUN) is setups.MAIN_RUN
    a, b = setups.at_choices(setups.MAIN_RUN, eta=0.01), setups.at_choices(setups.MAIN_RUN, eta=0.01)
    assert a is not b and a.key("quick") == b.key("quick") != setups.MAIN_RUN.key("quick")
    assert a.params["update"] is not b.params["update"] and a.params["update"]["eta"] == 0.01
    assert a.params["update"].label == "updates (10) (eta = 0.01)" and a.params["update"]["b"] == setups.EQ10[2]
    assert setups.update_at(setups.EQ10_UPDATE) is setups.EQ10_UPDATE
    with pytest.raises(ValueError, match="no number named"):
        setups.changed(setups.EQ10_UPDATE, eta_max=1.0)
    assert setups.at_choices(setups.MAIN_RUN, d=32).dependencies()["batch"].params == {"d": 32}
    assert setups.at_choices(setups.MAIN_RUN, horizon=2.0).params["n_steps"] == setups.scaled(setups.N_MAIN, 2.0)
    assert setups.scaled(setups.N_MAIN, 2.0).quick == 2 * setups.STEPS[0] and setups.scaled(setups.N_MAIN, 1.0) == setups.N_MAIN
    batch = resolve(setups.dm_batch.bind(d=32), Context(seed=3))
    assert batch.dm.d == 32 == batch.ds.X.shape[-1] and batch.dm.nu_max == setups.CONDITION1.nu_max


@pytest.mark.parametrize("claim_id, control", [("B.T3", "wrong W_mm"), ("B.L12", "dropped constraint")])
def test_a_wrong_svm_control_follows_the_maps_dimension(claim_id, control):
    """The wrong-SVM controls are functions of the check's own draws, so at a map's setting of the DM dimension they
    read the draws at that d (they were fixtures of the default draws, and raised on a shape mismatch there); at
    d = 32 the control runs and is rejected."""
    from verify import registry, runner

    claim = registry.get(claim_id)
    unit = runner.setting_control_unit(claim, control, {"DM dimension d": 32})
    entry = runner.run_unit(claim, unit, Context(seed=0, budget="quick"))
    assert "raised" not in entry["summary"] and entry["status"] == "fail", entry["summary"]
