"""The prober itself: four-cell accounting, shrinking, replay, and a planted false claim it must find."""
import pytest
from hypothesis import strategies as st

from theorems.claim import Context
from theorems.probe import COUNTEREXAMPLE, FAIL_FAIL, HOLD_HOLD, run_probe

# A planted false "claim": for integers 0 <= k and reals 0 <= x <= 1 with x <= 1/2 (its assumption),
# "k * x < 10".  It fails inside its assumption for k >= 20: the minimal counterexample is k = 20, x = 0.5.
planted = st.fixed_dictionaries({"k": st.integers(0, 1000), "x": st.floats(0, 1)})


def planted_conclusion(inst, alpha):
    holds = inst["k"] * inst["x"] < 10
    return holds, "", "" if holds else f"k*x = {inst['k'] * inst['x']:.3g} >= 10"


def planted_assumptions(inst):
    return {"x <= 1/2": inst["x"] <= 0.5}


def test_planted_false_claim_is_found_and_shrunk_in_the_ci_profile():
    out = run_probe(Context(seed=0, budget="quick"), planted, planted_conclusion, 50,
                    describe=dict, assumptions=planted_assumptions)
    assert out.status == "fail" and "COUNTEREXAMPLE" in out.summary
    cx = out.details["counterexample"]
    assert cx["x"] <= 0.5 and cx["k"] * cx["x"] >= 10
    assert cx["k"] == 20 and cx["x"] == 0.5  # shrunk to the boundary


def test_failures_outside_the_assumptions_are_not_counterexamples():
    # the same conclusion, but the assumption now excludes every failing instance
    out = run_probe(Context(seed=0, budget="quick"), st.fixed_dictionaries({"k": st.integers(0, 1000),
                                                                            "x": st.floats(0, 1)}),
                    planted_conclusion, 60, describe=dict,
                    assumptions=lambda i: {"k*x < 10": i["k"] * i["x"] < 10})
    assert out.status == "pass"
    assert COUNTEREXAMPLE not in out.details["cells"]
    assert out.details["cells"].get(FAIL_FAIL, 0) > 0 and out.details["cells"].get(HOLD_HOLD, 0) > 0
    ex = out.details["cell_examples"][FAIL_FAIL]
    assert ex["shrunk"] and ex["k"] * ex["x"] >= 10


def test_probe_replays_with_the_same_seed_and_plots_parameters():
    ctx = Context(seed=3, budget="quick")
    kw = dict(describe=dict, assumptions=planted_assumptions, parameters=lambda i: {"x": i["x"]})
    a = run_probe(ctx, planted, planted_conclusion, 30, **kw)
    b = run_probe(ctx, planted, planted_conclusion, 30, **kw)
    assert a.details["counterexample"] == b.details["counterexample"]
    assert a.details["points"] == b.details["points"]
    assert a.figures and "<svg" in a.figures[0].svg


def test_max_examples_override_from_the_cli_context():
    out = run_probe(Context(seed=0, budget="quick", max_examples=7), st.integers(0, 10),
                    lambda i, a: (True, "any", ""), 500)
    assert out.details["max_examples"] == 7 and out.details["examples_evaluated"] <= 7


def test_a_shared_example_database_replays_across_runs(tmp_path, monkeypatch):
    """``$VERIFY_HYPOTHESIS_DB`` (``verify probe``'s): a counterexample found once is replayed by every later run."""
    monkeypatch.setenv("VERIFY_HYPOTHESIS_DB", str(tmp_path / "db"))
    out = run_probe(Context(seed=0, budget="standard"), planted, planted_conclusion, 50,
                    describe=dict, assumptions=planted_assumptions)
    assert out.status == "fail" and any((tmp_path / "db").rglob("*"))  # the failure was saved for replay
    again = run_probe(Context(seed=99, budget="standard"), planted, planted_conclusion, 5,
                      describe=dict, assumptions=planted_assumptions)
    assert again.status == "fail"  # found again from the database even with 5 examples and another seed
    assert "shared example database" in again.details["profile"]


def _shared_directory(path):
    """The mutant: every standard probe run reads and writes one directory database (what a calibration's seeds did
    when they ran in one checkout)."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    return lambda ctx: None if ctx.budget == "quick" else DirectoryBasedExampleDatabase(str(path))


def _after_another_seed(seed_first: int, seed: int) -> dict:
    kw = dict(describe=dict, assumptions=planted_assumptions)
    run_probe(Context(seed=seed_first, budget="standard"), planted, planted_conclusion, 50, **kw)
    return run_probe(Context(seed=seed, budget="standard"), planted, planted_conclusion, 5, **kw).details


@pytest.mark.parametrize("mutant", [None, _shared_directory], ids=["private database", "mutant: one shared directory"])
def test_a_verdict_probe_does_not_depend_on_the_runs_before_it(tmp_path, monkeypatch, mutant):
    """Beyond quick, without ``$VERIFY_HYPOTHESIS_DB`` (every command that produces verdicts drops it), a probe's
    record is a function of code, seed and budget: seed 99 alone and seed 99 after seed 0 (whose search found a
    counterexample) give the same details.  The mutant, a database shared by the runs, replays seed 0's
    counterexample at seed 99, and the comparison sees it."""
    from theorems import probe

    monkeypatch.delenv("VERIFY_HYPOTHESIS_DB", raising=False)
    if mutant is not None:
        monkeypatch.setattr(probe, "example_database", mutant(tmp_path / "db"))
    alone = run_probe(Context(seed=99, budget="standard"), planted, planted_conclusion, 5, describe=dict,
                      assumptions=planted_assumptions).details
    after = _after_another_seed(0, 99)
    if mutant is None:
        assert after == alone and alone["profile"] == "example database private to this run"
    else:
        assert after != alone  # the replayed counterexamples (of seed 99's own run and seed 0's) come first


# A planted false claim over matrices, drawn from theorems.strategies pieces: "every covariance with eigenvalues in
# [0.1, 4] has operator norm <= 3".  The counterexample must shrink to a small explicit instance (d = 1, a round
# number, the identity rotation) that a reader can paste into a Python prompt and see fail.
def _covariances():
    from theorems import strategies as S

    return st.integers(1, 4).flatmap(lambda d: S.spd(d, 0.1, 4.0).map(lambda a: {"d": d, "Sigma": a}))


def _op_norm_conclusion(inst, alpha):
    import numpy as np

    top = float(np.linalg.eigvalsh(np.asarray(inst["Sigma"], dtype=float))[-1])
    return top <= 3.0, "", f"‖Σ‖op = {top:.4g} > 3"


def test_planted_matrix_claim_shrinks_to_a_copyable_instance():
    import ast

    from theorems import strategies as S

    out = run_probe(Context(seed=0, budget="quick"), _covariances(), _op_norm_conclusion, 100, describe=S.readable)
    assert out.status == "fail"
    cx = {k: v for k, v in out.details["counterexample"].items() if k != "why"}
    assert cx["d"] == 1, cx                                   # shrunk to the smallest dimension
    pasted = ast.literal_eval(repr(cx))                       # plain numbers and nested lists: copyable
    assert pasted == cx and isinstance(pasted["Sigma"], list)
    assert pasted["Sigma"][0][0] == round(pasted["Sigma"][0][0], 1)  # a round number, not 3.0000000417
    assert not _op_norm_conclusion(pasted, 0.0)[0]            # and it still fails when pasted back


def test_draws_do_not_depend_on_which_local_modules_are_loaded(tmp_path, monkeypatch):
    """Hypothesis harvests literals from loaded local modules; a probe must not: same seed, same instances."""
    import importlib
    import sys

    def drawn():
        seen = []
        run_probe(Context(seed=5, budget="quick"), st.fixed_dictionaries({"x": st.floats(0, 100)}),
                  lambda i, a: (seen.append(i["x"]) or True, "", ""), 60)
        return seen

    before = drawn()
    mod = tmp_path / "literal_heavy_module.py"
    mod.write_text("VALUES = [" + ", ".join(f"{k + 0.123456:.6f}" for k in range(100)) + "]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("literal_heavy_module")
    try:
        assert drawn() == before
    finally:
        sys.modules.pop("literal_heavy_module", None)


def test_a_control_gets_its_own_example_database_key():
    from theorems.probe import database_key

    def conclusion(inst, alpha, factor=1.0):
        return True, "", ""

    def bind(factor):
        return lambda i, a: conclusion(i, a, factor)

    s = st.integers(0, 3)
    assert database_key(bind(1.0), s) == database_key(bind(1.0), s)   # stable across calls (and processes)
    assert database_key(bind(1.0), s) != database_key(bind(10.0), s)  # the control's mutant is another probe


def test_an_iff_claim_fails_when_its_other_branch_fails_outside_the_assumptions():
    # "k * x < 10 iff x <= 1/2" is false on the x > 1/2 side (k = 0 gives 0 < 10): the iff option must say so
    kw = dict(describe=dict, assumptions=planted_assumptions)
    plain = run_probe(Context(seed=0, budget="quick"), st.fixed_dictionaries({"k": st.integers(0, 5),
                                                                             "x": st.floats(0, 1)}),
                      lambda i, a: (i["k"] * i["x"] < 10 if i["x"] <= 0.5 else i["k"] * i["x"] >= 10, "", "branch"),
                      60, **kw)
    assert plain.status == "pass"
    iff = run_probe(Context(seed=0, budget="quick"), st.fixed_dictionaries({"k": st.integers(0, 5),
                                                                           "x": st.floats(0, 1)}),
                    lambda i, a: (i["k"] * i["x"] < 10 if i["x"] <= 0.5 else i["k"] * i["x"] >= 10, "", "branch"),
                    60, iff=True, **kw)
    assert iff.status == "fail" and "iff" in iff.summary


def test_probe_check_mutants_are_declared_and_validated():
    from theorems.claim import Check, Claim, Control
    from theorems.probe import probe_check

    params = dict(strategy=planted, conclusion=planted_conclusion_with_bound, examples=(50, 50, 50), describe=dict,
                  assumptions=planted_assumptions)
    claim = Claim(id="X.P", title="planted", statement="k x < b", fidelity="exact", fidelity_note="toy",
                  checks=(Check("probe", "probe", "toy", probe_check, params=params),),
                  controls=(Control("b = 1", "probe", "a bound the planted claim breaks", {"mutant": {"bound": 1.0}}),))
    from verify import runner

    rec = runner.run_claim(claim, Context(seed=0, budget="quick"))
    assert rec["checks"][0]["status"] == "fail"          # the planted claim is false: k x < 10 fails at k = 20
    assert rec["controls"][0]["rejected"]
    import pytest

    with pytest.raises(ValueError, match="mutant"):
        Claim(id="X.Q", title="planted", statement="k x < b", fidelity="exact", fidelity_note="toy",
              checks=(Check("probe", "probe", "toy", probe_check, params=params),),
              controls=(Control("typo", "probe", "a misspelt mutant", {"mutant": {"bund": 1.0}}),))


def planted_conclusion_with_bound(inst, alpha, bound=10.0):
    holds = inst["k"] * inst["x"] < bound
    return holds, "", "" if holds else f"k*x = {inst['k'] * inst['x']:.3g} >= {bound}"


def test_undecided_instances_have_their_own_cell_and_a_probe_must_decide_enough():
    from theorems.probe import UNDECIDED

    # k odd: not decided (e.g. an infeasible instance); the planted conclusion otherwise holds
    concl = lambda i, a: (None if i % 2 else True, "", "odd: not decided")  # noqa: E731
    out = run_probe(Context(seed=0, budget="quick"), st.integers(0, 100), concl, 40, min_decided=5)
    assert out.status == "pass" and out.details["cells"][UNDECIDED] > 0 and out.details["decided"] >= 5
    none = run_probe(Context(seed=0, budget="quick"), st.integers(0, 100), lambda i, a: (None, "", "never"), 40)
    assert none.status == "inconclusive" and "decided" in none.summary
    few = run_probe(Context(seed=0, budget="quick"), st.integers(0, 100), concl, 40, min_decided=1000)
    assert few.status == "inconclusive"


def test_with_assumptions_only_instances_inside_them_count_as_decided():
    out = run_probe(Context(seed=0, budget="quick"), st.fixed_dictionaries({"k": st.integers(0, 5),
                                                                           "x": st.floats(0, 1)}),
                    planted_conclusion, 40, describe=dict, assumptions=lambda i: {"never": False}, min_decided=1)
    assert out.status == "inconclusive" and out.details["decided"] == 0


def test_a_probe_that_decided_too_few_draws_again_at_a_derived_seed():
    from theorems.probe import ROUNDS

    seen: list[int] = []

    def first_run_undecided(i, a):  # the first 40 calls (one whole run) cannot be decided, later ones can
        seen.append(i)
        return (None if len(seen) <= 40 else True), "", "not yet"

    out = run_probe(Context(seed=0, budget="quick"), st.integers(0, 10**6), first_run_undecided, 40, min_decided=5)
    assert out.status == "pass" and out.details["rounds"] == 2 and out.details["decided_per_round"][0] == 0
    assert out.details["round_seeds"][0] == 0 and out.details["round_seeds"][1] == Context(seed=0).derived_seed(
        "probe round", 1)
    assert seen[40:50] != seen[:10]  # the second run draws other instances, not a replay of the first
    assert "in 2 rounds" in out.summary
    # Bonferroni over every example the probe may evaluate, all rounds included
    assert out.details["alpha_per_example"] == Context(seed=0).alpha / (40 * ROUNDS)
    never = run_probe(Context(seed=0, budget="quick"), st.integers(0, 100), lambda i, a: (None, "", "never"), 20,
                      min_decided=1)
    assert never.status == "inconclusive" and never.details["rounds"] == ROUNDS


def test_enough_decided_in_the_first_run_draws_no_more():
    out = run_probe(Context(seed=0, budget="quick"), st.integers(0, 100), lambda i, a: (True, "", ""), 30,
                    min_decided=5)
    assert out.details["rounds"] == 1 and out.details["examples_evaluated"] <= 30


def test_a_counterexample_ends_the_probe_without_further_rounds():
    out = run_probe(Context(seed=0, budget="quick"), st.integers(0, 100),
                    lambda i, a: ((None if i % 2 else i < 50), "", f"{i} >= 50"), 30, min_decided=10**6)
    assert out.status == "fail" and out.details["rounds"] == 1


def test_a_probe_strategy_draws_outside_its_assumptions():
    """B.L3's strategy reaches instances outside its assumptions (here Ass 2: a positive score spread), so its
    four-cell accounting can show whether they matter; a strategy stuck inside them cannot (a deterministic search)."""
    from hypothesis import find, settings

    from theorems.paper_b.fixed_head.l3_opt_score import l3_instances

    quiet = settings(database=None, derandomize=True, max_examples=300)
    outside = find(l3_instances(), lambda inst: inst["spread"] > 0, settings=quiet)
    inside = find(l3_instances(), lambda inst: inst["spread"] == 0 and inst["kind"] == "orthogonal", settings=quiet)
    assert outside["spread"] > 0 and inside["spread"] == 0


def _recorded(calls: list):
    """The planted conclusion, recording each instance it is called on (in order)."""
    def conclusion(inst, alpha):
        calls.append(dict(inst))
        return planted_conclusion(inst, alpha)
    return conclusion


def test_a_control_stops_at_its_first_counterexample_with_the_checks_outcome():
    """An outcome that is its decision alone (``ctx.figures`` off: a control, a map's setting) does not shrink: its
    draws are the check's up to the check's first failure, it ends there with the same status, counts that instance
    once (hypothesis's replay of it to report it is not evaluated again) and says it is not shrunk.  The check's own
    counterexample is shrunk (to the boundary)."""
    from dataclasses import replace

    from theorems.probe import probe_check

    ctx = Context(seed=0, budget="quick")
    kw = dict(describe=dict, assumptions=planted_assumptions)
    check_calls, control_calls = [], []
    check = probe_check(ctx, planted, _recorded(check_calls), (50, 50), **kw)
    control = probe_check(replace(ctx, figures=False), planted, _recorded(control_calls), (50, 50), **kw)
    assert check.status == control.status == "fail"
    first = next(i for i, c in enumerate(check_calls) if c["x"] <= 0.5 and c["k"] * c["x"] >= 10)
    assert control_calls == check_calls[:first + 1]  # the same search, stopped at its first counterexample
    assert control.details["cells"][COUNTEREXAMPLE] == 1
    assert not control.details["counterexample"]["shrunk"] and "(shrunk)" not in control.summary
    assert check.details["counterexample"]["shrunk"] and check.details["counterexample"]["k"] == 20
    assert check.summary.startswith("COUNTEREXAMPLE found (shrunk)")


@pytest.mark.parametrize("budget, figures, shrunk", [("quick", True, False), ("standard", True, False),
                                                     ("full", True, True), ("full", False, False)])
def test_the_cells_minimal_examples_are_shrunk_at_the_full_budget_only(budget, figures, shrunk):
    """The "assumption fails" cells keep their first example; their minimal one (a search of its own, several times
    the probe's) is an illustration of the full budget, and never of an outcome that is its decision alone."""
    from theorems.probe import probe_check

    out = probe_check(Context(seed=0, budget=budget, figures=figures), planted, planted_conclusion, (20, 20, 20),
                      describe=dict, assumptions=lambda i: {"k*x < 10": i["k"] * i["x"] < 10})
    assert out.status == "pass"
    assert out.details["cell_examples"][FAIL_FAIL]["shrunk"] is shrunk


def test_a_checks_shrink_starts_from_its_first_counterexample():
    """Hypothesis stops drawing at the first counterexample and shrinks that one (by default it would go on drawing
    for up to 10 s of wall time, so which instance is shrunk, and the counts, would depend on the machine's speed).
    The shrinker only tries smaller integers than its current one, so no call after the first failure may exceed it."""
    for seed in range(5):
        calls = []

        def conclusion(k, alpha):
            calls.append(k)
            return k < 1000, "", f"{k} >= 1000"

        out = run_probe(Context(seed=seed, budget="quick"), st.integers(0, 10**6), conclusion, 200)
        first = next(i for i, k in enumerate(calls) if k >= 1000)
        assert max(calls[first:]) == calls[first], seed
        assert out.details["counterexample"]["instance"] == "1000"


def test_a_private_example_database_formats_no_key(monkeypatch):
    """A verdict's database is private to its probe run, so the default key serves: the key's strategy repr (which
    can iterate ``sys.modules`` while a worker thread imports) is never formatted on a verdict's path."""
    import theorems.probe as P

    def no_key(*args):
        raise AssertionError("a private database formatted a key")

    monkeypatch.delenv("VERIFY_HYPOTHESIS_DB", raising=False)
    monkeypatch.setattr(P, "database_key", no_key)
    out = run_probe(Context(seed=0, budget="standard"), planted, planted_conclusion, 30, describe=dict,
                    assumptions=planted_assumptions)
    assert out.status == "fail" and out.details["profile"] == "example database private to this run"
