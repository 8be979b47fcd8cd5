"""Paper A Monte Carlo engines for the gradient-approximation results (numerics/paper_a/moments.py), and the derived
coefficients they are compared with (which live beside their derivations in theorems/paper_a/)."""
import math

import torch

from numerics import DTYPE
from numerics.paper_a import geometry as ge
from numerics.paper_a import moments as mo
from numerics.paper_a import oracle as orc
from numerics.paper_a.algorithms import random_instance
from numerics.paper_a.model import sym_sqrt
from theorems.paper_a.softmax_bias.coefficients import (loo_bias_coefficient, regularizer_bias_coefficient,
                                                        tilted_limits, untilted_limits)
from theorems.paper_a.softmax_bias.l9_softmax_moments import amgm_bounds
from theorems.paper_a.softmax_bias.t4_gradient_loss import lemma_route_coefficient, lemma_route_without_third_moment
from theorems.paper_a.softmax_bias.t5_gradient_regularizer import first_only


def _setup(seed=0, B=2, m_op=0.1):
    g = torch.Generator().manual_seed(seed)
    Sigma, W = random_instance(3, 4, g, m_op=m_op)
    (V, K), _ = ge.perturb_from_manifold(Sigma, W, 0.05, B, g)
    return Sigma, W, V, K, g


def test_closed_form_gradient_matches_autograd_and_is_affine_in_y():
    Sigma, W, V, K, g = _setup()
    x, y = orc.sample_batches(Sigma, W, 0.3, 12, 3, 2, g)
    eps = torch.randn(y.shape, generator=g, dtype=DTYPE)
    for include_self in (False, True):
        loss, gV, gK = orc.empirical_objective_grad(V, K, x, y, lam=0, include_self=include_self)
        l2, hV, hK, (nV, nK) = mo.empirical_loss_grad(V, K, x, y, include_self, noise=eps)
        assert torch.allclose(loss, l2, rtol=1e-12)
        assert torch.allclose(gV, hV, atol=1e-12) and torch.allclose(gK, hK, atol=1e-12)
        _, pV, pK = orc.empirical_objective_grad(V, K, x, y + eps, lam=0, include_self=include_self)
        assert torch.allclose(pV, hV + nV, atol=1e-12) and torch.allclose(pK, hK + nK, atol=1e-12)


def test_oracle_loss_gradient_is_autograd_of_oracle_loss():
    Sigma, W, V, K, g = _setup()
    x, y = orc.sample_batches(Sigma, W, 0.3, 10, 1, 2, g)
    x, y = x[0], y[0]
    Vr, Kr = V.clone().requires_grad_(True), K.clone().requires_grad_(True)
    loss = (y - x @ (Vr @ Sigma @ Kr.mT).mT).pow(2).sum((-1, -2)) / x.shape[-2]
    aV, aK = torch.autograd.grad(loss.sum(), (Vr, Kr))
    lo, oV, oK = mo.oracle_loss_grad(V, K, Sigma, x, y)
    assert torch.allclose(lo, loss.detach()) and torch.allclose(oV, aV) and torch.allclose(oK, aK)


def test_regularizer_bias_coefficient_matches_hessian_contraction():
    """c_R = 1/2 sum H_{ab,cd} (Sigma_ac Sigma_bd + Sigma_ad Sigma_bc), H = Hessian of S -> grad R(theta; S)."""
    Sigma, W, V, K, _ = _setup(B=1)
    cV, cK = regularizer_bias_coefficient(V, K, Sigma)
    cov = torch.einsum("ac,bd->abcd", Sigma, Sigma) + torch.einsum("ad,bc->abcd", Sigma, Sigma)
    for part, c in ((0, cV), (1, cK)):
        H = torch.func.hessian(lambda S: ge.regularizer_grad(V, K, S)[part])(Sigma.clone())  # (1, r, d, d, d, d, d)
        ref = 0.5 * torch.einsum("...abcd,abcd->...", H, cov)
        assert torch.allclose(c, ref, rtol=1e-9, atol=1e-12)
    c1V, _ = regularizer_bias_coefficient(V, K, Sigma, first_only)
    assert not torch.allclose(c1V, cV, rtol=0.05)


def test_regularizer_linear_term_is_the_derivative():
    Sigma, W, V, K, g = _setup(B=2)
    Delta = 1e-6 * torch.randn(2, 3, 3, generator=g, dtype=DTYPE)
    Delta = Delta + Delta.mT
    lV, lK = mo.regularizer_grad_linear(V, K, Sigma, Delta)
    pV, pK = ge.regularizer_grad(V, K, Sigma + Delta)
    mV, mK = ge.regularizer_grad(V, K, Sigma - Delta)
    assert torch.allclose(lV, (pV - mV) / 2, rtol=1e-6, atol=1e-16)
    assert torch.allclose(lK, (pK - mK) / 2, rtol=1e-6, atol=1e-16)


def test_lemma_route_coefficient_equals_gradient_of_loss_bias_coefficient():
    Sigma, W, V, K, _ = _setup(seed=3, B=3)
    Vr, Kr = V.clone().requires_grad_(True), K.clone().requires_grad_(True)
    gV, gK = torch.autograd.grad(loo_bias_coefficient(Vr, Kr, Sigma, W).sum(), (Vr, Kr))
    cV, cK = lemma_route_coefficient(V, K, Sigma, W)
    assert torch.allclose(cV, gV, atol=1e-12) and torch.allclose(cK, gK, atol=1e-12)
    _, dK = lemma_route_without_third_moment(V, K, Sigma, W)
    assert not torch.allclose(dK, gK, atol=1e-3)


def test_gradient_bias_samples_control_variates_have_the_right_means():
    """Control-variated and raw draws estimate the same bias (raw = CV + mean-zero terms)."""
    Sigma, W, V, K, g = _setup(B=1)
    s = mo.gradient_bias_samples(V, K, Sigma, W, 16, 3000, g, n_err=3000)
    for cv, raw in ((mo.flat(*s.dR), mo.flat(*s.dR_raw)), (mo.flat(*s.dL), mo.flat(*s.err_L))):
        diff = raw - cv  # mean zero exactly
        z = diff.mean(0) / (diff.std(0) / math.sqrt(diff.shape[0]))
        assert z.abs().max() < 5
        assert cv.std(0).sum() < raw.std(0).sum()  # the control variate reduces variance


def test_softmax_linear_terms_have_mean_zero_and_remove_the_shared_fluctuation():
    """The linear softmax term subtracted from dL has mean exactly zero (it is checked against the term computed from
    explicit tilted weights) and removes the O(n^{-1/2}) fluctuation shared by the queries of one batch."""
    Sigma, W, V, K, g = _setup(B=2)
    x, y = orc.sample_batches(Sigma, W, 0.0, 24, 4000, 2, g)
    cV, cK, cl = mo.softmax_linear_terms(V, K, Sigma, x, y)
    for c in (cV, cK, cl):
        z = c.mean(0) / (c.std(0) / math.sqrt(c.shape[0]))
        assert z.abs().max() < 5
    # the same term from explicit weights w_ij / E w = exp(a_ij - q_i / 2), j != i
    xs, ys = x[:3], y[:3]
    n = xs.shape[-2]
    Mu = xs @ K @ Sigma
    q = (Mu * (xs @ K)).sum(-1)
    wr = torch.exp(xs @ K @ xs.mT - q.unsqueeze(-1) / 2) * (1 - torch.eye(n, dtype=DTYPE))
    D = (wr @ xs - wr.sum(-1, keepdim=True) * Mu) / (n - 1)
    Eo = ys - Mu @ V.mT
    ref_V = (-2 * Eo.mT @ D + 2 * V @ D.mT @ Mu) / n
    assert torch.allclose(cV[:3], ref_V, rtol=1e-10, atol=1e-12)
    assert torch.allclose(cl[:3], -2 * (Eo * (D @ V.mT)).sum((-1, -2)) / n, rtol=1e-10, atol=1e-12)
    _, hV, hK = mo.empirical_loss_grad(V, K, x, y)
    _, oV, oK = mo.oracle_loss_grad(V, K, Sigma, x, y)
    raw, cv = mo.flat(hV - oV, hK - oK), mo.flat(hV - oV - cV, hK - oK - cK)
    assert torch.all(cv.std(0).sum(-1) < raw.std(0).sum(-1))
    K_block = slice(V.shape[-1] * V.shape[-2], None)  # where the shared fluctuation lives (measured ratio ~0.5 here)
    assert torch.all(cv[..., K_block].std(0).sum(-1) < 0.75 * raw[..., K_block].std(0).sum(-1))


def test_squared_norm_of_mean_is_unbiased():
    g = torch.Generator().manual_seed(0)
    m = torch.tensor([[0.3, -0.2, 0.1]], dtype=DTYPE)  # ||m||^2 = 0.14
    reps = torch.stack([mo.squared_norm_of_mean(m + torch.randn(50, 1, 3, generator=g, dtype=DTYPE)).value
                        for _ in range(400)])
    naive = torch.stack([mo.squared_norm_of_mean(m + torch.randn(50, 1, 3, generator=g, dtype=DTYPE)).naive
                         for _ in range(400)])
    assert abs(float(reps.mean()) - 0.14) < 4 * float(reps.std()) / 20
    assert float(naive.mean()) > 0.14 + 3 / 50 * 0.5  # biased up by tr Cov / N = 0.06


def test_softmax_row_linear_terms_have_mean_zero_and_limits_are_sane():
    g = torch.Generator().manual_seed(1)
    Sigma = torch.tensor([[2.0, 0.3], [0.3, 1.0]], dtype=DTYPE)
    K = torch.tensor([[0.2, 0.1], [-0.1, 0.3]], dtype=DTYPE)
    xq = torch.tensor([[1.0, -0.5], [0.5, 1.5]], dtype=DTYPE)
    r = mo.softmax_row_stats(K, Sigma, xq, 32, 4000, g)
    for lin in (r.xbar_lin, r.M2_lin.flatten(-2)):
        z = lin.mean(0) / (lin.std(0) / math.sqrt(lin.shape[0]))
        assert z.abs().max() < 5
    lim = tilted_limits(K, Sigma, xq)
    assert torch.allclose(lim["ss"], torch.exp(mo.query_scale(K, Sigma, xq)))
    flat = untilted_limits(K, Sigma, xq)  # uniform weights: the tilt factors e^q (e^{2q} for ss2) dropped
    assert torch.equal(flat["ss"], torch.ones(2, dtype=DTYPE)) and torch.equal(flat["ss2"], torch.ones(2, dtype=DTYPE))
    assert torch.allclose(flat["M2_bias"] * torch.exp(r.q)[:, None, None], lim["M2_bias"])
    est = 31 * r.ss.mean(0)
    assert torch.all((est - lim["ss"]).abs() < 0.1 * lim["ss"])
    bounds = amgm_bounds(r.q, 32)
    assert torch.all(r.ss.mean(0) < bounds["ss"]) and torch.all(r.ss.pow(2).mean(0) < bounds["ss2"])


def test_exp_quadratic_moment_matches_monte_carlo_and_scope():
    g = torch.Generator().manual_seed(2)
    Sigma = torch.tensor([[1.5, 0.2], [0.2, 0.7]], dtype=DTYPE)
    M = torch.tensor([[0.1, 0.02], [0.02, 0.05]], dtype=DTYPE)
    x = torch.randn(400000, 2, generator=g, dtype=DTYPE) @ torch.linalg.cholesky(Sigma).T
    mc = torch.exp((x @ M * x).sum(-1))
    assert abs(float(mc.mean()) - float(mo.exp_quadratic_moment(M, Sigma))) < 5 * float(mc.std()) / 632
    R = sym_sqrt(Sigma)
    big = 0.6 * torch.linalg.inv(R @ R)  # lambda_max(R M R) = 0.6 > 1/2
    assert math.isinf(float(mo.exp_quadratic_moment(big, Sigma)))


def _poincare_instance():
    """A small Poincaré instance, ``poincare_samples`` on it, and the same context draws rebuilt by hand (same seed,
    same order), for comparing its sums with autograd."""
    Sigma = torch.tensor([[2.0, 0.3], [0.3, 1.0]], dtype=DTYPE)
    K = torch.tensor([[0.2, 0.1], [-0.1, 0.3]], dtype=DTYPE)
    xq = torch.tensor([1.0, -0.5], dtype=DTYPE)
    n, N = 6, 5
    P = mo.poincare_samples(K, Sigma, xq, n, N, torch.Generator().manual_seed(4))
    X = torch.randn(N, n - 1, 2, generator=torch.Generator().manual_seed(4), dtype=DTYPE)
    X = X @ torch.linalg.cholesky(Sigma).T
    return Sigma, K, xq, n, N, P, X


def test_poincare_gradient_sum_matches_lemma_8_closed_form():
    """sum_j ||d xbar / d x_j Sigma^{1/2}||^2 by autograd vs d xbar/dx_k = s_k (I + (x_k - xbar) a^T), a = K^T x_q."""
    Sigma, K, xq, n, N, P, X = _poincare_instance()
    a = K.T @ xq
    s = torch.softmax(X @ a, -1)
    xbar = (s.unsqueeze(-1) * X).sum(-2)
    J = s[..., None, None] * (torch.eye(2, dtype=DTYPE) + (X - xbar.unsqueeze(-2)).unsqueeze(-1) * a)  # (N, n-1, 2, 2)
    ref = ((J @ Sigma) * J).sum((-1, -2, -3))
    assert torch.allclose(P.grad_sq[("xbar", "Sigma")], ref, rtol=1e-10)
    Jw = s.unsqueeze(-1) * (torch.eye(n - 1, dtype=DTYPE) - s.unsqueeze(-2))  # ds_j / da_k
    ref_w = (Jw.pow(2).sum((-1, -2))) * float(a @ Sigma @ a)
    assert torch.allclose(P.grad_sq[("weights", "Sigma")], ref_w, rtol=1e-10)


def test_poincare_frozen_softmax_sums_match_autograd_with_detached_weights():
    """The closed-form sums of the frozen-softmax control equal autograd of the row functions with s detached."""
    Sigma, K, xq, n, N, P, X = _poincare_instance()

    def frozen(Y):
        s = torch.softmax(Y @ (K.T @ xq), -1).detach()
        xbar = s @ Y
        return s * 0, xbar, torch.outer(xbar, xbar).flatten(), ((Y.T * s) @ Y).flatten()

    for f, J in zip(mo.POINCARE_FUNCTIONS, torch.func.vmap(torch.func.jacrev(frozen))(X)):
        ref = ((J @ Sigma) * J).sum((-1, -2, -3))
        assert torch.allclose(P.grad_sq[(f, "frozen")], ref, rtol=1e-10, atol=1e-14)


def test_scaled_ss_exact_quadrature_is_exact_at_small_n_and_reaches_e_q():
    # n' = 1: one weight, s = 1; n' = 2: s1^2 + s2^2 = (1 + tanh^2(d/2))/2 with d = a1 - a2 ~ N(0, 2q)
    assert abs(mo.scaled_ss_exact(0.6, 1) - 1) < 1e-9
    q = 0.6
    zs = torch.special.erfinv(torch.linspace(-1, 1, 200003, dtype=DTYPE)[1:-1]) * math.sqrt(2)
    d = zs * math.sqrt(2 * q)
    two = 2 * float(((1 + torch.tanh(d / 2) ** 2) / 2).mean())
    assert abs(mo.scaled_ss_exact(q, 2) - two) < 1e-4
    # Monte Carlo at n' = 15, and the limit e^q
    g = torch.Generator().manual_seed(0)
    a = torch.randn(200000, 15, generator=g, dtype=DTYPE) * math.sqrt(q)
    v = 15 * torch.softmax(a, -1).pow(2).sum(-1)
    assert abs(float(v.mean()) - mo.scaled_ss_exact(q, 15)) < 5 * float(v.std()) / math.sqrt(len(v))
    assert abs(mo.scaled_ss_exact(q, 10**6) - math.exp(q)) < 1e-5
    assert mo.scaled_ss_exact(q, 255) < mo.scaled_ss_exact(q, 1023) < math.exp(q)


def test_context_weights_leave_one_out_is_the_masked_softmax_bit_for_bit():
    # the leave-one-out mask is written into the scores in place (a masked copy cost as much as the softmax): the
    # weights must be those of the masked copy exactly, with no weight on the query itself and the inputs untouched
    from numerics.paper_a.model import context_weights

    gen = torch.Generator().manual_seed(3)
    x = torch.randn(7, 2, 9, 3, generator=gen, dtype=torch.float64)
    K = 0.4 * torch.randn(3, 3, generator=gen, dtype=torch.float64)
    x0, K0 = x.clone(), K.clone()
    masked = (x @ K @ x.mT).masked_fill(torch.eye(9, dtype=torch.bool), float("-inf")).softmax(-1)
    s = context_weights(K, x)
    assert torch.equal(s, masked) and torch.equal(s.diagonal(dim1=-2, dim2=-1), torch.zeros(7, 2, 9, dtype=s.dtype))
    assert torch.equal(x, x0) and torch.equal(K, K0)
    assert torch.equal(context_weights(K, x, include_self=True), (x @ K @ x.mT).softmax(-1))


def test_softmax_rows_in_place_are_the_plain_formula_bit_for_bit():
    # softmax_rows writes its mask, shift and exp into the scores it computed (no n x n copies): the weights and the
    # log-normalisers must be those of the out-of-place formula exactly, and the inputs untouched
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(5, 2, 11, 3, generator=gen, dtype=torch.float64)
    K = 0.5 * torch.randn(2, 3, 3, generator=gen, dtype=torch.float64)
    x0 = x.clone()
    for include_self in (False, True):
        scores = x @ K @ x.mT
        if not include_self:
            scores = scores.masked_fill(torch.eye(11, dtype=torch.bool), float("-inf"))
        logZ = torch.logsumexp(scores, -1)
        s, lz = mo.softmax_rows(K, x, include_self)
        assert torch.equal(s, torch.exp(scores - logZ.unsqueeze(-1))) and torch.equal(lz, logZ)
    assert torch.equal(x, x0)
