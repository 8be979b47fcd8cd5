"""Every registered claim's evidence, parametrized from the registry.

Default run: the quick tier.  ``pytest -m slow``: the standard tier.
Each claim is run once per budget through the real runner (so the verdict rules are
exercised too); then each check must have passed and each negative control must
have been rejected (come back ``fail``).

With ``VERIFY_STORE_RESULTS=DIR`` the quick-tier records are also written to ``DIR``,
so a following ``verify report --results DIR`` reuses them instead of re-running
(``.ci/run`` does this).  Tests of one claim share an xdist group, so under
``pytest -n 2 --dist loadgroup`` each claim still runs once.
"""
import functools
import os

import pytest

from theorems.claim import Context
from verify import registry, results, runner

CLAIMS = [c for c in registry.all_claims() if not c.not_checked]


def _params(item_of, marks=()):
    return [pytest.param(c, x, id=f"{c.id}:{label}", marks=[pytest.mark.xdist_group(c.id), *marks])
            for c in CLAIMS for x, label in item_of(c)]


CHECKS = _params(lambda c: [(ch.name, f"{ch.kind}:{ch.name}") for ch in c.checks])
CONTROLS = _params(lambda c: [(k.name, f"control:{k.name}") for k in c.controls])


@functools.cache
def claim_record(claim_id: str, budget: str) -> dict:
    rec = runner.run_claim(registry.get(claim_id), Context(seed=0, budget=budget))
    store = os.environ.get("VERIFY_STORE_RESULTS")
    if store and budget == "quick":
        results.write_record(store, rec)
    return rec


def _assert_passes(claim, name, budget):
    c = next(c for c in claim_record(claim.id, budget)["checks"] if c["name"] == name)
    assert c["status"] == "pass", f"{claim.id} {name}: {c['status']}: {c['summary']}"


def _assert_rejected(claim, name, budget):
    k = next(k for k in claim_record(claim.id, budget)["controls"] if k["name"] == name)
    assert k["status"] == "fail", (f"{claim.id}: negative control {name!r} was not rejected by "
                                   f"{k['target']!r}: {k['status']}: {k['summary']}")


@pytest.mark.parametrize("claim, name", CHECKS)
def test_check_quick(claim, name):
    _assert_passes(claim, name, "quick")


@pytest.mark.parametrize("claim, name", CONTROLS)
def test_control_rejected_quick(claim, name):
    _assert_rejected(claim, name, "quick")


@pytest.mark.slow
@pytest.mark.parametrize("claim, name", CHECKS)
def test_check_standard(claim, name):
    _assert_passes(claim, name, "standard")


@pytest.mark.slow
@pytest.mark.parametrize("claim, name", CONTROLS)
def test_control_rejected_standard(claim, name):
    _assert_rejected(claim, name, "standard")


def test_every_numeric_check_has_a_control():
    for c in CLAIMS:
        for ch in c.checks:
            if ch.kind == "numeric":
                assert any(k.target == ch.name for k in c.controls), f"{c.id}:{ch.name} has no control"


def test_every_claim_has_fidelity_and_statement():
    for c in registry.all_claims():
        assert c.fidelity in ("exact", "reconstructed", "qualitative")
        assert c.fidelity_note and c.statement
        if c.not_checked is not None:
            assert c.not_checked.strip(), f"{c.id}: a not-checked claim must say why"
