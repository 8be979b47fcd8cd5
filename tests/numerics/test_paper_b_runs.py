"""Paper B fixed-head runs (numerics.paper_b.runs): per-step records against direct computations, the probe data,
step lengths and the initial logit bound."""
import math

import pytest
import torch

from numerics import DTYPE, optim
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, model, runs, svm


def _W0(B, d, scale=0.3, seed=0):
    return scale * torch.randn(B, d, d, generator=torch.Generator().manual_seed(seed), dtype=DTYPE)


def test_recorder_matches_direct_computation():
    ds = data.example1(n=5, T=3, d=8, seed=3)
    r = svm.w_svm(ds)
    W = _W0(4, 8)
    wrong = torch.randn(8, 8, generator=torch.Generator().manual_seed(9), dtype=DTYPE)
    _, info = A.objective(ds)((W,))
    rec = runs.step_recorder(ds, r.solution, values=True, extra_refs={"x": wrong})((W,), info)
    a = model.logits(W, ds)
    s = torch.softmax(a, -1)
    opt = ds.opt_index
    s_opt = s.gather(-1, opt.expand(4, -1).unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(rec["log_s_opt"].exp(), s_opt, atol=1e-14)
    a_opt = a.gather(-1, opt.expand(4, -1).unsqueeze(-1))
    gap = (a_opt - a).masked_fill(torch.nn.functional.one_hot(opt, 3).bool(), math.inf).amin(-1)
    assert torch.allclose(rec["logit_gap"], gap, atol=1e-12)
    _, d_ = model.grad_W_autograd(W, None, ds)
    unit = r.solution / r.solution.norm()
    assert torch.allclose(rec["grad_corr_mm"], (d_ * -unit).sum((1, 2)), atol=1e-12)
    assert torch.allclose(rec["grad_corr_mm_x"], (-d_ * wrong / wrong.norm()).sum((1, 2)), atol=1e-12)
    Wbar = W / W.flatten(1).norm(dim=1)[:, None, None]
    assert torch.allclose(rec["grad_corr_self"], (-d_ * Wbar).sum((1, 2)), atol=1e-12)
    assert torch.allclose(rec["one_minus_corr"], 1 - (Wbar * unit).sum((1, 2)), atol=1e-12)
    assert torch.allclose(rec["W_norm"], W.flatten(1).norm(dim=1))


def test_recorder_extra_metric():
    ds = data.example1(n=3, T=3, d=6, seed=1)
    W = _W0(2, 6)
    _, info = A.objective(ds)((W,))
    rec = runs.step_recorder(ds, extra={"twice_norm": lambda at: 2 * at.W_norm})((W,), info)
    assert torch.allclose(rec["twice_norm"], 2 * W.flatten(1).norm(dim=1))
    assert "grad_corr_mm" not in rec and "log_loss" not in rec


def test_orthogonal_tokens_nu_and_scores():
    ds = runs.orthogonal_tokens(4, 3, rho=0.0, seed=1)
    a = data.assumptions(ds)
    assert float(a["nu"]) < 1e-12 and float(a["spread"]) == 0.0 and float(a["gap"]) == 1.0
    assert ds.d == 4 * 3 + 2
    nus = [float(data.assumptions(runs.orthogonal_tokens(4, 3, rho=rho, seed=1))["nu"]) for rho in (1e-3, 1e-2, 1e-1)]
    assert nus[0] < nus[1] < nus[2]
    assert float(data.assumptions(runs.orthogonal_tokens(4, 3, spread=0.5, seed=1))["spread"]) > 0


@pytest.mark.parametrize("kind, eta", [("gd", 0.7), ("ngd", 0.3), ("polyak", 5.0)])
def test_step_lengths(kind, eta):
    ds = data.example1(n=4, T=3, d=6, seed=2)
    alg = runs.algorithm(kind, eta)
    W0 = _W0(3, 6, 0.05)
    tr = runs.run_recorded(ds, alg, W0, 6, values=kind == "polyak")
    steps = runs.step_lengths(tr, kind, eta)
    Ws = [W0]
    for _ in range(6):
        Ws.append(optim.run((Ws[-1],), A.objective(ds), alg, 1, record_at=[]).final[0])
    true = torch.stack([(b - a).flatten(1).norm(dim=1) for a, b in zip(Ws[:-1], Ws[1:])])
    assert torch.allclose(steps, true, rtol=1e-10, atol=1e-14)


def test_record_at_and_half_index():
    ds = data.example1(n=3, T=3, d=6, seed=4)
    at = runs.log_spaced_and_half(100, 10)
    assert 50 in at and at[0] == 0 and at[-1] == 100 and at == sorted(set(at))
    tr = runs.run_recorded(ds, A.gd(1.0), _W0(2, 6, 0.05), 100, record_at=at)
    assert tr.steps.tolist() == at
    assert int(tr.steps[runs.half_index(tr)]) == 50


def test_init_logit_bound():
    ds = data.example1(n=3, T=3, d=6, seed=5)
    W0 = _W0(2, 6)
    assert torch.allclose(runs.init_logit_bound(W0, ds), model.logits(W0, ds).abs().flatten(1).amax(1))


def test_geometry_constants():
    ds = runs.orthogonal_tokens(4, 3, seed=2)
    geo = runs.geometry(ds)
    assert geo["nu"] < 1e-12 and geo["spread"] == 0.0
    # orthonormal noise of norm 1 plus the score coordinate (gamma_opt = 1): ||x_opt||^2 = 2, ||x_t|| <= sqrt(1.25)
    assert math.isclose(geo["M_o"], 2.0, rel_tol=1e-12) and geo["R"] <= math.sqrt(2) + 1e-12
    assert math.isclose(geo["lo"], math.exp(-1.0), rel_tol=1e-12) and math.isclose(geo["hi"], 1.0, rel_tol=1e-12)


def test_gram_geometry_matches_the_dataset_geometry():
    for seed in range(3):
        ds = data.example1(n=8, T=4, d=40, seed=seed)
        X = ds.X.reshape(1, 32, 40)
        g = runs.gram_geometry(X @ X.mT, ds.opt_index[None], 4)
        geo = runs.geometry(ds)
        for k in ("nu", "R", "q", "M_o"):
            assert math.isclose(float(g[k]), geo[k], rel_tol=1e-12), k


def test_wishart_bartlett_moments():
    import numpy as np

    A = runs.wishart_bartlett(20000, 3, 50, np.random.default_rng(0))
    # E A = dof I; Var A_12 = dof; Var A_11 = 2 dof
    assert torch.allclose(A.mean(0), 50 * torch.eye(3, dtype=DTYPE), atol=0.5)
    assert abs(float(A[:, 0, 1].var()) / 50 - 1) < 0.05 and abs(float(A[:, 2, 2].var()) / 100 - 1) < 0.05
    with pytest.raises(ValueError):
        runs.wishart_bartlett(1, 5, 3, np.random.default_rng(0))


def test_example1_geometry_has_example1s_law():
    """The Gram sampler against data.example1 at d = 64 (two-sample KS on nu, R and q, 3000 data sets each)."""
    from scipy import stats

    count = 3000
    big = data.example1(n=8 * count, T=4, d=64, seed=1)
    st_ = type(big)(big.X.reshape(count, 8, 4, 64), big.y.reshape(count, 8), u=big.u.expand(count, 64))
    X = st_.X.reshape(count, 32, 64)
    direct = runs.gram_geometry(X @ X.mT, st_.opt_index, 4)
    gram = runs.example1_geometry(8, 4, 64, count, seed=5)
    for k in ("nu", "R", "q"):
        assert stats.ks_2samp(direct[k].numpy(), gram[k].numpy()).pvalue > 1e-3, k
    assert float(gram["spread"].abs().max()) == 0.0
    # the common-direction control raises nu to ~ common^2 / (1 + 1 + common^2)
    assert float(runs.example1_geometry(8, 4, 10**6, 50, seed=2, common=1.0)["nu"].median()) > 0.3
