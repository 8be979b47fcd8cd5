"""Every registered claim's verdict against its reviewed expectation, and the machinery that produced it.

Default run: the quick tier.  ``pytest -m slow``: the standard tier.  Each claim runs once per budget through the
real runner (so the verdict rules are exercised too), at the test seed: ``VERIFY_TEST_SEED``, or a fresh seed drawn
for the run and printed in pytest's header (``tests/conftest.py``), so a verdict that holds only at the seed its
sizes were chosen at cannot pass here for long.  Each claim's first confirmation seed is checked too, by ``.ci/run``:
the report's records there must give the generated claims table and README counts (``verify readme --check``).

* ``test_verdict``: the claim's verdict equals the reviewed expectation (``verify/expectations.py``: derived, or a
  diagnosed finding in the claim's notes file).  A diagnosed
  violation shows as an expected failure (``xfail``) with its diagnosis as the reason — a finding, never tuned
  away; a new violation, a verdict that flips, or an inconclusive verdict fails and says which check or control.
* Machinery: every check ran and decided (did not crash, is not inconclusive), every negative control was
  rejected, every passing decision is shown by its interval (an equality's interval inside its band, whose margin
  names the alternative it excludes; a bound's far end on the claimed side), and two runs of the same code, seed and
  budget give the same record.

With ``VERIFY_STORE_RESULTS=DIR`` the quick-tier records are also written to ``DIR``, so a following
``verify report --results DIR --seed S`` at the test seed reuses them instead of re-running.  Claims whose checks use a
fixture in common share an xdist group and, in that worker, one run's fixture values (``theorems.fixture.Memo``), so
under ``pytest -n 2 --dist loadgroup`` each claim runs once and each shared value is computed once.
"""
import dataclasses
import functools
import hashlib
import os

import pytest

from numerics import stats
from theorems import fixture as fx
from theorems.claim import Check, Claim, Context, Control, Outcome
from verify import expectations, registry, results, runner

CLAIMS = [c for c in registry.all_claims() if not c.not_checked]
SEED = int(os.environ.get("VERIFY_TEST_SEED", "0"))  # set (fresh if not given) by conftest.pytest_configure


#: the xdist group of a claim's tests: the claims whose checks use a fixture in common (``registry.sharing_groups``),
#: so under ``--dist loadgroup`` each shared value is computed by one pytest worker
GROUP = registry.sharing_groups(CLAIMS)


#: claims whose quick run takes over a minute of a worker (A.T1.1's sweep, the A.T3-A.T5 group's gradient
#: pilots): their fresh-seed quick tests run in the slow tier, so that the default run stays within CI's ~6 minutes
#: on 2 cores. Their seed-0 verdicts are still checked on every CI run, by the report ``.ci/run`` builds and
#: ``verify readme --check``; A.T1.1, A.T3 and A.T5 are ``[unstable]`` with measured rates (A.T4 shares their
#: group's fixtures), so a fresh seed tells the default run little that the calibration has not measured.
SLOW_AT_QUICK = {"A.T1.1", "A.T3", "A.T4", "A.T5"}


def claim_marks(claim, budget: str) -> list:
    """A claim test's marks: its xdist group (its record is computed once, on one worker), and the slow tier at the
    standard budget or for a claim in ``SLOW_AT_QUICK``."""
    slow = [pytest.mark.slow] if budget == "standard" or claim.id in SLOW_AT_QUICK else []
    return [pytest.mark.xdist_group(GROUP[claim.id]), *slow]


def _params(item_of, budgets=("quick", "standard")):
    """One test per claim, item (its verdict, a check, a control) and budget; the id ``A.L5:label:budget`` (so that
    ``-k "A.L5:"`` selects one claim)."""
    return [pytest.param(c, x, b, id=f"{c.id}:{label}:{b}", marks=claim_marks(c, b))
            for b in budgets for c in CLAIMS for x, label in item_of(c)]


def _verdicts():
    return _params(lambda c: [(None, "verdict")])


def _checks():
    return _params(lambda c: [(ch.name, f"{ch.kind}:{ch.name}") for ch in c.checks])


def _controls():
    return _params(lambda c: [(k.name, f"control:{k.name}") for k in c.controls])


def second_seed(seed: int) -> int:
    """The seed of the second look (:func:`_second_look`), derived from the test seed by hashing."""
    return int(hashlib.sha256(f"second look at {seed}".encode()).hexdigest()[:8], 16)


@functools.cache
def _group_run(group: str, budget: str) -> fx.Memo:
    """The fixture values of the test seed's run for one group of claims, announced for all of the group's units at
    once, so a value two claims use stays until both have run (and is dropped then)."""
    memo = fx.Memo(Context(seed=SEED, budget=budget))
    members = [c for c in CLAIMS if GROUP[c.id] == group]
    memo.expect(r for c in members for u in runner.plan(c) for r in runner.unit_requests(c, u).values())
    return memo


@functools.cache
def claim_record(claim_id: str, budget: str, seed: int = SEED) -> dict:
    claim = registry.get(claim_id)
    memo = _group_run(GROUP[claim.id], budget) if seed == SEED else None  # a second look runs its claim alone
    rec = runner.run_claim(claim, Context(seed=seed, budget=budget), memo=memo)
    store = os.environ.get("VERIFY_STORE_RESULTS")
    if store and budget == "quick" and seed == SEED:
        results.write_record(store, rec)
    return rec


def _second_look(claim, budget: str, ok, what: str) -> None:
    """A check left inconclusive (or a control left unrejected) at a fresh test seed is run once more at a second
    seed derived from it; if it decides there, the first miss is an expected failure naming both seeds, and only a miss
    at both fails.  Why: a claim whose misses are independent at rate p per seed then fails a run at rate p^2 (in 12 full
    runs at fresh seeds a claim stable over its calibration missed at 5, four different claims: README, "Fresh seeds
    after the calibration"), while a claim that lost its power misses at both and fails.  A violation, a crash, and seed 0 (the README's) get no second look.
    ``ok(record) -> (decided as expected, what it was)``."""
    if SEED == 0:
        return
    seed2 = second_seed(SEED)
    good, text = ok(claim_record(claim.id, budget, seed2))
    if good:
        pytest.xfail(f"power miss at seed {SEED}: {what}; at the second look (seed {seed2}) it {text}")


def _why(rec) -> str:
    return f"{rec['claim']['id']} is {rec['verdict']} at seed {SEED}: {rec['reason']}"


def _known_unstable(exp, outcome: str, what: str):
    """A claim measured to depend on the seed (expectations' ``[unstable]``): a miss of the kind that was measured
    (``outcome``: the verdict it makes) is that finding, stated; a miss of another kind (a violation where only
    inconclusives were measured) is not absorbed and fails."""
    if exp.absorbs(outcome):
        pytest.xfail(f"known seed dependence ({exp.unstable}), {what} at seed {SEED}: {exp.diagnosis}")


def _assert_verdict(claim, budget):
    rec = claim_record(claim.id, budget)
    exp = expectations.expected(claim.id, budget, SEED)
    if exp.verdict in ("violated", "inconclusive"):
        if rec["verdict"] != exp.verdict:
            _known_unstable(exp, rec["verdict"], rec["verdict"])
        assert rec["verdict"] == exp.verdict, f"the diagnosed {exp.verdict} finding is gone — review it: {_why(rec)}"
        pytest.xfail(f"finding: {exp.diagnosis}")
    if rec["verdict"] != exp.verdict:
        _known_unstable(exp, rec["verdict"], rec["verdict"])
        if rec["verdict"] == "inconclusive":
            _second_look(claim, budget, lambda r: (r["verdict"] == exp.verdict, f"is {r['verdict']}"), _why(rec))
    assert rec["verdict"] == exp.verdict, f"expected {exp.verdict}; {_why(rec)}"


def _status(rec: dict, part: str, name: str, wanted: str) -> tuple[bool, str]:
    item = next(c for c in rec[part] if c["name"] == name)
    raised = (item.get("details") or {}).get("raised")
    return item["status"] == wanted and not raised, f"is {item['status']}: {item['summary']}"


def _assert_decided(claim, name, budget):
    c = next(c for c in claim_record(claim.id, budget)["checks"] if c["name"] == name)
    assert not c["details"].get("raised"), f"{claim.id} {name} crashed: {c['summary']}"
    exp = expectations.expected(claim.id, budget, SEED)
    if (c["status"], exp.verdict) in (("fail", "violated"), ("inconclusive", "inconclusive")):
        pytest.xfail(f"finding: {exp.diagnosis}")
    if c["status"] != "pass":
        _known_unstable(exp, "violated" if c["status"] == "fail" else "inconclusive", f"{name} {c['status']}")
    if c["status"] == "inconclusive":
        _second_look(claim, budget, lambda r: _status(r, "checks", name, "pass"), f"{name}: {c['summary']}")
    assert c["status"] == "pass", f"{claim.id} {name} at seed {SEED}: {c['status']}: {c['summary']}"


def _assert_rejected(claim, name, budget):
    k = next(k for k in claim_record(claim.id, budget)["controls"] if k["name"] == name)
    exp = expectations.expected(claim.id, budget, SEED)
    if not k["rejected"] and exp.verdict in ("violated", "inconclusive") and name in exp.controls_not_rejected:
        pytest.xfail(f"finding (the check's power): {exp.diagnosis}")  # a diagnosed control the check cannot reject
    # a control with exactly its check's numbers did not reach the computation: no other seed can reject it
    assert not k.get("same_as_check"), (f"{claim.id}: negative control {name!r} computed exactly the numbers of "
                                        f"{k['target']!r} at seed {SEED}: its mutant changed nothing the check "
                                        f"computes: {k['summary']}")
    if not k["rejected"]:
        _known_unstable(exp, "inconclusive", f"control {name!r} not rejected")
        _second_look(claim, budget, lambda r: _rejected(r, name), f"control {name!r} not rejected: {k['summary']}")
    assert k["rejected"], (f"{claim.id}: negative control {name!r} was not rejected by {k['target']!r} at seed "
                           f"{SEED}: {k['status']}: {k['summary']}")


def _rejected(rec: dict, name: str) -> tuple[bool, str]:
    k = next(k for k in rec["controls"] if k["name"] == name)
    raised = (k.get("details") or {}).get("raised")
    return bool(k["rejected"]) and not raised, f"is {'rejected' if k['rejected'] else 'not rejected'}: {k['summary']}"


def unshown_passes(record: dict) -> list[str]:
    """Every passing decision of a record that is not shown by its own interval: an equality (equivalence) decision
    whose interval reaches outside its band, or whose band has no margin with the alternative it excludes; a bound
    whose far end is past its bound (plus tolerance), wider than its declared ``max_width``, or whose tolerance has no
    reason."""
    bad = []
    for c in record["checks"]:
        for d in (c["details"] or {}).get("decisions", []):
            if d["status"] != "pass":
                continue
            where = f"{c['name']}: {d['name']} [{d['lo']:.4g}, {d['hi']:.4g}] vs {d['claimed']}"
            a, b = d.get("band", (None, None))
            if a is None or not (d["lo"] >= a and d["hi"] <= b):
                bad.append(f"{where}: interval not inside its band")
            if d["rule"] in stats.EQUIVALENCE_RULES and not (d.get("margin") and str(d.get("excludes", "")).strip()):
                bad.append(f"{where}: a band without a stated margin and reason")
            if d["rule"] not in stats.EQUIVALENCE_RULES and d["hi"] - d["lo"] > d["max_width"]:
                bad.append(f"{where}: wider than its declared {d['max_width']:.4g}")
            if d["rule"] not in stats.EQUIVALENCE_RULES and d.get("margin") and not d.get("excludes"):
                bad.append(f"{where}: a tolerance without its reason")
    return bad


def _assert_every_pass_shown(claim, budget):
    bad = unshown_passes(claim_record(claim.id, budget))
    assert not bad, f"{claim.id} passed decisions its intervals do not show: " + "; ".join(bad)


def test_unshown_passes_are_found():
    """The enumeration above must see each way a pass can be unearned (a mutant record per way)."""
    good = {"name": "x", "rule": "close", "status": "pass", "lo": 0.95, "hi": 1.05, "band": [0.9, 1.1],
            "claimed": "= 1 ± 0.1", "margin": 0.1, "excludes": "1.2; half the distance", "max_width": 0.1}
    bound = {"name": "y", "rule": "upper", "status": "pass", "lo": 0.0, "hi": 0.4, "band": [float("-inf"), 0.5],
             "claimed": "≤ 0.5", "max_width": 1.0}

    def rec(*ds):
        return {"checks": [{"name": "c", "details": {"decisions": list(ds)}}]}

    assert unshown_passes(rec(good, bound)) == []
    no_band = {k: v for k, v in good.items() if k != "band"}
    for mutant in ({**good, "hi": 1.15}, {**good, "excludes": ""}, {**good, "margin": None}, no_band,
                   {**bound, "hi": 0.6}, {**bound, "lo": -2.0}, {**bound, "margin": 0.1}):
        assert len(unshown_passes(rec(mutant))) >= 1, mutant


@pytest.mark.parametrize("measured, outcomes, outcome", [("violated at 1 of 5 seeds", ("violated",), "xfail"),
                                                         ("", (), "fail"),
                                                         ("inconclusive at 2 of 20 seeds", ("inconclusive",), "fail")])
def test_a_finding_on_its_bands_edge_that_lands_outside_is_its_measured_seed_dependence(monkeypatch, measured,
                                                                                      outcomes, outcome):
    """An inconclusive finding (an estimate on its band's edge) that comes back violated is the seed dependence its
    [unstable] entry measured; without that entry the finding is gone and the test fails, and an entry that measured
    only inconclusives does not absorb a violation."""
    import sys

    me = sys.modules[__name__]
    claim = registry.get("B.Fig6")
    monkeypatch.setattr(me, "claim_record", lambda claim_id, budget: {
        "claim": {"id": claim_id}, "verdict": "violated", "reason": "just outside the band"})
    monkeypatch.setattr(expectations, "expected", lambda *a, **k: expectations.Expectation(
        "inconclusive", "on the edge", measured, unstable_outcomes=outcomes))
    expected = pytest.xfail.Exception if outcome == "xfail" else AssertionError
    with pytest.raises(expected):
        _assert_verdict(claim, "standard")


@pytest.mark.parametrize("second, outcome", [("pass", "xfail"), ("inconclusive", "fail")])
def test_a_fresh_seed_miss_gets_one_second_look_and_a_miss_at_both_fails(monkeypatch, second, outcome):
    import sys

    me = sys.modules[__name__]
    claim = registry.get("A.L5")  # expected verified, no finding, not [unstable]
    name = claim.checks[-1].name

    def record(status):
        return {"checks": [{"name": name, "status": status, "summary": status, "details": {}}]}

    seen = []

    def fake(claim_id, budget, seed=17):
        seen.append(seed)
        return record("inconclusive" if seed == 17 else second)

    monkeypatch.setattr(me, "SEED", 17)
    monkeypatch.setattr(me, "claim_record", fake)
    expected = pytest.xfail.Exception if outcome == "xfail" else AssertionError
    with pytest.raises(expected):
        _assert_decided(claim, name, "quick")
    assert seen == [17, second_seed(17)]


@pytest.mark.parametrize("claim, _, budget", _verdicts())
def test_verdict(claim, _, budget):
    _assert_verdict(claim, budget)


@pytest.mark.parametrize("claim, name, budget", _checks())
def test_check_decided(claim, name, budget):
    _assert_decided(claim, name, budget)


@pytest.mark.parametrize("claim, name, budget", _controls())
def test_control_rejected(claim, name, budget):
    _assert_rejected(claim, name, budget)


@pytest.mark.parametrize("claim, _, budget", _verdicts())
def test_every_pass_is_shown_by_its_interval(claim, _, budget):
    _assert_every_pass_shown(claim, budget)


@pytest.mark.parametrize("claim_id", ["A.L2", "A.L8", "B.L2"])
def test_same_code_seed_and_budget_give_the_same_record(claim_id):
    """Replay: a second run in the same process equals the first, up to wall-clock fields (three claims of both papers
    that are cheap run alone, each with a symbolic, a numeric and a probe check)."""
    a = runner.run_claim(registry.get(claim_id), Context(seed=SEED, budget="quick"))
    b = runner.run_claim(registry.get(claim_id), Context(seed=SEED, budget="quick"))
    assert results.replay_view(a) == results.replay_view(b)


@pytest.mark.xdist_group("guard")
def test_xdist_groups_are_in_effect(request):
    """Under ``--dist loadgroup`` (``./suite test``) a claim's tests share one worker, so its record is computed once;
    pytest 9.2 with pytest-xdist 3.8 silently dropped the groups (every claim ran on both workers), hence this guard."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not under pytest-xdist --dist loadgroup")
    assert request.node.nodeid.endswith("@guard"), f"xdist groups are ignored: node id {request.node.nodeid!r}"


def test_every_claim_has_a_reviewed_expectation():
    for c in registry.all_claims():
        for budget in ("quick", "standard"):
            exp = expectations.expected(c.id, budget, SEED)
            assert (exp.verdict == "not checked") == bool(c.not_checked), f"{c.id}: expectation {exp.verdict}"


@pytest.mark.parametrize("kind", ["symbolic", "numeric", "probe"])
def test_a_check_without_a_control_is_refused_at_import(kind):
    """Every check of a registered claim names a negative control (a check no mutant is shown to fail could not
    fail): the registry refuses the claim when the claims are imported, so no registered claim lacks one."""
    def exact(w=0):
        return Outcome("pass", "")

    def computed(ctx, w=0):
        return Outcome("pass", "")

    fn = exact if kind == "symbolic" else computed
    bare = Claim("Z.C1", "t", "s", "exact", "n", checks=(Check("x", kind, "d", fn, params={"w": 0}),),
                 controls=(Control("k", "x", "a mutant", {"w": 1}),))
    with pytest.raises(ValueError, match=f"{kind} check 'x' has no negative control"):
        registry._refuse_checks_without_controls(dataclasses.replace(bare, controls=()))  # numeric: Claim refuses
    registry._refuse_checks_without_controls(bare)
    assert all(any(k.target == ch.name for k in c.controls) for c in CLAIMS for ch in c.checks)


def test_every_claim_has_fidelity_and_statement():
    for c in registry.all_claims():
        assert c.fidelity in ("exact", "reconstructed", "qualitative")
        assert c.fidelity_note and c.statement
        if c.not_checked is not None:
            assert c.not_checked.strip(), f"{c.id}: a not-checked claim must say why"
