"""Sensitivity of a verdict to the free choices: what a claim's verdict is at other plausible values of what we chose.

A claim declares the values its checks need that the papers do not fix (``theorems.claim.FreeChoice``: the value
used, a plausible range, the reason for it, and the checks it sets).  A verdict that changes inside that range is a
statement about our choice, not about the paper; this module finds out which it is.

Design.  Each choice is evaluated at ``points`` values spread over its range, ends included, and at its own value
(all its levels, for a choice with levels).  The choices that set what is computed (a step, a horizon, an instance)
make the *run design*: with one or two such choices their full grid; with more, one choice at a time, the others at
the claim's values (a full grid grows as points^k, and one-at-a-time attributes a change to one choice).  *Analysis*
choices (``FreeChoice(analysis=True)``: an effect size, a metric, a window, a significance factor: how the same runs
are read) are crossed with every setting of the run design (their full product), since re-deciding stored runs costs
no training: an effect size is never judged at our horizon only.  The claim's own run is one point of every design.
``POINTS`` gives the design per budget and ``MAX_SETTINGS`` the most run settings a claim may have at that budget
(``MAX_READINGS`` the most analysis combinations); a larger design is refused before anything runs.

What runs.  At a setting, only the checks the changed choices set are re-run (units of kind ``"setting"`` on the same
executor as any other unit, stored and resumed the same way, figures off); the other checks keep their outcomes at the
claim's values.  A map says "verified at N of M settings", so where a setting verifies its controls must still bite
there: at every *extreme* setting (each changed choice at an end of its range, or at another of its levels) whose checks
verify, the negative controls of the re-run checks are re-run with the setting's overrides and their own (units of kind
``"setting control"``), and the setting's verdict reads them; the fixture values those controls consume are kept on disk
from the first phase to the second (``verify.value_store``), so they are not computed twice.  Elsewhere the controls
keep their outcomes at the claim's values, and the map says at how many settings they were re-run.  A map runs by
default at each claim's first confirmation seed (``verify.calibrate``), never at a seed that chose anything.

The verdict at a setting follows the runner's rules (``verify.runner.verdict``).  The claim "holds at N of M
settings" when its verdict at N of the design's M settings equals its verdict at the claim's own values; it "depends
on" a choice when moving that choice alone changes the verdict or what its checks decide (a verdict held
inconclusive by an unrejected control does not move, but its checks still can), and the map says between which
values.  ``verify.record`` turns a map into a verdict class: a violation is reported as a finding about the paper
only when it holds at every setting of a map that varies every declared choice.
"""
from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any, Mapping

from theorems import fixture as fx
from theorems.claim import Claim, Context, worst_status
from verify import published, results, runner, value_store

#: points per choice (range ends included) by budget
POINTS = {"quick": 2, "standard": 3, "full": 5}
#: the most settings a claim's design may have at each budget (the claim's own values included)
MAX_SETTINGS = {"quick": 9, "standard": 16, "full": 36}
SENSITIVITY = "sensitivity"
#: where a map keeps the fixture values its controls at extreme settings consume, until it finishes (in its results
#: directory: what a resumed map reads)
STORE_DIR = "fixture-values"
#: the most combinations of analysis choices crossed with each run setting (re-decisions of stored runs: cheap)
MAX_READINGS = 64
#: the budgets whose report draws the maps (``verify report``); a quick report shows maps already stored
REPORT_BUDGETS = ("standard", "full")


class DesignTooLarge(ValueError):
    """A sensitivity design with more settings than the budget allows."""


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            x, y = float(a), float(b)
            return x == y or abs(x - y) <= 1e-12 * max(1.0, abs(x), abs(y))  # x == y: inf equals itself
        except (TypeError, ValueError):
            return False
    return a == b


def values(f, points: int) -> list:
    """The values of one choice in a design: ``points`` over its range and its own value, in order."""
    vals = list(f.points(points))
    if not any(_close(v, f.value) for v in vals):
        vals.append(f.value)
    return vals if f.levels else sorted(vals)


def _grid(choices, own: dict, points: int) -> list[dict]:
    """The run design over ``choices``: their full grid for one or two, one at a time for more."""
    axes = [values(f, points) for f in choices]
    if len(choices) <= 2:
        return [{**own, **dict(zip([f.name for f in choices], vals))} for vals in itertools.product(*axes)]
    return [{**own, f.name: v} for f, axis in zip(choices, axes) for v in axis]


def design(claim: Claim, points: int) -> list[dict]:
    """The settings (choice name -> value, every choice) of the claim's design, its own values first: the run design
    crossed with every combination of the analysis choices."""
    choices = claim.free_choices
    if not choices:
        return []
    own = {f.name: f.value for f in choices}
    run = [f for f in choices if not f.analysis]
    readings = [f for f in choices if f.analysis]
    grid = _grid(run, own, points) if run else [own]
    combos = [dict(zip([f.name for f in readings], vals))
              for vals in itertools.product(*[values(f, points) for f in readings])]
    out = [own]
    for s in grid:
        for a in combos:
            t = {**s, **a}
            if not any(all(_close(t[k], u[k]) for k in own) for u in out):
                out.append(t)
    return out


def run_settings(claim: Claim, points: int) -> int:
    """The number of distinct settings of the claim's run choices (what costs new runs)."""
    names = [f.name for f in claim.free_choices if not f.analysis]
    seen: list[tuple] = []
    for s in design(claim, points):
        key = tuple(s[n] for n in names)
        if not any(all(_close(a, b) for a, b in zip(key, k)) for k in seen):
            seen.append(key)
    return len(seen)


def extreme(claim: Claim, setting: dict) -> bool:
    """Whether every choice ``setting`` changes sits at an end of its range (or at another of its levels): where a
    map re-runs the controls of a setting that verifies.  The claim's own values are not extreme (nothing changed)."""
    moved = changed(claim, setting)
    if not moved:
        return False
    for k, v in moved.items():
        f = claim.free_choice(k)
        if not f.levels and not (_close(v, f.low) or _close(v, f.high)):
            return False
    return True


def mapped(claims) -> list[Claim]:
    """The claims that get a map: checked ones that declare free choices."""
    return [c for c in claims if c.free_choices and not c.not_checked]


def check_design_size(claim: Claim, budget: str, points: int) -> int:
    """The number of settings; refused (``DesignTooLarge``) when its run settings are more than the budget allows or
    its analysis combinations more than ``MAX_READINGS``."""
    n = run_settings(claim, points)
    if n > MAX_SETTINGS[budget]:
        raise DesignTooLarge(f"{claim.id}: a design of {n} settings ({points} points per free choice) exceeds the "
                             f"{budget} budget's {MAX_SETTINGS[budget]}; use fewer --points or a larger --budget")
    readings = 1
    for f in claim.free_choices:
        readings *= len(values(f, points)) if f.analysis else 1
    if readings > MAX_READINGS:
        raise DesignTooLarge(f"{claim.id}: its analysis choices make {readings} readings of each setting (at most "
                             f"{MAX_READINGS}); use fewer --points")
    return len(design(claim, points))


def changed(claim: Claim, setting: dict) -> dict:
    """The choices of ``setting`` that differ from the claim's values."""
    return {k: v for k, v in setting.items() if not _close(v, claim.free_choice(k).value)}


def setting_units(claim: Claim, setting: dict) -> dict[str, runner.Unit]:
    """Check name -> the unit that re-runs it at ``setting`` (only the checks the changed choices set)."""
    moved = changed(claim, setting)
    checks = [c.name for c in claim.checks if any(c.name in claim.free_choice(k).sets for k in moved)]
    return {c: runner.setting_unit(claim, c, {k: v for k, v in moved.items() if c in claim.free_choice(k).sets})
            for c in checks}


def plan(claim: Claim, points: int) -> list[runner.Unit]:
    """Every setting unit of the design, each once."""
    seen: dict[runner.Unit, None] = {}
    for s in design(claim, points):
        seen.update(dict.fromkeys(setting_units(claim, s).values()))
    return list(seen)


def _setting_checks(claim: Claim, record: dict, setting: dict, entries: dict) -> dict[str, dict]:
    base = {c["name"]: c for c in record["checks"]}
    return {**base, **{name: entries[u] for name, u in setting_units(claim, setting).items() if u in entries}}


def control_units(claim: Claim, setting: dict) -> dict[str, runner.Unit]:
    """Control name -> the unit that re-runs it at ``setting``: the controls of the checks the setting re-runs, where
    the control's overrides combine with the setting's (a control that sets what the setting sets is left out)."""
    rerun = set(setting_units(claim, setting))
    moved = changed(claim, setting)
    out = {}
    for k in claim.controls:
        if k.target not in rerun:
            continue
        try:
            runner.control_overrides_at(claim, k.name, moved)
        except ValueError:
            continue
        out[k.name] = runner.setting_control_unit(claim, k.name, {n: v for n, v in moved.items()
                                                                   if k.target in claim.free_choice(n).sets})
    return out


def control_plan(claim: Claim, record: dict, points: int, entries: dict) -> list[runner.Unit]:
    """The control units of the extreme settings whose checks all pass (``entries``: the setting units' outcomes)."""
    seen: dict[runner.Unit, None] = {}
    for s in design(claim, points):
        if not extreme(claim, s):
            continue
        checks = _setting_checks(claim, record, s, entries)
        if all(c["status"] == "pass" for c in checks.values()):
            seen.update(dict.fromkeys(control_units(claim, s).values()))
    return list(seen)


def _plain(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool, type(None))) else str(v)


def summarise(claim: Claim, record: dict, points: int, entries: dict[runner.Unit, dict]) -> dict:
    """The claim's sensitivity record: the verdict at each setting, how many agree with the claim's own verdict, which
    choices it depends on and where it changes."""
    base = {c["name"]: c for c in record["checks"]}
    rows = []
    for s in design(claim, points):
        units = setting_units(claim, s)
        checks = {**base, **{name: entries[u] for name, u in units.items()}}
        rerun = {name: entries[u] for name, u in control_units(claim, s).items() if u in entries}
        controls = [rerun.get(c["name"], c) for c in record["controls"]]
        v, reason = runner.verdict(claim, list(checks.values()), controls)
        rows.append({"values": {k: _plain(x) for k, x in s.items()}, "changed": sorted(changed(claim, s)),
                     "verdict": v, "reason": reason if v != "verified" else "",
                     "checks_status": worst_status(c["status"] for c in checks.values()) if checks else "pass",
                     "checks": {name: {"status": checks[name]["status"], "headline": checks[name].get("headline", ""),
                                       "summary": checks[name]["summary"]} for name in units},
                     "controls_rerun": {name: bool(e["rejected"]) for name, e in rerun.items()},
                     "controls_same_as_check": sorted(runner.controls_same_as_check(checks.values(),
                                                                                    rerun.values()))})
    own = record["verdict"]
    holds = sum(r["verdict"] == own for r in rows)
    checks_pass = sum(r["checks_status"] == "pass" for r in rows)
    depends = {}
    for f in claim.free_choices:
        others = [g.name for g in claim.free_choices if g.name != f.name]
        lines: dict[tuple, list] = {}
        for r in rows:
            lines.setdefault(tuple(str(r["values"][g]) for g in others), []).append(r)
        where = []
        for line in lines.values():
            if len({(r["verdict"], r["checks_status"]) for r in line}) > 1:
                where.append(_boundary(f, line))
        if where:
            depends[f.name] = where
    checks_note = (f" (its checks pass at {checks_pass})" if own != "verified" and 0 < checks_pass < len(rows)
                   and checks_pass != holds else "")
    controls_at = sum(bool(r["controls_rerun"]) for r in rows)
    if controls_at:
        checks_note += f" (controls re-run at {controls_at} extreme setting{'s' * (controls_at != 1)})"
    same = sum(bool(r["controls_same_as_check"]) for r in rows)
    if same:  # a mutant that did not reach the computation: a wiring defect, or a check blind to it there
        checks_note += (f" (at {same} setting{'s' * (same != 1)} a control computed exactly its check's numbers: its "
                        "mutant changed nothing the check computes there)")
    text = (f"{own} at {holds} of {len(rows)} settings{checks_note}"
            + ("; depends on " + "; ".join(f"{k} ({w[0]})" for k, w in depends.items()) if depends
               else "; the same across the plausible range"))
    return {
        "schema_version": results.SCHEMA_VERSION,
        "claim": claim.id, "seed": record["seed"], "budget": record["budget"], "points": points,
        "code_hash": record["code_hash"], "verdict": own,
        "choices": [{"name": f.name, "value": _plain(f.value), "range": f.range_text(), "reason": f.reason,
                     "checks": sorted(f.sets), "analysis": f.analysis} for f in claim.free_choices],
        "settings": rows, "holds": holds, "of": len(rows), "checks_pass": checks_pass, "depends_on": depends,
        "controls_rerun_at": controls_at,
        "robust": holds == len(rows), "headline": text, "created_utc": results.now_utc(),
    }


def _boundary(f, line: list[dict]) -> str:
    """Where the verdict changes along one line of the design (``f`` varies, the other choices fixed)."""
    def key(r):
        v = r["values"][f.name]
        return f.levels.index(v) if f.levels and v in f.levels else (v if isinstance(v, (int, float)) else 0)

    def outcome(r):  # the verdict, or where it does not move (a control decides it), what the checks did
        return f"{r['verdict']} (checks {r['checks_status']})" if r["verdict"] == "inconclusive" \
            and r["checks_status"] != "inconclusive" else r["verdict"]

    line = sorted(line, key=key)
    parts, prev = [], None
    for r in line:
        if prev is not None and outcome(r) != outcome(prev):
            parts.append(f"{outcome(prev)} at {f.label(prev['values'][f.name])}, {outcome(r)} at "
                         f"{f.label(r['values'][f.name])}")
        prev = r
    return "; ".join(parts)


def record_path(results_dir: Path, claim_id: str) -> Path:
    return Path(results_dir) / SENSITIVITY / f"{claim_id}.json"


def read(results_dir: Path, claim_id: str, *, budget: str | None = None, seed: int | None = None,
         code_hash: str | None = None) -> dict | None:
    """A stored sensitivity record, if it is of that budget, seed and code."""
    try:
        rec = json.loads(record_path(results_dir, claim_id).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    want = {"budget": budget, "seed": seed, "code_hash": code_hash}
    return rec if all(v is None or rec.get(k) == v for k, v in want.items()) else None


def adopt_calibration_units(claims: list[Claim], run_of, results_dir: Path) -> int:
    """Copy into ``results_dir`` the finished units of each claim's own run that a confirmation calibration in the same
    directory already computed (a map runs at the first confirmation seed, which the calibration ran first); returns
    how many were copied.  A unit directory's name holds the budget, seed, device, code hash and library versions
    (``results.unit_dir``), so only a unit of the very same computation is taken; units already there are kept."""
    import shutil

    from verify import calibrate

    copied = 0
    for c in claims:
        dst = results.unit_dir(results_dir, c, run_of(c))
        base = Path(results_dir) / calibrate.CALIBRATION / run_of(c).budget
        for src in sorted(base.glob(f"confirmation*/{results.UNITS}/{c.id}/{dst.name}")):
            for f in sorted(src.iterdir()):
                if f.is_file() and not (dst / f.name).exists():
                    dst.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f, dst / f.name)
                    copied += 1
    return copied


def run(claims: list[Claim], ctx: "Context | Mapping[str, Context]", results_dir: Path, executor, *,
        points: int | None = None, rerun: bool = False, write: bool = True) -> list[dict]:
    """The sensitivity records of ``claims`` (those with free choices) at ``ctx`` (one run for all, or a run per
    claim id): their own runs (stored ones reused, and those a confirmation calibration in ``results_dir`` computed:
    :func:`adopt_calibration_units`), every setting unit of their designs, then the controls at the extreme settings
    that verify, on ``executor``, each finished unit kept for resume."""
    from verify import execution

    run_of = runner.run_of(ctx)
    claims = mapped(claims)
    if not claims:
        return []
    budget = run_of(claims[0]).budget
    points = POINTS[budget] if points is None else points
    for c in claims:
        check_design_size(c, budget, points)
    if not rerun:
        adopted = adopt_calibration_units(claims, run_of, results_dir)
        if adopted:
            print(f"own runs: {adopted} finished units taken from the confirmation calibration in {results_dir}",
                  file=sys.stderr)
    records, _ = execution.execute(claims, ctx, results_dir, executor, reuse_records=True, rerun=rerun)
    by_id = {r["claim"]["id"]: r for r in records}
    entries: dict[str, dict] = {c.id: {} for c in claims}

    store = value_store.ValueStore(results_dir / STORE_DIR, {
        fx.run_key(r, run_of(c)) for c in claims for s in design(c, points) if extreme(c, s)
        for u in control_units(c, s).values() for r in fx.closure(runner.unit_requests(c, u).values())})

    def phase(units_of, label: str) -> None:
        todo = []
        for c in claims:
            directory = results.unit_dir(results_dir, c, run_of(c))
            for u in units_of(c):
                e = None if rerun else results.load_unit(results.unit_path(directory, u))
                if e is None:
                    todo.append((c, u, run_of(c)))
                else:
                    entries[c.id][u] = e

        def on_done(claim: Claim, u: runner.Unit, entry: dict, ok: bool) -> None:
            if ok:
                results.save_unit(results.unit_path(results.unit_dir(results_dir, claim, run_of(claim)), u), entry)
            entries[claim.id][u] = entry
            bar.update(1)

        bar = execution.progress_bar(len(todo), f"{label} ({budget})")
        try:
            executor.run(todo, on_done, progress=lambda s: bar.set_postfix_str(s[:60]), store=store)
        finally:
            bar.close()

    phase(lambda c: plan(c, points), "settings")
    phase(lambda c: control_plan(c, by_id[c.id], points, entries[c.id]), "controls at extreme settings")
    store.clear()
    out = []
    for c in claims:
        rec = summarise(c, by_id[c.id], points, entries[c.id])
        if write:
            results.atomic_write_text(record_path(results_dir, c.id), json.dumps(rec, indent=1, sort_keys=True))
        out.append(rec)
    return out


def publish(records: list[dict], budget: str) -> Path:
    """The maps without per-check detail, merged into the published store's maps of ``budget`` (``verify.published``;
    the claims table's "holds at N of M" and the verdict classes read them)."""
    store = published.load()
    have = store["maps"].setdefault(budget, {})
    for r in records:
        have[r["claim"]] = {k: r[k] for k in ("seed", "budget", "points", "code_hash", "verdict", "choices", "holds",
                                              "of", "checks_pass", "depends_on", "robust", "headline",
                                              "controls_rerun_at")} | {
            "settings": [{k: s[k] for k in ("values", "changed", "verdict", "checks_status", "controls_rerun")}
                         | ({"controls_same_as_check": s["controls_same_as_check"]}
                            if s.get("controls_same_as_check") else {}) for s in r["settings"]]}
    store["maps"][budget] = dict(sorted(have.items()))
    return published.save(store)


def log_run(maps: list[dict], budget: str, *, confirmation: bool, published_too: bool,
            selected: dict[str, dict] | None = None) -> dict:
    """Append one entry for a map run to the confirmation log (``verify.published``): a map at a claim's first
    confirmation seed is a look at that seed, so it leaves a trace as a calibration run does.  Per claim its code hash,
    seed and what the map found; ``selected`` (claim id -> code hash and seed) stands in for ``maps`` when the run was
    interrupted before any map was summarised.  ``mode`` "map" keeps these entries out of the count of confirmation runs
    before a calibration's publication (``verify.calibrate.runs_before``)."""
    claims = {m["claim"]: {"code_hash": m["code_hash"], "seed": m["seed"], "verdict": m["verdict"],
                           "holds": m["holds"], "of": m["of"]} for m in maps} or dict(selected or {})
    entry = {**published.stamp(), "budget": budget, "mode": "map", "seeds": "confirmation" if confirmation
             else "development", "published": bool(published_too), "interrupted": not maps and bool(selected),
             "claims": claims}
    published.append_log(entry)
    return entry


def load_published(budget: str = "standard") -> dict:
    """The published maps of ``budget`` (claim id -> map)."""
    return published.load()["maps"].get(budget, {})


def published_maps(code_hashes: dict[str, str], *, older: bool = False) -> dict[str, dict]:
    """Per claim (id -> its current code hash), the published map to show: the standard budget's where it measures
    that code (``verify.published.current``: the same code, or carried forward to it), else the quick budget's where
    it does.  A claim whose published maps are all of older code has none here (a map of other code says nothing about
    this code's verdicts), unless ``older``: then its standard or quick map, for a caller that says it is of older
    code.  Each map says which: ``current`` (and ``carried`` when carried forward)."""
    by_budget = {b: load_published(b) for b in ("standard", "quick")}
    carried = published.load()["carried"]
    out = {}
    for cid, h in code_hashes.items():
        have = [(b, maps[cid]) for b, maps in by_budget.items() if cid in maps]
        now = [m for b, m in have if published.current(cid, m["code_hash"], h, carried, b)]
        m = now[0] if now else (have[0][1] if older and have else None)
        if m is not None:
            out[cid] = {"claim": cid, **m, "published": True, "current": bool(now),
                        "carried": bool(now) and m["code_hash"] != h}
    return out
