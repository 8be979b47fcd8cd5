"""Two-token closed forms (numerics.paper_b.two_token) against the log-domain engine."""
import math

import numpy as np
import pytest
import torch

from numerics import DTYPE
from numerics.paper_b import algorithms as A
from numerics.paper_b import data, model, two_token


def _W0(B=5, seed=0):
    return torch.randn(B, 2, 2, generator=torch.Generator().manual_seed(seed), dtype=DTYPE)


def test_wbar_mm_matches_the_dataset():
    W_mm = data.two_token().meta["W_mm"]
    assert torch.allclose(two_token.WBAR_MM, W_mm / W_mm.norm())


def test_gradient_is_along_w_mm_with_the_closed_form_size():
    ds, W = data.two_token(), _W0()
    log_gn, direction = model.grad_W_autograd(W, None, ds)
    p, _ = two_token.split(W)
    z = math.sqrt(2) * p
    s = two_token.sigmoid(z)
    assert torch.allclose(direction, -two_token.WBAR_MM.expand_as(direction), atol=1e-12)
    assert np.allclose(log_gn.exp().numpy(), math.sqrt(2) * np.exp(-s) * s * (1 - s), rtol=1e-12)


def test_one_minus_corr_is_stable_and_correct():
    p, r = np.array([-1.0, 0.5, 3.0, 1e8]), np.array([1.0, 2.0, 0.1, 1.0])
    direct = 1 - p / np.sqrt(p**2 + r**2)
    got = two_token.one_minus_corr(p, r)
    assert np.allclose(got[:3], direct[:3], rtol=1e-12)
    assert math.isclose(got[3], 0.5e-16, rel_tol=1e-6)        # the direct form rounds to 0 here


def test_engine_gd_and_ngd_follow_the_closed_forms():
    ds, W0, eta, steps = data.two_token(), _W0(4, 1), 0.7, [0, 1, 7, 50, 200]
    p0, r0 = two_token.split(W0)
    for alg in ("gd", "ngd"):
        traj = A.train(ds, A.gd(eta) if alg == "gd" else A.ngd(eta), 200, W0, record_at=steps, keep_params=True)
        p, r = two_token.split(traj["W"])
        assert np.allclose(r, r0[None], rtol=1e-12, atol=1e-12)           # nothing orthogonal to W_mm moves
        want = two_token.closed_form_p(alg.upper(), p0, eta, steps)
        assert np.allclose(p, want, rtol=1e-11, atol=1e-11)


def test_gd_exponential_of_z_grows_like_2_eta_t_over_e():
    eta = 0.9
    z = two_token.gd_z(np.zeros(1), eta, [20000])[0, 0]
    assert abs(math.exp(z) / (2 * eta * 20000 / math.e) - 1) < 2e-3
    assert abs(z - two_token.gd_z_asymptotic(20000, eta)) < 2e-3


def test_closed_form_p_dispatch_and_control_factor():
    p0, steps = np.array([0.3, -1.0]), [0, 3, 10]
    assert np.allclose(two_token.closed_form_p("NGD", p0, 0.5, steps), p0[None] + 0.5 * np.array(steps)[:, None])
    gd = two_token.closed_form_p("GD", p0, 0.5, steps)
    assert np.allclose(gd, two_token.gd_z(math.sqrt(2) * p0, 0.5, steps) / math.sqrt(2))
    wrong = two_token.closed_form_p("GD", p0, 0.5, steps, gd_factor=1.0)
    assert np.allclose(gd[0], wrong[0]) and np.all(wrong[1:] < gd[1:])      # half the increment: z grows slower
    with pytest.raises(ValueError):
        two_token.closed_form_p("Polyak", p0, 0.5, steps)
