"""Paper B joint training numerics (numerics.paper_b.joint): records, conditioned batches, segment ratios, Hessian
power iteration, rate fits, the algorithms joint runs use."""
import math

import numpy as np
import torch

from numerics import DTYPE
from numerics.stats import per_run_slopes
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, model
from numerics.paper_b import joint as J

EQ10 = (1 / 3, 1.0, 2 / 3)


def _small(B=2, d=8, n=3, T=2, rho=3.0):
    return data.stack([data.dm(n=n, T=T, d=d, opt_ratio=rho, seed=100003 + b) for b in range(B)])


def test_records_match_definitions():
    ds = _small()
    W_mm, u_mm, _, _ = J.max_margin_solutions(ds)
    traj = J.run_joint(ds, J.eq10(0.1, *EQ10), 20, W_mm=W_mm, u_mm=u_mm, record_at=range(21), keep_params=True)
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


def test_setup_keeps_only_draws_under_nu_max():
    free = J.Setup(n=3, T=2, d=64, opt_ratio=4.0, B=6, seed=7)
    ds_free, tried_free = J.instances(free)
    assert ds_free.X.shape == (6, 3, 2, 64) and tried_free == 6
    nu_free = data.assumptions(ds_free)["nu"]
    cut = float(nu_free.median())                                          # about half the draws pass
    ds, tried = J.instances(J.Setup(n=3, T=2, d=64, opt_ratio=4.0, B=3, seed=7, nu_max=cut))
    assert ds.X.shape == (3, 3, 2, 64) and tried > 3
    assert bool((data.assumptions(ds)["nu"] <= cut).all())


def _point_and_direction(seed: int):
    """Two runs' (W, u) at d = 8 and a random direction (dW, du) from them."""
    g = torch.Generator().manual_seed(seed)
    W = 0.3 * torch.randn(2, 8, 8, generator=g, dtype=DTYPE)
    u = torch.randn(2, 8, generator=g, dtype=DTYPE)
    return W, u, torch.randn(2, 8, 8, generator=g, dtype=DTYPE), torch.randn(2, 8, generator=g, dtype=DTYPE)


def test_segment_ratio_matches_direct_evaluation():
    ds = _small()
    W, u, dW, du = _point_and_direction(0)
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
    H0 = torch.autograd.functional.hessian(
        lambda th: model.loss_value(th[:16].reshape(1, 4, 4), th[16:].reshape(1, 4), ds).sum(), theta)
    ratio0 = torch.linalg.eigvalsh(H0).abs().max() / model.loss_value(W, u, ds)[0]
    assert torch.allclose(ratio0, full, rtol=1e-9)


def test_rate_helpers_on_exact_power_laws():
    t = np.array([1, 2, 4, 8, 16, 32, 64, 128], float)
    vals = np.stack([3 * t ** (2 / 3) + 5, 0.5 * t ** 0.25], 1)             # offsets drop out of increments
    mid, rate = J.increment_rates(t, vals)
    s = per_run_slopes(np.log(mid[3:]), np.log(rate[3:]))
    assert np.allclose(s + 1, [2 / 3, 0.25], atol=2e-3)
    assert np.allclose(per_run_slopes(np.log(t), np.log(np.stack([t**-1.5, 2 * t**0.5], 1))), [-1.5, 0.5])


def test_joint_runs_of_each_algorithm():
    ds = _small()
    for algorithm in [J.eq10(0.1, *EQ10), A.gd(1.0), A.ngd(0.1), A.polyak(math.inf)]:
        traj = J.run_joint(ds, algorithm, 5, record_at=[0, 5])
        assert torch.isfinite(traj["log_loss"]).all() and (traj["log_loss"][-1] < 0).all()


def test_segment_margin_change_matches_direct_evaluation():
    ds = _small()
    W, u, dW, du = _point_and_direction(1)
    got = J.segment_margin_change(ds, (W, u), (dW, du), n_points=4)
    m0 = model.forward(W, u, ds) * ds.y
    ref = torch.stack([(model.forward(W + k / 4 * dW, u + k / 4 * du, ds) * ds.y - m0).abs().amax(-1)
                       for k in range(5)]).amax(0)
    assert torch.allclose(got, ref, atol=1e-10)
    # the loss ratio along the segment is at most e^{margin change}
    assert (J.segment_log_ratio(ds, (W, u), (dW, du), n_points=4) <= got + 1e-12).all()
