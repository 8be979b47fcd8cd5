"""Implementation checks (``Check.evidence``): a check that holds by algebra once the code is right is labelled so,
the label reaches the record, the verdict's summary counts it apart from the paper's evidence, a claim whose passing
checks are all implementation checks says so in its headline, and such a check still fails its claim."""
from __future__ import annotations

import pytest

from theorems.claim import Check, Claim, Context, Control, Outcome
from verify import readme, registry, report, runner

REASON = "a triangle inequality"


def _check(ctx, ok: bool = True) -> Outcome:
    return Outcome("pass" if ok else "fail", "ok" if ok else "broken", headline="the number")


def _claim(*checks: Check) -> Claim:
    controls = tuple(Control(f"k{i}", c.name, "wrong", {"ok": False}) for i, c in enumerate(checks))
    return Claim(id="Z.T9", title="t", statement="x", fidelity="exact", fidelity_note="n", checks=checks,
                 controls=controls, module=__name__)


@pytest.mark.parametrize("kw", [dict(evidence="implementation"), dict(evidence="implementation", by_algebra="  "),
                                dict(evidence="implementation", by_algebra="two\nlines"),
                                dict(by_algebra=REASON), dict(evidence="code")])
def test_an_implementation_check_without_its_one_line_reason_is_refused(kw):
    with pytest.raises(ValueError):
        Check("c", "numeric", "d", _check, **kw)


def test_the_label_reaches_the_record_and_the_summary():
    rec = runner.run_claim(_claim(Check("paper", "numeric", "d", _check),
                                  Check("impl", "numeric", "d", _check, evidence="implementation",
                                        by_algebra=REASON)), Context())
    by_name = {c["name"]: c for c in rec["checks"]}
    assert by_name["impl"]["evidence"] == "implementation" and by_name["impl"]["by_algebra"] == REASON
    assert by_name["paper"]["evidence"] == "paper" and by_name["paper"]["by_algebra"] == ""
    assert rec["verdict"] == "verified"
    assert rec["reason"].startswith("1 check for the paper, 1 implementation check passed")
    assert not report.implementation_level(rec) and not report.headline(rec).startswith("[")
    assert "(1 paper + 1 impl.)" in readme._evidence(rec)


def test_a_claim_whose_passing_checks_are_all_implementation_checks_says_so():
    rec = runner.run_claim(_claim(Check("impl", "numeric", "d", _check, evidence="implementation",
                                        by_algebra=REASON)), Context())
    assert rec["reason"].startswith("0 checks for the paper, 1 implementation check passed")
    assert report.implementation_level(rec)
    assert report.headline(rec) == f"[{report.IMPLEMENTATION_LEVEL}] the number"


def test_a_failing_implementation_check_still_fails_the_claim():
    rec = runner.run_claim(_claim(Check("impl", "numeric", "d", _check, params={"ok": False},
                                        evidence="implementation", by_algebra=REASON)), Context())
    assert rec["verdict"] == "violated"


def test_the_audits_checks_are_labelled():
    """Audit 2.1 item 2: the checks that hold by algebra once the code is right (those that are whole checks)."""
    labelled = {(c.id, k.name) for c in registry.all_claims() for k in c.checks if k.evidence == "implementation"}
    assert {("A.L4", "population-oracle"), ("A.L4", "monte-carlo-oracle"), ("B.L4", "trajectories-and-samples"),
            ("B.L5", "bounds")} | {(i, "poincare-inequality") for i in ("A.L10", "A.L14", "A.L19", "A.L23")} <= labelled


#: audit 2.1 item 2's mixed checks, split: (claim, the paper check keeping the evidence, the implementation check)
SPLIT = (("B.L10", "norm-exponents", "schedule-upper-bounds"),   # lower bounds | the triangle-inequality upper bounds
         ("B.T4", "margin-fraction", "fraction-at-most-1"),      # q_t >= 1/2, gap closing | q_t <= 1
         ("B.L12", "attention-separable", "above-lemma-12-bound"))  # margin > 0, bound > 0 | margin >= bound


@pytest.mark.parametrize("claim_id, paper, implementation", SPLIT)
def test_the_audits_mixed_checks_are_split_each_half_with_its_own_control(claim_id, paper, implementation):
    claim = registry.select(claim_id)[0]
    assert claim.check(paper).evidence == "paper" and claim.check(implementation).evidence == "implementation"
    assert claim.check(implementation).stochastic is False  # exact decisions only: no alpha taken from the paper half
    targets = {k.target for k in claim.controls}
    assert {paper, implementation} <= targets
