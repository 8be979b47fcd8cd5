"""Unit tests of paper A's model core (numerics/paper_a/model.py)."""
import math

import pytest
import torch

from numerics import DTYPE
from numerics.paper_a import model
from numerics.paper_a import oracle as orc
from theorems.paper_a.softmax_bias.coefficients import loo_bias_coefficient


def _instance(gen, d=3, r=4, B=2, B_op=0.3):
    A = torch.randn(d, d, generator=gen, dtype=DTYPE)
    Sigma = A @ A.T / d + 0.5 * torch.eye(d, dtype=DTYPE)
    W = torch.randn(r, d, generator=gen, dtype=DTYPE)
    V = torch.randn(B, r, d, generator=gen, dtype=DTYPE)
    K = torch.randn(B, d, d, generator=gen, dtype=DTYPE)
    K = K * B_op / torch.linalg.matrix_norm(model.factor_B(K, Sigma), ord=2)[:, None, None]
    return Sigma, W, V, K


def test_loo_predictor_matches_explicit_loop(gen):
    Sigma, W, V, K = _instance(gen)
    x, y = model.sample_regression(Sigma, W, 0.3, 6, 2, gen)
    pred = model.predictions(V, K, x)
    for b in range(2):
        for i in range(6):
            others = [j for j in range(6) if j != i]
            s = torch.softmax(torch.stack([x[b, i] @ K[b] @ x[b, j] for j in others]), 0)
            expect = V[b] @ sum(s[k] * x[b, j] for k, j in enumerate(others))
            torch.testing.assert_close(pred[b, i], expect)


def test_include_self_differs_from_leave_one_out(gen):
    Sigma, W, V, K = _instance(gen)
    x, y = model.sample_regression(Sigma, W, 0.3, 6, 2, gen)
    assert not torch.allclose(model.empirical_loss(V, K, x, y), model.empirical_loss(V, K, x, y, include_self=True))


def test_closed_form_at_known_points(gen):
    Sigma, W, V, K = _instance(gen)
    # K = 0 gives the constant predictor 0 (mean of x' is 0): L = E||y||^2 = tr(W Sigma W^T) + r sigma^2
    L0 = model.population_loss(V, torch.zeros_like(K), Sigma, W, 0.7)
    torch.testing.assert_close(L0, (W @ Sigma @ W.T).trace().expand(2) + 4 * 0.49)
    # a point with V Sigma K^T = W* reaches the noise floor r sigma^2
    W_fit = V[0] @ Sigma @ K[0].T
    torch.testing.assert_close(model.population_loss(V[:1], K[:1], Sigma, W_fit, 0.7),
                               torch.tensor([4 * 0.49], dtype=DTYPE))


@pytest.mark.parametrize("bad", [[[1.0, 0.0], [0.0, -1.0]], [[1.0, 2.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
def test_bad_covariance_is_a_clear_error(bad):
    with pytest.raises(model.NotPositiveDefiniteError):
        model.check_covariance(torch.tensor(bad, dtype=DTYPE))


def test_mc_scope_flag_and_nan_coefficient_outside(gen):
    Sigma, W, V, K = _instance(gen, B_op=0.3)
    K_out = K * 3.0  # ||B||_op = 0.9
    assert model.mc_scope(K, Sigma)[0].all() and not model.mc_scope(K_out, Sigma)[0].any()
    assert torch.isfinite(loo_bias_coefficient(V, K, Sigma, W)).all()
    assert torch.isnan(loo_bias_coefficient(V, K_out, Sigma, W)).all()


def test_mc_estimator_is_batched_consistently(gen):
    Sigma, W, V, K = _instance(gen)
    both = model.mc_population_loss(V, K, Sigma, W, 0.5, 500, 32, torch.Generator().manual_seed(0))
    assert both.mean.shape == (2,) and (both.se > 0).all()
    assert math.isfinite(float(both.mean.sum()))


def test_jackknife_removes_the_1_over_m_bias(gen):
    # with few inner draws the plug-in ratio is visibly biased; the jackknifed estimator is not
    Sigma, W, V, K = _instance(gen, B=1, B_op=0.45)
    g = torch.Generator().manual_seed(5)
    est = model.mc_population_loss(V, K, Sigma, W, 0.5, 40000, 8, g)
    plain = model.mc_population_loss(V, K, Sigma, W, 0.5, 40000, 8, torch.Generator().manual_seed(5),
                                     jackknife=False)
    cf = model.population_loss(V, K, Sigma, W, 0.5)
    assert abs(float(est.mean - cf)) < 4.5 * float(est.se)
    assert abs(float(plain.mean - cf)) > 4.5 * float(plain.se)  # the bias the jackknife removes


def test_one_regression_draw_behind_both_samplers(gen):
    """model.sample_regression and oracle.sample_batches are the same draw (one batch of data sets vs m of them)."""
    Sigma, W, _, _ = _instance(gen)
    x, y = model.sample_regression(Sigma, W, 0.3, 5, 2, torch.Generator().manual_seed(3))
    xb, yb = orc.sample_batches(Sigma, W, 0.3, 5, 1, 2, torch.Generator().manual_seed(3))
    assert torch.equal(x, xb[0]) and torch.equal(y, yb[0])
    C = torch.linalg.cholesky(Sigma)
    xr, yr = model.regression_draw(C, W, 0.3, (2, 5), torch.Generator().manual_seed(3))
    assert torch.equal(x, xr) and torch.equal(y, yr)


def test_chunked_covers_the_total_in_order():
    calls = []
    out = model.chunked(10, 4, lambda k, done: calls.append((k, done)) or k)
    assert calls == [(4, 0), (4, 4), (2, 8)] and out == [4, 4, 2]
    assert model.chunked(0, 4, lambda k, done: k) == []


def test_chunked_returns_copies_of_each_chunks_tensors_in_their_structure():
    """Each chunk's tensors are copied once the chunk is done (so they do not pin the heap gaps its temporaries left:
    ``model._moved_out``); the structure and the numbers are the draw's."""
    import collections

    Pair = collections.namedtuple("Pair", "a b")
    made = []

    def draw(k, done):
        big = torch.arange(float(done), float(done + 4 * k)).reshape(4, k)
        made.append(big)
        return {"view": big[0], "nested": (big.sum(0), [big[1]]), "pair": Pair(big[2], 3), "n": k}

    out = model.chunked(5, 2, draw)
    assert [o["n"] for o in out] == [2, 2, 1] and all(isinstance(o["pair"], Pair) for o in out)
    for o, big in zip(out, made):
        assert torch.equal(o["view"], big[0]) and torch.equal(o["nested"][1][0], big[1])
        assert torch.equal(o["nested"][0], big.sum(0)) and torch.equal(o["pair"].a, big[2]) and o["pair"].b == 3
        assert o["view"].untyped_storage().data_ptr() != big.untyped_storage().data_ptr()  # a copy, not a view

