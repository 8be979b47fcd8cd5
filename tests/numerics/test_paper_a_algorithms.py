"""Paper A Algorithm 1: least squares, spectral init, the preconditioner, convergence vs plain GD."""
import torch

from numerics import DTYPE
from numerics.optim import apply, chain, identity, scale
from numerics.paper_a import algorithms as al
from numerics.paper_a import geometry as ge
from numerics.paper_a import oracle as orc
from numerics.paper_a.model import sym_sqrt
from theorems.paper_a.init_algorithm import precondition_one_sided, spectral_init_without_sigma_sqrt

SIGMA_NOISE = 0.3


def swap_factors(W_hat, S_hat):
    """A wrong spectral init: Uh and Vh exchanged (needs r == d)."""
    Uh, Lh, VhT = torch.linalg.svd(W_hat @ sym_sqrt(S_hat), full_matrices=False)
    return ge.manifold_point(VhT.mT, Lh, Uh, S_hat)


def transpose_key(W_hat, S_hat):
    """A wrong spectral init: K transposed."""
    V, K = al.spectral_init_from_estimates(W_hat, S_hat)
    return V, K.mT


def _data(seed, n, B, r=5, d=4, noise=SIGMA_NOISE):
    g = torch.Generator().manual_seed(seed)
    Sigma, W = al.random_instance(d, r, g)
    x, y = orc.sample_batches(Sigma, W, noise, n, 1, B, g)
    return Sigma, W, x[0], y[0], g


def test_least_squares():
    Sigma, W, x, y, _ = _data(0, 40, 3, noise=0.0)
    W_hat, S_hat = al.least_squares(x, y)
    assert torch.allclose(W_hat, W.expand_as(W_hat), atol=1e-10)  # noiseless: exact recovery
    assert torch.allclose(S_hat, x.mT @ x / 40)


def test_spectral_init_near_manifold_at_large_n():
    dists = {}
    for n in (1_000, 100_000):
        Sigma, W, x, y, _ = _data(1, n, 4)
        V, K = al.spectral_init(x, y)
        dists[n] = ge.dist_to_manifold(V, K, Sigma, W)
        # the init is the Q = I point of the *estimated* manifold: zero regularizer there in the Sigmahat geometry
        assert ge.regularizer(V, K, ge.sample_covariance(x)).abs().max() < 1e-10
    assert dists[100_000].max() < 0.03 and dists[100_000].max() < dists[1_000].min()
    # the wrong spectral inits stay far however large n is
    for wrong in (spectral_init_without_sigma_sqrt, transpose_key):
        assert ge.dist_to_manifold(*wrong(*al.least_squares(x, y)), Sigma, W).min() > 0.1
    Sigma, W, x, y, _ = _data(2, 100_000, 4, r=4)
    assert ge.dist_to_manifold(*al.spectral_init(x, y), Sigma, W).max() < 0.03
    assert ge.dist_to_manifold(*swap_factors(*al.least_squares(x, y)), Sigma, W).min() > 0.1


def test_preconditioned_step_is_gd_in_factor_coordinates():
    Sigma, W, _, _, g = _data(3, 10, 3)
    V, K = al.random_init(3, 5, 4, g, scale=0.5)
    eta = 0.01
    grads, _ = al.population_objective(Sigma, W, SIGMA_NOISE)((V, K))
    tx = al.algorithm1(Sigma, eta)
    upd, _ = tx.update(grads, tx.init((V, K)), (V, K), {})
    A1, B1 = ge.to_factors(*apply((V, K), upd), Sigma)
    A, B = ge.to_factors(V, K, Sigma)
    GA, GB = ge.grad_to_factors(*grads, Sigma)
    assert torch.allclose(A1, A - eta * GA, atol=1e-12) and torch.allclose(B1, B - eta * GB, atol=1e-12)
    # negative controls are different maps
    for pre in (precondition_one_sided(Sigma), identity()):
        tx = chain(pre, scale(eta))
        upd2, _ = tx.update(grads, tx.init((V, K)), (V, K), {})
        assert not torch.allclose(upd2[1], upd[1])


def test_algorithm1_converges_where_plain_gd_does_not():
    """Spec Section 5 (A.Fig2 on the population objective): d=4, r=5, eta=0.01, 2000 steps, iid N(0,1) init."""
    g = torch.Generator().manual_seed(0)
    Sigma, W = al.random_instance(4, 5, g)
    init = al.random_init(8, 5, 4, g)
    steps = [0, 2000]
    alg1 = al.train(init, al.population_objective(Sigma, W, 0.1), al.algorithm1(Sigma, 0.01), 2000, Sigma, W, 0.1, record_at=steps)
    gd = al.train(init, al.population_objective(Sigma, W, 0.1, lam=0.0), al.sgd(0.01), 2000, Sigma, W, 0.1, lam=0.0, record_at=steps)
    assert (alg1["excess"][0] > 10).all()  # far from the manifold at the start
    assert (alg1["excess"][-1] < 1e-4).all() and (alg1["dist"][-1] < 1e-2).all()
    assert (gd["excess"][-1].nan_to_num(float("inf")) > 1e-2).all()  # diverged (NaN/inf) or stalled
    assert (~torch.isfinite(gd["excess"][-1])).sum() >= 4


def test_batched_training_equals_per_run():
    Sigma, W, x, y, g = _data(4, 200, 3)
    W_hat, S_hat = al.least_squares(x, y)
    init = al.spectral_init(x, y)
    sched = orc.minibatch_schedule(200, 20, 30, 3, g)
    batched = al.train(init, orc.MinibatchObjective(x, y, sched), al.algorithm1(S_hat, 0.05), 30, Sigma, W, SIGMA_NOISE)
    for b in range(3):
        s = slice(b, b + 1)
        one = al.train(
            tuple(p[s] for p in init), orc.MinibatchObjective(x[s], y[s], sched[:, s]),
            al.algorithm1(S_hat[s], 0.05), 30, Sigma, W, SIGMA_NOISE,
        )
        for p, q in zip(batched.final, one.final):
            assert torch.allclose(p[s], q, rtol=1e-11, atol=1e-13)
        assert torch.allclose(batched["dist"][:, s], one["dist"], rtol=1e-9)


def test_minibatch_algorithm1_and_sgd_share_minibatches():
    """A.Fig1 setting in miniature: Alg 1 from spectral init stays near L*, SGD from N(0,1) init starts far above."""
    Sigma, W, x, y, g = _data(5, 2_000, 2)
    _, S_hat = al.least_squares(x, y)
    sched = orc.minibatch_schedule(2_000, 100, 200, 2, g)
    f_alg, f_sgd = orc.MinibatchObjective(x, y, sched), orc.MinibatchObjective(x, y, sched, lam=0.0)
    alg = al.train(al.spectral_init(x, y), f_alg, al.algorithm1(S_hat, 0.01), 200, Sigma, W, SIGMA_NOISE)
    sgd = al.train(al.random_init(2, 5, 4, g), f_sgd, al.sgd(0.01), 200, Sigma, W, SIGMA_NOISE)
    assert f_alg.step == f_sgd.step == 201
    L_star = 5 * SIGMA_NOISE**2
    assert (alg["excess"][0] < 0.1 * L_star).all() and (alg["excess"][-1] < 0.1 * L_star).all()
    assert (sgd["excess"][0] > 100 * L_star).all()
    assert set(alg.metrics) >= {"L", "excess", "R", "L_lambda", "dist", "B_op", "objective"}


def test_random_instance_assumptions():
    g = torch.Generator().manual_seed(6)
    Sigma, W = al.random_instance(4, 6, g, batch=5, m_op=0.7)
    assert (torch.linalg.eigvalsh(Sigma) >= 0.5 - 1e-12).all()  # A1
    sv = torch.linalg.svdvals(W @ sym_sqrt(Sigma))
    assert torch.allclose(sv[:, 0], torch.full((5,), 0.7, dtype=DTYPE)) and (sv[:, -1] > 0).all()  # A3 knob, A2



def test_precondition_per_run_and_identity_rows():
    """A stack of runs with ``Sigmahat`` per run (and ``I`` for plain GD) preconditions each run by its own matrix."""
    g = torch.Generator().manual_seed(9)
    G = torch.randn(2, 3, 3, generator=g, dtype=DTYPE)
    S = torch.stack([G[0] @ G[0].mT + 0.5 * torch.eye(3, dtype=DTYPE), torch.eye(3, dtype=DTYPE)])
    V, K = torch.randn(2, 4, 3, generator=g, dtype=DTYPE), torch.randn(2, 3, 3, generator=g, dtype=DTYPE)
    (a, b), _ = al.precondition(S).update((V, K), (), (V, K), {})
    Si = torch.linalg.inv(S[0])
    assert torch.allclose(a[0], V[0] @ Si) and torch.allclose(b[0], Si @ K[0] @ Si)
    assert torch.equal(a[1], V[1]) and torch.equal(b[1], K[1])
