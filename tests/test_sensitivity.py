"""Free choices and sensitivity maps (``theorems.claim.FreeChoice``, ``verify.sensitivity``).

A toy claim stands in for a real one: a check that passes when its effect threshold is below 2 (so the verdict
changes inside the threshold's declared range, at a boundary the map must find), with a control, and a fixture whose
size is a second free choice that changes nothing.
"""
from __future__ import annotations

import pytest

from theorems.claim import Check, Claim, Context, Control, FreeChoice, Measurement, Outcome
from theorems.fixture import fixture
from verify import runner, sensitivity
from verify.execution import Executor


@fixture
def draws(ctx, n=10):
    return list(range(n))


def check_threshold(ctx, draws, threshold=1.0):
    ok = threshold < 2.0
    return Outcome("pass" if ok else "fail", f"threshold {threshold:g} on {len(draws)} draws")


def toy_claim(**kw) -> Claim:
    choices = kw.pop("free_choices", (
        FreeChoice("threshold", 1.0, "the effect a figure must show; 0.5-4 spans a halving to a fourfold",
                   {"effect": lambda v: {"threshold": v}}, low=0.5, high=4.0, scale="log"),
        FreeChoice("draws", 10, "any sample size decides this toy", {"effect": lambda v: {"draws": draws.bind(n=v)}},
                   low=5, high=20, integer=True),
    ))
    return Claim(
        "T.1", "toy", r"x", "reconstructed", "toy",
        checks=(Check("effect", "numeric", "toy", check_threshold, uses={"draws": draws}),),
        controls=kw.pop("controls", (Control("tenfold threshold", "effect", "fails", {"threshold": 10.0}),)),
        free_choices=choices, module="tests.test_sensitivity", **kw)


# --- declarations refused at import -------------------------------------------------------------------------------

def test_a_range_that_excludes_its_own_value_is_refused():
    with pytest.raises(ValueError, match="excludes its own value 5"):
        FreeChoice("cap", 5.0, "r", {"effect": lambda v: {"threshold": v}}, low=1.0, high=3.0)
    with pytest.raises(ValueError, match="exclude its own value"):
        FreeChoice("reading", "late", "r", {"effect": lambda v: {"threshold": 1.0}}, levels=("early", "mid"))


def test_a_choice_without_its_reason_is_refused():
    with pytest.raises(ValueError, match="reason"):
        FreeChoice("cap", 1.0, " ", {"effect": lambda v: {"threshold": v}}, low=0.5, high=3.0)


def test_a_choice_that_moves_the_claims_own_run_is_refused():
    """At its own value a choice must give the check what it receives without it: the claim's run is a point of the
    design (here the threshold is declared at 1.5 while the check runs at 1.0)."""
    bad = FreeChoice("threshold", 1.5, "r", {"effect": lambda v: {"threshold": v}}, low=0.5, high=4.0)
    with pytest.raises(ValueError, match="must be one point of its design"):
        toy_claim(free_choices=(bad,))


def test_a_choice_that_sets_an_unknown_check_is_refused():
    bad = FreeChoice("threshold", 1.0, "r", {"nope": lambda v: {"threshold": v}}, low=0.5, high=4.0)
    with pytest.raises(ValueError, match="unknown check 'nope'"):
        toy_claim(free_choices=(bad,))


# --- the design ---------------------------------------------------------------------------------------------------

def test_design_is_the_grid_of_two_choices_with_the_claims_values_first():
    claim = toy_claim()
    d = sensitivity.design(claim, 3)
    assert d[0] == {"threshold": 1.0, "draws": 10}
    assert len(d) == 4 * 4  # each axis: 3 points over the range and the claim's own value (1.0; 10)
    assert sorted({s["threshold"] for s in d}) == pytest.approx([0.5, 1.0, 2 ** 0.5, 4.0])
    assert sorted({s["draws"] for s in d}) == [5, 10, 12, 20]


def test_a_design_larger_than_the_budget_allows_is_refused():
    with pytest.raises(sensitivity.DesignTooLarge, match="exceeds the quick budget's"):
        sensitivity.check_design_size(toy_claim(), "quick", 5)


def test_setting_units_rerun_only_the_checks_a_changed_choice_sets():
    claim = toy_claim()
    assert sensitivity.setting_units(claim, {"threshold": 1.0, "draws": 10}) == {}
    (u,) = sensitivity.setting_units(claim, {"threshold": 4.0, "draws": 10}).values()
    assert u.kind == "setting" and u.check == "effect" and dict(u.setting) == {"threshold": 4.0}


# --- the map ------------------------------------------------------------------------------------------------------

def test_the_map_finds_where_the_verdict_changes_and_what_it_depends_on(tmp_path):
    claim = toy_claim()
    (rec,) = sensitivity.run([claim], Context(seed=0, budget="standard"), tmp_path, Executor(workers=1), points=3)
    assert rec["verdict"] == "verified" and rec["of"] == 16
    assert rec["holds"] == 12  # threshold 4 fails at each of the four draw counts
    assert set(rec["depends_on"]) == {"threshold"} and not rec["robust"]
    assert "verified at threshold=1.41421, violated at threshold=4" in rec["depends_on"]["threshold"][0]
    assert rec["headline"].startswith("verified at 12 of 16 settings (controls re-run at 2 extreme settings); "
                                      "depends on threshold")
    assert sensitivity.read(tmp_path, "T.1", budget="standard", seed=0)["holds"] == 12
    # resumed: the same command again runs no unit
    ran = []
    sensitivity.run([claim], Context(seed=0, budget="standard"), tmp_path, _Counting(ran), points=3)
    assert ran == []


def check_blunt(ctx, draws, threshold=1.0, mutant=False, extra=1.0):
    """Passes below threshold 2; its mutant fails only on fewer than 15 draws (a control that stops biting)."""
    if mutant:
        return Outcome("fail" if len(draws) < 15 else "pass", f"mutant on {len(draws)} draws")
    return Outcome("pass" if threshold < 2.0 else "fail", f"threshold {threshold:g} on {len(draws)} draws")


def blunt_claim(threshold_analysis=True) -> Claim:
    return Claim(
        "T.2", "toy", r"x", "reconstructed", "toy",
        checks=(Check("effect", "numeric", "toy", check_blunt, uses={"draws": draws}),),
        controls=(Control("mutant", "effect", "a slip that only few draws expose", {"mutant": True}),),
        free_choices=(
            FreeChoice("threshold", 1.0, "how the effect is read", {"effect": lambda v: {"threshold": v}},
                       low=0.5, high=4.0, scale="log", analysis=threshold_analysis),
            FreeChoice("draws", 10, "any sample size", {"effect": lambda v: {"draws": draws.bind(n=v)}},
                       low=5, high=20, integer=True),
            FreeChoice("extra", 1.0, "a second run choice that changes nothing", {"effect": lambda v: {"extra": v}},
                       low=0.5, high=2.0)),
        module="tests.test_sensitivity")


def test_analysis_choices_are_crossed_with_every_run_setting_and_cost_no_run_setting():
    """Two run choices make a full grid; the analysis choice is crossed with each of its settings (not one at a time,
    as a third run choice would be), and only the run settings count against the budget."""
    claim = blunt_claim()
    d = sensitivity.design(claim, 3)
    runs = {(s["draws"], s["extra"]) for s in d}
    assert len(runs) == sensitivity.run_settings(claim, 3) == 4 * 4  # each: 3 points and its own value
    for r in runs:  # every reading at every run setting
        assert sorted(s["threshold"] for s in d if (s["draws"], s["extra"]) == r) == pytest.approx(
            [0.5, 1.0, 2 ** 0.5, 4.0])
    assert sensitivity.check_design_size(claim, "standard", 3) == len(d) == 16 * 4
    with pytest.raises(sensitivity.DesignTooLarge):  # 16 run settings: more than quick allows
        sensitivity.check_design_size(claim, "quick", 3)
    one_at_a_time = blunt_claim(threshold_analysis=False)  # three run choices
    assert len(sensitivity.design(one_at_a_time, 3)) == 1 + 3 + 3 + 3


def test_an_analysis_choice_that_sets_a_fixture_is_refused():
    bad = FreeChoice("draws", 10, "r", {"effect": lambda v: {"draws": draws.bind(n=v)}}, low=5, high=20,
                     integer=True, analysis=True)
    with pytest.raises(ValueError, match="analysis choice but sets a fixture"):
        toy_claim(free_choices=(bad,))


def test_controls_are_rerun_at_the_extreme_settings_that_verify(tmp_path):
    """At draws = 20 (the range's end) the checks pass but the control no longer bites: that setting is
    inconclusive, not verified; at draws = 12 (inside the range) the controls keep their outcome at our values."""
    claim = blunt_claim()
    (rec,) = sensitivity.run([claim], Context(seed=0, budget="standard"), tmp_path, Executor(workers=1), points=3)
    by = {(s["values"]["threshold"], s["values"]["draws"], s["values"]["extra"]): s for s in rec["settings"]}
    assert rec["of"] == 64
    at_end = by[(1.0, 20, 1.0)]
    assert at_end["controls_rerun"] == {"mutant": False} and at_end["verdict"] == "inconclusive"
    assert by[(1.0, 12, 1.0)]["controls_rerun"] == {} and by[(1.0, 12, 1.0)]["verdict"] == "verified"
    assert by[(1.0, 5, 1.0)]["controls_rerun"] == {"mutant": True} and by[(1.0, 5, 1.0)]["verdict"] == "verified"
    assert by[(4.0, 20, 1.0)]["verdict"] == "violated" and by[(4.0, 20, 1.0)]["controls_rerun"] == {}
    assert rec["controls_rerun_at"] >= 2 and "controls re-run at" in rec["headline"]
    # "verified at N of M" counts verdicts, so a setting held back by its control is not among the N
    assert rec["holds"] == sum(s["verdict"] == "verified" for s in rec["settings"]) < rec["checks_pass"]


@fixture
def rule_runs(ctx, step=1.0, rule="normalized"):
    """A toy fixture with the defect a map once found in a real claim: at any step but its own it rebuilds the rule
    by the claim's default, so a control's mutated rule is silently replaced by the claim's own there."""
    if step != 1.0:
        rule = "normalized"
    return [step * (2.0 if rule == "normalized" else 0.5)] * 4


def check_faster(ctx, runs):
    m = sum(runs) / len(runs)
    return Outcome("pass" if m > 1.0 else "fail", f"speed {m:g}", measurements=[Measurement("speed", m)])


def rebuilding_claim() -> Claim:
    return Claim(
        "T.3", "toy", r"x", "reconstructed", "toy",
        checks=(Check("faster", "numeric", "toy", check_faster, uses={"runs": rule_runs}),),
        controls=(Control("unnormalized", "faster", "the rule without its normalization",
                          {"runs": rule_runs.bind(rule="plain")}),),
        free_choices=(FreeChoice("step", 1.0, "any step", {"faster": lambda v: {"runs": rule_runs.bind(step=v)}},
                                 low=1.0, high=4.0),),
        module="tests.test_sensitivity")


def test_a_control_whose_mutant_a_setting_rebuilds_as_the_claims_own_is_named_in_the_map(tmp_path):
    """At step 4 the fixture rebuilds the control's rule as the claim's: the control then computes exactly its
    check's numbers, and the map says so at that setting (the reason, the row and the headline), while at our value
    the control is rejected and says nothing of the kind."""
    (rec,) = sensitivity.run([rebuilding_claim()], Context(seed=0, budget="quick"), tmp_path, Executor(workers=1),
                             points=2)
    by = {s["values"]["step"]: s for s in rec["settings"]}
    assert rec["verdict"] == "verified" and by[1.0]["controls_same_as_check"] == []
    assert by[4.0]["controls_rerun"] == {"unnormalized": False} and by[4.0]["verdict"] == "inconclusive"
    assert by[4.0]["controls_same_as_check"] == ["unnormalized"]
    assert "computed exactly the numbers its check did" in by[4.0]["reason"]
    assert "a control computed exactly its check's numbers" in rec["headline"]
    from verify import report, results

    (own,) = results.read_records(tmp_path)
    html = report.render([own], Context(seed=0, budget="quick"), "verify report", sensitivity={"T.3": rec})
    assert "not rejected here: unnormalized (its numbers are its check's)" in html


def test_a_control_and_a_setting_that_set_one_parameter_differently_are_never_merged():
    """Overrides of one fixture merge parameter by parameter; where a control and a setting set the same parameter to
    different values neither may win silently (the mutant lost, or the setting): the merge is refused, and the map
    leaves that control out at that setting.  The same value set twice is kept."""
    from theorems.claim import merge_overrides

    merged = merge_overrides([{"runs": rule_runs.bind(step=4.0)}, {"runs": rule_runs.bind(rule="plain")}], "toy")
    assert merged["runs"].plain_params() == {"step": 4.0, "rule": "plain"}
    twice = merge_overrides([{"runs": rule_runs.bind(step=4.0)}, {"runs": rule_runs.bind(step=4.0, rule="plain")}],
                            "toy")
    assert twice["runs"].plain_params() == {"step": 4.0, "rule": "plain"}
    with pytest.raises(ValueError, match="cannot be combined"):
        merge_overrides([{"runs": rule_runs.bind(step=4.0)}, {"runs": rule_runs.bind(step=2.0, rule="plain")}], "toy")
    claim = rebuilding_claim()
    object.__setattr__(claim, "controls", (Control("half step", "faster", "the step halved",
                                                   {"runs": rule_runs.bind(step=0.5)}),))
    assert sensitivity.control_units(claim, {"step": 4.0}) == {}


class _Counting(Executor):
    def __init__(self, ran):
        super().__init__(workers=1)
        self.ran = ran

    def run(self, todo, on_done, progress=lambda s: None, store=None):
        self.ran += todo
        super().run(todo, on_done, progress, store)


def test_a_setting_unit_runs_the_check_with_the_choice_as_overridden(tmp_path):
    claim = toy_claim()
    u = runner.setting_unit(claim, "effect", {"threshold": 4.0, "draws": 20})
    entry = runner.run_unit(claim, u, Context(seed=0))
    assert entry["status"] == "fail" and entry["summary"] == "threshold 4 on 20 draws"
    assert entry["setting"] == {"threshold": 4.0, "draws": 20}


def test_free_choices_and_no_free_choice_exclude_each_other():
    with pytest.raises(ValueError, match="keep one"):
        toy_claim(no_free_choice="the checks are exact")


def test_every_computed_claim_declares_its_free_choices():
    """A claim whose checks compute (numeric or probe) names the choices its checks make that the paper does not fix
    (instances, sizes, steps, readings), or says in one line why they make none, whatever its fidelity: an exact
    statement still leaves its instances to us."""
    from verify import registry

    bare = [c.id for c in registry.all_claims()
            if not c.not_checked
            and any(ch.kind in ("numeric", "probe") for ch in c.checks)
            and not (c.free_choices or c.no_free_choice)]
    assert not bare, f"claims without free choices or a no_free_choice reason: {bare}"


def test_the_claims_table_prefers_a_claims_standard_map_and_falls_back_to_its_quick_one(monkeypatch):
    from verify import readme

    def m(budget, holds):
        return {"budget": budget, "seed": 0, "code_hash": "h", "verdict": "verified", "holds": holds, "of": 4,
                "depends_on": []}

    published = {"quick": {"T.1": m("quick", 2), "T.2": m("quick", 3)}, "standard": {"T.1": m("standard", 4)}}
    monkeypatch.setattr(sensitivity, "load_published", lambda budget="standard": published[budget])
    rec = {"claim": {"id": "T.1", "paper": "T", "title": "t", "fidelity": "qualitative", "free_choices": [{}],
                     "findings": []}, "code_hash": "h", "verdict": "verified", "budget": "quick", "seed": 0,
           "reason": "", "checks": [], "controls": []}
    rec2 = {**rec, "claim": {**rec["claim"], "id": "T.2"}}
    monkeypatch.setattr(readme, "headline", lambda r: "")
    monkeypatch.setattr(readme, "_evidence", lambda r: "")
    text = readme.render([rec, rec2])
    assert "verified at 4 of 4" in text and "verified at 3 of 4" in text
    assert "quick budget, seed 0" in text and "standard budget, seed 0" in text


def test_values_of_a_design_keep_an_infinite_own_value_once():
    f = FreeChoice("cap", float("inf"), "an uncapped step is the paper's; 1-1e6 spans a cap that binds to one that never does",
                   {"effect": lambda v: {"threshold": 1.0}}, levels=(1.0, 1e6, float("inf")))
    assert sensitivity.values(f, 3).count(float("inf")) == 1


def test_the_report_and_the_readme_show_the_map(tmp_path):
    from verify import readme, report

    claim = toy_claim()
    ctx = Context(seed=0, budget="standard")
    (smap,) = sensitivity.run([claim], ctx, tmp_path, Executor(workers=1), points=3)
    (rec,) = [r for r in __import__("verify.results", fromlist=["x"]).read_records(tmp_path)]
    html = report.render([rec], ctx, "verify report", sensitivity={"T.1": smap})
    assert "verified at 12 of 16 settings; depends on threshold" in html and "plausible range" in html
    assert "the effect a figure must show" in html  # the reason for the range
    row = readme.render([rec], maps={"T.1": smap})
    assert "| verified at 12 of 16 (standard map); depends on threshold |" in row
    assert "| 2 declared, no map yet |" in readme.render([rec], maps={})


def _cli(argv, capsys, tmp_path):
    from verify import cli

    code = cli.main(argv + ["--results", str(tmp_path)])
    return code, capsys.readouterr().err.strip()


def test_bad_points_is_one_line_and_exit_2(capsys, tmp_path):
    assert _cli(["sensitivity", "--points", "1"], capsys, tmp_path) == (
        2, "verify: error: --points must be at least 2 (both ends of each range)")


def test_a_design_larger_than_the_budget_is_one_line_and_exit_2_before_anything_runs(capsys, tmp_path):
    from verify import registry

    claim = next((c for c in registry.all_claims() if c.free_choices), None)
    if claim is None:
        pytest.skip("no registered claim declares free choices")
    code, err = _cli(["sensitivity", "-k", claim.id, "--budget", "quick", "--points", "9"], capsys, tmp_path)
    assert code == 2 and "exceeds the quick budget's" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "units").exists()


def test_a_verdict_held_by_an_unrejected_control_still_shows_where_its_checks_change(tmp_path):
    """The control runs only at the claim's values; a toothless one keeps the verdict inconclusive at every setting,
    and the map must still say where the checks stop passing."""
    claim = toy_claim(controls=(Control("toothless", "effect", "passes", {"threshold": 1.5}),))
    (rec,) = sensitivity.run([claim], Context(seed=0, budget="standard"), tmp_path, Executor(workers=1), points=3)
    assert rec["verdict"] == "inconclusive" and rec["holds"] == 12 and rec["checks_pass"] == 12
    assert "threshold" in rec["depends_on"]
    assert ("inconclusive (checks pass) at threshold=1.41421, violated at threshold=4"
            in rec["depends_on"]["threshold"][0])


def test_a_report_without_maps_of_its_own_shows_the_published_map_of_the_same_code(tmp_path, monkeypatch):
    """A quick report draws no maps; it shows the published one of each claim's current code (standard preferred),
    marks it published, and tags the verdict with what it depends on.  A published map of other code is not shown."""
    from verify import report, results

    claim = toy_claim()
    ctx = Context(seed=0, budget="standard")
    (smap,) = sensitivity.run([claim], ctx, tmp_path, Executor(workers=1), points=3)
    published = {k: smap[k] for k in ("seed", "budget", "points", "code_hash", "verdict", "choices", "holds", "of",
                                      "checks_pass", "depends_on", "robust", "headline")}
    published["settings"] = [{k: s[k] for k in ("values", "changed", "verdict", "checks_status")}
                             for s in smap["settings"]]
    store = {"standard": {"T.1": published}, "quick": {"T.1": {**published, "budget": "quick", "holds": 1}}}
    monkeypatch.setattr(sensitivity, "load_published", lambda budget="standard": store[budget])
    assert sensitivity.published_maps({"T.1": smap["code_hash"]})["T.1"]["budget"] == "standard"
    assert sensitivity.published_maps({"T.1": "other code"}) == {}
    store["standard"]["T.1"] = {**published, "code_hash": "older"}
    assert sensitivity.published_maps({"T.1": smap["code_hash"]})["T.1"]["budget"] == "quick"
    (rec,) = results.read_records(tmp_path)
    html = report.render([rec], Context(seed=0, budget="quick"), "verify report",
                         sensitivity=sensitivity.published_maps({"T.1": smap["code_hash"]}))
    assert "the published one of this code" in html and "verify/published.json" in html
    assert 'class="depends"' in html and "depends on threshold</a>" in html


@pytest.mark.slow
def test_every_claim_with_free_choices_has_a_current_published_standard_map():
    """Before a release (the slow tier): every checked claim that declares free choices has a standard-budget map
    published for its current code, so the claims table's "holds at N of M" is of the code that ships."""
    from verify import registry

    have = sensitivity.published_maps({c.id: registry.code_hash(c) for c in registry.all_claims()})
    missing = [c.id for c in sensitivity.mapped(registry.all_claims())
               if c.id not in have or have[c.id]["budget"] != "standard"]
    assert not missing, "no current standard sensitivity map for: " + ", ".join(missing)


def test_a_map_reuses_the_own_run_a_confirmation_calibration_computed(tmp_path):
    """A map runs at the first confirmation seed, which the calibration in the same results directory ran first: the
    claim's own checks and controls are taken from there (the same budget, seed, device, code and libraries), and only
    the settings run."""
    from verify import calibrate, execution

    claim, ctx = toy_claim(), Context(seed=7, budget="standard")
    execution.execute([claim], ctx, calibrate.confirmation_dir(tmp_path, "standard", 0), Executor(workers=1))
    ran = []
    sensitivity.run([claim], ctx, tmp_path, _Counting(ran), points=3)
    assert ran and {u.kind for _, u, _ in ran} <= {"setting", "setting control"}
    ran_elsewhere = []  # at another seed nothing matches: the own run is computed
    sensitivity.run([claim], Context(seed=8, budget="standard"), tmp_path, _Counting(ran_elsewhere), points=3)
    assert {"check", "control"} <= {u.kind for _, u, _ in ran_elsewhere}


def test_a_map_takes_its_own_run_from_the_confirmation_calibration_in_its_results_directory(tmp_path):
    """A map runs each claim at its first confirmation seed, which a confirmation calibration in the same results
    directory computed already: its finished units are copied (the directory name carries budget, seed, code hash and
    library versions, so only the very same computation is taken), once, and units already there are kept."""
    from theorems.claim import Context
    from verify import calibrate, registry, results, sensitivity

    claim = next(c for c in registry.all_claims() if c.free_choices)
    ctx = Context(seed=123, budget="standard")
    dst = results.unit_dir(tmp_path, claim, ctx)
    src = tmp_path / calibrate.CALIBRATION / "standard" / "confirmation-x" / results.UNITS / claim.id / dst.name
    src.mkdir(parents=True)
    (src / "check-a.json").write_text("{}")
    other = tmp_path / calibrate.CALIBRATION / "standard" / "confirmation-x" / results.UNITS / claim.id / "other-run"
    other.mkdir(parents=True)
    (other / "check-b.json").write_text("{}")
    assert sensitivity.adopt_calibration_units([claim], lambda c: ctx, tmp_path) == 1
    assert (dst / "check-a.json").exists() and not (dst / "check-b.json").exists()
    assert sensitivity.adopt_calibration_units([claim], lambda c: ctx, tmp_path) == 0


# --- fixture values kept between the two phases of a map ---------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2], ids=["serial", "two workers"])
def test_the_controls_at_extreme_settings_read_the_fixture_values_their_settings_computed(tmp_path, monkeypatch,
                                                                                          workers):
    """T.205's control is re-run at n = 2 and n = 8 on the fixture values its settings computed: each (fixture, n) is
    computed once over both phases (without the store, the second phase computed ``doubled`` and ``draws`` again),
    in one process and on a 2-worker cluster; the store is gone once the map is written."""
    import toy_claims

    log = tmp_path / "computed.txt"
    monkeypatch.setenv("TOY_FIXTURE_LOG", str(log))  # before the cluster starts: its workers inherit it
    with Executor(workers=workers) as ex:
        (rec,) = sensitivity.run([toy_claims.MAPPED], Context(seed=3, budget="quick"), tmp_path / "res", ex)
    assert rec["controls_rerun_at"] == 2
    assert all(s["verdict"] == "verified" for s in rec["settings"])
    computed = sorted(log.read_text().splitlines())
    assert computed == sorted(["draws n=3 scale=1.0 seed=3", "draws n=2 scale=1.0 seed=3",
                               "draws n=8 scale=1.0 seed=3"] + ["doubled seed=3"] * 3), computed
    assert not (tmp_path / "res" / sensitivity.STORE_DIR).exists()


def test_a_kept_value_is_read_only_for_its_own_key_code_and_torch(tmp_path, monkeypatch):
    """The store keeps only the run keys it was given; a value is found again at the same request and run, and not
    after its fixture's code changed; a file that cannot be read is removed and reads as missing; a failed
    computation is never kept."""
    import toy_claims
    from theorems import fixture as fx
    from verify import registry, value_store

    ctx = Context(seed=1, budget="quick")
    kept, other = toy_claims.draws.bind(n=2), toy_claims.draws.bind(n=4)
    store = value_store.ValueStore(tmp_path / "store", {fx.run_key(kept, ctx)})
    assert store.path(other, ctx) is None
    path = store.path(kept, ctx)
    value_store.save(path, [1.0, 2.0])
    assert value_store.load(store.path(kept, ctx)) == [1.0, 2.0]
    assert store.path(kept, Context(seed=2, budget="quick")) is None  # another run: another key, not kept
    monkeypatch.setattr(registry, "modules_code_hash", lambda modules: "changed")
    assert value_store.load(value_store.ValueStore(tmp_path / "store", store.keep).path(kept, ctx)) \
        is value_store.MISSING
    path.write_bytes(b"not a pickle")
    assert value_store.load(path) is value_store.MISSING and not path.exists()
    value_store.save(path, fx.FixtureFailure(RuntimeError("no")))
    assert not path.exists()


def test_every_map_run_is_logged_and_leaves_the_calibrations_count_alone(tmp_path, monkeypatch, capsys):
    """A map at a claim's first confirmation seed is a look at that seed: each run, published or not, finished or
    interrupted, appends an entry to the confirmation log (mode "map"), which the count of confirmation runs before a
    calibration's publication does not read."""
    from verify import calibrate, cli, published, registry

    monkeypatch.setenv("VERIFY_PUBLISHED", str(tmp_path / "published.json"))
    claim = toy_claim()
    monkeypatch.setattr(registry, "select", lambda k: [claim])
    monkeypatch.setattr(registry, "all_claims", lambda: (claim,))
    monkeypatch.setattr(registry, "code_hash", lambda c, root=None: "hash-1")
    argv = ["sensitivity", "--budget", "quick", "--points", "2", "--workers", "1", "--results", str(tmp_path / "r")]
    assert cli.main(argv + ["--publish"]) == 0
    (entry,) = calibrate.read_log()
    seed = calibrate.first_confirmation_seeds([claim], "quick")["T.1"]
    assert (entry["mode"], entry["seeds"], entry["published"], entry["interrupted"]) == ("map", "confirmation", True,
                                                                                         False)
    assert entry["claims"]["T.1"] == {"code_hash": "hash-1", "seed": seed, "verdict": "verified", "holds": 6, "of": 9}
    assert published.load()["maps"]["quick"]["T.1"]["seed"] == seed

    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(sensitivity, "run", interrupted)
    assert cli.main(argv + ["--seed", "3"]) != 0
    last = calibrate.read_log()[-1]
    assert (last["seeds"], last["published"], last["interrupted"]) == ("development", False, True)
    assert last["claims"] == {"T.1": {"code_hash": "hash-1", "seed": 3}}
    assert calibrate.runs_before("T.1", "other", calibrate.read_log()) == 0  # maps are not calibration runs
    capsys.readouterr()
