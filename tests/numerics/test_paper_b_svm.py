"""Paper B SVMs: KKT certificates, closed forms, infeasibility, dropped constraints."""
import pytest
import torch

from numerics import DTYPE
from numerics.paper_b import data, svm
from numerics.paper_b.model import Dataset


def _check_kkt(res, tol=1e-9):
    c = res.certificate
    assert c.max_violation < tol and c.max_dual_infeasibility < tol
    assert c.stationarity < tol and c.complementarity < tol and c.duality_gap < tol
    assert res.margin == pytest.approx(1 / res.norm)


def test_two_token_w_mm_closed_form():
    res = svm.w_svm(data.two_token())
    assert torch.allclose(res.solution, torch.tensor([[0.5, 0.0], [-0.5, 0.0]], dtype=DTYPE), atol=1e-12)
    assert res.certificate.active == [(0, 1)]
    _check_kkt(res)


@pytest.mark.parametrize("make", [lambda: data.example1(n=6, T=4, d=16, seed=1),
                                  lambda: data.example1(n=6, T=4, d=16, spread=0.4, seed=2),
                                  lambda: data.digits(n=8, T=3, seed=0)])
def test_w_svm_certificate(make):
    ds = make()
    res = svm.w_svm(ds)
    _check_kkt(res)
    # the solution satisfies every constraint, tight exactly on the active set; alpha lives there
    X, opt, W = ds.X, ds.opt_index, res.solution
    for i, t in res.constraints:
        slack = float((X[i, opt[i]] - X[i, t]) @ W @ X[i, 0]) - 1
        assert slack > -1e-9
        assert ((i, t) in res.certificate.active) == (slack <= 1e-6)
    assert float(res.alpha[torch.arange(ds.n), opt].abs().max()) == 0.0  # no multiplier on opt tokens
    # W_mm = sum alpha_it (x_opt - x_it) x_i1^T
    W_dual = sum(res.alpha[i, t] * torch.outer(X[i, opt[i]] - X[i, t], X[i, 0]) for i, t in res.constraints)
    assert torch.allclose(W_dual, W, atol=1e-9)


def test_u_svm_certificate_and_margin():
    ds = data.dm(n=8, T=3, d=16, seed=0)
    res = svm.u_svm(ds)
    _check_kkt(res)
    x_opt = ds.X[torch.arange(ds.n), ds.opt]
    margins = ds.y * (x_opt @ res.solution)
    assert float(margins.min()) == pytest.approx(1.0, abs=1e-9)


def test_infeasible_w_svm_raises():
    # the same sequence with both labels: the two opt tokens demand opposite logit orders
    X = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]], dtype=DTYPE)
    ds = Dataset(X, torch.tensor([1.0, -1.0], dtype=DTYPE), u=torch.tensor([1.0, 0.0], dtype=DTYPE))
    with pytest.raises(svm.SVMInfeasible, match="infeasible") as exc:
        svm.w_svm(ds)
    assert isinstance(exc.value, ValueError) and "\n" not in str(exc.value)
    with pytest.raises(svm.SVMInfeasible):
        svm.u_svm(Dataset(X, torch.tensor([1.0, -1.0], dtype=DTYPE), opt=torch.tensor([0, 0])))


def test_zero_constraint_row_raises():
    X = torch.tensor([[[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]], dtype=DTYPE)  # token 1 equals the query/opt token 0
    ds = Dataset(X, torch.ones(1, dtype=DTYPE), opt=torch.tensor([0]))
    with pytest.raises(svm.SVMInfeasible, match="zero row"):
        svm.w_svm(ds)


def test_dropped_constraint_changes_the_solution():
    ds = data.example1(n=4, T=3, d=8, spread=0.4, seed=4)
    full = svm.w_svm(ds)
    i, t = full.certificate.active[0]
    dropped = svm.w_svm(ds, drop=(i, t))
    _check_kkt(dropped)
    assert (i, t) not in dropped.constraints and len(dropped.constraints) == len(full.constraints) - 1
    assert dropped.norm < full.norm - 1e-6
    assert (dropped.solution - full.solution).norm() > 1e-6
    # the dropped constraint is what W_mm pays for: it is violated without it
    x = ds.X[i]
    assert float((x[ds.opt_index[i]] - x[t]) @ dropped.solution @ x[0]) < 1 - 1e-6
    # dropping an inactive constraint changes nothing
    inactive = [c for c in full.constraints if c not in full.certificate.active]
    if inactive:
        assert torch.allclose(svm.w_svm(ds, drop=inactive[0]).solution, full.solution, atol=1e-8)
    # u-SVM: dropping a support vector
    dm = data.dm(n=6, T=3, d=12, seed=1)
    u_full = svm.u_svm(dm)
    sv = u_full.certificate.active[0]
    assert svm.u_svm(dm, drop=sv).norm < u_full.norm - 1e-9
