"""Paper A geometry: factor coordinates, gradients, the manifold of minima, Procrustes projection."""
import pytest
import torch
from hypothesis import given, settings, strategies as st

from numerics import DTYPE
from numerics.paper_a import geometry as ge
from numerics.paper_a.algorithms import random_instance
from numerics.paper_a.model import optimal_loss, population_loss, sym_sqrt

SIGMA_NOISE = 0.3


def _instance(seed=0, d=4, r=5, batch=None):
    g = torch.Generator().manual_seed(seed)
    Sigma, W = random_instance(d, r, g, batch=batch)
    return Sigma, W, g


def _random_theta(g, B, r, d, scale=0.5):
    return scale * torch.randn(B, r, d, generator=g, dtype=DTYPE), scale * torch.randn(B, d, d, generator=g, dtype=DTYPE)


def _rel(a, b):
    return ((a - b).norm() / b.norm()).item()


# ---------------------------------------------------------------------------
# Factor coordinates and the closed forms
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("batched_sigma", [False, True])
def test_factor_coordinates(batched_sigma):
    Sigma, W, g = _instance(batch=3 if batched_sigma else None)
    V, K = _random_theta(g, 3, 5, 4)
    A, B = ge.to_factors(V, K, Sigma)
    V2, K2 = ge.from_factors(A, B, Sigma)
    assert torch.allclose(V2, V, atol=1e-12) and torch.allclose(K2, K, atol=1e-12)
    U, Lam, Vs = ge.target_svd(Sigma, W)
    M = (U * Lam.unsqueeze(-2)) @ Vs.mT
    excess = population_loss(V, K, Sigma, W, SIGMA_NOISE) - optimal_loss(W, SIGMA_NOISE)
    assert torch.allclose(excess, (A @ B.mT - M).pow(2).sum((-1, -2)), rtol=1e-10)
    assert torch.allclose(ge.regularizer(V, K, Sigma), (A.mT @ A - B.mT @ B).pow(2).sum((-1, -2)), rtol=1e-10)
    # Sigmatilde inner product and dual norm are Frobenius in factor coordinates
    V1, K1 = _random_theta(g, 3, 5, 4)
    A1, B1 = ge.to_factors(V1, K1, Sigma)
    assert torch.allclose(ge.sigma_inner((V, K), (V1, K1), Sigma), (A * A1).sum((-1, -2)) + (B * B1).sum((-1, -2)))
    GA, GB = ge.grad_to_factors(V1, K1, Sigma)
    assert torch.allclose(ge.dual_norm((V1, K1), Sigma), (GA.pow(2).sum((-1, -2)) + GB.pow(2).sum((-1, -2))).sqrt())


@pytest.mark.parametrize("batched_sigma", [False, True])
def test_gradients_match_autograd(batched_sigma):
    Sigma, W, g = _instance(seed=1, batch=4 if batched_sigma else None)
    V, K = _random_theta(g, 4, 5, 4)
    V.requires_grad_(True), K.requires_grad_(True)
    S = sym_sqrt(Sigma)
    A, B = V @ S, S @ K @ S  # independent (square-root) formula for R
    lam = 0.37
    obj = population_loss(V, K, Sigma, W, SIGMA_NOISE) + lam * (A.mT @ A - B.mT @ B).pow(2).sum((-1, -2))
    aV, aK = torch.autograd.grad(obj.sum(), (V, K))
    with torch.no_grad():
        gV, gK = ge.regularized_loss_grad(V, K, Sigma, W, lam)
        lV, lK = ge.loss_grad(V, K, Sigma, W)
        rV, rK = ge.regularizer_grad(V, K, Sigma)
    assert _rel(gV, aV) < 1e-12 and _rel(gK, aK) < 1e-12
    assert torch.allclose(gV, lV + lam * rV) and torch.allclose(gK, lK + lam * rK)
    # identity-regularizer control: gradient of L + lam ||V^T V - K^T K||^2
    obj_I = population_loss(V, K, Sigma, W, SIGMA_NOISE) + lam * ge.identity_regularizer(V, K)
    iV, iK = torch.autograd.grad(obj_I.sum(), (V, K))
    with torch.no_grad():
        gV, gK = ge.regularized_loss_grad(V, K, Sigma, W, lam, reg_Sigma=torch.eye(4, dtype=DTYPE))
    assert _rel(gV, iV) < 1e-12 and _rel(gK, iK) < 1e-12


# ---------------------------------------------------------------------------
# The manifold of minima (A.T1.2)
# ---------------------------------------------------------------------------

def test_manifold_points_are_global_minima():
    Sigma, W, g = _instance(seed=2)
    Q = ge.haar_orthogonal(16, 4, g)
    assert torch.allclose(Q.mT @ Q, torch.eye(4, dtype=DTYPE).expand(16, 4, 4), atol=1e-12)
    V, K = ge.minimizer(Sigma, W, Q)
    L = population_loss(V, K, Sigma, W, SIGMA_NOISE)
    assert torch.allclose(L, torch.full_like(L, optimal_loss(W, SIGMA_NOISE)), rtol=0, atol=1e-12)
    assert ge.regularizer(V, K, Sigma).abs().max() < 1e-12
    gV, gK = ge.regularized_loss_grad(V, K, Sigma, W)
    assert gV.abs().max() < 1e-11 and gK.abs().max() < 1e-11
    assert ge.dist_to_manifold(V, K, Sigma, W).max() < 1e-7
    # negative control: with I in place of Sigma the regularizer does not vanish on Mfold
    assert ge.identity_regularizer(V, K).min() > 1e-3


# ---------------------------------------------------------------------------
# Procrustes projection (A.L1)
# ---------------------------------------------------------------------------

def _lemma1_defects(V, K, Sigma, W, method):
    """(idempotence, off-manifold, asymmetry of Z*^T Z, non-PSD, singular-value) defects per run."""
    Vp, Kp = ge.procrustes_projection(V, K, Sigma, W, method)
    Vpp, Kpp = ge.procrustes_projection(Vp, Kp, Sigma, W, method)
    idem = ge.sigma_norm((Vpp - Vp, Kpp - Kp), Sigma)
    off = (population_loss(Vp, Kp, Sigma, W, 0.0)).abs() + ge.regularizer(Vp, Kp, Sigma).abs()
    Z = torch.cat(ge.to_factors(V, K, Sigma), -2)
    Zs = torch.cat(ge.to_factors(Vp, Kp, Sigma), -2)
    P = Zs.mT @ Z
    asym = (P - P.mT).norm(dim=(-1, -2)) / P.norm(dim=(-1, -2))
    neg = (-torch.linalg.eigvalsh((P + P.mT) / 2).min(-1).values).clamp_min(0)
    _, Lam, _ = ge.target_svd(Sigma, W)
    sv = (torch.linalg.svdvals(Zs) - (2 * Lam).sqrt()).abs().max(-1).values
    return idem, off, asym, neg, sv


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 5), extra=st.integers(0, 2), scale=st.floats(0.05, 2.0))
def test_procrustes_projection_lemma1(seed, d, extra, scale):
    Sigma, W, g = _instance(seed=seed, d=d, r=d + extra)
    V, K = _random_theta(g, 8, d + extra, d, scale)
    for defect in _lemma1_defects(V, K, Sigma, W, "polar"):
        assert defect.max() < 1e-8
    # optimality: no Haar-random point of Mfold is closer
    dist = ge.dist_to_manifold(V, K, Sigma, W)
    Vq, Kq = ge.minimizer(Sigma, W, ge.haar_orthogonal(8, d, g))
    assert (dist <= ge.sigma_norm((V - Vq, K - Kq), Sigma) + 1e-10).all()


def test_projection_negative_controls_fail():
    Sigma, W, g = _instance(seed=3)
    V, K = _random_theta(g, 8, 5, 4)
    idem, off, asym, neg, sv = _lemma1_defects(V, K, Sigma, W, "qr")
    assert off.max() < 1e-10 and asym.min() > 1e-3 and idem.min() > 1e-3  # on Mfold, but not the nearest point
    idem, off, asym, neg, sv = _lemma1_defects(V, K, Sigma, W, "identity")
    assert asym.min() > 1e-3
    idem, off, asym, neg, sv = _lemma1_defects(V, K, Sigma, W, "normalized")
    assert off.min() > 1e-6 and sv.min() > 1e-3  # Q not orthogonal: off Mfold, wrong singular values
    d_polar = ge.dist_to_manifold(V, K, Sigma, W)
    for method in ("qr", "identity"):
        assert (ge.dist_to_manifold(V, K, Sigma, W, method) > d_polar + 1e-6).all()


def test_perturbation_at_given_distance():
    Sigma, W, g = _instance(seed=4)
    _, Lam, _ = ge.target_svd(Sigma, W)
    rho = 0.5 * (2**0.5) * Lam[-1] / Lam[0].sqrt()  # inside the range where the normal offset projects back
    radius = rho * torch.rand(32, generator=g, dtype=DTYPE)
    (V, K), (Vs, Ks) = ge.perturb_from_manifold(Sigma, W, radius, 32, g)
    assert torch.allclose(ge.dist_to_manifold(V, K, Sigma, W), radius, rtol=1e-9)
    Vp, Kp = ge.procrustes_projection(V, K, Sigma, W)
    assert ge.sigma_norm((Vp - Vs, Kp - Ks), Sigma).max() < 1e-9
    (V, K), _ = ge.perturb_from_manifold(Sigma, W, 0.3, 32, g, direction="isotropic")
    d = ge.dist_to_manifold(V, K, Sigma, W)
    assert (d <= 0.3 + 1e-12).all() and (d < 0.3 - 1e-6).any()


def test_batched_sigma_equals_per_run():
    Sigma, W, g = _instance(seed=5, batch=3)
    V, K = _random_theta(g, 3, 5, 4)
    batched = ge.dist_to_manifold(V, K, Sigma, W)
    Vp, Kp = ge.procrustes_projection(V, K, Sigma, W)
    for b in range(3):
        one = ge.dist_to_manifold(V[b:b + 1], K[b:b + 1], Sigma[b], W[b])
        assert torch.allclose(batched[b:b + 1], one, rtol=1e-12)
        Vb, Kb = ge.procrustes_projection(V[b:b + 1], K[b:b + 1], Sigma[b], W[b])
        assert torch.allclose(Vp[b], Vb[0], atol=1e-12) and torch.allclose(Kp[b], Kb[0], atol=1e-12)


def test_nonfinite_runs_give_nan_not_errors():
    Sigma, W, g = _instance(seed=6)
    V, K = _random_theta(g, 3, 5, 4)
    V[1, 0, 0] = float("nan")
    d = ge.dist_to_manifold(V, K, Sigma, W)
    assert torch.isnan(d[1]) and torch.isfinite(d[[0, 2]]).all()


# ---------------------------------------------------------------------------
# Points near the manifold (moved here from A.T1.3: normal projection, given points, adversarial search)
# ---------------------------------------------------------------------------

def _manifold_point_factors(Sigma, W, Q):
    U, Lam, Vs = ge.target_svd(Sigma, W)
    return torch.cat(ge.manifold_factors(U, Lam, Vs, Q), -2), Lam


def test_normal_projection_is_an_orthogonal_projection_onto_the_normal_space():
    Sigma, W, g = _instance(seed=11)
    Q = ge.haar_orthogonal(4, 4, g)
    Zs, Lam = _manifold_point_factors(Sigma, W, Q)
    H = torch.randn(4, 9, 4, generator=g, dtype=DTYPE)
    N = ge.normal_projection(H, Zs, Lam, Q)
    X = Zs.mT @ N
    assert torch.allclose(X, X.mT, atol=1e-12)  # Z*^T N symmetric: N is normal
    assert torch.allclose(ge.normal_projection(N, Zs, Lam, Q), N, atol=1e-12)  # idempotent
    Om = torch.randn(4, 4, 4, generator=g, dtype=DTYPE)
    T = Zs @ (Om - Om.mT)  # a tangent direction
    assert ((N * T).sum((-1, -2)).abs() < 1e-10).all()  # orthogonal to it
    assert ge.normal_projection(T, Zs, Lam, Q).abs().max() < 1e-12


def test_point_near_manifold_with_given_rotation_and_direction():
    Sigma, W, g = _instance(seed=12)
    Q = ge.haar_orthogonal(3, 4, g)
    Delta = torch.randn(3, 9, 4, generator=g, dtype=DTYPE)
    (V, K), (Vs, Ks) = ge.point_near_manifold(Sigma, W, 0.05, Q, Delta, "normal")
    assert torch.allclose(ge.dist_to_manifold(V, K, Sigma, W), torch.full((3,), 0.05, dtype=DTYPE), rtol=1e-9)
    Vp, Kp = ge.procrustes_projection(V, K, Sigma, W)
    assert ge.sigma_norm((Vp - Vs, Kp - Ks), Sigma).max() < 1e-9
    # a zero direction (a shrunk probe instance) becomes the radial one, normal to Mfold: dist = radius
    (V0, K0), _ = ge.point_near_manifold(Sigma, W, 0.05, Q, torch.zeros_like(Delta), "isotropic")
    assert torch.allclose(ge.dist_to_manifold(V0, K0, Sigma, W), torch.full((3,), 0.05, dtype=DTYPE), rtol=1e-9)
    # perturb_from_manifold is the same construction with Q and Delta drawn from the generator
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    (Va, Ka), _ = ge.perturb_from_manifold(Sigma, W, 0.1, 2, g1, "normal")
    Qd = ge.haar_orthogonal(2, 4, g2)
    (Vb, Kb), _ = ge.point_near_manifold(Sigma, W, 0.1, Qd, torch.randn(2, 9, 4, generator=g2, dtype=DTYPE), "normal")
    assert torch.equal(Va, Vb) and torch.equal(Ka, Kb)
    with pytest.raises(ValueError):
        ge.point_near_manifold(Sigma, W, 0.1, Q, Delta, "sideways")


@pytest.mark.parametrize("lam", [0.25, 0.6])
def test_factor_gradient_is_the_gradient_of_the_factor_loss(lam):
    Sigma, W, g = _instance(seed=13)
    U, Lam, Vs = ge.target_svd(Sigma, W)
    M = (U * Lam) @ Vs.mT
    Z = torch.randn(2, 9, 4, generator=g, dtype=DTYPE, requires_grad=True)
    (auto,) = torch.autograd.grad(ge.factor_loss(Z, M, 5, lam).sum(), Z)
    assert torch.allclose(ge.factor_grad(Z.detach(), M, 5, lam), auto, atol=1e-10)
    # and the factor loss is L_lambda - L* of the theta-coordinate code
    V, K = ge.from_factors(Z.detach()[:, :5], Z.detach()[:, 5:], Sigma)
    assert torch.allclose(ge.factor_loss(Z.detach(), M, 5, lam), ge.regularized_loss(V, K, Sigma, W, 0.0, lam),
                          rtol=1e-10)


def test_sample_near_manifold_and_the_adversarial_search():
    Sigma, W, g = _instance(seed=14, d=3, r=4)
    _, Lam, _ = ge.target_svd(Sigma, W)
    rho = 0.5 * float(Lam[-1]) ** 0.5
    V, K, kinds = ge.sample_near_manifold(Sigma, W, 32, g, "alpha", 60, rho)
    assert kinds.count("normal") == kinds.count("isotropic") == 32 and kinds.count("adversarial") == 4
    dist = ge.dist_to_manifold(V, K, Sigma, W)
    assert (dist <= rho * (1 + 1e-9)).all()
    adv = torch.tensor([k == "adversarial" for k in kinds])
    assert torch.allclose(dist[adv], rho * torch.tensor([0.25, 0.5, 0.75, 1.0], dtype=DTYPE), rtol=1e-6)
    # the search for the worst one-point strong convexity beats random normal directions at the same radius
    G = ge.regularized_loss_grad(V, K, Sigma, W)
    P = ge.procrustes_projection(V, K, Sigma, W)
    ratio = ge.euclidean_pairing(G, (V - P[0], K - P[1])) / dist**2
    normal = torch.tensor([k == "normal" for k in kinds])
    assert ratio[adv].min() < ratio[normal].min()
    with pytest.raises(ValueError):
        ge.adversarial_points(Sigma, W, torch.ones(4, dtype=DTYPE), g, "gamma", 1)


def test_hessian_on_the_normal_space_is_psd_and_flat_along_the_tangent():
    Sigma, W, g = _instance(seed=15, d=2, r=3)
    ev, Lam, tangent = ge.hessian_on_normal_space(Sigma, W, g)
    assert ev.shape == (2 * 5 - 1,) and (ev > 0).all()  # (r + d) d minus d(d-1)/2 tangent directions
    assert tangent < 1e-10 * float(Lam[0])


def test_instance_from_target():
    Sigma, W, g = _instance(seed=16)
    M = W @ sym_sqrt(Sigma)
    S2, W2 = ge.instance_from_target(Sigma, M)
    assert torch.equal(S2, Sigma) and torch.allclose(W2, W, atol=1e-12)


def test_euclidean_norm_is_the_theta_frobenius_norm_and_differs_from_the_dual_norm():
    Sigma, W, g = _instance(seed=17, d=3, r=4)
    V, K = _random_theta(g, 5, 4, 3)
    G = ge.regularized_loss_grad(V, K, Sigma, W)
    assert torch.allclose(ge.euclidean_norm(G), (G[0].pow(2).sum((-1, -2)) + G[1].pow(2).sum((-1, -2))).sqrt())
    assert torch.allclose(ge.euclidean_norm(G), ge.dual_norm(G, torch.eye(3, dtype=DTYPE)))  # equal only when Σ = I
    assert not torch.allclose(ge.euclidean_norm(G), ge.dual_norm(G, Sigma))


def test_adversarial_search_uses_the_given_regularization_weight():
    """With lambda = 1 the search for max f_1/|H|^2 finds the [A* v v^T; -B* v v^T] direction, whose ratio tends to
    8 sigma_1 (Hessian 16 lambda sigma_1), far above the lambda = 1/4 maximum 2 sigma_1."""
    Sigma, W, g = _instance(seed=18, d=3, r=4)
    _, Lam, _ = ge.target_svd(Sigma, W)
    radius = 1e-3 * float(Lam[0]) ** 0.5 * torch.ones(4, dtype=DTYPE)
    out = {}
    for lam in (ge.LAMBDA, 1.0):
        V, K = ge.adversarial_points(Sigma, W, radius, g, "loss", 150, lam)
        dist = ge.dist_to_manifold(V, K, Sigma, W)
        out[lam] = float((ge.regularized_loss(V, K, Sigma, W, 0.0, lam) / dist**2).max() / Lam[0])
    assert out[ge.LAMBDA] == pytest.approx(2.0, rel=1e-2) and out[1.0] == pytest.approx(8.0, rel=1e-2)
