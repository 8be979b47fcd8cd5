"""Every checked lemma and theorem (figures aside) is checked three ways: a symbolic derivation, numeric evidence for
the paper (not only implementation checks), and a hypothesis probe of its assumptions, or it says in one line why it
lacks one (``Claim.without``), and the report and the claims table show the gap (``verify.report.missing_evidence``).

``GAPS`` lists the kinds each claim still lacks without a stated reason: work to do, listed so the test is green and
the debt visible.  The test is strict: a claim that gains a kind fails until it leaves the list."""
import pytest

from verify import registry

KINDS = ("symbolic", "numeric", "probe")
GAPS: dict[str, set[str]] = {}
CLAIMS = [c for c in registry.all_claims() if not c.not_checked and ".Fig" not in c.id]


def _missing(claim) -> set[str]:
    return {k for k in KINDS if k not in claim.evidence_kinds() and k not in dict(claim.without)}


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_three_kinds_of_evidence_or_a_reason(claim):
    missing = _missing(claim)
    if claim.id in GAPS:
        assert missing, f"{claim.id} now has every kind (or a reason): take it off GAPS"
        assert missing <= GAPS[claim.id], f"{claim.id} lost {sorted(missing - GAPS[claim.id])}"
        pytest.xfail(f"{claim.id} still lacks {', '.join(sorted(missing))} (listed in GAPS)")
    assert not missing, f"{claim.id} lacks {', '.join(sorted(missing))}: add it, or say why in Claim.without"


def test_a_reason_for_a_missing_kind_is_one_line_and_only_for_a_missing_kind():
    from theorems.claim import Check, Claim, Outcome

    def sym():
        return Outcome("pass", "")

    with pytest.raises(ValueError, match="has symbolic evidence"):
        Claim("Z.W1", "t", "x", "exact", "n", checks=(Check("s", "symbolic", "d", sym),),
              without={"symbolic": "why"})
    with pytest.raises(ValueError, match="one line"):
        Claim("Z.W2", "t", "x", "exact", "n", checks=(Check("s", "symbolic", "d", sym),), without={"probe": ""})
    ok = Claim("Z.W3", "t", "x", "exact", "n", checks=(Check("s", "symbolic", "d", sym),),
               without={"probe": "a reason", "numeric": "another"})
    assert dict(ok.without) == {"probe": "a reason", "numeric": "another"} and hash(ok)


def test_the_report_and_the_claims_table_show_a_missing_kind_with_its_reason():
    from verify import readme, report

    rec = {"verdict": "verified", "claim": {"id": "Z.L1", "without": {"probe": "nothing to cross"}},
           "checks": [{"name": "s", "kind": "symbolic", "status": "pass"},
                      {"name": "n", "kind": "numeric", "status": "pass", "evidence": "implementation"}],
           "controls": []}
    assert report.missing_evidence(rec) == {"numeric": "no reason given", "probe": "nothing to cross"}
    cell = readme._evidence(rec)
    assert "no probe: nothing to cross" in cell and "numeric (impl. only)" in cell
