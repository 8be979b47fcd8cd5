"""Paper B model: log-domain losses and gradients against autograd, closed forms and an mpmath reference."""
import math

import mpmath as mp
import pytest
import torch

from numerics import DTYPE
from numerics.paper_b import data, model
from numerics.paper_b.model import Dataset


def _random_dataset(n=5, T=4, d=6, seed=0, batch=None):
    g = torch.Generator().manual_seed(seed)
    lead = () if batch is None else (batch,)
    X = torch.randn(*lead, n, T, d, generator=g, dtype=DTYPE)
    y = torch.randint(0, 2, (*lead, n), generator=g).to(DTYPE) * 2 - 1
    u = torch.randn(*lead, d, generator=g, dtype=DTYPE)
    return Dataset(X, y, u=u)


def _W(B, d, scale, seed=1):
    return scale * torch.randn(B, d, d, generator=torch.Generator().manual_seed(seed), dtype=DTYPE)


@pytest.mark.parametrize("loss", ["exp", "logistic"])
@pytest.mark.parametrize("batched_data", [False, True])
def test_log_domain_gradients_match_autograd(loss, batched_data):
    B = 4
    ds = _random_dataset(batch=B if batched_data else None)
    W = _W(B, ds.d, 0.4)
    ln, dr = model.grad_W(W, None, ds, loss)
    ln_ref, dr_ref = model.grad_W_autograd(W, None, ds, loss)
    assert torch.allclose(ln, ln_ref, atol=1e-11, rtol=0)
    assert torch.allclose(dr, dr_ref, atol=1e-11, rtol=0)
    assert torch.allclose(dr.flatten(1).norm(dim=1), torch.ones(B, dtype=DTYPE), atol=1e-14)

    U = torch.randn(B, ds.d, generator=torch.Generator().manual_seed(2), dtype=DTYPE)
    ln, dr = model.grad_u(W, U, ds, loss)
    ln_ref, dr_ref = model.grad_u_autograd(W, U, ds, loss)
    assert torch.allclose(ln, ln_ref, atol=1e-11, rtol=0)
    assert torch.allclose(dr, dr_ref, atol=1e-11, rtol=0)
    # grad_W with a trainable head (joint training) too
    ln, dr = model.grad_W(W, U, ds, loss)
    ln_ref, dr_ref = model.grad_W_autograd(W, U, ds, loss)
    assert torch.allclose(dr, dr_ref, atol=1e-11, rtol=0)


@pytest.mark.parametrize("loss", ["exp", "logistic"])
def test_log_losses_match_linear_domain(loss):
    ds = _random_dataset()
    W = _W(3, ds.d, 0.4)
    ev = model.evaluate(W, None, ds, loss)
    L = model.loss_value(W, None, ds, loss)
    assert torch.allclose(ev.log_loss, L.log(), atol=1e-13, rtol=0)
    assert torch.allclose(ev.log_excess_loss, (L - model.loss_star(None, ds, loss)).log(), atol=1e-9, rtol=0)
    # the lazy path (values from a values=False evaluation) is the same computation
    lazy = model.loss_values(model.evaluate(W, None, ds, loss, values=False), ds, loss)
    assert torch.equal(lazy[0], ev.log_loss) and torch.equal(lazy[1], ev.log_excess_loss)
    U = torch.randn(3, ds.d, generator=torch.Generator().manual_seed(4), dtype=DTYPE)
    ev_u = model.evaluate(W, U, ds, loss, grad_u=True)
    lazy = model.loss_values(model.evaluate(W, U, ds, loss, values=False), ds, loss, fixed_head=False)
    assert torch.allclose(lazy[1], ev_u.log_excess_loss, atol=1e-14, rtol=0)
    L_u = model.loss_value(W, U, ds, loss)
    assert torch.allclose(ev_u.log_excess_loss, (L_u - model.loss_star(U, ds, loss)).log(), atol=1e-9, rtol=0)
    s = torch.softmax(model.logits(W, ds), -1)
    s_opt = s.gather(-1, ds.opt_index.expand(3, -1).unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(model.log_one_minus_s_opt(W, ds), torch.log1p(-s_opt), atol=1e-12, rtol=0)


def test_forward_matches_definition():
    ds = _random_dataset(n=2, T=3, d=4)
    W, u = _W(1, 4, 0.5)[0], ds.u
    for i in range(2):
        Xi = ds.X[i]
        f = u @ Xi.T @ torch.softmax(Xi @ W @ Xi[0], 0)
        assert torch.allclose(model.forward(W, u, ds)[i], f)


def test_one_direction_form_under_ass2():
    ds = data.example1(n=6, T=4, d=10, seed=3)  # spread = 0: Ass 2 holds exactly
    W = _W(3, 10, 0.5)
    G = model.neg_grad_W_ass2(W, ds)
    ln, dr = model.grad_W_autograd(W, None, ds)
    assert torch.allclose(G, -dr * ln.exp()[:, None, None], atol=1e-14, rtol=1e-11)
    # and it is a genuine identity of Ass 2: with spread > 0 the formula is off
    ds2 = data.example1(n=6, T=4, d=10, spread=0.5, seed=3)
    ln2, dr2 = model.grad_W_autograd(W, None, ds2)
    assert (model.neg_grad_W_ass2(W, ds2) + dr2 * ln2.exp()[:, None, None]).abs().max() > 1e-6


# --- saturation: closed forms on the two-token example ------------------------------------------


@pytest.mark.parametrize("z", [1.0, 40.0, 800.0, 1e4, 1e5])
def test_two_token_closed_forms_in_saturation(z):
    """x_1 = e_1, x_2 = e_2, u = e_1: only z = W_11 - W_21 matters, s_1 = sigmoid(z), L = exp(-s_1)."""
    ds = data.two_token()
    W = torch.tensor([[[z / 2, 0.3], [-z / 2, -0.7]]], dtype=DTYPE)
    log1m = -math.log1p(math.exp(-z)) - z                  # log(1 - sigmoid(z)) = -softplus(z)
    log_s1 = -math.log1p(math.exp(-z))
    s1 = math.exp(log_s1)
    ev = model.evaluate(W, None, ds)
    # grad = -exp(-s1) s1 (1 - s1) (e1 - e2) e1^T  ->  direction -W_mm/||W_mm||, log norm below
    log_gn = -s1 + log_s1 + log1m + 0.5 * math.log(2)
    assert ev.log_grad_norm_W.item() == pytest.approx(log_gn, rel=1e-13, abs=1e-12)
    W_mm = ds.meta["W_mm"]
    assert torch.allclose(ev.dir_W[0], -W_mm / W_mm.norm(), atol=1e-15)
    assert model.log_one_minus_s_opt(W, ds).item() == pytest.approx(log1m, rel=1e-13)
    # L - L* = e^{-s1} - e^{-1} = e^{-1} expm1(1 - s1)
    one_minus_s1 = math.exp(log1m)
    log_ex = -1 + (math.log(math.expm1(one_minus_s1)) if one_minus_s1 > 1e-300 else log1m)
    assert ev.log_excess_loss.item() == pytest.approx(log_ex, rel=1e-12, abs=1e-12)


def test_naive_gradient_breaks_in_saturation_log_domain_does_not():
    ds = data.two_token()
    W = torch.tensor([[[400.0, 0.0], [-400.0, 0.0]]], dtype=DTYPE)  # z = 800: 1 - s_opt = e^-800 underflows
    assert torch.isnan(model.grad_W_naive(W, None, ds)[1]).all()
    assert torch.isnan(model.grad_W_autograd(W, None, ds)[1]).all()
    ln, dr = model.grad_W(W, None, ds)
    assert torch.isfinite(ln).all() and torch.isfinite(dr).all()
    # the naive variant is right where it does not underflow
    W = W / 100
    assert torch.allclose(model.grad_W_naive(W, None, ds)[1], model.grad_W(W, None, ds)[1], atol=1e-12)


# --- saturation: a generic instance against a 300-digit mpmath reference -------------------------


def _mp_gradient(X, y, u, W):
    """-grad_W L (exp loss) in arbitrary precision: (log ||grad||, grad / ||grad||) as mpf lists."""
    n, T, d = len(X), len(X[0]), len(X[0][0])
    G = [[mp.mpf(0)] * d for _ in range(d)]
    for i in range(n):
        a = [sum(X[i][t][p] * W[p][q] * X[i][0][q] for p in range(d) for q in range(d)) for t in range(T)]
        mx = max(a)
        e = [mp.exp(at - mx) for at in a]
        s = [ei / sum(e) for ei in e]
        g = [y[i] * sum(u[p] * X[i][t][p] for p in range(d)) for t in range(T)]
        m = sum(st * gt for st, gt in zip(s, g))
        for t in range(T):
            c = mp.exp(-m) * s[t] * (m - g[t]) / n    # coefficient of x_it x_i1^T in grad L
            for p in range(d):
                for q in range(d):
                    G[p][q] += c * X[i][t][p] * X[i][0][q]
    nrm = mp.sqrt(sum(x * x for row in G for x in row))
    return mp.log(nrm), [[x / nrm for x in row] for row in G]


def test_log_domain_gradient_matches_mpmath_in_saturation():
    ds = data.example1(n=3, T=3, d=4, seed=5)
    from numerics.paper_b import svm

    W_mm = svm.w_svm(ds).solution
    W_dir = W_mm + 0.05 * _W(1, 4, 1.0, seed=7)[0]           # a generic direction that still separates
    for R in [30.0, 300.0, 3000.0]:                          # log(1 - s_opt) ~ -10, -100, -1000
        W = (R * W_dir / W_dir.norm()).unsqueeze(0)
        ln, dr = model.grad_W(W, None, ds)
        with mp.workdps(700):                                 # resolves m_i - gamma_opt ~ e^-1000 exactly
            to = lambda t: [[mp.mpf(float(v)) for v in row] for row in t.tolist()]
            X = [to(ds.X[i]) for i in range(ds.n)]
            vec = lambda t: [mp.mpf(float(v)) for v in t]
            ln_ref, dr_ref = _mp_gradient(X, vec(ds.y), vec(ds.u), to(W[0]))
            dr_ref = torch.tensor([[float(x) for x in row] for row in dr_ref], dtype=DTYPE)
            ln_ref = float(ln_ref)
        assert ln.item() == pytest.approx(ln_ref, rel=1e-12, abs=1e-10)
        assert torch.allclose(dr[0], dr_ref, atol=1e-12)
        # float64 autograd: fine at R = 30, a wrong direction at 300, NaN at 3000
        ln_ag, dr_ag = model.grad_W_autograd(W, None, ds)
        err = (dr_ag[0] - dr_ref).abs().max()
        assert {30.0: err < 1e-10, 300.0: err > 0.1, 3000.0: torch.isnan(err)}[R]


def test_opt_tokens_must_be_unique():
    with pytest.raises(ValueError, match="not unique"):
        model.opt_tokens(torch.tensor([[1.0, 1.0, 0.0]], dtype=DTYPE))
