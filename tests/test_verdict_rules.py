"""The verdict rules as a full table (``verify.runner.verdict``): every combination of the checks' outcomes (pass,
fail, inconclusive, raised, out of scope) and the controls' (none, all rejected, one not rejected, one raised), and a
claim that is not checked.  A slip in any rule moves at least one row."""
from __future__ import annotations

import itertools

import pytest

from theorems.claim import Check, Claim, Context, Control, Measurement, Outcome
from verify import runner


def _noop(ctx, wrong=False):
    return Outcome("pass", "")


def _noop_symbolic(wrong=False):
    return Outcome("pass", "")


CLAIM = Claim(id="Z.V1", title="rules", statement="x", fidelity="exact", fidelity_note="n",
              checks=(Check("a", "numeric", "d", _noop), Check("b", "symbolic", "d", _noop_symbolic)),
              controls=(Control("k", "a", "wrong", {"wrong": True}), Control("k2", "b", "wrong", {"wrong": True})),
              module=__name__)
NOT_CHECKED = Claim(id="Z.V2", title="lost", statement="x", fidelity="qualitative", fidelity_note="n",
                    not_checked="the statement is lost", module=__name__)

CHECK = {"pass": {"status": "pass"}, "fail": {"status": "fail"}, "inconclusive": {"status": "inconclusive"},
         "raised": {"status": "inconclusive", "details": {"raised": True}},
         "out of scope": {"status": "out of scope"}}
CONTROLS = {"none": [], "rejected": [{"rejected": True}], "not rejected": [{"rejected": False}],
            "raised": [{"rejected": False, "status": "inconclusive", "details": {"raised": True}}]}


def expected(checks: tuple[str, str], controls: str) -> str:
    """The rules, written out: any failed check violates; else any undecided check (inconclusive, raised, out of
    scope) or any control not rejected (raised included) is inconclusive; else verified."""
    if "fail" in checks:
        return "violated"
    if any(c != "pass" for c in checks) or controls in ("not rejected", "raised"):
        return "inconclusive"
    return "verified"


@pytest.mark.parametrize("a, b, controls", list(itertools.product(CHECK, CHECK, CONTROLS)))
def test_every_combination_of_outcomes(a, b, controls):
    checks = [{"name": n, "summary": s, **CHECK[s]} for n, s in (("a", a), ("b", b))]
    ctl = [{"name": "k", "target": "a", **c} for c in CONTROLS[controls]]
    verdict, reason = runner.verdict(CLAIM, checks, ctl)
    assert verdict == expected((a, b), controls), (a, b, controls, reason)
    if verdict != "verified":
        assert reason  # every verdict but verified says why


def test_a_claim_that_is_not_checked_is_not_checked_whatever_ran():
    for a in CHECK:
        assert runner.verdict(NOT_CHECKED, [{"name": "a", "summary": "", **CHECK[a]}], []) == (
            "not checked", "the statement is lost")


def test_a_failing_check_with_an_unrejected_control_is_violated_and_says_the_failure():
    checks = [{"name": "a", "summary": "x above its bound", "status": "fail"}, {"name": "b", "summary": "",
                                                                              "status": "pass"}]
    verdict, reason = runner.verdict(CLAIM, checks, [{"name": "k", "target": "a", "rejected": False}])
    assert verdict == "violated" and "x above its bound" in reason


def test_an_aimed_control_is_rejected_only_by_the_decisions_it_names():
    """A control that names the decisions its mutant moves is not rejected by another decision's failure."""
    from theorems.claim import Control

    k = Control("k", "a", "a mutant of block A", {"wrong": True}, fails=("point 1, A-block*",))
    moved = [{"name": "point 1, A-block: coefficient", "status": "fail"}, {"name": "point 1, B-block", "status": "pass"}]
    elsewhere = [{"name": "point 1, A-block: coefficient", "status": "inconclusive"},
                 {"name": "point 1, B-block", "status": "fail"}]
    assert k.rejects("fail", moved) and not k.rejects("fail", elsewhere) and not k.rejects("fail", [])
    unaimed = Control("u", "a", "a mutant", {"wrong": True})
    assert unaimed.rejects("fail", elsewhere) and not unaimed.rejects("inconclusive", [])
    with pytest.raises(ValueError, match="fails names decisions"):
        Control("bad", "a", "d", {"wrong": True}, fails="point 1")


def _measured(value, status="pass"):
    return {"status": status, "summary": "", "measurements": [{"name": "speed", "value": value, "lo": None,
                                                               "hi": None}]}


def test_an_unrejected_control_with_its_checks_numbers_is_named_in_the_reason():
    """A control whose numbers are its check's, to the bit, could not have been rejected: its mutant changed nothing
    the check computes; the reason says so (the verdict is inconclusive as for any unrejected control).  Another
    number, or no number to compare, says nothing of the kind."""
    checks = [{"name": "a", **_measured(2.0)}, {"name": "b", "summary": "", "status": "pass"}]
    same = {"name": "k", "target": "a", "rejected": False, **_measured(2.0)}
    verdict, reason = runner.verdict(CLAIM, checks, [same])
    assert verdict == "inconclusive" and runner.SAME_AS_CHECK in reason
    for other in ({"name": "k", "target": "a", "rejected": False, **_measured(1.999)},
                  {"name": "k", "target": "a", "rejected": False, "status": "pass", "summary": ""},
                  {"name": "k", "target": "a", "rejected": False, **_measured(2.0),
                   "details": {"raised": True}}):
        verdict, reason = runner.verdict(CLAIM, checks, [other])
        assert verdict == "inconclusive" and runner.SAME_AS_CHECK not in reason
    assert runner.same_numbers(_measured(float("nan")), _measured(float("nan")))
    decided = {"status": "pass", "details": {"decisions": [{"name": "x", "status": "pass", "lo": 0.1, "hi": 0.2}]}}
    moved = {"status": "pass", "details": {"decisions": [{"name": "x [mutant]", "status": "pass", "lo": 0.1,
                                                          "hi": 0.3}]}}
    assert runner.same_numbers(decided, decided) and not runner.same_numbers(moved, decided)


def _ignoring(ctx, wrong=False):
    return Outcome("pass", "speed 2", measurements=[Measurement("speed", 2.0)])


def test_a_record_flags_a_control_whose_override_the_check_ignores():
    claim = Claim(id="Z.V3", title="ignored", statement="x", fidelity="exact", fidelity_note="n",
                  checks=(Check("a", "numeric", "d", _ignoring),),
                  controls=(Control("k", "a", "a mutant the check never reads", {"wrong": True}),), module=__name__)
    rec = runner.run_claim(claim, Context(seed=0))
    (k,) = rec["controls"]
    assert not k["rejected"] and k["same_as_check"] and runner.SAME_AS_CHECK in rec["reason"]


def _flaky(errors: list[Exception]):
    """A check that raises each of ``errors`` in turn, then passes."""
    left = list(errors)

    def fn(ctx):
        if left:
            raise left.pop(0)
        return Outcome("pass", "ok")
    return fn


RACE = RuntimeError("dictionary changed size during iteration")


@pytest.mark.parametrize("errors, status", [
    ([], "pass"),
    ([RACE], "pass"),                                   # the library race, once: the unit runs again, from the start
    ([RACE, RACE], "inconclusive"),                     # twice: reported as a raised check
    ([RuntimeError("a real defect")], "inconclusive"),  # any other error: never retried
    ([ValueError("dictionary changed size during iteration")], "inconclusive"),
])
def test_a_unit_is_run_again_only_after_the_known_library_race(errors, status):
    out, _ = runner._run_one(_flaky(errors), Context(seed=0))
    assert out.status == status and bool((out.details or {}).get("raised")) == (status != "pass")


def test_without_the_second_run_the_race_is_a_raised_check(monkeypatch):
    """The mutant: no error counts as the race; the same flaky unit then comes back raised."""
    monkeypatch.setattr(runner, "TRANSIENT_ERRORS", ())
    out, _ = runner._run_one(_flaky([RACE]), Context(seed=0))
    assert out.status == "inconclusive" and out.details["raised"]
