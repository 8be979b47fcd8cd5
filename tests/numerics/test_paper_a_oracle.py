"""Paper A gradient oracle: autograd on the leave-one-out loss, Monte Carlo mean and error, minibatches."""
import torch

from numerics.paper_a import geometry as ge
from numerics.paper_a import oracle as orc
from numerics.paper_a.algorithms import random_instance
from numerics.paper_a.model import empirical_loss, sym_sqrt

SIGMA_NOISE = 0.3


def _setup(seed=0, batch=None, m_op=0.25):
    g = torch.Generator().manual_seed(seed)
    Sigma, W = random_instance(4, 5, g, batch=batch, m_op=m_op)
    return Sigma, W, g


def _near_manifold(Sigma, W, g, B, radius=0.1):
    (V, K), _ = ge.perturb_from_manifold(Sigma, W, radius, B, g)
    return V, K


def test_empirical_gradient_matches_autograd_and_batches():
    Sigma, W, g = _setup()
    V, K = _near_manifold(Sigma, W, g, 3)
    x, y = orc.sample_batches(Sigma, W, SIGMA_NOISE, 30, 2, 3, g)  # (2, 3, 30, .)
    lam = 0.4
    for include_self in (False, True):
        loss, gV, gK = orc.empirical_objective_grad(V, K, x, y, lam, include_self)
        Vr, Kr = V.clone().requires_grad_(True), K.clone().requires_grad_(True)
        for m in range(2):
            Sh = ge.sample_covariance(x[m])
            S = sym_sqrt(Sh)
            A, B = Vr @ S, S @ Kr @ S  # Rhat through the square-root formula
            obj = empirical_loss(Vr, Kr, x[m], y[m], include_self) + lam * (A.mT @ A - B.mT @ B).pow(2).sum((-1, -2))
            aV, aK = torch.autograd.grad(obj.sum(), (Vr, Kr))
            assert torch.allclose(loss[m], obj.detach(), rtol=1e-12)
            assert torch.allclose(gV[m], aV, rtol=1e-10, atol=1e-12) and torch.allclose(gK[m], aK, rtol=1e-10, atol=1e-12)
    # include_self is passed through: the two losses differ
    a = orc.empirical_objective_grad(V, K, x, y, lam, False)[0]
    b = orc.empirical_objective_grad(V, K, x, y, lam, True)[0]
    assert (a - b).abs().min() > 1e-6


def test_oracle_mean_and_standard_error():
    Sigma, W, _ = _setup(seed=1)
    g = torch.Generator().manual_seed(7)
    V, K = _near_manifold(Sigma, W, g, 2)
    o1 = orc.oracle_gradient(V, K, Sigma, W, SIGMA_NOISE, 20, 12, torch.Generator().manual_seed(3))
    # mean and SE equal the sample mean and sd/sqrt(m) of the per-batch gradients
    x, y = orc.sample_batches(Sigma, W, SIGMA_NOISE, 20, 12, 2, torch.Generator().manual_seed(3))
    loss, gV, gK = orc.empirical_objective_grad(V, K, x, y)
    assert torch.allclose(o1.grad[0], gV.mean(0), rtol=1e-10) and torch.allclose(o1.grad[1], gK.mean(0), rtol=1e-10)
    assert torch.allclose(o1.se[0], gV.std(0) / 12**0.5, rtol=1e-8) and torch.allclose(o1.se[1], gK.std(0) / 12**0.5, rtol=1e-8)
    assert torch.allclose(o1.loss, loss.mean(0)) and torch.allclose(o1.loss_se, loss.std(0) / 12**0.5, rtol=1e-8)
    # chunked accumulation (3 batches per chunk) equals the same draws made chunk by chunk
    o2 = orc.oracle_gradient(V, K, Sigma, W, SIGMA_NOISE, 20, 12, torch.Generator().manual_seed(3), max_elems=3 * 2 * 20 * 20)
    gc = torch.Generator().manual_seed(3)
    gV = torch.cat([orc.empirical_objective_grad(V, K, *orc.sample_batches(Sigma, W, SIGMA_NOISE, 20, 3, 2, gc))[1] for _ in range(4)])
    assert torch.allclose(o2.grad[0], gV.mean(0), rtol=1e-10) and torch.allclose(o2.se[0], gV.std(0) / 12**0.5, rtol=1e-8)


def test_oracle_approaches_population_gradient():
    """A.T3's direction: the oracle's bias is resolvable at n = 16 and shrinks by > 3x at n = 256."""
    Sigma, W, g = _setup(seed=2)
    V, K = _near_manifold(Sigma, W, g, 2, radius=0.05)
    pop = ge.regularized_loss_grad(V, K, Sigma, W)
    err, se = {}, {}
    for n, m in ((16, 400), (256, 40)):
        o = orc.oracle_gradient(V, K, Sigma, W, SIGMA_NOISE, n, m, g)
        err[n] = ge.dual_norm(tuple(a - b for a, b in zip(o.grad, pop)), Sigma)
        se[n] = ge.dual_norm(o.se, Sigma)
    assert (err[16] > 4 * se[16]).all()
    assert (err[256] < err[16] / 3).all()


def test_minibatch_schedule_and_shared_minibatches():
    Sigma, W, g = _setup(seed=3, batch=2)
    N, b, T = 50, 12, 7
    sched = orc.minibatch_schedule(N, b, T, 2, g, chunk=3)
    assert sched.shape == (T + 1, 2, b)
    assert all(len(set(row.tolist())) == b for row in sched.reshape(-1, b))  # without replacement
    assert sched.min() >= 0 and sched.max() < N
    x, y = orc.sample_batches(Sigma, W, SIGMA_NOISE, N, 1, 2, g)
    x, y = x[0], y[0]
    V, K = _near_manifold(Sigma, W, g, 2)
    f1, f2 = orc.MinibatchObjective(x, y, sched), orc.MinibatchObjective(x, y, sched, lam=0.0)
    for t in range(3):
        (gV, gK), info = f1((V, K))
        (hV, hK), _ = f2((V, K))
        xb = torch.stack([x[r, sched[t, r]] for r in range(2)])
        yb = torch.stack([y[r, sched[t, r]] for r in range(2)])
        ref = orc.empirical_objective_grad(V, K, xb, yb)  # own LOO context and own Sigmahat
        assert torch.allclose(gV, ref[1]) and torch.allclose(gK, ref[2]) and torch.allclose(info["loss"], ref[0])
        assert torch.allclose(hV, orc.empirical_objective_grad(V, K, xb, yb, lam=0.0)[1])
    # per-run batching: run 1 alone equals run 1 of the batch
    one = orc.empirical_objective_grad(V[1:], K[1:], x[1:], y[1:])
    full = orc.empirical_objective_grad(V, K, x, y)
    assert all(torch.allclose(a[1:], b_, rtol=1e-12) for a, b_ in zip(full, one))
