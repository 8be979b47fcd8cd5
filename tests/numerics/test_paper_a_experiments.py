"""Paper A experiment engines: exact sampling of the least-squares statistics, linearized rates, the
control-variate oracle, stacked minibatch runs."""
import math

import pytest
import torch

from numerics import DTYPE
from numerics.optim import apply
from numerics.paper_a import algorithms as al
from numerics.paper_a import experiments as ex
from numerics.paper_a import geometry as ge
from numerics.paper_a import oracle as orc
from numerics.paper_a.model import sym_sqrt
from theorems.paper_a.init_algorithm import precondition_one_sided, spectral_init_without_sigma_sqrt

NOISE = 0.3


def _instance(seed=0, d=4, r=5, batch=None, m_op=0.2):
    g = torch.Generator().manual_seed(seed)
    Sigma, W = al.random_instance(d, r, g, batch=batch, m_op=m_op)
    return Sigma, W, g


def test_conditioned_instance_meets_its_conditions():
    g = torch.Generator().manual_seed(1)
    Sigma, W = ex.conditioned_instance(3, 4, g, 5, 0.15, 0.5, min_gap=1.3)
    sv = torch.linalg.svdvals(W @ sym_sqrt(Sigma))
    assert Sigma.shape == (5, 3, 3) and W.shape == (5, 4, 3)
    assert (sv[:, -1] >= 0.5 * sv[:, 0]).all() and (sv[:, -2] >= 1.3 * sv[:, -1]).all()
    assert torch.allclose(sv[:, 0], torch.full((5,), 0.15, dtype=DTYPE))


def test_statistics_give_the_same_estimates_as_the_samples():
    """least_squares_from_statistics / spectral_init_from_estimates are the algorithms' maps on (XᵀX, XᵀY)."""
    Sigma, W, g = _instance()
    x, y = orc.sample_batches(Sigma, W, NOISE, 50, 1, 3, g)
    x, y = x[0], y[0]
    XtX, XtY = x.mT @ x, x.mT @ y
    W_hat, S_hat = ex.least_squares_from_statistics(XtX, XtY, 50)
    W_ref, S_ref = al.least_squares(x, y)
    assert torch.allclose(W_hat, W_ref, atol=1e-10) and torch.allclose(S_hat, S_ref)
    for a, b in zip(ex.spectral_init_from_estimates(W_hat, S_hat), al.spectral_init(x, y)):
        assert torch.allclose(a, b, atol=1e-9)


def test_sampled_statistics_have_the_right_law():
    """E XᵀX/n = Σ and E‖(Ŵ − W*)‖²_F = σ² r tr(Σ⁻¹)/(n − d − 1), against exact moments (z = 5)."""
    Sigma, W, g = _instance(seed=2)
    n, m = 30, 20000
    XtX, XtY = ex.sample_statistics(Sigma, W, NOISE, n, m, g)
    W_hat, S_hat = ex.least_squares_from_statistics(XtX, XtY, n)
    se = S_hat.std(0) / math.sqrt(m)
    assert ((S_hat.mean(0) - Sigma).abs() <= 5 * se).all()
    err2 = (W_hat - W).pow(2).sum((-1, -2))
    exact = NOISE**2 * 5 * torch.linalg.inv(Sigma).trace() / (n - 4 - 1)
    assert abs(err2.mean() - exact) <= 5 * err2.std() / math.sqrt(m)
    # the same statistic from real samples agrees (two-sample z-test)
    x, y = orc.sample_batches(Sigma, W, NOISE, n, 1, 4000, g)
    W_ref, _ = al.least_squares(x[0], y[0])
    ref = (W_ref - W).pow(2).sum((-1, -2))
    assert abs(err2.mean() - ref.mean()) <= 5 * math.sqrt(err2.var() / m + ref.var() / 4000)


def test_spectral_init_draws_and_whitened_error():
    Sigma, W, g = _instance(seed=3)
    r = ex.spectral_init_draws(Sigma, W, NOISE, 10**6, 50, g)
    assert set(r) == {"dist", "ls_op", "ls_F", "cov_F", "e", "B_op"}
    assert (r["dist"] < 0.02).all() and (r["e"] < 0.02).all() and (r["ls_op"] <= r["ls_F"] + 1e-15).all()
    wrong = ex.spectral_init_draws(Sigma, W, NOISE, 10**6, 50, g, init=spectral_init_without_sigma_sqrt)
    assert (wrong["dist"] > 0.05).all()  # a wrong step 2 stays off Mfold however large n is
    assert torch.allclose(ex.whitened_error(Sigma.expand(2, 4, 4), Sigma), torch.zeros(2, dtype=DTYPE), atol=1e-12)
    assert torch.allclose(ex.whitened_error(2 * Sigma, Sigma), torch.tensor(0.5, dtype=DTYPE))


def test_lstsq_tail_bound_shape():
    b = ex.lstsq_tail_bound(torch.tensor([5, 100, 10_000, 1_000_000]), 0.01, 4, 5, 0.3, 0.5)
    assert math.isinf(b[0]) and (b[1:].diff() < 0).all()
    assert torch.allclose(b[2] / b[3], torch.tensor(10.0, dtype=DTYPE), rtol=0.06)  # ~ n^{-1/2} up to the slack


def test_hessian_tangent_space_and_slowest_mode():
    Sigma, W, _ = _instance(seed=4, d=3, r=4)
    H, HL = ex.factor_hessian(Sigma, W)
    ev = torch.linalg.eigvalsh(H)
    lam = torch.linalg.svdvals(W @ sym_sqrt(Sigma))
    assert (ev[:3].abs() < 1e-10).all()  # d(d-1)/2 = 3 rotations of Mfold
    assert torch.allclose(ev[3], 2 * lam[-1], rtol=1e-8)  # A.T1.3's local alpha = 2 sigma_d
    assert torch.linalg.eigvalsh(HL).min() > -1e-10
    c, mu, _ = ex.linear_rate(Sigma, W, Sigma, 0.3)
    assert math.isclose(mu, 2 * float(lam[-1]), rel_tol=1e-8) and math.isclose(c, -2 * math.log(1 - 0.3 * mu))


def test_preconditioner_operator_is_the_algorithm_step_in_factor_coordinates():
    Sigma, W, g = _instance(seed=5, d=3, r=4)
    x, _ = orc.sample_batches(Sigma, W, NOISE, 40, 1, 1, g)
    S_hat = ge.sample_covariance(x[0])[0]
    V, K = al.random_init(1, 4, 3, g, scale=0.5)
    gV, gK = ge.regularized_loss_grad(V, K, Sigma, W)
    for kind, tx in (("two_sided", al.precondition(S_hat)), ("one_sided", precondition_one_sided(S_hat))):
        (uV, uK), _ = tx.update((gV, gK), (), (V, K), {})
        S = sym_sqrt(Sigma)
        u = torch.cat([(uV @ S).flatten(), (S @ uK @ S).flatten()])  # the step in factor coordinates
        G = torch.cat([f.flatten() for f in ge.grad_to_factors(gV, gK, Sigma)])
        assert torch.allclose(ex.preconditioner_operator(Sigma, S_hat, kind)(4) @ G, u, atol=1e-12)
    T = ex.preconditioner_operator(Sigma, Sigma)(4)
    assert torch.allclose(T, torch.eye(T.shape[0], dtype=DTYPE), atol=1e-12)


def test_control_variate_oracle_is_unbiased_and_less_noisy():
    Sigma, W, _ = _instance(seed=6, d=3, r=4, m_op=0.15)
    g = torch.Generator().manual_seed(0)
    (V, K), _ = ge.perturb_from_manifold(Sigma, W, 0.05, 2, g)
    n, m = 48, 800
    D = ex.oracle_bias_samples(V, K, Sigma, W, n, m, g)  # (m, 2, p)
    G = torch.cat([f.flatten(-2) for f in ge.grad_to_factors(*ge.regularized_loss_grad(V, K, Sigma, W), Sigma)], -1)
    o = orc.oracle_gradient(V, K, Sigma, W, NOISE, n, m, g)
    plain = torch.cat([f.flatten(-2) for f in ge.grad_to_factors(*o.grad, Sigma)], -1)
    plain_se = torch.cat([f.flatten(-2) for f in ge.grad_to_factors(*o.se, Sigma)], -1)
    cv = G + D.mean(0)
    cv_se = D.std(0) / math.sqrt(m)
    assert ((cv - plain).abs() <= 5 * (cv_se**2 + plain_se**2).sqrt() + 1e-12).all()
    assert cv_se.norm() < 0.5 * plain_se.norm()
    # the objective wraps the same estimate, converted back to theta coordinates
    obj = ex.ControlVariateOracle(Sigma, W, NOISE, n, 4, torch.Generator().manual_seed(9))
    (gV, gK), _ = obj((V, K))
    D4 = ex.oracle_bias_samples(V, K, Sigma, W, n, 4, torch.Generator().manual_seed(9))
    ref = G + D4.mean(0)
    got = torch.cat([f.flatten(-2) for f in ge.grad_to_factors(gV, gK, Sigma)], -1)
    assert torch.allclose(got, ref, atol=1e-10)


def test_regularizer_grad_linear_matches_autodiff():
    from numerics.paper_a.moments import regularizer_grad_linear

    Sigma, W, g = _instance(seed=10)
    V, K = al.random_init(3, 5, 4, g, scale=0.5)
    Delta = torch.randn(2, 3, 4, 4, generator=g, dtype=DTYPE)
    Delta = Delta + Delta.mT
    for a, b in zip(ex.regularizer_grad_linear(V, K, Sigma, Delta), regularizer_grad_linear(V, K, Sigma, Delta)):
        assert torch.allclose(a, b, atol=1e-10)


def test_stacked_minibatch_objective_matches_the_reference():
    Sigma, W, g = _instance(seed=7, batch=3)
    x, y = orc.sample_batches(Sigma, W, NOISE, 100, 1, 3, g)
    x, y = x[0], y[0]
    sched = orc.minibatch_schedule(100, 12, 3, 3, g)
    V, K = al.random_init(3, 5, 4, g, scale=0.3)
    for lam in (0.0, 0.25):
        ref = orc.MinibatchObjective(x, y, sched, lam=lam)
        got = ex.StackedMinibatchObjective(x, y, sched, torch.full((3,), lam, dtype=DTYPE))
        for _ in range(3):
            (a, b), _ = ref((V, K))
            (c, d), _ = got((V, K))
            assert torch.allclose(a, c, atol=1e-10) and torch.allclose(b, d, atol=1e-10)


def test_stacked_runs_sharing_data_rows_equal_runs_on_copies_of_the_data():
    """``rows``: runs on one copy of the data (and its schedule) give exactly the runs on per-run copies."""
    Sigma, W, g = _instance(seed=8, batch=2)
    x, y = orc.sample_batches(Sigma, W, NOISE, 60, 1, 2, g)
    x, y = x[0], y[0]
    sched = ex.epoch_schedule(60, 6, 4, 2, g)
    rows = torch.tensor([0, 1, 0, 1, 0])
    V, K = al.random_init(5, 5, 4, g, scale=0.3)
    lam = torch.tensor([0.25, 0.25, 0.0, 0.0, 0.1], dtype=DTYPE)
    shared = ex.StackedMinibatchObjective(x, y, sched, lam, rows=rows)
    copies = ex.StackedMinibatchObjective(x[rows], y[rows], sched[:, rows], lam)
    for _ in range(6):  # past the schedule's end: both wrap around
        (a, b), ia = shared((V, K))
        (c, d), ic = copies((V, K))
        assert torch.equal(a, c) and torch.equal(b, d) and torch.equal(ia["loss"], ic["loss"])


def test_epoch_schedule_samples_without_replacement():
    g = torch.Generator().manual_seed(8)
    s = ex.epoch_schedule(50, 8, 20, 2, g)
    assert s.shape == (21, 2, 8)
    for t in range(21):
        for b in range(2):
            assert len(set(s[t, b].tolist())) == 8
    first_epoch = s[:6, 0].flatten().tolist()  # 50 // 8 = 6 minibatches per epoch
    assert len(set(first_epoch)) == 48
    with pytest.raises(ValueError):
        ex.epoch_schedule(5, 8, 3, 1, g)


def test_fresh_batch_oracle_and_a_short_run():
    Sigma, W, g = _instance(seed=9, d=3, r=4, m_op=0.15)
    V, K = ge.minimizer(Sigma, W)
    V, K = V.expand(2, -1, -1).clone(), K.expand(2, -1, -1).clone()
    (gV, gK), info = ex.FreshBatchOracle(Sigma, W, NOISE, 20, torch.Generator().manual_seed(1))((V, K))
    C = torch.linalg.cholesky(Sigma)
    g1 = torch.Generator().manual_seed(1)
    x = torch.randn(2, 20, 3, generator=g1, dtype=DTYPE) @ C.mT
    y = x @ W.mT + NOISE * torch.randn(2, 20, 4, generator=g1, dtype=DTYPE)
    _, rV, rK = orc.empirical_objective_grad(V, K, x, y)
    assert torch.allclose(gV, rV, atol=1e-10) and torch.allclose(gK, rK, atol=1e-10)
    # a preconditioned step from the minimizer moves it by O(eta * gradient) only
    (uV, uK), _ = al.algorithm1(Sigma, 0.1).update((gV, gK), ((), ()), (V, K), {})
    V1, K1 = apply((V, K), (uV, uK))
    assert (ge.dist_to_manifold(V1, K1, Sigma, W) < 0.1).all()
