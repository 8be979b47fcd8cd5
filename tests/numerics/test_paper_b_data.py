"""Paper B data generators: each stated property, seeding, and the measured assumption parameters."""
import math

import pytest
import torch

from numerics import DTYPE
from numerics.paper_b import data, model, svm


def test_example1_scores_and_ass2():
    ds = data.example1(n=10, T=5, d=32, gamma_opt=1.5, gamma_other=0.25, seed=3)
    assert ds.X.shape == (10, 5, 32) and ds.X.dtype == DTYPE
    g = ds.gamma
    is_opt = torch.nn.functional.one_hot(ds.opt_index, 5).bool()
    assert torch.allclose(g[is_opt], torch.full((10,), 1.5, dtype=DTYPE), atol=1e-15)
    assert torch.allclose(g[~is_opt], torch.full((40,), 0.25, dtype=DTYPE), atol=1e-15)
    a = data.assumptions(ds)
    assert float(a["spread"]) < 1e-15 and float(a["gap"]) == pytest.approx(1.25)
    assert float(a["kappa"]) == pytest.approx(1.0)
    assert float(a["degradation"][0]) == pytest.approx(math.exp(-0.25) - math.exp(-1.5))


def test_example1_spread_breaks_ass2_within_bound():
    ds = data.example1(n=20, T=4, d=32, spread=0.6, seed=0)
    a = data.assumptions(ds)
    assert 0.1 < float(a["spread"]) <= 0.6 and float(a["gap"]) >= 1 - 0.3


def test_example1_near_orthogonality_improves_with_d():
    nus = [float(data.assumptions(data.example1(n=8, T=4, d=d, seed=0))["nu"]) for d in (16, 256, 4096)]
    assert nus[0] > nus[1] > nus[2] and nus[2] < 0.05
    ds = data.example1(n=8, T=4, d=256, seed=0)
    assert float(data.assumptions(ds)["R"]) == pytest.approx(float(ds.X.norm(dim=-1).max()))


def test_seeding_is_deterministic():
    a, b, c = data.example1(seed=7), data.example1(seed=7), data.example1(seed=8)
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y) and not torch.equal(a.X, c.X)
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    assert torch.equal(data.dm(seed=g1).X, data.dm(seed=g2).X)


def test_dm_properties():
    ds = data.dm(n=200, T=4, d=64, opt_ratio=2.0, seed=0)
    x_opt = ds.X[torch.arange(ds.n), ds.opt]
    assert torch.equal(ds.y, torch.where(x_opt[:, 0] >= 0, 1.0, -1.0).to(DTYPE))
    is_opt = torch.nn.functional.one_hot(ds.opt, 4).bool()
    norms = ds.X.norm(dim=-1)
    assert norms[is_opt].mean() / norms[~is_opt].mean() == pytest.approx(2.0, rel=0.05)
    assert norms[~is_opt].mean() == pytest.approx(1.0, rel=0.05)        # sigma = 1/sqrt(d)
    small = data.dm(n=8, T=4, d=64, seed=0)
    assert float(data.assumptions(small)["nu"]) < 0.5
    svm.u_svm(small)                                                     # feasible: opt tokens are separable


def test_two_token_example():
    ds = data.two_token()
    assert ds.opt_index.tolist() == [0]
    assert torch.equal(ds.gamma, torch.tensor([[1.0, 0.0]], dtype=DTYPE))


def test_bad_init_violates_one_constraint():
    ds, W0 = data.bad_init(scale=0.5)
    assert ds.opt_index.tolist() == [0, 1]
    assert W0.norm().item() == pytest.approx(0.5)
    X, Wb = ds.X, ds.meta["W0_bar"]
    gap0 = float((X[0, 0] - X[0, 1]) @ Wb @ X[0, 0])     # sample 0: opt 0 vs token 1
    gap1 = float((X[1, 1] - X[1, 0]) @ Wb @ X[1, 0])     # sample 1: opt 1 vs token 0
    assert gap0 < 0 < gap1
    # along R * W0_bar the opt token of sample 0 loses all mass (asymptotically stationary)
    log1m = model.log_one_minus_s_opt((1e3 * Wb).unsqueeze(0), ds)
    assert float(log1m[0, 0]) == pytest.approx(0.0, abs=1e-12) and float(log1m[0, 1]) < -100
    svm.w_svm(ds)                                         # and W-SVM is feasible


def test_digits_patches():
    ds = data.digits(n=12, T=5, noise=0.1, seed=2)
    assert ds.X.shape == (12, 5, 64) and ds.meta["u_train_accuracy"] > 0.98
    a = data.assumptions(ds)
    assert float(a["gap"]) > 0                            # the signal patch is the unique opt token
    # signal patches are centred digit images: larger than the noise patches (norm ~ 0.1 sqrt(64))
    is_opt = torch.nn.functional.one_hot(ds.opt_index, 5).bool()
    norms = ds.X.norm(dim=-1)
    assert norms[is_opt].min() > norms[~is_opt].max()
    # the signal patch sits where the draw put it
    pinned = data.digits(n=4, T=3, signal_position=2, seed=0)
    assert pinned.opt_index.tolist() == [2, 2, 2, 2]


def test_stack_makes_a_per_run_dataset():
    parts = [data.example1(n=4, T=3, d=8, seed=s) for s in range(3)]
    st = data.stack(parts)
    assert st.X.shape == (3, 4, 3, 8) and st.u.shape == (3, 8)
    assert torch.equal(st.opt_index, torch.stack([p.opt_index for p in parts]))
    nu = data.assumptions(st)["nu"]
    assert torch.allclose(nu, torch.stack([data.assumptions(p)["nu"] for p in parts]))
