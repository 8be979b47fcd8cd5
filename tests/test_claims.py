"""Every registered claim's evidence, parametrized from the registry.

Default run: the quick tier.  ``pytest -m slow``: the standard tier.
Each check must pass; each negative control must be rejected (come back ``fail``).
"""
import pytest

from theorems.claim import Context
from verify import registry

CLAIMS = [c for c in registry.all_claims() if not c.not_checked]
CHECKS = [pytest.param(c, ch, id=f"{c.id}:{ch.kind}:{ch.name}") for c in CLAIMS for ch in c.checks]
CONTROLS = [pytest.param(c, k, id=f"{c.id}:control:{k.name}") for c in CLAIMS for k in c.controls]


def _assert_passes(claim, check, budget):
    out = check.run(Context(seed=0, budget=budget))
    assert out.status == "pass", f"{claim.id} {check.name}: {out.status}: {out.summary}"


def _assert_rejected(claim, control, budget):
    out = control.run(Context(seed=0, budget=budget))
    assert out.status == "fail", (f"{claim.id}: negative control {control.name!r} was not rejected by "
                                  f"{control.target!r}: {out.status}: {out.summary}")


@pytest.mark.parametrize("claim, check", CHECKS)
def test_check_quick(claim, check):
    _assert_passes(claim, check, "quick")


@pytest.mark.parametrize("claim, control", CONTROLS)
def test_control_rejected_quick(claim, control):
    _assert_rejected(claim, control, "quick")


@pytest.mark.slow
@pytest.mark.parametrize("claim, check", CHECKS)
def test_check_standard(claim, check):
    _assert_passes(claim, check, "standard")


@pytest.mark.slow
@pytest.mark.parametrize("claim, control", CONTROLS)
def test_control_rejected_standard(claim, control):
    _assert_rejected(claim, control, "standard")


def test_every_numeric_check_has_a_control():
    for c in CLAIMS:
        for ch in c.checks:
            if ch.kind == "numeric":
                assert any(k.target == ch.name for k in c.controls), f"{c.id}:{ch.name} has no control"


def test_every_claim_has_fidelity_and_statement():
    for c in registry.all_claims():
        assert c.fidelity in ("exact", "reconstructed", "qualitative")
        assert c.fidelity_note and c.statement
