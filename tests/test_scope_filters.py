"""Scope filters (rules of ours that drop draws, runs or instances) are assumptions of their claims: each is listed
among the claim's assumptions with its rule, and the record and the report show what it removed in the run."""
import pytest

from theorems.claim import Check, Claim, Context, Control, ScopeFilter
from theorems.evidence import Evidence, ScopeTally
from verify import registry, report, runner

FILTER = ScopeFilter("short transient", "draws kept only when τ ≤ N/100", why="the rates are asymptotic")
BY_CONSTRUCTION = ScopeFilter("fixed scale", "σ₁ = 0.1", why="a derived term needs it", unit="")


def _applies_filter(ctx, bad: bool = False):
    ev = Evidence(ctx)
    ev.scope(FILTER, 3, 10)
    ev.scope(FILTER, 1, 10)  # a sampler called twice in one check: added up
    ev.exact("x", not bad, "x")
    return ev.outcome()


def _fixture_tally():
    t = ScopeTally(source="fixture")
    t.scope(FILTER, 2, 20)
    return t


def _only_fixture(ctx, tally: ScopeTally, bad: bool = False):
    ev = Evidence(ctx)
    ev.scopes(tally)
    ev.exact("x", not bad, "x")
    return ev.outcome()


TOY = Claim("Z.S1", "toy", "x=1", "exact", "n", assumptions=(FILTER, BY_CONSTRUCTION),
            checks=(Check("a", "numeric", "d", _applies_filter),
                    Check("b", "numeric", "d", _only_fixture, {"tally": _fixture_tally()}),
                    Check("c", "numeric", "d", _only_fixture, {"tally": _fixture_tally()})),
            controls=(Control("k", "a", "d", {"bad": True}), Control("k2", "b", "d", {"bad": True}),
                      Control("k3", "c", "d", {"bad": True})),
            module=__name__)


def test_removed_fractions_reach_the_record_and_the_report():
    rec = runner.run_claim(TOY, Context())
    assert rec["verdict"] == "verified"
    f, c = rec["claim"]["assumptions"]
    # a: 4 of 20; the fixture's 2 of 20, read by b and c, counted once; the controls are not counted
    assert (f["scope"], f["removed"], f["total"], f["checks"]) == (True, 6, 40, ["a", "b", "c"])
    assert f["description"] == FILTER.description and f["why"] == FILTER.why
    assert c["unit"] == "" and c["total"] == 0
    html = report.render([rec], Context(), "verify report")
    assert "ours: draws kept only when τ ≤ N/100 — removed 6 of 40 draws (15.0 %) in this run" in html
    assert "Why: the rates are asymptotic" in html
    assert "a restriction by construction" in html
    assert "Checked within our scope filters" in html


def test_a_scope_filter_without_its_rule_or_reason_is_refused_with_one_line():
    for kw in (dict(description="", why="w"), dict(description="r", why=" ")):
        with pytest.raises(ValueError) as e:
            ScopeFilter("f", **kw)
        assert "\n" not in str(e.value) and "rule" in str(e.value)


def test_a_claim_module_with_a_scope_filter_without_rule_text_is_refused_at_import(capsys, tmp_path, monkeypatch):
    from test_verify import _list_with_extra_claim_module

    src = "from theorems.claim import ScopeFilter\n\nF = ScopeFilter('f', '', why='w')\n"
    code, err = _list_with_extra_claim_module(capsys, tmp_path, monkeypatch, "zz_no_rule", src)
    assert code == 2 and err.count("\n") == 1 and "scope filter 'f'" in err


SCOPED = [c for c in registry.all_claims()
          if any(isinstance(a, ScopeFilter) for a in c.assumptions) and not c.not_checked]


def test_the_known_filters_are_declared():
    """The rules the fidelity audit found outside the claims' assumptions (section 2.4)."""
    declared = {c.id: {a.name for a in c.assumptions if isinstance(a, ScopeFilter)} for c in SCOPED}
    for cid in ("A.T1.1", "A.L3", "A.L5", "A.L6", "A.L4", "A.T2", "A.T3", "A.T4", "A.T5", "B.S33", "B.A4", "B.L7"):
        assert declared.get(cid), cid
    assert len(declared["A.T2"]) == 3  # σ_d/σ₁, the rate check's gap, the diverged floor replicas


#: the claims with a filter that drops something countable (a restriction by construction has nothing to count)
COUNTED = [c for c in SCOPED if any(isinstance(a, ScopeFilter) and a.unit for a in c.assumptions)]


def _in_claims_group(claims):
    """In tests/test_claims.py's xdist group, so that its cached quick record is reused under ``--dist loadgroup``;
    in the slow tier with that claim's quick tests where they are there."""
    from test_claims import claim_marks

    return [pytest.param(c, id=c.id, marks=claim_marks(c, "quick")) for c in claims]


@pytest.mark.parametrize("claim", _in_claims_group(COUNTED))
def test_each_declared_filter_is_reported_by_a_check_in_a_quick_record(claim):
    """The quick record at the test seed (tests/test_claims.py's, computed once per process)."""
    from test_claims import claim_record

    rec = claim_record(claim.id, "quick")
    declared = {a.name for a in claim.assumptions if isinstance(a, ScopeFilter) and a.unit}
    reported = {a["name"] for a in rec["claim"]["assumptions"] if a.get("scope") and a["unit"]}
    assert declared and reported == declared, f"{claim.id}: the record lists {reported}, the claim declares {declared}"
    for a in rec["claim"]["assumptions"]:
        if a.get("scope") and a["unit"]:
            assert a["checks"] and a["total"] > 0, f"{claim.id}: no check reported the scope filter {a['name']!r}"
            assert 0 <= a["removed"] <= a["total"]
