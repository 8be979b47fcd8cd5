"""The reviewed verdicts (derived, or a finding in a claim's notes file); verify readme: the generated claims table
(docs/claims.md)."""
import functools

import pytest

from theorems.claim import Context
from verify import expectations, readme, record, registry, runner


def test_every_registered_claim_has_a_reviewed_expectation_and_every_expectation_a_claim():
    """The expectation is derived (not checked, or verified) unless a finding applies; every finding and measured
    seed dependence names a registered claim and sits in the notes file beside that claim's module."""
    data = expectations.load()
    claims = {c.id: c for c in registry.all_claims()}
    assert not data["claims"]  # no table restates the code
    assert set(data["findings"]) | set(data["unstable"]) <= set(claims)
    for cid, f in data["where"].items():
        assert f.name == claims[cid].module.rsplit(".", 1)[1] + ".notes.toml", (cid, f)
    for cid, c in claims.items():
        want = "not checked" if c.not_checked else "verified"
        assert expectations.derived(cid) == want
    with pytest.raises(KeyError):
        expectations.derived("Z.L99")


def test_a_finding_lists_the_controls_it_expects_unrejected_and_they_are_the_claims():
    """Only the controls a finding lists may go unrejected at a fresh seed (tests/test_claims.py); a control the
    diagnosis merely mentions (as rejected, say) must still be rejected."""
    for cid, entries in expectations.load()["findings"].items():
        names = {k.name for k in registry.get(cid).controls}
        for f in entries:
            assert set(f.get("controls_not_rejected", [])) <= names, cid
    f = expectations.expected("B.Fig7", "quick", 0)
    assert f.controls_not_rejected == ("SNGD normalized per tensor", "SGD with weight decay 5e-4")
    assert expectations.expected("A.T1.1", "quick", 0).controls_not_rejected == ()


def test_a_finding_applies_only_where_it_was_diagnosed(tmp_path):
    f = tmp_path / "e.toml"
    f.write_text('[claims]\n"X.1" = "verified"\n[findings."X.1"]\nverdict = "violated"\nbudget = "standard"\n'
                 'seeds = [1]\ndiagnosis = "the probe found a counterexample: the paper\'s constant is too small"\n')
    assert expectations.expected("X.1", "standard", 1, f).verdict == "violated"
    assert expectations.expected("X.1", "standard", 0, f).verdict == "verified"
    assert expectations.expected("X.1", "quick", 1, f).verdict == "verified"
    with pytest.raises(KeyError, match="not a registered claim"):
        expectations.expected("X.2", "quick", 0, f)


def test_a_claim_may_have_findings_at_several_budgets(tmp_path):
    f = tmp_path / "e.toml"
    f.write_text('[claims]\n"X.1" = "verified"\n'
                 '[[findings."X.1"]]\nverdict = "violated"\nbudget = "quick"\nseeds = [4]\ndiagnosis = "a"\n'
                 '[[findings."X.1"]]\nverdict = "violated"\nbudget = "standard"\nseeds = [3]\ndiagnosis = "b"\n')
    assert expectations.expected("X.1", "quick", 4, f).diagnosis == "a"
    assert expectations.expected("X.1", "standard", 3, f).diagnosis == "b"
    assert expectations.expected("X.1", "standard", 4, f).verdict == "verified"


def test_a_claim_measured_to_depend_on_the_seed_says_so_where_no_finding_applies(tmp_path):
    f = tmp_path / "e.toml"
    f.write_text('[claims]\n"X.1" = "verified"\n'
                 '[[findings."X.1"]]\nverdict = "violated"\nbudget = "quick"\nseeds = [4]\ndiagnosis = "a"\n'
                 '[[unstable."X.1"]]\nbudget = "quick"\nmeasured = "violated at 1 of 20 seeds"\noutcomes = ["violated"]\n'
                 'diagnosis = "b"\n')
    assert expectations.expected("X.1", "quick", 4, f).verdict == "violated"  # the seed's own finding first
    fresh = expectations.expected("X.1", "quick", 777, f)
    assert (fresh.verdict, fresh.unstable, fresh.diagnosis) == ("verified", "violated at 1 of 20 seeds", "b")
    assert fresh.absorbs("violated") and not fresh.absorbs("inconclusive")  # only the outcome it measured
    assert expectations.expected("X.1", "standard", 777, f).unstable == ""
    assert set(expectations.load()["unstable"]) <= {c.id for c in registry.all_claims()}


def test_a_finding_measured_to_vary_with_the_seed_carries_its_rate(tmp_path):
    # an estimate on its band's edge: undecided at most seeds, just outside the band at some
    f = tmp_path / "e.toml"
    f.write_text('[claims]\n"X.1" = "verified"\n'
                 '[[findings."X.1"]]\nverdict = "inconclusive"\ndiagnosis = "on the edge"\n'
                 '[[unstable."X.1"]]\nbudget = "standard"\nmeasured = "violated at 1 of 5 seeds"\n'
                 'outcomes = ["violated"]\ndiagnosis = "b"\n')
    at_standard = expectations.expected("X.1", "standard", 9, f)
    assert (at_standard.verdict, at_standard.diagnosis, at_standard.unstable) == \
        ("inconclusive", "on the edge", "violated at 1 of 5 seeds")
    assert expectations.expected("X.1", "quick", 9, f).unstable == ""


def test_an_undecided_finding_may_be_recorded_with_its_diagnosis(tmp_path):
    # position, not power: an estimate on the edge of its band is a finding, never a claim's default expectation
    f = tmp_path / "e.toml"
    f.write_text('[claims]\n"X.1" = "verified"\n'
                 '[[findings."X.1"]]\nverdict = "inconclusive"\ndiagnosis = "the estimate sits on the band\'s edge"\n')
    assert expectations.expected("X.1", "quick", 3, f).verdict == "inconclusive"


@pytest.mark.parametrize("text, match", [
    ('[claims]\n"X.1" = "inconclusive"\n', "not one of"),          # inconclusive is work to do, never expected
    ('[claims]\n"X.1" = "verified"\n[findings."X.1"]\nverdict = "violated"\n', "diagnosis"),
    ('[claims\n', "Expected"),
    ('[claims]\n"X.1" = "verified"\n[unstable."X.1"]\nmeasured = "1 of 20"\n', "diagnosis"),
    ('[claims]\n"X.1" = "verified"\n[unstable."X.1"]\nmeasured = "1 of 20"\ndiagnosis = "d"\n', "outcomes"),
    ('[claims]\n"X.1" = "verified"\n[findings."X.1"]\nverdict = "violated"\ndiagnosis = "d"\n'
     'controls_not_rejected = ["a control the diagnosis never names"]\n', "controls_not_rejected"),
])
def test_bad_expectation_files_are_refused_with_one_line(tmp_path, text, match):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ValueError, match=match):
        expectations.load(f)


def test_readme_block_is_rewritten_from_records_and_nothing_else(tmp_path):
    from tests.test_report import synthetic_records

    recs = synthetic_records(Context())
    md = tmp_path / "README.md"
    md.write_text(f"intro\n\n{readme.BEGIN}\nstale table\n{readme.END}\n\noutro\n")
    # each draw at its claim's first confirmation seed, no calibration and no map: a distribution of one
    kw = {"first_seeds": {r["claim"]["id"]: r["seed"] for r in recs}, "maps": {}, "calibrations": {}}
    text, changed = readme.update(md, recs, **kw)
    assert changed and text.startswith("intro\n\n") and text.endswith("\n\noutro\n") and "stale table" not in text
    for r in recs:
        assert f"| {r['claim']['id']} |" in text
    assert "**violated over the range**: violated at 1 of 1 quick confirmation seed" in text  # a violation stands out
    md.write_text(text)
    assert readme.update(md, recs, **kw) == (text, False)


def test_readme_without_markers_is_an_error(tmp_path):
    md = tmp_path / "README.md"
    md.write_text("no markers\n")
    with pytest.raises(ValueError, match="no generated block"):
        readme.update(md, [])


def test_records_carry_findings_and_the_decision_ledger():
    rec = runner.run_claim(registry.get("B.T1"), Context(), kinds={"symbolic"})
    assert rec["claim"]["findings"] and rec["claim"]["ledger"]
    names = {p["name"] for p in rec["claim"]["ledger"]}
    assert "CONVERGED" in names


def test_report_shows_expectation_findings_and_the_decision_ledger():
    from verify import report

    rec = runner.run_claim(registry.get("B.T1"), Context(), kinds={"symbolic"})
    html = report.render([rec], Context(), "verify report")
    assert "Reviewed expectation:" in html and "Decision ledger" in html and "CONVERGED" in html
    assert rec["claim"]["findings"][0][:40] in html


def test_report_says_when_a_differing_verdict_is_a_measured_seed_dependence():
    from verify import report

    rec = runner.run_claim(registry.get("B.Fig6"), Context(budget="standard"), kinds={"symbolic"})
    rec = dict(rec, verdict="violated")  # B.Fig6's finding (inconclusive) measured violated at 1 of 5 standard seeds
    html = report.render([rec], Context(budget="standard"), "verify report")
    assert "this run differs: violated; measured to depend on the seed: violated at 1 of 5 standard" in html


def test_cli_says_violations_loudly(capsys):
    from tests.test_report import synthetic_records
    from verify.cli import _print_table

    _print_table(synthetic_records(Context()))
    out = capsys.readouterr().out
    assert "!!! VIOLATED Z.T1" in out


def test_readme_check_compares_verdicts(tmp_path):
    from tests.test_report import synthetic_records

    recs = synthetic_records(Context())
    md = tmp_path / "README.md"
    md.write_text(f"{readme.BEGIN}\n{readme.END}\n")
    text, _ = readme.update(md, recs)
    got = readme.verdicts(text)
    assert {k: v[1] for k, v in got.items()} == {r["claim"]["id"]: r["verdict"] for r in recs}
    assert {v[0] for v in got.values()} <= set(record.CLASSES)


def test_readme_lists_a_seed_dependent_claim_as_such_not_as_a_diagnosed_verdict(tmp_path, monkeypatch):
    # A.T4 was [unstable] at quick until session 8; the test keeps that entry in a file of its own
    toml = tmp_path / "expectations.toml"
    toml.write_text('[claims]\n"A.T4" = "verified"\n\n[[unstable."A.T4"]]\nbudget = "quick"\n'
                    'measured = "inconclusive at 3 of 20 calibration seeds"\noutcomes = ["inconclusive"]\n'
                    'diagnosis = "power"\n')
    monkeypatch.setattr(expectations, "expected", functools.partial(expectations.expected, path=toml))
    rec = runner.run_claim(registry.get("A.T4"), Context(), kinds={"symbolic"})
    text = readme.render([rec])
    assert "- **A.T4** (seed-dependent at quick: inconclusive at 3 of 20" in text
    assert "(verified, diagnosed)" not in text
