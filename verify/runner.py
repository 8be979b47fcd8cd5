"""Run a claim's checks and controls and turn their outcomes into a verdict.

Verdict rules (a claim is only as good as its weakest evidence):

* ``not checked``: the claim says why it cannot be checked here;
* ``violated``: some check came back ``fail`` (a bug in our code, an error in our
  reconstruction, or an error in the paper: the record says which check and why);
* ``inconclusive``: a check was inconclusive or raised, or **a negative control was
  not rejected** (then the check cannot discriminate and its pass means nothing);
* ``verified``: every check passed and every control was rejected.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping

from theorems import fixture as fx
from theorems.claim import (Assumption, Claim, Context, Control, FreeChoice, Outcome, ScopeFilter,
                            merge_overrides)
from verify import ledger, registry, results

Progress = Callable[[str], None]


def run_control(claim: Claim, control: Control, ctx: Context, fixtures: Mapping[str, Any] | None = None) -> Outcome:
    """The control's target check, called with the control's overrides and no figures."""
    return claim.check(control.target).run(replace(ctx, figures=False), fixtures, **control.overrides)


def _plain(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool, type(None))) else results.stable_repr(v)


def _overrides_dict(control: Control) -> dict:
    plain = (int, float, str, bool, type(None))
    return {k: v if isinstance(v, plain) else results.stable_repr(v) for k, v in control.overrides.items()}


#: frames of a raised check's traceback kept in its record (the innermost ones locate it)
TRACEBACK_FRAMES = 12
#: characters of a raised check's message kept in its record
ERROR_CHARS = 4000


#: errors that are a race in a library, not a property of the claim: hypothesis's lambda descriptions (a strategy's
#: repr, which a probe's database key reads) iterate ``sys.modules`` uncopied, while a Dask worker's other thread may be
#: importing a module for an incoming message.  A unit is deterministic given its seed and inputs, so it is run once
#: more, from the start; a second occurrence is reported as any raised check is
TRANSIENT_ERRORS = ("dictionary changed size during iteration",)


def _transient(e: Exception) -> bool:
    return isinstance(e, RuntimeError) and str(e) in TRANSIENT_ERRORS


def _run_one(fn, ctx: Context) -> tuple[Outcome, float]:
    t0 = time.perf_counter()
    try:
        try:
            out = fn(ctx)
        except Exception as e:
            if not _transient(e):
                raise
            out = fn(ctx)
    except Exception as e:  # a crashing check is reported, never silently passed
        # the exception's type and message, first line first: the last line alone can be a note hypothesis added
        # (a falsifying example's closing ")"), which says nothing about where the check crashed
        error = "".join(traceback.format_exception_only(type(e), e)).strip()[:ERROR_CHARS]
        # the innermost frames, so an error seen once on a worker can be located from its record
        frames = traceback.format_list(traceback.extract_tb(e.__traceback__)[-TRACEBACK_FRAMES:])
        out = Outcome("inconclusive", f"check raised {error.splitlines()[0]}",
                      details={"error": error, "traceback": "".join(frames)})
        out.details["raised"] = True
    return out, time.perf_counter() - t0


def verdict(claim: Claim, checks: list[dict], controls: list[dict]) -> tuple[str, str]:
    if claim.not_checked:
        return "not checked", claim.not_checked
    failed = [c for c in checks if c["status"] == "fail"]
    if failed:
        return "violated", "; ".join(f"{c['name']}: {c['summary']}" for c in failed)
    unrejected = [c for c in controls if not c["rejected"]]
    vague = [c for c in checks if c["status"] not in ("pass", "fail")]
    if vague or unrejected:
        same = controls_same_as_check(checks, unrejected)
        why = [f"{c['name']}: {c['summary']}" for c in vague]
        why += [f"control '{c['name']}' was not rejected by '{c['target']}'"
                + (SAME_AS_CHECK if c["name"] in same else "") for c in unrejected]
        return "inconclusive", "; ".join(why)
    return "verified", f"{evidence_count(checks)} passed, {len(controls)} negative controls rejected"


#: what a verdict's reason adds for an unrejected control that computed exactly what its check did
SAME_AS_CHECK = (": it computed exactly the numbers its check did, so its mutant changed nothing the check computes "
                 "(a parameter the check ignores, a fixture that rebuilt the claim's own variant, or a check that "
                 "reads only what the mutant leaves alone)")


def _numbers(entry: Mapping[str, Any]) -> tuple | None:
    """What an outcome decided and measured, as numbers in order (names and text left out: a control's may name its
    mutant); None when it carries none (a symbolic check, a raised unit)."""
    d = entry.get("details") or {}
    if d.get("raised"):
        return None
    rows = [(x.get("status"), x.get("lo"), x.get("hi"), x.get("value")) for x in d.get("decisions", [])]
    rows += [(m.get("value"), m.get("lo"), m.get("hi")) for m in entry.get("measurements") or []]
    if not any(isinstance(v, (int, float)) and not isinstance(v, bool) for r in rows for v in r):
        return None
    return (entry.get("status"),) + tuple(tuple(repr(v) for v in r) for r in rows)  # repr: NaN equals NaN


def same_numbers(control: Mapping[str, Any], check: Mapping[str, Any]) -> bool:
    """Whether a control's outcome has exactly its target check's numbers: its status, every decision's status and
    interval and every measurement, to the bit.  A mutant that reaches what the check computes moves some number, so
    identical numbers say it did not, and that the control cannot be rejected where they are identical: a wiring
    defect (a parameter the check ignores, a setting whose fixture rebuilds the claim's own variant under the mutant's
    name) or a check that reads only what the mutant leaves alone.  False where either carries no number."""
    a = _numbers(control)
    return a is not None and a == _numbers(check)


def controls_same_as_check(checks: Iterable[Mapping[str, Any]],
                           controls: Iterable[Mapping[str, Any]]) -> set[str]:
    """The names of the unrejected ``controls`` whose outcome has exactly their target's numbers among ``checks``
    (:func:`same_numbers`): what the verdict's reason, the record and a map's rows name."""
    target = {c["name"]: c for c in checks}
    return {k["name"] for k in controls if not k["rejected"] and same_numbers(k, target.get(k["target"], {}))}


def evidence_count(checks: list[dict]) -> str:
    """"k checks for the paper, j implementation checks": implementation checks (``Check.evidence``) are not counted
    as evidence for the paper."""
    impl = sum(c.get("evidence") == "implementation" for c in checks)
    return (f"{len(checks) - impl} check{'s' * (len(checks) - impl != 1)} for the paper, {impl} implementation "
            f"check{'s' * (impl != 1)}")


def run_of(ctx: "Context | Mapping[str, Context]") -> Callable[[Claim], Context]:
    """``claim -> its run``: ``ctx`` itself for every claim, or, when ``ctx`` maps claim ids to runs (a confirmation
    calibration runs each claim at seeds its own code derives), the claim's entry."""
    if isinstance(ctx, Mapping):
        return lambda c: ctx[c.id]
    return lambda c: ctx


@dataclass(frozen=True)
class Unit:
    """One unit of work: one check or one control of one claim (at the run's seed and budget), or one check at one
    setting of the claim's free choices (``kind == "setting"``, ``verify.sensitivity``); the fixtures it receives are
    :func:`unit_requests`."""

    claim: str   # the claim's id
    module: str  # the module that defines it: a worker imports only this
    kind: str    # "check", "control", "setting", or "setting control" (a control re-run at a setting)
    name: str    # the check's or control's name; at a setting, "<check or control> @ <choice>=<value>, ..."
    setting: tuple = ()  # at a setting: ((choice name, value), ...)

    @property
    def check(self) -> str:
        """The check a setting unit re-runs (the control's name, for a setting control)."""
        return self.name.split(" @ ")[0]

    @property
    def label(self) -> str:
        return f"{self.claim} {'control: ' if self.kind == 'control' else ''}{self.name}"


def setting_unit(claim: Claim, check: str, values: Mapping[str, Any]) -> Unit:
    """The unit that re-runs ``check`` with the free choices at ``values`` (choice name -> value)."""
    label = ", ".join(claim.free_choice(k).label(v) for k, v in values.items())
    return Unit(claim.id, claim.module, "setting", f"{check} @ {label}", tuple(values.items()))


def setting_control_unit(claim: Claim, control: str, values: Mapping[str, Any]) -> Unit:
    """The unit that re-runs negative control ``control`` with the free choices at ``values``: its target check with
    the setting's overrides and the control's own on top (``control_overrides_at``)."""
    label = ", ".join(claim.free_choice(k).label(v) for k, v in values.items())
    return Unit(claim.id, claim.module, "setting control", f"{control} @ {label}", tuple(values.items()))


def control_overrides_at(claim: Claim, control: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """What a control's target check is passed at a setting: the setting's overrides of that check merged with the
    control's (a mutated fixture request and a setting's request of the same fixture become one request; a clash,
    the control and the setting setting one parameter differently, is refused: ``ValueError``)."""
    k = claim.control(control)
    return merge_overrides([claim.overrides_at(k.target, values), dict(k.overrides)],
                           f"{claim.id}: control {control!r} at a setting")


def plan(claim: Claim, kinds: set[str] | None = None) -> list[Unit]:
    """The claim's units, checks first, in declaration order (none for a claim that is not checked)."""
    if claim.not_checked:
        return []
    return ([Unit(claim.id, claim.module, "check", c.name) for c in _selected_checks(claim, kinds)]
            + [Unit(claim.id, claim.module, "control", k.name) for k in _selected_controls(claim, kinds)])


def units(claim: Claim, kinds: set[str] | None = None) -> int:
    return len(plan(claim, kinds))


def _selected_checks(claim, kinds):
    return [c for c in claim.checks if kinds is None or c.kind in kinds]


def _selected_controls(claim, kinds):
    names = {c.name for c in _selected_checks(claim, kinds)}
    return [k for k in claim.controls if k.target in names]


def unit_requests(claim: Claim, unit: Unit) -> dict[str, fx.Request]:
    """The fixtures a unit's check receives: the check's ``uses``, with those its control replaces."""
    if unit.kind == "check":
        return claim.check(unit.name).requests()
    if unit.kind == "setting":
        return claim.check(unit.check).requests(claim.overrides_at(unit.check, dict(unit.setting)))
    if unit.kind == "setting control":
        k = claim.control(unit.check)
        return claim.check(k.target).requests(control_overrides_at(claim, k.name, dict(unit.setting)))
    k = claim.control(unit.name)
    return claim.check(k.target).requests(k.overrides)


def run_unit(claim: Claim, unit: Unit, ctx: Context, fixtures: "fx.Memo | Mapping[str, Any] | None" = None) -> dict:
    """Run one check or control; its outcome as a record entry, with the seconds it took.

    ``fixtures``: the run's :class:`theorems.fixture.Memo` (values computed there, shared with the run's other
    units), or the values already computed (a Dask task's resolved inputs), or None (computed for this unit alone).
    A fixture that raised makes the unit's outcome a raised check, as a check that raised does."""
    reqs = unit_requests(claim, unit)

    def values() -> dict:
        if isinstance(fixtures, fx.Memo):
            return fixtures.values(reqs)
        if fixtures is None:
            return fx.Memo(ctx).values(reqs)
        failed = [v for v in fixtures.values() if isinstance(v, fx.FixtureFailure)]
        if failed:
            raise failed[0].error
        return dict(fixtures)

    if unit.kind == "check":
        c = claim.check(unit.name)
        out, secs = _run_one(lambda ctx: c.run(ctx, values()), ctx)
    elif unit.kind == "setting":  # a point of a sensitivity design: the check's own decision, no figures
        c, ov = claim.check(unit.check), claim.overrides_at(unit.check, dict(unit.setting))
        out, secs = _run_one(lambda ctx: c.run(replace(ctx, figures=False), values(), **ov), ctx)
    elif unit.kind == "setting control":  # a control re-run at a setting: does it still bite there?
        k = claim.control(unit.check)
        ov = control_overrides_at(claim, k.name, dict(unit.setting))
        out, secs = _run_one(lambda ctx: claim.check(k.target).run(replace(ctx, figures=False), values(), **ov), ctx)
    else:
        k = claim.control(unit.name)
        out, secs = _run_one(lambda ctx: run_control(claim, k, ctx, values()), ctx)
    return unit_entry(claim, unit, out, secs)


def _no_pass_on_nan(out: Outcome) -> Outcome:
    """A safety net under the checks: a decision that passed against a claimed value or width that is not a number
    (``numerics.stats`` compares with NaN, which is never true, so neither "fail" nor "too wide" fires) decided
    nothing; the outcome is inconclusive.  (The decision rules themselves guard the interval, not the target.)"""
    bad = [d["name"] for d in (out.details or {}).get("decisions", [])
           if d.get("status") == "pass" and ("nan" in str(d.get("claimed", "")).lower()
                                            or d.get("max_width") != d.get("max_width"))]
    if not bad or out.status != "pass":
        return out
    return replace(out, status="inconclusive",
                   summary=f"{out.summary} | not decided: {', '.join(bad)} passed against a claimed value that is not "
                           "a number")


def _rejected(k: Control, out: Outcome) -> bool:
    return k.rejects(out.status, (out.details or {}).get("decisions", []))


def unit_entry(claim: Claim, unit: Unit, out: Outcome, secs: float) -> dict:
    """The record entry of a unit's outcome (also for a unit that could not be run at all)."""
    out = _no_pass_on_nan(out)
    uses = {name: r.describe() for name, r in unit_requests(claim, unit).items()}
    if unit.kind == "check":
        c = claim.check(unit.name)
        entry = results.outcome_dict(c.name, c.kind, out, {"description": c.description, "stochastic": c.stochastic,
                                                           "uses": uses, "evidence": c.evidence,
                                                           "by_algebra": c.by_algebra})
    elif unit.kind == "setting":
        c = claim.check(unit.check)
        entry = results.outcome_dict(c.name, c.kind, out, {"setting": {k: _plain(v) for k, v in unit.setting},
                                                           "evidence": c.evidence, "uses": uses})
    elif unit.kind == "setting control":
        k = claim.control(unit.check)
        entry = results.outcome_dict(k.name, "control", out, {
            "target": k.target, "setting": {n: _plain(v) for n, v in unit.setting},
            "rejected": _rejected(k, out), "uses": uses})
    else:
        k = claim.control(unit.name)
        entry = results.outcome_dict(k.name, "control", out, {
            "target": k.target, "description": k.description, "overrides": _overrides_dict(k),
            "aimed_at": list(k.fails), "rejected": _rejected(k, out), "uses": uses})
    return entry | {"seconds": round(secs, 3)}


def free_choice_entry(f: FreeChoice) -> dict:
    """A free choice as the record shows it: its value, plausible range, reason and the checks it sets."""
    return {"name": f.name, "value": _plain(f.value), "range": f.range_text(), "reason": f.reason,
            "checks": sorted(f.sets)}


def assumption_entry(a: Assumption, checks: list[dict]) -> dict:
    """An assumption as the record shows it; a scope filter (ours) with what it removed in this run, added up over the
    checks that applied it (their ``details["scope"]``; draws of one fixture, read by several checks, counted once;
    controls re-run a check on a mutant and are not counted)."""
    entry = {"name": a.name, "description": a.description}
    if not isinstance(a, ScopeFilter):
        return entry
    rows = [(c["name"], s) for c in checks for s in (c.get("details") or {}).get("scope", []) if s["name"] == a.name]
    counted = list({s.get("source") or f"check {name}": s for name, s in rows}.values())
    return entry | {"scope": True, "why": a.why, "unit": a.unit, "checks": [name for name, _ in rows],
                    "removed": sum(s["removed"] for s in counted), "total": sum(s["total"] for s in counted)}


def assemble(claim: Claim, ctx: Context, outcomes: dict[Unit, dict], kinds: set[str] | None = None) -> dict:
    """The claim's record from its units' outcomes, with the verdict rules above (the same for any executor)."""
    checks, controls, timing = [], [], {}
    for u in plan(claim, kinds):
        entry = dict(outcomes[u])
        timing[("control: " if u.kind == "control" else "") + u.name] = entry.pop("seconds")
        (checks if u.kind == "check" else controls).append(entry)
    same = controls_same_as_check(checks, controls)
    for k in controls:
        if k["name"] in same:
            k["same_as_check"] = True
    v, reason = verdict(claim, checks, controls)
    return {
        "schema_version": results.SCHEMA_VERSION,
        "claim": {"id": claim.id, "paper": claim.paper, "title": claim.title, "statement": claim.statement,
                  "fidelity": claim.fidelity, "fidelity_note": claim.fidelity_note, "module": claim.module,
                  "assumptions": [assumption_entry(a, checks) for a in claim.assumptions],
                  "findings": list(claim.findings),
                  "free_choices": [free_choice_entry(f) for f in claim.free_choices],
                  "no_free_choice": claim.no_free_choice,
                  "without": dict(claim.without),
                  "ledger": ledger.claim_constants(claim) if claim.module.startswith("theorems.") else []},
        "verdict": v,
        "reason": reason,
        "checks": checks,
        "controls": controls,
        "seed": ctx.seed,
        "budget": ctx.budget,
        "device": ctx.device,
        "alpha_per_decision": ctx.alpha,
        "kinds": sorted(kinds) if kinds else "all",
        "code_hash": registry.code_hash(claim),
        "versions": results.library_versions(),
        "timing": {"total_seconds": round(sum(timing.values()), 3), "per_check": timing},
        "created_utc": results.now_utc(),
    }


def run_claim(claim: Claim, ctx: Context, progress: Progress = lambda s: None,
              kinds: set[str] | None = None, memo: fx.Memo | None = None) -> dict:
    """Run the claim (optionally only checks of ``kinds``) in this process and return its results record.

    ``memo``: the run's fixture values, shared with other claims of the same run (default: this claim's own); whoever
    passes one has announced these units' fixtures to it (``Memo.expect``), as this function does for its own."""
    units = plan(claim, kinds)
    if memo is None:
        memo = fx.Memo(ctx)
        memo.expect(r for u in units for r in unit_requests(claim, u).values())
    outcomes = {}
    for u in units:
        progress(u.label)
        outcomes[u] = run_unit(claim, u, ctx, memo)
        memo.release(unit_requests(claim, u).values())
    return assemble(claim, ctx, outcomes, kinds)
