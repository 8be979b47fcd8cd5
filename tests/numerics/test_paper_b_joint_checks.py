"""Paper B joint-training helpers: records, invariants, segment ratios, Hessian power iteration, rate fits."""
import math

import numpy as np
import pytest
import torch

from numerics import DTYPE
from numerics.paper_b import joint_checks as J
from numerics.paper_b import model


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _small(B=2, d=8, n=3, T=2, rho=3.0):
    return J.dm_batch(n, T, d, rho, B, seed=1)


def test_records_match_definitions():
    ds = _small()
    W_mm, u_mm, _, _ = J.max_margin_solutions(ds)
    traj = J.run_joint(ds, J.eq10(0.1), 20, W_mm=W_mm, u_mm=u_mm, record_at=range(21), keep_params=True)
    W, u = traj["W"][-1], traj["u"][-1]
    f = model.forward(W, u, ds)                                            # y_i f(X_i) = margin
    assert torch.allclose(traj["margin"][-1], f * ds.y, atol=1e-12)
    L = model.loss_value(W, u, ds)
    assert torch.allclose(traj["log_loss"][-1], L.log(), atol=1e-12)
    Wb = W.flatten(1) / W.flatten(1).norm(dim=-1, keepdim=True)
    Mb = W_mm.flatten(1) / W_mm.flatten(1).norm(dim=-1, keepdim=True)
    assert torch.allclose(traj["one_minus_corr"][-1], 1 - (Wb * Mb).sum(-1), atol=1e-12)
    s = torch.softmax(model.logits(W, ds), -1)
    r = (s.unsqueeze(-1) * ds.X).sum(-2)
    ub = u_mm / u_mm.norm(dim=-1, keepdim=True)
    assert torch.allclose(traj["r_margin"][-1], ds.y * (r @ ub.unsqueeze(-1)).squeeze(-1), atol=1e-12)
    # zero init: W stays 0 on the first step (grad_W = 0 at u = 0), u moves
    assert traj["W_norm"][1].abs().max() == 0 and (traj["u_norm"][1] > 0).all()


def test_invariants_report_a_planted_violation():
    ds = _small()
    traj = J.run_joint(ds, J.eq10(0.1), 30, record_at=range(31))
    inv = J.invariants(traj)
    assert inv["log_loss_ratio"].shape == (31, 2) and inv["gap_min"].shape == (2,)
    traj.metrics["score_gap"] = traj["score_gap"].clone()
    traj.metrics["score_gap"][10, 0, 1] -= 5.0                             # a drop at step 10 in run 0
    inv2 = J.invariants(traj)
    assert inv2["gap_drop_max"][0] > 4.0 and inv2["gap_drop_max"][1] == inv["gap_drop_max"][1]


def test_segment_ratio_matches_direct_evaluation():
    ds = _small()
    g = torch.Generator().manual_seed(0)
    W = 0.3 * torch.randn(2, 8, 8, generator=g, dtype=DTYPE)
    u = torch.randn(2, 8, generator=g, dtype=DTYPE)
    dW = torch.randn(2, 8, 8, generator=g, dtype=DTYPE)
    du = torch.randn(2, 8, generator=g, dtype=DTYPE)
    got = J.segment_log_ratio(ds, (W, u), (dW, du), n_points=4)
    L0 = model.loss_value(W, u, ds)
    ref = torch.stack([model.loss_value(W + k / 4 * dW, u + k / 4 * du, ds) / L0 for k in range(5)]).amax(0).log()
    assert torch.allclose(got, ref, atol=1e-10)
    assert torch.equal(J.segment_log_ratio(ds, (W, u), (0 * dW, 0 * du)), torch.zeros(2, dtype=DTYPE))


def test_hessian_power_iteration_matches_full_hessian():
    ds = _small(B=1, d=4)
    g = torch.Generator().manual_seed(3)
    W = 0.5 * torch.randn(1, 4, 4, generator=g, dtype=DTYPE)
    u = torch.randn(1, 4, generator=g, dtype=DTYPE)
    H = J.hessian_full(W, u, ds)
    margin = (torch.softmax(model.logits(W, ds), -1) * model.token_scores(u, ds)).sum(-1)
    shifted_L = torch.exp(margin.amin() - margin).mean()
    full = torch.linalg.eigvalsh(H).abs().max() / shifted_L
    pi = J.log_hessian_ratio(W, u, ds, iters=300, gen=torch.Generator().manual_seed(0)).exp()
    assert torch.allclose(pi, full, rtol=1e-6)
    # the shift cancels: the same ratio from the unshifted loss by autograd
    theta = torch.cat([W.flatten(), u.flatten()])
    d = 4
    H0 = torch.autograd.functional.hessian(
        lambda th: model.loss_value(th[:16].reshape(1, 4, 4), th[16:].reshape(1, 4), ds).sum(), theta)
    ratio0 = torch.linalg.eigvalsh(H0).abs().max() / model.loss_value(W, u, ds)[0]
    assert torch.allclose(ratio0, full, rtol=1e-9) and d == 4


def test_rate_helpers_on_exact_power_laws():
    t = np.array([1, 2, 4, 8, 16, 32, 64, 128], float)
    vals = np.stack([3 * t ** (2 / 3) + 5, 0.5 * t ** 0.25], 1)             # offsets drop out of increments
    mid, rate = J.increment_rates(t, vals)
    s = J.per_run_slopes(mid[3:], rate[3:])
    assert np.allclose(s + 1, [2 / 3, 0.25], atol=2e-3)
    assert np.allclose(J.per_run_slopes(t, np.stack([t**-1.5, 2 * t**0.5], 1)), [-1.5, 0.5])


def test_condition_threshold_and_conditioned_instances():
    assert J.nu_threshold(3, 2, 4.0) == pytest.approx((1 - 1 / 16) / 12)
    assert J.nu_threshold(3, 2, 1.0) == 0.0
    setup = J.Setup(n=3, T=2, d=64, opt_ratio=4.0, B=3, seed=7)
    ds, tried = J.instances(setup)
    assert ds.X.shape == (3, 3, 2, 64) and tried >= 3
    assert bool(J.lemma9_event(ds, 4.0).all())


def test_make_algorithm_specs():
    ds = _small()
    for spec in [("eq10", 0.1, 1 / 3, 1.0, 2 / 3), ("gd", 1.0), ("ngd", 0.1), ("ps", math.inf)]:
        traj = J.run_joint(ds, J.make_algorithm(spec), 5, record_at=[0, 5])
        assert torch.isfinite(traj["log_loss"]).all() and (traj["log_loss"][-1] < 0).all()
