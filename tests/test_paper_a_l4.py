"""A.L4's oracle control on its companion instance (fresh seed 207 drew a Σ on which the mutant nearly is Algorithm 1)."""
import torch

from theorems.claim import Context
from theorems.fixture import resolve
from theorems.paper_a import l4_empirical_conditions as l4
from theorems.paper_a.init_algorithm import ONE_SIDED


def test_the_companion_instance_has_a_top_eigenvalue_of_at_least_two():
    S, _ = l4.companion_instance(torch.Generator().manual_seed(5))
    assert float(torch.linalg.eigvalsh(S[0])[-1]) >= l4.COMPANION_MIN_TOP_EIG


def test_seed_207_the_mutant_is_rejected_on_the_companion_and_the_check_still_passes():
    ctx = Context(seed=207, budget="quick", figures=False)
    drawn = resolve(l4.drawn_samples, ctx)
    assert float(torch.linalg.eigvalsh(drawn["Sigma"])[-1]) < 1.1  # the drawn Σ: eigenvalues 0.51, 0.65, 1.055
    companion = resolve(l4.companion_samples, ctx)
    assert l4.check_monte_carlo_oracle(ctx, companion, preconditioner=ONE_SIDED).status == "fail"
    assert l4.check_monte_carlo_oracle(ctx, drawn).status == "pass"
    # the claim's own wiring: the control runs the check on the companion fixture
    claim = l4.CLAIM
    control = claim.control("one-sided preconditioner (oracle)")
    assert claim.check(control.target).run(ctx, **control.overrides).status == "fail"
