"""``verify carry``: a change that keeps its numbers keeps its published measurements; one that moves a number does
not.  Shown end to end in a scratch git repository holding a copy of the project and one cheap claim (the template
``verify new`` writes), with a published calibration row of its committed code."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_add_a_claim import scratch_copy

CLAIM = "X.L1"


def _run(root: Path, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for name in ("VERIFY_PUBLISHED", "VERIFY_STORE_RESULTS", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    return subprocess.run(list(argv), cwd=root, env=env, capture_output=True, text=True, timeout=600, check=check)


def _verify(root: Path, *argv: str) -> subprocess.CompletedProcess:
    return _run(root, sys.executable, "-m", "verify.cli", *argv)


def _store(root: Path) -> dict:
    return json.loads((root / "verify" / "published.json").read_text())


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, Path]:
    """A committed copy of the project with the template claim and a published quick row of its code."""
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not available")
    root = scratch_copy(tmp_path_factory.mktemp("carry") / "project")
    _verify(root, "new", CLAIM)
    from verify import carry

    hashes = carry.code_hashes_at(root)
    store = _store(root)
    store["calibration"]["quick"] = {"budget": "quick", "mode": "confirmation", "n_seeds": 1, "papers": {},
                                     "claims": [{"id": CLAIM, "code_hash": hashes[CLAIM], "seed_basis": "b",
                                                 "seeds": [1], "verdicts": {"1": "verified"}, "checks": {},
                                                 "controls": {}}]}
    store["maps"], store["carried"] = {}, {}
    (root / "verify" / "published.json").write_text(json.dumps(store))
    _run(root, "git", "init", "-q")
    _run(root, "git", "add", "-A")
    _run(root, "git", "commit", "-qm", "published")
    module = next((root / "theorems" / "paper_x").glob("l1_*.py"))
    return root, module


@pytest.mark.slow
def test_a_change_that_keeps_the_numbers_carries_the_measurements_and_one_that_moves_them_does_not(project):
    root, module = project
    text = module.read_text()
    module.write_text(text.replace('"""', '"""A rewording of the prose; no number moves.\n\n', 1))
    out = _verify(root, "carry", "--from", "HEAD", "-k", CLAIM, "--results", str(root / "r")).stdout
    assert f"{CLAIM}" in out and "carried" in out, out
    store = _store(root)
    carried = store["carried"][CLAIM]
    assert carried["to"] != carried["from"][0] and len(carried["canary"]["digests"]) == 2
    row = store["calibration"]["quick"]["claims"][0]
    assert row["seeds"] == [1] and row["code_hash"] == carried["from"][0]  # its seeds stay those of its code
    read = ("from verify import calibrate; c = calibrate.load_summary(None, 'quick')['claims'][0]; "
            "print(c['stale'], c['carried'])")
    assert _run(root, sys.executable, "-c", read).stdout.split() == ["False", "True"]  # current again, carried
    # a deliberate numeric change: more draws move every interval
    module.write_text(module.read_text().replace("DRAWS = (4000, 20000, 50000)", "DRAWS = (4100, 20000, 50000)"))
    out = _verify(root, "carry", "--from", "HEAD", "-k", CLAIM, "--results", str(root / "r3")).stdout
    assert "differs" in out and CLAIM not in _store(root)["carried"], out
    assert _run(root, sys.executable, "-c", read).stdout.split() == ["True", "False"]  # of older code again


def _rec(cid: str, value: float) -> dict:
    return {"claim": {"id": cid}, "verdict": "verified", "seed": 0, "budget": "quick", "controls": [],
            "checks": [{"name": "a", "status": "pass", "summary": "reworded freely",
                        "measurements": [{"name": "m", "value": value, "lo": value - 1, "hi": value + 1}],
                        "details": {"decisions": [{"name": "m", "status": "pass", "lo": value - 1, "hi": value + 1,
                                                   "band": [-5, 5]}]}}]}


def test_carry_compares_the_canary_records_and_records_the_proof(tmp_path, monkeypatch):
    """The decision, without subprocesses: a claim whose canary records are identical at every canary seed is carried
    (from the measured hash to the current one, with the digests); one whose numbers moved is not, and loses an
    earlier carry; a claim whose measurements are of its current code needs nothing."""
    from types import SimpleNamespace

    from verify import carry, published, registry

    monkeypatch.setenv("VERIFY_PUBLISHED", str(tmp_path / "published.json"))
    rows = [{"id": cid, "code_hash": "old-" + cid} for cid in ("X.1", "X.2")] + [{"id": "X.3", "code_hash": "now-X.3"}]
    published.update("calibration", "quick", {"mode": "confirmation", "claims": rows})
    published.update("carried", "X.2", {"from": ["old-X.2"], "to": "earlier"})
    claims = [SimpleNamespace(id=cid) for cid in ("X.1", "X.2", "X.3")]
    monkeypatch.setattr(registry, "code_hash", lambda c, root=None: "now-" + c.id)
    monkeypatch.setattr(carry, "worktree", lambda rev, where: tmp_path / "then")
    monkeypatch.setattr(carry, "code_hashes_at", lambda root: {c.id: "old-" + c.id for c in claims})
    moved = {"X.1": 0.0, "X.2": 0.5}

    def run_at(root, ids, budget, seed, results_dir, workers):
        now = root == carry.ROOT
        return {cid: _rec(cid, 1.0 + seed + (moved[cid] if now else 0.0)) for cid in ids}

    monkeypatch.setattr(carry, "run_at", run_at)
    commits = iter(["abc1234", "def5678"])  # a commit made while the canary runs is not the code it measured
    monkeypatch.setattr(published, "stamp", lambda: {"time": "t", "commit": next(commits), "dirty": True})
    got = {r["id"]: r["status"] for r in carry.carry("HEAD", claims, workdir=tmp_path)}
    assert got == {"X.1": "carried", "X.2": "differs", "X.3": "current"}
    store = published.load()
    assert store["carried"]["X.1"]["from"] == ["old-X.1"] and store["carried"]["X.1"]["to"] == "now-X.1"
    assert store["carried"]["X.1"]["commit"] == "abc1234" and store["carried"]["X.1"]["dirty"] is True
    assert set(store["carried"]["X.1"]["canary"]["digests"]) == {"quick-seed0", "quick-seed1"}
    assert store["carried"]["X.1"]["rev"] == carry.commit_of("HEAD")[:7] != "HEAD"  # the commit, not a name that moves
    assert "X.2" not in store["carried"]
    assert published.current("X.1", "old-X.1", "now-X.1") and not published.current("X.2", "old-X.2", "now-X.2")
    assert carry.differences(_rec("X.1", 1.0), _rec("X.1", 1.5)) == ["check 'a'"]
    assert carry.digest(_rec("X.1", 1.0)) == carry.digest({**_rec("X.1", 1.0), "reason": "other words"})


def test_the_canary_sees_every_number_of_checks_and_controls_and_no_text():
    """A moved number anywhere a verdict can come from is a difference: a control's measurement, an interval whose
    centre stayed, a decision's band; reworded text is not."""
    import copy

    from verify import carry

    base = _rec("X.1", 1.0)
    base["controls"] = [{**copy.deepcopy(base["checks"][0]), "name": "k", "status": "fail", "target": "a"}]

    def moved(edit) -> list[str]:
        rec = copy.deepcopy(base)
        edit(rec)
        return carry.differences(base, rec)

    assert moved(lambda r: r["controls"][0]["measurements"][0].update(value=1.5)) == ["control 'k'"]
    assert moved(lambda r: r["checks"][0]["measurements"][0].update(lo=-0.5)) == ["check 'a'"]
    assert moved(lambda r: r["controls"][0]["details"]["decisions"][0].update(band=[-4, 4])) == ["control 'k'"]
    assert moved(lambda r: r["controls"][0].update(summary="other words", description="reworded")) == []


def test_a_carry_of_one_budgets_rows_runs_its_canary_there_and_leaves_the_other_budget_older(tmp_path, monkeypatch):
    """A change to the quick budget's path alone (its sizes): ``rows=("standard",)`` runs the canary at the standard
    budget only and carries the standard row and map (their seeds kept), while the quick row stays of older code
    until it is re-run; a claim whose standard numbers moved is not carried.  Asking for rows the canary does not run
    at is refused."""
    from types import SimpleNamespace

    import pytest

    from verify import calibrate, carry, published, registry

    monkeypatch.setenv("VERIFY_PUBLISHED", str(tmp_path / "published.json"))
    for budget in ("quick", "standard"):
        published.update("calibration", budget, {"mode": "confirmation", "claims": [
            {"id": cid, "code_hash": "old-" + cid, "seed_basis": "basis-then"} for cid in ("X.1", "X.2")]})
    published.update("maps", "standard", {"X.1": {"code_hash": "old-X.1"}})
    claims = [SimpleNamespace(id=cid) for cid in ("X.1", "X.2")]
    monkeypatch.setattr(registry, "code_hash", lambda c, root=None: "now-" + c.id)
    monkeypatch.setattr(registry, "code_hashes", lambda: {c.id: "now-" + c.id for c in claims})
    monkeypatch.setattr(carry, "worktree", lambda rev, where: tmp_path / "then")
    monkeypatch.setattr(carry, "code_hashes_at", lambda root: {c.id: "old-" + c.id for c in claims})
    ran = []

    def run_at(root, ids, budget, seed, results_dir, workers):
        ran.append(budget)
        moved = 0.5 if root == carry.ROOT else 0.0
        return {cid: _rec(cid, 1.0 + seed + (moved if cid == "X.2" else 0.0)) for cid in ids}

    monkeypatch.setattr(carry, "run_at", run_at)
    with pytest.raises(ValueError, match="canary at those budgets"):
        carry.carry("HEAD", claims, workdir=tmp_path, rows=("standard",))
    got = {r["id"]: r["status"] for r in carry.carry("HEAD", claims, workdir=tmp_path, budgets=("standard",),
                                                     rows=("standard",))}
    assert got == {"X.1": "carried", "X.2": "differs"} and set(ran) == {"standard"}
    store = published.load()
    assert store["carried"]["X.1"]["budgets"] == ["standard"]
    assert published.current("X.1", "old-X.1", "now-X.1", store["carried"], "standard")
    assert not published.current("X.1", "old-X.1", "now-X.1", store["carried"], "quick")
    row = {"code_hash": "old-X.1", "seed_basis": "basis-then"}
    assert published.row_state("X.1", row, "now-X.1", store["carried"], "basis-now", "standard") == "carried"
    assert published.row_state("X.1", row, "now-X.1", store["carried"], "basis-now", "quick") == "older"
    # the standard row keeps the seeds it was measured at; the quick calibration is drawn at the new code's
    monkeypatch.setattr(calibrate, "seed_bases", lambda cs: {getattr(c, "id", c): "basis-now" for c in cs})
    assert calibrate.carried_bases("standard", {"X.1": "basis-now"}) == {"X.1": "basis-then"}
    assert calibrate.carried_bases("quick", {"X.1": "basis-now"}) == {}
    first = calibrate.confirmation_seeds
    assert calibrate.first_confirmation_seeds(["X.1"], "standard") == {"X.1": first("basis-then", 1)[0]}
    assert calibrate.first_confirmation_seeds(["X.1"], "quick") == {"X.1": first("basis-now", 1)[0]}


def test_a_claim_carried_already_is_not_carried_again_for_its_rows_of_older_code(tmp_path, monkeypatch):
    """A claim carried forward to its current code by an earlier carry (here with the standard canary too) whose other
    published rows are of code before the revision (a map of ancient code) is left as it is: no canary runs, and the
    earlier carry's proof is not replaced by a weaker one."""
    from types import SimpleNamespace

    from verify import carry, published, registry

    monkeypatch.setenv("VERIFY_PUBLISHED", str(tmp_path / "published.json"))
    published.update("calibration", "quick", {"mode": "confirmation", "claims": [
        {"id": "X.1", "code_hash": "old-X.1", "seed_basis": "b"}]})
    published.update("maps", "standard", {"X.1": {"code_hash": "ancient-X.1"}})
    earlier = {"from": ["old-X.1"], "to": "now-X.1", "canary": {"budgets": ["quick", "standard"]}}
    published.update("carried", "X.1", earlier)
    claims = [SimpleNamespace(id="X.1")]
    monkeypatch.setattr(registry, "code_hash", lambda c, root=None: "now-" + c.id)
    monkeypatch.setattr(carry, "worktree", lambda rev, where: tmp_path / "then")
    monkeypatch.setattr(carry, "code_hashes_at", lambda root: {"X.1": "old-X.1"})

    def run_at(*args, **kwargs):
        raise AssertionError("no canary is needed")

    monkeypatch.setattr(carry, "run_at", run_at)
    got = carry.carry("HEAD", claims, workdir=tmp_path)
    assert [(r["id"], r["status"]) for r in got] == [("X.1", "current")] and "carried already" in got[0]["why"]
    assert published.load()["carried"]["X.1"] == earlier


def test_a_claim_whose_fixture_mate_changed_is_carried_without_a_canary(tmp_path, monkeypatch):
    """A claim whose own code is unchanged computes the same numbers at any seed; only its seed basis moved with a
    mate's code.  It is carried (its rows keep their seeds) without canary runs; one whose basis did not move is
    current; a claim already carried is not carried again; one unchanged since the revision whose other rows are of
    code before it is left as it is (nothing to compare)."""
    from types import SimpleNamespace

    from verify import calibrate, carry, published, registry

    monkeypatch.setenv("VERIFY_PUBLISHED", str(tmp_path / "published.json"))
    rows = [{"id": cid, "code_hash": "now-" + cid, "seed_basis": "basis-then"} for cid in ("X.4", "X.5", "X.6")]
    rows.append({"id": "X.7", "code_hash": "now-X.7", "seed_basis": "basis-now"})
    published.update("calibration", "quick", {"mode": "confirmation", "claims": rows})
    # X.7's standard row is of code before the revision (and of its seed basis then): not carried, not a mate
    published.update("calibration", "standard", {"mode": "confirmation", "claims": [
        {"id": "X.7", "code_hash": "ancient-X.7", "seed_basis": "basis-ancient"}]})
    published.update("carried", "X.6", {"from": ["older-X.6"], "to": "now-X.6"})
    claims = [SimpleNamespace(id=cid) for cid in ("X.4", "X.5", "X.6", "X.7")]
    monkeypatch.setattr(registry, "code_hash", lambda c, root=None: "now-" + c.id)
    monkeypatch.setattr(calibrate, "seed_bases", lambda cs: {"X.4": "basis-now", "X.5": "basis-then",
                                                             "X.6": "basis-now", "X.7": "basis-now"})
    monkeypatch.setattr(carry, "worktree", lambda rev, where: tmp_path / "then")
    monkeypatch.setattr(carry, "code_hashes_at", lambda root: {c.id: "now-" + c.id for c in claims})

    def run_at(*args, **kwargs):
        raise AssertionError("no canary is needed")

    monkeypatch.setattr(carry, "run_at", run_at)
    got = {r["id"]: r["status"] for r in carry.carry("HEAD", claims, workdir=tmp_path)}
    assert got == {"X.4": "carried", "X.5": "current", "X.6": "current", "X.7": "unchanged"}
    assert "X.7" not in published.load()["carried"]
    store = published.load()
    assert store["carried"]["X.4"]["from"] == ["now-X.4"] and store["carried"]["X.4"]["to"] == "now-X.4"
    assert store["carried"]["X.6"] == {"from": ["older-X.6"], "to": "now-X.6"}
    assert published.current("X.4", "now-X.4", "now-X.4")


def test_each_canary_run_has_its_own_empty_example_database(tmp_path, monkeypatch):
    """The standard profile's probes replay what their hypothesis example database holds first, so a canary run that
    used its checkout's database (its history of standard runs) could differ from the other version's for that reason
    alone: each run gets a database of its own, inside its results directory."""
    from verify import carry

    seen = []

    def fake_run(argv, cwd, env, **kwargs):
        seen.append(env["VERIFY_HYPOTHESIS_DB"])
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(carry.subprocess, "run", fake_run)
    for version in ("then", "now"):
        carry.run_at(tmp_path, ["X.1"], "standard", 0, tmp_path / f"{version}-standard-seed0", 1)
    assert seen == [str(tmp_path / "then-standard-seed0" / "hypothesis-db"),
                    str(tmp_path / "now-standard-seed0" / "hypothesis-db")]


def test_a_canary_that_differs_keeps_the_carry_that_made_the_rows_current_at_the_revision(tmp_path, monkeypatch):
    """A claim whose rows are current at the revision only through an earlier carry (to the revision's code) keeps
    that carry when the canary differs: a later carry from the same revision (the canary re-run, the change fixed)
    then carries the rows again, instead of finding them of older code."""
    from types import SimpleNamespace

    from verify import carry, published, registry

    monkeypatch.setenv("VERIFY_PUBLISHED", str(tmp_path / "published.json"))
    published.update("calibration", "quick", {"mode": "confirmation", "claims": [{"id": "X.1", "code_hash": "ancient"}]})
    published.update("carried", "X.1", {"from": ["ancient"], "to": "old-X.1"})
    claims = [SimpleNamespace(id="X.1")]
    monkeypatch.setattr(registry, "code_hash", lambda c, root=None: "now-" + c.id)
    monkeypatch.setattr(carry, "worktree", lambda rev, where: tmp_path / "then")
    monkeypatch.setattr(carry, "code_hashes_at", lambda root: {"X.1": "old-X.1"})
    shift = {"value": 0.5}
    monkeypatch.setattr(carry, "run_at", lambda root, ids, budget, seed, results_dir, workers: {
        cid: _rec(cid, 1.0 + seed + (shift["value"] if root == carry.ROOT else 0.0)) for cid in ids})
    assert [r["status"] for r in carry.carry("HEAD", claims, workdir=tmp_path)] == ["differs"]
    assert published.load()["carried"]["X.1"] == {"from": ["ancient"], "to": "old-X.1"}
    shift["value"] = 0.0
    assert [r["status"] for r in carry.carry("HEAD", claims, workdir=tmp_path)] == ["carried"]
    assert published.current("X.1", "ancient", "now-X.1")
