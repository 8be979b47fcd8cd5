"""A.L4's oracle control on the check's own draw moved by the claim's gauge (fresh seed 207 drew a Σ on which the
one-sided mutant nearly is Algorithm 1)."""
import torch

from theorems.claim import Context
from theorems.fixture import resolve
from theorems.paper_a import l4_empirical_conditions as l4
from theorems.paper_a.init_algorithm import ONE_SIDED


def test_the_companion_is_the_instance_in_the_gauge_with_a_top_eigenvalue_of_at_least_two():
    S = torch.diag(torch.tensor([0.51, 0.65, 1.055], dtype=torch.float64))
    W = torch.randn(4, 3, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    S2, W2 = l4.companion_instance(S, W)
    assert abs(float(torch.linalg.eigvalsh(S2)[-1]) - l4.COMPANION_MIN_TOP_EIG) < 1e-12
    assert torch.allclose(W2 @ S2.sqrt(), W @ S.sqrt())                      # the same M* = W* Σ^{1/2}
    S3, W3 = l4.companion_instance(2 * S2, W2)                              # already in the gauge: unchanged
    assert torch.equal(S3, 2 * S2) and torch.equal(W3, W2)


def test_the_check_does_not_see_the_gauge_and_the_mutant_is_rejected_in_it():
    ctx = Context(seed=0, budget="quick", figures=False)
    S, W = l4.conditioned_instances(ctx.generator("test", "instance"), 1)
    c = 3.0  # a gauge move with c != 1 (the seed-0 draw of the check is already at λ_max(Σ) >= 2)
    own = l4.samples_of(ctx, ctx.generator("test", "draws"), S[0], W[0])
    moved = l4.samples_of(ctx, ctx.generator("test", "draws"), c * S[0], W[0] / c**0.5)
    a, b = l4.check_monte_carlo_oracle(ctx, own), l4.check_monte_carlo_oracle(ctx, moved)
    assert a.status == b.status
    for x, y in zip(a.measurements, b.measurements):                        # the same lemma, up to rounding
        assert x.name == y.name and abs(x.value - y.value) <= 1e-6 * max(1.0, abs(x.value)), (x.name, x.value, y.value)
    companion = resolve(l4.companion_samples, ctx)
    assert float(torch.linalg.eigvalsh(companion["Sigma"])[-1]) >= l4.COMPANION_MIN_TOP_EIG - 1e-12
    assert l4.check_monte_carlo_oracle(ctx, companion, preconditioner=ONE_SIDED).status == "fail"
