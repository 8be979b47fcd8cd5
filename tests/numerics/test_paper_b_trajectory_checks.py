"""Paper B trajectory records: per-step metrics against direct computations, the probe data, the lemma constants."""
import math

import pytest
import torch

from numerics import DTYPE, optim
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, model, svm
from numerics.paper_b import trajectory_checks as tc


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _W0(B, d, scale=0.3, seed=0):
    return scale * torch.randn(B, d, d, generator=torch.Generator().manual_seed(seed), dtype=DTYPE)


def test_recorder_matches_direct_computation():
    ds = data.example1(n=5, T=3, d=8, seed=3)
    r = svm.w_svm(ds)
    W = _W0(4, 8)
    wrong = torch.randn(8, 8, generator=torch.Generator().manual_seed(9), dtype=DTYPE)
    grads, info = A.objective(ds)((W,))
    rec = tc.step_recorder(ds, r.solution, values=True, l4=True, extra_refs={"x": wrong})((W,), info)
    a = model.logits(W, ds)
    s = torch.softmax(a, -1)
    opt = ds.opt_index
    s_opt = s.gather(-1, opt.expand(4, -1).unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(rec["log_s_opt"].exp(), s_opt, atol=1e-14)
    a_opt = a.gather(-1, opt.expand(4, -1).unsqueeze(-1))
    gap = (a_opt - a).masked_fill(torch.nn.functional.one_hot(opt, 3).bool(), math.inf).amin(-1)
    assert torch.allclose(rec["logit_gap"], gap, atol=1e-12)
    ln, d_ = model.grad_W_autograd(W, None, ds)
    G = -d_ * ln.exp()[:, None, None]
    unit = r.solution / r.solution.norm()
    assert torch.allclose(rec["grad_corr_mm"], (d_ * -unit).sum((1, 2)), atol=1e-12)
    assert torch.allclose(rec["grad_corr_mm_x"], (-d_ * wrong / wrong.norm()).sum((1, 2)), atol=1e-12)
    Wbar = W / W.flatten(1).norm(dim=1)[:, None, None]
    assert torch.allclose(rec["grad_corr_self"], (-d_ * Wbar).sum((1, 2)), atol=1e-12)
    assert torch.allclose(rec["one_minus_corr"], 1 - (Wbar * unit).sum((1, 2)), atol=1e-12)
    # the B.L4 bound: (1/n) sum_i e^{-m_i} s_io (1 - s_io)(gamma_io - gammabar_i), Ass 2 holds (spread 0)
    g = ds.gamma
    m = (s * g).sum(-1)
    lb = (torch.exp(-m) * s_opt * (1 - s_opt) * 1.0).mean(-1)  # gamma_opt - gamma_other = 1
    corr = (G * r.solution).sum((1, 2))
    assert torch.allclose(rec["log_l4_ratio"], corr.log() - lb.log(), atol=1e-10)
    assert bool((rec["log_l4_ratio"] >= -1e-12).all())


def test_orthogonal_tokens_nu_and_scores():
    ds = tc.orthogonal_tokens(4, 3, rho=0.0, seed=1)
    a = data.assumptions(ds)
    assert float(a["nu"]) < 1e-12 and float(a["spread"]) == 0.0 and float(a["gap"]) == 1.0
    assert ds.d == 4 * 3 + 2
    nus = [float(data.assumptions(tc.orthogonal_tokens(4, 3, rho=rho, seed=1))["nu"]) for rho in (1e-3, 1e-2, 1e-1)]
    assert nus[0] < nus[1] < nus[2]
    assert float(data.assumptions(tc.orthogonal_tokens(4, 3, spread=0.5, seed=1))["spread"]) > 0


def test_monotone_violations():
    log_s = torch.log(torch.tensor([[0.3], [0.2], [0.25], [0.24]], dtype=DTYPE)).unsqueeze(1)  # (K=4, B=1, n=1)
    gap = torch.tensor([[0.5], [2.0], [0.5], [0.0]], dtype=DTYPE).unsqueeze(1)
    viol, elig = tc.monotone_violations(log_s, gap)
    assert elig.flatten().tolist() == [True, False, True]
    assert viol.flatten().tolist() == [True, False, True]


def test_floor_and_nu_star():
    b = tc.opt_score_floor(4, 1.5, torch.tensor([0.1, 0.3]), 0.1)
    assert torch.allclose(b, 1 / (1 + 3 * torch.exp(torch.tensor([0.2, 0.6], dtype=DTYPE))))
    b2 = tc.opt_score_floor(4, 1.5, 0.0, 1.0)  # 2 R^2 Delta - 1 = 3.5 dominates
    assert math.isclose(float(b2), 1 / (1 + 3 * math.exp(3.5)))
    geo = tc.geometry(tc.orthogonal_tokens(4, 3, seed=2))
    assert math.isinf(float(tc.nu_star(geo, 1, 0.2)))
    ns = float(tc.nu_star(geo, 4, 0.2))
    assert math.isclose(ns, geo["q"] ** 2 * 0.2 * (1 - 0.2 / math.e) * geo["lo"]
                        / (math.e * 3 * geo["R"] ** 2 * geo["hi"]))
    assert bool(tc.ass1_holds(geo, 4, 0.2))


@pytest.mark.parametrize("kind, eta", [("gd", 0.7), ("ngd", 0.3), ("polyak", 5.0)])
def test_step_lengths(kind, eta):
    ds = data.example1(n=4, T=3, d=6, seed=2)
    alg = {"gd": A.gd, "ngd": A.ngd, "polyak": A.polyak}[kind](eta)
    W0 = _W0(3, 6, 0.05)
    tr = tc.run_recorded(ds, alg, W0, 6, values=kind == "polyak")
    steps = tc.step_lengths(tr, kind, eta)
    Ws = [W0]
    for _ in range(6):
        Ws.append(optim.run((Ws[-1],), A.objective(ds), alg, 1, record_at=[]).final[0])
    true = torch.stack([(b - a).flatten(1).norm(dim=1) for a, b in zip(Ws[:-1], Ws[1:])])
    assert torch.allclose(steps, true, rtol=1e-10, atol=1e-14)


def test_w_mm_cache_and_init_bound():
    a = tc.with_w_mm(data.example1, n=3, T=3, d=6, seed=5)
    b = tc.with_w_mm(data.example1, n=3, T=3, d=6, seed=5)
    assert a is b
    drop = [(0, t) for t in range(3) if t != int(a[0].opt_index[0])]
    c = tc.with_w_mm(data.example1, n=3, T=3, d=6, seed=5, drop=drop)
    assert c is not a and not torch.allclose(c[1].solution, a[1].solution)
    W0 = _W0(2, 6)
    assert torch.allclose(tc.init_logit_bound(W0, a[0]), model.logits(W0, a[0]).abs().flatten(1).amax(1))
