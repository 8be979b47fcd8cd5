"""Paper A Lemma 7 numerics: Gaussian exponential moments and the tail-rate estimator."""
import math

import torch

from numerics import DTYPE
from numerics.paper_a import integrability as ig


def _spd(g, d, lo=0.5, hi=3.0):
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=DTYPE))
    return (Q * (lo + (hi - lo) * torch.rand(d, generator=g, dtype=DTYPE))) @ Q.T


def test_quadratic_moment_one_dimension_and_region():
    # Sigma = 4 has an exact square root, so the boundary mu = 1/2 is exactly 1/2 (with Sigma = 2, sqrt(2)^2 lands an
    # ulp either side of 2 depending on the LAPACK build, and the boundary with it)
    Sigma = torch.tensor([[4.0]], dtype=DTYPE)
    M = torch.tensor([[[0.05]], [[0.1]], [[0.125]], [[0.15]]], dtype=DTYPE)  # mu = 4 m: 0.2, 0.4, 0.5, 0.6
    val = ig.quadratic_moment(M, Sigma)
    assert torch.allclose(val[:2], torch.tensor([(1 - 0.4) ** -0.5, (1 - 0.8) ** -0.5], dtype=DTYPE))
    assert torch.isinf(val[2:]).all()  # the boundary mu = 1/2 itself is outside


def test_skew_part_does_not_matter_and_control_differs(gen):
    Sigma = _spd(gen, 3)
    A = 0.05 * torch.randn(1, 3, 3, generator=gen, dtype=DTYPE)
    sym, skew = (A + A.mT) / 2, (A - A.mT) / 2
    v1 = ig.quadratic_moment(sym, Sigma)
    v2 = ig.quadratic_moment(sym + 3 * skew, Sigma)
    assert torch.allclose(v1, v2)
    assert not torch.allclose(ig.quadratic_moment(sym + 3 * skew, Sigma, symmetrize=False), v1)


def test_bilinear_is_quadratic_with_half_K_Sigma_KT(gen):
    Sigma = _spd(gen, 3)
    K = torch.randn(5, 3, 3, generator=gen, dtype=DTYPE)
    K = K * (torch.linspace(0.2, 1.4, 5, dtype=DTYPE) / ig.bilinear_singular_values(K, Sigma)[:, 0]).reshape(-1, 1, 1)
    bil = ig.bilinear_moment(K, Sigma, 1.0)
    quad = ig.quadratic_moment(0.5 * K @ Sigma @ K.mT, Sigma)
    fin = torch.isfinite(bil)
    assert fin.tolist() == [True, True, True, False, False]  # s ||B|| = 0.2, 0.5, 0.8, 1.1, 1.4
    assert torch.equal(fin, torch.isfinite(quad)) and torch.allclose(bil[fin], quad[fin])


def test_monte_carlo_agrees_inside(gen):
    Sigma = _spd(gen, 2)
    K = torch.randn(1, 2, 2, generator=gen, dtype=DTYPE)
    K = K * 0.2 / ig.bilinear_singular_values(K, Sigma)[:, 0]
    mean, se = ig.mean_exp(ig.bilinear_logweights(K, Sigma, torch.ones(1, dtype=DTYPE), 200_000, gen))
    assert abs(float(mean) - float(ig.bilinear_moment(K, Sigma, 1.0))) < 5 * float(se)
    M = 0.1 * torch.eye(2, dtype=DTYPE).unsqueeze(0) @ torch.linalg.inv(Sigma)  # N = 0.1 I
    mean, se = ig.mean_exp(ig.quadratic_logweights(M, Sigma, 200_000, gen))
    assert abs(float(mean) - (1 - 0.2) ** -1) < 5 * float(se)


def test_tail_rate_recovers_kappa_and_raw_hill_is_high(gen):
    mu = torch.tensor([0.3, 0.5, 0.8], dtype=DTYPE)
    z = torch.randn(3, 400_000, 2, generator=gen, dtype=DTYPE)
    t = mu.unsqueeze(-1) * z[..., 0] ** 2 - 0.2 * z[..., 1] ** 2  # simple top eigenvalue mu, kappa = 1/(2 mu)
    tr = ig.tail_rate(t, 2000)
    kappa = 1 / (2 * mu)
    assert ((tr.kappa - kappa).abs() < 4 * tr.se).all()
    assert (tr.raw > tr.kappa).all()  # the plain Hill estimate ignores the u^{-1/2} prefactor
    lo, hi = tr.interval(3.0)
    assert hi[2] < 1 < lo[0]  # mu = 0.8: infinite moment; mu = 0.3: finite


def test_tail_rate_bilinear_kappa(gen):
    z, zp = torch.randn(2, 400_000, generator=gen, dtype=DTYPE), torch.randn(2, 400_000, generator=gen, dtype=DTYPE)
    b = torch.tensor([0.6, 1.5], dtype=DTYPE)
    tr = ig.tail_rate(b.unsqueeze(-1) * z * zp, 2000)
    assert ((tr.kappa - 1 / b).abs() < 4 * tr.se).all()
    assert math.isfinite(float(tr.se.max()))
