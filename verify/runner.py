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
from dataclasses import replace
from typing import Callable

from theorems.claim import Claim, Context, Control, Outcome
from verify import preregistration, registry, results

Progress = Callable[[str], None]


def run_control(claim: Claim, control: Control, ctx: Context) -> Outcome:
    """The control's target check, called with the control's overrides and no figures."""
    target = next(c for c in claim.checks if c.name == control.target)
    return target.run(replace(ctx, figures=False), **control.overrides)


def _overrides_dict(control: Control) -> dict:
    plain = (int, float, str, bool, type(None))
    return {k: v if isinstance(v, plain) else repr(v) for k, v in control.overrides.items()}


def _run_one(fn, ctx: Context) -> tuple[Outcome, float]:
    t0 = time.perf_counter()
    try:
        out = fn(ctx)
    except Exception as e:  # a crashing check is reported, never silently passed
        tb = traceback.format_exception_only(type(e), e)[-1].strip()
        out = Outcome("inconclusive", f"check raised {tb}", details={"error": tb})
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
        why = [f"{c['name']}: {c['summary']}" for c in vague]
        why += [f"control '{c['name']}' was not rejected by '{c['target']}'" for c in unrejected]
        return "inconclusive", "; ".join(why)
    return "verified", f"{len(checks)} checks passed, {len(controls)} negative controls rejected"


def units(claim: Claim, kinds: set[str] | None = None) -> int:
    return 0 if claim.not_checked else len(_selected_checks(claim, kinds)) + len(_selected_controls(claim, kinds))


def _selected_checks(claim, kinds):
    return [c for c in claim.checks if kinds is None or c.kind in kinds]


def _selected_controls(claim, kinds):
    names = {c.name for c in _selected_checks(claim, kinds)}
    return [k for k in claim.controls if k.target in names]


def run_claim(claim: Claim, ctx: Context, progress: Progress = lambda s: None,
              kinds: set[str] | None = None) -> dict:
    """Run the claim (optionally only checks of ``kinds``) and return its results record."""
    checks, controls, timing = [], [], {}
    if not claim.not_checked:
        for c in _selected_checks(claim, kinds):
            progress(f"{claim.id} {c.name}")
            out, secs = _run_one(c.run, ctx)
            timing[c.name] = round(secs, 3)
            checks.append(results.outcome_dict(c.name, c.kind, out, {"description": c.description,
                                                                     "stochastic": c.stochastic}))
        for k in _selected_controls(claim, kinds):
            progress(f"{claim.id} control: {k.name}")
            out, secs = _run_one(lambda ctx, k=k: run_control(claim, k, ctx), ctx)
            timing["control: " + k.name] = round(secs, 3)
            controls.append(results.outcome_dict(k.name, "control", out, {
                "target": k.target, "description": k.description, "overrides": _overrides_dict(k),
                "rejected": out.status == "fail"}))
    v, reason = verdict(claim, checks, controls)
    return {
        "schema_version": results.SCHEMA_VERSION,
        "claim": {"id": claim.id, "paper": claim.paper, "title": claim.title, "statement": claim.statement,
                  "fidelity": claim.fidelity, "fidelity_note": claim.fidelity_note, "module": claim.module,
                  "assumptions": [{"name": a.name, "description": a.description} for a in claim.assumptions],
                  "findings": list(claim.findings),
                  "preregistered": (preregistration.claim_constants(claim)
                                    if claim.module.startswith("theorems.") else [])},
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
